//! The oracles under test: for every rule, a small synthetic event stream that violates it,
//! and a near miss that must not, with the explanation asserted.

use super::*;
use crate::world::event::{Event, EventKind, Fact, SqlEvent, SqlResult, Who};

/// A synthetic run: events fed to a checker one by one.
pub(super) struct Run {
    pub(super) checker: Checker,
}

/// A task row as a snapshot: (state, owner session, retry_count, heartbeat age in s).
pub(super) fn row(state: &str, owner: &str, retry_count: i64, age_s: f64) -> Option<RowSnapshot> {
    Some(RowSnapshot { state: state.parse().unwrap(), session_id: owner.into(), retry_count, heartbeat_age_s: Some(age_s) })
}

impl Run {
    pub(super) fn with(settings: ProtocolSettings) -> Run {
        Run { checker: Checker::new(settings) }
    }

    pub(super) fn event(&mut self, t_ms: i64, actor: &str, session: &str, kind: EventKind) -> &mut Run {
        let who = Who::Actor(ActorName::parse(actor).expect("an actor name"));
        self.checker.on_event(&Event { t_ms, who, session: session.into(), kind });
        self
    }

    pub(super) fn fact(&mut self, t_ms: i64, fact: Fact) -> &mut Run {
        self.event(t_ms, "conductor", "conductor-session", EventKind::Truth(fact))
    }

    /// The conductor launched session `sid` (label `S1`…) of `task`, starting at `t_ms`.
    pub(super) fn launch(&mut self, t_ms: i64, task: &str, label: &str, sid: &str) -> &mut Run {
        self.fact(t_ms, Fact::Launched { at_ms: t_ms, label: label.into(), session_id: sid.into(), task_id: task.into() })
    }

    /// A write by `actor` (as session `sid`) that moved `task` from `before` to `after`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn write(
        &mut self,
        t_ms: i64,
        actor: &str,
        sid: &str,
        stmt: Stmt,
        task: &str,
        before: Option<RowSnapshot>,
        after: Option<RowSnapshot>,
    ) -> &mut Run {
        let rows = usize::from(after.is_some());
        let sql = SqlEvent {
            stmt,
            task_id: task.into(),
            result: SqlResult::Rows(rows),
            rows_affected: rows,
            before,
            after,
            message: None,
            more_messages: Vec::new(),
            other_rows: Vec::new(),
            polled: Vec::new(),
            params_text: Default::default(),
        };
        self.event(t_ms, actor, sid, EventKind::Sql(Box::new(sql)))
    }

    #[allow(clippy::too_many_arguments)]
    /// A message insert: (id, task, type). The task row around it is unchanged (its owner is
    /// left out of the snapshot, as if unknown, so the insert moves no ownership).
    pub(super) fn message(&mut self, t_ms: i64, actor: &str, sid: &str, stmt: Stmt, id: i64, task: &str, kind: &str) -> &mut Run {
        let sql = SqlEvent {
            stmt,
            task_id: task.into(),
            result: SqlResult::Rows(1),
            rows_affected: 1,
            before: row("working", "", 0, 0.0),
            after: row("working", "", 0, 0.0),
            message: Some((id, task.into(), kind.into())),
            more_messages: Vec::new(),
            other_rows: Vec::new(),
            polled: Vec::new(),
            params_text: Default::default(),
        };
        self.event(t_ms, actor, sid, EventKind::Sql(Box::new(sql)))
    }

    /// The final `handoff` message of S1, asked to exit: task-01's row is `exit_requested`
    /// and names S1 (docs/protocol.md D16).
    pub(super) fn final_message_on_request(&mut self, t_ms: i64) -> &mut Run {
        let sql = SqlEvent {
            stmt: Stmt::SendHandoff,
            task_id: "task-01".into(),
            result: SqlResult::Rows(1),
            rows_affected: 1,
            before: row("exit_requested", S1, 0, 30.0),
            after: row("exit_requested", S1, 0, 30.0),
            message: Some((9, "task-01".into(), "handoff".into())),
            more_messages: Vec::new(),
            other_rows: Vec::new(),
            polled: Vec::new(),
            params_text: Default::default(),
        };
        self.event(t_ms, "task-01.S1", S1, EventKind::Sql(Box::new(sql)))
    }

    /// The conductor asks S1 to exit: `working → exit_requested` on task-01.
    pub(super) fn exit_request(&mut self, t_ms: i64) -> &mut Run {
        self.write(
            t_ms,
            "conductor",
            "conductor-session",
            Stmt::SetTaskState,
            "task-01",
            row("working", S1, 0, 10.0),
            row("exit_requested", S1, 0, 0.0),
        )
    }

    /// S2, launched at 30 s, claims task-01 from `exit_requested` at `t_ms`.
    pub(super) fn successor_claims_from_exit_requested(&mut self, t_ms: i64) -> &mut Run {
        self.launch(30_000, "task-01", "S2", S2).claim(t_ms, "task-01.S2", S2, "exit_requested", S1)
    }

    pub(super) fn poll(&mut self, t_ms: i64, polled: &[(&str, &str, f64)]) -> &mut Run {
        let sql = SqlEvent {
            stmt: Stmt::PollTasks,
            task_id: "task-00".into(),
            result: SqlResult::Rows(polled.len()),
            rows_affected: 0,
            before: None,
            after: None,
            message: None,
            more_messages: Vec::new(),
            other_rows: Vec::new(),
            polled: polled.iter().map(|(t, s, a)| (t.to_string(), s.to_string(), *a)).collect(),
            params_text: Default::default(),
        };
        self.event(t_ms, "conductor", "conductor-session", EventKind::Sql(Box::new(sql)))
    }

    pub(super) fn claim(&mut self, t_ms: i64, actor: &str, sid: &str, from: &str, previous_owner: &str) -> &mut Run {
        self.write(t_ms, actor, sid, Stmt::ClaimTask, "task-01", row(from, previous_owner, 0, 600.0), row("working", sid, 0, 0.0))
    }

    pub(super) fn violations(&mut self) -> Vec<Violation> {
        self.violations_at(END_MS)
    }

    /// The violations of a run that ended at `end_ms` (its time limit, say).
    pub(super) fn violations_at(&mut self, end_ms: i64) -> Vec<Violation> {
        self.checker.finish(end_ms, &[]);
        self.checker.violations().to_vec()
    }

    /// The one violation of `rule`, which must exist.
    pub(super) fn the(&mut self, rule: RuleId) -> Violation {
        let all = self.violations();
        let mut found = all.iter().filter(|v| v.rule == rule);
        let first = found.next().unwrap_or_else(|| panic!("no {rule} among {all:#?}")).clone();
        assert!(found.next().is_none(), "{rule} more than once: {all:#?}");
        first
    }

    pub(super) fn none(&mut self, rule: RuleId) {
        let all = self.violations();
        assert!(!all.iter().any(|v| v.rule == rule), "unexpected {rule}: {all:#?}");
    }
}

/// When a test's run ends unless it says otherwise.
pub(super) const END_MS: i64 = 100_000_000;

pub(super) const S1: &str = "aaaaaaaa-1111";
pub(super) const S2: &str = "bbbbbbbb-2222";

/// task-01: S1 launched and working.
pub(super) fn s1_working() -> Run {
    s1_working_with(ProtocolSettings::default())
}

fn s1_working_with(settings: ProtocolSettings) -> Run {
    let mut run = Run::with(settings);
    run.launch(1_000, "task-01", "S1", S1).claim(2_000, "task-01.S1", S1, "watching", "");
    run
}

#[test]
fn one_live_session_a_claim_while_the_previous_session_still_runs() {
    let mut run = s1_working();
    run.launch(50_000, "task-01", "S2", S2).claim(60_000, "task-01.S2", S2, "fix_proposed", S1);
    let v = run.the(RuleId::OneLiveSessionPerTask);
    assert_eq!(v.t_ms, 60_000);
    assert!(
        v.explanation.contains("session S2 (bbbbbbbb…) of task-01") && v.explanation.contains("while session S1 (aaaaaaaa…)"),
        "{}",
        v.explanation
    );
}

#[test]
fn one_live_session_near_miss_a_terminal_write_that_changed_no_state_still_ends_the_session() {
    let mut run = s1_working();
    // The conductor set `exited` already; S1's own mark_exited then changes nothing but the row.
    run.write(40_000, "task-01.S1", S1, Stmt::MarkExited, "task-01", row("exited", S1, 0, 9.0), row("exited", S1, 0, 0.0));
    run.launch(50_000, "task-01", "S2", S2).claim(60_000, "task-01.S2", S2, "fix_proposed", S1);
    run.none(RuleId::OneLiveSessionPerTask);
}

#[test]
fn one_live_session_near_miss_a_hung_rival_is_not_working() {
    let mut run = s1_working();
    run.fact(30_000, Fact::Hung { session_id: S1.into(), until_ms: 900_000 });
    run.launch(50_000, "task-01", "S2", S2).claim(60_000, "task-01.S2", S2, "fix_proposed", S1);
    run.none(RuleId::OneLiveSessionPerTask);
}

#[test]
fn allowed_transitions_a_musician_move_outside_002s_table() {
    let mut run = s1_working();
    run.write(9_000, "task-01.S1", S1, Stmt::ResumeWorking, "task-01", row("complete", S1, 0, 1.0), row("working", S1, 0, 0.0));
    let v = run.the(RuleId::AllowedTransitions);
    assert!(v.explanation.contains("from `complete` to `working` with `resume_working`"), "{}", v.explanation);
}

#[test]
fn allowed_transitions_near_miss_a_resubmission_after_a_rejection() {
    let mut run = s1_working();
    run.write(9_000, "task-01.S1", S1, Stmt::SetNeedsReview, "task-01", row("review_failed", S1, 0, 1.0), row("needs_review", S1, 0, 0.0));
    run.none(RuleId::AllowedTransitions);
}

#[test]
fn allowed_transitions_the_conductor_reopens_a_complete_task() {
    let mut run = s1_working();
    run.write(
        9_000,
        "conductor",
        "conductor-session",
        Stmt::SetTaskState,
        "task-01",
        row("complete", S1, 0, 1.0),
        row("fix_proposed", S1, 0, 1.0),
    );
    let v = run.the(RuleId::AllowedTransitions);
    assert!(v.explanation.contains("a terminal state, which \"cannot transition back\""), "{}", v.explanation);
}

/// docs/protocol.md D16 read as 004 does (`exit-requested-conductor-only`).
fn conductor_only() -> ProtocolSettings {
    ProtocolSettings { exit_request_to_musician: false, ..ProtocolSettings::default() }
}

/// docs/protocol.md D16 under `exit-request-no-state`: a session asked to exit ends with its
/// final message and writes no state.
fn no_state() -> ProtocolSettings {
    ProtocolSettings { exit_request_no_state: true, ..ProtocolSettings::default() }
}

#[test]
fn allowed_transitions_near_miss_a_session_asked_to_exit_writes_exited_last() {
    // 000 "Clean Exit Protocol" 7, the default: the final message, then `exited`.
    let mut run = s1_working();
    run.exit_request(9_000).final_message_on_request(20_000);
    run.write(25_000, "task-01.S1", S1, Stmt::MarkExited, "task-01", row("exit_requested", S1, 0, 5.0), row("exited", S1, 0, 0.0));
    run.none(RuleId::AllowedTransitions);
    run.none(RuleId::NothingAfterTerminal);
    // Under `exit-request-no-state` that `exited` is a write after the session's last.
    let mut run = s1_working_with(no_state());
    run.exit_request(9_000).final_message_on_request(20_000);
    run.write(25_000, "task-01.S1", S1, Stmt::MarkExited, "task-01", row("exit_requested", S1, 0, 5.0), row("exited", S1, 0, 0.0));
    run.the(RuleId::NothingAfterTerminal);
}

#[test]
fn allowed_transitions_under_004s_reading_the_conductor_sets_exit_requested_on_a_task() {
    let mut run = s1_working_with(conductor_only());
    run.exit_request(9_000);
    let v = run.the(RuleId::AllowedTransitions);
    assert!(v.explanation.contains("from `working` to `exit_requested`"), "{}", v.explanation);
    assert!(v.explanation.contains("the conductor's own end state (004 \"Conductor States (task-00)\")"), "{}", v.explanation);
}

#[test]
fn allowed_transitions_near_miss_the_conductor_asks_a_session_to_exit_and_its_successor_claims() {
    let mut run = s1_working();
    run.exit_request(9_000).final_message_on_request(20_000);
    run.successor_claims_from_exit_requested(40_000);
    run.none(RuleId::AllowedTransitions);
}

#[test]
fn one_live_session_a_claim_before_the_session_asked_to_exit_has_left() {
    let mut run = s1_working();
    run.exit_request(9_000);
    run.successor_claims_from_exit_requested(40_000);
    let v = run.the(RuleId::OneLiveSessionPerTask);
    assert!(v.explanation.contains("while session S1 (aaaaaaaa…)"), "{}", v.explanation);
}

#[test]
fn one_live_session_near_miss_a_claim_after_the_final_message_of_an_exit_on_request() {
    let mut run = s1_working_with(no_state());
    run.exit_request(9_000).final_message_on_request(20_000);
    run.successor_claims_from_exit_requested(40_000);
    run.none(RuleId::OneLiveSessionPerTask);
    // Under 004's reading the message ends nothing: the session is still to make its
    // terminal write.
    let mut run = s1_working_with(conductor_only());
    run.final_message_on_request(20_000);
    run.successor_claims_from_exit_requested(40_000);
    run.the(RuleId::OneLiveSessionPerTask);
}

#[test]
fn nothing_after_terminal_a_write_after_the_final_message_of_an_exit_on_request() {
    let mut run = s1_working_with(no_state());
    run.exit_request(9_000).final_message_on_request(20_000);
    run.write(25_000, "task-01.S1", S1, Stmt::MarkExited, "task-01", row("exit_requested", S1, 0, 5.0), row("exited", S1, 0, 0.0));
    let v = run.the(RuleId::NothingAfterTerminal);
    assert!(v.explanation.contains("ran `mark_exited` after session S1"), "{}", v.explanation);
    assert!(v.explanation.contains("terminal write at t=20000 ms"), "{}", v.explanation);
}

#[test]
fn exit_to_claim_counts_from_the_final_message_of_an_exit_on_request() {
    let mut run = s1_working_with(no_state());
    run.exit_request(9_000).final_message_on_request(20_000);
    run.successor_claims_from_exit_requested(45_000);
    assert_eq!(run.checker.measured().exit_to_claim_ms, [25_000]);
}

#[test]
fn nothing_after_terminal_a_watcher_beats_after_its_session_completed() {
    let mut run = s1_working();
    run.message(8_000, "task-01.S1", S1, Stmt::SendCompletion, 5, "task-01", "completion");
    run.write(9_000, "task-01.S1", S1, Stmt::MarkComplete, "task-01", row("working", S1, 0, 1.0), row("complete", S1, 0, 0.0));
    run.write(20_000, "task-01.S1.bg-watcher-1", S1, Stmt::Heartbeat, "task-01", row("complete", S1, 0, 11.0), row("complete", S1, 0, 0.0));
    let v = run.the(RuleId::NothingAfterTerminal);
    assert!(v.explanation.contains("at t=20000 ms task-01.S1.bg-watcher-1 ran `heartbeat` after session S1"), "{}", v.explanation);
    assert!(v.explanation.contains("terminal write at t=9000 ms"), "{}", v.explanation);
}

#[test]
fn nothing_after_terminal_near_miss_the_final_message_before_the_terminal_write() {
    let mut run = s1_working();
    run.message(8_000, "task-01.S1", S1, Stmt::SendCompletion, 5, "task-01", "completion");
    run.write(9_000, "task-01.S1", S1, Stmt::MarkComplete, "task-01", row("working", S1, 0, 1.0), row("complete", S1, 0, 0.0));
    run.none(RuleId::NothingAfterTerminal);
    run.none(RuleId::MessageBeforeState);
}

#[test]
fn message_before_state_needs_review_with_no_request_seen_by_the_conductor() {
    let mut run = s1_working();
    run.write(9_000, "task-01.S1", S1, Stmt::SetNeedsReview, "task-01", row("working", S1, 0, 1.0), row("needs_review", S1, 0, 0.0));
    run.poll(12_000, &[("task-01", "needs_review", 3.0)]);
    let v = run.the(RuleId::MessageBeforeState);
    assert!(
        v.explanation.contains("found task-01 in `needs_review` with no review request") && v.explanation.contains("at t=9000 ms"),
        "{}",
        v.explanation
    );
}

#[test]
fn message_before_state_near_miss_the_request_follows_before_the_conductor_looks() {
    let mut run = s1_working();
    run.write(9_000, "task-01.S1", S1, Stmt::SetNeedsReview, "task-01", row("working", S1, 0, 1.0), row("needs_review", S1, 0, 0.0));
    run.message(10_000, "task-01.S1", S1, Stmt::SendReviewRequest, 7, "task-01", "review_request");
    run.poll(12_000, &[("task-01", "needs_review", 3.0)]);
    run.none(RuleId::MessageBeforeState);
}

#[test]
fn message_before_state_a_terminal_write_with_no_final_message() {
    let mut run = s1_working();
    run.write(9_000, "task-01.S1", S1, Stmt::MarkExited, "task-01", row("error", S1, 5, 1.0), row("exited", S1, 5, 0.0));
    let v = run.the(RuleId::MessageBeforeState);
    assert!(v.explanation.contains("set task-01 to `exited` with no final message"), "{}", v.explanation);
}

#[test]
fn message_before_state_complete_after_a_message_that_is_no_completion_report() {
    let mut run = s1_working();
    run.message(8_000, "task-01.S1", S1, Stmt::SendHandoff, 5, "task-01", "handoff");
    run.write(9_000, "task-01.S1", S1, Stmt::MarkExited, "task-01", row("working", S1, 0, 1.0), row("complete", S1, 0, 0.0));
    let v = run.the(RuleId::MessageBeforeState);
    assert!(v.explanation.contains("set task-01 to `complete` after a `handoff` message, with no completion report"), "{}", v.explanation);
}

#[test]
fn messages_seen_once_read_only_by_a_replaced_session() {
    let mut run = s1_working();
    run.launch(50_000, "task-01", "S2", S2).claim(60_000, "task-01.S2", S2, "fix_proposed", S1);
    run.message(70_000, "conductor", "conductor-session", Stmt::SendConductorMessage, 51, "task-01", "approval");
    run.fact(71_000, Fact::MessageHandled { session_id: S1.into(), message_id: 51 });
    let v = run.the(RuleId::MessagesSeenOnce);
    assert!(
        v.explanation.contains("was read only by session S1 (aaaaaaaa…)") && v.explanation.contains("no owner of the task ever saw it"),
        "{}",
        v.explanation
    );
}

#[test]
fn messages_seen_once_read_by_nobody_names_who_was_alive() {
    let mut run = s1_working();
    run.message(70_000, "conductor", "conductor-session", Stmt::SendConductorMessage, 51, "task-01", "emergency");
    let v = run.the(RuleId::MessagesSeenOnce);
    assert!(v.explanation.contains("was read by nobody, although session S1 (aaaaaaaa…)"), "{}", v.explanation);
}

#[test]
fn messages_seen_once_near_miss_read_once_by_the_owner_or_due_to_nobody() {
    let mut run = s1_working();
    run.message(70_000, "conductor", "conductor-session", Stmt::SendConductorMessage, 51, "task-01", "approval");
    run.fact(71_000, Fact::MessageHandled { session_id: S1.into(), message_id: 51 });
    run.fact(80_000, Fact::Crashed { session_id: S1.into(), why: "test".into() });
    run.message(90_000, "conductor", "conductor-session", Stmt::SendConductorMessage, 52, "task-01", "handoff");
    run.none(RuleId::MessagesSeenOnce);
}

/// docs/protocol.md C86: an emergency sent 12 s before S1's `mark_complete` could not be read
/// by a watcher polling every 15 s (000 "Background Watcher"); one sent 40 s before could, and
/// without a window (a checker built with no scenario) both are owed.
#[test]
fn messages_seen_once_spares_a_message_sent_within_one_watcher_poll_of_the_terminal_write() {
    let completes = |window_ms: i64, sent_ms: i64| {
        let mut run = s1_working();
        run.checker.truth.watcher_read_window_ms = window_ms;
        run.message(sent_ms, "conductor", "conductor-session", Stmt::SendConductorMessage, 51, "task-01", "emergency");
        let (before, after) = (row("review_approved", S1, 0, 5.0), row("complete", S1, 0, 0.0));
        run.write(100_000, "task-01.S1", S1, Stmt::MarkComplete, "task-01", before, after);
        run
    };
    completes(21_000, 88_000).none(RuleId::MessagesSeenOnce);
    let v = completes(21_000, 60_000).the(RuleId::MessagesSeenOnce);
    assert!(v.explanation.contains("was read by nobody"), "{}", v.explanation);
    completes(0, 88_000).the(RuleId::MessagesSeenOnce);
}

/// docs/protocol.md C182: a message sent 12 s before the run ends (a time limit) could not be
/// read yet by S1's watcher polling every 15 s; one sent 40 s before could; without a window
/// (a checker built with no scenario) both are owed. S1 lives to the end in all three.
#[test]
fn messages_seen_once_spares_a_message_sent_within_one_watcher_poll_of_the_runs_end() {
    let unread = |window_ms: i64, before_end_ms: i64| {
        let mut run = s1_working();
        run.checker.truth.watcher_read_window_ms = window_ms;
        let sent_ms = END_MS - before_end_ms;
        run.message(sent_ms, "conductor", "conductor-session", Stmt::SendConductorMessage, 51, "task-01", "fix_proposal");
        run.violations_at(END_MS).into_iter().filter(|v| v.rule == RuleId::MessagesSeenOnce).collect::<Vec<_>>()
    };
    assert!(unread(21_000, 12_000).is_empty(), "sent 12 s before the end");
    assert!(unread(21_000, 21_000).is_empty(), "sent one whole window before the end (inclusive, as C86)");
    let owed = unread(21_000, 21_001);
    assert_eq!(owed.len(), 1, "sent just past one window before the end: {owed:#?}");
    assert!(owed[0].explanation.contains("was read by nobody"), "{}", owed[0].explanation);
    assert_eq!(unread(21_000, 40_000).len(), 1, "sent 40 s before the end");
    assert_eq!(unread(0, 12_000).len(), 1, "no window");
}

/// C182 spares only the unread: a message read twice just before the end is still judged.
#[test]
fn messages_seen_once_near_the_end_still_judges_two_reads() {
    let mut run = s1_working();
    run.checker.truth.watcher_read_window_ms = 21_000;
    run.message(END_MS - 12_000, "conductor", "conductor-session", Stmt::SendConductorMessage, 51, "task-01", "approval");
    run.fact(END_MS - 11_000, Fact::MessageHandled { session_id: S1.into(), message_id: 51 });
    run.fact(END_MS - 10_000, Fact::MessageHandled { session_id: S1.into(), message_id: 51 });
    let v = run.the(RuleId::MessagesSeenOnce);
    assert!(v.explanation.contains("was handled 2 times"), "{}", v.explanation);
}

#[test]
fn messages_seen_once_twice_by_the_owner() {
    let mut run = s1_working();
    run.message(70_000, "conductor", "conductor-session", Stmt::SendConductorMessage, 51, "task-01", "approval");
    run.fact(71_000, Fact::MessageHandled { session_id: S1.into(), message_id: 51 });
    run.fact(72_000, Fact::MessageHandled { session_id: S1.into(), message_id: 51 });
    let v = run.the(RuleId::MessagesSeenOnce);
    assert!(v.explanation.contains("was handled 2 times"), "{}", v.explanation);
}

/// S1 hung from 100 s to `until`; the conductor read a stale heartbeat at 700 s and hands the
/// task over at `handover` with the heartbeat `age_s` old in comms.db then.
fn stale_handover(until_ms: i64, handover_ms: i64, age_s: f64) -> Run {
    let mut run = s1_working();
    run.fact(100_000, Fact::Hung { session_id: S1.into(), until_ms });
    run.fact(
        700_000,
        Fact::StaleDeclared { task_id: "task-01".into(), session_id: S1.into(), seconds_stale: 657.0, polled_at_ms: 690_000 },
    );
    let (before, after) = (row("working", S1, 0, age_s), row("fix_proposed", S1, 0, age_s));
    run.write(handover_ms, "conductor", "conductor-session", Stmt::SetTaskState, "task-01", before, after);
    run
}

#[test]
fn no_false_stale_a_session_that_woke_before_the_hand_over() {
    let mut run = stale_handover(750_000, 800_000, 33.0);
    let v = run.the(RuleId::NoFalseStale);
    assert_eq!(v.t_ms, 800_000);
    assert!(
        v.explanation.contains("declared it stale at t=700000 ms on a heartbeat its poll at t=690000 ms read as 657 s old")
            && v.explanation.contains("the heartbeat in comms.db was 33 s old"),
        "{}",
        v.explanation
    );
    assert!(
        v.explanation.contains("hung from t=100000 ms until t=750000 ms") && v.explanation.contains("was alive and running"),
        "{}",
        v.explanation
    );
    assert_eq!(run.checker.measured().false_stale_alarms, 1);
}

#[test]
fn no_false_stale_near_miss_still_hung_at_the_hand_over_with_a_539_s_heartbeat() {
    let mut run = stale_handover(900_000, 800_000, 539.0);
    run.none(RuleId::NoFalseStale);
    assert_eq!(run.checker.measured().crash_detect_ms, [600_000]);
}

#[test]
fn no_false_stale_is_judged_when_the_hand_over_begins_with_its_handoff_message() {
    // Still hung when the handoff message is written; awake 1 s later, at the state write.
    let mut run = s1_working();
    run.fact(100_000, Fact::Hung { session_id: S1.into(), until_ms: 800_500 });
    run.fact(
        700_000,
        Fact::StaleDeclared { task_id: "task-01".into(), session_id: S1.into(), seconds_stale: 650.0, polled_at_ms: 690_000 },
    );
    run.message(800_000, "conductor", "conductor-session", Stmt::SendConductorMessage, 9, "task-01", "handoff");
    run.write(
        801_000,
        "conductor",
        "conductor-session",
        Stmt::SetTaskState,
        "task-01",
        row("working", S1, 0, 751.0),
        row("fix_proposed", S1, 0, 751.0),
    );
    run.none(RuleId::NoFalseStale);
}

#[test]
fn messages_seen_once_near_miss_a_message_to_a_task_whose_owner_had_finished() {
    let mut run = s1_working();
    run.message(8_000, "task-01.S1", S1, Stmt::SendCompletion, 5, "task-01", "completion");
    run.write(9_000, "task-01.S1", S1, Stmt::MarkComplete, "task-01", row("working", S1, 0, 1.0), row("complete", S1, 0, 0.0));
    run.fact(9_500, Fact::Ended { session_id: S1.into() });
    run.message(70_000, "conductor", "conductor-session", Stmt::SendConductorMessage, 51, "task-01", "approval");
    run.none(RuleId::MessagesSeenOnce);
}

/// Issue 48 (swarm-1-00918): a message to a finished task is not owed to a double launch's twin
/// launched after it and blocked at its claim (it never took the task); a successor that claims owes it.
#[test]
fn messages_seen_once_a_session_blocked_at_its_claim_is_no_successor() {
    let finished_then = |claims: bool| {
        let mut run = s1_working();
        run.write(9_000, "task-01.S1", S1, Stmt::MarkComplete, "task-01", row("working", S1, 0, 1.0), row("complete", S1, 0, 0.0));
        run.fact(9_500, Fact::Ended { session_id: S1.into() });
        run.message(70_000, "conductor", "conductor-session", Stmt::SendConductorMessage, 51, "task-01", "emergency");
        run.launch(80_000, "task-01", if claims { "S2" } else { "S1b" }, S2);
        if claims {
            run.claim(90_000, "task-01.S2", S2, "fix_proposed", S1);
        } else {
            run.message(90_000, "task-01.S2", S2, Stmt::SendClaimBlocked, 52, "task-01", "claim_blocked");
        }
        run
    };
    finished_then(false).none(RuleId::MessagesSeenOnce);
    let v = finished_then(true).the(RuleId::MessagesSeenOnce);
    assert!(v.explanation.contains("was read by nobody"), "{}", v.explanation);
}

#[test]
fn no_false_stale_near_miss_a_crashed_session() {
    let mut run = s1_working();
    run.fact(100_000, Fact::Crashed { session_id: S1.into(), why: "test".into() });
    run.fact(
        700_000,
        Fact::StaleDeclared { task_id: "task-01".into(), session_id: S1.into(), seconds_stale: 650.0, polled_at_ms: 690_000 },
    );
    run.write(
        701_000,
        "conductor",
        "conductor-session",
        Stmt::SetTaskState,
        "task-01",
        row("working", S1, 0, 651.0),
        row("fix_proposed", S1, 0, 651.0),
    );
    run.none(RuleId::NoFalseStale);
}

#[test]
fn retry_count_at_most_5_and_its_near_miss() {
    let mut run = s1_working();
    run.write(9_000, "task-01.S1", S1, Stmt::SetError, "task-01", row("working", S1, 5, 1.0), row("error", S1, 5, 0.0));
    run.none(RuleId::RetryCountAtMost5);
    let mut run = s1_working();
    run.write(9_000, "task-01.S1", S1, Stmt::SetError, "task-01", row("working", S1, 5, 1.0), row("error", S1, 6, 0.0));
    assert!(run.the(RuleId::RetryCountAtMost5).explanation.contains("with retry_count 6"));
}

#[test]
fn retry_count_counts_errors_a_report_that_counts_no_retry() {
    let mut run = s1_working();
    run.write(9_000, "task-01.S1", S1, Stmt::SetError, "task-01", row("working", S1, 0, 1.0), row("error", S1, 0, 0.0));
    let v = run.the(RuleId::RetryCountCountsErrors);
    assert!(
        v.explanation.contains("reported error 1 on task-01 since its claim, but `set_error` left retry_count at 0"),
        "{}",
        v.explanation
    );
}

/// Issue 44, docs/protocol.md C70: a `set_error` blindly retried after an ambiguous commit is
/// the same report, so the count it adds is one too many; without the `blind_retry` truth the
/// same two writes are two reports and pass (the near miss).
#[test]
fn retry_count_counts_errors_a_blind_retry_counts_the_same_report_twice() {
    let retried = |truth: bool| {
        let mut run = s1_working();
        run.write(9_000, "task-01.S1", S1, Stmt::SetError, "task-01", row("working", S1, 0, 1.0), row("error", S1, 1, 0.0));
        if truth {
            run.fact(9_000, Fact::BlindRetry { session_id: S1.into(), statement: "set_error".into() });
        }
        run.write(10_000, "task-01.S1", S1, Stmt::SetError, "task-01", row("error", S1, 1, 1.0), row("error", S1, 2, 0.0));
        run
    };
    let v = retried(true).the(RuleId::RetryCountCountsErrors);
    assert!(
        v.explanation.contains("reported error 1 on task-01 since its claim, but `set_error` left retry_count at 2"),
        "{}",
        v.explanation
    );
    retried(false).none(RuleId::RetryCountCountsErrors);
}

#[test]
fn retry_count_counts_errors_near_miss_a_new_claim_starts_the_count_again() {
    let mut run = s1_working();
    run.write(9_000, "task-01.S1", S1, Stmt::SetError, "task-01", row("working", S1, 0, 1.0), row("error", S1, 1, 0.0));
    run.launch(50_000, "task-01", "S2", S2).claim(60_000, "task-01.S2", S2, "fix_proposed", S1);
    run.write(70_000, "task-01.S2", S2, Stmt::SetError, "task-01", row("working", S2, 0, 1.0), row("error", S2, 1, 0.0));
    run.none(RuleId::RetryCountCountsErrors);
}

#[test]
fn owner_writes_only_a_replaced_session_overwrites_its_successor() {
    let mut run = s1_working();
    run.launch(50_000, "task-01", "S2", S2).claim(60_000, "task-01.S2", S2, "fix_proposed", S1);
    run.write(70_000, "task-01.S1", S1, Stmt::SetNeedsReview, "task-01", row("working", S2, 0, 1.0), row("needs_review", S2, 0, 0.0));
    let v = run.the(RuleId::OwnerWritesOnly);
    assert!(
        v.explanation.contains("session S1 (aaaaaaaa…)") && v.explanation.contains("but the row belonged to session S2 (bbbbbbbb…)"),
        "{}",
        v.explanation
    );
}

#[test]
fn owner_writes_only_near_miss_a_claim_takes_the_row_over() {
    let mut run = s1_working();
    run.write(40_000, "task-01.S1", S1, Stmt::MarkExited, "task-01", row("working", S1, 0, 1.0), row("exited", S1, 0, 0.0));
    run.launch(50_000, "task-01", "S2", S2).claim(60_000, "task-01.S2", S2, "fix_proposed", S1);
    run.none(RuleId::OwnerWritesOnly);
}

#[test]
fn no_constraint_failure_and_its_near_miss_busy() {
    let mut run = s1_working();
    for (result, t) in
        [(SqlResult::Busy("database is locked".into()), 5_000), (SqlResult::Failed("CHECK constraint failed: state".into()), 6_000)]
    {
        let sql = SqlEvent {
            stmt: Stmt::SetTaskState,
            task_id: "task-01".into(),
            result,
            rows_affected: 0,
            before: None,
            after: None,
            message: None,
            more_messages: Vec::new(),
            other_rows: Vec::new(),
            polled: Vec::new(),
            params_text: Default::default(),
        };
        run.event(t, "conductor", "conductor-session", EventKind::Sql(Box::new(sql)));
    }
    let v = run.the(RuleId::NoConstraintFailure);
    assert_eq!(v.t_ms, 6_000, "SQLITE_BUSY is not a constraint failure");
    assert!(v.explanation.contains("ran `set_task_state` and SQLite refused it: CHECK constraint failed"), "{}", v.explanation);
}

#[test]
fn finished_row_untouched_a_zombie_beats_on_a_complete_row() {
    let mut run = s1_working();
    run.launch(50_000, "task-01", "S2", S2).claim(60_000, "task-01.S2", S2, "fix_proposed", S1);
    run.message(70_000, "task-01.S2", S2, Stmt::SendCompletion, 8, "task-01", "completion");
    run.write(71_000, "task-01.S2", S2, Stmt::MarkComplete, "task-01", row("working", S2, 0, 1.0), row("complete", S2, 0, 0.0));
    run.write(80_000, "task-01.S1.bg-watcher-2", S1, Stmt::Heartbeat, "task-01", row("complete", S2, 0, 9.0), row("complete", S2, 0, 0.0));
    let v = run.the(RuleId::FinishedRowUntouched);
    assert!(
        v.explanation.contains("ran `heartbeat` on task-01, which was already `complete` (completed by session S2"),
        "{}",
        v.explanation
    );
}

#[test]
fn finished_row_untouched_near_miss_a_read_or_a_write_that_changes_nothing() {
    let mut run = s1_working();
    run.message(70_000, "task-01.S1", S1, Stmt::SendCompletion, 8, "task-01", "completion");
    run.write(71_000, "task-01.S1", S1, Stmt::MarkComplete, "task-01", row("working", S1, 0, 1.0), row("complete", S1, 0, 0.0));
    run.launch(50_000, "task-01", "S2", S2);
    run.write(80_000, "task-01.S2", S2, Stmt::Heartbeat, "task-01", row("complete", S1, 0, 9.0), None);
    run.none(RuleId::FinishedRowUntouched);
}

#[test]
fn completed_once_two_sessions_complete_one_task() {
    let mut run = s1_working();
    run.write(30_000, "task-01.S1", S1, Stmt::MarkComplete, "task-01", row("working", S1, 0, 1.0), row("complete", S1, 0, 0.0));
    run.launch(50_000, "task-01", "S2", S2);
    run.write(90_000, "task-01.S2", S2, Stmt::MarkComplete, "task-01", row("working", S2, 0, 1.0), row("complete", S2, 0, 0.0));
    let v = run.the(RuleId::CompletedOnce);
    assert!(
        v.explanation.contains("completed task-01 again: session S1 (aaaaaaaa…)") && v.explanation.contains("at t=30000 ms"),
        "{}",
        v.explanation
    );
}

#[test]
fn completed_once_near_miss_one_session_one_completion() {
    let mut run = s1_working();
    run.write(30_000, "task-01.S1", S1, Stmt::MarkComplete, "task-01", row("working", S1, 0, 1.0), row("complete", S1, 0, 0.0));
    run.none(RuleId::CompletedOnce);
}

/// S1 asked for a review; the conductor answered it with message 61; `reader` read it and
/// completed.
fn answered_then_completed(reader: (&str, &str)) -> Run {
    let mut run = s1_working();
    run.launch(50_000, "task-01", "S2", S2);
    run.fact(60_000, Fact::Answering { task_id: "task-01".into(), request_id: 60, requester: S1.into() });
    run.message(61_000, "conductor", "conductor-session", Stmt::SendConductorMessage, 61, "task-01", "approval");
    run.fact(62_000, Fact::MessageHandled { session_id: reader.1.into(), message_id: 61 });
    run.write(
        63_000,
        reader.0,
        reader.1,
        Stmt::MarkComplete,
        "task-01",
        row("review_approved", reader.1, 0, 1.0),
        row("complete", reader.1, 0, 0.0),
    );
    run
}

#[test]
fn answer_own_request_a_successor_completes_on_its_predecessors_approval() {
    let mut run = answered_then_completed(("task-01.S2", S2));
    let v = run.the(RuleId::AnswerOwnRequest);
    assert!(
        v.explanation.contains("session S2 (bbbbbbbb…)") && v.explanation.contains("conductor message 61 (approval)"),
        "{}",
        v.explanation
    );
    assert!(v.explanation.contains("which answered a request of session S1 (aaaaaaaa…)"), "{}", v.explanation);
}

#[test]
fn answer_own_request_near_miss_the_requester_completes_on_its_own_answer() {
    let mut run = answered_then_completed(("task-01.S1", S1));
    run.none(RuleId::AnswerOwnRequest);
}

/// The conductor was about to answer S1's request; `crashed`: it died first. The next
/// conductor session's hand-over (message 62) went to S2, which read it and completed.
fn answer_intent_then_hand_over(crashed: bool) -> Run {
    let mut run = s1_working();
    let (before, after) = (row("watching", "conductor-session", 0, 1.0), row("watching", "conductor-session", 0, 0.0));
    run.write(40_000, "conductor", "conductor-session", Stmt::ConductorHeartbeat, "task-00", before, after);
    run.fact(60_000, Fact::Answering { task_id: "task-01".into(), request_id: 60, requester: S1.into() });
    if crashed {
        run.fact(61_000, Fact::Crashed { session_id: "conductor-session".into(), why: "scripted crash of the conductor".into() });
    }
    run.message(900_000, "conductor.S2", "cccccccc-3333", Stmt::SendConductorMessage, 62, "task-01", "handoff");
    run.launch(901_000, "task-01", "S2", S2).claim(910_000, "task-01.S2", S2, "fix_proposed", S1);
    run.fact(911_000, Fact::MessageHandled { session_id: S2.into(), message_id: 62 });
    run.write(990_000, "task-01.S2", S2, Stmt::MarkComplete, "task-01", row("working", S2, 0, 1.0), row("complete", S2, 0, 0.0));
    run
}

#[test]
fn answer_own_request_the_conductors_next_message_answers_what_it_was_about_to_answer() {
    let v = answer_intent_then_hand_over(false).the(RuleId::AnswerOwnRequest);
    assert!(v.explanation.contains("conductor message 62 (handoff)"), "{}", v.explanation);
}

#[test]
fn answer_own_request_near_miss_a_conductor_that_crashed_before_answering_answered_nothing() {
    answer_intent_then_hand_over(true).none(RuleId::AnswerOwnRequest);
}

#[test]
fn conductor_outlasts_sessions_the_conductor_exits_while_an_owner_works() {
    let mut run = s1_working();
    run.write(
        90_000,
        "conductor",
        "conductor-session",
        Stmt::ConductorSetState,
        "task-00",
        row("watching", "conductor-session", 0, 1.0),
        row("complete", "conductor-session", 0, 0.0),
    );
    let v = run.the(RuleId::ConductorOutlastsSessions);
    assert!(
        v.explanation.contains("set its own row to `complete` while session S1 (aaaaaaaa…)")
            && v.explanation.contains("the owner of task-01"),
        "{}",
        v.explanation
    );
}

#[test]
fn conductor_outlasts_sessions_near_miss_the_owner_had_ended() {
    let mut run = s1_working();
    run.fact(80_000, Fact::Ended { session_id: S1.into() });
    run.write(
        90_000,
        "conductor",
        "conductor-session",
        Stmt::ConductorSetState,
        "task-00",
        row("watching", "conductor-session", 0, 1.0),
        row("complete", "conductor-session", 0, 0.0),
    );
    run.none(RuleId::ConductorOutlastsSessions);
}

#[test]
fn message_notice_counts_from_when_the_session_could_see_it_and_not_while_it_was_frozen() {
    let mut run = s1_working();
    run.message(70_000, "conductor", "conductor-session", Stmt::SendConductorMessage, 51, "task-01", "approval");
    run.fact(75_000, Fact::Hung { session_id: S1.into(), until_ms: 175_000 });
    run.fact(180_000, Fact::MessageHandled { session_id: S1.into(), message_id: 51 });
    // 110 s from sending to reading, 100 s of it frozen.
    assert_eq!(run.checker.measured().message_notice_ms, [10_000]);
}

#[test]
fn budget_a_measurement_over_its_budget_and_one_at_it() {
    let budgets = |max: i64| {
        [rules::budget::BudgetLimit { name: "heartbeat_age_s", limit: max, source: "test".into(), conductor: None, outside_pause: None }]
    };
    for (max, fails) in [(456, true), (457, false)] {
        let mut run = s1_working();
        run.poll(30_000, &[("task-01", "working", 457.2)]);
        run.checker.finish(40_000, &budgets(max));
        let found = run.checker.violations().iter().any(|v| {
            v.rule == RuleId::Budget
                && v.explanation.contains("heartbeat_age_s reached 457")
                && v.explanation.contains("the largest is within the heartbeat refresh threshold, its whole cause")
        });
        assert_eq!(found, fails, "budget {max}");
    }
}

#[test]
fn heartbeat_age_leaves_out_a_hang_and_its_stale_heartbeat_then_counts_again_after_a_fresh_write() {
    let mut run = s1_working();
    run.poll(30_000, &[("task-01", "working", 28.0)]);
    run.fact(40_000, Fact::Hung { session_id: S1.into(), until_ms: 100_000 });
    // During the hang, and after it until S1 writes its row again, the age is the freeze's.
    run.poll(60_000, &[("task-01", "working", 58.0)]);
    run.poll(120_000, &[("task-01", "working", 118.0)]);
    let (before, after) = (row("working", S1, 0, 128.0), row("working", S1, 0, 0.0));
    run.write(130_000, "task-01.S1", S1, Stmt::Heartbeat, "task-01", before, after);
    // From that write on, S1's ages count again: a breach after a hang is not hidden.
    run.poll(140_000, &[("task-01", "working", 10.0)]);
    assert_eq!(run.checker.measured().heartbeat_age_s, [28, 10]);
}

#[test]
fn heartbeat_ages_of_one_poll_count_only_rows_whose_task_has_a_healthy_session() {
    let mut run = s1_working();
    run.launch(0, "task-02", "S1", S2);
    let (before, after) = (row("watching", "", 0, 0.0), row("working", S2, 0, 0.0));
    run.write(1_000, "task-02.S1", S2, Stmt::ClaimTask, "task-02", before, after);
    run.fact(2_000, Fact::Hung { session_id: S2.into(), until_ms: 100_000 });
    // task-01's S1 is healthy, task-02's S2 hung, task-03 has no session, and a `watching`
    // row is never an owner's age.
    let polled =
        [("task-02", "working", 40.0), ("task-01", "needs_review", 30.0), ("task-03", "working", 50.0), ("task-01", "watching", 9.0)];
    run.poll(30_000, &polled);
    assert_eq!(run.checker.measured().heartbeat_age_s, [30]);
}

#[test]
fn every_violation_is_kept_and_the_first_of_its_rule_and_subject_is_marked() {
    let mut findings = Findings::default();
    for (rule, subject, t_ms) in [
        (RuleId::OwnerWritesOnly, "task-01", 1),
        (RuleId::OwnerWritesOnly, "task-01", 2),
        (RuleId::CompletedOnce, "task-01", 3),
        (RuleId::OwnerWritesOnly, "task-02", 4),
        (RuleId::OwnerWritesOnly, "task-02", 5),
    ] {
        findings.violate_with(rule, subject, t_ms, || format!("{rule} at {t_ms}"));
    }
    let reported: Vec<(&str, i64, &str, bool)> =
        findings.violations.iter().map(|v| (v.rule.as_str(), v.t_ms, v.explanation.as_str(), v.first)).collect();
    assert_eq!(
        reported,
        [
            ("owner-writes-only", 1, "owner-writes-only at 1", true),
            ("owner-writes-only", 2, "owner-writes-only at 2", false),
            ("completed-once", 3, "completed-once at 3", true),
            ("owner-writes-only", 4, "owner-writes-only at 4", true),
            ("owner-writes-only", 5, "owner-writes-only at 5", false),
        ]
    );
}

const S3: &str = "cccccccc-3333";

/// task-01: S1 hangs at 30 s until `woken_ms`; S2 claims at 60 s while S1 is hung.
fn replaced_while_hung(woken_ms: i64) -> Run {
    let mut run = s1_working();
    run.fact(30_000, Fact::Hung { session_id: S1.into(), until_ms: woken_ms });
    run.launch(50_000, "task-01", "S2", S2).claim(60_000, "task-01.S2", S2, "fix_proposed", S1);
    run
}

#[test]
fn one_live_session_a_woken_replaced_session_writes_beside_its_live_successor() {
    let mut run = replaced_while_hung(90_000);
    run.write(95_000, "task-01.S1", S1, Stmt::MarkComplete, "task-01", row("working", S2, 0, 1.0), row("complete", S2, 0, 0.0));
    let v = run.the(RuleId::OneLiveSessionPerTask);
    assert_eq!(v.t_ms, 95_000);
    assert!(
        v.explanation.contains("session S1 (aaaaaaaa…)")
            && v.explanation.contains("wrote `mark_complete` to task-01 while session S2 (bbbbbbbb…)"),
        "{}",
        v.explanation
    );
}

#[test]
fn one_live_session_a_watcher_of_the_woken_session_counts_as_its_session() {
    let mut run = replaced_while_hung(90_000);
    run.write(95_000, "task-01.S1.bg-watcher-1", S1, Stmt::Heartbeat, "task-01", row("working", S2, 0, 20.0), row("working", S2, 0, 0.0));
    run.the(RuleId::OneLiveSessionPerTask);
}

#[test]
fn one_live_session_near_miss_the_owner_writes_and_the_conductor_answers() {
    let mut run = replaced_while_hung(900_000);
    run.write(70_000, "task-01.S2", S2, Stmt::SetNeedsReview, "task-01", row("working", S2, 0, 1.0), row("needs_review", S2, 0, 0.0));
    let (before, after) = (row("needs_review", S2, 0, 1.0), row("review_approved", S2, 0, 1.0));
    run.write(80_000, "conductor", "conductor-session", Stmt::SetTaskState, "task-01", before, after);
    run.none(RuleId::OneLiveSessionPerTask);
}

#[test]
fn one_live_session_near_miss_the_writer_or_the_owner_is_no_longer_live() {
    // A successor after a clean exit: the predecessor's watcher beats after its terminal write.
    let mut run = s1_working();
    run.write(40_000, "task-01.S1", S1, Stmt::MarkExited, "task-01", row("working", S1, 0, 1.0), row("exited", S1, 0, 0.0));
    run.launch(50_000, "task-01", "S2", S2).claim(60_000, "task-01.S2", S2, "exited", S1);
    run.write(70_000, "task-01.S1.bg-watcher-1", S1, Stmt::Heartbeat, "task-01", row("working", S2, 0, 9.0), row("working", S2, 0, 0.0));
    run.none(RuleId::OneLiveSessionPerTask);
    // The woken session writes after its successor crashed: one live session.
    let mut run = replaced_while_hung(90_000);
    run.fact(80_000, Fact::Crashed { session_id: S2.into(), why: "test".into() });
    run.write(95_000, "task-01.S1", S1, Stmt::Heartbeat, "task-01", row("working", S2, 0, 1.0), row("working", S2, 0, 0.0));
    run.none(RuleId::OneLiveSessionPerTask);
}

/// S2 (the owner, working) and S1 (a woken replaced session) on task-01: S1 set
/// `needs_review` on S2's row at 95 s.
fn needs_review_set_by_the_replaced_session() -> Run {
    let mut run = replaced_while_hung(90_000);
    run.write(95_000, "task-01.S1", S1, Stmt::SetNeedsReview, "task-01", row("working", S2, 0, 1.0), row("needs_review", S2, 0, 0.0));
    run
}

#[test]
fn allowed_transitions_an_implied_transition_by_a_session_that_did_not_ask() {
    let mut run = needs_review_set_by_the_replaced_session();
    let (before, after) = (row("needs_review", S2, 0, 1.0), row("error", S2, 0, 0.0));
    run.write(100_000, "task-01.S2", S2, Stmt::SetContextWarning, "task-01", before, after);
    let v = run.the(RuleId::AllowedTransitions);
    assert!(
        v.explanation.contains("from `needs_review` to `error` with `set_context_warning`")
            && v.explanation.contains("only as the next step of the session whose request put the row there, session S1 (aaaaaaaa…)")
            && v.explanation.contains("(its request at t=95000 ms); session S2 (bbbbbbbb…)"),
        "{}",
        v.explanation
    );
}

#[test]
fn allowed_transitions_near_miss_the_implied_transition_by_the_session_that_asked() {
    let mut run = needs_review_set_by_the_replaced_session();
    let (before, after) = (row("needs_review", S2, 0, 1.0), row("error", S2, 1, 0.0));
    run.write(100_000, "task-01.S1", S1, Stmt::SetError, "task-01", before, after);
    run.none(RuleId::AllowedTransitions);
    // The owner's own request, written on the row already in `needs_review`, makes the
    // owner the one the pause TIMEOUT belongs to.
    let mut run = needs_review_set_by_the_replaced_session();
    run.write(97_000, "task-01.S2", S2, Stmt::SetNeedsReview, "task-01", row("needs_review", S2, 0, 1.0), row("needs_review", S2, 0, 0.0));
    run.write(100_000, "task-01.S2", S2, Stmt::SetError, "task-01", row("needs_review", S2, 0, 1.0), row("error", S2, 1, 0.0));
    run.none(RuleId::AllowedTransitions);
}

/// S1 sent a context warning (`error`), the conductor answered `review_failed`, and `writer`
/// wrote `exited` from it.
fn exit_after_review_failed(writer: (&str, &str)) -> Run {
    let mut run = s1_working();
    run.launch(50_000, "task-01", "S3", S3);
    run.write(60_000, "task-01.S1", S1, Stmt::SetContextWarning, "task-01", row("working", S1, 0, 1.0), row("error", S1, 0, 0.0));
    let (before, after) = (row("error", S1, 0, 1.0), row("review_failed", S1, 0, 1.0));
    run.write(70_000, "conductor", "conductor-session", Stmt::SetTaskState, "task-01", before, after);
    run.write(80_000, writer.0, writer.1, Stmt::MarkExited, "task-01", row("review_failed", S1, 0, 1.0), row("exited", S1, 0, 0.0));
    run
}

#[test]
fn allowed_transitions_an_answer_acted_on_by_a_session_it_was_not_for() {
    let v = exit_after_review_failed(("task-01.S3", S3)).the(RuleId::AllowedTransitions);
    assert!(v.explanation.contains("from `review_failed` to `exited` with `mark_exited`"), "{}", v.explanation);
    assert!(v.explanation.contains("put the row there, session S1 (aaaaaaaa…)"), "{}", v.explanation);
    exit_after_review_failed(("task-01.S1", S1)).none(RuleId::AllowedTransitions);
}

/// A read by `actor` (as session `sid`): a watcher's poll, say.
fn read(run: &mut Run, t_ms: i64, actor: &str, sid: &str, stmt: Stmt) {
    let sql = SqlEvent {
        stmt,
        task_id: "task-01".into(),
        result: SqlResult::Rows(1),
        rows_affected: 0,
        before: None,
        after: None,
        message: None,
        more_messages: Vec::new(),
        other_rows: Vec::new(),
        polled: Vec::new(),
        params_text: Default::default(),
    };
    run.event(t_ms, actor, sid, EventKind::Sql(Box::new(sql)));
}

/// The conductor's own state on task-00 (`reviewing`, `watching`).
fn conductor_state(run: &mut Run, t_ms: i64, from: &str, to: &str) {
    let (before, after) = (row(from, "conductor-session", 0, 1.0), row(to, "conductor-session", 0, 0.0));
    run.write(t_ms, "conductor", "conductor-session", Stmt::ConductorSetState, "task-00", before, after);
}

/// The decompositions of one measurement, which must sum to their totals.
fn causes(run: &Run, name: &str) -> Vec<latency::Decomposition> {
    let all: Vec<latency::Decomposition> =
        run.checker.measured().decompositions.iter().filter(|d| d.measurement == name).cloned().collect();
    for d in &all {
        assert_eq!(d.components_ms.iter().sum::<i64>(), d.total_ms, "{d:?}");
    }
    all
}

#[test]
fn message_notice_by_the_pause_watcher_after_a_jittered_sleep_is_split_into_its_causes() {
    let mut run = s1_working();
    let watcher = "task-01.S1.pause-watcher-1";
    run.write(10_000, "task-01.S1", S1, Stmt::SetNeedsReview, "task-01", row("working", S1, 0, 1.0), row("needs_review", S1, 0, 0.0));
    read(&mut run, 20_000, watcher, S1, Stmt::ReadTaskState);
    run.event(20_000, watcher, S1, EventKind::Truth(Fact::SleepJittered { session_id: S1.into(), sleep_ms: 10_000, jitter_ms: 15_000 }));
    run.message(22_000, "conductor", "conductor-session", Stmt::SendConductorMessage, 51, "task-01", "approval");
    read(&mut run, 48_000, watcher, S1, Stmt::ReadTaskState);
    run.event(48_000, watcher, S1, EventKind::Ended(crate::world::event::ActorEnd::Exit));
    run.fact(50_000, Fact::MessageHandled { session_id: S1.into(), message_id: 51 });
    assert_eq!(run.checker.measured().message_notice_ms, [28_000]);
    let d = &causes(&run, "message_notice_ms")[0];
    assert_eq!(d.noticed_by, latency::Noticer::PauseWatcher);
    // Waiting from 22 s to the read at 48 s: 15 s of it the jitter (30-45 s), the rest the
    // poll; then 2 s of the session's own steps to the reading.
    assert_eq!((d.component(latency::Cause::Jitter), d.component(latency::Cause::PollWait)), (15_000, 11_000));
    assert_eq!(d.component(latency::Cause::Work), 2_000);
    assert_eq!(d.dominant(), latency::Cause::Jitter);
    assert!(
        d.explain().starts_with("noticed by the pause watcher; dominant cause: injected watcher jitter 15.0 s (54 %)"),
        "{}",
        d.explain()
    );
}

/// S1 pauses at 40 s (`set_needs_review`); message 51, sent at `sent_ms` (after an optional
/// hang of S1), is noticed by the pause watcher with the answer at 300 s and read at 301 s.
fn notice_with_the_pauses_answer(sent_ms: i64, hang: Option<(i64, i64)>) -> Run {
    let mut run = s1_working();
    run.checker.truth.watcher_read_window_ms = 21_000;
    let send = |run: &mut Run| {
        run.message(sent_ms, "conductor", "conductor-session", Stmt::SendConductorMessage, 51, "task-01", "emergency");
    };
    if sent_ms < 40_000 {
        send(&mut run);
    }
    if let Some((from, until_ms)) = hang {
        run.fact(from, Fact::Hung { session_id: S1.into(), until_ms });
    }
    run.write(40_000, "task-01.S1", S1, Stmt::SetNeedsReview, "task-01", row("working", S1, 0, 1.0), row("needs_review", S1, 0, 0.0));
    if sent_ms >= 40_000 {
        send(&mut run);
    }
    let watcher = "task-01.S1.pause-watcher-1";
    read(&mut run, 290_000, watcher, S1, Stmt::ReadTaskState);
    read(&mut run, 300_000, watcher, S1, Stmt::ReadTaskState);
    run.event(300_000, watcher, S1, EventKind::Ended(crate::world::event::ActorEnd::Exit));
    run.fact(301_000, Fact::MessageHandled { session_id: S1.into(), message_id: 51 });
    run
}

/// docs/protocol.md C85: the pause's answer is allowed to a message only if it reached the
/// pause: sent after the session paused, or less than one background watcher read (here
/// 21 s) of the session's own time before it, its hangs left out. A message a working session
/// left unread for longer is held to the working session's budget: the one-poll budget fails
/// it, where the pause's allowance would have let it pass.
#[test]
fn message_notice_allows_the_pauses_answer_only_to_a_message_that_reached_the_pause() {
    let with_pause = rules::budget::BudgetLimit {
        name: "message_notice_ms",
        limit: 400_000,
        source: "test".into(),
        conductor: None,
        outside_pause: Some(27_000),
    };
    for (sent_ms, hang, reached) in [
        (50_000, None, true),
        (25_000, None, true),
        (10_000, None, false),
        (10_000, Some((12_000, 30_000)), true),
        (10_000, Some((12_000, 20_000)), false),
    ] {
        let mut run = notice_with_the_pauses_answer(sent_ms, hang);
        let d = &causes(&run, "message_notice_ms")[0];
        assert_eq!(d.noticed_by, latency::Noticer::PauseWatcher, "sent at {sent_ms}");
        assert_eq!(d.reached_pause, reached, "sent at {sent_ms}, hang {hang:?}");
        assert_eq!(with_pause.limit_for(d), if reached { 400_000 } else { 27_000 });
        run.checker.finish(400_000, std::slice::from_ref(&with_pause));
        let failed = run.checker.violations().iter().find(|v| v.rule == RuleId::Budget);
        assert_eq!(failed.is_some(), !reached, "sent at {sent_ms}, hang {hang:?}: {failed:?}");
        if let Some(v) = failed {
            assert!(v.explanation.contains("against a budget of 27000 for a message that reached no pause"), "{}", v.explanation);
        }
    }
}

#[test]
fn message_notice_hidden_by_a_replaced_sessions_state_change_is_interference() {
    let mut run = replaced_while_hung(30_000);
    let watcher = "task-01.S2.pause-watcher-1";
    read(&mut run, 61_000, watcher, S2, Stmt::ReadTaskState);
    run.message(70_000, "conductor", "conductor-session", Stmt::SendConductorMessage, 51, "task-01", "approval");
    let (before, after) = (row("needs_review", S2, 0, 1.0), row("review_approved", S2, 0, 1.0));
    run.write(71_000, "conductor", "conductor-session", Stmt::SetTaskState, "task-01", before, after);
    // S1, woken, puts the row back in `needs_review`: S2's pause watcher waits for the next answer.
    let (before, after) = (row("review_approved", S2, 0, 1.0), row("needs_review", S2, 0, 0.0));
    run.write(72_000, "task-01.S1", S1, Stmt::SetNeedsReview, "task-01", before, after);
    read(&mut run, 400_000, watcher, S2, Stmt::ReadTaskState);
    run.event(400_000, watcher, S2, EventKind::Ended(crate::world::event::ActorEnd::Exit));
    run.fact(401_000, Fact::MessageHandled { session_id: S2.into(), message_id: 51 });
    let d = &causes(&run, "message_notice_ms")[0];
    assert_eq!(d.component(latency::Cause::Interference), 328_000);
    assert_eq!(d.dominant(), latency::Cause::Interference);
}

#[test]
fn crash_detect_after_back_to_back_reviews_names_the_reviews_beyond_the_threshold() {
    let mut run = s1_working();
    run.write(10_000, "task-01.S1", S1, Stmt::Heartbeat, "task-01", row("working", S1, 0, 8.0), row("working", S1, 0, 0.0));
    run.fact(20_000, Fact::Crashed { session_id: S1.into(), why: "test".into() });
    for (from, until, task, id) in [(100_000, 400_000, "task-02", 61), (401_000, 700_000, "task-03", 62)] {
        conductor_state(&mut run, from, "watching", "reviewing");
        run.message(until - 1_000, "conductor", "conductor-session", Stmt::SendConductorMessage, id, task, "approval");
        conductor_state(&mut run, until, "reviewing", "watching");
    }
    run.poll(730_000, &[("task-01", "working", 720.0)]);
    run.fact(
        731_000,
        Fact::StaleDeclared { task_id: "task-01".into(), session_id: S1.into(), seconds_stale: 720.0, polled_at_ms: 730_000 },
    );
    let (before, after) = (row("working", S1, 0, 721.0), row("fix_proposed", S1, 0, 721.0));
    run.write(732_000, "conductor", "conductor-session", Stmt::SetTaskState, "task-01", before, after);
    assert_eq!(run.checker.measured().crash_detect_ms, [711_000]);
    let d = &causes(&run, "crash_detect_ms")[0];
    // Stale at 550 s (10 s + 540 s): the first review was inside the threshold, the second's
    // last 150 s were not; then the wait for the poll at 730 s, and 1 s to the declaration.
    assert_eq!(d.component(latency::Cause::Threshold), 530_000);
    assert_eq!(d.component(latency::Cause::ConductorReview), 150_000);
    assert_eq!(d.reviews, [("task-03".to_string(), 150_000)]);
    assert_eq!((d.component(latency::Cause::PollWait), d.component(latency::Cause::Statements)), (30_000, 1_000));
    assert_eq!(d.dominant(), latency::Cause::ConductorReview);
    assert!(
        d.explain()
            .contains("dominant cause (beyond the heartbeat threshold): conductor in a review 150.0 s (21 %) [reviews of task-03 150.0 s]"),
        "{}",
        d.explain()
    );
}

#[test]
fn exit_to_claim_is_not_measured_from_a_replaced_sessions_exit() {
    let mut run = replaced_while_hung(65_000);
    run.write(70_000, "task-01.S1", S1, Stmt::MarkExited, "task-01", row("working", S2, 0, 1.0), row("exited", S2, 0, 0.0));
    run.launch(80_000, "task-01", "S3", S3);
    run.write(90_000, "task-01.S3", S3, Stmt::ClaimTask, "task-01", row("fix_proposed", S2, 0, 1.0), row("working", S3, 0, 0.0));
    assert!(run.checker.measured().exit_to_claim_ms.is_empty());
    // The owner's own exit is.
    let mut run = s1_working();
    run.write(70_000, "task-01.S1", S1, Stmt::MarkExited, "task-01", row("working", S1, 0, 1.0), row("exited", S1, 0, 0.0));
    run.poll(75_000, &[("task-01", "exited", 5.0)]);
    run.fact(76_000, Fact::Launched { at_ms: 86_000, label: "S2".into(), session_id: S2.into(), task_id: "task-01".into() });
    run.claim(90_000, "task-01.S2", S2, "fix_proposed", S1);
    assert_eq!(run.checker.measured().exit_to_claim_ms, [20_000]);
    let d = &causes(&run, "exit_to_claim_ms")[0];
    assert_eq!(d.component(latency::Cause::LaunchDelay), 10_000);
    assert_eq!((d.component(latency::Cause::PollWait), d.component(latency::Cause::Statements)), (5_000, 5_000));
}

#[test]
fn any_split_of_a_window_sums_to_its_length() {
    use latency::{split, Cause};
    let mut state: u64 = 7;
    let mut next = |n: i64| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) as i64 % n
    };
    for _ in 0..500 {
        let (a, b) = (next(1_000), 1_000 + next(1_000));
        let layers: Vec<(Cause, Vec<(i64, i64)>)> = Cause::ALL
            .iter()
            .take(4)
            .map(|c| {
                let spans = (0..next(4)).map(|_| {
                    let from = next(2_200) - 100;
                    (from, from + next(500))
                });
                (*c, spans.collect())
            })
            .collect();
        let rest = [(a + next(1_000), Cause::PollWait), (i64::MAX, Cause::Statements)];
        assert_eq!(split(a, b, &layers, &rest).iter().sum::<i64>(), b - a);
    }
}

#[test]
fn review_resume_is_noticed_by_the_first_watcher_to_leave_after_the_answer() {
    let mut run = s1_working();
    run.write(10_000, "task-01.S1", S1, Stmt::SetNeedsReview, "task-01", row("working", S1, 0, 1.0), row("needs_review", S1, 0, 0.0));
    read(&mut run, 12_000, "task-01.S1.pause-watcher-1", S1, Stmt::ReadTaskState);
    let (before, after) = (row("needs_review", S1, 0, 1.0), row("review_failed", S1, 0, 1.0));
    run.write(20_000, "conductor", "conductor-session", Stmt::SetTaskState, "task-01", before, after);
    run.event(24_000, "task-01.S1.pause-watcher-1", S1, EventKind::Ended(crate::world::event::ActorEnd::Exit));
    // During the rework a background watcher leaves on another message: not the answer's notice.
    read(&mut run, 30_000, "task-01.S1.bg-watcher-2", S1, Stmt::ReadNewConductorMessages);
    run.event(50_000, "task-01.S1.bg-watcher-2", S1, EventKind::Ended(crate::world::event::ActorEnd::Exit));
    run.write(80_000, "task-01.S1", S1, Stmt::SetNeedsReview, "task-01", row("review_failed", S1, 0, 1.0), row("needs_review", S1, 0, 0.0));
    let d = &causes(&run, "review_resume_ms")[0];
    assert_eq!(d.noticed_by, latency::Noticer::PauseWatcher);
    assert_eq!((d.component(latency::Cause::PollWait), d.component(latency::Cause::Work)), (4_000, 56_000));
}

#[test]
fn review_resume_leaves_out_the_time_the_answered_session_was_hung() {
    let mut run = s1_working();
    run.write(10_000, "task-01.S1", S1, Stmt::SetNeedsReview, "task-01", row("working", S1, 0, 1.0), row("needs_review", S1, 0, 0.0));
    let (before, after) = (row("needs_review", S1, 0, 1.0), row("review_failed", S1, 0, 1.0));
    run.write(20_000, "conductor", "conductor-session", Stmt::SetTaskState, "task-01", before, after);
    // S1 hangs 100 s before it acts on the answer: the hang is the fault's, not the protocol's.
    run.fact(30_000, Fact::Hung { session_id: S1.into(), until_ms: 130_000 });
    run.write(
        150_000,
        "task-01.S1",
        S1,
        Stmt::SetNeedsReview,
        "task-01",
        row("review_failed", S1, 0, 1.0),
        row("needs_review", S1, 0, 0.0),
    );
    assert_eq!(run.checker.measured().review_resume_ms, [30_000]);
    let d = &causes(&run, "review_resume_ms")[0];
    assert_eq!((d.total_ms, d.excluded_ms, d.component(latency::Cause::Hang)), (30_000, 100_000, 0));
}

#[test]
fn heartbeat_age_is_the_rows_owners_not_a_woken_replaced_sessions() {
    let mut run = replaced_while_hung(200_000);
    // S2 owns the row and hangs; S1 wakes, its fenced heartbeat changes nothing.
    run.fact(100_000, Fact::Hung { session_id: S2.into(), until_ms: 900_000 });
    let (before, after) = (row("working", S2, 0, 150.0), row("working", S2, 0, 150.0));
    run.write(210_000, "task-01.S1.bg-watcher-1", S1, Stmt::Heartbeat, "task-01", before, after);
    // The row's age is the hung owner's, not the awake zombie's: not a healthy age.
    run.poll(600_000, &[("task-01", "working", 540.0)]);
    assert!(run.checker.measured().heartbeat_age_s.is_empty(), "{:?}", run.checker.measured().heartbeat_age_s);
}
