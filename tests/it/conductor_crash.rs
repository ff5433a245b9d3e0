//! A conductor crash and its relaunch (docs/protocol.md C34, C35): the shipped
//! `scenarios/faults/conductor-crash.toml` as its header documents it, and a crash in the middle
//! of reviews that run as actors of their own.

use rehearsal::trace::trace_reader::TraceRecord;
use rehearsal::vocab::{ActorName, Stmt};

use crate::support::{messages, open_db, root, run_path, run_text, trace, two_step_scenario};

fn by(rows: &[TraceRecord], who: ActorName) -> impl Iterator<Item = &TraceRecord> {
    rows.iter().filter(move |r| r.actor == Some(who))
}

#[test]
fn a_relaunched_conductor_rebuilds_its_view_from_the_database_and_every_task_completes() {
    let tmp = tempfile::tempdir().unwrap();
    let summary = run_path(&root().join("scenarios/faults/conductor-crash.toml"), tmp.path(), &[]);
    let dir = tmp.path();
    assert!(summary.verdict.passed(), "{}", summary.render());
    // The stranded answer's notice (~315 s) is within the derived budget, which counts each
    // scripted crash's relaunch wait and recovery (issue 28, item 2): no rule fires.
    assert!(summary.verdict.violations.is_empty(), "{}", summary.render());
    let notices = &summary.measured.message_notice_ms;
    assert!(notices.iter().any(|ms| *ms > 300_000), "the stranded approval waited for the relaunch: {notices:?}");
    assert_eq!(summary.tasks_complete, 4);
    let rows = trace(dir);
    // Two crashes, two relaunches, five minutes after each.
    let crashes: Vec<i64> = rows.iter().filter(|r| r.event == "fault_crash").map(|r| r.t_ms).collect();
    let starts: Vec<i64> = [2, 3].iter().map(|n| by(&rows, ActorName::Conductor(*n)).next().expect("relaunched").t_ms).collect();
    assert_eq!(crashes.len(), 2, "{crashes:?}");
    for (crash, start) in crashes.iter().zip(&starts) {
        assert!((300_000..310_000).contains(&(start - crash)), "relaunched {} ms after the crash", start - crash);
    }
    // No task is created twice, and each has one instruction.
    let mut created: Vec<String> = rows.iter().filter(|r| r.stmt == Some(Stmt::CreateTask)).filter_map(TraceRecord::task_id).collect();
    created.sort();
    assert_eq!(created, ["task-01", "task-02", "task-03", "task-04"]);
    assert_eq!(by(&rows, ActorName::Conductor(2)).filter(|r| r.stmt == Some(Stmt::CreateTask)).count(), 2, "S2 created the two missing");
    let instructions = messages(dir).into_iter().filter(|m| m.3 == "instruction").count();
    assert_eq!(instructions, 4);
    // task-00 belongs to the last conductor session, which ended it.
    let (state, session): (String, String) = open_db(dir)
        .query_row("SELECT state, session_id FROM orchestration_tasks WHERE task_id = 'task-00'", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    let s3 = by(&rows, ActorName::Conductor(3)).next().unwrap().session.clone();
    assert_eq!((state.as_str(), session.as_str()), ("complete", s3.as_str()));
    assert_ne!(s3, "conductor-session");
    // What it gets wrong: task-01 and task-02 were never launched, but S2 took them for
    // launched, so their first session is S2, a staleness window late.
    let first_claims: Vec<ActorName> = ["task-01", "task-02"]
        .iter()
        .map(|t| rows.iter().find(|r| r.stmt == Some(Stmt::ClaimTask) && r.task_id().as_deref() == Some(*t)).unwrap().actor.unwrap())
        .collect();
    assert_eq!(first_claims, [crate::support::actor("task-01.S2"), crate::support::actor("task-02.S2")]);
    let overdue: Vec<&TraceRecord> = by(&rows, ActorName::Conductor(2)).filter(|r| r.event == "claim_overdue").collect();
    assert_eq!(overdue.len(), 2);
    // S3 finished the answer S2 had written only the message of.
    let completed = by(&rows, ActorName::Conductor(3)).find(|r| r.event == "answer_completed").expect("the half-written answer finished");
    assert!(completed.detail.starts_with("task-04: `approval`"), "{}", completed.detail);
    let approvals = messages(dir).into_iter().filter(|m| m.1 == "task-04" && m.3 == "approval").count();
    assert_eq!(approvals, 3, "two checkpoint reviews and the completion review, each answered once");
}

#[test]
fn without_relaunching_unclaimed_tasks_the_phantom_launches_are_never_worked() {
    let tmp = tempfile::tempdir().unwrap();
    let summary = run_path(&root().join("scenarios/faults/conductor-crash.toml"), tmp.path(), &["no-relaunch-unclaimed"]);
    assert_eq!(summary.tasks_complete, 2, "{}", summary.render());
    assert!(summary.verdict.rules().contains(&"liveness"));
    let never = ["task-01", "task-02"].iter().all(|t| !messages(tmp.path()).iter().any(|m| m.1 == *t && m.2 != "task-00"));
    assert!(never, "no session ever wrote to task-01 or task-02");
}

/// Reviews run as actors beside the poll, two at a time; the conductor dies at 10 minutes,
/// while both are in flight.
fn crash_during_reviews() -> String {
    let conductor = "review_ms = 600000\npoll_during_reviews = true\nreviews_in_flight = 2";
    two_step_scenario(3, 2, conductor, "[[faults.conductor_crash]]\nat_ms = 600000")
}

#[test]
fn a_conductor_crash_ends_its_review_actors_and_the_next_session_reviews_again() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, summary) = run_text("crash-during-reviews", &crash_during_reviews(), tmp.path(), &[]);
    assert!(summary.verdict.passed(), "{}", summary.render());
    assert_eq!(summary.tasks_complete, 2);
    let rows = trace(&out);
    let crash_ms = rows.iter().find(|r| r.event == "fault_crash").unwrap().t_ms;
    // Both reviews had started and died with their conductor (its children), unanswered.
    let dead: Vec<&TraceRecord> =
        rows.iter().filter(|r| matches!(r.actor, Some(ActorName::Review(1, _))) && r.event == "killed_with_parent").collect();
    assert_eq!(dead.len(), 2, "{dead:?}");
    assert!(dead.iter().all(|r| r.t_ms == crash_ms));
    assert!(!rows.iter().any(|r| matches!(r.actor, Some(ActorName::Review(1, _))) && r.stmt == Some(Stmt::SendConductorMessage)));
    // The relaunched session found both requests pending and reviewed them with its own actors.
    let resumed = by(&rows, ActorName::Conductor(2)).find(|r| r.event == "conductor_resumed").unwrap();
    assert!(resumed.detail.contains("2 requests pending"), "{}", resumed.detail);
    let answered: Vec<&TraceRecord> =
        rows.iter().filter(|r| matches!(r.actor, Some(ActorName::Review(2, _))) && r.stmt == Some(Stmt::SendConductorMessage)).collect();
    assert!(answered.len() >= 2 && answered.iter().all(|r| r.t_ms > crash_ms));
}

/// The conductor dies between a hand-over's `handoff` message and its `fix_proposed` (the 12th
/// conductor message of `context-exhaustion.toml`'s seed: task-01's 4th hand-over, after its
/// session S4 hit the hard stop). The relaunched conductor finishes the hand-over from its
/// message (000 "Terminal Write Atomicity") and launches S5; counting S5 as launched already
/// gave the task up at the 5-session limit (`liveness`), and named the wrong session stale.
#[test]
fn a_hand_over_cut_after_its_message_is_finished_and_its_successor_launched() {
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("scenarios/faults/context-exhaustion.toml")).unwrap();
    let text = format!("{text}\n[[faults.conductor_crash]]\nat = \"after:send_conductor_message\"\nnth = 12\n");
    let (out, summary) = run_text("handoff-cut", &text, tmp.path(), &[]);
    let rows = trace(&out);
    assert_eq!(rows.iter().filter(|r| r.event == "fault_crash").count(), 1, "the crash fired");
    let finished = by(&rows, ActorName::Conductor(2)).find(|r| r.event == "answer_completed").expect("the hand-over finished");
    assert!(finished.detail.contains("`handoff` sent before the crash"), "{}", finished.detail);
    assert!(!rows.iter().any(|r| r.event == "task_given_up"), "no task given up: {}", summary.render());
    assert!(!summary.verdict.rules().contains(&"liveness"), "{}", summary.render());
    assert_eq!(summary.tasks_complete, 2, "{}", summary.render());
}
