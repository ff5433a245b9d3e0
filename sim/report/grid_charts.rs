//! The heatmaps of `rehearsal bench`: a metric over two parameters (over one, or along a
//! second, `line_chart.rs` draws lines). Colours scale from zero to a fixed top (a share's 1,
//! or the next round number above the largest value), never from the smallest value shown,
//! so equal colours mean equal values and a legend with round ticks says which; values carry
//! their unit; the picture is as wide as its title, labels and legend.

use std::fmt::Write as _;

use super::html::esc;
use super::ticks::{label, nice_ticks};

/// A metric as the pictures show it: what it means, its unit, and the top of its scale when
/// the metric has one of its own (a share: 1).
#[derive(Clone, Copy, Debug)]
pub struct Metric<'a> {
    pub name: &'a str,
    pub meaning: &'a str,
    pub unit: &'a str,
    pub fixed_max: Option<f64>,
}

/// The top of the scale: the metric's own, or 1, 2 or 5 × 10ⁿ at or above the largest value.
pub fn scale_max(metric: &Metric, values: &[f64]) -> f64 {
    if let Some(max) = metric.fixed_max {
        return max;
    }
    let largest = values.iter().copied().fold(0.0_f64, f64::max);
    if largest <= 0.0 {
        return 1.0;
    }
    let power = 10_f64.powf(largest.log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * power).find(|top| *top >= largest).unwrap_or(10.0 * power)
}

/// White (zero) to deep red (the top of the scale).
fn fill(value: f64, max: f64) -> String {
    let t = (value / max).clamp(0.0, 1.0);
    let g = (245.0 - 200.0 * t) as u8;
    format!("rgb(245,{g},{g})")
}

/// A value as its cell shows it: whole from 100 on (thousands grouped), others to three
/// decimals at most (3.69, not 3.690).
pub fn show(value: f64) -> String {
    if value.abs() >= 100.0 {
        label(value.round())
    } else {
        label((value * 1000.0).round() / 1000.0)
    }
}

/// The colour legend: a strip from zero to the top of the scale, round values under it
/// (`ticks.rs`), and its unit.
fn legend(svg: &mut String, x: f64, y: f64, max: f64, unit: &str) {
    let steps = 10;
    for i in 0..steps {
        let v = max * (i as f64 + 0.5) / steps as f64;
        let _ = writeln!(
            svg,
            "<rect class=\"legend\" x=\"{:.1}\" y=\"{y:.1}\" width=\"{LEGEND_STEP_W}\" height=\"12\" fill=\"{}\"/>",
            x + LEGEND_STEP_W * i as f64,
            fill(v, max)
        );
    }
    let strip_w = LEGEND_STEP_W * steps as f64;
    for tick in ticks_to(max) {
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\">{}</text>",
            x + strip_w * tick / max,
            y + 26.0,
            esc(&label(tick))
        );
    }
    let _ = writeln!(svg, "<text x=\"{:.1}\" y=\"{:.1}\">{}</text>", x + strip_w + 14.0, y + 10.0, esc(unit));
}

/// Round ticks from 0 that end on `max` (a scale's top is 1, 2 or 5 × 10ⁿ), so the top of
/// the strip is labelled.
fn ticks_to(max: f64) -> Vec<f64> {
    let ends_on_max = |ticks: &Vec<f64>| ticks.last().is_some_and(|t| (t - max).abs() <= max * 1e-9);
    [4, 2, 5, 1].into_iter().map(|target| nice_ticks(max, target)).find(ends_on_max).unwrap_or_else(|| vec![0.0, max])
}

/// One step of the legend's strip, in px.
const LEGEND_STEP_W: f64 = 24.0;

/// Pixels a text of `chars` characters takes at `font_px` (sans-serif, generous: a label cut
/// off is worse than a margin).
fn text_px(text: &str, font_px: f64) -> f64 {
    text.chars().count() as f64 * font_px * 0.6
}

/// A heatmap of `metric` over `xs` (columns) and `ys` (rows): `cells[row][col]`, `None` for
/// a cell with no sample (grey); `cut_off[row][col]` the runs of a cell the time limit cut off
/// and the runs that collapsed (the conductor ended on SQLITE_BUSY or an I/O error), said in
/// the cell (the subtitle says whether its value counts them).
#[allow(clippy::too_many_arguments)]
pub fn heatmap(
    metric: &Metric,
    x: &str,
    xs: &[String],
    y: &str,
    ys: &[String],
    cells: &[Vec<Option<f64>>],
    cut_off: &[Vec<(usize, usize)>],
    subtitle: &str,
) -> String {
    let values: Vec<f64> = cells.iter().flatten().flatten().copied().collect();
    let max = scale_max(metric, &values);
    // Sized to its labels (issue 31: two columns at a fixed 480 px cut the title and legend).
    let title = format!("{} ({}) over {x} × {y}", metric.name, metric.unit);
    let meaning = format!("{}; {subtitle}", metric.meaning);
    let widest = |labels: &[String]| labels.iter().map(|l| text_px(l, 12.0)).fold(0.0, f64::max);
    let (cell_h, top) = (44.0, 70.0);
    let cell_w = (widest(xs) + 20.0).max(110.0);
    let left = (widest(ys) + 24.0).max(text_px(&format!("{y} ↓"), 12.0) + 20.0).max(120.0);
    let legend_end = left + LEGEND_STEP_W * 10.0 + 14.0 + text_px(metric.unit, 12.0) + 20.0;
    let w = (left + cell_w * xs.len() as f64 + 30.0)
        .max(text_px(&title, 14.0) + 20.0)
        .max(text_px(&meaning, 12.0) + 20.0)
        .max(legend_end)
        .ceil();
    let h = top + cell_h * ys.len() as f64 + 90.0;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"{w}\" height=\"{h}\" fill=\"#fff\"/>\n"
    );
    let _ = writeln!(svg, "<text x=\"10\" y=\"20\" font-size=\"14\">{}</text>", esc(&title));
    let _ = writeln!(svg, "<text x=\"10\" y=\"38\" fill=\"#555\">{}</text>", esc(&meaning));
    for (col, label) in xs.iter().enumerate() {
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            left + cell_w * (col as f64 + 0.5),
            top - 8.0,
            esc(label)
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#555\">{}</text>",
        left + cell_w * xs.len() as f64 / 2.0,
        top + cell_h * ys.len() as f64 + 20.0,
        esc(x)
    );
    let _ = writeln!(svg, "<text x=\"10\" y=\"{:.1}\" fill=\"#555\">{}</text>", top - 8.0, esc(&format!("{y} ↓")));
    for (row, label) in ys.iter().enumerate() {
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left - 8.0,
            top + cell_h * (row as f64 + 0.5) + 4.0,
            esc(label)
        );
        for (col, value) in cells[row].iter().enumerate() {
            let (cx, cy) = (left + cell_w * col as f64, top + cell_h * row as f64);
            let (colour, text) = match value {
                Some(v) => (fill(*v, max), show(*v)),
                None => ("#ddd".to_string(), "–".to_string()),
            };
            let _ = writeln!(
                svg,
                "<rect class=\"cell\" x=\"{cx:.1}\" y=\"{cy:.1}\" width=\"{cell_w}\" height=\"{cell_h}\" fill=\"{colour}\" stroke=\"#fff\"><title>{}</title></rect><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                esc(&format!("{x}={}, {y}={}: {} {text} {}", xs[col], ys[row], metric.name, metric.unit)),
                cx + cell_w / 2.0,
                cy + cell_h / 2.0 + 4.0,
                esc(&text)
            );
            let (cut, collapsed) = cut_off.get(row).and_then(|r| r.get(col)).copied().unwrap_or((0, 0));
            let marks: Vec<String> = [(cut, "cut off"), (collapsed, "COLLAPSED")]
                .into_iter()
                .filter(|(n, _)| *n > 0)
                .map(|(n, what)| format!("{n} runs {what}"))
                .collect();
            if !marks.is_empty() {
                let _ = writeln!(
                    svg,
                    "<text class=\"cut-off\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"10\" fill=\"#b00\">{}</text>",
                    cx + cell_w / 2.0,
                    cy + cell_h - 5.0,
                    marks.join(", ")
                );
            }
        }
    }
    legend(&mut svg, left, h - 50.0, max, metric.unit);
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECONDS: Metric = Metric { name: "crash_detect_p95", meaning: "crash to stale", unit: "s", fixed_max: None };
    const SHARE: Metric = Metric { name: "false_alarm_rate", meaning: "runs with an alarm", unit: "share of runs", fixed_max: Some(1.0) };

    #[test]
    fn the_scale_runs_from_zero_to_a_round_top_or_the_metrics_own() {
        assert_eq!(scale_max(&SECONDS, &[130.0, 480.0]), 500.0);
        assert_eq!(scale_max(&SECONDS, &[1200.0]), 2000.0);
        assert_eq!(scale_max(&SECONDS, &[]), 1.0);
        assert_eq!(scale_max(&SHARE, &[0.1, 0.2]), 1.0);
    }

    #[test]
    fn equal_values_get_equal_colours_whatever_else_the_map_holds() {
        let xs = ["a".to_string(), "b".to_string()];
        let ys = ["r".to_string()];
        // The old relative scale coloured the smaller of two values white whatever it was.
        let low = heatmap(&SHARE, "x", &xs, "y", &ys, &[vec![Some(0.5), Some(0.6)]], &[], "1 seed");
        let high = heatmap(&SHARE, "x", &xs, "y", &ys, &[vec![Some(0.5), Some(1.0)]], &[], "1 seed");
        let colour_of_first =
            |svg: &str| svg.split("class=\"cell\"").nth(1).unwrap().split("fill=\"").nth(1).unwrap().split('"').next().unwrap().to_string();
        assert_eq!(colour_of_first(&low), colour_of_first(&high));
        assert_eq!(colour_of_first(&low), fill(0.5, 1.0));
        assert!(low.contains("class=\"legend\"") && low.contains(">share of runs</text>"), "{low}");
        assert!(low.contains("false_alarm_rate (share of runs) over x × y"), "{low}");
    }

    #[test]
    fn a_two_column_heatmap_is_as_wide_as_its_title_and_legend() {
        let xs = ["5000".to_string(), "30000".to_string()];
        let ys = ["8".to_string(), "200".to_string()];
        let metric = Metric {
            name: "crash_detect_ms_p95",
            meaning: "95th percentile of crash-to-stale-declaration latency",
            unit: "s",
            fixed_max: None,
        };
        let svg = heatmap(
            &metric,
            "timing.background_poll_ms",
            &xs,
            "tasks.count",
            &ys,
            &[vec![Some(89.151), None], vec![Some(668.64), Some(1.0)]],
            &[vec![(0, 0), (2, 0)], vec![(0, 3), (1, 1)]],
            "2 seeds per grid point",
        );
        let width: f64 = svg.split("width=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
        let title = "crash_detect_ms_p95 (s) over timing.background_poll_ms × tasks.count";
        assert!(width >= text_px(title, 14.0) + 20.0, "{width}: {svg}");
        assert!(width > 480.0, "the old fixed width cut this title off: {width}");
        assert!(svg.contains(">2 runs cut off</text>") && svg.contains(">669</text>") && svg.contains(">89.151</text>"), "{svg}");
        assert!(svg.contains(">3 runs COLLAPSED</text>") && svg.contains(">1 runs cut off, 1 runs COLLAPSED</text>"), "{svg}");
        assert_eq!((show(3.69), show(0.25), show(20176.3)), ("3.69".to_string(), "0.25".to_string(), "20\u{2009}176".to_string()));
        for tick in [">0</text>", ">250</text>", ">500</text>", ">750</text>", ">1\u{2009}000</text>"] {
            assert!(svg.contains(tick), "round legend ticks: {tick} in {svg}");
        }
    }
}
