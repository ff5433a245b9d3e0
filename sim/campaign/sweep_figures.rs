//! summary.md's designer figures of a sweep (issue 31, docs/metrics.md): per scenario and
//! variant, how many pairs finished and how many the time limit cut off, throughput over
//! each, and the designer's figures pooled over the finished pairs only (a cut-off run's
//! samples are truncated by its end, so they never enter a quantile).

use std::fmt::Write as _;

use crate::judging::oracle::designer::DesignerFigures;
use std::collections::BTreeMap;

/// A sample kept as counted values: the quantiles `judging::oracle::quantiles` gives on the
/// sample listed (the value at rank ceil(q·n), clamped to 1..=n), in memory that grows with
/// the distinct values rather than with the pairs (issue 41: a sweep's memory stays flat).
/// Exact up to `EXACT_VALUES` distinct values; past them the values are counted in buckets of
/// `MANTISSA_BITS` significant bits (relative width 2^-7 < 0.8%), each keeping the largest
/// value it counted: a quantile is then that value of its bucket, the exact one or above it
/// by less than 0.8% (`approximate()`), and the maximum stays exact. At most 2·64·128 buckets.
#[derive(Clone, Debug, Default)]
pub struct Histogram {
    /// Key (the value, or its bucket once coarse) → (count, the largest value counted).
    counts: BTreeMap<i64, (u64, i64)>,
    len: u64,
    coarse: bool,
}

/// Distinct values counted exactly before a histogram counts in buckets.
pub const EXACT_VALUES: usize = 4096;

/// Significant bits a bucket keeps of a value (the leading one and 7 after it).
const MANTISSA_BITS: u32 = 8;

/// The bucket of `value`: its magnitude with all but its `MANTISSA_BITS` leading bits cleared,
/// signed as it is (an order-keeping key: a larger value never has a smaller bucket).
fn bucket(value: i64) -> i64 {
    let magnitude = value.unsigned_abs();
    let drop = (64 - magnitude.leading_zeros()).saturating_sub(MANTISSA_BITS);
    let kept = i128::from((magnitude >> drop) << drop);
    (if value < 0 { -kept } else { kept }) as i64
}

impl Histogram {
    pub fn extend(&mut self, sample: &[i64]) {
        for &value in sample {
            let key = if self.coarse { bucket(value) } else { value };
            let slot = self.counts.entry(key).or_insert((0, value));
            slot.0 += 1;
            slot.1 = slot.1.max(value);
        }
        self.len += sample.len() as u64;
        if !self.coarse && self.counts.len() > EXACT_VALUES {
            self.coarsen();
        }
    }

    /// From exact counts to buckets.
    fn coarsen(&mut self) {
        let mut buckets: BTreeMap<i64, (u64, i64)> = BTreeMap::new();
        for (value, (count, _)) in std::mem::take(&mut self.counts) {
            let slot = buckets.entry(bucket(value)).or_insert((0, value));
            slot.0 += count;
            slot.1 = slot.1.max(value);
        }
        self.counts = buckets;
        self.coarse = true;
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether p50 and p95 are a bucket's (at most 0.8% above the exact value), not exact.
    pub fn approximate(&self) -> bool {
        self.coarse
    }

    /// (p50, p95, max), as `quantiles` of the sample listed; `None` when empty.
    pub fn quantiles(&self) -> Option<(i64, i64, i64)> {
        let (_, &(_, max)) = self.counts.last_key_value()?;
        let rank = |q: f64| {
            let at = ((q * self.len as f64).ceil() as u64).clamp(1, self.len);
            let mut seen = 0;
            for &(count, largest) in self.counts.values() {
                seen += count;
                if seen >= at {
                    return largest;
                }
            }
            max
        };
        Some((rank(0.5), rank(0.95), max))
    }

    /// `| NAME | n | p50 | p95 | max |`, the approximate quantiles marked `≈`.
    pub fn table_row(&self, name: &str) -> Option<String> {
        let (p50, p95, max) = self.quantiles()?;
        let mark = if self.coarse { "≈" } else { "" };
        Some(format!("| {name} | {} | {mark}{p50} | {mark}{p95} | {max} |", self.len))
    }
}

/// The designer figures of one group of pairs (a scenario and variant), added pair by pair
/// in results.csv's order: counts and sums for throughput, each figure's finished samples.
#[derive(Default)]
pub struct DesignerTally {
    finished: usize,
    cut: usize,
    /// Simulated hours and tasks complete, finished pairs then cut-off ones.
    hours: [f64; 2],
    tasks: [u64; 2],
    pooled: [Histogram; 7],
}

impl DesignerTally {
    pub fn add(&mut self, figures: &DesignerFigures) {
        let slot = usize::from(figures.cut_off);
        self.hours[slot] += figures.makespan_ms as f64 / 3_600_000.0;
        self.tasks[slot] += figures.tasks_complete;
        if figures.cut_off {
            self.cut += 1;
            return;
        }
        self.finished += 1;
        for (pooled, (_, sample)) in self.pooled.iter_mut().zip(figures.named()) {
            pooled.extend(sample);
        }
    }

    /// The section for the group.
    pub fn markdown(&self) -> String {
        let mut md = format!(
            "\nDesigner figures (docs/metrics.md): {} pairs finished, {} cut off by the time limit (kept out of the quantiles below); tasks per simulated hour {} finished, {} cut off.\n\n",
            self.finished,
            self.cut,
            throughput(self.hours[0], self.tasks[0]),
            throughput(self.hours[1], self.tasks[1])
        );
        md.push_str("| figure (finished pairs) | n | p50 | p95 | max |\n| --- | --- | --- | --- | --- |\n");
        let empty = DesignerFigures::default();
        for ((name, _), pooled) in empty.named().into_iter().zip(&self.pooled) {
            if let Some(row) = pooled.table_row(name) {
                let _ = writeln!(md, "{row}");
            }
        }
        if self.pooled.iter().any(Histogram::approximate) {
            md.push_str(APPROXIMATE_NOTE);
        }
        md
    }
}

/// Said under a table with a quantile marked `≈`.
pub const APPROXIMATE_NOTE: &str =
    "\n`≈`: more than 4096 distinct values, counted in buckets of relative width 2^-7: the quantile shown is its bucket's largest value, at most 0.8% above the exact one.\n";

/// Throughput of runs together: tasks complete over simulated hours (summed run by run).
fn throughput(hours: f64, tasks: u64) -> String {
    if hours > 0.0 {
        format!("{:.2}", tasks as f64 / hours)
    } else {
        "–".to_string()
    }
}

/// The section for one group of pairs (a scenario and variant).
pub fn markdown(group: &[&DesignerFigures]) -> String {
    let mut tally = DesignerTally::default();
    for figures in group {
        tally.add(figures);
    }
    tally.markdown()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counted values give the quantiles of the sample listed, for every size around the
    /// ranks' rounding.
    #[test]
    fn a_histogram_gives_the_quantiles_of_its_sample() {
        for n in 0..60_i64 {
            let sample: Vec<i64> = (0..n).map(|i| (i * 7919) % 13 - 4).collect();
            let mut histogram = Histogram::default();
            histogram.extend(&sample[..(n / 2) as usize]);
            histogram.extend(&sample[(n / 2) as usize..]);
            assert_eq!(histogram.quantiles(), crate::judging::oracle::quantiles(&sample), "n {n}");
            assert_eq!(histogram.len(), n as u64);
        }
    }

    /// Past `EXACT_VALUES` distinct values a histogram holds at most its buckets, and each
    /// quantile it gives is the exact one or above it by less than 2^-7; the maximum is exact.
    #[test]
    fn a_histogram_of_many_distinct_values_stays_small_and_close() {
        let sample: Vec<i64> = (0..200_000_i64).map(|i| (i * 7919) % 1_000_003 - 1_000 + i / 3).collect();
        let mut histogram = Histogram::default();
        for chunk in sample.chunks(977) {
            histogram.extend(chunk);
        }
        assert!(histogram.approximate());
        assert!(histogram.counts.len() <= 2 * 64 * 128, "{} buckets", histogram.counts.len());
        let (p50, p95, max) = histogram.quantiles().unwrap();
        let (e50, e95, emax) = crate::judging::oracle::quantiles(&sample).unwrap();
        assert_eq!(max, emax);
        for (got, exact) in [(p50, e50), (p95, e95)] {
            assert!(got >= exact && (got - exact) as f64 <= exact.unsigned_abs() as f64 / 128.0, "{got} for {exact}");
        }
        assert!(histogram.table_row("x").unwrap().contains(&format!("| ≈{p50} | ≈{p95} | {max} |")));
        let mut few = Histogram::default();
        few.extend(&sample[..EXACT_VALUES]);
        assert!(!few.approximate(), "exact while the distinct values fit");
        for value in [-5_000_000_i64, -129, -1, 0, 1, 255, 256, 257, 1 << 40, i64::MAX, i64::MIN] {
            let (key, magnitude) = (bucket(value), value.unsigned_abs());
            assert!(key.signum() == value.signum() && key.unsigned_abs() <= magnitude, "{value}");
            assert!(magnitude - key.unsigned_abs() <= magnitude >> 7, "{value}: bucket {key}");
        }
    }

    #[test]
    fn cut_off_pairs_are_counted_apart_and_left_out_of_the_quantiles() {
        let finished =
            DesignerFigures { recovery_ms: vec![600_000], tasks_complete: 8, makespan_ms: 7_200_000, ..DesignerFigures::default() };
        let cut = DesignerFigures {
            recovery_ms: vec![30_000_000],
            tasks_complete: 6,
            makespan_ms: 43_200_000,
            cut_off: true,
            ..DesignerFigures::default()
        };
        let md = markdown(&[&finished, &cut]);
        assert!(md.contains("1 pairs finished, 1 cut off by the time limit"), "{md}");
        assert!(md.contains("tasks per simulated hour 4.00 finished, 0.50 cut off"), "{md}");
        assert!(md.contains("| recovery_ms | 1 | 600000 | 600000 | 600000 |"), "{md}");
    }
}
