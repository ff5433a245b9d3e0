//! The fault vocabulary: whose session a fault strikes, what it does, and a fault placed at a
//! protocol point. A scenario's `[[faults.crash]]`, `[[faults.hang]]` and
//! `[[faults.conductor_crash]]` entries with `at` become `PointFault`s when it is read; the
//! fault plan fires them, and explore, search and shrink make them and write them back as
//! those same entries (`crate::input::scenario::add_point_fault`). A new kind is a variant of
//! `FaultKind` and of `FaultName` here (docs/scenarios.md lists the other files it touches).

use super::word::word_traits;
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
    /// After the statement committed, the call reports an error and the caller's tool layer
    /// runs the same statement again, blindly, a second later; the session sees the retry's
    /// answer only (docs/protocol.md C70). `after:` only.
    AmbiguousCommit,
}

impl FaultKind {
    /// The kind's name, without its parameter.
    pub fn name(self) -> FaultName {
        match self {
            FaultKind::Crash => FaultName::Crash,
            FaultKind::Hang { .. } => FaultName::Hang,
            FaultKind::IoError => FaultName::IoError,
            FaultKind::AmbiguousCommit => FaultName::AmbiguousCommit,
        }
    }

    /// The `[faults]` array a scripted fault of this kind is written under, for `whose`.
    pub fn section(self, whose: Whose) -> &'static str {
        self.name().section(whose)
    }

    /// Whether a conductor session can take it (see `FaultName::strikes_conductor`).
    pub fn strikes_conductor(self) -> bool {
        self.name().strikes_conductor()
    }
}

/// A point-fault kind by its name, without its parameter (a hang's length): the word
/// `--faults` lists for explore and search, and a task's session's `[faults]` array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FaultName {
    Crash,
    Hang,
    IoError,
    /// Scripted only (`[[faults.ambiguous_commit]]`): explore and search do not place it, so it
    /// is not in `ALL`.
    AmbiguousCommit,
}

impl FaultName {
    /// In the order explore places them at a point, and shrink tries dropping them.
    pub const ALL: [FaultName; 3] = [FaultName::Crash, FaultName::Hang, FaultName::IoError];

    /// What `search` places unless `--faults` says otherwise: the kinds it placed when its
    /// figures in docs/commands.md were measured (an I/O error is opt-in).
    pub const SEARCHED: [FaultName; 2] = [FaultName::Crash, FaultName::Hang];

    pub fn as_str(self) -> &'static str {
        match self {
            FaultName::Crash => "crash",
            FaultName::Hang => "hang",
            FaultName::IoError => "io_error",
            FaultName::AmbiguousCommit => "ambiguous_commit",
        }
    }

    /// How a summary names a fault of the kind: `crash`, `hangs`, `an I/O error`.
    pub fn phrase(self) -> &'static str {
        match self {
            FaultName::Crash => "crash",
            FaultName::Hang => "hangs",
            FaultName::IoError => "an I/O error",
            FaultName::AmbiguousCommit => "an ambiguous commit",
        }
    }

    /// The kind itself when it has no parameter to choose (a hang has its length).
    pub fn plain(self) -> Option<FaultKind> {
        match self {
            FaultName::Crash => Some(FaultKind::Crash),
            FaultName::Hang => None,
            FaultName::IoError => Some(FaultKind::IoError),
            FaultName::AmbiguousCommit => Some(FaultKind::AmbiguousCommit),
        }
    }

    /// Whether a conductor session can take it: a crash only (its one hang,
    /// `[[faults.conductor_down]]`, is a window of time, not a point).
    pub fn strikes_conductor(self) -> bool {
        matches!(self, FaultName::Crash)
    }

    /// The `[faults]` array a scripted fault of this kind is written under, for `whose`: a
    /// task's session's is the kind's name, a conductor's crash `conductor_crash`.
    pub fn section(self, whose: Whose) -> &'static str {
        match (self, whose) {
            (FaultName::Crash, Whose::Conductor { .. }) => "conductor_crash",
            _ => self.as_str(),
        }
    }

    /// The `[faults]` arrays of a task's session's point faults, in `ALL` order.
    pub fn session_sections() -> impl Iterator<Item = &'static str> {
        FaultName::ALL.into_iter().map(FaultName::as_str)
    }

    /// The `[faults]` arrays of a conductor session's point faults.
    pub fn conductor_sections() -> impl Iterator<Item = &'static str> {
        let conductor = Whose::Conductor { session: 1 };
        FaultName::ALL.into_iter().filter(|n| n.strikes_conductor()).map(move |n| n.section(conductor))
    }

    /// Every `[faults]` array that holds scripted point faults (with `at`, or with `at_ms`).
    pub fn point_sections() -> impl Iterator<Item = &'static str> {
        FaultName::session_sections().chain(FaultName::conductor_sections())
    }
}

word_traits!(FaultName, "fault kind");

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

    #[test]
    fn a_fault_name_is_a_word_and_names_every_point_fault_section() {
        crate::vocab::word::check::round_trips::<FaultName>("disk_full");
        assert_eq!(FaultKind::Hang { ms: 5 }.name(), FaultName::Hang);
        assert!(FaultName::ALL.iter().all(|n| n.plain().is_none_or(|k| k.name() == *n)));
        assert_eq!(FaultName::Hang.plain(), None);
        let sections: Vec<&str> = FaultName::point_sections().collect();
        assert_eq!(sections, ["crash", "hang", "io_error", "conductor_crash"]);
    }
}
