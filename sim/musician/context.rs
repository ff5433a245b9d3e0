//! Context monitoring (seed 000 "Context Monitoring", REF-3): the evaluation at the
//! threshold, the estimate to the next checkpoint, and what the session does about it.

use crate::event::Fact;
use crate::messages;
use crate::vocab::Stmt;
use crate::world::SqlFailure;
use rusqlite::types::Value;

use super::*;

impl Musician {
    /// 000 "Context Monitoring & Break Point Logic": at 50 % evaluate the way to the next
    /// checkpoint; < 70 % proceed, 70-80 % ask, > 80 % escalate. Once per checkpoint segment.
    pub(super) async fn evaluate_context(&mut self) -> Result<Option<End>, SqlFailure> {
        let c = self.scenario.context.clone();
        if self.context_pct >= 100 {
            // Context exhaustion: the session stops dead, no HANDOFF, no final write.
            self.ctx.note("context_exhausted", format!("{}%: hard stop", self.context_pct));
            self.ctx
                .observe(Fact::Crashed { session_id: self.ctx.meta().session_id.clone(), why: "context exhausted (100 %)".to_string() });
            return Ok(Some(End::HardStop));
        }
        if self.context_pct >= c.ceiling_pct {
            self.status(&format!("context at the {}% ceiling: handing off now", c.ceiling_pct)).await;
            self.scope = Scope::HandoffNow;
            return Ok(None);
        }
        if self.context_pct < c.evaluate_at_pct || self.evaluated_since_checkpoint || self.scope != Scope::Normal {
            return Ok(None);
        }
        self.evaluated_since_checkpoint = true;
        self.status(&format!("CONTEXT EVALUATION triggered at {}%", self.context_pct)).await;
        let remaining = self.agents_to_next_checkpoint();
        let average = self.average_agent_cost_pct();
        // 000 example "Context-Tight Break Point": self-correction doubles the planning cost.
        let risk = if self.self_correction.is_some() { average * 2 } else { average };
        let estimate = self.context_pct + remaining as i64 * risk + c.verification_pct.mean();
        if estimate < c.proceed_below_pct {
            self.status(&format!("context estimate {estimate}% at next checkpoint: proceed")).await;
            return Ok(None);
        }
        let zone = if estimate <= c.escalate_above_pct { "ask" } else { "escalate" };
        // REF-3: agents that fit in the 65 % budget, rounded.
        let fit = ((c.budget_pct - self.context_pct) as f64 / risk.max(1) as f64).round() as i64;
        let deviations = format!("{}", self.deviations_before + self.deviations.len());
        let warning = messages::ContextWarning {
            context_pct: self.context_pct,
            self_correction: self.self_correction.as_deref(),
            agents_remaining: remaining,
            agent_cost_pct: average,
            risk_cost_pct: risk,
            agents_fit: fit,
            budget_pct: c.budget_pct,
            estimate_pct: estimate,
            deviations: &deviations,
            zone,
        };
        let predicted = c.message_pct.upper();
        if self.would_cross_ceiling(predicted) {
            return self.ceiling_handoff("the context warning", predicted).await.map(Some);
        }
        let text = messages::context_warning(&warning);
        self.status(&format!("context estimate {estimate}% at next checkpoint: {zone}, sending context warning")).await;
        // Message first, then the error state (000 Execution Queries 6; order as 004).
        self.ctx
            .sql(
                Stmt::SendContextWarning,
                vec![(":task_id", self.task()), (":session_id", self.session()), (":message", Value::Text(text))],
            )
            .await?;
        self.owned_write(Stmt::SetContextWarning, vec![]).await?;
        self.cost(&c.message_pct);
        let Some(answer) = self.wait_for_conductor().await? else {
            return self.clean_exit("conductor unresponsive (two pause timeouts)").await.map(Some);
        };
        let reply = self.consume_conductor_messages().await?;
        let reply_text = reply.last().cloned().unwrap_or_default();
        match answer.as_str() {
            "review_approved" => {
                self.scope = Scope::HandoffAfterCheckpoint;
                self.status("conductor review_approved: proceed to checkpoint, then hand off").await;
            }
            "fix_proposed" => {
                let agents = messages::parse_reduced_scope(&reply_text).unwrap_or(fit.max(0) as u64);
                self.scope = Scope::Limited(agents);
                self.status(&format!("conductor fix_proposed: reduced scope — {agents} more agents, then checkpoint and handoff")).await;
                if remaining > agents {
                    self.deviation(&format!(
                        "step {}: {} agents deferred per conductor (Low — instructed scope reduction)",
                        self.next.step,
                        remaining - agents
                    ))
                    .await;
                }
            }
            _ => {
                self.scope = Scope::HandoffNow;
                self.status(&format!("conductor {answer}: prepare handoff now")).await;
            }
        }
        self.owned_write(Stmt::ResumeWorking, vec![]).await?;
        self.start_background_watcher();
        Ok(None)
    }

    /// 000 "Context Monitoring & Break Point Logic": the 80 % ceiling is checked before the
    /// work, not after it. Before every agent launch and every step the musician predicts its
    /// cost and adds what a clean exit then still needs (000 "Clean Exit Protocol" 3-6); if
    /// that would cross the ceiling, it hands off now, below it. Predictions are worst cases
    /// (000 Example: Context-Tight Break Point, Summary: "planning must account for
    /// worst-case context costs").
    pub(super) fn would_cross_ceiling(&self, predicted_pct: i64) -> bool {
        self.context_pct + predicted_pct + self.exit_cost_pct() > self.scenario.context.ceiling_pct
    }

    /// What a clean exit costs: the HANDOFF and the final message.
    pub(super) fn exit_cost_pct(&self) -> i64 {
        2 * self.scenario.context.message_pct.upper()
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

    /// The hand-off when `what` (costing at worst `predicted_pct`) would cross the ceiling.
    pub(super) async fn ceiling_handoff(&mut self, what: &str, predicted_pct: i64) -> Result<End, SqlFailure> {
        let ceiling = self.scenario.context.ceiling_pct;
        self.status(&format!("context check before {what}: ~{predicted_pct}% more would cross the {ceiling}% ceiling, handing off now"))
            .await;
        self.clean_exit(&format!("context exhaustion (the {ceiling}% ceiling)")).await
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

    pub(super) fn agents_to_next_checkpoint(&self) -> u64 {
        let plan = &self.launch.plan;
        let until_step = plan.checkpoints.iter().copied().find(|c| *c >= self.next.step).unwrap_or(plan.steps);
        if self.next.step > until_step {
            return 0;
        }
        let this_step = plan.subagents_per_step + 1 - self.next.agent.min(plan.subagents_per_step + 1);
        this_step + (until_step - self.next.step) * plan.subagents_per_step
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
