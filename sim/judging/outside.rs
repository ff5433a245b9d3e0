//! The assumptions of the repaired profile's proof a run's configuration is outside of
//! (issue 48, docs/repaired-protocol.md "Assumptions"), computed from the configuration alone,
//! so that a run says so in its verdict (and summary.md), not only on stderr, and the swarm
//! classifies such a configuration's failing pairs under the assumption it breaks.

use crate::input::scenario::Scenario;
use crate::judging::oracle::rules::budget::heartbeat_reach_ms;

/// The assumptions of the proof a configuration is outside of, each with why: A1, a double
/// launch's twin that starts later than the conductor's patience (a silence before the claim
/// longer than 30 minutes: the conductor relaunches, and the twin races the new session); A2,
/// watcher jitter past the seeds' timing margin.
pub fn outside_of(scenario: &Scenario) -> Vec<(&'static str, String)> {
    let patience_ms = crate::input::variant::PATIENT_CLAIM_OVERDUE_S * 1000;
    let mut out: Vec<(&'static str, String)> = scenario
        .faults
        .double_launch
        .iter()
        .filter(|d| d.after_ms > patience_ms)
        .map(|d| ("A1", format!("task {}'s double-launch twin starts {} s after its original, later than the conductor's {} s patience before a relaunch", d.task, d.after_ms / 1000, patience_ms / 1000)))
        .collect();
    out.extend(jitter_past_margin(scenario).map(|why| ("A2", why)));
    out
}

/// Why a configuration's injected watcher jitter is past the seeds' timing margin (A2), if it
/// is: a live session's heartbeat, as the conductor reads it, can pass the staleness threshold.
pub fn jitter_past_margin(scenario: &Scenario) -> Option<String> {
    let (reach_ms, staleness_ms) = (heartbeat_reach_ms(scenario), scenario.conductor.staleness_s * 1000);
    (reach_ms > staleness_ms).then(|| {
        format!(
            "its watcher jitter lets a live session's heartbeat, as the conductor reads it, reach {} s, past the {} s staleness threshold (000 \"Heartbeat Protocol\"): the seeds' timing margin, which no protocol with their thresholds keeps under this jitter",
            reach_ms / 1000,
            staleness_ms / 1000
        )
    })
}

/// The verdict's lines for a run of the `repaired` profile whose configuration is outside an
/// assumption of its proof (empty otherwise: only that profile's proof has these assumptions).
pub fn outside_lines(scenario: &Scenario) -> Vec<String> {
    if scenario.profile != "repaired" {
        return Vec::new();
    }
    outside_of(scenario).into_iter().map(|(id, why)| format!("assumption {id} of the repaired profile's proof: {why}")).collect()
}
