//! The base of every campaign: a command that runs many runs into one output folder (sweep,
//! explore crashes, explore schedules, search, compare, bench). What they all do the same way
//! is here, once:
//!
//! - `folder.rs`: the output folder, claimed with its lock and what the command owns there
//!   (the base adds its own: the marker, the journal, the scratch folder, `failures/`), its
//!   emptied sub-folders, and the scratch folder the runs are made in;
//! - `marker.rs`: the `INCOMPLETE` marker, there while the folder holds fewer runs than
//!   planned, and the order that keeps a killed command's folder honest (marked before the
//!   files are written, unmarked after);
//! - `ledger.rs`: the worker pool over a campaign's jobs (a panic is its job's row), and the
//!   rows of the finished runs as they finish: appended to the journal one by one (so a
//!   killed command keeps every finished run: sim/base/results_journal.rs), checkpointed into the
//!   CSV every few, counted on the progress line; and the reader of a CSV with its journal;
//! - `failures.rs`: the grouping of failing rows into distinct failures (first violated rule
//!   and end states), and the command's outcome;
//! - `save.rs`: a distinct failure saved: its run folder run again, its trace checked
//!   against the row's, its reports, and its replay file.

pub mod assumption;
pub mod baseline;
pub mod baseline_expiry;
pub mod bench;
pub mod calibrate;
pub mod compare;
pub mod conductor_findings;
pub mod context_table;
pub mod corpus;
pub mod explore;
pub mod failure_file;
pub mod fault_proof;
pub mod findings;
pub mod history;
pub mod judge;
pub mod judge_db;
pub mod judge_sources;
pub mod judge_tables;
pub mod manifest;
pub mod merge;
pub mod merge_keys;
pub mod overhead;
pub mod pair_details;
pub mod pool;
pub mod progress;
pub mod repaired_doc;
pub mod repaired_proof;
pub mod replay;
pub mod schedules;
pub mod search;
pub mod seed_scripts;
pub mod shipped_scope;
pub mod shrink;
pub mod swarm;
pub mod swarm_draw;
pub mod sweep;
pub mod sweep_figures;

mod failures;
mod folder;
mod ledger;
mod marker;
mod save;

pub use failures::{end_states, group, outcome, DistinctFailure, FailureRow};
pub use folder::{Campaign, FolderSpec};
pub use ledger::{map, read_rows, Ledger, CHECKPOINT_EVERY};
pub use marker::INCOMPLETE_MARKER;
pub use save::save_failure;
