//! How a run ends and what it means for the exit code (README.md "Exit codes").

use super::word::{word_traits, Word};

/// How the event loop ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Every actor finished.
    Quiescent,
    /// Simulated time reached `sim_time_max_ms` with actors still running.
    TimeLimit,
}

impl Ending {
    pub const ALL: [Ending; 2] = [Ending::Quiescent, Ending::TimeLimit];

    /// Its name in the trace's `run_end` row.
    pub fn as_str(self) -> &'static str {
        match self {
            Ending::Quiescent => "quiescent",
            Ending::TimeLimit => "time_limit",
        }
    }

    pub fn parse(text: &str) -> Option<Ending> {
        Ending::ALL.into_iter().find(|e| e.as_str() == text)
    }
}

/// A run's outcome, as results.csv, JUnit and exit codes carry it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RunOutcome {
    Pass,
    /// The protocol failed (safety, liveness or budget).
    Fail,
    /// The harness failed (I/O, SQLite, a panic): no verdict about the protocol.
    Error,
}

impl RunOutcome {
    pub const ALL: [RunOutcome; 3] = [RunOutcome::Pass, RunOutcome::Fail, RunOutcome::Error];

    pub fn as_str(self) -> &'static str {
        match self {
            RunOutcome::Pass => "pass",
            RunOutcome::Fail => "fail",
            RunOutcome::Error => "error",
        }
    }

    pub fn parse(text: &str) -> Option<RunOutcome> {
        <RunOutcome as Word>::from_text(text)
    }

    /// 0 pass, 1 the protocol failed, 3 the harness failed.
    pub fn exit_code(self) -> i32 {
        match self {
            RunOutcome::Pass => 0,
            RunOutcome::Fail => 1,
            RunOutcome::Error => 3,
        }
    }

    /// The exit code of many runs: the worst outcome wins (an error over a failure).
    pub fn worst(outcomes: impl IntoIterator<Item = RunOutcome>) -> RunOutcome {
        outcomes.into_iter().max().unwrap_or(RunOutcome::Pass)
    }
}

/// A run nobody has judged yet counts as a harness error, never as a pass: a bench run
/// starts so and becomes a pass or a failure only when its verdict comes.
impl Default for RunOutcome {
    fn default() -> Self {
        RunOutcome::Error
    }
}

word_traits!(RunOutcome, "run outcome");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worst_outcome_decides_the_exit_code() {
        assert_eq!(RunOutcome::worst([]), RunOutcome::Pass);
        assert_eq!(RunOutcome::worst([RunOutcome::Pass, RunOutcome::Fail]).exit_code(), 1);
        assert_eq!(RunOutcome::worst([RunOutcome::Error, RunOutcome::Fail]).exit_code(), 3);
        assert_eq!(RunOutcome::parse("fail"), Some(RunOutcome::Fail));
        crate::vocab::word::check::round_trips::<RunOutcome>("passed");
    }
}
