//! docs/protocol.md D15: the seeds' conductor answers name no request. On
//! scenarios/faults/reply-to-zombie.toml a hung session's completion request is still pending
//! when the conductor hands the task over; the session wakes for one write and dies, and the
//! conductor's answer to it is taken by the successor. Under `replies-cite-request` every
//! answer cites its request, the hand-over closes the replaced session's request, and a
//! musician acts only on a reply to its own.

use std::path::{Path, PathBuf};

use rehearsal::input::scenario::Scenario;
use rehearsal::run::{run_scenario, RunOptions, RunSummary};
use rehearsal::trace::trace_reader;
use rehearsal::vocab::{RuleId, Stmt};
use rehearsal::world::event::{EventKind, Fact};

use crate::support::{actor, messages, root, trace};

const VARIANT: &str = "replies-cite-request";

fn path() -> PathBuf {
    root().join("scenarios/faults/reply-to-zombie.toml")
}

fn run(scenario: Scenario, variants: &[&str]) -> (tempfile::TempDir, RunSummary) {
    let tmp = tempfile::tempdir().unwrap();
    let options = RunOptions {
        scenario_path: path(),
        seed: None,
        out_dir: Some(tmp.path().to_path_buf()),
        variants: variants.iter().map(|v| v.to_string()).collect(),
    };
    let summary = run_scenario(scenario, &options).unwrap();
    (tmp, summary)
}

/// The shipped scenario, or with the zombie left alive after it wakes (no scripted crash).
fn scenario(zombie_survives: bool) -> Scenario {
    let mut loaded = Scenario::load(&path()).unwrap();
    if zombie_survives {
        loaded.faults.crash.clear();
    }
    loaded
}

/// The session id a session claimed task-01 with.
fn session_id(dir: &Path, name: &str) -> String {
    let who = actor(name);
    let claim = trace(dir).into_iter().find(|r| r.actor == Some(who) && r.stmt == Some(Stmt::ClaimTask));
    claim.unwrap_or_else(|| panic!("{name} never claimed")).session
}

/// The id of the completion review request `session` sent ("Awaiting final review").
fn completion_request(dir: &Path, session: &str) -> i64 {
    let request = messages(dir)
        .into_iter()
        .find(|(_, _, from, kind, text)| from == session && kind == "completion" && text.ends_with("Awaiting final review"));
    request.unwrap_or_else(|| panic!("{session} sent no completion review request")).0
}

/// The conductor's approvals: (id, text).
fn approvals(dir: &Path) -> Vec<(i64, String)> {
    messages(dir).into_iter().filter(|(_, _, _, kind, _)| kind == "approval").map(|(id, _, _, _, text)| (id, text)).collect()
}

/// Who each conductor answer replied to, as the conductor knew it (ground truth, not text).
fn answered_requests(dir: &Path) -> Vec<(i64, String)> {
    let run = trace_reader::events(&dir.join("trace.csv")).unwrap();
    run.events
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::Truth(Fact::Answering { request_id, requester, .. }) => Some((request_id, requester)),
            _ => None,
        })
        .collect()
}

/// Each session's trace note of how it ended (`Complete`, `NoOwnReply`, …).
fn ending(dir: &Path, name: &str) -> Option<String> {
    let who = actor(name);
    trace(dir).into_iter().find(|r| r.actor == Some(who) && r.event == "session_end").map(|r| r.detail)
}

#[test]
fn the_successor_completes_on_the_answer_to_the_zombies_request_under_the_seeds_reading() {
    let (dir, summary) = run(scenario(false), &[]);
    assert!(summary.verdict.passed(), "both expected violations occur: {}", summary.render());
    let (s1, s2) = (session_id(dir.path(), "task-01.S1"), session_id(dir.path(), "task-01.S2"));
    let (r1, r2) = (completion_request(dir.path(), &s1), completion_request(dir.path(), &s2));
    // One approval, for S1's request, written after S2 asked too: S2 completes on it.
    assert_eq!(answered_requests(dir.path()), vec![(r1, s1.clone())], "the conductor answered S1's request only");
    let approvals = approvals(dir.path());
    assert_eq!(approvals.len(), 1, "{approvals:?}");
    assert!(approvals[0].0 > r2, "the approval came while S2 waited for its own ({approvals:?}, S2 asked in {r2})");
    assert!(!approvals[0].1.contains("In reply to"), "the seeds' answer names no request: {}", approvals[0].1);
    let violation = summary.verdict.violations.iter().find(|v| v.rule == RuleId::AnswerOwnRequest).expect("answer-own-request");
    assert!(
        violation.explanation.contains("session S2") && violation.explanation.contains("which answered a request of session S1"),
        "{}",
        violation.explanation
    );
    assert_eq!(ending(dir.path(), "task-01.S2").as_deref(), Some("Complete"));
}

#[test]
fn under_replies_cite_request_the_hand_over_closes_the_zombies_request_and_the_successor_gets_its_own_answer() {
    let (dir, summary) = run(scenario(false), &[VARIANT]);
    // The zombie's one write lands on S2's row while S2 works: both readings show it (D11).
    assert_eq!(summary.verdict.rules(), vec!["one-live-session-per-task", "owner-writes-only"], "{}", summary.render());
    assert!(summary.verdict.failure.contains("answer-own-request"), "only the expected violation is missing: {}", summary.render());
    assert_eq!(summary.tasks_complete, summary.tasks_total);
    let (s1, s2) = (session_id(dir.path(), "task-01.S1"), session_id(dir.path(), "task-01.S2"));
    let (r1, r2) = (completion_request(dir.path(), &s1), completion_request(dir.path(), &s2));
    let closed = trace(dir.path()).into_iter().find(|r| r.event == "request_closed").expect("the hand-over closes S1's request");
    assert!(closed.detail.contains(&format!("request {r1} ")), "{closed:?}");
    assert_eq!(answered_requests(dir.path()), vec![(r2, s2.clone())], "S1's request is never answered");
    let approvals = approvals(dir.path());
    assert_eq!(approvals.len(), 1, "{approvals:?}");
    assert!(
        approvals[0].1.ends_with(&format!("completion accepted. Write the final report and mark complete.\nIn reply to: #{r2}")),
        "{}",
        approvals[0].1
    );
    assert_eq!(ending(dir.path(), "task-01.S2").as_deref(), Some("Complete"));
}

#[test]
fn a_zombie_that_lives_on_acts_on_its_successors_answer_under_the_seeds_reading_and_ignores_it_when_replies_cite() {
    let writes_after = |dir: &Path, name: &str, t_ms: i64| {
        let who = actor(name);
        trace(dir).into_iter().filter(|r| r.actor == Some(who) && r.is_sql() && r.t_ms > t_ms && r.stmt.is_some_and(|s| s.writes())).count()
    };
    // Both runs under `messages-logged-only` (docs/protocol.md C51): by default since issue 42
    // the zombie finds its own hand-over among the messages it reads with the answer and
    // stops there, whatever the reply cites; this test is about what a reply tells it.
    // The seeds: one approval, and both sessions complete the task on it.
    let (dir, seeds) = run(scenario(true), &["messages-logged-only"]);
    let approval_ms = |dir: &Path| {
        let rows = trace(dir);
        rows.iter().find(|r| r.stmt == Some(Stmt::SendConductorMessage) && r.detail.contains("REVIEW APPROVED")).expect("an approval").t_ms
    };
    assert!(seeds.verdict.rules().contains(&"completed-once"), "{}", seeds.render());
    assert_eq!(ending(dir.path(), "task-01.S2").as_deref(), Some("Complete"));
    assert!(writes_after(dir.path(), "task-01.S1", approval_ms(dir.path())) > 0, "the zombie acts on the approval");
    // Cited replies: the zombie reads an approval that cites S2's request, writes nothing
    // more and ends; S2 completes alone.
    let (dir, cited) = run(scenario(true), &[VARIANT, "messages-logged-only"]);
    assert_eq!(cited.verdict.rules(), vec!["one-live-session-per-task", "owner-writes-only"], "{}", cited.render());
    let s2 = session_id(dir.path(), "task-01.S2");
    let r2 = completion_request(dir.path(), &s2);
    assert_eq!(ending(dir.path(), "task-01.S1").as_deref(), Some("NoOwnReply"));
    let note = trace(dir.path()).into_iter().find(|r| r.event == "no_own_reply").expect("the zombie says why it stops");
    assert!(note.detail.contains(&format!("cite: #{r2})")), "{note:?}");
    assert_eq!(writes_after(dir.path(), "task-01.S1", approval_ms(dir.path())), 0, "the zombie writes nothing after the approval");
    assert_eq!(ending(dir.path(), "task-01.S2").as_deref(), Some("Complete"));
}

#[test]
fn a_relaunched_conductor_still_closes_the_replaced_sessions_requests() {
    // The conductor dies at t = 1300 s, after it handed S1 over (t ≈ 1206 s) and before S1
    // wakes; conductor.S2 starts 5 minutes later with nothing but comms.db. Under the variant
    // it must know again that S1 was replaced (docs/protocol.md C35: every session that wrote
    // to a task and is not the one its row names), so S1's request stays closed.
    let mut crashed = scenario(false);
    crashed.faults.conductor_crash.push(rehearsal::input::scenario::ConductorCrash {
        session: 1,
        at_ms: Some(1_300_000),
        at: None,
        nth: 1,
    });
    let (dir, _) = run(crashed, &[VARIANT]);
    let rows = trace(dir.path());
    let reclosed = rows.iter().any(|r| r.actor_text() == "conductor.S2" && r.event == "request_closed");
    assert!(reclosed, "conductor.S2 closed the replaced session's request again");
}

/// docs/protocol.md C51, the default: the same living zombie reads its own hand-over among the
/// messages that come with the answer and stops there, writing nothing after the approval.
#[test]
fn a_zombie_that_lives_on_stops_on_its_own_handover_by_default() {
    let (dir, summary) = run(scenario(true), &[]);
    let approval_ms = trace(dir.path())
        .into_iter()
        .find(|r| r.stmt == Some(Stmt::SendConductorMessage) && r.detail.contains("REVIEW APPROVED"))
        .expect("an approval")
        .t_ms;
    let s1 = actor("task-01.S1");
    let writes = trace(dir.path())
        .into_iter()
        .filter(|r| r.actor == Some(s1) && r.is_sql() && r.t_ms > approval_ms && r.stmt.is_some_and(|s| s.writes()))
        .count();
    assert_eq!(writes, 0, "{}", summary.render());
    assert!(trace(dir.path()).iter().any(|r| r.event == "replaced_read"), "the zombie says why it stops");
    assert!(!summary.verdict.rules().contains(&"completed-once"), "{}", summary.render());
    assert_eq!(ending(dir.path(), "task-01.S2").as_deref(), Some("Complete"));
}
