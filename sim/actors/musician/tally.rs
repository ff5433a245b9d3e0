//! The severities of the deviations no escalation has covered yet, kept as deviations are
//! appended. The musician takes stock after every agent (escalation.rs), and a long task's
//! list (every session's deviations) was copied and re-counted line by line each time:
//! fleet-day spent 1.5 % of its instructions there.

use crate::actors::handoff::Severities;

/// A running count over `lines[from..]` of earlier sessions' lines followed by this
/// session's, a list that only grows while `before` and `from` stay the same. The owner
/// resets it when it replaces `before` (a list of another length is also noticed here).
#[derive(Debug, Default)]
pub(super) struct PendingTally {
    before_len: usize,
    from: usize,
    /// Lines counted so far: `lines[from..to]` (`to` may lie past the end while `from` does).
    to: usize,
    severities: Severities,
}

impl PendingTally {
    /// The severities of `before ++ session` from index `from` on. Only the lines appended
    /// since the last call are read; a new `from`, or a `before` of another length, starts the
    /// count over (a `before` replaced by one of the same length must be reset by the owner).
    pub(super) fn severities(&mut self, before: &[String], session: &[String], from: usize) -> Severities {
        let len = before.len() + session.len();
        if from != self.from || before.len() != self.before_len || len < self.to {
            *self = PendingTally { before_len: before.len(), from, to: from, severities: Severities::default() };
        }
        if len > self.to {
            let appended = before.iter().chain(session).skip(self.to).map(String::as_str);
            self.severities = self.severities.plus(Severities::of_lines(appended));
            self.to = len;
        }
        self.severities
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| format!("step 1 agent 1: something [{w}]")).collect()
    }

    /// What the tally must always equal: a count of the whole pending list.
    fn recount(before: &[String], session: &[String], from: usize) -> Severities {
        Severities::of_lines(before.iter().chain(session).skip(from).map(String::as_str))
    }

    #[test]
    fn the_tally_equals_a_recount_as_lines_are_appended_and_escalations_cover_them() {
        let mut tally = PendingTally::default();
        let before = lines(&["Low", "High", "Medium"]);
        let mut session = Vec::new();
        let mut from = 0;
        for (i, word) in ["Medium", "Low", "High", "Low", "Medium", "Medium"].into_iter().enumerate() {
            assert_eq!(tally.severities(&before, &session, from), recount(&before, &session, from), "before line {i}");
            session.extend(lines(&[word]));
            assert_eq!(tally.severities(&before, &session, from), recount(&before, &session, from), "after line {i}");
            if i == 2 {
                from = before.len() + session.len(); // an escalation covered every line so far
            }
        }
        // A different list of earlier sessions' lines is counted afresh.
        let other = lines(&["High"]);
        assert_eq!(tally.severities(&other, &session, 1), recount(&other, &session, 1));
        // An escalation that covered more lines than the list holds leaves nothing pending.
        assert_eq!(tally.severities(&other, &session, 99), Severities::default());
        session.extend(lines(&["High"]));
        assert_eq!(tally.severities(&other, &session, 99), Severities::default());
    }
}
