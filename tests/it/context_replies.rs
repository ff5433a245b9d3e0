//! 000 "Context escalation response states" 1: `review_approved` to a > 80 % escalation —
//! "Proceed as planned to checkpoint, then stop and report back for clean handoff"
//! (docs/protocol.md C17, C143, C150). On `scenarios/context-replies/approve.toml` seed 15 a
//! session the conductor so answered must not ask the same question again (before C150 its
//! first session sent a second identical CONTEXT WARNING before the next agent and handed off
//! on its own); the work it still does is verified at a checkpoint; then it hands off.

use std::path::Path;

use rehearsal::vocab::ActorName;

use crate::support::{rehearsal, stderr, trace};

/// One session's acts that matter here, in trace order: its status lines and its SQL writes.
#[derive(Debug)]
enum Act {
    Status(String),
    Sql(&'static str),
}

/// Every session's acts, by session id, sessions in the order of their first act.
fn acts_by_session(dir: &Path) -> Vec<(String, Vec<Act>)> {
    let mut out: Vec<(String, Vec<Act>)> = Vec::new();
    for r in trace(dir) {
        // The session's own acts, not its watchers' heartbeats.
        if !matches!(r.actor, Some(ActorName::Session(_))) {
            continue;
        }
        let act = match (&r.stmt, r.event.as_str()) {
            (Some(stmt), "sql") if stmt.writes() => Act::Sql(stmt.name()),
            (_, "file_append") if r.statement.ends_with("-status") => Act::Status(r.detail.clone()),
            _ => continue,
        };
        match out.iter_mut().find(|(s, _)| *s == r.session) {
            Some((_, acts)) => acts.push(act),
            None => out.push((r.session.clone(), vec![act])),
        }
    }
    out
}

/// What one session did after the conductor approved its escalation (a warning that said
/// "must pause now"): `None` if no escalation of it was so answered.
struct AfterApproval {
    warnings_after: usize,
    agents_after: usize,
    checkpoint_after_agents: bool,
    handed_off: bool,
}

fn after_approved_escalation(acts: &[Act]) -> Option<AfterApproval> {
    let mut escalating = false;
    let mut from = None;
    for (i, act) in acts.iter().enumerate() {
        match act {
            Act::Status(line) if line.contains("escalate, sending context warning") || line.contains("escalating, must pause now") => {
                escalating = true;
            }
            Act::Status(line) if line.starts_with("context estimate") || line.starts_with("CONTEXT EVALUATION") => {}
            Act::Status(line) if escalating && line.starts_with("conductor review_approved: proceed to checkpoint") => {
                from = Some(i + 1);
                break;
            }
            Act::Sql("send_context_warning" | "set_context_warning") => {}
            _ => escalating = false,
        }
    }
    let rest = &acts[from?..];
    let status = |pred: &dyn Fn(&str) -> bool| rest.iter().position(|a| matches!(a, Act::Status(l) if pred(l)));
    let last_launch = rest.iter().rposition(|a| matches!(a, Act::Status(l) if l.contains(" launched")));
    let review = rest.iter().rposition(|a| matches!(a, Act::Sql("send_review_request")));
    let handoff = status(&|l| l.starts_with("HANDOFF written"));
    Some(AfterApproval {
        warnings_after: rest.iter().filter(|a| matches!(a, Act::Sql("send_context_warning"))).count(),
        agents_after: rest.iter().filter(|a| matches!(a, Act::Status(l) if l.contains(" launched"))).count(),
        checkpoint_after_agents: matches!((last_launch, review, handoff), (Some(l), Some(r), Some(h)) if l < r && r < h),
        handed_off: handoff.is_some() && matches!(rest.last(), Some(Act::Sql("mark_exited"))),
    })
}

#[test]
fn an_approved_escalation_is_not_asked_again_and_its_checkpoint_runs_before_the_handoff() {
    let tmp = tempfile::tempdir().unwrap();
    let o = rehearsal(&["run", "scenarios/context-replies/approve.toml", "--out", tmp.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let sessions = acts_by_session(tmp.path());
    let answered: Vec<(usize, AfterApproval)> =
        sessions.iter().enumerate().filter_map(|(i, (_, acts))| after_approved_escalation(acts).map(|a| (i + 1, a))).collect();
    assert!(answered.len() >= 2, "sessions whose escalation was approved: {}", answered.len());
    for (n, a) in &answered {
        assert_eq!(a.warnings_after, 0, "session {n} asked again after its escalation was approved");
        assert!(a.handed_off, "session {n} did not end with its hand-off (HANDOFF written, then `exited`)");
        assert!(
            a.agents_after == 0 || a.checkpoint_after_agents,
            "session {n}: {} agents after the approval, no checkpoint on them",
            a.agents_after
        );
    }
    // Not vacuous: a session went on toward the checkpoint, verified it, then handed off.
    assert!(answered.iter().any(|(_, a)| a.agents_after > 0 && a.checkpoint_after_agents), "no session proceeded to a checkpoint");
}
