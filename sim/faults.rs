//! Fault injection: what the scenario's `[faults]` asks for, resolved for one run. Random
//! odds given as ranges are drawn once from the seed (swarm testing) and logged; scripted
//! faults fire at a simulated time or at a protocol point (`before:`/`after:` a statement,
//! the nth time a session runs it). The engine asks this plan before every statement.

use std::collections::BTreeMap;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::dist::Dist;
use crate::rng;
use crate::scenario::{FaultsSection, Odds, ScriptedFault};

/// What to do to a session at a protocol point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    None,
    CrashBefore,
    CrashAfter,
    HangBefore { ms: i64 },
}

/// A fault at a simulated time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Timed {
    Crash { task: u64, session: u32 },
    Hang { task: u64, session: u32, ms: i64 },
    WatcherDeath { task: u64, session: u32 },
    ConductorDown { ms: i64 },
}

/// Where an actor sits: `task-03.S2.bg-watcher-4` → task 3, session 2, a watcher.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActorPlace {
    pub task: u64,
    pub session: u32,
    pub watcher: bool,
}

pub fn place(actor_name: &str) -> Option<ActorPlace> {
    let mut parts = actor_name.split('.');
    let task = parts.next()?.strip_prefix("task-")?.parse().ok()?;
    let session = parts.next()?.strip_prefix('S')?.trim_end_matches(|c: char| c.is_ascii_alphabetic()).parse().ok()?;
    let watcher = parts.next().is_some_and(|p| p.contains("watcher"));
    Some(ActorPlace { task, session, watcher })
}

pub struct FaultPlan {
    until_ms: Option<i64>,
    crash_probability: f64,
    hang_probability: f64,
    hang_ms: Dist,
    pub watcher_jitter_ms: Option<Dist>,
    pub context_spike_probability: f64,
    scripted_points: Vec<(ScriptedFault, bool)>,
    /// (session actor name, statement) → times run, for `nth`.
    counts: BTreeMap<(String, String), u64>,
    rng: ChaCha8Rng,
    pub timed: Vec<(i64, Timed)>,
    write_hold_ms: Option<Dist>,
    pub busy_timeout_ms: i64,
    /// `name=value` pairs of everything drawn from the seed, for the trace and summary.
    pub drawn: Vec<(String, String)>,
}

impl FaultPlan {
    pub fn new(seed: u64, faults: &FaultsSection) -> FaultPlan {
        let mut swarm = rng::stream(seed, "swarm");
        let mut drawn = Vec::new();
        let mut resolve = |name: &str, odds: Odds| -> f64 {
            match odds {
                Odds::Fixed(p) => p,
                Odds::Drawn { min, max } => {
                    let p = if min == max { min } else { swarm.random_range(min..=max) };
                    drawn.push((name.to_string(), format!("{p:.6}")));
                    p
                }
            }
        };
        let crash_probability = resolve("crash_probability", faults.crash_probability);
        let hang_probability = resolve("hang_probability", faults.hang_probability);
        let context_spike_probability = resolve("context_spike_probability", faults.context_spike_probability);
        let mut timed = Vec::new();
        let mut scripted_points = Vec::new();
        for fault in &faults.crash {
            match (fault.at_ms, &fault.at) {
                (Some(at_ms), _) => timed.push((at_ms, Timed::Crash { task: fault.task, session: fault.session })),
                (None, Some(_)) => scripted_points.push((fault.clone(), false)),
                (None, None) => unreachable!("validated: one of at_ms / at"),
            }
        }
        for fault in &faults.hang {
            let ms = fault.duration_ms.unwrap_or(900_000);
            match (fault.at_ms, &fault.at) {
                (Some(at_ms), _) => timed.push((at_ms, Timed::Hang { task: fault.task, session: fault.session, ms })),
                (None, Some(_)) => scripted_points.push((fault.clone(), true)),
                (None, None) => unreachable!("validated: one of at_ms / at"),
            }
        }
        for fault in &faults.watcher_death {
            if let Some(at_ms) = fault.at_ms {
                timed.push((at_ms, Timed::WatcherDeath { task: fault.task, session: fault.session }));
            }
        }
        for window in &faults.conductor_down {
            timed.push((window.from_ms, Timed::ConductorDown { ms: window.to_ms - window.from_ms }));
        }
        timed.sort_by_key(|(at, _)| *at);
        FaultPlan {
            until_ms: faults.until_ms,
            crash_probability,
            hang_probability,
            hang_ms: faults.hang_ms.clone().unwrap_or(Dist::uniform(600_000, 1_200_000)),
            watcher_jitter_ms: faults.watcher_jitter_ms.clone(),
            context_spike_probability,
            scripted_points,
            counts: BTreeMap::new(),
            rng: rng::stream(seed, "faults"),
            timed,
            drawn,
            write_hold_ms: faults.write_hold_ms.clone(),
            busy_timeout_ms: faults.busy_timeout_ms.unwrap_or(5_000),
        }
    }

    fn random_phase(&self, now_ms: i64) -> bool {
        self.until_ms.is_none_or(|until| now_ms < until)
    }

    /// Decides the fault, if any, for `actor` about to run `statement` (a write or not).
    pub fn before_statement(&mut self, actor: &str, statement: &str, is_write: bool, now_ms: i64) -> Action {
        let Some(place) = place(actor) else { return Action::None };
        // Counting occurrences only matters for scripted protocol points; without any, the
        // per-statement bookkeeping would be pure cost (issue 7).
        let nth = if self.scripted_points.is_empty() {
            0
        } else {
            let session_key = actor.split('.').take(2).collect::<Vec<_>>().join(".");
            let count = self.counts.entry((session_key, statement.to_string())).or_insert(0);
            *count += 1;
            *count
        };
        for (fault, is_hang) in &self.scripted_points {
            if fault.task != place.task || fault.session != place.session || fault.nth != nth {
                continue;
            }
            let point = fault.at.as_deref().unwrap_or("");
            if point == format!("before:{statement}") {
                return if *is_hang { Action::HangBefore { ms: fault.duration_ms.unwrap_or(900_000) } } else { Action::CrashBefore };
            }
            if point == format!("after:{statement}") && !*is_hang {
                return Action::CrashAfter;
            }
        }
        if !is_write || !self.random_phase(now_ms) {
            return Action::None;
        }
        if self.crash_probability > 0.0 && self.rng.random_bool(self.crash_probability) {
            return Action::CrashBefore;
        }
        if self.hang_probability > 0.0 && self.rng.random_bool(self.hang_probability) {
            let ms = self.hang_ms.sample(&mut self.rng);
            return Action::HangBefore { ms };
        }
        Action::None
    }

    /// How long the next write holds the virtual write lock (0 when contention is off).
    pub fn write_hold_ms(&mut self) -> i64 {
        match &self.write_hold_ms {
            Some(dist) => dist.sample(&mut self.rng),
            None => 0,
        }
    }

    /// Extra time a watcher's poll sleep takes.
    pub fn jitter_ms(&mut self, actor: &str, now_ms: i64) -> i64 {
        match (&self.watcher_jitter_ms, place(actor)) {
            (Some(dist), Some(place)) if place.watcher && self.random_phase(now_ms) => dist.sample(&mut self.rng),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actor_names_place_their_task_session_and_role() {
        assert_eq!(place("task-03.S2.bg-watcher-4"), Some(ActorPlace { task: 3, session: 2, watcher: true }));
        assert_eq!(place("task-11.S1b"), Some(ActorPlace { task: 11, session: 1, watcher: false }));
        assert_eq!(place("conductor"), None);
    }
}
