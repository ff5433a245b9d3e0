//! results.csv: one row a pair, its schema, and how it is written. A sweep appends its rows
//! in results.csv's order as the pairs finish (`Appender`: a batch every `CHECKPOINT_EVERY`
//! rows, synced), so the file grows by what each pair adds and is never rewritten (issue 41:
//! whole rewrites every 25 pairs made the bytes written grow as N²). A killed sweep's
//! finished pairs beyond the file are in its journal; `read_results` reads both.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::base::error::{Error, Result};
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
    /// Every rule the run violated (allowed and expected ones included), sorted: what a
    /// baseline compares (sim/campaign/baseline.rs). results.csv joins them by `,`.
    #[serde(default)]
    pub rules: Rules,
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
            rules: &self.rules.0,
            first_violation: &self.first_violation,
        }
    }

    pub(crate) fn key(&self) -> (String, String, u64) {
        (self.scenario.clone(), self.variant.clone(), self.seed)
    }
}

/// The rules a pair's run violated, in the verdict's order (sorted). Read and written as
/// one results.csv column, joined by `baseline::RULE_SEPARATOR`; a list everywhere else.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rules(pub Vec<String>);

impl Rules {
    pub fn of<'r>(rules: impl IntoIterator<Item = &'r str>) -> Rules {
        Rules(rules.into_iter().map(String::from).collect())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &String> {
        self.0.iter()
    }
}

impl std::fmt::Display for Rules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.join(&crate::campaign::baseline::RULE_SEPARATOR.to_string()))
    }
}

impl Serialize for Rules {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Rules {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Rules, D::Error> {
        let text = String::deserialize(deserializer)?;
        Ok(Rules::of(text.split(crate::campaign::baseline::RULE_SEPARATOR).map(str::trim).filter(|r| !r.is_empty())))
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
        if row.rules.is_empty() {
            clean += 1;
        } else {
            known.runs += 1;
            for rule in row.rules.iter() {
                *known.rules.entry(rule.clone()).or_insert(0) += 1;
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

/// results.csv opened for appending: rows come in results.csv's order, are held until
/// `CHECKPOINT_EVERY` of them wait, then written in one `write` (the header before the first)
/// and synced. The file is made at the first batch, so it holds a whole batch from the start.
pub(crate) struct Appender {
    path: std::path::PathBuf,
    file: Option<std::fs::File>,
    pending: Vec<ResultRow>,
    written: usize,
}

impl Appender {
    pub(crate) fn new(path: &Path) -> Appender {
        Appender { path: path.to_path_buf(), file: None, pending: Vec::new(), written: 0 }
    }

    /// Adds the next row; a full batch is written and synced (`true`).
    pub(crate) fn push(&mut self, row: ResultRow) -> Result<bool> {
        self.pending.push(row);
        if self.pending.len() < crate::campaign::CHECKPOINT_EVERY {
            return Ok(false);
        }
        self.flush()?;
        Ok(true)
    }

    /// Writes the rows waiting (the file made, empty, if there are none yet) and syncs it.
    pub(crate) fn flush(&mut self) -> Result<()> {
        let name = self.path.display().to_string();
        let harness = |e: &dyn std::fmt::Display| Error::harness(format!("{name}: {e}"));
        if self.file.is_none() {
            let file = std::fs::File::create(&self.path).map_err(|e| harness(&e))?;
            self.file = Some(file);
        }
        let mut writer = csv::WriterBuilder::new().has_headers(self.written == 0).from_writer(Vec::new());
        for row in &self.pending {
            writer.serialize(row).map_err(|e| harness(&e))?;
        }
        let bytes = writer.into_inner().map_err(|e| harness(&e))?;
        let file = self.file.as_mut().expect("made above");
        file.write_all(&bytes).and_then(|()| file.sync_data()).map_err(|e| harness(&e))?;
        self.written += self.pending.len();
        self.pending.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::error::Error;

    fn journal_row(seed: u64) -> ResultRow {
        ResultRow {
            scenario: "scenarios/bench/ci-smoke.toml".into(),
            variant: "default".into(),
            seed,
            verdict: RunOutcome::Fail,
            first_violation: "liveness: a line\nwith a newline".into(),
            rules: Rules::of(["liveness"]),
            sim_time_ms: 12,
            statements: 3,
            trace_hash: "ab".into(),
            replay: "rehearsal run x --seed 1".into(),
            sql: String::new(),
            collapsed: String::new(),
            faults_armed: String::new(),
            faults_fired: String::new(),
            faults_unreached: String::new(),
        }
    }

    /// Issue 41: results.csv appended batch by batch is the file written whole, byte for
    /// byte (the header once, before the first row), and holds whole batches on the way.
    #[test]
    fn appended_results_are_the_file_written_whole() {
        let dir = tempfile::tempdir().unwrap();
        let (appended, whole) = (dir.path().join("results.csv"), dir.path().join("whole.csv"));
        let rows: Vec<ResultRow> = (1..=60).map(journal_row).collect();
        let mut appender = Appender::new(&appended);
        let mut synced = Vec::new();
        for row in &rows {
            if appender.push(row.clone()).unwrap() {
                synced.push(read_results(&appended).unwrap().len());
            }
        }
        assert_eq!(synced, [25, 50], "a batch of CHECKPOINT_EVERY rows each time");
        appender.flush().unwrap();
        write_results(&whole, &rows).unwrap();
        assert_eq!(std::fs::read(&appended).unwrap(), std::fs::read(&whole).unwrap());
        // No rows: an empty file, as written whole.
        let empty = dir.path().join("empty.csv");
        Appender::new(&empty).flush().unwrap();
        write_results(&whole, &[]).unwrap();
        assert_eq!(std::fs::read(&empty).unwrap(), std::fs::read(&whole).unwrap());
    }

    /// Issue 30: a killed sweep's finished pairs are in results.csv or its journal, and a
    /// read gives each once, sorted as results.csv is.
    #[test]
    fn results_csv_and_the_journal_are_read_together_once_each_pair() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("results.csv");
        let journal = crate::base::results_journal::Journal::create(&dir.path().join(JOURNAL)).unwrap();
        for seed in [5, 1, 2] {
            journal.append(&journal_row(seed)).unwrap();
        }
        let seeds = || read_results(&csv).unwrap().into_iter().map(|r| r.seed).collect::<Vec<_>>();
        assert_eq!(seeds(), [1, 2, 5], "the journal alone");
        write_results(&csv, &[journal_row(1), journal_row(5)]).unwrap();
        journal.append(&journal_row(4)).unwrap();
        assert_eq!(seeds(), [1, 2, 4, 5]);
        assert_eq!(read_results(&csv).unwrap()[2], journal_row(4));
    }

    /// A results.csv (or journal) whose verdict is none of pass, fail, error is refused, with
    /// the file, the line and the value named: merge, baseline and replay read it.
    #[test]
    fn an_unknown_verdict_is_refused_naming_the_file_line_and_value() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("results.csv");
        write_results(&csv, &[journal_row(1), journal_row(2)]).unwrap();
        let text = std::fs::read_to_string(&csv).unwrap();
        let (head, tail) = text.split_once(",1,fail,").unwrap();
        std::fs::write(&csv, format!("{head},1,passed,{tail}")).unwrap();
        let error = read_results(&csv).unwrap_err();
        let message = error.to_string();
        assert!(matches!(error, Error::Input(_)), "bad input, exit 2: {error:?}");
        for part in [format!("{}:2: ", csv.display()), "unknown run outcome `passed`".into(), "pass, fail, error".into()] {
            assert!(message.contains(&part), "{part} in {message}");
        }

        std::fs::remove_file(&csv).unwrap();
        let journal = dir.path().join(JOURNAL);
        let line = serde_json::to_string(&journal_row(3)).unwrap().replace("\"fail\"", "\"maybe\"");
        std::fs::write(&journal, format!("{}\n{line}\n", serde_json::to_string(&journal_row(2)).unwrap())).unwrap();
        let message = read_results(&csv).unwrap_err().to_string();
        for part in [journal.display().to_string(), ":2:".to_string(), "`maybe`".into()] {
            assert!(message.contains(&part), "{part} in {message}");
        }
    }
}
