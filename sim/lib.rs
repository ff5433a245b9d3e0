//! rehearsal: a deterministic discrete-event simulator and test harness for the
//! conductor/musician protocol over a shared SQLite `comms.db`. See ARCHITECTURE.md.

pub mod actors;
pub mod base;
pub mod campaign;
pub mod commands;
pub mod input;
pub mod judging;
pub mod plan;
pub mod report;
pub mod run;
pub mod trace;
pub mod vocab;
pub mod world;
