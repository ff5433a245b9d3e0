//! The fault vocabulary: whose session a fault strikes, what it does, and a fault placed at a
//! protocol point. A scenario's `[[faults.crash]]`, `[[faults.hang]]` and
//! `[[faults.conductor_crash]]` entries with `at` become `PointFault`s when it is read; the
//! fault plan fires them, and explore, search and shrink make them and write them back as
//! those same entries (`crate::input::scenario::add_point_fault`). A new kind is a variant here.

use super::{ActorName, Point, SessionPlace};

/// Whose protocol points: a task's session (its musician and watchers; a double launch's
/// twin counts as its original), or a conductor session (1 the run's first, 2 the one a
/// launcher starts after its crash, …) with its reviews.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Whose {
    Session { task: u64, session: u32 },
    Conductor { session: u32 },
}

impl Whose {
    /// `task-01.S1`, `conductor`, `conductor.S2`: the session's actor name.
    pub fn name(&self) -> String {
        match *self {
            Whose::Session { task, session } => ActorName::Session(SessionPlace { task, session, twin: false }).to_string(),
            Whose::Conductor { session } => ActorName::Conductor(session).to_string(),
        }
    }

    pub fn is_conductor(&self) -> bool {
        matches!(self, Whose::Conductor { .. })
    }
}

/// What a fault does to the session it strikes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FaultKind {
    /// Every actor of the session ends at once (a process killed).
    Crash,
    /// The session freezes for `ms`, then goes on as if nothing happened (a zombie if it was
    /// handed over meanwhile).
    Hang { ms: i64 },
    /// The statement fails with SQLITE_IOERR ("disk I/O error"): before it, it does not run;
    /// after it, it ran and the session is told it failed (its answer lost on the way back).
    /// The session meets a failed statement as any other (docs/protocol.md C43).
    IoError,
}

impl FaultKind {
    /// The `[faults]` array a scripted fault of this kind is written under, for `whose`.
    pub fn section(self, whose: Whose) -> &'static str {
        match (self, whose) {
            (FaultKind::Crash, Whose::Session { .. }) => "crash",
            (FaultKind::Crash, Whose::Conductor { .. }) => "conductor_crash",
            (FaultKind::Hang { .. }, _) => "hang",
            (FaultKind::IoError, _) => "io_error",
        }
    }

    /// Whether a conductor session can take it: a crash only (its one hang,
    /// `[[faults.conductor_down]]`, is a window of time, not a point).
    pub fn strikes_conductor(self) -> bool {
        matches!(self, FaultKind::Crash)
    }
}

/// A fault at a protocol point: the `nth` time (from 1) `whose` runs `at.statement`, `kind`
/// strikes before or after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PointFault {
    pub whose: Whose,
    pub at: Point,
    pub nth: u64,
    pub kind: FaultKind,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_its_section_and_only_a_crash_strikes_a_conductor() {
        let (session, conductor) = (Whose::Session { task: 1, session: 2 }, Whose::Conductor { session: 2 });
        assert_eq!(FaultKind::Crash.section(session), "crash");
        assert_eq!(FaultKind::Crash.section(conductor), "conductor_crash");
        assert_eq!(FaultKind::Hang { ms: 5 }.section(session), "hang");
        assert_eq!(FaultKind::IoError.section(session), "io_error");
        assert!(FaultKind::Crash.strikes_conductor() && !FaultKind::Hang { ms: 5 }.strikes_conductor());
        assert!(!FaultKind::IoError.strikes_conductor());
        assert_eq!((session.name(), conductor.name()), ("task-01.S2".to_string(), "conductor.S2".to_string()));
    }
}
