//! Baselines (issue 25): a committed text file saying how each (scenario, variant, seed) pair
//! of a suite ended — its verdict and every rule its run violated — so CI fails on a *new*
//! failure only. `sweep --baseline FILE` and `merge --baseline FILE` judge their result rows
//! against it with `compare`, a pure function of the rows and the file; `--bless` writes it.
//!
//! The file, one pair a line, sorted, `#` comments and blank lines ignored:
//!
//! ```text
//! quickstart.toml default 3 pass -
//! faults/random-faults.toml default 1 fail budget,messages-seen-once
//! ```
//!
//! Fields are separated by spaces: the scenario's path **relative to the baseline file's
//! folder** (so neither the current folder nor where the checkout is changes a line), the
//! variant label of results.csv (`default`, or the `--variant`s joined by `+`), the seed, the
//! verdict (`pass` or `fail`) and the violated rules, sorted and joined by commas (`-` for none;
//! a pass may list rules its scenario allows or expects).
//!
//! A pair **regresses** when it passed in the baseline and fails now, fails with a rule its line
//! lacks, or fails and has no line. It **improves** when its baselined failure now passes or
//! fails with fewer rules. Anything else is as known.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use crate::base::error::{Error, Result};
use crate::vocab::RunOutcome;

/// The separator of rules in results.csv's `rules` column and in a baseline line.
pub const RULE_SEPARATOR: char = ',';

/// A pair's result as a baseline reads it: the fields of a results.csv row
/// (`sweep::ResultRow::outcome` gives it), so this file imports no command.
#[derive(Clone, Copy, Debug)]
pub struct Outcome<'a> {
    /// The scenario as the sweep's command line named it (relative to the current folder).
    pub scenario: &'a str,
    pub variant: &'a str,
    pub seed: u64,
    pub verdict: RunOutcome,
    /// Every violated rule, sorted.
    pub rules: &'a [String],
    pub first_violation: &'a str,
}

/// A pair as a baseline names it: scenario (relative to the baseline's folder), variant, seed.
pub type Key = (String, String, u64);

/// How a pair ended: `pass` or `fail`, and every rule its run violated (sorted).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub passed: bool,
    pub rules: BTreeSet<String>,
    /// A `fail` failure mode only: the nights in a row, up to the last recorded one, in which
    /// no pair of its scenario failed (`passed-nights=K`, sim/campaign/baseline_expiry.rs).
    pub passed_nights: u64,
}

impl Entry {
    fn rules_text(&self) -> String {
        if self.rules.is_empty() {
            "-".to_string()
        } else {
            self.rules.iter().map(String::as_str).collect::<Vec<_>>().join(&RULE_SEPARATOR.to_string())
        }
    }

    fn describe(&self) -> String {
        format!("{} {}", if self.passed { "pass" } else { "fail" }, self.rules_text())
    }
}

/// A baseline file's entries by pair, and its failure modes: lines whose seed is `*` (issue
/// 44), how a (scenario, variant) may fail on any seed without a line of its own — what a
/// nightly lane, which sweeps new seeds every night, is judged against.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Baseline {
    pub entries: BTreeMap<Key, Entry>,
    pub modes: BTreeMap<(String, String), Entry>,
}

/// A seed field that stands for every seed: a failure-mode line.
pub const ANY_SEED: &str = "*";

/// The rules of results.csv's `rules` column, as a set.
pub fn split_rules(text: &str) -> BTreeSet<String> {
    text.split(RULE_SEPARATOR).map(str::trim).filter(|r| !r.is_empty()).map(str::to_string).collect()
}

impl Baseline {
    /// Reads FILE; a line that is not `scenario variant seed pass|fail rules` is bad input
    /// naming `FILE:LINE`.
    pub fn load(path: &Path) -> Result<Baseline> {
        if !path.exists() {
            return Err(Error::input(format!("{}: no such baseline file (write one with --bless)", path.display())));
        }
        let text = crate::base::input_file::read_text(path, "baseline file")?;
        Baseline::parse(&text, &path.display().to_string())
    }

    pub fn parse(text: &str, name: &str) -> Result<Baseline> {
        let mut entries = BTreeMap::new();
        let mut modes = BTreeMap::new();
        for (index, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let at = || format!("{name}:{}", index + 1);
            let (key, entry) = parse_line(line).map_err(|why| Error::input(format!("{}: {why}: `{line}`", at())))?;
            let Some(seed) = key.2 else {
                if modes.insert((key.0.clone(), key.1.clone()), entry).is_some() {
                    return Err(Error::input(format!("{}: failure mode {} {} * listed twice", at(), key.0, key.1)));
                }
                continue;
            };
            let key = (key.0, key.1, seed);
            if entries.insert(key.clone(), entry).is_some() {
                return Err(Error::input(format!("{}: pair {} {} seed {} listed twice", at(), key.0, key.1, key.2)));
            }
        }
        Ok(Baseline { entries, modes })
    }

    /// The line of a pair: its own, else its scenario's failure mode (and whether it is one).
    fn line_of(&self, key: &Key) -> Option<(&Entry, bool)> {
        match self.entries.get(key) {
            Some(entry) => Some((entry, false)),
            None => self.modes.get(&(key.0.clone(), key.1.clone())).map(|entry| (entry, true)),
        }
    }

    /// The file's text: a header saying how to read it, then one line per pair, sorted.
    pub fn render(&self) -> String {
        let mut text = String::from(
            "# rehearsal baseline (README: Baselines): one pair a line — scenario (relative to this file's folder),\n\
             # variant, seed, verdict, violated rules (sorted, comma-separated; - for none). Written by\n\
             # `rehearsal sweep … --baseline FILE --bless`: review its diff like code.\n",
        );
        for ((scenario, variant, seed), entry) in &self.entries {
            let _ = writeln!(text, "{scenario} {variant} {seed} {}", entry.describe());
        }
        if !self.modes.is_empty() {
            text.push_str("# A seed of `*` is a failure mode: how any seed of the scenario may fail, for seeds no line names\n# (`rehearsal merge … --baseline FILE --bless-modes`; a nightly lane's new seeds are judged by it).\n");
        }
        for ((scenario, variant), entry) in &self.modes {
            let nights = if entry.passed_nights > 0 { format!(" {NIGHTS_FIELD}{}", entry.passed_nights) } else { String::new() };
            let _ = writeln!(text, "{scenario} {variant} {ANY_SEED} {}{nights}", entry.describe());
        }
        text
    }

    /// The baseline of some rows, keyed relative to `folder` (the baseline file's). A path
    /// with white space cannot be a field of the file: bad input.
    pub fn of_rows(rows: &[Outcome], folder: &Path) -> Result<Baseline> {
        let keys = rows.iter().map(|row| key_of(row, folder)).collect::<Result<Vec<Key>>>()?;
        Baseline::of_keyed(rows, &keys)
    }

    /// The baseline of some rows under the keys given (`merge` finds them by content hash).
    pub fn of_keyed(rows: &[Outcome], keys: &[Key]) -> Result<Baseline> {
        let mut entries = BTreeMap::new();
        for (row, key) in rows.iter().zip(keys) {
            if row.verdict == RunOutcome::Error {
                return Err(Error::harness(format!(
                    "not blessed: {} seed {} ended in a harness error ({}); a baseline records verdicts only",
                    row.scenario, row.seed, row.first_violation
                )));
            }
            let key = key.clone();
            if key.0.contains(char::is_whitespace) || key.1.contains(char::is_whitespace) {
                return Err(Error::input(format!("{}: a baseline cannot name a path with white space", row.scenario)));
            }
            entries.insert(
                key,
                Entry { passed: row.verdict == RunOutcome::Pass, rules: row.rules.iter().cloned().collect(), passed_nights: 0 },
            );
        }
        Ok(Baseline { entries, modes: BTreeMap::new() })
    }

    /// The failure modes of some rows (`--bless-modes`): one `*` line per scenario and
    /// variant, `fail` with every rule its failing pairs broke, or `pass -` when none failed.
    pub fn modes_of_rows(rows: &[Outcome], keys: &[Key]) -> Result<Baseline> {
        let mut modes: BTreeMap<(String, String), Entry> = BTreeMap::new();
        for (row, key) in rows.iter().zip(keys) {
            if row.verdict == RunOutcome::Error {
                return Err(Error::harness(format!(
                    "not blessed: {} seed {} ended in a harness error ({})",
                    row.scenario, row.seed, row.first_violation
                )));
            }
            let mode =
                modes.entry((key.0.clone(), key.1.clone())).or_insert(Entry { passed: true, rules: BTreeSet::new(), passed_nights: 0 });
            if row.verdict == RunOutcome::Fail {
                mode.passed = false;
                mode.rules.extend(row.rules.iter().cloned().collect::<BTreeSet<String>>());
            }
        }
        Ok(Baseline { entries: BTreeMap::new(), modes })
    }
}

impl Baseline {
    /// Whether one row stops a `--fail-fast` sweep: a regression or a harness error, not a
    /// failure the baseline knows.
    pub fn stops(&self, row: &Outcome, file: &Path) -> bool {
        match key_of(row, &baseline_folder(file)) {
            Ok(key) => matches!(judge(row, self.line_of(&key)), Judgement::Regression(_) | Judgement::Error),
            Err(_) => true,
        }
    }
}

/// A line's pair: scenario, variant, and its seed (`None`: `*`, a failure mode).
type LineKey = (String, String, Option<u64>);

/// The optional sixth field of a failure mode: `passed-nights=K`.
pub const NIGHTS_FIELD: &str = "passed-nights=";

fn parse_line(line: &str) -> std::result::Result<(LineKey, Entry), String> {
    let mut fields: Vec<&str> = line.split_whitespace().collect();
    if fields.len() > 6 {
        return Err(format!("expected 5 fields (scenario variant seed verdict rules), found {}", fields.len()));
    }
    let passed_nights = match fields.get(5).map(|f| f.strip_prefix(NIGHTS_FIELD)) {
        None => 0,
        Some(Some(k)) if fields[2] == ANY_SEED && fields[3] == "fail" => {
            let nights = k.parse().map_err(|_| format!("`{NIGHTS_FIELD}{k}`: not a whole number of nights"))?;
            fields.truncate(5);
            nights
        }
        Some(Some(_)) => return Err(format!("`{NIGHTS_FIELD}` belongs to a failing failure mode (seed `*`, verdict fail) only")),
        Some(None) => return Err(format!("expected 5 fields (scenario variant seed verdict rules), found {}", fields.len())),
    };
    let [scenario, variant, seed, verdict, rules] = fields[..] else {
        return Err(format!("expected 5 fields (scenario variant seed verdict rules), found {}", fields.len()));
    };
    let seed: Option<u64> =
        if seed == ANY_SEED { None } else { Some(seed.parse().map_err(|_| format!("seed `{seed}` is not a whole number nor `*`"))?) };
    let passed = match verdict {
        "pass" => true,
        "fail" => false,
        other => return Err(format!("verdict `{other}` is neither pass nor fail")),
    };
    let rules = if rules == "-" { BTreeSet::new() } else { split_rules(rules) };
    if let Some(unknown) = rules.iter().find(|r| !crate::judging::oracle::RULES.iter().any(|known| known.name() == r.as_str())) {
        return Err(format!("`{unknown}` is not a rule (docs/oracles.md lists them)"));
    }
    Ok(((scenario.to_string(), variant.to_string(), seed), Entry { passed, rules, passed_nights }))
}

/// What became of one pair against the baseline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Judgement {
    /// Passed, as its line says (or it has none).
    Pass,
    /// A failure its line lists, with every rule it broke there; `fewer` are the line's rules
    /// it no longer breaks (an improvement when not empty).
    Known { fewer: Vec<String> },
    /// Failed in a way the baseline does not know: why.
    Regression(String),
    /// Its baselined failure now passes.
    NowPasses(String),
    /// A harness error: no verdict to compare (the sweep's exit code says so).
    Error,
}

/// Rows judged against a baseline, in the rows' order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    /// The baseline file, as named on the command line.
    pub file: PathBuf,
    pub judged: Vec<(Key, Judgement)>,
    /// Entries of the baseline no row matched (pairs this sweep or shard did not run).
    pub not_run: usize,
}

impl Comparison {
    pub fn regressions(&self) -> impl Iterator<Item = (&Key, &str)> {
        self.judged.iter().filter_map(|(k, j)| match j {
            Judgement::Regression(why) => Some((k, why.as_str())),
            _ => None,
        })
    }

    /// Baselined failures that now pass or break fewer rules: listed, never failed.
    pub fn improvements(&self) -> Vec<(&Key, String)> {
        self.judged
            .iter()
            .filter_map(|(k, j)| match j {
                Judgement::NowPasses(why) => Some((k, why.clone())),
                Judgement::Known { fewer } if !fewer.is_empty() => Some((k, format!("no longer breaks {}", fewer.join(", ")))),
                _ => None,
            })
            .collect()
    }

    /// Known failures by rule: how many of them break each.
    pub fn known_rules(&self, rows: &[Outcome]) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for (row, (_, judgement)) in rows.iter().zip(&self.judged) {
            if matches!(judgement, Judgement::Known { .. }) {
                for rule in row.rules.iter().cloned().collect::<BTreeSet<String>>() {
                    *counts.entry(rule).or_insert(0) += 1;
                }
            }
        }
        counts
    }

    pub fn known(&self) -> usize {
        self.judged.iter().filter(|(_, j)| matches!(j, Judgement::Known { .. })).count()
    }

    /// The judgement of the row at `index` of the rows compared.
    pub fn of(&self, index: usize) -> Option<&Judgement> {
        self.judged.get(index).map(|(_, j)| j)
    }
}

/// Judges `rows` against `baseline`: pure, so sweep, shards and merge judge alike. `keys` are
/// the rows' keys (`key_of`), in the rows' order.
pub fn compare(rows: &[Outcome], keys: &[Key], baseline: &Baseline, file: &Path) -> Comparison {
    let judged: Vec<(Key, Judgement)> = rows.iter().zip(keys).map(|(row, key)| (key.clone(), judge(row, baseline.line_of(key)))).collect();
    let seen: BTreeSet<&Key> = keys.iter().collect();
    let not_run = baseline.entries.keys().filter(|k| !seen.contains(k)).count();
    Comparison { file: file.to_path_buf(), judged, not_run }
}

fn judge(row: &Outcome, line: Option<(&Entry, bool)>) -> Judgement {
    let rules = row.rules.iter().cloned().collect::<BTreeSet<String>>();
    // A failure mode says how any seed may fail: a pass there is no news.
    let entry = line.map(|(entry, _)| entry);
    let mode = line.is_some_and(|(_, mode)| mode);
    match (row.verdict, entry) {
        (RunOutcome::Error, _) => Judgement::Error,
        (RunOutcome::Pass, Some(_)) if mode => Judgement::Pass,
        (RunOutcome::Pass, Some(entry)) if !entry.passed => Judgement::NowPasses(format!("now passes (baseline: {})", entry.describe())),
        (RunOutcome::Pass, _) => Judgement::Pass,
        (_, None) => Judgement::Regression(format!("fails with {} and is not in the baseline", rules_or_why(row, &rules))),
        (_, Some(entry)) if entry.passed => Judgement::Regression(format!("fails with {} (baseline: pass)", rules_or_why(row, &rules))),
        (_, Some(entry)) => {
            let new: Vec<&str> = rules.difference(&entry.rules).map(String::as_str).collect();
            if new.is_empty() {
                Judgement::Known { fewer: entry.rules.difference(&rules).cloned().collect() }
            } else {
                Judgement::Regression(format!("fails with new rule(s) {} (baseline: {})", new.join(", "), entry.describe()))
            }
        }
    }
}

/// A failure's rules, or its reason when it broke none (an expected violation that did not
/// occur).
fn rules_or_why(row: &Outcome, rules: &BTreeSet<String>) -> String {
    if rules.is_empty() {
        format!("`{}`", row.first_violation)
    } else {
        rules.iter().map(String::as_str).collect::<Vec<_>>().join(", ")
    }
}

/// The key of a row: its scenario's path relative to `folder`. The row names the scenario as
/// the sweep's command line did, relative to the current folder; both are resolved (symbolic
/// links included, where the files exist) before the relative path is taken.
pub fn key_of(row: &Outcome, folder: &Path) -> Result<Key> {
    let scenario = resolve(Path::new(row.scenario))?;
    let folder = resolve(folder)?;
    Ok((relative(&scenario, &folder), row.variant.to_string(), row.seed))
}

/// The keys of `rows` against the baseline file `file` (its folder).
pub fn keys_of(rows: &[Outcome], file: &Path) -> Result<Vec<Key>> {
    let folder = baseline_folder(file);
    rows.iter().map(|row| key_of(row, &folder)).collect()
}

/// The folder a baseline file's paths are relative to.
pub fn baseline_folder(file: &Path) -> PathBuf {
    match file.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// An absolute path without `.` or `..`: canonical where it exists, else made so lexically.
fn resolve(path: &Path) -> Result<PathBuf> {
    if let Ok(canonical) = std::fs::canonicalize(path) {
        return Ok(canonical);
    }
    let absolute = if path.is_absolute() { path.to_path_buf() } else { std::env::current_dir()?.join(path) };
    let mut out = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Ok(out)
}

/// `path` relative to `folder` (both absolute and resolved), `/`-separated.
fn relative(path: &Path, folder: &Path) -> String {
    let (path, folder): (Vec<Component>, Vec<Component>) = (path.components().collect(), folder.components().collect());
    let common = path.iter().zip(&folder).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_string(); folder.len() - common];
    parts.extend(path[common..].iter().map(|c| c.as_os_str().to_string_lossy().into_owned()));
    parts.join("/")
}

/// Writes the baseline of `rows` to `file`, whole or not at all.
pub fn bless(rows: &[Outcome], file: &Path) -> Result<usize> {
    bless_keyed(rows, &keys_of(rows, file)?, file, false)
}

/// Writes the baseline of `rows` under `keys` to `file`, whole or not at all: a line a pair,
/// or with `modes` a `*` line per scenario and variant (`--bless-modes`). Lines counted.
pub fn bless_keyed(rows: &[Outcome], keys: &[Key], file: &Path, modes: bool) -> Result<usize> {
    let baseline = if modes { Baseline::modes_of_rows(rows, keys)? } else { Baseline::of_keyed(rows, keys)? };
    crate::base::atomic::write_atomically(file, baseline.render().as_bytes())?;
    Ok(baseline.entries.len() + baseline.modes.len())
}

/// What a sweep's `--baseline FILE [--bless]` needs before any pair runs: the baseline to judge
/// against (none when blessing). `--bless` writes the whole suite's file, so a sweep that runs
/// part of it (`partial`: a shard, `--fail-fast`) may not bless.
pub fn for_sweep(file: Option<&Path>, bless: bool, partial: bool) -> Result<Option<Baseline>> {
    match (file, bless) {
        (None, true) => Err(Error::input("--bless writes the file --baseline names: give --baseline FILE")),
        (None, false) => Ok(None),
        (Some(file), true) => {
            if partial {
                return Err(Error::input(format!(
                    "--bless rewrites all of {}: refused with --shard or --fail-fast, which run part of the suite (bless the shards' merge: `rehearsal merge SHARDS --baseline FILE --bless`)",
                    file.display()
                )));
            }
            let folder = baseline_folder(file);
            if !folder.is_dir() {
                return Err(Error::input(format!("{}: the baseline's folder {} does not exist", file.display(), folder.display())));
            }
            Ok(None)
        }
        (Some(file), false) => Baseline::load(file).map(Some),
    }
}

/// The outcome of rows judged against a baseline: a harness error over a regression over
/// anything else (known failures and improvements pass).
pub fn worst_against(rows: &[Outcome], comparison: &Comparison) -> RunOutcome {
    worst_given(rows.iter().any(|r| r.verdict == RunOutcome::Error), comparison)
}

/// `worst_against`, told whether any row was a harness error.
pub fn worst_given(any_error: bool, comparison: &Comparison) -> RunOutcome {
    if any_error {
        RunOutcome::Error
    } else if comparison.regressions().next().is_some() {
        RunOutcome::Fail
    } else {
        RunOutcome::Pass
    }
}

/// Loads `file` and judges `rows` against it: what sweep and merge call.
pub fn check(rows: &[Outcome], file: &Path) -> Result<Comparison> {
    let baseline = Baseline::load(file)?;
    Ok(compare(rows, &keys_of(rows, file)?, &baseline, file))
}

/// The stdout lines of a comparison: the counts, then a line per regression and improvement.
pub fn stdout_lines(comparison: &Comparison, rows: &[Outcome]) -> String {
    let mut out = String::new();
    let regressions: Vec<(&Key, &str)> = comparison.regressions().collect();
    let improvements = comparison.improvements();
    let _ = writeln!(
        out,
        "baseline     {}: {} regression(s), {} known failure(s){}, {} improvement(s)",
        comparison.file.display(),
        regressions.len(),
        comparison.known(),
        counted(&comparison.known_rules(rows)),
        improvements.len()
    );
    for ((scenario, variant, seed), why) in &regressions {
        let _ = writeln!(out, "regression   {scenario} {variant} seed {seed}: {why}");
    }
    for ((scenario, variant, seed), why) in &improvements {
        let _ = writeln!(out, "improved     {scenario} {variant} seed {seed}: {why}");
    }
    out
}

/// ` (budget ×3, liveness ×1)`, or nothing for no rules.
pub fn counted(rules: &BTreeMap<String, usize>) -> String {
    if rules.is_empty() {
        String::new()
    } else {
        format!(" ({})", rules.iter().map(|(r, n)| format!("{r} ×{n}")).collect::<Vec<_>>().join(", "))
    }
}

/// summary.md's section on the baseline: counts, then every regression and improvement.
pub fn markdown(comparison: &Comparison, rows: &[Outcome]) -> String {
    let mut md = format!("\n## Baseline `{}`\n\n", comparison.file.display());
    let regressions: Vec<(&Key, &str)> = comparison.regressions().collect();
    let improvements = comparison.improvements();
    let _ = writeln!(
        md,
        "{} regression(s); {} known failure(s){}; {} improvement(s).",
        regressions.len(),
        comparison.known(),
        counted(&comparison.known_rules(rows)),
        improvements.len()
    );
    if comparison.not_run > 0 {
        let _ = writeln!(md, "\n{} baseline line(s) name pairs these results do not hold.", comparison.not_run);
    }
    if !regressions.is_empty() {
        md.push_str("\n### Regressions\n\n");
        for ((scenario, variant, seed), why) in &regressions {
            let _ = writeln!(md, "- `{scenario}` {variant} seed {seed}: {why}");
        }
    }
    if !improvements.is_empty() {
        md.push_str("\n### Improvements (not failures; `--bless` records them)\n\n");
        for ((scenario, variant, seed), why) in &improvements {
            let _ = writeln!(md, "- `{scenario}` {variant} seed {seed}: {why}");
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row's outcome; the strings live as long as the test (leaked: a few bytes).
    fn row(scenario: &str, seed: u64, verdict: &str, rules: &str) -> Outcome<'static> {
        let keep = |s: &str| -> &'static str { Box::leak(s.to_string().into_boxed_str()) };
        Outcome {
            scenario: keep(scenario),
            variant: "default",
            seed,
            verdict: verdict.parse().unwrap(),
            rules: Box::leak(split_rules(rules).into_iter().collect::<Vec<String>>().into_boxed_slice()),
            first_violation: keep(rules.split(',').next().unwrap_or("")),
        }
    }

    fn key(scenario: &str, seed: u64) -> Key {
        (scenario.to_string(), "default".to_string(), seed)
    }

    const FILE: &str = "a.toml default 1 pass -\na.toml default 2 fail budget,liveness\na.toml default 3 fail budget\n";

    fn judged(rows: &[Outcome]) -> Vec<Judgement> {
        let baseline = Baseline::parse(FILE, "b.txt").unwrap();
        let keys: Vec<Key> = rows.iter().map(|r| key(r.scenario, r.seed)).collect();
        compare(rows, &keys, &baseline, Path::new("b.txt")).judged.into_iter().map(|(_, j)| j).collect()
    }

    #[test]
    fn a_new_failure_or_a_new_rule_regresses_and_a_known_one_does_not() {
        let verdicts = judged(&[
            row("a.toml", 1, "fail", "liveness"),
            row("a.toml", 2, "fail", "budget,liveness"),
            row("a.toml", 3, "fail", "budget,owner-writes-only"),
            row("a.toml", 4, "fail", "budget"),
            row("a.toml", 4, "pass", "budget"),
        ]);
        assert!(matches!(&verdicts[0], Judgement::Regression(why) if why.contains("baseline: pass")), "{verdicts:?}");
        assert_eq!(verdicts[1], Judgement::Known { fewer: Vec::new() });
        assert!(matches!(&verdicts[2], Judgement::Regression(why) if why.contains("new rule(s) owner-writes-only")), "{verdicts:?}");
        assert!(matches!(&verdicts[3], Judgement::Regression(why) if why.contains("not in the baseline")), "{verdicts:?}");
        assert_eq!(verdicts[4], Judgement::Pass, "a pair with no line that passes (its allowed rules aside) is fine");
    }

    #[test]
    fn improvements_are_listed_apart_and_do_not_regress() {
        let rows = [row("a.toml", 2, "fail", "budget"), row("a.toml", 3, "pass", ""), row("a.toml", 1, "error", "")];
        let baseline = Baseline::parse(FILE, "b.txt").unwrap();
        let keys: Vec<Key> = rows.iter().map(|r| key(r.scenario, r.seed)).collect();
        let comparison = compare(&rows, &keys, &baseline, Path::new("b.txt"));
        assert_eq!(comparison.regressions().count(), 0);
        let improved: Vec<String> = comparison.improvements().into_iter().map(|(k, why)| format!("{} {why}", k.2)).collect();
        assert_eq!(improved, ["2 no longer breaks liveness", "3 now passes (baseline: fail budget)"]);
        assert_eq!(comparison.of(2), Some(&Judgement::Error));
        assert_eq!(comparison.not_run, 0, "every line's pair ran");
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("a.toml"), "").unwrap();
        let (scenario, file) = (tmp.path().join("a.toml").display().to_string(), tmp.path().join("b.txt"));
        let stops = |seed, verdict, rules| baseline.stops(&row(&scenario, seed, verdict, rules), &file);
        assert!(!stops(2, "fail", "budget"), "a known failure does not stop --fail-fast");
        assert!(stops(1, "fail", "budget") && stops(2, "fail", "owner-writes-only") && stops(1, "error", ""));
        let shard = compare(&rows[..1], &keys[..1], &baseline, Path::new("b.txt"));
        assert_eq!(shard.not_run, 2, "a shard's rows match only its own lines");
    }

    #[test]
    fn the_file_round_trips_sorted_and_a_bad_line_names_file_and_line() {
        let baseline = Baseline::parse(FILE, "b.txt").unwrap();
        let again = Baseline::parse(&baseline.render(), "b.txt").unwrap();
        assert_eq!(again, baseline);
        let text = baseline.render();
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(lines, ["a.toml default 1 pass -", "a.toml default 2 fail budget,liveness", "a.toml default 3 fail budget"]);
        for (bad, says) in [
            ("a.toml default x pass -", "b.txt:2: seed `x`"),
            ("a.toml default 1 maybe -", "b.txt:2: verdict `maybe`"),
            ("a.toml default 1 fail budget,no-such-rule", "b.txt:2: `no-such-rule` is not a rule"),
            ("a.toml default 1", "b.txt:2: expected 5 fields"),
            ("a.toml default 1 pass -", "b.txt:2: pair a.toml default seed 1 listed twice"),
        ] {
            let text = format!("a.toml default 1 pass -  # first\n{bad}\n");
            let e = Baseline::parse(&text, "b.txt").unwrap_err();
            assert!(matches!(e, Error::Input(_)), "{e}");
            assert!(e.to_string().contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn a_key_is_relative_to_the_baseline_folder_whatever_the_current_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let suite = tmp.path().join("suite");
        std::fs::create_dir_all(suite.join("faults")).unwrap();
        std::fs::write(suite.join("faults").join("f.toml"), "").unwrap();
        let absolute = suite.join("faults").join("f.toml").display().to_string();
        let dotted = suite.join("faults").join("..").join("faults").join("f.toml").display().to_string();
        for name in [absolute, dotted] {
            assert_eq!(key_of(&row(&name, 1, "pass", ""), &suite).unwrap().0, "faults/f.toml");
        }
        assert_eq!(key_of(&row(&suite.join("x.toml").display().to_string(), 1, "pass", ""), &suite.join("faults")).unwrap().0, "../x.toml");
        assert_eq!(baseline_folder(Path::new("baseline.txt")), PathBuf::from("."));
    }

    #[test]
    fn blessing_writes_every_pair_and_refuses_a_harness_error() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("a.toml"), "").unwrap();
        let scenario = tmp.path().join("a.toml").display().to_string();
        let file = tmp.path().join("baseline.txt");
        assert_eq!(bless(&[row(&scenario, 2, "fail", "liveness,budget"), row(&scenario, 1, "pass", "")], &file).unwrap(), 2);
        let written = Baseline::load(&file).unwrap();
        assert_eq!(written.entries.get(&key("a.toml", 2)).unwrap().describe(), "fail budget,liveness");
        let e = bless(&[row(&scenario, 3, "error", "")], &file).unwrap_err();
        assert!(e.to_string().contains("not blessed"), "{e}");
        assert_eq!(Baseline::load(&file).unwrap(), written, "a refused bless leaves the file as it was");
        let missing = Baseline::load(&tmp.path().join("none.txt")).unwrap_err();
        assert!(matches!(missing, Error::Input(_)) && missing.to_string().contains("--bless"), "{missing}");
    }
}
