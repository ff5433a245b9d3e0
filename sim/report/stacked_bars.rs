//! Where latency goes (issue 31): one stacked bar per grid point, the mean of a measurement
//! split into its causes as the latency attribution measured them (sim/judging/oracle/latency.rs:
//! threshold wait, poll phase, jitter, conductor busy in reviews, launch delay, successor
//! bootstrap, …). The parts of a bar sum to the mean measured value, so the tallest part is
//! the knob that moves it.

use std::fmt::Write as _;

use super::html::esc;
use super::ticks::{chart_head, label, nice_ticks, y_grid};

/// One bar: its label, the mean seconds of each cause (indexed like `StackedBars::causes`),
/// how many measurements it averages and how many runs the time limit cut off.
#[derive(Clone, Debug, PartialEq)]
pub struct Stack {
    pub label: String,
    pub parts_s: Vec<f64>,
    pub measurements: usize,
    pub cut_off_runs: usize,
}

pub struct StackedBars<'a> {
    pub title: &'a str,
    pub meaning: &'a str,
    pub x_name: &'a str,
    /// The causes in words, in the order of every stack's parts.
    pub causes: &'a [&'a str],
    pub stacks: &'a [Stack],
}

const COLOURS: [&str; 13] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#17becf", "#8c564b",
    "#1f3a93",
];

pub fn stacked_bars(chart: &StackedBars) -> String {
    // Only the causes some bar has: a legend of twelve names of which ten are zero says little.
    let shown: Vec<usize> =
        (0..chart.causes.len()).filter(|c| chart.stacks.iter().any(|s| s.parts_s.get(*c).is_some_and(|v| *v > 0.0))).collect();
    let total = |s: &Stack| s.parts_s.iter().sum::<f64>();
    let ticks = nice_ticks(chart.stacks.iter().map(total).fold(0.0, f64::max), 5);
    let top_value = *ticks.last().expect("ticks are never empty");
    let left = ticks.iter().map(|t| label(*t).chars().count() as f64 * 7.0).fold(0.0, f64::max) + 44.0;
    let bar_step = chart.stacks.iter().map(|s| s.label.chars().count() as f64 * 7.0 + 16.0).fold(90.0, f64::max);
    let plot_w = bar_step * chart.stacks.len().max(1) as f64;
    let legend_w = shown.iter().map(|c| chart.causes[*c].chars().count() as f64 * 7.0).fold(200.0, f64::max) + 30.0;
    let (top, plot_h) = (70.0_f64, 300.0);
    let head_w = (chart.title.chars().count().max(chart.meaning.chars().count()) as f64) * 7.0 + 30.0;
    let w = (left + plot_w + 30.0 + legend_w).max(head_w).ceil();
    let h = (top + plot_h + 80.0).max(top + 20.0 * shown.len() as f64 + 60.0);
    let base = top + plot_h;
    let py = |v: f64| plot_h * (v / top_value).clamp(0.0, 1.0);
    let mut svg = chart_head(w, h, chart.title, chart.meaning);
    y_grid(&mut svg, &ticks, left, plot_w, &|v| base - py(v));
    let _ = writeln!(svg, "<line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{base}\" stroke=\"#333\"/><line x1=\"{left}\" y1=\"{base}\" x2=\"{:.1}\" y2=\"{base}\" stroke=\"#333\"/>", left + plot_w);
    let _ = writeln!(
        svg,
        "<text x=\"14\" y=\"{0:.1}\" transform=\"rotate(-90 14 {0:.1})\" text-anchor=\"middle\">mean seconds</text>",
        top + plot_h / 2.0
    );
    for (i, stack) in chart.stacks.iter().enumerate() {
        let cx = left + bar_step * (i as f64 + 0.5);
        let bar_w = (bar_step * 0.6).min(70.0);
        let mut y = base;
        for c in &shown {
            let value = stack.parts_s.get(*c).copied().unwrap_or(0.0);
            if value <= 0.0 {
                continue;
            }
            let height = py(value);
            y -= height;
            let _ = writeln!(
                svg,
                "<rect class=\"part\" x=\"{:.1}\" y=\"{y:.1}\" width=\"{bar_w:.1}\" height=\"{height:.1}\" fill=\"{}\"><title>{}</title></rect>",
                cx - bar_w / 2.0,
                COLOURS[*c % COLOURS.len()],
                esc(&format!("{}: {} {} s ({} % of the mean)", stack.label, chart.causes[*c], label(round1(value)), percent(value, total(stack))))
            );
        }
        let above = if stack.measurements == 0 { "none".to_string() } else { format!("{} s", label(round1(total(stack)))) };
        let _ = writeln!(svg, "<text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\">{}</text>", y - 5.0, esc(&above));
        let _ = writeln!(svg, "<text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>", base + 17.0, esc(&stack.label));
        let _ = writeln!(
            svg,
            "<text class=\"count\" x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\" fill=\"#666\">n={}</text>",
            base + 32.0,
            stack.measurements
        );
        if stack.cut_off_runs > 0 {
            let _ = writeln!(svg, "<text class=\"count\" x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\" fill=\"#b00\">{} runs cut off</text>", base + 46.0, stack.cut_off_runs);
        }
    }
    let _ = writeln!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#444\">{}</text>",
        left + plot_w / 2.0,
        base + 66.0,
        esc(chart.x_name)
    );
    let lx = left + plot_w + 30.0;
    // Listed top-down in the order the stack draws them bottom-up, reversed, so the legend
    // reads like the bars.
    for (row, c) in shown.iter().rev().enumerate() {
        let y = top + 20.0 * row as f64;
        let _ = writeln!(
            svg,
            "<rect x=\"{lx}\" y=\"{:.1}\" width=\"14\" height=\"14\" fill=\"{}\"/><text class=\"legend\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            y - 11.0,
            COLOURS[*c % COLOURS.len()],
            lx + 20.0,
            y,
            esc(chart.causes[*c])
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// Whole seconds from 100 s on, tenths below.
fn round1(value: f64) -> f64 {
    if value.abs() >= 100.0 {
        value.round()
    } else {
        (value * 10.0).round() / 10.0
    }
}

fn percent(part: f64, whole: f64) -> i64 {
    if whole <= 0.0 {
        0
    } else {
        (part / whole * 100.0).round() as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_bar_stacks_its_causes_and_the_legend_names_only_causes_present() {
        let causes = ["poll wait", "jitter", "heartbeat threshold", "conductor in a review"];
        let stacks = [
            Stack { label: "8".into(), parts_s: vec![10.0, 0.0, 540.0, 30.0], measurements: 4, cut_off_runs: 0 },
            Stack { label: "64".into(), parts_s: vec![12.0, 0.0, 540.0, 3000.0], measurements: 2, cut_off_runs: 1 },
            Stack { label: "128".into(), parts_s: vec![0.0; 4], measurements: 0, cut_off_runs: 2 },
        ];
        let chart = StackedBars { title: "recovery", meaning: "crash to claim", x_name: "tasks.count", causes: &causes, stacks: &stacks };
        let svg = stacked_bars(&chart);
        assert_eq!(svg.matches("class=\"part\"").count(), 6, "{svg}");
        assert_eq!(svg.matches("class=\"legend\"").count(), 3, "jitter is nowhere: {svg}");
        assert!(!svg.contains(">jitter</text>"), "{svg}");
        assert!(svg.contains(">580 s</text>") && svg.contains(">3\u{2009}552 s</text>") && svg.contains(">none</text>"), "{svg}");
        assert!(svg.contains(">n=2</text>") && svg.contains(">1 runs cut off</text>"), "{svg}");
        assert!(svg.contains("conductor in a review 3\u{2009}000 s (84 % of the mean)"), "{svg}");
        assert!(svg.contains(">4\u{2009}000</text>"), "a round top tick above 3552: {svg}");
    }
}
