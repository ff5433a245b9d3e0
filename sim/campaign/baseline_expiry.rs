//! Expiry of known failures (issue 44): a nightly baseline's failure mode (`SCENARIO VARIANT *
//! fail RULES`) that passed N nights in a row stops counting as known. Each merge that records
//! its night (`merge --record-night`) counts, for every failing mode, the nights in a row in
//! which no pair of its scenario and variant failed (`passed-nights=K` on the line, 0 again
//! after a night where one did); judged with `--expire-after N`, a mode at K >= N is judged as
//! `pass -` — any failure of it is a regression — and reported as an improvement to bless away.

use std::collections::BTreeMap;

use super::baseline::{Baseline, Entry, Key, Outcome};
use crate::vocab::RunOutcome;

/// A failure mode that no longer counts as known: its scenario, variant and line.
pub type Expired = ((String, String), Entry);

/// `baseline` with every failing mode that passed `after` nights in a row judged as `pass -`,
/// and those modes, for the report.
pub fn expire(baseline: &Baseline, after: u64) -> (Baseline, Vec<Expired>) {
    let mut judged = baseline.clone();
    let mut expired = Vec::new();
    for (key, entry) in judged.modes.iter_mut() {
        if !entry.passed && entry.passed_nights >= after {
            expired.push((key.clone(), entry.clone()));
            *entry = Entry { passed: true, rules: Default::default(), passed_nights: 0 };
        }
    }
    (judged, expired)
}

/// `baseline` after one more night: each failing mode's run of passing nights one longer when
/// no pair of its scenario and variant failed in `rows`, else 0. Modes whose scenario the night
/// did not run keep their count.
pub fn record_night(baseline: &Baseline, rows: &[Outcome], keys: &[Key]) -> Baseline {
    let mut ran: BTreeMap<(String, String), bool> = BTreeMap::new();
    for (row, key) in rows.iter().zip(keys) {
        let failed = ran.entry((key.0.clone(), key.1.clone())).or_insert(false);
        *failed |= row.verdict == RunOutcome::Fail;
    }
    let mut next = baseline.clone();
    for (key, entry) in next.modes.iter_mut().filter(|(_, e)| !e.passed) {
        match ran.get(key) {
            Some(true) => entry.passed_nights = 0,
            Some(false) => entry.passed_nights += 1,
            None => {}
        }
    }
    next
}

/// The stdout line of an expired mode.
pub fn line(((scenario, variant), entry): &Expired, after: u64) -> String {
    format!(
        "expired      {scenario} {variant} *: known failure `{}` passed {} nights in a row (--expire-after {after}): no longer known; an improvement to bless (`merge … --bless-modes`)",
        entry.rules.iter().map(String::as_str).collect::<Vec<_>>().join(","),
        entry.passed_nights
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(scenario: &'static str, verdict: RunOutcome) -> Outcome<'static> {
        static NONE: [String; 0] = [];
        let rules: &'static [String] =
            if verdict == RunOutcome::Fail { Box::leak(vec!["budget".to_string()].into_boxed_slice()) } else { &NONE };
        Outcome { scenario, variant: "repaired", seed: 1, verdict, rules, first_violation: "" }
    }

    #[test]
    fn a_failing_mode_counts_passing_nights_resets_on_a_failure_and_expires_at_n() {
        let text = "a.toml repaired * fail budget\nb.toml repaired * fail budget passed-nights=2\nc.toml repaired * pass -\n";
        let baseline = Baseline::parse(text, "b.txt").unwrap();
        let key = |s: &str| (s.to_string(), "repaired".to_string(), 1);
        let rows = [outcome("a.toml", RunOutcome::Pass), outcome("b.toml", RunOutcome::Fail), outcome("c.toml", RunOutcome::Pass)];
        let keys = [key("a.toml"), key("b.toml"), key("c.toml")];
        let next = record_night(&baseline, &rows, &keys);
        let nights = |b: &Baseline, s: &str| b.modes[&(s.to_string(), "repaired".to_string())].passed_nights;
        assert_eq!((nights(&next, "a.toml"), nights(&next, "b.toml"), nights(&next, "c.toml")), (1, 0, 0));
        // Written and read back: the count is on the line.
        let rendered = next.render();
        assert!(rendered.contains("a.toml repaired * fail budget passed-nights=1\n"), "{rendered}");
        assert!(rendered.contains("b.toml repaired * fail budget\n"), "0 is not written: {rendered}");
        assert_eq!(Baseline::parse(&rendered, "b.txt").unwrap(), next);
        // At 2 nights, b expired before this night (a near miss at 1 does not).
        let (judged, expired) = expire(&baseline, 2);
        assert_eq!(expired.len(), 1);
        assert!(line(&expired[0], 2).starts_with("expired      b.toml repaired *: known failure `budget` passed 2 nights"));
        assert!(judged.modes[&("b.toml".to_string(), "repaired".to_string())].passed, "judged as pass -");
        assert!(!judged.modes[&("a.toml".to_string(), "repaired".to_string())].passed);
        assert!(expire(&baseline, 3).1.is_empty());
    }

    #[test]
    fn passed_nights_belongs_to_failing_modes_only() {
        for bad in [
            "a.toml repaired 3 fail budget passed-nights=1",
            "a.toml repaired * pass - passed-nights=1",
            "a.toml repaired * fail budget passed-nights=x",
        ] {
            assert!(Baseline::parse(bad, "b.txt").is_err(), "{bad}");
        }
    }
}
