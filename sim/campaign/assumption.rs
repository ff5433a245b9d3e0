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

use std::collections::BTreeMap;

use crate::judging::oracle::Violation;
use crate::vocab::{RuleId, Stmt};
use crate::world::event::{Event, EventKind, Fact};

/// One launch the conductor made: when it launched, when the session starts, and its task.
struct Launch {
    t_ms: i64,
    at_ms: i64,
    task_id: String,
}

/// `Some("A1")` when `violation` is A1's case in a run of `events` whose conductor waits
/// `patience_ms` for a claim; `None` otherwise.
pub fn assumption_of(events: &[Event], violation: &Violation, patience_ms: i64) -> Option<&'static str> {
    if violation.rule != RuleId::NoRelaunchWhileClaimPending {
        return None;
    }
    let pending = pending_at(events, violation);
    if pending.is_empty() || pending.iter().any(|(_, at_ms)| violation.t_ms - at_ms <= patience_ms) {
        return None;
    }
    Some("A1")
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

/// The sessions (id, start instant) of the task the conductor launched at the violation's
/// instant that were launched before it and had not tried to claim by then.
fn pending_at(events: &[Event], violation: &Violation) -> Vec<(String, i64)> {
    let mut launches: BTreeMap<String, Launch> = BTreeMap::new();
    let mut tried: BTreeMap<String, i64> = BTreeMap::new();
    for e in events {
        match &e.kind {
            EventKind::Truth(Fact::Launched { at_ms, session_id, task_id, .. }) => {
                launches.insert(session_id.clone(), Launch { t_ms: e.t_ms, at_ms: *at_ms, task_id: task_id.clone() });
            }
            EventKind::Sql(sql) if sql.stmt == Stmt::ClaimTask => {
                tried.entry(e.session.to_string()).or_insert(e.t_ms);
            }
            _ => {}
        }
    }
    // The launch the violation names: the one the conductor made at its instant.
    let new_tasks: Vec<&str> = launches.values().filter(|l| l.t_ms == violation.t_ms).map(|l| l.task_id.as_str()).collect();
    launches
        .iter()
        .filter(|(sid, l)| {
            new_tasks.contains(&l.task_id.as_str()) && l.t_ms < violation.t_ms && tried.get(*sid).is_none_or(|t| *t > violation.t_ms)
        })
        .map(|(sid, l)| (sid.clone(), l.at_ms))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::world::event::Who;

    const PATIENCE_MS: i64 = 1_800_000;

    fn launched(t_ms: i64, at_ms: i64, sid: &str) -> Event {
        let fact = Fact::Launched { at_ms, label: "S".into(), session_id: sid.into(), task_id: "task-02".into() };
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
