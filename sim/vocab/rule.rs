//! Rule ids: the names scenarios use in `[expect]` and verdicts print. What each rule checks
//! lives with the oracle; these are only the words.

use super::word::{word_traits, Word};

/// Every rule, once: its id, the name scenarios and verdicts use, its kind, its unit in
/// `oracle/rules/` (a file with its `DOC` and, for a rule checked as the run goes, its
/// `checker`), and its place in the order the checker runs the rules on each event (that order
/// decides the order of the violations one event causes in violations.csv; a rule without one
/// is judged at the run's end). The order of the lines is `RuleId::ALL`'s, which listings use.
/// A new rule is its file in `oracle/rules/` and one line here: `rule_table!` hands the lines to
/// a macro of the caller's, so this module names the units without importing them.
macro_rules! rule_table {
    ($then:ident) => {
        $then! {
            OneLiveSessionPerTask: "one-live-session-per-task", Always, one_live_session, check 4;
            AllowedTransitions: "allowed-transitions", Always, allowed_transitions, check 3;
            NothingAfterTerminal: "nothing-after-terminal", Always, nothing_after_terminal, check 1;
            MessageBeforeState: "message-before-state", Always, message_before_state, check 5;
            MessagesSeenOnce: "messages-seen-once", Eventually, messages_seen_once, check 7;
            NoFalseStale: "no-false-stale", Always, no_false_stale, check 8;
            RetryCountAtMost5: "retry-count-at-most-5", Always, retry_count_at_most_5, check 6;
            OwnerWritesOnly: "owner-writes-only", Always, owner_writes_only, check 2;
            NoConstraintFailure: "no-constraint-failure", Always, no_constraint_failure, check 0;
            Liveness: "liveness", Eventually, liveness;
            Budget: "budget", Always, budget;
            FinishedRowUntouched: "finished-row-untouched", Always, finished_row_untouched, check 9;
            CompletedOnce: "completed-once", Always, completed_once, check 10;
            AnswerOwnRequest: "answer-own-request", Always, answer_own_request, check 11;
            ConductorOutlastsSessions: "conductor-outlasts-sessions", Always, conductor_outlasts_sessions, check 12;
            RetryCountCountsErrors: "retry-count-counts-errors", Always, retry_count_counts_errors, check 13;
            MessageToExistingTask: "message-to-existing-task", Always, message_to_existing_task, check 14;
            RequestAnsweredOnce: "request-answered-once", Always, request_answered_once, check 15;
            RetryCountNeverDecreases: "retry-count-never-decreases", Always, retry_count_never_decreases, check 16;
            NoRelaunchWhileClaimPending: "no-relaunch-while-claim-pending", Always, no_relaunch_while_claim_pending, check 17;
            HandOverOnOwnerExit: "hand-over-on-owner-exit", Always, hand_over_on_owner_exit, check 18;
            SilentAfterHandOver: "silent-after-hand-over", Always, silent_after_hand_over, check 19;
        }
    };
}
pub(crate) use rule_table;

/// `RuleId` and its words, from the table.
macro_rules! rule_ids {
    ($($id:ident: $name:literal, $kind:ident, $unit:ident $(, check $order:literal)?;)*) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum RuleId {
            $($id,)*
        }

        impl RuleId {
            pub const ALL: [RuleId; [$($name),*].len()] = [$(RuleId::$id),*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(RuleId::$id => $name,)*
                }
            }

            pub fn kind(self) -> RuleKind {
                match self {
                    $(RuleId::$id => RuleKind::$kind,)*
                }
            }
        }
    };
}
rule_table!(rule_ids);

/// `always`: every state of the run satisfies it; `eventually`: the run's end does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleKind {
    Always,
    Eventually,
}

impl RuleKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RuleKind::Always => "always",
            RuleKind::Eventually => "eventually",
        }
    }
}

impl RuleId {
    pub fn parse(text: &str) -> Option<RuleId> {
        <RuleId as Word>::from_text(text)
    }
}

word_traits!(RuleId, "rule");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_back_and_unknown_text_does_not() {
        for rule in RuleId::ALL {
            assert_eq!(RuleId::parse(rule.as_str()), Some(rule));
        }
        assert_eq!(RuleId::parse("no-false-stales"), None);
        assert_eq!(RuleId::Liveness.kind(), RuleKind::Eventually);
        crate::vocab::word::check::round_trips::<RuleId>("no-false-stales");
    }
}
