//! Running inputs: a batch on the pool, each input's document parsed with the scenario's own
//! path (so its trace names the scenario as a plain run's does) and run in its own scratch
//! folder, removed after. Results come back in the batch's order, whatever `--jobs`; a run
//! Ctrl-C kept from starting is `None`.

use std::path::Path;

use toml::Table;

use super::input::Input;
use super::mutate::Point;
use super::SearchOptions;
use crate::base::error::Result;
use crate::campaign::explore::document;
use crate::judging::coverage::Coverage;
use crate::plan::RunPlan;
use crate::run::{Execution, Keep};

/// What a run came to, as the search folds it in.
#[derive(Clone, Debug, Default)]
pub struct Ran {
    pub coverage: Coverage,
    /// The verdict's failure and the task rows' end states, when it failed.
    pub violation: Option<(String, String)>,
    /// Every rule the run violated.
    pub rules: Vec<String>,
    pub statements: u64,
    pub trace_hash: String,
    /// The points it reached, when asked to record them (the search's own runs).
    pub points: Vec<Point>,
    /// A harness error or panic.
    pub error: Option<String>,
}

pub(super) struct Runner<'a> {
    pub options: &'a SearchOptions,
    /// The scenario's document (with `[expect] allowed` emptied under `--strict`).
    pub base: Table,
    pub scratch: &'a Path,
}

impl Runner<'_> {
    /// Runs `inputs` on the pool; `names[i]` names input i's scratch folder.
    pub fn batch(&self, inputs: &[(String, Input)], record: bool) -> Vec<Option<Ran>> {
        let panicked = |_: &(String, Input), panic: &str| Ran { error: Some(format!("panic: {panic}")), ..Ran::default() };
        crate::campaign::map(self.options.jobs, inputs, |(name, input)| self.run(name, input, record), panicked, || false, |_, _| {})
    }

    /// The document `input` runs.
    pub fn document(&self, input: &Input) -> Table {
        input.document(&self.base)
    }

    fn run(&self, name: &str, input: &Input, record: bool) -> Ran {
        let dir = self.scratch.join(name);
        let result = self.execute(input, &dir, record);
        let _ = std::fs::remove_dir_all(&dir);
        result.unwrap_or_else(|e| Ran { error: Some(format!("harness: {e}")), ..Ran::default() })
    }

    fn execute(&self, input: &Input, dir: &Path, record: bool) -> Result<Ran> {
        let scenario = document::scenario(&self.document(input), &self.options.scenario)?;
        let mut plan = RunPlan::resolve(&scenario, Some(input.seed), &self.options.variants, Some(dir.to_path_buf()))?;
        let log = record.then(|| plan.faults.record_points());
        // A row needs only the run's summary: no files (`Keep::Hash`, as a sweep's first run
        // of a pair); a failure's replay is written from its document and run again in full.
        let summary = crate::run::execute(plan, Execution { keep: Keep::Hash, ..Execution::default() })?.summary;
        let mut points: Vec<Point> = log.map(|log| log.take().iter().filter_map(Point::of).collect()).unwrap_or_default();
        points.sort_unstable();
        points.dedup();
        let failed = !summary.verdict.passed();
        Ok(Ran {
            violation: failed.then(|| (summary.verdict.failure.clone(), crate::campaign::end_states(&summary.end_states))),
            rules: summary.verdict.rules().into_iter().map(str::to_string).collect(),
            statements: summary.statements,
            trace_hash: summary.trace_hash.clone(),
            coverage: summary.coverage,
            points,
            error: None,
        })
    }
}
