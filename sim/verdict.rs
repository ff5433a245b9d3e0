//! The run's verdict. For now: liveness at the end of the run, read from the database
//! itself — every task `complete` and the conductor in an exit state (004 "Hook System").

use crate::conductor::CONDUCTOR_TASK_ID;
use crate::db::CommsDb;
use crate::engine::Ending;
use crate::error::Result;
use crate::scenario::Scenario;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    /// The first violated rule, and the facts that show it.
    Fail {
        rule: String,
        facts: Vec<String>,
    },
}

impl Verdict {
    pub fn passed(&self) -> bool {
        matches!(self, Verdict::Pass)
    }

    pub fn headline(&self) -> String {
        match self {
            Verdict::Pass => "PASS".to_string(),
            Verdict::Fail { rule, .. } => format!("FAIL: {rule}"),
        }
    }

    pub fn explanation(&self) -> Vec<String> {
        match self {
            Verdict::Pass => Vec::new(),
            Verdict::Fail { facts, .. } => facts.clone(),
        }
    }
}

pub fn tasks_in_state(db: &CommsDb, state: &str) -> Result<usize> {
    let n: i64 = db.connection().query_row(
        "SELECT count(*) FROM orchestration_tasks WHERE task_id != ?1 AND task_id NOT LIKE 'fallback-%' AND state = ?2",
        rusqlite::params![CONDUCTOR_TASK_ID, state],
        |r| r.get(0),
    )?;
    Ok(n as usize)
}

pub fn judge(db: &CommsDb, scenario: &Scenario, ending: Ending) -> Result<Verdict> {
    let conn = db.connection();
    let mut stmt = conn.prepare("SELECT task_id, state FROM orchestration_tasks WHERE task_id NOT LIKE 'fallback-%' ORDER BY task_id")?;
    let rows: Vec<(String, String)> = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?;
    let mut facts = Vec::new();
    for plan in &scenario.tasks {
        match rows.iter().find(|(id, _)| *id == plan.task_id) {
            Some((_, state)) if state == "complete" => {}
            Some((id, state)) => facts.push(format!("{id} ended in `{state}`, not `complete`")),
            None => facts.push(format!("{} has no row in orchestration_tasks", plan.task_id)),
        }
    }
    match rows.iter().find(|(id, _)| id == CONDUCTOR_TASK_ID) {
        Some((_, state)) if state == "complete" || state == "exit_requested" => {}
        Some((_, state)) => facts.push(format!("the conductor (task-00) ended in `{state}`, not an exit state")),
        None => facts.push("the conductor never registered task-00".to_string()),
    }
    if facts.is_empty() {
        return Ok(Verdict::Pass);
    }
    let rule = match ending {
        Ending::TimeLimit => format!("liveness: not every task completed within run.sim_time_max_ms = {} ms", scenario.run.sim_time_max_ms),
        Ending::Quiescent => "liveness: every actor stopped with work left undone".to_string(),
    };
    Ok(Verdict::Fail { rule, facts })
}
