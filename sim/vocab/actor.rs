//! Actor names: the grammar of the trace's `actor` column, parsed once.
//!
//! `conductor` (a conductor relaunched after a crash: `conductor.S2`) and its reviews
//! `conductor.review-3`, `conductor.S2.review-1`; the `launcher` that restarts a crashed
//! conductor; a musician session `task-03.S2` (a double launch's twin `task-03.S2b`); its
//! children `task-03.S2.bg-watcher-4`, `task-03.S2.pause-watcher-1`, `task-03.S2.agent-7`.
//! A name is also the key of the actor's random stream, so its text must never change.
//! A relaunched conductor is not `task-00.S2`: that text is a musician session's (task 0),
//! and every rule that tells the conductor's writes from a musician's reads the name.

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
    /// Conductor session `n`: 1 is the run's first (`conductor`), a relaunch after a crash
    /// is `conductor.S2`, `conductor.S3`, … (docs/protocol.md C34).
    Conductor(u32),
    /// A review conductor session `n` runs as its own actor (docs/protocol.md C3):
    /// `conductor.review-3`, `conductor.S2.review-1`. It writes as the conductor.
    Review(u32, u32),
    /// Whoever starts the conductor and restarts it after a crash (the person or the wrapper
    /// of the conductor's session; docs/protocol.md C34). It only reads.
    Launcher,
    Session(SessionPlace),
    Watcher(SessionPlace, WatcherKind, u32),
    Subagent(SessionPlace, u32),
}

impl ActorName {
    /// The run's first conductor session.
    pub const CONDUCTOR: ActorName = ActorName::Conductor(1);

    /// The musician session an actor belongs to; `None` for the conductor's actors.
    pub fn place(&self) -> Option<SessionPlace> {
        match *self {
            ActorName::Conductor(_) | ActorName::Review(..) | ActorName::Launcher => None,
            ActorName::Session(p) | ActorName::Watcher(p, _, _) | ActorName::Subagent(p, _) => Some(p),
        }
    }

    /// The conductor or one of its reviews: they write as the conductor (`task-00`).
    pub fn is_conductor(&self) -> bool {
        matches!(self, ActorName::Conductor(_) | ActorName::Review(..))
    }

    /// The conductor session an actor of the conductor belongs to (1 for the first).
    pub fn conductor_session(&self) -> Option<u32> {
        match *self {
            ActorName::Conductor(n) | ActorName::Review(n, _) => Some(n),
            _ => None,
        }
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
        if text == "launcher" {
            return Some(ActorName::Launcher);
        }
        if let Some(rest) = text.strip_prefix("conductor") {
            return parse_conductor(rest);
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

/// The rest of a conductor's name after `conductor`: ``, `.S2`, `.review-3`, `.S2.review-1`.
fn parse_conductor(rest: &str) -> Option<ActorName> {
    let (session, rest) = match rest.strip_prefix(".S") {
        Some(tail) => {
            let digits: String = tail.chars().take_while(char::is_ascii_digit).collect();
            let n: u32 = digits.parse().ok().filter(|n| *n >= 2)?;
            (n, &tail[digits.len()..])
        }
        None => (1, rest),
    };
    if rest.is_empty() {
        return Some(ActorName::Conductor(session));
    }
    let serial = rest.strip_prefix(".review-")?;
    if serial.is_empty() || !serial.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(ActorName::Review(session, serial.parse().ok()?))
}

impl fmt::Display for ActorName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let session = |f: &mut fmt::Formatter<'_>, p: &SessionPlace| write!(f, "{}.{}", p.task_id(), p.label());
        let conductor = |f: &mut fmt::Formatter<'_>, n: u32| if n == 1 { f.write_str("conductor") } else { write!(f, "conductor.S{n}") };
        match self {
            ActorName::Conductor(n) => conductor(f, *n),
            ActorName::Review(n, serial) => {
                conductor(f, *n)?;
                write!(f, ".review-{serial}")
            }
            ActorName::Launcher => f.write_str("launcher"),
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
            ("conductor", ActorName::CONDUCTOR),
            ("conductor.S2", ActorName::Conductor(2)),
            ("conductor.review-3", ActorName::Review(1, 3)),
            ("conductor.S12.review-1", ActorName::Review(12, 1)),
            ("launcher", ActorName::Launcher),
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
        for text in [
            "",
            "engine",
            "conductor.S1",
            "conductor.S",
            "conductor.review-",
            "conductor.S2.agent-1",
            "conductors",
            "task-01",
            "task-xx.S1",
            "task-01.S",
            "task-01.Sb",
            "task-01.S1c",
            "task-01.S1.watcher",
            "task-01.S1.agent-x",
        ] {
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
        assert_eq!(ActorName::CONDUCTOR.place(), None);
        assert!(ActorName::Review(2, 1).is_conductor() && !ActorName::Launcher.is_conductor());
        assert_eq!(ActorName::Review(2, 1).conductor_session(), Some(2));
    }
}
