//! Running the schedules of one level: each on the pool in its own scratch folder, the
//! scenario's document with `[schedule] choices` set (parsed with the scenario's own path, so
//! its trace names the scenario as a plain run's does), recording the decision points it met;
//! and a distinct failure's replay file and run folder, run again (runs are deterministic).

use std::path::Path;

use toml::{Table, Value};

use super::report::{ScheduleRow, JOURNAL};
use super::tree::{children, Choices};
use super::{Enumeration, SchedulesOptions};
use crate::base::error::Result;
use crate::campaign::explore::document;
use crate::campaign::{Campaign, DistinctFailure, FolderSpec, Ledger};
use crate::plan::schedule::Decision;
use crate::plan::RunPlan;
use crate::run::{Execution, Keep, RunSummary};

/// What every run of one enumeration shares.
pub(super) struct Explorer<'a> {
    pub options: &'a SchedulesOptions,
    /// The scenario file's document; each run sets its `[schedule] choices`.
    pub base_doc: Table,
    pub scratch: &'a Path,
    /// Every finished run's row, journaled as it finishes (checkpoints are the levels').
    pub ledger: Ledger<'a, ScheduleRow>,
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
        let result = self.run(&[], &dir, Keep::Hash);
        let _ = std::fs::remove_dir_all(&dir);
        let (summary, decisions, window_ms) = result?;
        Ok(Ran { row: ScheduleRow::finished(1, &[], decisions.len(), &summary), decisions, window_ms })
    }

    /// Runs every schedule of a level (numbered from `first + 1`), in order; the runs Ctrl-C
    /// kept from starting, and those after them, are left out. Returns the finished runs and
    /// the next level's schedules.
    pub fn run_level(&self, level: &[Choices], first: usize, number: usize) -> (Vec<Ran>, Vec<Choices>) {
        let jobs: Vec<(usize, &Choices)> = level.iter().enumerate().map(|(i, c)| (first + i + 1, c)).collect();
        if self.options.progress {
            eprintln!("rehearsal: level {number}: {} schedule(s)", jobs.len());
        }
        let panicked = |(run, choices): &(usize, &Choices), panic: &str| Ran {
            row: ScheduleRow::error(*run, choices, format!("panic: {panic}")),
            decisions: Vec::new(),
            window_ms: 0,
        };
        let done = |index: usize, ran: &Ran| self.ledger.record(jobs[index].0, ran.row.clone());
        // Levels are sequential: a level's schedules come from the decision points its parents met.
        let results =
            crate::campaign::map(self.options.jobs, &jobs, |(run, choices)| self.run_job(*run, choices), panicked, || false, done);
        let ran: Vec<Ran> = results.into_iter().map_while(|result| result).collect();
        let next = ran
            .iter()
            .zip(level)
            .filter(|(r, _)| r.row.outcome != crate::vocab::RunOutcome::Error)
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

    /// Runs a schedule into `dir`, recording its decision points. A row needs only the run's
    /// summary, so the enumeration's runs keep only the trace's hash (`Keep::Hash`, as a
    /// sweep's first run of a pair); a distinct failure's run is run again in full.
    fn run(&self, choices: &[u32], dir: &Path, keep: Keep) -> Result<(RunSummary, Vec<Decision>, i64)> {
        let scenario = document::scenario(&self.document(choices), &self.options.scenario)?;
        let mut plan = RunPlan::resolve(&scenario, self.options.seed, &self.options.variants, Some(dir.to_path_buf()))?;
        let log = plan.record_decisions();
        let window_ms = plan.schedule.as_ref().map_or(0, crate::plan::schedule::Schedule::window_ms);
        let summary = crate::run::execute(plan, Execution { keep, ..Execution::default() })?.summary;
        let decisions = log.take();
        Ok((summary, decisions, window_ms))
    }

    /// One run in its own scratch folder, removed after; a harness error is its row's.
    fn run_job(&self, run: usize, choices: &[u32]) -> Ran {
        let dir = self.scratch.join(format!("run-{run}"));
        let result = self.run(choices, &dir, Keep::Hash);
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
        let out = &self.options.out;
        let replay = |run_dir: &Path| {
            let header = replay_header(failure, row, enumeration, &choices_taken(run_dir)?);
            let (seed, variants) = (enumeration.seed, &self.options.variants);
            document::replay_file(&self.document(&choices), &header, seed, variants, &self.options.scenario, &out.join("failures"))
        };
        crate::campaign::save_failure(out, failure, &row.trace_hash, |dir| Ok(self.run(&choices, dir, Keep::Everything)?.0), replay)
    }
}

/// The run's `schedule_choice` notes, `t=26072 ms: decision 1: option 1 of 2: …`: what its
/// non-default choices ran before what.
fn choices_taken(run_dir: &Path) -> Result<Vec<String>> {
    let records = crate::trace::trace_reader::read(&run_dir.join("trace.csv"))?;
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

/// The output folder (refused when it holds results, unless `--force`, which clears what an
/// earlier enumeration wrote: sim/campaign/folder.rs) and the scratch folder the runs are made in.
pub(super) fn folder_spec<'a>(out: &'a Path, scratch: Option<&'a Path>, force: bool) -> FolderSpec<'a> {
    FolderSpec {
        name: "schedules",
        out,
        owned: &["schedules.csv", "summary.md"],
        folders: &["failures"],
        journal: Some(JOURNAL),
        force,
        scratch,
    }
}

/// The enumeration's folders, from its options.
pub(super) fn open(options: &SchedulesOptions) -> Result<Campaign> {
    Campaign::open(&folder_spec(&options.out, options.scratch.as_deref(), options.force))
}
