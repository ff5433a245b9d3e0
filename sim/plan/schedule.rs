//! A schedule: the choices a run makes where two or more actors have a statement ready at
//! the same time, so that `rehearsal explore schedules` can enumerate the orders the seeds
//! leave open by re-running the scenario from the start with each choice list (as Shuttle's
//! DFS scheduler and loom do), and a scenario's `[schedule] choices` replays one exactly.
//!
//! **Decision point.** The executor is about to perform an actor's effect (a statement, a
//! file operation) due at instant `t`, and other actors have an effect due within
//! `[t, t + window_ms]` (their events are live: not stale, not hung). Its options are the
//! head event (option 0, the engine's own order) and then those others in queue order. Option
//! `k > 0` performs the k-th other effect now, at `t`, and leaves the head in the queue,
//! where it comes up again (and may be a decision point again).
//!
//! **Why this is faithful.** Each effect is one SQLite statement, and SQLite serialises
//! writers (one connection holds `comms.db` exclusively; a reader sees a committed state), so
//! a statement is atomic and a run is fully described by the order of its statements. What
//! fixes the order of two statements of different actors in the simulator is the statement
//! round trip drawn from `timing.statement_ms`, which is the simulator's model, not the
//! seeds': they say nothing of how long a tool call takes. Running an effect due at
//! `t + d` at `t` is the same run with that round trip `d` shorter, an order the seeds allow.
//! It is not always one the latency model could have drawn: the round trip becomes `t` minus
//! the request's instant, which may fall below `statement_ms`'s minimum (docs/protocol.md C36
//! says so, with the stricter reading not built). The default window is the model's spread
//! (`max - min` of a uniform `statement_ms`). File effects count too:
//! the world performs them whole, like statements. Sleeps, joins and alarms are never reordered:
//! their instants come from the seeds' timings (poll intervals, timeouts) or the fault plan.
//!
//! With no schedule (no `[schedule]` section, nothing recording) the executor never looks for
//! decision points, and with every choice 0 it does exactly what it does without one: the
//! default order stays the default, byte for byte.

use std::cell::RefCell;
use std::rc::Rc;

use crate::base::dist::Dist;

/// One decision point a run met: when, and how many options it had (at least 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    pub at_unix_ms: i64,
    pub options: u32,
    /// The option taken.
    pub chosen: u32,
}

/// The decision points of a run, as they were met (shared with whoever asked to record).
pub type DecisionLog = Rc<RefCell<Vec<Decision>>>;

#[derive(Clone, Debug)]
pub struct Schedule {
    window_ms: i64,
    /// The option to take at each decision point, in order; 0 past the end.
    choices: Vec<u32>,
    next: usize,
    log: Option<DecisionLog>,
    /// The first choice that named an option its decision point did not have.
    problem: Option<String>,
}

impl Schedule {
    pub fn new(window_ms: i64, choices: Vec<u32>) -> Schedule {
        assert!(window_ms >= 0, "a decision window of {window_ms} ms");
        Schedule { window_ms, choices, next: 0, log: None, problem: None }
    }

    /// The default window: the spread of the statement round trip, within which another
    /// latency draw could have put either statement first (module docs).
    pub fn default_window_ms(statement_ms: &Dist) -> i64 {
        match statement_ms {
            Dist::Const(_) => 0,
            Dist::Uniform { min, max } => max - min,
            // Unbounded below and above: its mean is a spread the draws reach often.
            Dist::Normal { .. } | Dist::Exponential { .. } | Dist::LogNormal { .. } => statement_ms.mean(),
            Dist::Empirical(_) => statement_ms.upper() - statement_ms.lower(),
        }
    }

    pub fn window_ms(&self) -> i64 {
        self.window_ms
    }

    /// Starts recording every decision point met; the log fills as the run goes.
    pub fn record(&mut self) -> DecisionLog {
        let log = DecisionLog::default();
        self.log = Some(log.clone());
        log
    }

    /// The option to take at the next decision point, which has `options` (≥ 2). A choice
    /// out of range is remembered as the schedule's problem and the default taken.
    pub fn choose(&mut self, at_unix_ms: i64, options: u32) -> u32 {
        let index = self.next;
        self.next += 1;
        let wanted = self.choices.get(index).copied().unwrap_or(0);
        let chosen = if wanted < options {
            wanted
        } else {
            self.problem.get_or_insert_with(|| {
                format!(
                    "schedule.choices[{index}] is {wanted}, but decision point {index} has only {options} options (0..={})",
                    options - 1
                )
            });
            0
        };
        if let Some(log) = &self.log {
            log.borrow_mut().push(Decision { at_unix_ms, options, chosen });
        }
        chosen
    }

    /// Decision points met so far.
    pub fn decisions_met(&self) -> usize {
        self.next
    }

    /// Why the choices do not fit the run, once it is over: a choice out of range, or a
    /// non-default choice for a decision point the run never met.
    pub fn problem(&self) -> Option<String> {
        if let Some(problem) = &self.problem {
            return Some(problem.clone());
        }
        let unused = self.choices.iter().enumerate().skip(self.next).find(|(_, c)| **c != 0)?;
        Some(format!("schedule.choices[{}] is {}, but the run met only {} decision point(s)", unused.0, unused.1, self.next))
    }
}

/// The number of non-default choices: the preemption count bounded by `--bound`.
pub fn non_default(choices: &[u32]) -> usize {
    choices.iter().filter(|c| **c != 0).count()
}

/// The choices without their trailing defaults: one schedule, one spelling.
pub fn trimmed(choices: &[u32]) -> Vec<u32> {
    let end = choices.iter().rposition(|c| *c != 0).map_or(0, |i| i + 1);
    choices[..end].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_are_taken_in_order_then_the_default_and_recorded() {
        let mut schedule = Schedule::new(10, vec![1, 0, 2]);
        let log = schedule.record();
        assert_eq!([schedule.choose(5, 2), schedule.choose(6, 3), schedule.choose(7, 3), schedule.choose(8, 2)], [1, 0, 2, 0]);
        let options: Vec<u32> = log.borrow().iter().map(|d| d.options).collect();
        assert_eq!(options, [2, 3, 3, 2]);
        assert_eq!(schedule.problem(), None);
    }

    #[test]
    fn a_choice_out_of_range_or_never_reached_is_the_schedules_problem() {
        let mut schedule = Schedule::new(10, vec![0, 3]);
        schedule.choose(1, 2);
        assert_eq!(schedule.choose(2, 2), 0, "the default instead");
        assert_eq!(schedule.problem().unwrap(), "schedule.choices[1] is 3, but decision point 1 has only 2 options (0..=1)");
        let mut short = Schedule::new(10, vec![0, 0, 1]);
        short.choose(1, 2);
        assert_eq!(short.problem().unwrap(), "schedule.choices[2] is 1, but the run met only 1 decision point(s)");
        let trailing_defaults = Schedule::new(10, vec![0, 0]);
        assert_eq!(trailing_defaults.problem(), None);
    }

    #[test]
    fn the_default_window_is_the_spread_of_the_statement_round_trip() {
        assert_eq!(Schedule::default_window_ms(&Dist::uniform(500, 3_000)), 2_500);
        assert_eq!(Schedule::default_window_ms(&Dist::Const(100)), 0);
        assert_eq!(trimmed(&[0, 2, 0, 0]), [0, 2]);
        assert_eq!(non_default(&[0, 2, 0, 1]), 2);
    }
}
