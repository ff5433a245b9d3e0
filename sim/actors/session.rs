//! What one musician session keeps in memory, shared by the session and its watchers.
//!
//! It lives in an `Rc` held only by the session's own futures, so when the engine drops a
//! session (a crash) this memory goes with it, as a dead process's would.

use std::cell::RefCell;
use std::rc::Rc;

/// Why a watcher exited, as the musician learns it (000 "Watcher Lifecycle Summary").
#[derive(Clone, Debug, PartialEq)]
pub enum WatcherReport {
    /// The background watcher saw new conductor messages (ids ascending).
    Messages(Vec<i64>),
    /// The background watcher reached its iteration cap (004: 500) and must be relaunched.
    IterationsExhausted,
    /// The background watcher found the task `exit_requested`: the conductor asks the session
    /// to prepare a handoff and exit (docs/protocol.md D16).
    ExitRequested,
    /// The background watcher's heartbeat changed no row under fencing: the task is no longer
    /// the session's (docs/protocol.md D11), and the session stops as at its own fenced write.
    FencedOut,
}

#[derive(Debug, Default)]
pub struct SessionMemory {
    /// 000 "Message Deduplication": the highest conductor message id already handled.
    pub last_processed_message_id: i64,
    /// The detect-by-timestamp reading: the newest conductor message timestamp handled.
    pub last_processed_timestamp: String,
    /// Reports of background watchers that exited since the musician last looked.
    pub inbox: Vec<WatcherReport>,
    /// How the last pause watcher ended.
    pub pause_outcome: Option<PauseOutcome>,
    /// The conductor asked this session to exit (docs/protocol.md D16), as a watcher or the
    /// musician found it; a watcher reports it once.
    pub exit_requested: bool,
    /// When the background watcher issued its last message poll that came back with nothing
    /// (000 "Background Watcher" step 1): a woken musician whose watcher has not polled since
    /// the wake (issued before it, or still under way) polls itself (docs/protocol.md C180).
    pub empty_poll_issued_ms: i64,
}

/// How a pause watcher ended (000 "Pause Watcher (During Conductor Wait)").
#[derive(Clone, Debug, PartialEq)]
pub enum PauseOutcome {
    /// The task left `needs_review` / `error`: the conductor answered with this state.
    Answered(String),
    /// 15 minutes without an answer and the conductor's heartbeat is stale: TIMEOUT.
    TimedOut,
    /// The pause watcher's heartbeat changed no row under fencing: the task is another
    /// session's, and the session stops instead of reporting a timeout.
    FencedOut,
}

pub type SharedMemory = Rc<RefCell<SessionMemory>>;
