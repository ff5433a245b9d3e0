//! summary.md: the verdict and its explanation, the replay command, the run's settings, the
//! task rows as the run left them, timing against the budgets, and every violation.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::base::error::Result;
use crate::base::time_text::{duration, humanize_instants};
use crate::input::scenario::Scenario;
use crate::judging::oracle::{quantiles, Violation};
use crate::run::RunSummary;

pub fn summary_md(dir: &Path, summary: &RunSummary, scenario: &Scenario) -> Result<String> {
    let mut md = String::new();
    let _ = writeln!(md, "# {} — seed {}\n", summary.scenario, summary.seed);
    let _ = writeln!(md, "**Verdict: {}**\n", summary.verdict.headline());
    for line in summary.verdict.explanation() {
        let _ = writeln!(md, "> {}\n", humanize_instants(&line));
    }
    for line in &summary.verdict.outside {
        let _ = writeln!(md, "> Outside {line}\n");
    }
    let _ = writeln!(md, "Replay: `{}`\n", summary.replay);
    settings(&mut md, summary, scenario);
    tasks(&mut md, dir)?;
    timing(&mut md, summary, scenario);
    super::causes::markdown(&mut md, summary);
    violations(&mut md, &summary.verdict.violations);
    let _ = writeln!(md, "\nFiles: `timeline.html`, `plots/*.svg`, `trace.csv`, `comms.db`, `violations.csv`, `latency.csv`, `temp/`.");
    Ok(md)
}

/// The first violation of each rule and subject (a task, a message), then how many there are
/// of each rule in all: violations.csv lists every one (issue 26).
fn violations(md: &mut String, violations: &[Violation]) {
    if violations.is_empty() {
        return;
    }
    let _ = writeln!(md, "\n## Violations\n");
    let _ = writeln!(md, "The first of each rule and subject; `violations.csv` lists all {}.\n", violations.len());
    for v in violations.iter().filter(|v| v.first) {
        let _ = writeln!(md, "- **{}** at {}: {}", v.rule, duration(v.t_ms), humanize_instants(&v.explanation));
    }
    let mut counts: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for v in violations {
        let (firsts, all) = counts.entry(v.rule.as_str()).or_default();
        *firsts += usize::from(v.first);
        *all += 1;
    }
    let _ = writeln!(md, "\n| rule | subjects | violations |\n| --- | --- | --- |");
    for (rule, (firsts, all)) in counts {
        let _ = writeln!(md, "| {rule} | {firsts} | {all} |");
    }
}

fn settings(md: &mut String, summary: &RunSummary, scenario: &Scenario) {
    let _ = writeln!(md, "## Settings\n");
    let _ = writeln!(md, "| setting | value |\n| --- | --- |");
    let _ = writeln!(md, "| scenario file | `{}` |", scenario.path.display());
    let seeds_own = summary.variants.is_empty() && summary.sql.is_seeds_own();
    let _ = writeln!(
        md,
        "| variants | {} |",
        if seeds_own {
            "none (the seeds' own protocol)".to_string()
        } else if summary.variants.is_empty() {
            "none".to_string()
        } else {
            summary.variants.join(", ")
        }
    );
    let _ = writeln!(md, "| protocol SQL | {} |", summary.sql);
    let _ = writeln!(md, "| tasks | {} |", scenario.tasks.len());
    let (background, pause) = (duration(scenario.timing.background_poll_ms), duration(scenario.timing.pause_poll_ms));
    let _ = writeln!(md, "| background / pause poll | {background} / {pause} |");
    let _ = writeln!(
        md,
        "| heartbeat refresh / staleness | {} s / {} s |",
        scenario.timing.heartbeat_refresh_s, scenario.conductor.staleness_s
    );
    let _ = writeln!(
        md,
        "| conductor profile | {} ({}; docs/protocol.md C110) |",
        scenario.conductor_profile,
        crate::input::conductor_profile::policy_words(&scenario.conductor)
    );
    let _ = writeln!(md, "| conductor poll / review | {} / {} ms |", duration(scenario.conductor.poll_ms), scenario.conductor.review_ms);
    for (name, value) in &summary.drawn {
        let _ = writeln!(md, "| drawn from the seed: {name} | {value} |");
    }
    let _ = writeln!(md, "| makespan | {} |", duration(summary.makespan_ms));
    let _ = writeln!(md, "| statements / events | {} / {} |", summary.statements, summary.events);
    let _ = writeln!(md, "| trace hash | `{}` |\n", summary.trace_hash);
}

/// The task rows as the run left them in comms.db.
fn tasks(md: &mut String, dir: &Path) -> Result<()> {
    let _ = writeln!(md, "## Tasks\n\n| task | state | worked_by | retries | completed |\n| --- | --- | --- | --- | --- |");
    let db = super::open_finished_db(&dir.join("comms.db"))?;
    let mut stmt = db.prepare(
        "SELECT task_id, state, coalesce(worked_by, ''), retry_count, coalesce(completed_at, '') FROM orchestration_tasks ORDER BY task_id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, i64>(3)?, r.get::<_, String>(4)?))
    })?;
    for row in rows {
        let (task, state, worked_by, retries, completed) = row?;
        let _ = writeln!(md, "| {task} | {state} | {worked_by} | {retries} | {completed} |");
    }
    Ok(())
}

fn timing(md: &mut String, summary: &RunSummary, scenario: &Scenario) {
    let _ = writeln!(
        md,
        "\n## Timing against budgets\n\n| measurement | n | p50 | p95 | max | budget |\n| --- | --- | --- | --- | --- | --- |"
    );
    for ((name, sample), limit) in summary.measured.named().into_iter().zip(super::budget_limits(scenario)) {
        let shown = |v: i64| measured_text(name, v);
        let (p50, p95, max) =
            quantiles(sample).map_or(("-".to_string(), "-".to_string(), "-".to_string()), |(a, b, c)| (shown(a), shown(b), shown(c)));
        let note = summary.budgets.iter().find(|b| b.name == name).map_or(String::new(), |b| b.derivation_note());
        let _ = writeln!(md, "| {name} | {} | {p50} | {p95} | {max} | {}{note} |", sample.len(), limit.map_or("-".to_string(), shown));
    }
}

/// A measurement's value as a person reads it: a duration for `_ms` (`15.4s`, `9m12s`),
/// whole seconds for `_s`; latency.csv keeps the raw figures.
fn measured_text(name: &str, value: i64) -> String {
    if name.ends_with("_ms") {
        duration(value)
    } else {
        format!("{value} s")
    }
}
