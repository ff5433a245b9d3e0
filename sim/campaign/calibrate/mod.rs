//! `rehearsal calibrate`: rehearsal's contention model against real SQLite on this machine
//! (issue 31, item 4; docs/calibration.md).
//!
//! `statements` measures the protocol's own statements as the seeds' scripts run them and
//! writes `statement_ms` / `write_hold_ms` to paste into a scenario; `load` runs a real
//! multi-process load of a scenario's shape and sets its lock waits and SQLITE_BUSY beside
//! rehearsal's prediction; `predict` sets the current model beside a load measured before
//! (sim/campaign/calibrate/saved.rs). They read the wall clock (but `predict`) and are never
//! part of a run.

use std::path::Path;

use crate::base::error::Result;
use crate::input::scenario::Scenario;
use crate::input::sql_catalog::Catalog;
use crate::run::{catalog_for, execute, Execution, RunOptions, RunSummary};
use crate::world::db::Recorded;

pub mod cli;
pub mod closed_loop;
pub mod fit;
pub mod load;
pub mod lock_rules;
pub mod saved;
pub mod statements;

/// A run of `scenario` in a scratch folder (removed when dropped), with every statement it
/// executed: what both commands replay.
pub struct RecordedRun {
    pub dir: crate::base::scratch::Scratch,
    pub summary: RunSummary,
    pub recorded: Vec<Recorded>,
    pub catalog: Catalog,
}

pub fn recorded_run(scenario: Scenario, path: &Path, seed: Option<u64>) -> Result<RecordedRun> {
    let dir = crate::base::scratch::scratch_folder("rehearsal-calibrate-", None, &std::env::temp_dir())?;
    let catalog = catalog_for(&scenario)?;
    let options = RunOptions { scenario_path: path.to_path_buf(), seed, out_dir: Some(dir.path().join("run")), variants: Vec::new() };
    let executed = execute(options.plan(&scenario)?, Execution { record: true, ..Execution::default() })?;
    let (summary, recorded) = (executed.summary, executed.recorded);
    Ok(RecordedRun { dir, summary, recorded, catalog })
}
