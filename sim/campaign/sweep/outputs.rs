//! The files of a sweep folder from its finished pairs: summary.md, coverage.csv,
//! pairs.jsonl, results.csv, junit.xml (and failures/known.txt against a baseline).

use std::path::Path;

use std::io::Write as _;

use super::junit::write_junit;
use super::options::SweepOptions;
use super::outcome::SweepOutcome;
use super::pair::PairOutcome;
use super::results::{outcomes, write_results, Appender, ResultRow};
use super::summary::{keeps_known_folders, known_text, required_section, sweep_summary, Tally, KNOWN_FILE};
use crate::base::atomic::write_atomically;
use crate::base::error::{Error, Result};
use crate::campaign::pair_details::PAIR_DETAILS_FILE;
use crate::campaign::Campaign;
use crate::judging::coverage::{self, Coverage, Item, Required};

/// The sweep's files from the pairs that finished (in results.csv's order): summary.md,
/// results.csv, junit.xml, and the INCOMPLETE marker while fewer than `planned` finished.
pub(super) fn write_outputs(
    campaign: &Campaign,
    options: &SweepOptions,
    outputs: Outputs,
    coverage: Coverage,
    planned: usize,
    required: Option<&Required>,
    baseline: Option<&crate::campaign::baseline::Baseline>,
) -> Result<SweepOutcome> {
    let interrupted = crate::base::interrupt::interrupted();
    let finished = outputs.count();
    let note = if finished < planned {
        format!(
            "**Incomplete**: {finished} of {planned} pairs finished ({}); the results below are those pairs only.\n\n",
            if interrupted { "interrupted" } else { "stopped after the first failure" }
        )
    } else {
        String::new()
    };
    let missing_coverage = required.map(|r| r.missing(&coverage)).unwrap_or_default();
    let comparison = match (baseline, &options.baseline) {
        (Some(baseline), Some(file)) => {
            let outcomes = outcomes(outputs.rows());
            Some(crate::campaign::baseline::compare(&outcomes, &crate::campaign::baseline::keys_of(&outcomes, file)?, baseline, file))
        }
        _ => None,
    };
    let why = if interrupted { "interrupted (Ctrl-C)" } else { "stopped after the first failure (--fail-fast)" };
    let missing = format!("{finished} of {planned} pairs finished: {why}");
    let mut rows = Vec::new();
    // results.csv then holds every finished pair: the journal has nothing more to tell.
    campaign.finish((finished < planned).then_some(&missing), || {
        rows = outputs.finish(&coverage, required, &missing_coverage, &note, comparison.as_ref())?;
        Ok(())
    })?;
    Ok(SweepOutcome { rows, planned, interrupted, coverage, missing_coverage, baseline: comparison, blessed: None, unfired: Vec::new() })
}

/// A sweep folder's files from its pairs (sorted) and their coverage added up: summary.md,
/// coverage.csv, pairs.jsonl, results.csv (after them: its rows are what a reader trusts),
/// junit.xml. `rehearsal merge` writes through this too, so a merged folder's files are an
/// unsharded sweep's (junit.xml and pairs.jsonl differ only by wall times).
pub(crate) fn write_files(
    out: &Path,
    pairs: Vec<PairOutcome>,
    coverage: &Coverage,
    required: Option<&Required>,
    missing_coverage: &[Item],
    note: &str,
    baseline: Option<&crate::campaign::baseline::Comparison>,
) -> Result<Vec<ResultRow>> {
    let mut outputs = Outputs::whole(out);
    for pair in pairs {
        outputs.add(pair)?;
    }
    outputs.finish(coverage, required, missing_coverage, note, baseline)
}

/// Where pairs.jsonl's lines go: appended to the file as they come (a sweep), or held and
/// written whole at the end (a merge, which writes its folder whole or not at all).
enum Details {
    Appended(std::io::BufWriter<std::fs::File>),
    Whole(String),
}

/// A sweep folder's files, fed the finished pairs in results.csv's order: a sweep's rows
/// are appended to results.csv and its pairs.jsonl lines to the file as they come, and of
/// each pair only its row and wall time are kept (summary.md's figures are added up in a
/// `Tally`); so memory and bytes written grow by a row a pair (issue 41).
pub(crate) struct Outputs {
    out: std::path::PathBuf,
    results: Option<Appender>,
    details: Details,
    tally: Tally,
    rows: Vec<ResultRow>,
    walls: Vec<std::time::Duration>,
}

impl Outputs {
    /// Files written whole by `finish`.
    pub(crate) fn whole(out: &Path) -> Outputs {
        Outputs {
            out: out.to_path_buf(),
            results: None,
            details: Details::Whole(String::new()),
            tally: Tally::default(),
            rows: Vec::new(),
            walls: Vec::new(),
        }
    }

    /// results.csv and pairs.jsonl appended as pairs come (a running sweep).
    pub(crate) fn appending(out: &Path) -> Result<Outputs> {
        let path = out.join(PAIR_DETAILS_FILE);
        let file = std::fs::File::create(&path).map_err(|e| Error::harness(format!("cannot create {}: {e}", path.display())))?;
        Ok(Outputs {
            results: Some(Appender::new(&out.join("results.csv"))),
            details: Details::Appended(std::io::BufWriter::new(file)),
            ..Outputs::whole(out)
        })
    }

    /// How many pairs were added.
    pub(crate) fn count(&self) -> usize {
        self.rows.len()
    }

    /// The next pair in results.csv's order. `true` when results.csv was just synced with a
    /// batch of rows.
    pub(crate) fn add(&mut self, pair: PairOutcome) -> Result<bool> {
        self.tally.add(&pair);
        let line = serde_json::to_string(&pair.details()).map_err(|e| Error::harness(format!("{PAIR_DETAILS_FILE}: {e}")))?;
        match &mut self.details {
            Details::Appended(file) => writeln!(file, "{line}").map_err(|e| Error::harness(format!("{PAIR_DETAILS_FILE}: {e}")))?,
            Details::Whole(text) => {
                text.push_str(&line);
                text.push('\n');
            }
        }
        let synced = match &mut self.results {
            Some(results) => results.push(pair.row.clone())?,
            None => false,
        };
        self.rows.push(pair.row);
        self.walls.push(pair.wall);
        Ok(synced)
    }

    /// The rows so far.
    pub(crate) fn rows(&self) -> &[ResultRow] {
        &self.rows
    }

    /// summary.md, failures/known.txt (against a baseline), coverage.csv, pairs.jsonl,
    /// results.csv, junit.xml: the folder's files, in the order a reader may trust them.
    pub(crate) fn finish(
        self,
        coverage: &Coverage,
        required: Option<&Required>,
        missing_coverage: &[Item],
        note: &str,
        baseline: Option<&crate::campaign::baseline::Comparison>,
    ) -> Result<Vec<ResultRow>> {
        let Outputs { out, results, details, tally, rows, walls } = self;
        let out = out.as_path();
        let against = baseline.map(|c| crate::campaign::baseline::markdown(c, &outcomes(&rows))).unwrap_or_default();
        // Known failures are lines, not folders, unless the failures/ folder holds their folders
        // (`--keep-known`): a merge sees what its shards kept.
        let known_lines = baseline.is_some() && !keeps_known_folders(out, &rows, baseline);
        let summary = format!(
            "{note}{}{against}\n{}{}",
            sweep_summary(&tally, &rows, baseline, known_lines),
            coverage::markdown(coverage),
            required_section(required, missing_coverage)
        );
        write_atomically(&out.join("summary.md"), summary.as_bytes())?;
        if let (Some(comparison), true) = (baseline, known_lines) {
            std::fs::create_dir_all(out.join("failures"))?;
            write_atomically(&out.join("failures").join(KNOWN_FILE), known_text(&rows, comparison).as_bytes())?;
        }
        coverage.write(&out.join("coverage.csv"))?;
        match details {
            Details::Appended(file) => {
                file.into_inner().map_err(|e| Error::harness(format!("{PAIR_DETAILS_FILE}: {e}")))?;
            }
            Details::Whole(text) => write_atomically(&out.join(PAIR_DETAILS_FILE), text.as_bytes())?,
        }
        match results {
            Some(mut results) => results.flush()?,
            None => write_results(&out.join("results.csv"), &rows)?,
        }
        write_junit(&out.join("junit.xml"), &rows, &walls, baseline)?;
        Ok(rows)
    }
}
