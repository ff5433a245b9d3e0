//! summary.md of a sweep, and failures/known.txt.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use super::pair::PairOutcome;
use super::results::ResultRow;
use crate::judging::coverage::{Item, Required};
use crate::judging::oracle::{quantiles, Measurements};
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

/// summary.md of a sweep: pass/fail per scenario and variant, violations by rule (runs
/// showing each), latency quantiles over all runs, links to each failure's run folder.
/// Latency quantiles, one table per (scenario, variant): runs of different scenarios, SQL or
/// variants are not pooled, since comparing them is the point of sweeping them together.
fn latency_tables(groups: &BTreeMap<(String, String), Vec<&PairOutcome>>) -> String {
    let mut md = String::from("\n## Latency quantiles by scenario and variant\n");
    for ((scenario, variant), group) in groups {
        let mut all = Measurements::default();
        // Finished pairs only: a cut-off run's latencies are truncated by its end (issue 31);
        // the designer figures below count those pairs apart.
        for PairOutcome { measured: m, .. } in group.iter().filter(|p| !p.measured.designer.cut_off) {
            all.message_notice_ms.extend(&m.message_notice_ms);
            all.review_resume_ms.extend(&m.review_resume_ms);
            all.crash_detect_ms.extend(&m.crash_detect_ms);
            all.heartbeat_age_s.extend(&m.heartbeat_age_s);
            all.exit_to_claim_ms.extend(&m.exit_to_claim_ms);
        }
        let sql = group.first().map_or("", |p| p.row.sql.as_str());
        let _ = write!(md, "\n### `{scenario}`, variant {variant}\n\n");
        if !sql.is_empty() {
            let _ = writeln!(md, "Protocol SQL: {sql}.\n");
        }
        md.push_str("| measurement | n | p50 | p95 | max |\n| --- | --- | --- | --- | --- |\n");
        for (name, sample) in all.named() {
            if let Some((p50, p95, max)) = quantiles(sample) {
                let _ = writeln!(md, "| {name} | {} | {p50} | {p95} | {max} |", sample.len());
            }
        }
        md.push_str(&crate::campaign::sweep_figures::markdown(&group.iter().map(|p| &p.measured.designer).collect::<Vec<_>>()));
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

pub(super) fn sweep_summary(pairs: &[PairOutcome], baseline: Option<&crate::campaign::baseline::Comparison>, known_lines: bool) -> String {
    let mut groups: BTreeMap<(String, String), Vec<&PairOutcome>> = BTreeMap::new();
    for pair in pairs {
        groups.entry((pair.row.scenario.clone(), pair.row.variant.clone())).or_default().push(pair);
    }
    // `pass` counts clean passes only; a pass that broke a rule its scenario allows or expects
    // is counted apart, as such (issue 25).
    let mut md = String::from("# Sweep summary\n\n| scenario | variant | pairs | pass | pass with known violations | fail | error | violations (runs showing each rule) |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for ((scenario, variant), group) in &groups {
        let count = |v: RunOutcome| group.iter().filter(|p| p.row.verdict == v).count();
        let known = group.iter().filter(|p| p.row.verdict == RunOutcome::Pass && !p.rules.is_empty()).count();
        let mut rules: BTreeMap<&str, usize> = BTreeMap::new();
        for pair in group {
            for rule in &pair.rules {
                *rules.entry(rule.as_str()).or_insert(0) += 1;
            }
        }
        let rules = if rules.is_empty() {
            "none".to_string()
        } else {
            rules.iter().map(|(r, n)| format!("{r} ×{n}")).collect::<Vec<_>>().join(", ")
        };
        let _ = writeln!(
            md,
            "| {scenario} | {variant} | {} | {} | {known} | {} | {} | {rules} |",
            group.len(),
            count(RunOutcome::Pass) - known,
            count(RunOutcome::Fail),
            count(RunOutcome::Error)
        );
    }
    let rows: Vec<ResultRow> = pairs.iter().map(|p| p.row.clone()).collect();
    md.push_str(&crate::campaign::fault_proof::markdown(&rows));
    md.push_str(&latency_tables(&groups));
    let known_at = |index: usize| matches!(baseline.and_then(|b| b.of(index)), Some(crate::campaign::baseline::Judgement::Known { .. }));
    let failed: Vec<&ResultRow> = pairs
        .iter()
        .enumerate()
        .filter(|(i, p)| p.row.verdict != RunOutcome::Pass && !(known_lines && known_at(*i)))
        .map(|(_, p)| &p.row)
        .collect();
    let known: Vec<&ResultRow> = pairs
        .iter()
        .enumerate()
        .filter(|(i, p)| p.row.verdict != RunOutcome::Pass && known_lines && known_at(*i))
        .map(|(_, p)| &p.row)
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

