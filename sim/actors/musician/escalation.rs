//! Escalation to the conductor (seed 000 "Deviations & Escalation Thresholds", REF-6; seed
//! 003 "Resumption Decision Tree" 5 and "State Reconciliation"): deviations past the
//! threshold, or a contradictory state found on resumption, are reported to the conductor,
//! who answers with a correction task; the musician applies it, re-runs verification and
//! resumes.

use crate::actors::handoff::{EscalationRule, ESCALATION_ANSWERED};
use crate::actors::messages;
use crate::vocab::{Stmt, TaskState};
use crate::world::SqlFailure;
use rusqlite::types::Value;

use super::*;

impl Musician {
    /// REF-6 by default; "> 2 deviations" under `escalate-over-two` (docs/protocol.md D12).
    pub(super) fn escalation_rule(&self) -> EscalationRule {
        EscalationRule::of(self.scenario.settings.escalate_over_two)
    }

    /// The deviations no escalation has covered yet, in the deviations file's order.
    fn deviations_not_escalated(&self) -> Vec<String> {
        self.deviations_before.iter().chain(&self.deviations).skip(self.deviations_escalated).cloned().collect()
    }

    /// 000 "Deviations & Escalation Thresholds": "REF-6: 2+ Medium deviations OR 1+ High
    /// deviation triggers escalation to conductor". Counted over the task's deviations that
    /// no answered escalation covered (every session's: the deviations file is the task's).
    /// Run after every agent, where the session takes stock before its context evaluation.
    pub(super) async fn check_deviations(&mut self) -> Result<Option<End>, SqlFailure> {
        let severities = self.pending_tally.severities(&self.deviations_before, &self.deviations, self.deviations_escalated);
        let rule = self.escalation_rule();
        if !rule.met_by(&severities) {
            return Ok(None);
        }
        let pending = self.deviations_not_escalated();
        let what = format!(
            "deviations past the escalation threshold ({}): {} not yet escalated ({})",
            rule.text(),
            severities.total,
            severities.breakdown()
        );
        self.escalate("deviation_escalation", &what, &pending, true).await
    }

    /// Reports `what` (with `details`) to the conductor: the `error` message first, then the
    /// `error` state (004 orders every message/state pair so; context escalation, 000
    /// Execution Queries 6, is an error state too), then pause until it answers. On a
    /// correction task (`fix_proposed`) the session goes back to `working` (002: fix_proposed
    /// → working), applies it and re-runs verification before going on (003: "The musician
    /// applies correction task steps first, re-runs verification, then resumes from the last
    /// checkpoint": the work since that checkpoint stands, the correction fixes it). With
    /// `covers_deviations`, the answer covers every deviation so far: the next escalation
    /// counts only later ones, and the status file says so for a successor. `Some(end)` if
    /// the session ends instead.
    pub(super) async fn escalate(
        &mut self,
        last_error: &str,
        what: &str,
        details: &[String],
        covers_deviations: bool,
    ) -> Result<Option<End>, SqlFailure> {
        if let Some(end) = self.exit_if_requested().await? {
            return Ok(Some(end));
        }
        // 000 "Context Monitoring": checked before the work, as every report is: the
        // escalation, and the correction task and re-verification that answer it, at worst.
        let c = &self.scenario.context;
        let predicted = c.message_pct.upper() + c.integration_pct.upper() + c.verification_pct.upper();
        if self.would_cross_ceiling(predicted) {
            return self.ceiling_handoff(&format!("the escalation ({what})"), predicted).await.map(Some);
        }
        let covered = self.deviations_before.len() + self.deviations.len();
        self.status(&format!("ESCALATION to conductor: {what}")).await;
        let text = messages::escalation(&self.launch.plan.task_id, what, details, self.context_pct, self.self_correction_flag().is_some());
        self.own_message(Stmt::SendError, text).await?;
        if let Some(end) = self.report_state(Stmt::SetEscalation, vec![(":last_error", Value::Text(last_error.to_string()))]).await? {
            return Ok(Some(end));
        }
        self.cost(&self.scenario.context.message_pct.clone());
        let answer = match self.answer_or_end().await? {
            Ok(answer) => answer.state,
            Err(end) => return Ok(Some(end)),
        };
        if self.takes_exit_request(&answer).await {
            return self.exit_on_request().await.map(Some);
        }
        match TaskState::parse(&answer) {
            Some(TaskState::FixProposed | TaskState::ReviewApproved) => {}
            _ => {
                self.status(&format!("conductor {answer} after escalation: prepare handoff")).await;
                return self.clean_exit("escalated, conductor requested handoff").await.map(Some);
            }
        }
        // Back to work first (fix_proposed → working, 002), with a background watcher, as
        // after any answer (000 "Response Handling"); the correction is work.
        self.owned_write(Stmt::ResumeWorking, vec![]).await?;
        self.start_background_watcher();
        if TaskState::parse(&answer) == Some(TaskState::FixProposed) {
            self.status("conductor fix_proposed: correction task, applying it before resuming").await;
            let rework_ms = self.ctx.draw(&self.scenario.timing.rework_ms);
            // Work with the watcher beside it, relaunched if it exits (000 Key Principles 6a).
            self.work_for(rework_ms).await?;
            self.cost(&self.scenario.context.integration_pct.clone());
            self.status("correction task applied").await;
            let verify_ms = self.ctx.draw(&self.scenario.timing.verification_ms);
            self.work_for(verify_ms).await?;
            self.cost(&self.scenario.context.verification_pct.clone());
            self.status("verification tests: all passing").await;
        } else {
            self.status("conductor review_approved: no correction needed, resuming").await;
        }
        if covers_deviations {
            self.deviations_escalated = covered;
            self.status(&format!("{ESCALATION_ANSWERED}{covered}")).await;
        }
        Ok(None)
    }
}
