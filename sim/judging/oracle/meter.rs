//! The timing measurements behind the budgets: message notice, review resume, crash
//! detection, the heartbeat age the conductor reads for a live session, exit to claim.

use std::collections::{BTreeMap, BTreeSet};

use crate::vocab::TaskState;
use crate::world::event::Fact;

use super::designer::{DesignerFigures, DesignerMeter};
use super::latency::{Attribution, Decomposition, PendingRecovery};
use super::truth::{begins_hand_over, is_terminal_write, leaves_on_request, touched_row, SessionTruth, StaleTruth, Truth};
use super::Seen;

/// Measurements for the timing budgets, in ms (heartbeat age in s). Serialized for a sweep's
/// pairs.jsonl (sim/campaign/pair_details.rs).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Measurements {
    pub message_notice_ms: Vec<i64>,
    pub review_resume_ms: Vec<i64>,
    pub crash_detect_ms: Vec<i64>,
    pub heartbeat_age_s: Vec<i64>,
    pub exit_to_claim_ms: Vec<i64>,
    /// Every time the conductor declared a session stale (true detections and false alarms).
    pub stale_declared: u64,
    /// Hand-overs of a live, running session (the `no-false-stale` rule's cases).
    pub false_stale_alarms: u64,
    /// What a designer asks beyond the budgets (sim/judging/oracle/designer.rs): first claim, review
    /// queue and wait, notice by watcher, recovery. Older pairs.jsonl files lack it.
    #[serde(default)]
    pub designer: DesignerFigures,
    /// Every measurement above with its causes (sim/judging/oracle/latency.rs), in the order taken;
    /// heartbeat ages only above the refresh threshold (below it the threshold is all).
    /// Not in a sweep's pairs.jsonl: a sweep keeps the figures only (`figures_only`).
    #[serde(skip)]
    pub decompositions: Vec<Decomposition>,
}

impl Measurements {
    pub fn named(&self) -> [(&'static str, &Vec<i64>); 5] {
        [
            ("message_notice_ms", &self.message_notice_ms),
            ("review_resume_ms", &self.review_resume_ms),
            ("crash_detect_ms", &self.crash_detect_ms),
            ("heartbeat_age_s", &self.heartbeat_age_s),
            ("exit_to_claim_ms", &self.exit_to_claim_ms),
        ]
    }

    /// The decomposition of the largest measurement of `name` (the first of equals).
    pub fn largest(&self, name: &str) -> Option<&Decomposition> {
        let mut of = self.decompositions.iter().filter(|d| d.measurement == name);
        let first = of.next()?;
        Some(of.fold(first, |best, d| if d.total_ms > best.total_ms { d } else { best }))
    }

    /// The same measurements without their decompositions (a sweep keeps only the figures).
    pub fn figures_only(&self) -> Measurements {
        Measurements {
            message_notice_ms: self.message_notice_ms.clone(),
            review_resume_ms: self.review_resume_ms.clone(),
            crash_detect_ms: self.crash_detect_ms.clone(),
            heartbeat_age_s: self.heartbeat_age_s.clone(),
            exit_to_claim_ms: self.exit_to_claim_ms.clone(),
            stale_declared: self.stale_declared,
            false_stale_alarms: self.false_stale_alarms,
            designer: self.designer.clone(),
            decompositions: Vec::new(),
        }
    }

    /// Records a measurement with its causes: the figure is the decomposition's total (in s
    /// for the heartbeat age).
    fn push(&mut self, d: Decomposition) {
        let sample = match d.measurement {
            "message_notice_ms" => &mut self.message_notice_ms,
            "review_resume_ms" => &mut self.review_resume_ms,
            "crash_detect_ms" => &mut self.crash_detect_ms,
            "exit_to_claim_ms" => &mut self.exit_to_claim_ms,
            _ => &mut self.heartbeat_age_s,
        };
        sample.push(if d.measurement == "heartbeat_age_s" { d.total_ms / 1000 } else { d.total_ms });
        if d.measurement == "message_notice_ms" {
            self.designer.notice(d.noticed_by, d.total_ms);
        }
        self.decompositions.push(d);
    }
}

/// p50 / p95 / max of a sample, nearest-rank; `None` when empty.
pub fn quantiles(sample: &[i64]) -> Option<(i64, i64, i64)> {
    if sample.is_empty() {
        return None;
    }
    let mut sorted = sample.to_vec();
    sorted.sort_unstable();
    let rank = |q: f64| sorted[((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1];
    Some((rank(0.5), rank(0.95), *sorted.last().expect("non-empty")))
}

/// The tasks with a live, healthy session at `t_ms` that the row names: the heartbeat age the
/// conductor reads for them is the protocol's. Not while a hang holds the session, nor after
/// one until it has written its row again (the age then is the fault's freeze); from that
/// write on, its ages count like any session's. A session the row no longer names (a zombie
/// after its hand-over) is not the row's heartbeat: its writes are fenced or interference, and
/// the row's age is its owner's (issue 28: ci-smoke seed 1 under fencing counted a 943 s age,
/// the hung owner's, against the awake zombie).
fn healthy_tasks_at(truth: &Truth, t_ms: i64) -> Vec<(&str, &str)> {
    let owns = |id: &String, s: &SessionTruth| truth.owner.get(&s.task_id) == Some(id);
    let healthy =
        |(id, s): &(&String, &SessionTruth)| s.is_live_at(t_ms) && !s.watcher_died && s.heartbeat_since_hangs(t_ms) && owns(id, s);
    truth.sessions.iter().filter(healthy).map(|(id, s)| (s.task_id.as_str(), id.as_str())).collect()
}

#[derive(Clone, Default)]
pub struct Meter {
    pub measured: Measurements,
    /// The instants latencies are cut at, from every event of the run.
    pub attribution: Attribution,
    /// Per message: whether its owner has handled it yet.
    noticed: BTreeSet<i64>,
    /// Per task: when the conductor answered a review, and the session it answered, awaiting
    /// that session's next write.
    answered: BTreeMap<String, (i64, String)>,
    /// Per task: when it became `exited` (or its session left it on request), awaiting the
    /// successor's claim.
    exited_at: BTreeMap<String, i64>,
    /// Per task: a staleness declaration awaiting its hand-over (session, when declared, the
    /// poll it read, the age it read).
    declared: BTreeMap<String, (String, i64, i64, f64)>,
    /// The designer's figures' memory between events.
    designer: DesignerMeter,
    /// Per session: when it last put its own row into `needs_review` or `error` from another
    /// state, the start of the pause it waits in for the conductor's answer (000 "Transition to
    /// pause mode").
    paused_at: BTreeMap<String, i64>,
}

impl Meter {
    pub fn see(&mut self, seen: &Seen, truth: &Truth) {
        match seen {
            Seen::Fact(t_ms, Fact::MessageHandled { session_id, message_id }) => {
                let Some(m) = truth.messages.get(message_id) else { return };
                // Only the task's owner handles its messages; a replaced session's reading is
                // judged by the rules, not timed.
                if truth.owner.get(&m.task_id) == Some(session_id) && self.noticed.insert(*message_id) {
                    // From when the session could first see it: a handoff message waits for
                    // the successor it is written for, which is launched after it.
                    // Time the session spent frozen by a hang fault is not the watchers' latency.
                    let Some(s) = truth.sessions.get(session_id) else { return };
                    let from = m.sent_ms.max(s.launched_ms);
                    let mut d = self.attribution.message_notice(&m.task_id, session_id, from, *t_ms);
                    let paused_ms = self.paused_at.get(session_id).copied();
                    d.reached_pause =
                        self.attribution.reached_pause(session_id, d.noticed_by, from, paused_ms, truth.watcher_read_window_ms);
                    self.measured.push(d);
                }
            }
            Seen::Fact(t_ms, Fact::StaleDeclared { task_id, session_id, seconds_stale, polled_at_ms }) => {
                self.measured.stale_declared += 1;
                self.declared.insert(task_id.clone(), (session_id.clone(), *t_ms, *polled_at_ms, *seconds_stale));
            }
            Seen::Fact(..) => {}
            Seen::Sql(f) if f.failure.is_some() || f.readonly => {
                if f.failure.is_none() && f.statement == crate::vocab::Stmt::PollTasks {
                    self.on_poll(f.t_ms, f.polled, truth);
                    self.designer.on_poll(&mut self.measured.designer, f.polled);
                }
            }
            Seen::Sql(f) if f.actor.is_conductor() => {
                self.on_hand_over(f, truth);
                self.on_conductor_write(f);
                self.designer.on_conductor_write(&mut self.measured.designer, f);
            }
            Seen::Sql(f) => self.on_musician_write(f, truth),
        }
    }

    fn on_poll(&mut self, t_ms: i64, polled: &[(String, String, f64)], truth: &Truth) {
        // The sessions are read once per poll, not once per row: a day's run knows hundreds
        // of sessions and the conductor polls every few seconds (issue 17).
        let mut healthy_tasks: Option<Vec<(&str, &str)>> = None;
        for (task_id, state, seconds_stale) in polled {
            // Polled states are the poll's text as SQL returned it (a `--sql` file's may be any).
            if !matches!(TaskState::parse(state), Some(TaskState::Working | TaskState::NeedsReview | TaskState::Error)) {
                continue;
            }
            let healthy = healthy_tasks.get_or_insert_with(|| healthy_tasks_at(truth, t_ms));
            if let Some((_, session)) = healthy.iter().find(|(task, _)| task == task_id) {
                // Whole seconds as the conductor's threshold compares them; the window in ms.
                let age_s = *seconds_stale as i64;
                if self.attribution.explains_age(age_s * 1000) {
                    self.measured.push(self.attribution.heartbeat_age(task_id, session, t_ms, age_s * 1000));
                } else {
                    self.measured.heartbeat_age_s.push(age_s);
                }
            }
        }
    }

    fn on_conductor_write(&mut self, f: &super::SqlFact) {
        let Some((before, after)) = touched_row(f) else { return };
        if f.task_id == crate::vocab::CONDUCTOR_TASK_ID || before.state == after.state {
            return;
        }
        if matches!(after.state, TaskState::ReviewApproved | TaskState::ReviewFailed | TaskState::FixProposed) {
            self.answered.insert(f.task_id.to_string(), (f.t_ms, before.session_id.clone()));
        }
    }

    /// A declaration is judged at the conductor's next write on the task (as no-false-stale
    /// judges it): the hand-over's handoff message, or its state.
    fn on_hand_over(&mut self, f: &super::SqlFact, truth: &Truth) {
        if f.readonly || f.rows_affected == 0 {
            return;
        }
        let Some((session_id, declared_ms, polled_at_ms, seconds_stale)) = self.declared.remove(f.task_id) else { return };
        let handing_over = begins_hand_over(f);
        if handing_over {
            match truth.stale_truth(&session_id, f.t_ms) {
                StaleTruth::Crashed(at) | StaleTruth::Hung(at) => {
                    let d = self.attribution.crash_detect(f.task_id, &session_id, at, declared_ms, polled_at_ms, seconds_stale);
                    self.measured.push(d);
                    let lost = PendingRecovery { lost_session: session_id, lost_at_ms: at, polled_at_ms, seconds_stale };
                    self.designer.pending_recovery.insert(f.task_id.to_string(), lost);
                }
                StaleTruth::Live => self.measured.false_stale_alarms += 1,
                StaleTruth::WatcherDead | StaleTruth::Finished | StaleTruth::Unknown => {}
            }
        }
    }

    fn on_musician_write(&mut self, f: &super::SqlFact, truth: &Truth) {
        // An exit on request (docs/protocol.md D16) ends with a message, the row left as it is.
        if truth.exit_request_to_musician && leaves_on_request(f) {
            self.exited_at.insert(f.task_id.to_string(), f.t_ms);
        }
        if let Some(lost) = self.designer.on_musician_write(&mut self.measured.designer, f) {
            let d = self.attribution.recovery(f.task_id, f.session_id, &lost, f.t_ms);
            self.measured.designer.recovery_ms.push(d.total_ms);
            self.measured.decompositions.push(d);
        }
        let Some((before, after)) = touched_row(f) else { return };
        if f.statement == crate::vocab::Stmt::ClaimTask {
            if let Some(at) = self.exited_at.remove(f.task_id) {
                self.measured.push(self.attribution.exit_to_claim(f.task_id, f.session_id, at, f.t_ms));
            }
        }
        // Only the answered session's own next write times its resume: a successor's claim
        // after the answered session was lost is crash detection, not a resume.
        if let Some((at, answered)) = self.answered.remove(f.task_id) {
            if answered == f.session_id {
                self.measured.push(self.attribution.review_resume(f.task_id, f.session_id, at, f.t_ms));
            }
        }
        // The task's exit is its owner's: a replaced session writing `exited` over its
        // successor's row (no fencing, D11) ends nothing the successor's claim could follow.
        let own_row = before.session_id == f.session_id;
        // A pause begins when the row enters `needs_review` or `error` from outside them; a
        // pause timeout's `set_error` (000 "Pause Watcher": TIMEOUT) goes on with the same pause.
        let pausing = |s: TaskState| matches!(s, TaskState::NeedsReview | TaskState::Error);
        if own_row && pausing(after.state) && !pausing(before.state) {
            self.paused_at.insert(f.session_id.to_string(), f.t_ms);
        }
        if own_row && is_terminal_write(f) && before.state != after.state && after.state == TaskState::Exited {
            self.exited_at.insert(f.task_id.to_string(), f.t_ms);
        }
    }
}
