//! Issue 42, docs/protocol.md C51: a session that reads the conductor's hand-over of its own
//! task stops at once and writes nothing more (000 "Background Watcher": the musician "reads
//! the message from the database, decides whether to interrupt current work"); under the
//! variant `messages-logged-only` (C23's earlier reading) it logs the message and works on.

use crate::support::{run_into, session_sql, status_lines, trace};

const SCENARIO: &str = "scenarios/faults/zombie-reads-handover.toml";

/// S1 of task-01 hangs from 900 s to 2,400 s (the scenario's `[[faults.hang]]`).
const WAKES_AT_MS: i64 = 2_400_000;

#[test]
fn a_woken_zombie_that_reads_its_handover_stops_without_another_write() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out) = run_into(SCENARIO, &[], tmp.path());
    assert_eq!(code, 0, "{out}");
    let records = trace(tmp.path());
    let read = records.iter().find(|r| r.event == "replaced_read").expect("S1 reads its hand-over");
    assert!(read.detail.contains("HANDOFF: task-01 session S1 went stale"), "{}", read.detail);
    assert!(read.t_ms >= WAKES_AT_MS, "read after it woke: {}", read.t_ms);
    // Nothing of S1 or its watchers after its hang: no statement that writes, no status line.
    let writes_after: Vec<String> = session_sql(tmp.path(), "task-01.S1")
        .into_iter()
        .filter(|r| r.t_ms >= WAKES_AT_MS && r.stmt.is_some_and(|s| s.writes()))
        .map(|r| format!("{} {}", r.t_ms, r.statement))
        .collect();
    assert!(writes_after.is_empty(), "S1 wrote after it woke: {writes_after:?}");
    // Nor to a file: the status file is the task's, its successor's now (C152: the woken
    // session reads its watcher's overdue poll before it logs the agent that returned).
    let files_after: Vec<String> = records
        .iter()
        .filter(|r| r.session == read.session && r.t_ms >= WAKES_AT_MS && r.event.starts_with("file_") && r.event != "file_read")
        .map(|r| format!("{} {} {} `{}`", r.t_ms, r.event, r.statement, r.detail))
        .collect();
    assert!(files_after.is_empty(), "S1 wrote to a file after it woke: {files_after:?}");
    // It ends at the read.
    let ended = records.iter().filter(|r| r.session == read.session && r.event == "exit" && r.actor == read.actor).map(|r| r.t_ms).max();
    assert_eq!(ended, Some(read.t_ms), "S1 ends as it reads");
    assert!(status_lines(tmp.path(), "task-01").iter().any(|l| l.starts_with("task complete")), "S2 completes");
}

#[test]
fn under_messages_logged_only_the_same_zombie_overwrites_its_successors_row() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out) = run_into(SCENARIO, &["messages-logged-only"], tmp.path());
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("owner-writes-only"), "{out}");
    assert!(!trace(tmp.path()).iter().any(|r| r.event == "replaced_read"));
}
