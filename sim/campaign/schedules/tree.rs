//! The choice tree, walked by re-execution (Shuttle's and loom's DFS schedulers, CHESS's
//! preemption bounding): a run is named by its choices (trailing defaults trimmed), and a
//! run's children are the schedules that take one more non-default choice at a decision point
//! after its last non-default one. So every schedule with at most `bound` non-default choices
//! is run exactly once, level by level: level `k` holds the schedules with `k`.

use crate::plan::schedule::Decision;

/// A schedule of the enumeration: its choices, trailing defaults trimmed.
pub type Choices = Vec<u32>;

/// The children of a run whose choices were `parent` and which met `decisions`: one more
/// non-default choice at each decision point after the parent's last non-default one and
/// before `depth`, each alternative option in turn.
pub fn children(parent: &[u32], decisions: &[Decision], depth: usize) -> Vec<Choices> {
    let mut out = Vec::new();
    for (index, decision) in decisions.iter().enumerate().take(depth).skip(parent.len()) {
        for option in 1..decision.options {
            let mut child = parent.to_vec();
            child.resize(index, 0);
            child.push(option);
            out.push(child);
        }
    }
    out
}

/// The order runs are numbered and reported in within a level: the schedule whose first
/// non-default choice comes earliest (then with the smallest option) first, and so on. With
/// levels in order of their number of non-default choices, the first failing run is the
/// shortest counterexample: fewest non-default choices, then earliest.
pub fn earliest_first(a: &Choices, b: &Choices) -> std::cmp::Ordering {
    let key = |c: &Choices| c.iter().enumerate().filter(|(_, o)| **o != 0).map(|(i, o)| (i, *o)).collect::<Vec<_>>();
    key(a).cmp(&key(b))
}

/// `0 0 1`, the choices as schedules.csv shows them (empty: the default order).
pub fn spell(choices: &[u32]) -> String {
    choices.iter().map(u32::to_string).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn met(options: &[u32]) -> Vec<Decision> {
        options.iter().map(|o| Decision { at_unix_ms: 0, options: *o, chosen: 0 }).collect()
    }

    #[test]
    fn children_add_one_choice_after_the_parents_last_and_within_the_depth() {
        assert_eq!(children(&[], &met(&[2, 3]), 10), [vec![1], vec![0, 1], vec![0, 2]]);
        assert_eq!(children(&[1], &met(&[2, 3, 2]), 10), [vec![1, 1], vec![1, 2], vec![1, 0, 1]]);
        assert_eq!(children(&[], &met(&[2, 3, 2]), 1), [vec![1]]);
    }

    #[test]
    fn every_schedule_within_the_bound_is_reached_once() {
        // A tree where every run meets three decision points of two options: 1 + 3 + 3 + 1.
        let decisions = met(&[2, 2, 2]);
        let mut level = vec![Vec::new()];
        let mut all = level.clone();
        for _ in 0..3 {
            level = level.iter().flat_map(|parent| children(parent, &decisions, 10)).collect();
            all.extend(level.clone());
        }
        let mut unique = all.clone();
        unique.sort();
        unique.dedup();
        assert_eq!((all.len(), unique.len()), (8, 8));
    }

    #[test]
    fn earlier_choices_come_first() {
        let mut level = vec![vec![0, 0, 1], vec![0, 2], vec![1], vec![0, 1]];
        level.sort_by(earliest_first);
        assert_eq!(level, [vec![1], vec![0, 1], vec![0, 2], vec![0, 0, 1]]);
        assert_eq!(spell(&[0, 2]), "0 2");
    }
}
