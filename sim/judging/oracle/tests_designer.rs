//! The designer's figures under test (sim/judging/oracle/designer.rs): time to first claim, the review
//! queue and wait, notice by watcher, recovery and its causes, on synthetic streams (the DSL
//! is `tests.rs`'s).

use super::tests::{row, s1_working, Run, S1, S2};
use super::*;
use crate::input::scenario::ProtocolSettings;
use crate::world::event::{EventKind, Fact};

fn conductor_write(run: &mut Run, t_ms: i64, stmt: Stmt, task: &str, from: Option<&str>, to: &str) {
    let before = from.and_then(|state| row(state, S1, 0, 1.0));
    run.write(t_ms, "conductor", "conductor-session", stmt, task, before, row(to, S1, 0, 0.0));
}

#[test]
fn first_claim_is_timed_from_the_rows_creation_to_its_first_claim_only() {
    let mut run = Run::with(ProtocolSettings::default());
    run.write(500, "conductor", "conductor-session", Stmt::CreateTask, "task-01", None, row("watching", "", 0, 0.0));
    run.launch(1_000, "task-01", "S1", S1).claim(2_000, "task-01.S1", S1, "watching", "");
    run.launch(50_000, "task-01", "S2", S2).claim(60_000, "task-01.S2", S2, "fix_proposed", S1);
    assert_eq!(run.checker.measured().designer.first_claim_ms, [1_500]);
}

#[test]
fn review_wait_runs_from_needs_review_to_the_answer_and_the_queue_is_counted_at_polls() {
    let mut run = s1_working();
    run.write(10_000, "task-01.S1", S1, Stmt::SetNeedsReview, "task-01", row("working", S1, 0, 1.0), row("needs_review", S1, 0, 0.0));
    run.poll(
        12_000,
        &[("task-00", "watching", 1.0), ("task-01", "needs_review", 2.0), ("task-02", "needs_review", 5.0), ("task-03", "working", 1.0)],
    );
    conductor_write(&mut run, 40_000, Stmt::SetTaskState, "task-01", Some("needs_review"), "review_approved");
    run.poll(41_000, &[("task-01", "review_approved", 1.0)]);
    // A pause TIMEOUT's `error` keeps waiting: the answer from it ends the wait begun at 50 s.
    run.write(50_000, "task-01.S1", S1, Stmt::SetNeedsReview, "task-01", row("working", S1, 0, 1.0), row("needs_review", S1, 0, 0.0));
    run.write(60_000, "task-01.S1", S1, Stmt::SetError, "task-01", row("needs_review", S1, 0, 1.0), row("error", S1, 0, 0.0));
    conductor_write(&mut run, 70_000, Stmt::SetTaskState, "task-01", Some("error"), "review_failed");
    // A request the session withdrew (it went back to work) is no wait.
    run.write(80_000, "task-01.S1", S1, Stmt::SetNeedsReview, "task-01", row("working", S1, 0, 1.0), row("needs_review", S1, 0, 0.0));
    run.write(85_000, "task-01.S1", S1, Stmt::ResumeWorking, "task-01", row("needs_review", S1, 0, 1.0), row("working", S1, 0, 0.0));
    let designer = &run.checker.measured().designer;
    assert_eq!(designer.review_wait_ms, [30_000, 20_000]);
    assert_eq!(designer.review_queue_len, [2, 0], "the conductor's own row is no request");
}

#[test]
fn a_message_notice_is_filed_under_the_watcher_that_noticed_it() {
    let mut run = s1_working();
    let watcher = "task-01.S1.pause-watcher-1";
    run.write(10_000, "task-01.S1", S1, Stmt::SetNeedsReview, "task-01", row("working", S1, 0, 1.0), row("needs_review", S1, 0, 0.0));
    run.message(22_000, "conductor", "conductor-session", Stmt::SendConductorMessage, 51, "task-01", "approval");
    run.event(48_000, watcher, S1, EventKind::Ended(crate::world::event::ActorEnd::Exit));
    run.fact(50_000, Fact::MessageHandled { session_id: S1.into(), message_id: 51 });
    let background = "task-01.S1.bg-watcher-1";
    run.message(60_000, "conductor", "conductor-session", Stmt::SendConductorMessage, 52, "task-01", "emergency");
    run.event(75_000, background, S1, EventKind::Ended(crate::world::event::ActorEnd::Exit));
    run.fact(76_000, Fact::MessageHandled { session_id: S1.into(), message_id: 52 });
    let measured = run.checker.measured();
    assert_eq!(measured.message_notice_ms, [28_000, 16_000]);
    assert_eq!(
        (measured.designer.notice_pause_ms.as_slice(), measured.designer.notice_background_ms.as_slice()),
        (&[28_000][..], &[16_000][..])
    );
    assert!(measured.designer.notice_session_ms.is_empty());
}

/// S1 crashed at 20 s behind a heartbeat of 10 s; the conductor reviewed from 100 s to 700 s,
/// polled at 730 s, declared S1 stale and handed the task over at 732 s.
fn crash_handed_over() -> Run {
    let mut run = s1_working();
    run.write(10_000, "task-01.S1", S1, Stmt::Heartbeat, "task-01", row("working", S1, 0, 8.0), row("working", S1, 0, 0.0));
    run.fact(20_000, Fact::Crashed { session_id: S1.into(), why: "test".into() });
    conductor_write(&mut run, 100_000, Stmt::ConductorSetState, "task-00", Some("watching"), "reviewing");
    conductor_write(&mut run, 700_000, Stmt::ConductorSetState, "task-00", Some("reviewing"), "watching");
    run.poll(730_000, &[("task-01", "working", 720.0)]);
    run.fact(
        731_000,
        Fact::StaleDeclared { task_id: "task-01".into(), session_id: S1.into(), seconds_stale: 720.0, polled_at_ms: 730_000 },
    );
    conductor_write(&mut run, 732_000, Stmt::SetTaskState, "task-01", Some("working"), "fix_proposed");
    run
}

#[test]
fn recovery_runs_from_the_crash_to_the_successors_claim_split_into_its_causes() {
    let mut run = crash_handed_over();
    // Launched at 733 s, started at 736 s, claimed at 745 s.
    run.fact(733_000, Fact::Launched { at_ms: 736_000, label: "S2".into(), session_id: S2.into(), task_id: "task-01".into() });
    run.claim(745_000, "task-01.S2", S2, "fix_proposed", S1);
    let measured = run.checker.measured();
    assert_eq!(measured.designer.recovery_ms, [725_000]);
    let d = measured.decompositions.iter().find(|d| d.measurement == "recovery_ms").expect("a recovery decomposition");
    assert_eq!(d.components_ms.iter().sum::<i64>(), d.total_ms);
    use latency::Cause;
    // Stale at 550 s: the threshold from the crash; the review's last 150 s; the poll phase to
    // 730 s; the conductor's statements to the launch; the launch; the successor's start-up.
    let parts: Vec<(Cause, i64)> = Cause::ALL.iter().map(|c| (*c, d.component(*c))).filter(|(_, ms)| *ms > 0).collect();
    assert_eq!(
        parts,
        [
            (Cause::PollWait, 30_000),
            (Cause::Threshold, 530_000),
            (Cause::ConductorReview, 150_000),
            (Cause::LaunchDelay, 3_000),
            (Cause::Statements, 3_000),
            (Cause::Bootstrap, 9_000)
        ]
    );
}

#[test]
fn no_recovery_without_a_successors_claim() {
    let mut run = crash_handed_over();
    // The lost session's own claim (it was hung, not crashed, say) recovers nothing.
    run.claim(745_000, "task-01.S1", S1, "fix_proposed", S1);
    assert!(run.checker.measured().designer.recovery_ms.is_empty());
    assert!(crash_handed_over().checker.measured().designer.recovery_ms.is_empty());
}
