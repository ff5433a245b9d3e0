//! The scripted conductor (task-00). Its skill is not in the seeds (PROTOCOL.md, "Actors"):
//! its policy — poll interval, review time — is a scenario setting. What it writes follows
//! seed 004's state machine: it creates the task rows and instructions, launches one session
//! per task, answers reviews (message first, then state), and ends in `complete`.

use std::collections::BTreeMap;
use std::rc::Rc;

use rusqlite::types::Value;

use crate::ctx::Ctx;
use crate::engine::{ActorMeta, SqlFailure};
use crate::messages;
use crate::musician::{self, Launch};
use crate::scenario::Scenario;

pub const CONDUCTOR_TASK_ID: &str = "task-00";

/// What a musician asked the conductor to review, waiting for the task to be `needs_review`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pending {
    Checkpoint,
    Completion,
}

pub async fn conductor(ctx: Ctx, scenario: Rc<Scenario>) {
    if let Err(failure) = run(&ctx, &scenario).await {
        ctx.note("conductor_sql_failure", format!("{}: {}", failure.statement, failure.message));
    }
}

async fn run(ctx: &Ctx, scenario: &Rc<Scenario>) -> Result<(), SqlFailure> {
    let session_id = ctx.meta().session_id.clone();
    ctx.sql("conductor_register", vec![(":session_id", Value::Text(session_id))]).await?;
    for plan in &scenario.tasks {
        let path = messages::instruction_path(&plan.task_id);
        ctx.sql("create_task", vec![(":task_id", Value::Text(plan.task_id.clone())), (":instruction_path", Value::Text(path.clone()))])
            .await?;
        let message = messages::instruction(&plan.task_id, &path);
        ctx.sql("send_instruction", vec![(":task_id", Value::Text(plan.task_id.clone())), (":message", Value::Text(message))]).await?;
    }
    for plan in &scenario.tasks {
        launch(ctx, scenario, Launch { plan: plan.clone(), session_no: 1 });
    }
    let mut last_message_id: i64 = 0;
    let mut pending: BTreeMap<String, Pending> = BTreeMap::new();
    // Bounded: the run's time limit ends the simulation long before this many polls.
    let polls_max = (scenario.run.sim_time_max_ms / scenario.conductor.poll_ms).max(1) + 1;
    for _poll in 0..polls_max {
        ctx.sql("conductor_heartbeat", vec![]).await?;
        let messages = ctx.sql("read_musician_messages", vec![(":last_id", Value::Integer(last_message_id))]).await?;
        for row in 0..messages.rows.len() {
            last_message_id = last_message_id.max(messages.int(row, 0).unwrap_or(0));
            let task_id = messages.text(row, 1).unwrap_or("").to_string();
            match messages.text(row, 3).unwrap_or("") {
                "review_request" => {
                    pending.insert(task_id, Pending::Checkpoint);
                }
                "completion" => {
                    // The final `completion` message (004 "Mark Complete") comes after the
                    // task is approved and `complete`: it is never reviewed, as only
                    // `needs_review` tasks are.
                    pending.entry(task_id).or_insert(Pending::Completion);
                }
                other => ctx.note("conductor_read", format!("{other} from {task_id}")),
            }
        }
        let tasks = ctx.sql("poll_tasks", vec![]).await?;
        let states: Vec<(String, String)> = (0..tasks.rows.len())
            .map(|r| (tasks.text(r, 0).unwrap_or("").to_string(), tasks.text(r, 1).unwrap_or("").to_string()))
            .collect();
        if !states.is_empty() && states.iter().all(|(_, state)| state == "complete") {
            ctx.sql("conductor_set_state", vec![(":state", Value::Text("complete".to_string()))]).await?;
            ctx.note("conductor_done", format!("all {} tasks complete", states.len()));
            return Ok(());
        }
        for (task_id, state) in &states {
            if state != "needs_review" {
                continue;
            }
            let Some(kind) = pending.remove(task_id) else {
                continue;
            };
            review(ctx, scenario, task_id, kind).await?;
        }
        ctx.sleep(scenario.conductor.poll_ms).await;
    }
    ctx.note("conductor_gave_up", "poll limit reached");
    Ok(())
}

/// One review: the conductor marks itself `reviewing` (004 "Conductor States"), takes the
/// review time, writes its answer message and then the new state, and goes back to watching.
async fn review(ctx: &Ctx, scenario: &Scenario, task_id: &str, kind: Pending) -> Result<(), SqlFailure> {
    ctx.sql("conductor_set_state", vec![(":state", Value::Text("reviewing".to_string()))]).await?;
    let review_ms = ctx.draw(&scenario.conductor.review_ms);
    ctx.note("review_started", format!("{task_id} {kind:?}, {review_ms} ms"));
    ctx.sleep(review_ms).await;
    let message = messages::approval(task_id, kind == Pending::Completion);
    let task = Value::Text(task_id.to_string());
    ctx.sql(
        "send_conductor_message",
        vec![(":task_id", task.clone()), (":message", Value::Text(message)), (":message_type", Value::Text("approval".to_string()))],
    )
    .await?;
    ctx.sql("set_task_state", vec![(":task_id", task), (":state", Value::Text("review_approved".to_string()))]).await?;
    ctx.sql("conductor_set_state", vec![(":state", Value::Text("watching".to_string()))]).await?;
    Ok(())
}

/// Starts a musician session after the scenario's launch delay. Its session id is drawn
/// from its own name, as the SessionStart hook would hand it one.
fn launch(ctx: &Ctx, scenario: &Rc<Scenario>, launch: Launch) {
    let name = launch.actor_name();
    let meta = ActorMeta { session_id: ctx.derive_uuid(&name), task_id: launch.plan.task_id.clone(), name };
    let delay_ms = ctx.draw(&scenario.timing.launch_delay_ms);
    ctx.note("launch", format!("{} as {} in {delay_ms} ms", meta.name, launch.worked_by()));
    let scenario = scenario.clone();
    ctx.launch(meta, delay_ms, move |ctx| musician::session(ctx, scenario, launch));
}
