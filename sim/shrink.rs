//! `rehearsal shrink`: minimizes a failing run while it keeps failing with the same first
//! violation — fewer faults, fewer tasks, shorter plans, shorter time — by greedy edits of
//! the scenario's TOML document, and writes the smallest scenario it found, seeded and with
//! the violation declared as expected, ready to commit under scenarios/regression/.

use std::path::Path;

use toml::{Table, Value};

use crate::error::{Error, Result};
use crate::run::{run_scenario, RunOptions, RunSummary};
use crate::scenario::Scenario;
use crate::sweep::Failure;

/// Every edit is one candidate run; the search stops after this many.
const CANDIDATE_RUNS_MAX: usize = 300;

pub struct ShrinkReport {
    pub rule: String,
    pub events_before: u64,
    pub events_after: u64,
    pub faults_before: usize,
    pub faults_after: usize,
    pub runs: usize,
    pub text: String,
}

fn faults_in(table: &Table) -> usize {
    let Some(Value::Table(faults)) = table.get("faults") else { return 0 };
    let listed: usize = ["crash", "hang", "watcher_death", "double_launch", "missing_session_id", "conductor_down", "conductor_crash"]
        .iter()
        .filter_map(|k| faults.get(*k))
        .filter_map(Value::as_array)
        .map(Vec::len)
        .sum();
    let random = ["crash_probability", "hang_probability", "context_spike_probability", "watcher_jitter_ms", "write_hold_ms"]
        .iter()
        .filter(|k| faults.contains_key(**k))
        .count();
    listed + random
}

/// The rule a run's verdict fails on first ("" when it passes).
fn failing_rule(summary: &RunSummary) -> String {
    summary.verdict.failure.clone()
}

fn attempt(table: &Table, path: &Path, sql: Option<&Path>, seed: u64, variants: &[String], scratch: &Path) -> Option<RunSummary> {
    let text = toml::to_string(table).ok()?;
    let scenario = Scenario::parse(&text, path).ok()?.with_sql(sql);
    let options = RunOptions {
        scenario_path: path.to_path_buf(),
        seed: Some(seed),
        out_dir: Some(scratch.to_path_buf()),
        variants: variants.to_vec(),
    };
    run_scenario(scenario, &options).ok()
}

/// Candidate edits of the document, most reducing first.
fn candidates(table: &Table, violation_ms: Option<i64>) -> Vec<Table> {
    let mut out = Vec::new();
    let with = |edit: &dyn Fn(&mut Table) -> bool| {
        let mut copy = table.clone();
        edit(&mut copy).then_some(copy)
    };
    for (section, key) in [
        ("faults", "crash"),
        ("faults", "hang"),
        ("faults", "watcher_death"),
        ("faults", "double_launch"),
        ("faults", "missing_session_id"),
        ("faults", "conductor_down"),
        ("faults", "conductor_crash"),
        ("conductor", "emergencies"),
        ("conductor", "answers"),
        ("subagents", "script"),
        ("tasks", "custom"),
    ] {
        let len = table.get(section).and_then(|s| s.get(key)).and_then(Value::as_array).map_or(0, Vec::len);
        for index in (0..len).rev() {
            out.extend(with(&|t: &mut Table| {
                let Some(Value::Array(list)) = t.get_mut(section).and_then(|s| s.as_table_mut()).and_then(|s| s.get_mut(key)) else {
                    return false;
                };
                list.remove(index);
                true
            }));
        }
    }
    for key in [
        "crash_probability",
        "hang_probability",
        "context_spike_probability",
        "watcher_jitter_ms",
        "write_hold_ms",
        "hang_ms",
        "context_spike_pct",
    ] {
        out.extend(with(&|t: &mut Table| t.get_mut("faults").and_then(|s| s.as_table_mut()).is_some_and(|s| s.remove(key).is_some())));
    }
    for key in ["count", "steps", "subagents_per_step"] {
        out.extend(with(&|t: &mut Table| {
            let Some(tasks) = t.get_mut("tasks").and_then(|s| s.as_table_mut()) else { return false };
            let current = tasks.get(key).and_then(Value::as_integer).unwrap_or(if key == "count" { 1 } else { 2 });
            if current <= 1 {
                return false;
            }
            tasks.insert(key.to_string(), Value::Integer(current - 1));
            if key == "steps" {
                if let Some(Value::Array(checkpoints)) = tasks.get_mut("checkpoints") {
                    checkpoints.retain(|c| c.as_integer().is_some_and(|c| c < current));
                }
            }
            true
        }));
    }
    if let Some(violation_ms) = violation_ms {
        out.extend(with(&|t: &mut Table| {
            let run = t.entry("run").or_insert(Value::Table(Table::new()));
            let Some(run) = run.as_table_mut() else { return false };
            let limit = violation_ms + 60_000;
            if run.get("sim_time_max_ms").and_then(Value::as_integer).is_some_and(|v| v <= limit) {
                return false;
            }
            run.insert("sim_time_max_ms".to_string(), Value::Integer(limit));
            true
        }));
    }
    out
}

pub fn shrink(failure_path: &Path, out_file: &Path) -> Result<ShrinkReport> {
    let failure = Failure::load(failure_path)?;
    let located = failure.locate(failure_path)?;
    let (scenario_path, sql) = (located.scenario, located.sql);
    let text = std::fs::read_to_string(&scenario_path).map_err(|e| Error::input(format!("{}: {e}", scenario_path.display())))?;
    let mut table: Table =
        text.parse().map_err(|e: toml::de::Error| Error::input(format!("{}: {}", scenario_path.display(), e.message())))?;
    // The sweep's `--protocol`, written into the document: every candidate and the shrunk file have it.
    crate::explore::document::set_profile(&mut table, failure.protocol.as_deref())?;
    let scratch = tempfile::tempdir().map_err(|e| Error::harness(e.to_string()))?;
    let baseline = attempt(&table, &scenario_path, sql.as_deref(), failure.seed, &failure.variants, scratch.path())
        .ok_or_else(|| Error::harness("the failing scenario does not run".to_string()))?;
    let rule = failing_rule(&baseline);
    if rule.is_empty() || rule != failure.rule {
        return Err(Error::input(format!(
            "{} does not reproduce: saved rule `{}`, this build gives `{rule}`",
            failure_path.display(),
            failure.rule
        )));
    }
    let (events_before, faults_before) = (baseline.events, faults_in(&table));
    let mut best = baseline;
    let mut runs = 1;
    // Liveness is judged at the end of the run: shortening the run would change the rule.
    let violation_ms =
        |s: &RunSummary| s.verdict.violations.iter().find(|v| v.rule != "liveness" && !rule.starts_with("liveness")).map(|v| v.t_ms);
    'search: loop {
        for candidate in candidates(&table, violation_ms(&best)) {
            if runs >= CANDIDATE_RUNS_MAX {
                break 'search;
            }
            runs += 1;
            let Some(summary) = attempt(&candidate, &scenario_path, sql.as_deref(), failure.seed, &failure.variants, scratch.path()) else {
                continue;
            };
            if failing_rule(&summary) == rule {
                table = candidate;
                best = summary;
                continue 'search;
            }
        }
        break;
    }
    // Seeded, with the rule declared expected: it passes while the flaw reproduces exactly.
    let first_rule = best.verdict.violations.iter().find(|v| rule.starts_with(v.rule)).map_or(rule.clone(), |v| v.rule.to_string());
    let run = table.entry("run").or_insert(Value::Table(Table::new())).as_table_mut().expect("run is a table");
    run.insert("seed".to_string(), Value::Integer(failure.seed as i64));
    let rules: Vec<Value> = best.verdict.rules().iter().map(|r| Value::String(r.to_string())).collect();
    let mut expect = Table::new();
    expect.insert("violations".to_string(), Value::Array(rules));
    table.insert("expect".to_string(), Value::Table(expect));
    if !failure.variants.is_empty() {
        let protocol = table.entry("protocol").or_insert(Value::Table(Table::new())).as_table_mut().expect("protocol is a table");
        protocol.insert("variants".to_string(), Value::Array(failure.variants.iter().map(|v| Value::String(v.clone())).collect()));
    }
    if let Some(sql) = table.get_mut("protocol").and_then(|p| p.as_table_mut()).and_then(|p| p.get_mut("sql")) {
        // Keep the SQL override reachable from the new file's folder.
        let original = scenario_path.parent().unwrap_or(Path::new(".")).join(sql.as_str().unwrap_or(""));
        let absolute = std::fs::canonicalize(&original).unwrap_or(original);
        *sql = Value::String(absolute.display().to_string());
    }
    let (events_after, faults_after) = (best.events, faults_in(&table));
    let header = format!(
        "# Shrunk by `rehearsal shrink` from {} seed {}{}: first violation `{first_rule}`.\n# events {events_before} -> {events_after}, faults {faults_before} -> {faults_after}, {runs} candidate runs.\n# Run it with `rehearsal run` on this file: it passes while the violation reproduces.\n",
        failure.scenario,
        failure.seed,
        if failure.variants.is_empty() { String::new() } else { format!(" (variants {})", failure.variants.join(", ")) },
    );
    let body = toml::to_string(&table).map_err(|e| Error::harness(e.to_string()))?;
    let text = format!("{header}{body}");
    if let Some(parent) = out_file.parent() {
        std::fs::create_dir_all(parent)?;
    }
    crate::atomic::write_atomically(out_file, text.as_bytes())?;
    Ok(ShrinkReport { rule, events_before, events_after, faults_before, faults_after, runs, text })
}
