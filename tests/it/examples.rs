//! One test per worked example of seed 000 ("Example: …" sections): each runs its shipped
//! scenario under `scenarios/examples/` and asserts the states, messages and context
//! figures the seed describes.

use rehearsal::trace_reader::TraceRecord;
use rehearsal::vocab::{ActorName, Stmt, TaskState, WatcherKind};

use crate::support::{
    actor, actor_sql, by_watcher, ctx_of, find_line, messages, run_example, session, session_sql, sql_rows, status_lines, task_row, trace,
};

#[test]
fn bootstrap_claims_loads_instructions_and_logs_5_7_12_percent() {
    let (dir, out, code) = run_example("bootstrap");
    assert_eq!(code, 0, "{out}");
    let lines = status_lines(dir.path(), "task-01");
    // 000 "Example: Bootstrap & First Execution", Step 5 and Step 7.
    assert_eq!(lines[0], "bootstrap started [ctx: 5%]");
    assert!(lines[1].starts_with("task claimed, session: ") && lines[1].ends_with("worked_by: musician-task-01 [ctx: 7%]"), "{}", lines[1]);
    assert_eq!(lines[2], "instructions loaded: docs/plans/implementation/task-01.md [ctx: 12%]");
    assert_eq!(lines[3], "step 1 started [ctx: 12%]");
    assert_eq!(lines[4], "step 1 agent 1 launched [ctx: 15%]");
    assert_eq!(lines[5], "step 1 agent 1 returned [ctx: 17%]");
    assert_eq!(std::fs::read_to_string(dir.path().join("temp/task-01-deviations")).unwrap(), "", "created empty");
    // Step 3: the claim changes exactly one row; Step 4: the instruction read by type.
    let sql = session_sql(dir.path(), "task-01.S1");
    assert_eq!((sql[0].stmt, sql[0].rows.as_str(), sql[0].state_after), (Some(Stmt::ClaimTask), "1", Some(TaskState::Working)));
    assert_eq!((sql[1].stmt, sql[1].rows.as_str()), (Some(Stmt::ReadInstruction), "1"));
    assert_eq!(task_row(dir.path(), "task-01").1, "musician-task-01");
    // Step 6: the background watcher polls for messages every 15 s (+ the statement time).
    let polls: Vec<i64> = actor_sql(dir.path(), "task-01.S1.bg-watcher-1")
        .iter()
        .filter(|e| e.stmt == Some(Stmt::ReadNewConductorMessages))
        .map(|e| e.t_ms)
        .collect();
    assert!(polls.len() >= 3, "{polls:?}");
    for pair in polls.windows(2) {
        let gap_ms = pair[1] - pair[0];
        assert!((15_000..=15_000 + 2 * 3_000).contains(&gap_ms), "watcher poll gap {gap_ms} ms");
    }
}

#[test]
fn a_blocked_claim_leaves_a_fallback_row_and_a_claim_blocked_message() {
    let (dir, out, code) = run_example("guard-block");
    assert_eq!(code, 0, "the scenario expects the liveness violation\n{out}");
    assert!(out.contains("PASS (expected violations: liveness)"), "{out}");
    let db = crate::support::open_db(dir.path());
    let (fallback, state): (String, String) = db
        .query_row("SELECT task_id, state FROM orchestration_tasks WHERE task_id LIKE 'fallback-%'", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    assert_eq!(state, "exited");
    let session = fallback.strip_prefix("fallback-").unwrap();
    let blocked: Vec<_> = messages(dir.path()).into_iter().filter(|m| m.3 == "claim_blocked").collect();
    assert_eq!(blocked.len(), 1);
    assert_eq!((blocked[0].1.as_str(), blocked[0].2.as_str()), ("task-01", session));
    assert!(blocked[0].4.starts_with("CLAIM BLOCKED: Guard prevented claim on task-01"));
    assert!(!dir.path().join("temp/task-01-status").exists(), "a blocked session writes no status");
    let hook = trace(dir.path()).into_iter().find(|r| r.event == "stop_hook").expect("stop hook ran");
    assert!(hook.detail.contains("exit allowed"), "{hook:?}");
}

#[test]
fn subagents_are_launched_returned_and_integrated_one_after_another() {
    let (dir, out, code) = run_example("subagent-integration");
    assert_eq!(code, 0, "{out}");
    let lines = status_lines(dir.path(), "task-01");
    let (start, start_ctx) = find_line(&lines, "step 2 started");
    let expected = [
        "step 2 agent 1 launched",
        "step 2 agent 1 returned",
        "step 2 agent 1 integrated",
        "step 2 agent 2 launched",
        "step 2 agent 2 returned",
        "step 2 agent 2 integrated",
    ];
    let deltas = [1, 2, 1, 1, 2, 1];
    let mut previous = start_ctx;
    for (offset, (prefix, delta)) in expected.iter().zip(deltas).enumerate() {
        let line = &lines[start + 1 + offset];
        assert!(line.starts_with(prefix), "expected `{prefix}`, got `{line}`");
        assert_eq!(ctx_of(line) - previous, delta, "{line}");
        previous = ctx_of(line);
    }
    // "consuming ~7-8% context" for the step, and no tests between agents.
    assert_eq!(previous - start_ctx, 8);
    assert!(!lines[start..start + 7].iter().any(|l| l.contains("verification")));
}

#[test]
fn a_checkpoint_verifies_requests_review_pauses_and_resumes_on_approval() {
    let (dir, out, code) = run_example("verification-checkpoint");
    assert_eq!(code, 0, "{out}");
    let lines = status_lines(dir.path(), "task-01");
    let (reached, reached_ctx) = find_line(&lines, "checkpoint 1 reached");
    let (verified, verified_ctx) = find_line(&lines, "verification tests: all passing");
    assert_eq!(verified, reached + 1);
    assert!((2..=3).contains(&(verified_ctx - reached_ctx)), "verification cost ~2-3 %");
    let (approved, _) = find_line(&lines, "checkpoint 1 approved (step 2)");
    assert!(approved > verified);
    let request = messages(dir.path()).into_iter().find(|m| m.3 == "review_request").expect("a review request");
    assert!(request.4.contains("Checkpoint: 1 of 4") && request.4.contains("Context Usage: "), "{}", request.4);
    // Message first, then needs_review; the background watcher is gone before the pause
    // watcher polls every 10 s; the approval comes back as review_approved; a new watcher.
    let rows = trace(dir.path());
    let s1 = session("task-01.S1");
    let first_watcher = actor("task-01.S1.bg-watcher-1");
    let at = |pred: &dyn Fn(&TraceRecord) -> bool| rows.iter().position(pred).expect("event");
    let request_at = at(&|r| r.stmt == Some(Stmt::SendReviewRequest));
    let needs_review_at = at(&|r| r.stmt == Some(Stmt::SetNeedsReview));
    let bg_killed_at = at(&|r| r.actor == Some(first_watcher) && r.event == "killed");
    let pause_polls: Vec<i64> = rows
        .iter()
        .filter(|r| by_watcher(r, s1, WatcherKind::Pause) && r.stmt == Some(Stmt::ReadTaskState))
        .map(|r| r.t_ms)
        .take(4)
        .collect();
    let approved_at = at(&|r| r.stmt == Some(Stmt::SetTaskState) && r.state_after == Some(TaskState::ReviewApproved));
    let resumed_at = at(&|r| r.actor == Some(ActorName::Session(s1)) && r.stmt == Some(Stmt::ResumeWorking));
    assert!(request_at < needs_review_at && needs_review_at < bg_killed_at && bg_killed_at < approved_at && approved_at < resumed_at);
    for pair in pause_polls.windows(2) {
        assert!((10_000..=16_000).contains(&(pair[1] - pair[0])), "pause poll gap {:?}", pair);
    }
    assert!(
        rows[resumed_at..].iter().any(|r| by_watcher(r, s1, WatcherKind::Background) && r.actor != Some(first_watcher)),
        "a new background watcher"
    );
}

#[test]
fn a_rejected_checkpoint_is_fixed_logged_as_a_deviation_and_resubmitted() {
    let (dir, out, code) = run_example("pause-feedback");
    assert_eq!(code, 0, "{out}");
    let lines = status_lines(dir.path(), "task-01");
    let (submitted, _) = find_line(&lines, "checkpoint 2 submitted for review");
    let (failed, _) = find_line(&lines, "review_failed — feedback to address");
    let (fixed, _) = find_line(&lines, "fixing: feedback on checkpoint 2 applied");
    let (resubmitted, _) = find_line(&lines, "checkpoint 2 resubmitted after feedback fixes");
    let (approved, _) = find_line(&lines, "checkpoint 2 approved");
    assert!(submitted < failed && failed < fixed && fixed < resubmitted && resubmitted < approved);
    let deviations = std::fs::read_to_string(dir.path().join("temp/task-01-deviations")).unwrap();
    assert_eq!(deviations, "checkpoint 2: review_failed (Smoothness 6/9) [Medium]\n");
    let kinds: Vec<String> = messages(dir.path()).into_iter().filter(|m| m.1 == "task-01").map(|m| m.3).collect();
    let rejection = kinds.iter().position(|k| k == "rejection").expect("a rejection message");
    assert_eq!(kinds[rejection - 1], "review_request");
    assert_eq!(&kinds[rejection + 1..rejection + 3], ["review_request", "approval"]);
    // The task's states: needs_review → review_failed → working → needs_review → approved.
    let mut window: Vec<TaskState> = sql_rows(dir.path())
        .into_iter()
        .filter(|e| !matches!(e.stmt, Some(Stmt::Heartbeat | Stmt::ConductorHeartbeat | Stmt::ConductorSetState)))
        .filter_map(|e| e.state_after)
        .collect();
    window.dedup();
    use TaskState::{NeedsReview, ReviewApproved, ReviewFailed, Working};
    assert!(window.windows(5).any(|w| w == [NeedsReview, ReviewFailed, Working, NeedsReview, ReviewApproved]), "{window:?}");
}

/// The context-tight story of 000 (the same task across its break point, clean exit and
/// resumption examples).
fn assert_context_warning(dir: &std::path::Path) -> (i64, i64) {
    let lines = status_lines(dir, "task-01");
    let (evaluated, evaluated_ctx) = find_line(&lines, "CONTEXT EVALUATION triggered at");
    assert!(evaluated_ctx >= 50, "evaluation at 50 % or more");
    assert!(lines[..evaluated].iter().any(|l| l.starts_with("step 3 self-correction: agent 2")));
    let warning = messages(dir).into_iter().find(|m| m.3 == "context_warning").expect("a context warning");
    assert!(warning.4.starts_with(&format!("CONTEXT WARNING: {evaluated_ctx}% usage")), "{}", warning.4);
    assert!(warning.4.contains("Self-Correction: YES (step 3, agent 2"), "{}", warning.4);
    let fit = crate::support::field(&warning.4, "Agents That Fit in 65% Budget:");
    // REF-3: (65 − ctx) / cost, the cost doubled by self-correction risk (~4 % → ~8 %).
    let risk: i64 = warning.4.split("but ~").nth(1).unwrap().split('%').next().unwrap().parse().unwrap();
    assert_eq!(fit, ((65 - evaluated_ctx) as f64 / risk as f64).round() as i64);
    // The context escalation is an error state with last_error = 'context_exhaustion_warning'.
    let set = trace(dir).into_iter().find(|r| r.stmt == Some(Stmt::SetContextWarning)).expect("state change");
    assert_eq!(set.state_after, Some(TaskState::Error));
    (evaluated_ctx, fit)
}

#[test]
fn a_context_warning_gets_a_reduced_scope_then_checkpoint_and_handoff() {
    let (dir, out, code) = run_example("context-tight-break-point");
    assert_eq!(code, 0, "{out}");
    let (_, fit) = assert_context_warning(dir.path());
    let reply = messages(dir.path()).into_iter().find(|m| m.3 == "fix_proposal").expect("the conductor's reduced scope");
    assert!(reply.4.contains(&format!("Complete {fit} more agents")), "{}", reply.4);
    let lines = status_lines(dir.path(), "task-01");
    let (scoped, _) = find_line(&lines, &format!("conductor fix_proposed: reduced scope — {fit} more agents"));
    let (checkpoint, _) = find_line(&lines, "context checkpoint after step");
    let launched_between = lines[scoped..checkpoint].iter().filter(|l| l.contains(" launched")).count();
    assert_eq!(launched_between as i64, fit, "exactly the agents that fit, then the checkpoint");
    let (exit, _) = find_line(&lines, "clean exit preparing");
    assert!(exit > checkpoint);
    assert!(std::fs::read_to_string(dir.path().join("temp/task-01-deviations")).unwrap().contains("deferred per conductor (Low"));
    let (state, worked_by, _, _) = task_row(dir.path(), "task-01");
    assert_eq!((state.as_str(), worked_by.as_str()), ("complete", "musician-task-01-S2"));
}

#[test]
fn a_clean_exit_writes_handoff_report_message_and_exited_last() {
    let (dir, out, code) = run_example("clean-exit-handoff");
    assert_eq!(code, 0, "{out}");
    assert_context_warning(dir.path());
    let lines = status_lines(dir.path(), "task-01");
    let (approved, _) = find_line(&lines, "conductor review_approved: proceed to checkpoint, then hand off");
    // Going on to checkpoint 2 would cross the 80 % ceiling (000 "Context Monitoring"), so
    // the musician hands off before the agent that would: the check comes before the launch.
    let (checkpoint, checked_ctx) = find_line(&lines, "context check before step 4 agent 3 launch");
    assert!(checked_ctx <= 80);
    let (handoff, _) = find_line(&lines, "HANDOFF written: temp/task-01-HANDOFF");
    assert_eq!(lines[handoff + 1].split(" [ctx").next().unwrap(), "report written: docs/implementation/reports/task-01-handoff-s1.md");
    assert!(lines[handoff + 2].starts_with("clean exit preparing"));
    assert!(approved < checkpoint && checkpoint < handoff);
    let doc = std::fs::read_to_string(dir.path().join("temp/task-01-HANDOFF")).unwrap();
    for section in [
        "# HANDOFF: task-01",
        "## Session Info",
        "- worked_by: musician-task-01\n",
        "## Completed Steps",
        "## Pending Steps",
        "## Deviations",
        "## Self-Correction",
        "## Pending Proposals",
        "## Next Session Instructions",
        "1. Claim task with worked_by = musician-task-01-S2",
    ] {
        assert!(doc.contains(section), "HANDOFF lacks `{section}`:\n{doc}");
    }
    // 000 "Clean Exit Protocol" 6-7: the handoff message, then `exited`, the last write.
    let s1: Vec<TraceRecord> = session_sql(dir.path(), "task-01.S1").into_iter().filter(|e| e.stmt != Some(Stmt::StopHookState)).collect();
    let n = s1.len();
    assert_eq!(
        (s1[n - 2].stmt, s1[n - 1].stmt, s1[n - 1].state_after),
        (Some(Stmt::SendHandoff), Some(Stmt::MarkExited), Some(TaskState::Exited))
    );
    let exited = messages(dir.path()).into_iter().find(|m| m.3 == "handoff" && m.2 != "task-00").unwrap();
    assert!(exited.4.starts_with("EXITED: ") && exited.4.contains("HANDOFF: temp/task-01-HANDOFF"), "{}", exited.4);
    // What happens next: the conductor reads the HANDOFF, proposes, relaunches.
    let rows = trace(dir.path());
    let read = rows
        .iter()
        .position(|r| r.actor == Some(ActorName::Conductor) && r.event == "file_read" && r.statement == "temp/task-01-HANDOFF")
        .expect("conductor reads the HANDOFF");
    let proposed = rows.iter().position(|r| r.stmt == Some(Stmt::SetTaskState) && r.state_after == Some(TaskState::FixProposed)).unwrap();
    let s2 = actor("task-01.S2");
    let claimed = rows.iter().position(|r| r.actor == Some(s2) && r.stmt == Some(Stmt::ClaimTask)).unwrap();
    assert!(read < proposed && proposed < claimed);
    assert_eq!(task_row(dir.path(), "task-01").0, "complete");
}

#[test]
fn a_successor_resumes_from_the_handoff_with_fresh_context_and_reverifies() {
    let (dir, out, code) = run_example("mid-session-resumption");
    assert_eq!(code, 0, "{out}");
    assert_context_warning(dir.path());
    let doc = std::fs::read_to_string(dir.path().join("temp/task-01-HANDOFF")).unwrap();
    let next = doc.lines().find_map(|l| l.strip_prefix("4. Continue from ")).expect("a continue line").to_string();
    let rows = trace(dir.path());
    let s2 = actor("task-01.S2");
    // Step 3: S2 claims from fix_proposed as -S2.
    let claim = rows.iter().position(|r| r.actor == Some(s2) && r.stmt == Some(Stmt::ClaimTask)).unwrap();
    let before = rows[..claim]
        .iter()
        .rev()
        .find(|r| r.state_after.is_some() && !matches!(r.stmt, Some(Stmt::ConductorHeartbeat | Stmt::ConductorSetState)))
        .unwrap();
    assert_eq!((before.stmt, before.state_after), (Some(Stmt::SetTaskState), Some(TaskState::FixProposed)));
    assert_eq!((rows[claim].rows.as_str(), rows[claim].state_after), ("1", Some(TaskState::Working)));
    // Step 4-5: it reads status, deviations and HANDOFF.
    for file in ["temp/task-01-status", "temp/task-01-deviations", "temp/task-01-HANDOFF"] {
        assert!(rows[claim..].iter().any(|r| r.actor == Some(s2) && r.event == "file_read" && r.statement == file), "{file}");
    }
    // Step 8-9: verification re-run, then the RESUMPTION status as a `resumption` message.
    let resumption = messages(dir.path()).into_iter().find(|m| m.3 == "resumption").expect("a resumption message");
    for fragment in [
        "RESUMPTION: musician-task-01-S2 taking over",
        "HANDOFF: present",
        "Status/comms mismatches: none",
        "Pending conductor messages: 1",
        "Assessment: clean handoff",
        &format!("Resuming from: {next}"),
    ] {
        assert!(resumption.4.contains(fragment), "`{fragment}` missing from:\n{}", resumption.4);
    }
    let lines = status_lines(dir.path(), "task-01");
    let s2_start = lines.iter().rposition(|l| l.starts_with("bootstrap started")).unwrap();
    let (verified, verified_ctx) = find_line(&lines[s2_start..], "verification tests: all passing");
    let (resumed, _) = find_line(&lines[s2_start..], "RESUMPTION: musician-task-01-S2 taking over");
    assert!(verified < resumed);
    assert!((12..=20).contains(&verified_ctx), "fresh session context {verified_ctx}%");
    // Step 10-11: the first agent S2 launches is the one the HANDOFF names.
    let first_launch = lines[s2_start..].iter().find(|l| l.contains(" launched")).unwrap();
    assert!(first_launch.starts_with(&format!("{next} launched")), "{first_launch} vs {next}");
    let (state, worked_by, _, _) = task_row(dir.path(), "task-01");
    assert_eq!((state.as_str(), worked_by.as_str()), ("complete", "musician-task-01-S2"));
}

#[test]
fn failed_subagents_are_retried_absorbed_or_reported_and_fixed() {
    let (dir, out, code) = run_example("error-recovery");
    assert_eq!(code, 0, "{out}");
    let lines = status_lines(dir.path(), "task-01");
    let order = [
        "step 2 agent 1 launched",
        "step 2 agent 1 FAILED",
        "step 2 agent 1 retry 1 launched",
        "step 2 agent 1 retry 1 FAILED",
        "step 2 agent 1 retry 2 launched",
        "step 2 agent 1 retry 2 returned",
        "step 3 agent 1 retry 2 FAILED — absorbing work",
        "step 3 agent 1 completed by musician (after 2 failed retries)",
        "step 4 agent 1 FAILED: unrecoverable",
        "ERROR reported (retry 1/5)",
        "conductor fix_proposed: fix applied, resuming",
    ];
    let mut previous = 0;
    for prefix in order {
        let (at, _) = find_line(&lines[previous..], prefix);
        previous += at;
    }
    // Absorbing costs ~10 % context (000 "Alternative Path — Both Retries Fail").
    let (absorbing, before) = find_line(&lines, "step 3 agent 1 retry 2 FAILED — absorbing work");
    assert_eq!(ctx_of(&lines[absorbing + 1]) - before, 10);
    let deviations = std::fs::read_to_string(dir.path().join("temp/task-01-deviations")).unwrap();
    assert!(deviations.contains("step 2 agent 1: succeeded after 2 retries (Low"), "{deviations}");
    assert!(deviations.contains("step 3 agent 1: absorbed after 2 failed retries (Medium"), "{deviations}");
    let error = messages(dir.path()).into_iter().find(|m| m.3 == "error").expect("an error report");
    assert!(error.4.starts_with("ERROR (Retry 1/5):") && error.4.contains("Awaiting conductor fix proposal"), "{}", error.4);
    let (state, _, retry_count, last_error) = task_row(dir.path(), "task-01");
    assert_eq!((state.as_str(), retry_count), ("complete", 1));
    assert_eq!(last_error, "step 4 agent 1: source file does not exist");
    let set_error = trace(dir.path()).into_iter().find(|r| r.stmt == Some(Stmt::SetError)).unwrap();
    assert_eq!(set_error.state_after, Some(TaskState::Error));
    assert!(messages(dir.path()).iter().any(|m| m.3 == "fix_proposal" && m.1 == "task-01"));
}
