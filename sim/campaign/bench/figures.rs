//! What a designer reads off a bench grid point beyond its verdicts (issue 31,
//! docs/metrics.md): throughput, time to first claim, the conductor's review queue and wait,
//! message notice by the watcher that noticed, recovery after a crash, and where each latency
//! went (its causes, averaged). Runs the time limit cut off are counted apart: their samples
//! never enter a quantile (a run stopped at 12 h has latencies its end truncated, and tasks
//! it never finished), and their throughput has a column of its own.

use std::collections::BTreeMap;

use super::RunStat;
use crate::judging::oracle::designer::DesignerFigures;
use crate::judging::oracle::latency::Cause;
use crate::judging::oracle::quantiles;
use crate::run::RunSummary;
use crate::vocab::Ending;

/// Per measurement: the sum of each cause's ms over its decompositions, and how many.
pub type CauseSums = BTreeMap<&'static str, ([i64; Cause::ALL.len()], usize)>;

/// The measurements whose causes bench averages (`causes.csv`, the stacked bars).
pub const CAUSE_MEASUREMENTS: [&str; 5] = ["recovery_ms", "crash_detect_ms", "message_notice_ms", "exit_to_claim_ms", "review_resume_ms"];

/// What one run adds to its grid point's designer figures.
#[derive(Clone, Debug, Default)]
pub struct RunFigures {
    /// The time limit ended the run with actors still running (`Ending::TimeLimit`).
    pub cut_off: bool,
    /// The conductor ended on SQLITE_BUSY or an I/O error (sim/judging/collapse.rs, C62).
    pub collapsed: bool,
    pub tasks_complete: usize,
    pub makespan_ms: i64,
    pub designer: DesignerFigures,
    pub causes: CauseSums,
}

impl RunFigures {
    pub fn of(summary: &RunSummary) -> RunFigures {
        let mut causes = CauseSums::new();
        for d in summary.measured.decompositions.iter().filter(|d| CAUSE_MEASUREMENTS.contains(&d.measurement)) {
            let (sums, n) = causes.entry(d.measurement).or_insert(([0; Cause::ALL.len()], 0));
            for (sum, ms) in sums.iter_mut().zip(d.components_ms) {
                *sum += ms;
            }
            *n += 1;
        }
        RunFigures {
            cut_off: summary.ending == Ending::TimeLimit,
            collapsed: summary.measured.designer.collapsed(),
            tasks_complete: summary.tasks_complete,
            makespan_ms: summary.makespan_ms,
            designer: summary.measured.designer.clone(),
            causes,
        }
    }
}

/// The runs that finished (every actor ended, the conductor not on a failure), and the ones
/// the time limit cut off. Collapsed runs are in neither (`collapsed_runs`).
pub fn split_cut_off<'a>(runs: &[&'a RunStat]) -> (Vec<&'a RunStat>, Vec<&'a RunStat>) {
    runs.iter().filter(|r| !r.figures.collapsed).partition(|r| !r.figures.cut_off)
}

/// The runs whose conductor ended on SQLITE_BUSY or an I/O error (docs/protocol.md C62).
pub fn collapsed_runs(runs: &[&RunStat]) -> usize {
    runs.iter().filter(|r| r.figures.collapsed).count()
}

/// Tasks completed per simulated hour over `runs` together (empty for no simulated time).
pub fn tasks_per_sim_hour(runs: &[&RunStat]) -> String {
    let hours: f64 = runs.iter().map(|r| r.figures.makespan_ms as f64 / 3_600_000.0).sum();
    let tasks: usize = runs.iter().map(|r| r.figures.tasks_complete).sum();
    if hours > 0.0 {
        format!("{:.2}", tasks as f64 / hours)
    } else {
        String::new()
    }
}

/// The designer's columns of a grid point (or a heatmap cell) over its runs that did not end
/// in a harness error: run counts, throughput, and the figures' quantiles over finished runs.
pub fn columns(ok: &[&RunStat]) -> Vec<(String, String)> {
    let (finished, cut) = split_cut_off(ok);
    let mut row: Vec<(String, String)> = vec![
        ("finished_runs".into(), finished.len().to_string()),
        ("cut_off_runs".into(), cut.len().to_string()),
        ("collapsed_runs".into(), collapsed_runs(ok).to_string()),
        ("tasks_per_sim_hour".into(), tasks_per_sim_hour(&finished)),
        ("tasks_per_sim_hour_cut_off".into(), tasks_per_sim_hour(&cut)),
    ];
    let empty = DesignerFigures::default();
    for (i, (name, _)) in empty.named().into_iter().enumerate() {
        let pooled: Vec<i64> = finished.iter().flat_map(|r| r.figures.designer.named()[i].1.iter().copied()).collect();
        if name == "review_queue_len" {
            let mean =
                if pooled.is_empty() { String::new() } else { format!("{:.2}", pooled.iter().sum::<i64>() as f64 / pooled.len() as f64) };
            row.push(("review_queue_len_mean".into(), mean));
            row.push(("review_queue_len_max".into(), pooled.iter().max().map(i64::to_string).unwrap_or_default()));
            continue;
        }
        if name == "recovery_ms" {
            row.push(("recoveries".into(), pooled.len().to_string()));
        }
        let (p50, p95) = quantiles(&pooled).map_or((String::new(), String::new()), |(p50, p95, _)| (p50.to_string(), p95.to_string()));
        row.push((format!("{}_p50", name), p50));
        row.push((format!("{}_p95", name), p95));
    }
    row
}

/// The mean ms of each cause of `measurement` over the finished runs, and how many
/// measurements they average (none: zeros and 0).
pub fn mean_causes_ms(runs: &[&RunStat], measurement: &str) -> ([f64; Cause::ALL.len()], usize) {
    let (finished, _) = split_cut_off(runs);
    let mut sums = [0_i64; Cause::ALL.len()];
    let mut n = 0;
    for (run_sums, count) in finished.iter().filter_map(|r| r.figures.causes.get(measurement)) {
        for (sum, ms) in sums.iter_mut().zip(run_sums) {
            *sum += ms;
        }
        n += count;
    }
    let mean = sums.map(|sum| if n == 0 { 0.0 } else { sum as f64 / n as f64 });
    (mean, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(cut_off: bool, tasks: usize, hours: i64, recovery_ms: Vec<i64>) -> RunStat {
        let designer = DesignerFigures { recovery_ms, review_queue_len: vec![0, 2, 4], ..DesignerFigures::default() };
        let mut causes = CauseSums::new();
        let mut sums = [0; Cause::ALL.len()];
        // Two recoveries a run: their components summed.
        sums[Cause::Threshold.index()] = 1_080_000;
        sums[Cause::PollWait.index()] = 40_000;
        causes.insert("recovery_ms", (sums, 2));
        let figures = RunFigures { cut_off, collapsed: false, tasks_complete: tasks, makespan_ms: hours * 3_600_000, designer, causes };
        RunStat { verdict: crate::vocab::RunOutcome::Pass, figures, ..RunStat::default() }
    }

    fn get<'a>(row: &'a [(String, String)], name: &str) -> &'a str {
        row.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str()).unwrap_or_else(|| panic!("no column {name}"))
    }

    #[test]
    fn collapsed_runs_are_counted_apart_and_kept_out_of_the_throughput() {
        let healthy = run(false, 10, 2, vec![]);
        let mut collapsed = run(false, 0, 1, vec![]);
        collapsed.figures.collapsed = true;
        let row = columns(&[&healthy, &collapsed]);
        let get = |name: &str| row.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()).unwrap();
        assert_eq!((get("finished_runs"), get("collapsed_runs")), ("1".into(), "1".into()));
        assert_eq!(get("tasks_per_sim_hour"), "5.00", "10 tasks in 2 h; the collapsed hour is not in it");
        let row = columns(&[&collapsed]);
        let get = |name: &str| row.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()).unwrap();
        assert_eq!((get("tasks_per_sim_hour"), get("collapsed_runs")), (String::new(), "1".into()), "drawn as collapsed, not as 0 tasks/h");
    }

    #[test]
    fn cut_off_runs_are_counted_apart_and_kept_out_of_the_quantiles() {
        let (a, b, cut) = (run(false, 8, 2, vec![600_000]), run(false, 16, 3, vec![700_000, 800_000]), run(true, 70, 12, vec![30_000_000]));
        let row = columns(&[&a, &b, &cut]);
        assert_eq!((get(&row, "finished_runs"), get(&row, "cut_off_runs")), ("2", "1"));
        assert_eq!(get(&row, "tasks_per_sim_hour"), "4.80", "24 tasks in 5 finished hours");
        assert_eq!(get(&row, "tasks_per_sim_hour_cut_off"), "5.83", "70 tasks by the 12 h limit");
        assert_eq!((get(&row, "recoveries"), get(&row, "recovery_ms_p50"), get(&row, "recovery_ms_p95")), ("3", "700000", "800000"));
        assert_eq!((get(&row, "review_queue_len_mean"), get(&row, "review_queue_len_max")), ("2.00", "4"));
        let only_cut = columns(&[&cut]);
        assert_eq!((get(&only_cut, "tasks_per_sim_hour"), get(&only_cut, "recovery_ms_p95")), ("", ""), "no finished run, no quantile");
        let (mean, n) = mean_causes_ms(&[&a, &b, &cut], "recovery_ms");
        assert_eq!(n, 4, "two per finished run; the cut-off run's are left out");
        assert_eq!((mean[Cause::Threshold.index()], mean[Cause::PollWait.index()]), (540_000.0, 20_000.0), "sums over n: {mean:?}");
    }
}
