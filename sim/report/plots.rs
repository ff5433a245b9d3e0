//! The SVG charts under `plots/`: each timing measurement's distribution against its budget,
//! context per session over time, and the heartbeat age of each task at each conductor poll.

use std::fmt::Write as _;

use super::html::esc;
use super::model::Model;
/// One named line (or set of bars) of a chart: its (x, y) points.
pub use super::series::Series;
use super::ticks::{label, nice_ticks};
use crate::input::scenario::Scenario;
use crate::run::RunSummary;

/// Every plot of a run: (path under the run folder, SVG text), in the order they are written.
pub fn plots(model: &Model, summary: &RunSummary, scenario: &Scenario) -> Vec<(String, String)> {
    let mut plots = latency_plots(summary, scenario);
    let context = model.context.series();
    plots.push((
        "plots/context.svg".to_string(),
        chart("context per session", "simulated minutes", "context %", &context, &[(50.0, "evaluate 50 %"), (80.0, "ceiling 80 %")], false),
    ));
    plots.push(("plots/heartbeat-age.svg".to_string(), heartbeat_age_chart(&model.ages.series(), scenario)));
    plots
}

/// The heartbeat ages against the scenario's own thresholds: the refresh interval the
/// musicians keep (`timing.heartbeat_refresh_s`) and the age at which the conductor declares
/// a session stale (`conductor.staleness_s`), as resolved for this run (variants applied).
fn heartbeat_age_chart(ages: &[Series], scenario: &Scenario) -> String {
    let refresh_s = scenario.timing.heartbeat_refresh_s;
    let stale_s = scenario.conductor.staleness_s;
    let (refresh, stale) = (format!("refresh {refresh_s} s"), format!("stale {stale_s} s"));
    chart(
        "heartbeat age at conductor polls",
        "simulated minutes",
        "seconds",
        ages,
        &[(refresh_s as f64, refresh.as_str()), (stale_s as f64, stale.as_str())],
        false,
    )
}

/// Latency distributions against their budgets: one plot per timing measurement.
fn latency_plots(summary: &RunSummary, scenario: &Scenario) -> Vec<(String, String)> {
    let mut plots = Vec::new();
    for ((name, sample), limit) in summary.measured.named().into_iter().zip(super::budget_limits(scenario)) {
        let mut sorted = sample.clone();
        sorted.sort_unstable();
        let points: Vec<(f64, f64)> =
            sorted.iter().enumerate().map(|(i, v)| ((i + 1) as f64 / sorted.len().max(1) as f64 * 100.0, *v as f64)).collect();
        let budget_label = limit.map(|l| format!("budget {l}"));
        let lines: Vec<(f64, &str)> = match (&budget_label, limit) {
            (Some(label), Some(l)) => vec![(l as f64, label.as_str())],
            _ => Vec::new(),
        };
        // docs/protocol.md C115: a budget derived from the conductor's policy says so.
        let derived = summary.budgets.iter().find(|b| b.name == name).map_or(String::new(), |b| b.derivation_note());
        let title = format!("{name}: distribution (n={}){derived}", sample.len());
        plots.push((format!("plots/{name}.svg"), chart(&title, "percentile", name, &[(name.to_string(), points)], &lines, false)));
    }
    plots
}

/// The drawing area of a chart: its size and margins, and the data's maxima.
struct Frame {
    w: f64,
    h: f64,
    l: f64,
    b: f64,
    x_max: f64,
    y_max: f64,
}

impl Frame {
    fn new(series: &[Series], lines: &[(f64, &str)]) -> Frame {
        let xs = series.iter().flat_map(|(_, p)| p.iter().map(|(x, _)| *x));
        let ys = series.iter().flat_map(|(_, p)| p.iter().map(|(_, y)| *y)).chain(lines.iter().map(|(y, _)| *y));
        // Axes end on a round tick (`ticks.rs`), not 10 % above the data (89151 was a tick).
        let top = |max: f64| *nice_ticks(max, 4).last().expect("ticks are never empty");
        Frame { w: 720.0, h: 360.0, l: 60.0, b: 40.0, x_max: top(xs.fold(1.0_f64, f64::max)), y_max: top(ys.fold(1.0_f64, f64::max)) }
    }

    fn px(&self, x: f64) -> f64 {
        self.l + x / self.x_max * (self.w - self.l - 20.0)
    }

    fn py(&self, y: f64) -> f64 {
        self.h - self.b - y / self.y_max * (self.h - self.b - 30.0)
    }

    /// The title, both axes with their labels and five ticks each.
    fn axes(&self, svg: &mut String, title: &str, x_label: &str, y_label: &str) {
        let Frame { w, h, l, b, x_max, y_max } = *self;
        let _ = writeln!(svg, "<text x=\"{l}\" y=\"16\" font-size=\"13\">{}</text>", esc(title));
        let _ = writeln!(svg, "<line x1=\"{l}\" y1=\"{0}\" x2=\"{1}\" y2=\"{0}\" stroke=\"#333\"/><line x1=\"{l}\" y1=\"30\" x2=\"{l}\" y2=\"{0}\" stroke=\"#333\"/>", h - b, w - 20.0);
        let _ = writeln!(svg, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text><text x=\"14\" y=\"{}\" transform=\"rotate(-90 14 {})\" text-anchor=\"middle\">{}</text>", (w + l) / 2.0, h - 8.0, esc(x_label), h / 2.0, h / 2.0, esc(y_label));
        for yv in nice_ticks(y_max, 4) {
            let _ = writeln!(svg, "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>", l - 4.0, self.py(yv) + 4.0, esc(&label(yv)));
        }
        for xv in nice_ticks(x_max, 4) {
            let _ =
                writeln!(svg, "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>", self.px(xv), h - b + 14.0, esc(&label(xv)));
        }
    }

    /// One series as bars or as a line, in colour `c`.
    fn series(&self, svg: &mut String, name: &str, points: &[(f64, f64)], c: &str, bars: bool) {
        if bars {
            let bw = ((self.w - self.l - 20.0) / points.len().max(1) as f64 * 0.8).max(1.0);
            for (x, y) in points {
                let _ = writeln!(
                    svg,
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{bw:.1}\" height=\"{:.1}\" fill=\"{c}\"><title>{x:.0}: {y:.0}</title></rect>",
                    self.px(*x) - bw / 2.0,
                    self.py(*y),
                    (self.h - self.b) - self.py(*y)
                );
            }
        } else {
            // Written in place, a point at a time: the charts of a day's fleet have ~200,000
            // points, and a `String` formatted for each was most of the plots' cost (issue 47).
            svg.push_str("<path d=\"");
            for (j, (x, y)) in points.iter().enumerate() {
                svg.push_str(if j == 0 { "M" } else { " L" });
                push_1(svg, self.px(*x));
                svg.push(' ');
                push_1(svg, self.py(*y));
            }
            let _ = writeln!(svg, "\" fill=\"none\" stroke=\"{c}\" stroke-width=\"1.2\"><title>{}</title></path>", esc(name));
        }
    }
}

/// Appends `value` as `format!("{value:.1}")` writes it, byte for byte. A non-negative finite
/// value whose tenths are not within a hair of a tie is rounded here in integers (`{:.1}`
/// rounds the exact binary value to the nearest tenth, and `value * 10` is within a few ulps
/// of its exact product, so away from a tie both round alike); anything else, ties included,
/// goes to the formatter itself.
fn push_1(out: &mut String, value: f64) {
    let tenths = value * 10.0;
    let off_tie = ((tenths - tenths.floor()) - 0.5).abs() > tenths * 1e-12 + 1e-12;
    if value.is_finite() && value.is_sign_positive() && tenths < 1e15 && off_tie {
        let n = tenths.round() as u64;
        let mut digits = [0_u8; 24];
        let mut i = digits.len();
        let mut rest = n;
        // The tenths digit, the point, then the whole part (at least one digit).
        i -= 1;
        digits[i] = b'0' + (rest % 10) as u8;
        rest /= 10;
        i -= 1;
        digits[i] = b'.';
        loop {
            i -= 1;
            digits[i] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        out.push_str(std::str::from_utf8(&digits[i..]).expect("ASCII digits"));
    } else {
        let _ = write!(out, "{value:.1}");
    }
}

const PALETTE: [&str; 10] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];

/// A small SVG chart: series of (x, y) points, optional horizontal reference lines.
fn chart(title: &str, x_label: &str, y_label: &str, series: &[Series], lines: &[(f64, &str)], bars: bool) -> String {
    let frame = Frame::new(series, lines);
    let (w, h, l) = (frame.w, frame.h, frame.l);
    let mut svg =
        format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"11\">\n");
    frame.axes(&mut svg, title, x_label, y_label);
    for (i, (name, points)) in series.iter().enumerate() {
        let c = PALETTE[i % PALETTE.len()];
        frame.series(&mut svg, name, points, c, bars);
        let _ = writeln!(svg, "<text x=\"{}\" y=\"{}\" fill=\"{c}\">{}</text>", w - 150.0, 30.0 + 13.0 * i as f64, esc(name));
    }
    for (y, label) in lines {
        // On a pixel row's centre, so the 1 px line is drawn crisp, not as two pale rows.
        let row = frame.py(*y).floor() + 0.5;
        let _ = writeln!(svg, "<line x1=\"{l}\" y1=\"{0:.1}\" x2=\"{1}\" y2=\"{0:.1}\" stroke=\"#d0021b\" stroke-dasharray=\"5 4\"/><text x=\"{2}\" y=\"{3:.1}\" fill=\"#d0021b\">{4}</text>", row, w - 20.0, l + 4.0, row - 3.0, esc(label));
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::series::{ContextTrajectories, HeartbeatAges};
    use crate::trace::trace_reader::TraceRecord;
    use crate::vocab::{SessionPlace, TaskState};

    fn heartbeat_ages(records: &[TraceRecord]) -> Vec<Series> {
        let mut ages = HeartbeatAges::default();
        records.iter().for_each(|r| ages.add(r));
        ages.series()
    }

    fn context_trajectories(records: &[TraceRecord]) -> Vec<Series> {
        let mut context = ContextTrajectories::default();
        records.iter().for_each(|r| context.add(r));
        context.series()
    }

    use crate::report::test_record as record;

    #[test]
    fn heartbeat_age_is_the_time_since_the_rows_last_write_at_each_conductor_poll() {
        let records = [
            record(0, "conductor", "sql", "conductor_set_state", Some(TaskState::Working), "task_id=task-00 state=working"),
            record(60_000, "task-01.S1", "sql", "claim_task", Some(TaskState::Working), "task_id=task-01"),
            record(90_000, "conductor", "sql", "poll_tasks", None, ""),
            record(120_000, "task-02.S1", "sql", "claim_task", Some(TaskState::Working), "task_id=task-02"),
            // A read changes nothing: it is no write on the row.
            record(130_000, "task-01.S1.bg-watcher-1", "sql", "read_new_conductor_messages", None, "task_id=task-01"),
            record(150_000, "conductor", "sql", "poll_tasks", None, ""),
            // A write the conductor makes on a musician's row counts too.
            record(170_000, "conductor", "sql", "set_task_state", Some(TaskState::ReviewApproved), "task_id=task-01 state=review_approved"),
            record(180_000, "conductor", "sql", "poll_tasks", None, ""),
        ];
        let ages = heartbeat_ages(&records);
        let names: Vec<&str> = ages.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["task-01", "task-02"], "the conductor's own row (task-00) is no series");
        assert_eq!(ages[0].1, [(1.5, 30.0), (2.5, 90.0), (3.0, 10.0)]);
        assert_eq!(ages[1].1, [(2.5, 30.0), (3.0, 60.0)]);
    }

    #[test]
    fn a_completed_task_is_no_longer_drawn() {
        let records = [
            record(60_000, "task-01.S1", "sql", "claim_task", Some(TaskState::Working), "task_id=task-01"),
            record(90_000, "conductor", "sql", "poll_tasks", None, ""),
            record(100_000, "conductor", "sql", "set_task_state", Some(TaskState::Complete), "task_id=task-01 state=complete"),
            record(150_000, "conductor", "sql", "poll_tasks", None, ""),
            record(990_000, "conductor", "sql", "poll_tasks", None, ""),
        ];
        assert_eq!(heartbeat_ages(&records), [("task-01".to_string(), vec![(1.5, 30.0)])]);
    }

    #[test]
    fn the_heartbeat_chart_draws_the_scenarios_own_thresholds() {
        let text = "[timing]\nheartbeat_refresh_s = 300\n[conductor]\nstaleness_s = 360\n[tasks]\ncount = 1\nsteps = 3\n";
        let scenario = Scenario::parse(text, std::path::Path::new("t.toml")).expect("a scenario");
        let svg = heartbeat_age_chart(&[("task-01".to_string(), vec![(0.0, 10.0), (5.0, 200.0)])], &scenario);
        assert!(svg.contains(">refresh 300 s</text>") && svg.contains(">stale 360 s</text>"), "{svg}");
        assert!(!svg.contains("480 s") && !svg.contains("540 s"), "{svg}");
    }

    #[test]
    fn context_trajectories_follow_each_sessions_status_lines() {
        let records = [
            record(60_000, "task-01.S1", "file_append", "temp/task-01-status", None, "bootstrap started [ctx: 5%]"),
            record(120_000, "task-01.S1", "file_append", "temp/task-01-deviations", None, "step 1 [ctx: 9%]"),
            record(180_000, "task-01.S2", "file_append", "temp/task-01-status", None, "bootstrap started [ctx: 4%]"),
            record(240_000, "task-01.S1", "file_append", "temp/task-01-status", None, "step 1 started [ctx: 12%]"),
            record(300_000, "task-01.S1", "file_write", "temp/task-01-status", None, "rewritten [ctx: 99%]"),
        ];
        let series = context_trajectories(&records);
        assert_eq!(series, [("task-01.S1".to_string(), vec![(1.0, 5.0), (4.0, 12.0)]), ("task-01.S2".to_string(), vec![(3.0, 4.0)])]);
        assert_eq!(records[0].place(), Some(SessionPlace { task: 1, session: 1, twin: false }));
    }

    /// `push_1` writes what `{:.1}` writes: ties of every kind, negative values and zeros,
    /// large values and not-numbers, and two million values of the kinds the charts draw.
    #[test]
    fn push_1_writes_what_the_formatter_writes() {
        let mut values = vec![0.0, -0.0, 0.05, 0.15, 0.25, 0.35, 0.45, 1.25, 2.5, 1e14 + 0.05, 1e15, 1e16, -0.04, -1.25, 123.45];
        values.extend([f64::NAN, f64::INFINITY, f64::NEG_INFINITY, f64::MIN_POSITIVE, f64::MAX, 0.999_999_999_999, 9.95, 99.95]);
        for i in 0..500_000_u64 {
            // Pixels as the charts compute them (a ratio times a width), and plain decimals.
            values.push(60.0 + (i % 86_400) as f64 / 86_400.0 * 640.0);
            values.push(360.0 - 40.0 - (i as f64 / 3.0) / 1_000.0 * 290.0);
            values.push(i as f64 / 100.0);
            values.push(i as f64 * 0.05);
        }
        let mut out = String::new();
        for v in values {
            out.clear();
            push_1(&mut out, v);
            assert_eq!(out, format!("{v:.1}"), "{v:e}");
        }
    }

    #[test]
    fn a_chart_draws_each_series_its_legend_and_reference_lines() {
        let series = [("a<b".to_string(), vec![(0.0, 1.0), (10.0, 2.0)])];
        let svg = chart("title & more", "x", "y", &series, &[(5.0, "budget 5")], false);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"720\" height=\"360\""), "{svg}");
        assert!(svg.contains(">title &amp; more</text>") && svg.contains("<title>a&lt;b</title></path>"), "{svg}");
        assert!(svg.contains("<path d=\"M60.0 271.7 L700.0 223.3\"") && svg.contains(">budget 5</text>"), "{svg}");
        assert!(svg.ends_with("</svg>\n"));
        // Round ticks: the y axis (data up to the budget of 5) ends on 6, the x axis on 10.
        assert!(svg.contains(">6</text>") && svg.contains(">7.5</text>") && !svg.contains(">5.5</text>"), "{svg}");
        let bars = chart("t", "x", "y", &series, &[], true);
        assert_eq!(bars.matches("<rect ").count(), 2);
    }
}
