//! `rehearsal judge --db` against rehearsal itself (issue 40): runs of the fault scenarios with
//! the history recorder installed in their comms.db (`Execution::record_history`) are judged
//! from the database alone, and must come to the trace-based verdict on every rule both can
//! judge; every recorded write must be explained. Plus the command's bad input.

use std::path::Path;

use rehearsal::campaign::judge_db::{judge_db_with, source_of, Source};
use rehearsal::run::{execute, Execution, RunOptions};
use rehearsal::vocab::RuleId;

use crate::support::{rehearsal, root, stderr, stdout};

/// The violations of rules `judge --db` judges: (rule, t_ms), in order; liveness by its
/// presence only (a run ends at its makespan, a history at its last write).
fn judged(violations: &[rehearsal::judging::oracle::Violation]) -> Found {
    let mut found: Found = violations
        .iter()
        .filter(|v| source_of(v.rule) != Source::FinalTables && !matches!(source_of(v.rule), Source::Simulator(_)))
        .map(|v| (v.rule, v.t_ms))
        .collect();
    found.sort();
    if violations.iter().any(|v| v.rule == RuleId::Liveness) {
        found.push((RuleId::Liveness, 0));
    }
    found
}

/// Violations as compared: (rule, instant).
type Found = Vec<(RuleId, i64)>;

/// One recorded run: (what the trace's checker found, what the history gave, unexplained writes).
fn agreement(scenario: &Path, seed: u64, out: &Path) -> (Found, Found, Vec<String>) {
    let options =
        RunOptions { scenario_path: scenario.to_path_buf(), seed: Some(seed), out_dir: Some(out.to_path_buf()), variants: Vec::new() };
    let loaded = rehearsal::input::scenario::Scenario::load(scenario).unwrap();
    let summary = execute(options.plan(&loaded).unwrap(), Execution { record_history: true, ..Execution::default() }).unwrap().summary;
    let from_db = judge_db_with(&out.join("comms.db"), Some(&summary.resolved)).unwrap();
    let mut trace = judged(&summary.verdict.violations);
    // An ambiguous commit's blind retry (docs/protocol.md C70) is a truth of the run, not of
    // the database: a history holds the retried `set_error` as a second write like any other,
    // so judge --db counts it as a second report, as it would in a real deployment.
    if !loaded.faults.ambiguous_commit.is_empty() {
        trace.retain(|(rule, _)| *rule != RuleId::RetryCountCountsErrors);
    }
    (trace, judged(&from_db.violations), from_db.unexplained)
}

#[test]
fn judging_recorded_runs_of_the_fault_scenarios_agrees_with_the_trace_on_every_rule_both_judge() {
    let tmp = tempfile::tempdir().unwrap();
    let mut scenarios = crate::support::toml_files(&root().join("scenarios/faults"));
    scenarios.sort();
    let seeds_each = 200usize.div_ceil(scenarios.len()) as u64;
    let cases: Vec<(std::path::PathBuf, u64)> =
        scenarios.iter().flat_map(|s| (1..=seeds_each).map(move |seed| (s.clone(), seed))).collect();
    assert!(cases.len() >= 200, "{} runs", cases.len());
    let results = crate::support::on_two_threads(cases.len(), |i| {
        let (scenario, seed) = &cases[i];
        let out = tmp.path().join(format!("r{i}"));
        let found = agreement(scenario, *seed, &out);
        std::fs::remove_dir_all(&out).unwrap();
        found
    });
    let mut violated = 0;
    let mut problems = Vec::new();
    for ((scenario, seed), (trace, db, unexplained)) in cases.iter().zip(&results) {
        let name = scenario.file_name().unwrap().to_string_lossy();
        if !unexplained.is_empty() {
            problems.push(format!("{name} seed {seed}: unexplained writes {unexplained:?}"));
        }
        if trace != db {
            problems.push(format!("{name} seed {seed}: the trace's checker found {trace:?}, judge --db {db:?}"));
        }
        violated += usize::from(!trace.is_empty());
    }
    assert!(problems.is_empty(), "{} disagreement(s):\n{}", problems.len(), problems.join("\n"));
    // Not a vacuous agreement: the fault scenarios do break rules a history can judge.
    assert!(violated >= 20, "only {violated} of {} runs broke a rule judge --db judges", cases.len());
}

#[test]
fn bad_input_to_judge_db_is_named_with_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let text = tmp.path().join("notes.db");
    std::fs::write(&text, "this is not a database, only text long enough to look at").unwrap();
    let other = tmp.path().join("other.db");
    rusqlite::Connection::open(&other).unwrap().execute_batch("CREATE TABLE t (x);").unwrap();
    for (db, says) in [(&text, "not an SQLite database"), (&other, "not a comms.db"), (&tmp.path().join("none.db"), "no such file")] {
        let o = rehearsal(&["judge", "--db", db.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(says), "{}: {}", db.display(), stderr(&o));
    }
    // A recorded run, then its history cut, edited and gapped.
    let run = tmp.path().join("run");
    let o = rehearsal(&["run", "scenarios/faults/zombie.toml", "--out", run.to_str().unwrap(), "--record-history"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let o = rehearsal(&["judge", "--db", run.join("comms.db").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("FAIL: owner-writes-only"), "{}", stdout(&o));
    let breakages = [
        ("DELETE FROM rehearsal_history WHERE seq = 40", "the sequence jumps from 39 to 41"),
        ("DELETE FROM rehearsal_history WHERE seq = (SELECT max(seq) FROM rehearsal_history)", "are missing (truncated)"),
        (
            "UPDATE rehearsal_history SET new_values = replace(new_values, '\"working\"', '\"watching\"') WHERE seq = (SELECT min(seq) FROM rehearsal_history WHERE op = 'UPDATE' AND seq > 20 AND new_values LIKE '%\"working\"%')",
            "(edited",
        ),
        ("UPDATE rehearsal_history SET old_values = 'not json' WHERE seq = 50", "seq 50: old_values is not the JSON object"),
    ];
    for (i, (edit, says)) in breakages.iter().enumerate() {
        let copy = tmp.path().join(format!("edited{i}.db"));
        std::fs::copy(run.join("comms.db"), &copy).unwrap();
        let conn = rusqlite::Connection::open(&copy).unwrap();
        conn.execute_batch(&format!("DROP TRIGGER rehearsal_history_no_update; DROP TRIGGER rehearsal_history_no_delete; {edit};"))
            .unwrap();
        drop(conn);
        let o = rehearsal(&["judge", "--db", copy.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{edit}: {}{}", stdout(&o), stderr(&o));
        assert!(stderr(&o).contains(says), "{edit}: {}", stderr(&o));
    }
}

#[test]
fn a_comms_db_without_history_is_judged_on_its_final_tables_and_says_the_rest_needs_the_recorder() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("zombie");
    let o = rehearsal(&["run", "scenarios/faults/zombie.toml", "--out", run.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let db = run.join("comms.db");
    let o = rehearsal(&["judge", "--db", db.to_str().unwrap()]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "the final tables of seed 21 break no rule they can show:\n{out}");
    assert!(out.contains("no recorded history"), "{out}");
    let line = |rule: &str| out.lines().find(|l| l.trim_start().starts_with(rule)).unwrap_or_else(|| panic!("{rule}:\n{out}")).to_string();
    assert!(line("owner-writes-only").contains("not judged: needs the recorded history"), "{out}");
    assert!(line("liveness").contains("pass (judged from the final tables)"), "{out}");
    assert!(
        line("completed-once").contains("not judged") && line("completed-once").contains("completion reports from 2 sessions"),
        "{out}"
    );
    // A message to a task with no row, and a `complete` row without its completion report.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("INSERT INTO orchestration_messages (task_id, from_session, message, message_type) VALUES ('task-99', 'task-00', 'x', 'approval'); DELETE FROM orchestration_messages WHERE message_type = 'completion';").unwrap();
    drop(conn);
    let o = rehearsal(&["judge", "--db", db.to_str().unwrap()]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("to task-99, a task with no row"), "{out}");
    assert!(out.contains("message-before-state: in the final tables: task-01 is `complete`"), "{out}");
}
