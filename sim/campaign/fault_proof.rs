//! Faults prove they fired, per suite (issue 44): the census columns of results.csv
//! (`faults_armed`, `faults_fired`, `faults_unreached`, sim/plan/census.rs) added up by
//! (scenario, variant), for summary.md, and what `--require-faults-fired` refuses: a declared
//! kind that never fired in any pair of its scenario, or a scripted entry that never struck
//! in any of them. A pure function of the rows, so a merge of shards judges as the sweep.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::campaign::sweep::results::ResultRow;
use crate::plan::census::parse_column;

/// One (scenario, variant)'s faults over its pairs.
#[derive(Default)]
struct Group {
    /// Kind → (armed sources over every pair, strikes, pairs where it struck).
    kinds: BTreeMap<String, (u64, u64, usize)>,
    /// Scripted entry → pairs where it never struck; `pairs` the pairs that ran.
    unreached: BTreeMap<String, usize>,
    pairs: usize,
}

/// The groups added up a row at a time (a sweep feeds it as its pairs finish, so it keeps
/// no row: issue 41).
#[derive(Default)]
pub struct FaultTally {
    groups: BTreeMap<(String, String), Group>,
}

impl FaultTally {
    pub fn of(rows: &[ResultRow]) -> FaultTally {
        let mut tally = FaultTally::default();
        for row in rows {
            tally.add(row);
        }
        tally
    }

    pub fn add(&mut self, row: &ResultRow) {
        // A pair that ended in a harness error counted nothing: it proves nothing either way.
        if row.faults_armed.is_empty() && row.faults_fired.is_empty() {
            return;
        }
        let group = self.groups.entry((row.scenario.clone(), row.variant.clone())).or_default();
        group.pairs += 1;
        let fired = parse_column(&row.faults_fired);
        for (kind, armed) in parse_column(&row.faults_armed) {
            let shots = fired.get(&kind).copied().unwrap_or(0);
            let slot = group.kinds.entry(kind).or_insert((0, 0, 0));
            slot.0 += armed;
            slot.1 += shots;
            slot.2 += usize::from(shots > 0);
        }
        for entry in row.faults_unreached.split(';').filter(|e| !e.is_empty()) {
            *group.unreached.entry(entry.to_string()).or_insert(0) += 1;
        }
    }

    /// What `--require-faults-fired` fails on, one line each: `SCENARIO (VARIANT): declared
    /// fault kind `crash` never fired in its N pair(s)`, and scripted entries no pair reached.
    pub fn unfired(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for ((scenario, variant), group) in &self.groups {
            for (kind, (armed, shots, _)) in &group.kinds {
                if *armed > 0 && *shots == 0 {
                    lines.push(format!("{scenario} ({variant}): declared fault kind `{kind}` never fired in its {} pair(s)", group.pairs));
                }
            }
            for (entry, missed) in &group.unreached {
                if *missed == group.pairs {
                    lines.push(format!(
                        "{scenario} ({variant}): scripted fault {entry} never struck in its {} pair(s): its point or time is never reached",
                        group.pairs
                    ));
                }
            }
        }
        lines
    }

    /// summary.md's section: each declared kind's armed sources and strikes by scenario and
    /// variant, and the pairs it struck in; nothing when no pair declared a fault.
    pub fn markdown(&self) -> String {
        if self.groups.values().all(|g| g.kinds.is_empty()) {
            return String::new();
        }
        let mut md = String::from(
            "\n## Faults armed and fired\n\n| scenario | variant | fault kind | armed | fired | pairs it fired in |\n| --- | --- | --- | --- | --- | --- |\n",
        );
        for ((scenario, variant), group) in &self.groups {
            for (kind, (armed, shots, pairs)) in &group.kinds {
                let _ = writeln!(md, "| {scenario} | {variant} | {kind} | {armed} | {shots} | {pairs} of {} |", group.pairs);
            }
        }
        let never = self.unfired();
        if !never.is_empty() {
            md.push_str("\nNever fired (`--require-faults-fired` fails on these):\n\n");
            for line in never {
                let _ = writeln!(md, "- {line}");
            }
        }
        md
    }
}

/// `FaultTally::unfired` of some rows.
pub fn unfired(rows: &[ResultRow]) -> Vec<String> {
    FaultTally::of(rows).unfired()
}

/// `FaultTally::markdown` of some rows.
pub fn markdown(rows: &[ResultRow]) -> String {
    FaultTally::of(rows).markdown()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::RunOutcome;

    fn row(seed: u64, armed: &str, fired: &str, unreached: &str) -> ResultRow {
        ResultRow {
            scenario: "s.toml".into(),
            variant: "default".into(),
            seed,
            verdict: RunOutcome::Pass,
            first_violation: String::new(),
            rules: Default::default(),
            sim_time_ms: 0,
            statements: 0,
            trace_hash: String::new(),
            replay: String::new(),
            sql: String::new(),
            collapsed: String::new(),
            faults_armed: armed.into(),
            faults_fired: fired.into(),
            faults_unreached: unreached.into(),
        }
    }

    #[test]
    fn a_kind_that_fired_in_one_pair_of_its_suite_is_proved_and_one_that_never_did_is_named() {
        let rows = [row(1, "crash=1;hang=1", "crash=0;hang=2", "crash[1]"), row(2, "crash=1;hang=1", "crash=0;hang=0", "crash[1]")];
        let lines = unfired(&rows);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].contains("`crash` never fired in its 2 pair(s)"), "{lines:?}");
        assert!(lines[1].contains("crash[1] never struck"), "{lines:?}");
        let near_miss = [row(1, "crash=1", "crash=1", ""), row(2, "crash=1", "crash=0", "crash[1]")];
        assert!(unfired(&near_miss).is_empty(), "fired once in the suite is enough: {:?}", unfired(&near_miss));
        let md = markdown(&rows);
        assert!(md.contains("| s.toml | default | hang | 2 | 2 | 1 of 2 |"), "{md}");
        assert!(markdown(&[row(1, "", "", "")]).is_empty(), "no declared fault, no section");
    }
}
