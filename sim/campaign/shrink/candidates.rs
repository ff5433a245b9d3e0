//! The edits a shrink tries, one candidate document each: drop a scripted fault, a random
//! fault's key, a task, a step, a subagent; end the run soon after the violation.

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
