//! The vocabulary: the words every layer of the simulator shares — actor names, task states,
//! message kinds and severities, statement names, protocol points and faults, rule ids, run outcomes, variant and profile names — as types. It imports nothing of
//! the simulator, so everything else can import it. Text becomes these types once, at the edge
//! (a scenario file, a trace row, a SQL file); inside, only the types travel.

pub mod actor;
pub mod fault;
pub mod message;
mod name_hash;
pub mod outcome;
pub mod point;
pub mod profile;
pub mod rule;
pub mod state;
pub mod statement;
pub mod statement_shape;
pub mod suggest;
pub mod variant_name;
pub mod word;

pub use actor::{ActorName, SessionPlace, WatcherKind};
pub use fault::{FaultKind, FaultName, PointFault, Whose};
pub use message::{MessageKind, Severity};
pub use name_hash::NameHash;
pub use outcome::{Ending, RunOutcome};
pub use point::{Point, When};
pub use profile::{check_profile_name, find_profile, Profile, DEFAULT_PROFILE, PROFILES};
pub use rule::{RuleId, RuleKind};
pub use state::TaskState;
pub use statement::Stmt;
pub use variant_name::{check_variant_name, VariantId, VARIANT_NAMES};
pub use word::{UnknownWord, Word};

/// The conductor's own task row (seed 004 state table: `task-00`).
pub const CONDUCTOR_TASK_ID: &str = "task-00";
/// The conductor's session id: the conductor is one session for the whole run.
pub const CONDUCTOR_SESSION_ID: &str = "conductor-session";

/// `task-NN` for task number NN (at least two digits, as seed 000's examples write it).
pub fn task_id(number: u64) -> String {
    format!("task-{number:02}")
}

/// The number of a `task-NN` id; `None` for anything else.
pub fn task_number(task_id: &str) -> Option<u64> {
    task_id.strip_prefix("task-")?.parse().ok()
}
