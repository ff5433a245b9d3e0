//! Issue 42, docs/protocol.md C51: a session that reads the conductor's hand-over of its own
//! task stops at once and writes nothing more (000 "Background Watcher": the musician "reads
//! the message from the database, decides whether to interrupt current work"); under the
//! variant `messages-logged-only` (C23's earlier reading) it logs the message and works on.

use rehearsal::trace::trace_reader::TraceRecord;
use rehearsal::vocab::Stmt;

use crate::support::{messages, rehearsal, root, run_into, session_sql, status_lines, stdout, task_row, trace};

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
    // Its stop is an exit attempt through its stop hook (C170): S2 claimed long before, so no
    // row names S1 and the hook lets it go at its first check, where it ends.
    let hooks: Vec<&TraceRecord> = records.iter().filter(|r| r.session == read.session && r.event == "stop_hook").collect();
    assert_eq!(hooks.len(), 1, "{hooks:?}");
    assert_eq!(hooks[0].detail, "iteration 1: no row names this session, exit allowed");
    assert!(hooks[0].t_ms >= read.t_ms);
    assert!(!records.iter().any(|r| r.session == read.session && r.event == "stop_hook_fallback_prompt"), "no prompt");
    let ended = records.iter().filter(|r| r.session == read.session && r.event == "exit" && r.actor == read.actor).map(|r| r.t_ms).max();
    assert_eq!(ended, Some(hooks[0].t_ms), "S1 ends as its hook lets it go");
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

/// The SQL writes and file writes of `session` (by its session id) at or after `from_ms`.
fn writes_from(records: &[TraceRecord], session: &str, from_ms: i64) -> Vec<String> {
    records
        .iter()
        .filter(|r| r.session == session && r.t_ms >= from_ms)
        .filter(|r| r.stmt.is_some_and(|s| s.writes()) || (r.event.starts_with("file_") && r.event != "file_read"))
        .map(|r| format!("{} {} {} `{}`", r.t_ms, r.event, r.statement, r.detail))
        .collect()
}

/// docs/protocol.md C170 on faults/dead-heartbeat.toml seed 42: S1 reads its hand-over while
/// the row is still `fix_proposed` naming it (S2 claims 20 s later). Its stop is an exit
/// attempt through the stop hook (000 "Implementation-Hook Integration"): blocked with the
/// fallback prompt while the row names it, tried again every `timing.stop_hook_retry_ms`
/// (5 s, C30), each try an iteration, and let go at the first check after S2's claim. S1 writes
/// nothing after its read: no statement, no status line.
#[test]
fn a_replaced_session_waits_at_its_stop_hook_without_a_write_until_its_successor_claims() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out) = run_into("scenarios/faults/dead-heartbeat.toml", &[], tmp.path());
    assert_eq!(code, 1, "the scenario's finding (no-false-stale) stays: {out}");
    let records = trace(tmp.path());
    let read = records.iter().find(|r| r.event == "replaced_read").expect("S1 reads its hand-over");
    assert_eq!(read.actor.map(|a| a.to_string()).as_deref(), Some("task-01.S1"));
    let s1: Vec<&TraceRecord> = records.iter().filter(|r| r.session == read.session && r.t_ms >= read.t_ms).collect();
    let hooks: Vec<&TraceRecord> = s1.iter().copied().filter(|r| r.event == "stop_hook").collect();
    let details: Vec<&str> = hooks.iter().map(|r| r.detail.as_str()).collect();
    assert_eq!(
        details,
        [
            "iteration 1: states [\"fix_proposed\"], exit blocked",
            "iteration 2: states [\"fix_proposed\"], exit blocked",
            "iteration 3: states [\"fix_proposed\"], exit blocked",
            "iteration 4: no row names this session, exit allowed",
        ],
        "blocked while the row names S1, allowed after S2's claim"
    );
    // Each blocked check injects the fallback prompt, and the session answers with no write
    // but its next attempt, 5 s on (plus the next check's own statement).
    let prompts: Vec<&TraceRecord> = s1.iter().copied().filter(|r| r.event == "stop_hook_fallback_prompt").collect();
    assert_eq!(prompts.len(), 3, "{prompts:?}");
    for (i, prompt) in prompts.iter().enumerate() {
        assert!(
            prompt.detail.starts_with(&format!(
                "Exit criteria not met: task-01 is `fix_proposed` (exit allowed on `complete` or `exited`; check {} of 500)",
                i + 1
            )),
            "{}",
            prompt.detail
        );
        assert!(hooks[i + 1].t_ms - prompt.t_ms >= 5_000, "the next attempt comes stop_hook_retry_ms later");
    }
    assert_eq!(s1.iter().filter(|r| r.event == "replaced_exit_retry").count(), 3);
    // S2's claim falls between the last blocked check and the one that lets S1 go.
    let claim =
        records.iter().find(|r| r.stmt == Some(Stmt::ClaimTask) && r.session != read.session && r.t_ms > read.t_ms).expect("S2 claims");
    assert!(hooks[2].t_ms < claim.t_ms && claim.t_ms <= hooks[3].t_ms, "{} {} {}", hooks[2].t_ms, claim.t_ms, hooks[3].t_ms);
    assert_eq!(writes_from(&records, &read.session, read.t_ms), Vec::<String>::new(), "S1 wrote after its read");
    let ended = s1.iter().filter(|r| r.event == "exit" && r.actor == read.actor).map(|r| r.t_ms).max();
    assert_eq!(ended, Some(hooks[3].t_ms), "S1 ends as its hook lets it go");
    // From its read S1 no longer works the task (truth `work_over`): S2's claim is not judged
    // a second live session.
    assert!(s1.iter().any(|r| r.event == "truth" && r.observed.starts_with("work_over")), "the truth of the read");
    assert!(!out.contains("one-live-session-per-task"), "{out}");
}

/// docs/protocol.md C171 on faults/contradictory-resumption.toml seed 1: the hang holds S1's
/// `set_needs_review`, which lands when S1 wakes; returning that late, S1 reads its watcher's
/// overdue poll before anything else and stops on the hand-over: no other write, no status
/// line. Its hook holds it while the row is `needs_review` naming it.
#[test]
fn a_session_whose_write_returns_late_reads_its_watcher_before_another_write() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out) = run_into("scenarios/faults/contradictory-resumption.toml", &[], tmp.path());
    assert_eq!(code, 0, "{out}");
    let records = trace(tmp.path());
    let hang = records.iter().find(|r| r.event == "fault_hang").expect("S1 hangs");
    let woke = records.iter().find(|r| r.event == "woke_late" && r.session == hang.session).expect("S1 wakes late");
    let writes = writes_from(&records, &hang.session, woke.t_ms - 1);
    assert_eq!(writes.len(), 1, "only the held write: {writes:?}");
    assert!(writes[0].contains("sql set_needs_review"), "{writes:?}");
    let read = records.iter().find(|r| r.event == "replaced_read").expect("S1 reads its hand-over");
    assert_eq!(read.session, hang.session);
    let hooks: Vec<&str> =
        records.iter().filter(|r| r.session == read.session && r.event == "stop_hook").map(|r| r.detail.as_str()).collect();
    assert!(hooks.len() >= 2, "{hooks:?}");
    assert!(hooks[..hooks.len() - 1].iter().all(|h| h.ends_with("states [\"needs_review\"], exit blocked")), "{hooks:?}");
    assert!(hooks[hooks.len() - 1].ends_with("no row names this session, exit allowed"), "{hooks:?}");
}

/// C172: a hand-over sent before a session's own claim is about an earlier holder of its
/// number. proof/late-twin-on-released-row.toml seed 1: the conductor hands S1's row over at
/// 09:22:39 ("HANDOFF: task-01 session S1 went stale"); the late twin S1b claims the released
/// row at 09:30:26 and its watcher brings that message. Before C172 it read it as its own,
/// stopped with the row naming it `working`, and its stop hook held it ~9.5 minutes until a
/// third session claimed; it works the task to its end instead. The scenario fails by design
/// (its `[expect]`), with the same rules as before.
#[test]
fn a_handover_sent_before_the_sessions_own_claim_does_not_stop_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out) = run_into("scenarios/proof/late-twin-on-released-row.toml", &[], tmp.path());
    assert_eq!(code, 1, "{out}");
    let records = trace(tmp.path());
    let by = |r: &TraceRecord, who: &str| r.actor.as_ref().is_some_and(|a| a.to_string() == who);
    let twin_claim = records
        .iter()
        .find(|r| by(r, "task-01.S1b") && r.statement == "claim_task" && r.rows == "1")
        .expect("the late twin claims the released row");
    let handover = records
        .iter()
        .find(|r| by(r, "conductor") && r.detail.contains("HANDOFF: task-01 session S1 went stale"))
        .expect("the conductor hands S1's row over");
    assert!(handover.t_ms < twin_claim.t_ms, "the hand-over is older than the twin's claim");
    assert!(!records.iter().any(|r| by(r, "task-01.S1b") && r.event == "replaced_read"), "S1b is not replaced by it");
    let hooks: Vec<&TraceRecord> = records.iter().filter(|r| by(r, "task-01.S1b") && r.event == "stop_hook").collect();
    assert_eq!(hooks.len(), 1, "{hooks:?}");
    assert!(hooks[0].detail.contains("exit allowed"), "{}", hooks[0].detail);
    assert!(status_lines(tmp.path(), "task-01").iter().any(|l| l.starts_with("task complete")), "S1b completes the task");
}

/// C180 on faults/contradictory-resumption.toml seed 20 (issue 42's second cold review, N3):
/// S1's held `set_needs_review` lands when it wakes, after the conductor's hand-over is in the
/// database, but its watcher's overdue step is the heartbeat check (`read_task_state`), whose
/// next message poll is 15 s away. Before C180 the woken S1 found nothing in the watcher's
/// 2 s, wrote "checkpoint 1 submitted for review" to the task's status file and waited in a
/// pause watcher while S2 claimed (`one-live-session-per-task`). Now it polls the messages
/// itself, reads the hand-over and stops: no status line, no message after the hand-over.
#[test]
fn a_woken_session_whose_watcher_was_at_its_heartbeat_check_polls_the_messages_itself() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = root().join("scenarios/faults/contradictory-resumption.toml");
    let o = rehearsal(&["run", scenario.to_str().unwrap(), "--seed", "20", "--out", tmp.path().to_str().unwrap()]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(!out.contains("one-live-session-per-task"), "{out}");
    let records = trace(tmp.path());
    let by = |r: &TraceRecord, who: &str| r.actor.as_ref().is_some_and(|a| a.to_string() == who);
    let handover = records
        .iter()
        .find(|r| by(r, "conductor") && r.detail.contains("HANDOFF: task-01 session S1 went stale"))
        .expect("the conductor hands S1's row over");
    let woke = records.iter().find(|r| by(r, "task-01.S1") && r.event == "woke_late").expect("S1 wakes late");
    assert!(handover.t_ms < woke.t_ms, "the hand-over is in the database when S1 wakes");
    // The case of N3: the watcher's first step after the wake is its heartbeat check.
    let watcher_step =
        records.iter().find(|r| by(r, "task-01.S1.bg-watcher-1") && r.is_sql() && r.t_ms >= woke.t_ms).expect("the watcher's step");
    assert_eq!(watcher_step.stmt, Some(Stmt::ReadTaskState), "{watcher_step:?}");
    let poll = records.iter().find(|r| by(r, "task-01.S1") && r.event == "woke_late_poll").expect("S1 polls the messages itself");
    let read = records.iter().find(|r| r.event == "replaced_read").expect("S1 reads its hand-over");
    assert_eq!(read.session, woke.session);
    assert!(woke.t_ms <= poll.t_ms && poll.t_ms <= read.t_ms);
    // Nothing written after the wake but the held write: no status line, no statement.
    let writes = writes_from(&records, &woke.session, woke.t_ms - 1);
    assert_eq!(writes.len(), 1, "only the held write: {writes:?}");
    assert!(writes[0].contains("sql set_needs_review"), "{writes:?}");
    // The database and the status file agree: S1's last message is older than the hand-over,
    // and the line after S1's last status line before its hang is S2's first.
    let handover_id = messages(tmp.path())
        .iter()
        .find(|m| m.4.starts_with("HANDOFF: task-01 session S1 went stale"))
        .map(|m| m.0)
        .expect("the hand-over message");
    let s1_last = messages(tmp.path()).iter().filter(|m| m.2 == woke.session).map(|m| m.0).max().expect("S1's messages");
    assert!(s1_last < handover_id, "S1 sent message {s1_last} after the hand-over {handover_id}");
    let last_line = records
        .iter()
        .rev()
        .find(|r| r.session == woke.session && r.event == "file_append" && r.statement == "temp/task-01-status")
        .expect("S1's status lines");
    assert!(last_line.t_ms < woke.t_ms, "S1's last status line is from before its hang: {last_line:?}");
    let lines = status_lines(tmp.path(), "task-01");
    let at = lines.iter().position(|l| *l == last_line.detail).expect("S1's last line in the file");
    assert!(lines[at + 1].starts_with("bootstrap started"), "the next line is S2's: {:?}", &lines[at..at + 2]);
    assert_eq!(task_row(tmp.path(), "task-01").0, "complete");
}

/// C180's near miss: a session woken late whose watcher's overdue step was a message poll,
/// issued after the wait's due time and empty, has read what there is to read; it does not
/// poll the messages itself (that second poll was what `cargo mutants` showed no test minded:
/// `||` for `&&` in `read_messages_after_wake`'s test made every late wake poll twice).
/// random-faults seed 54: task-06's S1 wakes 317 s past its due time, its watcher's poll finds
/// nothing and the watcher sleeps on (its heartbeat check next); S1 then writes its status
/// line with no poll of its own.
#[test]
fn a_woken_session_whose_watcher_polled_after_the_wake_does_not_poll_again() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = root().join("scenarios/faults/random-faults.toml");
    let o = rehearsal(&["run", scenario.to_str().unwrap(), "--seed", "54", "--out", tmp.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let records = trace(tmp.path());
    let by = |r: &TraceRecord, who: &str| r.actor.as_ref().is_some_and(|a| a.to_string() == who);
    let woke = records.iter().find(|r| by(r, "task-06.S1") && r.event == "woke_late").expect("task-06's S1 wakes late");
    let poll =
        records.iter().find(|r| by(r, "task-06.S1.bg-watcher-1") && r.is_sql() && r.t_ms >= woke.t_ms).expect("the watcher's overdue step");
    assert_eq!(poll.stmt, Some(Stmt::ReadNewConductorMessages), "{poll:?}");
    assert_eq!(poll.rows, "0", "the watcher's poll found nothing: {poll:?}");
    let next_line = records
        .iter()
        .find(|r| by(r, "task-06.S1") && r.event == "file_append" && r.t_ms >= woke.t_ms)
        .expect("S1 writes on after the wake");
    assert!(poll.t_ms <= next_line.t_ms, "the watcher polled before S1 wrote: {poll:?} {next_line:?}");
    let own_reads: Vec<_> = records
        .iter()
        .filter(|r| by(r, "task-06.S1") && r.t_ms >= woke.t_ms && r.t_ms <= next_line.t_ms)
        .filter(|r| r.event == "woke_late_poll" || r.stmt == Some(Stmt::ReadNewConductorMessages))
        .collect();
    assert!(own_reads.is_empty(), "S1 polled the messages again after its watcher had: {own_reads:?}");
}
