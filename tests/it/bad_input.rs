//! Bad input exits 2 with a message that names the file, the line, the column and the key,
//! or the broken SQL statement, before anything runs.

use crate::support::{rehearsal, stderr, stdout};

/// Writes `scenario` (and `sql` beside it, if any), runs it, and checks the exit code and
/// that every `expect` fragment is in stderr.
fn check(scenario: &str, sql: Option<&str>, expect: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("bad.toml");
    std::fs::write(&path, scenario).unwrap();
    if let Some(sql) = sql {
        std::fs::write(tmp.path().join("variant.sql"), sql).unwrap();
    }
    let out = tmp.path().join("out");
    let o = rehearsal(&["run", path.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "stdout:\n{}\nstderr:\n{err}", stdout(&o));
    for fragment in expect {
        let fragment = fragment.replace("FILE", path.to_str().unwrap());
        assert!(err.contains(&fragment), "expected `{fragment}` in stderr:\n{err}");
    }
    assert!(!out.join("trace.csv").exists(), "nothing runs on bad input");
}

#[test]
fn malformed_toml_names_file_line_and_key() {
    check("[tasks]\ncount = 4\nsteps = = 3\n", None, &["FILE:3:", "key `tasks.steps`"]);
}

#[test]
fn an_unknown_key_is_an_error_naming_it() {
    check("[tasks]\ncount = 4\n[timing]\nbackground_pol_ms = 8000\n", None, &["FILE:4:1: key `timing.background_pol_ms`", "unknown field"]);
}

#[test]
fn a_negative_duration_is_an_error_naming_its_key() {
    check("[tasks]\ncount = 4\n[timing]\nsubagent_ms = -60000\n", None, &["FILE:4:15: key `timing.subagent_ms`", "cannot be negative"]);
    check(
        "[tasks]\ncount = 4\n[conductor]\nreview_ms = { kind = \"uniform\", min = -1, max = 5 }\n",
        None,
        &["FILE:4:", "key `conductor.review_ms", "cannot be negative"],
    );
}

#[test]
fn a_missing_scenario_file_is_bad_input() {
    let o = rehearsal(&["run", "scenarios/does-not-exist.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("scenarios/does-not-exist.toml: cannot read scenario"), "{}", stderr(&o));
}

#[test]
fn a_broken_sql_statement_is_named_before_the_run() {
    let scenario = "[tasks]\ncount = 1\n[protocol]\nsql = \"variant.sql\"\n";
    check(
        scenario,
        Some("-- name: claim_task\nUPDATE orchestration_tasks SET stat = 'working' WHERE task_id = :task_id;\n"),
        &["statement `claim_task`", "variant.sql:1", "no such column: stat"],
    );
    check(
        scenario,
        Some("-- name: heartbeat\nUPDATE orchestration_tasks SET last_heartbeat = datetime('now') WHERE task_id = :task;\n"),
        &["statement `heartbeat`", "uses parameter :task, which the engine does not supply"],
    );
    check(scenario, Some("-- name: hartbeat\nSELECT 1;\n"), &["statement `hartbeat`", "is not one the engine runs"]);
}

#[test]
fn a_bad_command_line_is_a_usage_error() {
    let o = rehearsal(&["run", "scenarios/quickstart.toml", "--seed", "minus-one"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}
