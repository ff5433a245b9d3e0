//! The files of a sweep folder from its finished pairs: summary.md, coverage.csv,
//! pairs.jsonl, results.csv, junit.xml (and failures/known.txt against a baseline).

use std::path::Path;

use super::junit::write_junit;
use super::pair::PairOutcome;
use super::results::{outcomes, write_results, ResultRow, WallTimes};
use super::summary::{keeps_known_folders, known_text, required_section, sweep_summary, KNOWN_FILE};
use super::{SweepOptions, SweepOutcome};
use crate::base::atomic::write_atomically;
use crate::base::error::Result;
use crate::campaign::Campaign;
use crate::judging::coverage::{self, Coverage, Item, Required};

/// The sweep's files from the pairs that finished (sorted): summary.md, results.csv,
/// junit.xml, and the INCOMPLETE marker while fewer than `planned` finished.
pub(super) fn write_outputs(
    campaign: &Campaign,
    options: &SweepOptions,
    done_pairs: Vec<PairOutcome>,
    planned: usize,
    required: Option<&Required>,
    baseline: Option<&crate::campaign::baseline::Baseline>,
) -> Result<SweepOutcome> {
    let interrupted = crate::base::interrupt::interrupted();
    let note = if done_pairs.len() < planned {
        format!(
            "**Incomplete**: {} of {planned} pairs finished ({}); the results below are those pairs only.\n\n",
            done_pairs.len(),
            if interrupted { "interrupted" } else { "stopped after the first failure" }
        )
    } else {
        String::new()
    };
    let mut coverage = Coverage::default();
    for pair in &done_pairs {
        coverage.merge(&pair.coverage);
    }
    let missing_coverage = required.map(|r| r.missing(&coverage)).unwrap_or_default();
    let rows: Vec<ResultRow> = done_pairs.iter().map(|pair| pair.row.clone()).collect();
    let comparison = match (baseline, &options.baseline) {
        (Some(baseline), Some(file)) => {
            let outcomes = outcomes(&rows);
            Some(crate::campaign::baseline::compare(&outcomes, &crate::campaign::baseline::keys_of(&outcomes, file)?, baseline, file))
        }
        _ => None,
    };
    let why = if interrupted { "interrupted (Ctrl-C)" } else { "stopped after the first failure (--fail-fast)" };
    let missing = format!("{} of {planned} pairs finished: {why}", done_pairs.len());
    let mut rows = Vec::new();
    // results.csv then holds every finished pair: the journal has nothing more to tell.
    campaign.finish((done_pairs.len() < planned).then_some(&missing), || {
        rows = write_files(&options.out, done_pairs, &coverage, required, &missing_coverage, &note, comparison.as_ref())?;
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
    let rows: Vec<ResultRow> = pairs.iter().map(|pair| pair.row.clone()).collect();
    let against = baseline.map(|c| crate::campaign::baseline::markdown(c, &outcomes(&rows))).unwrap_or_default();
    // Known failures are lines, not folders, unless the failures/ folder holds their folders
    // (`--keep-known`): a merge sees what its shards kept.
    let known_lines = baseline.is_some() && !keeps_known_folders(out, &rows, baseline);
    let summary = format!(
        "{note}{}{against}\n{}{}",
        sweep_summary(&pairs, baseline, known_lines),
        coverage::markdown(coverage),
        required_section(required, missing_coverage)
    );
    write_atomically(&out.join("summary.md"), summary.as_bytes())?;
    if let (Some(comparison), true) = (baseline, known_lines) {
        std::fs::create_dir_all(out.join("failures"))?;
        write_atomically(&out.join("failures").join(KNOWN_FILE), known_text(&rows, comparison).as_bytes())?;
    }
    coverage.write(&out.join("coverage.csv"))?;
    crate::campaign::pair_details::write(out, &pairs.iter().map(PairOutcome::details).collect::<Vec<_>>())?;
    let times: WallTimes = pairs.iter().map(|pair| (pair.row.key(), pair.wall)).collect();
    write_results(&out.join("results.csv"), &rows)?;
    write_junit(&out.join("junit.xml"), &rows, &times, baseline)?;
    Ok(rows)
}

