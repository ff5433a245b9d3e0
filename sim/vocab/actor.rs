//! Actor names: the grammar of the trace's `actor` column, parsed once.
//!
//! `conductor`; a musician session `task-03.S2` (a double launch's twin `task-03.S2b`); its
//! children `task-03.S2.bg-watcher-4`, `task-03.S2.pause-watcher-1`, `task-03.S2.agent-7`.
//! A name is also the key of the actor's random stream, so its text must never change.

use std::fmt;

/// Which watcher loop (000 "Watcher Architecture").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WatcherKind {
    /// Polls for conductor messages while the musician works.
    Background,
    /// Polls the task state while the musician waits in a pause.
    Pause,
}

impl WatcherKind {
    fn prefix(self) -> &'static str {
        match self {
            WatcherKind::Background => "bg-watcher-",
            WatcherKind::Pause => "pause-watcher-",
        }
    }
}

/// Which session of which task: `task-03.S2` (twin: `task-03.S2b`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionPlace {
    pub task: u64,
    /// 1 for the first session of the task, 2 for its successor, …
    pub session: u32,
    /// A double launch's second process of the same session (fault `double_launch`).
    pub twin: bool,
}

impl SessionPlace {
    pub fn task_id(&self) -> String {
        super::task_id(self.task)
    }

    /// `S2`, `S2b`: how reports label a session.
    pub fn label(&self) -> String {
        format!("S{}{}", self.session, if self.twin { "b" } else { "" })
    }
}

/// Who an actor is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ActorName {
    Conductor,
    Session(SessionPlace),
    Watcher(SessionPlace, WatcherKind, u32),
    Subagent(SessionPlace, u32),
}

impl ActorName {
    /// The session an actor belongs to; `None` for the conductor.
    pub fn place(&self) -> Option<SessionPlace> {
        match *self {
            ActorName::Conductor => None,
            ActorName::Session(p) | ActorName::Watcher(p, _, _) | ActorName::Subagent(p, _) => Some(p),
        }
    }

    pub fn is_conductor(&self) -> bool {
        matches!(self, ActorName::Conductor)
    }

    pub fn is_watcher(&self) -> bool {
        matches!(self, ActorName::Watcher(..))
    }

    /// A musician session's main actor (not one of its children).
    pub fn is_session(&self) -> bool {
        matches!(self, ActorName::Session(_))
    }

    /// The session's own name for a child: `task-03.S2` → `task-03.S2.bg-watcher-4`.
    pub fn watcher(&self, kind: WatcherKind, serial: u32) -> ActorName {
        ActorName::Watcher(self.place().expect("only sessions have watchers"), kind, serial)
    }

    pub fn subagent(&self, serial: u32) -> ActorName {
        ActorName::Subagent(self.place().expect("only sessions have subagents"), serial)
    }

    /// Parses the trace's `actor` column; `None` for text that is no actor name.
    pub fn parse(text: &str) -> Option<ActorName> {
        if text == "conductor" {
            return Some(ActorName::Conductor);
        }
        let mut parts = text.splitn(3, '.');
        let task = super::task_number(parts.next()?)?;
        let session_text = parts.next()?.strip_prefix('S')?;
        let (digits, twin) = match session_text.strip_suffix('b') {
            Some(digits) => (digits, true),
            None => (session_text, false),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let place = SessionPlace { task, session: digits.parse().ok()?, twin };
        let Some(child) = parts.next() else { return Some(ActorName::Session(place)) };
        for kind in [WatcherKind::Background, WatcherKind::Pause] {
            if let Some(serial) = child.strip_prefix(kind.prefix()) {
                return Some(ActorName::Watcher(place, kind, serial.parse().ok()?));
            }
        }
        Some(ActorName::Subagent(place, child.strip_prefix("agent-")?.parse().ok()?))
    }
}

impl fmt::Display for ActorName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let session = |f: &mut fmt::Formatter<'_>, p: &SessionPlace| write!(f, "{}.{}", p.task_id(), p.label());
        match self {
            ActorName::Conductor => f.write_str("conductor"),
            ActorName::Session(p) => session(f, p),
            ActorName::Watcher(p, kind, serial) => {
                session(f, p)?;
                write!(f, ".{}{serial}", kind.prefix())
            }
            ActorName::Subagent(p, serial) => {
                session(f, p)?;
                write!(f, ".agent-{serial}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(task: u64, session: u32, twin: bool) -> SessionPlace {
        SessionPlace { task, session, twin }
    }

    #[test]
    fn every_kind_of_name_round_trips_through_its_text() {
        let cases = [
            ("conductor", ActorName::Conductor),
            ("task-01.S1", ActorName::Session(place(1, 1, false))),
            ("task-11.S2b", ActorName::Session(place(11, 2, true))),
            ("task-03.S2.bg-watcher-4", ActorName::Watcher(place(3, 2, false), WatcherKind::Background, 4)),
            ("task-03.S1b.pause-watcher-1", ActorName::Watcher(place(3, 1, true), WatcherKind::Pause, 1)),
            ("task-120.S12.agent-7", ActorName::Subagent(place(120, 12, false), 7)),
        ];
        for (text, name) in cases {
            assert_eq!(ActorName::parse(text), Some(name), "{text}");
            assert_eq!(name.to_string(), text);
        }
    }

    #[test]
    fn text_that_is_no_actor_name_is_refused() {
        for text in
            ["", "engine", "task-01", "task-xx.S1", "task-01.S", "task-01.Sb", "task-01.S1c", "task-01.S1.watcher", "task-01.S1.agent-x"]
        {
            assert_eq!(ActorName::parse(text), None, "{text}");
        }
    }

    #[test]
    fn children_belong_to_their_session() {
        let session = ActorName::Session(place(4, 3, false));
        let watcher = session.watcher(WatcherKind::Background, 2);
        assert_eq!(watcher.place(), session.place());
        assert!(watcher.is_watcher() && !watcher.is_session() && session.is_session());
        assert_eq!(session.subagent(5).to_string(), "task-04.S3.agent-5");
        assert_eq!(ActorName::Conductor.place(), None);
    }
}
