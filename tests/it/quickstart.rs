//! The shipped quickstart scenario runs the happy path to the end, and the database and the
//! trace show it the way the seeds describe it.

use rehearsal::trace::trace_reader::TraceRecord;
use rehearsal::vocab::{ActorName, Stmt, TaskState, WatcherKind};

use crate::support::{by_watcher, open_db, run_ok, scenario, session, summary_field, trace};

/// Seed 004 "Database", both templates verbatim ("template follow=exact").
const SEED_004_TASKS: &str = "CREATE TABLE orchestration_tasks (
    task_id TEXT PRIMARY KEY,
    state TEXT NOT NULL CHECK (state IN (
        'watching', 'reviewing', 'exit_requested', 'complete',
        'working', 'needs_review', 'review_approved', 'review_failed',
        'error', 'fix_proposed', 'exited'
    )),
    instruction_path TEXT,
    session_id TEXT,
    worked_by TEXT,
    started_at TEXT,
    completed_at TEXT,
    report_path TEXT,
    retry_count INTEGER DEFAULT 0,
    last_heartbeat TEXT,
    last_error TEXT
)";

const SEED_004_MESSAGES: &str = "CREATE TABLE orchestration_messages (
    id INTEGER PRIMARY KEY,
    task_id TEXT NOT NULL,
    from_session TEXT NOT NULL,
    message TEXT NOT NULL,
    message_type TEXT CHECK (message_type IN (
        'review_request', 'error', 'context_warning', 'completion',
        'emergency', 'handoff', 'approval', 'fix_proposal',
        'rejection', 'instruction', 'claim_blocked', 'resumption'
    )),
    timestamp TEXT DEFAULT CURRENT_TIMESTAMP
)";

const MESSAGE_TYPES: [&str; 12] = [
    "review_request",
    "error",
    "context_warning",
    "completion",
    "emergency",
    "handoff",
    "approval",
    "fix_proposal",
    "rejection",
    "instruction",
    "claim_blocked",
    "resumption",
];

#[test]
fn quickstart_completes_every_task_in_simulated_time_with_the_seed_004_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let stdout = run_ok(&scenario("quickstart.toml"), 42, tmp.path());
    assert_eq!(summary_field(&stdout, "verdict"), "PASS");
    assert_eq!(summary_field(&stdout, "tasks"), "4/4 complete");
    // This test's binary is not on PATH: the command names it by its path (tests/it/repro.rs).
    assert!(summary_field(&stdout, "replay").contains("rehearsal run "), "{stdout}");
    let db = open_db(tmp.path());

    let tables: Vec<String> = db
        .prepare("SELECT sql FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(tables, vec![SEED_004_MESSAGES.to_string(), SEED_004_TASKS.to_string()]);
    let journal: String = db.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(journal, "wal");

    // The scenario's epoch is 2026-01-05 09:00:00; the run lasts well under 8 hours.
    let rows: Vec<(String, String, String, String, String, String)> = db
        .prepare("SELECT task_id, state, started_at, coalesce(completed_at, ''), last_heartbeat, coalesce(worked_by, '') FROM orchestration_tasks ORDER BY task_id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows.len(), 5, "task-00 and four musician tasks");
    let makespan_end = "2026-01-05 17:00:00";
    for (task_id, state, started, completed, heartbeat, worked_by) in &rows {
        assert_eq!(state, "complete", "{task_id}");
        assert!(started.as_str() >= "2026-01-05 09:00:00" && started.as_str() < makespan_end, "{task_id} started {started}");
        assert!(heartbeat.as_str() >= started.as_str() && heartbeat.as_str() < makespan_end, "{task_id} heartbeat {heartbeat}");
        if task_id != "task-00" {
            assert!(completed.as_str() > started.as_str() && completed.as_str() < makespan_end, "{task_id} completed {completed}");
            assert_eq!(completed, heartbeat, "{task_id}: the terminal write sets both");
            assert_eq!(worked_by, &format!("musician-{task_id}"), "000 Bootstrap 5");
        }
    }

    let messages: Vec<(String, Option<String>, String)> = db
        .prepare("SELECT task_id, message_type, timestamp FROM orchestration_messages ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for (task_id, kind, timestamp) in &messages {
        let kind = kind.as_deref().expect("004 Message Type Rule: no NULL message_type");
        assert!(MESSAGE_TYPES.contains(&kind), "{task_id}: {kind}");
        assert!(timestamp.as_str() >= "2026-01-05 09:00:00" && timestamp.as_str() < makespan_end);
    }
    // Tasks 1-3: checkpoints after steps 2 and 3; task 4: one checkpoint. Every review is
    // answered; each task sends a completion for review and a final one (004 Mark Complete).
    let count = |task: &str, kind: &str| messages.iter().filter(|(t, k, _)| t == task && k.as_deref() == Some(kind)).count();
    for (task, checkpoints) in [("task-01", 2), ("task-02", 2), ("task-03", 2), ("task-04", 1)] {
        assert_eq!(count(task, "instruction"), 1, "{task}");
        assert_eq!(count(task, "review_request"), checkpoints, "{task}");
        assert_eq!(count(task, "completion"), 2, "{task}");
        assert_eq!(count(task, "approval"), checkpoints + 1, "{task}");
    }
}

#[test]
fn quickstart_trace_shows_message_first_heartbeats_at_step_boundaries_and_terminal_write_last() {
    let tmp = tempfile::tempdir().unwrap();
    run_ok(&scenario("quickstart.toml"), 3, tmp.path());
    let text = std::fs::read_to_string(tmp.path().join("trace.csv")).unwrap();
    assert_eq!(text.lines().next(), Some("t_ms,time,actor,session,event,statement,rows,state_after,detail,seq,observed"));
    let body = trace(tmp.path());
    let mut previous_t_ms = 0i64;
    for row in &body {
        assert!(row.t_ms >= previous_t_ms, "trace goes back in time at seq {}", row.seq);
        previous_t_ms = row.t_ms;
    }
    for (task, steps) in [("task-01", 4), ("task-02", 4), ("task-03", 4), ("task-04", 3)] {
        let s1 = session(&format!("{task}.S1"));
        let sql: Vec<&TraceRecord> = body.iter().filter(|r| r.actor == Some(ActorName::Session(s1)) && r.is_sql()).collect();
        // 000 Heartbeat Protocol: one heartbeat at every step start and every step end.
        assert_eq!(sql.iter().filter(|r| r.stmt == Some(Stmt::Heartbeat)).count(), 2 * steps, "{task}");
        // 000 Bootstrap 3: the claim is the first statement and changes exactly one row.
        assert_eq!((sql[0].stmt, sql[0].rows.as_str(), sql[0].state_after), (Some(Stmt::ClaimTask), "1", Some(TaskState::Working)));
        // 004 Request Review: message FIRST, then state change.
        for (i, row) in sql.iter().enumerate() {
            if row.stmt == Some(Stmt::SetNeedsReview) {
                assert!(matches!(sql[i - 1].stmt, Some(Stmt::SendReviewRequest | Stmt::SendCompletion)), "{task}: {:?}", sql[i - 1]);
            }
        }
        // 000 Terminal Write Atomicity: the final message, then `complete` as the last write.
        let writes: Vec<&&TraceRecord> = sql.iter().filter(|r| r.stmt != Some(Stmt::StopHookState)).collect();
        let n = writes.len();
        assert_eq!(
            (writes[n - 2].stmt, writes[n - 1].stmt, writes[n - 1].state_after),
            (Some(Stmt::SendCompletion), Some(Stmt::MarkComplete), Some(TaskState::Complete))
        );
        // Nothing of the session (watchers included) writes after the terminal write.
        let terminal_seq = writes[n - 1].seq;
        let later_writes = body
            .iter()
            .filter(|r| r.place() == Some(s1) && r.is_sql() && r.seq > terminal_seq && r.stmt != Some(Stmt::StopHookState))
            .count();
        assert_eq!(later_writes, 0, "{task}");
        // 000 Background Watcher: polls conductor messages by id.
        assert!(
            body.iter().any(|r| by_watcher(r, s1, WatcherKind::Background) && r.stmt == Some(Stmt::ReadNewConductorMessages)),
            "{task}"
        );
    }
}
