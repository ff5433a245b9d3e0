//! rehearsal: a deterministic discrete-event simulator and test harness for the
//! conductor/musician protocol over a shared SQLite `comms.db`. See ARCHITECTURE.md.

pub mod atomic;
pub mod bench;
pub mod clock;
pub mod compare;
pub mod conductor;
pub mod ctx;
pub mod db;
pub mod dist;
pub mod engine;
pub mod error;
pub mod faults;
pub mod findings;
pub mod handoff;
pub mod interrupt;
pub mod messages;
pub mod musician;
pub mod oracle;
pub mod overhead;
pub mod pool;
pub mod replay;
pub mod report;
pub mod rng;
pub mod run;
pub mod scenario;
pub mod session;
pub mod shrink;
pub mod sql_catalog;
pub mod sweep;
pub mod trace;
pub mod variant;
pub mod verdict;
pub mod vocab;
pub mod watcher;
