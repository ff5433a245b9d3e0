//! The argument groups several commands share (`#[command(flatten)]`), each flag spelled and
//! explained once, and the value parsers clap checks them with: a bad seed range, job count or
//! shard is refused by clap (exit 2) before any command runs.

use std::path::PathBuf;

use clap::Args;

use crate::base::error::Error;
use crate::base::seed_set::SeedSet;

/// Seeds, parsed from `--seeds` text as runs (never listed whole: `crate::base::seed_set`), and
/// the text they were written as.
#[derive(Clone, Debug)]
pub struct Seeds(pub SeedSet, pub String);

impl Seeds {
    /// Every seed, listed: refused above `seed_set::MAX_RUNS` (exit 2) before any is.
    pub fn list(&self, flag: &str) -> Result<Vec<u64>, Error> {
        self.0.to_vec(flag)
    }

    /// Says on stderr how many seeds a range runs (`1..20` runs 19), unless `quiet`.
    pub fn announce(&self, quiet: bool) {
        if quiet {
            return;
        }
        if let Some(line) = crate::campaign::compare::describe_seeds(&self.1, &self.0) {
            eprintln!("rehearsal: {line}");
        }
    }
}

/// `--seeds`, 1..=10 unless given.
#[derive(Args)]
pub struct SeedRangeArg {
    /// Seeds: N, A..B (B excluded) or A..=B.
    #[arg(long, value_parser = parse_seeds, default_value = "1..=10")]
    pub seeds: Seeds,
}

/// `--jobs`: at least 1, all cores unless given.
#[derive(Args)]
pub struct JobsArg {
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long, value_parser = parse_jobs)]
    pub jobs: Option<usize>,
}

impl JobsArg {
    pub fn get(&self) -> usize {
        self.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    }
}

/// `--protocol` and `--variant`, repeatable.
#[derive(Args)]
pub struct VariantArgs {
    /// Protocol profile, in place of the scenario's `[protocol] profile` (default `seeds`):
    /// `rehearsal variants` lists the profiles and the variants each applies.
    #[arg(long = "protocol", value_name = "NAME")]
    pub protocol: Option<String>,
    /// Protocol variant to apply (repeatable), after the profile's and the scenario's own;
    /// `rehearsal variants` lists them.
    #[arg(long = "variant")]
    pub variants: Vec<String>,
}

/// `--json`: one JSON object on stdout instead of the text.
#[derive(Args)]
pub struct JsonArg {
    /// Print one JSON object on stdout instead of the text (verdict, violations, timings,
    /// paths, trace hash, SQL); progress and notes still go to stderr.
    #[arg(long)]
    pub json: bool,
}

/// `--sql FILE`.
#[derive(Args)]
pub struct SqlArg {
    /// Protocol SQL file whose `-- name:` entries replace the defaults and those of the
    /// scenario's `[protocol] sql` (applied after it; variants still apply last).
    #[arg(long, value_name = "FILE")]
    pub sql: Option<PathBuf>,
}

/// `--force` of the commands that write a folder of results.
#[derive(Args)]
pub struct ForceArg {
    /// Replace the results already in the output folder (refused without it); what this
    /// command wrote there before is cleared first.
    #[arg(long)]
    pub force: bool,
}

/// `--scratch DIR`.
#[derive(Args)]
pub struct ScratchArg {
    /// Where the runs are made and removed (default: /dev/shm where it exists, else --out).
    #[arg(long)]
    pub scratch: Option<PathBuf>,
}

/// `--baseline FILE`.
#[derive(Args)]
pub struct BaselineArg {
    /// Judge the pairs against FILE (one pair a line: scenario relative to FILE's folder,
    /// variant, seed, verdict, rules): exit 1 only on a regression, a pair that fails where
    /// FILE says it passed, or with a rule FILE does not list for it, or that FILE lacks.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
}

/// `--require-coverage FILE`.
#[derive(Args)]
pub struct RequireCoverageArg {
    /// Fail (exit 1) when an item listed in FILE was never reached (one item a line, e.g.
    /// `musician watching->working` or `conductor working->fix_proposed after-crash`).
    #[arg(long = "require-coverage", value_name = "FILE")]
    pub require_coverage: Option<PathBuf>,
}

/// The message of an input error, for clap to print after "invalid value … for '--flag'".
fn input_message(e: Error) -> String {
    match e {
        Error::Input(message) | Error::Harness(message) => message,
    }
}

pub fn parse_seeds(text: &str) -> Result<Seeds, String> {
    SeedSet::parse(text).map(|seeds| Seeds(seeds, text.to_string())).map_err(input_message)
}

pub fn parse_shard(text: &str) -> Result<(usize, usize), String> {
    crate::campaign::sweep::parse_shard(text).map_err(input_message)
}

pub fn parse_points(text: &str) -> Result<Seeds, String> {
    SeedSet::parse(text)
        .map(|points| Seeds(points, text.to_string()))
        .map_err(|_| format!("point range `{text}`: expected N, A..B or A..=B with A < B (point numbers from 1)"))
}

/// Every point of `--points`, listed: refused above `seed_set::MAX_RUNS` in all before any is.
pub fn points_of(points: &[Seeds]) -> Result<Vec<u64>, Error> {
    let total: u128 = points.iter().map(|p| p.0.len()).sum();
    crate::base::seed_set::check_runs(total, "--points", "")?;
    Ok(points.iter().flat_map(|p| p.list("--points").unwrap_or_default()).collect())
}

/// A `--faults` entry: one of the vocabulary's fault kinds, which `--help` lists as the
/// possible values (so a new kind needs no edit here).
pub fn fault_name() -> impl clap::builder::TypedValueParser<Value = crate::vocab::FaultName> {
    use crate::vocab::{FaultName, Word as _};
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(FaultName::ALL.map(FaultName::as_str))
        .map(|text| FaultName::from_text(&text).expect("one of the possible values"))
}

pub fn parse_session(text: &str) -> Result<crate::campaign::explore::Target, String> {
    crate::campaign::explore::parse_session(text).map_err(input_message)
}

pub fn parse_jobs(text: &str) -> Result<usize, String> {
    match text.parse::<usize>().map_err(|e| e.to_string())? {
        0 => Err("--jobs must be at least 1".to_string()),
        jobs => Ok(jobs),
    }
}

pub fn parse_depth(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("--depth must be at least 1".to_string()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("--depth takes a whole number of decision points: {e}")),
    }
}
