//! Issue 42 item 3, docs/protocol.md C140-C141: the stop hook blocks a session that tries to
//! stop while the row that names it is unfinished (000 "Design Rationale": "If the state update
//! hasn't happened yet, the hook blocks exit — keeping the session alive for cleanup"), injects
//! its fallback prompt, and the session does its clean exit; the hook then lets it go.

use rehearsal::vocab::{Stmt, TaskState};

use crate::support::{run_into, status_lines, trace};

const SCENARIO: &str = "scenarios/faults/stop-hook-blocks.toml";

#[test]
fn a_session_that_stops_with_its_row_working_is_blocked_then_cleans_up_and_is_let_go() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out) = run_into(SCENARIO, &[], tmp.path());
    assert_eq!(code, 0, "{out}");
    let records = trace(tmp.path());
    let s1 = |r: &&rehearsal::trace::trace_reader::TraceRecord| r.actor.is_some_and(|a| a.to_string() == "task-01.S1");
    let stop = records.iter().filter(s1).position(|r| r.event == "fault_early_stop").expect("S1 tries to stop");
    let after: Vec<_> = records.iter().filter(s1).skip(stop).collect();
    // The hook's first check: the row still `working`, so it blocks and injects the prompt.
    let hooks: Vec<&str> = after.iter().filter(|r| r.event == "stop_hook").map(|r| r.detail.as_str()).collect();
    assert_eq!(hooks.first().copied(), Some("iteration 1: states [\"working\"], exit blocked"), "{hooks:?}");
    let prompt = after.iter().position(|r| r.event == "stop_hook_fallback_prompt").expect("the fallback prompt");
    assert!(after[prompt].detail.starts_with("Exit criteria not met: task-01 is `working`"), "{}", after[prompt].detail);
    // Then the cleanup of 000 "Clean Exit Protocol": the HANDOFF, the final message and
    // `exited` as the last write, after which the hook's second check lets the session go.
    let handoff = after.iter().position(|r| r.statement == "temp/task-01-HANDOFF" && r.event.starts_with("file_"));
    let exited = after.iter().position(|r| r.stmt == Some(Stmt::MarkExited) && r.state_after == Some(TaskState::Exited));
    let message = after.iter().position(|r| r.stmt == Some(Stmt::SendHandoff));
    let (handoff, exited, message) = (handoff.expect("a HANDOFF"), exited.expect("`exited`"), message.expect("a final message"));
    assert!(prompt < handoff && handoff < message && message < exited, "{prompt} {handoff} {message} {exited}");
    assert!(!after[exited + 1..].iter().any(|r| r.is_sql() && r.stmt.is_some_and(|s| s.writes())), "`exited` is the last write");
    assert_eq!(hooks.get(1).copied(), Some("iteration 2: states [\"exited\"], exit allowed"), "{hooks:?}");
    assert_eq!(hooks.len(), 2, "{hooks:?}");
    // The successor resumes after S1's third agent (step 2 agent 1) and completes: no agent of
    // S1's is launched twice.
    let lines = status_lines(tmp.path(), "task-01");
    assert_eq!(lines.iter().filter(|l| l.starts_with("step 2 agent 1 launched")).count(), 1, "{}", lines.join("\n"));
    assert!(lines.iter().any(|l| l.starts_with("step 2 agent 2 launched")), "{}", lines.join("\n"));
    assert!(lines.iter().any(|l| l.starts_with("task complete")), "{}", lines.join("\n"));
}

/// Without the fault the same run's hook never blocks: every session stops after its terminal
/// write, which the hook's snapshot already holds (C140).
#[test]
fn without_an_early_stop_no_hook_of_the_run_blocks() {
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(crate::support::root().join(SCENARIO)).unwrap();
    let text = text.replace("[[faults.early_stop]]\ntask = 1\nafter_agents = 3\n", "");
    assert!(!text.lines().any(|l| l == "[[faults.early_stop]]"), "the fault is removed");
    let path = tmp.path().join("no-stop.toml");
    std::fs::write(&path, text).unwrap();
    let (code, out) = run_into(path.to_str().unwrap(), &[], &tmp.path().join("out"));
    assert_eq!(code, 0, "{out}");
    let records = trace(&tmp.path().join("out"));
    let hooks: Vec<&str> = records.iter().filter(|r| r.event == "stop_hook").map(|r| r.detail.as_str()).collect();
    assert!(hooks.len() >= 3, "{hooks:?}");
    assert!(hooks.iter().all(|h| h.starts_with("iteration 1:") && h.ends_with("exit allowed")), "{hooks:?}");
}
