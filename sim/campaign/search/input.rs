//! What a search run is made of, apart from the scenario: the run seed, the fault odds the
//! search fixed instead of letting the seed draw them (swarm testing draws them from the
//! seed otherwise), and the scripted faults it placed at protocol points. An input becomes
//! a scenario document (`document`), so what ran is what a corpus or failure file holds.

use std::collections::BTreeMap;

use toml::{Table, Value};

use crate::vocab::{FaultKind, PointFault, Whose};

/// A scripted fault the search placed at a protocol point a previous run reached (a task's
/// session's: the search places no conductor crash), as search.csv's `input` names it:
/// `crash@task-01.S1:before:claim_task#1`, `hang540s@…`. (The search places hangs before a
/// statement only, as when its figures in docs/commands.md were measured; `after:` works too.)
fn describe(fault: &PointFault) -> String {
    let kind = match fault.kind {
        FaultKind::Hang { ms } => format!("hang{}s", ms / 1000),
        // search.csv has written an I/O error so since it had one; any other kind by its name.
        FaultKind::IoError => "ioerr".to_string(),
        kind => kind.name().to_string(),
    };
    let whose = match fault.whose {
        Whose::Session { task, session } => format!("task-{task:02}.S{session}"),
        Whose::Conductor { .. } => fault.whose.name(),
    };
    format!("{kind}@{whose}:{}#{}", fault.at, fault.nth)
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Input {
    pub seed: u64,
    /// `[faults]` odds keys fixed by the search (the seed draws the others).
    pub odds: BTreeMap<&'static str, f64>,
    pub faults: Vec<PointFault>,
}

impl Input {
    pub fn seeded(seed: u64) -> Input {
        Input { seed, ..Input::default() }
    }

    /// search.csv's `input`: `seed=7 crash_probability=0.0100 crash@task-01.S1:before:claim_task#1`.
    pub fn summary(&self) -> String {
        let mut parts = vec![format!("seed={}", self.seed)];
        parts.extend(self.odds.iter().map(|(key, p)| format!("{key}={p:.4}")));
        parts.extend(self.faults.iter().map(describe));
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
            crate::input::scenario::add_point_fault(&mut doc, fault);
        }
        doc
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::{Point, Stmt};

    #[test]
    fn search_csv_names_each_kind_as_it_always_has() {
        let fault = |kind| PointFault { whose: Whose::Session { task: 1, session: 2 }, at: Point::before(Stmt::ClaimTask), nth: 3, kind };
        let named: Vec<String> =
            [FaultKind::Crash, FaultKind::Hang { ms: 540_000 }, FaultKind::IoError].map(fault).iter().map(describe).collect();
        assert_eq!(
            named,
            ["crash@task-01.S2:before:claim_task#3", "hang540s@task-01.S2:before:claim_task#3", "ioerr@task-01.S2:before:claim_task#3"]
        );
    }
}
