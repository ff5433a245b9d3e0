//! How a command that ran to its end went; a command that could not is an `Error`.

use crate::vocab::RunOutcome;

/// How a command that ran to its end went; a command that could not is an `Error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every run passed (0), the protocol failed (1), or a run hit a harness error (3).
    Runs(RunOutcome),
    /// Ctrl-C stopped it; what finished is kept and marked incomplete (130).
    Interrupted,
}

impl Outcome {
    pub const PASS: Outcome = Outcome::Runs(RunOutcome::Pass);
    pub const FAIL: Outcome = Outcome::Runs(RunOutcome::Fail);

    /// The exit code of a command that ran to its end: the runs' (0, 1, 3) or 130.
    pub fn exit_code(self) -> i32 {
        match self {
            Outcome::Runs(outcome) => outcome.exit_code(),
            Outcome::Interrupted => crate::base::interrupt::EXIT_INTERRUPTED,
        }
    }
}
