//! The base layer (tests/it/layers.rs, ARCHITECTURE.md "Layers").

pub mod atomic;
pub mod clock;
pub mod console;
pub mod csv_rows;
pub mod dist;
pub mod error;
pub mod input_file;
pub mod interrupt;
pub mod keep_memory;
pub mod live_files;
pub mod night;
pub mod out_folder;
pub mod out_lock;
pub mod out_owner;
pub mod out_probe;
pub mod panic_guard;
pub mod results_journal;
pub mod rng;
pub mod scratch;
pub mod seed_set;
pub mod shell;
pub mod time_text;
pub mod trace_rows;
pub mod wal_memory;
