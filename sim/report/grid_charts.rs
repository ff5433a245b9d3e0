//! The pictures of `rehearsal bench`: a metric over two parameters (a heatmap) or over one
//! (a bar chart). Both colour or scale from zero to a fixed top (a share's 1, or the next
//! round number above the largest value), never from the smallest value shown, so equal
//! colours mean equal values and a legend says which; values carry their unit.

use std::fmt::Write as _;

use super::html::esc;

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

/// A value as its cell shows it: whole numbers whole, others to three significant places.
pub fn show(value: f64) -> String {
    if value.fract() == 0.0 {
        format!("{value:.0}")
    } else if value.abs() >= 100.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.3}")
    }
}

/// The colour legend: a strip from zero to the top of the scale, with its unit.
fn legend(svg: &mut String, x: f64, y: f64, max: f64, unit: &str) {
    let steps = 10;
    let w = 24.0;
    for i in 0..steps {
        let v = max * (i as f64 + 0.5) / steps as f64;
        let _ = writeln!(
            svg,
            "<rect class=\"legend\" x=\"{:.1}\" y=\"{y:.1}\" width=\"{w}\" height=\"12\" fill=\"{}\"/>",
            x + w * i as f64,
            fill(v, max)
        );
    }
    let _ = writeln!(svg, "<text x=\"{x:.1}\" y=\"{:.1}\">0</text>", y + 26.0);
    let _ = writeln!(svg, "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>", x + w * steps as f64, y + 26.0, esc(&show(max)));
    let _ = writeln!(svg, "<text x=\"{:.1}\" y=\"{:.1}\">{}</text>", x + w * steps as f64 + 8.0, y + 10.0, esc(unit));
}

/// A heatmap of `metric` over `xs` (columns) and `ys` (rows): `cells[row][col]`, `None` for
/// a cell with no sample (grey).
pub fn heatmap(metric: &Metric, x: &str, xs: &[String], y: &str, ys: &[String], cells: &[Vec<Option<f64>>], subtitle: &str) -> String {
    let values: Vec<f64> = cells.iter().flatten().flatten().copied().collect();
    let max = scale_max(metric, &values);
    let (cell_w, cell_h, left, top) = (110.0, 44.0, 170.0, 70.0);
    let (w, h) = ((left + cell_w * xs.len() as f64 + 30.0).max(480.0), top + cell_h * ys.len() as f64 + 90.0);
    let mut svg =
        format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n");
    let _ = writeln!(
        svg,
        "<text x=\"10\" y=\"20\" font-size=\"14\">{}</text>",
        esc(&format!("{} ({}) over {x} × {y}", metric.name, metric.unit))
    );
    let _ = writeln!(svg, "<text x=\"10\" y=\"38\" fill=\"#555\">{}</text>", esc(&format!("{}; {subtitle}", metric.meaning)));
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
        }
    }
    legend(&mut svg, left, h - 50.0, max, metric.unit);
    svg.push_str("</svg>\n");
    svg
}

/// A bar chart of `metric` over one parameter's steps (`None`: no sample, no bar).
pub fn bars(metric: &Metric, x: &str, xs: &[String], values: &[Option<f64>], subtitle: &str) -> String {
    let present: Vec<f64> = values.iter().flatten().copied().collect();
    let max = scale_max(metric, &present);
    let (bar_w, left, top, plot_h) = (80.0, 80.0, 60.0, 220.0);
    let (w, h) = ((left + bar_w * xs.len() as f64 + 40.0).max(480.0), top + plot_h + 70.0);
    let base = top + plot_h;
    let mut svg =
        format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n");
    let _ =
        writeln!(svg, "<text x=\"10\" y=\"20\" font-size=\"14\">{}</text>", esc(&format!("{} ({}) over {x}", metric.name, metric.unit)));
    let _ = writeln!(svg, "<text x=\"10\" y=\"38\" fill=\"#555\">{}</text>", esc(&format!("{}; {subtitle}", metric.meaning)));
    let _ = writeln!(svg, "<line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{base}\" stroke=\"#333\"/><line x1=\"{left}\" y1=\"{base}\" x2=\"{:.1}\" y2=\"{base}\" stroke=\"#333\"/>", w - 20.0);
    for i in 0..=4 {
        let v = max * i as f64 / 4.0;
        let y = base - plot_h * i as f64 / 4.0;
        let _ = writeln!(svg, "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>", left - 6.0, y + 4.0, esc(&show(v)));
    }
    let _ = writeln!(
        svg,
        "<text x=\"14\" y=\"{:.1}\" transform=\"rotate(-90 14 {:.1})\" text-anchor=\"middle\">{}</text>",
        top + plot_h / 2.0,
        top + plot_h / 2.0,
        esc(metric.unit)
    );
    for (i, (label, value)) in xs.iter().zip(values).enumerate() {
        let cx = left + bar_w * (i as f64 + 0.5);
        let _ = writeln!(svg, "<text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>", base + 16.0, esc(label));
        let (height, text) = match value {
            Some(v) => (plot_h * (v / max).clamp(0.0, 1.0), show(*v)),
            None => (0.0, "–".to_string()),
        };
        let _ = writeln!(
            svg,
            "<rect class=\"bar\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{height:.1}\" fill=\"#d0604d\"><title>{}</title></rect><text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            cx - bar_w * 0.35,
            base - height,
            bar_w * 0.7,
            esc(&format!("{x}={label}: {} {text} {}", metric.name, metric.unit)),
            base - height - 4.0,
            esc(&text)
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#555\">{}</text>",
        left + bar_w * xs.len() as f64 / 2.0,
        base + 40.0,
        esc(x)
    );
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
        let low = heatmap(&SHARE, "x", &xs, "y", &ys, &[vec![Some(0.5), Some(0.6)]], "1 seed");
        let high = heatmap(&SHARE, "x", &xs, "y", &ys, &[vec![Some(0.5), Some(1.0)]], "1 seed");
        let colour_of_first =
            |svg: &str| svg.split("class=\"cell\"").nth(1).unwrap().split("fill=\"").nth(1).unwrap().split('"').next().unwrap().to_string();
        assert_eq!(colour_of_first(&low), colour_of_first(&high));
        assert_eq!(colour_of_first(&low), fill(0.5, 1.0));
        assert!(low.contains("class=\"legend\"") && low.contains(">share of runs</text>"), "{low}");
        assert!(low.contains("false_alarm_rate (share of runs) over x × y"), "{low}");
    }

    #[test]
    fn a_bar_chart_has_a_bar_per_step_and_a_dash_for_no_sample() {
        let xs = ["15000".to_string(), "60000".to_string(), "120000".to_string()];
        let svg = bars(&SECONDS, "timing.background_poll_ms", &xs, &[Some(400.0), None, Some(1000.0)], "4 seeds per point");
        assert_eq!(svg.matches("class=\"bar\"").count(), 3);
        assert!(svg.contains(">1000</text>") && svg.contains(">–</text>") && svg.contains(">s</text>"), "{svg}");
        assert!(svg.contains("height=\"220.0\""), "the largest value reaches the top of a 0-1000 s scale: {svg}");
    }
}
