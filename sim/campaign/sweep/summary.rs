//! summary.md of a sweep, and failures/known.txt.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use super::pair::PairOutcome;
use super::spool::Rows;
use crate::base::error::{Error, Result};
use crate::campaign::fault_proof::FaultTally;
use crate::campaign::sweep_figures::{DesignerTally, Histogram};
use crate::judging::coverage::{Item, Required};
use crate::judging::oracle::Measurements;
use crate::vocab::RunOutcome;

/// The summary.md lines on a `--require-coverage` file: how much of it was reached, and what
/// was not.
pub fn required_section(required: Option<&Required>, missing: &[Item]) -> String {
    let Some(required) = required else { return String::new() };
    let total = required.items.len();
    let mut md =
        format!("\n### Required coverage ({})\n\n{} of {total} required items reached.\n", required.path.display(), total - missing.len());
    for item in missing {
        md.push_str(&format!("- never reached: `{item}`\n"));
    }
    md
}

/// What summary.md says of one (scenario, variant), added up pair by pair (in results.csv's
/// order) so no pair's samples are kept: counts, rules, and the latency samples of the
/// finished pairs as counted values (`Histogram`: the same quantiles as the samples listed).
#[derive(Default)]
struct Group {
    pairs: usize,
    verdicts: [usize; 3],
    /// Passes that broke a rule their scenario allows or expects (issue 25).
    known: usize,
    rules: BTreeMap<String, usize>,
    /// The first pair's SQL.
    sql: Option<String>,
    latency: [Histogram; 5],
    designer: DesignerTally,
}

/// summary.md's groups, fed one finished pair at a time.
#[derive(Default)]
pub(super) struct Tally {
    groups: BTreeMap<(String, String), Group>,
}

impl Tally {
    pub(super) fn add(&mut self, pair: &PairOutcome) {
        let group = self.groups.entry((pair.row.scenario.clone(), pair.row.variant.clone())).or_default();
        group.pairs += 1;
        group.verdicts[verdict_slot(pair.row.verdict)] += 1;
        if pair.row.verdict == RunOutcome::Pass && !pair.row.rules.is_empty() {
            group.known += 1;
        }
        for rule in pair.row.rules.iter() {
            *group.rules.entry(rule.clone()).or_insert(0) += 1;
        }
        group.sql.get_or_insert_with(|| pair.row.sql.clone());
        // Finished pairs only: a cut-off run's latencies are truncated by its end (issue 31);
        // the designer figures below count those pairs apart.
        if !pair.measured.designer.cut_off {
            for (histogram, (_, sample)) in group.latency.iter_mut().zip(pair.measured.named()) {
                histogram.extend(sample);
            }
        }
        group.designer.add(&pair.measured.designer);
    }
}

fn verdict_slot(verdict: RunOutcome) -> usize {
    match verdict {
        RunOutcome::Pass => 0,
        RunOutcome::Fail => 1,
        RunOutcome::Error => 2,
    }
}

/// summary.md of a sweep: pass/fail per scenario and variant, violations by rule (runs
/// showing each), latency quantiles over all runs, links to each failure's run folder.
/// Latency quantiles, one table per (scenario, variant): runs of different scenarios, SQL or
/// variants are not pooled, since comparing them is the point of sweeping them together.
fn latency_tables(tally: &Tally) -> String {
    let mut md = String::from("\n## Latency quantiles by scenario and variant\n");
    let names = Measurements::default().named().map(|(name, _)| name);
    for ((scenario, variant), group) in &tally.groups {
        let sql = group.sql.as_deref().unwrap_or("");
        let _ = write!(md, "\n### `{scenario}`, variant {variant}\n\n");
        if !sql.is_empty() {
            let _ = writeln!(md, "Protocol SQL: {sql}.\n");
        }
        md.push_str("| measurement | n | p50 | p95 | max |\n| --- | --- | --- | --- | --- |\n");
        for (name, sample) in names.iter().zip(&group.latency) {
            if let Some(row) = sample.table_row(name) {
                let _ = writeln!(md, "{row}");
            }
        }
        if group.latency.iter().any(Histogram::approximate) {
            md.push_str(crate::campaign::sweep_figures::APPROXIMATE_NOTE);
        }
        md.push_str(&group.designer.markdown());
    }
    md
}

/// The file of known failures' lines under `failures/` (issue 44): one pair a line, with its
/// rules and the command that replays it.
pub const KNOWN_FILE: &str = "known.txt";

fn io(e: std::io::Error) -> Error {
    Error::harness(format!("cannot write a sweep's file: {e}"))
}

fn is_known(baseline: Option<&crate::campaign::baseline::Comparison>, index: usize) -> bool {
    matches!(baseline.and_then(|b| b.of(index)), Some(crate::campaign::baseline::Judgement::Known { .. }))
}

/// `failures/known.txt` of the rows judged against a baseline: its known failures.
pub(super) fn write_known(file: &mut dyn Write, rows: &Rows, baseline: &crate::campaign::baseline::Comparison) -> Result<()> {
    file.write_all(b"# Known failures (the baseline lists them): scenario variant seed rules, then the replay command.\n").map_err(io)?;
    rows.each(|index, row, _| {
        if row.verdict == RunOutcome::Fail && is_known(Some(baseline), index) {
            writeln!(file, "{} {} {} {}\t{}", row.scenario, row.variant, row.seed, row.rules, row.replay).map_err(io)?;
        }
        Ok(())
    })
}

/// summary.md of a sweep, up to its baseline section: the groups' table, the faults, the
/// latency quantiles, then the known failures and the failures, a line each, as the rows are
/// read (a sweep of 10^6 failing pairs never holds its list: issue 41).
pub(super) fn write_summary(
    file: &mut dyn Write,
    tally: &Tally,
    faults: &FaultTally,
    rows: &Rows,
    baseline: Option<&crate::campaign::baseline::Comparison>,
    known_lines: bool,
) -> Result<()> {
    // `pass` counts clean passes only; a pass that broke a rule its scenario allows or expects
    // is counted apart, as such (issue 25).
    let mut md = String::from("# Sweep summary\n\n| scenario | variant | pairs | pass | pass with known violations | fail | error | violations (runs showing each rule) |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for ((scenario, variant), group) in &tally.groups {
        let rules = if group.rules.is_empty() {
            "none".to_string()
        } else {
            group.rules.iter().map(|(r, n)| format!("{r} ×{n}")).collect::<Vec<_>>().join(", ")
        };
        let [pass, fail, error] = group.verdicts;
        let _ = writeln!(
            md,
            "| {scenario} | {variant} | {} | {} | {} | {fail} | {error} | {rules} |",
            group.pairs,
            pass - group.known,
            group.known
        );
    }
    md.push_str(&faults.markdown());
    md.push_str(&latency_tables(tally));
    file.write_all(md.as_bytes()).map_err(io)?;
    let known_at = |index: usize| known_lines && is_known(baseline, index);
    let mut started = false;
    rows.each(|index, row, _| {
        if row.verdict != RunOutcome::Pass && known_at(index) {
            if !std::mem::replace(&mut started, true) {
                writeln!(file, "\n## Known failures (baseline; a line each in failures/{KNOWN_FILE}, no run folder)\n").map_err(io)?;
            }
            writeln!(file, "- `{}` {} seed {} — {}: `{}`", row.scenario, row.variant, row.seed, row.rules, row.replay).map_err(io)?;
        }
        Ok(())
    })?;
    let mut started = false;
    rows.each(|index, row, _| {
        if row.verdict != RunOutcome::Pass && !known_at(index) {
            if !std::mem::replace(&mut started, true) {
                file.write_all(b"\n## Failures\n\n").map_err(io)?;
            }
            let stem = Path::new(&row.scenario).file_stem().and_then(|s| s.to_str()).unwrap_or("scenario");
            let name = format!("{stem}-{}-{}", row.variant, row.seed);
            writeln!(
                file,
                "- [{name}](failures/{name}/timeline.html) — {}: `{}` ([replay file](failures/{name}.toml))",
                row.first_violation, row.replay
            )
            .map_err(io)?;
        }
        Ok(())
    })
}

/// Whether `out/failures/` holds the run folder of a known failure (`--keep-known`).
pub(super) fn keeps_known_folders(out: &Path, rows: &Rows, baseline: Option<&crate::campaign::baseline::Comparison>) -> Result<bool> {
    let Some(baseline) = baseline else { return Ok(false) };
    let mut kept = false;
    rows.each(|index, row, _| {
        let stem = Path::new(&row.scenario).file_stem().and_then(|s| s.to_str()).unwrap_or("scenario");
        kept = kept
            || (is_known(Some(baseline), index) && out.join("failures").join(format!("{stem}-{}-{}.toml", row.variant, row.seed)).exists());
        Ok(())
    })?;
    Ok(kept)
}
