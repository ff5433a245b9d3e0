//! The line charts and the where-latency-goes bars of `rehearsal bench` (issue 31,
//! docs/metrics.md): `lines-<metric>.svg`, a metric over the first picture parameter with a
//! line per value of the second; `causes-<measurement>.svg`, a stacked bar per grid point of
//! a measurement's mean split into its causes; `causes.csv`, those means as numbers.

use std::path::{Path, PathBuf};

use super::figures::{mean_causes_ms, split_cut_off, CAUSE_MEASUREMENTS};
use super::{aggregate, BenchOptions, Point, RunStat};
use crate::base::atomic::write_atomically;
use crate::base::error::{Error, Result};
use crate::judging::oracle::latency::Cause;
use crate::report::line_chart::{line_chart, Line, LineChart, LinePoint};
use crate::report::stacked_bars::{stacked_bars, Stack, StackedBars};
use crate::vocab::RunOutcome;

/// A line chart's metric: its file stem, title, sentence and unit; the bench.csv columns of
/// its value and p95 (or none), and of its value over cut-off runs (or none); the divisor
/// from the column's unit to the chart's.
struct LineMetric {
    stem: &'static str,
    title: &'static str,
    meaning: &'static str,
    unit: &'static str,
    value: &'static str,
    p95: Option<&'static str>,
    cut_off_value: Option<&'static str>,
    divisor: f64,
    /// What a filled point (and the band) is, for the legend.
    marks: &'static str,
}

const LINE_METRICS: [LineMetric; 9] = [
    LineMetric {
        stem: "throughput",
        title: "Throughput: tasks completed per simulated hour",
        meaning: "finished runs: tasks complete / simulated hours; hollow: runs cut off by the time limit (tasks done by then); collapsed runs (conductor ended on SQLITE_BUSY) counted under the axis, never in a value",
        unit: "tasks / simulated hour",
        value: "tasks_per_sim_hour",
        p95: None,
        cut_off_value: Some("tasks_per_sim_hour_cut_off"),
        marks: "finished runs together",
        divisor: 1.0,
    },
    LineMetric {
        stem: "recovery",
        title: "Recovery: a session's crash to its successor's claim",
        meaning: "p50 line, band to p95, over finished runs",
        unit: "s",
        value: "recovery_ms_p50",
        p95: Some("recovery_ms_p95"),
        cut_off_value: None,
        marks: "p50 of finished runs; band up to p95",
        divisor: 1000.0,
    },
    LineMetric {
        stem: "crash-detect",
        title: "Crash detection: a crash to the conductor's stale declaration",
        meaning: "p50 line, band to p95, over finished runs",
        unit: "s",
        value: "crash_detect_ms_p50",
        p95: Some("crash_detect_ms_p95"),
        cut_off_value: None,
        marks: "p50 of finished runs; band up to p95",
        divisor: 1000.0,
    },
    LineMetric {
        stem: "review-wait",
        title: "Review wait: needs_review to the conductor's answer",
        meaning: "p50 line, band to p95, over finished runs; the one conductor reviews one task at a time",
        unit: "s",
        value: "review_wait_ms_p50",
        p95: Some("review_wait_ms_p95"),
        cut_off_value: None,
        marks: "p50 of finished runs; band up to p95",
        divisor: 1000.0,
    },
    LineMetric {
        stem: "review-queue",
        title: "Review queue: rows in needs_review at each conductor poll",
        meaning: "mean line, band to the largest, over finished runs",
        unit: "review requests waiting",
        value: "review_queue_len_mean",
        p95: Some("review_queue_len_max"),
        cut_off_value: None,
        marks: "mean of finished runs; band up to the largest",
        divisor: 1.0,
    },
    LineMetric {
        stem: "first-claim",
        title: "Time to first claim: a task's row created to its first session's claim",
        meaning: "p50 line, band to p95, over finished runs",
        unit: "s",
        value: "first_claim_ms_p50",
        p95: Some("first_claim_ms_p95"),
        cut_off_value: None,
        marks: "p50 of finished runs; band up to p95",
        divisor: 1000.0,
    },
    LineMetric {
        stem: "notice-background",
        title: "Message notice by the background watcher",
        meaning: "a conductor message sent to its reading, noticed by the background watcher: p50 line, band to p95",
        unit: "s",
        value: "notice_background_ms_p50",
        p95: Some("notice_background_ms_p95"),
        cut_off_value: None,
        marks: "p50 of finished runs; band up to p95",
        divisor: 1000.0,
    },
    LineMetric {
        stem: "notice-pause",
        title: "Message notice by the pause watcher",
        meaning: "a conductor answer sent to its reading, noticed by the pause watcher: p50 line, band to p95",
        unit: "s",
        value: "notice_pause_ms_p50",
        p95: Some("notice_pause_ms_p95"),
        cut_off_value: None,
        marks: "p50 of finished runs; band up to p95",
        divisor: 1000.0,
    },
    LineMetric {
        stem: "statements",
        title: "Database load: protocol statements per simulated hour",
        meaning: "all runs that did not end in an error, cut-off ones included (a rate, not a quantile)",
        unit: "statements / simulated hour",
        value: "statements_per_sim_hour",
        p95: None,
        cut_off_value: None,
        marks: "all runs together",
        divisor: 1.0,
    },
];

/// The measurements drawn as stacked bars, with their titles.
const CAUSE_CHARTS: [(&str, &str); 3] = [
    ("recovery_ms", "Where recovery time goes: a crash to the successor's claim"),
    ("crash_detect_ms", "Where crash-detection time goes: a crash to the stale declaration"),
    ("message_notice_ms", "Where message-notice time goes: a conductor message to its reading"),
];

/// Writes every line chart, stacked-bar chart and causes.csv; returns their paths.
pub fn write(options: &BenchOptions, points: &[Point], runs: &[RunStat], x: usize, along: Option<usize>) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for metric in &LINE_METRICS {
        let path = options.out.join(format!("lines-{}.svg", metric.stem));
        write_atomically(&path, lines_svg(options, points, runs, x, along, metric).as_bytes())?;
        written.push(path);
    }
    for (measurement, title) in CAUSE_CHARTS {
        let path = options.out.join(format!("causes-{measurement}.svg"));
        write_atomically(&path, causes_svg(options, points, runs, measurement, title).as_bytes())?;
        written.push(path);
    }
    let path = options.out.join("causes.csv");
    write_atomically(&path, causes_csv(options, points, runs)?.as_bytes())?;
    written.push(path);
    Ok(written)
}

/// The runs of the points `keep` picks.
fn runs_of<'a>(points: &[Point], runs: &'a [RunStat], keep: impl Fn(&Point) -> bool) -> Vec<&'a RunStat> {
    let chosen: Vec<usize> = points.iter().filter(|p| keep(p)).map(|p| p.index).collect();
    runs.iter().filter(|r| chosen.contains(&r.point)).collect()
}

fn column(row: &[(String, String)], name: &str, divisor: f64) -> Option<f64> {
    row.iter().find(|(n, _)| n == name).and_then(|(_, v)| v.parse::<f64>().ok()).map(|v| v / divisor)
}

fn lines_svg(options: &BenchOptions, points: &[Point], runs: &[RunStat], x: usize, along: Option<usize>, metric: &LineMetric) -> String {
    let px = &options.params[x];
    let xs: Vec<String> = (0..px.len()).map(|i| px.label(i)).collect();
    let line_steps: Vec<Option<usize>> = match along {
        Some(y) => (0..options.params[y].len()).map(Some).collect(),
        None => vec![None],
    };
    let lines: Vec<Line> = line_steps
        .iter()
        .map(|step| {
            let name = match (along, step) {
                (Some(y), Some(i)) => format!("{} = {}", options.params[y].name(), options.params[y].label(*i)),
                _ => "all runs".to_string(),
            };
            let points = (0..xs.len())
                .map(|col| {
                    let mine =
                        runs_of(points, runs, |p| p.choice[x] == col && step.is_none_or(|i| along.is_some_and(|y| p.choice[y] == i)));
                    line_point(&mine, metric)
                })
                .collect();
            Line { name, points }
        })
        .collect();
    let counts: Vec<(usize, usize, usize)> = (0..xs.len())
        .map(|col| {
            let mine = runs_of(points, runs, |p| p.choice[x] == col);
            let ok: Vec<&RunStat> = mine.into_iter().filter(|r| r.verdict != RunOutcome::Error).collect();
            (ok.len(), split_cut_off(&ok).1.len(), super::figures::collapsed_runs(&ok))
        })
        .collect();
    let title = metric.title;
    let meaning = format!("{}; {} seeds per grid point", metric.meaning, options.seeds.len());
    line_chart(&LineChart {
        title,
        meaning: &meaning,
        unit: metric.unit,
        x_name: &px.name(),
        xs: &xs,
        runs: &counts,
        lines: &lines,
        marks: metric.marks,
    })
}

/// A step's point: the metric over its finished runs, else its cut-off value (hollow).
fn line_point(runs: &[&RunStat], metric: &LineMetric) -> LinePoint {
    let row = aggregate(runs);
    let value = column(&row, metric.value, metric.divisor);
    let p95 = metric.p95.and_then(|name| column(&row, name, metric.divisor));
    match (value, metric.cut_off_value.and_then(|name| column(&row, name, metric.divisor))) {
        (Some(value), _) => LinePoint { value: Some(value), p95, cut_off_only: false },
        (None, Some(cut)) => LinePoint { value: Some(cut), p95: None, cut_off_only: true },
        (None, None) => LinePoint::default(),
    }
}

/// A grid point as a bar's label: its values, `/`-separated.
fn point_label(options: &BenchOptions, point: &Point) -> String {
    options.params.iter().zip(&point.choice).map(|(p, &i)| p.label(i)).collect::<Vec<_>>().join(" / ")
}

fn causes_svg(options: &BenchOptions, points: &[Point], runs: &[RunStat], measurement: &str, title: &str) -> String {
    let words: Vec<&str> = Cause::ALL.iter().map(|c| c.words()).collect();
    let stacks: Vec<Stack> = points
        .iter()
        .map(|point| {
            let mine: Vec<&RunStat> = runs.iter().filter(|r| r.point == point.index && r.verdict != RunOutcome::Error).collect();
            let (mean_ms, n) = mean_causes_ms(&mine, measurement);
            Stack {
                label: point_label(options, point),
                parts_s: mean_ms.iter().map(|ms| ms / 1000.0).collect(),
                measurements: n,
                cut_off_runs: split_cut_off(&mine).1.len(),
            }
        })
        .collect();
    let names: Vec<String> = options.params.iter().map(|p| p.name()).collect();
    let meaning = format!("mean of each cause over the finished runs' measurements; {} seeds per grid point", options.seeds.len());
    stacked_bars(&StackedBars { title, meaning: &meaning, x_name: &names.join(" / "), causes: &words, stacks: &stacks })
}

/// causes.csv: per grid point and measurement, how many measurements, their mean, and the
/// mean of each cause (they sum to the mean, to rounding), over finished runs.
fn causes_csv(options: &BenchOptions, points: &[Point], runs: &[RunStat]) -> Result<String> {
    let bad = |e: csv::Error| Error::harness(format!("causes.csv: {e}"));
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = vec!["point".into()];
    header.extend(options.params.iter().flat_map(|p| p.names.iter().cloned()));
    header.extend(["measurement", "n", "cut_off_runs", "mean_ms"].map(String::from));
    header.extend(Cause::ALL.iter().map(|c| format!("{}_ms", c.as_str())));
    writer.write_record(&header).map_err(bad)?;
    for point in points {
        let mine: Vec<&RunStat> = runs.iter().filter(|r| r.point == point.index && r.verdict != RunOutcome::Error).collect();
        for measurement in CAUSE_MEASUREMENTS {
            let (mean_ms, n) = mean_causes_ms(&mine, measurement);
            let mut record: Vec<String> = vec![format!("p{:03}", point.index)];
            record.extend(options.params.iter().zip(&point.choice).flat_map(|(p, &i)| p.labels[i].iter().cloned()));
            record.extend([measurement.to_string(), n.to_string(), split_cut_off(&mine).1.len().to_string()]);
            record.push(format!("{:.0}", mean_ms.iter().sum::<f64>()));
            record.extend(mean_ms.iter().map(|ms| format!("{ms:.0}")));
            writer.write_record(&record).map_err(bad)?;
        }
    }
    let bytes = writer.into_inner().map_err(|e| Error::harness(format!("causes.csv: {e}")))?;
    String::from_utf8(bytes).map_err(|e| Error::harness(format!("causes.csv: {e}")))
}

/// Whether `path` is one of the files this module writes (for the bench's stdout labels).
pub fn kind_of(path: &Path) -> &'static str {
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    if name.starts_with("lines-") {
        "lines"
    } else if name.starts_with("causes-") {
        "causes"
    } else if name.ends_with(".csv") {
        "table"
    } else {
        "heatmap"
    }
}
