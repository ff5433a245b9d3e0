//! Axis ticks people read at a glance: a step of 1, 2, 2.5 or 5 × 10ⁿ, ticks from zero to the
//! first multiple of the step at or above the largest value (issue 31: an axis labelled
//! 89151, 66864, … says nothing; 0, 25000, 50000, 75000, 100000 does). Also the head and
//! the y grid that bench's line and bar charts share.

use std::fmt::Write as _;

use super::html::esc;

/// A chart's `<svg>` opening on a white ground, its bold title and its sentence under it.
pub fn chart_head(w: f64, h: f64, title: &str, meaning: &str) -> String {
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"{w}\" height=\"{h}\" fill=\"#fff\"/>\n"
    );
    let _ = writeln!(svg, "<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{}</text>", esc(title));
    let _ = writeln!(svg, "<text x=\"10\" y=\"42\" fill=\"#444\">{}</text>", esc(meaning));
    svg
}

/// A light grid line and a label at each tick, the labels right-aligned left of `left`;
/// `y_of` places a value.
pub fn y_grid(svg: &mut String, ticks: &[f64], left: f64, plot_w: f64, y_of: &dyn Fn(f64) -> f64) {
    for tick in ticks {
        let y = y_of(*tick);
        let _ = writeln!(
            svg,
            "<line x1=\"{left}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#e4e4e4\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left + plot_w,
            left - 6.0,
            y + 4.0,
            esc(&label(*tick))
        );
    }
}

/// The ticks of an axis from 0 covering `max` with about `target` intervals (at most
/// `target + 2`): `nice_ticks(89151.0, 4)` is 0, 25000, 50000, 75000, 100000. A `max` of
/// zero or less (or not a number) gives 0 and 1.
pub fn nice_ticks(max: f64, target: usize) -> Vec<f64> {
    if max.is_nan() || max <= 0.0 {
        return vec![0.0, 1.0];
    }
    let step = nice_step(max / target.max(1) as f64);
    let intervals = (max / step - 1e-9).ceil().max(1.0) as usize;
    (0..=intervals).map(|i| clean(i as f64 * step)).collect()
}

/// The smallest of 1, 2, 2.5, 5 × 10ⁿ at or above `raw`.
fn nice_step(raw: f64) -> f64 {
    let power = 10_f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * power).find(|step| *step >= raw * (1.0 - 1e-9)).unwrap_or(10.0 * power)
}

/// `value` with the float noise of `i × step` rounded away (0.30000000000000004 → 0.3).
fn clean(value: f64) -> f64 {
    (value * 1e9).round() / 1e9
}

/// A tick's label: thousands grouped by a thin space, decimals only when the tick has them.
pub fn label(value: f64) -> String {
    if value.fract().abs() > 1e-9 {
        let text = format!("{value:.3}");
        return text.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    let digits = format!("{:.0}", value.abs());
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push('\u{2009}');
        }
        grouped.push(c);
    }
    if value < 0.0 {
        format!("-{grouped}")
    } else {
        grouped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_steps_from_zero_to_at_least_the_largest_value() {
        assert_eq!(nice_ticks(89151.0, 4), [0.0, 25000.0, 50000.0, 75000.0, 100000.0]);
        assert_eq!(nice_ticks(66864.0, 4), [0.0, 20000.0, 40000.0, 60000.0, 80000.0]);
        assert_eq!(nice_ticks(100.0, 4), [0.0, 25.0, 50.0, 75.0, 100.0]);
        assert_eq!(nice_ticks(6.0, 4), [0.0, 2.0, 4.0, 6.0]);
        assert_eq!(nice_ticks(0.9, 4), [0.0, 0.25, 0.5, 0.75, 1.0]);
        assert_eq!(nice_ticks(0.3, 3), [0.0, 0.1, 0.2, 0.3]);
        assert_eq!(nice_ticks(0.0, 4), [0.0, 1.0]);
        for max in [1.0, 7.3, 13.0, 540.0, 1234.5, 35_000.0, 16_831_497.0] {
            let ticks = nice_ticks(max, 5);
            let step = ticks[1] - ticks[0];
            assert!(*ticks.last().unwrap() >= max && ticks[ticks.len() - 2] < max, "{max}: {ticks:?}");
            let mantissa = step / 10_f64.powf(step.log10().floor());
            assert!([1.0, 2.0, 2.5, 5.0].iter().any(|m| (m - mantissa).abs() < 1e-9), "{max}: step {step}");
            assert!(ticks.len() <= 7, "{max}: {ticks:?}");
        }
    }

    #[test]
    fn labels_group_thousands_and_drop_useless_decimals() {
        assert_eq!(label(100000.0), "100\u{2009}000");
        assert_eq!(label(2500.0), "2\u{2009}500");
        assert_eq!(label(250.0), "250");
        assert_eq!(label(0.25), "0.25");
        assert_eq!(label(0.0), "0");
    }
}
