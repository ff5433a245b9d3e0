//! Running an exploration's jobs: each on the pool in its own scratch folder (a fault added
//! to the base document, parsed with the scenario's own path, so its trace names the scenario
//! as the base run's does), explore.csv checkpointed as they finish, and a distinct failure's
//! replay file and the run folder of its first point, run again (runs are deterministic).

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use toml::Table;

use super::outcome::PointRow;
use super::points::Job;
use super::{document, report, Exploration, ExploreOptions, HangClass, Prefix};
use crate::base::error::Result;
use crate::campaign::{Campaign, DistinctFailure};
use crate::judging::coverage::Coverage;
use crate::plan::RunPlan;
use crate::run::fork::ForkBase;
use crate::run::{Execution, Keep, RunSummary};
use crate::world::read_replay::BaseRun;

/// What every run of one exploration shares.
pub(super) struct Explorer<'a> {
    pub options: &'a ExploreOptions,
    pub base_doc: Table,
    pub seed: u64,
    pub base_hash: String,
    /// The trace hash of the base run as a launcher starts the conductor (a conductor crash
    /// brings one, C34): what a conductor crash that never fires leaves.
    pub launcher_hash: Option<String>,
    pub hang_ms: Vec<(HangClass, i64)>,
    /// The base run's statements with their rows: an explored run answers its reads from
    /// them while it is still the base run (sim/world/read_replay.rs).
    pub base_reads: Arc<BaseRun>,
    /// The same of the base run with the launcher, for a conductor crash's runs.
    pub launcher_reads: Option<Arc<BaseRun>>,
    /// The base run's snapshots, which a run is forked from near its point (sim/run/fork.rs;
    /// `--prefix fork`), and the launcher's, for a conductor crash's runs.
    pub base_fork: Option<Arc<ForkBase>>,
    pub launcher_fork: Option<Arc<ForkBase>>,
    /// Runs forked, and of them those that parted from their base run before their snapshot.
    pub forked: AtomicUsize,
    pub parted: AtomicUsize,
    pub scratch: &'a Path,
    /// The scenario file's hash, which every run names (`document::file_sha256`).
    pub file_sha256: Option<String>,
}

impl Explorer<'_> {
    /// Every job on the pool; `None` for a job Ctrl-C kept from starting. Each finished
    /// run's row is journaled, explore.csv checkpointed every so many (sim/campaign/ledger.rs).
    pub fn run_all(&self, campaign: &Campaign, jobs: &[(usize, Job)]) -> Result<Vec<Option<(PointRow, Coverage)>>> {
        let planned = jobs.len();
        let progress = crate::campaign::progress::Progress::new(planned, self.options.progress_every, "runs");
        let running = format!(
            "0 of {planned} runs finished: the exploration is running, or was killed; the finished runs are in explore.csv and {}",
            super::JOURNAL
        );
        let ledger = campaign.ledger(planned, &running, progress, |rows: &[PointRow]| checkpoint(campaign, rows, planned))?;
        let panicked = |(_, job): &(usize, Job), panic: &str| (panicked(job, panic), Coverage::default());
        let done = |index: usize, (row, _): &(PointRow, Coverage)| ledger.record(index, row.clone());
        Ok(crate::campaign::map(self.options.jobs, jobs, |(index, job)| self.run_job(*index, job), panicked, || false, done))
    }

    /// The document of `job`'s run.
    fn document(&self, job: &Job) -> Table {
        let hang_ms = |class| self.hang_ms.iter().find(|(c, _)| *c == class).map_or(0, |(_, ms)| *ms);
        document::with_fault(&self.base_doc, &job.point_fault(hang_ms))
    }

    /// Runs `job` into `dir` (the scenario named by its original path, as the base run),
    /// keeping there what `keep` says, answering reads from `replay_reads` and forked from
    /// `fork_from`.
    fn run(
        &self,
        job: &Job,
        dir: &Path,
        keep: Keep,
        replay_reads: Option<Arc<BaseRun>>,
        fork_from: Option<(Arc<ForkBase>, usize)>,
    ) -> Result<RunSummary> {
        let scenario = document::scenario_of_file(&self.document(job), &self.options.scenario, self.file_sha256.clone())?;
        let plan = RunPlan::resolve(&scenario, Some(self.seed), &self.options.variants, Some(dir.to_path_buf()))?;
        Ok(crate::run::execute(plan, Execution { keep, replay_reads, fork_from, ..Execution::default() })?.summary)
    }

    /// The run `job`'s run is until its fault fires: the base run, or for a conductor crash
    /// the base run with the launcher (`None` with `--prefix none`).
    fn reads_for(&self, job: &Job) -> Option<Arc<BaseRun>> {
        if self.options.prefix == Prefix::None {
            return None;
        }
        match (&self.launcher_reads, job.point.target.is_conductor()) {
            (Some(reads), true) => Some(reads.clone()),
            _ => Some(self.base_reads.clone()),
        }
    }

    /// The snapshot `job`'s run starts from: that run's last before the point.
    fn fork_for(&self, job: &Job) -> Option<(Arc<ForkBase>, usize)> {
        let base = match (&self.launcher_fork, job.point.target.is_conductor()) {
            (Some(fork), true) => fork,
            (None, true) => return None,
            _ => self.base_fork.as_ref()?,
        };
        Some((base.clone(), base.nearest(job.point.statements_before)?))
    }

    /// One run in its own scratch folder, removed after; a harness error is its row's. Its
    /// row needs only the run's summary (trace hash, verdict, end states, statements), so
    /// the run writes no files (`Keep::Hash`, as a sweep's first run of a pair) and answers
    /// its reads from the base run's while it is that run: a distinct failure's first run
    /// is run again in full, with neither, by `save_failure`, which checks the trace hash.
    fn run_job(&self, index: usize, job: &Job) -> (PointRow, Coverage) {
        let dir = self.scratch.join(format!("run-{index}"));
        let fork = self.fork_for(job);
        let forked = fork.is_some();
        let mut result = self.run(job, &dir, Keep::Hash, self.reads_for(job), fork);
        if forked {
            self.forked.fetch_add(1, Ordering::Relaxed);
            if result.as_ref().is_err_and(crate::run::fork::parted) {
                // Never while sim/run/fork.rs's argument holds; if it does not, the run made
                // from its start is the one to trust.
                self.parted.fetch_add(1, Ordering::Relaxed);
                result = self.run(job, &dir, Keep::Hash, self.reads_for(job), None);
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        match result {
            Ok(summary) => (PointRow::finished(job, &summary, self.reference_hash(job)), summary.coverage),
            Err(e) => (PointRow { first_violation: format!("harness: {e}"), ..PointRow::of(job) }, Coverage::default()),
        }
    }

    /// The trace of `job`'s run if its fault never fires: the base run's, or for a conductor
    /// crash the base run's with the launcher.
    fn reference_hash(&self, job: &Job) -> &str {
        match (&self.launcher_hash, job.point.target.is_conductor()) {
            (Some(hash), true) => hash,
            _ => &self.base_hash,
        }
    }

    /// A distinct failure's replay file (`failures/F1-rule.toml`) and the run folder of its
    /// first point with its reports (`failures/F1-rule/`), run again: runs are deterministic.
    pub fn save_failure(&self, failure: &DistinctFailure, job: &Job, exploration: &Exploration) -> Result<()> {
        let row = &exploration.rows[failure.first_row];
        let out = &self.options.out;
        let replay = |_: &Path| {
            let header = replay_header(failure, row, exploration);
            let (seed, variants) = (self.seed, &self.options.variants);
            document::replay_file(&self.document(job), &header, seed, variants, &self.options.scenario, &out.join("failures"))
        };
        crate::campaign::save_failure(out, failure, &row.trace_hash, |dir| self.run(job, dir, Keep::Everything, None, None), replay)
    }
}

fn replay_header(failure: &DistinctFailure, row: &PointRow, exploration: &Exploration) -> String {
    let variants = if exploration.variants.is_empty() { String::new() } else { format!(" (variants {})", exploration.variants.join(", ")) };
    let set_aside = if exploration.set_aside > 0 { " The scenario's own scripted crashes and hangs are set aside." } else { "" };
    format!(
        "# Found by `rehearsal explore crashes` on {} seed {}{variants}: failure {}.\n\
         # A {} of {} at `{}` (its run number {} of the statement) fails `{}`; comms.db ends with {}.\n\
         # {} run(s) of the exploration fail this way (explore.csv).{set_aside}\n\
         # Run it with `rehearsal run` on this file: it fails the same way. To keep it as a regression,\n\
         # declare the rule under [expect] violations.\n",
        exploration.scenario,
        exploration.seed,
        failure.id,
        row.fault,
        row.session,
        row.at(),
        row.nth,
        failure.first_violation,
        failure.end_states,
        failure.runs,
    )
}

/// A run whose keeping panicked: an `error` row.
fn panicked(job: &Job, panic: &str) -> PointRow {
    PointRow { first_violation: format!("panic: {panic}"), ..PointRow::of(job) }
}

/// explore.csv with the runs finished so far (in job order), and the marker saying how many
/// of how many: an exploration killed at any moment leaves whole files behind.
fn checkpoint(campaign: &Campaign, rows: &[PointRow], planned: usize) -> Result<()> {
    campaign.mark(&format!("{} of {planned} runs finished: the exploration is running, or was stopped", rows.len()))?;
    report::write_csv(&campaign.out().join("explore.csv"), rows)
}
