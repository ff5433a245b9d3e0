//! What a search run is made of, apart from the scenario: the run seed, the fault odds the
//! search fixed instead of letting the seed draw them (swarm testing draws them from the
//! seed otherwise), and the scripted faults it placed at protocol points. An input becomes
//! a scenario document (`document`), so what ran is what a corpus or failure file holds.

use std::collections::BTreeMap;

use toml::{Table, Value};

use crate::vocab::Stmt;

/// A scripted fault the search placed at a protocol point a previous run reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    /// `None`: a crash; `Some(ms)`: a hang that long (the search places hangs before a
    /// statement only, as when its figures in docs/commands.md were measured; `after:` works too).
    pub hang_ms: Option<i64>,
    pub task: u64,
    pub session: u32,
    /// `before` or `after`.
    pub after: bool,
    pub statement: Stmt,
    pub nth: u64,
}

impl Placed {
    /// `at = "before:claim_task"`.
    pub fn at(&self) -> String {
        format!("{}:{}", if self.after { "after" } else { "before" }, self.statement)
    }

    fn describe(&self) -> String {
        let kind = match self.hang_ms {
            None => "crash".to_string(),
            Some(ms) => format!("hang{}s", ms / 1000),
        };
        format!("{kind}@task-{:02}.S{}:{}#{}", self.task, self.session, self.at(), self.nth)
    }

    fn to_table(&self) -> Table {
        let mut fault = Table::new();
        fault.insert("task".into(), Value::Integer(self.task as i64));
        fault.insert("session".into(), Value::Integer(i64::from(self.session)));
        fault.insert("at".into(), Value::String(self.at()));
        fault.insert("nth".into(), Value::Integer(self.nth as i64));
        if let Some(ms) = self.hang_ms {
            fault.insert("duration_ms".into(), Value::Integer(ms));
        }
        fault
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Input {
    pub seed: u64,
    /// `[faults]` odds keys fixed by the search (the seed draws the others).
    pub odds: BTreeMap<&'static str, f64>,
    pub faults: Vec<Placed>,
}

impl Input {
    pub fn seeded(seed: u64) -> Input {
        Input { seed, ..Input::default() }
    }

    /// search.csv's `input`: `seed=7 crash_probability=0.0100 crash@task-01.S1:before:claim_task#1`.
    pub fn summary(&self) -> String {
        let mut parts = vec![format!("seed={}", self.seed)];
        parts.extend(self.odds.iter().map(|(key, p)| format!("{key}={p:.4}")));
        parts.extend(self.faults.iter().map(Placed::describe));
        parts.join(" ")
    }

    /// The base document with this input's odds set and its faults appended to the
    /// scenario's own scripted ones.
    pub fn document(&self, base: &Table) -> Table {
        let mut doc = base.clone();
        let Value::Table(faults) = doc.entry("faults").or_insert_with(|| Value::Table(Table::new())) else { return doc };
        for (key, p) in &self.odds {
            faults.insert((*key).into(), Value::Float(*p));
        }
        for fault in &self.faults {
            let key = if fault.hang_ms.is_some() { "hang" } else { "crash" };
            if let Value::Array(list) = faults.entry(key).or_insert_with(|| Value::Array(Vec::new())) {
                list.push(Value::Table(fault.to_table()));
            }
        }
        doc
    }
}
