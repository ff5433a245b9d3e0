//! Distributions of simulated durations, as scenario files write them.
//!
//! A duration setting is either a plain integer (a constant, in the unit its key names) or a
//! table with a `kind`: `{ kind = "uniform", min = 60000, max = 300000 }`,
//! `{ kind = "normal", mean = 120000, sd = 30000 }`, `{ kind = "exponential", mean = 90000 }`.
//! Draws are integers, never negative, and come only from the caller's seeded stream.

use std::fmt;

use rand::{Rng, RngExt};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

#[derive(Clone, Debug, PartialEq)]
pub enum Dist {
    Const(i64),
    Uniform { min: i64, max: i64 },
    Normal { mean: i64, sd: i64 },
    Exponential { mean: i64 },
}

impl Dist {
    pub fn sample(&self, rng: &mut impl Rng) -> i64 {
        let value = match *self {
            Dist::Const(v) => v,
            Dist::Uniform { min, max } => rng.random_range(min..=max),
            Dist::Normal { mean, sd } => {
                // Box-Muller: two uniforms from the caller's stream, no extra dependency.
                let u1: f64 = rng.random_range(f64::MIN_POSITIVE..1.0);
                let u2: f64 = rng.random_range(0.0..1.0);
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                mean + (z * sd as f64).round() as i64
            }
            Dist::Exponential { mean } => {
                let u: f64 = rng.random_range(f64::MIN_POSITIVE..1.0);
                (-u.ln() * mean as f64).round() as i64
            }
        };
        value.max(0)
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
        }
    }

    /// A value no draw is below, for lower bounds derived from it: the constant, a uniform's
    /// minimum; 0 for a normal or an exponential (draws are clamped at zero).
    pub fn lower(&self) -> i64 {
        match *self {
            Dist::Const(v) => v.max(0),
            Dist::Uniform { min, .. } => min.max(0),
            Dist::Normal { .. } | Dist::Exponential { .. } => 0,
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
        }
    }

    pub fn uniform(min: i64, max: i64) -> Dist {
        assert!(0 <= min && min <= max);
        Dist::Uniform { min, max }
    }
}

impl fmt::Display for Dist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dist::Const(v) => write!(f, "{v}"),
            Dist::Uniform { min, max } => write!(f, "uniform({min}..={max})"),
            Dist::Normal { mean, sd } => write!(f, "normal(mean={mean}, sd={sd})"),
            Dist::Exponential { mean } => write!(f, "exponential(mean={mean})"),
        }
    }
}

impl<'de> Deserialize<'de> for Dist {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Dist, D::Error> {
        deserializer.deserialize_any(DistVisitor)
    }
}

struct DistVisitor;

const DIST_KEYS: &[&str] = &["kind", "min", "max", "mean", "sd"];

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
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "kind" => kind = Some(map.next_value()?),
                "min" => min = Some(map.next_value::<i64>()?),
                "max" => max = Some(map.next_value::<i64>()?),
                "mean" => mean = Some(map.next_value::<i64>()?),
                "sd" => sd = Some(map.next_value::<i64>()?),
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
            other => {
                return Err(de::Error::unknown_variant(other, &["const", "uniform", "normal", "exponential"]));
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
        let dists = [Dist::Const(5), Dist::uniform(10, 20), Dist::Normal { mean: 100, sd: 500 }, Dist::Exponential { mean: 50 }];
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
}
