//! The files of a sweep folder from its finished pairs: summary.md, coverage.csv,
//! pairs.jsonl, results.csv, junit.xml (and failures/known.txt against a baseline).

use std::path::Path;

use std::io::Write as _;

use super::junit::write_junit;
use super::options::SweepOptions;
use super::outcome::{SweepOutcome, Totals};
use super::pair::PairOutcome;
use super::results::{outcomes, Appender, ResultRow};
use super::spool::{Rows, Spool};
use super::summary::{keeps_known_folders, required_section, write_known, write_summary, Tally, KNOWN_FILE};
use crate::base::atomic::{write_atomically, write_atomically_with};
use crate::base::error::{Error, Result};
use crate::campaign::pair_details::PAIR_DETAILS_FILE;
use crate::campaign::Campaign;
use crate::judging::coverage::{self, Coverage, Item, Required};

/// The sweep's files from the pairs that finished (in results.csv's order): summary.md,
/// results.csv, junit.xml, and the INCOMPLETE marker while fewer than `planned` finished.
pub(super) fn write_outputs(
    campaign: &Campaign,
    options: &SweepOptions,
    mut outputs: Outputs,
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
            // A baseline holds a line a pair: its judgement of the rows does too.
            let rows = outputs.spool.collect()?;
            let outcomes = outcomes(&rows);
            Some(crate::campaign::baseline::compare(&outcomes, &crate::campaign::baseline::keys_of(&outcomes, file)?, baseline, file))
        }
        _ => None,
    };
    let why = if interrupted { "interrupted (Ctrl-C)" } else { "stopped after the first failure (--fail-fast)" };
    let missing = format!("{finished} of {planned} pairs finished: {why}");
    let mut written = None;
    // results.csv then holds every finished pair: the journal has nothing more to tell.
    campaign.finish((finished < planned).then_some(&missing), || {
        written = Some(outputs.finish(&coverage, required, &missing_coverage, &note, comparison.as_ref())?);
        Ok(())
    })?;
    let (rows, totals) = written.expect("written by finish");
    Ok(SweepOutcome {
        rows,
        totals,
        planned,
        interrupted,
        coverage,
        missing_coverage,
        baseline: comparison,
        blessed: None,
        unfired: Vec::new(),
    })
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
    let mut outputs = Outputs::whole(out)?;
    for pair in pairs {
        outputs.add(pair)?;
    }
    let (rows, _) = outputs.finish(coverage, required, missing_coverage, note, baseline)?;
    rows.collect()
}

/// Where pairs.jsonl's lines go: appended to the file as they come (a sweep), or held and
/// written whole at the end (a merge, which writes its folder whole or not at all).
enum Details {
    Appended(std::io::BufWriter<std::fs::File>),
    Whole(String),
}

/// A sweep folder's files, fed the finished pairs in results.csv's order: a sweep's rows
/// are appended to results.csv and its pairs.jsonl lines to the file as they come; of each
/// pair only its counts are kept in memory (summary.md's figures added up in a `Tally`, the
/// verdicts in `Totals`) and its row and wall time on disk (`Spool`), read back at the end;
/// so memory stays flat in the pairs and bytes written grow by a row a pair (issue 41).
pub(crate) struct Outputs {
    out: std::path::PathBuf,
    results: Option<Appender>,
    details: Details,
    tally: Tally,
    totals: Totals,
    spool: Spool,
}

impl Outputs {
    /// Files written whole by `finish`.
    pub(crate) fn whole(out: &Path) -> Result<Outputs> {
        Ok(Outputs {
            out: out.to_path_buf(),
            results: None,
            details: Details::Whole(String::new()),
            tally: Tally::default(),
            totals: Totals::default(),
            spool: Spool::new(out)?,
        })
    }

    /// results.csv and pairs.jsonl appended as pairs come (a running sweep).
    pub(crate) fn appending(out: &Path) -> Result<Outputs> {
        let path = out.join(PAIR_DETAILS_FILE);
        let file = std::fs::File::create(&path).map_err(|e| Error::harness(format!("cannot create {}: {e}", path.display())))?;
        Ok(Outputs {
            results: Some(Appender::new(&out.join("results.csv"))),
            details: Details::Appended(std::io::BufWriter::new(file)),
            ..Outputs::whole(out)?
        })
    }

    /// How many pairs were added.
    pub(crate) fn count(&self) -> usize {
        self.spool.len()
    }

    /// The next pair in results.csv's order. `true` when results.csv was just synced with a
    /// batch of rows.
    pub(crate) fn add(&mut self, pair: PairOutcome) -> Result<bool> {
        self.tally.add(&pair);
        self.totals.add(&pair.row);
        let line = serde_json::to_string(&pair.details()).map_err(|e| Error::harness(format!("{PAIR_DETAILS_FILE}: {e}")))?;
        match &mut self.details {
            Details::Appended(file) => writeln!(file, "{line}").map_err(|e| Error::harness(format!("{PAIR_DETAILS_FILE}: {e}")))?,
            Details::Whole(text) => {
                text.push_str(&line);
                text.push('\n');
            }
        }
        self.spool.push(&pair.row, pair.wall)?;
        match &mut self.results {
            Some(results) => results.push(pair.row),
            None => Ok(false),
        }
    }

    /// The rows so far, in a list (`--bless`: the baseline file holds a line a pair).
    pub(crate) fn rows_listed(&mut self) -> Result<Vec<ResultRow>> {
        self.spool.collect()
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
    ) -> Result<(Rows, Totals)> {
        let Outputs { out, results, details, tally, totals, spool } = self;
        let out = out.as_path();
        let rows = spool.seal()?;
        let against = match baseline {
            Some(comparison) => crate::campaign::baseline::markdown(comparison, &outcomes(&rows.collect()?)),
            None => String::new(),
        };
        // Known failures are lines, not folders, unless the failures/ folder holds their folders
        // (`--keep-known`): a merge sees what its shards kept.
        let known_lines = baseline.is_some() && !keeps_known_folders(out, &rows, baseline)?;
        write_atomically_with(&out.join("summary.md"), |file| {
            let io = |e: std::io::Error| Error::harness(format!("summary.md: {e}"));
            file.write_all(note.as_bytes()).map_err(io)?;
            write_summary(file, &tally, &totals.faults, &rows, baseline, known_lines)?;
            let tail = format!("{against}\n{}{}", coverage::markdown(coverage), required_section(required, missing_coverage));
            file.write_all(tail.as_bytes()).map_err(io)
        })?;
        if let (Some(comparison), true) = (baseline, known_lines) {
            crate::base::live_files::create_dir_all(out.join("failures"))?;
            write_atomically_with(&out.join("failures").join(KNOWN_FILE), |file| write_known(file, &rows, comparison))?;
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
            None => write_results_from(&out.join("results.csv"), &rows)?,
        }
        write_junit(&out.join("junit.xml"), &rows, baseline)?;
        Ok((rows, totals))
    }
}

/// results.csv written whole from rows on disk, as `write_results` writes a list of them.
fn write_results_from(path: &Path, rows: &Rows) -> Result<()> {
    let harness = |e: &dyn std::fmt::Display| Error::harness(format!("{}: {e}", path.display()));
    write_atomically_with(path, |file| {
        let mut writer = csv::Writer::from_writer(file);
        rows.each(|_, row, _| writer.serialize(row).map_err(|e| harness(&e)))?;
        writer.flush().map_err(|e| harness(&e))
    })
}
