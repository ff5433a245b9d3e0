//! Suites for CI: sweep (parallel, sharded), merge, replay, shrink, check, the determinism
//! self-check, exit codes, and the regression suite of shrunk failures.

use std::path::Path;

use crate::support::{rehearsal, root, stderr, stdout};

fn sweep(args: &[&str], out: &Path) -> (i32, String) {
    let mut all = vec!["sweep"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", out.to_str().unwrap()]);
    let o = rehearsal(&all);
    (o.status.code().unwrap(), format!("{}{}", stdout(&o), stderr(&o)))
}

#[test]
fn a_fault_heavy_sweep_gives_identical_results_with_one_or_two_jobs_and_as_merged_shards() {
    let tmp = tempfile::tempdir().unwrap();
    let (one, two, s1, s2, merged) =
        (tmp.path().join("one"), tmp.path().join("two"), tmp.path().join("s1"), tmp.path().join("s2"), tmp.path().join("merged"));
    let scenarios = ["scenarios/faults/random-faults.toml", "scenarios/faults/zombie.toml"];
    let base = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut args: Vec<&'static str> = scenarios.to_vec();
        args.extend_from_slice(&["--seeds", "1..=30"]);
        args.extend_from_slice(extra);
        args
    };
    let (code_one, out_one) = sweep(&base(&["--jobs", "1"]), &one);
    let (code_two, _) = sweep(&base(&["--jobs", "2"]), &two);
    assert_eq!((code_one, code_two), (1, 1), "zombie fails on the seed protocol: exit 1\n{out_one}");
    let results = std::fs::read(one.join("results.csv")).unwrap();
    assert_eq!(results, std::fs::read(two.join("results.csv")).unwrap(), "--jobs must not change results.csv");
    assert_eq!(String::from_utf8_lossy(&results).lines().count(), 61, "header + 60 pairs");
    sweep(&base(&["--shard", "1/2"]), &s1);
    sweep(&base(&["--shard", "2/2"]), &s2);
    let o = rehearsal(&["merge", s1.to_str().unwrap(), s2.to_str().unwrap(), "--out", merged.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(std::fs::read(merged.join("results.csv")).unwrap(), results, "merged shards = one sweep");
    // A shard merged twice (and the other not at all) is refused: every pair exactly once.
    let o = rehearsal(&["merge", s1.to_str().unwrap(), s1.to_str().unwrap(), "--out", tmp.path().join("bad").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("shard 1/2 is given 2 times"), "{}", stderr(&o));
    // JUnit: one case per pair; a failure holds its replay command; a replay file per failure.
    let junit = std::fs::read_to_string(one.join("junit.xml")).unwrap();
    assert_eq!(junit.matches("<testcase ").count(), 60);
    assert_eq!(junit.matches("<failure ").count(), 30);
    assert!(junit.contains("reproduce with: rehearsal run scenarios/faults/zombie.toml --seed 7"), "{junit}");
    let saved = std::fs::read_dir(one.join("failures"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "toml"))
        .count();
    assert_eq!(saved, 30);
    // The sweep's summary page: counts per scenario and variant, and a link per failure to
    // its run folder's timeline.
    let summary = std::fs::read_to_string(one.join("summary.md")).unwrap();
    assert!(summary.contains("| scenarios/faults/zombie.toml | default | 30 | 0 | 0 | 30 | 0 |"), "{summary}");
    // random-faults allows 12 rules: its passes are clean or, counted apart, with known violations.
    let cells: Vec<&str> =
        summary.lines().find(|l| l.starts_with("| scenarios/faults/random-faults.toml |")).unwrap().split(" | ").collect();
    let count = |i: usize| cells[i].parse::<usize>().unwrap();
    assert_eq!((count(3) + count(4), count(5), count(6)), (30, 0, 0), "{summary}");
    assert!(count(4) > 0, "some random-faults passes broke an allowed rule:\n{summary}");
    assert!(summary.contains("](failures/zombie-default-7/timeline.html)") && one.join("failures/zombie-default-7/timeline.html").exists());
}

#[test]
fn a_saved_failure_replays_to_the_same_hash_and_stops_early_on_request() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sweep");
    let (code, text) = sweep(&["scenarios/faults/zombie.toml", "--seeds", "21", "--check-determinism"], &out);
    assert_eq!(code, 1, "{text}");
    let failure = out.join("failures/zombie-default-21.toml");
    let saved = std::fs::read_to_string(&failure).unwrap();
    assert!(saved.contains("rule = \"owner-writes-only\"") && saved.contains("explanation = \"rule: no session writes"), "{saved}");
    let o = rehearsal(&["replay", failure.to_str().unwrap(), "--out", tmp.path().join("replay").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("replay       matches the saved trace hash"), "{}", stdout(&o));
    let o = rehearsal(&["replay", failure.to_str().unwrap(), "--until", "1000000", "--out", tmp.path().join("early").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let text = stdout(&o);
    assert!(text.contains("state at t=1000000 ms:") && text.contains("task-01") && text.contains("working"), "{text}");
    // A shrink keeps the violation with far fewer events; the result fails the same way.
    let shrunk = tmp.path().join("shrunk.toml");
    let o = rehearsal(&["shrink", failure.to_str().unwrap(), "--out", shrunk.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let events: Vec<u64> =
        stdout(&o).lines().find(|l| l.starts_with("events")).unwrap().split_whitespace().filter_map(|w| w.parse().ok()).collect();
    assert!(events[1] * 2 < events[0], "far fewer events: {events:?}");
    let o = rehearsal(&["run", shrunk.to_str().unwrap(), "--out", tmp.path().join("shrunk-run").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("verdict      FAIL: owner-writes-only"), "{}", stdout(&o));
}

#[test]
fn sweep_exit_codes_say_pass_protocol_failure_bad_input_and_harness_error() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, text) = sweep(&["scenarios/quickstart.toml", "--seeds", "1..=3"], &tmp.path().join("pass"));
    assert_eq!(code, 0, "{text}");
    let (code, _) = sweep(&["scenarios/quickstart.toml", "--seeds", "3..1"], &tmp.path().join("bad"));
    assert_eq!(code, 2);
    let (code, text) = sweep(&["scenarios/quickstart.toml", "--seeds", "1", "--shard", "0/3"], &tmp.path().join("bad2"));
    assert_eq!(code, 2, "{text}");
    // A harness error (the event cap) in one scenario is recorded; the other carries on.
    let capped = tmp.path().join("capped.toml");
    std::fs::write(&capped, "[run]\nevents_max = 500\n[tasks]\ncount = 1\n").unwrap();
    let out = tmp.path().join("mixed");
    let (code, text) = sweep(&[capped.to_str().unwrap(), "scenarios/quickstart.toml", "--seeds", "1..=2", "--jobs", "2"], &out);
    assert_eq!(code, 3, "{text}");
    let results = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert_eq!(results.matches(",error,harness: harness error: event cap reached").count(), 2, "{results}");
    assert_eq!(results.matches(",pass,").count(), 2, "{results}");
}

#[test]
fn check_validates_every_shipped_scenario_and_names_a_bad_one() {
    let mut files: Vec<String> = Vec::new();
    for folder in ["scenarios", "scenarios/examples", "scenarios/faults", "scenarios/regression"] {
        for entry in std::fs::read_dir(root().join(folder)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                files.push(path.strip_prefix(root()).unwrap().display().to_string());
            }
        }
    }
    files.sort();
    let mut args = vec!["check"];
    args.extend(files.iter().map(String::as_str));
    let o = rehearsal(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().filter(|l| l.starts_with("ok  ")).count(), files.len());
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.toml");
    std::fs::write(&bad, "[tasks]\ncount = 1\n[protocol]\nvariants = [\"fencng\"]\n").unwrap();
    let o = rehearsal(&["check", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("key `protocol.variants`: unknown variant `fencng`"), "{}", stderr(&o));
}

#[test]
fn the_regression_suite_of_shrunk_failures_still_reproduces_every_case() {
    let dir = root().join("scenarios/regression");
    let mut cases: Vec<_> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "toml")).collect();
    cases.sort();
    assert!(cases.len() >= 3, "{cases:?}");
    let tmp = tempfile::tempdir().unwrap();
    for (i, case) in cases.iter().enumerate() {
        let text = std::fs::read_to_string(case).unwrap();
        assert!(text.starts_with("# Shrunk by `rehearsal shrink`"), "{}", case.display());
        let options = rehearsal::run::RunOptions {
            scenario_path: case.clone(),
            seed: None,
            out_dir: Some(tmp.path().join(i.to_string())),
            variants: Vec::new(),
        };
        let summary = rehearsal::run::run(&options).unwrap();
        assert!(summary.verdict.passed(), "{} no longer reproduces exactly: {}", case.display(), summary.render());
        assert!(!summary.verdict.violations.is_empty());
    }
}
