//! Fitting a scenario distribution (sim/base/dist.rs) to measured durations, and writing it in the
//! scenario's own TOML syntax.
//!
//! A scenario's durations are whole milliseconds drawn from `const`, `uniform`, `normal`,
//! `exponential`, `lognormal` (a tail) or `empirical` (the sample itself), so a measurement is
//! offered as each of the first five and the one closest to the samples by the Kolmogorov-Smirnov distance (the largest
//! gap between the two cumulative distributions) is proposed. Both sides are whole ms: the
//! samples are rounded, and a distribution's CDF is that of its draws (a uniform's integers,
//! a normal or exponential draw rounded and clamped at 0, sim/base/dist.rs), so a hold that is
//! mostly under half a millisecond is compared as mostly 0, as the simulator would draw it.
//! Each kind starts from its usual estimate (quantiles for the uniform, moments for the
//! others) and is then moved, on a small grid of parameters around it, to the one of least
//! distance: measured latencies are skewed, and the moments of a skewed sample fit its body
//! badly.

use crate::base::dist::Dist;

/// One candidate: the distribution and its Kolmogorov-Smirnov distance to the samples.
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    pub dist: Dist,
    pub ks: f64,
}

/// Quantile `q` (0..=1) of sorted samples, interpolated between neighbours.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    assert!(!sorted.is_empty(), "quantile of no samples");
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Every candidate for `samples_ms`, best (smallest distance) first; empty without samples.
pub fn candidates(samples_ms: &[f64]) -> Vec<Fit> {
    let mut sorted: Vec<f64> = samples_ms.iter().copied().filter(|v| v.is_finite()).map(|v| v.round().max(0.0)).collect();
    if sorted.is_empty() {
        return Vec::new();
    }
    sorted.sort_by(f64::total_cmp);
    let mut fits: Vec<Fit> = [uniform(&sorted), normal(&sorted), exponential(&sorted), lognormal(&sorted), constant(&sorted)]
        .into_iter()
        .flatten()
        .map(|dist| refine(&sorted, Fit { ks: ks_distance(&sorted, &dist), dist }))
        .collect();
    fits.sort_by(|a, b| a.ks.total_cmp(&b.ks));
    fits
}

/// The candidate closest to the samples.
pub fn best(samples_ms: &[f64]) -> Option<Fit> {
    candidates(samples_ms).into_iter().next()
}

/// A constant at the median: the only candidate when every sample rounds to the same ms.
fn constant(sorted: &[f64]) -> Option<Dist> {
    Some(Dist::Const(quantile(sorted, 0.5).round().max(0.0) as i64))
}

/// Uniform from the 5th and 95th percentiles, widened to where a uniform has them (they sit
/// 5 % of the width inside its ends): a single slow outlier does not stretch the range.
fn uniform(sorted: &[f64]) -> Option<Dist> {
    let (p05, p95) = (quantile(sorted, 0.05), quantile(sorted, 0.95));
    let width = (p95 - p05) / 0.9;
    let min = (p05 - 0.05 * width).floor().max(0.0) as i64;
    let max = ((p95 + 0.05 * width).ceil() as i64).max(min);
    (max > min).then_some(Dist::Uniform { min, max })
}

/// Normal by the samples' mean and standard deviation.
fn normal(sorted: &[f64]) -> Option<Dist> {
    let n = sorted.len() as f64;
    let mean = sorted.iter().sum::<f64>() / n;
    let var = sorted.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    let sd = var.sqrt().round() as i64;
    (sd > 0).then_some(Dist::Normal { mean: mean.round().max(0.0) as i64, sd })
}

/// Exponential by the samples' mean (it starts at 0: no shifted kind exists).
fn exponential(sorted: &[f64]) -> Option<Dist> {
    let mean = (sorted.iter().sum::<f64>() / sorted.len() as f64).round() as i64;
    (mean > 0).then_some(Dist::Exponential { mean })
}

/// Log-normal by the samples' median and 95th percentile (whole ms, the median at least 1):
/// the kind with the tail that makes SQLITE_BUSY (docs/calibration.md).
fn lognormal(sorted: &[f64]) -> Option<Dist> {
    let median = (quantile(sorted, 0.5).round() as i64).max(1);
    let p95 = (quantile(sorted, 0.95).round() as i64).max(median);
    (p95 > median).then_some(Dist::LogNormal { median, p95 })
}

/// The sample itself as an `empirical` distribution (whole ms): nothing lost, at most
/// `values_max` values (evenly spaced quantiles when there are more).
pub fn empirical(samples_ms: &[f64], values_max: usize) -> Option<Dist> {
    let mut sorted: Vec<f64> = samples_ms.iter().copied().filter(|v| v.is_finite()).map(|v| v.round().max(0.0)).collect();
    if sorted.is_empty() || values_max == 0 {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len().min(values_max);
    let values = (0..n).map(|i| quantile(&sorted, (i as f64 + 0.5) / n as f64).round() as i64).collect();
    Some(Dist::Empirical(values))
}

/// The same kind, with the parameters of least distance on a grid around `start`'s.
fn refine(sorted: &[f64], start: Fit) -> Fit {
    let span = |v: i64| grid((v / 3).max(1), (v * 3).max(2));
    let tries: Vec<Dist> = match start.dist {
        Dist::Const(_) | Dist::Empirical(_) => Vec::new(),
        Dist::LogNormal { median, p95 } => {
            let medians = grid((median / 3).max(1), (median * 3).max(2));
            let tails = grid(median, (p95 * 3).max(median + 1));
            medians
                .iter()
                .flat_map(|&m| tails.iter().filter(move |&&t| t > m).map(move |&p95| Dist::LogNormal { median: m, p95 }))
                .collect()
        }
        Dist::Exponential { mean } => span(mean).into_iter().map(|mean| Dist::Exponential { mean }).collect(),
        Dist::Normal { sd, .. } => {
            let means = grid(quantile(sorted, 0.1) as i64, quantile(sorted, 0.9) as i64);
            means.iter().flat_map(|&mean| span(sd).into_iter().map(move |sd| Dist::Normal { mean, sd })).collect()
        }
        Dist::Uniform { min, max } => {
            let mins = grid(0, min.max(quantile(sorted, 0.5) as i64));
            let maxes = grid(quantile(sorted, 0.5) as i64, max.max(1));
            mins.iter().flat_map(|&min| maxes.iter().filter(move |&&max| max > min).map(move |&max| Dist::Uniform { min, max })).collect()
        }
    };
    tries
        .into_iter()
        .map(|dist| Fit { ks: ks_distance(sorted, &dist), dist })
        .fold(start, |best, fit| if fit.ks < best.ks { fit } else { best })
}

/// At most 40 distinct whole values from `lo` to `hi`, both included.
fn grid(lo: i64, hi: i64) -> Vec<i64> {
    let (lo, hi) = (lo.max(0), hi.max(lo.max(0)));
    let step = ((hi - lo) / 39).max(1);
    let mut values: Vec<i64> = (0..40).map(|k| (lo + k * step).min(hi)).collect();
    values.push(hi);
    values.dedup();
    values
}

/// The largest gap between the CDF of the samples (whole ms, sorted) and the CDF of `dist`'s
/// draws. Both are steps at whole values, so the gap is largest at a sample's value or just
/// below it.
pub fn ks_distance(sorted: &[f64], dist: &Dist) -> f64 {
    let n = sorted.len() as f64;
    let mut gap = 0.0_f64;
    let mut i = 0;
    while i < sorted.len() {
        let v = sorted[i];
        let below = i as f64 / n;
        while i < sorted.len() && sorted[i] == v {
            i += 1;
        }
        let at = i as f64 / n;
        gap = gap.max((cdf(dist, v - 1.0) - below).abs()).max((cdf(dist, v) - at).abs());
    }
    gap
}

/// The probability that a draw of `dist` (sim/base/dist.rs: whole ms, never negative) is at most
/// the whole value `k`.
pub fn cdf(dist: &Dist, k: f64) -> f64 {
    if k < 0.0 {
        return 0.0;
    }
    match *dist {
        Dist::Const(v) => f64::from(u8::from(k >= v as f64)),
        // `random_range(min..=max)`: each whole value alike.
        Dist::Uniform { min, max } => ((k - min as f64 + 1.0) / (max - min + 1) as f64).clamp(0.0, 1.0),
        // Rounded to the nearest whole ms, the negative ones clamped to 0.
        Dist::Normal { mean, sd } => 0.5 * (1.0 + erf((k + 0.5 - mean as f64) / (sd as f64 * std::f64::consts::SQRT_2))),
        Dist::Exponential { mean } => 1.0 - (-(k + 0.5) / mean as f64).exp(),
        // Rounded to the nearest whole ms: below k + 0.5.
        Dist::LogNormal { median, p95 } => {
            let sigma = Dist::log_sigma_of(median, p95);
            let z = ((k + 0.5).ln() - (median.max(1) as f64).ln()) / sigma.max(f64::MIN_POSITIVE);
            0.5 * (1.0 + erf(z / std::f64::consts::SQRT_2))
        }
        Dist::Empirical(ref values) => values.iter().filter(|v| **v as f64 <= k).count() as f64 / values.len().max(1) as f64,
    }
}

/// Abramowitz and Stegun 7.1.26 (error below 1.5e-7): enough for a goodness-of-fit ranking.
fn erf(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let poly = t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let y = 1.0 - poly * (-x * x).exp();
    if x < 0.0 {
        -y
    } else {
        y
    }
}

/// `dist` as a scenario file writes it: `5`, or `{ kind = "uniform", min = 3, max = 9 }`.
pub fn toml_value(dist: &Dist) -> String {
    match *dist {
        Dist::Const(v) => v.to_string(),
        Dist::Uniform { min, max } => format!("{{ kind = \"uniform\", min = {min}, max = {max} }}"),
        Dist::Normal { mean, sd } => format!("{{ kind = \"normal\", mean = {mean}, sd = {sd} }}"),
        Dist::Exponential { mean } => format!("{{ kind = \"exponential\", mean = {mean} }}"),
        Dist::LogNormal { median, p95 } => format!("{{ kind = \"lognormal\", median = {median}, p95 = {p95} }}"),
        Dist::Empirical(ref values) => {
            let listed: Vec<String> = values.iter().map(i64::to_string).collect();
            format!("{{ kind = \"empirical\", values = [{}] }}", listed.join(", "))
        }
    }
}

/// `key = value` with the best fit, then the other candidates as comments, so a designer sees
/// how close each kind came and can swap one in.
pub fn toml_setting(key: &str, fits: &[Fit]) -> String {
    let Some(first) = fits.first() else {
        return format!("# {key}: no samples\n");
    };
    let mut out = format!("{key} = {}  # KS distance {:.3}\n", toml_value(&first.dist), first.ks);
    for other in &fits[1..] {
        out.push_str(&format!("# {key} = {}  # KS distance {:.3}\n", toml_value(&other.dist), other.ks));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn draws(dist: &Dist, n: usize) -> Vec<f64> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        (0..n).map(|_| dist.sample(&mut rng) as f64).collect()
    }

    #[test]
    fn a_uniform_sample_is_fitted_as_the_uniform_it_came_from() {
        let best = best(&draws(&Dist::uniform(100, 300), 2000)).unwrap();
        let Dist::Uniform { min, max } = best.dist else { panic!("expected a uniform, got {}", best.dist) };
        assert!((95..=105).contains(&min) && (295..=305).contains(&max), "uniform({min}..={max})");
        assert!(best.ks < 0.05, "KS {}", best.ks);
    }

    #[test]
    fn normal_and_exponential_samples_are_recognised() {
        let normal = best(&draws(&Dist::Normal { mean: 500, sd: 50 }, 2000)).unwrap();
        assert!(matches!(normal.dist, Dist::Normal { mean: 495..=505, sd: 45..=55 }), "{}", normal.dist);
        let exponential = best(&draws(&Dist::Exponential { mean: 40 }, 2000)).unwrap();
        assert!(matches!(exponential.dist, Dist::Exponential { mean: 37..=43 }), "{}", exponential.dist);
    }

    #[test]
    fn holds_mostly_under_half_a_millisecond_fit_a_small_exponential() {
        // 60 % zeros and a tail to 15 ms, as a disk whose fsync is usually cached.
        let mut samples = vec![0.2; 60];
        samples.extend((1..=40).map(|i| f64::from(i % 15 + 1)));
        let best = best(&samples).unwrap();
        assert!(best.ks < 0.25, "{} KS {}", best.dist, best.ks);
        assert!(cdf(&best.dist, 0.0) > 0.35, "{} draws 0 too rarely", best.dist);
    }

    #[test]
    fn samples_that_round_to_one_value_are_a_constant() {
        let fits = candidates(&[12.2, 11.9, 12.4, 12.0]);
        assert_eq!(fits.len(), 2, "{fits:?}");
        assert_eq!(fits[0].dist, Dist::Const(12));
        assert_eq!(fits[0].ks, 0.0);
        assert!(candidates(&[]).is_empty());
    }

    #[test]
    fn a_slow_outlier_does_not_stretch_the_uniform() {
        let mut samples: Vec<f64> = (0..100).map(|i| 10.0 + i as f64 / 10.0).collect();
        samples.push(5000.0);
        let Some(Dist::Uniform { max, .. }) = uniform(&{
            samples.sort_by(f64::total_cmp);
            samples
        }) else {
            panic!("a uniform")
        };
        assert!(max < 25, "max {max}");
    }

    #[test]
    fn the_toml_written_reads_back_as_the_fitted_distributions() {
        #[derive(serde::Deserialize)]
        struct Timing {
            a: Dist,
            b: Dist,
            c: Dist,
            d: Dist,
        }
        let dists = [Dist::Const(3), Dist::uniform(1, 9), Dist::Normal { mean: 20, sd: 4 }, Dist::Exponential { mean: 7 }];
        let text: String = ["a", "b", "c", "d"]
            .iter()
            .zip(&dists)
            .map(|(key, dist)| toml_setting(key, &[Fit { dist: dist.clone(), ks: 0.1 }, Fit { dist: Dist::Const(1), ks: 0.2 }]))
            .collect();
        let back: Timing = toml::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!([back.a, back.b, back.c, back.d], dists);
        assert!(text.contains("# a = 1  # KS distance 0.200"), "{text}");
    }

    #[test]
    fn the_distance_is_zero_for_a_perfect_fit_and_one_for_a_disjoint_one() {
        let sorted: Vec<f64> = (0..=100).map(f64::from).collect();
        assert!(ks_distance(&sorted, &Dist::uniform(0, 100)) < 1e-9);
        assert_eq!(ks_distance(&sorted, &Dist::uniform(1000, 2000)), 1.0);
        assert!((erf(1.0) - 0.842_700_79).abs() < 1e-6);
    }

    #[test]
    fn the_cdf_is_that_of_the_simulators_whole_ms_draws() {
        // An exponential draw is rounded: 0 for every value under half a millisecond.
        assert!((cdf(&Dist::Exponential { mean: 2 }, 0.0) - (1.0 - (-0.25_f64).exp())).abs() < 1e-12);
        // A normal clamped at 0 draws 0 for every negative value too.
        assert!((cdf(&Dist::Normal { mean: 0, sd: 4 }, 0.0) - 0.5 * (1.0 + erf(0.5 / (4.0 * std::f64::consts::SQRT_2)))).abs() < 1e-12);
        // `random_range(0..=9)`: ten whole values alike.
        assert!((cdf(&Dist::uniform(0, 9), 0.0) - 0.1).abs() < 1e-12);
        assert_eq!((cdf(&Dist::Const(3), 2.0), cdf(&Dist::Const(3), 3.0), cdf(&Dist::Const(3), -1.0)), (0.0, 1.0, 0.0));
    }

    #[test]
    fn a_lognormal_sample_is_fitted_as_a_lognormal_and_an_empirical_keeps_its_tail() {
        let sample = draws(&Dist::LogNormal { median: 5, p95: 60 }, 3000);
        let best = best(&sample).unwrap();
        assert!(matches!(best.dist, Dist::LogNormal { median: 4..=6, p95: 45..=80 }), "{}", best.dist);
        let Some(Dist::Empirical(values)) = empirical(&sample, 100) else { panic!("an empirical") };
        assert_eq!(values.len(), 100);
        let mut sorted = sample.clone();
        sorted.sort_by(f64::total_cmp);
        assert_eq!(*values.last().unwrap() as f64, quantile(&sorted, 0.995).round(), "the tail is kept");
        assert!(ks_distance(&sorted, &Dist::Empirical(values)) < 0.02);
        let pasted = toml_value(&Dist::Empirical(vec![0, 2, 18]));
        assert_eq!(pasted, "{ kind = \"empirical\", values = [0, 2, 18] }");
    }
}
