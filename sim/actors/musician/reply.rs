//! Which conductor reply is this session's (docs/protocol.md D15, variant
//! `replies-cite-request`). The seeds' answers name no request: the musician takes whatever
//! state its pause watcher sees (000 "Response Handling"), so after a hand-over an answer to the
//! replaced session's request can pass for the answer to its successor's. Under the variant
//! every conductor answer ends `In reply to: #<id>`, and a session acts only on a reply whose
//! cited request is one of its own messages.

use std::collections::BTreeSet;

use crate::actors::messages;
use crate::vocab::Stmt;
use crate::world::SqlFailure;

use super::*;

impl Musician {
    /// Among the conductor messages just read (oldest first), the text of the latest reply to
    /// a request of this session. Its own requests are the task's messages it sent (000
    /// "Message Deduplication": messages are known by id), read only when a message cites one.
    pub(super) async fn own_reply(&mut self, read: &[String]) -> Result<Option<String>, SqlFailure> {
        if read.iter().all(|text| messages::cited_request(text).is_none()) {
            return Ok(None);
        }
        let rows = self.ctx.sql(Stmt::ReadTaskMessages, vec![(":task_id", self.task())]).await?;
        let me = self.ctx.meta().session_id.as_str();
        let own: BTreeSet<i64> = (0..rows.rows.len()).filter(|r| rows.text(*r, 1) == Some(me)).filter_map(|r| rows.int(r, 0)).collect();
        let reply = read.iter().rev().find(|text| messages::cited_request(text).is_some_and(|id| own.contains(&id)));
        Ok(reply.cloned())
    }

    /// The state changed while this session waited, and nothing it read replies to its own
    /// request. Whoever changed the row — a successor's claim, a hand-over of this session,
    /// the answer to another session's request — the state is not this session's answer, and
    /// the row may not be its own any more: it acts on nothing and writes nothing, and ends
    /// (docs/protocol.md D15 says why; a row still its own goes stale and is handed over, C6).
    pub(super) fn no_own_reply(&self, state: &str, read: &[String]) {
        let cited: Vec<String> = read.iter().filter_map(|text| messages::cited_request(text)).map(|id| format!("#{id}")).collect();
        let cited = if cited.is_empty() { "none".to_string() } else { cited.join(", ") };
        // Not even the status file: it is the task's, and a successor reads it on resumption.
        self.ctx.note("no_own_reply", format!("state {state} with no reply to this session's request (replies read cite: {cited})"));
    }
}
