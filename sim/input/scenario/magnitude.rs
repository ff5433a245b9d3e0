//! One bound on every number a scenario holds, so no duration, count or instant reaches the
//! clock or the arithmetic near the ends of `i64` (issue 30: `launch_delay_ms`, `statement_ms`,
//! `poll_ms`, `sim_time_max_ms` near `i64::MAX` panicked "clock went backwards" after
//! `rehearsal check` said ok). Each key's own range (positive, a percentage, at most 10000
//! tasks) is checked where it is read (`deserialize.rs`, `plan.rs`); this pass, over the
//! document as written, is the ceiling they all share: an integer beyond `MAX_MAGNITUDE`, or a
//! number that is not finite, is refused with the file, line, column and key, whatever the key.

use toml::de::{DeTable, DeValue};

use super::locate::line_col;
use crate::base::error::{Error, Result};

/// 10^12: in milliseconds, 31.7 simulated years; sums and products of a few such values (an
/// instant plus a duration, seconds times 1000) stay far inside `i64`.
pub const MAX_MAGNITUDE: i128 = 1_000_000_000_000;

/// Keys whose value is an identifier, not a quantity: any `u64` is a seed.
const UNBOUNDED: &[&str] = &["run.seed"];

/// The first number of `text` out of bounds, as an input error; `Ok` when the text is not
/// TOML at all (the typed reading reports that, in its own words).
pub(super) fn check(file: &str, text: &str) -> Result<()> {
    let Ok(root) = DeTable::parse(text) else { return Ok(()) };
    walk_table(root.get_ref(), "").map_err(|(offset, key, why)| {
        let (line, col) = line_col(text, offset);
        Error::input(format!("{file}:{line}:{col}: key `{key}`: {why}"))
    })
}

type Refusal = (usize, String, String);

fn walk_table(table: &DeTable<'_>, prefix: &str) -> std::result::Result<(), Refusal> {
    for (key, value) in table.iter() {
        let path = if prefix.is_empty() { key.get_ref().to_string() } else { format!("{prefix}.{}", key.get_ref()) };
        walk_value(value.get_ref(), value.span().start, &path)?;
    }
    Ok(())
}

fn walk_value(value: &DeValue<'_>, offset: usize, path: &str) -> std::result::Result<(), Refusal> {
    match value {
        DeValue::Integer(n) if !UNBOUNDED.contains(&path) => {
            let digits = n.as_str();
            match i128::from_str_radix(digits, n.radix()) {
                Ok(v) if (-MAX_MAGNITUDE..=MAX_MAGNITUDE).contains(&v) => Ok(()),
                Ok(v) => Err((offset, path.to_string(), beyond(&v.to_string()))),
                Err(_) => Err((offset, path.to_string(), beyond(digits))),
            }
        }
        DeValue::Float(x) => {
            let finite = x.as_str().parse::<f64>().map(|v| v.is_finite() && v.abs() <= MAX_MAGNITUDE as f64).unwrap_or(false);
            if finite {
                Ok(())
            } else {
                Err((offset, path.to_string(), format!("{} is not a finite number within ±10^12", x.as_str())))
            }
        }
        DeValue::Array(items) => items.iter().try_for_each(|item| walk_value(item.get_ref(), item.span().start, path)),
        DeValue::Table(table) => walk_table(table, path),
        _ => Ok(()),
    }
}

fn beyond(value: &str) -> String {
    format!("{value} is out of range: a scenario's numbers are within ±10^12 (in ms, 31.7 years)")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(text: &str) -> String {
        check("s.toml", text).expect_err(text).to_string()
    }

    #[test]
    fn numbers_beyond_the_ceiling_are_refused_with_their_place_and_key() {
        let e = refusal("[tasks]\ncount = 1\n[timing]\nstatement_ms = 9223372036854775000\n");
        assert!(e.contains("s.toml:4:16: key `timing.statement_ms`: 9223372036854775000 is out of range"), "{e}");
        let e = refusal("[timing]\nstatement_ms = { kind = \"uniform\", min = 1, max = 1_000_000_000_001 }\n");
        assert!(e.contains("key `timing.statement_ms.max`"), "{e}");
        let e = refusal("[[faults.crash]]\ntask = 1\nat_ms = -2000000000000\n");
        assert!(e.contains("s.toml:3:9: key `faults.crash.at_ms`: -2000000000000 is out of range"), "{e}");
        assert!(refusal("[conductor]\nreject_probability = nan\n").contains("nan is not a finite number"));
        assert!(refusal("[conductor]\nreject_probability = inf\n").contains("inf is not a finite number"));
        assert!(refusal("x = 0xffffffffffffffff\n").contains("18446744073709551615 is out of range"));
    }

    #[test]
    fn the_ceiling_itself_seeds_and_text_that_is_not_toml_pass() {
        check("s.toml", "[run]\nsim_time_max_ms = 1_000_000_000_000\nseed = 18446744073709551615\n").expect("at the ceiling");
        check("s.toml", "[tasks\n").expect("not TOML: the typed reading's to report");
    }
}
