//! The runs issue 26 named, end to end: with `[expect] allowed` emptied, the rules for its
//! three behaviours (a relaunch while a claim is pending, a hand-over on a replaced session's
//! `exited`, a handed-over session writing before its successor claims) list them in
//! violations.csv, each row hand-checked against its trace once.

use std::path::Path;

use rehearsal::run::{run, RunOptions};

use crate::support::root;

/// The shipped scenario copied under `dir` with `[expect] allowed = []`, under its own name.
fn strict_copy(scenario: &str, dir: &Path) -> std::path::PathBuf {
    let text = std::fs::read_to_string(root().join("scenarios").join(scenario)).unwrap();
    let mut table: toml::Table = toml::from_str(&text).unwrap();
    let expect = table.get_mut("expect").and_then(|e| e.as_table_mut()).expect("the scenario has an [expect] section");
    assert!(expect.contains_key("allowed"), "{scenario} allows some violations; this test empties the list");
    expect.insert("allowed".into(), toml::Value::Array(Vec::new()));
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(Path::new(scenario).file_name().unwrap());
    std::fs::write(&path, toml::to_string(&table).unwrap()).unwrap();
    path
}

/// The (t_ms, rule, explanation) rows of violations.csv of `scenario` run with `seed`.
fn violations(scenario: &str, seed: u64, dir: &Path) -> Vec<(i64, String, String)> {
    violations_under(scenario, seed, dir, &[])
}

/// The same under `variants`.
fn violations_under(scenario: &str, seed: u64, dir: &Path, variants: &[&str]) -> Vec<(i64, String, String)> {
    let path = strict_copy(scenario, &dir.join("scenario"));
    let out = dir.join(format!("seed-{seed}"));
    let variants = variants.iter().map(|v| v.to_string()).collect();
    let options = RunOptions { scenario_path: path, seed: Some(seed), out_dir: Some(out.clone()), variants };
    let summary = run(&options).unwrap();
    assert!(!summary.verdict.passed(), "{scenario} seed {seed} fails once nothing is allowed");
    let mut reader = csv::Reader::from_path(out.join("violations.csv")).unwrap();
    assert_eq!(reader.headers().unwrap(), vec!["t_ms", "rule", "explanation"]);
    reader.records().map(|r| r.unwrap()).map(|r| (r[0].parse().unwrap(), r[1].to_string(), r[2].to_string())).collect()
}

fn of_rule<'a>(rows: &'a [(i64, String, String)], rule: &str) -> Vec<&'a (i64, String, String)> {
    rows.iter().filter(|(_, r, _)| r == rule).collect()
}

#[test]
fn random_faults_seed_86_relaunches_task_04_while_its_hung_first_session_may_still_claim() {
    let tmp = tempfile::tempdir().unwrap();
    let rows = violations("faults/random-faults.toml", 86, tmp.path());
    let found = of_rule(&rows, "no-relaunch-while-claim-pending");
    assert_eq!(found.len(), 1, "{rows:#?}");
    let (t_ms, _, why) = found[0];
    assert_eq!(*t_ms, 622_176, "{why}");
    assert!(why.contains("launched session S2") && why.contains("of task-04"), "{why}");
    assert!(why.contains("session S1") && why.contains("had not yet run its claim and was alive, frozen by a hang"), "{why}");
}

/// Issue 26 named seed 152; since issue 27's C42 (a resumption's sibling read and report)
/// seed 152 no longer shows it, seed 20 does, under `messages-logged-only` (docs/protocol.md
/// C51): by default since issue 42 the replaced S1 reads its hand-over and stops before that
/// `exited`.
#[test]
fn random_faults_seed_20_hands_task_01_over_on_a_replaced_sessions_exit() {
    let tmp = tempfile::tempdir().unwrap();
    let rows = violations_under("faults/random-faults.toml", 20, tmp.path(), &["messages-logged-only"]);
    let found = of_rule(&rows, "hand-over-on-owner-exit");
    assert_eq!(found.len(), 1, "{rows:#?}");
    let (t_ms, _, why) = found[0];
    // Times as of docs/protocol.md C171 (a late write is followed by the watcher's read, under
    // this variant too: it logs what it reads earlier), which moved them from 4202795 / 4046648.
    assert_eq!(*t_ms, 4_370_270, "{why}");
    assert!(why.contains("began handing task-01 over"), "{why}");
    assert!(why.contains("session S1") && why.contains("wrote that `exited` at t=4038194 ms"), "{why}");
    assert!(why.contains("belonged to session S2") && why.contains("which was alive and running"), "{why}");
}

/// Issue 26 named random-faults seed 152 for this too, against an earlier build; in this one
/// seed 152 has no such write (its conductor and musician changed since), so random-faults
/// seed 15 (which the issue also named) shows it, and seed 51 (seed 25, ci-smoke seed 13, also
/// named, no longer does).
#[test]
fn a_session_handed_over_while_hung_writes_before_its_successor_claims() {
    let tmp = tempfile::tempdir().unwrap();
    // Under `messages-logged-only` (docs/protocol.md C51): by default since issue 42 the woken S1
    // reads its hand-over and stops.
    let rows = violations_under("faults/random-faults.toml", 15, tmp.path().join("rf").as_path(), &["messages-logged-only"]);
    let found = of_rule(&rows, "silent-after-hand-over");
    let times: Vec<i64> = found.iter().map(|(t, _, _)| *t).collect();
    assert_eq!(times, [5_961_605, 5_971_798], "{rows:#?}");
    assert!(found[0].2.contains("wrote `resume_working` to task-03 (state fix_proposed → working)"), "{}", found[0].2);
    assert!(found[1].2.contains("wrote `mark_complete` to task-03"), "{}", found[1].2);
    for (_, _, why) in found {
        assert!(why.contains("session S1") && why.contains("S2 (") && why.contains("had not claimed yet"), "{why}");
    }
    // Seed 25 showed it too until issue 42's verification task (docs/protocol.md C54) moved
    // its resumptions' timing, and seed 51 until C171 moved its draws; of seeds 1..=60 under
    // the variant, 11, 15 and 17 show it now.
    let other = violations_under("faults/random-faults.toml", 17, tmp.path().join("rf17").as_path(), &["messages-logged-only"]);
    assert!(!of_rule(&other, "silent-after-hand-over").is_empty(), "{other:#?}");
}
