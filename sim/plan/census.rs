//! Every fault proves it fired (issue 44): for one run, how many fault sources of each
//! declared kind the plan armed, and how many times a fault of that kind struck; and which
//! scripted entries (`[[faults.crash]]` #2, …) never did. A suite whose faults never trigger
//! (a point no session reaches, odds of 0 after a change, a statement renamed) otherwise
//! passes green. Counting changes nothing of the run: no draw, no decision reads it.
//!
//! *Armed*: each scripted entry of a kind counts one, and a random kind whose odds or
//! distribution the scenario writes (even as 0) counts one. *Fired*: each strike that
//! reached its victim (a timed fault whose session is gone by its time did not).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// A fault kind's name as results.csv and summary.md write it, e.g. `crash`, `io_error`.
pub type KindName = &'static str;

/// One run's counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Census {
    /// Kind → (armed, fired); only declared kinds (armed > 0) or kinds that fired.
    pub kinds: BTreeMap<KindName, (u64, u64)>,
    /// Each scripted entry by its label (`crash[2]`: the second `[[faults.crash]]`), and
    /// whether it struck.
    pub scripted: Vec<(String, bool)>,
}

impl Census {
    /// The scripted entries that never struck: what `run` warns of.
    pub fn unreached(&self) -> Vec<&str> {
        self.scripted.iter().filter(|(_, fired)| !fired).map(|(label, _)| label.as_str()).collect()
    }

    /// results.csv's `faults_armed` / `faults_fired`: `crash=1;hang=2`, kinds sorted.
    pub fn column(&self, fired: bool) -> String {
        let pick = |(armed, shot): &(u64, u64)| if fired { *shot } else { *armed };
        self.kinds.iter().map(|(kind, counts)| format!("{kind}={}", pick(counts))).collect::<Vec<_>>().join(";")
    }
}

/// The census a plan fills while its run goes on, shared with whoever reads it afterwards
/// (the plan and the actors' view of it hold clones).
#[derive(Clone, Default, Debug)]
pub struct CensusLog(Rc<RefCell<Census>>);

impl CensusLog {
    pub fn arm(&self, kind: KindName, sources: u64) {
        if sources > 0 {
            self.0.borrow_mut().kinds.entry(kind).or_insert((0, 0)).0 += sources;
        }
    }

    /// A scripted entry, in the order its index is later given to `fired_entry`.
    pub fn arm_entry(&self, kind: KindName, label: String) -> usize {
        let mut census = self.0.borrow_mut();
        census.kinds.entry(kind).or_insert((0, 0)).0 += 1;
        census.scripted.push((label, false));
        census.scripted.len() - 1
    }

    pub fn fired(&self, kind: KindName) {
        self.0.borrow_mut().kinds.entry(kind).or_insert((0, 0)).1 += 1;
    }

    /// Scripted entry `entry` (from `arm_entry`) struck, as a fault of `kind`.
    pub fn fired_entry(&self, kind: KindName, entry: usize) {
        let mut census = self.0.borrow_mut();
        census.kinds.entry(kind).or_insert((0, 0)).1 += 1;
        if let Some(slot) = census.scripted.get_mut(entry) {
            slot.1 = true;
        }
    }

    pub fn snapshot(&self) -> Census {
        self.0.borrow().clone()
    }
}

/// A parsed `faults_armed` or `faults_fired` column: kind → count. Unknown text is skipped
/// (a results.csv of an older build has neither column).
pub fn parse_column(text: &str) -> BTreeMap<String, u64> {
    text.split(';')
        .filter_map(|part| part.split_once('='))
        .filter_map(|(k, v)| Some((k.trim().to_string(), v.trim().parse().ok()?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_kind_and_entries_left_unreached() {
        let log = CensusLog::default();
        log.arm("crash", 1);
        log.arm("hang", 0);
        let first = log.arm_entry("crash", "crash[1]".into());
        let _second = log.arm_entry("io_error", "io_error[1]".into());
        log.fired("crash");
        log.fired_entry("crash", first);
        let census = log.snapshot();
        assert_eq!(census.column(false), "crash=2;io_error=1", "a kind armed 0 times is not declared");
        assert_eq!(census.column(true), "crash=2;io_error=0");
        assert_eq!(census.unreached(), ["io_error[1]"]);
        assert_eq!(parse_column("crash=2;io_error=0").get("io_error"), Some(&0));
        assert!(parse_column("").is_empty());
    }
}
