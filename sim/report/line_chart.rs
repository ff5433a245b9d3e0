//! The line chart of `rehearsal bench` (issue 31): a metric over one parameter, one line per
//! value of a second parameter, the p50 drawn as a line with a band up to the p95, and under
//! every step how many runs it holds and how many the time limit cut off. A point measured
//! only on cut-off runs is a hollow circle: its value is what the runs reached by the limit,
//! not a quantile of finished runs. The axis has round ticks from zero (`ticks.rs`).

use std::fmt::Write as _;

use super::html::esc;
use super::ticks::{chart_head, label, nice_ticks, y_grid};

/// One step of a line: the value (a p50, or the metric itself), the p95 when the metric has
/// one, and whether it comes from cut-off runs only.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinePoint {
    pub value: Option<f64>,
    pub p95: Option<f64>,
    pub cut_off_only: bool,
}

/// A named line: a point per step of the x parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub name: String,
    pub points: Vec<LinePoint>,
}

/// What the chart shows: its title and sentence, the unit of its values, the x parameter and
/// its steps, and per step the runs it holds and how many were cut off.
pub struct LineChart<'a> {
    pub title: &'a str,
    pub meaning: &'a str,
    pub unit: &'a str,
    pub x_name: &'a str,
    pub xs: &'a [String],
    /// Per step: runs, cut off, collapsed (the conductor ended on SQLITE_BUSY or an I/O error).
    pub runs: &'a [(usize, usize, usize)],
    pub lines: &'a [Line],
    /// What a filled point and the band are, for the legend: "p50 of finished runs; band up
    /// to p95".
    pub marks: &'a str,
}

const COLOURS: [&str; 8] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"];

/// Pixels a text of `chars` characters takes at font size 12 (sans-serif, generous).
fn text_px(chars: usize) -> f64 {
    chars as f64 * 7.0
}

pub fn line_chart(chart: &LineChart) -> String {
    let values: Vec<f64> = chart.lines.iter().flat_map(|l| l.points.iter()).flat_map(|p| [p.value, p.p95]).flatten().collect();
    let ticks = nice_ticks(values.iter().copied().fold(0.0, f64::max), 5);
    let top_value = *ticks.last().expect("ticks are never empty");
    let legend_w = chart.lines.iter().map(|l| text_px(l.name.chars().count())).fold(text_px(34), f64::max) + 40.0;
    let left = ticks.iter().map(|t| text_px(label(*t).chars().count())).fold(0.0, f64::max) + 40.0;
    let step_w = chart.xs.iter().map(|x| text_px(x.chars().count()) + 20.0).fold(110.0, f64::max);
    let plot_w = step_w * chart.xs.len().max(1) as f64;
    let (top, plot_h) = (70.0, 280.0);
    let head_w = text_px(chart.title.chars().count()).max(text_px(chart.meaning.chars().count())) + 30.0;
    let w = (left + plot_w + 30.0 + legend_w).max(head_w).ceil();
    let h = top + plot_h + 90.0;
    let base = top + plot_h;
    let px = |i: usize| left + step_w * (i as f64 + 0.5);
    let py = |v: f64| base - plot_h * (v / top_value).clamp(0.0, 1.0);
    let mut svg = chart_head(w, h, chart.title, chart.meaning);
    y_grid(&mut svg, &ticks, left, plot_w, &py);
    let _ = writeln!(
        svg,
        "<line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{base}\" stroke=\"#333\"/><line x1=\"{left}\" y1=\"{base}\" x2=\"{:.1}\" y2=\"{base}\" stroke=\"#333\"/>",
        left + plot_w
    );
    let _ = writeln!(
        svg,
        "<text x=\"14\" y=\"{0:.1}\" transform=\"rotate(-90 14 {0:.1})\" text-anchor=\"middle\">{1}</text>",
        top + plot_h / 2.0,
        esc(chart.unit)
    );
    for (i, x) in chart.xs.iter().enumerate() {
        let _ = writeln!(svg, "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>", px(i), base + 17.0, esc(x));
        let (runs, cut, collapsed) = chart.runs.get(i).copied().unwrap_or_default();
        let mut counts = if cut > 0 { format!("{runs} runs, {cut} cut off") } else { format!("{runs} runs") };
        if collapsed > 0 {
            counts.push_str(&format!(", {collapsed} COLLAPSED"));
        }
        let colour = if cut + collapsed > 0 { "#b00" } else { "#666" };
        let _ = writeln!(
            svg,
            "<text class=\"runs\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\" fill=\"{colour}\">{}</text>",
            px(i),
            base + 32.0,
            esc(&counts)
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#444\">{}</text>",
        left + plot_w / 2.0,
        base + 56.0,
        esc(chart.x_name)
    );
    // The value labels drawn so far (step, y): a label that would overwrite one is left to the
    // point's tooltip.
    let mut placed: Vec<(usize, f64)> = Vec::new();
    for (n, line) in chart.lines.iter().enumerate() {
        draw_line(&mut svg, line, (COLOURS[n % COLOURS.len()], n % 2 == 1), (&px, &py), &mut placed);
    }
    if values.is_empty() {
        let _ = writeln!(
            svg,
            "<text class=\"empty\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#888\" font-size=\"14\">no measurement at any step</text>",
            left + plot_w / 2.0,
            top + plot_h / 2.0
        );
    }
    legend(&mut svg, chart, left + plot_w + 30.0, top);
    svg.push_str("</svg>\n");
    svg
}

/// One line: its p50–p95 band, its p50 path through consecutive measured steps, its points,
/// their values labelled above (or, for every other line, below, so two close lines' labels
/// do not overwrite each other).
type Scale<'a> = &'a dyn Fn(usize) -> f64;

fn draw_line(
    svg: &mut String,
    line: &Line,
    (colour, below): (&str, bool),
    (px, py): (Scale, &dyn Fn(f64) -> f64),
    placed: &mut Vec<(usize, f64)>,
) {
    let banded: Vec<(usize, f64, f64)> = line
        .points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Some((i, p.value?, p.p95?)))
        .filter(|(i, _, _)| !line.points[*i].cut_off_only)
        .collect();
    for run in runs_of_consecutive(&banded) {
        if run.len() < 2 {
            continue;
        }
        let upper: Vec<String> = run.iter().map(|(i, _, p95)| format!("{:.1},{:.1}", px(*i), py(*p95))).collect();
        let lower: Vec<String> = run.iter().rev().map(|(i, p50, _)| format!("{:.1},{:.1}", px(*i), py(*p50))).collect();
        let _ = writeln!(
            svg,
            "<polygon class=\"band\" points=\"{} {}\" fill=\"{colour}\" fill-opacity=\"0.15\" stroke=\"none\"/>",
            upper.join(" "),
            lower.join(" ")
        );
    }
    let measured: Vec<(usize, f64, f64)> = line
        .points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Some((i, p.value?, 0.0)))
        .filter(|(i, _, _)| !line.points[*i].cut_off_only)
        .collect();
    for run in runs_of_consecutive(&measured) {
        let d: Vec<String> =
            run.iter().enumerate().map(|(j, (i, v, _))| format!("{}{:.1} {:.1}", if j == 0 { "M" } else { "L" }, px(*i), py(*v))).collect();
        let _ = writeln!(svg, "<path class=\"line\" d=\"{}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\"/>", d.join(" "));
    }
    for (i, point) in line.points.iter().enumerate() {
        let Some(value) = point.value else { continue };
        let (x, y) = (px(i), py(value));
        let fill = if point.cut_off_only { "#fff" } else { colour };
        let what = if point.cut_off_only { " (cut-off runs only)" } else { "" };
        let p95 = point.p95.map(|p| format!(", p95 {}", label(round3(p)))).unwrap_or_default();
        let _ = writeln!(
            svg,
            "<circle class=\"point\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"4.5\" fill=\"{fill}\" stroke=\"{colour}\" stroke-width=\"2\"><title>{}</title></circle>",
            esc(&format!("{}: {}{p95}{what}", line.name, label(round3(value))))
        );
        let label_y = if below && y + 16.0 < py(0.0) - 2.0 { y + 16.0 } else { y - 7.0 };
        if placed.iter().any(|(step, at)| *step == i && (at - label_y).abs() < 11.0) {
            continue;
        }
        placed.push((i, label_y));
        let _ = writeln!(
            svg,
            "<text class=\"value\" x=\"{:.1}\" y=\"{label_y:.1}\" font-size=\"10\" fill=\"{colour}\">{}</text>",
            x + 7.0,
            esc(&label(round3(value)))
        );
    }
}

/// Three significant decimals at most, so a label reads 5.7, not 5.714285714.
fn round3(value: f64) -> f64 {
    if value.abs() >= 100.0 {
        value.round()
    } else {
        (value * 100.0).round() / 100.0
    }
}

/// The points split where a step is missing, so a line never bridges a step with no value.
fn runs_of_consecutive(points: &[(usize, f64, f64)]) -> Vec<Vec<(usize, f64, f64)>> {
    let mut runs: Vec<Vec<(usize, f64, f64)>> = Vec::new();
    for point in points {
        match runs.last_mut() {
            Some(run) if run.last().is_some_and(|last| last.0 + 1 == point.0) => run.push(*point),
            _ => runs.push(vec![*point]),
        }
    }
    runs
}

/// The lines' names, and what the marks mean.
fn legend(svg: &mut String, chart: &LineChart, x: f64, y: f64) {
    let mut at = y;
    for (n, line) in chart.lines.iter().enumerate() {
        let colour = COLOURS[n % COLOURS.len()];
        let _ = writeln!(
            svg,
            "<line x1=\"{x}\" y1=\"{0:.1}\" x2=\"{1}\" y2=\"{0:.1}\" stroke=\"{colour}\" stroke-width=\"2\"/><text class=\"legend\" x=\"{2}\" y=\"{3:.1}\">{4}</text>",
            at,
            x + 22.0,
            x + 28.0,
            at + 4.0,
            esc(&line.name)
        );
        at += 18.0;
    }
    at += 8.0;
    let notes = [format!("● {}", chart.marks), "○ cut-off runs only (not a quantile)".to_string()];
    for note in notes {
        let _ = writeln!(svg, "<text x=\"{x}\" y=\"{at:.1}\" font-size=\"11\" fill=\"#444\">{}</text>", esc(&note));
        at += 16.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(value: f64, p95: Option<f64>, cut_off_only: bool) -> LinePoint {
        LinePoint { value: Some(value), p95, cut_off_only }
    }

    #[test]
    fn a_line_per_second_parameter_with_bands_counts_and_hollow_cut_off_points() {
        let xs: Vec<String> = ["8", "16", "32", "128"].iter().map(|s| s.to_string()).collect();
        let lines = [
            Line {
                name: "poll 5000".into(),
                points: vec![point(3.6, None, false), point(5.3, None, false), point(5.7, None, false), point(6.0, None, true)],
            },
            Line {
                name: "poll 30000".into(),
                points: vec![
                    point(3.0, Some(4.0), false),
                    LinePoint::default(),
                    point(5.0, Some(9.0), false),
                    point(5.5, Some(6.0), false),
                ],
            },
        ];
        let runs = [(4, 0, 0), (4, 0, 0), (4, 0, 3), (4, 2, 0)];
        let chart = LineChart {
            title: "throughput",
            meaning: "tasks per hour",
            unit: "tasks / simulated hour",
            x_name: "tasks.count",
            xs: &xs,
            runs: &runs,
            lines: &lines,
            marks: "p50 of finished runs; band up to p95",
        };
        let svg = line_chart(&chart);
        assert_eq!(svg.matches("class=\"point\"").count(), 7, "a point per measured step: {svg}");
        assert_eq!(svg.matches("fill=\"#fff\" stroke=").count(), 1, "the cut-off-only point is hollow: {svg}");
        // The first line stops before its cut-off point; the second is broken by its gap.
        assert_eq!(svg.matches("class=\"line\"").count(), 3, "{svg}");
        assert_eq!(svg.matches("class=\"band\"").count(), 1, "a band needs two consecutive p95s: {svg}");
        assert!(svg.contains(">4 runs, 2 cut off</text>") && svg.contains(">4 runs</text>"), "{svg}");
        assert!(svg.contains(">4 runs, 3 COLLAPSED</text>"), "a step with collapsed runs says so: {svg}");
        assert!(svg.contains(">poll 5000</text>") && svg.contains(">tasks.count</text>"), "{svg}");
        assert!(svg.contains(">● p50 of finished runs; band up to p95</text>"), "{svg}");
        // The first and third lines' labels both go above their points (every other line's
        // below), and their values are close: one label there, the other in its tooltip.
        let close = [
            Line { name: "a".into(), points: vec![point(3.0, None, false)] },
            Line { name: "b".into(), points: vec![point(9.0, None, false)] },
            Line { name: "c".into(), points: vec![point(3.05, None, false)] },
        ];
        let one_step = [xs[0].clone()];
        let chart = LineChart { xs: &one_step, runs: &runs[..1], lines: &close, ..chart };
        let svg = line_chart(&chart);
        assert_eq!(svg.matches("class=\"value\"").count(), 2, "{svg}");
        assert!(svg.contains(">3.05</title>") || svg.contains("c: 3.05"), "the hidden value stays in its tooltip: {svg}");
        for tick in [">0</text>", ">2</text>", ">4</text>", ">6</text>", ">8</text>", ">10</text>"] {
            assert!(svg.contains(tick), "round ticks up to the p95 of 9: {tick} in {svg}");
        }
    }

    fn chart_without_lines() -> LineChart<'static> {
        LineChart { title: "t", meaning: "m", unit: "s", x_name: "x", xs: &[], runs: &[], lines: &[], marks: "p50" }
    }

    #[test]
    fn the_chart_is_wide_enough_for_its_title_and_legend() {
        let xs = vec!["a".to_string()];
        assert!(line_chart(&chart_without_lines()).contains("no measurement at any step"));
        let title = "a very long title that would be cut off in a chart sized to its one step only, as heatmaps were";
        let chart = LineChart { title, meaning: "m", unit: "s", x_name: "x", xs: &xs, runs: &[(1, 0, 0)], lines: &[], marks: "p50" };
        let svg = line_chart(&chart);
        let width: f64 = svg.split("width=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
        assert!(width >= text_px(title.len()), "{width}");
    }
}
