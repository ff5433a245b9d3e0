//! Scenario files: TOML, every key documented in scenarios/README.md with its default and
//! the seed section it comes from. Unknown keys are errors; every error names the file, the
//! line, the column and the key.

use std::path::{Path, PathBuf};

use serde::de::{self, Deserializer};
use serde::Deserialize;

use crate::clock::parse_utc;
use crate::dist::Dist;
use crate::error::{Error, Result};

/// A loaded, validated scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The file stem: `scenarios/quickstart.toml` → `quickstart`.
    pub name: String,
    pub path: PathBuf,
    pub description: String,
    pub run: RunSection,
    pub timing: TimingSection,
    pub conductor: ConductorSection,
    pub context: ContextSection,
    pub subagents: SubagentsSection,
    pub faults: FaultsSection,
    pub budgets: BudgetsSection,
    pub expect: ExpectSection,
    pub settings: ProtocolSettings,
    pub tasks: Vec<TaskPlan>,
    /// A `.sql` file whose named entries replace the default protocol's (resolved path).
    pub protocol_sql: Option<PathBuf>,
    /// Variants applied (scenario `[protocol] variants`, then `--variant`), in order.
    pub variant_names: Vec<String>,
    /// SQL entries the variants override, as (origin, text), applied after `protocol_sql`.
    pub variant_sql: Vec<(String, &'static str)>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioFile {
    #[serde(default)]
    description: String,
    #[serde(default)]
    run: RunSection,
    #[serde(default)]
    timing: TimingSection,
    #[serde(default)]
    conductor: ConductorSection,
    #[serde(default)]
    context: ContextSection,
    #[serde(default)]
    subagents: SubagentsSection,
    #[serde(default)]
    faults: FaultsSection,
    #[serde(default)]
    budgets: BudgetsSection,
    #[serde(default)]
    expect: ExpectSection,
    tasks: TasksSection,
    #[serde(default)]
    protocol: ProtocolSection,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunSection {
    /// Used when the command line gives no `--seed`.
    pub seed: u64,
    /// Simulated wall-clock time at t = 0, UTC (`YYYY-MM-DD HH:MM:SS`).
    #[serde(rename = "epoch", deserialize_with = "epoch")]
    pub epoch_unix_ms: i64,
    #[serde(deserialize_with = "positive_i64")]
    pub sim_time_max_ms: i64,
    #[serde(deserialize_with = "positive_u64")]
    pub events_max: u64,
}

impl Default for RunSection {
    fn default() -> RunSection {
        RunSection {
            seed: 1,
            epoch_unix_ms: parse_utc("2026-01-05 09:00:00").expect("valid default epoch"),
            sim_time_max_ms: 24 * 3_600_000,
            events_max: 10_000_000,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimingSection {
    /// Round trip of one SQL statement through a session's tool call (comms-link).
    pub statement_ms: Dist,
    /// From the conductor's launch to the session's first action.
    pub launch_delay_ms: Dist,
    /// One subagent's work, from launch to its result (000 "Subagent Delegation").
    pub subagent_ms: Dist,
    /// The musician's own integration after each subagent returns (000 "Hybrid Work").
    pub integration_ms: Dist,
    /// Verification at a checkpoint before the review request (000 "Checkpoint Verification").
    pub verification_ms: Dist,
    /// Background watcher poll interval (000 "Background Watcher": 15 s; 004: 8 s).
    #[serde(deserialize_with = "positive_i64")]
    pub background_poll_ms: i64,
    /// Background watcher iteration cap (004 "Background Monitoring Subagent Template": 500).
    #[serde(deserialize_with = "positive_u64")]
    pub background_max_iterations: u64,
    /// Pause watcher poll interval (000 "Pause Watcher": 10 s; 004: 8 s).
    #[serde(deserialize_with = "positive_i64")]
    pub pause_poll_ms: i64,
    /// Watchers refresh a heartbeat older than this (000 "Heartbeat Refresh": 8 min).
    #[serde(deserialize_with = "positive_i64")]
    pub heartbeat_refresh_s: i64,
    /// A pause watcher with no answer this long checks the conductor's heartbeat
    /// (000 "Pause Watcher": 15-minute timeout).
    #[serde(deserialize_with = "positive_i64")]
    pub pause_timeout_ms: i64,
    /// Applying review feedback or a proposed fix before resubmitting (000 "Response Handling").
    pub rework_ms: Dist,
    /// Writing the HANDOFF document and the report of a clean exit (000 "Clean Exit Protocol").
    pub handoff_ms: Dist,
    /// How long a stop hook waits before it asks again when the state does not allow exit.
    #[serde(deserialize_with = "positive_i64")]
    pub stop_hook_retry_ms: i64,
}

impl Default for TimingSection {
    fn default() -> TimingSection {
        TimingSection {
            statement_ms: Dist::uniform(500, 3_000),
            launch_delay_ms: Dist::uniform(5_000, 30_000),
            subagent_ms: Dist::uniform(180_000, 600_000),
            integration_ms: Dist::uniform(30_000, 120_000),
            verification_ms: Dist::uniform(60_000, 240_000),
            background_poll_ms: 15_000,
            background_max_iterations: 500,
            pause_poll_ms: 10_000,
            heartbeat_refresh_s: 480,
            pause_timeout_ms: 900_000,
            rework_ms: Dist::uniform(60_000, 300_000),
            handoff_ms: Dist::uniform(30_000, 120_000),
            stop_hook_retry_ms: 5_000,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConductorSection {
    /// How often the conductor looks at the database (not in the seeds: a policy).
    #[serde(deserialize_with = "positive_i64")]
    pub poll_ms: i64,
    /// Time the conductor spends on one review before it answers.
    pub review_ms: Dist,
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
    /// Sessions the conductor launches for one task before it gives the task up.
    #[serde(deserialize_with = "positive_u64")]
    pub sessions_per_task_max: u64,
    /// Scripted answers that override the odds for one review of one task.
    pub answers: Vec<ScriptedAnswer>,
    /// Emergency messages the conductor sends (000 "Emergency Messages").
    pub emergencies: Vec<Emergency>,
}

impl Default for ConductorSection {
    fn default() -> ConductorSection {
        ConductorSection {
            poll_ms: 30_000,
            review_ms: Dist::uniform(60_000, 300_000),
            reject_probability: 0.0,
            fix_probability: 0.0,
            context_reply: ContextReply::Fix,
            staleness_s: 540,
            sessions_per_task_max: 5,
            answers: Vec::new(),
            emergencies: Vec::new(),
        }
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
    pub fn state(self) -> &'static str {
        match self {
            ReviewAnswer::ReviewApproved => "review_approved",
            ReviewAnswer::ReviewFailed => "review_failed",
            ReviewAnswer::FixProposed => "fix_proposed",
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
    /// Urgent: "stop all work" (kill the current subagent); otherwise informational.
    #[serde(default)]
    pub urgent: bool,
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
    /// Reading or writing one message to the conductor.
    pub message_pct: Dist,
    /// Doing a failed subagent's work directly (000 "Error Recovery": ~10 %).
    pub absorb_pct: Dist,
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
            message_pct: Dist::Const(1),
            absorb_pct: Dist::Const(10),
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

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TasksSection {
    #[serde(deserialize_with = "positive_u64")]
    count: u64,
    #[serde(default = "default_steps", deserialize_with = "positive_u64")]
    steps: u64,
    #[serde(default = "default_subagents")]
    subagents_per_step: u64,
    #[serde(default = "default_checkpoints")]
    checkpoints: Vec<u64>,
    #[serde(default)]
    custom: Vec<TaskCustom>,
}

fn default_steps() -> u64 {
    4
}
fn default_subagents() -> u64 {
    2
}
fn default_checkpoints() -> Vec<u64> {
    vec![2]
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskCustom {
    task: u64,
    #[serde(default, deserialize_with = "positive_u64_opt")]
    steps: Option<u64>,
    subagents_per_step: Option<u64>,
    checkpoints: Option<Vec<u64>>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProtocolSection {
    sql: Option<String>,
    #[serde(default)]
    variants: Vec<String>,
}

/// The readings of the seeds where they disagree (PROTOCOL.md "Where the seeds disagree"),
/// as settings a variant (sim/variant.rs) changes. Defaults follow seed 000.
#[derive(Clone, Debug, PartialEq)]
pub struct ProtocolSettings {
    /// #3: review request message first (004, 000 "Terminal Write Atomicity") or state first
    /// (000 Execution Queries 5).
    pub state_first: bool,
    /// #6: new conductor messages by `id > last_processed` (000) or by the newest timestamp
    /// (004 "Check for Conductor Messages").
    pub detect_by_timestamp: bool,
    /// #9: the conductor relaunches an `exited` task (000 "Session Handoff") or treats
    /// `exited` as absolute (002 "Terminal States").
    pub relaunch_exited: bool,
    /// #10: the oracle also accepts the transitions the text implies but the table omits.
    pub implied_transitions: bool,
    /// #12: escalate on > 2 deviations (000 text) instead of REF-6 (2+ Medium or 1+ High).
    pub escalate_over_two: bool,
}

impl Default for ProtocolSettings {
    fn default() -> ProtocolSettings {
        ProtocolSettings {
            state_first: false,
            detect_by_timestamp: false,
            relaunch_exited: true,
            implied_transitions: true,
            escalate_over_two: false,
        }
    }
}

/// A probability that is either fixed or drawn once per run from the seed (swarm testing:
/// `{ min = 0.0, max = 0.02 }`), logged at the start of the run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Odds {
    Fixed(f64),
    Drawn { min: f64, max: f64 },
}

impl Odds {
    /// The probability once drawn (the run resolves drawn odds before actors start).
    pub fn fixed(&self) -> f64 {
        match *self {
            Odds::Fixed(p) => p,
            Odds::Drawn { min, .. } => min,
        }
    }
}

impl Default for Odds {
    fn default() -> Odds {
        Odds::Fixed(0.0)
    }
}

impl<'de> Deserialize<'de> for Odds {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Odds, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Range {
            min: f64,
            max: f64,
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Fixed(f64),
            Range(Range),
        }
        let raw = Raw::deserialize(d).map_err(|_| de::Error::custom("expected a probability (0..1) or a table { min = …, max = … }"))?;
        let check = |v: f64| -> std::result::Result<f64, D::Error> {
            if (0.0..=1.0).contains(&v) {
                Ok(v)
            } else {
                Err(de::Error::custom(format!("a probability must be between 0 and 1, got {v}")))
            }
        };
        match raw {
            Raw::Fixed(v) => Ok(Odds::Fixed(check(v)?)),
            Raw::Range(r) if r.min <= r.max => Ok(Odds::Drawn { min: check(r.min)?, max: check(r.max)? }),
            Raw::Range(r) => Err(de::Error::custom(format!("min must be <= max, got {} > {}", r.min, r.max))),
        }
    }
}

/// Faults (issue "faults, oracles and variants"): scripted at a time or a protocol point, or
/// random with odds that may themselves be drawn from the seed.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FaultsSection {
    /// Random faults stop at this simulated time; after it the run must recover (liveness).
    pub until_ms: Option<i64>,
    /// Lock contention in virtual time: each write holds SQLite's write lock this long.
    pub write_hold_ms: Option<Dist>,
    /// A write that would wait longer than this for the lock gets SQLITE_BUSY (virtual ms).
    pub busy_timeout_ms: Option<i64>,
    /// Odds that a musician session crashes before any one of its database writes.
    pub crash_probability: Odds,
    /// Odds that a session hangs (stops, then comes back as a zombie) before a write.
    pub hang_probability: Odds,
    pub hang_ms: Option<Dist>,
    /// Extra time each watcher poll cycle takes (a slow model answering).
    pub watcher_jitter_ms: Option<Dist>,
    /// Odds that a subagent's result costs a context spike, and its size.
    pub context_spike_probability: Odds,
    pub context_spike_pct: Option<Dist>,
    pub crash: Vec<ScriptedFault>,
    pub hang: Vec<ScriptedFault>,
    pub watcher_death: Vec<ScriptedFault>,
    /// A second session launched for a task's first session (a relaunch racing the original).
    pub double_launch: Vec<DoubleLaunch>,
    pub conductor_down: Vec<Window>,
}

/// A fault for one session of one task: at a simulated time, or at a protocol point
/// `before:STATEMENT` / `after:STATEMENT` (the `nth` time that session runs it, from 1).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedFault {
    pub task: u64,
    #[serde(default = "one_u32")]
    pub session: u32,
    pub at_ms: Option<i64>,
    pub at: Option<String>,
    #[serde(default = "one_u64")]
    pub nth: u64,
    /// For hangs: how long the session is frozen.
    pub duration_ms: Option<i64>,
}

fn one_u32() -> u32 {
    1
}
fn one_u64() -> u64 {
    1
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DoubleLaunch {
    pub task: u64,
    /// How long after the original the twin starts (0: the same instant).
    #[serde(default)]
    pub after_ms: i64,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Window {
    pub from_ms: i64,
    pub to_ms: i64,
}

/// Timing budgets; a measurement above its budget fails the run.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BudgetsSection {
    /// Conductor message written → the session it was for handled it.
    pub message_notice_ms_max: Option<i64>,
    /// Review answer written → the musician's next write on the task.
    pub review_resume_ms_max: Option<i64>,
    /// Session crashed or hung → the conductor declared it stale.
    pub crash_detect_ms_max: Option<i64>,
    /// Heartbeat age of live, healthy sessions as the conductor saw it.
    pub heartbeat_age_s_max: Option<i64>,
    /// Terminal `exited` → the successor's claim.
    pub exit_to_claim_ms_max: Option<i64>,
}

/// Violations a scenario expects (a known protocol flaw): the run passes only if exactly
/// these rules are violated.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExpectSection {
    /// Must occur, and nothing else may: a known flaw this scenario demonstrates.
    pub violations: Vec<String>,
    /// May occur without failing the run (random faults that do not show every flaw on
    /// every seed); anything outside `violations` and `allowed` fails it.
    pub allowed: Vec<String>,
}

/// One task's instruction plan: its steps, subagents per step, and the steps after which a
/// checkpoint review is due (000 "Checkpoint Types"). The completion review after the last
/// step is always there (000 "Completion Flow").
#[derive(Clone, Debug, PartialEq)]
pub struct TaskPlan {
    /// `task-01`, `task-02`, … (000 Bootstrap 1: "task #3 → task-03").
    pub task_id: String,
    pub number: u64,
    pub steps: u64,
    pub subagents_per_step: u64,
    /// Sorted, distinct, each in 1..=steps.
    pub checkpoints: Vec<u64>,
}

impl TaskPlan {
    pub fn is_checkpoint(&self, step: u64) -> bool {
        self.checkpoints.contains(&step)
    }
}

pub use crate::vocab::task_id;

/// Upper bounds that keep a typo from asking for a simulation that cannot end.
const TASKS_MAX: u64 = 10_000;
const STEPS_MAX: u64 = 1_000;
const SUBAGENTS_MAX: u64 = 100;

impl Scenario {
    pub fn load(path: &Path) -> Result<Scenario> {
        let bytes = std::fs::read(path).map_err(|e| Error::input(format!("{}: cannot read scenario: {e}", path.display())))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let valid = e.utf8_error().valid_up_to();
            let (line, col) = line_col(&String::from_utf8_lossy(&e.as_bytes()[..valid]), valid);
            Error::input(format!("{}:{line}:{col}: not UTF-8 text (byte {valid}); a scenario is a TOML file", path.display()))
        })?;
        Scenario::parse(&text, path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Scenario> {
        let file = path.display().to_string();
        let raw: ScenarioFile = toml::from_str(text).map_err(|e| toml_error(&file, text, &e))?;
        let at = |section: &str, index: Option<usize>, key: &str, message: String| {
            let (line, col) = locate(text, section, index, key);
            let full = if section.is_empty() { key.to_string() } else { format!("{section}.{key}") };
            Error::input(format!("{file}:{line}:{col}: key `{full}`: {message}"))
        };
        let t = &raw.tasks;
        if t.count > TASKS_MAX {
            return Err(at("tasks", None, "count", format!("at most {TASKS_MAX} tasks, got {}", t.count)));
        }
        let default_plan = PlanShape { steps: t.steps, subagents_per_step: t.subagents_per_step, checkpoints: t.checkpoints.clone() };
        default_plan.check().map_err(|(key, m)| at("tasks", None, key, m))?;
        let mut tasks: Vec<TaskPlan> = (1..=t.count).map(|n| default_plan.plan(n)).collect();
        let mut seen: Vec<u64> = Vec::new();
        for (index, custom) in t.custom.iter().enumerate() {
            if custom.task == 0 || custom.task > t.count {
                return Err(at(
                    "tasks.custom",
                    Some(index),
                    "task",
                    format!("task {} does not exist: tasks.count is {}", custom.task, t.count),
                ));
            }
            if seen.contains(&custom.task) {
                return Err(at("tasks.custom", Some(index), "task", format!("task {} is customised twice", custom.task)));
            }
            seen.push(custom.task);
            let shape = PlanShape {
                steps: custom.steps.unwrap_or(t.steps),
                subagents_per_step: custom.subagents_per_step.unwrap_or(t.subagents_per_step),
                checkpoints: custom
                    .checkpoints
                    .clone()
                    .unwrap_or_else(|| t.checkpoints.iter().copied().filter(|c| *c <= custom.steps.unwrap_or(t.steps)).collect()),
            };
            shape.check().map_err(|(key, m)| at("tasks.custom", Some(index), key, m))?;
            tasks[(custom.task - 1) as usize] = shape.plan(custom.task);
        }
        for (index, answer) in raw.conductor.answers.iter().enumerate() {
            if answer.task == 0 || answer.task > t.count {
                return Err(at(
                    "conductor.answers",
                    Some(index),
                    "task",
                    format!("task {} does not exist: tasks.count is {}", answer.task, t.count),
                ));
            }
            if answer.review == 0 {
                return Err(at("conductor.answers", Some(index), "review", "reviews are counted from 1".to_string()));
            }
        }
        for (index, emergency) in raw.conductor.emergencies.iter().enumerate() {
            if emergency.task == 0 || emergency.task > t.count {
                return Err(at(
                    "conductor.emergencies",
                    Some(index),
                    "task",
                    format!("task {} does not exist: tasks.count is {}", emergency.task, t.count),
                ));
            }
        }
        for (index, script) in raw.subagents.script.iter().enumerate() {
            let Some(plan) = (script.task >= 1).then(|| tasks.get((script.task - 1) as usize)).flatten() else {
                return Err(at(
                    "subagents.script",
                    Some(index),
                    "task",
                    format!("task {} does not exist: tasks.count is {}", script.task, t.count),
                ));
            };
            if script.step == 0 || script.step > plan.steps {
                return Err(at(
                    "subagents.script",
                    Some(index),
                    "step",
                    format!("{} has steps 1..={}, not {}", plan.task_id, plan.steps, script.step),
                ));
            }
            if script.agent == 0 || script.agent > plan.subagents_per_step {
                return Err(at(
                    "subagents.script",
                    Some(index),
                    "agent",
                    format!("{} has agents 1..={} per step, not {}", plan.task_id, plan.subagents_per_step, script.agent),
                ));
            }
        }
        let c = &raw.context;
        if !(c.evaluate_at_pct <= c.proceed_below_pct && c.proceed_below_pct <= c.escalate_above_pct) {
            return Err(at(
                "context",
                None,
                "proceed_below_pct",
                format!(
                    "thresholds must be ordered evaluate_at_pct <= proceed_below_pct <= escalate_above_pct, got {} / {} / {}",
                    c.evaluate_at_pct, c.proceed_below_pct, c.escalate_above_pct
                ),
            ));
        }
        if raw.reject_and_fix_odds() > 1.0 {
            return Err(at(
                "conductor",
                None,
                "fix_probability",
                format!("reject_probability + fix_probability must be at most 1, got {}", raw.reject_and_fix_odds()),
            ));
        }
        if raw.timing.heartbeat_refresh_s >= raw.conductor.staleness_s {
            return Err(at("timing", None, "heartbeat_refresh_s", format!(
                "the refresh threshold ({} s) must be below the conductor's staleness threshold ({} s): otherwise a live session is declared stale before its watcher refreshes (000 \"Design Rationale\": the 1-minute buffer)",
                raw.timing.heartbeat_refresh_s, raw.conductor.staleness_s
            )));
        }
        if raw.timing.heartbeat_refresh_s * 1000 <= raw.timing.background_poll_ms {
            return Err(at(
                "timing",
                None,
                "heartbeat_refresh_s",
                format!(
                    "a refresh threshold of {} s is not longer than the background poll of {} ms: every poll would refresh",
                    raw.timing.heartbeat_refresh_s, raw.timing.background_poll_ms
                ),
            ));
        }
        if raw.faults.hang.iter().any(|f| f.at.as_deref().is_some_and(|a| a.starts_with("after:"))) {
            return Err(at(
                "faults",
                None,
                "at",
                "a hang takes `at_ms` or `before:STATEMENT` (a hang after a statement is a hang before the next)".to_string(),
            ));
        }
        if raw.faults.watcher_death.iter().any(|f| f.at.is_some()) {
            return Err(at("faults", None, "at", "a watcher death takes `at_ms` only".to_string()));
        }
        let scripted =
            [("faults.crash", &raw.faults.crash), ("faults.hang", &raw.faults.hang), ("faults.watcher_death", &raw.faults.watcher_death)];
        let scripted = scripted.into_iter().flat_map(|(section, faults)| faults.iter().enumerate().map(move |(i, f)| (section, i, f)));
        for (section, index, fault) in scripted {
            if fault.task == 0 || fault.task > t.count {
                return Err(at(
                    section,
                    Some(index),
                    "task",
                    format!(
                        "entry {} of [[{section}]] names task {}, which does not exist: tasks.count is {}",
                        index + 1,
                        fault.task,
                        t.count
                    ),
                ));
            }
            let sessions_max = raw.conductor.sessions_per_task_max;
            if fault.session == 0 || u64::from(fault.session) > sessions_max {
                return Err(at(
                    section,
                    Some(index),
                    "session",
                    format!(
                        "entry {} of [[{section}]] names session S{} of task {}, which never exists: sessions are S1..S{sessions_max} (conductor.sessions_per_task_max)",
                        index + 1,
                        fault.session,
                        fault.task
                    ),
                ));
            }
            if fault.at_ms.is_none() == fault.at.is_none() {
                return Err(at(
                    section,
                    Some(index),
                    "at",
                    format!(
                        "entry {} of [[{section}]] needs exactly one of `at_ms` or `at` (\"before:STATEMENT\" / \"after:STATEMENT\")",
                        index + 1
                    ),
                ));
            }
            if let Some(point) = &fault.at {
                let statement = point.strip_prefix("before:").or_else(|| point.strip_prefix("after:"));
                let known = statement.is_some_and(|s| crate::vocab::Stmt::parse(s).is_some());
                if !known {
                    return Err(at(
                        section,
                        Some(index),
                        "at",
                        format!("`{point}` is not before:STATEMENT or after:STATEMENT with a statement the engine runs"),
                    ));
                }
            }
        }
        for (index, twin) in raw.faults.double_launch.iter().enumerate() {
            if twin.task == 0 || twin.task > t.count {
                return Err(at(
                    "faults.double_launch",
                    Some(index),
                    "task",
                    format!("task {} does not exist: tasks.count is {}", twin.task, t.count),
                ));
            }
        }
        for rule in raw.expect.violations.iter().chain(&raw.expect.allowed) {
            if crate::vocab::RuleId::parse(rule).is_none() {
                let names: Vec<&str> = crate::vocab::RuleId::ALL.iter().map(|r| r.as_str()).collect();
                return Err(at("expect", None, "violations", format!("`{rule}` is not a rule; rules: {}", names.join(", "))));
            }
        }
        let protocol_sql = raw.protocol.sql.as_ref().map(|p| path.parent().unwrap_or(Path::new(".")).join(p));
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("scenario").to_string();
        let variants = raw.protocol.variants.clone();
        let mut scenario = Scenario {
            name,
            path: path.to_path_buf(),
            description: raw.description,
            run: raw.run,
            timing: raw.timing,
            conductor: raw.conductor,
            context: raw.context,
            subagents: raw.subagents,
            faults: raw.faults,
            budgets: raw.budgets,
            expect: raw.expect,
            settings: ProtocolSettings::default(),
            tasks,
            protocol_sql,
            variant_names: Vec::new(),
            variant_sql: Vec::new(),
        };
        for variant in &variants {
            crate::variant::apply(&mut scenario, variant).map_err(|m| at("protocol", None, "variants", m))?;
        }
        Ok(scenario)
    }
}

impl ScenarioFile {
    fn reject_and_fix_odds(&self) -> f64 {
        self.conductor.reject_probability + self.conductor.fix_probability
    }
}

impl Scenario {
    /// The scripted behaviour of one subagent, if any.
    pub fn subagent_script(&self, task: u64, step: u64, agent: u64) -> Option<&SubagentScript> {
        self.subagents.script.iter().find(|s| s.task == task && s.step == step && s.agent == agent)
    }

    /// The scripted answer to the `review`-th review request of `task`, if any.
    pub fn scripted_answer(&self, task: u64, review: u64) -> Option<ReviewAnswer> {
        self.conductor.answers.iter().find(|a| a.task == task && a.review == review).map(|a| a.answer)
    }
}

struct PlanShape {
    steps: u64,
    subagents_per_step: u64,
    checkpoints: Vec<u64>,
}

impl PlanShape {
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        if self.steps > STEPS_MAX {
            return Err(("steps", format!("at most {STEPS_MAX} steps, got {}", self.steps)));
        }
        if self.subagents_per_step > SUBAGENTS_MAX {
            return Err(("subagents_per_step", format!("at most {SUBAGENTS_MAX}, got {}", self.subagents_per_step)));
        }
        for (i, c) in self.checkpoints.iter().enumerate() {
            if *c == 0 || *c > self.steps {
                return Err(("checkpoints", format!("checkpoint after step {c} is outside steps 1..={}", self.steps)));
            }
            if i > 0 && self.checkpoints[i - 1] >= *c {
                return Err(("checkpoints", "checkpoints must be increasing step numbers".to_string()));
            }
        }
        Ok(())
    }

    fn plan(&self, number: u64) -> TaskPlan {
        TaskPlan {
            task_id: task_id(number),
            number,
            steps: self.steps,
            subagents_per_step: self.subagents_per_step,
            checkpoints: self.checkpoints.clone(),
        }
    }
}

fn positive_i64<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<i64, D::Error> {
    let v = i64::deserialize(d)?;
    if v <= 0 {
        return Err(de::Error::custom(format!("must be positive, got {v}")));
    }
    Ok(v)
}

fn non_negative_i64<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<i64, D::Error> {
    let v = i64::deserialize(d)?;
    if v < 0 {
        return Err(de::Error::custom(format!("cannot be negative, got {v}")));
    }
    Ok(v)
}

fn probability<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<f64, D::Error> {
    let v = f64::deserialize(d)?;
    if !(0.0..=1.0).contains(&v) {
        return Err(de::Error::custom(format!("a probability must be between 0 and 1, got {v}")));
    }
    Ok(v)
}

fn percent<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<i64, D::Error> {
    let v = i64::deserialize(d)?;
    if !(0..=100).contains(&v) {
        return Err(de::Error::custom(format!("a percentage must be between 0 and 100, got {v}")));
    }
    Ok(v)
}

fn positive_u64<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<u64, D::Error> {
    let v = i64::deserialize(d)?;
    if v <= 0 {
        return Err(de::Error::custom(format!("must be positive, got {v}")));
    }
    Ok(v as u64)
}

fn positive_u64_opt<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<u64>, D::Error> {
    positive_u64(d).map(Some)
}

fn epoch<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<i64, D::Error> {
    let text = String::deserialize(d)?;
    parse_utc(&text).ok_or_else(|| de::Error::custom(format!("`{text}` is not a UTC time like \"2026-01-05 09:00:00\" (1970 or later)")))
}

/// Turns a TOML or serde error into `file:line:col: key `k`: message`.
fn toml_error(file: &str, text: &str, e: &toml::de::Error) -> Error {
    let message = e.message().trim().to_string();
    let Some(span) = e.span() else {
        return Error::input(format!("{file}: {message}"));
    };
    let (line, col) = line_col(text, span.start);
    let key = match missing_field(&message) {
        // A missing key is reported on its table; the whole document for top-level keys.
        // toml reports a missing top-level key with an empty span at offset 0, a missing key
        // of a table with the span of its header.
        Some(field) if span.is_empty() => Some(field.to_string()),
        Some(field) => Some(key_at(text, span.start, span.end).map_or(field.to_string(), |table| format!("{table}.{field}"))),
        None => key_at(text, span.start, span.end),
    };
    match key {
        Some(key) => Error::input(format!("{file}:{line}:{col}: key `{key}`: {message}")),
        None => Error::input(format!("{file}:{line}:{col}: {message}")),
    }
}

fn missing_field(message: &str) -> Option<&str> {
    message.strip_prefix("missing field `")?.split('`').next()
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map(|s| s.chars().count()).unwrap_or(0) + 1;
    (line, col)
}

fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.'
}

/// Reconstructs the dotted key an error span belongs to: the enclosing `[table]`, the line's
/// key, and for inline tables the inner key.
fn key_at(text: &str, start: usize, end: usize) -> Option<String> {
    let start = start.min(text.len());
    let line_start = text[..start].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let line_end = text[start..].find('\n').map(|i| start + i).unwrap_or(text.len());
    let line = &text[line_start..line_end];
    let col = start - line_start;
    let mut header = String::new();
    for previous in text[..line_start].lines().rev() {
        let p = previous.trim();
        if p.starts_with('[') {
            header = p.trim_matches(|c| c == '[' || c == ']').trim().to_string();
            break;
        }
    }
    if line.trim_start().starts_with('[') {
        return Some(line.trim().trim_matches(|c| c == '[' || c == ']').trim().to_string());
    }
    let spanned = text.get(start..end.min(line_end)).unwrap_or("").trim();
    let after = line[(end.min(line_end) - line_start).min(line.len())..].trim_start();
    let mut parts: Vec<String> = Vec::new();
    if !header.is_empty() {
        parts.push(header);
    }
    let first_key: String = line.trim_start().chars().take_while(|c| is_key_char(*c)).collect();
    // The span is a key itself (unknown field, duplicate key): name it.
    if !spanned.is_empty() && spanned.chars().all(is_key_char) && after.starts_with('=') {
        if first_key != spanned && !first_key.is_empty() {
            parts.push(first_key);
        }
        parts.push(spanned.to_string());
        return Some(parts.join("."));
    }
    if !first_key.is_empty() {
        parts.push(first_key.clone());
    }
    // An inline table: the nearest `key =` left of the span is the inner key.
    if let Some(eq) = line[..col].rfind('=') {
        let inner: String =
            line[..eq].trim_end().chars().rev().take_while(|c| is_key_char(*c)).collect::<Vec<_>>().into_iter().rev().collect();
        if !inner.is_empty() && inner != first_key {
            parts.push(inner);
        }
    }
    if parts.is_empty() {
        None
    } else {
        Some(parts.join("."))
    }
}

/// Finds `key = …` inside `[section]` (the `index`-th `[[section]]` for arrays of tables) and
/// returns its 1-based line and column; falls back to the section header, then line 1.
fn locate(text: &str, section: &str, index: Option<usize>, key: &str) -> (usize, usize) {
    let mut current = String::new();
    let mut occurrence: usize = 0;
    let mut header_pos: Option<(usize, usize)> = None;
    for (n, raw_line) in text.lines().enumerate() {
        let line = raw_line.trim_start();
        if line.starts_with('[') {
            let name = line.trim_end().trim_matches(|c| c == '[' || c == ']').trim().to_string();
            if name == section && line.starts_with("[[") {
                occurrence += 1;
            }
            current = name;
            if current == section && (index.is_none() || Some(occurrence - 1) == index) {
                header_pos.get_or_insert((n + 1, 1));
            }
            continue;
        }
        let in_section = current == section && (index.is_none() || occurrence.checked_sub(1) == index);
        if in_section && line.starts_with(key) && line[key.len()..].trim_start().starts_with('=') {
            return (n + 1, raw_line.len() - line.len() + 1);
        }
    }
    header_pos.unwrap_or((1, 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        match Scenario::parse(text, Path::new("s.toml")) {
            Ok(_) => panic!("expected an error for:\n{text}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn errors_name_file_line_column_and_key() {
        let cases: &[(&str, &str)] = &[
            ("[tasks]\ncount = 2\nbogus = 1\n", "s.toml:3:1: key `tasks.bogus`"),
            ("[tasks]\ncount = 2\n[timing]\nsubagent_ms = -5\n", "s.toml:4:15: key `timing.subagent_ms`"),
            ("[tasks]\ncount = 2\n[conductor]\nreview_ms = { kind = \"uniform\", min = 9, max = 3 }\n", "key `conductor.review_ms`"),
            ("[tasks]\ncount = 2\n[timing]\npause_poll_ms = 0\n", "s.toml:4:17: key `timing.pause_poll_ms`: must be positive"),
            ("[tasks]\ncount = = 2\n", "s.toml:2:"),
            ("[tasks]\ncount = 2\ncheckpoints = [5]\n", "s.toml:3:1: key `tasks.checkpoints`"),
            ("[tasks]\ncount = 2\n[[tasks.custom]]\ntask = 3\n", "s.toml:4:1: key `tasks.custom.task`: task 3 does not exist"),
            ("[run]\nepoch = \"noon\"\n[tasks]\ncount = 1\n", "s.toml:2:9: key `run.epoch`"),
            ("[timing]\nstatement_ms = 1\n", "s.toml:1:1: key `tasks`: missing field `tasks`"),
            ("[tasks]\nsteps = 3\n", "key `tasks.count`: missing field `count`"),
        ];
        for (text, expected) in cases {
            let message = err(text);
            assert!(message.contains(expected), "expected `{expected}` in `{message}`");
            assert!(message.starts_with("invalid input: s.toml"), "{message}");
        }
    }

    #[test]
    fn defaults_and_custom_tasks_build_plans() {
        let s = Scenario::parse(
            "[tasks]\ncount = 3\nsteps = 5\ncheckpoints = [2, 4]\n[[tasks.custom]]\ntask = 2\nsteps = 3\n",
            Path::new("x/demo.toml"),
        )
        .unwrap();
        assert_eq!(s.name, "demo");
        assert_eq!(s.tasks.len(), 3);
        assert_eq!((s.tasks[0].task_id.as_str(), s.tasks[0].steps, s.tasks[0].checkpoints.clone()), ("task-01", 5, vec![2, 4]));
        assert_eq!((s.tasks[1].steps, s.tasks[1].checkpoints.clone()), (3, vec![2]));
        assert_eq!(s.timing.heartbeat_refresh_s, 480);
    }
}
