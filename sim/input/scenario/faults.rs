//! The `[faults]` section of a scenario: scripted faults at a time or a protocol point, and
//! random ones whose odds may themselves be drawn from the seed. `crate::plan::faults::FaultPlan`
//! resolves it for one run.

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};

use super::deserialize::check_probability;
use crate::base::dist::Dist;
use crate::vocab::{FaultKind, Point, PointFault, Whose};

/// A probability that is either fixed or drawn once per run from the seed (swarm testing:
/// `{ min = 0.0, max = 0.02 }`), logged at the start of the run.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum Odds {
    /// Not written in the scenario: 0, and not a declared fault (sim/plan/census.rs).
    #[default]
    Unset,
    Fixed(f64),
    Drawn {
        min: f64,
        max: f64,
    },
}

impl Odds {
    /// The probability once drawn (the run resolves drawn odds before actors start).
    pub fn fixed(&self) -> f64 {
        match *self {
            Odds::Unset => 0.0,
            Odds::Fixed(p) => p,
            Odds::Drawn { min, .. } => min,
        }
    }

    /// Whether the scenario writes these odds (even as 0): a declared fault kind.
    pub fn declared(&self) -> bool {
        !matches!(self, Odds::Unset)
    }
}

impl<'de> Deserialize<'de> for Odds {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Odds, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Range {
            min: f64,
            max: f64,
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Fixed(f64),
            Range(Range),
        }
        let raw = Raw::deserialize(d).map_err(|_| de::Error::custom("expected a probability (0..1) or a table { min = …, max = … }"))?;
        let check = |v: f64| -> std::result::Result<f64, D::Error> { check_probability(v).map_err(de::Error::custom) };
        match raw {
            Raw::Fixed(v) => Ok(Odds::Fixed(check(v)?)),
            Raw::Range(r) if r.min <= r.max => Ok(Odds::Drawn { min: check(r.min)?, max: check(r.max)? }),
            Raw::Range(r) => Err(de::Error::custom(format!("min must be <= max, got {} > {}", r.min, r.max))),
        }
    }
}

/// How a write that finds SQLite's write lock held waits for it (docs/protocol.md C60, C61).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LockModel {
    /// SQLite's default busy handler: sleep and try again, whoever tries first after the
    /// release wins (`sqliteDefaultBusyCallback`, src/main.c of SQLite).
    #[default]
    BusyHandler,
    /// A queue: the waiter runs the instant the lock is released, within its timeout.
    Queue,
}

/// Faults (issue "faults, oracles and variants"): scripted at a time or a protocol point, or
/// random with odds that may themselves be drawn from the seed.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FaultsSection {
    /// Random faults stop at this simulated time; after it the run must recover (liveness).
    pub until_ms: Option<i64>,
    /// Lock contention in virtual time: each write holds SQLite's write lock this long.
    pub write_hold_ms: Option<Dist>,
    /// A write that would wait longer than this for the lock gets SQLITE_BUSY (virtual ms).
    pub busy_timeout_ms: Option<i64>,
    /// How a write waits for the lock: SQLite's busy handler (default) or a queue
    /// (docs/protocol.md C60, C61; sim/world/write_lock.rs).
    pub lock_model: LockModel,
    /// The busy handler's sleeps times this (default 1): a scenario whose holds and timeout are
    /// a real load's times K predicts that load with K here (docs/calibration.md).
    pub busy_sleep_scale: Option<i64>,
    /// Odds that a musician session crashes before any one of its database writes.
    pub crash_probability: Odds,
    /// Odds that a session hangs (stops, then comes back as a zombie) before a write.
    pub hang_probability: Odds,
    /// Crashes per session per simulated hour (issue 43), rolled at its writes for the time
    /// since its previous roll: the same fault load whatever the number of writes (a faster
    /// refresh does not bring more crashes), unlike `crash_probability`.
    pub crash_per_sim_hour: Option<f64>,
    /// Hangs per session per simulated hour, rolled the same way.
    pub hang_per_sim_hour: Option<f64>,
    pub hang_ms: Option<Dist>,
    /// Extra time each watcher poll cycle takes (a slow model answering).
    pub watcher_jitter_ms: Option<Dist>,
    /// Odds that a subagent's result costs a context spike, and its size.
    pub context_spike_probability: Odds,
    pub context_spike_pct: Option<Dist>,
    pub crash: Vec<ScriptedFault>,
    pub hang: Vec<ScriptedFault>,
    pub watcher_death: Vec<ScriptedFault>,
    /// A session's statement fails with SQLITE_IOERR at a protocol point (`at` only).
    pub io_error: Vec<ScriptedFault>,
    /// A second session launched for a task's first session (a relaunch racing the original).
    pub double_launch: Vec<DoubleLaunch>,
    /// A session started without `CLAUDE_SESSION_ID` in its system prompt (000 "2. Session
    /// Identity": the SessionStart hook failed).
    pub missing_session_id: Vec<MissingSessionId>,
    pub conductor_down: Vec<Window>,
    /// The conductor's session dies; a new one starts `conductor.relaunch_after_ms` later.
    pub conductor_crash: Vec<ConductorCrash>,
    /// A session's statement commits, the call reports an error, and the caller's tool layer
    /// runs it again blindly (`at = "after:…"` only; docs/protocol.md C70).
    pub ambiguous_commit: Vec<ScriptedFault>,
    /// From `from_ms` to `to_ms` every conductor poll (`poll_tasks`) fails and the conductor's
    /// code swallows the error: the tick does nothing more (docs/protocol.md C71).
    pub poll_error: Vec<Window>,
    /// Every `heartbeat` of one session changes nothing, and the session is told it worked
    /// (docs/protocol.md C72).
    pub dead_heartbeat: Vec<DeadHeartbeat>,
    /// A session tries to end its turn before its terminal write, after its `after_agents`-th
    /// agent is integrated: the stop hook blocks it (docs/protocol.md C141).
    pub early_stop: Vec<EarlyStop>,
}

/// A session whose `heartbeat` statement silently changes nothing (`[[faults.dead_heartbeat]]`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DeadHeartbeat {
    pub task: u64,
    #[serde(default = "one_u32")]
    pub session: u32,
}

/// A session that tries to stop while its row is unfinished (`[[faults.early_stop]]`): a model
/// that ends its turn believing it is done. 000 "Design Rationale": "If the state update hasn't
/// happened yet, the hook blocks exit — keeping the session alive for cleanup".
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EarlyStop {
    pub task: u64,
    #[serde(default = "one_u32")]
    pub session: u32,
    /// After how many of this session's agents (integrated, from 1) it tries to stop.
    pub after_agents: u64,
}

/// A fault for one session of one task: at a simulated time, or at a protocol point
/// `before:STATEMENT` / `after:STATEMENT` (the `nth` time that session runs it, from 1).
/// Written back (`add_point_fault`) with the keys it was read with.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedFault {
    pub task: u64,
    #[serde(default = "one_u32")]
    pub session: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<Point>,
    #[serde(default = "one_u64")]
    pub nth: u64,
    /// For hangs: how long the session is frozen (`HANG_MS_DEFAULT` when not given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<i64>,
}

/// A scripted hang's length when its entry gives no `duration_ms` (15 minutes).
pub const HANG_MS_DEFAULT: i64 = 900_000;

fn one_u32() -> u32 {
    1
}
fn one_u64() -> u64 {
    1
}

/// A crash of conductor session `session` (1 the first, 2 the one relaunched after the first
/// crash, …) at a simulated time, or at a protocol point `before:STATEMENT` /
/// `after:STATEMENT`, the `nth` time that session (its reviews included) runs it.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ConductorCrash {
    #[serde(default = "one_u32")]
    pub session: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<Point>,
    #[serde(default = "one_u64")]
    pub nth: u64,
}

impl FaultsSection {
    /// The scripted faults at a protocol point, typed: the crashes, the hangs, the I/O errors, then the
    /// conductor's crashes, each list in file order (the plan tries them in this order).
    pub fn point_faults(&self) -> Vec<PointFault> {
        let session = |kind: fn(&ScriptedFault) -> FaultKind, list: &[ScriptedFault]| -> Vec<PointFault> {
            let at_points = list.iter().filter_map(|f| f.at.map(|at| (f, at)));
            at_points
                .map(|(f, at)| PointFault { whose: Whose::Session { task: f.task, session: f.session }, at, nth: f.nth, kind: kind(f) })
                .collect()
        };
        let mut out = session(|_| FaultKind::Crash, &self.crash);
        out.extend(session(|f| FaultKind::Hang { ms: f.duration_ms.unwrap_or(HANG_MS_DEFAULT) }, &self.hang));
        out.extend(session(|_| FaultKind::IoError, &self.io_error));
        out.extend(session(|_| FaultKind::AmbiguousCommit, &self.ambiguous_commit));
        let conductor = self.conductor_crash.iter().filter_map(|c| c.at.map(|at| (c, at)));
        out.extend(conductor.map(|(c, at)| PointFault {
            whose: Whose::Conductor { session: c.session },
            at,
            nth: c.nth,
            kind: FaultKind::Crash,
        }));
        out
    }
}

/// `fault` appended to `doc`'s `[faults]` as the entry a scenario file would hold: under
/// `[[faults.crash]]`, `[[faults.hang]]` or `[[faults.conductor_crash]]` (the kind's section),
/// with `at` and `nth`. What explore, search and shrink place is written this one way.
pub fn add_point_fault(doc: &mut toml::Table, fault: &PointFault) {
    let entry = match fault.whose {
        Whose::Session { task, session } => {
            // Only a hang has a parameter to write.
            let duration_ms = match fault.kind {
                FaultKind::Hang { ms } => Some(ms),
                _ => None,
            };
            toml::Value::try_from(ScriptedFault { task, session, at_ms: None, at: Some(fault.at), nth: fault.nth, duration_ms })
        }
        Whose::Conductor { session } => {
            debug_assert!(fault.kind.strikes_conductor(), "validated: a conductor session takes crashes only");
            toml::Value::try_from(ConductorCrash { session, at_ms: None, at: Some(fault.at), nth: fault.nth })
        }
    }
    .expect("integers and a point serialize");
    let faults = doc.entry("faults").or_insert_with(|| toml::Value::Table(toml::Table::new()));
    if let toml::Value::Table(faults) = faults {
        let list = faults.entry(fault.kind.section(fault.whose)).or_insert_with(|| toml::Value::Array(Vec::new()));
        if let toml::Value::Array(list) = list {
            list.push(entry);
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DoubleLaunch {
    pub task: u64,
    /// How long after the original the twin starts (0: the same instant).
    #[serde(default)]
    pub after_ms: i64,
}

/// Which session of which task starts without a session id.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MissingSessionId {
    pub task: u64,
    #[serde(default = "one_u32")]
    pub session: u32,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Window {
    pub from_ms: i64,
    pub to_ms: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn odds(text: &str) -> std::result::Result<Odds, String> {
        #[derive(Deserialize)]
        struct Probe {
            odds: Odds,
        }
        toml::from_str::<Probe>(&format!("odds = {text}")).map(|p| p.odds).map_err(|e| e.message().to_string())
    }

    #[test]
    fn odds_are_a_probability_or_a_range_drawn_from() {
        assert_eq!(odds("0.25"), Ok(Odds::Fixed(0.25)));
        assert_eq!(odds("{ min = 0.0, max = 0.02 }"), Ok(Odds::Drawn { min: 0.0, max: 0.02 }));
        assert_eq!(odds("{ min = 0.1, max = 0.1 }"), Ok(Odds::Drawn { min: 0.1, max: 0.1 }));
        assert_eq!(odds("1.5"), Err("a probability must be between 0 and 1, got 1.5".to_string()));
        assert_eq!(odds("{ min = 0.2, max = 0.1 }"), Err("min must be <= max, got 0.2 > 0.1".to_string()));
        assert_eq!(odds("\"often\""), Err("expected a probability (0..1) or a table { min = …, max = … }".to_string()));
    }
}
