//! `rehearsal compare`: the same seeds under several protocol variants, side by side —
//! pass/fail counts, violations by rule, timing quantiles, and in how many runs the variant's
//! comms.db differs from the first variant's on the same seed. A variant that changes
//! nothing a rule or a timing sees can still change what the protocol writes, and one that
//! changes only the oracle's reading leaves the database as it was: the column tells which.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::oracle::quantiles;
use crate::run::{run_scenario, RunOptions};

/// Parses `A..B` (B excluded), `A..=B` or a single seed, in decimal.
pub fn parse_seeds(text: &str) -> Result<Vec<u64>> {
    let bad = || Error::input(format!("seed range `{text}`: expected N, A..B or A..=B with A < B (decimal)"));
    let (range, inclusive) = match (text.split_once("..="), text.split_once("..")) {
        (Some(r), _) => (Some(r), true),
        (None, Some(r)) => (Some(r), false),
        (None, None) => (None, false),
    };
    let Some((a, b)) = range else {
        return Ok(vec![text.trim().parse().map_err(|_| bad())?]);
    };
    let (a, b): (u64, u64) = (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
    let end = if inclusive { b.checked_add(1).ok_or_else(bad)? } else { b };
    if a >= end {
        return Err(bad());
    }
    Ok((a..end).collect())
}

/// The line a command prints before it runs a seed range: how many seeds, from which to
/// which, and for `A..B` that B is left out (`1..20` runs 19 seeds). `None` for one seed.
pub fn describe_seeds(text: &str, seeds: &[u64]) -> Option<String> {
    let (first, last) = (seeds.first()?, seeds.last()?);
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

/// The run folders' prefix of a column: a SQL file's stem, a variant's name.
fn column_folder(column: &str) -> String {
    if is_sql_file(column) {
        let stem = Path::new(column).file_stem().and_then(|s| s.to_str()).unwrap_or("sql");
        format!("sql-{stem}")
    } else {
        column.to_string()
    }
}

/// What a comparison writes into its folder besides its run folders (sim/out_folder.rs).
const OWNED: crate::out_folder::Owned = &["summary.md"];

/// Runs every (column, seed) pair and returns the table. A column is a variant name,
/// `default` (the scenario as it is), or a protocol SQL file (a name ending `.sql`: its
/// entries layer over the scenario's SQL, as `--sql` does, in `--sql`'s place); `sql` is the
/// SQL every other column layers over the scenario's. A folder holding anything is refused unless `force`, which clears the
/// earlier runs.
/// Returns the table and, a line per column, the SQL it ran.
pub fn compare(
    scenario: &Path,
    variants: &[String],
    seeds: &[u64],
    out: &Path,
    force: bool,
    sql: Option<&Path>,
    protocol: Option<&str>,
) -> Result<(String, String)> {
    let loaded = crate::scenario::Scenario::load(scenario)?.with_profile(protocol)?;
    crate::out_folder::claim(out, OWNED, force)?;
    let mut rows: Vec<(String, Row)> = Vec::new();
    let mut baseline_db: BTreeMap<u64, [u8; 32]> = BTreeMap::new();
    for variant in variants {
        let mut row = Row::default();
        let column_sql = if is_sql_file(variant) { Some(Path::new(variant.as_str())) } else { sql };
        let folder = column_folder(variant);
        for seed in seeds {
            let applied = if variant == "default" || is_sql_file(variant) { Vec::new() } else { vec![variant.clone()] };
            let options = RunOptions {
                scenario_path: scenario.to_path_buf(),
                seed: Some(*seed),
                out_dir: Some(out.join(format!("{folder}-{seed}"))),
                variants: applied,
            };
            let summary = run_scenario(loaded.with_sql(column_sql), &options)?;
            row.sql = summary.sql.to_string();
            row.runs += 1;
            let clean = summary.verdict.violations.is_empty();
            row.passed += usize::from(summary.verdict.passed() && clean);
            row.known += usize::from(summary.verdict.passed() && !clean);
            for rule in summary.verdict.rules() {
                row.rules.entry(rule).or_insert((0, 0)).0 += 1;
            }
            for violation in &summary.verdict.violations {
                row.rules.entry(violation.rule).or_insert((0, 0)).1 += 1;
            }
            let db = file_sha256(&out.join(format!("{folder}-{seed}")).join("comms.db"))?;
            row.db_differs += usize::from(*baseline_db.entry(*seed).or_insert(db) != db);
            for (name, sample) in summary.measured.named() {
                row.samples.entry(name).or_default().extend(sample.iter().copied());
            }
        }
        rows.push((variant.clone(), row));
    }
    let mut table = String::new();
    let first = variants.first().map_or("", String::as_str);
    let _ = writeln!(table, "| variant | runs | pass | pass with known violations | fail | violations: runs showing each rule (violations in all) | comms.db unlike `{first}` | message notice p50/p95 ms | crash detect p50/p95 ms | heartbeat age max s |");
    let _ = writeln!(table, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for (name, row) in &rows {
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
            "| {name} | {} | {} | {} | {} | {rules} | {} | {} | {} | {age} |",
            row.runs,
            row.passed,
            row.known,
            row.runs - row.passed - row.known,
            row.db_differs,
            q("message_notice_ms"),
            q("crash_detect_ms")
        );
    }
    // Which SQL each column ran: the files and the hash of the statements.
    let sql_lines: String = rows.iter().map(|(name, row)| format!("- `{name}`: {}\n", row.sql)).collect();
    std::fs::create_dir_all(out)?;
    let md = format!("# Comparison: {}\n\nSeeds {:?}.\n\n{table}\nProtocol SQL of each column:\n\n{sql_lines}", scenario.display(), seeds);
    std::fs::write(out.join("summary.md"), md)?;
    Ok((table, sql_lines))
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
        let line = |text: &str| describe_seeds(text, &parse_seeds(text).unwrap());
        assert_eq!(line("1..20").unwrap(), "--seeds 1..20: 19 seed(s), 1 to 19 (A..B leaves B out; write A..=B to run it too)");
        assert_eq!(line("1..=20").unwrap(), "--seeds 1..=20: 20 seed(s), 1 to 20");
        assert_eq!(line("7"), None);
    }
}
