//! A distinct failure saved: the run folder of its first run with its reports
//! (`failures/F1-rule/`), run again, and its replay file (`failures/F1-rule.toml`). Runs are
//! deterministic, so the run again must give the trace its row recorded; if not, that is a
//! harness error, and no replay file claims what the run did not do.

use std::path::Path;

use super::failures::DistinctFailure;
use crate::base::atomic::write_atomically;
use crate::base::error::{Error, Result};
use crate::run::RunSummary;

/// Saves `failure` under `out/failures/`: `run` runs its first run again into the folder it is
/// given, which must give `trace_hash`; then the run's reports, then the replay file's text
/// from `replay` (given that folder, whose trace it may read).
pub fn save_failure(
    out: &Path,
    failure: &DistinctFailure,
    trace_hash: &str,
    run: impl FnOnce(&Path) -> Result<RunSummary>,
    replay: impl FnOnce(&Path) -> Result<String>,
) -> Result<()> {
    let dir = out.join("failures");
    let run_dir = dir.join(failure.file_stem());
    let summary = run(&run_dir)?;
    check_again(failure, &summary.trace_hash, trace_hash)?;
    crate::report::write_run_reports(&run_dir, &summary, &summary.resolved)?;
    let text = replay(&run_dir)?;
    write_atomically(&dir.join(format!("{}.toml", failure.file_stem())), text.as_bytes())
}

/// The run again gave the trace the campaign recorded.
fn check_again(failure: &DistinctFailure, again: &str, recorded: &str) -> Result<()> {
    if again == recorded {
        return Ok(());
    }
    Err(Error::harness(format!("{}: the run again gave trace {again} instead of {recorded}", failure.id)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_again_that_gives_another_trace_is_a_harness_error_naming_both() {
        let failure =
            DistinctFailure { id: "F2".into(), first_violation: "liveness".into(), end_states: String::new(), first_row: 0, runs: 1 };
        assert!(check_again(&failure, "ab", "ab").is_ok());
        let e = check_again(&failure, "cd", "ab").unwrap_err();
        assert_eq!(e.exit_code(), 3);
        assert_eq!(e.to_string(), "harness error: F2: the run again gave trace cd instead of ab");
    }

    #[test]
    fn nothing_is_written_when_the_run_again_fails() {
        let dir = tempfile::tempdir().unwrap();
        let failure =
            DistinctFailure { id: "F1".into(), first_violation: "liveness".into(), end_states: String::new(), first_row: 0, runs: 1 };
        let e = save_failure(dir.path(), &failure, "ab", |_| Err(Error::harness("no disk")), |_| Ok("# replay\n".into())).unwrap_err();
        assert!(e.to_string().contains("no disk"));
        assert!(!dir.path().join("failures/F1-liveness.toml").exists());
    }
}
