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
#[derive(Clone, Debug, Default)]
pub struct Histogram {
    counts: BTreeMap<i64, u64>,
    len: u64,
}

impl Histogram {
    pub fn extend(&mut self, sample: &[i64]) {
        for &value in sample {
            *self.counts.entry(value).or_insert(0) += 1;
        }
        self.len += sample.len() as u64;
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// (p50, p95, max), as `quantiles` of the sample listed; `None` when empty.
    pub fn quantiles(&self) -> Option<(i64, i64, i64)> {
        let (&max, _) = self.counts.last_key_value()?;
        let rank = |q: f64| {
            let at = ((q * self.len as f64).ceil() as u64).clamp(1, self.len);
            let mut seen = 0;
            for (&value, &count) in &self.counts {
                seen += count;
                if seen >= at {
                    return value;
                }
            }
            max
        };
        Some((rank(0.5), rank(0.95), max))
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
            if let Some((p50, p95, max)) = pooled.quantiles() {
                let _ = writeln!(md, "| {name} | {} | {p50} | {p95} | {max} |", pooled.len());
            }
        }
        md
    }
}

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
