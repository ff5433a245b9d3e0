//! Drawn faults written as scripted ones (issue 31): a random crash or hang struck a session
//! before its `nth` run of a statement; the same fault as `[[faults.crash]]` or
//! `[[faults.hang]]` at that point strikes there with no odds at all, so the shrink can drop
//! the ones the failure does not need, one by one, and the file says what happened.

use toml::{Table, Value};

use crate::plan::faults::Fired;

/// The keys of random crashes and hangs, which the scripted faults replace.
const RANDOM_KEYS: [&str; 3] = ["crash_probability", "hang_probability", "hang_ms"];

/// Whether the document has random crashes or hangs to script.
pub fn has_random_crashes_or_hangs(table: &Table) -> bool {
    faults(table).is_some_and(|f| RANDOM_KEYS[..2].iter().any(|k| f.contains_key(*k)))
}

fn faults(table: &Table) -> Option<&Table> {
    table.get("faults").and_then(Value::as_table)
}

/// `table` with its random crashes and hangs replaced by `fired` as scripted faults, and
/// `drop` (other random keys of `[faults]`, e.g. `watcher_jitter_ms`) removed. `None` when a
/// fault struck a double launch's twin, which a scripted fault cannot name apart.
pub fn scripted(table: &Table, fired: &[Fired], drop: &[&str]) -> Option<Table> {
    if fired.iter().any(|f| f.twin) {
        return None;
    }
    let mut copy = table.clone();
    let section = copy.entry("faults").or_insert(Value::Table(Table::new())).as_table_mut()?;
    for key in RANDOM_KEYS.iter().chain(drop) {
        section.remove(*key);
    }
    for f in fired {
        crate::input::scenario::add_point_fault(&mut copy, &f.fault);
    }
    Some(copy)
}

/// `table` with every drawn odds (`{ min, max }`) fixed at the value this seed drew, exactly:
/// the same run, its odds said in the file.
pub fn odds_fixed(table: &Table, odds: &[(&str, f64)]) -> Table {
    let mut copy = table.clone();
    if let Some(section) = copy.get_mut("faults").and_then(Value::as_table_mut) {
        for (key, p) in odds {
            if section.get(*key).is_some_and(Value::is_table) {
                section.insert((*key).to_string(), Value::Float(*p));
            }
        }
    }
    copy
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::{FaultKind, Point, PointFault, Stmt, Whose};

    #[test]
    fn fired_faults_become_scripted_ones_at_their_points_and_the_odds_go() {
        let table: Table = "[faults]\ncrash_probability = { min = 0.0, max = 0.01 }\nhang_probability = 0.01\nhang_ms = 900\nwatcher_jitter_ms = 5\ncontext_spike_probability = 0.1\n[[faults.crash]]\ntask = 1\nat_ms = 5\n".parse().unwrap();
        assert!(has_random_crashes_or_hangs(&table));
        let whose = Whose::Session { task: 2, session: 1 };
        let fired = [
            Fired { twin: false, fault: PointFault { whose, at: Point::before(Stmt::Heartbeat), nth: 3, kind: FaultKind::Crash } },
            Fired {
                twin: false,
                fault: PointFault { whose, at: Point::before(Stmt::ClaimTask), nth: 1, kind: FaultKind::Hang { ms: 700 } },
            },
        ];
        let out = scripted(&table, &fired, &["watcher_jitter_ms"]).unwrap();
        let faults = out["faults"].as_table().unwrap();
        assert!(!has_random_crashes_or_hangs(&out));
        assert_eq!(faults.keys().map(String::as_str).collect::<Vec<_>>(), ["context_spike_probability", "crash", "hang"]);
        let crash = faults["crash"].as_array().unwrap();
        assert_eq!(crash.len(), 2, "the scripted crash it had, and the fired one");
        assert_eq!(crash[1].to_string(), "{ at = \"before:heartbeat\", nth = 3, session = 1, task = 2 }");
        assert_eq!(faults["hang"].as_array().unwrap()[0].get("duration_ms"), Some(&Value::Integer(700)));
        let twin = [Fired { twin: true, ..fired[0] }];
        assert!(scripted(&table, &twin, &[]).is_none());
        let fixed = odds_fixed(&table, &[("crash_probability", 0.004), ("hang_probability", 0.5)]);
        assert_eq!(fixed["faults"]["crash_probability"], Value::Float(0.004));
        assert_eq!(fixed["faults"]["hang_probability"], Value::Float(0.01), "a fixed probability stays as written");
    }
}
