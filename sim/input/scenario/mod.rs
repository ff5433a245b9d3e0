//! Scenario files: TOML, every key documented in scenarios/README.md with its default and
//! the seed section it comes from. Unknown keys are errors; every error names the file, the
//! line, the column and the key.
//!
//! `file.rs`, `actors.rs` and `faults.rs` hold the sections as read, `deserialize.rs` the range
//! checks of single values, `plan.rs` the task plans, `validate.rs` the checks across values and
//! `locate.rs` the `file:line:col: key` of every error. A scenario names its protocol variants
//! but does not apply them: `crate::input::variant::with_variants` does, before a run.

mod actors;
mod deserialize;
mod faults;
mod file;
pub mod identity;
mod locate;
mod magnitude;
pub use magnitude::MAX_MAGNITUDE;
mod plan;
mod schedule;
mod session_cap;
pub use session_cap::session_cap;
mod validate;
mod verification;

use std::path::{Path, PathBuf};

pub use self::actors::{
    ClaimBlockedReply, ConductorSection, ContextReply, ContextSection, Emergency, EmergencyKind, ErrorReply, ExitRequest, ReviewAnswer,
    ScriptedAnswer, SubagentScript, SubagentsSection,
};
pub use self::faults::{
    add_point_fault, ConductorCrash, DoubleLaunch, FaultsSection, LockModel, Odds, ScriptedFault, Window, HANG_MS_DEFAULT,
};
pub use self::file::{BudgetsSection, CorpusSection, ExpectSection, RunSection, TimingSection, DEFAULT_STEPS_MAX};
pub use self::plan::TaskPlan;
pub use self::schedule::ScheduleSection;
pub use self::verification::{Finding, VerificationScript, VerificationSection};
pub use crate::vocab::task_id;

use self::file::ScenarioFile;
use self::locate::{line_col, toml_error};
use crate::base::error::{Error, Result};

/// A loaded, validated scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The file stem: `scenarios/quickstart.toml` → `quickstart`.
    pub name: String,
    pub path: PathBuf,
    /// The SHA-256 of the file's text (`identity::content_sha256`) when it was read from its
    /// file (`load`), which the trace's first row records (C120); `None` when parsed from a
    /// text in memory (`parse`: explore's and swarm's documents, tests).
    pub text_sha256: Option<String>,
    pub description: String,
    pub run: RunSection,
    pub timing: TimingSection,
    pub conductor: ConductorSection,
    pub context: ContextSection,
    pub subagents: SubagentsSection,
    pub verification: VerificationSection,
    pub faults: FaultsSection,
    pub budgets: BudgetsSection,
    pub expect: ExpectSection,
    /// `[schedule]`: the choices at the run's decision points, if the file names any.
    pub schedule: Option<ScheduleSection>,
    pub settings: ProtocolSettings,
    pub tasks: Vec<TaskPlan>,
    /// A `.sql` file whose named entries replace the default protocol's (resolved path).
    pub protocol_sql: Option<PathBuf>,
    /// `--sql FILE` of the command line (as given): its entries replace those of the default
    /// protocol and of `protocol_sql` (applied after it), and the replay command names it.
    pub sql_override: Option<PathBuf>,
    /// The protocol profile (sim/vocab/profile.rs): `[protocol] profile`, `seeds` when the
    /// file names none, or `--protocol`'s, which replaces it (`with_profile`).
    pub profile: String,
    /// `--protocol NAME` of the command line, if any: the replay command and saved failures
    /// name it, since the file alone does not say it.
    pub profile_override: Option<String>,
    /// The conductor profile (sim/input/conductor_profile.rs): `[conductor] profile`,
    /// `invented` when the file names none, or `--conductor`'s (`with_conductor`). Applied with
    /// the variants (`crate::input::variant::with_variants`).
    pub conductor_profile: String,
    /// `--conductor NAME` of the command line, if any (the replay command names it).
    pub conductor_override: Option<String>,
    /// The `[conductor]` keys the file sets: a profile leaves them as the file has them.
    pub conductor_keys: Vec<String>,
    /// The protocol variants, in order. Loaded: those `[protocol] variants` lists, recorded and
    /// not applied. From `crate::input::variant::with_variants`: those applied (the scenario's own, then
    /// the extra ones, each once).
    pub variant_names: Vec<String>,
    /// SQL entries the applied variants override, as (origin, text), applied after `protocol_sql`.
    pub variant_sql: Vec<(String, &'static str)>,
    /// Whether `variant_names` are applied (settings, keys, `variant_sql`): only
    /// `crate::input::variant::with_variants` sets it.
    pub variants_applied: bool,
}

/// The readings of the seeds where they disagree (docs/protocol.md §3, D1–D16),
/// as settings a variant (sim/input/variant.rs) changes. Defaults follow seed 000.
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
    /// #12: escalate deviations on > 2 (000 text, 003) instead of REF-6 (2+ Medium or 1+
    /// High); read by the musician (sim/actors/musician/escalation.rs) and its resumption assessment.
    pub escalate_over_two: bool,
    /// The conductor hands a stale task over on its last poll instead of re-reading the row
    /// first (002 "Guard Clause Rules" implies the re-read; variant `act-on-poll`).
    pub act_on_poll: bool,
    /// The conductor relaunches a task whose launched session never claimed, and hands over a
    /// fix proposed to a session that went silent (the simulator's policy where the seeds are
    /// silent; variant `no-relaunch-unclaimed` turns it off).
    pub relaunch_unclaimed: bool,
    /// #13: the 5th failure's terminal `exited` follows a final message (000 "Terminal Write
    /// Atomicity") or is written alone (004 "Terminal Failure (5th retry)").
    pub terminal_error_message: bool,
    /// #14: a clean exit stops the background watcher first (000 "Clean Exit Protocol" 2) or
    /// keeps it, and the heartbeat, until the terminal write (000 "Reference: Watcher Protocol
    /// Detail": a watcher runs "until terminal state").
    pub watcher_until_exit: bool,
    /// #15: every conductor answer names the request it replies to (`In reply to: #<id>`), a
    /// musician acts only on a reply to one of its own requests, and the conductor answers
    /// per request (variant `replies-cite-request`; the seeds' replies name none).
    pub replies_cite_request: bool,
    /// #16: `exit_requested` on a task row asks its session to hand off and exit (000 and 002
    /// "States the Conductor Sets"), or is only the conductor's own end state (004 "Conductor
    /// States (task-00)") and means nothing to a musician.
    pub exit_request_to_musician: bool,
    /// docs/protocol.md C32: the musician checks the ceiling before every piece of work and
    /// hands off below it without asking (variant `ceiling-before-work`, the simulator's
    /// earlier reading), or, as 000 says, evaluates after agents and asks the conductor.
    pub ceiling_before_work: bool,
    /// docs/protocol.md C50: before a piece of work that would cross the ceiling the musician
    /// escalates with its REF-3 estimates, then hands off (000 "Context Monitoring & Break
    /// Point Logic": "> 80% … escalate to conductor (must pause now)"); false under the
    /// variant `ceiling-after-agent` (C32's reading before issue 42: met after an agent).
    pub ceiling_escalates: bool,
    /// docs/protocol.md C51: a session that reads the conductor's hand-over of its own task
    /// stops at once and writes nothing more (000 "Background Watcher": the musician reads the
    /// message and "decides whether to interrupt current work"); false under the variant
    /// `messages-logged-only` (C23 before issue 42: such a message is logged, and work goes on).
    pub reads_handover: bool,
    /// docs/protocol.md C180: a session woken late whose watcher has not polled the messages
    /// since the wait's due time polls them itself before it writes; false under the variant
    /// `no-wake-poll` (000 "Background Watcher" read literally: the musician reads messages
    /// only when its watcher exits).
    pub wake_poll: bool,
    /// docs/protocol.md C21: a pause TIMEOUT is an error report that counts against the five
    /// retries (`retry_count + 1`), or (variant `timeout-not-counted`) an error state with its
    /// message that counts none.
    pub timeout_counts_retry: bool,
    /// docs/protocol.md C25: 003's "recent" HANDOFF is the one the previous holder wrote, or
    /// (variant `handoff-stale-by-age`) one written at most `conductor.staleness_s` before the
    /// successor's claim.
    pub handoff_stale_by_age: bool,
    /// D16: a session asked to exit ends as 000 "Clean Exit Protocol" 7 says, writing `exited`
    /// after its final message, or (variant `exit-request-no-state`) leaves the row
    /// `exit_requested` with its final message as its last write.
    pub exit_request_no_state: bool,
    /// docs/protocol.md C23/C41: an urgent emergency stops the work until the conductor's
    /// next message (000 "Emergency Messages", "Background Watcher"), or (variant
    /// `emergency-stop-escalates`) is reported as an `error` and answered like one.
    pub emergency_stop_escalates: bool,
    /// docs/protocol.md C42: 000's ">2 tasks in `working` state" counts every other task in
    /// `working`, or (variant `working-count-stale-only`) only those whose heartbeat is stale.
    pub working_count_stale_only: bool,
    /// docs/protocol.md C20: after the completion review's approval the musician writes
    /// `resume_working` before `complete` (002's table), or (variant `complete-from-approved`)
    /// `complete` straight from `review_approved` (000 "Completion Flow" 5).
    pub complete_from_approved: bool,
    /// Issue 28, variant `durable-cursor`: every read of new conductor messages is an atomic
    /// receipt (`send_receipt`), so a successor starts after the last receipt of the session
    /// before it instead of re-handling what that session read (000 keeps the cursor in memory).
    pub durable_cursor: bool,
    /// Issue 28, variant `release-stale`: the conductor's hand-over of a silent session also
    /// clears the row's `session_id` (`release_task`), so under fencing the replaced session's
    /// every write changes nothing from the hand-over on, not only from its successor's claim.
    pub release_stale: bool,
    /// Issue 28, variant `patient-relaunch`: before launching a task's next session because
    /// the launched one never claimed, the conductor reads the row again (its poll may be a
    /// review or several old); a row claimed since then is left alone.
    pub confirm_unclaimed: bool,
    /// Issue 28, variant `uncap-lost-sessions`: a session the conductor replaces because it
    /// went silent (a stale heartbeat, a claim overdue) does not count against C8's cap of
    /// `conductor.sessions_per_task_max` sessions; only sessions that ended by a write of
    /// their own do. Faults then cannot exhaust the cap during the fault phase.
    pub uncap_lost_sessions: bool,
    /// Issue 28, variant `retry-failed-reads`: a read (a statement that writes nothing) that
    /// fails with SQLITE_IOERR is tried again, a second apart, as SQLITE_BUSY is (C13), instead
    /// of ending the actor (C43): a read changed nothing, so trying it again is always safe.
    pub retry_failed_reads: bool,
    /// Issue 28, variant `lease-self-check` (sim/actors/lease.rs): a session ends itself,
    /// writing nothing, once its own last heartbeat is older than its lease, shorter than
    /// `conductor.staleness_s`: a session that wakes from a hang past it may have been handed over.
    pub lease_self_check: bool,
    /// Issue 28, variant `checked-transitions` (scenarios/variants/checked-transitions.sql): the
    /// musician's `set_error`, `set_escalation`, `set_context_warning` and `mark_exited` also
    /// check the row's state, so a conductor answer that lands between a pause TIMEOUT (or a
    /// clean exit's start) and the write is not overwritten; the session acts on it instead.
    pub checked_transitions: bool,
    /// Issue 48, variant `claim-blocked-owner-alive`: a `claim_blocked` record is forgotten
    /// when the conductor answers the task (its owner asked, so it is alive), and the
    /// intervention leaves a claimable row alone while the session it names is unhandled and
    /// its heartbeat fresh (docs/protocol.md C80).
    pub claim_blocked_owner_alive: bool,
    /// Issue 48, variant `checked-answers` (besides its SQL): the conductor asks no session to
    /// exit once it has approved its task's completion (docs/protocol.md C83).
    pub checked_answers: bool,
    /// Issue 48, variant `release-asked-exit`: the hand-over of a session asked to exit that
    /// went silent releases the row (`release_task`), as `release-stale` does for a stale one
    /// (docs/protocol.md C81).
    pub release_asked_exit: bool,
    /// Issue 43, variant `conductor-busy-backoff` (docs/protocol.md C62): the conductor retries
    /// a statement answered SQLITE_BUSY with backoff (1 s, 2 s, 4 s, … at most 60 s between
    /// tries) for as long as it takes, instead of ending after 4 BUSY (C43).
    pub conductor_busy_backoff: bool,
}

impl Default for ProtocolSettings {
    fn default() -> ProtocolSettings {
        ProtocolSettings {
            state_first: false,
            detect_by_timestamp: false,
            relaunch_exited: true,
            implied_transitions: true,
            escalate_over_two: false,
            act_on_poll: false,
            relaunch_unclaimed: true,
            terminal_error_message: true,
            watcher_until_exit: false,
            replies_cite_request: false,
            exit_request_to_musician: true,
            ceiling_before_work: false,
            ceiling_escalates: true,
            reads_handover: true,
            wake_poll: true,
            timeout_counts_retry: true,
            handoff_stale_by_age: false,
            exit_request_no_state: false,
            emergency_stop_escalates: false,
            working_count_stale_only: false,
            complete_from_approved: false,
            durable_cursor: false,
            release_stale: false,
            confirm_unclaimed: false,
            uncap_lost_sessions: false,
            retry_failed_reads: false,
            lease_self_check: false,
            checked_transitions: false,
            claim_blocked_owner_alive: false,
            checked_answers: false,
            release_asked_exit: false,
            conductor_busy_backoff: false,
        }
    }
}

impl Scenario {
    pub fn load(path: &Path) -> Result<Scenario> {
        let bytes = crate::base::input_file::read(path, "scenario")?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let valid = e.utf8_error().valid_up_to();
            let (line, col) = line_col(&String::from_utf8_lossy(&e.as_bytes()[..valid]), valid);
            Error::input(format!("{}:{line}:{col}: not UTF-8 text (byte {valid}); a scenario is a TOML file", path.display()))
        })?;
        let mut scenario = Scenario::parse(&text, path)?;
        scenario.text_sha256 = Some(identity::content_sha256(&text));
        Ok(scenario)
    }

    /// Reads `text` as the scenario file `path` (which names it and resolves its SQL file):
    /// the TOML, then the task plans, then the checks across sections.
    pub fn parse(text: &str, path: &Path) -> Result<Scenario> {
        let file = path.display().to_string();
        let raw: ScenarioFile = toml::from_str(text).map_err(|e| toml_error(&file, text, &e))?;
        magnitude::check(&file, text)?;
        let tasks = plan::task_plans(&raw.tasks).map_err(|p| p.into_error(&file, text))?;
        validate::check(&raw, &tasks).map_err(|p| p.into_error(&file, text))?;
        let mut scenario = Scenario::from_file(raw, tasks, path);
        scenario.conductor_keys = conductor_keys(text);
        Ok(scenario)
    }

    fn from_file(raw: ScenarioFile, tasks: Vec<TaskPlan>, path: &Path) -> Scenario {
        let protocol_sql = raw.protocol.sql.as_ref().map(|p| path.parent().unwrap_or(Path::new(".")).join(p));
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("scenario").to_string();
        let conductor_profile =
            raw.conductor.profile.clone().unwrap_or_else(|| crate::input::conductor_table::DEFAULT_CONDUCTOR.to_string());
        Scenario {
            name,
            path: path.to_path_buf(),
            text_sha256: None,
            description: raw.description,
            run: raw.run,
            timing: raw.timing,
            conductor: raw.conductor,
            context: raw.context,
            subagents: raw.subagents,
            verification: raw.verification,
            faults: raw.faults,
            budgets: raw.budgets,
            expect: raw.expect,
            schedule: raw.schedule,
            settings: ProtocolSettings::default(),
            tasks,
            protocol_sql,
            sql_override: None,
            profile: raw.protocol.profile.unwrap_or_else(|| crate::vocab::DEFAULT_PROFILE.to_string()),
            profile_override: None,
            conductor_profile,
            conductor_override: None,
            conductor_keys: Vec::new(),
            variant_names: raw.protocol.variants,
            variant_sql: Vec::new(),
            variants_applied: false,
        }
    }

    /// The scenario with `--sql FILE` over its `[protocol] sql` (a new value, made before the
    /// plan: the loaded scenario is not changed).
    pub fn with_sql(&self, sql: Option<&Path>) -> Scenario {
        let mut scenario = self.clone();
        if let Some(sql) = sql {
            scenario.sql_override = Some(sql.to_path_buf());
        }
        scenario
    }

    /// The scenario with `--protocol NAME` over its `[protocol] profile` (a new value, made
    /// before the plan, as `with_sql`); an unknown name is bad input listing the profiles. A
    /// scenario whose variants are applied already keeps its profile: it was applied with them.
    pub fn with_profile(&self, profile: Option<&str>) -> Result<Scenario> {
        let mut scenario = self.clone();
        if let Some(name) = profile {
            crate::vocab::check_profile_name(name).map_err(|m| Error::input(format!("--protocol: {m}")))?;
            if self.variants_applied && self.profile != name {
                return Err(Error::harness(format!(
                    "{}: profile {name} asked of a scenario whose variants are applied",
                    self.path.display()
                )));
            }
            scenario.profile = name.to_string();
            scenario.profile_override = Some(name.to_string());
        }
        Ok(scenario)
    }

    /// The scenario with `--conductor NAME` over its `[conductor] profile` (as `with_profile`),
    /// which replaces the file's own conductor keys too (sim/input/conductor_profile.rs); the
    /// profile the file names already is no override. An unknown name is bad input listing the
    /// profiles. A scenario whose variants are applied already keeps its conductor.
    pub fn with_conductor(&self, conductor: Option<&str>) -> Result<Scenario> {
        let mut scenario = self.clone();
        if let Some(name) = conductor.filter(|name| *name != self.conductor_profile || self.conductor_override.is_some()) {
            crate::input::conductor_table::check_conductor_name(name).map_err(|m| Error::input(format!("--conductor: {m}")))?;
            if self.variants_applied && self.conductor_profile != name {
                return Err(Error::harness(format!(
                    "{}: conductor {name} asked of a scenario whose variants are applied",
                    self.path.display()
                )));
            }
            scenario.conductor_profile = name.to_string();
            scenario.conductor_override = Some(name.to_string());
        }
        Ok(scenario)
    }

    /// The SQL files whose entries replace the defaults, in the order they apply: the
    /// scenario's `[protocol] sql`, then `--sql` (a later entry replaces an earlier one of the
    /// same name). Layered, so a scenario that needs its own statements (guard-block) keeps
    /// them when a user adds `--sql`.
    pub fn sql_files(&self) -> impl Iterator<Item = &Path> {
        self.protocol_sql.iter().chain(&self.sql_override).map(PathBuf::as_path)
    }

    /// The scripted behaviour of one subagent, if any.
    pub fn subagent_script(&self, task: u64, step: u64, agent: u64) -> Option<&SubagentScript> {
        self.subagents.script.iter().find(|s| s.task == task && s.step == step && s.agent == agent)
    }

    /// The scripted finding of the first verification at `step` of `task`'s session `session`.
    pub fn verification_script(&self, task: u64, step: u64, session: u32) -> Option<Finding> {
        self.verification.script.iter().find(|s| s.task == task && s.step == step && s.session == session).map(|s| s.finding)
    }

    /// The scripted answer to the `review`-th review request of `task`, if any.
    pub fn scripted_answer(&self, task: u64, review: u64) -> Option<ReviewAnswer> {
        self.conductor.answers.iter().find(|a| a.task == task && a.review == review).map(|a| a.answer)
    }

    /// How long the conductor waits for a launched session's claim: the key, or the
    /// staleness window when it is unset.
    pub fn claim_overdue_s(&self) -> i64 {
        self.conductor.claim_overdue_s.unwrap_or(self.conductor.staleness_s)
    }

    /// How often the conductor beats while it reviews (docs/protocol.md C38): the key, or the
    /// musicians' refresh interval when it is unset; 0 for none.
    pub fn review_heartbeat_ms(&self) -> i64 {
        self.conductor.review_heartbeat_ms.unwrap_or(self.timing.heartbeat_refresh_s.saturating_mul(1000))
    }
}

/// The keys of the file's `[conductor]` table (the file parsed already, so it is TOML).
fn conductor_keys(text: &str) -> Vec<String> {
    let table: toml::Table = text.parse().unwrap_or_default();
    match table.get("conductor") {
        Some(toml::Value::Table(c)) => c.keys().cloned().collect(),
        _ => Vec::new(),
    }
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
            ("[tasks]\ncount = 2\n[conductor]\nclaim_overdue_s = 0\n", "s.toml:4:19: key `conductor.claim_overdue_s`: must be positive"),
            ("[tasks]\ncount = = 2\n", "s.toml:2:"),
            ("[tasks]\ncount = 2\ncheckpoints = [5]\n", "s.toml:3:1: key `tasks.checkpoints`"),
            ("[tasks]\ncount = 2\n[[tasks.custom]]\ntask = 3\n", "s.toml:4:1: key `tasks.custom.task`: task 3 does not exist"),
            ("[run]\nepoch = \"noon\"\n[tasks]\ncount = 1\n", "s.toml:2:9: key `run.epoch`"),
            ("[timing]\nstatement_ms = 1\n", "s.toml:1:1: key `tasks`: missing field `tasks`"),
            ("[tasks]\nsteps = 3\n", "key `tasks.count`: missing field `count`"),
            ("[tasks]\ncount = 1\n[protocol]\nvariants = [\"fencng\"]\n", "s.toml:4:1: key `protocol.variants`: unknown variant `fencng`"),
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

    #[test]
    fn the_variants_of_a_file_are_recorded_not_applied() {
        let text = "[tasks]\ncount = 1\n[protocol]\nsql = \"extra.sql\"\nvariants = [\"polls-004\", \"fencing\"]\n";
        let s = Scenario::parse(text, Path::new("x/demo.toml")).unwrap();
        assert_eq!(s.variant_names, ["polls-004", "fencing"]);
        assert!(!s.variants_applied && s.variant_sql.is_empty());
        assert_eq!((s.timing.background_poll_ms, &s.settings), (15_000, &ProtocolSettings::default()));
        assert_eq!(s.protocol_sql.as_deref(), Some(Path::new("x/extra.sql")));
    }
}
