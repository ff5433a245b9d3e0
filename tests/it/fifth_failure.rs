//! docs/protocol.md D13, the 5th failure (scenarios/examples/fifth-failure.toml):
//! by default a final message, then `exited` (000 "Terminal Write Atomicity"); under
//! `terminal-error-no-message`, `exited` alone (004 "Terminal Failure (5th retry)"), which
//! the oracle's message-before-state rejects.

use rehearsal::vocab::{ActorName, Stmt, TaskState};

use crate::support::{messages, run_into, session_sql, status_lines, task_row, trace};

const SCENARIO: &str = "scenarios/examples/fifth-failure.toml";

#[test]
fn the_fifth_failure_writes_a_final_message_then_exited() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out) = run_into(SCENARIO, &[], tmp.path());
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("PASS with known: liveness ×1"), "the task is given up by design\n{out}");
    let lines = status_lines(tmp.path(), "task-01");
    assert!(lines.iter().any(|l| l.starts_with("ERROR reported (retry 5/5)")), "{lines:?}");
    assert!(lines.last().unwrap().starts_with("5th failure: terminal exit"), "{lines:?}");
    // Five error reports, the first four answered with a fix; the 5th asks for nothing.
    let all = messages(tmp.path());
    let errors: Vec<&String> = all.iter().filter(|m| m.3 == "error").map(|m| &m.4).collect();
    assert_eq!(errors.len(), 5);
    for (n, body) in errors.iter().enumerate() {
        assert!(body.starts_with(&format!("ERROR (Retry {}/5):", n + 1)), "{body}");
    }
    assert!(errors[4].ends_with("Terminal: 5th failure, the session exits (no further retries)"), "{}", errors[4]);
    assert_eq!(all.iter().filter(|m| m.3 == "fix_proposal").count(), 4);
    // 000 "Terminal Write Atomicity": the final message, then `exited` as the last write,
    // from `error` (002: `error → exited`, unrecoverable failure).
    let s1: Vec<_> = session_sql(tmp.path(), "task-01.S1").into_iter().filter(|r| r.stmt != Some(Stmt::StopHookState)).collect();
    let n = s1.len();
    assert_eq!(
        [s1[n - 4].stmt, s1[n - 3].stmt, s1[n - 2].stmt, s1[n - 1].stmt],
        [Some(Stmt::SendError), Some(Stmt::SetError), Some(Stmt::SendHandoff), Some(Stmt::MarkExited)]
    );
    assert_eq!((s1[n - 2].state_after, s1[n - 1].state_after), (Some(TaskState::Error), Some(TaskState::Exited)));
    let last = all.iter().rfind(|m| m.2 != "task-00").unwrap();
    assert_eq!(last.3, "handoff");
    assert!(last.4.starts_with("EXITED: unrecoverable failure, retry 5/5: task-01 given up after 5 failures."), "{}", last.4);
    assert_eq!((task_row(tmp.path(), "task-01").0.as_str(), task_row(tmp.path(), "task-01").2), ("exited", 5));
    let rows = trace(tmp.path());
    assert!(rows.iter().any(|r| r.actor == Some(ActorName::CONDUCTOR) && r.event == "task_given_up"), "the conductor gives the task up");
}

#[test]
fn under_004s_template_the_fifth_failure_exits_with_no_message_and_fails_message_before_state() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out) = run_into(SCENARIO, &["terminal-error-no-message"], tmp.path());
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("FAIL: message-before-state"), "{out}");
    assert!(out.contains("set task-01 to `exited` with no final message before it (000 \"Terminal Write Atomicity\")"), "{out}");
    let s1: Vec<_> = session_sql(tmp.path(), "task-01.S1").into_iter().filter(|r| r.stmt != Some(Stmt::StopHookState)).collect();
    let n = s1.len();
    assert_eq!([s1[n - 2].stmt, s1[n - 1].stmt], [Some(Stmt::SetError), Some(Stmt::MarkExited)]);
    assert!(!messages(tmp.path()).iter().any(|m| m.3 == "handoff" && m.2 != "task-00"), "no final message");
}
