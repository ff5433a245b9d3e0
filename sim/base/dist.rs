//! Distributions of simulated durations, as scenario files write them.
//!
//! A duration setting is either a plain integer (a constant, in the unit its key names) or a
//! table with a `kind`: `{ kind = "uniform", min = 60000, max = 300000 }`,
//! `{ kind = "normal", mean = 120000, sd = 30000 }`, `{ kind = "exponential", mean = 90000 }`,
//! `{ kind = "lognormal", median = 2, p95 = 20 }` (a tail: what SQLite's write holds have,
//! docs/calibration.md), `{ kind = "empirical", values = [0, 0, 1, 2, 18] }` (one of the values,
//! each as likely: a measured sample pasted as it is, `rehearsal calibrate statements`).
//! Draws are integers, never negative, and come only from the caller's seeded stream.

use std::fmt;

use rand::{Rng, RngExt};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

#[derive(Clone, Debug, PartialEq)]
pub enum Dist {
    Const(i64),
    Uniform {
        min: i64,
        max: i64,
    },
    Normal {
        mean: i64,
        sd: i64,
    },
    Exponential {
        mean: i64,
    },
    /// exp(N(ln median, σ)) with σ such that 95 % of draws are under `p95`.
    LogNormal {
        median: i64,
        p95: i64,
    },
    Empirical(Vec<i64>),
}

/// z of the normal's 95th percentile: a log-normal's σ is ln(p95 / median) / this.
const Z95: f64 = 1.644_853_626_951_472_2;

impl Dist {
    pub fn sample(&self, rng: &mut impl Rng) -> i64 {
        let value = match *self {
            Dist::LogNormal { median, p95 } => {
                let z = standard_normal(rng);
                (median.max(1) as f64 * (z * log_sigma(median, p95)).exp()).round() as i64
            }
            Dist::Empirical(ref values) => values[rng.random_range(0..values.len())],
            Dist::Const(v) => v,
            Dist::Uniform { min, max } => rng.random_range(min..=max),
            Dist::Normal { mean, sd } => mean + (standard_normal(rng) * sd as f64).round() as i64,
            Dist::Exponential { mean } => {
                let u: f64 = rng.random_range(f64::MIN_POSITIVE..1.0);
                (-u.ln() * mean as f64).round() as i64
            }
        };
        value.max(0)
    }

    /// A log-normal's median and p95 as σ of its logarithm (0 when p95 is not above the median).
    pub fn log_sigma_of(median: i64, p95: i64) -> f64 {
        log_sigma(median, p95)
    }

    /// A value the distribution stays under in practice, for bounds derived from it: the
    /// maximum of a constant or a uniform; mean + 4 sd of a normal (all but 3 in 100,000
    /// draws); 5 × the mean of an exponential (all but 7 in 1,000).
    pub fn upper(&self) -> i64 {
        match *self {
            Dist::Const(v) => v,
            Dist::Uniform { max, .. } => max,
            Dist::Normal { mean, sd } => mean + 4 * sd,
            Dist::Exponential { mean } => 5 * mean,
            // z = 3.7: all but 1 in 10,000 draws.
            Dist::LogNormal { median, p95 } => (median.max(1) as f64 * (3.7 * log_sigma(median, p95)).exp()).ceil() as i64,
            Dist::Empirical(ref values) => values.iter().copied().max().unwrap_or(0),
        }
    }

    /// A value no draw is below, for lower bounds derived from it: the constant, a uniform's
    /// minimum; 0 for a normal or an exponential (draws are clamped at zero).
    pub fn lower(&self) -> i64 {
        match *self {
            Dist::Const(v) => v.max(0),
            Dist::Uniform { min, .. } => min.max(0),
            Dist::Normal { .. } | Dist::Exponential { .. } | Dist::LogNormal { .. } => 0,
            Dist::Empirical(ref values) => values.iter().copied().min().unwrap_or(0).max(0),
        }
    }

    /// The mean of the distribution (before clamping at zero), rounded to an integer, for
    /// summaries and estimates.
    pub fn mean(&self) -> i64 {
        match *self {
            Dist::Const(v) => v,
            // Rounded half up, so uniform(1, 2) counts as 2, not 1.
            Dist::Uniform { min, max } => (min + max + 1) / 2,
            Dist::Normal { mean, .. } | Dist::Exponential { mean } => mean,
            Dist::LogNormal { median, p95 } => {
                let sigma = log_sigma(median, p95);
                (median.max(1) as f64 * (sigma * sigma / 2.0).exp()).round() as i64
            }
            Dist::Empirical(ref values) => values.iter().sum::<i64>() / values.len().max(1) as i64,
        }
    }

    pub fn uniform(min: i64, max: i64) -> Dist {
        assert!(0 <= min && min <= max);
        Dist::Uniform { min, max }
    }
}

/// One draw of N(0, 1) by Box-Muller: two uniforms from the caller's stream, no extra dependency.
fn standard_normal(rng: &mut impl Rng) -> f64 {
    let u1: f64 = rng.random_range(f64::MIN_POSITIVE..1.0);
    let u2: f64 = rng.random_range(0.0..1.0);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

fn log_sigma(median: i64, p95: i64) -> f64 {
    let median = median.max(1) as f64;
    ((p95 as f64).max(median) / median).ln() / Z95
}

impl fmt::Display for Dist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dist::Const(v) => write!(f, "{v}"),
            Dist::Uniform { min, max } => write!(f, "uniform({min}..={max})"),
            Dist::Normal { mean, sd } => write!(f, "normal(mean={mean}, sd={sd})"),
            Dist::Exponential { mean } => write!(f, "exponential(mean={mean})"),
            Dist::LogNormal { median, p95 } => write!(f, "lognormal(median={median}, p95={p95})"),
            Dist::Empirical(values) => write!(f, "empirical({} values, mean={})", values.len(), self.mean()),
        }
    }
}

impl<'de> Deserialize<'de> for Dist {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Dist, D::Error> {
        deserializer.deserialize_any(DistVisitor)
    }
}

struct DistVisitor;

const DIST_KEYS: &[&str] = &["kind", "min", "max", "mean", "sd", "median", "p95", "values"];
const DIST_KINDS: &[&str] = &["const", "uniform", "normal", "exponential", "lognormal", "empirical"];

impl<'de> Visitor<'de> for DistVisitor {
    type Value = Dist;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a non-negative integer or a table like { kind = \"uniform\", min = 1000, max = 5000 }")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Dist, E> {
        if v < 0 {
            return Err(E::custom(format!("a duration cannot be negative, got {v}")));
        }
        Ok(Dist::Const(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Dist, E> {
        let v = i64::try_from(v).map_err(|_| E::custom("duration too large"))?;
        self.visit_i64(v)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Dist, A::Error> {
        let mut kind: Option<String> = None;
        let (mut min, mut max, mut mean, mut sd) = (None, None, None, None);
        let (mut median, mut p95, mut values) = (None, None, None::<Vec<i64>>);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "kind" => kind = Some(map.next_value()?),
                "min" => min = Some(map.next_value::<i64>()?),
                "max" => max = Some(map.next_value::<i64>()?),
                "mean" => mean = Some(map.next_value::<i64>()?),
                "sd" => sd = Some(map.next_value::<i64>()?),
                "median" => median = Some(map.next_value::<i64>()?),
                "p95" => p95 = Some(map.next_value::<i64>()?),
                "values" => values = Some(map.next_value()?),
                other => return Err(de::Error::unknown_field(other, DIST_KEYS)),
            }
        }
        let need = |name: &'static str, v: Option<i64>| -> Result<i64, A::Error> {
            let v = v.ok_or_else(|| de::Error::missing_field(name))?;
            if v < 0 {
                return Err(de::Error::custom(format!("`{name}` cannot be negative, got {v}")));
            }
            Ok(v)
        };
        let kind = kind.ok_or_else(|| de::Error::missing_field("kind"))?;
        let dist = match kind.as_str() {
            "const" => Dist::Const(need("mean", mean)?),
            "uniform" => {
                let (min, max) = (need("min", min)?, need("max", max)?);
                if min > max {
                    return Err(de::Error::custom(format!("uniform needs min <= max, got min = {min}, max = {max}")));
                }
                Dist::Uniform { min, max }
            }
            "normal" => Dist::Normal { mean: need("mean", mean)?, sd: need("sd", sd)? },
            "exponential" => {
                let mean = need("mean", mean)?;
                if mean == 0 {
                    return Err(de::Error::custom("exponential needs mean > 0"));
                }
                Dist::Exponential { mean }
            }
            "lognormal" => {
                let (median, p95) = (need("median", median)?, need("p95", p95)?);
                if median == 0 || p95 < median {
                    return Err(de::Error::custom(format!("lognormal needs 0 < median <= p95, got median = {median}, p95 = {p95}")));
                }
                Dist::LogNormal { median, p95 }
            }
            "empirical" => {
                let values = values.ok_or_else(|| de::Error::missing_field("values"))?;
                if values.is_empty() || values.iter().any(|v| *v < 0) {
                    return Err(de::Error::custom("empirical needs a non-empty list of `values`, none negative"));
                }
                Dist::Empirical(values)
            }
            other => {
                return Err(de::Error::unknown_variant(other, DIST_KINDS));
            }
        };
        Ok(dist)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_stay_in_range_and_repeat_per_stream() {
        let dists = [
            Dist::Const(5),
            Dist::uniform(10, 20),
            Dist::Normal { mean: 100, sd: 500 },
            Dist::Exponential { mean: 50 },
            Dist::LogNormal { median: 2, p95: 20 },
            Dist::Empirical(vec![0, 3, 9]),
        ];
        for dist in &dists {
            let mut a = crate::base::rng::stream(1, "d");
            let mut b = crate::base::rng::stream(1, "d");
            for _ in 0..1000 {
                let (x, y) = (dist.sample(&mut a), dist.sample(&mut b));
                assert_eq!(x, y);
                assert!(x >= 0);
                if let Dist::Uniform { min, max } = dist {
                    assert!(*min <= x && x <= *max);
                }
            }
        }
    }

    #[test]
    fn a_lognormal_has_its_median_and_its_tail_and_an_empirical_draws_only_its_values() {
        let mut rng = crate::base::rng::stream(7, "d");
        let dist = Dist::LogNormal { median: 10, p95: 100 };
        let mut draws: Vec<i64> = (0..20_000).map(|_| dist.sample(&mut rng)).collect();
        draws.sort_unstable();
        let (p50, p95) = (draws[10_000], draws[19_000]);
        assert!((9..=11).contains(&p50), "median {p50}");
        assert!((90..=110).contains(&p95), "p95 {p95}");
        let empirical = Dist::Empirical(vec![0, 0, 7]);
        let zeros = (0..3000).map(|_| empirical.sample(&mut rng)).filter(|v| *v == 0).count();
        assert!((1800..=2200).contains(&zeros), "{zeros} zeros of 3000, two thirds expected");
        assert!((0..100).all(|_| [0, 7].contains(&empirical.sample(&mut rng))));
    }

    #[test]
    fn tables_with_a_tail_parse_and_bad_ones_say_why() {
        #[derive(serde::Deserialize)]
        struct T {
            d: Dist,
        }
        let parse = |text: &str| toml::from_str::<T>(text).map(|t| t.d).map_err(|e| e.to_string());
        assert_eq!(parse("d = { kind = \"lognormal\", median = 2, p95 = 20 }"), Ok(Dist::LogNormal { median: 2, p95: 20 }));
        assert_eq!(parse("d = { kind = \"empirical\", values = [0, 1, 18] }"), Ok(Dist::Empirical(vec![0, 1, 18])));
        assert!(parse("d = { kind = \"lognormal\", median = 0, p95 = 20 }").unwrap_err().contains("0 < median <= p95"));
        assert!(parse("d = { kind = \"empirical\", values = [] }").unwrap_err().contains("non-empty"));
        assert!(parse("d = { kind = \"weibull\", mean = 1 }").unwrap_err().contains("empirical"));
    }
}
