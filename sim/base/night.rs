//! The night planner (issue 44): `--seeds night:YYYY-MM-DD` (or `night:YYYY-MM-DD:COUNT`)
//! gives each date its own interval of seeds, so a nightly lane sweeps new seeds every night
//! and any night is re-run exactly from its date alone. Night `d` (days since 1970-01-01, UTC
//! calendar) is `BASE + d × STRIDE ..= BASE + d × STRIDE + COUNT − 1`: COUNT is at most
//! STRIDE, so no two dates' intervals overlap (those of a year, or of any two years), and
//! BASE keeps every night above the seeds a PR lane sweeps (`1..=10000`).

use crate::base::error::{Error, Result};

/// The first seed of night 0 (1970-01-01).
pub const BASE: u64 = 1_000_000_000;
/// Seeds between the first seeds of two consecutive nights: the most one night may sweep.
pub const STRIDE: u64 = 1_000_000;
/// A night's seeds when its text gives no count.
pub const COUNT_DEFAULT: u64 = 10_000;

/// The seeds of `night:DATE[:COUNT]` as (first, last), or `None` when `text` is no night.
pub fn parse(text: &str) -> Option<Result<(u64, u64)>> {
    let rest = text.trim().strip_prefix("night:")?;
    Some(interval(rest).map_err(|why| Error::input(format!("seeds `{text}`: {why}; expected night:YYYY-MM-DD or night:YYYY-MM-DD:COUNT"))))
}

fn interval(rest: &str) -> std::result::Result<(u64, u64), String> {
    let (date, count) = match rest.split_once(':') {
        Some((date, count)) => (date, count.parse::<u64>().map_err(|_| format!("count `{count}` is not a number"))?),
        None => (rest, COUNT_DEFAULT),
    };
    if count == 0 || count > STRIDE {
        return Err(format!("a night sweeps 1 to {STRIDE} seeds, not {count}"));
    }
    let day = day_number(date)?;
    let first = BASE + day * STRIDE;
    Ok((first, first + count - 1))
}

/// Days from 1970-01-01 to `YYYY-MM-DD` (proleptic Gregorian), for years 1970 to 9999.
pub fn day_number(date: &str) -> std::result::Result<u64, String> {
    let bad = || format!("`{date}` is not a date YYYY-MM-DD");
    let parts: Vec<&str> = date.split('-').collect();
    let [y, m, d] = parts.as_slice() else { return Err(bad()) };
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return Err(bad());
    }
    let (year, month, day): (u64, u64, u64) = (y.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?, d.parse().map_err(|_| bad())?);
    let leap = |y: u64| (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400);
    let month_days = [31, if leap(year) { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1970..=9999).contains(&year) || !(1..=12).contains(&month) || day == 0 || day > month_days[(month - 1) as usize] {
        return Err(bad());
    }
    let years: u64 = (1970..year).map(|y| if leap(y) { 366 } else { 365 }).sum();
    let months: u64 = month_days[..(month - 1) as usize].iter().sum();
    Ok(years + months + day - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_date_has_its_own_interval_and_a_years_never_overlap() {
        assert_eq!(day_number("1970-01-01"), Ok(0));
        assert_eq!(day_number("2026-12-02"), Ok(20_789), "as `date -d 2026-12-02 +%s` / 86400");
        assert_eq!(day_number("2024-03-01").unwrap() - day_number("2024-02-28").unwrap(), 2, "a leap day");
        let night = |t: &str| parse(t).unwrap().unwrap();
        assert_eq!(night("night:2026-12-02"), (BASE + 20_789 * STRIDE, BASE + 20_789 * STRIDE + 9_999));
        assert_eq!(night("night:2026-12-02:50").1 - night("night:2026-12-02:50").0, 49);
        let mut year: Vec<(u64, u64)> = Vec::new();
        let mut day = day_number("2026-01-01").unwrap();
        while day <= day_number("2026-12-31").unwrap() {
            let first = BASE + day * STRIDE;
            year.push((first, first + STRIDE - 1));
            day += 1;
        }
        assert_eq!(year.len(), 365);
        assert!(year.windows(2).all(|w| w[0].1 < w[1].0), "the widest nights of a year are disjoint");
        assert!(year[0].0 > 10_000, "above a PR lane's seeds");
        for bad in ["night:2026-02-29", "night:2026-13-01", "night:26-12-02", "night:2026-12-02:0", "night:2026-12-02:1000001", "night:x"] {
            let e = parse(bad).unwrap().unwrap_err();
            assert!(matches!(e, Error::Input(_)) && e.to_string().contains(bad), "{bad}: {e}");
        }
        assert!(parse("1..=10").is_none());
    }
}
