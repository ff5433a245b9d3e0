//! Field deserializers that refuse out-of-range values while the TOML is read, so the error
//! carries the value's own line and column (`deserialize_with = "…"` in the section structs).

use serde::de::{self, Deserializer};
use serde::Deserialize;

use crate::base::clock::parse_utc;

type Field<T, E> = std::result::Result<T, E>;

pub(super) fn positive_i64<'de, D: Deserializer<'de>>(d: D) -> Field<i64, D::Error> {
    let v = i64::deserialize(d)?;
    if v <= 0 {
        return Err(de::Error::custom(format!("must be positive, got {v}")));
    }
    Ok(v)
}

pub(super) fn non_negative_i64<'de, D: Deserializer<'de>>(d: D) -> Field<i64, D::Error> {
    let v = i64::deserialize(d)?;
    if v < 0 {
        return Err(de::Error::custom(format!("cannot be negative, got {v}")));
    }
    Ok(v)
}

/// `non_negative_i64` for a key whose absence means a default computed from other keys.
pub(super) fn optional_non_negative_i64<'de, D: Deserializer<'de>>(d: D) -> Field<Option<i64>, D::Error> {
    non_negative_i64(d).map(Some)
}

/// A probability in 0..=1; the message is shared with the odds of `[faults]`.
pub(super) fn check_probability(v: f64) -> Field<f64, String> {
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("a probability must be between 0 and 1, got {v}"))
    }
}

pub(super) fn probability<'de, D: Deserializer<'de>>(d: D) -> Field<f64, D::Error> {
    check_probability(f64::deserialize(d)?).map_err(de::Error::custom)
}

pub(super) fn percent<'de, D: Deserializer<'de>>(d: D) -> Field<i64, D::Error> {
    let v = i64::deserialize(d)?;
    if !(0..=100).contains(&v) {
        return Err(de::Error::custom(format!("a percentage must be between 0 and 100, got {v}")));
    }
    Ok(v)
}

/// Read as a signed integer, so a negative value is refused with its sign rather than as
/// "invalid value" of an unsigned type.
pub(super) fn positive_u64<'de, D: Deserializer<'de>>(d: D) -> Field<u64, D::Error> {
    let v = i64::deserialize(d)?;
    if v <= 0 {
        return Err(de::Error::custom(format!("must be positive, got {v}")));
    }
    Ok(v as u64)
}

pub(super) fn positive_u32<'de, D: Deserializer<'de>>(d: D) -> Field<u32, D::Error> {
    let v = i64::deserialize(d)?;
    if v <= 0 {
        return Err(de::Error::custom(format!("must be positive, got {v}")));
    }
    u32::try_from(v).map_err(|_| de::Error::custom(format!("must be at most {}, got {v}", u32::MAX)))
}

/// `positive_i64` for a key whose absence means a default computed from other keys.
pub(super) fn optional_positive_i64<'de, D: Deserializer<'de>>(d: D) -> Field<Option<i64>, D::Error> {
    positive_i64(d).map(Some)
}

pub(super) fn positive_u64_opt<'de, D: Deserializer<'de>>(d: D) -> Field<Option<u64>, D::Error> {
    positive_u64(d).map(Some)
}

/// `YYYY-MM-DD HH:MM:SS`, UTC, as Unix milliseconds.
pub(super) fn epoch<'de, D: Deserializer<'de>>(d: D) -> Field<i64, D::Error> {
    let text = String::deserialize(d)?;
    parse_utc(&text).ok_or_else(|| de::Error::custom(format!("`{text}` is not a UTC time like \"2026-01-05 09:00:00\" (1970 or later)")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Probe {
        #[serde(default, deserialize_with = "positive_i64")]
        positive: i64,
        #[serde(default, deserialize_with = "non_negative_i64")]
        non_negative: i64,
        #[serde(default, deserialize_with = "probability")]
        odds: f64,
        #[serde(default, deserialize_with = "percent")]
        pct: i64,
        #[serde(default, deserialize_with = "positive_u64")]
        count: u64,
        #[serde(default, deserialize_with = "positive_u64_opt")]
        steps: Option<u64>,
        #[serde(default, deserialize_with = "positive_u32")]
        session: u32,
        #[serde(default, deserialize_with = "epoch")]
        at: i64,
    }

    fn refusal(text: &str) -> String {
        toml::from_str::<Probe>(text).expect_err(text).message().to_string()
    }

    #[test]
    fn out_of_range_values_are_refused_with_the_value() {
        assert_eq!(refusal("positive = 0"), "must be positive, got 0");
        assert_eq!(refusal("non_negative = -1"), "cannot be negative, got -1");
        assert_eq!(refusal("odds = 1.5"), "a probability must be between 0 and 1, got 1.5");
        assert_eq!(refusal("pct = 101"), "a percentage must be between 0 and 100, got 101");
        assert_eq!(refusal("count = -3"), "must be positive, got -3");
        assert_eq!(refusal("steps = 0"), "must be positive, got 0");
        assert_eq!(refusal("session = 0"), "must be positive, got 0");
        assert_eq!(refusal("session = 4294967296"), "must be at most 4294967295, got 4294967296");
        assert!(refusal("at = \"noon\"").starts_with("`noon` is not a UTC time"));
    }

    #[test]
    fn the_edges_of_each_range_are_accepted() {
        let p: Probe = toml::from_str(
            "positive = 1\nnon_negative = 0\nodds = 1.0\npct = 100\ncount = 1\nsteps = 1\nsession = 1\nat = \"1970-01-01 00:00:00\"",
        )
        .unwrap();
        assert_eq!((p.positive, p.non_negative, p.odds, p.pct, p.count, p.steps, p.at), (1, 0, 1.0, 100, 1, Some(1), 0));
        assert_eq!(p.session, 1);
    }
}
