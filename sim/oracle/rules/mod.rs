//! The rules, one unit each. A rule sees every event (`Seen`) with the truth as it stood
//! before it, keeps what it needs, and reports violations with their explanation.

pub mod allowed_transitions;
pub mod answer_own_request;
pub mod budget;
pub mod completed_once;
pub mod conductor_outlasts_sessions;
pub mod finished_row_untouched;
pub mod hand_over_on_owner_exit;
pub mod liveness;
pub mod message_before_state;
pub mod message_to_existing_task;
pub mod messages_seen_once;
pub mod no_constraint_failure;
pub mod no_false_stale;
pub mod no_relaunch_while_claim_pending;
pub mod nothing_after_terminal;
pub mod one_live_session;
pub mod owner_writes_only;
pub mod request_answered_once;
pub mod retry_count_at_most_5;
pub mod retry_count_counts_errors;
pub mod retry_count_never_decreases;
pub mod silent_after_hand_over;

use crate::scenario::ProtocolSettings;
use crate::vocab::{RuleId, RuleKind};

use super::{Findings, Seen, Truth};

/// What a violation of a rule means for the people who read the verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Meaning {
    /// A flaw the seeds' protocol allows: a scenario may `allow` it; FINDINGS.md reports it.
    ProtocolFlaw,
    /// The simulator broke the seeds (or the protocol SQL under test is wrong): never allowed
    /// in a shipped scenario without a reason.
    SimulatorOrSqlBug,
    /// A cost of the conductor's policy, which the seeds leave to the simulator.
    ConductorPolicy,
}

/// A rule's documentation: RULES lists these, `rehearsal` prints them.
#[derive(Clone, Copy, Debug)]
pub struct RuleDoc {
    pub id: RuleId,
    /// One sentence, as verdicts print it.
    pub says: &'static str,
    /// The seed text it comes from.
    pub seed: &'static str,
    /// The events it consumes.
    pub consumes: &'static str,
    /// The ground truth it reads.
    pub truth: &'static str,
    pub meaning: Meaning,
}

impl RuleDoc {
    pub fn name(&self) -> &'static str {
        self.id.as_str()
    }

    pub fn kind(&self) -> RuleKind {
        self.id.kind()
    }
}

pub trait Rule: Send {
    fn doc(&self) -> &'static RuleDoc;
    /// Judges one event against the truth as it stood before it.
    fn see(&mut self, seen: &Seen, truth: &Truth, findings: &mut Findings);
    /// Judges the run's end.
    fn finish(&mut self, _end_ms: i64, _truth: &Truth, _findings: &mut Findings) {}
}

/// Every rule's documentation, in the order of `RuleId::ALL`.
pub const RULES: &[&RuleDoc] = &[
    &one_live_session::DOC,
    &allowed_transitions::DOC,
    &nothing_after_terminal::DOC,
    &message_before_state::DOC,
    &messages_seen_once::DOC,
    &no_false_stale::DOC,
    &retry_count_at_most_5::DOC,
    &owner_writes_only::DOC,
    &no_constraint_failure::DOC,
    &liveness::DOC,
    &budget::DOC,
    &finished_row_untouched::DOC,
    &completed_once::DOC,
    &answer_own_request::DOC,
    &conductor_outlasts_sessions::DOC,
    &retry_count_counts_errors::DOC,
    &message_to_existing_task::DOC,
    &request_answered_once::DOC,
    &retry_count_never_decreases::DOC,
    &no_relaunch_while_claim_pending::DOC,
    &hand_over_on_owner_exit::DOC,
    &silent_after_hand_over::DOC,
];

/// The rules checked as the run goes (liveness and budgets are judged at its end).
pub fn all(settings: &ProtocolSettings) -> Vec<Box<dyn Rule>> {
    vec![
        Box::new(no_constraint_failure::NoConstraintFailure),
        Box::new(nothing_after_terminal::NothingAfterTerminal),
        Box::new(owner_writes_only::OwnerWritesOnly),
        Box::new(allowed_transitions::AllowedTransitions::new(settings)),
        Box::new(one_live_session::OneLiveSession),
        Box::new(message_before_state::MessageBeforeState::default()),
        Box::new(retry_count_at_most_5::RetryCountAtMost5),
        Box::new(messages_seen_once::MessagesSeenOnce::default()),
        Box::new(no_false_stale::NoFalseStale::default()),
        Box::new(finished_row_untouched::FinishedRowUntouched),
        Box::new(completed_once::CompletedOnce::default()),
        Box::new(answer_own_request::AnswerOwnRequest::default()),
        Box::new(conductor_outlasts_sessions::ConductorOutlastsSessions),
        Box::new(retry_count_counts_errors::RetryCountCountsErrors::default()),
        Box::new(message_to_existing_task::MessageToExistingTask::default()),
        Box::new(request_answered_once::RequestAnsweredOnce::default()),
        Box::new(retry_count_never_decreases::RetryCountNeverDecreases),
        Box::new(no_relaunch_while_claim_pending::NoRelaunchWhileClaimPending::default()),
        Box::new(hand_over_on_owner_exit::HandOverOnOwnerExit::default()),
        Box::new(silent_after_hand_over::SilentAfterHandOver::default()),
    ]
}

/// A launch the conductor decided, not a double launch's twin (`S2b`): `[[faults.double_launch]]`
/// is a structural fault injected beside the conductor's own launch, which the claim guard is
/// there to absorb (002 "Guard Clause Rules").
pub fn conductor_launch(label: &str) -> bool {
    !label.ends_with('b')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_id_has_one_documented_unit_in_order() {
        let ids: Vec<RuleId> = RULES.iter().map(|r| r.id).collect();
        assert_eq!(ids, RuleId::ALL);
        for doc in RULES {
            assert!(!doc.says.is_empty() && !doc.seed.is_empty() && !doc.consumes.is_empty() && !doc.truth.is_empty(), "{}", doc.name());
        }
    }
}
