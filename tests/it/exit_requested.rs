//! docs/protocol.md D16, `exit_requested` (scenarios/exit-requested.toml). By default it is
//! what 000 and 002 "States the Conductor Sets" say: "Conductor requests musician to prepare
//! handoff and exit". The session stops at a safe point, writes its HANDOFF and its final
//! `handoff` message and leaves the row `exit_requested`; its successor claims from there
//! (002 "Guard Clause Rules"). Under `exit-requested-conductor-only` (004: the conductor's own
//! end state) the musician does not take the request.

use std::path::Path;

use rehearsal::trace::trace_reader::TraceRecord;
use rehearsal::vocab::{ActorName, Stmt, TaskState};
use rehearsal::world::event::EventKind;

use crate::support::{messages, root, run_into, session, status_lines, task_row, trace};

const SCENARIO: &str = "scenarios/exit-requested.toml";

/// The tests below but the first follow the reading in which a session asked to exit writes no
/// state (`exit-request-no-state`): the conductor's launch on the final message, the successor's
/// claim from `exit_requested`. By default the session writes `exited` (000 "Clean Exit
/// Protocol" 7), tested first.
const NO_STATE: &[&str] = &["exit-request-no-state"];

/// docs/protocol.md D16, default: asked to exit, the session runs 000's clean exit to its last
/// step, `exited` after its final message; the conductor hands the task over as any exited one
/// (`fix_proposed`), and the successor claims from there.
#[test]
fn a_session_asked_to_exit_writes_exited_last_and_its_successor_claims_after_the_hand_over() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out) = run_into(SCENARIO, &[], tmp.path());
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("tasks        2/2 complete"), "{out}");
    let rows = trace(tmp.path());
    for task in ["task-01", "task-02"] {
        let s1 = own_statements(&rows, &format!("{task}.S1"));
        let writes: Vec<&(Stmt, Option<TaskState>)> = s1.iter().filter(|(s, _)| s.writes() && *s != Stmt::StopHookState).collect();
        let n = writes.len();
        assert_eq!(
            &writes[n - 2..],
            [&(Stmt::SendHandoff, Some(TaskState::ExitRequested)), &(Stmt::MarkExited, Some(TaskState::Exited))],
            "{task}.S1 ends with its final message, then `exited`"
        );
        assert_eq!(claims(&rows, task)[1], (format!("{task}.S2"), "fix_proposed".to_string()), "{task}: handed over as exited");
        assert_eq!(task_row(tmp.path(), task).0, "complete");
    }
}

/// The state of the row a successful claim took, from the trace's row snapshot.
fn claimed_from(row: &TraceRecord) -> String {
    let event = row.clone().into_event().unwrap_or_else(|e| panic!("{e:?}"));
    let EventKind::Sql(sql) = event.kind else { panic!("{row:?} is no SQL row") };
    sql.before.expect("a claim snapshots the row before it").state.to_string()
}

/// The successful claims of a task, as (session, the state claimed from).
fn claims(rows: &[TraceRecord], task: &str) -> Vec<(String, String)> {
    rows.iter()
        .filter(|r| r.stmt == Some(Stmt::ClaimTask) && r.rows == "1" && r.task_id().as_deref() == Some(task))
        .map(|r| (r.actor_text(), claimed_from(r)))
        .collect()
}

/// The statements a session ran itself (not its watchers), in order.
fn own_statements(rows: &[TraceRecord], name: &str) -> Vec<(Stmt, Option<TaskState>)> {
    let me = ActorName::Session(session(name));
    rows.iter().filter(|r| r.actor == Some(me) && r.is_sql()).filter_map(|r| r.stmt.map(|s| (s, r.state_after))).collect()
}

/// What the first session of `task` did once asked to exit: its HANDOFF, its final message,
/// no state.
fn assert_left_on_request(dir: &Path, rows: &[TraceRecord], task: &str) {
    let s1 = own_statements(rows, &format!("{task}.S1"));
    let writes: Vec<&(Stmt, Option<TaskState>)> = s1.iter().filter(|(s, _)| s.writes() && *s != Stmt::StopHookState).collect();
    assert_eq!(writes.last(), Some(&&(Stmt::SendHandoff, Some(TaskState::ExitRequested))), "{task}.S1's last write: {writes:?}");
    assert!(!s1.iter().any(|(s, _)| *s == Stmt::MarkExited), "{task}.S1 writes no `exited`: {s1:?}");
    let handoff = std::fs::read_to_string(dir.join(format!("temp/{task}-HANDOFF"))).expect("a HANDOFF");
    assert!(handoff.contains("- Exit reason: the conductor requested exit (exit_requested)"), "{handoff}");
    let all = messages(dir);
    let asked = all.iter().position(|m| m.1 == task && m.2 == "task-00" && m.4.starts_with("EXIT REQUESTED: ")).expect("the request");
    assert_eq!(all[asked].3, "handoff", "the request is a `handoff` message");
    let last = all.iter().position(|m| m.1 == task && m.2 != "task-00" && m.3 == "handoff").expect("S1's final message");
    assert!(last > asked && all[last].4.starts_with("EXITED: the conductor requested exit (exit_requested)"), "{:?}", all[last]);
}

#[test]
fn a_session_asked_to_exit_hands_off_and_its_successor_claims_from_exit_requested() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out) = run_into(SCENARIO, NO_STATE, tmp.path());
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("tasks        2/2 complete"), "{out}");
    let rows = trace(tmp.path());
    for task in ["task-01", "task-02"] {
        assert_left_on_request(tmp.path(), &rows, task);
        let took = claims(&rows, task);
        assert_eq!(
            took,
            [(format!("{task}.S1"), "watching".to_string()), (format!("{task}.S2"), "exit_requested".to_string())],
            "{task}: the successor claims from exit_requested (002 Guard Clause Rules)"
        );
        assert_eq!(task_row(tmp.path(), task).0, "complete");
        assert_eq!(task_row(tmp.path(), task).1, format!("musician-{task}-S2"));
        let s2 = status_lines(tmp.path(), task);
        assert!(s2.iter().any(|l| l.starts_with("RESUMPTION: musician-") && l.contains("-S2 taking over")), "{s2:?}");
    }
    // task-01: the background watcher found the state; S1 stopped its running subagent.
    let t1 = status_lines(tmp.path(), "task-01");
    assert!(t1.iter().any(|l| l.starts_with("conductor set exit_requested: preparing handoff at the next safe point")), "{t1:?}");
    assert!(t1.iter().any(|l| l.contains("stopped: the conductor asked for exit")), "{t1:?}");
    // task-02: the conductor's answer to a context warning; the pause watcher saw it.
    let t2 = status_lines(tmp.path(), "task-02");
    assert!(t2.iter().any(|l| l.starts_with("conductor set exit_requested: preparing handoff now")), "{t2:?}");
    let all = messages(tmp.path());
    let warning = all.iter().position(|m| m.1 == "task-02" && m.3 == "context_warning").expect("a context warning");
    let answer = all.iter().skip(warning).find(|m| m.1 == "task-02" && m.2 == "task-00").expect("the answer");
    assert!(answer.4.contains("(context warning: prepare handoff now)"), "{answer:?}");
    // The conductor launched each successor once, on the final message.
    let launches: Vec<&TraceRecord> = rows.iter().filter(|r| r.actor == Some(ActorName::CONDUCTOR) && r.event == "launch").collect();
    assert_eq!(launches.len(), 4, "{launches:?}");
    assert!(!rows.iter().any(|r| r.event == "stale_detected"), "no staleness: the row waits for the session's exit");
}

#[test]
fn a_session_asked_to_exit_that_goes_silent_is_handed_over_once() {
    // S1 of task-01 crashes before its final message: the conductor waits for the staleness
    // threshold from its own write of `exit_requested`, then launches S2 (no state written:
    // the row is claimable as it is). S2 finds S1's HANDOFF but no final message, so it
    // resumes from the last checkpoint, and it handles the exit request S1 had already read
    // (the successor cannot know: the messages-seen-once the crash scenarios know too).
    let text = std::fs::read_to_string(root().join(SCENARIO)).unwrap();
    let text = text.replace("[tasks]", "[[faults.crash]]\ntask = 1\nat = \"before:send_handoff\"\n\n[tasks]");
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("silent.toml");
    std::fs::write(&path, text).unwrap();
    let out = tmp.path().join("run");
    let (code, stdout) = run_into(path.to_str().unwrap(), NO_STATE, &out);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("violations   1 (messages-seen-once)"), "{stdout}");
    assert!(stdout.contains("tasks        2/2 complete"), "{stdout}");
    let rows = trace(&out);
    let stale: Vec<&TraceRecord> = rows.iter().filter(|r| r.event == "stale_detected").collect();
    assert_eq!(stale.len(), 1, "{stale:?}");
    assert!(stale[0].detail.starts_with("task-01 heartbeat ") && stale[0].detail.ends_with(" s old in exit_requested"), "{stale:?}");
    assert_eq!(claims(&rows, "task-01")[1], ("task-01.S2".to_string(), "exit_requested".to_string()));
    assert_eq!(claims(&rows, "task-01").len(), 2, "handed over once");
}

#[test]
fn a_conductor_relaunched_while_a_session_is_asked_to_exit_still_launches_its_successor() {
    // The conductor dies 2 s after it set `exit_requested` on task-01 (t≈613 s) and is
    // relaunched 5 minutes later: S1 has written its final message meanwhile. The new session
    // knows the request only from the row and its own `EXIT REQUESTED` message
    // (docs/protocol.md C35): it follows the request again, reads S1's final message among the
    // others, and launches S2, which claims from `exit_requested`. The scripted request is not
    // sent twice, and no hand-over is counted for it.
    let text = std::fs::read_to_string(root().join(SCENARIO)).unwrap();
    let text = text.replace("[tasks]", "[[faults.conductor_crash]]\nat_ms = 615_000\n\n[tasks]");
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("conductor-crash.toml");
    std::fs::write(&path, text).unwrap();
    let out = tmp.path().join("run");
    let (code, stdout) = run_into(path.to_str().unwrap(), NO_STATE, &out);
    assert!(stdout.contains("tasks        2/2 complete"), "{stdout}");
    let rows = trace(&out);
    let relaunched: Vec<&TraceRecord> = rows.iter().filter(|r| r.actor == Some(ActorName::Conductor(2))).collect();
    assert!(!relaunched.is_empty(), "the conductor was relaunched");
    assert_eq!(
        claims(&rows, "task-01"),
        vec![("task-01.S1".to_string(), "watching".to_string()), ("task-01.S2".to_string(), "exit_requested".to_string()),]
    );
    let requests = messages(&out).iter().filter(|m| m.4.starts_with("EXIT REQUESTED: task-01")).count();
    assert_eq!(requests, 1, "the scripted request is sent once");
    assert_eq!(code, 0, "{stdout}");
}

/// `scenario` with `extra` TOML inserted before its `[tasks]` table, run into a scratch folder.
fn run_edited(scenario: &str, extra: &str) -> (tempfile::TempDir, std::path::PathBuf, i32, String) {
    let text = std::fs::read_to_string(root().join(scenario)).unwrap().replace("[tasks]", &format!("{extra}\n\n[tasks]"));
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("edited.toml");
    std::fs::write(&path, text).unwrap();
    let out = tmp.path().join("run");
    let (code, stdout) = run_into(path.to_str().unwrap(), NO_STATE, &out);
    (tmp, out, code, stdout)
}

#[test]
fn a_relaunched_conductor_finishes_an_exit_request_whose_state_it_never_wrote() {
    // The conductor dies right after the `EXIT REQUESTED` message of task-01, before its
    // `exit_requested`. Its successor finishes the request from the message (docs/protocol.md
    // C35, 000 "Terminal Write Atomicity"), so S1 still exits and S2 claims from
    // `exit_requested`; without that the request was lost and S1 finished the task itself.
    let (_tmp, out, code, stdout) = run_edited(SCENARIO, "[[faults.conductor_crash]]\nat = \"after:send_conductor_message\"");
    assert_eq!(code, 0, "{stdout}");
    let rows = trace(&out);
    assert!(
        rows.iter().any(|r| r.event == "answer_completed" && r.detail.starts_with("task-01: exit request")),
        "finished from its message"
    );
    assert_eq!(claims(&rows, "task-01")[1], ("task-01.S2".to_string(), "exit_requested".to_string()));
}

#[test]
fn a_session_asked_to_exit_reports_no_error_over_the_request() {
    // verification-failures' task-03 finds a flaky test at its checkpoint and would escalate
    // it (`set_escalation`, an `error` state) or report an unclear failure; asked to exit just
    // before, it exits at that safe point instead of writing `error` over `exit_requested`.
    let extra = "[[conductor.exit_requests]]\nat_ms = 3_200_000\ntask = 3";
    let (_tmp, out, code, stdout) = run_edited("scenarios/verification-failures.toml", extra);
    assert_eq!(code, 0, "{stdout}");
    let rows = trace(&out);
    assert_eq!(claims(&rows, "task-03")[1], ("task-03.S2".to_string(), "exit_requested".to_string()));
    assert!(stdout.contains("tasks        3/3 complete"), "{stdout}");
}

#[test]
fn under_004s_reading_the_musician_does_not_take_the_request() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out) = run_into(SCENARIO, &["exit-requested-conductor-only"], tmp.path());
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("violations   4 (allowed-transitions)"), "{out}");
    let violations = std::fs::read_to_string(tmp.path().join("violations.csv")).unwrap();
    // The oracle under 004's reading: the conductor used its own end state on a task, twice.
    assert_eq!(violations.matches("is the conductor's own end state (004 \"\"Conductor States (task-00)\"\")").count(), 2, "{violations}");
    // task-01: the request is ignored; S1 works on and overwrites it with its review request.
    assert!(violations.contains("task-01.S1 moved task-01 from `exit_requested` to `needs_review`"), "{violations}");
    let rows = trace(tmp.path());
    assert_eq!(claims(&rows, "task-01"), [("task-01.S1".to_string(), "watching".to_string())], "no successor");
    assert_eq!(task_row(tmp.path(), "task-01").1, "musician-task-01", "S1 finished the task itself");
    // task-02: in pause, `exit_requested` is no answer S1 knows: it hands off with `exited`,
    // and the conductor relaunches through `fix_proposed`.
    assert!(violations.contains("task-02.S1 moved task-02 from `exit_requested` to `exited`"), "{violations}");
    assert_eq!(claims(&rows, "task-02")[1], ("task-02.S2".to_string(), "fix_proposed".to_string()));
    for task in ["task-01", "task-02"] {
        assert_eq!(task_row(tmp.path(), task).0, "complete");
    }
}

/// docs/protocol.md C181 on faults/exit-request-during-report.toml seed 3 (issue 42's second
/// cold review, N4): the conductor's `EXIT REQUESTED` message and `exit_requested` land while
/// S1 hangs before its error report's `set_error`, which then lands over them (the row reads
/// `error`). S1 reads the message right after that late write (C171). Before C181 it logged it
/// as information ("conductor message while working"), paused for an answer to its error and
/// waited there for hours while the task sat in `error` (liveness). Now the message is the
/// request: S1 logs its report, writes no pause, and exits as asked (HANDOFF, final message,
/// `exited`); S2 completes the task.
#[test]
fn an_exit_request_read_after_the_row_moved_on_is_an_exit_as_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = root().join("scenarios/faults/exit-request-during-report.toml");
    let o = crate::support::rehearsal(&["run", scenario.to_str().unwrap(), "--seed", "3", "--out", tmp.path().to_str().unwrap()]);
    let out = crate::support::stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("tasks        1/1 complete") && !out.contains("liveness"), "{out}");
    let rows = trace(tmp.path());
    let s1 = session("task-01.S1");
    let landed =
        rows.iter().find(|r| r.actor == Some(ActorName::Session(s1)) && r.stmt == Some(Stmt::SetError)).expect("S1's held set_error lands");
    assert_eq!(landed.state_after, Some(TaskState::Error), "it lands over exit_requested");
    let writes: Vec<(Stmt, Option<TaskState>)> =
        own_statements(&rows, "task-01.S1").into_iter().filter(|(s, _)| s.writes() && *s != Stmt::StopHookState).collect();
    let n = writes.len();
    assert_eq!(
        writes[n - 3..],
        [
            (Stmt::SetError, Some(TaskState::Error)),
            (Stmt::SendHandoff, Some(TaskState::Error)),
            (Stmt::MarkExited, Some(TaskState::Exited))
        ],
        "S1 exits as asked after its report: {writes:?}"
    );
    let paused = rows.iter().any(|r| r.t_ms >= landed.t_ms && crate::support::by_watcher(r, s1, rehearsal::vocab::WatcherKind::Pause));
    assert!(!paused, "no pause for an answer once asked to exit");
    let lines = status_lines(tmp.path(), "task-01");
    let asked = lines.iter().position(|l| l.starts_with("conductor asked for exit (EXIT REQUESTED: task-01: ")).expect("the request read");
    assert!(lines[asked..].iter().any(|l| l.starts_with("clean exit: all subagents and watchers stopped")), "{lines:?}");
    let s1_id = &landed.session;
    let last = messages(tmp.path()).into_iter().rev().find(|m| m.2 == *s1_id).expect("S1's messages");
    assert_eq!(last.3, "handoff");
    assert!(last.4.starts_with("EXITED: the conductor requested exit"), "{}", last.4);
    assert_eq!(task_row(tmp.path(), "task-01").0, "complete");
}
