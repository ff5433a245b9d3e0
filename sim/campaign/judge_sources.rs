//! What `rehearsal judge --db` can judge each rule from (the table of docs/oracles.md "Judging
//! a real comms.db") and what it found: shared by the history's judge
//! (sim/campaign/judge_db.rs) and the final tables' (sim/campaign/judge_tables.rs).

use crate::judging::oracle::Violation;
use crate::vocab::RuleId;

/// Where `judge --db` can judge a rule from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The tables as they are at the end.
    FinalTables,
    /// The recorded history; `true` when it needs each write's writer (the identity statement).
    History(bool),
    /// What only the simulator knows: why.
    Simulator(&'static str),
}

/// The table of docs/oracles.md "Judging a real comms.db".
pub fn source_of(rule: RuleId) -> Source {
    use RuleId::*;
    match rule {
        Liveness => Source::FinalTables,
        AllowedTransitions | RetryCountAtMost5 | RetryCountCountsErrors | RetryCountNeverDecreases | MessageToExistingTask => {
            Source::History(false)
        }
        OwnerWritesOnly | NothingAfterTerminal | FinishedRowUntouched | CompletedOnce | MessageBeforeState => Source::History(true),
        OneLiveSessionPerTask => {
            Source::Simulator("needs which sessions are alive: a silent process may be dead or stopped, and the database cannot tell")
        }
        MessagesSeenOnce => Source::Simulator("needs each session's reads, which change no row and are not recorded"),
        NoFalseStale => Source::Simulator("needs whether the session declared stale was alive, which no row records"),
        NoConstraintFailure => Source::Simulator("a refused statement rolls back with its history row: nothing of it is recorded"),
        AnswerOwnRequest | RequestAnsweredOnce => {
            Source::Simulator("needs which request the conductor meant to answer, which its message does not say")
        }
        ConductorOutlastsSessions => Source::Simulator("needs whether a row's owner still works, which a silent process does not show"),
        NoRelaunchWhileClaimPending | SilentAfterHandOver => Source::Simulator("needs the conductor's launches, which write no row"),
        HandOverOnOwnerExit => Source::Simulator("needs the conductor's polls (reads) and the owner's liveness"),
        Budget => Source::Simulator("needs reads and polls (when a message was noticed, a heartbeat read), which are not recorded"),
    }
}

/// One rule's line of the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuleVerdict {
    Judged { from: &'static str, violations: usize },
    NotJudged(String),
}

/// What `judge --db` found.
#[derive(Clone, Debug)]
pub struct DbJudgement {
    /// What the file holds: a history of how many changes, or only tables.
    pub header: Vec<String>,
    pub rules: Vec<(RuleId, RuleVerdict)>,
    /// Every violation, in order of time.
    pub violations: Vec<Violation>,
    /// Recorded writes no protocol statement of an allowed writer explains.
    pub unexplained: Vec<String>,
    /// t = 0 of the explanations, Unix ms.
    pub start_unix_ms: i64,
}
