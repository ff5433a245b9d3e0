//! budget: timing measurements stay within the scenario's budgets.

use super::{Meaning, RuleDoc};
use crate::oracle::{quantiles, Findings, Measurements};
use crate::scenario::Scenario;
use crate::vocab::RuleId;

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::Budget,
    says: "timing measurements stay within the scenario's budgets",
    seed: "000 \"Heartbeat Protocol\" and \"Watcher Architecture\": the poll intervals and thresholds the budgets derive from",
    consumes: "the run's measurements, at its end",
    truth: "message notice, review resume, crash detection, heartbeat age of live sessions, exit to claim",
    meaning: Meaning::ProtocolFlaw,
};

/// One timing budget as a run applies it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetLimit {
    /// The measurement it bounds (`Measurements::named`).
    pub name: &'static str,
    pub limit: i64,
    /// Where the limit comes from: the scenario's `[budgets]`, or the seed text and scenario
    /// numbers it is derived from.
    pub source: String,
}

/// Every budget of a run: the scenario's `[budgets]` where it sets one, otherwise derived from
/// the protocol's own numbers (the scenario's timing, which defaults to the seeds').
pub fn limits(scenario: &Scenario) -> Vec<BudgetLimit> {
    let (t, c, b) = (&scenario.timing, &scenario.conductor, &scenario.budgets);
    // Every step below is a tool call: a few statement round trips around each poll.
    let statements = |n: i64| n * t.statement_ms.upper();
    let derived = [
        (
            "message_notice_ms",
            b.message_notice_ms_max,
            t.background_poll_ms + statements(4),
            format!(
                "000 \"Background Watcher\": a conductor message is noticed within one poll ({} ms) plus 4 statements",
                t.background_poll_ms
            ),
        ),
        (
            "review_resume_ms",
            b.review_resume_ms_max,
            t.pause_poll_ms + t.rework_ms.upper() + t.verification_ms.upper() + statements(10),
            format!(
                "000 \"Pause Watcher\" and \"Response Handling\": an answer is seen within one pause poll ({} ms), then acted on: after a rejection or a fix, the rework (up to {} ms) and the re-verification (up to {} ms) come before the re-submission, with 10 statements (the pause poll, the answer read, status lines, the request and the state)",
                t.pause_poll_ms,
                t.rework_ms.upper(),
                t.verification_ms.upper()
            ),
        ),
        (
            "crash_detect_ms",
            b.crash_detect_ms_max,
            c.staleness_s * 1000 + c.poll_ms + statements(4),
            format!(
                "000 \"Heartbeat Protocol\": a heartbeat older than {} s is stale; the conductor sees it at its next poll ({} ms) plus 4 statements",
                c.staleness_s, c.poll_ms
            ),
        ),
        (
            "heartbeat_age_s",
            b.heartbeat_age_s_max,
            c.staleness_s,
            format!("000 \"Heartbeat Protocol\": a live session's heartbeat, as the conductor reads it, stays under the {} s staleness threshold", c.staleness_s),
        ),
        (
            "exit_to_claim_ms",
            b.exit_to_claim_ms_max,
            c.poll_ms + c.review_ms.upper() + t.launch_delay_ms.upper() + statements(8),
            format!(
                "000 Bootstrap 5 \"Session Handoff\": the conductor sees the exit at its next poll ({} ms), possibly after the review it is in (up to {} ms), launches the successor (up to {} ms), which claims within 8 statements",
                c.poll_ms,
                c.review_ms.upper(),
                t.launch_delay_ms.upper()
            ),
        ),
    ];
    derived
        .into_iter()
        .map(|(name, set, derived_limit, why)| match set {
            Some(limit) => BudgetLimit { name, limit, source: "the scenario's [budgets]".to_string() },
            None => BudgetLimit { name, limit: derived_limit, source: why },
        })
        .collect()
}

/// A measurement above its budget fails the run. The explanation names the largest
/// measurement's causes (sim/oracle/latency.rs): the budget says what the protocol's numbers
/// allow, the causes say where the time went.
pub fn check(limits: &[BudgetLimit], measured: &Measurements, end_ms: i64, findings: &mut Findings) {
    for (name, sample) in measured.named() {
        let Some(budget) = limits.iter().find(|l| l.name == name) else { continue };
        let Some((_, _, max)) = quantiles(sample) else { continue };
        if max > budget.limit {
            let over = sample.iter().filter(|v| **v > budget.limit).count();
            // Heartbeat ages within the refresh threshold are not split (meter.rs): the
            // threshold is their whole cause.
            let within_threshold =
                if name == "heartbeat_age_s" { "; the largest is within the heartbeat refresh threshold, its whole cause" } else { "" }
                    .to_string();
            let causes = measured.largest(name).map_or(within_threshold, |d| {
                format!(
                    "; the largest ({} of session {}…, t={}..{} ms): {}",
                    d.task_id,
                    &d.session_id[..d.session_id.len().min(8)],
                    d.start_ms,
                    d.end_ms,
                    d.explain()
                )
            });
            findings.violate(
                DOC.id,
                name,
                end_ms,
                format!(
                    "{name} reached {max} against a budget of {} ({over} of {} measurements above it){causes}; the budget: {}",
                    budget.limit,
                    sample.len(),
                    budget.source
                ),
            );
        }
    }
}
