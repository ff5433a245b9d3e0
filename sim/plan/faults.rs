//! Fault injection: what the scenario's `[faults]` asks for, resolved for one run. Random
//! odds given as ranges are drawn once from the seed (swarm testing) and logged; scripted
//! faults fire at a simulated time or at a protocol point (`vocab::PointFault`: before or
//! after a statement, the nth time a session runs it). The engine asks this plan before every
//! statement; a point is two enums, compared as such (no text on this path).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::base::dist::Dist;
use crate::base::rng;
use crate::input::scenario::{FaultsSection, Odds, HANG_MS_DEFAULT};
use crate::plan::census::CensusLog;
use crate::vocab::{ActorName, FaultKind, Point, PointFault, SessionPlace, Stmt, When, Whose};

/// What strikes a session at the protocol point it is about to run: `kind`, before the
/// statement or after it. A hang after it holds the statement's result: the session is
/// frozen for the hang before it sees the result and takes its next step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strike {
    pub when: When,
    pub kind: FaultKind,
}

/// A fault at a simulated time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Timed {
    /// A crash or hang of a task's session, or a crash of conductor session `session` (1 the
    /// first) with its reviews.
    Strike {
        whose: Whose,
        kind: FaultKind,
    },
    WatcherDeath {
        task: u64,
        session: u32,
    },
    ConductorDown {
        ms: i64,
    },
}

/// The faults that reach actors' own decisions, resolved before the run: a context spike on a
/// subagent's result, and the twin of a double launch. Actors ask through `Ctx`; the odds are
/// the plan's (drawn from the seed when given as a range), never the actor's own reading of
/// the scenario.
#[derive(Clone, Debug)]
pub struct ActorFaults {
    until_ms: Option<i64>,
    context_spike_probability: f64,
    context_spike_pct: Dist,
    /// (task number, ms after the original) of each double launch.
    double_launch: Vec<(u64, i64)>,
    /// (task number, session number) of each session started without a session id.
    missing_session_id: Vec<(u64, u32)>,
    /// (task number, session number, agents) of each `[[faults.early_stop]]`, with its
    /// census entry.
    early_stop: Vec<(u64, u32, u64, usize)>,
    /// What fired, for the run's census (sim/plan/census.rs); counting decides nothing.
    census: CensusLog,
}

impl ActorFaults {
    /// The extra context a subagent's result costs, if a spike hits it. Drawn from the
    /// session's own stream (`rng`): a session's spikes do not depend on other sessions.
    pub fn context_spike_pct(&self, now_ms: i64, rng: &mut ChaCha8Rng) -> Option<i64> {
        let spikes_on = self.until_ms.is_none_or(|until| now_ms < until);
        // `random_bool` draws even at odds 0, so the stream advances the same either way.
        if spikes_on && rng.random_bool(self.context_spike_probability) {
            self.census.fired("context_spike");
            return Some(self.context_spike_pct.sample(rng));
        }
        None
    }

    /// When a task's first session has a twin (fault `double_launch`): its delay after the
    /// original.
    pub fn twin_after_ms(&self, task: u64) -> Option<i64> {
        let after_ms = self.double_launch.iter().find(|(t, _)| *t == task).map(|(_, after_ms)| *after_ms);
        if after_ms.is_some() {
            self.census.fired("double_launch");
        }
        after_ms
    }

    /// Whether session `session` of task `task` starts without `CLAUDE_SESSION_ID` (fault
    /// `missing_session_id`).
    pub fn session_id_missing(&self, task: u64, session: u32) -> bool {
        let missing = self.missing_session_id.contains(&(task, session));
        if missing {
            self.census.fired("missing_session_id");
        }
        missing
    }

    /// Fault `early_stop` (docs/protocol.md C141): whether session `session` of task `task`
    /// tries to end its turn now that it has integrated `agents_done` agents (counted as fired).
    pub fn stops_early(&self, task: u64, session: u32, agents_done: u64) -> bool {
        let hit = self.early_stop.iter().find(|(t, s, after, _)| (*t, *s, *after) == (task, session, agents_done));
        if let Some((_, _, _, entry)) = hit {
            self.census.fired_entry("early_stop", *entry);
        }
        hit.is_some()
    }
}

/// Whose protocol point: a task's session (its musician and watchers together; a twin
/// counts its own), or a conductor session with its reviews (1 the run's first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointOwner {
    Session(SessionPlace),
    Conductor(u32),
}

impl PointOwner {
    /// Whose points these are, as a scripted fault names them: a twin's are its original's.
    pub fn whose(self) -> Whose {
        match self {
            PointOwner::Session(p) => Whose::Session { task: p.task, session: p.session },
            PointOwner::Conductor(session) => Whose::Conductor { session },
        }
    }
}

/// A protocol point the plan was asked about: the `nth` time an owner asked to run
/// `statement` — what `before:` / `after:` with `nth` mean in a scripted fault
/// (`[[faults.crash]]` and `[[faults.hang]]` for a session, `[[faults.conductor_crash]]` for
/// the conductor). A statement that waited for the write lock or sat out a hang is asked
/// again, and counted again, exactly as the faults count it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PointSeen {
    pub owner: PointOwner,
    pub statement: Stmt,
    pub nth: u64,
    /// Statements every actor (the conductor too) had asked to run before this one.
    pub statements_before: u64,
}

/// The points a plan records once asked to (`FaultPlan::record_points`); whoever asked reads
/// them after the run. Recording changes nothing of the run.
#[derive(Clone, Default)]
pub struct PointLog(Rc<RefCell<Vec<PointSeen>>>);

impl PointLog {
    pub fn take(&self) -> Vec<PointSeen> {
        std::mem::take(&mut self.0.borrow_mut())
    }
}

/// A random crash or hang that struck a session (`FaultPlan::record_fired`), as the scripted
/// fault before its point that strikes the same: `rehearsal shrink` writes it as
/// `[[faults.crash]]` or `[[faults.hang]]` (issue 31), unless it struck a double launch's
/// twin, which a scripted fault cannot name apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fired {
    pub twin: bool,
    pub fault: PointFault,
}

/// The random faults that struck, once asked for; whoever asked reads them after the run.
#[derive(Clone, Default)]
pub struct FiredLog(Rc<RefCell<Vec<Fired>>>);

impl FiredLog {
    pub fn take(&self) -> Vec<Fired> {
        std::mem::take(&mut self.0.borrow_mut())
    }
}

pub struct FaultPlan {
    until_ms: Option<i64>,
    crash_probability: f64,
    hang_probability: f64,
    /// Per session per simulated hour (0: none), and since when each session's exposure runs.
    crash_per_sim_hour: f64,
    hang_per_sim_hour: f64,
    exposed_since_ms: BTreeMap<SessionPlace, i64>,
    hang_ms: Dist,
    pub watcher_jitter_ms: Option<Dist>,
    pub actor_faults: ActorFaults,
    /// Scripted faults at a task's session's points, in the order they are tried, each with
    /// its census entry.
    scripted_points: Vec<PointFault>,
    scripted_entries: Vec<usize>,
    /// (session, statement) → times run, for `nth`.
    counts: BTreeMap<(SessionPlace, Stmt), u64>,
    /// Conductor crashes at a protocol point, and (conductor session, statement) → times run.
    conductor_points: Vec<PointFault>,
    conductor_entries: Vec<usize>,
    conductor_counts: BTreeMap<(u32, Stmt), u64>,
    /// Statements asked so far, by every actor.
    asked: u64,
    points: Option<PointLog>,
    fired: Option<FiredLog>,
    rng: ChaCha8Rng,
    pub timed: Vec<(i64, Timed)>,
    /// The census entry of each of `timed`.
    timed_entries: Vec<usize>,
    census: CensusLog,
    write_hold_ms: Option<Dist>,
    pub busy_timeout_ms: i64,
    pub lock_model: crate::input::scenario::LockModel,
    pub busy_sleep_scale: i64,
    /// `name=value` pairs of everything drawn from the seed, for the trace and summary.
    pub drawn: Vec<(String, String)>,
    /// `[[faults.poll_error]]` windows (from, to, census entry): docs/protocol.md C71.
    poll_errors: Vec<(i64, i64, usize)>,
    /// `[[faults.dead_heartbeat]]` sessions (task, session, census entry): C72.
    dead_heartbeats: Vec<(u64, u32, usize)>,
}

impl FaultPlan {
    pub fn new(seed: u64, faults: &FaultsSection) -> FaultPlan {
        let mut swarm = rng::stream(seed, "swarm");
        let mut drawn = Vec::new();
        let mut resolve = |name: &str, odds: Odds| -> f64 {
            match odds {
                Odds::Unset => 0.0,
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
        let census = arm(faults);
        let (timed, timed_entries, points) = scripted(faults, &census);
        let (poll_errors, dead_heartbeats) = fleet_faults(faults, &census);
        let ((conductor_points, conductor_entries), (scripted_points, scripted_entries)) = points;
        FaultPlan {
            until_ms: faults.until_ms,
            crash_probability,
            hang_probability,
            crash_per_sim_hour: faults.crash_per_sim_hour.unwrap_or(0.0).max(0.0),
            hang_per_sim_hour: faults.hang_per_sim_hour.unwrap_or(0.0).max(0.0),
            exposed_since_ms: BTreeMap::new(),
            hang_ms: faults.hang_ms.clone().unwrap_or(Dist::uniform(600_000, 1_200_000)),
            watcher_jitter_ms: faults.watcher_jitter_ms.clone(),
            actor_faults: ActorFaults {
                until_ms: faults.until_ms,
                context_spike_probability,
                context_spike_pct: faults.context_spike_pct.clone().unwrap_or(Dist::uniform(10, 30)),
                double_launch: faults.double_launch.iter().map(|d| (d.task, d.after_ms)).collect(),
                missing_session_id: faults.missing_session_id.iter().map(|m| (m.task, m.session)).collect(),
                early_stop: early_stops(faults, &census),
                census: census.clone(),
            },
            scripted_points,
            scripted_entries,
            counts: BTreeMap::new(),
            conductor_points,
            conductor_entries,
            conductor_counts: BTreeMap::new(),
            asked: 0,
            points: None,
            fired: None,
            rng: rng::stream(seed, "faults"),
            timed,
            timed_entries,
            census,
            drawn,
            write_hold_ms: faults.write_hold_ms.clone(),
            busy_timeout_ms: faults.busy_timeout_ms.unwrap_or(5_000),
            lock_model: faults.lock_model,
            busy_sleep_scale: faults.busy_sleep_scale.unwrap_or(1).max(1),
            poll_errors,
            dead_heartbeats,
        }
    }

    /// Fault `poll_error` (docs/protocol.md C71): whether a conductor's `poll_tasks` at
    /// `now_ms` fails (counted as fired).
    pub fn poll_fails(&self, now_ms: i64) -> bool {
        let hit = self.poll_errors.iter().find(|(from_ms, to_ms, _)| (*from_ms..*to_ms).contains(&now_ms));
        if let Some((_, _, entry)) = hit {
            self.census.fired_entry("poll_error", *entry);
        }
        hit.is_some()
    }

    /// Fault `dead_heartbeat` (C72): whether `actor`'s `heartbeat` changes nothing (its session,
    /// a twin counting as its original; counted as fired).
    pub fn heartbeat_dead(&self, actor: &ActorName) -> bool {
        let Some(place) = actor.place() else { return false };
        let hit = self.dead_heartbeats.iter().find(|(task, session, _)| *task == place.task && *session == place.session);
        if let Some((_, _, entry)) = hit {
            self.census.fired_entry("dead_heartbeat", *entry);
        }
        hit.is_some()
    }

    fn random_phase(&self, now_ms: i64) -> bool {
        self.until_ms.is_none_or(|until| now_ms < until)
    }

    /// From now on, records every protocol point (of a session or of the conductor) the plan
    /// is asked about (`rehearsal explore` lists a run's points this way).
    pub fn record_points(&mut self) -> PointLog {
        let log = PointLog::default();
        self.points = Some(log.clone());
        log
    }

    /// From now on, records every random crash and hang that strikes, at its protocol point.
    /// Recording changes nothing of the run.
    pub fn record_fired(&mut self) -> FiredLog {
        let log = FiredLog::default();
        self.fired = Some(log.clone());
        log
    }

    /// The random odds the run uses, drawn from the seed or fixed: crash, hang, context spike.
    pub fn odds(&self) -> [(&'static str, f64); 3] {
        [
            ("crash_probability", self.crash_probability),
            ("hang_probability", self.hang_probability),
            ("context_spike_probability", self.actor_faults.context_spike_probability),
        ]
    }

    /// Statements every actor has asked to run so far (`PointSeen::statements_before` of the
    /// next point).
    pub fn asked(&self) -> u64 {
        self.asked
    }

    /// Decides the fault, if any, for `actor` about to run `statement`.
    pub fn before_statement(&mut self, actor: &ActorName, statement: Stmt, now_ms: i64) -> Option<Strike> {
        let statements_before = self.asked;
        self.asked += 1;
        // A conductor session's scripted crashes (C34), counted apart from the sessions'.
        if let Some(session) = actor.conductor_session() {
            return self.conductor_point(session, statement, statements_before);
        }
        let place = actor.place()?;
        let hourly = self.crash_per_sim_hour > 0.0 || self.hang_per_sim_hour > 0.0;
        // A session's exposure to faults per hour starts at its first statement (only tracked
        // when a rate is set: per-statement bookkeeping costs, issue 7).
        let exposed_since_ms = if hourly { *self.exposed_since_ms.entry(place).or_insert(now_ms) } else { now_ms };
        // Counting occurrences only matters for scripted protocol points (and for a plan that
        // records them); otherwise the per-statement bookkeeping would be pure cost (issue 7).
        let nth = if self.scripted_points.is_empty() && self.points.is_none() && self.fired.is_none() {
            0
        } else {
            let count = self.counts.entry((place, statement)).or_insert(0);
            *count += 1;
            *count
        };
        self.record(PointOwner::Session(place), statement, nth, statements_before);
        let whose = PointOwner::Session(place).whose();
        if let Some((index, strike)) = first_strike(&self.scripted_points, whose, statement, nth) {
            self.census.fired_entry(kind_name(strike.kind), self.scripted_entries[index]);
            return Some(strike);
        }
        if !statement.writes() || !self.random_phase(now_ms) {
            return None;
        }
        // Per simulated hour: the odds of at least one event of a Poisson process at that rate
        // since this session's previous roll (drawn only when a rate is set).
        let hours = (now_ms - exposed_since_ms) as f64 / 3_600_000.0;
        if hourly {
            self.exposed_since_ms.insert(place, now_ms);
        }
        let per_hour = |rate: f64| 1.0 - (-rate * hours).exp();
        let (crash_hourly, hang_hourly) = (per_hour(self.crash_per_sim_hour), per_hour(self.hang_per_sim_hour));
        // Per write first, then per hour: the second roll is drawn only when the first missed.
        let kind = if (self.crash_probability > 0.0 && self.rng.random_bool(self.crash_probability))
            || (crash_hourly > 0.0 && self.rng.random_bool(crash_hourly.min(1.0)))
        {
            FaultKind::Crash
        } else if (self.hang_probability > 0.0 && self.rng.random_bool(self.hang_probability))
            || (hang_hourly > 0.0 && self.rng.random_bool(hang_hourly.min(1.0)))
        {
            FaultKind::Hang { ms: self.hang_ms.sample(&mut self.rng) }
        } else {
            return None;
        };
        self.census.fired(kind_name(kind));
        self.log_fired(Fired { twin: place.twin, fault: PointFault { whose, at: Point::before(statement), nth, kind } });
        Some(Strike { when: When::Before, kind })
    }

    fn log_fired(&self, fired: Fired) {
        if let Some(log) = &self.fired {
            log.0.borrow_mut().push(fired);
        }
    }

    /// A conductor crash at this protocol point of conductor session `session` (its reviews
    /// count with it). The conductor meets no random fault: those are the musicians'.
    fn conductor_point(&mut self, session: u32, statement: Stmt, statements_before: u64) -> Option<Strike> {
        if self.conductor_points.is_empty() && self.points.is_none() {
            return None;
        }
        let count = self.conductor_counts.entry((session, statement)).or_insert(0);
        *count += 1;
        let nth = *count;
        self.record(PointOwner::Conductor(session), statement, nth, statements_before);
        let (index, strike) = first_strike(&self.conductor_points, Whose::Conductor { session }, statement, nth)?;
        self.census.fired_entry("conductor_crash", self.conductor_entries[index]);
        Some(strike)
    }

    fn record(&self, owner: PointOwner, statement: Stmt, nth: u64, statements_before: u64) {
        if let Some(log) = &self.points {
            log.0.borrow_mut().push(PointSeen { owner, statement, nth, statements_before });
        }
    }

    /// How long the next write holds the virtual write lock (0 when contention is off).
    pub fn write_hold_ms(&mut self) -> i64 {
        let hold_ms = match &self.write_hold_ms {
            Some(dist) => dist.sample(&mut self.rng),
            None => 0,
        };
        if hold_ms > 0 {
            self.census.fired("contention");
        }
        hold_ms
    }

    /// The run's census (sim/plan/census.rs), to read once the run ends.
    pub fn census(&self) -> CensusLog {
        self.census.clone()
    }

    /// Timed fault `index` (of `timed`) reached its victim.
    pub fn timed_fired(&self, index: usize) {
        let kind = match &self.timed[index].1 {
            Timed::Strike { whose: Whose::Conductor { .. }, .. } => "conductor_crash",
            Timed::Strike { kind, .. } => kind_name(*kind),
            Timed::WatcherDeath { .. } => "watcher_death",
            Timed::ConductorDown { .. } => "conductor_down",
        };
        self.census.fired_entry(kind, self.timed_entries[index]);
    }

    /// Extra time a watcher's poll sleep takes.
    pub fn jitter_ms(&mut self, actor: &ActorName, now_ms: i64) -> i64 {
        let jitter_ms = match &self.watcher_jitter_ms {
            Some(dist) if actor.is_watcher() && self.random_phase(now_ms) => dist.sample(&mut self.rng),
            _ => 0,
        };
        if jitter_ms > 0 {
            self.census.fired("watcher_jitter");
        }
        jitter_ms
    }
}

/// The census of a plan: every declared kind armed, each scripted entry (timed or at a
/// point) registered apart by its own `arm_entry`.
fn arm(faults: &FaultsSection) -> CensusLog {
    let census = CensusLog::default();
    census.arm("crash", u64::from(faults.crash_probability.declared()));
    census.arm("hang", u64::from(faults.hang_probability.declared() || faults.hang_ms.is_some()));
    census.arm("context_spike", u64::from(faults.context_spike_probability.declared()));
    census.arm("contention", u64::from(faults.write_hold_ms.is_some()));
    census.arm("watcher_jitter", u64::from(faults.watcher_jitter_ms.is_some()));
    census.arm("double_launch", faults.double_launch.len() as u64);
    census.arm("missing_session_id", faults.missing_session_id.len() as u64);
    census
}

/// The `[[faults.early_stop]]` entries (task, session, agents), each with its census entry.
fn early_stops(faults: &FaultsSection, census: &CensusLog) -> Vec<(u64, u32, u64, usize)> {
    let entries = faults.early_stop.iter().enumerate();
    entries.map(|(i, e)| (e.task, e.session, e.after_agents, census.arm_entry("early_stop", format!("early_stop[{}]", i + 1)))).collect()
}

/// The poll-error windows and dead-heartbeat sessions, each with its census entry.
type FleetFaults = (Vec<(i64, i64, usize)>, Vec<(u64, u32, usize)>);
fn fleet_faults(faults: &FaultsSection, census: &CensusLog) -> FleetFaults {
    let windows = faults.poll_error.iter().enumerate();
    let polls = windows.map(|(i, w)| (w.from_ms, w.to_ms, census.arm_entry("poll_error", format!("poll_error[{}]", i + 1))));
    let dead = faults.dead_heartbeat.iter().enumerate();
    let beats = dead.map(|(i, d)| (d.task, d.session, census.arm_entry("dead_heartbeat", format!("dead_heartbeat[{}]", i + 1))));
    (polls.collect(), beats.collect())
}

/// Scripted faults with their census entries: the timed ones sorted by time, and the point
/// faults of the conductor and of the sessions, in the order `FaultsSection::point_faults`
/// gives them (crashes, hangs, I/O errors, then the conductor's crashes, each in file order).
type Entries = (Vec<PointFault>, Vec<usize>);
/// The timed faults with their census entries, then the conductor's and the sessions' points.
type Scripted = (Vec<(i64, Timed)>, Vec<usize>, (Entries, Entries));
fn scripted(faults: &FaultsSection, census: &CensusLog) -> Scripted {
    let mut timed: Vec<((i64, Timed), usize)> = Vec::new();
    let (mut sessions, mut conductor): (Entries, Entries) = Default::default();
    let lists =
        [("crash", &faults.crash), ("hang", &faults.hang), ("io_error", &faults.io_error), ("ambiguous_commit", &faults.ambiguous_commit)];
    for (name, list) in lists {
        for (index, fault) in list.iter().enumerate() {
            let entry = census.arm_entry(name, format!("{name}[{}]", index + 1));
            let kind = match name {
                "crash" => FaultKind::Crash,
                "hang" => FaultKind::Hang { ms: fault.duration_ms.unwrap_or(HANG_MS_DEFAULT) },
                "ambiguous_commit" => FaultKind::AmbiguousCommit,
                _ => FaultKind::IoError,
            };
            let whose = Whose::Session { task: fault.task, session: fault.session };
            if let Some(at) = fault.at {
                sessions.0.push(PointFault { whose, at, nth: fault.nth, kind });
                sessions.1.push(entry);
            } else if let (Some(at_ms), false) = (fault.at_ms, matches!(kind, FaultKind::IoError | FaultKind::AmbiguousCommit)) {
                timed.push(((at_ms, Timed::Strike { whose, kind }), entry));
            }
        }
    }
    for (index, fault) in faults.watcher_death.iter().enumerate() {
        let entry = census.arm_entry("watcher_death", format!("watcher_death[{}]", index + 1));
        if let Some(at_ms) = fault.at_ms {
            timed.push(((at_ms, Timed::WatcherDeath { task: fault.task, session: fault.session }), entry));
        }
    }
    for (index, window) in faults.conductor_down.iter().enumerate() {
        let entry = census.arm_entry("conductor_down", format!("conductor_down[{}]", index + 1));
        timed.push(((window.from_ms, Timed::ConductorDown { ms: window.to_ms - window.from_ms }), entry));
    }
    for (index, crash) in faults.conductor_crash.iter().enumerate() {
        let entry = census.arm_entry("conductor_crash", format!("conductor_crash[{}]", index + 1));
        let whose = Whose::Conductor { session: crash.session };
        if let Some(at) = crash.at {
            conductor.0.push(PointFault { whose, at, nth: crash.nth, kind: FaultKind::Crash });
            conductor.1.push(entry);
        } else if let Some(at_ms) = crash.at_ms {
            timed.push(((at_ms, Timed::Strike { whose, kind: FaultKind::Crash }), entry));
        }
    }
    // Stable: faults at one instant keep the order above, as they always had.
    timed.sort_by_key(|((at, _), _)| *at);
    let (timed, entries) = timed.into_iter().unzip();
    (timed, entries, (conductor, sessions))
}

/// The census kind of a fault kind.
pub fn kind_name(kind: FaultKind) -> &'static str {
    kind.name().as_str()
}

/// The first of `faults` (in the order the scenario lists them) at this point of `whose`.
fn first_strike(faults: &[PointFault], whose: Whose, statement: Stmt, nth: u64) -> Option<(usize, Strike)> {
    let index = faults.iter().position(|f| f.nth == nth && f.at.statement == statement && f.whose == whose)?;
    let fault = &faults[index];
    Some((index, Strike { when: fault.at.when, kind: fault.kind }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::WatcherKind;

    fn strike(when: When, kind: FaultKind) -> Option<Strike> {
        Some(Strike { when, kind })
    }

    fn section(text: &str) -> FaultsSection {
        toml::from_str(text).expect("a faults section")
    }

    fn session(task: u64, session: u32) -> ActorName {
        ActorName::Session(SessionPlace { task, session, twin: false })
    }

    #[test]
    fn a_scripted_point_fires_at_its_nth_statement_of_its_session_only() {
        let mut plan = FaultPlan::new(1, &section("[[crash]]\ntask = 2\nsession = 1\nat = \"after:heartbeat\"\nnth = 2\n"));
        let (s1, other) = (session(2, 1), session(2, 2));
        assert_eq!(plan.before_statement(&s1, Stmt::Heartbeat, 0), None);
        assert_eq!(plan.before_statement(&other, Stmt::Heartbeat, 0), None);
        assert_eq!(plan.before_statement(&s1, Stmt::Heartbeat, 0), strike(When::After, FaultKind::Crash));
        assert_eq!(plan.before_statement(&ActorName::CONDUCTOR, Stmt::Heartbeat, 0), None);
    }

    #[test]
    fn a_conductor_crash_point_counts_its_own_session_and_reviews_only() {
        let mut plan = FaultPlan::new(1, &section("[[conductor_crash]]\nsession = 2\nat = \"after:poll_tasks\"\nnth = 2\n"));
        assert_eq!(plan.before_statement(&ActorName::Conductor(2), Stmt::PollTasks, 0), None);
        assert_eq!(plan.before_statement(&ActorName::CONDUCTOR, Stmt::PollTasks, 0), None);
        assert_eq!(plan.before_statement(&session(1, 2), Stmt::PollTasks, 0), None);
        assert_eq!(plan.before_statement(&ActorName::Review(2, 1), Stmt::PollTasks, 0), strike(When::After, FaultKind::Crash));
        let timed = FaultPlan::new(1, &section("[[conductor_crash]]\nat_ms = 70\n"));
        assert_eq!(timed.timed, [(70, Timed::Strike { whose: Whose::Conductor { session: 1 }, kind: FaultKind::Crash })]);
    }

    #[test]
    fn watchers_of_a_session_count_as_the_session_for_protocol_points() {
        let mut plan = FaultPlan::new(1, &section("[[hang]]\ntask = 1\nat = \"before:heartbeat\"\nduration_ms = 5000\n"));
        let watcher = session(1, 1).watcher(WatcherKind::Background, 3);
        assert_eq!(plan.before_statement(&watcher, Stmt::Heartbeat, 0), strike(When::Before, FaultKind::Hang { ms: 5000 }));
    }

    #[test]
    fn a_recorded_point_is_counted_as_a_scripted_fault_counts_it() {
        let mut plan = FaultPlan::new(1, &section(""));
        let log = plan.record_points();
        let (s1, watcher) = (session(1, 1), session(1, 1).watcher(WatcherKind::Background, 2));
        let review = ActorName::Review(1, 1);
        let asks = [(ActorName::CONDUCTOR, Stmt::PollTasks), (s1, Stmt::Heartbeat), (watcher, Stmt::Heartbeat), (review, Stmt::PollTasks)];
        for (actor, statement) in asks {
            assert_eq!(plan.before_statement(&actor, statement, 0), None, "recording changes no decision");
        }
        let seen: Vec<(PointOwner, Stmt, u64, u64)> =
            log.take().iter().map(|p| (p.owner, p.statement, p.nth, p.statements_before)).collect();
        let place = SessionPlace { task: 1, session: 1, twin: false };
        assert_eq!(
            seen,
            [
                (PointOwner::Conductor(1), Stmt::PollTasks, 1, 0),
                (PointOwner::Session(place), Stmt::Heartbeat, 1, 1),
                (PointOwner::Session(place), Stmt::Heartbeat, 2, 2),
                (PointOwner::Conductor(1), Stmt::PollTasks, 2, 3)
            ],
            "a review counts with its conductor session"
        );
        // The recorded points as scripted faults strike exactly there: the watcher's
        // heartbeat, the review's poll.
        let mut scripted = FaultPlan::new(1, &section("[[crash]]\ntask = 1\nat = \"after:heartbeat\"\nnth = 2\n"));
        let actions: Vec<Option<Strike>> = asks.iter().map(|(actor, statement)| scripted.before_statement(actor, *statement, 0)).collect();
        assert_eq!(actions, [None, None, strike(When::After, FaultKind::Crash), None]);
        let mut conductor = FaultPlan::new(1, &section("[[conductor_crash]]\nat = \"before:poll_tasks\"\nnth = 2\n"));
        let actions: Vec<Option<Strike>> = asks.iter().map(|(actor, statement)| conductor.before_statement(actor, *statement, 0)).collect();
        assert_eq!(actions, [None, None, None, strike(When::Before, FaultKind::Crash)]);
    }

    #[test]
    fn a_scripted_hang_fires_before_or_after_its_statement() {
        let text =
            "[[hang]]\ntask = 1\nat = \"after:heartbeat\"\nduration_ms = 5000\n[[hang]]\ntask = 1\nat = \"before:heartbeat\"\nnth = 2\n";
        let mut plan = FaultPlan::new(1, &section(text));
        assert_eq!(plan.before_statement(&session(1, 1), Stmt::Heartbeat, 0), strike(When::After, FaultKind::Hang { ms: 5000 }));
        assert_eq!(plan.before_statement(&session(1, 1), Stmt::Heartbeat, 0), strike(When::Before, FaultKind::Hang { ms: 900_000 }));
    }

    #[test]
    fn odds_per_simulated_hour_hold_the_fault_load_whatever_the_number_of_writes() {
        // One crash per session-hour: a session writing every minute and one writing every
        // 6 s for 1000 simulated hours meet about as many crashes (per write they would not).
        let crashes = |every_ms: i64| {
            let mut plan = FaultPlan::new(3, &section("crash_per_sim_hour = 1.0\n"));
            (0..1000 * 3_600_000 / every_ms)
                .filter(|i| plan.before_statement(&session(1, 1), Stmt::Heartbeat, i * every_ms).is_some())
                .count()
        };
        let (slow, fast) = (crashes(60_000), crashes(6_000));
        assert!((850..=1150).contains(&slow) && (850..=1150).contains(&fast), "{slow} and {fast} crashes in 1000 session-hours");
        // Reads are not rolled, but their time counts at the next write.
        let mut plan = FaultPlan::new(3, &section("hang_per_sim_hour = 1000000.0\n"));
        assert_eq!(plan.before_statement(&session(1, 1), Stmt::ReadTaskState, 0), None);
        assert!(matches!(
            plan.before_statement(&session(1, 1), Stmt::Heartbeat, 60_000),
            Some(Strike { kind: FaultKind::Hang { .. }, .. })
        ));
    }

    #[test]
    fn a_fired_random_fault_is_logged_at_the_point_a_scripted_one_would_name() {
        let mut plan = FaultPlan::new(1, &section("crash_probability = 1.0\n"));
        let log = plan.record_fired();
        assert_eq!(plan.before_statement(&session(1, 1), Stmt::ReadTaskState, 0), None);
        assert_eq!(plan.before_statement(&session(1, 1), Stmt::Heartbeat, 0), strike(When::Before, FaultKind::Crash));
        assert_eq!(plan.before_statement(&session(1, 1), Stmt::Heartbeat, 0), strike(When::Before, FaultKind::Crash));
        let whose = Whose::Session { task: 1, session: 1 };
        let fired = log.take();
        assert_eq!(
            fired.iter().map(|f| (f.twin, f.fault.whose, f.fault.at, f.fault.nth, f.fault.kind)).collect::<Vec<_>>(),
            [
                (false, whose, Point::before(Stmt::Heartbeat), 1, FaultKind::Crash),
                (false, whose, Point::before(Stmt::Heartbeat), 2, FaultKind::Crash)
            ]
        );
        let mut hangs = FaultPlan::new(1, &section("hang_probability = 1.0\nhang_ms = 700\n"));
        let log = hangs.record_fired();
        assert_eq!(hangs.before_statement(&session(2, 3), Stmt::Heartbeat, 0), strike(When::Before, FaultKind::Hang { ms: 700 }));
        assert_eq!(log.take()[0].fault.kind, FaultKind::Hang { ms: 700 });
    }

    #[test]
    fn random_faults_hit_writes_only_and_only_before_until() {
        let mut plan = FaultPlan::new(1, &section("until_ms = 1000\ncrash_probability = 1.0\n"));
        assert_eq!(plan.before_statement(&session(1, 1), Stmt::ReadTaskState, 0), None);
        assert_eq!(plan.before_statement(&session(1, 1), Stmt::Heartbeat, 999), strike(When::Before, FaultKind::Crash));
        assert_eq!(plan.before_statement(&session(1, 1), Stmt::Heartbeat, 1000), None);
    }

    #[test]
    fn drawn_odds_are_logged_and_fixed_for_the_run() {
        let plan = FaultPlan::new(5, &section("context_spike_probability = { min = 0.2, max = 0.4 }\n"));
        assert_eq!(plan.drawn.len(), 1);
        let p: f64 = plan.drawn[0].1.parse().unwrap();
        assert!((0.2..=0.4).contains(&p));
        assert_eq!(plan.drawn, FaultPlan::new(5, &section("context_spike_probability = { min = 0.2, max = 0.4 }\n")).drawn);
        let mut rng = crate::base::rng::stream(1, "x");
        let never = FaultPlan::new(5, &section("context_spike_probability = 0.0\n"));
        assert_eq!(never.actor_faults.context_spike_pct(0, &mut rng), None);
        let always = FaultPlan::new(5, &section("context_spike_probability = 1.0\ncontext_spike_pct = 12\n"));
        assert_eq!(always.actor_faults.context_spike_pct(0, &mut rng), Some(12));
    }
}
