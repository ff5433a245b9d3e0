//! results.csv: one row a pair, its schema, and how it is written. A sweep appends its rows
//! in results.csv's order as the pairs finish (`Appender`: a batch every `CHECKPOINT_EVERY`
//! rows, synced), so the file grows by what each pair adds and is never rewritten (issue 41:
//! whole rewrites every 25 pairs made the bytes written grow as N²). A killed sweep's
//! finished pairs beyond the file are in its journal; `read_results` reads both.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::base::error::Result;
use crate::vocab::RunOutcome;

/// One row of results.csv.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultRow {
    pub scenario: String,
    pub variant: String,
    pub seed: u64,
    /// pass | fail | error: read back, any other text is refused naming the file and line.
    pub verdict: RunOutcome,
    pub first_violation: String,
    /// Every rule the run violated (allowed and expected ones included), sorted, joined by
    /// `,`: what a baseline compares (sim/campaign/baseline.rs).
    #[serde(default)]
    pub rules: String,
    pub sim_time_ms: i64,
    pub statements: u64,
    pub trace_hash: String,
    pub replay: String,
    /// The SQL the pair ran: its files and the hash of its statements.
    #[serde(default)]
    pub sql: String,
    /// Empty, or the verdict's line naming the conductor or session that ended on SQLITE_BUSY
    /// or an I/O error (sim/judging/collapse.rs, docs/protocol.md C62).
    #[serde(default)]
    pub collapsed: String,
    /// Each declared fault kind's armed sources, `crash=1;hang=2` (sim/plan/census.rs).
    #[serde(default)]
    pub faults_armed: String,
    /// How many times each declared kind struck, `crash=3;hang=0`.
    #[serde(default)]
    pub faults_fired: String,
    /// The scripted entries that never struck, `crash[2];io_error[1]`.
    #[serde(default)]
    pub faults_unreached: String,
}

impl ResultRow {
    /// What a baseline compares of this row (sim/campaign/baseline.rs).
    pub fn outcome(&self) -> crate::campaign::baseline::Outcome<'_> {
        crate::campaign::baseline::Outcome {
            scenario: &self.scenario,
            variant: &self.variant,
            seed: self.seed,
            verdict: self.verdict,
            rules: &self.rules,
            first_violation: &self.first_violation,
        }
    }

    pub(crate) fn key(&self) -> (String, String, u64) {
        (self.scenario.clone(), self.variant.clone(), self.seed)
    }
}

/// results.csv's `variant` column: `default`, or the `--protocol` profile and the
/// `--variant`s joined by `+` (`repaired`, `repaired+strict-terminal`, `fencing`).
pub(crate) fn variant_label(protocol: Option<&str>, variants: &[String]) -> String {
    let words: Vec<&str> = protocol.into_iter().chain(variants.iter().map(String::as_str)).collect();
    if words.is_empty() {
        "default".to_string()
    } else {
        words.join("+")
    }
}

pub fn write_results(path: &Path, rows: &[ResultRow]) -> Result<()> {
    crate::base::csv_rows::write_rows(path, rows)
}

/// The rows of a sweep's results.csv, with the rows of finished pairs that only its journal
/// holds (a sweep killed between two checkpoints of results.csv), sorted as results.csv is.
pub fn read_results(path: &Path) -> Result<Vec<ResultRow>> {
    let mut rows: Vec<ResultRow> = crate::campaign::read_rows(path, &path.with_file_name(JOURNAL))?;
    rows.sort_by_key(ResultRow::key);
    rows.dedup_by_key(|row| row.key());
    Ok(rows)
}

/// The journal of a sweep's finished pairs, beside results.csv (sim/base/results_journal.rs).
pub const JOURNAL: &str = "results.journal.jsonl";

/// How long each pair took on the wall clock, by its results.csv key: JUnit's `time`. Only
/// junit.xml carries it; results.csv, which is compared byte for byte, does not.
pub type WallTimes = BTreeMap<(String, String, u64), std::time::Duration>;

/// Passes that broke rules their scenario allows or expects: how many, and by rule how many
/// of them broke it. No command counts them as plain passes (issue 25).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KnownPasses {
    pub runs: usize,
    pub rules: BTreeMap<String, usize>,
}

impl KnownPasses {
    /// ` (budget ×3, liveness ×1)`, or nothing.
    pub fn rules_text(&self) -> String {
        crate::campaign::baseline::counted(&self.rules)
    }
}

/// The clean passes of some rows, and their passes with known violations.
pub fn passes(rows: &[ResultRow]) -> (usize, KnownPasses) {
    let mut known = KnownPasses::default();
    let mut clean = 0;
    for row in rows.iter().filter(|r| r.verdict == RunOutcome::Pass) {
        let rules = crate::campaign::baseline::split_rules(&row.rules);
        if rules.is_empty() {
            clean += 1;
        } else {
            known.runs += 1;
            for rule in rules {
                *known.rules.entry(rule).or_insert(0) += 1;
            }
        }
    }
    (clean, known)
}

/// What a baseline compares of each row.
pub fn outcomes(rows: &[ResultRow]) -> Vec<crate::campaign::baseline::Outcome<'_>> {
    rows.iter().map(ResultRow::outcome).collect()
}

/// The worst outcome of some rows (an error over a failure over a pass).
pub fn worst_of(rows: &[ResultRow]) -> RunOutcome {
    RunOutcome::worst(rows.iter().map(|r| r.verdict))
}
