//! Which pairs a sweep (or its shard) runs: pair `k` is seed `k % seeds` of scenario
//! `k / seeds`, and a shard `I/N` runs the pairs with `k % N == I - 1`. They are found by
//! arithmetic and never listed whole.

use std::path::PathBuf;

use super::options::SweepOptions;
use crate::base::error::Result;

/// The pairs of this sweep, in order, after sharding: (pair index, scenario, seed).
/// `own_seeds` holds each scenario's `run.seed`, for a sweep without `--seeds`. Pair `k` is
/// seed `k % seeds` of scenario `k / seeds`, so a shard's pairs are found by arithmetic and
/// only they are listed: a shard of 10^8 seeds costs its own share (issue 30).
pub fn pairs(options: &SweepOptions, own_seeds: &[u64]) -> Vec<(usize, PathBuf, u64)> {
    let per_scenario = if options.seeds.is_empty() { 1 } else { options.seeds.len() };
    let (i, n) = options.shard.unwrap_or((1, 1));
    let total = per_scenario * options.scenarios.len() as u128;
    let mut shard = Vec::new();
    let mut index = (i - 1) as u128;
    while index < total {
        let (scenario, k) = ((index / per_scenario) as usize, index % per_scenario);
        let seed = if options.seeds.is_empty() { own_seeds[scenario] } else { options.seeds.nth(k).expect("k < the seeds' count") };
        shard.push((index as usize, options.scenarios[scenario].clone(), seed));
        index += n as u128;
    }
    shard
}

/// How many pairs the whole sweep has, and how many its shard runs: without listing them.
pub fn pair_counts(options: &SweepOptions) -> (u128, u128) {
    let per_scenario = if options.seeds.is_empty() { 1 } else { options.seeds.len() };
    let total = per_scenario * options.scenarios.len() as u128;
    let (i, n) = options.shard.unwrap_or((1, 1));
    let own = (total + n as u128 - i as u128) / n as u128;
    (total, own)
}

/// Refuses a sweep whose shard runs more than `seed_set::MAX_RUNS` pairs, before anything is
/// listed or written: bad input, with the `--shard` that would bring it under.
pub(super) fn check_pair_count(options: &SweepOptions) -> Result<()> {
    let (total, own) = pair_counts(options);
    let shards_needed = total.div_ceil(u128::from(crate::base::seed_set::MAX_RUNS));
    let what = format!(
        "--seeds {} over {} scenario(s){}",
        options.seeds,
        options.scenarios.len(),
        match options.shard {
            Some((i, n)) => format!(" in shard {i}/{n}"),
            None => String::new(),
        }
    );
    crate::base::seed_set::check_runs(own, &what, &format!(": split the sweep with --shard I/N, N >= {shards_needed}"))
}

