//! Checkpoint verification that finds something (000 "Reference: Checkpoint Verification
//! Checklist"; docs/protocol.md C31), on `scenarios/verification-failures.toml`: a flaky test
//! that passes its 3 re-runs, a consistent failure fixed as a self-correction, a definitively
//! flaky test escalated, an unclear failure reported with its retry count, coverage improved,
//! debug code cleaned up. And the 80 % ceiling checked before the rework of a rejected review
//! and before an error report (000 "Context Monitoring & Break Point Logic"), on test-local
//! scenarios that cross it without those checks.

use std::path::Path;

use rehearsal::vocab::{Stmt, TaskState};

use crate::support::{ctx_of, field, find_line, messages, rehearsal, status_lines, stderr, stdout, task_row, trace};

/// Runs the shipped scenario into a fresh folder; it must pass.
fn run_verification_failures() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let o = rehearsal(&["run", "scenarios/verification-failures.toml", "--out", tmp.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}\n{}", stdout(&o), stderr(&o));
    tmp
}

/// The bodies of `task`'s messages of `kind`, in order.
fn bodies(dir: &Path, task: &str, kind: &str) -> Vec<String> {
    messages(dir).into_iter().filter(|m| m.1 == task && m.3 == kind).map(|m| m.4).collect()
}

/// The three re-run lines after `from`, each one re-run's context (+1 % by default) later.
fn assert_three_reruns(lines: &[String], from: usize, test: &str, results: [&str; 3]) {
    for (i, result) in results.iter().enumerate() {
        let line = &lines[from + 1 + i];
        let expected = format!("verification: {test} re-run {}/3 {result} [ctx: ", i + 1);
        assert!(line.starts_with(&expected), "expected `{expected}…`, got `{line}`");
        assert_eq!(ctx_of(line) - ctx_of(&lines[from + i]), 1, "a re-run's context is counted: {line}");
    }
}

#[test]
fn a_flaky_test_that_passes_its_three_reruns_is_marked_in_the_review_and_the_musician_proceeds() {
    let dir = run_verification_failures();
    let lines = status_lines(dir.path(), "task-01");
    // 000 "Flaky Test Handling" 1-2: "Re-run the same test 3 times"; "If all 3 pass: Test is
    // flaky, mark as such in review message but proceed".
    let (failed, _) = find_line(&lines, "verification: test_step1_agent2 failed, re-running it 3 times");
    assert_three_reruns(&lines, failed, "test_step1_agent2", ["passed", "passed", "passed"]);
    assert!(lines[failed + 4].starts_with("verification: test_step1_agent2 flaky (3/3 re-runs passed): marked in review, proceeding"));
    let (submitted, _) = find_line(&lines, "checkpoint 1 submitted for review");
    assert!(submitted > failed + 4);
    let request = &bodies(dir.path(), "task-01", "review_request")[0];
    assert!(
        request
            .contains("\n  Tests: All passing (24 tests, 4 new)\n  Flaky Tests: 1 (test_step1_agent2: failed once, passed 3/3 re-runs)\n"),
        "{request}"
    );
    assert!(bodies(dir.path(), "task-01", "error").is_empty(), "a flaky test that passes is not reported as an error");
    // The completion review's self code review finds debug code: 000 Example: Verification
    // Checkpoint Flow, "Self-Correction: YES (removed debug code)".
    find_line(&lines, "step 3 self-correction: self code review found debug code, removed it");
    let completion = &bodies(dir.path(), "task-01", "completion")[0];
    assert!(completion.contains("\n  Self-Correction: YES (removed debug code)\n"), "{completion}");
    assert_eq!(task_row(dir.path(), "task-01").0, "complete");
}

#[test]
fn a_consistent_failure_is_fixed_before_the_review_request_as_a_self_correction() {
    let dir = run_verification_failures();
    let lines = status_lines(dir.path(), "task-02");
    // 000 "Flaky Test Handling" 3: "If all 3 fail: Consistent failure, analyze and fix before
    // reporting"; "Test Failure Analysis Decision Tree" Step 3: "Fix the implementation",
    // "Re-run test to verify pass", "Note in review: 'Implementation fixed'".
    let (failed, _) = find_line(&lines, "verification: test_step1_agent2 failed, re-running it 3 times");
    assert_three_reruns(&lines, failed, "test_step1_agent2", ["failed", "failed", "failed"]);
    let fix = &lines[failed + 4];
    assert!(fix.starts_with("step 1 self-correction: test_step1_agent2 failed consistently, the implementation was wrong"), "{fix}");
    // 000 "Self-correction flag": "~6x" context: an integration (1-2 %) times 6.
    let fix_pct = ctx_of(fix) - ctx_of(&lines[failed + 3]);
    assert!(fix_pct == 6 || fix_pct == 12, "the fix costs 6x an integration: {fix_pct}");
    assert!(lines[failed + 5].starts_with("verification: test_step1_agent2 passes after the fix"));
    let (submitted, _) = find_line(&lines, "checkpoint 1 submitted for review");
    assert!(
        submitted > failed + 5,
        "fixed first, reported after (000 Verification Decision Matrix: \"Fix failures first, don't report yet\")"
    );
    let request = &bodies(dir.path(), "task-02", "review_request")[0];
    assert!(request.contains("\n  Test Failures: 1 fixed (test_step1_agent2: Implementation fixed)\n"), "{request}");
    assert!(
        request.contains("\n  Self-Correction: YES (step 1, checkpoint verification — test_step1_agent2 failed consistently"),
        "{request}"
    );
    assert!(request.contains("\n  Escalation: self-correction during execution (step 1,"), "an escalation trigger: {request}");
    assert_eq!(field_ctx(request), ctx_of(&lines[submitted - 1]));
    // The completion review: coverage 79 % < 80 %, "Improve coverage first, then report".
    let (low, _) = find_line(&lines, "verification: coverage 79% is below the 80% minimum: improving it before reporting");
    let (improved, _) = find_line(&lines, "verification: coverage 90% on modified code after new tests");
    assert!(low < improved);
    let completion = &bodies(dir.path(), "task-02", "completion")[0];
    assert!(completion.contains("\n  Coverage: 90% on modified code (was 79%: improved before reporting)"), "{completion}");
    assert!(bodies(dir.path(), "task-02", "error").is_empty());
    assert_eq!(task_row(dir.path(), "task-02"), ("complete".to_string(), "musician-task-02".to_string(), 0, String::new()));
}

/// The `Context Usage: N%` of a message.
fn field_ctx(body: &str) -> i64 {
    field(body, "Context Usage:")
}

#[test]
fn a_definitively_flaky_test_is_escalated_and_an_unclear_failure_is_reported_with_its_retry_count() {
    let dir = run_verification_failures();
    let lines = status_lines(dir.path(), "task-03");
    // 000 "Flaky Test Handling" 4: "If inconsistent (some pass, some fail): Definitively flaky,
    // mark as such and escalate to conductor".
    let (failed, _) = find_line(&lines, "verification: test_step1_agent2 failed, re-running it 3 times");
    assert_three_reruns(&lines, failed, "test_step1_agent2", ["passed", "passed", "failed"]);
    assert!(lines[failed + 4].starts_with("verification: test_step1_agent2 definitively flaky (2/3 re-runs passed): escalating"));
    let errors = bodies(dir.path(), "task-03", "error");
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].starts_with("ESCALATION: task-03 flaky test test_step1_agent2\n"), "{}", errors[0]);
    assert!(errors[0].contains("2/3 re-runs passed (000 Flaky Test Handling: definitively flaky)"), "{}", errors[0]);
    let request = &bodies(dir.path(), "task-03", "review_request")[0];
    assert!(
        request.contains("\n  Flaky Tests: 1 (test_step1_agent2: failed once, 2/3 re-runs passed; escalated to the conductor)\n"),
        "{request}"
    );
    // 000 "Test Failure Analysis Decision Tree" Step 5: "If root cause unclear: Increment
    // retry count, Report to conductor with analysis, Wait for conductor guidance".
    let (unclear, _) =
        find_line(&lines, "verification: test_step3_agent1 fails consistently, root cause unclear: reporting to the conductor");
    assert_three_reruns(&lines, unclear - 4, "test_step3_agent1", ["failed", "failed", "failed"]);
    assert!(lines[unclear + 1].starts_with("ERROR reported (retry 1/5): checkpoint verification: test_step3_agent1 fails consistently"));
    assert!(errors[1].starts_with("ERROR (Retry 1/5):\n"), "{}", errors[1]);
    assert!(
        errors[1].contains("Error: checkpoint verification: test_step3_agent1 fails consistently (0/3 re-runs passed), root cause unclear")
    );
    assert!(errors[1].contains("Awaiting conductor fix proposal"), "{}", errors[1]);
    let (state, _, retry_count, last_error) = task_row(dir.path(), "task-03");
    assert_eq!((state.as_str(), retry_count), ("complete", 1));
    assert!(last_error.ends_with("root cause unclear"), "{last_error}");
    // The row: the escalation (last_error 'flaky_test', retry_count unchanged), the error
    // report (+1), each answered fix_proposed, then working again, then the review.
    let writes: Vec<(Stmt, TaskState)> = trace(dir.path())
        .into_iter()
        .filter(|r| r.task_id().as_deref() == Some("task-03") && r.actor.is_some_and(|a| !a.is_conductor()))
        .filter_map(|r| Some((r.stmt?, r.state_after?)))
        .filter(|(stmt, _)| matches!(stmt, Stmt::SetEscalation | Stmt::SetError | Stmt::ResumeWorking | Stmt::SetNeedsReview))
        .collect();
    let kinds: Vec<Stmt> = writes.iter().map(|w| w.0).collect();
    let escalation = kinds.iter().position(|k| *k == Stmt::SetEscalation).expect("escalated");
    assert_eq!(&kinds[escalation..escalation + 3], [Stmt::SetEscalation, Stmt::ResumeWorking, Stmt::SetNeedsReview]);
    let error = kinds.iter().position(|k| *k == Stmt::SetError).expect("error reported");
    assert_eq!(&kinds[error..error + 3], [Stmt::SetError, Stmt::ResumeWorking, Stmt::SetNeedsReview]);
    assert_eq!(writes[error].1, TaskState::Error);
    // After the conductor's fix, verification runs again before the completion review.
    let (resumed, _) = find_line(&lines, "conductor fix_proposed: fix applied, resuming");
    let (verified, _) = find_line(&lines[resumed..], "verification tests: all passing");
    let (reported, _) = find_line(&lines[resumed..], "final checkpoint submitted for review");
    assert!(verified < reported);
}

/// Runs a test-local scenario (`text`, written into `tmp`) into `tmp/run`; it must pass.
/// Returns the run folder and task-01's status lines.
fn run_local(tmp: &Path, text: &str) -> (std::path::PathBuf, Vec<String>) {
    let (scenario, out) = (tmp.join("local.toml"), tmp.join("run"));
    std::fs::write(&scenario, text).unwrap();
    // The ceiling checks before the work are the variant's (docs/protocol.md C32).
    let o = rehearsal(&["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "--variant", "ceiling-before-work"]);
    assert_eq!(o.status.code(), Some(0), "{}\n{}", stdout(&o), stderr(&o));
    let lines = status_lines(&out, "task-01");
    (out, lines)
}

/// A test-local scenario with every cost a constant and context evaluation off (thresholds
/// at 100 %), `extra` the rest; run as `run_local` does.
fn run_high_context(tmp: &Path, extra: &str) -> (std::path::PathBuf, Vec<String>) {
    let text = format!(
        "description = \"ceiling test\"\n[run]\nseed = 3\n[context]\nbootstrap_start_pct = 5\nclaim_pct = 2\nagent_launch_pct = 2\nagent_return_pct = 4\nverification_pct = 3\nmessage_pct = 1\nevaluate_at_pct = 100\nproceed_below_pct = 100\nescalate_above_pct = 100\n{extra}"
    );
    run_local(tmp, &text)
}

fn assert_under_ceiling(lines: &[String]) {
    let over: Vec<&String> = lines.iter().filter(|l| ctx_of(l) > 80).collect();
    assert!(over.is_empty(), "status lines above the 80% ceiling: {over:?}\n{}", lines.join("\n"));
}

#[test]
fn the_ceiling_is_checked_before_the_rework_of_a_rejected_review() {
    // 64 % after bootstrap, 72 % after the agent; the checkpoint (verification 3 %, request
    // and answer 2 %, exit 3 %) still fits; the request leaves 76 %, and the rejection's
    // rework (2 %) and re-verification (3 %) would reach 81 %: without the check a status
    // line crosses the ceiling.
    let tmp = tempfile::tempdir().unwrap();
    let (out, lines) = run_high_context(
        tmp.path(),
        "instructions_pct = 57\nintegration_pct = 2\n[[conductor.answers]]\ntask = 1\nreview = 1\nanswer = \"review_failed\"\n[tasks]\ncount = 1\nsteps = 1\nsubagents_per_step = 1\ncheckpoints = [1]\n",
    );
    assert_under_ceiling(&lines);
    let (failed, _) = find_line(&lines, "review_failed — feedback to address");
    let check = &lines[failed + 1];
    assert!(check.starts_with("context check before the rework after review_failed: ~"), "{check}");
    assert!(check.contains("would cross the 80% ceiling, handing off now"), "{check}");
    assert!(!lines.iter().any(|l| l.starts_with("fixing: feedback")), "no rework past the ceiling");
    // The successor (with fresh context) does the work; review_failed → exited is the clean
    // exit of docs/protocol.md D10.
    assert_eq!(task_row(&out, "task-01").0, "complete");
}

#[test]
fn the_ceiling_is_checked_before_an_error_report() {
    // 43 % after bootstrap; agent 1 fails three times (3 × 6 %) and is absorbed (10 %): 71 %
    // (a successor, resuming at agent 2, does not pay that again). Agent 2's worst case (6 %,
    // no integration cost) and the exit's 3 % still fit; it fails unrecoverably at 77 %.
    // Without the check the report (1 %) and then the hand-off before the agent's redo (3 %)
    // would end at 81 %.
    let tmp = tempfile::tempdir().unwrap();
    let (out, lines) = run_high_context(
        tmp.path(),
        "instructions_pct = 36\nintegration_pct = 0\n[[subagents.script]]\ntask = 1\nstep = 1\nagent = 1\nfailures = 3\n[[subagents.script]]\ntask = 1\nstep = 1\nagent = 2\nfailures = 1\nunrecoverable = true\n[tasks]\ncount = 1\nsteps = 1\nsubagents_per_step = 2\ncheckpoints = []\n",
    );
    assert_under_ceiling(&lines);
    let (failed, failed_ctx) = find_line(&lines, "step 1 agent 2 FAILED: unrecoverable");
    assert_eq!(failed_ctx, 77, "{}", lines.join("\n"));
    assert!(lines[failed + 1].starts_with("error not reported: step 1 agent 2: source file does not exist"), "{}", lines[failed + 1]);
    assert!(
        lines[failed + 2].starts_with("context check before the error report: ~1% more would cross the 80% ceiling"),
        "{}",
        lines[failed + 2]
    );
    // S1 reported nothing; S2, with fresh context, meets the same failure and reports it.
    let errors: Vec<_> = messages(&out).into_iter().filter(|m| m.3 == "error").collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].4.starts_with("ERROR (Retry 1/5):") && field(&errors[0].4, "Context Usage:") < 77, "{errors:?}");
    assert_eq!(task_row(&out, "task-01").0, "complete");
}

#[test]
fn odds_draw_the_findings_and_an_unclear_failure_every_time_ends_at_the_fifth_error_report() {
    // Every test run finds a consistent failure whose root cause stays unclear: each is
    // reported with its retry count (000 "Test Failure Analysis Decision Tree" Step 5), the
    // conductor proposes a fix, the musician verifies again; the 5th report is terminal
    // (004 "Terminal Failure (5th retry)", docs/protocol.md C26).
    let tmp = tempfile::tempdir().unwrap();
    let text = "[run]\nseed = 8\n[verification]\ntest_failure_probability = 1.0\nunclear_cause_probability = 1.0\n[tasks]\ncount = 1\nsteps = 1\nsubagents_per_step = 1\ncheckpoints = []\n[expect]\nviolations = [\"liveness\"]\n";
    let (out, lines) = run_local(tmp.path(), text);
    let errors: Vec<String> = messages(&out).into_iter().filter(|m| m.3 == "error").map(|m| m.4).collect();
    assert_eq!(errors.len(), 5, "{errors:?}");
    for (i, error) in errors.iter().enumerate() {
        assert!(error.starts_with(&format!("ERROR (Retry {}/5):", i + 1)), "{error}");
        assert!(error.contains("root cause unclear"), "{error}");
    }
    assert_eq!(lines.iter().filter(|l| l.contains("re-running it 3 times")).count(), 5);
    let (state, _, retry_count, _) = task_row(&out, "task-01");
    assert_eq!((state.as_str(), retry_count), ("exited", 5));
    assert!(!messages(&out).iter().any(|m| m.3 == "review_request" || m.3 == "completion"), "nothing reported as passing");
}

#[test]
fn flaky_odds_mark_the_test_and_proceed_when_its_reruns_pass() {
    let tmp = tempfile::tempdir().unwrap();
    let text = "[run]\nseed = 8\n[verification]\nflaky_test_probability = 1.0\nflaky_rerun_pass_probability = 1.0\n[tasks]\ncount = 1\nsteps = 2\nsubagents_per_step = 1\ncheckpoints = [1]\n";
    let (out, lines) = run_local(tmp.path(), text);
    // Both reviews' first verification finds a flaky test; the resubmission-free run completes.
    assert_eq!(lines.iter().filter(|l| l.contains("flaky (3/3 re-runs passed): marked in review, proceeding")).count(), 2);
    let request = &bodies(&out, "task-01", "review_request")[0];
    assert!(
        request.contains("\n  Tests: All passing\n  Flaky Tests: 1 (test_step1_agent1: failed once, passed 3/3 re-runs)\n"),
        "{request}"
    );
    assert_eq!(task_row(&out, "task-01").0, "complete");
}
