//! The oracles: safety rules checked as the run goes, liveness at its end, and timing
//! budgets measured as distributions. They consume the run's one event stream: every
//! database effect (with the task row before and after it) and the ground truth only the
//! simulator knows — which sessions are alive, hung or crashed (ARCHITECTURE.md, invariant "the oracles know the truth").
//!
//! Each rule is a unit in `rules/`: its id, its sentence, the seed text it comes from, the
//! events it consumes, the truth it reads, and whether a violation is a flaw of the protocol
//! the seeds allow (scenarios may `allow` it; FINDINGS.md says so) or a bug of the simulator.
//! `RULES` derives from them. Every violation is explained in words: the instant, the
//! sessions with their S-labels and ids, what each wrote, and what the truth was.

mod conductor_choice;
pub mod designer;
pub mod latency;
mod meter;
pub mod rules;
mod sql_in_force;
mod truth;

use std::collections::{BTreeMap, BTreeSet};

use crate::input::scenario::ProtocolSettings;
use crate::vocab::{ActorName, RuleId, Stmt};
use crate::world::db::RowSnapshot;
use crate::world::event::{Event, EventKind, Fact, SqlResult, Who};

pub use conductor_choice::ConductorChoices;
pub use meter::{quantiles, Measurements};
pub use rules::{Rule, RuleDoc, RULES};
pub use sql_in_force::SqlInForce;
pub use truth::{touched_row, MessageTruth, StaleTruth, Truth};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub rule: RuleId,
    pub t_ms: i64,
    pub explanation: String,
    /// The first report of its rule for its subject (a task, a message): summary.md and the
    /// verdict's headline show these; violations.csv lists every report.
    pub first: bool,
    /// The statement whose effect broke the rule, and who ran it; `None` for a violation
    /// found at a fact of ground truth or at the end of the run. `rehearsal shrink` keeps a
    /// failure's first rule at this point (issue 31).
    pub point: Option<ViolationPoint>,
}

/// Where a violation was found: a statement and the actor that ran it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ViolationPoint {
    pub actor: ActorName,
    pub statement: Stmt,
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
    /// For message inserts: (id, task_id, message_type) of the first message inserted.
    pub message: Option<&'a (i64, String, String)>,
    /// Every further message the statement inserted (a multi-row insert).
    pub more_messages: &'a [(i64, String, String)],
    /// Task rows other than `task_id`'s the statement inserted or updated.
    pub other_rows: &'a [String],
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
        SqlResult::SqliteError(message) => Some((false, message.as_str())),
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
        more_messages: &sql.more_messages,
        other_rows: &sql.other_rows,
        polled: &sql.polled,
        failure,
    })
}

impl<'a> SqlFact<'a> {
    /// Every message the statement inserted, in order.
    pub fn messages(&self) -> impl Iterator<Item = &'a (i64, String, String)> + 'a {
        self.message.into_iter().chain(self.more_messages.iter())
    }
}

/// What a rule sees: a statement, or a fact of ground truth, at an instant.
#[derive(Clone, Copy)]
pub enum Seen<'a> {
    Sql(SqlFact<'a>),
    Fact(i64, &'a Fact),
}

/// Where rules report: every violation, each marked whether it is the first of its rule and
/// subject (issue 26: violations.csv lists them all, summary.md the first of each).
#[derive(Clone, Default)]
pub struct Findings {
    pub violations: Vec<Violation>,
    /// Per rule, the subjects reported: looked up by `&str`, so a repeat costs no copy.
    reported: BTreeMap<RuleId, BTreeSet<String>>,
}

impl Findings {
    pub fn violate(&mut self, rule: RuleId, subject: impl Into<String>, t_ms: i64, explanation: String) {
        self.violate_with(rule, &subject.into(), t_ms, || explanation);
    }

    /// `violate`, with the explanation written by `explain` when it is reported. Every
    /// report is kept (a zombie repeats its violation at every write, and each is a write the
    /// protocol let through); `first` marks the first of its rule and subject.
    pub fn violate_with(&mut self, rule: RuleId, subject: &str, t_ms: i64, explain: impl FnOnce() -> String) {
        let subjects = self.reported.entry(rule).or_default();
        // Looked up before it is inserted: the subject is copied only the first time.
        let first = !subjects.contains(subject);
        if first {
            subjects.insert(subject.to_string());
        }
        self.violations.push(Violation { rule, t_ms, explanation: explain(), first, point: None });
    }
}

/// Plain data throughout: a clone judges what follows as this one would (explore's snapshots,
/// sim/run/fork.rs).
#[derive(Clone)]
pub struct Checker {
    truth: Truth,
    rules: Vec<Box<dyn Rule>>,
    meter: meter::Meter,
    findings: Findings,
    /// The conductor's choices in force, named in the explanations they are in the chain of
    /// (`conductor_choice.rs`); `None`: explanations name none.
    choices: Option<ConductorChoices>,
    /// The statements the run ran, named in the explanations of the writes they let through;
    /// `None`: explanations name none.
    sql: Option<SqlInForce>,
    /// Actors that ended on SQLITE_BUSY or an I/O error (sim/judging/collapse.rs).
    collapse: crate::judging::collapse::CollapseWatch,
}

impl Checker {
    pub fn new(settings: ProtocolSettings) -> Checker {
        Checker {
            truth: Truth::new(settings.exit_request_to_musician && settings.exit_request_no_state),
            rules: rules::all(&settings),
            meter: meter::Meter::default(),
            findings: Findings::default(),
            choices: None,
            sql: None,
            collapse: Default::default(),
        }
    }

    /// The same checker, naming the statements of `sql` in the explanations of the writes
    /// they let through (owner-writes-only's "because").
    pub fn with_sql_in_force(mut self, sql: SqlInForce) -> Checker {
        self.sql = Some(sql);
        self
    }

    /// Appends to the violations found since `from` what the statement in force lacked.
    fn name_statement(&mut self, from: usize, stmt: Stmt) {
        let Some(sql) = &self.sql else { return };
        for violation in &mut self.findings.violations[from..] {
            if violation.rule == RuleId::OwnerWritesOnly {
                violation.explanation.push_str(&format!(", because {}", sql.owner_because(stmt)));
            }
        }
    }

    /// The same checker, naming `choices` in the explanations whose chain passes through one.
    pub fn with_conductor_choices(mut self, choices: ConductorChoices) -> Checker {
        self.choices = Some(choices);
        self
    }

    /// Appends to the violations found since `from` the conductor choices in their chain.
    fn name_choices(&mut self, from: usize, conductor_wrote: bool) {
        let Some(choices) = &self.choices else { return };
        for violation in &mut self.findings.violations[from..] {
            if let Some(words) = choices.in_chain(violation.rule, conductor_wrote, &violation.explanation) {
                violation.explanation.push_str(&words);
            }
        }
    }

    /// The same checker, running only the rules `keep` admits (`rehearsal judge --db` runs
    /// those a recorded history can decide: sim/campaign/judge_db.rs).
    pub fn keeping_rules(mut self, keep: impl Fn(RuleId) -> bool) -> Checker {
        self.rules.retain(|rule| keep(rule.doc().id));
        self
    }

    /// The scenario's heartbeat thresholds, which latency attribution cuts windows at.
    /// The same checker, knowing how long a message can wait for a background watcher's
    /// poll (`Truth::watcher_read_window_ms`).
    pub fn with_watcher_read_window_ms(mut self, ms: i64) -> Checker {
        self.truth.watcher_read_window_ms = ms;
        self
    }

    pub fn with_thresholds(mut self, thresholds: latency::Thresholds) -> Checker {
        self.meter.attribution = latency::Attribution::new(thresholds);
        self
    }

    /// Consumes one event of the run's stream: every rule judges it against the truth as it
    /// stood before it, then the truth takes it in.
    pub fn on_event(&mut self, event: &Event) {
        self.meter.attribution.on_event(event);
        self.collapse.on_event(event);
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
        let found_before = self.findings.violations.len();
        for rule in &mut self.rules {
            rule.see(&seen, &self.truth, &mut self.findings);
        }
        if let Seen::Sql(f) = seen {
            let point = ViolationPoint { actor: f.actor, statement: f.statement };
            self.findings.violations[found_before..].iter_mut().for_each(|v| v.point = Some(point));
            self.name_statement(found_before, f.statement);
        }
        let conductor_wrote = matches!(seen, Seen::Sql(f) if f.actor.is_conductor() && !f.readonly);
        self.name_choices(found_before, conductor_wrote);
        self.meter.see(&seen, &self.truth);
        match seen {
            Seen::Fact(t_ms, fact) => self.truth.on_fact(t_ms, fact),
            Seen::Sql(f) if f.failure.is_none() => self.truth.on_sql(&f),
            Seen::Sql(_) => {}
        }
    }

    /// The actors that ended on SQLITE_BUSY or an I/O error so far.
    pub fn collapses(&self) -> &[crate::judging::collapse::Collapse] {
        &self.collapse.found
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
        let found_before = self.findings.violations.len();
        for rule in &mut self.rules {
            rule.finish(end_ms, &self.truth, &mut self.findings);
        }
        rules::budget::check(budgets, &self.meter.measured, end_ms, &mut self.findings);
        self.name_choices(found_before, false);
    }

    /// Liveness, judged by the caller from the database, joins the violations here.
    /// A session as the explanations name it: S-label, id, launch, hangs, crash, last write.
    pub fn describe_session(&self, session_id: &str) -> String {
        self.truth.describe(session_id)
    }

    pub fn add_liveness(&mut self, t_ms: i64, explanation: String) {
        let found_before = self.findings.violations.len();
        self.findings.violate(RuleId::Liveness, String::new(), t_ms, explanation);
        self.name_choices(found_before, false);
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_designer;
#[cfg(test)]
mod tests_unchecked;
