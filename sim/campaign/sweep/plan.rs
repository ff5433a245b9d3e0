//! Which pairs a sweep (or its shard) runs: pair `k` is seed `k % seeds` of scenario
//! `k / seeds`, and a shard `I/N` runs the pairs with `k % N == I - 1`. They are found by
//! arithmetic and never listed whole.

use std::path::PathBuf;

use super::options::SweepOptions;
use crate::base::error::Result;

/// The pairs of this sweep, in order, after sharding: (pair index, scenario, seed).
/// `own_seeds` holds each scenario's `run.seed`, for a sweep without `--seeds`.
pub fn pairs(options: &SweepOptions, own_seeds: &[u64]) -> Vec<(usize, PathBuf, u64)> {
    in_index_order(options, own_seeds).map(|pair| (pair.index as usize, options.scenarios[pair.scenario].clone(), pair.seed)).collect()
}

/// The pairs of this sweep (or its shard) in the order of their indexes, made one at a time.
pub fn in_index_order<'a>(options: &'a SweepOptions, own_seeds: &'a [u64]) -> impl Iterator<Item = Pair> + Send + 'a {
    let per_scenario = if options.seeds.is_empty() { 1 } else { options.seeds.len() };
    let (i, n) = options.shard.unwrap_or((1, 1));
    let total = per_scenario * options.scenarios.len() as u128;
    (0..).map(move |step: u128| (i - 1) as u128 + step * n as u128).take_while(move |index| *index < total).map(move |index| {
        let (scenario, k) = ((index / per_scenario) as usize, index % per_scenario);
        let seed = if options.seeds.is_empty() { own_seeds[scenario] } else { options.seeds.nth(k).expect("k < the seeds' count") };
        Pair { index, scenario, seed }
    })
}

/// One pair of a sweep: its index among all the sweep's pairs (shards included), the
/// index of its scenario in `SweepOptions::scenarios`, and its seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pair {
    pub index: u128,
    pub scenario: usize,
    pub seed: u64,
}

/// The pairs of this sweep (or its shard) in results.csv's order (scenario as named, then
/// seed), made one at a time: nothing is listed, so `--seeds 1..=10^10 --shard 1/10000` holds
/// no memory before its first pair (issue 41). `None` when that order cannot be made by
/// walking the seeds (a seed list not ascending, a scenario named twice): the sweep then
/// sorts its rows at the end.
pub fn in_results_order<'a>(options: &'a SweepOptions, own_seeds: &'a [u64]) -> Option<impl Iterator<Item = Pair> + Send + 'a> {
    let names: Vec<String> = options.scenarios.iter().map(|p| p.display().to_string()).collect();
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by(|a, b| names[*a].cmp(&names[*b]));
    if order.windows(2).any(|w| names[w[0]] == names[w[1]]) || !options.seeds.is_ascending() {
        return None;
    }
    let per_scenario = if options.seeds.is_empty() { 1 } else { options.seeds.len() };
    let (i, n) = options.shard.unwrap_or((1, 1));
    let (i, n) = (i as u128 - 1, n as u128);
    Some(order.into_iter().flat_map(move |scenario| {
        let first = scenario as u128 * per_scenario;
        // The first k with (first + k) % n == i, then every n-th.
        let k0 = (i + n - first % n) % n;
        (0..).map(move |step: u128| k0 + step * n).take_while(move |k| *k < per_scenario).map(move |k| {
            let seed = if options.seeds.is_empty() { own_seeds[scenario] } else { options.seeds.nth(k).expect("k < the seeds' count") };
            Pair { index: first + k, scenario, seed }
        })
    }))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::sweep::parse_shard;

    #[test]
    fn shards_are_disjoint_and_cover_every_pair() {
        let options = |shard| SweepOptions {
            scenarios: vec![PathBuf::from("a.toml"), PathBuf::from("b.toml")],
            seeds: crate::base::seed_set::SeedSet::parse("1..=7").unwrap(),
            shard,
            ..SweepOptions::default()
        };
        let all: Vec<usize> = pairs(&options(None), &[1, 2]).into_iter().map(|p| p.0).collect();
        let mut union: Vec<usize> = (1..=3).flat_map(|i| pairs(&options(Some((i, 3))), &[1, 2])).map(|p| p.0).collect();
        union.sort_unstable();
        assert_eq!(union, all);
        assert_eq!(parse_shard("2/4").unwrap(), (2, 4));
        let own = SweepOptions { seeds: Default::default(), ..options(None) };
        let seeds: Vec<(String, u64)> = pairs(&own, &[5, 9]).into_iter().map(|(_, s, seed)| (s.display().to_string(), seed)).collect();
        assert_eq!(seeds, [("a.toml".to_string(), 5), ("b.toml".to_string(), 9)], "without --seeds, each scenario's own");
        for bad in ["0/3", "4/3", "3", "a/b", "1/0"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }

    /// Walked in results.csv's order, a shard's pairs are its pairs by index, sorted by
    /// (scenario, seed); a scenario named twice cannot be walked so (the sweep sorts at the end).
    #[test]
    fn pairs_in_results_order_are_the_shards_pairs_sorted() {
        let options = |shard| SweepOptions {
            scenarios: vec![PathBuf::from("b.toml"), PathBuf::from("a.toml"), PathBuf::from("c.toml")],
            seeds: crate::base::seed_set::SeedSet::parse("3..=12").unwrap(),
            shard,
            ..SweepOptions::default()
        };
        for shard in [None, Some((1, 3)), Some((3, 3)), Some((2, 7)), Some((4, 40))] {
            let options = options(shard);
            let mut expected: Vec<(usize, PathBuf, u64)> = pairs(&options, &[]);
            expected.sort_by_key(|(_, path, seed)| (path.display().to_string(), *seed));
            let walked: Vec<(usize, PathBuf, u64)> = in_results_order(&options, &[])
                .expect("ascending seeds, distinct names")
                .map(|p| (p.index as usize, options.scenarios[p.scenario].clone(), p.seed))
                .collect();
            assert_eq!(walked, expected, "shard {shard:?}");
        }
        let twice = SweepOptions { scenarios: vec![PathBuf::from("a.toml"), PathBuf::from("a.toml")], ..options(None) };
        assert!(in_results_order(&twice, &[]).is_none());
        let listed = SweepOptions { seeds: crate::base::seed_set::SeedSet::of_list(&[5, 1]), ..options(None) };
        assert!(in_results_order(&listed, &[]).is_none());
    }
}
