//! The scenario document as TOML: its top-level shape and the sections that set up a run
//! (`[run]`, `[timing]`, `[tasks]`, `[protocol]`, `[budgets]`, `[expect]`), with their defaults.
//! The sections that shape the actors are in `actors.rs`, `[faults]` in `faults.rs`. Every key
//! is documented in scenarios/README.md; unknown keys are errors.

use serde::Deserialize;

use super::actors::{ConductorSection, ContextSection, SubagentsSection};
use super::deserialize::{epoch, positive_i64, positive_u64, positive_u64_opt};
use super::faults::FaultsSection;
use super::schedule::ScheduleSection;
use super::verification::VerificationSection;
use crate::base::clock::parse_utc;
use crate::base::dist::Dist;

/// The whole file, as read; `Scenario::parse` validates it and builds the `Scenario`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ScenarioFile {
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub run: RunSection,
    #[serde(default)]
    pub timing: TimingSection,
    #[serde(default)]
    pub conductor: ConductorSection,
    #[serde(default)]
    pub context: ContextSection,
    #[serde(default)]
    pub subagents: SubagentsSection,
    #[serde(default)]
    pub verification: VerificationSection,
    #[serde(default)]
    pub faults: FaultsSection,
    #[serde(default)]
    pub budgets: BudgetsSection,
    #[serde(default)]
    pub expect: ExpectSection,
    pub tasks: TasksSection,
    #[serde(default)]
    pub protocol: ProtocolSection,
    pub schedule: Option<ScheduleSection>,
    /// `[corpus]`: a regression-corpus entry's fingerprint (sim/campaign/corpus.rs reads and
    /// checks it; a run ignores it).
    #[allow(dead_code)]
    pub corpus: Option<CorpusSection>,
}

/// How a corpus entry failed when `shrink --into` wrote it: the first failing rule, at the
/// statement, run by the role (`S1`, `conductor`); `-` for a violation judged at no statement.
#[derive(Clone, Debug, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CorpusSection {
    pub rule: String,
    pub statement: String,
    pub actor: String,
    /// Where the failure was found: the scenario, seed and profile it was shrunk from.
    #[serde(default)]
    pub found: String,
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
    /// SQLite steps one protocol statement may take before it is stopped as never ending
    /// (sim/world/db/step_limit.rs).
    #[serde(deserialize_with = "positive_u64")]
    pub sql_steps_max: u64,
    /// Bytes comms.db may grow to; a statement that would grow it further ends the run in an
    /// input error naming it (issue 41).
    #[serde(deserialize_with = "positive_u64")]
    pub db_bytes_max: u64,
    /// Bytes one string or blob (a value of a row) may hold, likewise.
    #[serde(deserialize_with = "positive_u64")]
    pub value_bytes_max: u64,
}

/// The default `run.db_bytes_max`: the largest shipped run (fleet-day) ends below 10 MB; a
/// GiB is far past any run of the protocol and fits two jobs in this machine's memory.
pub const DEFAULT_DB_BYTES_MAX: u64 = 1 << 30;

/// The default `run.value_bytes_max`: the protocol's values are ids, states, times and short
/// message bodies; 16 MiB is far past them.
pub const DEFAULT_VALUE_BYTES_MAX: u64 = 16 << 20;

/// The default `run.sql_steps_max`: the protocol's statements take a few thousand steps on a
/// fleet's tables; a hundred million is seconds of one core.
pub const DEFAULT_STEPS_MAX: u64 = 100_000_000;

impl Default for RunSection {
    fn default() -> RunSection {
        RunSection {
            seed: 1,
            epoch_unix_ms: parse_utc("2026-01-05 09:00:00").expect("valid default epoch"),
            sim_time_max_ms: 24 * 3_600_000,
            events_max: 10_000_000,
            sql_steps_max: DEFAULT_STEPS_MAX,
            db_bytes_max: DEFAULT_DB_BYTES_MAX,
            value_bytes_max: DEFAULT_VALUE_BYTES_MAX,
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
    /// Re-running one failing test (000 "Flaky Test Handling": "Re-run the same test 3
    /// times"); the seeds give no figure.
    pub test_rerun_ms: Dist,
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
    /// A bootstrap's own work after the claim: reading the instruction file, creating the
    /// temp/ files (000 "Example: Bootstrap & First Execution", Summary: "Bootstrap takes ~5
    /// minutes"); a successor's "full bootstrap" too (000 "Mid-Session Resumption Protocol" 1).
    /// 0 by default, the variant `bootstrap-5min` sets 4-6 minutes (docs/protocol.md N18).
    pub bootstrap_ms: Dist,
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
            test_rerun_ms: Dist::uniform(10_000, 60_000),
            background_poll_ms: 15_000,
            background_max_iterations: 500,
            pause_poll_ms: 10_000,
            heartbeat_refresh_s: 480,
            pause_timeout_ms: 900_000,
            rework_ms: Dist::uniform(60_000, 300_000),
            handoff_ms: Dist::uniform(30_000, 120_000),
            bootstrap_ms: Dist::Const(0),
            stop_hook_retry_ms: 5_000,
        }
    }
}

/// `[tasks]`: the plan every task follows, and `[[tasks.custom]]` for the exceptions.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TasksSection {
    #[serde(deserialize_with = "positive_u64")]
    pub count: u64,
    #[serde(default = "default_steps", deserialize_with = "positive_u64")]
    pub steps: u64,
    #[serde(default = "default_subagents")]
    pub subagents_per_step: u64,
    /// Subagents of each step, one number per step; replaces `subagents_per_step`.
    #[serde(default)]
    pub step_agents: Option<Vec<u64>>,
    #[serde(default = "default_checkpoints")]
    pub checkpoints: Vec<u64>,
    #[serde(default)]
    pub custom: Vec<TaskCustom>,
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

/// One task's own plan; what it leaves out comes from `[tasks]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TaskCustom {
    pub task: u64,
    #[serde(default, deserialize_with = "positive_u64_opt")]
    pub steps: Option<u64>,
    pub subagents_per_step: Option<u64>,
    pub step_agents: Option<Vec<u64>>,
    pub checkpoints: Option<Vec<u64>>,
}

/// `[protocol]`: the scenario's own SQL file, its protocol profile and the variants it names.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ProtocolSection {
    pub sql: Option<String>,
    /// A profile of sim/vocab/profile.rs (`seeds` when absent); `--protocol` replaces it.
    pub profile: Option<String>,
    #[serde(default)]
    pub variants: Vec<String>,
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
