//! allowed-transitions: state changes follow 002's state machine, made by the actor allowed
//! to make them.

use super::{Meaning, Rule, RuleDoc};
use crate::oracle::truth::touched_row;
use crate::oracle::{Findings, Seen, SqlFact, Truth};
use crate::scenario::ProtocolSettings;
use crate::vocab::TaskState::{self, *};
use crate::vocab::{RuleId, Stmt, CONDUCTOR_TASK_ID};

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::AllowedTransitions,
    says: "state changes follow the state machine (002), made by the actor allowed to make them",
    seed: "002 \"Valid State Transitions\", \"States the Conductor Sets\", \"Terminal States\"; docs/protocol.md D10",
    consumes: "writes that change a task row's state, and claims",
    truth: "the row's state before and after the write",
    // Fault-free, a violation is a simulator or SQL bug; under faults, two sessions writing one
    // row in turn (no UPDATE checks state or session_id) or the conductor acting on an old
    // poll produce them: flaws the seeds' protocol allows.
    meaning: Meaning::ProtocolFlaw,
};

pub struct AllowedTransitions {
    settings: ProtocolSettings,
}

impl AllowedTransitions {
    pub fn new(settings: &ProtocolSettings) -> Self {
        AllowedTransitions { settings: settings.clone() }
    }
}

/// 002 "Valid State Transitions": the musician's eleven, in the table's order. Coverage
/// (sim/coverage/) reports each of them as reached or not.
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

/// The transitions the text implies (docs/protocol.md D10, §5 "Transitions the text
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
pub fn musician_transition_allowed(from: &str, to: &str, implied: bool) -> bool {
    let (Some(from), Some(to)) = (TaskState::parse(from), TaskState::parse(to)) else { return false };
    TABLE_002.contains(&(from, to)) || (from, to) == CLAIM_FROM_EXIT_REQUESTED || (implied && IMPLIED_D10.contains(&(from, to)))
}

fn conductor_transition_allowed(from: &str, to: &str, settings: &ProtocolSettings) -> bool {
    match to {
        // Review answers (002 "States the Conductor Sets") on a task that asked for one.
        "review_approved" | "review_failed" => matches!(from, "needs_review" | "error"),
        // A fix for a review or an error, or the handover of a stale or exited task
        // (000 Bootstrap 5 "Session Handoff"; exited only where relaunch is the reading).
        "fix_proposed" => {
            matches!(from, "needs_review" | "error" | "working" | "review_approved" | "review_failed")
                || (from == "exited" && settings.relaunch_exited)
        }
        // "Conductor requests musician to prepare handoff and exit" (000 and 002 "States the
        // Conductor Sets"); under 004's reading (docs/protocol.md D16) `exit_requested` is
        // only the conductor's own state (004 "Conductor States (task-00)"), never a task's.
        "exit_requested" => settings.exit_request_to_musician && from != "complete" && from != "exited",
        _ => false,
    }
}

impl Rule for AllowedTransitions {
    fn doc(&self) -> &'static RuleDoc {
        &DOC
    }

    fn see(&mut self, seen: &Seen, _truth: &Truth, findings: &mut Findings) {
        let Seen::Sql(f) = seen else { return };
        if f.failure.is_some() {
            return;
        }
        let Some((before, after)) = touched_row(f) else { return };
        if f.actor.is_conductor() {
            self.conductor(f, &before.state, &after.state, findings);
        } else {
            self.musician(f, &before.state, &after.state, findings);
        }
    }
}

impl AllowedTransitions {
    fn musician(&self, f: &SqlFact, from: &str, to: &str, findings: &mut Findings) {
        let implied = self.settings.implied_transitions;
        if f.statement == Stmt::ClaimTask && !musician_transition_allowed(from, "working", implied) {
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
            from == "exit_requested" && to == "exited" && self.settings.exit_request_to_musician && !self.settings.exit_request_no_state;
        if from != to && !asked_exit && !musician_transition_allowed(from, to, implied) {
            findings.violate_with(DOC.id, &format!("{}:{from}->{to}", f.task_id), f.t_ms, || {
                format!(
                    "at t={} ms {} moved {} from `{from}` to `{to}` with `{}`: 002 \"Valid State Transitions\" has no such musician transition",
                    f.t_ms, f.actor, f.task_id, f.statement
                )
            });
        }
    }

    fn conductor(&self, f: &SqlFact, from: &str, to: &str, findings: &mut Findings) {
        if f.task_id == CONDUCTOR_TASK_ID || from == to || conductor_transition_allowed(from, to, &self.settings) {
            return;
        }
        let terminal = if from == "complete" || from == "exited" {
            " — a terminal state, which \"cannot transition back\" (002 \"Terminal States\")"
        } else {
            ""
        };
        let conductor_only = if to == "exit_requested" && !self.settings.exit_request_to_musician {
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
