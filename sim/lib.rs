//! rehearsal: a deterministic discrete-event simulator and test harness for the
//! conductor/musician protocol over a shared SQLite `comms.db`. See ARCHITECTURE.md.

// Every line the crate prints goes through sim/base/console.rs, which never panics on a
// closed or full stream (issue 41); these shadow the standard macros in every module below.
macro_rules! println {
    () => { $crate::base::console::out(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::base::console::out(format_args!("{}\n", format_args!($($arg)*))) };
}
macro_rules! print {
    ($($arg:tt)*) => { $crate::base::console::out(format_args!($($arg)*)) };
}
macro_rules! eprintln {
    () => { $crate::base::console::err(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::base::console::err(format_args!("{}\n", format_args!($($arg)*))) };
}

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
