//! The rules, one unit each. A rule sees every event (`Seen`) with the truth as it stood
//! before it, keeps what it needs, and reports violations with their explanation.

use crate::input::scenario::ProtocolSettings;
use crate::vocab::rule::rule_table;
use crate::vocab::{RuleId, RuleKind};

use super::{Findings, Seen, Truth};

/// What a violation of a rule means for the people who read the verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Meaning {
    /// A flaw the seeds' protocol allows: a scenario may `allow` it; FINDINGS.md reports it.
    ProtocolFlaw,
    /// The simulator broke the seeds (or the protocol SQL under test is wrong): never allowed
    /// in a shipped scenario without a reason.
    SimulatorOrSqlBug,
    /// A cost of the conductor's policy, which the seeds leave to the simulator.
    ConductorPolicy,
}

/// A rule's documentation: RULES lists these, `rehearsal` prints them.
#[derive(Clone, Copy, Debug)]
pub struct RuleDoc {
    pub id: RuleId,
    /// One sentence, as verdicts print it.
    pub says: &'static str,
    /// The seed text it comes from.
    pub seed: &'static str,
    /// The events it consumes.
    pub consumes: &'static str,
    /// The ground truth it reads.
    pub truth: &'static str,
    pub meaning: Meaning,
}

impl RuleDoc {
    pub fn name(&self) -> &'static str {
        self.id.as_str()
    }

    pub fn kind(&self) -> RuleKind {
        self.id.kind()
    }
}

pub trait Rule: Send + RuleClone {
    fn doc(&self) -> &'static RuleDoc;
    /// Judges one event against the truth as it stood before it.
    fn see(&mut self, seen: &Seen, truth: &Truth, findings: &mut Findings);
    /// Judges the run's end.
    fn finish(&mut self, _end_ms: i64, _truth: &Truth, _findings: &mut Findings) {}
}

/// A rule's state copied whole: `Checker`'s clone, which `explore crashes` takes at its base
/// run's snapshots (sim/run/fork.rs). Every rule is plain data, so `derive(Clone)` gives it.
pub trait RuleClone {
    fn clone_box(&self) -> Box<dyn Rule>;
}

impl<T: Rule + Clone + 'static> RuleClone for T {
    fn clone_box(&self) -> Box<dyn Rule> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn Rule> {
    fn clone(&self) -> Box<dyn Rule> {
        self.clone_box()
    }
}

/// Each rule's unit, its documentation and its checker, from `vocab::rule_table!`: the one
/// list of rules.
macro_rules! rule_units {
    ($($id:ident: $name:literal, $kind:ident, $unit:ident $(, check $order:literal)?;)*) => {
        $(pub mod $unit;)*

        /// Every rule's documentation, in the order of `RuleId::ALL`.
        pub const RULES: &[&RuleDoc] = &[$(&$unit::DOC),*];

        /// The rules checked as the run goes, in the table's check order (liveness and budgets
        /// are judged at its end).
        pub fn all(settings: &ProtocolSettings) -> Vec<Box<dyn Rule>> {
            let mut ordered: Vec<(u32, Box<dyn Rule>)> = vec![$($(($order, $unit::checker(settings)),)?)*];
            ordered.sort_by_key(|(order, _)| *order);
            ordered.into_iter().map(|(_, rule)| rule).collect()
        }

        #[cfg(test)]
        const CHECK_ORDERS: &[u32] = &[$($($order,)?)*];
    };
}
rule_table!(rule_units);

/// A launch the conductor decided, not a double launch's twin (`S2b`): `[[faults.double_launch]]`
/// is a structural fault injected beside the conductor's own launch, which the claim guard is
/// there to absorb (002 "Guard Clause Rules").
pub fn conductor_launch(label: &str) -> bool {
    !label.ends_with('b')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_id_has_one_documented_unit_in_order() {
        let ids: Vec<RuleId> = RULES.iter().map(|r| r.id).collect();
        assert_eq!(ids, RuleId::ALL);
        for doc in RULES {
            assert!(!doc.says.is_empty() && !doc.seed.is_empty() && !doc.consumes.is_empty() && !doc.truth.is_empty(), "{}", doc.name());
        }
    }

    #[test]
    fn check_orders_are_distinct_and_name_every_checker() {
        let mut orders = CHECK_ORDERS.to_vec();
        orders.sort_unstable();
        let expected: Vec<u32> = (0..orders.len() as u32).collect();
        assert_eq!(orders, expected, "the table's check orders must be 0..n, each once");
        let checked = all(&ProtocolSettings::default()).len();
        assert_eq!(checked, CHECK_ORDERS.len());
        assert_eq!(checked, RULES.len() - 2, "all but liveness and budget are checked as the run goes");
    }
}
