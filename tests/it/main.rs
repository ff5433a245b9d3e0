//! rehearsal's integration tests: one binary, one module per concern. Every test runs real
//! scenarios end to end (the built `rehearsal` binary or the library) and asserts on the
//! database, the trace and the verdict.

mod bad_input;
mod bench;
mod ceiling;
mod cli;
mod cli_extras;
mod clock;
mod compare;
mod conductor_crash;
mod conductor_policy;
mod context_control;
mod coverage;
mod determinism;
mod escalation;
mod examples;
mod exit_requested;
mod explore;
mod faults;
mod fifth_failure;
mod fuzz;
mod golden;
mod judge;
mod mutants;
mod nothing_lost;
mod out_folder;
mod own_sql;
mod protocol;
mod quickstart;
mod readme;
mod replay_paths;
mod replies_cite;
mod reports;
mod resumption;
mod schedules;
mod search;
mod seed_scripts;
mod support;
mod sweep;
mod sweep_summary;
mod transitions;
mod verification;
mod watchers;
