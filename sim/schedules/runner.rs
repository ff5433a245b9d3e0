//! Running the schedules of one level: each on the pool in its own scratch folder, the
//! scenario's document with `[schedule] choices` set (parsed with the scenario's own path, so
//! its trace names the scenario as a plain run's does), recording the decision points it met;
//! and a distinct failure's replay file and run folder, run again (runs are deterministic).

use std::path::Path;

use toml::{Table, Value};

use super::report::{ScheduleRow, INCOMPLETE_MARKER};
use super::tree::{children, Choices};
use super::{Enumeration, SchedulesOptions};
use crate::atomic::write_atomically;
use crate::error::{Error, Result};
use crate::explore::document;
use crate::explore::DistinctFailure;
use crate::plan::RunPlan;
use crate::pool::Hooks;
use crate::run::RunSummary;
use crate::schedule::Decision;

/// What every run of one enumeration shares.
pub(super) struct Explorer<'a> {
    pub options: &'a SchedulesOptions,
    /// The scenario file's document; each run sets its `[schedule] choices`.
    pub base_doc: Table,
    pub scratch: &'a Path,
}

/// A finished run: its row, the decision points it met and the window they were met with.
pub(super) struct Ran {
    pub row: ScheduleRow,
    pub decisions: Vec<Decision>,
    pub window_ms: i64,
}

impl Explorer<'_> {
    /// The default order (run 1), recording its decision points.
    pub fn run_base(&self) -> Result<Ran> {
        let dir = self.scratch.join("run-1");
        let result = self.run(&[], &dir);
        let _ = std::fs::remove_dir_all(&dir);
        let (summary, decisions, window_ms) = result?;
        Ok(Ran { row: ScheduleRow::finished(1, &[], decisions.len(), &summary), decisions, window_ms })
    }

    /// Runs every schedule of a level (numbered from `first + 1`), in order; the runs Ctrl-C
    /// kept from starting, and those after them, are left out. Returns the finished runs and
    /// the next level's schedules.
    pub fn run_level(&self, level: &[Choices], first: usize, number: usize) -> (Vec<Ran>, Vec<Choices>) {
        let on_done = |_: usize, _: &crate::pool::Caught<Ran>| {};
        let hooks = Hooks { should_stop: || false, on_done };
        let jobs: Vec<(usize, &Choices)> = level.iter().enumerate().map(|(i, c)| (first + i + 1, c)).collect();
        if self.options.progress {
            eprintln!("rehearsal: level {number}: {} schedule(s)", jobs.len());
        }
        // Levels are sequential: a level's schedules come from the decision points its parents met.
        let results = crate::pool::map_with(self.options.jobs, &jobs, |(run, choices)| self.run_job(*run, choices), hooks);
        let mut ran = Vec::new();
        for (result, (run, choices)) in results.into_iter().zip(&jobs) {
            let Some(caught) = result else { break };
            ran.push(caught.unwrap_or_else(|panic| Ran {
                row: ScheduleRow::error(*run, choices, format!("panic: {panic}")),
                decisions: Vec::new(),
                window_ms: 0,
            }));
        }
        let next = ran
            .iter()
            .zip(level)
            .filter(|(r, _)| r.row.outcome != "error")
            .flat_map(|(r, choices)| children(choices, &r.decisions, self.options.depth))
            .collect();
        (ran, next)
    }

    /// The document of a schedule: the file's, with `[schedule] choices` set (its own
    /// `window_ms`, if any, kept).
    pub fn document(&self, choices: &[u32]) -> Table {
        let mut doc = self.base_doc.clone();
        let section = doc.entry("schedule").or_insert_with(|| Value::Table(Table::new()));
        if let Value::Table(section) = section {
            let list = choices.iter().map(|c| Value::Integer(i64::from(*c))).collect();
            section.insert("choices".into(), Value::Array(list));
        }
        doc
    }

    /// Runs a schedule into `dir`, recording its decision points.
    fn run(&self, choices: &[u32], dir: &Path) -> Result<(RunSummary, Vec<Decision>, i64)> {
        let scenario = document::scenario(&self.document(choices), &self.options.scenario)?;
        let mut plan = RunPlan::resolve(&scenario, self.options.seed, &self.options.variants, Some(dir.to_path_buf()))?;
        let log = plan.record_decisions();
        let window_ms = plan.schedule.as_ref().map_or(0, crate::schedule::Schedule::window_ms);
        let summary = crate::run::execute(plan, Default::default())?.summary;
        let decisions = log.take();
        Ok((summary, decisions, window_ms))
    }

    /// One run in its own scratch folder, removed after; a harness error is its row's.
    fn run_job(&self, run: usize, choices: &[u32]) -> Ran {
        let dir = self.scratch.join(format!("run-{run}"));
        let result = self.run(choices, &dir);
        let _ = std::fs::remove_dir_all(&dir);
        match result {
            Ok((summary, decisions, window_ms)) => {
                Ran { row: ScheduleRow::finished(run, choices, decisions.len(), &summary), decisions, window_ms }
            }
            Err(e) => Ran { row: ScheduleRow::error(run, choices, format!("harness: {e}")), decisions: Vec::new(), window_ms: 0 },
        }
    }

    /// A distinct failure's replay file (`failures/F1-rule.toml`: its shortest schedule) and
    /// the run folder of it with its reports (`failures/F1-rule/`), run again.
    pub fn save_failure(&self, failure: &DistinctFailure, enumeration: &Enumeration) -> Result<()> {
        let row = &enumeration.rows[failure.first_row];
        let choices = row.parsed_choices();
        let dir = self.options.out.join("failures");
        let run_dir = dir.join(failure.file_stem());
        let (summary, _, _) = self.run(&choices, &run_dir)?;
        if summary.trace_hash != row.trace_hash {
            return Err(Error::harness(format!(
                "{}: the run again gave trace {} instead of {}",
                failure.id, summary.trace_hash, row.trace_hash
            )));
        }
        crate::report::write_run_reports(&run_dir, &summary, &summary.resolved)?;
        let header = replay_header(failure, row, enumeration, &choices_taken(&run_dir)?);
        let seed = enumeration.seed;
        let text = document::replay_file(&self.document(&choices), &header, seed, &self.options.variants, &self.options.scenario, &dir)?;
        write_atomically(&dir.join(format!("{}.toml", failure.file_stem())), text.as_bytes())
    }
}

/// The run's `schedule_choice` notes, `t=26072 ms: decision 1: option 1 of 2: …`: what its
/// non-default choices ran before what.
fn choices_taken(run_dir: &Path) -> Result<Vec<String>> {
    let records = crate::trace_reader::read(&run_dir.join("trace.csv"))?;
    Ok(records
        .into_iter()
        .filter(|r| r.actor.is_none() && r.event == "schedule_choice")
        .map(|r| format!("t={} ms: {}", r.t_ms, r.detail))
        .collect())
}

fn replay_header(failure: &DistinctFailure, row: &ScheduleRow, enumeration: &Enumeration, taken: &[String]) -> String {
    let variants = if enumeration.variants.is_empty() { String::new() } else { format!(" (variants {})", enumeration.variants.join(", ")) };
    let taken: String = taken.iter().map(|line| format!("#   {line}\n")).collect();
    format!(
        "# Found by `rehearsal explore schedules` on {} seed {}{variants}: failure {}.\n\
         # The schedule [schedule] choices = [{}] ({} non-default choice(s) at the run's decision points,\n\
         # effects due within {} ms of each other) fails `{}`; comms.db ends with {}.\n\
         # It is the shortest of the {} run(s) of the enumeration that fail this way (schedules.csv).\n\
         # Its non-default choices (the trace notes them as `schedule_choice`):\n{taken}\
         # Run it with `rehearsal run` on this file: it takes the same order and fails the same way.\n",
        enumeration.scenario,
        enumeration.seed,
        failure.id,
        row.choices.replace(' ', ", "),
        row.non_default,
        enumeration.window_ms,
        failure.first_violation,
        failure.end_states,
        failure.runs,
    )
}

/// What an enumeration writes into its folder (sim/out_folder.rs), its scratch folder included.
const OWNED: crate::out_folder::Owned = &["schedules.csv", "summary.md", "failures", INCOMPLETE_MARKER, "schedules-*"];

/// The output folder (refused when it holds results, unless `--force`, which clears what an
/// earlier enumeration wrote: sim/out_folder.rs) and the scratch folder the runs are made in,
/// removed when dropped.
pub(super) fn prepare_folders(options: &SchedulesOptions) -> Result<(crate::out_lock::OutLock, crate::scratch::Scratch)> {
    let lock = crate::out_folder::claim(&options.out, OWNED, options.force)?;
    let failures = options.out.join("failures");
    std::fs::create_dir_all(&failures).map_err(|e| Error::input(format!("cannot create {}: {e}", options.out.display())))?;
    Ok((lock, crate::scratch::scratch_folder("schedules-", options.scratch.as_deref(), &options.out)?))
}
