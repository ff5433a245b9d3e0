//! The conductor's charitable reading of the seeds (docs/protocol.md C37–C40), asserted on the
//! database and the trace of shipped scenarios, each against the variant that restores the
//! first conductor's habit.

use std::path::Path;

use rehearsal::vocab::{ActorName, RuleId, Stmt, TaskState};

use crate::support::{messages, open_db, root, run_path, task_row, trace};

fn run(scenario: &str, variants: &[&str]) -> (tempfile::TempDir, rehearsal::run::RunSummary) {
    let dir = tempfile::tempdir().unwrap();
    let summary = run_path(&root().join(scenario), &dir.path().join("out"), variants);
    (dir, summary)
}

fn out(dir: &tempfile::TempDir) -> std::path::PathBuf {
    dir.path().join("out")
}

/// The conductor's writes that found the task row `exited` (its `before` state).
fn conductor_writes_on_exited(dir: &Path) -> Vec<(i64, Stmt)> {
    trace(dir)
        .into_iter()
        .filter(|r| r.actor.is_some_and(|a| a.is_conductor()) && r.stmt == Some(Stmt::SetTaskState))
        .filter(|r| r.observed.contains("before=exited,"))
        .map(|r| (r.t_ms, r.stmt.unwrap()))
        .collect()
}

#[test]
fn slow_review_the_conductor_never_answers_onto_an_exited_row() {
    let (dir, summary) = run("scenarios/slow-review.toml", &[]);
    let trace_rows = trace(&out(&dir));
    // Each session timed out twice and exited; each late approval was withheld.
    let withheld = trace_rows.iter().filter(|r| r.event == "answer_withheld").count();
    assert!(withheld >= 4, "{withheld} answers withheld\n{}", summary.render());
    assert!(trace_rows.iter().any(|r| r.state_after == Some(TaskState::Exited)));
    let hand_overs_only: Vec<_> = conductor_writes_on_exited(&out(&dir));
    // The only conductor state writes on an exited row are hand-overs (`fix_proposed`), never
    // an answer: check in the database that no approval message went to an exited session.
    for (t_ms, _) in &hand_overs_only {
        let row = trace_rows.iter().find(|r| r.t_ms == *t_ms && r.stmt == Some(Stmt::SetTaskState)).unwrap();
        assert_eq!(row.state_after, Some(TaskState::FixProposed), "t={t_ms}: {}", row.observed);
    }
    let approvals = messages(&out(&dir)).into_iter().filter(|m| m.3 == "approval").count();
    assert_eq!(approvals, 0, "no approval was sent: every review outlasted its session");
    assert_eq!(summary.verdict.rules(), vec!["liveness"], "{}", summary.render());
    // The first conductor's habit, for comparison: its approval lands on the exited row.
    let (old, old_summary) = run("scenarios/slow-review.toml", &["answer-on-poll"]);
    let landed: Vec<_> = trace(&out(&old))
        .into_iter()
        .filter(|r| r.actor == Some(ActorName::CONDUCTOR) && r.state_after == Some(TaskState::ReviewApproved))
        .filter(|r| r.observed.contains("before=exited,"))
        .collect();
    assert!(!landed.is_empty(), "answer-on-poll: an approval on an exited row\n{}", old_summary.render());
    assert!(old_summary.verdict.rules().contains(&"allowed-transitions"));
    let explained = old_summary.verdict.violations.iter().find(|v| v.rule == RuleId::AllowedTransitions).unwrap();
    assert!(explained.explanation.contains("conductor choices C37 (answers on its poll"), "{}", explained.explanation);
}

#[test]
fn slow_review_heartbeat_the_conductor_beats_while_it_reviews_and_is_waited_for() {
    let (dir, summary) = run("scenarios/slow-review-heartbeat.toml", &[]);
    assert_eq!(summary.tasks_complete, 1, "{}", summary.render());
    let rows = trace(&out(&dir));
    let beats_while_reviewing = rows
        .iter()
        .filter(|r| r.actor == Some(ActorName::CONDUCTOR) && r.stmt == Some(Stmt::ConductorHeartbeat))
        .filter(|r| {
            // A heartbeat between a `reviewing` write and the next `watching` one.
            rows.iter()
                .rfind(|w| w.stmt == Some(Stmt::ConductorSetState) && w.seq < r.seq)
                .is_some_and(|w| w.detail.contains("state=reviewing"))
        })
        .count();
    assert!(beats_while_reviewing >= 8, "two 35-minute reviews beat every 8 minutes: {beats_while_reviewing}");
    assert!(!rows.iter().any(|r| r.state_after == Some(TaskState::Exited)), "nobody timed out into an exit");
    let (_, silent) = run("scenarios/slow-review-heartbeat.toml", &["silent-reviews"]);
    assert_eq!(silent.tasks_complete, 0, "{}", silent.render());
}

#[test]
fn guard_block_the_conductor_acts_on_claim_blocked() {
    let (dir, summary) = run("scenarios/examples/guard-block.toml", &[]);
    assert_eq!(summary.tasks_complete, 1, "{}", summary.render());
    let rows = trace(&out(&dir));
    let read = rows.iter().position(|r| r.event == "claim_blocked_intervention").expect("the intervention is noted");
    // After it: the hand-over (message, then fix_proposed) and S2's claim.
    let after = &rows[read..];
    let handoff = after.iter().position(|r| r.stmt == Some(Stmt::SendConductorMessage) && r.detail.contains("message_type=handoff"));
    let fix = after.iter().position(|r| r.actor == Some(ActorName::CONDUCTOR) && r.state_after == Some(TaskState::FixProposed));
    assert!(handoff.is_some() && fix.is_some() && handoff < fix, "handoff message, then fix_proposed");
    let (state, worked_by, _, _) = task_row(&out(&dir), "task-01");
    assert_eq!((state.as_str(), worked_by.as_str()), ("complete", "musician-task-01-S2"));
    let fallback: i64 = open_db(&out(&dir))
        .query_row("SELECT count(*) FROM orchestration_tasks WHERE task_id LIKE 'fallback-%' AND state = 'exited'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(fallback, 1, "S1's fallback row");
    // The first conductor's habit: the row stays `working` with no heartbeat, and liveness
    // names the choice.
    let (old, ignored) = run("scenarios/examples/guard-block.toml", &["ignore-claim-blocked"]);
    assert_eq!(task_row(&out(&old), "task-01").0, "working");
    let liveness = ignored.verdict.violations.iter().find(|v| v.rule == RuleId::Liveness).expect("liveness");
    assert!(liveness.explanation.contains("C39 (claim_blocked ignored)"), "{}", liveness.explanation);
}

#[test]
fn error_replies_all_four_answers_occur_and_every_task_completes() {
    let (dir, summary) = run("scenarios/error-replies.toml", &[]);
    assert_eq!(summary.tasks_complete, 6, "{}", summary.render());
    let rows = trace(&out(&dir));
    for note in ["error_reply_corrected_path", "error_reply_alternative", "error_reply_skip", "error_reply_exit_request"] {
        assert!(rows.iter().any(|r| r.event == note), "{note} never occurred");
    }
    let fixes: Vec<String> = messages(&out(&dir)).into_iter().filter(|m| m.3 == "fix_proposal").map(|m| m.4).collect();
    assert!(fixes.iter().any(|m| m.contains("Skip this work:")) && fixes.iter().any(|m| m.contains("Alternative instructions:")));
    // The skipped agent is not run again: its session goes on to the next one.
    let skipped = rows.iter().find(|r| r.detail.contains("skipping the failed work")).expect("a session skipped its agent");
    let session = skipped.place().unwrap();
    let relaunched_after =
        rows.iter().filter(|r| r.seq > skipped.seq && r.place() == Some(session)).any(|r| r.detail.starts_with("step 1 agent 1 launched"));
    assert!(!relaunched_after, "the skipped agent was launched again");
    // The exit request: the asked session's successor claims from exit_requested.
    assert!(rows.iter().any(|r| r.actor == Some(ActorName::CONDUCTOR) && r.state_after == Some(TaskState::ExitRequested)));
}
