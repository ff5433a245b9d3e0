//! Output a script can use and the small commands a new user reaches for: `--json` on run,
//! sweep, compare, bench and explore (parsed here), `--quiet`, plain progress lines when
//! stderr is not a terminal, `list`, `new` (a template that runs) and `completions`.

use serde_json::Value;

use crate::support::{rehearsal, stderr, stdout};

fn json(args: &[&str], code: i32) -> Value {
    let o = rehearsal(args);
    assert_eq!(o.status.code(), Some(code), "{args:?}\n{}{}", stdout(&o), stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{args:?}: not one JSON object ({e}):\n{}", stdout(&o)))
}

#[test]
fn run_sweep_compare_bench_and_explore_print_one_json_object_with_verdict_violations_timings_paths_and_hash() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = |name: &str| tmp.path().join(name).to_str().unwrap().to_string();
    let run = json(&["run", "scenarios/faults/zombie.toml", "--json", "--out", &dir("run")], 1);
    assert_eq!(run["verdict"], "fail");
    assert_eq!(run["violations"][0]["rule"], "owner-writes-only");
    assert!(run["timings"]["heartbeat_age_s"]["p95"].is_i64(), "{run}");
    let hash = run["trace_hash"].as_str().unwrap();
    let trace = std::fs::read(tmp.path().join("run/trace.csv")).unwrap();
    use sha2::Digest;
    assert_eq!(hash, format!("{:x}", sha2::Sha256::digest(&trace)), "the hash of trace.csv");
    assert_eq!(run["trace_csv"], format!("{}/trace.csv", dir("run")));
    assert_eq!(run["sql"]["files"][0], "scenarios/protocol.sql");
    let sweep = json(&["sweep", "scenarios/examples/bootstrap.toml", "--seeds", "1..=2", "--json", "--out", &dir("sweep")], 0);
    assert_eq!((sweep["pairs"].as_u64(), sweep["passed"].as_u64()), (Some(2), Some(2)), "{sweep}");
    assert_eq!(sweep["rows"][1]["seed"], 2);
    let compare = json(&["compare", "scenarios/examples/bootstrap.toml", "--seeds", "1", "--json", "--out", &dir("compare")], 0);
    assert!(compare["table_markdown"].as_str().unwrap().contains("| default | 1 | 1 | 0 | 0 |"), "{compare}");
    let bench = json(
        &["bench", "scenarios/examples/bootstrap.toml", "--param", "tasks.count=1", "--seeds", "1", "--json", "--out", &dir("bench")],
        0,
    );
    assert_eq!((bench["runs"].as_u64(), bench["passed"].as_u64()), (Some(1), Some(1)), "{bench}");
    let explore =
        json(&["explore", "crashes", "scenarios/examples/bootstrap.toml", "--points", "1", "--json", "--out", &dir("explore")], 0);
    assert_eq!(explore["runs"], 2, "a crash before and after point 1: {explore}");
    assert!(explore["base_trace_hash"].as_str().is_some_and(|h| h.len() == 64), "{explore}");
}

#[test]
fn progress_is_plain_lines_off_a_terminal_and_nothing_under_quiet() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("a");
    let o = rehearsal(&["sweep", "scenarios/examples/bootstrap.toml", "--seeds", "1..3", "--out", out.to_str().unwrap()]);
    assert!(stderr(&o).contains("rehearsal: 2/2 pairs done"), "{}", stderr(&o));
    let out = tmp.path().join("b");
    let o = rehearsal(&["sweep", "scenarios/examples/bootstrap.toml", "--seeds", "1..3", "--quiet", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stderr(&o), "", "--quiet: no progress, no notes");
}

/// A long `run` says how far it has got in simulated time (a line per simulated hour off a
/// terminal) once it has taken a while — here at once, by `REHEARSAL_PROGRESS_AFTER_MS=0` —
/// and nothing under `--quiet`; the run itself is the same either way.
#[test]
fn a_long_run_prints_its_simulated_progress_and_nothing_under_quiet() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |name: &str, quiet: bool| {
        let out = tmp.path().join(name);
        let mut args = vec!["run", "scenarios/quickstart.toml", "--out", out.to_str().unwrap()];
        if quiet {
            args.insert(0, "--quiet");
        }
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_rehearsal"))
            .args(&args)
            .current_dir(crate::support::root())
            .env("REHEARSAL_PROGRESS_AFTER_MS", "0")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        (stderr(&o), std::fs::read(out.join("trace.csv")).unwrap())
    };
    let (shown, trace_shown) = run("shown", false);
    // quickstart runs 1h39m of at most 8 h: a line at its first simulated minute, one at 1 h.
    let lines: Vec<&str> = shown.lines().filter(|l| l.starts_with("rehearsal: simulated ")).collect();
    assert_eq!(lines.len(), 2, "{shown}");
    assert!(lines[1].starts_with("rehearsal: simulated 1h00m of at most "), "{shown}");
    let (quiet, trace_quiet) = run("quiet", true);
    assert!(!quiet.contains("rehearsal: simulated"), "{quiet}");
    assert!(trace_shown == trace_quiet, "the progress changes nothing in the run");
}

#[test]
fn list_new_and_completions() {
    let o = rehearsal(&["list"]);
    let listed = stdout(&o);
    let line = listed.lines().find(|l| l.starts_with("scenarios/quickstart.toml")).expect("quickstart is listed");
    assert!(line.ends_with("Happy path: 4 musicians, checkpoints after steps 2 and 3, conductor approves every review"), "{line}");
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("mine.toml");
    let o = rehearsal(&["new", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.lines().filter(|l| l.starts_with('#')).count() >= 10, "a commented template:\n{text}");
    let o = rehearsal(&["run", file.to_str().unwrap(), "--out", tmp.path().join("run").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "the template runs as written:\n{}{}", stdout(&o), stderr(&o));
    let o = rehearsal(&["new", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "an existing file is refused without --force");
    for shell in ["bash", "zsh", "fish"] {
        let o = rehearsal(&["completions", shell]);
        assert!(o.status.success() && stdout(&o).contains("sweep") && stdout(&o).contains("--variant"), "{shell}");
    }
}
