//! messages-seen-once: every conductor message is seen exactly once by a session of its task.

use std::collections::BTreeMap;

use super::{Meaning, Rule, RuleDoc};
use crate::world::event::Fact;
use crate::judging::oracle::{Findings, Seen, Truth};
use crate::input::scenario::ProtocolSettings;
use crate::vocab::{MessageKind, RuleId, Stmt, CONDUCTOR_TASK_ID};

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::MessagesSeenOnce,
    says: "every conductor message is seen exactly once by a session of its task (000 Message Deduplication)",
    seed: "000 \"Message Deduplication\": new messages by id, each handled once",
    consumes: "conductor message inserts; sessions' `MessageHandled` facts (observed by the session after its read; under `durable-cursor` by the world at the commit of the `send_receipt` that returned the message, the session's durable acknowledgement: docs/profiles.md); the run's end",
    truth: "who owned the task row when the message was read; which sessions of the task were alive after it was sent",
    meaning: Meaning::ProtocolFlaw,
};

/// The rule as the checker runs it.
pub fn checker(_settings: &ProtocolSettings) -> Box<dyn Rule> {
    Box::new(MessagesSeenOnce::default())
}

#[derive(Clone, Default)]
pub struct MessagesSeenOnce {
    /// Per message: reads by the task's owner, and reads by a session that no longer owned it.
    reads: BTreeMap<i64, Reads>,
}

#[derive(Clone, Default)]
struct Reads {
    by_owner: Vec<(String, i64)>,
    by_replaced: Vec<(String, i64)>,
}

impl Rule for MessagesSeenOnce {
    fn doc(&self) -> &'static RuleDoc {
        &DOC
    }

    fn see(&mut self, seen: &Seen, truth: &Truth, _findings: &mut Findings) {
        let Seen::Fact(t_ms, Fact::MessageHandled { session_id, message_id }) = seen else { return };
        let Some(m) = truth.messages.get(message_id) else { return };
        let reads = self.reads.entry(*message_id).or_default();
        // Only the task's owner handles its messages; a replaced session reading them is a
        // zombie, whose writes the ownership rule judges.
        if truth.owner.get(&m.task_id) == Some(session_id) {
            reads.by_owner.push((session_id.clone(), *t_ms));
        } else {
            reads.by_replaced.push((session_id.clone(), *t_ms));
        }
    }

    fn finish(&mut self, end_ms: i64, truth: &Truth, findings: &mut Findings) {
        for (id, m) in &truth.messages {
            // Conductor messages only: the ones a session of the task must see.
            if !m.from_conductor || MessageKind::Instruction.is(&m.kind) || m.task_id == CONDUCTOR_TASK_ID {
                continue;
            }
            let reads = self.reads.get(id);
            let by_owner = reads.map_or(&[][..], |r| &r.by_owner[..]);
            let by_replaced = reads.map_or(&[][..], |r| &r.by_replaced[..]);
            let head = format!("conductor message {id} ({}) to {}, sent at t={} ms,", m.kind, m.task_id, m.sent_ms);
            match by_owner.len() {
                0 if is_due(truth, m) && !sent_within_a_poll_of_the_end(truth, m.sent_ms, end_ms) => {
                    let what = match by_replaced.first() {
                        Some((sid, t)) => format!(
                            "was read only by {}, at t={t} ms, when it no longer owned the task; no owner of the task ever saw it",
                            truth.describe(sid)
                        ),
                        None => format!(
                            "was read by nobody, although {} was alive after it was sent",
                            due_sessions(truth, &m.task_id, m.sent_ms)
                        ),
                    };
                    findings.violate(DOC.id, id.to_string(), m.sent_ms, format!("{head} {what}"));
                }
                0 | 1 => {}
                n => {
                    let times: Vec<String> = by_owner.iter().map(|(sid, t)| format!("t={t} ms by {}", truth.describe(sid))).collect();
                    findings.violate(DOC.id, id.to_string(), by_owner[1].1, format!("{head} was handled {n} times: {}", times.join("; ")));
                }
            }
        }
    }
}

/// Due only if an owner of the task could see it: the session the row named when it was
/// written was still alive then, or a session of the task started after it (a successor reads
/// the messages since its predecessor's HANDOFF). A message to a task whose owner had already
/// finished, and that no session took over after, is addressed to nobody.
///
/// An owner that makes its terminal write (`complete`, `exited`) within one background watcher
/// poll of the message (`Truth::watcher_read_window_ms`) is not asked to have read it: the
/// seeds' musician learns of a message only when its watcher's query returns it (000
/// "Background Watcher"), and its last steps after the final approval or in a clean exit read
/// no messages before the terminal write, "the absolute last database write" (000 "Completion
/// Flow" 5, "Clean Exit Protocol"; docs/protocol.md C86; issue 48: swarm-1-00163 seed 5, an
/// urgent emergency's follow-up sent 12 s before `mark_complete`). A successor still owes it.
fn is_due(truth: &Truth, m: &crate::judging::oracle::MessageTruth) -> bool {
    let owner_alive = m.owner_at_send.as_ref().and_then(|o| truth.sessions.get(o)).is_some_and(|s| {
        let ends_within_a_poll = s.terminal_ms.is_some_and(|t| t - m.sent_ms <= truth.watcher_read_window_ms);
        s.is_live_at(m.sent_ms) && !ends_within_a_poll
    });
    // A double launch's twin blocked at its claim (its last write its `send_claim_blocked`,
    // after which it exits: 000 "3. Atomic Task Claim") never took the task over (issue 48:
    // swarm-1-00918, an emergency to a complete task, "owed" to a twin launched after it and
    // blocked). A session of the conductor's that writes `send_claim_blocked` may have claimed
    // first (no instruction found: scenarios/examples/missing-instruction.toml) and still owes.
    let blocked_twin = |s: &&crate::judging::oracle::truth::SessionTruth| {
        !super::conductor_launch(&s.label) && s.last_write.as_ref().is_some_and(|(_, stmt)| *stmt == Stmt::SendClaimBlocked)
    };
    let successor = truth
        .sessions
        .values()
        .any(|s| s.task_id == m.task_id && s.launched_ms >= m.sent_ms && s.last_write.is_some() && !blocked_twin(&s));
    owner_alive || successor
}

/// A message sent less than one background watcher read (`Truth::watcher_read_window_ms`)
/// before the run ended (its time limit, or a stop) could not have been read yet by a musician
/// that follows 000 "Background Watcher" ("Sleep for 15 seconds"): the run ended before the
/// poll that would have returned it, so nobody is asked to have read it, as C86 spares one sent
/// that close to the owner's terminal write (docs/protocol.md C182; fleet-day seed 7 under
/// `--protocol repaired`: a `fix_proposal` sent 13.9 s before the 24 h limit). A read of it
/// by a replaced session, or two reads, are judged as ever.
fn sent_within_a_poll_of_the_end(truth: &Truth, sent_ms: i64, end_ms: i64) -> bool {
    // Inclusive, as C86's `ends_within_a_poll` in `is_due`.
    end_ms - sent_ms <= truth.watcher_read_window_ms
}

fn due_sessions(truth: &Truth, task_id: &str, sent_ms: i64) -> String {
    let alive: Vec<String> =
        truth.sessions.iter().filter(|(_, s)| s.task_id == task_id && s.is_live_at(sent_ms)).map(|(id, _)| truth.describe(id)).collect();
    alive.join(" and ")
}
