//! How a run fails, which a shrink must keep (issue 31): the first rule it fails on, at the
//! same protocol point — the statement whose effect broke the rule and the role of whoever ran
//! it (`S1`, `S2 bg-watcher`, `conductor`), not its task: shrinking drops tasks, and a zombie
//! of task-05 in six tasks is the same flaw as one of task-01 in one.

use std::fmt;

use crate::judging::oracle::ViolationPoint;
use crate::run::RunSummary;
use crate::vocab::{ActorName, WatcherKind};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// The verdict's failure: the first unexpected rule (or the expected ones that did not occur).
    pub rule: String,
    /// `set_needs_review by S1`; `the end of the run or a fault` for a violation judged at no statement.
    pub point: String,
    /// The point's statement (`set_needs_review`) and role (`S1`): the corpus fingerprint's
    /// parts (sim/campaign/corpus.rs); `-` for a violation judged at no statement.
    pub statement: String,
    pub actor: String,
}

impl Signature {
    /// How `summary`'s run failed; `None` when it passed.
    pub fn of(summary: &RunSummary) -> Option<Signature> {
        if summary.verdict.passed() {
            return None;
        }
        let point = summary.verdict.failing_violation().and_then(|v| v.point);
        let (statement, actor) = point.map_or_else(|| ("-".to_string(), "-".to_string()), |p| (p.statement.to_string(), role(p.actor)));
        Some(Signature {
            rule: summary.verdict.failure.clone(),
            point: point.map_or_else(|| NO_POINT.to_string(), point_text),
            statement,
            actor,
        })
    }
}

const NO_POINT: &str = "the end of the run or a fault";

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` at {}", self.rule, self.point)
    }
}

/// `set_needs_review by S1`.
fn point_text(point: ViolationPoint) -> String {
    format!("{} by {}", point.statement, role(point.actor))
}

/// Who ran a statement, by role in its task or in the conductor, not by task.
fn role(actor: ActorName) -> String {
    let kind = |k: WatcherKind| match k {
        WatcherKind::Background => "bg-watcher",
        WatcherKind::Pause => "pause-watcher",
    };
    match actor {
        ActorName::Conductor(_) => "conductor".to_string(),
        ActorName::Review(..) => "a conductor review".to_string(),
        ActorName::Launcher => "launcher".to_string(),
        ActorName::Session(p) => p.label(),
        ActorName::Watcher(p, k, _) => format!("{} {}", p.label(), kind(k)),
        ActorName::Subagent(p, _) => format!("{} subagent", p.label()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::{SessionPlace, Stmt};

    #[test]
    fn a_point_names_the_statement_and_the_role_not_the_task() {
        let place = |task| SessionPlace { task, session: 1, twin: false };
        let at = |actor| point_text(ViolationPoint { actor, statement: Stmt::Heartbeat });
        assert_eq!(at(ActorName::Session(place(5))), at(ActorName::Session(place(1))));
        assert_eq!(at(ActorName::Session(place(5))), "heartbeat by S1");
        assert_eq!(at(ActorName::Watcher(place(2), WatcherKind::Background, 7)), "heartbeat by S1 bg-watcher");
        assert_eq!(at(ActorName::Review(1, 3)), "heartbeat by a conductor review");
    }
}
