//! The figures a protocol designer asks for beyond the budgets (issue 31, docs/metrics.md):
//! how long a task waits for its first claim, how many review requests queue at the one
//! conductor and how long each waits for its answer, which watcher noticed each message,
//! and how long a task is without a session after a crash (crash to the successor's claim).
//! Throughput (tasks completed per simulated hour) is the run's, from its end (`RunSummary`).

use std::collections::BTreeMap;

use super::latency::{Noticer, PendingRecovery};
use super::truth::touched_row;
use super::SqlFact;
use crate::vocab::{Stmt, TaskState, CONDUCTOR_TASK_ID};

/// The designer's figures of one run, each a sample in ms (the queue length a count).
/// Serialized with the measurements into a sweep's pairs.jsonl.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct DesignerFigures {
    /// Per task: its row's creation by the conductor (004 "Initial State") to the first
    /// claim by a musician session (000 Bootstrap 3).
    pub first_claim_ms: Vec<i64>,
    /// At each conductor poll: the rows in `needs_review`, the review requests waiting for
    /// the one conductor (004 "Request Review").
    pub review_queue_len: Vec<i64>,
    /// Per review request: the row entering `needs_review` to the conductor's answer
    /// (`review_approved`, `review_failed`, `fix_proposed` or `complete`), the review itself
    /// included.
    pub review_wait_ms: Vec<i64>,
    /// `message_notice_ms` split by who noticed (000 "Background Watcher", "Pause Watcher"):
    /// the background watcher reads messages by id at `timing.background_poll_ms`, the pause
    /// watcher the row's state at `timing.pause_poll_ms`.
    pub notice_background_ms: Vec<i64>,
    pub notice_pause_ms: Vec<i64>,
    /// Noticed by the session itself at one of its steps, before any watcher.
    pub notice_session_ms: Vec<i64>,
    /// A session's crash (or the start of the hang it was handed over in) to the claim by
    /// its successor: the time the task had nobody working on it.
    pub recovery_ms: Vec<i64>,
    /// The run's end: whether the time limit cut it off (its samples are then kept out of
    /// pooled quantiles), the tasks complete, its simulated length (for throughput).
    pub cut_off: bool,
    pub tasks_complete: u64,
    pub makespan_ms: i64,
    /// Actors that ended on SQLITE_BUSY or an I/O error (sim/judging/collapse.rs); the run
    /// collapsed when one is the conductor.
    pub collapses: Vec<crate::judging::collapse::Collapse>,
}

impl DesignerFigures {
    /// The samples with their CSV names, in the order bench.csv and summaries show them.
    pub fn named(&self) -> [(&'static str, &Vec<i64>); 7] {
        [
            ("first_claim_ms", &self.first_claim_ms),
            ("review_queue_len", &self.review_queue_len),
            ("review_wait_ms", &self.review_wait_ms),
            ("notice_background_ms", &self.notice_background_ms),
            ("notice_pause_ms", &self.notice_pause_ms),
            ("notice_session_ms", &self.notice_session_ms),
            ("recovery_ms", &self.recovery_ms),
        ]
    }

    /// Whether the run collapsed: its conductor ended on SQLITE_BUSY or an I/O error.
    pub fn collapsed(&self) -> bool {
        crate::judging::collapse::conductor_collapsed(&self.collapses)
    }

    /// Tasks completed per simulated hour (`None` for no simulated time).
    pub fn tasks_per_sim_hour(&self) -> Option<f64> {
        (self.makespan_ms > 0).then(|| self.tasks_complete as f64 / (self.makespan_ms as f64 / 3_600_000.0))
    }

    /// The lines `rehearsal run` prints: throughput and the figures' p50 / p95 in seconds.
    pub fn render(&self) -> String {
        let cut = match (self.collapsed(), self.cut_off) {
            (true, _) => " (collapsed: the conductor ended on SQLITE_BUSY or an I/O error)",
            (false, true) => " (cut off by the time limit)",
            (false, false) => "",
        };
        let mut out = match self.tasks_per_sim_hour() {
            Some(rate) => format!("throughput   {rate:.2} tasks per simulated hour, {} complete{cut}\n", self.tasks_complete),
            None => String::new(),
        };
        let seconds = |ms: i64| format!("{:.1} s", ms as f64 / 1000.0);
        for (name, sample) in self.named() {
            let Some((p50, p95, max)) = super::quantiles(sample) else { continue };
            let text = if name == "review_queue_len" {
                let mean = sample.iter().sum::<i64>() as f64 / sample.len() as f64;
                format!("mean {mean:.2}, max {max} (n={} polls)", sample.len())
            } else {
                format!("p50 {}, p95 {}, max {} (n={})", seconds(p50), seconds(p95), seconds(max), sample.len())
            };
            out.push_str(&format!("designer     {name}: {text}\n"));
        }
        out
    }

    /// Files a message notice under the watcher that noticed it.
    pub fn notice(&mut self, noticer: Noticer, total_ms: i64) {
        match noticer {
            Noticer::BackgroundWatcher => self.notice_background_ms.push(total_ms),
            Noticer::PauseWatcher => self.notice_pause_ms.push(total_ms),
            Noticer::Session | Noticer::ConductorPoll => self.notice_session_ms.push(total_ms),
        }
    }
}

/// What the figures need to remember between events.
#[derive(Clone, Default)]
pub struct DesignerMeter {
    /// Per task: when the conductor created its row, until its first claim.
    created_ms: BTreeMap<String, i64>,
    /// Per task: since when its row is in `needs_review`.
    review_asked_ms: BTreeMap<String, i64>,
    /// Per task: the crash awaiting its successor's claim.
    pub pending_recovery: BTreeMap<String, PendingRecovery>,
}

impl DesignerMeter {
    /// The conductor's poll: the rows waiting for a review.
    pub fn on_poll(&mut self, figures: &mut DesignerFigures, polled: &[(String, String, f64)]) {
        let queued = polled
            .iter()
            .filter(|(task, state, _)| task != CONDUCTOR_TASK_ID && TaskState::parse(state) == Some(TaskState::NeedsReview))
            .count();
        figures.review_queue_len.push(queued as i64);
    }

    /// A successful write of the conductor: a task created, a review answered.
    pub fn on_conductor_write(&mut self, figures: &mut DesignerFigures, f: &SqlFact) {
        if f.statement == Stmt::CreateTask && f.rows_affected > 0 {
            self.created_ms.entry(f.task_id.to_string()).or_insert(f.t_ms);
            return;
        }
        let Some((before, after)) = touched_row(f) else { return };
        let answered =
            matches!(after.state, TaskState::ReviewApproved | TaskState::ReviewFailed | TaskState::FixProposed | TaskState::Complete);
        // A pause TIMEOUT's `error` still waits for the review (000 "Mode Transitions").
        if matches!(before.state, TaskState::NeedsReview | TaskState::Error) && answered {
            if let Some(asked) = self.review_asked_ms.remove(f.task_id) {
                figures.review_wait_ms.push(f.t_ms - asked);
            }
        }
    }

    /// A successful write of a musician session: a claim, a review request. Returns the
    /// crash this claim recovers from, if it is a successor's first claim after one.
    pub fn on_musician_write(&mut self, figures: &mut DesignerFigures, f: &SqlFact) -> Option<PendingRecovery> {
        let (before, after) = touched_row(f)?;
        if after.state == TaskState::NeedsReview && before.state != TaskState::NeedsReview {
            self.review_asked_ms.entry(f.task_id.to_string()).or_insert(f.t_ms);
        } else if !matches!(after.state, TaskState::NeedsReview | TaskState::Error) {
            // The request withdrawn (the session went on, exited, or a successor claimed);
            // a pause TIMEOUT's `error` keeps waiting for the answer.
            self.review_asked_ms.remove(f.task_id);
        }
        if f.statement != Stmt::ClaimTask {
            return None;
        }
        if let Some(created) = self.created_ms.remove(f.task_id) {
            figures.first_claim_ms.push(f.t_ms - created);
        }
        let lost = self.pending_recovery.get(f.task_id)?;
        if lost.lost_session == f.session_id {
            return None;
        }
        self.pending_recovery.remove(f.task_id)
    }
}
