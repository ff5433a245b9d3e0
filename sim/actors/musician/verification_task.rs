//! 000 "Mid-Session Resumption Protocol" 4, "Handle in-progress/mismatch states": "If temp
//! and/or comms table show in-progress OR differing states: Create new verification task /
//! Launch agent with this task / Review results / If complete: echo corrections to temp/comms /
//! If partial: create task-specific correction task with verification, run again / If fully
//! incomplete: echo corrective message in temp/comms / Log all to deviations file"
//! (docs/protocol.md C54).

use crate::actors::handoff::{Assessment, Mismatch};
use crate::world::SqlFailure;

use super::work::SubagentEnd;
use super::*;

/// What the verification task's agent reports, by how far the successor's assessment found
/// the states apart (003 "State Reconciliation": benign, suspicious, contradictory).
fn outcome_of(mismatch: Mismatch) -> &'static str {
    match mismatch {
        Mismatch::Contradictory => "fully incomplete",
        Mismatch::Suspicious => "partial",
        Mismatch::None | Mismatch::Benign => "complete",
    }
}

impl Musician {
    /// The verification task of a successor whose temp/ files and comms differ: an agent that
    /// verifies the state, a correction task (with its verification) and a second run when
    /// it comes back partial, the corrections (or, fully incomplete, the corrective message)
    /// echoed to the status file, and every mismatch logged to the deviations file. `Some` if
    /// the session ends meanwhile (an exit request).
    pub(super) async fn verification_task(&mut self, a: &Assessment) -> Result<Option<End>, SqlFailure> {
        if a.mismatches.is_empty() {
            return Ok(None);
        }
        self.status(&format!("temp/comms differ ({}): verification task created", a.mismatches.len())).await;
        if let Some(end) = self.task_agent("verification task").await? {
            return Ok(Some(end));
        }
        let outcome = outcome_of(a.mismatch);
        self.status(&format!("verification task: {outcome}")).await;
        if outcome == "partial" {
            self.status("correction task created, with its verification").await;
            if let Some(end) = self.task_agent("correction task").await? {
                return Ok(Some(end));
            }
            if let Some(end) = self.task_agent("verification task (again)").await? {
                return Ok(Some(end));
            }
            self.status("verification task (again): complete").await;
        }
        let echoed = if outcome == "fully incomplete" { "corrective message echoed" } else { "correction echoed" };
        for mismatch in &a.mismatches {
            self.status(&format!("{echoed}: {mismatch}")).await;
            // Low: the verification task handled it; a contradiction is escalated by the
            // resumption's own report (003 "State Reconciliation"), not by REF-6 a second time.
            self.deviation(&format!("resumption mismatch: {mismatch}: verification task {outcome} [Low — {echoed}]")).await;
        }
        Ok(None)
    }

    /// One agent of the resumption's own tasks: launched, waited for beside the background
    /// watcher, returned, with an agent's context costs.
    async fn task_agent(&mut self, label: &str) -> Result<Option<End>, SqlFailure> {
        self.cost(&self.scenario.context.agent_launch_pct.clone());
        self.status(&format!("{label} agent launched")).await;
        if let SubagentEnd::Stopped = self.wait_for_subagent(label).await? {
            return self.exit_on_request().await.map(Some);
        }
        self.cost(&self.scenario.context.agent_return_pct.clone());
        self.status(&format!("{label} agent returned")).await;
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outcome_follows_the_reconciliation_class() {
        assert_eq!(outcome_of(Mismatch::Benign), "complete");
        assert_eq!(outcome_of(Mismatch::Suspicious), "partial");
        assert_eq!(outcome_of(Mismatch::Contradictory), "fully incomplete");
    }
}
