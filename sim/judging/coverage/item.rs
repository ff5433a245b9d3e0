//! What coverage counts, and its one text form (coverage.csv's `item` column and the lines of
//! a `--require-coverage` file):
//!
//! - `WRITER FROM->TO`: a write by `musician` (a session or one of its watchers) or
//!   `conductor` that moved a task row from state FROM to state TO, in any context;
//! - `WRITER FROM->TO CONTEXT`: the same transition in a fault context (`Context`);
//! - `zero-rows STATEMENT`: a write of STATEMENT that changed no row;
//! - `note NAME`: an actor's trace note NAME, for the decisions that write no transition of
//!   their own (one of `NOTES`: the conductor's interventions and answer choices).

use std::fmt;

use crate::vocab::{Stmt, TaskState};

/// Who wrote a transition: 002's two sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Writer {
    /// A musician session, or one of its watchers.
    Musician,
    Conductor,
}

impl Writer {
    pub const ALL: [Writer; 2] = [Writer::Musician, Writer::Conductor];

    pub fn as_str(self) -> &'static str {
        match self {
            Writer::Musician => "musician",
            Writer::Conductor => "conductor",
        }
    }
}

/// The fault context a transition happened in (sim/judging/coverage/observer.rs decides them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Context {
    /// Another session of the task had crashed before it.
    AfterCrash,
    /// Another session of the task, or the conductor, was frozen by a hang at that instant.
    DuringHang,
    /// Its writer had been frozen by a hang earlier (a session back from a hang, a zombie).
    AfterHang,
    /// Its writer's previous statement got SQLITE_BUSY.
    AfterBusy,
    /// A double launch's twin of the task was live.
    Twin,
    /// The task had been relaunched: a musician write by a session after the first, or a
    /// conductor write once a successor was launched.
    AfterRelaunch,
}

impl Context {
    pub const ALL: [Context; 6] =
        [Context::AfterCrash, Context::DuringHang, Context::AfterHang, Context::AfterBusy, Context::Twin, Context::AfterRelaunch];

    pub fn as_str(self) -> &'static str {
        match self {
            Context::AfterCrash => "after-crash",
            Context::DuringHang => "during-hang",
            Context::AfterHang => "after-hang",
            Context::AfterBusy => "after-busy",
            Context::Twin => "twin",
            Context::AfterRelaunch => "after-relaunch",
        }
    }
}

/// One thing a run may exercise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Item {
    /// A task row's state change; `context: None` counts it in any context.
    Transition { writer: Writer, from: TaskState, to: TaskState, context: Option<Context> },
    /// A write that changed no row.
    ZeroRows(Stmt),
    /// A trace note of one of `NOTES`.
    Note(&'static str),
}

const ZERO_ROWS: &str = "zero-rows";
const NOTE: &str = "note";

/// The trace notes coverage counts: decisions whose writes look like others' (a hand-over is
/// `working -> fix_proposed` whatever its cause) or that write nothing.
pub const NOTES: &[&str] = &[
    // docs/protocol.md C37: an answer not written because the row moved on.
    "answer_withheld",
    // C39: the conductor's intervention on `claim_blocked`.
    "claim_blocked_intervention",
    // C40: the four answers to an error report.
    "error_reply_corrected_path",
    "error_reply_alternative",
    "error_reply_skip",
    "error_reply_exit_request",
    // 000 "Retry Policy": a subagent failed twice more after its first failure and the
    // musician escalates instead of absorbing the work (`subagents.absorb_probability` < 1).
    "subagent_escalated",
    // A review answer drawn from `conductor.reject_probability` / `fix_probability`, not
    // scripted by `[[conductor.answers]]` (C5).
    "review_rejected_by_odds",
    "review_fix_by_odds",
    // 004 "Background Monitoring Subagent Template": the watcher's 500-iteration cap reached,
    // and the musician launching a new one.
    "watcher_relaunch",
    // 000 "6. Read Task Instructions": no instruction message → `claim_blocked`.
    "instruction_missing",
    // 004 "Hook System": 500 stop-hook checks without an exit state → forced exit.
    "stop_hook_forced_exit",
    // 004 "Hook System" / 000 "Design Rationale": a session that tried to stop with its row
    // unfinished, blocked, given the fallback prompt (docs/protocol.md C141).
    "stop_hook_fallback_prompt",
    // 000 "2. Session Identity": no CLAUDE_SESSION_ID → log and exit.
    "session_id_missing",
    // 003 "State Reconciliation": a single benign mismatch on resumption, auto-corrected.
    "resumption_benign_mismatch",
    // 003 "Resumption Decision Tree" 2: a stale HANDOFF; "State Reconciliation": a
    // contradictory state, escalated at once.
    "resumption_stale_handoff",
    "resumption_contradiction",
    // 003 "Resumption Decision Tree" 5: each of its three triggers, reported to the conductor.
    "resumption_report_deviations",
    "resumption_report_multiple_mismatches",
    "resumption_report_temp_comms",
    // 000 "Mid-Session Resumption Protocol" 5: ">2 tasks in `working` state" (C42).
    "resumption_report_working_tasks",
    // docs/protocol.md C41: an urgent emergency stops the work until the conductor's next message.
    "emergency_stop_wait",
];

impl Item {
    /// The counted note named `what`, if coverage counts it.
    pub fn note(what: &str) -> Option<Item> {
        NOTES.iter().find(|n| **n == what).map(|n| Item::Note(n))
    }
}

impl Item {
    /// Parses the text form; the error says which word is wrong and what was expected.
    pub fn parse(text: &str) -> Result<Item, String> {
        let words: Vec<&str> = text.split_whitespace().collect();
        match words.as_slice() {
            [ZERO_ROWS, statement] => {
                Stmt::parse(statement).map(Item::ZeroRows).ok_or_else(|| format!("`{statement}` is no statement of the protocol"))
            }
            [NOTE, name] => Item::note(name).ok_or_else(|| format!("`{name}` is no counted note (one of {})", NOTES.join(", "))),
            [writer, transition] => transition_item(writer, transition, None),
            [writer, transition, context] => transition_item(writer, transition, Some(context)),
            _ => Err(format!("`{text}`: expected `musician|conductor FROM->TO [CONTEXT]`, `{ZERO_ROWS} STATEMENT` or `{NOTE} NAME`")),
        }
    }
}

fn transition_item(writer: &str, transition: &str, context: Option<&str>) -> Result<Item, String> {
    let writer = Writer::ALL
        .into_iter()
        .find(|w| w.as_str() == writer)
        .ok_or_else(|| format!("`{writer}`: the writer is `musician` or `conductor`"))?;
    let (from, to) = transition.split_once("->").ok_or_else(|| format!("`{transition}`: expected FROM->TO, e.g. watching->working"))?;
    let state = |s: &str| TaskState::parse(s).ok_or_else(|| format!("`{s}` is no task state"));
    let context = match context {
        None => None,
        Some(c) => Some(Context::ALL.into_iter().find(|k| k.as_str() == c).ok_or_else(|| {
            let known: Vec<&str> = Context::ALL.iter().map(|k| k.as_str()).collect();
            format!("`{c}` is no fault context (one of {})", known.join(", "))
        })?),
    };
    Ok(Item::Transition { writer, from: state(from)?, to: state(to)?, context })
}

impl fmt::Display for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Item::Transition { writer, from, to, context } => {
                write!(f, "{} {from}->{to}", writer.as_str())?;
                match context {
                    Some(context) => write!(f, " {}", context.as_str()),
                    None => Ok(()),
                }
            }
            Item::ZeroRows(stmt) => write!(f, "{ZERO_ROWS} {stmt}"),
            Item::Note(name) => write!(f, "{NOTE} {name}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_parses_back_from_its_text() {
        let items = [
            Item::Transition { writer: Writer::Musician, from: TaskState::Watching, to: TaskState::Working, context: None },
            Item::Transition {
                writer: Writer::Conductor,
                from: TaskState::NeedsReview,
                to: TaskState::FixProposed,
                context: Some(Context::DuringHang),
            },
            Item::ZeroRows(Stmt::Heartbeat),
            Item::Note("claim_blocked_intervention"),
        ];
        for item in items {
            assert_eq!(Item::parse(&item.to_string()), Ok(item));
        }
        assert_eq!(items[1].to_string(), "conductor needs_review->fix_proposed during-hang");
    }

    #[test]
    fn a_wrong_word_is_named() {
        for (text, message) in [
            ("musician watching->workin", "`workin` is no task state"),
            ("musicians watching->working", "the writer is `musician` or `conductor`"),
            ("musician watching-working", "expected FROM->TO"),
            ("musician watching->working after-lunch", "`after-lunch` is no fault context"),
            ("zero-rows drop_table", "`drop_table` is no statement"),
            ("note launch", "`launch` is no counted note"),
            ("musician", "expected `musician|conductor FROM->TO [CONTEXT]`"),
        ] {
            let e = Item::parse(text).expect_err(text);
            assert!(e.contains(message), "{text}: {e}");
        }
    }
}
