//! The two watchers of a musician session (000 "Message Watcher Protocol").
//!
//! Both are actors of their own (subagents in the seeds) that share the session's memory.
//! Both refresh the task's heartbeat when it is older than the refresh threshold
//! (000 "Heartbeat Refresh (Both Modes)").

use std::rc::Rc;

use crate::actors::ctx::Ctx;
use crate::actors::session::{PauseOutcome, SharedMemory, WatcherReport};
use crate::input::scenario::Scenario;
use crate::vocab::statement::{args, cols};
use crate::vocab::{Stmt, TaskState};
use crate::world::{FailureKind, SqlFailure};

/// A pause watcher that never sees an answer stops after this many polls, so every loop is
/// bounded; the session then treats the wait as timed out.
const PAUSE_POLLS_MAX: u64 = 100_000;

/// 000 "Background Watcher (During Active Work)": poll for new conductor messages by id,
/// refresh the heartbeat, sleep; exit on a message, or on `exit_requested` (D16). 004 caps it
/// at 500 iterations.
pub async fn background(ctx: Ctx, scenario: Rc<Scenario>, memory: SharedMemory, last_processed_message_id: i64) {
    let task_id = ctx.meta().task_id.clone();
    let result: Result<(), SqlFailure> = async {
        for _iteration in 0..scenario.timing.background_max_iterations {
            let issued_ms = ctx.now_ms();
            let found = if scenario.settings.detect_by_timestamp {
                // 004 "Check for Conductor Messages": the newest by timestamp, new if newer.
                let latest = ctx.call(args::read_latest_conductor_message(&task_id)).await?;
                let newer = latest.text(0, 2).is_some_and(|at| at > memory.borrow().last_processed_timestamp.as_str());
                if newer {
                    latest
                } else {
                    crate::world::db::SqlOutcome::default()
                }
            } else {
                ctx.call(args::read_new_conductor_messages(&task_id, last_processed_message_id)).await?
            };
            if !found.rows.is_empty() {
                let ids: Vec<i64> = (0..found.rows.len()).filter_map(|r| found.int(r, 0)).collect();
                ctx.note("watcher_exit", format!("new conductor messages {ids:?}"));
                memory.borrow_mut().inbox.push(WatcherReport::Messages(ids));
                return Ok(());
            }
            memory.borrow_mut().empty_poll_issued_ms = issued_ms;
            let state = refresh_heartbeat_if_old(&ctx, &scenario, &task_id).await?;
            if state == Some(TaskState::ExitRequested) && scenario.settings.exit_request_to_musician && !memory.borrow().exit_requested {
                // docs/protocol.md D16: a state the conductor sets to stop the session (004
                // "Background Monitoring Subagent Template": exit when the "State changes from
                // 'working' (indicates conductor intervention)"). Other states do not end it.
                ctx.note("watcher_exit", "state changed to exit_requested");
                let mut memory = memory.borrow_mut();
                memory.exit_requested = true;
                memory.inbox.push(WatcherReport::ExitRequested);
                return Ok(());
            }
            ctx.sleep(scenario.timing.background_poll_ms).await;
        }
        ctx.note("watcher_exit", "iterations exhausted");
        memory.borrow_mut().inbox.push(WatcherReport::IterationsExhausted);
        Ok(())
    }
    .await;
    if let Err(failure) = result {
        ctx.note("watcher_sql_failure", format!("{}: {}", failure.stmt, failure.message));
        if failure.kind == FailureKind::FencedOut {
            // Issue 28 (proof-random-faults seed 4811): a session that wakes from a hang often
            // learns it was replaced through its watcher's heartbeat first; the watcher says
            // so, and the session stops at once instead of relaunching it and working on.
            memory.borrow_mut().inbox.push(WatcherReport::FencedOut);
        }
    }
}

/// 000 "Pause Watcher (During Conductor Wait)": poll the task's state until it is no longer
/// `needs_review` or `error`, refreshing the heartbeat meanwhile. After the timeout (15 min)
/// it checks the conductor's heartbeat: fresh (< staleness threshold) → keep waiting; stale →
/// TIMEOUT for the musician to escalate.
pub async fn pause(ctx: Ctx, scenario: Rc<Scenario>, memory: SharedMemory) {
    let task_id = ctx.meta().task_id.clone();
    let result: Result<(), SqlFailure> = async {
        let mut waiting_since_ms = ctx.now_ms();
        for _poll in 0..PAUSE_POLLS_MAX {
            let row = ctx.call(args::read_task_state(&task_id)).await?;
            let state = row.text(0, 0).unwrap_or("").to_string();
            if !matches!(TaskState::parse(&state), Some(TaskState::NeedsReview | TaskState::Error)) {
                ctx.note("watcher_exit", format!("state changed to {state}"));
                memory.borrow_mut().pause_outcome = Some(PauseOutcome::Answered(state));
                return Ok(());
            }
            if row.real(0, 3).unwrap_or(0.0) > scenario.timing.heartbeat_refresh_s as f64 {
                refresh(&ctx, &task_id).await?;
            }
            if ctx.now_ms() - waiting_since_ms >= scenario.timing.pause_timeout_ms {
                let health = ctx.call(args::conductor_health()).await?;
                let conductor_stale_s = health.real(0, 2).unwrap_or(f64::INFINITY);
                if conductor_stale_s < scenario.conductor.staleness_s as f64 {
                    ctx.note("pause_timeout", format!("conductor heartbeat {conductor_stale_s:.0} s old: alive but busy, waiting again"));
                    waiting_since_ms = ctx.now_ms();
                } else {
                    ctx.note("watcher_exit", format!("TIMEOUT: conductor heartbeat {conductor_stale_s:.0} s old"));
                    memory.borrow_mut().pause_outcome = Some(PauseOutcome::TimedOut);
                    return Ok(());
                }
            }
            ctx.sleep(scenario.timing.pause_poll_ms).await;
        }
        ctx.note("watcher_exit", "poll cap reached without an answer");
        memory.borrow_mut().pause_outcome = Some(PauseOutcome::TimedOut);
        Ok(())
    }
    .await;
    if let Err(failure) = result {
        ctx.note("watcher_sql_failure", format!("{}: {}", failure.stmt, failure.message));
        if failure.kind == FailureKind::FencedOut {
            // As the background watcher's (proof-random-faults seed 6194: the session took the
            // fenced watcher's end for a TIMEOUT and reported it past its successor's claim).
            memory.borrow_mut().pause_outcome = Some(PauseOutcome::FencedOut);
        }
    }
}

/// Reads the task row, refreshes an old heartbeat, and returns the state it read.
async fn refresh_heartbeat_if_old(ctx: &Ctx, scenario: &Scenario, task_id: &str) -> Result<Option<TaskState>, SqlFailure> {
    // The statement table's typed call and columns (issue 46's pilot, docs/development.md).
    let row = ctx.call(args::read_task_state(task_id)).await?;
    if row.get(0, cols::read_task_state::seconds_stale).unwrap_or(0.0) > scenario.timing.heartbeat_refresh_s as f64 {
        refresh(ctx, task_id).await?;
    }
    Ok(row.get(0, cols::read_task_state::state))
}

async fn refresh(ctx: &Ctx, task_id: &str) -> Result<(), SqlFailure> {
    ctx.note("heartbeat_refresh", "heartbeat older than the refresh threshold");
    let outcome = ctx.call(args::heartbeat(task_id, &ctx.meta().session_id)).await?;
    if outcome.rows_affected == 0 {
        // Fenced out (docs/protocol.md D11): the task belongs to another session.
        return Err(SqlFailure::fenced_out(Stmt::Heartbeat));
    }
    Ok(())
}
