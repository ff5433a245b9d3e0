//! What an enumeration writes and prints: schedules.csv (a row a run), the distinct failures
//! (grouped as `explore crashes` groups them), summary.md with the runs per level, and the
//! same counts on stdout. Nothing here depends on `--jobs` or on the wall clock.

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::tree::spell;
use super::Enumeration;
use crate::base::atomic::write_atomically;
use crate::base::error::Result;
use crate::campaign::{end_states, Campaign};
use crate::run::RunSummary;
use crate::vocab::RunOutcome;

/// The journal of an enumeration's finished runs, beside schedules.csv (sim/campaign).
pub const JOURNAL: &str = "schedules.journal.jsonl";

/// One row of schedules.csv.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduleRow {
    /// The run's number (1-based): level by level, earliest choice first.
    pub run: usize,
    /// `[schedule] choices`, space-separated, trailing defaults trimmed (empty: the default order).
    pub choices: String,
    /// Non-default choices: the run's level.
    pub non_default: usize,
    /// Decision points the run met.
    pub decisions: usize,
    /// `pass` | `fail` | `error` (a harness error or panic).
    pub outcome: RunOutcome,
    /// The distinct failure it belongs to (`F1`, …), for `fail`.
    pub failure: String,
    pub first_violation: String,
    /// Every task row's state at the end: `task-00=complete task-01=complete`.
    pub end_states: String,
    pub statements: u64,
    pub trace_hash: String,
}

impl ScheduleRow {
    pub fn error(run: usize, choices: &[u32], why: String) -> ScheduleRow {
        ScheduleRow {
            run,
            choices: spell(choices),
            non_default: crate::plan::schedule::non_default(choices),
            decisions: 0,
            outcome: RunOutcome::Error,
            failure: String::new(),
            first_violation: why,
            end_states: String::new(),
            statements: 0,
            trace_hash: String::new(),
        }
    }

    pub fn finished(run: usize, choices: &[u32], decisions: usize, summary: &RunSummary) -> ScheduleRow {
        ScheduleRow {
            decisions,
            outcome: if summary.verdict.passed() { RunOutcome::Pass } else { RunOutcome::Fail },
            first_violation: summary.verdict.failure.clone(),
            end_states: end_states(&summary.end_states),
            statements: summary.statements,
            trace_hash: summary.trace_hash.clone(),
            ..ScheduleRow::error(run, choices, String::new())
        }
    }

    pub fn parsed_choices(&self) -> Vec<u32> {
        self.choices.split_whitespace().map(|c| c.parse().expect("choices written by spell")).collect()
    }
}

/// schedules.csv's rows are grouped as explore.csv's are (`campaign::group`).
impl crate::campaign::FailureRow for ScheduleRow {
    fn failed(&self) -> bool {
        self.outcome == RunOutcome::Fail
    }
    fn first_violation(&self) -> &str {
        &self.first_violation
    }
    fn end_states(&self) -> &str {
        &self.end_states
    }
    fn set_failure(&mut self, id: String) {
        self.failure = id;
    }
}

/// schedules.csv with the runs so far, and the marker while a level is unfinished.
pub fn checkpoint(campaign: &Campaign, rows: &[ScheduleRow], complete: bool) -> Result<()> {
    if !complete {
        campaign.mark("interrupted (Ctrl-C): a level's runs are missing")?;
    }
    crate::base::csv_rows::write_rows(&campaign.out().join("schedules.csv"), rows)
}

/// schedules.csv and summary.md; the marker when the enumeration was interrupted — also when
/// Ctrl-C came between two levels, so that no level was cut short but later ones never ran.
pub fn write_outputs(campaign: &Campaign, enumeration: &Enumeration) -> Result<()> {
    let missing = enumeration.interrupted.then_some("interrupted (Ctrl-C): levels of the bound were not run");
    campaign.finish(missing, || {
        crate::base::csv_rows::write_rows(&campaign.out().join("schedules.csv"), &enumeration.rows)?;
        write_atomically(&campaign.out().join("summary.md"), enumeration.summary_md().as_bytes())
    })
}

/// The rows of schedules.csv in `out`, with those only its journal holds (a killed
/// enumeration's: sim/campaign/ledger.rs).
pub fn read_csv(out: &Path) -> Result<Vec<ScheduleRow>> {
    crate::campaign::read_rows(&out.join("schedules.csv"), &out.join(JOURNAL))
}

impl Enumeration {
    fn count(&self, outcome: RunOutcome) -> usize {
        self.rows.iter().filter(|r| r.outcome == outcome).count()
    }

    /// The counts, as `rehearsal explore schedules` prints them (and summary.md repeats).
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "scenario     {}", self.scenario);
        let _ = writeln!(out, "seed         {}", self.seed);
        if !self.variants.is_empty() {
            let _ = writeln!(out, "variants     {}", self.variants.join(", "));
        }
        let _ = writeln!(out, "window       {} ms (effects of different actors due this close may run in either order)", self.window_ms);
        let depth = if self.depth == usize::MAX { "every decision point".to_string() } else { format!("the first {}", self.depth) };
        let _ = writeln!(out, "bound        {} non-default choice(s), at {depth}", self.bound);
        let _ = writeln!(out, "default      {} decision point(s) in the default order", self.base_decisions);
        for (level, runs) in self.per_level.iter().enumerate() {
            let _ = writeln!(out, "level {level}      {runs} schedule(s)");
        }
        let _ = writeln!(out, "runs         {}{}", self.rows.len(), if self.interrupted { " (interrupted)" } else { "" });
        let _ = writeln!(out, "passed       {}", self.count(RunOutcome::Pass));
        let _ = writeln!(out, "failed       {} in {} distinct failure(s)", self.count(RunOutcome::Fail), self.failures.len());
        let _ = writeln!(out, "errors       {}", self.count(RunOutcome::Error));
        for f in &self.failures {
            let row = &self.rows[f.first_row];
            let _ = writeln!(
                out,
                "{:<4} {} — {} run(s); ends {}; shortest: choices [{}] (run {}); run failures/{}.toml",
                f.id,
                f.first_violation,
                f.runs,
                f.end_states,
                row.choices,
                row.run,
                f.file_stem()
            );
        }
        for row in self.rows.iter().filter(|r| r.outcome == RunOutcome::Error).take(5) {
            let _ = writeln!(out, "error in run {} (choices [{}]): {}", row.run, row.choices, row.first_violation);
        }
        out
    }

    pub fn summary_md(&self) -> String {
        let mut md = String::new();
        if self.interrupted {
            md.push_str("**Incomplete**: interrupted; the results below are the finished runs only.\n\n");
        }
        let _ = writeln!(md, "# Schedule enumeration of {} (seed {})\n", self.scenario, self.seed);
        md.push_str("```\n");
        md.push_str(&self.render());
        md.push_str("```\n\n## Distinct failures\n\n");
        if self.failures.is_empty() {
            md.push_str("None: every schedule within the bound passed.\n");
            return md;
        }
        md.push_str("| failure | first violated rule | runs | comms.db at the end | shortest schedule | replay file |\n| --- | --- | --- | --- | --- | --- |\n");
        for f in &self.failures {
            let (row, stem) = (&self.rows[f.first_row], f.file_stem());
            let replay = format!("[failures/{stem}.toml](failures/{stem}.toml)");
            let _ = writeln!(md, "| {} | {} | {} | {} | `[{}]` | {replay} |", f.id, f.first_violation, f.runs, f.end_states, row.choices);
        }
        md
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enumeration(interrupted: bool) -> Enumeration {
        Enumeration {
            scenario: "s.toml".into(),
            seed: 1,
            variants: Vec::new(),
            bound: 2,
            depth: usize::MAX,
            window_ms: 2500,
            base_decisions: 0,
            per_level: vec![1],
            rows: Vec::new(),
            failures: Vec::new(),
            interrupted,
        }
    }

    #[test]
    fn an_interruption_between_levels_is_marked_and_a_finished_enumeration_clears_the_mark() {
        let tmp = tempfile::tempdir().unwrap();
        let campaign = Campaign::open(&super::super::runner::folder_spec(tmp.path(), None, false)).unwrap();
        // Every level that ran finished (no checkpoint wrote the marker), but Ctrl-C stopped
        // the next one from starting: still incomplete.
        write_outputs(&campaign, &enumeration(true)).unwrap();
        assert!(tmp.path().join(crate::campaign::INCOMPLETE_MARKER).exists());
        write_outputs(&campaign, &enumeration(false)).unwrap();
        assert!(!tmp.path().join(crate::campaign::INCOMPLETE_MARKER).exists());
    }
}
