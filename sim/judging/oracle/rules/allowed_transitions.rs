//! allowed-transitions: state changes follow 002's state machine, made by the actor allowed
//! to make them.

use std::collections::BTreeMap;

use super::{Meaning, Rule, RuleDoc};
use crate::judging::oracle::truth::touched_row;
use crate::judging::oracle::{Findings, Seen, SqlFact, Truth};
use crate::input::scenario::ProtocolSettings;
use crate::vocab::TaskState::{self, *};
use crate::vocab::{RuleId, Stmt, CONDUCTOR_TASK_ID};

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::AllowedTransitions,
    says: "state changes follow the state machine (002), made by the actor allowed to make them",
    seed: "002 \"Valid State Transitions\", \"States the Conductor Sets\", \"Terminal States\"; docs/protocol.md D10",
    consumes: "writes that change a task row's state, and claims",
    truth:
        "the row's state before and after the write; for a transition the text implies, the session whose request set the state it leaves",
    // Fault-free, a violation is a simulator or SQL bug; under faults, two sessions writing one
    // row in turn (no UPDATE checks state or session_id) or the conductor acting on an old
    // poll produce them: flaws the seeds' protocol allows.
    meaning: Meaning::ProtocolFlaw,
};

/// The rule as the checker runs it.
pub fn checker(settings: &ProtocolSettings) -> Box<dyn Rule> {
    Box::new(AllowedTransitions::new(settings))
}

#[derive(Clone)]
pub struct AllowedTransitions {
    settings: ProtocolSettings,
    /// Per task: who may make the implied transitions out of its current state.
    requests: Requests,
}

impl AllowedTransitions {
    pub fn new(settings: &ProtocolSettings) -> Self {
        AllowedTransitions { settings: settings.clone(), requests: Requests::default() }
    }
}

/// 002 "Valid State Transitions": the musician's eleven, in the table's order. Coverage
/// (sim/judging/coverage/) reports each of them as reached or not.
pub const TABLE_002: [(TaskState, TaskState); 11] = [
    (Watching, Working),
    (Working, NeedsReview),
    (Working, Error),
    (ReviewApproved, Working),
    (ReviewApproved, NeedsReview),
    (ReviewFailed, NeedsReview),
    (FixProposed, Working),
    (FixProposed, NeedsReview),
    (Working, Complete),
    (Working, Exited),
    (Error, Exited),
];

/// A claim from `exit_requested`: not a row of the table, but 002 "Guard Clause Rules" lets a
/// session claim a task in that state.
const CLAIM_FROM_EXIT_REQUESTED: (TaskState, TaskState) = (ExitRequested, Working);

/// The transitions the text implies (docs/protocol.md D10, §6 "Transitions the text
/// implies"), and only those.
pub const IMPLIED_D10: [(TaskState, TaskState); 3] = [
    // 000 "Completion Flow" 5: "On `review_approved`: ... LAST STEP: `UPDATE
    // orchestration_tasks SET state = 'complete'`".
    (ReviewApproved, Complete),
    // 000 "Mode Transitions", Timeout handling: "If conductor appears down: update temp/
    // status files, set state to `error`, send timeout message" (a pause watcher TIMEOUT while
    // in `needs_review`).
    (NeedsReview, Error),
    // The conductor's reply to a context warning, 000 "Context escalation response states":
    // "`review_failed` — 'Do not proceed, prepare handoff now'": the clean exit's `exited`
    // follows the reply.
    (ReviewFailed, Exited),
];

/// 002 "Valid State Transitions", and (with `implied`) the transitions the text implies.
pub fn musician_transition_allowed(from: TaskState, to: TaskState, implied: bool) -> bool {
    TABLE_002.contains(&(from, to)) || (from, to) == CLAIM_FROM_EXIT_REQUESTED || (implied && IMPLIED_D10.contains(&(from, to)))
}

fn conductor_transition_allowed(from: TaskState, to: TaskState, settings: &ProtocolSettings) -> bool {
    match to {
        // Review answers (002 "States the Conductor Sets") on a task that asked for one.
        ReviewApproved | ReviewFailed => matches!(from, NeedsReview | Error),
        // A fix for a review or an error, or the handover of a stale or exited task
        // (000 Bootstrap 5 "Session Handoff"; exited only where relaunch is the reading).
        FixProposed => {
            matches!(from, NeedsReview | Error | Working | ReviewApproved | ReviewFailed) || (from == Exited && settings.relaunch_exited)
        }
        // "Conductor requests musician to prepare handoff and exit" (000 and 002 "States the
        // Conductor Sets"); under 004's reading (docs/protocol.md D16) `exit_requested` is
        // only the conductor's own state (004 "Conductor States (task-00)"), never a task's.
        ExitRequested => settings.exit_request_to_musician && !from.is_terminal(),
        _ => false,
    }
}

impl Rule for AllowedTransitions {
    fn doc(&self) -> &'static RuleDoc {
        &DOC
    }

    fn see(&mut self, seen: &Seen, truth: &Truth, findings: &mut Findings) {
        let Seen::Sql(f) = seen else { return };
        if f.failure.is_some() {
            return;
        }
        let Some((before, after)) = touched_row(f) else { return };
        if f.actor.is_conductor() {
            self.conductor(f, before.state, after.state, findings);
        } else {
            self.musician(f, before.state, after.state, findings);
            self.implied_by_its_requester(f, before.state, after.state, truth, findings);
        }
        self.requests.see(f, before.state, after.state);
    }
}

impl AllowedTransitions {
    fn musician(&self, f: &SqlFact, from: TaskState, to: TaskState, findings: &mut Findings) {
        let implied = self.settings.implied_transitions;
        if f.statement == Stmt::ClaimTask && !musician_transition_allowed(from, Working, implied) {
            findings.violate_with(DOC.id, &format!("{}:claim-from-{from}", f.task_id), f.t_ms, || {
                format!(
                    "at t={} ms {} claimed {} while it was `{from}`: the claim guard let a session take a task that is not claimable (002 \"Guard Clause Rules\" allows only watching, fix_proposed, exit_requested)",
                    f.t_ms, f.actor, f.task_id
                )
            });
        }
        // 000 "Clean Exit Protocol" 7 ("LAST STEP: Set state to `exited`") for a session the
        // conductor asked to exit (000 and 002 "States the Conductor Sets"): the exit the
        // request asks for, which 002's table lacks (docs/protocol.md D16).
        let asked_exit =
            from == ExitRequested && to == Exited && self.settings.exit_request_to_musician && !self.settings.exit_request_no_state;
        if from != to && !asked_exit && !musician_transition_allowed(from, to, implied) {
            findings.violate_with(DOC.id, &format!("{}:{from}->{to}", f.task_id), f.t_ms, || {
                format!(
                    "at t={} ms {} moved {} from `{from}` to `{to}` with `{}`: 002 \"Valid State Transitions\" has no such musician transition",
                    f.t_ms, f.actor, f.task_id, f.statement
                )
            });
        }
    }

    /// A transition the text implies (D10) is the step of one session after its own request:
    /// its pause TIMEOUT after its review request (`needs_review → error`), its completion or
    /// clean exit after the conductor's answer to its request (`review_approved → complete`,
    /// `review_failed → exited`). Made by another session — a replaced one that woke, or an
    /// owner whose row a replaced one moved — the pair is the text's, the step is not.
    fn implied_by_its_requester(&self, f: &SqlFact, from: TaskState, to: TaskState, truth: &Truth, findings: &mut Findings) {
        if !self.settings.implied_transitions || !IMPLIED_D10.contains(&(from, to)) {
            return;
        }
        let may = self.requests.may_leave(f.task_id, from);
        if may.is_some_and(|(session, _)| session == f.session_id) {
            return;
        }
        let subject = format!("{}:{from}->{to}:by:{}", f.task_id, f.session_id);
        findings.violate_with(DOC.id, &subject, f.t_ms, || {
            let whose = match may {
                Some((session, set_ms)) => format!("the session whose request put the row there, {} (its request at t={set_ms} ms)", truth.describe(session)),
                None => "a session whose request the oracle never saw".to_string(),
            };
            format!(
                "at t={} ms {} moved {} from `{from}` to `{to}` with `{}`: the text implies this transition (docs/protocol.md D10) only as the next step of {whose}; {} made it",
                f.t_ms,
                f.actor,
                f.task_id,
                f.statement,
                truth.describe(f.session_id)
            )
        });
    }

    fn conductor(&self, f: &SqlFact, from: TaskState, to: TaskState, findings: &mut Findings) {
        if f.task_id == CONDUCTOR_TASK_ID || from == to || conductor_transition_allowed(from, to, &self.settings) {
            return;
        }
        let terminal = if from.is_terminal() {
            " — a terminal state, which \"cannot transition back\" (002 \"Terminal States\")"
        } else {
            ""
        };
        let conductor_only = if to == ExitRequested && !self.settings.exit_request_to_musician {
            ": `exit_requested` is the conductor's own end state (004 \"Conductor States (task-00)\"), not a musician task's (docs/protocol.md D16)"
        } else {
            ""
        };
        findings.violate_with(DOC.id, &format!("{}:conductor:{from}->{to}", f.task_id), f.t_ms, || {
            format!(
                "at t={} ms the conductor moved {} from `{from}`{terminal} to `{to}` with `{}`{conductor_only}",
                f.t_ms, f.task_id, f.statement
            )
        });
    }
}

/// Per task, the musician request behind its current state: the session whose write moved the
/// row into `needs_review` or `error`, and, once the conductor answers it, that same session
/// stays the one the answer (`review_approved`, `review_failed`) is for.
#[derive(Clone, Default)]
struct Requests {
    /// Task → (the state the request set or the answer, the requesting session, when it set it).
    by_task: BTreeMap<String, (TaskState, String, i64)>,
}

impl Requests {
    fn see(&mut self, f: &SqlFact, from: TaskState, to_state: TaskState) {
        let requests = matches!(f.statement, Stmt::SetNeedsReview | Stmt::SetError | Stmt::SetContextWarning | Stmt::SetEscalation);
        if !f.actor.is_conductor() && requests && matches!(to_state, NeedsReview | Error) {
            // A request, even one written on a row a replaced session had put in that state
            // already: its writer waits for the answer.
            self.by_task.insert(f.task_id.to_string(), (to_state, f.session_id.to_string(), f.t_ms));
            return;
        }
        if from == to_state {
            return;
        }
        match (f.actor.is_conductor(), to_state) {
            // An answer is for the session that asked (its request set the state answered).
            (true, ReviewApproved | ReviewFailed) => {
                if let Some(request) = self.by_task.get_mut(f.task_id) {
                    request.0 = to_state;
                }
            }
            _ => {
                self.by_task.remove(f.task_id);
            }
        }
    }

    /// The session that may leave `state` by a transition the text implies, and when its
    /// request was written: the row must still be in the state its request (or the answer to it)
    /// left.
    fn may_leave(&self, task_id: &str, state: TaskState) -> Option<(&str, i64)> {
        let (at, session, set_ms) = self.by_task.get(task_id)?;
        (*at == state).then_some((session.as_str(), *set_ms))
    }
}
