//! The edits a shrink tries, one candidate document each: drop a scripted fault, a random
//! fault's key, a task, a step, a subagent; weaken a fault that stays (a hang shorter, a crash
//! later); end the run soon after the violation.

use toml::{Table, Value};

use crate::vocab::FaultName;

/// Candidate edits of the document, most reducing first.
pub fn candidates(table: &Table, violation_ms: Option<i64>) -> Vec<Table> {
    let mut out = Vec::new();
    let with = |edit: &dyn Fn(&mut Table) -> bool| {
        let mut copy = table.clone();
        edit(&mut copy).then_some(copy)
    };
    // A task's session's point faults (every kind's array), the other scripted faults, the
    // conductor's point faults, then the conductor's script, the subagents', the tasks'.
    let session_faults = FaultName::session_sections().chain(super::OTHER_SCRIPTED_FAULTS).chain(FaultName::conductor_sections());
    let scripts = [("conductor", "emergencies"), ("conductor", "answers"), ("subagents", "script"), ("tasks", "custom")];
    for (section, key) in session_faults.map(|key| ("faults", key)).chain(scripts) {
        let len = table.get(section).and_then(|s| s.get(key)).and_then(Value::as_array).map_or(0, Vec::len);
        for index in (0..len).rev() {
            out.extend(with(&|t: &mut Table| {
                let Some(Value::Array(list)) = t.get_mut(section).and_then(|s| s.as_table_mut()).and_then(|s| s.get_mut(key)) else {
                    return false;
                };
                list.remove(index);
                true
            }));
        }
    }
    for key in [
        "crash_probability",
        "hang_probability",
        "context_spike_probability",
        "watcher_jitter_ms",
        "write_hold_ms",
        "hang_ms",
        "context_spike_pct",
    ] {
        out.extend(with(&|t: &mut Table| t.get_mut("faults").and_then(|s| s.as_table_mut()).is_some_and(|s| s.remove(key).is_some())));
    }
    for key in ["count", "steps", "subagents_per_step"] {
        out.extend(with(&|t: &mut Table| {
            let Some(tasks) = t.get_mut("tasks").and_then(|s| s.as_table_mut()) else { return false };
            let current = tasks.get(key).and_then(Value::as_integer).unwrap_or(if key == "count" { 1 } else { 2 });
            if current <= 1 {
                return false;
            }
            tasks.insert(key.to_string(), Value::Integer(current - 1));
            if key == "steps" {
                if let Some(Value::Array(checkpoints)) = tasks.get_mut("checkpoints") {
                    checkpoints.retain(|c| c.as_integer().is_some_and(|c| c < current));
                }
            }
            true
        }));
    }
    out.extend(without_each_task(table));
    out.extend(weakened(table));
    if let Some(violation_ms) = violation_ms {
        out.extend(with(&|t: &mut Table| {
            let run = t.entry("run").or_insert(Value::Table(Table::new()));
            let Some(run) = run.as_table_mut() else { return false };
            let limit = violation_ms + 60_000;
            if run.get("sim_time_max_ms").and_then(Value::as_integer).is_some_and(|v| v <= limit) {
                return false;
            }
            run.insert("sim_time_max_ms".to_string(), Value::Integer(limit));
            true
        }));
    }
    out
}

/// The document without task `k` (each `k`, last first): one task fewer, every scripted entry
/// naming task `k` (a fault, a `[[tasks.custom]]`, a conductor script's entry) dropped and
/// those naming a later task renumbered, so a task that plays no part goes wherever it is
/// (dropping the count alone only ever drops the last one).
fn without_each_task(table: &Table) -> Vec<Table> {
    let count = table.get("tasks").and_then(|t| t.get("count")).and_then(Value::as_integer).unwrap_or(1);
    let mut out = Vec::new();
    // The last task is the count's own candidate.
    for k in (1..count).rev() {
        let mut copy = table.clone();
        if let Some(tasks) = copy.get_mut("tasks").and_then(Value::as_table_mut) {
            tasks.insert("count".to_string(), Value::Integer(count - 1));
        }
        for section in ["faults", "tasks", "conductor", "subagents"] {
            let Some(section) = copy.get_mut(section).and_then(Value::as_table_mut) else { continue };
            for (_, list) in section.iter_mut() {
                let Some(list) = list.as_array_mut() else { continue };
                list.retain(|e| e.get("task").and_then(Value::as_integer) != Some(k));
                for entry in list.iter_mut().filter_map(Value::as_table_mut) {
                    if let Some(task) = entry.get("task").and_then(Value::as_integer).filter(|t| *t > k) {
                        entry.insert("task".to_string(), Value::Integer(task - 1));
                    }
                }
            }
        }
        out.push(copy);
    }
    out
}

/// A hang or a poll-error window shorter by half (down to a second), or a crash one
/// occurrence later at its point (a minute later at a time): each scripted fault weakened
/// once, in file order.
fn weakened(table: &Table) -> Vec<Table> {
    let mut out = Vec::new();
    let sections = ["hang", "poll_error", "crash", "conductor_crash"];
    for section in sections {
        let len = table.get("faults").and_then(|f| f.get(section)).and_then(Value::as_array).map_or(0, Vec::len);
        for index in 0..len {
            let mut copy = table.clone();
            let Some(entry) = copy
                .get_mut("faults")
                .and_then(|f| f.get_mut(section))
                .and_then(Value::as_array_mut)
                .and_then(|list| list.get_mut(index))
                .and_then(Value::as_table_mut)
            else {
                continue;
            };
            if weaken(section, entry) {
                out.push(copy);
            }
        }
    }
    out
}

/// Weakens one scripted fault in place; `false` when it cannot be weaker.
fn weaken(section: &str, entry: &mut Table) -> bool {
    let int = |entry: &Table, key: &str| entry.get(key).and_then(Value::as_integer);
    if section == "poll_error" {
        let (Some(from_ms), Some(to_ms)) = (int(entry, "from_ms"), int(entry, "to_ms")) else { return false };
        if to_ms - from_ms < 2_000 {
            return false;
        }
        entry.insert("to_ms".to_string(), Value::Integer(from_ms + (to_ms - from_ms) / 2));
        return true;
    }
    if section == "hang" {
        let ms = int(entry, "duration_ms").unwrap_or(crate::input::scenario::HANG_MS_DEFAULT);
        if ms < 2_000 {
            return false;
        }
        entry.insert("duration_ms".to_string(), Value::Integer(ms / 2));
        return true;
    }
    if entry.contains_key("at") {
        let nth = int(entry, "nth").unwrap_or(1);
        entry.insert("nth".to_string(), Value::Integer(nth + 1));
        return true;
    }
    match int(entry, "at_ms") {
        Some(at_ms) => {
            entry.insert("at_ms".to_string(), Value::Integer(at_ms + 60_000));
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_in_the_middle_goes_with_its_entries_and_later_tasks_move_down() {
        let table: Table =
            "[tasks]\ncount = 3\n[faults]\n[[faults.crash]]\ntask = 2\nat_ms = 5\n[[faults.hang]]\ntask = 3\nat_ms = 7\n".parse().unwrap();
        let out = without_each_task(&table);
        assert_eq!(out.len(), 2, "tasks 2 and 1; the last is the count's candidate");
        assert_eq!(out[0]["tasks"]["count"].as_integer(), Some(2));
        assert_eq!(out[0]["faults"]["crash"].as_array().map(Vec::len), Some(0), "task 2's crash goes with it");
        assert_eq!(out[0]["faults"]["hang"][0]["task"].as_integer(), Some(2), "task 3 is now task 2");
        assert_eq!(out[1]["faults"]["crash"][0]["task"].as_integer(), Some(1));
    }

    #[test]
    fn a_hang_gets_shorter_and_a_crash_later_and_nothing_else_changes() {
        let table: Table = "[faults]\n[[faults.hang]]\ntask = 1\nat = \"before:heartbeat\"\nduration_ms = 600000\n\
            [[faults.crash]]\ntask = 1\nat = \"after:claim_task\"\n[[faults.crash]]\ntask = 2\nat_ms = 5000\n\
            [[faults.hang]]\ntask = 2\nat_ms = 9\nduration_ms = 1500\n"
            .parse()
            .unwrap();
        let out = weakened(&table);
        assert_eq!(out.len(), 3, "the 1.5 s hang cannot be shorter");
        assert_eq!(out[0]["faults"]["hang"][0]["duration_ms"].as_integer(), Some(300_000));
        assert_eq!(out[1]["faults"]["crash"][0]["nth"].as_integer(), Some(2));
        assert_eq!(out[2]["faults"]["crash"][1]["at_ms"].as_integer(), Some(65_000));
        assert_eq!(out[1]["faults"]["hang"], table["faults"]["hang"], "one fault weakened at a time");
    }
}
