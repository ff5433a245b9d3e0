//! rehearsal's integration tests: one binary, one module per concern. Every test runs real
//! scenarios end to end (the built `rehearsal` binary or the library) and asserts on the
//! database, the trace and the verdict.

mod bad_input;
mod bench;
mod ceiling;
mod clock;
mod compare;
mod coverage;
mod determinism;
mod escalation;
mod examples;
mod explore;
mod faults;
mod fifth_failure;
mod fuzz;
mod golden;
mod judge;
mod mutants;
mod nothing_lost;
mod protocol;
mod quickstart;
mod reports;
mod resumption;
mod seed_scripts;
mod support;
mod sweep;
mod transitions;
mod watchers;
