//! How the search makes a new input from a kept one: with its own seeded stream, one to three
//! edits — a new run seed, a drawn probability fixed elsewhere in the scenario's range, a
//! fault of a `--faults` kind (crash and hang by default) added at a point the kept input's run reached, a scripted fault dropped, or
//! moved to another `nth` or another statement of the same session. Points come from the
//! parent's own run: with the same seed, the mutant reaches them too, up to where it diverges.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::input::Input;
use crate::plan::faults::{PointOwner, PointSeen};
use crate::vocab::{FaultKind, FaultName, Point as At, PointFault, Stmt, When, Whose};

/// A point of a task's session a run reached that a scripted fault can name (twins are not
/// nameable; the search places no conductor crash).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Point {
    pub task: u64,
    pub session: u32,
    pub statement: Stmt,
    pub nth: u64,
}

impl Point {
    pub fn of(seen: &PointSeen) -> Option<Point> {
        match seen.owner {
            PointOwner::Session(place) if !place.twin => {
                Some(Point { task: place.task, session: place.session, statement: seen.statement, nth: seen.nth })
            }
            _ => None,
        }
    }
}

/// Seeds of fresh inputs: small enough to read, and to fit TOML's signed integers.
pub const SEED_RANGE: std::ops::Range<u64> = 0..1_000_000_000;

/// More scripted faults than this and the sessions rarely get far enough to reach new points
/// (measured: 4 reached less than 6 and 10; 10 a little more than 6).
const MAX_FAULTS: usize = 10;

/// What the scenario lets the search change.
pub struct Mutator {
    /// `[faults]` odds drawn from a range: (key, min, max).
    pub odds: Vec<(&'static str, f64, f64)>,
    /// Hang lengths to place (explore's threshold and long classes, from the scenario's
    /// heartbeat numbers).
    pub hang_ms: Vec<i64>,
    /// The kinds of fault to place (`--faults`), in `FaultName::ALL` order, at least one.
    pub kinds: Vec<FaultName>,
    /// The highest session the scenario document may name (`crate::input::scenario::session_cap`),
    /// if it has one. A run can reach a session past it only under a `--variant
    /// uncap-lost-sessions` the document does not name, and a fault placed there would make the
    /// mutant a file refused as bad input, a harness error of the search's own making.
    pub sessions_max: Option<u64>,
}

impl Mutator {
    /// One to three edits of `parent`, whose run reached `points`.
    pub fn mutate(&self, parent: &Input, points: &[Point], rng: &mut ChaCha8Rng) -> Input {
        let nameable: Vec<Point> =
            points.iter().copied().filter(|p| self.sessions_max.is_none_or(|max| u64::from(p.session) <= max)).collect();
        let mut child = parent.clone();
        for _ in 0..rng.random_range(1..=3) {
            self.edit(&mut child, &nameable, rng);
        }
        child
    }

    fn edit(&self, input: &mut Input, points: &[Point], rng: &mut ChaCha8Rng) {
        match rng.random_range(0..8) {
            0 => input.seed = rng.random_range(SEED_RANGE),
            1 if !self.odds.is_empty() => self.set_odds(input, rng),
            2 | 3 if !points.is_empty() && input.faults.len() < MAX_FAULTS => input.faults.push(self.place(points, rng)),
            4 if !input.faults.is_empty() => {
                let at = rng.random_range(0..input.faults.len());
                input.faults.remove(at);
            }
            5 if !input.faults.is_empty() => {
                let at = rng.random_range(0..input.faults.len());
                let fault = &mut input.faults[at];
                fault.nth = if fault.nth > 1 && rng.random_bool(0.5) { fault.nth - 1 } else { fault.nth + 1 };
            }
            6 if !input.faults.is_empty() => move_statement(input, points, rng),
            _ if !points.is_empty() && input.faults.len() < MAX_FAULTS => input.faults.push(self.place(points, rng)),
            _ => input.seed = rng.random_range(SEED_RANGE),
        }
    }

    /// A range's ends are where its faults are rarest and most frequent: half the time one
    /// of them, else anywhere between. (Favouring the top end reached less: measured.)
    fn set_odds(&self, input: &mut Input, rng: &mut ChaCha8Rng) {
        let (key, min, max) = self.odds[rng.random_range(0..self.odds.len())];
        let p = match rng.random_range(0..4) {
            0 => min,
            1 => max,
            _ => rng.random_range(min..=max),
        };
        input.odds.insert(key, p);
    }

    /// A fault of one of `kinds` at one of `points` (before or after it; a hang before it): a
    /// statement first, then one of its runs, so the few writes weigh as much as the hundreds
    /// of polls.
    fn place(&self, points: &[Point], rng: &mut ChaCha8Rng) -> PointFault {
        let mut statements: Vec<Stmt> = points.iter().map(|p| p.statement).collect();
        statements.sort_unstable();
        statements.dedup();
        let statement = statements[rng.random_range(0..statements.len())];
        let of_it: Vec<&Point> = points.iter().filter(|p| p.statement == statement).collect();
        let point = *of_it[rng.random_range(0..of_it.len())];
        // Drawn in this order (the kind, a hang's length, then before or after): the search's stream.
        let name = self.draw_kind(rng);
        let kind = match name.plain() {
            Some(kind) => kind,
            None => FaultKind::Hang { ms: self.hang_ms[rng.random_range(0..self.hang_ms.len())] },
        };
        let when = if name != FaultName::Hang && rng.random_bool(0.5) { When::After } else { When::Before };
        let whose = Whose::Session { task: point.task, session: point.session };
        PointFault { whose, at: At { when, statement: point.statement }, nth: point.nth, kind }
    }

    /// One of the kinds that can be placed (a hang needs a length): of two, by a fair coin on
    /// whether it is the second — the draw the search made between a crash and a hang before
    /// it placed other kinds, so its default stream and outputs are what they were.
    fn draw_kind(&self, rng: &mut ChaCha8Rng) -> FaultName {
        let kinds: Vec<FaultName> = self.kinds.iter().copied().filter(|k| *k != FaultName::Hang || !self.hang_ms.is_empty()).collect();
        match kinds.len() {
            0 => FaultName::Crash,
            1 => kinds[0],
            2 => kinds[usize::from(rng.random_bool(0.5))],
            n => kinds[rng.random_range(0..n)],
        }
    }
}

/// A scripted fault moved to another statement its session ran (keeping its kind).
fn move_statement(input: &mut Input, points: &[Point], rng: &mut ChaCha8Rng) {
    let at = rng.random_range(0..input.faults.len());
    let fault = &mut input.faults[at];
    let same: Vec<&Point> = points.iter().filter(|p| fault.whose == Whose::Session { task: p.task, session: p.session }).collect();
    if let Some(point) = (!same.is_empty()).then(|| same[rng.random_range(0..same.len())]) {
        fault.at.statement = point.statement;
        fault.nth = point.nth;
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    fn mutator(kinds: &[FaultName]) -> Mutator {
        Mutator { odds: Vec::new(), hang_ms: vec![700], kinds: kinds.to_vec(), sessions_max: None }
    }

    #[test]
    fn a_crash_or_a_hang_is_the_coin_the_search_drew_before_and_other_kinds_come_when_asked() {
        let point = Point { task: 1, session: 1, statement: Stmt::ClaimTask, nth: 1 };
        for seed in 0..20 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut before = rng.clone();
            before.random_range(0..1);
            before.random_range(0..1);
            let hang = before.random_bool(0.5);
            let placed = mutator(&FaultName::SEARCHED).place(&[point], &mut rng);
            assert_eq!(placed.kind.name(), if hang { FaultName::Hang } else { FaultName::Crash }, "seed {seed}");
        }
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let kinds: Vec<FaultName> = (0..60).map(|_| mutator(&FaultName::ALL).place(&[point], &mut rng).kind.name()).collect();
        assert!(FaultName::ALL.iter().all(|k| kinds.contains(k)), "{kinds:?}");
        let only: Vec<FaultKind> = (0..20).map(|_| mutator(&[FaultName::IoError]).place(&[point], &mut rng).kind).collect();
        assert!(only.iter().all(|k| *k == FaultKind::IoError), "{only:?}");
    }

    /// A run under a `--variant uncap-lost-sessions` its document does not name reaches S6; the
    /// document may name S1..S5 only, so a fault placed at S6 would be a refused mutant.
    #[test]
    fn no_fault_is_placed_at_a_session_the_document_may_not_name() {
        let reached = |session| Point { task: 1, session, statement: Stmt::ClaimTask, nth: 1 };
        let points = [reached(5), reached(6)];
        let capped = Mutator { sessions_max: Some(5), ..mutator(&[FaultName::Crash]) };
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut sessions = Vec::new();
        for _ in 0..50 {
            let child = capped.mutate(&Input::seeded(1), &points, &mut rng);
            sessions.extend(child.faults.iter().map(|f| f.whose));
        }
        assert!(sessions.contains(&Whose::Session { task: 1, session: 5 }), "{sessions:?}");
        assert!(!sessions.contains(&Whose::Session { task: 1, session: 6 }), "{sessions:?}");
        let uncapped = mutator(&[FaultName::Crash]);
        let placed: Vec<Whose> =
            (0..50).flat_map(|_| uncapped.mutate(&Input::seeded(1), &points, &mut rng).faults).map(|f| f.whose).collect();
        assert!(placed.contains(&Whose::Session { task: 1, session: 6 }), "{placed:?}");
    }
}
