//! A designer's own protocol SQL is first-class: `--sql FILE` on run (and sweep, compare,
//! bench), the SQL that ran named with its hash in every output, `compare` taking SQL files
//! as columns, and the parameters a compare-and-set claim needs bound by name.

use std::path::Path;

use crate::support::{open_db, rehearsal, root, stderr, stdout, summary_field};

const RESUMPTION: &str = "scenarios/examples/mid-session-resumption.toml";
const CAS: &str = "scenarios/variants/claim-compare-and-set.sql";

/// A claim_task that records what it was given in `worked_by`: `label/attempt/previous`.
const PROBE: &str = "-- name: claim_task\nUPDATE orchestration_tasks SET state = 'working', session_id = :session_id,\n\
    worked_by = :label || '/' || :attempt || '/' || coalesce(:previous_session_id, 'none'), started_at = datetime('now'),\n\
    last_heartbeat = datetime('now'), retry_count = 0\nWHERE task_id = :task_id AND state IN ('watching', 'fix_proposed', 'exit_requested');\n";

fn run_with_sql(sql: &Path, out: &Path) -> String {
    let o = rehearsal(&["run", RESUMPTION, "--sql", sql.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    stdout(&o)
}

#[test]
fn claim_task_gets_the_previous_owner_the_label_and_the_attempt_by_name_and_the_run_names_its_sql() {
    let tmp = tempfile::tempdir().unwrap();
    let probe = tmp.path().join("probe.sql");
    std::fs::write(&probe, PROBE).unwrap();
    let out = tmp.path().join("run");
    let printed = run_with_sql(&probe, &out);
    let db = open_db(&out);
    let worked_by: String = db.query_row("SELECT worked_by FROM orchestration_tasks WHERE task_id = 'task-01'", [], |r| r.get(0)).unwrap();
    let s1: String = db
        .query_row("SELECT from_session FROM orchestration_messages WHERE task_id = 'task-01' AND message_type = 'handoff'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(worked_by, format!("S2/2/{s1}"), "S2's claim saw S1 as the owner");
    let sql_line = summary_field(&printed, "sql");
    assert!(sql_line.starts_with("scenarios/protocol.sql (built in) + ") && sql_line.contains("probe.sql, sha256 "), "{sql_line}");
    assert!(summary_field(&printed, "replay").contains(&format!("--sql {}", probe.display())), "{printed}");
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("| protocol SQL | scenarios/protocol.sql (built in) + ") && !md.contains("seeds' own protocol"), "{md}");
    // check names the SQL too, for a scenario whose file names it.
    let scenario = tmp.path().join("mine.toml");
    let text = std::fs::read_to_string(root().join(RESUMPTION)).unwrap();
    std::fs::write(&scenario, format!("{text}\n[protocol]\nsql = \"probe.sql\"\n")).unwrap();
    let o = rehearsal(&["check", scenario.to_str().unwrap()]);
    assert!(
        stdout(&o).contains("probe.sql, sha256 ") && stdout(&o).contains("SQL: scenarios/protocol.sql (built in) + "),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
}

#[test]
fn the_compare_and_set_claim_takes_a_row_whose_owner_is_still_the_one_read_and_compare_runs_it_as_a_column() {
    let tmp = tempfile::tempdir().unwrap();
    // The example: S2 read S1 as the owner, S1 still is, so S2 claims and the run passes.
    let printed = run_with_sql(&root().join(CAS), &tmp.path().join("cas"));
    assert!(printed.contains("tasks        1/1 complete"), "{printed}");
    // Its negation (take the row only if the owner changed) blocks the same claim: the
    // parameter really holds the owner S2 read.
    let wrong = tmp.path().join("wrong.sql");
    std::fs::write(
        &wrong,
        std::fs::read_to_string(root().join(CAS)).unwrap().replace("session_id IS :previous", "session_id IS NOT :previous"),
    )
    .unwrap();
    let o = rehearsal(&["run", RESUMPTION, "--sql", wrong.to_str().unwrap(), "--out", tmp.path().join("wrong").to_str().unwrap()]);
    let fallbacks: i64 = open_db(&tmp.path().join("wrong"))
        .query_row("SELECT count(*) FROM orchestration_tasks WHERE task_id LIKE 'fallback-%'", [], |r| r.get(0))
        .unwrap();
    assert!(fallbacks >= 1, "S2's claim is blocked: {}", stdout(&o));
    // compare takes the SQL file as a column beside the default.
    let columns = format!("default,{CAS}");
    let out = tmp.path().join("compare");
    let o = rehearsal(&["compare", RESUMPTION, "--variants", &columns, "--seeds", "6", "--keep-runs", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let table = stdout(&o);
    assert!(table.contains(&format!("| {CAS} | 1 | 1 | 0 |")), "{table}");
    assert!(table.contains(&format!("- `{CAS}`: scenarios/protocol.sql (built in) + {CAS}, sha256 ")), "{table}");
    assert!(out.join("sql-claim-compare-and-set-6/comms.db").exists());
}

#[test]
fn a_sweep_with_sql_records_it_in_results_csv_and_its_replay_commands() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sweep");
    let o = rehearsal(&["sweep", RESUMPTION, "--sql", CAS, "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let rows = rehearsal::campaign::sweep::read_results(&out.join("results.csv")).unwrap();
    assert!(rows[0].sql.starts_with(&format!("scenarios/protocol.sql (built in) + {CAS}, sha256 ")), "{rows:?}");
    assert!(rows[0].replay.ends_with(&format!("--sql {CAS}")), "{rows:?}");
}
