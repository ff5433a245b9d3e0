//! The oracles: safety rules checked as the run goes, liveness at its end, and timing
//! budgets measured as distributions. They consume the run's one event stream: every
//! database effect (with the task row before and after it) and the ground truth only the
//! simulator knows — which sessions are alive, hung or crashed (DESIGN.md, invariant 6).
//!
//! Each rule is a unit in `rules/`: its id, its sentence, the seed text it comes from, the
//! events it consumes, the truth it reads, and whether a violation is a flaw of the protocol
//! the seeds allow (scenarios may `allow` it; FINDINGS.md says so) or a bug of the simulator.
//! `RULES` derives from them. Every violation is explained in words: the instant, the
//! sessions with their S-labels and ids, what each wrote, and what the truth was.

mod meter;
pub mod rules;
mod truth;

use std::collections::{BTreeMap, BTreeSet};

use crate::db::RowSnapshot;
use crate::event::{Event, EventKind, Fact, SqlResult, Who};
use crate::scenario::ProtocolSettings;
use crate::vocab::{ActorName, RuleId, Stmt};

pub use meter::{quantiles, Measurements};
pub use rules::{Rule, RuleDoc, RULES};
pub use truth::{touched_row, MessageTruth, StaleTruth, Truth};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub rule: &'static str,
    pub t_ms: i64,
    pub explanation: String,
}

/// One database effect, as the rules read it off the event stream.
#[derive(Clone, Copy)]
pub struct SqlFact<'a> {
    pub t_ms: i64,
    pub actor: ActorName,
    pub session_id: &'a str,
    pub statement: Stmt,
    pub task_id: &'a str,
    pub readonly: bool,
    pub rows_affected: usize,
    pub before: Option<&'a RowSnapshot>,
    pub after: Option<&'a RowSnapshot>,
    /// For message inserts: (id, task_id, message_type).
    pub message: Option<&'a (i64, String, String)>,
    /// For `poll_tasks`: (task_id, state, seconds_stale) rows.
    pub polled: &'a [(String, String, f64)],
    /// SQLite refused it: (is a constraint, message).
    pub failure: Option<(bool, &'a str)>,
}

/// A statement event as the rules read it; `None` for any other event, and for a write the
/// lock model answered with SQLITE_BUSY before SQLite ran anything.
pub fn sql_fact(event: &Event) -> Option<SqlFact<'_>> {
    let (EventKind::Sql(sql), Who::Actor(actor)) = (&event.kind, event.who) else { return None };
    let failure = match &sql.result {
        SqlResult::Busy(_) => return None,
        SqlResult::Failed(message) => Some((true, message.as_str())),
        SqlResult::Locked(message) => Some((false, message.as_str())),
        SqlResult::Rows(_) => None,
    };
    Some(SqlFact {
        t_ms: event.t_ms,
        actor,
        session_id: &event.session,
        statement: sql.stmt,
        task_id: &sql.task_id,
        readonly: sql.readonly(),
        rows_affected: sql.rows_affected,
        before: sql.before.as_ref(),
        after: sql.after.as_ref(),
        message: sql.message.as_ref(),
        polled: &sql.polled,
        failure,
    })
}

/// What a rule sees: a statement, or a fact of ground truth, at an instant.
#[derive(Clone, Copy)]
pub enum Seen<'a> {
    Sql(SqlFact<'a>),
    Fact(i64, &'a Fact),
}

/// Where rules report: one report per rule and subject (the first occurrence explains it).
#[derive(Default)]
pub struct Findings {
    pub violations: Vec<Violation>,
    /// Per rule, the subjects reported: looked up by `&str`, so a repeat costs no copy.
    reported: BTreeMap<RuleId, BTreeSet<String>>,
}

impl Findings {
    pub fn violate(&mut self, rule: RuleId, subject: impl Into<String>, t_ms: i64, explanation: String) {
        self.violate_with(rule, &subject.into(), t_ms, || explanation);
    }

    /// `violate`, with the explanation written only for a subject not yet reported: a zombie
    /// session repeats its violation at every write, and describing its sessions each time
    /// was most of the checker's cost on such runs (issue 17).
    pub fn violate_with(&mut self, rule: RuleId, subject: &str, t_ms: i64, explain: impl FnOnce() -> String) {
        let subjects = self.reported.entry(rule).or_default();
        if subjects.contains(subject) {
            return;
        }
        subjects.insert(subject.to_string());
        self.violations.push(Violation { rule: rule.as_str(), t_ms, explanation: explain() });
    }
}

pub struct Checker {
    truth: Truth,
    rules: Vec<Box<dyn Rule>>,
    meter: meter::Meter,
    findings: Findings,
}

impl Checker {
    pub fn new(settings: ProtocolSettings) -> Checker {
        Checker {
            truth: Truth::new(settings.exit_request_to_musician && settings.exit_request_no_state),
            rules: rules::all(&settings),
            meter: meter::Meter::default(),
            findings: Findings::default(),
        }
    }

    /// Consumes one event of the run's stream: every rule judges it against the truth as it
    /// stood before it, then the truth takes it in.
    pub fn on_event(&mut self, event: &Event) {
        let seen = match &event.kind {
            EventKind::Truth(fact) => Seen::Fact(event.t_ms, fact),
            EventKind::Sql(_) => match sql_fact(event) {
                Some(fact) => Seen::Sql(fact),
                None => return,
            },
            _ => return,
        };
        self.see(seen);
    }

    /// Judges one event, then records it in the truth.
    pub fn see(&mut self, seen: Seen) {
        if let Seen::Sql(f) = seen {
            if f.failure.is_none() {
                self.truth.know(&f);
            }
        }
        for rule in &mut self.rules {
            rule.see(&seen, &self.truth, &mut self.findings);
        }
        self.meter.see(&seen, &self.truth);
        match seen {
            Seen::Fact(t_ms, fact) => self.truth.on_fact(t_ms, fact),
            Seen::Sql(f) if f.failure.is_none() => self.truth.on_sql(&f),
            Seen::Sql(_) => {}
        }
    }

    /// The timing measurements so far.
    pub fn measured(&self) -> &Measurements {
        &self.meter.measured
    }

    /// Every violation found, in the order found.
    pub fn violations(&self) -> &[Violation] {
        &self.findings.violations
    }

    pub fn into_violations(self) -> Vec<Violation> {
        self.findings.violations
    }

    /// End-of-run checks (messages seen once, budgets).
    pub fn finish(&mut self, end_ms: i64, budgets: &[rules::budget::BudgetLimit]) {
        for rule in &mut self.rules {
            rule.finish(end_ms, &self.truth, &mut self.findings);
        }
        rules::budget::check(budgets, &self.meter.measured, end_ms, &mut self.findings);
    }

    /// Liveness, judged by the caller from the database, joins the violations here.
    pub fn add_liveness(&mut self, t_ms: i64, explanation: String) {
        self.findings.violate(RuleId::Liveness, String::new(), t_ms, explanation);
    }
}

#[cfg(test)]
mod tests;
