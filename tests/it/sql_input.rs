//! `--sql FILE` cannot be silently wrong (issue 25, item 6): a file that would leave the
//! protocol as it was (no `-- name:` entry, empty, binary) or names a statement the engine
//! does not run is bad input, exit 2, naming the file; a statement that changes the schema
//! or the connection is refused at load naming the entry and file:line, as SQLite's
//! authorizer sees it; `check --sql` validates a file; and `--sql` layers over the scenario's
//! own `[protocol] sql`, every file named in what the run reports.

use std::path::Path;

use crate::support::{rehearsal, stderr, stdout, summary_field};

const QUICKSTART: &str = "scenarios/quickstart.toml";

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_string()
}

/// `args` exits 2 and its stderr holds every fragment.
fn refused(args: &[&str], fragments: &[&str]) {
    let o = rehearsal(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}\n{}{}", stdout(&o), stderr(&o));
    for fragment in fragments {
        assert!(stderr(&o).contains(fragment), "{args:?}: `{fragment}` in:\n{}", stderr(&o));
    }
}

#[test]
fn a_sql_file_with_nothing_the_engine_runs_is_bad_input_for_every_command() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let cases = [
        (write(d, "plain.sql", b"UPDATE orchestration_tasks SET state = 'complete';\n"), "no `-- name:` entry"),
        (write(d, "empty.sql", b"\n  \n"), "empty"),
        (write(d, "binary.sql", b"-- name: heartbeat\n\x00\x01\x02"), "a NUL byte at byte 19"),
        (write(d, "latin1.sql", b"-- name: heartbeat\nSELECT '\xe9';\n"), "not UTF-8 text (byte 27)"),
        (write(d, "scenario.toml", b"[tasks]\ncount = 1\n"), "no `-- name:` entry"),
        (
            write(d, "unknown.sql", b"-- name: hearbeat\nSELECT 1;\n"),
            "statement `hearbeat` (FILE:1) is not one the engine runs; did you mean `heartbeat`?",
        ),
    ];
    let out = d.join("out");
    for (file, message) in &cases {
        let message = message.replace("FILE", file);
        refused(&["run", QUICKSTART, "--sql", file, "--out", out.to_str().unwrap()], &[file, &message]);
        refused(&["check", "--sql", file], &[file, &message]);
    }
    // The commands that run many pairs say it once, before any pair.
    let (plain, message) = &cases[0];
    refused(&["sweep", QUICKSTART, "--seeds", "1..=2", "--sql", plain, "--out", d.join("sweep").to_str().unwrap()], &[message]);
    refused(&["compare", QUICKSTART, "--seeds", "1", "--sql", plain, "--out", d.join("compare").to_str().unwrap()], &[message]);
    refused(
        &[
            "bench",
            QUICKSTART,
            "--param",
            "timing.heartbeat_refresh_s=300",
            "--seeds",
            "1",
            "--sql",
            plain,
            "--out",
            d.join("bench").to_str().unwrap(),
        ],
        &[message],
    );
    refused(&["bench", QUICKSTART, "--overhead", "--repeat", "1", "--sql", plain], &[message]);
    assert!(!d.join("sweep/results.csv").exists() && !d.join("bench/bench.csv").exists(), "nothing ran");
}

#[test]
fn statements_that_change_the_schema_or_the_connection_are_refused_at_load_naming_entry_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let heartbeat = "-- name: heartbeat\nUPDATE orchestration_tasks SET last_heartbeat = datetime('now') WHERE task_id = :task_id;\n";
    let cases = [
        ("DROP TABLE orchestration_messages;", "DROP TABLE orchestration_messages"),
        ("ALTER TABLE orchestration_tasks ADD COLUMN x;", "ALTER TABLE orchestration_tasks"),
        ("CREATE TRIGGER t AFTER UPDATE ON orchestration_tasks BEGIN SELECT 1; END;", "CREATE TRIGGER t"),
        ("create index i on orchestration_tasks (state);", "CREATE INDEX i"),
        ("VACUUM;", "VACUUM"),
        ("ATTACH 'other.db' AS other;", "ATTACH"),
        ("PRAGMA journal_mode = DELETE;", "PRAGMA journal_mode = DELETE"),
    ];
    for (i, (sql, action)) in cases.iter().enumerate() {
        // The bad entry is the second, at line 4 of the file.
        let file = write(d, &format!("bad{i}.sql"), format!("{heartbeat}\n-- name: conductor_heartbeat\n{sql}\n").as_bytes());
        let expected = format!("statement `conductor_heartbeat` ({file}:4) changes the schema or the connection ({action}");
        refused(&["check", "--sql", &file], &[&expected, "refused"]);
        refused(&["run", QUICKSTART, "--sql", &file, "--out", d.join(format!("out{i}")).to_str().unwrap()], &[&expected, "refused"]);
    }
    let o = rehearsal(&["check", "--sql", &write(d, "good.sql", heartbeat.as_bytes())]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("good.sql (SQL: scenarios/protocol.sql (built in) + "), "{}", stdout(&o));
}

/// guard-block.toml needs its own `[protocol] sql` (its claim never succeeds, so liveness is
/// its expected failure); a user's `--sql` on top must not take it away.
#[test]
fn sql_layers_over_the_scenario_s_own_and_every_file_in_force_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let heartbeat = "-- name: heartbeat\nUPDATE orchestration_tasks\nSET last_heartbeat = datetime('now')\nWHERE task_id = :task_id;\n";
    let mine = write(tmp.path(), "mine.sql", heartbeat.as_bytes());
    let o = rehearsal(&["run", "scenarios/examples/guard-block.toml", "--sql", &mine, "--out", tmp.path().join("run").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "guard-block keeps its statements: {}{}", stdout(&o), stderr(&o));
    let sql = summary_field(&stdout(&o), "sql");
    assert!(sql.starts_with(&format!("scenarios/protocol.sql (built in) + scenarios/examples/guard-block.sql + {mine}, sha256 ")), "{sql}");
    let report = std::fs::read_to_string(tmp.path().join("run/summary.md")).unwrap();
    assert!(report.contains("guard-block.sql +") && report.contains("mine.sql"), "summary.md names both files");
    // A later file's entry replaces an earlier one of the same name: guard-block's broken
    // create_task replaced by the default's lets the task be claimed at once, so no claim is
    // blocked and no fallback row is written (with guard-block's own, mine.sql above, there is).
    let fallbacks = |dir: &str| -> i64 {
        crate::support::open_db(&tmp.path().join(dir))
            .query_row("SELECT count(*) FROM orchestration_tasks WHERE task_id LIKE 'fallback-%'", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(fallbacks("run"), 1, "guard-block's create_task kept under --sql: its claim is blocked");
    let default_create = rehearsal::input::sql_catalog::parse(rehearsal::input::sql_catalog::DEFAULT_PROTOCOL_SQL, "protocol.sql")
        .unwrap()
        .into_iter()
        .find(|e| e.name == "create_task")
        .unwrap();
    let create = write(tmp.path(), "create.sql", format!("-- name: create_task\n{}\n", default_create.sql).as_bytes());
    let o =
        rehearsal(&["run", "scenarios/examples/guard-block.toml", "--sql", &create, "--out", tmp.path().join("create").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(fallbacks("create"), 0, "the default create_task replaced guard-block's: nothing blocked");
}

/// Issue 46: a user's entry is checked against the statement table at prepare. The same
/// columns in another order (read by position, they would be misread silently), one too few,
/// or a parameter the engine does not bind exit 2 naming the entry (file:line) and the shape
/// the engine expects.
#[test]
fn an_entry_whose_result_columns_are_reordered_is_refused_naming_it_and_the_expected_shape() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let reordered = write(
        d,
        "reordered.sql",
        b"-- a designer's read of the task row, its columns in another order\n-- name: read_task_state\nSELECT retry_count, state, last_heartbeat,\n       (julianday('now') - julianday(last_heartbeat)) * 86400 AS seconds_stale\nFROM orchestration_tasks WHERE task_id = :task_id;\n",
    );
    let out = d.join("out");
    let expected = "parameters :task_id (any of them); result columns (state, retry_count, last_heartbeat, seconds_stale) in this order";
    refused(
        &["run", QUICKSTART, "--sql", &reordered, "--out", out.to_str().unwrap()],
        &[
            &format!("statement `read_task_state` ({reordered}:2) returns columns (retry_count, state, last_heartbeat, seconds_stale)"),
            expected,
        ],
    );
    assert!(!out.join("trace.csv").exists(), "nothing runs");
    refused(&["check", "--sql", &reordered], &[expected]);
    let short = write(d, "short.sql", b"-- name: read_instruction\nSELECT message FROM orchestration_messages WHERE task_id = :task_id;\n");
    refused(
        &["check", "--sql", &short],
        &["statement `read_instruction` (", "returns columns (message)", "result columns (id, message) in this order"],
    );
    let returning = write(
        d,
        "returning.sql",
        b"-- name: heartbeat\nUPDATE orchestration_tasks SET last_heartbeat = datetime('now') WHERE task_id = :task_id RETURNING state;\n",
    );
    refused(&["check", "--sql", &returning], &["statement `heartbeat`", "returns columns (state)", "no result column"]);
    // The near miss: the same columns in the table's order run.
    let ordered = write(
        d,
        "ordered.sql",
        b"-- name: read_task_state\nSELECT state, retry_count, last_heartbeat,\n       (julianday('now') - julianday(last_heartbeat)) * 86400 AS seconds_stale\nFROM orchestration_tasks WHERE task_id = :task_id;\n",
    );
    let o = rehearsal(&["check", "--sql", &ordered]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}
