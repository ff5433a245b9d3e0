//! `sweep --baseline` / `--bless` and `merge --baseline` end to end (issue 25): exit 1 only on
//! a regression, improvements listed apart, keys independent of the current folder, shards
//! judging their own pairs, bad files named by line, and the words a known failure gets.

use std::path::Path;
use std::process::Command;

use crate::support::{scenario, stderr, stdout};

/// A suite folder: `pass.toml` (bootstrap, passes) and `faults/zombie.toml` (fails
/// owner-writes-only on every seed), copied so the test owns them.
fn suite(dir: &Path) {
    std::fs::create_dir_all(dir.join("suite/faults")).unwrap();
    std::fs::copy(scenario("examples/bootstrap.toml"), dir.join("suite/pass.toml")).unwrap();
    std::fs::copy(scenario("faults/zombie.toml"), dir.join("suite/faults/zombie.toml")).unwrap();
}

/// `rehearsal ARGS` from `cwd`.
fn rehearsal_in(cwd: &Path, args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_rehearsal")).args(args).current_dir(cwd).env_remove("REHEARSAL_SEED").output().unwrap();
    (o.status.code().unwrap_or(-1), stdout(&o), stderr(&o))
}

const SUITE: [&str; 4] = ["suite/pass.toml", "suite/faults/zombie.toml", "--seeds", "1..=2"];

fn sweep(cwd: &Path, extra: &[&str]) -> (i32, String, String) {
    rehearsal_in(cwd, &[&["sweep"][..], &SUITE, extra].concat())
}

/// Rewrites the line of `pair` (e.g. `faults/zombie.toml default 1`) in the baseline.
fn edit_line(file: &Path, pair: &str, verdict_and_rules: &str) {
    let text = std::fs::read_to_string(file).unwrap();
    let edited: Vec<String> = text
        .lines()
        .map(|l| if l.starts_with(&format!("{pair} ")) { format!("{pair} {verdict_and_rules}") } else { l.to_string() })
        .collect();
    assert_ne!(edited.join("\n"), text.trim_end(), "{pair} has a line");
    std::fs::write(file, edited.join("\n") + "\n").unwrap();
}

#[test]
fn a_baselined_failure_passes_the_gate_and_a_new_one_fails_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    suite(dir);
    let (code, out, err) = sweep(dir, &["--bless", "--out", "o"]);
    assert_eq!(code, 2, "--bless needs --baseline\n{out}{err}");
    let (code, out, err) = sweep(dir, &["--baseline", "suite/baseline.txt", "--bless", "--out", "bless"]);
    assert_eq!(code, 0, "blessing records the failures as known\n{out}{err}");
    assert!(out.contains("blessed      4 pairs written to suite/baseline.txt"), "{out}");
    let file = dir.join("suite/baseline.txt");
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines[0].split(' ').take(4).collect::<Vec<_>>(), ["faults/zombie.toml", "default", "1", "fail"], "{text}");
    assert!(
        lines[0].contains("owner-writes-only") && lines[2] == "pass.toml default 1 pass -",
        "paths relative to the file's folder:\n{text}"
    );
    let results = std::fs::read_to_string(dir.join("bless/results.csv")).unwrap();
    assert!(results.lines().next().unwrap().contains(",rules,") && results.contains("owner-writes-only"), "{results}");

    // From the suite's own folder, with other paths: the same pairs, so the same judgement.
    let (code, out, err) = rehearsal_in(
        &dir.join("suite"),
        &["sweep", "pass.toml", "faults/zombie.toml", "--seeds", "1..=2", "--baseline", "baseline.txt", "--out", "../again"],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("baseline     baseline.txt: 0 regression(s), 2 known failure(s) (") && out.contains("owner-writes-only ×2"),
        "{out}"
    );
    let junit = std::fs::read_to_string(dir.join("again/junit.xml")).unwrap();
    assert_eq!(junit.matches("<skipped message=\"known failure (baseline): ").count(), 2, "{junit}");
    assert!(!junit.contains("time=\"0.000\""), "each case has its pair's wall time:\n{junit}");

    // The baseline says seed 1 passed: a regression, named on stdout, in summary.md and JUnit.
    edit_line(&file, "faults/zombie.toml default 1", "pass -");
    // It says seed 2 also broke budget, which it no longer does: an improvement, not a failure.
    let known = lines[1].split(' ').nth(4).unwrap().to_string();
    edit_line(&file, "faults/zombie.toml default 2", &format!("fail budget,{known}"));
    let (code, out, err) = sweep(dir, &["--baseline", "suite/baseline.txt", "--out", "regressed"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("regression   faults/zombie.toml default seed 1: fails with ") && out.contains("(baseline: pass)"), "{out}");
    assert!(out.contains("improved     faults/zombie.toml default seed 2: no longer breaks budget"), "{out}");
    let summary = std::fs::read_to_string(dir.join("regressed/summary.md")).unwrap();
    assert!(summary.contains("### Regressions\n\n- `faults/zombie.toml` default seed 1: fails with "), "{summary}");
    assert!(summary.contains("### Improvements"), "{summary}");
    let junit = std::fs::read_to_string(dir.join("regressed/junit.xml")).unwrap();
    assert!(junit.contains("<failure message=\"regression: fails with "), "{junit}");

    // --fail-fast stops at that regression, not at a known failure: the same exit code.
    let (code, out, _) = sweep(dir, &["--baseline", "suite/baseline.txt", "--fail-fast", "--jobs", "1", "--out", "fast"]);
    assert_eq!(code, 1, "{out}");

    // Each shard judges its own pairs; merged, they are judged as one sweep.
    for i in ["1", "2"] {
        let (code, out, err) =
            sweep(dir, &["--baseline", "suite/baseline.txt", "--shard", &format!("{i}/2"), "--out", &format!("shard-{i}")]);
        assert!(err.contains("shard ") && err.contains(": 2 of the sweep's 4 pairs"), "a shard counts its own pairs:\n{err}");
        assert!(!err.contains("2 seed(s)"), "{err}");
        assert_eq!(code, if out.contains("regression   ") { 1 } else { 0 }, "{out}");
    }
    let (code, out, err) = rehearsal_in(dir, &["merge", "shard-1", "shard-2", "--baseline", "suite/baseline.txt", "--out", "merged"]);
    assert_eq!(code, 1, "the merged set holds the regression\n{out}{err}");
    assert!(out.contains("baseline     suite/baseline.txt: 1 regression(s), 1 known failure(s)"), "{out}");
    let junit = std::fs::read_to_string(dir.join("merged/junit.xml")).unwrap();
    assert_eq!(junit.matches("<testcase ").count(), 4, "{junit}");
    assert!(!junit.contains("time=\"0.000\""), "the merged cases keep their shards' wall times:\n{junit}");
    let (code, _, err) = sweep(dir, &["--baseline", "suite/baseline.txt", "--bless", "--shard", "1/2", "--out", "s"]);
    assert_eq!(code, 2, "a shard cannot rewrite the whole file: {err}");

    // A malformed line: exit 2 naming the file and line, before any pair runs.
    std::fs::write(&file, format!("{text}pass.toml default 3 passed -\n")).unwrap();
    let bad_line = text.lines().count() + 1;
    let (code, _, err) = sweep(dir, &["--baseline", "suite/baseline.txt", "--out", "bad"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&format!("suite/baseline.txt:{bad_line}: verdict `passed` is neither pass nor fail")), "{err}");
    assert!(!dir.join("bad/results.csv").exists(), "nothing ran");
}

#[test]
fn no_command_calls_a_run_with_violations_a_plain_pass() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // random-faults allows 12 rules: seed 3 passes while breaking some of them.
    let path = scenario("faults/random-faults.toml");
    let (code, out, err) = rehearsal_in(dir, &["sweep", path.to_str().unwrap(), "--seeds", "3", "--out", "s"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("passed       0\nknown        1 passed with violations their scenarios allow or expect ("), "{out}");
    let summary = std::fs::read_to_string(dir.join("s/summary.md")).unwrap();
    assert!(summary.contains("| pass | pass with known violations |") && summary.contains("| 1 | 0 | 1 | 0 | 0 |"), "{summary}");
    let junit = std::fs::read_to_string(dir.join("s/junit.xml")).unwrap();
    assert!(junit.contains("<system-out>PASS with known: "), "{junit}");
    let (code, out, _) = rehearsal_in(dir, &["compare", path.to_str().unwrap(), "--seeds", "3", "--out", "c"]);
    assert_eq!(code, 0);
    assert!(out.contains("| default | 1 | 0 | 1 | 0 |"), "runs, clean passes, passes with known violations, failures:\n{out}");
    let (code, out, _) = rehearsal_in(dir, &["run", path.to_str().unwrap(), "--seed", "3", "--out", "r"]);
    assert_eq!(code, 0);
    assert!(out.contains("verdict      PASS with known: ") && out.contains(" ×"), "{out}");
    // A bench point whose runs the time limit cut off is not PASS (liveness is allowed here).
    let (code, out, err) =
        rehearsal_in(dir, &["bench", path.to_str().unwrap(), "--param", "run.sim_time_max_ms=600000", "--seeds", "3", "--out", "b"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(": UNFINISHED — failed 0/1, unfinished 1/1"), "{out}");
    assert!(!out.contains("PASS"), "{out}");
}
