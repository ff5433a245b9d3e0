//! The lengths of hang `rehearsal explore crashes --hangs` places at each point. A scripted
//! hang (`[[faults.hang]]`) has one `duration_ms`; what a hang does to the protocol depends
//! on how it compares with the heartbeat's two numbers (000 "Heartbeat Protocol": refreshed
//! past `timing.heartbeat_refresh_s`, stale past `conductor.staleness_s`), so the classes are
//! derived from the scenario's own, not fixed.

use crate::input::scenario::Scenario;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum HangClass {
    /// Half the margin between refresh and staleness (30 s with the seeds' 480 / 540 s): a
    /// heartbeat at most one poll past the refresh age cannot go stale in it, so the protocol
    /// must not notice.
    Short,
    /// As long as the staleness threshold (540 s): stale or not depending on the heartbeat's
    /// age when the session froze — the boundary.
    Threshold,
    /// Twice the threshold (1080 s): always declared stale and handed over; the session wakes
    /// as a zombie after its successor started (docs/protocol.md D11).
    Long,
}

impl HangClass {
    pub const ALL: [HangClass; 3] = [HangClass::Short, HangClass::Threshold, HangClass::Long];

    pub fn name(self) -> &'static str {
        match self {
            HangClass::Short => "short",
            HangClass::Threshold => "threshold",
            HangClass::Long => "long",
        }
    }

    pub fn duration_ms(self, scenario: &Scenario) -> i64 {
        let staleness_ms = scenario.conductor.staleness_s * 1000;
        let refresh_ms = scenario.timing.heartbeat_refresh_s * 1000;
        match self {
            HangClass::Short => (staleness_ms - refresh_ms) / 2,
            HangClass::Threshold => staleness_ms,
            HangClass::Long => 2 * staleness_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_the_seeds_numbers_the_classes_are_30_s_9_min_and_18_min() {
        let scenario = Scenario::parse("[tasks]\ncount = 1\n", std::path::Path::new("h.toml")).unwrap();
        let lengths: Vec<i64> = HangClass::ALL.iter().map(|c| c.duration_ms(&scenario)).collect();
        assert_eq!(lengths, [30_000, 540_000, 1_080_000]);
    }
}
