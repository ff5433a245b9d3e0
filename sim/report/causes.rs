//! Where a run's latency went, for summary.md and timeline.html: each measurement's causes
//! (sim/judging/oracle/latency.rs) summed over the run, and every budget breach with its own.

use std::fmt::Write as _;

use crate::judging::oracle::latency::{Cause, Decomposition};
use crate::judging::oracle::rules::budget::BudgetLimit;
use crate::run::RunSummary;

/// Rows of the breach table at most; latency.csv holds them all.
const BREACH_ROWS_MAX: usize = 20;

/// Every measurement above its budget, in the order taken, with the budget.
pub fn breaches(summary: &RunSummary) -> Vec<(&Decomposition, &BudgetLimit)> {
    let limit = |name: &str| summary.budgets.iter().find(|b| b.name == name);
    summary
        .measured
        .decompositions
        .iter()
        .filter_map(|d| limit(d.measurement).map(|l| (d, l)))
        .filter(|(d, budget)| value(d) > budget.limit_for(d))
        .collect()
}

/// The figure the budget bounds: ms, or whole seconds for the heartbeat age.
pub fn value(d: &Decomposition) -> i64 {
    if d.measurement == "heartbeat_age_s" {
        d.total_ms / 1000
    } else {
        d.total_ms
    }
}

/// "crash_detect_ms 711000 over its budget 582000 (task-01, t=20000..731000 ms): noticed by …".
pub fn breach_title(d: &Decomposition, budget: &BudgetLimit) -> String {
    format!(
        "{} {} over its budget {}{} ({}, t={}..{} ms): {}",
        d.measurement,
        value(d),
        budget.limit_for(d),
        budget.derivation_note(),
        d.task_id,
        d.start_ms,
        d.end_ms,
        d.explain()
    )
}

/// summary.md's section: per measurement, each cause's share of all its time, the median
/// split by the dominant cause, then one row per budget breach with its components.
pub fn markdown(md: &mut String, summary: &RunSummary) {
    let all = &summary.measured.decompositions;
    if all.is_empty() {
        return;
    }
    let _ = writeln!(md, "\n## Where the latency went\n");
    let _ = writeln!(md, "Each measurement split into its causes (`latency.csv` has one row per measurement).\n");
    let _ =
        writeln!(md, "| measurement | n | share of all its time, by cause | measurements by dominant cause, with their quantiles |\n| --- | --- | --- | --- |");
    for (name, sample) in summary.measured.named() {
        let of: Vec<&Decomposition> = all.iter().filter(|d| d.measurement == name).collect();
        if of.is_empty() {
            continue;
        }
        // Heartbeat ages within the refresh threshold are the threshold's alone: not split.
        let n = if of.len() == sample.len() {
            sample.len().to_string()
        } else {
            format!("{} ({} above the refresh threshold)", sample.len(), of.len())
        };
        let _ = writeln!(md, "| {name} | {n} | {} | {} |", shares(&of), by_dominant(&of));
    }
    let found = breaches(summary);
    if found.is_empty() {
        return;
    }
    let _ = writeln!(md, "\n### Budget breaches and their causes\n");
    let _ = writeln!(md, "| measurement | value | budget | task | window (t, ms) | noticed by | dominant cause | causes |\n| --- | --- | --- | --- | --- | --- | --- | --- |");
    for (d, budget) in found.iter().take(BREACH_ROWS_MAX) {
        let _ = writeln!(
            md,
            "| {} | {} | {}{} | {} | {}..{} | {} | {} | {} |",
            d.measurement,
            value(d),
            budget.limit_for(d),
            budget.derivation_note(),
            d.task_id,
            d.start_ms,
            d.end_ms,
            d.noticed_by.as_str(),
            d.dominant().words(),
            d.explain().replace('|', "/")
        );
    }
    if found.len() > BREACH_ROWS_MAX {
        let _ = writeln!(md, "\n{} more in `latency.csv`.", found.len() - BREACH_ROWS_MAX);
    }
}

/// "poll wait 62 %, injected watcher jitter 30 %, statements 8 %" over the measurements.
fn shares(of: &[&Decomposition]) -> String {
    let total: i64 = of.iter().map(|d| d.total_ms).sum();
    if total <= 0 {
        return "-".to_string();
    }
    let mut parts: Vec<(Cause, i64)> = Cause::ALL.iter().map(|c| (*c, of.iter().map(|d| d.component(*c)).sum())).collect();
    parts.retain(|(_, ms)| *ms > 0);
    parts.sort_by_key(|(cause, ms)| (std::cmp::Reverse(*ms), *cause));
    parts.iter().map(|(cause, ms)| format!("{} {} %", cause.words(), (ms * 100 + total / 2) / total)).collect::<Vec<_>>().join(", ")
}

/// "injected watcher jitter: 12 (p50 19.8 s, max 29.3 s); poll wait: 8 (…)": the measurements
/// each cause dominated, with their quantiles.
fn by_dominant(of: &[&Decomposition]) -> String {
    let mut groups: Vec<(Cause, Vec<i64>)> =
        Cause::ALL.iter().map(|c| (*c, of.iter().filter(|d| d.dominant() == *c).map(|d| d.total_ms).collect())).collect();
    groups.retain(|(_, totals)| !totals.is_empty());
    groups.sort_by_key(|(cause, totals)| (std::cmp::Reverse(totals.len()), *cause));
    let seconds = |ms: i64| format!("{:.1} s", ms as f64 / 1000.0);
    let group = |(cause, totals): &(Cause, Vec<i64>)| {
        let (p50, _, max) = crate::judging::oracle::quantiles(totals).expect("a group is never empty");
        format!("{}: {} (p50 {}, max {})", cause.words(), totals.len(), seconds(p50), seconds(max))
    };
    groups.iter().map(group).collect::<Vec<_>>().join("; ")
}
