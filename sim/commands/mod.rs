//! The bodies of the `rehearsal` subcommands, one file a command family: each parses nothing
//! (clap did, with the shared argument groups of `args`), calls the library and says how it
//! went as an `Outcome`. sim/main.rs dispatches to them and maps the outcome to the exit code.

pub mod json_out;
pub mod new_scenario;

pub mod args;
pub mod bench;
pub mod calibrate;
pub mod compare;
pub mod corpus;
pub mod explore;
pub mod findings;
pub mod outcome;
pub mod record;
pub mod replay;
pub mod run;
pub mod scenarios;
pub mod search;
pub mod swarm;
pub mod sweep;

pub use outcome::Outcome;
