//! `rehearsal compare`: the same seeds under several protocol variants, side by side —
//! pass/fail counts, violations by rule, timing quantiles, and in how many runs the variant's
//! comms.db differs from the first variant's on the same seed. A variant that changes
//! nothing a rule or a timing sees can still change what the protocol writes, and one that
//! changes only the oracle's reading leaves the database as it was: the column tells which.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::base::error::{Error, Result};
use crate::judging::oracle::quantiles;
use crate::run::{run_scenario, RunOptions};
use crate::vocab::RunOutcome;

/// A compared run's verdict with its known violations told apart: compare runs the scenario
/// itself, so a harness error stops the comparison and is no row's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grade {
    /// Passed with no violation.
    Pass,
    /// Passed with violations the scenario allows or expects.
    Known,
    Fail,
}

impl Grade {
    pub const ALL: [Grade; 3] = [Grade::Pass, Grade::Known, Grade::Fail];

    pub fn as_str(self) -> &'static str {
        match self {
            Grade::Pass => "pass",
            Grade::Known => "known",
            Grade::Fail => "fail",
        }
    }

    /// The grade of a judged run: its outcome (never `Error`), and whether it broke a rule.
    fn of(outcome: RunOutcome, clean: bool) -> Grade {
        match (outcome, clean) {
            (RunOutcome::Pass, true) => Grade::Pass,
            (RunOutcome::Pass, false) => Grade::Known,
            _ => Grade::Fail,
        }
    }
}

crate::vocab::word::word_traits!(Grade, "compare verdict");

/// Parses `A..B` (B excluded), `A..=B` or a single seed, in decimal.
pub fn parse_seeds(text: &str) -> Result<Vec<u64>> {
    crate::base::seed_set::SeedSet::parse(text)?.to_vec("--seeds")
}

/// The line a command prints before it runs a seed range: how many seeds, from which to
/// which, and for `A..B` that B is left out (`1..20` runs 19 seeds). `None` for one seed.
pub fn describe_seeds(text: &str, seeds: &crate::base::seed_set::SeedSet) -> Option<String> {
    let (first, last) = (seeds.nth(0)?, seeds.nth(seeds.len().checked_sub(1)?)?);
    if text.starts_with("night:") {
        return Some(format!("--seeds {text}: {} seed(s), {first} to {last} (this date's own interval)", seeds.len()));
    }
    if !text.contains("..") {
        return None;
    }
    let note = if text.contains("..=") { "" } else { " (A..B leaves B out; write A..=B to run it too)" };
    Some(format!("--seeds {text}: {} seed(s), {first} to {last}{note}", seeds.len()))
}

#[derive(Default)]
struct Row {
    runs: usize,
    /// Runs that passed with no violation.
    passed: usize,
    /// Runs that passed with violations their scenario allows or expects: not `passed`.
    known: usize,
    /// Per rule: runs showing it, and violations in all.
    rules: BTreeMap<&'static str, (usize, usize)>,
    /// Runs whose comms.db differs from the first variant's run of the same seed.
    db_differs: usize,
    samples: BTreeMap<&'static str, Vec<i64>>,
    /// The SQL the column ran (`SqlIdentity`).
    sql: String,
}

/// A column that names a protocol SQL file rather than a variant.
pub fn is_sql_file(column: &str) -> bool {
    column.ends_with(".sql")
}

/// A column that names a protocol profile (`repaired`, `seeds`): the profile in place of
/// the scenario's own (or `--protocol`), no variant added (issue 44).
pub fn is_profile(column: &str) -> bool {
    !is_sql_file(column) && crate::vocab::find_profile(column).is_some()
}

/// What was in force in a column: its profile, its variant or SQL file (the table's last
/// column, so a `default` under `--protocol repaired` says so).
fn in_force(column: &str, profile: &str) -> String {
    if is_profile(column) {
        format!("profile {column}")
    } else if is_sql_file(column) {
        format!("profile {profile}, SQL {column}")
    } else if column == "default" {
        format!("profile {profile}")
    } else {
        format!("profile {profile} + variant {column}")
    }
}

/// The run folders' prefix of a column: a SQL file's stem, a variant's name.
fn column_folder(column: &str) -> String {
    if is_sql_file(column) {
        let stem = Path::new(column).file_stem().and_then(|s| s.to_str()).unwrap_or("sql");
        format!("sql-{stem}")
    } else {
        column.to_string()
    }
}

/// A comparison's folder (sim/campaign/folder.rs): what it writes there besides its run
/// folders (`--keep-runs`) and what every campaign does.
fn folder_spec(out: &Path, force: bool) -> crate::campaign::FolderSpec<'_> {
    crate::campaign::FolderSpec {
        name: "compare",
        out,
        owned: &["summary.md", "compare.csv"],
        folders: &[],
        journal: None,
        force,
        scratch: None,
    }
}

/// What `rehearsal compare` is asked.
pub struct CompareOptions<'a> {
    pub scenario: &'a Path,
    /// Columns: variant names, `default`, or protocol SQL files (names ending `.sql`).
    pub columns: &'a [String],
    pub seeds: &'a [u64],
    pub out: &'a Path,
    /// Replace what the folder holds (refused without it).
    pub force: bool,
    /// The SQL every column but a SQL file's layers over the scenario's (`--sql`).
    pub sql: Option<&'a Path>,
    /// The protocol profile (`--protocol`), over the scenario's own `[protocol] profile`.
    pub protocol: Option<&'a str>,
    /// The conductor profile (`--conductor`), over the scenario's own `[conductor] profile`.
    pub conductor: Option<&'a str>,
    pub jobs: usize,
    /// Keep every run's folder under `out` (`<column>-<seed>/`); without it runs are made in a
    /// scratch folder and removed (300 runs of random-faults kept were 191 MB; issue 31).
    pub keep_runs: bool,
}

/// One row of compare.csv: one run, a (column, seed) pair.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct SeedRow {
    pub column: String,
    pub seed: u64,
    /// `pass`, `known` (passed with violations the scenario allows or expects) or `fail`.
    pub verdict: Grade,
    /// The verdict's failure: the first unexpected rule, or the expected ones missing.
    pub failure: String,
    /// Rules violated, sorted, `;` between.
    pub rules: String,
    pub violations: usize,
    /// Whether comms.db differs byte for byte from the first column's run of the same seed.
    pub db_differs: bool,
    pub tasks_complete: usize,
    pub tasks_total: usize,
    pub makespan_ms: i64,
    pub statements: u64,
    /// p50 of the run's message notices and crash detections (empty: none measured).
    pub message_notice_p50_ms: Option<i64>,
    pub crash_detect_p50_ms: Option<i64>,
    pub trace_hash: String,
}

/// What one run gives the table besides its compare.csv row.
struct Run {
    row: SeedRow,
    db: [u8; 32],
    rule_counts: Vec<(&'static str, usize)>,
    samples: Vec<(&'static str, Vec<i64>)>,
    sql: String,
}

/// Runs `(column, seed)` in `dir` and reads what the table and compare.csv need.
fn run_pair(options: &CompareOptions, loaded: &crate::input::scenario::Scenario, column: &str, seed: u64, dir: &Path) -> Result<Run> {
    let column_sql = if is_sql_file(column) { Some(Path::new(column)) } else { options.sql };
    let applied = if column == "default" || is_sql_file(column) || is_profile(column) { Vec::new() } else { vec![column.to_string()] };
    let profiled;
    let loaded = if is_profile(column) {
        profiled =
            crate::input::scenario::Scenario::load(options.scenario)?.with_profile(Some(column))?.with_conductor(options.conductor)?;
        &profiled
    } else {
        loaded
    };
    let run_options =
        RunOptions { scenario_path: options.scenario.to_path_buf(), seed: Some(seed), out_dir: Some(dir.to_path_buf()), variants: applied };
    let summary = run_scenario(loaded.with_sql(column_sql), &run_options)?;
    let db = file_sha256(&dir.join("comms.db"))?;
    let verdict = &summary.verdict;
    let clean = verdict.violations.is_empty();
    let p50 = |name: &str| summary.measured.named().into_iter().find(|(n, _)| *n == name).and_then(|(_, s)| quantiles(s)).map(|q| q.0);
    let mut rule_counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    verdict.violations.iter().for_each(|v| *rule_counts.entry(v.rule.as_str()).or_default() += 1);
    let row = SeedRow {
        column: column.to_string(),
        seed,
        verdict: Grade::of(if verdict.passed() { RunOutcome::Pass } else { RunOutcome::Fail }, clean),
        failure: verdict.failure.clone(),
        rules: verdict.rules().join(";"),
        violations: verdict.violations.len(),
        db_differs: false,
        tasks_complete: summary.tasks_complete,
        tasks_total: summary.tasks_total,
        makespan_ms: summary.makespan_ms,
        statements: summary.statements,
        message_notice_p50_ms: p50("message_notice_ms"),
        crash_detect_p50_ms: p50("crash_detect_ms"),
        trace_hash: summary.trace_hash.clone(),
    };
    let samples = summary.measured.named().into_iter().map(|(n, s)| (n, s.to_vec())).collect();
    Ok(Run { row, db, rule_counts: rule_counts.into_iter().collect(), samples, sql: summary.sql.to_string() })
}

/// Runs every (column, seed) pair, `jobs` at a time, and returns the table. A column is a
/// variant name, `default` (the scenario as it is), or a protocol SQL file (a name ending
/// `.sql`: its entries layer over the scenario's SQL, as `--sql` does, in `--sql`'s place).
/// A folder holding anything is refused unless `force`, which clears the earlier results.
/// Writes summary.md and compare.csv (a row per run, in column then seed order: the same
/// for any `jobs`). Returns the table and, a line per column, the SQL it ran.
pub fn compare(options: &CompareOptions) -> Result<(String, String)> {
    compare_judged(options).map(|(table, sql, _)| (table, sql))
}

/// `compare`, and whether any run failed (a pass with violations its scenario allows is no
/// failure): what makes `rehearsal compare` exit 1 (issue 44).
pub fn compare_judged(options: &CompareOptions) -> Result<(String, String, bool)> {
    let out = options.out;
    let loaded =
        crate::input::scenario::Scenario::load(options.scenario)?.with_profile(options.protocol)?.with_conductor(options.conductor)?;
    let campaign = crate::campaign::Campaign::open(&folder_spec(out, options.force))?;
    let pairs: Vec<(&String, u64)> = options.columns.iter().flat_map(|c| options.seeds.iter().map(move |s| (c, *s))).collect();
    let run = |(column, seed): &(&String, u64)| {
        let name = format!("{}-{seed}", column_folder(column));
        let dir = if options.keep_runs { out.join(&name) } else { campaign.scratch().join(&name) };
        let run = run_pair(options, &loaded, column, *seed, &dir);
        if !options.keep_runs {
            let _ = std::fs::remove_dir_all(&dir);
        }
        run
    };
    let panicked = |_: &(&String, u64), panic: &str| Err(Error::harness(format!("a run panicked: {panic}")));
    let results = crate::campaign::map(options.jobs, &pairs, run, panicked, || false, |_, _| {});
    let mut runs = Vec::with_capacity(results.len());
    for result in results {
        match result {
            Some(run) => runs.push(run?),
            None => return Err(Error::harness("interrupted".to_string())),
        }
    }
    // The first column's database of each seed is what the others are compared with.
    let mut first_db: BTreeMap<u64, [u8; 32]> = BTreeMap::new();
    for run in &mut runs {
        run.row.db_differs = *first_db.entry(run.row.seed).or_insert(run.db) != run.db;
    }
    let rows: Vec<(String, Row)> =
        options.columns.iter().map(|c| (c.clone(), column_row(runs.iter().filter(|r| r.row.column == *c)))).collect();
    // A conductor other than the default is in force in every column, and the table says so.
    let in_force_label = if loaded.conductor_profile == crate::input::conductor_profile::DEFAULT_CONDUCTOR {
        loaded.profile.clone()
    } else {
        format!("{}, conductor {}", loaded.profile, loaded.conductor_profile)
    };
    let table = render_table(&rows, options.columns.first().map_or("", String::as_str), &in_force_label);
    let failed = runs.iter().any(|r| r.row.verdict == Grade::Fail);
    // Which SQL each column ran: the files and the hash of the statements.
    let sql_lines: String = rows.iter().map(|(name, row)| format!("- `{name}`: {}\n", row.sql)).collect();
    let md = format!(
        "# Comparison: {}\n\nSeeds {:?}; one row per run in `compare.csv`.\n\n{table}\nProtocol SQL of each column:\n\n{sql_lines}",
        options.scenario.display(),
        options.seeds
    );
    crate::base::atomic::write_atomically(&out.join("summary.md"), md.as_bytes())?;
    crate::base::csv_rows::write_rows(&out.join("compare.csv"), &runs.iter().map(|r| r.row.clone()).collect::<Vec<_>>())?;
    Ok((table, sql_lines, failed))
}

/// A column's line of the table, from its runs.
fn column_row<'a>(runs: impl Iterator<Item = &'a Run>) -> Row {
    let mut row = Row::default();
    for run in runs {
        row.sql = run.sql.clone();
        row.runs += 1;
        row.passed += usize::from(run.row.verdict == Grade::Pass);
        row.known += usize::from(run.row.verdict == Grade::Known);
        row.db_differs += usize::from(run.row.db_differs);
        for (rule, count) in &run.rule_counts {
            let entry = row.rules.entry(rule).or_insert((0, 0));
            entry.0 += 1;
            entry.1 += count;
        }
        for (name, sample) in &run.samples {
            row.samples.entry(name).or_default().extend(sample.iter().copied());
        }
    }
    row
}

fn render_table(rows: &[(String, Row)], first: &str, profile: &str) -> String {
    let mut table = String::new();
    let _ = writeln!(table, "| variant | runs | pass | pass with known violations | fail | violations: runs showing each rule (violations in all) | comms.db unlike `{first}` | message notice p50/p95 ms | crash detect p50/p95 ms | heartbeat age max s | in force |");
    let _ = writeln!(table, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for (name, row) in rows {
        let rules = if row.rules.is_empty() {
            "none".to_string()
        } else {
            row.rules.iter().map(|(r, (runs, all))| format!("{r} ×{runs} ({all})")).collect::<Vec<_>>().join(", ")
        };
        let q = |metric: &str| {
            row.samples.get(metric).and_then(|s| quantiles(s)).map_or("-".to_string(), |(p50, p95, _)| format!("{p50} / {p95}"))
        };
        let age = row.samples.get("heartbeat_age_s").and_then(|s| quantiles(s)).map_or("-".to_string(), |(_, _, max)| max.to_string());
        let _ = writeln!(
            table,
            "| {name} | {} | {} | {} | {} | {rules} | {} | {} | {} | {age} | {} |",
            row.runs,
            row.passed,
            row.known,
            row.runs - row.passed - row.known,
            row.db_differs,
            q("message_notice_ms"),
            q("crash_detect_ms"),
            in_force(name, profile)
        );
    }
    table
}

fn file_sha256(path: &Path) -> Result<[u8; 32]> {
    use sha2::{Digest, Sha256};
    let bytes = std::fs::read(path).map_err(|e| Error::harness(format!("cannot read {}: {e}", path.display())))?;
    Ok(Sha256::digest(bytes).into())
}

pub fn default_out(scenario: &Path) -> PathBuf {
    let stem = scenario.file_stem().and_then(|s| s.to_str()).unwrap_or("scenario");
    PathBuf::from("reports/compare").join(stem)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grade_tells_known_violations_apart_and_reads_back_only_its_own_words() {
        assert_eq!(Grade::of(RunOutcome::Pass, true), Grade::Pass);
        assert_eq!(Grade::of(RunOutcome::Pass, false), Grade::Known);
        assert_eq!(Grade::of(RunOutcome::Fail, false), Grade::Fail);
        crate::vocab::word::check::round_trips::<Grade>("error");
    }

    #[test]
    fn seed_ranges_parse_or_are_refused() {
        assert_eq!(parse_seeds("7").unwrap(), vec![7]);
        assert_eq!(parse_seeds("1..4").unwrap(), vec![1, 2, 3]);
        assert_eq!(parse_seeds("1..=3").unwrap(), vec![1, 2, 3]);
        for bad in ["", "4..1", "3..3", "a..b", "-1..3", "1..=x"] {
            assert!(parse_seeds(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_seed_range_says_how_many_it_runs_and_that_a_half_open_one_leaves_its_end_out() {
        let line = |text: &str| describe_seeds(text, &crate::base::seed_set::SeedSet::parse(text).unwrap());
        assert_eq!(line("1..20").unwrap(), "--seeds 1..20: 19 seed(s), 1 to 19 (A..B leaves B out; write A..=B to run it too)");
        assert_eq!(line("1..=20").unwrap(), "--seeds 1..=20: 20 seed(s), 1 to 20");
        assert_eq!(line("7"), None);
    }
}
