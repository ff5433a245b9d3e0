//! Which of the repaired protocol's assumptions a failing run falls under, judged from the
//! run's own events (docs/repaired-protocol.md, "Assumptions"). The proof counts a failure as
//! "under an assumption" only when this check says so; every other failure is a failure.
//!
//! A1: "A launched session that has not claimed its task 30 minutes after its launch is dead."
//! Under `patient-relaunch` the conductor launches a task's next session only once the
//! launched one has been silent before its claim for `conductor.claim_overdue_s`. A
//! `no-relaunch-while-claim-pending` violation is then A1's case exactly when every earlier
//! session of the task that had not yet tried to claim had started more than that long before
//! the new launch. A relaunch sooner than that (a conductor that forgot a launch, say) is no
//! assumption's case: it is a failure.
//!
//! A3 (issue 48): "A double launch's twin is no launch of the conductor's." A twin is a fault
//! (the same session started twice by whatever launched it), so a conductor that launches the
//! task's next session cannot know that a twin of an earlier one has yet to start. A
//! `no-relaunch-while-claim-pending` violation is A3's case when each earlier session pending
//! at the launch is either A1's case or a twin (`S1b`) that had not started yet; the twin's
//! later claim is refused by the compare-and-set claim (`claim-compare-and-set`), so the rule
//! is the only harm.
//!
//! A4 (issue 48): "A task's work fits in `conductor.sessions_per_task_max` sessions." The cap
//! (docs/protocol.md C8) stops a task whose sessions keep handing off without finishing; a
//! configuration whose context costs (spikes, thresholds) make every session of a task end in
//! a clean exit before the work is done uses the cap up with no fault at all, under any
//! protocol that keeps it. A `liveness` violation is A4's case when every task left
//! unfinished was given up at the cap and had at least the cap's number of sessions that
//! ended in their own clean exit (`session_end` `CleanExit`); a task given up because faults
//! or a conductor's lost count used its sessions is no assumption's case.

use std::collections::BTreeMap;

use crate::judging::oracle::Violation;
use crate::vocab::{RuleId, Stmt};
use crate::world::event::{Event, EventKind, Fact};

/// One launch the conductor made: when it launched, when the session starts, and its task.
struct Launch {
    t_ms: i64,
    at_ms: i64,
    task_id: String,
    label: String,
}

/// `Some("A1")` (or `Some("A3")`, an unstarted twin among the pending sessions) when `violation` is the case in a run of `events` whose conductor waits
/// `patience_ms` for a claim; `None` otherwise.
pub fn assumption_of(events: &[Event], violation: &Violation, patience_ms: i64) -> Option<&'static str> {
    if violation.rule != RuleId::NoRelaunchWhileClaimPending {
        return None;
    }
    let pending = pending_at(events, violation);
    if pending.is_empty() {
        return None;
    }
    let mut twin = false;
    for (_, earlier) in &pending {
        if earlier.label.ends_with('b') && earlier.at_ms > violation.t_ms {
            twin = true;
        } else if violation.t_ms - earlier.at_ms <= patience_ms {
            return None;
        }
    }
    Some(if twin { "A3" } else { "A1" })
}

/// `Some("A4")` when `violation` is a `liveness` violation whose every unfinished task was given
/// up at the session cap after `cap` or more sessions of its own ended in a clean exit.
pub fn cap_spent_by_clean_exits(events: &[Event], violation: &Violation, cap: u64) -> Option<&'static str> {
    if violation.rule != RuleId::Liveness {
        return None;
    }
    let mut task_of: BTreeMap<String, String> = BTreeMap::new();
    let mut clean_exits: BTreeMap<String, u64> = BTreeMap::new();
    let mut given_up: Vec<String> = Vec::new();
    let mut complete: Vec<String> = Vec::new();
    for e in events {
        match &e.kind {
            EventKind::Truth(Fact::Launched { session_id, task_id, .. }) => {
                task_of.insert(session_id.clone(), task_id.clone());
            }
            EventKind::Note { what, detail } if what == "session_end" && detail == "CleanExit" => {
                if let Some(task) = task_of.get(&*e.session) {
                    *clean_exits.entry(task.clone()).or_insert(0) += 1;
                }
            }
            EventKind::Note { what, detail } if what == "task_given_up" && detail.contains("(conductor.sessions_per_task_max)") => {
                given_up.push(detail.split(':').next().unwrap_or("").to_string());
            }
            EventKind::Sql(sql) if sql.stmt == Stmt::MarkComplete && sql.rows_affected > 0 => complete.push(sql.task_id.to_string()),
            _ => {}
        }
    }
    let mut unfinished = task_of.values().filter(|t| !complete.contains(t)).peekable();
    unfinished.peek()?;
    unfinished.all(|t| given_up.contains(t) && clean_exits.get(t).copied().unwrap_or(0) >= cap).then_some("A4")
}

/// The hangs (ms, in order) that froze the sessions still pending their claim when the
/// violation's launch came: what made them silent past the patience (docs/repaired-protocol.md
/// names them with each of A1's runs).
pub fn hangs_before_claim_ms(events: &[Event], violation: &Violation) -> Vec<i64> {
    let pending: Vec<String> = pending_at(events, violation).into_iter().map(|(sid, _)| sid).collect();
    events
        .iter()
        .filter(|e| e.t_ms <= violation.t_ms && pending.iter().any(|sid| **sid == *e.session))
        .filter_map(|e| match &e.kind {
            EventKind::FaultHang { ms, .. } => Some(*ms),
            _ => None,
        })
        .collect()
}

/// The sessions (id, launch) of the task the conductor launched at the violation's instant
/// that were launched before it and had not tried to claim by then.
fn pending_at(events: &[Event], violation: &Violation) -> Vec<(String, Launch)> {
    let mut launches: BTreeMap<String, Launch> = BTreeMap::new();
    let mut tried: BTreeMap<String, i64> = BTreeMap::new();
    for e in events {
        match &e.kind {
            EventKind::Truth(Fact::Launched { at_ms, session_id, task_id, label }) => {
                let launch = Launch { t_ms: e.t_ms, at_ms: *at_ms, task_id: task_id.clone(), label: label.clone() };
                launches.insert(session_id.clone(), launch);
            }
            EventKind::Sql(sql) if sql.stmt == Stmt::ClaimTask => {
                tried.entry(e.session.to_string()).or_insert(e.t_ms);
            }
            _ => {}
        }
    }
    // The launch the violation names: the one the conductor made at its instant.
    let new_tasks: Vec<String> = launches.values().filter(|l| l.t_ms == violation.t_ms).map(|l| l.task_id.clone()).collect();
    launches
        .into_iter()
        .filter(|(sid, l)| new_tasks.contains(&l.task_id) && l.t_ms < violation.t_ms && tried.get(sid).is_none_or(|t| *t > violation.t_ms))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::world::event::Who;

    const PATIENCE_MS: i64 = 1_800_000;

    fn launched(t_ms: i64, at_ms: i64, sid: &str) -> Event {
        labelled(t_ms, at_ms, sid, "S1")
    }

    fn labelled(t_ms: i64, at_ms: i64, sid: &str, label: &str) -> Event {
        let fact = Fact::Launched { at_ms, label: label.into(), session_id: sid.into(), task_id: "task-02".into() };
        Event { t_ms, who: Who::Engine, session: Arc::from(""), kind: EventKind::Truth(fact) }
    }

    fn violation(t_ms: i64, rule: RuleId) -> Violation {
        Violation { rule, t_ms, explanation: String::new(), first: true, point: None }
    }

    #[test]
    fn a_relaunch_after_the_patience_is_a1_and_one_before_it_is_a_failure() {
        let events = [launched(25_000, 34_760, "s1"), launched(2_080_169, 2_093_523, "s2")];
        let v = violation(2_080_169, RuleId::NoRelaunchWhileClaimPending);
        assert_eq!(assumption_of(&events, &v, PATIENCE_MS), Some("A1"), "34 min after S1 started");
        assert_eq!(assumption_of(&events, &v, 2_080_169 - 34_760), None, "exactly the patience: the conductor waits longer");
        let soon = [launched(25_000, 34_760, "s1"), launched(600_000, 610_000, "s2")];
        assert_eq!(assumption_of(&soon, &violation(600_000, RuleId::NoRelaunchWhileClaimPending), PATIENCE_MS), None);
    }

    #[test]
    fn a_relaunch_before_a_late_twin_has_started_is_a3_and_a_started_twin_is_not() {
        let v = violation(215_802, RuleId::NoRelaunchWhileClaimPending);
        let unstarted = [labelled(16_000, 457_811, "s1b", "S1b"), launched(215_802, 239_544, "s2")];
        assert_eq!(assumption_of(&unstarted, &v, PATIENCE_MS), Some("A3"));
        let started = [labelled(16_000, 100_000, "s1b", "S1b"), launched(215_802, 239_544, "s2")];
        assert_eq!(assumption_of(&started, &v, PATIENCE_MS), None, "a twin alive before the launch is no assumption's case");
    }

    /// A4: task-02's five sessions all ended in clean exits and it was given up at the cap; a
    /// task given up with a session lost to a fault among its five, or left unfinished for
    /// another reason, is no assumption's case.
    #[test]
    fn a_cap_used_up_by_clean_exits_is_a4_and_one_used_by_lost_sessions_is_not() {
        let note = |t_ms: i64, sid: &str, what: &'static str, detail: &str| Event {
            t_ms,
            who: Who::Engine,
            session: Arc::from(sid),
            kind: EventKind::Note { what: what.into(), detail: detail.into() },
        };
        let run = |clean: usize| {
            let mut events = Vec::new();
            for n in 0..5 {
                let sid = format!("s{n}");
                events.push(labelled(n as i64 * 1000, n as i64 * 1000, &sid, &format!("S{}", n + 1)));
                let end = if n < clean { "CleanExit" } else { "HardStop" };
                events.push(note(n as i64 * 1000 + 500, &sid, "session_end", end));
            }
            events.push(note(
                9_000,
                "conductor-session",
                "task_given_up",
                "task-02: 5 sessions launched (conductor.sessions_per_task_max)",
            ));
            events
        };
        let liveness = violation(10_000, RuleId::Liveness);
        assert_eq!(cap_spent_by_clean_exits(&run(5), &liveness, 5), Some("A4"));
        assert_eq!(cap_spent_by_clean_exits(&run(4), &liveness, 5), None, "one of the five lost to a fault");
        assert_eq!(cap_spent_by_clean_exits(&run(5), &violation(10_000, RuleId::Budget), 5), None);
        let mut other = run(5);
        other.push(labelled(100, 100, "t1", "S1"));
        if let EventKind::Truth(Fact::Launched { task_id, .. }) = &mut other.last_mut().unwrap().kind {
            *task_id = "task-03".into();
        }
        assert_eq!(cap_spent_by_clean_exits(&other, &liveness, 5), None, "task-03 unfinished for another reason");
    }

    #[test]
    fn another_rule_or_a_launch_that_is_not_the_violations_is_no_assumption() {
        let events = [launched(25_000, 34_760, "s1"), launched(2_080_169, 2_093_523, "s2")];
        assert_eq!(assumption_of(&events, &violation(2_080_169, RuleId::OneLiveSessionPerTask), PATIENCE_MS), None);
        assert_eq!(assumption_of(&events, &violation(2_000_000, RuleId::NoRelaunchWhileClaimPending), PATIENCE_MS), None);
    }

    #[test]
    fn the_hangs_named_are_those_of_the_pending_session_before_the_relaunch() {
        let hang = |t_ms: i64, sid: &str, ms: i64| Event {
            t_ms,
            who: Who::Engine,
            session: Arc::from(sid),
            kind: EventKind::FaultHang { who: sid.into(), ms },
        };
        let events = [
            launched(25_000, 34_760, "s1"),
            hang(40_000, "s1", 1_080_000),
            hang(1_130_000, "s1", 960_000),
            hang(1_200_000, "s9", 60_000),
            launched(2_080_169, 2_093_523, "s2"),
            hang(2_100_000, "s1", 300_000),
        ];
        let v = violation(2_080_169, RuleId::NoRelaunchWhileClaimPending);
        assert_eq!(hangs_before_claim_ms(&events, &v), [1_080_000, 960_000], "s9 is another session; the last hang is after");
    }
}
