//! A failed seed, reproduced, understood and shrunk (issue 31): `replay` writes the reports
//! `run` writes; summary.md reads times as `34m22s`; the timeline opens on the part of the run
//! where things happen; `shrink` writes random faults as scripted ones and its file fails as
//! the original did.

use std::path::{Path, PathBuf};

use crate::reports::render;
use crate::support::{rehearsal, stderr, stdout};

/// The failure file a one-seed sweep of `scenario` saves (the sweep must fail).
fn saved_failure(scenario: &str, seed: &str, out: &Path) -> PathBuf {
    let o = rehearsal(&["sweep", scenario, "--seeds", seed, "--out", out.to_str().unwrap(), "-q"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let stem = Path::new(scenario).file_stem().unwrap().to_str().unwrap();
    out.join(format!("failures/{stem}-default-{seed}.toml"))
}

/// Every `t=N ms` in `text`: how the oracles write an instant, not how people read it.
fn raw_instants(text: &str) -> Vec<&str> {
    text.match_indices("t=")
        .map(|(i, _)| &text[i..])
        .filter(|rest| {
            let digits = rest[2..].bytes().take_while(u8::is_ascii_digit).count();
            digits > 0 && rest[2 + digits..].starts_with(" ms")
        })
        .map(|rest| &rest[..rest.len().min(16)])
        .collect()
}

/// strict-ci-smoke seed 1 fails at 47 min (a woken session writes its successor's row) and
/// runs on to 2 h 42 min 40 s (2 h 45 min before C152: a woken session now reads its watcher's overdue poll first): the replay writes the reports, summary.md reads its times, and the
/// timeline opens on the window where the failures are. (Before issue 42 it polled on to its
/// 12 h limit; since its sessions read the hand-over of their task, it ends.)
#[test]
fn a_replay_writes_readable_reports_and_its_timeline_opens_on_the_active_window() {
    let tmp = tempfile::tempdir().unwrap();
    let failure = saved_failure("scenarios/ci/faults/strict-ci-smoke.toml", "1", &tmp.path().join("sweep"));
    let out = tmp.path().join("replay");
    let o = rehearsal(&["replay", failure.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains(&format!("reports      {}", out.join("summary.md").display())), "{}", stdout(&o));
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("| makespan | 2h42m40s |"), "{summary}");
    assert!(summary.contains("sent at t=49m45s, was handled 2 times: t=49m53s by session S2"), "{summary}");
    let violations = summary.split("## Violations").nth(1).unwrap();
    assert!(violations.contains("- **messages-seen-once** at 59m51s: "), "{violations}");
    assert!(raw_instants(&summary).is_empty(), "no raw instants: {:?}", raw_instants(&summary));
    assert!(summary.contains("| background / pause poll | 15.0s / 10.0s |"), "{summary}");
    // violations.csv keeps raw milliseconds for programs.
    assert!(std::fs::read_to_string(out.join("violations.csv")).unwrap().contains("2838195,owner-writes-only,\"at t=2838195 ms"));
    let dom = render(&out.join("timeline.html"), &tmp.path().join("profile"));
    let view = dom.split("data-view-ms=\"").nth(1).unwrap().split('"').next().unwrap();
    let (from, to) = view.split_once("..").unwrap();
    let (from, to): (i64, i64) = (from.parse().unwrap(), to.parse().unwrap());
    assert!(from < 2_838_195 && to > 2_838_195, "the first violation (t=47m18s) in view: {view}");
    assert!(to <= 9_900_067, "opens within the run (it ends at t=9900067 ms): {view}");
    assert!(dom.contains("id=\"in-view\">in view: 0 to "), "the page says what is in view");
}

/// strict-random-faults seed 2 fails `owner-writes-only` when a session hung by a random
/// fault wakes: the shrink writes that hang as a scripted one, drops the random odds, keeps
/// the scenario's `[expect]`, and the file fails the same way, at the same point.
#[test]
fn a_shrunk_failure_has_scripted_faults_and_fails_the_same_way_at_the_same_point() {
    let tmp = tempfile::tempdir().unwrap();
    let failure = saved_failure("scenarios/ci/faults/strict-random-faults.toml", "2", &tmp.path().join("sweep"));
    let shrunk = tmp.path().join("shrunk.toml");
    let o = rehearsal(&["shrink", failure.to_str().unwrap(), "--out", shrunk.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("fails        `owner-writes-only` at set_needs_review by S1"), "{text}");
    let faults: Vec<usize> =
        text.lines().find(|l| l.starts_with("faults")).unwrap().split_whitespace().filter_map(|w| w.parse().ok()).take(2).collect();
    assert!(faults[1] < faults[0], "fewer faults: {text}");
    let file = std::fs::read_to_string(&shrunk).unwrap();
    let table: toml::Table = file.parse().unwrap();
    let section = table["faults"].as_table().unwrap();
    for random in ["crash_probability", "hang_probability", "hang_ms"] {
        assert!(!section.contains_key(random), "{random} left in:\n{file}");
    }
    let scripted = ["crash", "hang"].iter().filter_map(|k| section.get(*k)).filter_map(|v| v.as_array()).map(Vec::len).sum::<usize>();
    assert!(scripted >= 1, "the hang that mattered, scripted:\n{file}");
    // The original's [expect] (strict: nothing allowed), nothing added.
    let expect = table["expect"].as_table().unwrap();
    assert_eq!(expect.keys().collect::<Vec<_>>(), ["allowed"], "{file}");
    assert_eq!(expect["allowed"].as_array().map(Vec::len), Some(0), "{file}");
    let o = rehearsal(&["run", shrunk.to_str().unwrap(), "--out", tmp.path().join("run").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "the shrunk file fails:\n{}", stdout(&o));
    assert!(stdout(&o).contains("verdict      FAIL: owner-writes-only"), "{}", stdout(&o));
    let summary = rehearsal::run::run(&rehearsal::run::RunOptions {
        scenario_path: shrunk.clone(),
        seed: None,
        out_dir: Some(tmp.path().join("lib-run")),
        variants: Vec::new(),
    })
    .unwrap();
    let signature = rehearsal::campaign::shrink::Signature::of(&summary).unwrap();
    assert_eq!((signature.rule.as_str(), signature.point.as_str()), ("owner-writes-only", "set_needs_review by S1"));
}

/// A replay command printed on the terminal runs as pasted: `rehearsal` when that name on
/// PATH is the program that printed it, else the program's own path. Files keep `rehearsal`.
#[test]
fn a_printed_replay_command_runs_as_pasted_with_or_without_rehearsal_on_path() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_rehearsal"), bin.join("rehearsal")).unwrap();
    let bare_path = "/usr/bin:/bin";
    let run = |path: &str, command: &str| {
        let o = std::process::Command::new("sh")
            .args(["-c", command])
            .current_dir(crate::support::root())
            .env("PATH", path)
            .env_remove("REHEARSAL_SEED")
            .output()
            .unwrap();
        assert!(o.status.success(), "`{command}`: {}{}", stdout(&o), stderr(&o));
        stdout(&o)
    };
    let field = |text: &str, name: &str| crate::support::summary_field(text, name);
    let exe = env!("CARGO_BIN_EXE_rehearsal");
    let out = tmp.path().join("first");
    let printed = run(bare_path, &format!("{exe} run scenarios/quickstart.toml --out {} -q", out.display()));
    let replay = field(&printed, "replay");
    assert!(replay.starts_with(&format!("{} run ", std::fs::canonicalize(exe).unwrap().display())), "{replay}");
    assert_eq!(field(&run(bare_path, &format!("{replay} -q")), "trace hash"), field(&printed, "trace hash"), "pasted, it reproduces");
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("Replay: `rehearsal run scenarios/quickstart.toml --seed 42"), "{summary}");
    let with_path = format!("{}:{bare_path}", bin.display());
    let printed = run(&with_path, &format!("rehearsal run scenarios/quickstart.toml --out {} --force -q", out.display()));
    let replay = field(&printed, "replay");
    assert!(replay.starts_with("rehearsal run scenarios/quickstart.toml --seed 42"), "{replay}");
    assert_eq!(field(&run(&with_path, &format!("{replay} -q")), "trace hash"), field(&printed, "trace hash"));
}
