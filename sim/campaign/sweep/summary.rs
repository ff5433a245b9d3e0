//! summary.md of a sweep, and failures/known.txt.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use super::pair::PairOutcome;
use super::results::ResultRow;
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
            if let Some((p50, p95, max)) = sample.quantiles() {
                let _ = writeln!(md, "| {name} | {} | {p50} | {p95} | {max} |", sample.len());
            }
        }
        md.push_str(&group.designer.markdown());
    }
    md
}

/// The file of known failures' lines under `failures/` (issue 44): one pair a line, with its
/// rules and the command that replays it.
pub const KNOWN_FILE: &str = "known.txt";

/// `failures/known.txt` of some rows judged against a baseline: its known failures.
pub(super) fn known_text(rows: &[ResultRow], baseline: &crate::campaign::baseline::Comparison) -> String {
    let mut text = String::from("# Known failures (the baseline lists them): scenario variant seed rules, then the replay command.\n");
    for (index, row) in rows.iter().enumerate() {
        if row.verdict == RunOutcome::Fail && matches!(baseline.of(index), Some(crate::campaign::baseline::Judgement::Known { .. })) {
            let _ = writeln!(text, "{} {} {} {}\t{}", row.scenario, row.variant, row.seed, row.rules, row.replay);
        }
    }
    text
}

pub(super) fn sweep_summary(
    tally: &Tally,
    rows: &[ResultRow],
    baseline: Option<&crate::campaign::baseline::Comparison>,
    known_lines: bool,
) -> String {
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
    md.push_str(&crate::campaign::fault_proof::markdown(rows));
    md.push_str(&latency_tables(tally));
    let known_at = |index: usize| matches!(baseline.and_then(|b| b.of(index)), Some(crate::campaign::baseline::Judgement::Known { .. }));
    let failed: Vec<&ResultRow> = rows
        .iter()
        .enumerate()
        .filter(|(i, row)| row.verdict != RunOutcome::Pass && !(known_lines && known_at(*i)))
        .map(|(_, row)| row)
        .collect();
    let known: Vec<&ResultRow> = rows
        .iter()
        .enumerate()
        .filter(|(i, row)| row.verdict != RunOutcome::Pass && known_lines && known_at(*i))
        .map(|(_, row)| row)
        .collect();
    if !known.is_empty() {
        let _ = writeln!(md, "\n## Known failures (baseline; a line each in failures/{KNOWN_FILE}, no run folder)\n");
        for row in &known {
            let _ = writeln!(md, "- `{}` {} seed {} — {}: `{}`", row.scenario, row.variant, row.seed, row.rules, row.replay);
        }
    }
    if !failed.is_empty() {
        md.push_str("\n## Failures\n\n");
        for row in failed {
            let stem = Path::new(&row.scenario).file_stem().and_then(|s| s.to_str()).unwrap_or("scenario");
            let name = format!("{stem}-{}-{}", row.variant, row.seed);
            let _ = writeln!(
                md,
                "- [{name}](failures/{name}/timeline.html) — {}: `{}` ([replay file](failures/{name}.toml))",
                row.first_violation, row.replay
            );
        }
    }
    md
}

/// Whether `out/failures/` holds the run folder of a known failure (`--keep-known`).
pub(super) fn keeps_known_folders(out: &Path, rows: &[ResultRow], baseline: Option<&crate::campaign::baseline::Comparison>) -> bool {
    let Some(baseline) = baseline else { return false };
    rows.iter().enumerate().any(|(index, row)| {
        let known = matches!(baseline.of(index), Some(crate::campaign::baseline::Judgement::Known { .. }));
        let stem = Path::new(&row.scenario).file_stem().and_then(|s| s.to_str()).unwrap_or("scenario");
        known && out.join("failures").join(format!("{stem}-{}-{}.toml", row.variant, row.seed)).exists()
    })
}
