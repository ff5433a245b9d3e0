//! The series the plots draw, gathered a trace row at a time as the report model reads the
//! trace (`model.rs`): each task's heartbeat age at the conductor's polls, each session's
//! context over time.

use std::collections::BTreeMap;

use crate::trace::trace_reader::TraceRecord;
use crate::vocab::{ActorName, Stmt, CONDUCTOR_TASK_ID};
use crate::world::event::FileOp;

/// A named line: (simulated minutes, value) points.
pub type Series = (String, Vec<(f64, f64)>);

/// Context per session over time (simulated minutes, %): the `[ctx: NN%]` of every line
/// appended to a status file, keyed by the session's name; gathered a row at a time.
#[derive(Default)]
pub struct ContextTrajectories(BTreeMap<String, Vec<(f64, f64)>>);

impl ContextTrajectories {
    pub fn add(&mut self, record: &TraceRecord) {
        if record.event != FileOp::Append.as_str() || !record.statement.ends_with("-status") {
            return;
        }
        if let (Some(place), Some(ctx)) = (record.place(), record.context_pct()) {
            let session = ActorName::Session(place).to_string();
            self.0.entry(session).or_default().push((record.t_ms as f64 / 60_000.0, ctx as f64));
        }
    }

    pub fn series(&self) -> Vec<Series> {
        self.0.iter().map(|(name, points)| (name.clone(), points.clone())).collect()
    }
}

/// Heartbeat age of each task at each conductor poll: time since the last write on its row
/// (every state change and heartbeat sets last_heartbeat, 004 "Heartbeat Rule"). A task in a
/// terminal state (complete, exited) has no heartbeat left to age: it is no longer drawn
/// (a write that takes it out of that state draws it again). Gathered a row at a time.
#[derive(Default)]
pub struct HeartbeatAges {
    last_write: BTreeMap<String, i64>,
    series: BTreeMap<String, Vec<(f64, f64)>>,
}

impl HeartbeatAges {
    pub fn add(&mut self, record: &TraceRecord) {
        if !record.is_sql() {
            return;
        }
        if let Some(state) = record.state_after {
            if let Some(task) = record.task_id().filter(|t| t != CONDUCTOR_TASK_ID) {
                if state.is_terminal() {
                    self.last_write.remove(&task);
                } else {
                    self.last_write.insert(task, record.t_ms);
                }
            }
        }
        if record.stmt == Some(Stmt::PollTasks) {
            for (task, at) in &self.last_write {
                let point = (record.t_ms as f64 / 60_000.0, (record.t_ms - at) as f64 / 1000.0);
                match self.series.get_mut(task) {
                    Some(points) => points.push(point),
                    None => {
                        self.series.insert(task.clone(), vec![point]);
                    }
                }
            }
        }
    }

    pub fn series(&self) -> Vec<Series> {
        self.series.iter().map(|(name, points)| (name.clone(), points.clone())).collect()
    }
}
