//! liveness: after the fault phase every task reaches `complete` and the conductor exits.
//! Judged from comms.db at the end of the run (sim/judging/verdict.rs); this unit is its documentation.

use super::{Meaning, RuleDoc};
use crate::vocab::RuleId;

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::Liveness,
    says: "after the fault phase every task reaches complete and the conductor exits",
    seed: "002 \"Terminal States\"; 004 stop-hook exit criteria (musician: complete/exited; conductor: complete/exit_requested)",
    consumes: "the end of the run",
    truth: "every task row's final state in comms.db; whether the run hit its time limit",
    meaning: Meaning::ProtocolFlaw,
};
