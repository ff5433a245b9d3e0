//! Deviation escalation (seed 000 "Deviations & Escalation Thresholds", REF-6) under its two
//! readings (docs/protocol.md D12): REF-6's "2+ Medium or 1+ High" (the default) and
//! "> 2 deviations" (`escalate-over-two`), on `scenarios/deviation-escalation.toml`, the
//! scenario FINDINGS.md section 12 runs, and on a resumption.

use std::path::Path;

use rehearsal::trace::trace_reader::TraceRecord;
use rehearsal::vocab::{ActorName, Stmt, TaskState};

use crate::support::{messages, rehearsal, root, status_lines, stderr, stdout, summary_field, task_row, trace};

/// Runs `scenario` (relative to the root) with `variants`; (folder guard, run folder, stdout).
fn run(scenario: &Path, variants: &[&str]) -> (tempfile::TempDir, std::path::PathBuf, String) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let mut args = vec!["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap()];
    for variant in variants {
        args.extend(["--variant", variant]);
    }
    let o = rehearsal(&args);
    assert_eq!(o.status.code(), Some(0), "{}\n{}", stdout(&o), stderr(&o));
    (tmp, out, stdout(&o))
}

/// Status lines without their `[ctx: NN%]`.
fn lines(dir: &Path) -> Vec<String> {
    status_lines(dir, "task-01").iter().map(|l| l.rsplit_once(" [ctx: ").map_or(l.clone(), |(t, _)| t.to_string())).collect()
}

fn positions(lines: &[String], prefix: &str) -> Vec<usize> {
    lines.iter().enumerate().filter(|(_, l)| l.starts_with(prefix)).map(|(i, _)| i).collect()
}

/// What the session does past the threshold, and what follows: the `error` message (an
/// ESCALATION), then the `error` state with `last_error = 'deviation_escalation'` and the
/// retry count untouched (not a failure); the conductor's correction task (`fix_proposal`,
/// `fix_proposed`); back to `working`; the correction applied and verification re-run.
fn assert_escalated_once(dir: &Path, covering: usize) {
    let all = messages(dir);
    let escalations: Vec<_> = all.iter().filter(|m| m.3 == "error" && m.4.starts_with("ESCALATION: task-01 ")).collect();
    assert_eq!(escalations.len(), 1, "{all:#?}");
    let answer = all.iter().find(|m| m.0 > escalations[0].0 && m.2 == "task-00").expect("the conductor answers");
    assert_eq!((answer.3.as_str(), answer.4.lines().next()), ("fix_proposal", Some("CORRECTION TASK: task-01")));
    let rows = trace(dir);
    let s1 = ActorName::parse("task-01.S1").unwrap();
    let at = |what: &dyn Fn(&TraceRecord) -> bool| rows.iter().position(what).expect("event");
    let message = at(&|r| r.actor == Some(s1) && r.stmt == Some(Stmt::SendError));
    let state = at(&|r| r.actor == Some(s1) && r.stmt == Some(Stmt::SetEscalation));
    let fix = at(&|r| r.stmt == Some(Stmt::SetTaskState) && r.state_after == Some(TaskState::FixProposed));
    let resumed = state + rows[state..].iter().position(|r| r.actor == Some(s1) && r.stmt == Some(Stmt::ResumeWorking)).unwrap();
    assert!(message < state && state < fix && fix < resumed, "message first, then state; the answer; then working");
    assert_eq!(rows[state].state_after, Some(TaskState::Error));
    let lines = lines(dir);
    let escalated = positions(&lines, "ESCALATION to conductor: ")[0];
    assert_eq!(
        &lines[escalated + 1..escalated + 5],
        [
            "conductor fix_proposed: correction task, applying it before resuming".to_string(),
            "correction task applied".to_string(),
            "verification tests: all passing".to_string(),
            format!("deviations escalated and answered: {covering}"),
        ]
    );
    let (state, _, retry_count, last_error) = task_row(dir, "task-01");
    assert_eq!((state.as_str(), retry_count, last_error.as_str()), ("complete", 0, "deviation_escalation"));
}

/// Three Lows, then two Mediums. REF-6 ignores the Lows and escalates at the first agent
/// boundary after the second Medium (the session takes stock after every agent); "> 2"
/// escalates after the third Low and not again (only two deviations follow). Same seed, same
/// scenario: different traces.
#[test]
fn ref_6_escalates_after_the_second_medium_and_over_two_after_the_third_deviation() {
    let scenario = root().join("scenarios/deviation-escalation.toml");
    let (_t1, default, default_out) = run(&scenario, &[]);
    let (_t2, over_two, over_two_out) = run(&scenario, &["escalate-over-two"]);
    assert_ne!(summary_field(&default_out, "trace hash"), summary_field(&over_two_out, "trace hash"));
    let deviations = std::fs::read_to_string(default.join("temp/task-01-deviations")).unwrap();
    assert_eq!(deviations, std::fs::read_to_string(over_two.join("temp/task-01-deviations")).unwrap(), "the same five deviations");
    assert_eq!(deviations.lines().map(|l| l.contains("(Low")).collect::<Vec<_>>(), [true, true, true, false, false]);
    assert!(deviations.lines().skip(3).all(|l| l.ends_with("[Medium]")), "{deviations}");

    // The default: not at three Lows (REF-6 counts severities), at the second Medium.
    assert_escalated_once(&default, 5);
    let lines_default = lines(&default);
    let escalated = positions(&lines_default, "ESCALATION to conductor: ")[0];
    let rejections = positions(&lines_default, "review_failed — feedback to address");
    assert_eq!(rejections.len(), 2);
    assert!(rejections[1] < escalated, "after the second Medium");
    assert!(
        !lines_default[rejections[1]..escalated].iter().any(|l| l.starts_with("ESCALATION")),
        "and at no earlier boundary: three Lows and one Medium are within REF-6"
    );
    assert_eq!(lines_default[escalated - 1], "step 4 agent 1 integrated", "the first agent boundary after it");
    assert_eq!(
        lines_default[escalated],
        "ESCALATION to conductor: deviations past the escalation threshold (REF-6: 2+ Medium or 1+ High): 5 not yet escalated (0 High, 2 Medium, 3 Low)"
    );

    // "> 2 deviations": at the third Low, before any review.
    assert_escalated_once(&over_two, 3);
    let lines_over_two = lines(&over_two);
    let escalated = positions(&lines_over_two, "ESCALATION to conductor: ")[0];
    assert_eq!(lines_over_two[escalated - 1], "step 2 agent 1 integrated");
    assert!(positions(&lines_over_two, "review_failed").iter().all(|r| *r > escalated));
    assert_eq!(
        lines_over_two[escalated],
        "ESCALATION to conductor: deviations past the escalation threshold (> 2 deviations): 3 not yet escalated (0 High, 0 Medium, 3 Low)"
    );
}

/// 003 "Resumption Decision Tree" 5: S1's checkpoints are rejected twice (two Mediums), the
/// second just before its clean exit, so S1 never takes stock after another agent. S2 finds them past
/// REF-6, assesses "needs guidance" and reports to the conductor before any work; under
/// "> 2 deviations" two are within the threshold and S2 resumes at once.
#[test]
fn a_successor_escalates_the_deviations_its_predecessor_left_past_the_threshold() {
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("scenarios/examples/clean-exit-handoff.toml")).unwrap();
    // The example rejects checkpoint 2 (review 2) once; a checkpoint after step 4 (review 4,
    // rejected too) follows, approved on the resubmission, and 6 % more context at the claim
    // puts S1 at the ceiling right after it: S1 hands off before step 5 agent 1.
    let answers = "\n[[conductor.answers]]\ntask = 1\nreview = 4\nanswer = \"review_failed\"\n";
    let edited = text
        .replace("context_reply = \"fix\"\n", &format!("context_reply = \"approve\"\n{answers}"))
        .replace("checkpoints = [2, 3]", "checkpoints = [2, 3, 4]")
        .replace("claim_pct = 2\n", "claim_pct = 8\n");
    assert_eq!(edited.matches("review_failed").count(), 2, "{edited}");
    assert!(edited.contains("checkpoints = [2, 3, 4]") && edited.contains("claim_pct = 8\n"), "{edited}");
    let scenario = tmp.path().join("clean-exit-rejected-twice.toml");
    std::fs::write(&scenario, edited).unwrap();
    // S1 hands off below the ceiling before step 5 (the check before the work is the variant's,
    // docs/protocol.md C32).
    let (_t1, default, _) = run(&scenario, &["ceiling-before-work"]);
    let (_t2, over_two, _) = run(&scenario, &["escalate-over-two", "ceiling-before-work"]);
    for dir in [&default, &over_two] {
        let deviations = std::fs::read_to_string(dir.join("temp/task-01-deviations")).unwrap();
        assert_eq!(deviations.lines().filter(|l| l.ends_with("[Medium]")).count(), 2, "{deviations}");
    }
    let default_lines = lines(&default);
    let resumed = positions(&default_lines, "RESUMPTION: musician-task-01-S2 taking over")[0];
    assert!(default_lines
        .contains(&"  Deviations found: 2 (0 High, 2 Medium, 0 Low; past the threshold, REF-6: 2+ Medium or 1+ High)".to_string()));
    assert!(default_lines.contains(&"  Assessment: needs guidance".to_string()));
    let escalated = positions(&default_lines, "ESCALATION to conductor: ");
    assert_eq!(escalated.len(), 1);
    assert!(escalated[0] > resumed);
    assert!(!default_lines[resumed..escalated[0]].iter().any(|l| l.contains(" launched")), "before any work");
    let escalation = messages(&default).into_iter().find(|m| m.3 == "error").expect("S2's escalation");
    assert!(escalation.4.contains("  - checkpoint 2: review_failed (Smoothness 6/9) [Medium]"), "{}", escalation.4);
    assert!(default_lines.contains(&"deviations escalated and answered: 2".to_string()));

    let over_two_lines = lines(&over_two);
    assert!(over_two_lines.contains(&"  Assessment: clean handoff".to_string()));
    assert!(positions(&over_two_lines, "ESCALATION").is_empty());
    assert!(!messages(&over_two).iter().any(|m| m.3 == "error"));
}
