//! The rules of issue 26's unchecked properties under test: for each, a synthetic stream that
//! violates it and a near miss that must not, with the explanation asserted (the DSL is
//! `tests.rs`'s).

use super::tests::{row, s1_working, Run, S1, S2};
use super::*;
use crate::world::event::{EventKind, Fact, SqlEvent, SqlResult};

const S3: &str = "cccccccc-3333";

/// One statement of `actor` for `stmt_task` that inserted `messages` (id, task, type): several
/// for a multi-row insert. The statement's own task row exists and is unchanged.
fn insert(run: &mut Run, t_ms: i64, actor: &str, sid: &str, stmt: Stmt, stmt_task: &str, messages: &[(i64, &str, &str)]) {
    let mut all = messages.iter().map(|(id, task, kind)| (*id, task.to_string(), kind.to_string()));
    let sql = SqlEvent {
        stmt,
        task_id: stmt_task.into(),
        result: SqlResult::Rows(messages.len()),
        rows_affected: messages.len(),
        before: row("working", "", 0, 0.0),
        after: row("working", "", 0, 0.0),
        message: all.next(),
        more_messages: all.collect(),
        other_rows: Vec::new(),
        polled: Vec::new(),
        params_text: Default::default(),
    };
    run.event(t_ms, actor, sid, EventKind::Sql(Box::new(sql)));
}

fn conductor_sends(run: &mut Run, t_ms: i64, messages: &[(i64, &str, &str)]) {
    insert(run, t_ms, "conductor", "conductor-session", Stmt::SendConductorMessage, "task-01", messages);
}

#[test]
fn message_to_existing_task_an_approval_sent_to_a_task_with_no_row() {
    let mut run = s1_working();
    conductor_sends(&mut run, 9_000, &[(51, "task-99", "approval")]);
    let v = run.the(RuleId::MessageToExistingTask);
    assert_eq!(v.t_ms, 9_000);
    assert!(
        v.explanation.contains(
            "the conductor ran `send_conductor_message` for task-01, which wrote message 51 (approval) to task-99, a task with no row"
        ),
        "{}",
        v.explanation
    );
}

#[test]
fn message_to_existing_task_near_miss_rows_known_from_a_write_or_a_poll() {
    let mut run = s1_working();
    run.poll(5_000, &[("task-02", "watching", 0.0)]);
    conductor_sends(&mut run, 9_000, &[(51, "task-01", "approval")]);
    conductor_sends(&mut run, 9_500, &[(52, "task-02", "emergency")]);
    run.none(RuleId::MessageToExistingTask);
}

#[test]
fn request_answered_once_one_statement_inserts_the_answer_twice() {
    let mut run = s1_working();
    run.fact(60_000, Fact::Answering { task_id: "task-01".into(), request_id: 60, requester: S1.into() });
    conductor_sends(&mut run, 61_000, &[(61, "task-01", "approval"), (62, "task-01", "approval")]);
    let v = run.the(RuleId::RequestAnsweredOnce);
    assert!(
        v.explanation.contains(
            "wrote message 62 (approval) to task-01, a second answer by the same statement to request 60 of session S1 (aaaaaaaa…)"
        ) && v.explanation.contains("message 61 had answered it at t=61000 ms"),
        "{}",
        v.explanation
    );
}

#[test]
fn request_answered_once_a_request_answered_again_later() {
    let mut run = s1_working();
    for (t_ms, id) in [(60_000, 61), (90_000, 91)] {
        run.fact(t_ms, Fact::Answering { task_id: "task-01".into(), request_id: 60, requester: S1.into() });
        conductor_sends(&mut run, t_ms + 1_000, &[(id, "task-01", "rejection")]);
    }
    let v = run.the(RuleId::RequestAnsweredOnce);
    assert_eq!(v.t_ms, 91_000);
    assert!(v.explanation.contains("message 91 (rejection) to task-01, a second answer to request 60"), "{}", v.explanation);
}

#[test]
fn request_answered_once_near_miss_each_request_its_answer_and_a_hand_over_answers_none() {
    let mut run = s1_working();
    run.fact(60_000, Fact::Answering { task_id: "task-01".into(), request_id: 60, requester: S1.into() });
    conductor_sends(&mut run, 61_000, &[(61, "task-01", "rejection")]);
    run.fact(70_000, Fact::Answering { task_id: "task-01".into(), request_id: 70, requester: S1.into() });
    conductor_sends(&mut run, 71_000, &[(71, "task-01", "approval")]);
    conductor_sends(&mut run, 80_000, &[(80, "task-01", "handoff"), (81, "task-02", "emergency")]);
    run.none(RuleId::RequestAnsweredOnce);
}

#[test]
fn retry_count_never_decreases_an_error_report_that_counts_down() {
    let mut run = s1_working();
    run.write(9_000, "task-01.S1", S1, Stmt::SetError, "task-01", row("working", S1, 0, 1.0), row("error", S1, -1, 0.0));
    let v = run.the(RuleId::RetryCountNeverDecreases);
    assert!(
        v.explanation.contains("ran `set_error` on task-01 (state working → error) and lowered retry_count from 0 to -1"),
        "{}",
        v.explanation
    );
}

#[test]
fn retry_count_never_decreases_near_miss_a_claim_resets_it() {
    let mut run = s1_working();
    run.write(9_000, "task-01.S1", S1, Stmt::SetError, "task-01", row("working", S1, 2, 1.0), row("error", S1, 3, 0.0));
    run.launch(50_000, "task-01", "S2", S2).claim(60_000, "task-01.S2", S2, "fix_proposed", S1);
    run.none(RuleId::RetryCountNeverDecreases);
}

/// task-01's S1, launched at 1 s to start at once, never claims: `fate` befalls it at 2 s;
/// the conductor launches S2 at 600 s.
fn relaunched_unclaimed(fate: Fact) -> Run {
    let mut run = Run::with(ProtocolSettings::default());
    run.launch(1_000, "task-01", "S1", S1).fact(2_000, fate);
    run.launch(600_000, "task-01", "S2", S2);
    run
}

#[test]
fn no_relaunch_while_claim_pending_a_relaunch_while_the_first_session_hangs_before_its_claim() {
    let v = relaunched_unclaimed(Fact::Hung { session_id: S1.into(), until_ms: 1_200_000 }).the(RuleId::NoRelaunchWhileClaimPending);
    assert_eq!(v.t_ms, 600_000);
    assert!(
        v.explanation.contains("launched session S2 (bbbbbbbb…) of task-01")
            && v.explanation
                .contains("while session S1 (aaaaaaaa…) of task-01 (launched at t=1000 ms, hung from t=2000 ms until t=1200000 ms)")
            && v.explanation.contains("had not yet run its claim and was alive, frozen by a hang"),
        "{}",
        v.explanation
    );
}

#[test]
fn no_relaunch_while_claim_pending_near_miss_the_first_crashed_claimed_or_is_a_twin() {
    relaunched_unclaimed(Fact::Crashed { session_id: S1.into(), why: "test".into() }).none(RuleId::NoRelaunchWhileClaimPending);
    // A blocked claim (0 rows) is a claim run: the session falls back and leaves.
    let mut run = Run::with(ProtocolSettings::default());
    run.launch(1_000, "task-01", "S1", S1);
    run.write(2_000, "task-01.S1", S1, Stmt::ClaimTask, "task-01", row("working", S3, 0, 1.0), None);
    run.launch(600_000, "task-01", "S2", S2);
    // A double launch's twin is a fault beside the conductor's launch, not its decision.
    run.launch(600_000, "task-01", "S2b", S3);
    run.none(RuleId::NoRelaunchWhileClaimPending);
}

/// S1 replaced by S2 (claimed at 60 s); S1 wakes and writes `exited` on S2's row at 70 s; the
/// conductor's poll at 80 s reads `exited` and it sends a `handoff` at 90 s. `owner_fate`:
/// what became of S2 before the hand-over.
fn exit_of_a_replaced_session(owner_fate: Option<Fact>) -> Run {
    let mut run = s1_working();
    run.launch(50_000, "task-01", "S2", S2).claim(60_000, "task-01.S2", S2, "fix_proposed", S1);
    run.write(70_000, "task-01.S1", S1, Stmt::MarkExited, "task-01", row("working", S2, 0, 1.0), row("exited", S2, 0, 0.0));
    if let Some(fate) = owner_fate {
        run.fact(75_000, fate);
    }
    run.poll(80_000, &[("task-01", "exited", 10.0)]);
    conductor_sends(&mut run, 90_000, &[(90, "task-01", "handoff")]);
    run
}

#[test]
fn hand_over_on_owner_exit_a_replaced_sessions_exit_hands_the_live_owner_over() {
    let v = exit_of_a_replaced_session(None).the(RuleId::HandOverOnOwnerExit);
    assert_eq!(v.t_ms, 90_000);
    assert!(
        v.explanation.contains("on the `exited` its poll at t=80000 ms read, but session S1 (aaaaaaaa…)")
            && v.explanation.contains("wrote that `exited` at t=70000 ms onto a row that belonged to session S2 (bbbbbbbb…)")
            && v.explanation.contains("which was alive and running (not crashed, not ended, no terminal write)"),
        "{}",
        v.explanation
    );
}

#[test]
fn hand_over_on_owner_exit_near_miss_the_owner_had_crashed_or_exited_itself() {
    exit_of_a_replaced_session(Some(Fact::Crashed { session_id: S2.into(), why: "test".into() })).none(RuleId::HandOverOnOwnerExit);
    let mut run = s1_working();
    run.launch(50_000, "task-01", "S2", S2).claim(60_000, "task-01.S2", S2, "fix_proposed", S1);
    run.write(70_000, "task-01.S2", S2, Stmt::MarkExited, "task-01", row("working", S2, 0, 1.0), row("exited", S2, 0, 0.0));
    run.poll(80_000, &[("task-01", "exited", 10.0)]);
    conductor_sends(&mut run, 90_000, &[(90, "task-01", "handoff")]);
    run.none(RuleId::HandOverOnOwnerExit);
}

/// S1 hangs at 100 s and is handed over at 700 s (`fix_proposed`, S2 launched); S1 wakes and
/// beats at `beat_ms`; S2 claims at 720 s.
fn handed_over_then_beats(beat_ms: i64) -> Run {
    let mut run = s1_working();
    run.fact(100_000, Fact::Hung { session_id: S1.into(), until_ms: beat_ms });
    let (before, after) = (row("working", S1, 0, 600.0), row("fix_proposed", S1, 0, 0.0));
    run.write(700_000, "conductor", "conductor-session", Stmt::SetTaskState, "task-01", before, after);
    run.launch(700_000, "task-01", "S2", S2);
    let owner = if beat_ms < 720_000 { S1 } else { S2 };
    let state = if beat_ms < 720_000 { "fix_proposed" } else { "working" };
    run.claim(720_000, "task-01.S2", S2, "fix_proposed", S1);
    run.write(beat_ms, "task-01.S1", S1, Stmt::Heartbeat, "task-01", row(state, owner, 0, 9.0), row(state, owner, 0, 0.0));
    run
}

#[test]
fn silent_after_hand_over_a_woken_session_beats_before_its_successor_claims() {
    let mut run = s1_working();
    run.fact(100_000, Fact::Hung { session_id: S1.into(), until_ms: 710_000 });
    let (before, after) = (row("working", S1, 0, 600.0), row("fix_proposed", S1, 0, 0.0));
    run.write(700_000, "conductor", "conductor-session", Stmt::SetTaskState, "task-01", before, after);
    run.launch(700_000, "task-01", "S2", S2);
    run.write(710_000, "task-01.S1", S1, Stmt::Heartbeat, "task-01", row("fix_proposed", S1, 0, 10.0), row("fix_proposed", S1, 0, 0.0));
    let v = run.the(RuleId::SilentAfterHandOver);
    assert!(
        v.explanation.contains("at t=710000 ms session S1 (aaaaaaaa…) of task-01")
            && v.explanation.contains("as task-01.S1, wrote `heartbeat` to task-01 (state fix_proposed → fix_proposed) after the conductor had handed it over: session S2 (bbbbbbbb…) was launched at t=700000 ms"),
        "{}",
        v.explanation
    );
}

#[test]
fn silent_after_hand_over_near_miss_a_write_after_the_claim_is_owner_writes_only() {
    let mut run = handed_over_then_beats(730_000);
    run.none(RuleId::SilentAfterHandOver);
    let mut run = handed_over_then_beats(730_000);
    run.the(RuleId::OwnerWritesOnly);
}
