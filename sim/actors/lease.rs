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
//! never younger than the one comms.db holds.

use std::cell::Cell;

use crate::input::scenario::Scenario;
use crate::vocab::Stmt;
use crate::world::executor::ActorId;

/// One session's lease, shared by its actors.
#[derive(Debug)]
pub struct Lease {
    lease_ms: i64,
    /// The session's main actor: ending it ends its watchers and subagents with it.
    pub root: ActorId,
    /// When the session issued its latest successful heartbeat write; `None` before its
    /// claim (a session holds no task to lose before it; assumption A1 covers that time).
    renewed_at_ms: Cell<Option<i64>>,
}

impl Lease {
    pub fn new(scenario: &Scenario, root: ActorId) -> Lease {
        Lease { lease_ms: lease_ms(scenario), root, renewed_at_ms: Cell::new(None) }
    }

    /// A heartbeat write issued at `issued_ms` succeeded.
    pub fn renew(&self, issued_ms: i64) {
        let latest = self.renewed_at_ms.get().map_or(issued_ms, |at| at.max(issued_ms));
        self.renewed_at_ms.set(Some(latest));
    }

    /// `Some(why)` when at `now_ms` the lease has expired: the heartbeat may be stale in
    /// comms.db by the time anything this session does next lands.
    pub fn expired(&self, now_ms: i64) -> Option<String> {
        let age_ms = now_ms - self.renewed_at_ms.get()?;
        (age_ms >= self.lease_ms).then(|| {
            format!(
                "lease expired: heartbeat age {:.1} s >= lease {:.1} s; ending without a write (the conductor may have handed the task over)",
                age_ms as f64 / 1000.0,
                self.lease_ms as f64 / 1000.0
            )
        })
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
/// A healthy session never reaches it: its watchers keep the heartbeat under the refresh
/// threshold plus one poll with its jitter (`heartbeat_age_s`'s derived budget, 521 s with
/// random-faults' 20 s jitter, against a lease of 536 s).
pub fn lease_ms(scenario: &Scenario) -> i64 {
    scenario.conductor.staleness_s * 1000 - scenario.timing.statement_ms.upper() - 1000
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
        assert_eq!(lease.expired(10_000_000), None, "no lease before the claim");
        lease.renew(1_000);
        assert_eq!(lease.expired(1_000 + 535_999), None);
        let why = lease.expired(1_000 + 536_000).unwrap();
        assert!(why.starts_with("lease expired: heartbeat age 536.0 s >= lease 536.0 s"), "{why}");
        lease.renew(600_000);
        lease.renew(500_000);
        assert_eq!(lease.expired(600_000 + 535_999), None, "an older renewal does not move it back");
    }
}
