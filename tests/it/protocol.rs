//! Protocol behaviours beyond the worked examples: emergency messages, the pause-watcher
//! timeout against a slow conductor, and byte-determinism of every shipped scenario.

use rehearsal::vocab::{ActorName, RuleId, Stmt, TaskState, WatcherKind};

use crate::support::{
    by_watcher, find_line, messages, rehearsal, root, run_ok, session, session_sql, status_lines, stderr, task_row, trace,
};

fn run_shipped(name: &str) -> (tempfile::TempDir, i32) {
    let tmp = tempfile::tempdir().unwrap();
    let path = root().join("scenarios").join(format!("{name}.toml"));
    let o = rehearsal(&["run", path.to_str().unwrap(), "--out", tmp.path().to_str().unwrap()]);
    (tmp, o.status.code().unwrap_or_else(|| panic!("{}", stderr(&o))))
}

/// 000 "Emergency Messages": "Kill current subagent immediately (urgent: 'stop all work')",
/// "Wait for current subagent to finish (informational: 'heads up about future step')",
/// "Acknowledge and continue (advisory: instructions for a step not yet in progress)".
#[test]
fn an_urgent_emergency_kills_the_subagent_an_informational_one_waits_for_it_an_advisory_one_continues() {
    let (dir, code) = run_shipped("emergency");
    assert_eq!(code, 0);
    let urgent = status_lines(dir.path(), "task-01");
    let (noticed, _) = find_line(&urgent, "emergency from conductor (urgent): stopping current subagent");
    let label = urgent[noticed - 1].split(" launched").next().unwrap().to_string();
    assert!(urgent[noticed + 1].starts_with(&format!("{label} stopped: urgent emergency, all work stopped")), "{}", urgent[noticed + 1]);
    // Work stops (issue 27: it used to relaunch the agent at once), `working`, with nothing
    // reported (docs/protocol.md C41: the seeds say only "kill" and "stop all work"), until
    // the conductor's instructions to resume, ten minutes later; then the agent runs again.
    assert!(urgent[noticed + 2].starts_with(&format!("all work stopped ({label} killed): waiting")), "{}", urgent[noticed + 2]);
    assert!(urgent[noticed + 3].starts_with("emergency from conductor (resume)"), "{}", urgent[noticed + 3]);
    assert!(urgent[noticed + 5].starts_with(&format!("{label} launched")), "the agent runs again: {}", urgent[noticed + 5]);
    let task_01: Vec<_> = crate::support::messages(dir.path()).into_iter().filter(|m| m.1 == "task-01").collect();
    assert!(!task_01.iter().any(|m| m.3 == "error"), "the stop is not reported as an error: {task_01:?}");
    let all = trace(dir.path());
    let sent =
        |text: &str| all.iter().find(|r| r.actor == Some(ActorName::Conductor(1)) && r.detail.contains(text)).map(|r| r.t_ms).expect(text);
    let (stop_ms, resume_ms) = (sent("EMERGENCY (urgent)"), sent("EMERGENCY (resume)"));
    assert!(stop_ms >= 600_000 && resume_ms >= 600_000 + 600_000, "at_ms + resume_after_ms: {stop_ms} → {resume_ms}");
    let writes = session_sql(dir.path(), "task-01.S1");
    let between: Vec<_> = writes.iter().filter(|r| r.t_ms > stop_ms && r.t_ms < resume_ms && r.state_after.is_some()).collect();
    assert!(between.iter().all(|r| r.state_after == Some(TaskState::Working)), "the row stays `working` while stopped: {between:?}");
    let informational = status_lines(dir.path(), "task-02");
    let (noticed, _) = find_line(&informational, "emergency from conductor (informational): waiting for the current subagent to finish");
    let label = informational[noticed - 1].split(" launched").next().unwrap().to_string();
    assert!(
        informational[noticed + 1].starts_with(&format!("emergency heads-up taken into account now that {label} finished")),
        "{}",
        informational[noticed + 1]
    );
    assert!(informational[noticed + 2].starts_with(&format!("{label} returned")), "the subagent finished");
    let advisory = status_lines(dir.path(), "task-03");
    let (noticed, _) = find_line(&advisory, "emergency from conductor (advisory): acknowledged, continuing");
    let label = advisory[noticed - 1].split(" launched").next().unwrap().to_string();
    assert!(advisory[noticed + 1].starts_with(&format!("{label} returned")), "the subagent finishes, nothing waits on it");
    // One `emergency` message per task (000: separate messages per task), each seen by that
    // task's background watcher, which exits and is relaunched.
    let emergencies: Vec<_> = messages(dir.path()).into_iter().filter(|m| m.3 == "emergency").collect();
    assert_eq!(emergencies.iter().map(|m| m.1.as_str()).collect::<Vec<_>>(), ["task-01", "task-02", "task-03", "task-01"]);
    for (message, kind) in emergencies.iter().zip(["urgent", "informational", "advisory", "resume"]) {
        assert!(message.4.starts_with(&format!("EMERGENCY ({kind}): ")), "{}", message.4);
    }
    let rows = trace(dir.path());
    for task in ["task-01", "task-02", "task-03"] {
        let s1 = session(&format!("{task}.S1"));
        assert!(
            rows.iter().any(|r| by_watcher(r, s1, WatcherKind::Background)
                && r.event == "watcher_exit"
                && r.detail.starts_with("new conductor messages")),
            "{task}"
        );
    }
    let killed = |task: &str| {
        let s1 = session(&format!("{task}.S1"));
        rows.iter().filter(|r| matches!(r.actor, Some(ActorName::Subagent(p, _)) if p == s1) && r.event == "killed").count()
    };
    assert_eq!((killed("task-01"), killed("task-02"), killed("task-03")), (1, 0, 0), "only the urgent one's subagent is killed");
}

#[test]
fn a_conductor_slower_than_the_pause_timeout_is_reported_as_timeout() {
    let (dir, code) = run_shipped("slow-review");
    assert_eq!(code, 0);
    let lines = status_lines(dir.path(), "task-01");
    let (submitted, _) = find_line(&lines, "checkpoint 1 submitted for review");
    let (timeout, _) = find_line(&lines, "pause TIMEOUT: conductor heartbeat stale, reporting");
    assert!(timeout > submitted);
    let rows = trace(dir.path());
    let health = rows.iter().find(|r| r.stmt == Some(Stmt::ConductorHealth)).expect("the pause watcher checks the conductor");
    let request = rows.iter().find(|r| r.stmt == Some(Stmt::SendReviewRequest)).unwrap();
    let waited_ms = health.t_ms - request.t_ms;
    assert!((900_000..960_000).contains(&waited_ms), "checked after the 15-minute timeout, waited {waited_ms} ms");
    let error = messages(dir.path()).into_iter().find(|m| m.3 == "error").expect("a timeout error report");
    assert!(error.4.contains("pause watcher TIMEOUT: conductor unresponsive"), "{}", error.4);
    let set_error = session_sql(dir.path(), "task-01.S1").into_iter().find(|e| e.stmt == Some(Stmt::SetError)).unwrap();
    assert_eq!(set_error.state_after, Some(TaskState::Error), "needs_review → error on a timeout (docs/protocol.md D10)");
}

#[test]
fn every_shipped_scenario_is_byte_deterministic() {
    let mut scenarios: Vec<std::path::PathBuf> = Vec::new();
    for folder in ["scenarios", "scenarios/examples"] {
        for entry in std::fs::read_dir(root().join(folder)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                scenarios.push(path);
            }
        }
    }
    scenarios.sort();
    assert!(scenarios.len() >= 12, "{scenarios:?}");
    let tmp = tempfile::tempdir().unwrap();
    for (i, path) in scenarios.iter().enumerate() {
        let run = |tag: &str| {
            let out = tmp.path().join(format!("{i}-{tag}"));
            let options =
                rehearsal::run::RunOptions { scenario_path: path.clone(), seed: None, out_dir: Some(out.clone()), variants: Vec::new() };
            let summary = rehearsal::run::run(&options).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (summary.trace_hash, std::fs::read(out.join("comms.db")).unwrap())
        };
        let (a, b) = (run("a"), run("b"));
        assert_eq!(a.0, b.0, "{}: trace differs", path.display());
        assert!(a.1 == b.1, "{}: comms.db differs", path.display());
    }
}

#[test]
fn a_timing_budget_breach_fails_the_run_and_names_the_measurement() {
    let path = root().join("scenarios/quickstart.toml");
    let tmp = tempfile::tempdir().unwrap();
    let options = rehearsal::run::RunOptions {
        scenario_path: path.clone(),
        seed: None,
        out_dir: Some(tmp.path().to_path_buf()),
        variants: Vec::new(),
    };
    let shipped = rehearsal::run::run(&options).unwrap();
    assert!(shipped.verdict.passed(), "{}", shipped.render());
    let (_, _, age_max) = rehearsal::judging::oracle::quantiles(&shipped.measured.heartbeat_age_s).expect("ages measured");
    assert!((480..540).contains(&age_max), "watchers refresh past 480 s, before 540 s: {age_max}");
    let mut tight = rehearsal::input::scenario::Scenario::load(&path).unwrap();
    tight.budgets.heartbeat_age_s_max = Some(300);
    let summary = rehearsal::run::run_scenario(tight, &options).unwrap();
    assert_eq!(summary.verdict.headline(), "FAIL: budget");
    let v = &summary.verdict.violations[0];
    let over = shipped.measured.heartbeat_age_s.iter().filter(|age| **age > 300).count();
    let head = format!(
        "heartbeat_age_s reached {age_max} against a budget of 300 ({over} of {} measurements above it); the largest (",
        shipped.measured.heartbeat_age_s.len()
    );
    assert!(v.explanation.starts_with(&head), "{}", v.explanation);
    // Past the 480 s refresh threshold, what kept the heartbeat from being refreshed is named.
    assert!(v.explanation.contains("dominant cause (beyond the heartbeat threshold): poll wait"), "{}", v.explanation);
    assert!(v.explanation.ends_with("; the budget: the scenario's [budgets]"), "{}", v.explanation);
}

#[test]
fn budgets_a_scenario_does_not_set_are_derived_from_the_protocols_numbers_and_shown_with_their_margin() {
    let tmp = tempfile::tempdir().unwrap();
    // verification-checkpoint sets no [budgets].
    let out = run_ok(&root().join("scenarios/examples/verification-checkpoint.toml"), 4, tmp.path());
    // 000 "Pause Watcher" and "Response Handling": a 10 s poll, rework up to 300 s,
    // re-verification up to 240 s, 10 statements of up to 3 s.
    let resume = out.lines().find(|l| l.contains("review_resume_ms:")).expect("a review_resume_ms line");
    assert!(resume.contains("budget 580000, margin "), "{resume}");
    // 000 "Heartbeat Protocol": a live session's heartbeat stays under the 540 s threshold.
    let age = out.lines().find(|l| l.contains("heartbeat_age_s:")).expect("a heartbeat_age_s line");
    assert!(age.contains("budget 540, margin ") && !age.contains("BREACHED"), "{age}");
    let mut slow = rehearsal::input::scenario::Scenario::load(&root().join("scenarios/examples/verification-checkpoint.toml")).unwrap();
    slow.conductor.staleness_s = 400;
    let options = rehearsal::run::RunOptions {
        scenario_path: root().join("scenarios/examples/verification-checkpoint.toml"),
        seed: Some(4),
        out_dir: Some(tmp.path().join("slow")),
        variants: Vec::new(),
    };
    let summary = rehearsal::run::run_scenario(slow, &options).unwrap();
    let breach = summary
        .verdict
        .violations
        .iter()
        .find(|v| v.rule == RuleId::Budget && v.explanation.starts_with("heartbeat_age_s"))
        .expect("the derived heartbeat budget breached");
    assert!(
        breach.explanation.starts_with("heartbeat_age_s reached") && breach.explanation.contains("under the 400 s staleness threshold"),
        "{}",
        breach.explanation
    );
}

/// The context-tight story (scenarios/examples/context-tight-break-point.toml) with the other
/// two answers of 000 "Context escalation response states": `review_approved` ("Proceed as
/// planned to checkpoint, then stop and report back for clean handoff") and `review_failed`
/// ("Do not proceed, prepare handoff now"). The worked examples all take `fix_proposed`.
#[test]
fn the_other_context_replies_go_on_to_the_checkpoint_or_hand_off_at_once() {
    use rehearsal::input::scenario::ContextReply;
    let path = root().join("scenarios/examples/context-tight-break-point.toml");
    let tmp = tempfile::tempdir().unwrap();
    let run = |reply: ContextReply, checkpoints: Vec<u64>, tag: &str| {
        let mut scenario = rehearsal::input::scenario::Scenario::load(&path).unwrap();
        scenario.conductor.context_reply = reply;
        scenario.tasks[0].checkpoints = checkpoints;
        let out = tmp.path().join(tag);
        let options =
            rehearsal::run::RunOptions { scenario_path: path.clone(), seed: None, out_dir: Some(out.clone()), variants: Vec::new() };
        let summary = rehearsal::run::run_scenario(scenario, &options).unwrap();
        assert!(summary.verdict.passed(), "{tag}: {}", summary.render());
        status_lines(&out, "task-01")
    };
    // Approve, with a scheduled checkpoint after step 5: all of step 4 and 5, that checkpoint,
    // then the hand-off; S2 has only the final checkpoint left.
    let lines = run(ContextReply::Approve, vec![2, 3, 5], "approve");
    let (approved, _) = find_line(&lines, "conductor review_approved: proceed to checkpoint, then hand off");
    let (checkpoint, _) = find_line(&lines, "checkpoint 3 approved (step 5)");
    let (exit, exit_ctx) = find_line(&lines, "clean exit preparing");
    assert!(approved < checkpoint && checkpoint < exit && exit_ctx <= 80, "{lines:?}");
    assert!(lines[approved..checkpoint].iter().any(|l| l.starts_with("step 5 agent 3 integrated")));
    let s2 = lines.iter().rposition(|l| l.starts_with("bootstrap started")).unwrap();
    assert!(lines[s2..].iter().any(|l| l.trim_start() == "Resuming from: step 6 agent 1 [ctx: 18%]"), "{:?}", &lines[s2..]);
    // Hand off now: the HANDOFF names step 4 agent 2, where S2 goes on.
    let lines = run(ContextReply::Handoff, vec![2, 3], "handoff");
    let (answered, _) = find_line(&lines, "conductor review_failed: prepare handoff now");
    assert!(lines[answered + 1].starts_with("clean exit: all subagents and watchers stopped"), "{}", lines[answered + 1]);
    let s2 = lines.iter().rposition(|l| l.starts_with("bootstrap started")).unwrap();
    assert!(lines[s2..].iter().any(|l| l.starts_with("step 4 agent 2 launched")), "{:?}", &lines[s2..]);
}

/// 000 "Deviations & Escalation Thresholds", "Escalation triggers": "Self-correction issues
/// during execution". With agents still ahead of the checkpoint the musician escalates at once
/// (a context warning, whatever its context, that says why); when the checkpoint comes next,
/// the escalation goes with its review request.
#[test]
fn a_self_correction_is_escalated_at_once_or_with_the_next_review_request() {
    let path = root().join("scenarios/examples/context-tight-break-point.toml");
    let tmp = tempfile::tempdir().unwrap();
    // As shipped: step 3 agent 2, the last agent before checkpoint 2, self-corrects.
    let shipped = tmp.path().join("shipped");
    run_ok(&path, 3, &shipped);
    let request = messages(&shipped).into_iter().map(|m| m.4).find(|m| m.contains("Checkpoint: 2 of 3")).unwrap();
    assert!(
        request.contains("\n  Escalation: self-correction during execution (step 3, agent 2 — test failure, rewrote the module): context estimates are off by ~6x; plan for an early handoff\n"),
        "{request}"
    );
    let first_warning = messages(&shipped).into_iter().find(|m| m.3 == "context_warning").unwrap().4;
    assert!(first_warning.starts_with("CONTEXT WARNING: 52% usage\n  Self-Correction:"), "no escalation at 52 %: {first_warning}");
    // Step 3 agent 1 instead: agent 2 is still ahead, so it escalates at once, at 34 %.
    let mut scenario = rehearsal::input::scenario::Scenario::load(&path).unwrap();
    scenario.subagents.script[0].agent = 1;
    let out = tmp.path().join("at-once");
    let options = rehearsal::run::RunOptions { scenario_path: path.clone(), seed: None, out_dir: Some(out.clone()), variants: Vec::new() };
    let summary = rehearsal::run::run_scenario(scenario, &options).unwrap();
    assert!(summary.verdict.passed(), "{}", summary.render());
    let lines = status_lines(&out, "task-01");
    let (escalated, ctx) = find_line(&lines, "self-correction: escalating to the conductor (context estimates off by ~6x)");
    assert!(lines[escalated - 1].starts_with("step 3 agent 1 integrated") && ctx < 50, "{:?}", &lines[escalated - 1..]);
    let warning = messages(&out).into_iter().find(|m| m.3 == "context_warning").unwrap().4;
    assert!(
        warning.starts_with(&format!("CONTEXT WARNING: {ctx}% usage\n  Escalation: self-correction during execution (step 3, agent 1")),
        "{warning}"
    );
    let set = trace(&out).into_iter().find(|r| r.stmt == Some(Stmt::SetContextWarning)).expect("the escalation is an error state");
    assert_eq!(set.state_after, Some(TaskState::Error));
    // The conductor plans the early hand-off: the agents to the checkpoint, the checkpoint,
    // then the hand-off.
    let (scoped, _) = find_line(&lines, "conductor fix_proposed: reduced scope");
    let (checkpoint, _) = find_line(&lines, "checkpoint 2 approved");
    let (exit, _) = find_line(&lines, "clean exit preparing");
    assert!(escalated < scoped && scoped < checkpoint && checkpoint < exit);
    assert_eq!(task_row(&out, "task-01").0, "complete");
}

/// docs/protocol.md C21: a pause TIMEOUT is an error report that counts a retry (000 "Mode
/// Transitions", Timeout handling 3, says to set `error` and send a timeout message); under
/// `timeout-not-counted` it sets `error` with its message and `retry_count` stays.
#[test]
fn a_pause_timeout_counts_a_retry_unless_timeout_not_counted() {
    use rehearsal::vocab::Stmt;
    let written = |variants: &[&str]| -> Vec<Stmt> {
        let tmp = tempfile::tempdir().unwrap();
        crate::support::run_into("scenarios/slow-review.toml", variants, tmp.path());
        let rows = crate::support::trace(tmp.path());
        let timeout =
            rows.iter().position(|r| r.detail.starts_with("pause TIMEOUT: conductor heartbeat stale, reporting")).expect("a timeout");
        rows[timeout..].iter().filter(|r| r.actor_text() == "task-01.S1").filter_map(|r| r.stmt.filter(|s| s.writes())).take(2).collect()
    };
    // `set_error` adds 1 to retry_count (004 "Report Error"); `set_escalation` leaves it.
    assert_eq!(written(&[]), [Stmt::SendError, Stmt::SetError]);
    assert_eq!(written(&["timeout-not-counted"]), [Stmt::SendError, Stmt::SetEscalation]);
}

/// docs/protocol.md C41, variant `emergency-stop-escalates`: the other reading of "stop all
/// work", the stop reported as an `error` (`emergency_stop`, no retry counted) and answered
/// like an escalation; the conductor sends no resume then.
#[test]
fn under_emergency_stop_escalates_the_stop_is_reported_and_answered() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out) = crate::support::run_into("scenarios/emergency.toml", &["emergency-stop-escalates"], tmp.path());
    assert_eq!(code, 0, "{out}");
    let urgent = status_lines(tmp.path(), "task-01");
    let (noticed, _) = find_line(&urgent, "emergency from conductor (urgent): stopping current subagent");
    assert!(urgent[noticed + 2].starts_with("ESCALATION to conductor: urgent emergency: all work stopped"), "{}", urgent[noticed + 2]);
    assert!(urgent[noticed + 3].starts_with("conductor fix_proposed"), "{}", urgent[noticed + 3]);
    let task_01: Vec<_> = messages(tmp.path()).into_iter().filter(|m| m.1 == "task-01").collect();
    assert!(task_01.iter().any(|m| m.3 == "error" && m.4.contains("all work stopped")), "{task_01:?}");
    assert!(!task_01.iter().any(|m| m.4.starts_with("EMERGENCY (resume)")), "{task_01:?}");
    assert_eq!(task_row(tmp.path(), "task-01").2, 0, "no retry counted");
}

/// scenarios/completion-from-approved.toml (000 "Completion Flow" 5, docs/protocol.md C20):
/// under `complete-from-approved` the session's terminal write follows the completion
/// review's approval with no `resume_working` between; by default it writes one first.
#[test]
fn complete_from_approved_writes_complete_straight_from_review_approved() {
    let last_state_write_before_complete = |variants: &[&str]| {
        let tmp = tempfile::tempdir().unwrap();
        let (code, out) = crate::support::run_into("scenarios/completion-from-approved.toml", variants, tmp.path());
        assert_eq!(code, 0, "{out}");
        let writes: Vec<_> = session_sql(tmp.path(), "task-01.S1")
            .into_iter()
            .filter(|r| r.state_after.is_some() && r.stmt.is_some_and(|s| !s.inserts_message()))
            .collect();
        let complete = writes.iter().position(|r| r.stmt == Some(Stmt::MarkComplete)).expect("a terminal write");
        assert_eq!(writes[complete].state_after, Some(TaskState::Complete));
        writes[..complete].iter().rev().find(|r| r.stmt != Some(Stmt::Heartbeat)).and_then(|r| r.stmt)
    };
    // The scenario names the variant itself; the default is C20's, run from a copy without it.
    assert_eq!(last_state_write_before_complete(&[]), Some(Stmt::SetNeedsReview), "the completion review, then `complete`");
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("scenarios/completion-from-approved.toml")).unwrap();
    let path = tmp.path().join("default.toml");
    std::fs::write(&path, text.replace("variants = [\"complete-from-approved\"]", "variants = []")).unwrap();
    let out = tmp.path().join("run");
    run_ok(&path, 3, &out);
    let writes: Vec<_> = session_sql(&out, "task-01.S1")
        .into_iter()
        .filter(|r| r.state_after.is_some() && r.stmt.is_some_and(|s| !s.inserts_message()))
        .collect();
    let complete = writes.iter().position(|r| r.stmt == Some(Stmt::MarkComplete)).unwrap();
    assert_eq!(writes[..complete].iter().rev().find(|r| r.stmt != Some(Stmt::Heartbeat)).and_then(|r| r.stmt), Some(Stmt::ResumeWorking));
}
