//! `--json`: what run, sweep, compare, bench and explore print instead of their text, one
//! JSON object on stdout for scripts — the verdict, the violations, the timings, the paths
//! written, the trace hash and the SQL that ran. Wall-clock times are left out: the object
//! depends only on the inputs.

use std::path::Path;

use serde_json::{json, Value};

use crate::run::RunSummary;
use crate::vocab::RunOutcome;

fn path(p: &Path) -> Value {
    Value::String(p.display().to_string())
}

fn sql(summary: &RunSummary) -> Value {
    json!({ "files": summary.sql.files, "sha256": summary.sql.sha256 })
}

/// One run: `rehearsal run --json`.
pub fn run(summary: &RunSummary) -> Value {
    let violations: Vec<Value> =
        summary.verdict.violations.iter().map(|v| json!({ "t_ms": v.t_ms, "rule": v.rule, "explanation": v.explanation })).collect();
    let mut timings = serde_json::Map::new();
    for (name, sample) in summary.measured.named() {
        if let Some((p50, p95, max)) = crate::judging::oracle::quantiles(sample) {
            let limit = summary.budgets.iter().find(|b| b.name == name);
            let (budget, derived_from) = (limit.map(|b| b.limit), limit.and_then(|b| b.conductor.clone()));
            timings.insert(
                name.to_string(),
                json!({ "n": sample.len(), "p50": p50, "p95": p95, "max": max, "budget": budget, "budget_derived_from": derived_from }),
            );
        }
    }
    json!({
        "command": "run",
        "scenario": summary.resolved.path.display().to_string(),
        "seed": summary.seed,
        "variants": summary.variants,
        "conductor": summary.resolved.conductor_profile,
        "sql": sql(summary),
        "verdict": if summary.verdict.passed() { RunOutcome::Pass } else { RunOutcome::Fail },
        "headline": summary.verdict.headline,
        "violations": violations,
        "timings": timings,
        "tasks": { "total": summary.tasks_total, "complete": summary.tasks_complete },
        "makespan_ms": summary.makespan_ms,
        "statements": summary.statements,
        "events": summary.events,
        "out_dir": path(&summary.out_dir),
        "trace_csv": path(&summary.out_dir.join("trace.csv")),
        "comms_db": path(&summary.out_dir.join("comms.db")),
        "trace_hash": summary.trace_hash,
        "replay": summary.replay,
    })
}

/// A sweep: its counts, its files and every row of results.csv; `rows` stands for the rows,
/// which `print_sweep` writes in its place one at a time.
pub fn sweep(outcome: &crate::campaign::sweep::SweepOutcome, out: &Path, rows: Value) -> Value {
    let totals = &outcome.totals;
    json!({
        "command": "sweep",
        "verdict": outcome.outcome().as_str(),
        "pairs": totals.pairs,
        "planned": outcome.planned,
        "complete": outcome.complete(),
        // `passed` counts clean passes; a pass with violations its scenario allows or
        // expects is `passed_with_known` (issue 25).
        "passed": totals.clean,
        "passed_with_known": totals.known.runs,
        "failed": totals.failed,
        "errors": totals.errors,
        "regressions": outcome.baseline.as_ref().map(|b| b.regressions().count()),
        "results_csv": path(&out.join("results.csv")),
        "junit_xml": path(&out.join("junit.xml")),
        "summary_md": path(&out.join("summary.md")),
        "failures_dir": path(&out.join("failures")),
        "missing_coverage": outcome.missing_coverage.iter().map(|i| i.to_string()).collect::<Vec<_>>(),
        "rows": rows,
    })
}

/// `rehearsal sweep --json`: `sweep`'s object on one line, its rows read back from disk and
/// written a batch at a time, so a sweep of 10^6 pairs never holds them (issue 41): the same
/// bytes as the object made whole.
pub fn print_sweep(outcome: &crate::campaign::sweep::SweepOutcome, out: &Path) -> crate::base::error::Result<()> {
    const PLACE: &str = "rows stand here";
    let text = sweep(outcome, out, Value::String(PLACE.into())).to_string();
    let place = format!("\"rows\":\"{PLACE}\"");
    let (head, tail) = text.split_once(&place).expect("the object holds its rows' place once");
    let mut batch = format!("{head}\"rows\":[");
    outcome.rows.each(|index, row, _| {
        if index > 0 {
            batch.push(',');
        }
        let value = serde_json::to_value(&row).map_err(|e| crate::base::error::Error::harness(format!("--json: {e}")))?;
        batch.push_str(&value.to_string());
        if batch.len() >= 1 << 16 {
            print!("{}", std::mem::take(&mut batch));
        }
        Ok(())
    })?;
    println!("{batch}]{tail}");
    Ok(())
}

/// A grid: its runs by verdict and its files.
pub fn bench(outcome: &crate::campaign::bench::BenchOutcome, out: &Path) -> Value {
    let count = |v: RunOutcome| outcome.runs.iter().filter(|r| r.verdict == v).count();
    json!({
        "command": "bench",
        "points": outcome.points.len(),
        "runs": outcome.runs.len(),
        "planned": outcome.planned,
        "passed": count(RunOutcome::Pass),
        "failed": count(RunOutcome::Fail),
        "errors": count(RunOutcome::Error),
        "bench_csv": path(&outcome.csv),
        "heatmaps": outcome.heatmaps.iter().map(|p| path(p)).collect::<Vec<_>>(),
        "points_dir": path(&out.join("points")),
        "first_failures": outcome.runs.iter().filter(|r| r.verdict != RunOutcome::Pass).take(10).map(|r| json!({ "point": r.point, "seed": r.seed, "verdict": r.verdict, "replay": r.replay })).collect::<Vec<_>>(),
    })
}

/// An exploration: its distinct failures and files.
pub fn explore(exploration: &crate::campaign::explore::Exploration, out: &Path) -> Value {
    let failures: Vec<Value> = exploration
        .failures
        .iter()
        .map(|f| {
            json!({
                "id": f.id,
                "first_violation": f.first_violation,
                "end_states": f.end_states,
                "runs": f.runs,
                "replay_file": path(&out.join("failures").join(format!("{}.toml", f.file_stem()))),
            })
        })
        .collect();
    json!({
        "command": "explore crashes",
        "verdict": exploration.outcome().as_str(),
        "scenario": exploration.scenario,
        "seed": exploration.seed,
        "base_trace_hash": exploration.base_hash,
        "runs": exploration.rows.len(),
        "planned": exploration.planned,
        "complete": exploration.complete(),
        "distinct_failures": failures,
        "explore_csv": path(&out.join("explore.csv")),
        "summary_md": path(&out.join("summary.md")),
    })
}

/// A comparison: its table, the SQL of each column and its folder.
pub fn compare(table: &str, sql_lines: &str, out: &Path) -> Value {
    json!({
        "command": "compare",
        "table_markdown": table,
        "sql": sql_lines.lines().map(str::to_string).collect::<Vec<_>>(),
        "out_dir": path(out),
        "summary_md": path(&out.join("summary.md")),
    })
}
