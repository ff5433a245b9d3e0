//! What a sweep is asked to do: its command line as options (sim/commands/sweep.rs fills
//! them), and `--shard I/N` read.

use std::path::PathBuf;

use crate::base::error::{Error, Result};

#[derive(Clone, Debug)]
pub struct SweepOptions {
    pub scenarios: Vec<PathBuf>,
    /// The seeds of every scenario, as runs (never listed whole); empty: each scenario's own
    /// `run.seed` (the shipped suite as the golden file runs it).
    pub seeds: crate::base::seed_set::SeedSet,
    /// `--protocol NAME`: the profile every pair runs, in place of its scenario's own.
    pub protocol: Option<String>,
    pub variants: Vec<String>,
    pub jobs: usize,
    /// 1-based (I, N).
    pub shard: Option<(usize, usize)>,
    pub fail_fast: bool,
    pub check_determinism: bool,
    pub out: PathBuf,
    /// Print a progress line every this many pairs (stderr).
    pub progress_every: usize,
    /// `--require-coverage`: what the pairs together must reach (sim/judging/coverage/required.rs).
    pub require_coverage: Option<PathBuf>,
    /// Replace what an earlier command left in `out` (refused without it: sim/base/out_folder.rs).
    pub force: bool,
    /// `--sql FILE`: the protocol SQL every pair runs, in place of its scenario's own.
    pub sql: Option<PathBuf>,
    /// `--scratch DIR`: where the pairs' runs are made and removed (sim/base/scratch.rs).
    pub scratch: Option<PathBuf>,
    /// `--baseline FILE`: judge the pairs against it (sim/campaign/baseline.rs); with `bless`, write it.
    pub baseline: Option<PathBuf>,
    pub bless: bool,
    /// `--require-faults-fired`: fail when a declared fault kind or a scripted fault never
    /// fired in any pair of its scenario (sim/campaign/fault_proof.rs).
    pub require_faults_fired: bool,
    /// `--keep-known`: keep the run folder of a failure the baseline knows too (by default it
    /// is a line of `failures/known.txt`: pair, rules, replay command).
    pub keep_known: bool,
}

/// No scenario, each scenario's own seed, one job, nothing optional: what a caller that
/// needs a few fields (`merge` listing a shard's pairs, tests) starts from.
impl Default for SweepOptions {
    fn default() -> Self {
        SweepOptions {
            scenarios: Vec::new(),
            seeds: crate::base::seed_set::SeedSet::default(),
            protocol: None,
            variants: Vec::new(),
            jobs: 1,
            shard: None,
            fail_fast: false,
            check_determinism: false,
            out: PathBuf::new(),
            progress_every: 0,
            require_coverage: None,
            force: false,
            sql: None,
            scratch: None,
            baseline: None,
            bless: false,
            require_faults_fired: false,
            keep_known: false,
        }
    }
}

/// Parses `I/N` (1-based, I in 1..=N).
pub fn parse_shard(text: &str) -> Result<(usize, usize)> {
    let bad = || Error::input(format!("shard `{text}`: expected I/N with 1 <= I <= N, e.g. 2/4"));
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (i.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
    if n == 0 || i == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}
