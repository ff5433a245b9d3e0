//! Reviews (docs/protocol.md C2, C3). A review is `reviewing` on `task-00` (004 "Conductor
//! States"), the review time, the answer — message first, then the state (000 "Review Request
//! Flow" 4) — and `watching` again. By default the conductor reviews inside its own poll
//! (`inline`). With `conductor.poll_during_reviews` or more than one
//! `conductor.reviews_in_flight`, each review is an actor of its own (`actor`): a child of the
//! conductor session, so it dies with it, sharing a `Desk` with it that says which tasks are
//! under review. The first review to start sets `reviewing`, the last to end `watching`.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use rand::RngExt;

use crate::actors::ctx::Ctx;
use crate::actors::messages;
use crate::input::scenario::{ReviewAnswer, Scenario};
use crate::vocab::{MessageKind, TaskState};
use crate::world::event::Fact;
use crate::world::executor::ActorId;
use crate::world::SqlFailure;

/// One review request to answer: the task, whether it is the completion review, and which
/// review of the task it is (resubmissions count; `[[conductor.answers]]` name it).
#[derive(Clone, Debug)]
pub struct Job {
    pub task_id: String,
    pub completion: bool,
    pub number: u64,
    /// The request's message id, cited under `replies-cite-request` (docs/protocol.md D15).
    pub request_id: Option<i64>,
    /// The session that asked: the answer goes only to a row it still holds (C37).
    pub requester: String,
}

impl Job {
    /// The oracles' ground truth of the request the answer replies to, told right before it.
    fn answering(&self) -> Fact {
        Fact::Answering { task_id: self.task_id.clone(), request_id: self.request_id.unwrap_or(0), requester: self.requester.clone() }
    }

    /// Whether the row still waits for this review's answer (docs/protocol.md C37).
    async fn still_asked(&self, ctx: &Ctx, scenario: &Scenario) -> Result<bool, SqlFailure> {
        let request = (self.request_id.unwrap_or(0), self.requester.as_str());
        super::still_asking::still_asking(ctx, scenario, &self.task_id, super::still_asking::awaits_review, request).await
    }
}

/// The reviews a conductor session runs as actors, shared with them. It lives in an `Rc` that
/// only the session's own futures hold: a crashed conductor loses it, as a process would.
#[derive(Debug, Default)]
pub struct Desk {
    /// Task → its review actor, from the review's start to its end.
    under_review: BTreeMap<String, ActorId>,
    /// Tasks whose review is past its start and before its answer: the first sets `reviewing`,
    /// the last to leave `watching`.
    reviewing: BTreeSet<String>,
    /// Tasks whose completion the conductor approved: their session is writing its report
    /// and `complete` (000 "Completion Flow" 5), nothing left to ask it (C83).
    completion_approved: BTreeSet<String>,
}

pub type SharedDesk = Rc<RefCell<Desk>>;

impl Desk {
    pub fn is_under_review(&self, task_id: &str) -> bool {
        self.under_review.contains_key(task_id)
    }

    /// Whether the conductor approved the task's completion (its answer was written).
    pub fn completion_approved(&self, task_id: &str) -> bool {
        self.completion_approved.contains(task_id)
    }

    pub fn in_flight(&self) -> usize {
        self.under_review.len()
    }

    /// The review actors still running, in task order.
    pub fn actors(&self) -> Vec<ActorId> {
        self.under_review.values().copied().collect()
    }

    pub fn add(&mut self, task_id: &str, actor: ActorId) {
        self.under_review.insert(task_id.to_string(), actor);
    }

    /// A review starts; whether it is the only one (so it sets `reviewing`).
    fn begin(&mut self, task_id: &str) -> bool {
        self.reviewing.insert(task_id.to_string());
        self.reviewing.len() == 1
    }

    /// A review has answered (or failed); whether it was the last one (so it sets `watching`).
    /// Ending twice is ending once.
    fn end(&mut self, task_id: &str) -> bool {
        self.reviewing.remove(task_id) && self.reviewing.is_empty()
    }
}

/// The conductor's own review, inside its poll: nothing else happens until it has answered
/// (docs/protocol.md C3, the default). Its poll may be minutes old (earlier reviews of the same
/// poll), so it reads the row before it starts, and again before it answers (C37).
pub async fn inline(ctx: &Ctx, scenario: &Scenario, job: &Job, desk: &SharedDesk) -> Result<(), SqlFailure> {
    if !job.still_asked(ctx, scenario).await? {
        return Ok(());
    }
    super::set_own_state(ctx, TaskState::Reviewing).await?;
    let answer = study(ctx, scenario, job).await?;
    if job.still_asked(ctx, scenario).await? {
        ctx.observe(job.answering());
        send(ctx, scenario, job, answer, desk).await?;
    }
    super::set_own_state(ctx, TaskState::Watching).await
}

/// A review as an actor of its own. The oracles' ground truth of the request it answers is
/// told right before the answer: the conductor may write other messages to the task meanwhile
/// (an emergency), and the truth pairs a request with the next conductor message.
pub async fn actor(ctx: Ctx, scenario: Rc<Scenario>, job: Job, desk: SharedDesk) {
    // The poll that started it may be older than the row (C37): read it before reviewing.
    match job.still_asked(&ctx, &scenario).await {
        Ok(true) => {
            let first = desk.borrow_mut().begin(&job.task_id);
            if let Err(failure) = answer_as_actor(&ctx, &scenario, &job, first, &desk).await {
                ctx.note("conductor_sql_failure", format!("{}: {}", failure.stmt, failure.message));
                desk.borrow_mut().end(&job.task_id);
            }
        }
        Ok(false) => {}
        Err(failure) => ctx.note("conductor_sql_failure", format!("{}: {}", failure.stmt, failure.message)),
    }
    desk.borrow_mut().under_review.remove(&job.task_id);
}

async fn answer_as_actor(ctx: &Ctx, scenario: &Scenario, job: &Job, first: bool, desk: &SharedDesk) -> Result<(), SqlFailure> {
    if first {
        super::set_own_state(ctx, TaskState::Reviewing).await?;
    }
    let answer = study(ctx, scenario, job).await?;
    if job.still_asked(ctx, scenario).await? {
        ctx.observe(job.answering());
        send(ctx, scenario, job, answer, desk).await?;
    }
    if desk.borrow_mut().end(&job.task_id) {
        super::set_own_state(ctx, TaskState::Watching).await?;
    }
    Ok(())
}

/// The review itself: its time and its answer (scripted, or one roll against the odds),
/// drawn from the reviewing actor's own stream, then the time spent.
async fn study(ctx: &Ctx, scenario: &Scenario, job: &Job) -> Result<ReviewAnswer, SqlFailure> {
    let review_ms = ctx.draw(&scenario.conductor.review_ms);
    let task_number: u64 = job.task_id.trim_start_matches("task-").parse().unwrap_or(0);
    let answer = match scenario.scripted_answer(task_number, job.number) {
        Some(answer) => answer,
        None => {
            let roll: f64 = ctx.rng().random_range(0.0..1.0);
            let c = &scenario.conductor;
            // Coverage tells drawn rejections and fixes from scripted ones (C5); an approval,
            // what every review with the default odds draws, is not noted.
            if roll < c.reject_probability {
                ctx.note("review_rejected_by_odds", format!("{} review {}: roll {roll:.3}", job.task_id, job.number));
                ReviewAnswer::ReviewFailed
            } else if roll < c.reject_probability + c.fix_probability {
                ctx.note("review_fix_by_odds", format!("{} review {}: roll {roll:.3}", job.task_id, job.number));
                ReviewAnswer::FixProposed
            } else {
                ReviewAnswer::ReviewApproved
            }
        }
    };
    ctx.note(
        "review_started",
        format!(
            "{} review {}{}, {review_ms} ms, answer {}",
            job.task_id,
            job.number,
            if job.completion { " (completion)" } else { "" },
            answer.state()
        ),
    );
    spend(ctx, review_ms, scenario.review_heartbeat_ms()).await?;
    Ok(answer)
}

/// `review_ms` of review, with a heartbeat of `task-00` every `heartbeat_ms` of it (0: none)
/// (docs/protocol.md C38). 000 "Pause Watcher": a musician waiting 15 minutes calls the
/// conductor "alive but busy" if its heartbeat is "recent (within 9 minutes)"; 004 "Heartbeat
/// Rule": "Include standalone heartbeat updates after major steps even without state changes".
async fn spend(ctx: &Ctx, review_ms: i64, heartbeat_ms: i64) -> Result<(), SqlFailure> {
    let mut left_ms = review_ms;
    while heartbeat_ms > 0 && left_ms > heartbeat_ms {
        ctx.sleep(heartbeat_ms).await;
        left_ms -= heartbeat_ms;
        ctx.sql(crate::vocab::Stmt::ConductorHeartbeat, vec![]).await?;
    }
    ctx.sleep(left_ms).await;
    Ok(())
}

async fn send(ctx: &Ctx, scenario: &Scenario, job: &Job, answer: ReviewAnswer, desk: &SharedDesk) -> Result<(), SqlFailure> {
    let task_id = job.task_id.as_str();
    let (kind, message) = match answer {
        ReviewAnswer::ReviewApproved => (MessageKind::Approval, messages::approval(task_id, job.completion)),
        ReviewAnswer::ReviewFailed => (MessageKind::Rejection, messages::rejection(task_id)),
        ReviewAnswer::FixProposed => {
            (MessageKind::FixProposal, messages::fix_proposal(task_id, "Adjust the approach as reviewed before resubmitting."))
        }
    };
    super::send_answer(ctx, task_id, kind, super::cite(scenario, message, job.request_id), answer.state()).await?;
    if job.completion && answer == ReviewAnswer::ReviewApproved {
        desk.borrow_mut().completion_approved.insert(task_id.to_string());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_review_to_begin_and_the_last_to_end_are_told_so_once() {
        let mut desk = Desk::default();
        assert!(desk.begin("task-01"));
        assert!(!desk.begin("task-02"));
        assert!(!desk.end("task-01"));
        assert!(desk.end("task-02"));
        assert!(!desk.end("task-02"), "ending twice is ending once");
        desk.add("task-03", 7);
        assert!(desk.is_under_review("task-03") && !desk.is_under_review("task-01"));
        assert_eq!((desk.in_flight(), desk.actors()), (1, vec![7]));
    }
}
