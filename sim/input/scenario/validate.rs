//! The checks that need more than one value: references to tasks, sessions, steps and agents
//! that must exist, thresholds that must be ordered, statements, rules and variants that must be
//! known. Each section has its own function; `check` runs them in the order a scenario file is
//! refused at, and the first problem wins. Ranges of single values are refused earlier, while the
//! TOML is read (`deserialize.rs`).

use super::actors::{ConductorSection, ContextSection, SubagentsSection};
use super::faults::{ConductorCrash, FaultsSection, ScriptedFault};
use super::file::{ExpectSection, ProtocolSection, ScenarioFile, TimingSection};
use super::locate::Problem;
use super::plan::TaskPlan;
use super::verification::VerificationSection;
use crate::vocab::{Point, RuleId};

type Checked = Result<(), Problem>;

/// Every check of a file whose tasks are already planned (`plan::task_plans`).
pub(super) fn check(raw: &ScenarioFile, plans: &[TaskPlan]) -> Checked {
    let count = raw.tasks.count;
    simulated_span(&raw.run)?;
    conductor_answers(&raw.conductor, count)?;
    emergencies(&raw.conductor, count)?;
    exit_requests(&raw.conductor, count)?;
    subagent_scripts(&raw.subagents, plans, count)?;
    let sessions_max =
        super::session_cap::session_cap(raw.protocol.profile.as_deref(), &raw.protocol.variants, raw.conductor.sessions_per_task_max);
    verification_scripts(&raw.verification, plans, count, sessions_max)?;
    context_thresholds(&raw.context)?;
    review_odds(&raw.conductor)?;
    error_reply_odds(&raw.conductor)?;
    heartbeat_refresh(&raw.timing, &raw.conductor)?;
    watcher_deaths(&raw.faults)?;
    scripted_faults(&raw.faults, count, sessions_max)?;
    double_launches(&raw.faults, count)?;
    missing_session_ids(&raw.faults, count)?;
    fleet_faults(&raw.faults, count)?;
    conductor_crashes(&raw.faults)?;
    expected_rules(&raw.expect)?;
    variant_names(&raw.protocol)?;
    profile_name(&raw.protocol)?;
    conductor_profile_name(&raw.conductor)
}

/// The run's last instant is one SQLite's date functions read: they end with year 9999, and
/// past it `datetime('now')` is NULL, so every age the protocol computes would be wrong.
fn simulated_span(run: &super::file::RunSection) -> Checked {
    let last = crate::base::clock::parse_utc("9999-12-31 23:59:59").expect("a valid instant");
    if run.epoch_unix_ms.saturating_add(run.sim_time_max_ms) <= last {
        return Ok(());
    }
    Err(Problem::at(
        "run",
        "sim_time_max_ms",
        format!("the run would end after 9999-12-31 23:59:59 (epoch + {} ms), where SQLite's date functions stop", run.sim_time_max_ms),
    ))
}

fn no_such_task(task: u64, count: u64) -> String {
    format!("task {task} does not exist: tasks.count is {count}")
}

fn names_a_task(task: u64, count: u64) -> bool {
    task != 0 && task <= count
}

/// `[[conductor.answers]]` answer a review of an existing task, counted from 1.
fn conductor_answers(conductor: &ConductorSection, count: u64) -> Checked {
    for (index, answer) in conductor.answers.iter().enumerate() {
        if !names_a_task(answer.task, count) {
            return Err(Problem::in_entry("conductor.answers", index, "task", no_such_task(answer.task, count)));
        }
        if answer.review == 0 {
            return Err(Problem::in_entry("conductor.answers", index, "review", "reviews are counted from 1".to_string()));
        }
    }
    Ok(())
}

/// `[[conductor.exit_requests]]` ask an existing task's session to exit.
fn exit_requests(conductor: &ConductorSection, count: u64) -> Checked {
    for (index, request) in conductor.exit_requests.iter().enumerate() {
        if !names_a_task(request.task, count) {
            return Err(Problem::in_entry("conductor.exit_requests", index, "task", no_such_task(request.task, count)));
        }
    }
    Ok(())
}

/// `[[conductor.emergencies]]` are sent to an existing task.
fn emergencies(conductor: &ConductorSection, count: u64) -> Checked {
    for (index, emergency) in conductor.emergencies.iter().enumerate() {
        if !names_a_task(emergency.task, count) {
            return Err(Problem::in_entry("conductor.emergencies", index, "task", no_such_task(emergency.task, count)));
        }
    }
    Ok(())
}

/// The plan of the task an entry (`section`, index) names, if it has the step the entry names.
fn plan_with_step<'a>(
    entry: (&'static str, usize),
    task: u64,
    step: u64,
    plans: &'a [TaskPlan],
    count: u64,
) -> Result<&'a TaskPlan, Problem> {
    let (section, index) = entry;
    let Some(plan) = (task >= 1).then(|| plans.get((task - 1) as usize)).flatten() else {
        return Err(Problem::in_entry(section, index, "task", no_such_task(task, count)));
    };
    if step == 0 || step > plan.steps {
        let message = format!("{} has steps 1..={}, not {step}", plan.task_id, plan.steps);
        return Err(Problem::in_entry(section, index, "step", message));
    }
    Ok(plan)
}

/// `[[subagents.script]]` names a step and an agent its task's plan has.
fn subagent_scripts(subagents: &SubagentsSection, plans: &[TaskPlan], count: u64) -> Checked {
    for (index, script) in subagents.script.iter().enumerate() {
        let plan = plan_with_step(("subagents.script", index), script.task, script.step, plans, count)?;
        if script.agent == 0 || script.agent > plan.agents_in(script.step) {
            let message =
                format!("{} has agents 1..={} in step {}, not {}", plan.task_id, plan.agents_in(script.step), script.step, script.agent);
            return Err(Problem::in_entry("subagents.script", index, "agent", message));
        }
    }
    Ok(())
}

/// `[[verification.script]]` names a step of its task's plan and a session that can exist
/// (below `sessions_max`, when the protocol has one: `session_cap.rs`).
fn verification_scripts(verification: &VerificationSection, plans: &[TaskPlan], count: u64, sessions_max: Option<u64>) -> Checked {
    for (index, script) in verification.script.iter().enumerate() {
        plan_with_step(("verification.script", index), script.task, script.step, plans, count)?;
        if let Some(max) = sessions_max.filter(|max| u64::from(script.session) > *max) {
            let message = format!("session S{} never exists: sessions are S1..S{max} {}", script.session, CAPPED);
            return Err(Problem::in_entry("verification.script", index, "session", message));
        }
    }
    Ok(())
}

/// Why a session past the cap never exists, and the protocol under which it can.
const CAPPED: &str =
    "(conductor.sessions_per_task_max; a protocol with variant `uncap-lost-sessions`, such as profile `repaired`, can have more)";

/// The context thresholds are ordered: evaluate, then proceed, then escalate.
fn context_thresholds(c: &ContextSection) -> Checked {
    if c.evaluate_at_pct <= c.proceed_below_pct && c.proceed_below_pct <= c.escalate_above_pct {
        return Ok(());
    }
    Err(Problem::at(
        "context",
        "proceed_below_pct",
        format!(
            "thresholds must be ordered evaluate_at_pct <= proceed_below_pct <= escalate_above_pct, got {} / {} / {}",
            c.evaluate_at_pct, c.proceed_below_pct, c.escalate_above_pct
        ),
    ))
}

/// A review is rejected, gets a fix or is approved: the first two odds leave room for the third.
fn review_odds(conductor: &ConductorSection) -> Checked {
    let odds = conductor.reject_probability + conductor.fix_probability;
    if odds > 1.0 {
        let message = format!("reject_probability + fix_probability must be at most 1, got {odds}");
        return Err(Problem::at("conductor", "fix_probability", message));
    }
    Ok(())
}

/// The three error-reply odds leave room for the corrected path (docs/protocol.md C40); a
/// heartbeat during reviews comes before a waiting musician would call the conductor down
/// (C38: 000 "Pause Watcher", the conductor's heartbeat "within 9 minutes").
fn error_reply_odds(conductor: &ConductorSection) -> Checked {
    // Named: the key at which the running sum passes 1 (the one to lower).
    let odds = [
        ("error_alternative_probability", conductor.error_alternative_probability),
        ("error_skip_probability", conductor.error_skip_probability),
        ("error_exit_request_probability", conductor.error_exit_request_probability),
    ];
    let mut sum = 0.0;
    for (key, p) in odds {
        sum += p;
        if sum > 1.0 {
            let message = format!(
                "error_alternative_probability + error_skip_probability + error_exit_request_probability must be at most 1, got {}",
                (sum * 1e6).round() / 1e6
            );
            return Err(Problem::at("conductor", key, message));
        }
    }
    let heartbeat_ms = conductor.review_heartbeat_ms.unwrap_or(0);
    if heartbeat_ms >= conductor.staleness_s.saturating_mul(1000) {
        let message = format!(
            "a heartbeat every {heartbeat_ms} ms during reviews lets the conductor's heartbeat pass the staleness threshold ({} s) a waiting musician applies to it; use less, or 0 for none",
            conductor.staleness_s
        );
        return Err(Problem::at("conductor", "review_heartbeat_ms", message));
    }
    Ok(())
}

/// Watchers refresh a heartbeat after more than one poll, and before the conductor calls it stale.
fn heartbeat_refresh(timing: &TimingSection, conductor: &ConductorSection) -> Checked {
    if timing.heartbeat_refresh_s >= conductor.staleness_s {
        return Err(Problem::at("timing", "heartbeat_refresh_s", format!(
            "the refresh threshold ({} s) must be below the conductor's staleness threshold ({} s): otherwise a live session is declared stale before its watcher refreshes (000 \"Design Rationale\": the 1-minute buffer)",
            timing.heartbeat_refresh_s, conductor.staleness_s
        )));
    }
    if timing.heartbeat_refresh_s * 1000 <= timing.background_poll_ms {
        return Err(Problem::at(
            "timing",
            "heartbeat_refresh_s",
            format!(
                "a refresh threshold of {} s is not longer than the background poll of {} ms: every poll would refresh",
                timing.heartbeat_refresh_s, timing.background_poll_ms
            ),
        ));
    }
    Ok(())
}

/// A watcher death happens at a time only: its watchers die between polls, not at one of
/// the session's statements (the session runs on; the seeds' watchers are processes of their
/// own). A crash and a hang take either kind of point.
fn watcher_deaths(faults: &FaultsSection) -> Checked {
    // An I/O error fails a statement: it has a point, not a time.
    if let Some(index) = faults.io_error.iter().position(|f| f.at_ms.is_some()) {
        let message =
            format!("entry {} of [[faults.io_error]] has `at_ms`: an I/O error fails a statement, so it takes `at` only", index + 1);
        return Err(Problem::in_entry("faults.io_error", index, "at_ms", message));
    }
    if let Some(index) = faults.watcher_death.iter().position(|f| f.at.is_some()) {
        let message = format!(
            "entry {} of [[faults.watcher_death]] has `at`: a watcher death takes `at_ms` only (a time, not a protocol point)",
            index + 1
        );
        return Err(Problem::in_entry("faults.watcher_death", index, "at", message));
    }
    Ok(())
}

/// `[[faults.crash]]`, `[[faults.hang]]` and `[[faults.watcher_death]]` hit a session that can
/// exist, at one time or protocol point.
fn scripted_faults(faults: &FaultsSection, count: u64, sessions_max: Option<u64>) -> Checked {
    let scripted = [
        ("faults.crash", &faults.crash),
        ("faults.hang", &faults.hang),
        ("faults.watcher_death", &faults.watcher_death),
        ("faults.io_error", &faults.io_error),
        ("faults.ambiguous_commit", &faults.ambiguous_commit),
    ];
    for (section, entries) in scripted {
        for (index, fault) in entries.iter().enumerate() {
            scripted_fault(section, index, fault, count, sessions_max)?;
        }
    }
    Ok(())
}

fn scripted_fault(section: &'static str, index: usize, fault: &ScriptedFault, count: u64, sessions_max: Option<u64>) -> Checked {
    let entry = index + 1;
    if !names_a_task(fault.task, count) {
        let message = format!("entry {entry} of [[{section}]] names task {}, which does not exist: tasks.count is {count}", fault.task);
        return Err(Problem::in_entry(section, index, "task", message));
    }
    if fault.session == 0 {
        let message = format!("entry {entry} of [[{section}]] names session S0 of task {}: sessions are numbered from S1", fault.task);
        return Err(Problem::in_entry(section, index, "session", message));
    }
    if let Some(max) = sessions_max.filter(|max| u64::from(fault.session) > *max) {
        let message = format!(
            "entry {entry} of [[{section}]] names session S{} of task {}, which never exists: sessions are S1..S{max} {CAPPED}",
            fault.session, fault.task
        );
        return Err(Problem::in_entry(section, index, "session", message));
    }
    fault_time_or_point(section, index, fault.at_ms, fault.at)
}

/// Exactly one of `at_ms` and `at` (a point is read as one, `crate::vocab::Point`, so an
/// unknown statement was refused with the TOML).
fn fault_time_or_point(section: &'static str, index: usize, at_ms: Option<i64>, at: Option<Point>) -> Checked {
    if at_ms.is_none() == at.is_none() {
        let message = format!(
            "entry {} of [[{section}]] needs exactly one of `at_ms` or `at` (\"before:STATEMENT\" / \"after:STATEMENT\")",
            index + 1
        );
        return Err(Problem::in_entry(section, index, "at", message));
    }
    Ok(())
}

/// `[[faults.conductor_crash]]` hits conductor session 1, 2, … once, at one time or point.
fn conductor_crashes(faults: &FaultsSection) -> Checked {
    for (index, ConductorCrash { session, at_ms, at, .. }) in faults.conductor_crash.iter().enumerate() {
        if *session == 0 {
            let message = format!("entry {} of [[faults.conductor_crash]]: conductor sessions are counted from 1", index + 1);
            return Err(Problem::in_entry("faults.conductor_crash", index, "session", message));
        }
        fault_time_or_point("faults.conductor_crash", index, *at_ms, *at)?;
    }
    Ok(())
}

/// `[[faults.double_launch]]` doubles an existing task's first session.
fn double_launches(faults: &FaultsSection, count: u64) -> Checked {
    for (index, twin) in faults.double_launch.iter().enumerate() {
        if !names_a_task(twin.task, count) {
            return Err(Problem::in_entry("faults.double_launch", index, "task", no_such_task(twin.task, count)));
        }
    }
    Ok(())
}

/// `[[faults.missing_session_id]]` names an existing task and a session from 1.
fn missing_session_ids(faults: &FaultsSection, count: u64) -> Checked {
    for (index, fault) in faults.missing_session_id.iter().enumerate() {
        if !names_a_task(fault.task, count) {
            return Err(Problem::in_entry("faults.missing_session_id", index, "task", no_such_task(fault.task, count)));
        }
        if fault.session == 0 {
            return Err(Problem::in_entry("faults.missing_session_id", index, "session", "sessions count from 1".to_string()));
        }
    }
    Ok(())
}

/// The faults agent fleets report (issue 44): an ambiguous commit follows a statement that ran
/// (`at = "after:…"`, no `at_ms`); a poll-error window ends after it starts; a dead heartbeat
/// names an existing task and a session from 1.
fn fleet_faults(faults: &FaultsSection, count: u64) -> Checked {
    for (index, fault) in faults.ambiguous_commit.iter().enumerate() {
        if fault.at.is_none_or(|at| at.when != crate::vocab::When::After) {
            let message = format!(
                "entry {} of [[faults.ambiguous_commit]] needs `at = \"after:STATEMENT\"`: the statement commits, then its caller is told it failed",
                index + 1
            );
            return Err(Problem::in_entry("faults.ambiguous_commit", index, "at", message));
        }
    }
    for (index, window) in faults.poll_error.iter().enumerate() {
        if window.to_ms <= window.from_ms || window.from_ms < 0 {
            let message = format!(
                "entry {} of [[faults.poll_error]]: to_ms ({}) must come after from_ms ({}, from 0)",
                index + 1,
                window.to_ms,
                window.from_ms
            );
            return Err(Problem::in_entry("faults.poll_error", index, "to_ms", message));
        }
    }
    for (index, fault) in faults.dead_heartbeat.iter().enumerate() {
        if !names_a_task(fault.task, count) {
            return Err(Problem::in_entry("faults.dead_heartbeat", index, "task", no_such_task(fault.task, count)));
        }
        if fault.session == 0 {
            return Err(Problem::in_entry("faults.dead_heartbeat", index, "session", "sessions count from 1".to_string()));
        }
    }
    for (index, fault) in faults.early_stop.iter().enumerate() {
        if !names_a_task(fault.task, count) {
            return Err(Problem::in_entry("faults.early_stop", index, "task", no_such_task(fault.task, count)));
        }
        if fault.session == 0 {
            return Err(Problem::in_entry("faults.early_stop", index, "session", "sessions count from 1".to_string()));
        }
        if fault.after_agents == 0 {
            return Err(Problem::in_entry("faults.early_stop", index, "after_agents", "agents count from 1".to_string()));
        }
    }
    Ok(())
}

/// `[expect]` names rules the oracles check.
/// A problem is reported at the key that holds the unknown name.
fn expected_rules(expect: &ExpectSection) -> Checked {
    for (key, rules) in [("violations", &expect.violations), ("allowed", &expect.allowed)] {
        for rule in rules {
            if RuleId::parse(rule).is_none() {
                let names: Vec<&str> = RuleId::ALL.iter().map(|r| r.as_str()).collect();
                let hint = crate::vocab::suggest::did_you_mean(rule, names.iter().copied());
                return Err(Problem::at("expect", key, format!("`{rule}` is not a rule{hint}; rules: {}", names.join(", "))));
            }
        }
    }
    Ok(())
}

/// `[protocol] variants` names known variants. The scenario only records them;
/// `crate::input::variant::with_variants` applies them before a run.
fn variant_names(protocol: &ProtocolSection) -> Checked {
    for name in &protocol.variants {
        crate::vocab::check_variant_name(name).map_err(|m| Problem::at("protocol", "variants", m))?;
    }
    Ok(())
}

/// `[conductor] profile` names a known conductor profile (sim/input/conductor_profile.rs).
fn conductor_profile_name(conductor: &ConductorSection) -> Checked {
    match &conductor.profile {
        Some(name) => {
            crate::input::conductor_table::check_conductor_name(name).map(|_| ()).map_err(|m| Problem::at("conductor", "profile", m))
        }
        None => Ok(()),
    }
}

/// `[protocol] profile` names a known profile (sim/vocab/profile.rs).
fn profile_name(protocol: &ProtocolSection) -> Checked {
    match &protocol.profile {
        Some(name) => crate::vocab::check_profile_name(name).map(|_| ()).map_err(|m| Problem::at("protocol", "profile", m)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two tasks (task 2 with 3 steps of 1 agent) plus `extra`, read but not checked.
    fn file(extra: &str) -> ScenarioFile {
        let text = format!("[tasks]\ncount = 2\n[[tasks.custom]]\ntask = 2\nsteps = 3\nsubagents_per_step = 1\n{extra}");
        toml::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    fn plans(raw: &ScenarioFile) -> Vec<TaskPlan> {
        super::super::plan::task_plans(&raw.tasks).unwrap()
    }

    /// (section, index, key, message) of the first problem of the whole check.
    fn refusal(extra: &str) -> (&'static str, Option<usize>, &'static str, String) {
        let raw = file(extra);
        let p = check(&raw, &plans(&raw)).expect_err(extra);
        (p.section, p.index, p.key, p.message)
    }

    fn accepted(extra: &str) {
        let raw = file(extra);
        if let Err(p) = check(&raw, &plans(&raw)) {
            panic!("refused: {p:?}\n{extra}");
        }
    }

    #[test]
    fn error_reply_odds_leave_room_for_the_corrected_path_and_review_heartbeats_beat_staleness() {
        accepted(
            "[conductor]\nerror_alternative_probability = 0.5\nerror_skip_probability = 0.25\nerror_exit_request_probability = 0.25\n",
        );
        let (section, index, key, message) = refusal(
            "[conductor]\nerror_alternative_probability = 0.5\nerror_skip_probability = 0.5\nerror_exit_request_probability = 0.1\n",
        );
        assert_eq!((section, index, key), ("conductor", None, "error_exit_request_probability"));
        assert!(message.contains("must be at most 1, got 1.1"), "{message}");
        let (_, _, key, message) = refusal("[conductor]\nerror_alternative_probability = 0.6\nerror_skip_probability = 0.7\n");
        assert_eq!(key, "error_skip_probability", "the key that passes 1 is named");
        assert!(message.ends_with("got 1.3"), "{message}");
        accepted("[conductor]\nreview_heartbeat_ms = 0\n");
        accepted("[conductor]\nreview_heartbeat_ms = 539999\n");
        accepted("[timing]\nheartbeat_refresh_s = 300\n[conductor]\nstaleness_s = 360\n");
        let (_, _, key, message) = refusal("[conductor]\nreview_heartbeat_ms = 540000\n");
        assert_eq!(key, "review_heartbeat_ms", "{message}");
    }

    #[test]
    fn conductor_answers_name_an_existing_task_and_a_review_from_1() {
        let answer =
            |task: u64, review: u64| format!("[[conductor.answers]]\ntask = {task}\nreview = {review}\nanswer = \"fix_proposed\"\n");
        assert_eq!(refusal(&answer(3, 1)), ("conductor.answers", Some(0), "task", "task 3 does not exist: tasks.count is 2".into()));
        assert_eq!(refusal(&answer(1, 0)), ("conductor.answers", Some(0), "review", "reviews are counted from 1".into()));
        accepted(&answer(2, 1));
    }

    #[test]
    fn emergencies_name_an_existing_task() {
        assert_eq!(refusal("[[conductor.emergencies]]\nat_ms = 0\ntask = 0\n").2, "task");
        accepted("[[conductor.emergencies]]\nat_ms = 0\ntask = 2\n");
    }

    #[test]
    fn exit_requests_name_an_existing_task() {
        assert_eq!(refusal("[[conductor.exit_requests]]\nat_ms = 0\ntask = 3\n").2, "task");
        accepted("[[conductor.exit_requests]]\nat_ms = 0\ntask = 2\n");
    }

    #[test]
    fn subagent_scripts_name_a_step_and_an_agent_of_their_task() {
        let script = |task: u64, step: u64, agent: u64| format!("[[subagents.script]]\ntask = {task}\nstep = {step}\nagent = {agent}\n");
        assert_eq!(refusal(&script(2, 4, 1)), ("subagents.script", Some(0), "step", "task-02 has steps 1..=3, not 4".into()));
        assert_eq!(refusal(&script(2, 3, 2)), ("subagents.script", Some(0), "agent", "task-02 has agents 1..=1 in step 3, not 2".into()));
        assert_eq!(refusal(&script(0, 1, 1)).3, "task 0 does not exist: tasks.count is 2");
        accepted(&script(2, 3, 1));
        accepted(&script(1, 4, 2));
    }

    #[test]
    fn verification_scripts_name_a_step_of_their_task_and_a_session_that_can_exist() {
        let script = |task: u64, step: u64, session: u32| {
            format!("[[verification.script]]\ntask = {task}\nstep = {step}\nsession = {session}\nfinding = \"flaky\"\n")
        };
        assert_eq!(refusal(&script(2, 4, 1)), ("verification.script", Some(0), "step", "task-02 has steps 1..=3, not 4".into()));
        assert_eq!(refusal(&script(3, 1, 1)).3, "task 3 does not exist: tasks.count is 2");
        assert_eq!(refusal(&script(1, 1, 6)).2, "session");
        accepted(&script(2, 3, 5));
    }

    #[test]
    fn context_thresholds_are_ordered() {
        let refused = refusal("[context]\nevaluate_at_pct = 71\n");
        assert_eq!((refused.0, refused.2), ("context", "proceed_below_pct"));
        assert!(refused.3.ends_with("got 71 / 70 / 80"), "{}", refused.3);
        accepted("[context]\nevaluate_at_pct = 70\nescalate_above_pct = 70\n");
    }

    #[test]
    fn review_odds_add_up_to_at_most_1() {
        let refused = refusal("[conductor]\nreject_probability = 0.5\nfix_probability = 0.75\n");
        assert_eq!(
            (refused.2, refused.3.as_str()),
            ("fix_probability", "reject_probability + fix_probability must be at most 1, got 1.25")
        );
        accepted("[conductor]\nreject_probability = 0.5\nfix_probability = 0.5\n");
    }

    #[test]
    fn the_heartbeat_refresh_falls_between_one_poll_and_the_staleness_threshold() {
        let at_staleness = refusal("[timing]\nheartbeat_refresh_s = 540\n");
        assert_eq!((at_staleness.0, at_staleness.2), ("timing", "heartbeat_refresh_s"));
        assert!(at_staleness.3.starts_with("the refresh threshold (540 s) must be below the conductor's staleness threshold (540 s)"));
        let one_poll = refusal("[timing]\nheartbeat_refresh_s = 15\n");
        assert!(one_poll.3.starts_with("a refresh threshold of 15 s is not longer than the background poll of 15000 ms"));
        accepted("[timing]\nheartbeat_refresh_s = 539\n");
        accepted("[timing]\nheartbeat_refresh_s = 16\n");
    }

    #[test]
    fn hangs_and_watcher_deaths_happen_at_the_points_they_can() {
        let (section, index, key, message) =
            refusal("[[faults.watcher_death]]\ntask = 1\nat_ms = 5\n[[faults.watcher_death]]\ntask = 1\nat = \"before:heartbeat\"\n");
        assert_eq!((section, index, key), ("faults.watcher_death", Some(1), "at"));
        assert!(message.starts_with("entry 2 of [[faults.watcher_death]] has `at`: a watcher death takes `at_ms` only"), "{message}");
        accepted("[[faults.hang]]\ntask = 1\nat = \"before:heartbeat\"\n[[faults.hang]]\ntask = 1\nat = \"after:heartbeat\"\n");
        accepted("[[faults.watcher_death]]\ntask = 1\nat_ms = 5\n");
        let (section, _, key, message) = refusal("[[faults.io_error]]\ntask = 1\nat_ms = 5\n");
        assert_eq!((section, key), ("faults.io_error", "at_ms"), "{message}");
        assert_eq!(refusal("[[faults.io_error]]\ntask = 3\nat = \"before:heartbeat\"\n").2, "task");
        accepted("[[faults.io_error]]\ntask = 1\nat = \"before:set_needs_review\"\n");
    }

    #[test]
    fn fleet_faults_are_refused_where_they_cannot_strike() {
        let (section, _, key, message) = refusal("[[faults.ambiguous_commit]]\ntask = 1\nat = \"before:set_error\"\n");
        assert_eq!((section, key), ("faults.ambiguous_commit", "at"), "{message}");
        assert!(message.contains("needs `at = \"after:STATEMENT\"`"), "{message}");
        assert_eq!(refusal("[[faults.ambiguous_commit]]\ntask = 1\nat_ms = 5\n").2, "at");
        assert_eq!(refusal("[[faults.ambiguous_commit]]\ntask = 3\nat = \"after:set_error\"\n").2, "task");
        accepted("[[faults.ambiguous_commit]]\ntask = 1\nat = \"after:set_error\"\n");
        assert_eq!(refusal("[[faults.poll_error]]\nfrom_ms = 5\nto_ms = 5\n").2, "to_ms");
        accepted("[[faults.poll_error]]\nfrom_ms = 5\nto_ms = 6\n");
        assert_eq!(refusal("[[faults.dead_heartbeat]]\ntask = 3\n").2, "task");
        assert_eq!(refusal("[[faults.dead_heartbeat]]\ntask = 1\nsession = 0\n").2, "session");
        accepted("[[faults.dead_heartbeat]]\ntask = 2\n");
        assert_eq!(refusal("[[faults.early_stop]]\ntask = 3\nafter_agents = 1\n").2, "task");
        assert_eq!(refusal("[[faults.early_stop]]\ntask = 1\nsession = 0\nafter_agents = 1\n").2, "session");
        assert_eq!(refusal("[[faults.early_stop]]\ntask = 1\nafter_agents = 0\n").2, "after_agents");
        accepted("[[faults.early_stop]]\ntask = 2\nsession = 2\nafter_agents = 3\n");
    }

    #[test]
    fn scripted_faults_hit_a_session_that_can_exist_at_one_known_point() {
        let (section, index, key, message) =
            refusal("[[faults.crash]]\ntask = 1\nat_ms = 1\n[[faults.crash]]\ntask = 1\nsession = 6\nat_ms = 1\n");
        assert_eq!((section, index, key), ("faults.crash", Some(1), "session"));
        assert!(message.starts_with("entry 2 of [[faults.crash]] names session S6 of task 1, which never exists: sessions are S1..S5"));
        assert_eq!(
            refusal("[[faults.hang]]\ntask = 3\nat_ms = 1\n").3,
            "entry 1 of [[faults.hang]] names task 3, which does not exist: tasks.count is 2"
        );
        assert_eq!(refusal("[[faults.crash]]\ntask = 1\nat_ms = 1\nat = \"after:heartbeat\"\n").2, "at");
        assert_eq!(refusal("[[faults.crash]]\ntask = 1\n").2, "at");
        accepted("[[faults.crash]]\ntask = 2\nsession = 5\nat = \"after:claim_task\"\nnth = 2\n");
        assert_eq!(refusal("[[faults.hang]]\ntask = 1\nsession = 0\nat_ms = 1\n").2, "session");
    }

    /// Under `uncap-lost-sessions` a task can have sessions past the cap (proof-random-faults
    /// under `repaired`: a search reached S6 of task 1, and its mutant naming it was refused).
    #[test]
    fn a_protocol_that_uncaps_lost_sessions_lets_entries_name_sessions_past_the_cap() {
        let fault = "[[faults.io_error]]\ntask = 1\nsession = 6\nat = \"before:send_resumption\"\n";
        let script = "[[verification.script]]\ntask = 1\nstep = 1\nsession = 7\nfinding = \"flaky\"\n";
        assert!(refusal(fault).3.starts_with("entry 1 of [[faults.io_error]] names session S6 of task 1, which never exists"));
        assert_eq!(refusal(&format!("[protocol]\nprofile = \"seeds\"\n{script}")).0, "verification.script");
        accepted(&format!("[protocol]\nprofile = \"repaired\"\n{fault}{script}"));
        accepted(&format!("[protocol]\nvariants = [\"uncap-lost-sessions\"]\n{fault}{script}"));
    }

    /// A point is read as one (`vocab::Point`): an unknown statement is refused with the
    /// TOML, at the file, line, column and key of its `at`.
    #[test]
    fn a_point_naming_no_statement_is_refused_at_its_key() {
        let refused = |text: &str| crate::input::scenario::Scenario::parse(text, std::path::Path::new("s.toml")).unwrap_err().to_string();
        let e = refused("[tasks]\ncount = 1\n[[faults.crash]]\ntask = 1\nat = \"after:heartbeats\"\n");
        let want = "s.toml:5:6: key `faults.crash.at`: `after:heartbeats` is not before:STATEMENT or after:STATEMENT with a statement the engine runs";
        assert!(e.contains(want), "{e}");
        let e = refused("[tasks]\ncount = 1\n[[faults.conductor_crash]]\nat = \"after:poll\"\n");
        assert!(e.contains("s.toml:4:6: key `faults.conductor_crash.at`: `after:poll` is not before:STATEMENT"), "{e}");
    }

    #[test]
    fn missing_session_ids_name_an_existing_task_and_a_session_from_1() {
        assert_eq!(
            refusal("[[faults.missing_session_id]]\ntask = 3\n"),
            ("faults.missing_session_id", Some(0), "task", "task 3 does not exist: tasks.count is 2".into())
        );
        assert_eq!(refusal("[[faults.missing_session_id]]\ntask = 1\nsession = 0\n").2, "session");
        accepted("[[faults.missing_session_id]]\ntask = 2\nsession = 3\n");
    }

    #[test]
    fn conductor_crashes_name_a_session_from_1_and_one_time_or_point() {
        assert_eq!(
            refusal("[[faults.conductor_crash]]\nsession = 0\nat_ms = 5\n"),
            (
                "faults.conductor_crash",
                Some(0),
                "session",
                "entry 1 of [[faults.conductor_crash]]: conductor sessions are counted from 1".into()
            )
        );
        assert_eq!(refusal("[[faults.conductor_crash]]\n").2, "at");
        accepted("[[faults.conductor_crash]]\nat_ms = 5\n[[faults.conductor_crash]]\nsession = 2\nat = \"after:send_conductor_message\"\nnth = 3\n");
    }

    #[test]
    fn double_launches_name_an_existing_task() {
        assert_eq!(
            refusal("[[faults.double_launch]]\ntask = 3\n"),
            ("faults.double_launch", Some(0), "task", "task 3 does not exist: tasks.count is 2".into())
        );
        accepted("[[faults.double_launch]]\ntask = 2\n");
    }

    #[test]
    fn expected_violations_are_rules() {
        let refused = refusal("[expect]\nallowed = [\"no-false-stales\"]\n");
        assert_eq!((refused.0, refused.2), ("expect", "allowed"), "reported at its own key");
        assert!(refused.3.starts_with("`no-false-stales` is not a rule; did you mean `no-false-stale`?"), "{}", refused.3);
        let refused = refusal("[expect]\nviolations = [\"livenes\"]\n");
        assert_eq!((refused.0, refused.2), ("expect", "violations"));
        assert!(
            refused.3.starts_with("`livenes` is not a rule; did you mean `liveness`?; rules: one-live-session-per-task, "),
            "{}",
            refused.3
        );
        accepted("[expect]\nviolations = [\"liveness\"]\nallowed = [\"no-false-stale\"]\n");
    }

    #[test]
    fn variants_are_known_by_name_and_only_recorded() {
        let refused = refusal("[protocol]\nvariants = [\"fencing\", \"fencng\"]\n");
        assert_eq!((refused.0, refused.2), ("protocol", "variants"));
        assert!(refused.3.starts_with("unknown variant `fencng`; did you mean `fencing`?; variants: guard-not-in, "), "{}", refused.3);
        accepted("[protocol]\nvariants = [\"fencing\", \"fencing\"]\n");
    }

    #[test]
    fn a_profile_is_known_by_name() {
        let refused = refusal("[protocol]\nprofile = \"repairs\"\n");
        assert_eq!((refused.0, refused.2), ("protocol", "profile"));
        assert_eq!(refused.3, "unknown protocol profile `repairs`; did you mean `repaired`?; profiles: seeds, repaired");
        accepted("[protocol]\nprofile = \"repaired\"\n");
    }
}
