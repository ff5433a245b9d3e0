//! Which of the conductor's own choices (docs/protocol.md §4: the seeds do not contain the
//! conductor's skill) a violation's chain passes through. A violation the conductor's policy
//! helped cause is a finding about that policy, not only about the seeds, and its explanation
//! says so: "conductor choice C3 (one review at a time) in force".
//!
//! The link is kept small and concrete: a rule, whether the write that broke it was the
//! conductor's, and the choices that can put a conductor write (or a missing one) in that
//! rule's chain. It says "in force", not "the cause": the choice was active, and it is in the
//! kind of chain the rule reports.

use crate::input::scenario::{ClaimBlockedReply, Scenario};
use crate::vocab::RuleId;

/// The conductor's choices in force in a run, read off its scenario (variants applied).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConductorChoices {
    /// C3: one review at a time, no polling during it.
    pub serial_reviews: bool,
    /// C4 off (`act-on-poll`): a stale task handed over on the last poll.
    pub act_on_poll: bool,
    /// C37 off (`answer-on-poll`): an answer on the poll's row, not read again.
    pub answer_on_poll: bool,
    /// C38 off (`silent-reviews`): no heartbeat while reviewing.
    pub silent_reviews: bool,
    /// C39 off (`ignore-claim-blocked`).
    pub ignore_claim_blocked: bool,
    /// C8: the sessions-per-task cap.
    pub sessions_per_task_max: u64,
    /// C8 under `uncap-lost-sessions`: sessions replaced for silence are not counted.
    pub uncap_lost_sessions: bool,
}

impl ConductorChoices {
    pub fn of(scenario: &Scenario) -> ConductorChoices {
        let c = &scenario.conductor;
        ConductorChoices {
            serial_reviews: !c.poll_during_reviews && c.reviews_in_flight == 1,
            act_on_poll: scenario.settings.act_on_poll,
            answer_on_poll: !c.reread_before_answer,
            silent_reviews: scenario.review_heartbeat_ms() == 0,
            ignore_claim_blocked: c.claim_blocked == ClaimBlockedReply::Ignore,
            sessions_per_task_max: c.sessions_per_task_max,
            uncap_lost_sessions: scenario.settings.uncap_lost_sessions,
        }
    }

    /// The words to append to a violation of `rule`, or `None` when no conductor choice is in
    /// its chain. `conductor_wrote`: the write that broke the rule was the conductor's.
    pub fn in_chain(&self, rule: RuleId, conductor_wrote: bool, explanation: &str) -> Option<String> {
        let mut choices: Vec<String> = Vec::new();
        let mut add = |on: bool, choice: &str| {
            if on {
                choices.push(choice.to_string());
            }
        };
        match rule {
            // A conductor answer or hand-over that landed where it should not.
            RuleId::AllowedTransitions
            | RuleId::NothingAfterTerminal
            | RuleId::FinishedRowUntouched
            | RuleId::AnswerOwnRequest
            | RuleId::OwnerWritesOnly
                if conductor_wrote =>
            {
                add(self.answer_on_poll, "C37 (answers on its poll, without reading the row again)");
                add(self.serial_reviews, "C3 (one review at a time, no polling during it)");
            }
            RuleId::NoFalseStale => {
                add(self.act_on_poll, "C4 (hands over on its last poll)");
                add(self.serial_reviews, "C3 (one review at a time, no polling during it)");
            }
            // Crash detection and exit-to-claim include the reviews ahead of a task; the
            // other measurements do not pass through the conductor's schedule.
            RuleId::Budget if explanation.starts_with("crash_detect_ms") || explanation.starts_with("exit_to_claim_ms") => {
                add(self.serial_reviews, "C3 (one review at a time, no polling during it)")
            }
            RuleId::Liveness => {
                let lost = if self.uncap_lost_sessions { ", sessions lost to a crash or hang not counted" } else { "" };
                add(true, &format!("C8 (at most {} sessions per task{lost})", self.sessions_per_task_max));
                add(self.silent_reviews, "C38 (no heartbeat while reviewing)");
                add(self.ignore_claim_blocked, "C39 (claim_blocked ignored)");
            }
            RuleId::ConductorOutlastsSessions => add(true, "C9 (ends when every row is finished)"),
            _ => {}
        }
        match choices.as_slice() {
            [] => None,
            [one] => Some(format!("; conductor choice {one} in force")),
            many => Some(format!("; conductor choices {} in force", many.join(", "))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_conductor() -> ConductorChoices {
        ConductorChoices {
            serial_reviews: true,
            act_on_poll: false,
            answer_on_poll: true,
            silent_reviews: true,
            ignore_claim_blocked: true,
            sessions_per_task_max: 5,
            uncap_lost_sessions: false,
        }
    }

    #[test]
    fn a_conductor_write_on_a_finished_row_names_the_choices_that_let_it_through() {
        let choices = first_conductor();
        assert_eq!(
            choices.in_chain(RuleId::AllowedTransitions, true, "").as_deref(),
            Some(
                "; conductor choices C37 (answers on its poll, without reading the row again), C3 (one review at a time, no polling during it) in force"
            )
        );
        assert_eq!(choices.in_chain(RuleId::AllowedTransitions, false, ""), None, "a musician's write is not the conductor's chain");
        let charitable = ConductorChoices { answer_on_poll: false, serial_reviews: false, ..choices };
        assert_eq!(charitable.in_chain(RuleId::AllowedTransitions, true, ""), None);
    }

    #[test]
    fn a_budget_names_serial_reviews_only_for_the_measurements_they_delay() {
        let choices = first_conductor();
        let crash = choices.in_chain(RuleId::Budget, false, "crash_detect_ms reached 700000 against a budget of 582000");
        assert_eq!(crash.as_deref(), Some("; conductor choice C3 (one review at a time, no polling during it) in force"));
        assert_eq!(choices.in_chain(RuleId::Budget, false, "heartbeat_age_s reached 495 against a budget of 300"), None);
    }

    #[test]
    fn liveness_names_the_cap_and_what_is_off() {
        let choices = first_conductor();
        let text = choices.in_chain(RuleId::Liveness, false, "").unwrap();
        assert!(text.starts_with("; conductor choices C8 (at most 5 sessions per task), C38"), "{text}");
        assert!(text.contains("C39 (claim_blocked ignored)"), "{text}");
        let charitable = ConductorChoices { silent_reviews: false, ignore_claim_blocked: false, ..choices };
        assert_eq!(
            charitable.in_chain(RuleId::Liveness, false, "").as_deref(),
            Some("; conductor choice C8 (at most 5 sessions per task) in force")
        );
        assert_eq!(charitable.in_chain(RuleId::CompletedOnce, true, ""), None);
    }
}
