//! Variant `lease-self-check` (issue 28; it closes what was assumption A2 of
//! docs/repaired-protocol.md): a session holds its task on a lease measured on its own clock,
//! and stops acting once it cannot be sure the lease still holds (leases with self-expiry).
//!
//! 000 "Heartbeat Protocol" lets the conductor hand over a task whose heartbeat is older than
//! the staleness threshold ("Stale heartbeat + `working` state → session likely crashed",
//! `conductor.staleness_s`, 9 minutes). A session that wakes from a hang that long has run no
//! statement yet, so nothing in comms.db tells it from a crashed one; but the session itself
//! can tell: its own last heartbeat is as old as the conductor reads it. Every actor of the
//! session (the session, its watchers, its subagents) checks the lease before each request it
//! makes and when each request returns (`Ctx::request`), which includes the first instant
//! after a hang; a session whose lease has expired ends itself at once, writing nothing.
//!
//! What the session counts from: the instant it *issued* its latest write that succeeded and
//! set `last_heartbeat` (004 "Heartbeat Rule": every UPDATE that changes state also sets it;
//! `refreshes_heartbeat`). The write ran at or after that instant, so the session's age is
//! never younger than the one comms.db holds. Its terminal write (`ends_hold`) ends the lease:
//! nobody hands a finished row over.
//!
//! Three rules besides the check:
//! - past `timing.heartbeat_refresh_s` on its own clock the session writes a heartbeat before
//!   it goes on (`Check::RefreshDue`): the watchers refresh by the age comms.db shows, which a
//!   conductor write to the row can make younger than the session's own count;
//! - a statement's answer is checked once its write has renewed or released the lease;
//! - the durable cursor's receipt carries the lease's end (`Ctx::lease_until`) and comms.db
//!   refuses it past that instant (scenarios/variants/fencing.sql): a receipt sent just before
//!   a hang runs when the hang ends, and would otherwise move the cursor past messages that a
//!   session about to end itself never acts on.
//!
//! What no check can stop: a write already sent when a hang struck lands when the hang ends,
//! before the session's code runs again. A row write or message then is fenced if the task was
//! handed over meanwhile (fencing, release-stale), as before this variant.

use std::cell::Cell;

use crate::input::scenario::Scenario;
use crate::vocab::Stmt;
use crate::world::executor::ActorId;

/// One session's lease, shared by its actors.
#[derive(Debug)]
pub struct Lease {
    lease_ms: i64,
    refresh_ms: i64,
    /// The session's main actor: ending it ends its watchers and subagents with it.
    pub root: ActorId,
    /// When the session issued its latest successful heartbeat write; `None` before its
    /// claim (a session holds no task to lose before it; assumption A1 covers that time) and
    /// after its terminal write (a finished row is nobody's to hand over).
    renewed_at_ms: Cell<Option<i64>>,
    /// An actor of the session is writing the refresh: the others' checks wait for it.
    refreshing: Cell<bool>,
}

/// What a check of the lease finds.
#[derive(Debug, PartialEq)]
pub enum Check {
    /// Inside the lease, or no lease held: go on.
    Held,
    /// Inside the lease but past the refresh threshold: write a heartbeat first.
    RefreshDue { age_ms: i64 },
    /// Past the lease: end the session, writing nothing; why, for the trace.
    Expired(String),
}

impl Lease {
    pub fn new(scenario: &Scenario, root: ActorId) -> Lease {
        Lease {
            lease_ms: lease_ms(scenario),
            refresh_ms: scenario.timing.heartbeat_refresh_s * 1000,
            root,
            renewed_at_ms: Cell::new(None),
            refreshing: Cell::new(false),
        }
    }

    /// A heartbeat write issued at `issued_ms` succeeded.
    pub fn renew(&self, issued_ms: i64) {
        let latest = self.renewed_at_ms.get().map_or(issued_ms, |at| at.max(issued_ms));
        self.renewed_at_ms.set(Some(latest));
    }

    /// The session's terminal write succeeded: it holds no task any more.
    pub fn release(&self) {
        self.renewed_at_ms.set(None);
    }

    /// The lease at `now_ms`. Past `timing.heartbeat_refresh_s` on the session's own clock a
    /// heartbeat is due first: the watchers refresh by the age comms.db shows them (000
    /// "Heartbeat Protocol": "refresh `last_heartbeat` if >8 minutes old"), which a conductor
    /// write to the row (its answer to a review sets the state, and so the heartbeat) can
    /// make younger than the session's own count, and the session would then reach its
    /// lease alive and well (proof-ci-smoke seed 17, in pause mode).
    pub fn check(&self, now_ms: i64) -> Check {
        let Some(renewed_at_ms) = self.renewed_at_ms.get() else { return Check::Held };
        let age_ms = now_ms - renewed_at_ms;
        if age_ms >= self.lease_ms {
            return Check::Expired(format!(
                "lease expired: heartbeat age {:.1} s >= lease {:.1} s; ending without a write (the conductor may have handed the task over)",
                age_ms as f64 / 1000.0,
                self.lease_ms as f64 / 1000.0
            ));
        }
        if age_ms > self.refresh_ms && !self.refreshing.get() {
            return Check::RefreshDue { age_ms };
        }
        Check::Held
    }

    /// When the lease ends (ms since the run's epoch), if the session holds one.
    pub fn until_ms(&self) -> Option<i64> {
        Some(self.renewed_at_ms.get()? + self.lease_ms)
    }

    /// Marks the refresh under way (`true`) or over.
    pub fn set_refreshing(&self, on: bool) {
        self.refreshing.set(on);
    }
}

/// The lease: the staleness threshold less what can pass between the session's check and the
/// instant comms.db holds its next write, so that a session whose check passed is never
/// running while the conductor can find its heartbeat stale:
/// - one statement round trip (`timing.statement_ms`'s upper bound): a write issued just
///   before the lease ends lands that much later, and the conductor's `release_task`
///   re-checks the heartbeat's age in comms.db when it runs (`release-stale`), not on its
///   poll, so its poll interval gives no slack;
/// - 1 s: `datetime('now')` stores the heartbeat truncated to the second, so comms.db reads
///   it up to a second older than the instant the write ran.
///
/// A healthy session never reaches it: past the refresh threshold (480 s) it writes a heartbeat
/// at its next check, and its watchers check every poll (15 s, 10 s paused, plus up to 20 s
/// of jitter in the proof suites), so its own age stays under about 520 s of the 536 s.
pub fn lease_ms(scenario: &Scenario) -> i64 {
    scenario.conductor.staleness_s * 1000 - scenario.timing.statement_ms.upper() - 1000
}

/// The session's writes after which it holds no task: its terminal writes.
pub fn ends_hold(stmt: Stmt) -> bool {
    matches!(stmt, Stmt::MarkComplete | Stmt::MarkExited)
}

/// The session's writes that set its row's `last_heartbeat` (scenarios/protocol.sql and
/// scenarios/variants/fencing.sql; 004 "Heartbeat Rule"). A message INSERT touches no row.
pub fn refreshes_heartbeat(stmt: Stmt) -> bool {
    matches!(
        stmt,
        Stmt::ClaimTask
            | Stmt::Heartbeat
            | Stmt::SetNeedsReview
            | Stmt::ResumeWorking
            | Stmt::MarkComplete
            | Stmt::SetError
            | Stmt::SetContextWarning
            | Stmt::SetEscalation
            | Stmt::MarkExited
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario() -> Scenario {
        let text = "[tasks]\ncount = 1\n[timing.statement_ms]\nkind = \"uniform\"\nmin = 500\nmax = 3000\n";
        Scenario::parse(text, std::path::Path::new("s.toml")).unwrap()
    }

    #[test]
    fn the_lease_is_the_staleness_threshold_less_a_round_trip_and_a_second() {
        let s = scenario();
        assert_eq!(s.conductor.staleness_s, 540);
        assert_eq!(lease_ms(&s), 540_000 - 3_000 - 1_000);
    }

    #[test]
    fn a_lease_expires_only_after_a_claim_and_from_the_latest_renewal() {
        let lease = Lease::new(&scenario(), 7);
        assert_eq!(lease.check(10_000_000), Check::Held, "no lease before the claim");
        lease.renew(1_000);
        assert_eq!(lease.check(1_000 + 480_000), Check::Held);
        assert_eq!(lease.check(1_000 + 480_001), Check::RefreshDue { age_ms: 480_001 });
        lease.set_refreshing(true);
        assert_eq!(lease.check(1_000 + 535_999), Check::Held, "one refresh at a time");
        let Check::Expired(why) = lease.check(1_000 + 536_000) else { panic!("expired") };
        assert!(why.starts_with("lease expired: heartbeat age 536.0 s >= lease 536.0 s"), "{why}");
        lease.set_refreshing(false);
        lease.renew(600_000);
        lease.renew(500_000);
        assert_eq!(lease.check(600_000 + 480_000), Check::Held, "an older renewal does not move it back");
        lease.release();
        assert_eq!(lease.check(10_000_000), Check::Held, "no lease after the terminal write");
    }
}
