//! Protocol points: before or after a named statement. A scripted fault's `at` names one
//! (`"before:claim_task"`); explore, search and shrink place faults at them. The text is
//! parsed once, where a scenario is read (`Deserialize`); inside, a point is two small enums
//! compared as such, and it is spelled back only where it is written out (`Display`).

use std::fmt;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};

use super::Stmt;

/// Whether a fault strikes before its statement runs or once it has run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum When {
    Before,
    After,
}

impl When {
    pub const ALL: [When; 2] = [When::Before, When::After];

    /// `before` | `after`: the word of `at` and of explore.csv's `when`.
    pub fn as_str(self) -> &'static str {
        match self {
            When::Before => "before",
            When::After => "after",
        }
    }

    pub fn parse(text: &str) -> Option<When> {
        When::ALL.into_iter().find(|w| w.as_str() == text)
    }
}

/// A protocol point: `when` its session runs `statement` (which time is the fault's `nth`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Point {
    pub when: When,
    pub statement: Stmt,
}

impl Point {
    pub fn before(statement: Stmt) -> Point {
        Point { when: When::Before, statement }
    }

    pub fn after(statement: Stmt) -> Point {
        Point { when: When::After, statement }
    }

    /// `before:STATEMENT` or `after:STATEMENT` with a statement the engine runs.
    pub fn parse(text: &str) -> Option<Point> {
        let (when, statement) = text.split_once(':')?;
        Some(Point { when: When::parse(when)?, statement: Stmt::parse(statement)? })
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.when.as_str(), self.statement)
    }
}

impl<'de> Deserialize<'de> for Point {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Point, D::Error> {
        let text = String::deserialize(d)?;
        Point::parse(&text).ok_or_else(|| {
            de::Error::custom(format!("`{text}` is not before:STATEMENT or after:STATEMENT with a statement the engine runs"))
        })
    }
}

impl Serialize for Point {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_is_read_and_written_as_when_colon_statement() {
        for statement in Stmt::ALL {
            for when in When::ALL {
                let point = Point { when, statement };
                assert_eq!(Point::parse(&point.to_string()), Some(point));
            }
        }
        assert_eq!(Point::parse("after:claim_task"), Some(Point::after(Stmt::ClaimTask)));
        assert_eq!(Point::before(Stmt::Heartbeat).to_string(), "before:heartbeat");
        for bad in ["before:heartbeats", "during:heartbeat", "heartbeat", "before:", ":heartbeat", "before:heartbeat:x"] {
            assert_eq!(Point::parse(bad), None, "{bad}");
        }
    }
}
