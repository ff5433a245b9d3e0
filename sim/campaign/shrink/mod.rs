//! `rehearsal shrink`: minimizes a failing run while it keeps failing the same way — the same
//! first rule at the same protocol point (`signature.rs`) — and writes the smallest scenario
//! it found. Random crashes and hangs are first written as scripted faults at the points where
//! they struck (`scripted.rs`), so the greedy edits (`candidates.rs`: fewer faults, fewer
//! tasks, shorter plans, shorter time) can drop the ones the failure does not need. The
//! written file keeps the original's `[expect]`: run, it fails as the original did (issue 31:
//! a shrink that declared its side effects expected wrote a file that passed).

mod candidates;
mod scripted;
pub mod signature;

use std::collections::BTreeSet;
use std::path::Path;

use toml::{Table, Value};

use crate::base::error::{Error, Result};
use crate::campaign::failure_file::Failure;
use crate::input::scenario::Scenario;
use crate::plan::faults::Fired;
use crate::plan::RunPlan;
use crate::run::RunSummary;
use crate::vocab::{FaultName, RuleId};
pub use signature::Signature;

/// Every edit is one candidate run; the search stops after this many.
const CANDIDATE_RUNS_MAX: usize = 300;

/// Random keys dropped along with the scripting, in turn, when scripting alone loses the
/// failure: they draw from the faults' stream the random crashes drew from, so without those
/// draws their values shift.
const SCRIPTING_DROPS: [&[&str]; 3] = [&[], &["watcher_jitter_ms"], &["watcher_jitter_ms", "write_hold_ms"]];

pub struct ShrinkReport {
    pub signature: Signature,
    pub events_before: u64,
    pub events_after: u64,
    pub faults_before: usize,
    pub faults_after: usize,
    /// How the random crashes and hangs were handled: scripted (how many), or kept.
    pub scripting: String,
    pub runs: usize,
    pub text: String,
    /// The file written: `--out`'s, or the corpus entry's under `--into`.
    pub written: std::path::PathBuf,
}

/// Where a shrink writes: a file (`--out`), or a new entry of a regression corpus folder
/// (`--into`: the file is named after the failure and carries its fingerprint in `[corpus]`,
/// sim/campaign/corpus.rs).
#[derive(Clone, Copy)]
pub enum Target<'a> {
    File(&'a Path),
    Corpus(&'a Path),
}

/// A corpus entry's file name: `strict-random-faults-seed2-owner-writes-only.toml`.
fn entry_name(failure: &Failure) -> String {
    let stem = Path::new(&failure.scenario).file_stem().map_or_else(|| "scenario".to_string(), |s| s.to_string_lossy().to_string());
    let profile = failure.protocol.as_deref().map_or(String::new(), |p| format!("-{p}"));
    let rule: String = failure.rule.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    format!("{stem}{profile}-seed{}-{rule}.toml", failure.seed)
}

/// The `[faults]` arrays of scripted faults that are not point faults (those are
/// `FaultName::point_sections`).
const OTHER_SCRIPTED_FAULTS: [&str; 8] = [
    "watcher_death",
    "double_launch",
    "missing_session_id",
    "conductor_down",
    "ambiguous_commit",
    "poll_error",
    "dead_heartbeat",
    "early_stop",
];

/// Scripted faults (each entry of every array) and random ones (each odds key) of `table`.
fn faults_in(table: &Table) -> usize {
    let Some(Value::Table(faults)) = table.get("faults") else { return 0 };
    let listed: usize = FaultName::point_sections()
        .chain(OTHER_SCRIPTED_FAULTS)
        .filter_map(|k| faults.get(k))
        .filter_map(Value::as_array)
        .map(Vec::len)
        .sum();
    let random = ["crash_probability", "hang_probability", "context_spike_probability", "watcher_jitter_ms", "write_hold_ms"]
        .iter()
        .filter(|k| faults.contains_key(**k))
        .count();
    listed + random
}

/// What one candidate is run with: everything but its document.
struct Runner<'a> {
    path: &'a Path,
    sql: Option<&'a Path>,
    failure: &'a Failure,
    scratch: &'a Path,
    runs: usize,
}

/// A candidate's run, and the random crashes and hangs that struck in it.
struct Attempt {
    summary: RunSummary,
    fired: Vec<Fired>,
    /// The random odds the run used (drawn from the seed or fixed).
    odds: [(&'static str, f64); 3],
}

impl Runner<'_> {
    /// Runs `table`; `None` when it is no valid scenario or the run errs.
    fn attempt(&mut self, table: &Table) -> Option<Attempt> {
        self.runs += 1;
        let text = toml::to_string(table).ok()?;
        let scenario = Scenario::parse(&text, self.path).ok()?.with_sql(self.sql);
        let mut plan =
            RunPlan::resolve(&scenario, Some(self.failure.seed), &self.failure.variants, Some(self.scratch.to_path_buf())).ok()?;
        let log = plan.faults.record_fired();
        let odds = plan.faults.odds();
        // A candidate is judged by its summary alone: no files (`Keep::Hash`).
        let how = crate::run::Execution { keep: crate::run::Keep::Hash, ..Default::default() };
        let summary = crate::run::execute(plan, how).ok()?.summary;
        Some(Attempt { summary, fired: log.take(), odds })
    }
}

pub fn shrink(failure_path: &Path, target: Target, force: bool) -> Result<ShrinkReport> {
    let failure = Failure::load(failure_path)?;
    let corpus_file = match target {
        Target::Corpus(dir) => Some(dir.join(entry_name(&failure))),
        Target::File(_) => None,
    };
    let out_file = match (target, &corpus_file) {
        (_, Some(file)) => file.as_path(),
        (Target::File(file), None) => file,
        (Target::Corpus(_), None) => unreachable!("a corpus target has its file"),
    };
    let located = failure.locate(failure_path)?;
    let (scenario_path, sql) = (located.scenario, located.sql);
    refuse_out(out_file, force, &[failure_path, &scenario_path, sql.as_deref().unwrap_or(failure_path)])?;
    let text = crate::base::input_file::read_text(&scenario_path, "scenario")?;
    let mut original: Table =
        text.parse().map_err(|e: toml::de::Error| Error::input(format!("{}: {}", scenario_path.display(), e.message())))?;
    // The sweep's `--protocol`, written into the document: every candidate and the shrunk file have it.
    crate::campaign::explore::document::set_profile(&mut original, failure.protocol.as_deref())?;
    // A Ctrl-C (which exits at once, skipping the drop that removes it) removes it too (issue
    // 41): made and tracked in one step.
    let (_live, scratch) = crate::base::live_files::make_tracked(tempfile::tempdir, |dir| vec![dir.path().to_path_buf()])
        .map_err(|e| Error::harness(e.to_string()))?;
    let mut runner = Runner { path: &scenario_path, sql: sql.as_deref(), failure: &failure, scratch: scratch.path(), runs: 0 };
    let base = runner.attempt(&original).ok_or_else(|| Error::harness("the failing scenario does not run".to_string()))?;
    let signature = match Signature::of(&base.summary) {
        Some(signature) if signature.rule == failure.rule => signature,
        _ => {
            return Err(Error::input(format!(
                "{} does not reproduce: saved rule `{}`, this build gives `{}`",
                failure_path.display(),
                failure.rule,
                base.summary.verdict.failure
            )))
        }
    };
    let base_rules: BTreeSet<&'static str> = base.summary.verdict.rules().into_iter().collect();
    let (events_before, faults_before) = (base.summary.events, faults_in(&original));
    let (mut table, mut best, scripting) = script_drawn_faults(&mut runner, &original, base, &signature);
    // Liveness is judged at the end of the run: shortening the run would change the rule.
    let violation_ms = |s: &RunSummary| s.verdict.failing_violation().filter(|v| v.rule != RuleId::Liveness).map(|v| v.t_ms);
    'search: loop {
        for candidate in candidates::candidates(&table, violation_ms(&best)) {
            if runner.runs >= CANDIDATE_RUNS_MAX {
                break 'search;
            }
            let Some(attempt) = runner.attempt(&candidate) else { continue };
            if Signature::of(&attempt.summary).as_ref() == Some(&signature) {
                table = candidate;
                best = attempt.summary;
                continue 'search;
            }
        }
        break;
    }
    let (events_after, faults_after) = (best.events, faults_in(&table));
    let report = ShrinkReport {
        signature,
        events_before,
        events_after,
        faults_before,
        faults_after,
        scripting,
        runs: runner.runs,
        text: String::new(),
        written: out_file.to_path_buf(),
    };
    let table = if corpus_file.is_some() { with_fingerprint(table, &failure, &report.signature)? } else { table };
    let text = written(&failure, &scenario_path, table, &report, &base_rules, &best)?;
    if let Some(parent) = out_file.parent() {
        crate::base::live_files::create_dir_all(parent)?;
    }
    // Again: the file may have appeared while the candidates ran.
    refuse_out(out_file, force, &[])?;
    crate::base::atomic::write_atomically(out_file, text.as_bytes())?;
    Ok(ShrinkReport { text, ..report })
}

/// `table` with the failure's fingerprint as its `[corpus]` table (a corpus entry).
fn with_fingerprint(mut table: Table, failure: &Failure, signature: &Signature) -> Result<Table> {
    let profile = failure.protocol.as_ref().map_or(String::new(), |p| format!(" --protocol {p}"));
    let found = format!("{} seed {}{profile}", failure.scenario, failure.seed);
    let section = crate::campaign::corpus::fingerprint(signature, found);
    table.insert("corpus".to_string(), Value::try_from(section).map_err(|e| Error::harness(e.to_string()))?);
    Ok(table)
}

/// `--out` may not replace an existing file without `force`, nor, ever, one of the failure's
/// own files (`inputs`) or anything not a regular file (issue 41: it overwrote the failure's
/// own scenario).
fn refuse_out(out_file: &Path, force: bool, inputs: &[&Path]) -> Result<()> {
    let same = |input: &Path| match (std::fs::canonicalize(out_file), std::fs::canonicalize(input)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if let Some(input) = inputs.iter().find(|input| same(input)) {
        return Err(Error::input(format!(
            "--out {}: that is the failure's own input ({}); shrink never replaces it, choose another file",
            out_file.display(),
            input.display()
        )));
    }
    match std::fs::symlink_metadata(out_file) {
        Ok(meta) if !meta.is_file() => {
            Err(Error::input(format!("--out {}: exists and is not a regular file; choose another file", out_file.display())))
        }
        Ok(_) if !force => {
            Err(Error::input(format!("--out {}: the file exists; pass --force to replace it, or choose another file", out_file.display())))
        }
        _ => Ok(()),
    }
}

/// The document with the random crashes and hangs of `base`'s run written as scripted
/// faults, if that keeps the failure (dropping, in turn, the keys `SCRIPTING_DROPS` names);
/// else with its drawn odds fixed at what the seed drew: the same run. Its run, and how.
fn script_drawn_faults(runner: &mut Runner, original: &Table, base: Attempt, signature: &Signature) -> (Table, RunSummary, String) {
    if !scripted::has_random_crashes_or_hangs(original) {
        return (original.clone(), base.summary, "no random crashes or hangs".to_string());
    }
    for drop in SCRIPTING_DROPS {
        let Some(candidate) = scripted::scripted(original, &base.fired, drop) else { break };
        let Some(attempt) = runner.attempt(&candidate) else { continue };
        if Signature::of(&attempt.summary).as_ref() == Some(signature) {
            let dropped = if drop.is_empty() { String::new() } else { format!(", without {}", drop.join(" and ")) };
            let how = match base.fired.len() {
                0 => format!("no random crash or hang struck: their odds dropped{dropped}"),
                n => format!("{n} random crash(es)/hang(s) written as scripted faults{dropped}"),
            };
            return (candidate, attempt.summary, how);
        }
    }
    // Drawn odds fixed at their exact values draw the same faults: the run is the same.
    (
        scripted::odds_fixed(original, &base.odds),
        base.summary,
        format!(
            "{} random crash(es)/hang(s) kept random (scripted, the failure changed); drawn odds fixed at this seed's",
            base.fired.len()
        ),
    )
}

/// The shrunk file's text: a header saying how it fails and how it was made, then the
/// document, seeded, with the failure's variants, and its SQL file reachable from anywhere.
fn written(
    failure: &Failure,
    scenario_path: &Path,
    mut table: Table,
    report: &ShrinkReport,
    base_rules: &BTreeSet<&'static str>,
    best: &RunSummary,
) -> Result<String> {
    let run = table.entry("run").or_insert(Value::Table(Table::new())).as_table_mut().expect("run is a table");
    run.insert("seed".to_string(), Value::Integer(failure.seed as i64));
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
    let shown: Vec<&str> = best.verdict.rules().into_iter().filter(|r| base_rules.contains(r)).collect();
    let side_effects: Vec<&str> = best.verdict.rules().into_iter().filter(|r| !base_rules.contains(r)).collect();
    let side_effects = if side_effects.is_empty() {
        String::new()
    } else {
        format!("\n# It also shows {}, which the original run did not: the shrink's side effects, not the flaw.", side_effects.join(", "))
    };
    let header = format!(
        "# Shrunk by `rehearsal shrink` from {} seed {}{}.\n\
         # Run it with `rehearsal run` on this file: it fails as the original did, {}.\n\
         # events {} -> {}, faults {} -> {} ({}), {} candidate runs.\n\
         # To keep it as a regression case that passes while the flaw reproduces, declare under\n\
         # [expect] violations the rules both runs show: {}.{side_effects}\n",
        failure.scenario,
        failure.seed,
        if failure.variants.is_empty() { String::new() } else { format!(" (variants {})", failure.variants.join(", ")) },
        report.signature,
        report.events_before,
        report.events_after,
        report.faults_before,
        report.faults_after,
        report.scripting,
        report.runs,
        shown.join(", "),
    );
    let corpus = if table.contains_key("corpus") {
        "# A regression-corpus entry: `rehearsal corpus` on its folder runs it and checks that it still\n\
         # fails with the fingerprint of [corpus] (rule, statement, actor); see docs/ci.md.\n"
    } else {
        ""
    };
    let body = toml::to_string(&table).map_err(|e| Error::harness(e.to_string()))?;
    Ok(format!("{header}{corpus}{body}"))
}
