//! Rule ids: the names scenarios use in `[expect]` and verdicts print. What each rule checks
//! lives with the oracle; these are only the words.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RuleId {
    OneLiveSessionPerTask,
    AllowedTransitions,
    NothingAfterTerminal,
    MessageBeforeState,
    MessagesSeenOnce,
    NoFalseStale,
    RetryCountAtMost5,
    OwnerWritesOnly,
    NoConstraintFailure,
    Liveness,
    Budget,
    FinishedRowUntouched,
    CompletedOnce,
    AnswerOwnRequest,
    ConductorOutlastsSessions,
    RetryCountCountsErrors,
    MessageToExistingTask,
    RequestAnsweredOnce,
    RetryCountNeverDecreases,
    NoRelaunchWhileClaimPending,
    HandOverOnOwnerExit,
    SilentAfterHandOver,
}

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
    pub const ALL: [RuleId; 22] = [
        RuleId::OneLiveSessionPerTask,
        RuleId::AllowedTransitions,
        RuleId::NothingAfterTerminal,
        RuleId::MessageBeforeState,
        RuleId::MessagesSeenOnce,
        RuleId::NoFalseStale,
        RuleId::RetryCountAtMost5,
        RuleId::OwnerWritesOnly,
        RuleId::NoConstraintFailure,
        RuleId::Liveness,
        RuleId::Budget,
        RuleId::FinishedRowUntouched,
        RuleId::CompletedOnce,
        RuleId::AnswerOwnRequest,
        RuleId::ConductorOutlastsSessions,
        RuleId::RetryCountCountsErrors,
        RuleId::MessageToExistingTask,
        RuleId::RequestAnsweredOnce,
        RuleId::RetryCountNeverDecreases,
        RuleId::NoRelaunchWhileClaimPending,
        RuleId::HandOverOnOwnerExit,
        RuleId::SilentAfterHandOver,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RuleId::OneLiveSessionPerTask => "one-live-session-per-task",
            RuleId::AllowedTransitions => "allowed-transitions",
            RuleId::NothingAfterTerminal => "nothing-after-terminal",
            RuleId::MessageBeforeState => "message-before-state",
            RuleId::MessagesSeenOnce => "messages-seen-once",
            RuleId::NoFalseStale => "no-false-stale",
            RuleId::RetryCountAtMost5 => "retry-count-at-most-5",
            RuleId::OwnerWritesOnly => "owner-writes-only",
            RuleId::NoConstraintFailure => "no-constraint-failure",
            RuleId::Liveness => "liveness",
            RuleId::Budget => "budget",
            RuleId::FinishedRowUntouched => "finished-row-untouched",
            RuleId::CompletedOnce => "completed-once",
            RuleId::AnswerOwnRequest => "answer-own-request",
            RuleId::ConductorOutlastsSessions => "conductor-outlasts-sessions",
            RuleId::RetryCountCountsErrors => "retry-count-counts-errors",
            RuleId::MessageToExistingTask => "message-to-existing-task",
            RuleId::RequestAnsweredOnce => "request-answered-once",
            RuleId::RetryCountNeverDecreases => "retry-count-never-decreases",
            RuleId::NoRelaunchWhileClaimPending => "no-relaunch-while-claim-pending",
            RuleId::HandOverOnOwnerExit => "hand-over-on-owner-exit",
            RuleId::SilentAfterHandOver => "silent-after-hand-over",
        }
    }

    pub fn kind(self) -> RuleKind {
        match self {
            RuleId::MessagesSeenOnce | RuleId::Liveness => RuleKind::Eventually,
            _ => RuleKind::Always,
        }
    }

    pub fn parse(text: &str) -> Option<RuleId> {
        RuleId::ALL.into_iter().find(|r| r.as_str() == text)
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

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
    }
}
