//! The launcher: whoever starts the conductor's session and starts another when it dies — a
//! person, or a wrapper around the session (docs/protocol.md C34). The seeds have every session
//! started from outside and say nothing of restarting a conductor; they only have musicians
//! notice that "the conductor may have crashed" (000 "Pause Watcher (During Conductor Wait)").
//! It is an actor only in scenarios with `[[faults.conductor_crash]]`: every other run starts
//! the conductor alone, as before.

use std::rc::Rc;

use rusqlite::types::Value;

use crate::actors::ctx::{ActorMeta, Ctx};
use crate::input::scenario::Scenario;
use crate::vocab::{ActorName, Stmt, TaskState, CONDUCTOR_SESSION_ID, CONDUCTOR_TASK_ID};

/// Who the launcher is: it reads as nobody's session.
pub fn launcher_meta() -> ActorMeta {
    ActorMeta { name: ActorName::Launcher, task_id: CONDUCTOR_TASK_ID.to_string(), session_id: "launcher".to_string() }
}

/// Conductor session `n`: the first is `conductor` with the run's fixed session id; a relaunch
/// is `conductor.S2` with an id drawn from its name, as the SessionStart hook hands a musician
/// one (`Ctx::derive_uuid`).
pub fn conductor_meta(ctx: Option<&Ctx>, session: u32) -> ActorMeta {
    let name = ActorName::Conductor(session);
    let session_id = match ctx {
        Some(ctx) if session > 1 => ctx.derive_uuid(&name.to_string()),
        _ => CONDUCTOR_SESSION_ID.to_string(),
    };
    ActorMeta { name, task_id: CONDUCTOR_TASK_ID.to_string(), session_id }
}

/// Starts the conductor, waits for its end, and after each crash starts the next session
/// `conductor.relaunch_after_ms` later; at most one relaunch per scripted conductor crash.
/// A conductor that ended by its stop hook left its row in `complete` or `exit_requested`
/// (004 "Exit Criteria"); any other end is a death.
pub async fn launcher(ctx: Ctx, scenario: Rc<Scenario>) {
    let relaunches_max = scenario.faults.conductor_crash.len() as u32;
    let mut delay_ms = 0;
    for session in 1..=relaunches_max + 1 {
        let meta = conductor_meta(Some(&ctx), session);
        let session_id = meta.session_id.clone();
        let for_conductor = scenario.clone();
        let conductor = ctx.launch(meta, delay_ms, move |ctx| super::conductor(ctx, for_conductor));
        ctx.join(conductor).await;
        match ended_by_its_hook(&ctx, &session_id).await {
            Some(true) | None => return,
            Some(false) => {}
        }
        delay_ms = scenario.conductor.relaunch_after_ms;
        let next = ActorName::Conductor(session + 1);
        ctx.note("conductor_relaunch", format!("{} died; {next} starts in {delay_ms} ms", ActorName::Conductor(session)));
    }
}

/// Whether the conductor session's row is in an exit state of its preset; `None` if the read
/// failed (the launcher then stops rather than guess).
async fn ended_by_its_hook(ctx: &Ctx, session_id: &str) -> Option<bool> {
    let rows = ctx.sql(Stmt::StopHookState, vec![(":session_id", Value::Text(session_id.to_string()))]).await.ok()?;
    let state = rows.text(0, 1).unwrap_or("");
    Some(matches!(TaskState::parse(state), Some(TaskState::Complete | TaskState::ExitRequested)))
}
