//! `rehearsal explore schedules`: every order of the statements that may race, up to a bound
//! of non-default choices; a schedule of defaults is the plain run byte for byte; the shortest
//! counterexample is a replay file that `rehearsal run` replays exactly; output independent of
//! `--jobs`; Ctrl-C keeps what finished; bad input exits 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{rehearsal, root, stderr, stdout, summary_field};

const DOUBLE_LAUNCH: &str = "scenarios/schedules/double-launch.toml";
/// A claim whose outcome depends on which of two racing sessions claims first.
const TAKEOVER_MUTANT: &str = "tests/schedules/claim-takeover-by-session-order.sql";

/// `rehearsal explore schedules SCENARIO ARGS… --out OUT`: (exit code, stdout, stderr).
fn explore(scenario: &str, args: &[&str], out: &Path) -> (i32, String, String) {
    let mut all = vec!["explore", "schedules", scenario];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", out.to_str().unwrap()]);
    let o = rehearsal(&all);
    (o.status.code().unwrap(), stdout(&o), stderr(&o))
}

/// (run, choices, outcome, failure, first violation) of every row of schedules.csv.
fn rows(out: &Path) -> Vec<(usize, String, String, String, String)> {
    let rows: Vec<rehearsal::campaign::schedules::ScheduleRow> = rehearsal::base::csv_rows::read_rows(&out.join("schedules.csv")).unwrap();
    rows.into_iter().map(|r| (r.run, r.choices, r.outcome.to_string(), r.failure, r.first_violation)).collect()
}

/// The shipped scenario with `extra` appended, written to `dir` (a mutant, a schedule).
fn variant_of(dir: &Path, name: &str, extra: &str) -> PathBuf {
    let text = std::fs::read_to_string(root().join(DOUBLE_LAUNCH)).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, format!("{text}\n{extra}")).unwrap();
    path
}

/// The rows between the run's first and last (its events): the first names the scenario's
/// text by its hash and the last seals the rows (docs/protocol.md C120), so two files whose
/// texts differ give two trace hashes for one run.
fn event_rows(trace: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(trace);
    let lines: Vec<&str> = text.lines().collect();
    lines[2..lines.len() - 1].iter().map(|l| l.to_string()).collect()
}

/// A schedule of default choices is the plain run: the same events and the same database,
/// byte for byte (the trace's first and last rows name the two files' texts, C120).
#[test]
fn a_schedule_of_defaults_is_the_plain_run_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::read_to_string(root().join("scenarios/quickstart.toml")).unwrap();
    let mut hashes = Vec::new();
    for (name, extra) in [("plain", ""), ("defaults", "\n[schedule]\nchoices = [0, 0, 0]\n")] {
        // The same file name (the trace names it) in two folders.
        let dir = tmp.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        let file = dir.join("quickstart.toml");
        std::fs::write(&file, format!("{base}{extra}")).unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_rehearsal"))
            .args(["run", "quickstart.toml", "--out", "run"])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}\n{}", stdout(&o), stderr(&o));
        let trace = std::fs::read(dir.join("run/trace.csv")).unwrap();
        assert!(!summary_field(&stdout(&o), "trace hash").is_empty());
        hashes.push((event_rows(&trace), std::fs::read(dir.join("run/comms.db")).unwrap()));
    }
    assert!(hashes[0] == hashes[1], "a schedule of defaults changed the run's events or database");
}

#[test]
fn the_shipped_scenario_passes_every_order_within_bound_1_whatever_the_jobs() {
    let tmp = tempfile::tempdir().unwrap();
    let (one, two) = (tmp.path().join("one"), tmp.path().join("two"));
    let (code, out, err) = explore(DOUBLE_LAUNCH, &["--bound", "1", "--jobs", "1"], &one);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("window       2500 ms"), "{out}");
    let found = rows(&one);
    assert_eq!(found[0], (1, String::new(), "pass".into(), String::new(), String::new()), "run 1 is the default order");
    assert!(found.len() > 10 && found.iter().all(|r| r.2 == "pass"), "{found:?}");
    let (code, _, err) = explore(DOUBLE_LAUNCH, &["--bound", "1", "--jobs", "2"], &two);
    assert_eq!(code, 0, "{err}");
    for file in ["schedules.csv", "summary.md"] {
        assert_eq!(std::fs::read(one.join(file)).unwrap(), std::fs::read(two.join(file)).unwrap(), "{file}");
    }
}

#[test]
fn the_enumeration_finds_the_race_the_default_order_misses_and_its_replay_fails_the_same_way() {
    let tmp = tempfile::tempdir().unwrap();
    let mutant = root().join(TAKEOVER_MUTANT);
    let scenario = variant_of(tmp.path(), "takeover.toml", &format!("[protocol]\nsql = \"{}\"\n", mutant.display()));
    let out = tmp.path().join("out");
    let (code, text, err) = explore(scenario.to_str().unwrap(), &["--bound", "1"], &out);
    assert_eq!(code, 1, "{text}\n{err}");
    let found = rows(&out);
    assert_eq!(found[0].2, "pass", "the default order misses it: {found:?}");
    assert_eq!(found[1], (2, "1".into(), "fail".into(), "F1".into(), "allowed-transitions".into()), "the first alternative finds it");
    assert!(text.contains("F1   allowed-transitions") && text.contains("shortest: choices [1] (run 2)"), "{text}");
    let replay = out.join("failures/F1-allowed-transitions.toml");
    let replay_text = std::fs::read_to_string(&replay).unwrap();
    assert!(replay_text.starts_with("# Found by `rehearsal explore schedules`") && replay_text.contains("choices = [1]"), "{replay_text}");
    assert!(replay_text.contains("#   t=24670 ms: decision 0: option 1 of 2: task-01.S1b runs before task-01.S1\n"), "{replay_text}");
    let o = rehearsal(&["run", replay.to_str().unwrap(), "--out", tmp.path().join("replayed").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("verdict      FAIL: allowed-transitions"), "{}", stdout(&o));
    let trace = std::fs::read_to_string(out.join("failures/F1-allowed-transitions/trace.csv")).unwrap();
    let noted: Vec<&str> = trace.lines().filter(|l| l.contains(",schedule_choice,")).collect();
    assert_eq!(noted.len(), 1, "{noted:?}");
    assert!(noted[0].contains("decision 0: option 1 of 2: task-01.S1b runs before task-01.S1"), "the twin's claim first: {}", noted[0]);
    let kept = out.join("failures/F1-allowed-transitions/comms.db");
    assert_eq!(
        std::fs::read(tmp.path().join("replayed/comms.db")).unwrap(),
        std::fs::read(kept).unwrap(),
        "the same order, the same comms.db"
    );
    // Without its schedule the replay file is the default order again: it passes.
    // (Beside it: its SQL file is the copy in failures/.)
    let plain = out.join("failures/plain.toml");
    std::fs::write(&plain, replay_text.replace("choices = [1]", "choices = []")).unwrap();
    let o = rehearsal(&["run", plain.to_str().unwrap(), "--out", tmp.path().join("plain").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn bad_input_exits_2_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let negative = variant_of(tmp.path(), "negative.toml", "[schedule]\nchoices = [0, -1]\n");
    let unknown = variant_of(tmp.path(), "unknown.toml", "[schedule]\nchoice = [1]\n");
    let too_big = variant_of(tmp.path(), "too-big.toml", "[schedule]\nchoices = [9]\n");
    let never = variant_of(tmp.path(), "never.toml", &format!("[schedule]\nchoices = [{}1]\n", "0, ".repeat(500)));
    let out = tmp.path().join("out");
    let name = |p: &PathBuf| p.to_str().unwrap().to_string();
    let explores: Vec<(Vec<String>, &str)> = vec![
        (vec!["no-such.toml".into()], "cannot read scenario"),
        (vec![name(&negative)], "negative.toml:"),
        (vec![name(&unknown)], "unknown field `choice`"),
        (vec![DOUBLE_LAUNCH.into(), "--depth".into(), "0".into()], "--depth must be at least 1"),
        (vec![DOUBLE_LAUNCH.into(), "--bound".into(), "x".into()], "--bound"),
    ];
    for (args, expected) in explores {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, text, err) = explore(args[0], &args[1..], &out);
        assert_eq!(code, 2, "{args:?}: {text}\n{err}");
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    for (file, expected) in
        [(&too_big, "schedule.choices[0] is 9, but decision point 0 has only 2 options"), (&never, "but the run met only")]
    {
        let o = rehearsal(&["run", file.to_str().unwrap(), "--out", tmp.path().join("run").to_str().unwrap(), "--force"]);
        assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
        assert!(stderr(&o).contains(expected), "{}", stderr(&o));
    }
}

#[test]
fn ctrl_c_keeps_the_finished_runs_marked_incomplete() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, scratch) = (tmp.path().join("interrupted"), tmp.path().join("scratch"));
    std::fs::create_dir(&scratch).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_rehearsal"))
        .args(["explore", "schedules", DOUBLE_LAUNCH, "--bound", "3", "--jobs", "2", "--out", out.to_str().unwrap()])
        .args(["--scratch", scratch.to_str().unwrap()])
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // schedules.csv appears once the default order has run; bound 3 takes far longer.
    let deadline = Instant::now() + Duration::from_secs(300);
    while !out.join("schedules.csv").exists() {
        assert!(Instant::now() < deadline, "no schedules.csv within 300 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let o = child.wait_with_output().unwrap();
    let (text, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(130), "{text}\n{err}");
    let finished = rows(&out);
    assert!(!finished.is_empty() && finished.iter().all(|r| r.2 == "pass"), "every kept row is a finished run: {finished:?}");
    assert!(
        text.contains("incomplete   interrupted") && text.contains(&format!("runs         {} (interrupted)", finished.len())),
        "{text}"
    );
    assert!(out.join("INCOMPLETE").exists());
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.starts_with("**Incomplete**"), "{summary}");
    assert_eq!(scratch.read_dir().unwrap().count(), 0, "the runs under way finished and their scratch folder went");
}

#[test]
fn under_state_first_an_order_the_default_misses_lets_the_conductor_poll_between_state_and_request() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("state-first");
    let scenario = "scenarios/schedules/double-launch-review.toml";
    let (code, text, err) = explore(scenario, &["--bound", "1", "--variant", "state-first"], &out);
    assert_eq!(code, 1, "{text}\n{err}");
    let found = rows(&out);
    assert_eq!(found[0].2, "pass", "the default order passes under state-first: {found:?}");
    let first_failure = found.iter().find(|r| r.2 == "fail").expect("a failing order");
    assert_eq!((first_failure.3.as_str(), first_failure.4.as_str()), ("F1", "message-before-state"));
    // One reorder from the default order: the default's choices, then the other order once
    // (how many racing points come first depends on how many statements the conductor runs
    // before it, e.g. its re-read before a review, docs/protocol.md C37).
    let choices: Vec<&str> = first_failure.1.split(' ').collect();
    assert!(choices.last() == Some(&"1") && choices[..choices.len() - 1].iter().all(|c| *c == "0"), "{}", first_failure.1);
    let replay = out.join("failures/F1-message-before-state.toml");
    let o = rehearsal(&["run", replay.to_str().unwrap(), "--out", tmp.path().join("replayed").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("verdict      FAIL: message-before-state"), "{}", stdout(&o));
    // The default protocol (message first) passes every one of these orders.
    let (code, text, err) = explore(scenario, &["--bound", "1"], &tmp.path().join("default"));
    assert_eq!(code, 0, "{text}\n{err}");
}
