//! budget: timing measurements stay within the scenario's budgets.

use super::{Meaning, RuleDoc};
use crate::oracle::{quantiles, Findings, Measurements};
use crate::scenario::BudgetsSection;
use crate::vocab::RuleId;

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::Budget,
    says: "timing measurements stay within the scenario's budgets",
    seed: "000 \"Heartbeat Protocol\" and \"Watcher Architecture\": the poll intervals and thresholds the budgets derive from",
    consumes: "the run's measurements, at its end",
    truth: "message notice, review resume, crash detection, heartbeat age of live sessions, exit to claim",
    meaning: Meaning::ProtocolFlaw,
};

/// A measurement above its budget fails the run.
pub fn check(budgets: &BudgetsSection, measured: &Measurements, end_ms: i64, findings: &mut Findings) {
    let checks = [
        ("message_notice_ms", budgets.message_notice_ms_max, &measured.message_notice_ms),
        ("review_resume_ms", budgets.review_resume_ms_max, &measured.review_resume_ms),
        ("crash_detect_ms", budgets.crash_detect_ms_max, &measured.crash_detect_ms),
        ("heartbeat_age_s", budgets.heartbeat_age_s_max, &measured.heartbeat_age_s),
        ("exit_to_claim_ms", budgets.exit_to_claim_ms_max, &measured.exit_to_claim_ms),
    ];
    for (name, budget, sample) in checks {
        let (Some(budget), Some((_, _, max))) = (budget, quantiles(sample)) else { continue };
        if max > budget {
            findings.violate(
                DOC.id,
                name,
                end_ms,
                format!("{name} reached {max} against a budget of {budget} ({} measurements)", sample.len()),
            );
        }
    }
}
