//! Context monitoring (seed 000 "Context Monitoring", REF-3): the evaluation at the
//! threshold, the estimate to the next checkpoint, and what the session does about it; the
//! 80 % ceiling, checked before the work.

use crate::actors::handoff::Position;
use crate::actors::messages;
use crate::input::scenario::TaskPlan;
use crate::vocab::{Severity, Stmt, TaskState};
use crate::world::event::Fact;
use crate::world::SqlFailure;

use super::*;

/// The way to the next checkpoint as the musician estimates it (000 "Context Monitoring &
/// Break Point Logic", Example: Context-Tight Break Point, Step 2).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct CheckpointEstimate {
    /// The agents before the checkpoint, in plan order.
    pub agents: Vec<Position>,
    /// How many of them are left in the current step (planned at the nominal cost).
    pub this_step: usize,
    /// REF-3: the average cost of this session's agents (self-correction excluded).
    pub nominal_pct: i64,
    /// The nominal cost, doubled after a self-correction ("~8% each instead of ~4%").
    pub risk_pct: i64,
    /// The checkpoint itself: its verification and the review request.
    pub checkpoint_pct: i64,
    /// Context at the checkpoint if every agent costs the nominal cost.
    pub nominal: i64,
    /// The worst case: the current step's agents nominal, later steps' agents at the risk.
    pub worst: i64,
    /// `worst` is the ceiling check's projection instead (the next piece of work and the
    /// checkpoint at their upper costs, then the hand-off): the figure an escalation at the
    /// ceiling crossed (docs/protocol.md C161).
    pub worst_with_handoff: bool,
}

impl CheckpointEstimate {
    /// The cost of the agents `agents[..k]`, current step nominal, later steps at risk.
    fn cost_of_first(&self, k: usize) -> i64 {
        (0..k).map(|i| self.cost_of(i)).sum()
    }

    /// The cost of the `i`-th agent from here (from 0): this step's nominal, later ones at the
    /// risk (past the checkpoint too).
    fn cost_of(&self, i: usize) -> i64 {
        if i < self.this_step {
            self.nominal_pct
        } else {
            self.risk_pct
        }
    }

    /// REF-3: "Calculate how many agents fit in the remaining budget: `(65% - current_context%)
    /// / avg_agent_cost%`", in whole agents at the estimate's own costs: as many as can run from
    /// `from_pct` without passing `budget_pct`. The worked example's "Agents That Fit in 65%
    /// Budget: 2" at 52 % is this (step 4 agent 2 at ~4 %, step 5 agent 1 at ~8 %: 64 %; a third
    /// would reach 72 %), and an agent that costs more than what is left fits 0 times, where a
    /// rounded quotient said 1 (48 % and 34 % agents: 17 / 34 = 0.5; issue 42 round 3).
    fn agents_fitting(&self, from_pct: i64, budget_pct: i64) -> i64 {
        let mut used_pct = from_pct;
        let mut fit = 0;
        // At least 1 % an agent, so the count ends.
        while used_pct + self.cost_of(fit).max(1) <= budget_pct {
            used_pct += self.cost_of(fit).max(1);
            fit += 1;
        }
        fit as i64
    }
}

impl Musician {
    /// 000 "Context Monitoring & Break Point Logic": the musician "tracks context with each
    /// system message received" and evaluates, once at 50 % or more, the way to the next
    /// checkpoint after every agent return: < 70 % proceed, 70-80 % ask ("I think I can reach
    /// the checkpoint, but what do you think?"), > 80 % escalate ("must pause now"). Once the
    /// conductor has answered a warning in this checkpoint segment, the musician asks again
    /// only if the zone got worse (an "adjust approach" reply leaves the scope as it was).
    pub(super) async fn evaluate_context(&mut self) -> Result<Option<End>, SqlFailure> {
        if self.context_pct >= 100 {
            return Ok(Some(self.hard_stop()));
        }
        // 000 "Deviations & Escalation Thresholds" (REF-6): after every agent the session
        // takes stock of its deviations, then of its context.
        if let Some(end) = self.check_deviations().await? {
            return Ok(Some(end));
        }
        let end = self.evaluate_zones().await?;
        self.evaluated_at_pct = Some(self.context_pct);
        Ok(end)
    }

    /// 000 "Context Monitoring & Break Point Logic": "Musician tracks context with each system
    /// message received" and evaluates from 50 %. Before each agent launch, the zones are
    /// evaluated again if context grew since the last evaluation by anything but an agent (a
    /// checkpoint's verification, request and answer; a correction task; an escalation's or a
    /// warning's answer; a resumption's reading): the projection to the next checkpoint then
    /// starts from where context now is (docs/protocol.md C55). No deviation check here: REF-6
    /// takes stock after agents.
    pub(super) async fn evaluate_context_if_grown(&mut self) -> Result<Option<End>, SqlFailure> {
        if self.context_pct < self.scenario.context.evaluate_at_pct || self.evaluated_at_pct == Some(self.context_pct) {
            return Ok(None);
        }
        let end = self.evaluate_zones().await?;
        self.evaluated_at_pct = Some(self.context_pct);
        Ok(end)
    }

    /// The zones of 000 "Context Monitoring & Break Point Logic" from the current context.
    async fn evaluate_zones(&mut self) -> Result<Option<End>, SqlFailure> {
        let c = self.scenario.context.clone();
        if self.context_pct >= c.ceiling_pct {
            // 000 "Clean Exit Protocol": a clean exit at a hand-off point such as "context
            // exhaustion". The ceiling is 000's 80 % by default ("without hitting the 80%
            // context ceiling", CEILING=80 in check-context-headroom.sh; docs/protocol.md N13);
            // 002's "75% triggers mandatory exit" is the variant `thresholds-002` (N14, D7).
            // The hand-off is the musician's own (not the conductor's "prepare handoff now"):
            // its reason names the ceiling.
            self.status(&format!("context at the {}% ceiling: handing off now", c.ceiling_pct)).await;
            return self.clean_exit(&format!("context exhaustion (the {}% ceiling)", c.ceiling_pct)).await.map(Some);
        }
        if self.scope != Scope::Normal {
            return Ok(None);
        }
        // 000 "Deviations & Escalation Thresholds": a self-correction is an escalation trigger
        // ("Self-correction issues during execution"): the estimates are "off by ~6x" and the
        // conductor "should plan for early handoff when flagged". With agents still ahead of
        // the checkpoint the musician escalates at once, whatever its context (once per
        // checkpoint segment); when the checkpoint is next, the escalation goes with its
        // review request (`Report`).
        let escalation =
            self.pending_escalation().filter(|_| !self.positions_to_next_checkpoint().is_empty() && self.answered_zone.is_none());
        if self.context_pct < c.evaluate_at_pct && escalation.is_none() {
            return Ok(None);
        }
        if escalation.is_some() {
            self.status("self-correction: escalating to the conductor (context estimates off by ~6x)").await;
        } else {
            self.status(&format!("CONTEXT EVALUATION triggered at {}%", self.context_pct)).await;
        }
        let e = self.estimate_to_checkpoint();
        let estimates = if e.worst != e.nominal {
            format!("{}% at next checkpoint (worst case {}%)", e.nominal, e.worst)
        } else {
            format!("{}% at next checkpoint", e.nominal)
        };
        // The worst case decides (000 Example: Context-Tight Break Point, Step 2-3: 71 % is
        // "feasible but tight", the worst case's 83 % "exceeds 80% limit": it escalates).
        let zone = Zone::of(e.worst, &c);
        if escalation.is_none() {
            if zone == Zone::Proceed {
                self.status(&format!("context estimate {estimates}: proceed")).await;
                return Ok(None);
            }
            if self.answered_zone.is_some_and(|answered| zone <= answered) {
                self.status(&format!("context estimate {estimates}: {}, as the conductor already answered: proceed", zone.word())).await;
                return Ok(None);
            }
        }
        if let Some(end) = self.exit_if_requested().await? {
            return Ok(Some(end));
        }
        // The ask zone thinks it can reach the checkpoint: it proposes every agent to it. The
        // escalate zone (and a self-correction) proposes the agents that leave the checkpoint
        // and the hand-off under the ceiling.
        let asks = zone == Zone::Ask && escalation.is_none();
        let recommended = if asks { e.agents.len() } else { self.recommended_agents(&e) };
        let predicted = c.message_pct.upper();
        if self.would_cross_ceiling(predicted) {
            return self.ceiling_handoff("the context warning", predicted).await.map(Some);
        }
        self.status(&format!("context estimate {estimates}: {}, sending context warning", zone.word())).await;
        let zone = if escalation.is_some() { Zone::Escalate } else { zone };
        self.send_context_warning(&e, recommended, zone, escalation).await
    }

    /// 000 "Context Monitoring & Break Point Logic": the context warning with its REF-3
    /// estimates ("Agent estimation is required for ANY context worry pause"), the error state
    /// (000 "Context escalation is an error state"), the conductor's answer and what the
    /// musician does with it. `Some` if the session ended meanwhile.
    async fn send_context_warning(
        &mut self,
        e: &CheckpointEstimate,
        recommended: usize,
        zone: Zone,
        escalation: Option<String>,
    ) -> Result<Option<End>, SqlFailure> {
        let c = self.scenario.context.clone();
        // A warning that projects past the ceiling (not a self-correction's escalation under it)
        // tells the conductor of the crossing: its answer covers it (C150).
        let past_ceiling = zone == Zone::Escalate && (escalation.is_none() || e.worst > c.ceiling_pct);
        let text = self.context_warning_text(e, recommended, if zone == Zone::Ask { "ask" } else { "escalate" }, escalation);
        // Message first, then the error state (000 Execution Queries 6; order as 004).
        self.own_message(Stmt::SendContextWarning, text).await?;
        if let Some(end) = self.report_state(Stmt::SetContextWarning, vec![]).await? {
            return Ok(Some(end));
        }
        self.cost(&c.message_pct);
        self.answered_zone = Some(zone);
        let (answer, reply_text) = match self.answer_or_end().await? {
            Ok(answer) => (answer.state, answer.reply),
            Err(end) => return Ok(Some(end)),
        };
        if self.takes_exit_request(&answer).await {
            return self.exit_on_request().await.map(Some);
        }
        self.follow_context_answer(&answer, &reply_text, e, recommended).await?;
        // An answer that planned the hand-off (a checkpoint, then stop) to a warning past the
        // ceiling covers the crossing; "adjust approach" plans none, so the crossing is still
        // the conductor's to rule on (C150).
        self.answered_past_ceiling |= past_ceiling && matches!(self.scope, Scope::Limited(_) | Scope::HandoffAfterCheckpoint);
        Ok(None)
    }

    /// Context exhaustion: the session stops dead, no HANDOFF, no final write.
    pub(super) fn hard_stop(&self) -> End {
        self.ctx.note("context_exhausted", format!("{}%: hard stop", self.context_pct));
        self.ctx.observe(Fact::Crashed { session_id: self.ctx.meta().session_id.clone(), why: "context exhausted (100 %)".to_string() });
        End::HardStop
    }

    /// The context warning's text (000 "Context Monitoring & Break Point Logic"; 004's template).
    fn context_warning_text(&self, e: &CheckpointEstimate, recommended: usize, zone: &str, escalation: Option<String>) -> String {
        let c = &self.scenario.context;
        // REF-3: whole agents that fit in the 65 % budget at the estimate's costs.
        let fit = e.agents_fitting(self.context_pct, c.budget_pct);
        let recommendation = describe_positions(&e.agents[..recommended]);
        let deviations = self.deviation_summary();
        let warning = messages::ContextWarning {
            context_pct: self.context_pct,
            self_correction: self.self_correction.as_deref(),
            agents_remaining: e.agents.len() as u64,
            agent_cost_pct: e.nominal_pct,
            risk_cost_pct: e.risk_pct,
            agents_fit: fit,
            budget_pct: c.budget_pct,
            estimate_pct: e.nominal,
            worst_pct: e.worst,
            worst_with_handoff: e.worst_with_handoff,
            recommended: recommended as u64,
            recommendation: &recommendation,
            deviations: &deviations,
            zone,
            escalation,
        };
        messages::context_warning(&warning)
    }

    /// What the musician does with the conductor's answer to its context warning (000
    /// "Context escalation response states"): go on (to the checkpoint, or with an adjusted
    /// approach, or with a reduced scope) and write `working` again, or prepare the hand-off.
    async fn follow_context_answer(
        &mut self,
        answer: &str,
        reply_text: &str,
        e: &CheckpointEstimate,
        recommended: usize,
    ) -> Result<(), SqlFailure> {
        match TaskState::parse(answer) {
            Some(TaskState::ReviewApproved) => {
                self.scope = Scope::HandoffAfterCheckpoint;
                self.status("conductor review_approved: proceed to checkpoint, then hand off").await;
            }
            Some(TaskState::FixProposed) if messages::is_adjusted_approach(reply_text) => {
                // 000 "Context escalation response states" 2: `fix_proposed` — "Adjust
                // approach as follows: [instructions]". The instructions change how the work
                // is done, not how much of it: the scope stays as planned, no hand-off is
                // scheduled, and the session goes on checking after every agent (asking again
                // only if the zone gets worse).
                let first = reply_text.lines().next().unwrap_or("").to_string();
                self.status(&format!("conductor fix_proposed: adjusting approach — {first}")).await;
                self.deviation("approach adjusted per conductor after a context warning [Low — instructed change of approach]").await;
            }
            Some(TaskState::FixProposed) => {
                // 000 Example: Context-Tight Break Point, Step 5-6: "Total: 3 more agents +
                // checkpoint"; the agents after those, up to the checkpoint, are skipped.
                let granted = messages::parse_reduced_scope(reply_text).unwrap_or(recommended as u64).min(e.agents.len() as u64);
                self.scope = Scope::Limited(granted);
                let skipped = &e.agents[granted as usize..];
                if skipped.is_empty() {
                    self.status(&format!("conductor fix_proposed: reduced scope — {granted} more agents, then checkpoint and handoff"))
                        .await;
                } else {
                    let skipped = describe_positions(skipped);
                    self.status(&format!("conductor fix_proposed: reduced scope — skip {skipped}")).await;
                    self.deviation(&format!("{skipped} skipped per conductor [Low — instructed scope reduction]")).await;
                }
            }
            _ => {
                // 000 "Context escalation response states": `review_failed` — "Do not
                // proceed, prepare handoff now". The musician does no more work, so it writes
                // no `working`: the clean exit that follows takes the row from
                // `review_failed` to `exited` (docs/protocol.md D10: the conductor's
                // reply to a context warning, a transition 002's table omits).
                self.scope = Scope::HandoffNow;
                self.status(&format!("conductor {answer}: prepare handoff now")).await;
                return Ok(());
            }
        }
        // 002 "Valid State Transitions": `review_approved → working` and `fix_proposed →
        // working` (implicit; the musician resumes).
        self.owned_write(Stmt::ResumeWorking, vec![]).await?;
        self.start_background_watcher();
        Ok(())
    }

    /// 000 Example: Context-Tight Break Point, Step 2: the remaining agents to the next
    /// checkpoint at the REF-3 average, the checkpoint's verification and request, and the
    /// worst case with the later steps' agents at the self-correction risk.
    pub(super) fn estimate_to_checkpoint(&self) -> CheckpointEstimate {
        let c = &self.scenario.context;
        let agents = self.positions_to_next_checkpoint();
        let this_step = agents.iter().filter(|p| p.step == self.next.step).count();
        let nominal_pct = self.average_agent_cost_pct();
        let risk_pct = if self.self_correction.is_some() { 2 * nominal_pct } else { nominal_pct };
        let checkpoint_pct = c.verification_pct.mean() + c.message_pct.mean();
        let mut e = CheckpointEstimate {
            agents,
            this_step,
            nominal_pct,
            risk_pct,
            checkpoint_pct,
            nominal: 0,
            worst: 0,
            worst_with_handoff: false,
        };
        e.nominal = self.context_pct + e.agents.len() as i64 * nominal_pct + checkpoint_pct;
        e.worst = self.context_pct + e.cost_of_first(e.agents.len()) + checkpoint_pct;
        e
    }

    /// The agents to recommend before the checkpoint and the hand-off: as many, in plan
    /// order, as can run at the worst case and still leave the checkpoint (verification,
    /// request, approval) and the clean exit under the ceiling (000 Example: Context-Tight
    /// Break Point, Step 3: "Complete step 4 agent 2 + step 5 agents 1-2, then handoff").
    pub(super) fn recommended_agents(&self, e: &CheckpointEstimate) -> usize {
        let after = e.checkpoint_pct + self.scenario.context.message_pct.mean() + self.exit_cost_pct();
        (0..=e.agents.len())
            .rev()
            .find(|k| self.context_pct + e.cost_of_first(*k) + after <= self.scenario.context.ceiling_pct)
            .unwrap_or(0)
    }

    /// The escalation a self-correction of this checkpoint segment triggers (after the last
    /// approved checkpoint), until a checkpoint is approved.
    pub(super) fn pending_escalation(&self) -> Option<String> {
        let details = self.self_correction.as_deref()?;
        let step: u64 = details.strip_prefix("step ")?.split(',').next()?.parse().ok()?;
        (step > self.last_checkpoint_step.unwrap_or(0)).then(|| messages::self_correction_escalation(details))
    }

    /// "N" or "N (Severity — what)" or "N (a High, b Medium, c Low)" (000 "Review Request":
    /// "Deviations: 1 (Medium — …)"; "Context Warning": "Deviations: 2 (1 Medium, 1 Low)").
    pub(super) fn deviation_summary(&self) -> String {
        let total = self.deviations_before.len() + self.deviations.len();
        match (total, self.deviations.as_slice()) {
            (0, _) => "0".to_string(),
            (1, [only]) => match severity(only) {
                Some(word) => format!("1 ({word} — {})", without_severity(only)),
                None => "1".to_string(),
            },
            (_, []) => total.to_string(),
            (_, lines) => {
                let count = |w: Severity| lines.iter().filter(|l| severity(l) == Some(w)).count();
                let parts: Vec<String> = [Severity::High, Severity::Medium, Severity::Low]
                    .map(|w| (w, count(w)))
                    .iter()
                    .filter(|(_, n)| *n > 0)
                    .map(|(w, n)| format!("{n} {w}"))
                    .collect();
                let earlier = if !self.deviations_before.is_empty() {
                    format!(", {} from earlier sessions", self.deviations_before.len())
                } else {
                    String::new()
                };
                format!("{total} ({}{earlier})", parts.join(", "))
            }
        }
    }

    /// 000 Example: Mid-Session Resumption, Step 9: "Estimated remaining work: 1 agent + final
    /// checkpoint (~8% context)": the agents from `from` to the end at the REF-3 average, and
    /// each checkpoint still ahead (verification, request, approval).
    pub(super) fn remaining_work_estimate(&self, from: Position) -> String {
        let plan = &self.launch.plan;
        let agents = positions(plan, from, plan.steps).len() as i64;
        let checkpoints =
            plan.checkpoints.iter().filter(|c| **c >= from.step && (**c > from.step || from.agent <= plan.agents_in(**c))).count();
        let c = &self.scenario.context;
        let review_pct = c.verification_pct.mean() + 2 * c.message_pct.mean();
        let pct = agents * self.average_agent_cost_pct() + (checkpoints as i64 + 1) * review_pct;
        let agents = if agents == 1 { "1 agent".to_string() } else { format!("{agents} agents") };
        let checkpoints = match checkpoints {
            0 => String::new(),
            1 => " + 1 checkpoint".to_string(),
            n => format!(" + {n} checkpoints"),
        };
        format!("{agents}{checkpoints} + final checkpoint (~{pct}% context)")
    }

    /// The agents from `self.next` up to the next checkpoint: the first scheduled one at or
    /// after the current step, else the end of the plan (the final checkpoint).
    pub(super) fn positions_to_next_checkpoint(&self) -> Vec<Position> {
        let plan = &self.launch.plan;
        let until_step = plan.checkpoints.iter().copied().find(|c| *c >= self.next.step).unwrap_or(plan.steps);
        positions(plan, self.next, until_step)
    }

    /// 000 "Context Monitoring & Break Point Logic": ">80% context to reach checkpoint →
    /// escalate to conductor (must pause now)"; the worked example plans "without hitting the
    /// 80% context ceiling". Before every agent launch, absorption, review, rework, error
    /// report and escalation the musician predicts the cost at worst, adds what a clean exit
    /// then still needs (000 "Clean Exit Protocol" 3-6) and, while it has yet to escalate in
    /// this segment, the escalation's own message: true if that would cross the ceiling
    /// (docs/protocol.md C50). Under `ceiling-after-agent` (the reading of C32 before issue 42)
    /// never: the ceiling is met after an agent.
    pub(super) fn would_cross_ceiling(&self, predicted_pct: i64) -> bool {
        let s = &self.scenario.settings;
        (s.ceiling_before_work || s.ceiling_escalates) && self.ceiling_projection_pct(predicted_pct) > self.scenario.context.ceiling_pct
    }

    /// What the ceiling check projects for work costing at worst `predicted_pct`: the context
    /// after it, the clean exit and, while an escalation is still due, its message.
    fn ceiling_projection_pct(&self, predicted_pct: i64) -> i64 {
        let reserve_pct = if self.escalates_at_ceiling() { self.scenario.context.message_pct.upper() } else { 0 };
        self.context_pct + predicted_pct + self.exit_cost_pct() + reserve_pct
    }

    /// Whether a ceiling hand-off is preceded by an escalation (C50): by default yes, even
    /// when the conductor answered an earlier warning of the segment in the ask zone (it
    /// answered an estimate under the ceiling, not this crossing); not when it answered one
    /// that projected past the ceiling (C150: that answer covers the crossing, and a second
    /// identical warning would ask the same question again); never under
    /// `ceiling-before-work` (C32), which hands off without asking.
    pub(super) fn escalates_at_ceiling(&self) -> bool {
        self.ceiling_reading_escalates() && !self.answered_past_ceiling
    }

    /// The reading of the ceiling: escalated (C50), or handed off without asking
    /// (`ceiling-before-work`, C32).
    fn ceiling_reading_escalates(&self) -> bool {
        let s = &self.scenario.settings;
        s.ceiling_escalates && !s.ceiling_before_work
    }

    /// Whether the conductor's answer asked for a checkpoint before the hand-off: a reduced
    /// scope ("Only complete 2 more agents then prepare handoff") or `review_approved`
    /// ("Proceed as planned to checkpoint, then stop and report back for clean handoff"),
    /// under the reading that escalates (C143).
    fn checkpoint_asked(&self) -> bool {
        self.ceiling_reading_escalates() && matches!(self.scope, Scope::Limited(_) | Scope::HandoffAfterCheckpoint)
    }

    /// What the ceiling check before an agent keeps free beyond the agent itself: the
    /// checkpoint the answer asked for (its review at worst), so that the session stops for it
    /// while it still fits rather than after the agent that leaves it no room (C150).
    pub(super) fn checkpoint_reserve_pct(&self) -> i64 {
        if self.checkpoint_asked() {
            self.review_upper_pct()
        } else {
            0
        }
    }

    /// What a clean exit costs: the HANDOFF, the report and the final message (000 Example:
    /// Clean Exit & Handoff, "Context progression": 69 % → 70 → 71 → 72).
    pub(super) fn exit_cost_pct(&self) -> i64 {
        3 * self.scenario.context.message_pct.upper()
    }

    /// One agent attempt at worst: launch, return and integration, twice that after a
    /// self-correction (000 Example: Context-Tight Break Point: "~8% each instead of ~4%").
    pub(super) fn agent_upper_pct(&self) -> i64 {
        let c = &self.scenario.context;
        let attempt = c.agent_launch_pct.upper() + c.agent_return_pct.upper() + c.integration_pct.upper();
        if self.self_correction.is_some() {
            2 * attempt
        } else {
            attempt
        }
    }

    /// One review at worst: the verification, the request and reading the approval.
    pub(super) fn review_upper_pct(&self) -> i64 {
        let c = &self.scenario.context;
        c.verification_pct.upper() + 2 * c.message_pct.upper()
    }

    /// The hand-off when `what` (costing at worst `predicted_pct`) would cross the ceiling,
    /// escalated first with the REF-3 estimates (C50).
    pub(super) async fn ceiling_handoff(&mut self, what: &str, predicted_pct: i64) -> Result<End, SqlFailure> {
        // A row left `review_approved` for the completion review resumes first: 002 has no
        // `review_approved → exited`.
        self.leave_approved_row().await?;
        if let Some(end) = self.ceiling_escalation(what, predicted_pct).await? {
            return Ok(end);
        }
        self.ceiling_handoff_now(what, predicted_pct).await
    }

    /// The ceiling hand-off before an agent (C50), with the checkpoint the conductor's answer
    /// asks for first. 000 "Context escalation response states": `fix_proposed` "Only complete
    /// 2 more agents then prepare handoff" (here "Total: 0 more agents + checkpoint") and
    /// `review_approved` "Proceed as planned to checkpoint, then stop and report back for clean
    /// handoff" both put a checkpoint on the completed work before the hand-off (Example:
    /// Context-Tight Break Point, Step 5: "Run checkpoint 3 verification on completed work /
    /// Prepare handoff after checkpoint approval"). The checkpoint runs if its review fits under
    /// the ceiling and some work since the last approved checkpoint is left to verify; if it
    /// does not fit, the successor verifies (003 "Post-Resumption Verification"). Issue 42
    /// round 3: before this the session handed off at once, whatever the answer.
    pub(super) async fn ceiling_handoff_before_agent(&mut self, what: &str, predicted_pct: i64) -> Result<End, SqlFailure> {
        self.leave_approved_row().await?;
        if let Some(end) = self.ceiling_escalation(what, predicted_pct).await? {
            return Ok(end);
        }
        // Only an answer to an escalation asks (none under `ceiling-before-work`, C32).
        if let Some(review) = self.checkpoint_on_work_done().filter(|_| self.checkpoint_asked()) {
            let ceiling = self.scenario.context.ceiling_pct;
            if self.would_cross_ceiling(self.review_upper_pct()) {
                self.status(&format!("the checkpoint on the work done would cross the {ceiling}% ceiling: the successor verifies")).await;
            } else {
                if let Some(end) = self.review(review).await? {
                    return Ok(end);
                }
                return self
                    .clean_exit(&format!("context exhaustion (the {ceiling}% ceiling; checkpoint on the work done approved)"))
                    .await;
            }
        }
        self.ceiling_handoff_now(what, predicted_pct).await
    }

    /// The checkpoint a reduced scope brings forward on the work done (000 Example:
    /// Context-Tight Break Point, Step 5: "Run checkpoint 3 verification on completed work"),
    /// as `work` brings it when the scope runs out mid-plan: the checkpoint after the last whole
    /// step, or a context checkpoint inside step 1. `None` when no agent is done since the last
    /// approved checkpoint (or since the start).
    fn checkpoint_on_work_done(&self) -> Option<Review> {
        let plan = &self.launch.plan;
        let step = self.next.step;
        let done = step - 1;
        if self.next.agent == 1 && (done == 0 || self.last_checkpoint_step == Some(done)) {
            return None;
        }
        if done == 0 {
            return Some(Review::ContextWorry { step });
        }
        let index = plan.checkpoints.iter().filter(|c| **c <= done).count() + 1;
        Some(Review::Checkpoint { index, total: plan.checkpoints.len() + 1, step: done })
    }

    /// The hand-off at the ceiling without an escalation: under `ceiling-before-work`, once the
    /// escalation is answered, or from a row the musician may not move to `error`.
    pub(super) async fn ceiling_handoff_now(&mut self, what: &str, predicted_pct: i64) -> Result<End, SqlFailure> {
        let ceiling = self.scenario.context.ceiling_pct;
        self.status(&format!("context check before {what}: ~{predicted_pct}% more would cross the {ceiling}% ceiling, handing off now"))
            .await;
        self.clean_exit(&format!("context exhaustion (the {ceiling}% ceiling)")).await
    }

    /// An agent's return took the session past the ceiling (a context spike, a
    /// self-correction's ~6x; under `ceiling-after-agent` any return): 000 "Context Monitoring
    /// & Break Point Logic" ("tracks context with each system message received"; "> 80% …
    /// escalate to conductor (must pause now)"). Its first act is the escalation with the
    /// REF-3 estimates, and whatever the answer the hand-off follows, the agent not integrated
    /// (C50, C151). Without an escalation to make (the reading `ceiling-after-agent` or
    /// `ceiling-before-work`, or an answer that already covers the crossing, C150), it hands
    /// off at once. The return's status line is the escalation's or the hand-off's.
    pub(super) async fn past_ceiling_on_return(&mut self, label: &str) -> Result<End, SqlFailure> {
        let (ceiling, pct) = (self.scenario.context.ceiling_pct, self.context_pct);
        if !self.escalates_at_ceiling() {
            self.status(&format!("{label} returned: context {pct}% is past the {ceiling}% ceiling, handing off now, not integrated")).await;
            return self.clean_exit(&format!("context exhaustion ({label}'s return crossed the ceiling)")).await;
        }
        let e = self.estimate_to_checkpoint();
        self.status(&format!(
            "{label} returned: context {pct}% is past the {ceiling}% ceiling (estimate {}% at next checkpoint, worst case {}%): escalating, must pause now",
            e.nominal, e.worst
        ))
        .await;
        self.escalate_then_hand_off_on_return(&e, label, "ceiling").await
    }

    /// A return that leaves the session under the ceiling but with no room for its integration
    /// and a clean exit ("past the ceiling margin"): 000 "Context Monitoring & Break Point
    /// Logic", "> 80% context to reach checkpoint → escalate to conductor (must pause now)",
    /// "Agent estimation is required for ANY context worry pause". Escalated first, as above
    /// the ceiling (C151), then handed off whatever the answer, the agent not integrated (C162).
    pub(super) async fn ceiling_margin_on_return(&mut self, label: &str) -> Result<End, SqlFailure> {
        let (ceiling, pct) = (self.scenario.context.ceiling_pct, self.context_pct);
        let e = self.escalation_estimate(self.scenario.context.integration_pct.upper());
        let with = if e.worst_with_handoff { " with the hand-off" } else { "" };
        self.status(&format!(
            "{label} returned: context {pct}% leaves no room for its integration under the {ceiling}% ceiling (estimate {}% at next checkpoint, worst case {}%{with}): escalating, must pause now",
            e.nominal, e.worst
        ))
        .await;
        self.escalate_then_hand_off_on_return(&e, label, "ceiling margin").await
    }

    /// The end of both escalations on an agent's return (C151, C162): the CONTEXT WARNING
    /// ("0 more agents"), then, whatever the conductor answers, the hand-off with the agent not
    /// integrated; `crossed` names what the return crossed ("ceiling", "ceiling margin"). An
    /// exit request or a lost row ends it at the warning.
    async fn escalate_then_hand_off_on_return(&mut self, e: &CheckpointEstimate, label: &str, crossed: &str) -> Result<End, SqlFailure> {
        if let Some(end) = self.send_context_warning(e, 0, Zone::Escalate, None).await? {
            return Ok(end);
        }
        let ceiling = self.scenario.context.ceiling_pct;
        self.status(&format!("past the {ceiling}% {crossed} since {label}'s return: handing off now, not integrated")).await;
        self.clean_exit(&format!("context exhaustion ({label}'s return crossed the ceiling)")).await
    }

    /// The estimate an escalation at the ceiling reports: the REF-3 estimate, with the ceiling
    /// check's projection for work costing at worst `predicted_pct` as its worst case when that
    /// is higher, so its "must pause now" is 000's "> 80 %" zone of the figure it prints (C161).
    fn escalation_estimate(&self, predicted_pct: i64) -> CheckpointEstimate {
        let mut e = self.estimate_to_checkpoint();
        let projected = self.ceiling_projection_pct(predicted_pct);
        if projected > e.worst {
            (e.worst, e.worst_with_handoff) = (projected, true);
        }
        e
    }

    /// 000 "Context Monitoring & Break Point Logic": "escalate to conductor (must pause now)",
    /// "Same message format with agent estimates" — before the piece of work that would cross
    /// the ceiling, not after it. The conductor's answer cannot make that work fit under the
    /// ceiling, so whatever it grants, the session hands off next (docs/protocol.md C50); an
    /// exit request or a lost row ends it here (`Some`).
    async fn ceiling_escalation(&mut self, what: &str, predicted_pct: i64) -> Result<Option<End>, SqlFailure> {
        if !self.escalates_at_ceiling() {
            return Ok(None);
        }
        let ceiling = self.scenario.context.ceiling_pct;
        // The figure that crossed the ceiling is the worst case the warning reports, not a
        // nominal estimate in the 70-80 % "ask" zone (C161; approve seed 15 reported 76 %).
        let e = self.escalation_estimate(predicted_pct);
        let with = if e.worst_with_handoff { " with the hand-off" } else { "" };
        // No agent fits: the very next piece of work would cross the ceiling.
        let recommended = 0;
        self.status(&format!(
            "context check before {what}: ~{predicted_pct}% more would cross the {ceiling}% ceiling (estimate {}% at next checkpoint, worst case {}%{with}): escalating, must pause now",
            e.nominal, e.worst
        ))
        .await;
        self.send_context_warning(&e, recommended, Zone::Escalate, None).await
    }

    /// A review, unless its verification and messages would cross the ceiling: then the
    /// session hands off and its successor verifies (003 "Post-Resumption Verification").
    pub(super) async fn review_under_ceiling(&mut self, review: Review) -> Result<Option<End>, SqlFailure> {
        let predicted = self.review_upper_pct();
        if self.would_cross_ceiling(predicted) {
            let what = match review {
                Review::Checkpoint { index, .. } => format!("checkpoint {index}"),
                Review::ContextWorry { step } => format!("the context checkpoint after step {step}"),
                Review::Completion => "the final checkpoint".to_string(),
            };
            return self.ceiling_handoff(&what, predicted).await.map(Some);
        }
        self.review(review).await
    }

    /// REF-3: the average of this session's agents, or the model's mean before any returned.
    pub(super) fn average_agent_cost_pct(&self) -> i64 {
        if self.agents_done > 0 {
            return (self.agent_cost_total_pct as f64 / self.agents_done as f64).round() as i64;
        }
        let c = &self.scenario.context;
        c.agent_launch_pct.mean() + c.agent_return_pct.mean() + c.integration_pct.mean()
    }
}

/// The agents from `from` through the end of step `until_step`, in plan order.
pub(super) fn positions(plan: &TaskPlan, from: Position, until_step: u64) -> Vec<Position> {
    let mut out = Vec::new();
    for step in from.step..=until_step {
        let first = if step == from.step { from.agent } else { 1 };
        out.extend((first..=plan.agents_in(step)).map(|agent| Position { step, agent }));
    }
    out
}

/// "step 4 agent 2 + step 5 agents 1-2" (000 Example: Context-Tight Break Point, Step 3).
pub(super) fn describe_positions(agents: &[Position]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < agents.len() {
        let step = agents[i].step;
        let mut j = i;
        while j + 1 < agents.len() && agents[j + 1].step == step && agents[j + 1].agent == agents[j].agent + 1 {
            j += 1;
        }
        let (first, last) = (agents[i].agent, agents[j].agent);
        parts.push(if first == last { format!("step {step} agent {first}") } else { format!("step {step} agents {first}-{last}") });
        i = j + 1;
    }
    if parts.is_empty() {
        "no agents".to_string()
    } else {
        parts.join(" + ")
    }
}

/// The severity word of a deviation line (000 REF-5: Low, Medium, High).
pub(super) fn severity(line: &str) -> Option<Severity> {
    [Severity::High, Severity::Medium, Severity::Low]
        .into_iter()
        .find(|w| line.contains(&format!("[{w}")) || line.contains(&format!("({w}")))
}

/// A deviation line without its severity group: "checkpoint 2: review_failed (Smoothness 6/9)".
fn without_severity(line: &str) -> &str {
    let cut = ["[High", "[Medium", "[Low", "(High", "(Medium", "(Low"].iter().filter_map(|m| line.find(m)).min().unwrap_or(line.len());
    line[..cut].trim_end()
}

/// The zone of 000 "Context Monitoring & Break Point Logic" an estimate at the next
/// checkpoint falls in, mildest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Zone {
    /// "<70% context to reach checkpoint → proceed as normal, no escalation".
    Proceed,
    /// "70-80% … ask for confirmation".
    Ask,
    /// ">80% … escalate to conductor (must pause now)". Past the ceiling too, when a reading
    /// sets it under the escalation threshold (002's 75 %, `thresholds-002`).
    Escalate,
}

impl Zone {
    pub(super) fn of(worst_pct: i64, c: &crate::input::scenario::ContextSection) -> Zone {
        if worst_pct < c.proceed_below_pct {
            Zone::Proceed
        } else if worst_pct <= c.escalate_above_pct.min(c.ceiling_pct) {
            Zone::Ask
        } else {
            Zone::Escalate
        }
    }

    pub(super) fn word(self) -> &'static str {
        match self {
            Zone::Proceed => "proceed",
            Zone::Ask => "ask",
            Zone::Escalate => "escalate",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn estimate(this_step: usize, nominal_pct: i64, risk_pct: i64) -> CheckpointEstimate {
        let agents = (1..=4).map(|agent| Position { step: 1, agent }).collect();
        CheckpointEstimate { agents, this_step, nominal_pct, risk_pct, checkpoint_pct: 3, nominal: 0, worst: 0, worst_with_handoff: false }
    }

    #[test]
    fn agents_that_fit_are_whole_agents_at_the_estimate_s_costs() {
        // 000 Example: Context-Tight Break Point, Step 3: "Agents That Fit in 65% Budget: 2".
        assert_eq!(estimate(1, 4, 8).agents_fitting(52, 65), 2);
        // A 34 % agent with 17 % left fits 0 times (a rounded 0.5 said 1).
        assert_eq!(estimate(4, 34, 34).agents_fitting(48, 65), 0);
        assert_eq!(estimate(4, 34, 34).agents_fitting(31, 65), 1);
        assert_eq!(estimate(0, 5, 5).agents_fitting(70, 65), 0);
        // Past the checkpoint's agents the count goes on at the risk cost.
        assert_eq!(estimate(4, 1, 1).agents_fitting(55, 65), 10);
        assert_eq!(estimate(4, 0, 0).agents_fitting(60, 65), 5, "at least 1 % an agent");
    }
}
