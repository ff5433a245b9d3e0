//! What counts as new, for one side (the search or the random sweep): a coverage item never
//! reached before, a distinct violation (the first unexpected rule and the task rows' end
//! states, as explore groups failures), a rule never violated before. The search also keeps
//! an input whose run hit an item a new number of times, in AFL's buckets (1, 2, 3, 4–7,
//! 8–15, 16–31, 32–127, 128+): reaching a transition more often is often the way to
//! reaching a new one, and the counts are what tells such runs apart.

use std::collections::{BTreeMap, BTreeSet};

use crate::judging::coverage::{Coverage, Item};

/// What one run brought that was not seen before it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Novelty {
    pub items: Vec<Item>,
    pub buckets: usize,
    /// The distinct violation's number on this side (1-based), when new.
    pub violation: Option<usize>,
    pub rules: Vec<String>,
}

impl Novelty {
    /// Worth keeping as a search input.
    pub fn interesting(&self) -> bool {
        !self.items.is_empty() || self.buckets > 0 || self.violation.is_some() || !self.rules.is_empty()
    }
}

/// Everything one side has seen, and the run (1-based) that first saw each.
#[derive(Clone, Debug, Default)]
pub struct Seen {
    pub items: BTreeMap<Item, usize>,
    buckets: BTreeSet<(Item, u8)>,
    /// (rule, end states) → (number, first run).
    pub violations: BTreeMap<(String, String), (usize, usize)>,
    pub rules: BTreeMap<String, usize>,
}

fn bucket(count: u64) -> u8 {
    match count {
        0..=3 => count as u8,
        4..=7 => 4,
        8..=15 => 5,
        16..=31 => 6,
        32..=127 => 7,
        _ => 8,
    }
}

impl Seen {
    /// Folds run `run`'s coverage and violations in; returns what was new.
    pub fn fold(&mut self, run: usize, coverage: &Coverage, violation: Option<(String, String)>, rules: &[String]) -> Novelty {
        let mut novelty = Novelty::default();
        for (item, count) in coverage.reached() {
            if !self.items.contains_key(item) {
                self.items.insert(*item, run);
                novelty.items.push(*item);
            }
            if self.buckets.insert((*item, bucket(count))) {
                novelty.buckets += 1;
            }
        }
        if let Some(key) = violation {
            let next = self.violations.len() + 1;
            if let std::collections::btree_map::Entry::Vacant(slot) = self.violations.entry(key) {
                slot.insert((next, run));
                novelty.violation = Some(next);
            }
        }
        for rule in rules {
            if !self.rules.contains_key(rule) {
                self.rules.insert(rule.clone(), run);
                novelty.rules.push(rule.clone());
            }
        }
        novelty
    }

    /// The run after which this side had reached `n` coverage items, if it ever did.
    pub fn runs_to_items(&self, n: usize) -> Option<usize> {
        let mut firsts: Vec<usize> = self.items.values().copied().collect();
        firsts.sort_unstable();
        (n > 0).then(|| firsts.get(n - 1).copied()).flatten()
    }

    pub fn first_violation(&self) -> Option<usize> {
        self.violations.values().map(|(_, run)| *run).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judging::coverage::Writer;
    use crate::vocab::TaskState;

    #[test]
    fn new_items_buckets_and_violations_are_new_once() {
        let item = Item::Transition { writer: Writer::Musician, from: TaskState::Watching, to: TaskState::Working, context: None };
        let mut once = Coverage::default();
        once.add(item);
        let mut seen = Seen::default();
        let first = seen.fold(1, &once, Some(("liveness".into(), "a".into())), &["liveness".into()]);
        assert_eq!((first.items.len(), first.buckets, first.violation), (1, 1, Some(1)));
        assert!(!seen.fold(2, &once, Some(("liveness".into(), "a".into())), &["liveness".into()]).interesting());
        let mut twice = once.clone();
        twice.add(item);
        let again = seen.fold(3, &twice, Some(("liveness".into(), "b".into())), &[]);
        assert_eq!((again.items.len(), again.buckets, again.violation), (0, 1, Some(2)));
        assert_eq!((seen.runs_to_items(1), seen.runs_to_items(2), seen.first_violation()), (Some(1), None, Some(1)));
    }
}
