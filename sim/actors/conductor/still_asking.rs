//! Whether a request is still asking when the conductor is about to answer it (docs/protocol.md
//! C37): shared by the answers (sim/actors/conductor/answer.rs) and the reviews
//! (sim/actors/conductor/review.rs) from a file of its own, so answer.rs may start a review and
//! review.rs need not import answer.rs back.

use super::text;
use crate::actors::ctx::Ctx;
use crate::input::scenario::Scenario;
use crate::vocab::{Stmt, TaskState};
use crate::world::SqlFailure;

/// Whether the row still waits for the answer to `from_session`'s request, in `awaited`
/// (docs/protocol.md C37). `true` without a read under `reread_before_answer = false`.
/// Otherwise one `read_task_record`; a row moved on (the session exited, timed out into
/// `error`, was handed over, or a successor claimed) is noted `answer_withheld` and left alone.
pub(super) async fn still_asking(
    ctx: &Ctx,
    scenario: &Scenario,
    task_id: &str,
    awaited: fn(&str) -> bool,
    request: (i64, &str),
) -> Result<bool, SqlFailure> {
    if !scenario.conductor.reread_before_answer {
        return Ok(true);
    }
    let row = ctx.sql(Stmt::ReadTaskRecord, vec![(":task_id", text(task_id))]).await?;
    let (state, session) = (row.text(0, 0).unwrap_or(""), row.text(0, 1).unwrap_or(""));
    let asking = awaited(state) && session == request.1;
    if !asking {
        ctx.note(
            "answer_withheld",
            format!("{task_id}: request {} of session {} not answered: the row is {state} of session {session} now", request.0, request.1),
        );
    }
    Ok(asking)
}

/// The states in which a review's answer still reaches the session that asked: its request's
/// `needs_review`, or the `error` of a pause TIMEOUT it reported while it kept waiting (000
/// "Mode Transitions", Timeout handling 3: "set state to `error`, send timeout message, and
/// relaunch pause watcher for recovery"). The oracle accepts a review answer from either.
pub(super) fn awaits_review(state: &str) -> bool {
    matches!(TaskState::parse(state), Some(TaskState::NeedsReview | TaskState::Error))
}
