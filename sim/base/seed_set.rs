//! Seeds as runs of consecutive ones (`1..=40`, `7`), never a list of every seed: a range as
//! wide as `1..=10000000000` costs two numbers, a shard of it is sliced by arithmetic
//! (`SeedSet::nth`), and only the runs a command will really make are ever listed, after
//! their count was checked against `MAX_RUNS` (issue 30: `--seeds 1..=10000000000` allocated
//! 80 GB, `--shard 1/100000` of 10^8 seeds built every pair first).

use crate::base::error::{Error, Result};

/// The most runs one command makes in one process: seeds × scenarios of a sweep (its shard's
/// share), seeds of bench, compare and findings, points of explore. A million runs is weeks of
/// a shared machine's time; more is a typing mistake, or a sweep to split with `--shard`.
pub const MAX_RUNS: u64 = 1_000_000;

/// Inclusive runs of consecutive seeds, in order; empty: no seeds given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SeedSet {
    runs: Vec<(u64, u64)>,
}

impl SeedSet {
    /// `N`, `A..B` (B left out) or `A..=B`, with A < B, decimal; or `night:YYYY-MM-DD`.
    pub fn parse(text: &str) -> Result<SeedSet> {
        // `night:YYYY-MM-DD[:COUNT]`: that night's own seeds (sim/base/night.rs).
        if let Some(night) = crate::base::night::parse(text) {
            let (first, last) = night?;
            return Ok(SeedSet { runs: vec![(first, last)] });
        }
        let bad = || Error::input(format!("seed range `{text}`: expected N, A..B or A..=B with A < B (decimal)"));
        let (range, inclusive) = match (text.split_once("..="), text.split_once("..")) {
            (Some(r), _) => (Some(r), true),
            (None, Some(r)) => (Some(r), false),
            (None, None) => (None, false),
        };
        let Some((a, b)) = range else {
            let seed: u64 = text.trim().parse().map_err(|_| bad())?;
            return Ok(SeedSet { runs: vec![(seed, seed)] });
        };
        let (a, b): (u64, u64) = (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
        let last = if inclusive { b } else { b.checked_sub(1).ok_or_else(bad)? };
        if a > last {
            return Err(bad());
        }
        Ok(SeedSet { runs: vec![(a, last)] })
    }

    /// The seeds of `seeds`, in order, as runs of consecutive ones.
    pub fn of_list(seeds: &[u64]) -> SeedSet {
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for &seed in seeds {
            match runs.last_mut() {
                Some((_, last)) if last.checked_add(1) == Some(seed) => *last = seed,
                _ => runs.push((seed, seed)),
            }
        }
        SeedSet { runs }
    }

    /// How many seeds (up to 2^64, so a u128).
    pub fn len(&self) -> u128 {
        self.runs.iter().map(|(a, b)| u128::from(b - a) + 1).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// Whether each seed is at least the one before it (a range always is; a list may not be).
    pub fn is_ascending(&self) -> bool {
        self.runs.windows(2).all(|w| w[0].1 <= w[1].0)
    }

    /// The `index`-th seed (from 0), without listing the ones before it.
    pub fn nth(&self, mut index: u128) -> Option<u64> {
        for (a, b) in &self.runs {
            let size = u128::from(b - a) + 1;
            if index < size {
                return Some(a + index as u64);
            }
            index -= size;
        }
        None
    }

    /// Every seed, listed: refused (bad input, exit 2) above `MAX_RUNS`, before any is.
    pub fn to_vec(&self, flag: &str) -> Result<Vec<u64>> {
        check_runs(self.len(), &format!("{flag} {self}"), "")?;
        Ok(self.runs.iter().flat_map(|(a, b)| *a..=*b).collect())
    }

    /// The runs as text (`1..=3`, `7`): the manifest's form, read back by `parse` each.
    pub fn run_texts(&self) -> Vec<String> {
        self.runs.iter().map(|(a, b)| if a == b { a.to_string() } else { format!("{a}..={b}") }).collect()
    }

    /// The seeds of several texts, in order (a manifest's runs).
    pub fn parse_runs(texts: &[String]) -> Result<SeedSet> {
        let mut runs = Vec::new();
        for text in texts {
            runs.extend(SeedSet::parse(text)?.runs);
        }
        Ok(SeedSet { runs })
    }
}

impl std::fmt::Display for SeedSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.run_texts().join(","))
    }
}

/// Refuses `count` runs above `MAX_RUNS`, naming what asked for them (`--seeds 1..=10^10`)
/// and how to split them (`hint`).
pub fn check_runs(count: u128, what: &str, hint: &str) -> Result<()> {
    if count <= u128::from(MAX_RUNS) {
        return Ok(());
    }
    Err(Error::input(format!("{what} makes {count} runs; one command makes at most {MAX_RUNS}{hint}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_as_runs_without_listing_their_seeds() {
        assert_eq!(SeedSet::parse("3..=5").unwrap().to_vec("--seeds").unwrap(), [3, 4, 5]);
        assert_eq!(SeedSet::parse("3..5").unwrap().to_vec("--seeds").unwrap(), [3, 4]);
        assert_eq!(SeedSet::parse("7").unwrap().to_vec("--seeds").unwrap(), [7]);
        let wide = SeedSet::parse("1..=10000000000").unwrap();
        assert_eq!((wide.len(), wide.nth(9_999_999_999), wide.nth(10_000_000_000)), (10_000_000_000, Some(10_000_000_000), None));
        let all = SeedSet::parse(&format!("0..={}", u64::MAX)).unwrap();
        assert_eq!((all.len(), all.nth(u128::from(u64::MAX))), (1 << 64, Some(u64::MAX)));
        assert_eq!(SeedSet::parse("3..=3").unwrap().to_vec("--seeds").unwrap(), [3]);
        for bad in ["5..2", "3..3", "a..b", "1..=", "0..0", "-1", "1..=18446744073709551616"] {
            assert!(SeedSet::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn more_runs_than_the_limit_are_refused_before_any_is_listed() {
        let e = SeedSet::parse("1..=10000000000").unwrap().to_vec("--seeds").unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("--seeds 1..=10000000000 makes 10000000000 runs; one command makes at most 1000000"), "{e}");
        assert_eq!(SeedSet::parse(&format!("1..={MAX_RUNS}")).unwrap().to_vec("--seeds").unwrap().len() as u64, MAX_RUNS);
    }

    #[test]
    fn a_list_becomes_runs_and_back() {
        let set = SeedSet::of_list(&[1, 2, 3, 7, 9, 10, 4]);
        assert_eq!(set.run_texts(), ["1..=3", "7", "9..=10", "4"]);
        assert_eq!(SeedSet::parse_runs(&set.run_texts()).unwrap(), set);
        assert_eq!((set.len(), set.nth(3), set.nth(6)), (7, Some(7), Some(4)));
    }
}
