//! The conductor's intervention on `claim_blocked` (docs/protocol.md C39). 000 "4. Guard Block
//! Fallback": a session whose claim the guard refused writes a fallback row and tells the
//! conductor "Guard prevented claim on task-NN (state was not claimable). Created fallback row
//! to exit cleanly. Conductor intervention needed." The seeds do not say what the
//! intervention is. Read charitably, it is what 002 "Guard Clause Rules" has the conductor do
//! for a task no session can take on: "The conductor always intermediates crash recovery …
//! detects the stale heartbeat, reviews state, sends a handoff message, and sets
//! `fix_proposed`. New sessions only need to claim from the 3 conductor-prepared states."
//!
//! So the conductor reads the row again and judges who holds it:
//! - at work (`working`, `needs_review`, `error`, `review_approved`, `review_failed`) with a
//!   heartbeat within `conductor.staleness_s`: a live session holds it, the blocked session was
//!   a second one (a double launch, or a successor blocked by a zombie's write); the conductor
//!   keeps watching it from its polls, and intervenes once the heartbeat goes stale;
//! - at work with no heartbeat, or one older than the threshold: nobody holds it (a session
//!   lost, or a row created at work, as `scenarios/examples/guard-block.sql` does): hand it
//!   over now, `handoff` message then `fix_proposed`, and launch the next session;
//! - claimable (`watching`, `fix_proposed`, `exit_requested`) with a launched session yet to
//!   claim: that session will; nothing to do. Claimable with none on the way: launch one
//!   (a `handoff` message, no state: the row is claimable already);
//! - `complete` or `exited`: nothing to take over (an `exited` row is relaunched by C7).
//!
//! `conductor.claim_blocked = "ignore"` only notes the message (the first conductor).

use super::{is_active, is_claimable, text, Conductor, TaskView};
use crate::input::scenario::ClaimBlockedReply;
use crate::vocab::Stmt;
use crate::world::event::Fact;
use crate::world::SqlFailure;

/// What the conductor finds when it reads the row again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Holder {
    /// A session at work with a fresh heartbeat.
    Live,
    /// A claimable row whose launched session has not claimed yet.
    ClaimPending,
    /// `complete` or `exited` (or a state the conductor does not hand over).
    Nobody,
    /// At work with no heartbeat or a stale one, or claimable with no session on the way.
    Unheld,
}

/// Who holds a row in `state` with a heartbeat `seconds_stale` old (`None`: never set).
fn holder(state: &str, seconds_stale: Option<f64>, staleness_s: i64, launch_pending: bool) -> Holder {
    if is_active(state) {
        return match seconds_stale {
            Some(age) if age <= staleness_s as f64 => Holder::Live,
            _ => Holder::Unheld,
        };
    }
    if is_claimable(state) {
        return if launch_pending { Holder::ClaimPending } else { Holder::Unheld };
    }
    Holder::Nobody
}

impl Conductor<'_> {
    /// A `claim_blocked` message read: remembered until the task is handled (C39).
    pub(super) fn note_claim_blocked(&mut self, task_id: &str, message_id: i64) {
        if self.scenario.conductor.claim_blocked == ClaimBlockedReply::Intervene {
            self.claim_blocked.insert(task_id.to_string(), message_id);
        }
    }

    /// The intervention on a task with an unanswered `claim_blocked`; `true` if it wrote or
    /// launched anything. A row a live session holds stays watched: the intervention comes
    /// when its heartbeat goes stale (a zombie that overwrote a row and then died leaves it
    /// so, and the staleness rule of C6 no longer watches a session it handled once).
    pub(super) async fn intervene_on_claim_blocked(&mut self, task: &TaskView) -> Result<bool, SqlFailure> {
        let Some(message_id) = self.claim_blocked.get(&task.task_id).copied() else { return Ok(false) };
        let staleness_s = self.scenario.conductor.staleness_s;
        if is_active(&task.state) && task.has_heartbeat && task.seconds_stale <= staleness_s as f64 {
            return Ok(false);
        }
        let task_id = task.task_id.as_str();
        let row = self.ctx.sql(Stmt::ReadTaskState, vec![(":task_id", text(task_id))]).await?;
        let state = row.text(0, 0).unwrap_or("").to_string();
        let seconds_stale = row.real(0, 3);
        let launch_pending = self.awaiting_claim.contains(task_id) || self.launch_started.contains_key(task_id);
        let mut found = holder(&state, seconds_stale, staleness_s, launch_pending);
        if found == Holder::Unheld && self.owner_alive(task, &state, seconds_stale) {
            found = Holder::Live;
        }
        if found == Holder::Live {
            return Ok(false);
        }
        self.claim_blocked.remove(task_id);
        let heartbeat = seconds_stale.map_or("no heartbeat".to_string(), |age| format!("heartbeat {age:.0} s old"));
        self.ctx.note(
            "claim_blocked_intervention",
            format!("{task_id}: claim_blocked #{message_id}; the row is {state} with {heartbeat}: {found:?}"),
        );
        match found {
            Holder::Live | Holder::ClaimPending | Holder::Nobody => Ok(false),
            Holder::Unheld if is_claimable(&state) => {
                self.hand_over_leaving(task_id, "could not claim (claim_blocked); the row is claimable again", None).await?;
                Ok(true)
            }
            Holder::Unheld => {
                self.take_over_unheld(task, &state, seconds_stale).await?;
                Ok(true)
            }
        }
    }

    /// Variant `claim-blocked-owner-alive` (docs/protocol.md C80): a claimable row (a
    /// `fix_proposed` answer to its owner's request) whose named session the conductor never
    /// handled, with a heartbeat within the staleness threshold, is its owner's, reworking: the
    /// blocked claim was a second session's (a twin), and the row is not handed over.
    fn owner_alive(&self, task: &TaskView, state: &str, seconds_stale: Option<f64>) -> bool {
        self.scenario.settings.claim_blocked_owner_alive
            && is_claimable(state)
            && !task.session_id.is_empty()
            && !self.handled_sessions.contains(&task.session_id)
            && seconds_stale.is_some_and(|age| age <= self.scenario.conductor.staleness_s as f64)
    }

    /// Variant `claim-blocked-owner-alive`: the conductor answering the task's owner ends any
    /// `claim_blocked` record of the task (the owner asked, so it is alive; the blocked claim
    /// was another session's), so no later poll takes the answered row for an unheld one.
    pub(super) fn forget_claim_blocked_at_answer(&mut self, task_id: &str) {
        if self.scenario.settings.claim_blocked_owner_alive && self.claim_blocked.remove(task_id).is_some() {
            self.ctx.note("claim_blocked_forgotten", format!("{task_id}: the conductor answers the task's owner"));
        }
    }

    /// A row at work that no session keeps alive: declared stale if it names a session (the
    /// oracle judges the declaration, `no-false-stale`), then handed over (002 "Guard Clause
    /// Rules").
    async fn take_over_unheld(&mut self, task: &TaskView, state: &str, seconds_stale: Option<f64>) -> Result<(), SqlFailure> {
        if !task.session_id.is_empty() {
            self.handled_sessions.insert(task.session_id.clone());
            self.ctx.observe(Fact::StaleDeclared {
                task_id: task.task_id.clone(),
                session_id: task.session_id.clone(),
                seconds_stale: seconds_stale.unwrap_or(f64::INFINITY),
                polled_at_ms: self.ctx.now_ms(),
            });
        }
        let why = match seconds_stale {
            Some(age) => format!("holds a {state} row whose heartbeat is {age:.0} s old, and a claim on it was blocked (claim_blocked)"),
            None => format!("was blocked from claiming a {state} row no session ever beat on (claim_blocked)"),
        };
        // The row is held by no live session (`Holder::Unheld`): released whatever its heartbeat.
        self.hand_over_silent_session(&task.task_id, &why, None).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_at_work_is_held_while_its_heartbeat_is_fresh() {
        assert_eq!(holder("working", Some(30.0), 540, false), Holder::Live);
        assert_eq!(holder("needs_review", Some(540.0), 540, false), Holder::Live);
        assert_eq!(holder("working", Some(540.5), 540, false), Holder::Unheld);
        assert_eq!(holder("working", None, 540, false), Holder::Unheld, "a row created at work has no heartbeat");
        assert_eq!(holder("error", Some(80_000.0), 540, true), Holder::Unheld, "a launch pending does not hold a row at work");
    }

    #[test]
    fn a_claimable_row_waits_for_its_launched_session_and_a_finished_one_for_nobody() {
        assert_eq!(holder("fix_proposed", Some(10.0), 540, true), Holder::ClaimPending);
        assert_eq!(holder("watching", None, 540, false), Holder::Unheld);
        assert_eq!(holder("exit_requested", Some(10.0), 540, false), Holder::Unheld);
        assert_eq!(holder("complete", None, 540, false), Holder::Nobody);
        assert_eq!(holder("exited", Some(9_000.0), 540, false), Holder::Nobody);
    }
}
