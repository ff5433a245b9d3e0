//! The sections of a scenario that shape the actors: how the conductor answers
//! (`[conductor]`), how a musician's context fills (`[context]`) and how its subagents fail
//! (`[subagents]`), with their defaults (seed 000's numbers).

use serde::Deserialize;

use super::deserialize::{
    non_negative_i64, optional_non_negative_i64, optional_positive_i64, percent, positive_i64, positive_u64, probability,
};
use crate::base::dist::Dist;
use crate::vocab::TaskState;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConductorSection {
    /// The conductor profile (sim/input/conductor_profile.rs, docs/protocol.md C110):
    /// `invented` when absent; `--conductor` replaces it. The keys this file sets win over it.
    pub profile: Option<String>,
    /// How often the conductor looks at the database (not in the seeds: a policy).
    #[serde(deserialize_with = "positive_i64")]
    pub poll_ms: i64,
    /// Time the conductor spends on one review before it answers.
    pub review_ms: Dist,
    /// Whether the poll loop goes on while reviews run (docs/protocol.md C3). Off: the loop
    /// waits for the reviews it started in a poll before it goes on, as one session would.
    pub poll_during_reviews: bool,
    /// How many reviews may run at once (docs/protocol.md C3); 1 with `poll_during_reviews`
    /// off is the conductor reviewing inside its own poll.
    #[serde(deserialize_with = "positive_u64")]
    pub reviews_in_flight: u64,
    /// Odds that a review is answered `review_failed` (a rejection with feedback).
    #[serde(deserialize_with = "probability")]
    pub reject_probability: f64,
    /// Odds that a review is answered `fix_proposed`; the rest are approved.
    #[serde(deserialize_with = "probability")]
    pub fix_probability: f64,
    /// The answer to a context warning (000 "Context escalation response states").
    pub context_reply: ContextReply,
    /// A musician heartbeat older than this is stale (000 "Heartbeat Protocol": 9 min).
    #[serde(deserialize_with = "positive_i64")]
    pub staleness_s: i64,
    /// How long the conductor waits for a launched session's claim before it launches the
    /// task's next one (the simulator's policy for a session lost before its claim; the seeds
    /// never relaunch an unclaimed task). Unset: `staleness_s`, the window the seeds give a
    /// silent session (`Scenario::claim_overdue_s`).
    #[serde(deserialize_with = "optional_positive_i64")]
    pub claim_overdue_s: Option<i64>,
    /// Sessions the conductor launches for one task before it gives the task up.
    #[serde(deserialize_with = "positive_u64")]
    pub sessions_per_task_max: u64,
    /// After a conductor crash (`[[faults.conductor_crash]]`), how long until its next session
    /// starts: whoever restarts it noticing and doing so (docs/protocol.md C34).
    #[serde(deserialize_with = "non_negative_i64")]
    pub relaunch_after_ms: i64,
    /// Scripted answers that override the odds for one review of one task.
    pub answers: Vec<ScriptedAnswer>,
    /// Emergency messages the conductor sends (000 "Emergency Messages").
    pub emergencies: Vec<Emergency>,
    /// Scripted requests that a task's session prepare a handoff and exit (000 and 002
    /// "States the Conductor Sets": `exit_requested`; docs/protocol.md D16).
    pub exit_requests: Vec<ExitRequest>,
    /// Whether the conductor reads a task's row again right before it answers a request, and
    /// answers only if the row is still in the state and session that asked (docs/protocol.md
    /// C37; 002 "Guard Clause Rules": the conductor "reviews state" before it acts). Off: it
    /// answers on what its poll read, as the simulator's first conductor did.
    pub reread_before_answer: bool,
    /// How often the conductor refreshes `task-00`'s heartbeat while it reviews
    /// (docs/protocol.md C38; 000 "Pause Watcher": a conductor whose heartbeat is within 9
    /// minutes is "alive but busy"). 0: no heartbeat during a review (C2, the first conductor).
    /// Unset: the musicians' refresh interval, `timing.heartbeat_refresh_s` (8 minutes), which
    /// is below `staleness_s` (`Scenario::review_heartbeat_ms`).
    #[serde(deserialize_with = "optional_non_negative_i64")]
    pub review_heartbeat_ms: Option<i64>,
    /// What the conductor does with a `claim_blocked` message (docs/protocol.md C39; 000
    /// "4. Guard Block Fallback": "Conductor intervention needed").
    pub claim_blocked: ClaimBlockedReply,
    /// The answer to an error report (docs/protocol.md C40; 000 "Example: Error Recovery"
    /// Step 7: the musician waits for "A corrected file path", "Alternative instructions" or
    /// "Guidance on skipping this work"): odds of alternative instructions ...
    #[serde(deserialize_with = "probability")]
    pub error_alternative_probability: f64,
    /// ... of guidance on skipping the failed work ...
    #[serde(deserialize_with = "probability")]
    pub error_skip_probability: f64,
    /// ... and of `exit_requested` (000 "States the Conductor Sets": "prepare handoff and
    /// exit"); the rest get a corrected path. All `fix_proposed` but the last.
    #[serde(deserialize_with = "probability")]
    pub error_exit_request_probability: f64,
}

impl Default for ConductorSection {
    fn default() -> ConductorSection {
        ConductorSection {
            profile: None,
            poll_ms: 30_000,
            review_ms: Dist::uniform(60_000, 300_000),
            poll_during_reviews: false,
            reviews_in_flight: 1,
            reject_probability: 0.0,
            fix_probability: 0.0,
            context_reply: ContextReply::Fix,
            staleness_s: 540,
            claim_overdue_s: None,
            sessions_per_task_max: 5,
            relaunch_after_ms: 300_000,
            answers: Vec::new(),
            emergencies: Vec::new(),
            exit_requests: Vec::new(),
            reread_before_answer: true,
            review_heartbeat_ms: None,
            claim_blocked: ClaimBlockedReply::Intervene,
            error_alternative_probability: 0.0,
            error_skip_probability: 0.0,
            error_exit_request_probability: 0.0,
        }
    }
}

/// What the conductor does on a `claim_blocked` message (docs/protocol.md C39).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimBlockedReply {
    /// Reads the task's row again; a row no live session holds (at work with a heartbeat
    /// missing or stale, or left claimable with no launch pending) is handed over to a new
    /// session, as 002 "Guard Clause Rules" has the conductor recover a crashed session.
    Intervene,
    /// Notes it and does nothing (the simulator's first conductor).
    Ignore,
}

/// The conductor's answer to an error report (docs/protocol.md C40).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorReply {
    /// `fix_proposed` with a corrected file path: the musician runs the work again.
    CorrectedPath,
    /// `fix_proposed` with alternative instructions: the musician runs the work again.
    Alternative,
    /// `fix_proposed` with guidance on skipping the work: the musician goes on without it.
    Skip,
    /// `exit_requested`: the session hands off and exits (docs/protocol.md C33).
    ExitRequest,
}

impl ErrorReply {
    /// The trace note's word for it (coverage counts `note error_reply_<word>`).
    pub fn word(self) -> &'static str {
        match self {
            ErrorReply::CorrectedPath => "corrected_path",
            ErrorReply::Alternative => "alternative",
            ErrorReply::Skip => "skip",
            ErrorReply::ExitRequest => "exit_request",
        }
    }
}

impl ConductorSection {
    /// The error reply a roll in 0..1 picks: alternative, skip, exit request, in that order
    /// along the odds, the rest a corrected path.
    pub fn error_reply(&self, roll: f64) -> ErrorReply {
        let mut edge = self.error_alternative_probability;
        if roll < edge {
            return ErrorReply::Alternative;
        }
        edge += self.error_skip_probability;
        if roll < edge {
            return ErrorReply::Skip;
        }
        edge += self.error_exit_request_probability;
        if roll < edge {
            return ErrorReply::ExitRequest;
        }
        ErrorReply::CorrectedPath
    }

    /// Whether error replies are drawn at all: with all three odds 0 every reply is a
    /// corrected path and no roll is made, so the conductor's stream is as before C40.
    pub fn error_reply_drawn(&self) -> bool {
        self.error_alternative_probability + self.error_skip_probability + self.error_exit_request_probability > 0.0
    }
}

/// The conductor's three answers to a context warning (000 "Context Monitoring").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContextReply {
    /// `review_approved`: proceed to the checkpoint, then hand off.
    Approve,
    /// `fix_proposed`: only the agents that fit, then checkpoint and hand off.
    Fix,
    /// `review_failed`: do not proceed, hand off now.
    Handoff,
    /// `fix_proposed` with "Adjust approach as follows: [instructions]" (000 "Context
    /// escalation response states" 2, its second form): no scope reduction, no hand-off.
    Adjust,
    /// `exit_requested`: "Conductor requests musician to prepare handoff and exit" (000 and
    /// 002 "States the Conductor Sets"), the fourth answer the simulator's conductor can give
    /// (docs/protocol.md D16, C17).
    ExitRequest,
}

/// A review answer the conductor gives regardless of its odds.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedAnswer {
    /// Task number (1 = task-01).
    pub task: u64,
    /// Which review request of that task, counting resubmissions, 1-based.
    pub review: u64,
    pub answer: ReviewAnswer,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewAnswer {
    ReviewApproved,
    ReviewFailed,
    FixProposed,
}

impl ReviewAnswer {
    pub fn state(self) -> TaskState {
        match self {
            ReviewAnswer::ReviewApproved => TaskState::ReviewApproved,
            ReviewAnswer::ReviewFailed => TaskState::ReviewFailed,
            ReviewAnswer::FixProposed => TaskState::FixProposed,
        }
    }
}

/// An emergency message sent at the conductor's first poll after `at_ms`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Emergency {
    #[serde(deserialize_with = "non_negative_i64")]
    pub at_ms: i64,
    pub task: u64,
    /// Urgent: "stop all work" (kill the current subagent); the same as `kind = "urgent"`.
    #[serde(default)]
    pub urgent: bool,
    /// Which of 000's three responses the emergency asks for; `informational` by default.
    pub kind: Option<EmergencyKind>,
    /// An urgent one's follow-up: the conductor's instructions to resume, sent this long
    /// after the emergency (docs/protocol.md C41; default 10 minutes). Not sent under
    /// `emergency-stop-escalates`, where the musician's error report is answered instead.
    #[serde(default = "resume_after_ms_default", deserialize_with = "non_negative_i64")]
    pub resume_after_ms: i64,
}

fn resume_after_ms_default() -> i64 {
    600_000
}

impl Emergency {
    /// `kind`, or `urgent` when only that is written.
    pub fn kind(&self) -> EmergencyKind {
        match (self.kind, self.urgent) {
            (Some(kind), _) => kind,
            (None, true) => EmergencyKind::Urgent,
            (None, false) => EmergencyKind::Informational,
        }
    }
}

/// A request, sent at the conductor's first poll at or after `at_ms` that finds the task's
/// row `working`, `needs_review` or `error`, that its session prepare a handoff and exit:
/// a `handoff` message, then the state `exit_requested` (message first, as every answer).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExitRequest {
    #[serde(deserialize_with = "non_negative_i64")]
    pub at_ms: i64,
    pub task: u64,
}

/// 000 "Emergency Messages": the musician "judges urgency based on the message content".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmergencyKind {
    /// "Kill current subagent immediately (urgent: 'stop all work')".
    Urgent,
    /// "Wait for current subagent to finish (informational: 'heads up about future step')".
    Informational,
    /// "Acknowledge and continue (advisory: instructions for a step not yet in progress)".
    Advisory,
}

impl EmergencyKind {
    pub fn word(self) -> &'static str {
        match self {
            EmergencyKind::Urgent => "urgent",
            EmergencyKind::Informational => "informational",
            EmergencyKind::Advisory => "advisory",
        }
    }
}

/// Context cost model of a musician session, in percent of its window (000 "Context
/// Monitoring & Break Point Logic"). Costs are distributions, drawn per event from the
/// session's stream; thresholds are the seed's numbers.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ContextSection {
    /// 000 Bootstrap 7: `bootstrap started [ctx: 5%]`.
    pub bootstrap_start_pct: Dist,
    /// The claim: `task claimed … [ctx: 7%]`.
    pub claim_pct: Dist,
    /// Reading the instructions: `instructions loaded … [ctx: 12%]` (~12-15 % in all).
    pub instructions_pct: Dist,
    /// Writing one subagent's prompt (000 "Subagent Context Budget").
    pub agent_launch_pct: Dist,
    /// Reading one subagent's result.
    pub agent_return_pct: Dist,
    /// Integrating it (launch + return + integration ≈ 8 %, 000 REF-3).
    pub integration_pct: Dist,
    /// One checkpoint verification (000 "Verification Checkpoint Flow": ~2-3 %).
    pub verification_pct: Dist,
    /// Re-running one failing test and reading its output (000 "Flaky Test Handling"; the
    /// seeds give no figure).
    pub test_rerun_pct: Dist,
    /// Cleaning up what the self code review found (000 Verification Protocol 4: debug prints,
    /// commented-out code); 000's example stays at 35 % through its checkpoint.
    pub cleanup_pct: Dist,
    /// Reading or writing one message to the conductor.
    pub message_pct: Dist,
    /// Doing a failed subagent's work directly (000 "Error Recovery": ~10 %).
    pub absorb_pct: Dist,
    /// A successor reading its predecessor's temp/ files, HANDOFF and the conductor's
    /// handoff message (000 Example: Mid-Session Resumption: 12 % after bootstrap, 18 % after
    /// the re-verification).
    pub resumption_read_pct: Dist,
    /// Odds that a subagent's work needs self-correction (000 "Self-correction flag").
    #[serde(deserialize_with = "probability")]
    pub self_correction_probability: f64,
    /// Self-correction multiplies that agent's return cost (000: "~6x").
    #[serde(deserialize_with = "positive_i64")]
    pub self_correction_factor: i64,
    /// Context level at which the musician evaluates the way to the next checkpoint (000: 50 %).
    #[serde(deserialize_with = "percent")]
    pub evaluate_at_pct: i64,
    /// Estimated context at the checkpoint below which it proceeds (000: < 70 %).
    #[serde(deserialize_with = "percent")]
    pub proceed_below_pct: i64,
    /// Above this it escalates, at or below it asks (000: 70-80 %).
    #[serde(deserialize_with = "percent")]
    pub escalate_above_pct: i64,
    /// REF-3: agents that fit = (budget − ctx) / average agent cost (000: 65 %).
    #[serde(deserialize_with = "percent")]
    pub budget_pct: i64,
    /// The hard ceiling: reaching it means handing off at once (000 "80% context ceiling").
    #[serde(deserialize_with = "percent")]
    pub ceiling_pct: i64,
}

impl Default for ContextSection {
    fn default() -> ContextSection {
        ContextSection {
            bootstrap_start_pct: Dist::Const(5),
            claim_pct: Dist::Const(2),
            instructions_pct: Dist::uniform(5, 8),
            agent_launch_pct: Dist::uniform(1, 2),
            agent_return_pct: Dist::uniform(3, 5),
            integration_pct: Dist::uniform(1, 2),
            verification_pct: Dist::uniform(2, 3),
            test_rerun_pct: Dist::Const(1),
            cleanup_pct: Dist::Const(1),
            message_pct: Dist::Const(1),
            absorb_pct: Dist::Const(10),
            resumption_read_pct: Dist::Const(4),
            self_correction_probability: 0.0,
            self_correction_factor: 6,
            evaluate_at_pct: 50,
            proceed_below_pct: 70,
            escalate_above_pct: 80,
            budget_pct: 65,
            ceiling_pct: 80,
        }
    }
}

/// How subagents fail (000 "Retry Policy", "Example: Error Recovery & Retry Logic").
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SubagentsSection {
    /// Odds that one attempt of a subagent fails.
    #[serde(deserialize_with = "probability")]
    pub failure_probability: f64,
    /// Odds that a failure is unrecoverable (missing file, broken dependency): reported to
    /// the conductor at once instead of retried.
    #[serde(deserialize_with = "probability")]
    pub unrecoverable_probability: f64,
    /// After 2 failed retries: odds the musician absorbs the work (< 500 LOC, well-defined)
    /// rather than escalating to the conductor.
    #[serde(deserialize_with = "probability")]
    pub absorb_probability: f64,
    /// Scripted subagent behaviour that overrides the odds.
    pub script: Vec<SubagentScript>,
}

impl Default for SubagentsSection {
    fn default() -> SubagentsSection {
        SubagentsSection { failure_probability: 0.0, unrecoverable_probability: 0.0, absorb_probability: 1.0, script: Vec::new() }
    }
}

/// What one subagent of one task does, whatever the odds say.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubagentScript {
    pub task: u64,
    pub step: u64,
    pub agent: u64,
    /// How many attempts fail before one succeeds (3 or more: all three fail).
    #[serde(default)]
    pub failures: u64,
    /// The first failure is unrecoverable: an error report to the conductor.
    #[serde(default)]
    pub unrecoverable: bool,
    /// The agent's work needs self-correction (~6x context).
    #[serde(default)]
    pub self_correction: bool,
}
