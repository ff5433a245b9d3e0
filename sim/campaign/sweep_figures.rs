//! summary.md's designer figures of a sweep (issue 31, docs/metrics.md): per scenario and
//! variant, how many pairs finished and how many the time limit cut off, throughput over
//! each, and the designer's figures pooled over the finished pairs only (a cut-off run's
//! samples are truncated by its end, so they never enter a quantile).

use std::fmt::Write as _;

use crate::judging::oracle::designer::DesignerFigures;
use crate::judging::oracle::quantiles;

/// Throughput of `runs` together: tasks complete over simulated hours.
fn throughput(runs: &[&DesignerFigures]) -> String {
    let hours: f64 = runs.iter().map(|d| d.makespan_ms as f64 / 3_600_000.0).sum();
    let tasks: u64 = runs.iter().map(|d| d.tasks_complete).sum();
    if hours > 0.0 {
        format!("{:.2}", tasks as f64 / hours)
    } else {
        "–".to_string()
    }
}

/// The section for one group of pairs (a scenario and variant).
pub fn markdown(group: &[&DesignerFigures]) -> String {
    let (finished, cut): (Vec<&DesignerFigures>, Vec<&DesignerFigures>) = group.iter().partition(|d| !d.cut_off);
    let mut md = format!(
        "\nDesigner figures (docs/metrics.md): {} pairs finished, {} cut off by the time limit (kept out of the quantiles below); tasks per simulated hour {} finished, {} cut off.\n\n",
        finished.len(),
        cut.len(),
        throughput(&finished),
        throughput(&cut)
    );
    md.push_str("| figure (finished pairs) | n | p50 | p95 | max |\n| --- | --- | --- | --- | --- |\n");
    let empty = DesignerFigures::default();
    for (i, (name, _)) in empty.named().into_iter().enumerate() {
        let pooled: Vec<i64> = finished.iter().flat_map(|d| d.named()[i].1.iter().copied()).collect();
        if let Some((p50, p95, max)) = quantiles(&pooled) {
            let _ = writeln!(md, "| {name} | {} | {p50} | {p95} | {max} |", pooled.len());
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

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
