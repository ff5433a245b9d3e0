//! The `[schedule]` section: the choices a run makes at its decision points (sim/plan/schedule.rs),
//! as `rehearsal explore schedules` writes them into a counterexample, so that `rehearsal run`
//! replays that order of statements exactly. Absent, the run takes the engine's own order.

use serde::Deserialize;

use super::deserialize::non_negative_i64;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduleSection {
    /// The option taken at each decision point, in the order the run meets them (0: the
    /// engine's own order; past the end, 0).
    #[serde(default)]
    pub choices: Vec<u32>,
    /// How far after an effect's instant another actor's effect still races it; defaults to
    /// the spread of `timing.statement_ms` (`crate::plan::schedule::Schedule::default_window_ms`).
    #[serde(default, deserialize_with = "window")]
    pub window_ms: Option<i64>,
}

fn window<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    non_negative_i64(d).map(Some)
}
