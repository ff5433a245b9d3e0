//! `rehearsal calibrate statements|load|predict`: the command line of the calibration
//! (sim/campaign/calibrate/, docs/calibration.md), parsed and dispatched here like every command.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::base::error::Error;
use crate::campaign::calibrate::{closed_loop, load, saved, statements};
use crate::commands::outcome::Outcome;

#[derive(Subcommand)]
pub enum CalibrateCommand {
    /// Time the protocol's statements through `sqlite3` processes (WAL, the shell's default
    /// synchronous) on a comms.db of a run's size; write calibration.toml (statement_ms,
    /// write_hold_ms, ready to paste) and statements.csv (the raw samples).
    Statements(StatementsArgs),
    /// Replay a scenario's statements as a real multi-process load on a WAL comms.db and
    /// compare its lock waits and SQLITE_BUSY with rehearsal's prediction (comparison.md).
    Load(LoadArgs),
    /// Set the current model beside a load measured before (a `calibrate load` folder),
    /// without measuring again: rewrites its comparison.md and comparison.csv.
    Predict(PredictArgs),
    /// One actor's process of a closed-loop load (started by `calibrate load --closed-loop`).
    #[command(hide = true)]
    Worker(closed_loop::WorkerArgs),
}

#[derive(Args)]
pub struct StatementsArgs {
    /// The scenario whose run gives the statements and the comms.db.
    #[arg(default_value = "scenarios/quickstart.toml")]
    scenario: PathBuf,
    /// Overrides the scenario's run.seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Statements to time, evenly spread over the run.
    #[arg(long, default_value_t = 200)]
    samples: usize,
    /// Stop timing after this many seconds, whatever is left.
    #[arg(long, default_value_t = 60)]
    max_seconds: u64,
    /// Output folder (on the file system to measure: a tmpfs has no fsync to pay).
    #[arg(long, default_value = "reports/calibration")]
    out: PathBuf,
    /// Replace what an earlier calibration wrote there.
    #[arg(long)]
    force: bool,
    /// The sqlite3 shell to run.
    #[arg(long, default_value = "sqlite3")]
    sqlite3: PathBuf,
}

#[derive(Args)]
pub struct LoadArgs {
    /// The scenario whose load to replay, e.g. scenarios/faults/contention.toml.
    scenario: PathBuf,
    /// Overrides the scenario's run.seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Workers, each running one sqlite3 process at a time (default: tasks + 1, at most 32).
    #[arg(long)]
    procs: Option<usize>,
    /// Longest replay, in seconds: statements due later are not run.
    #[arg(long, default_value_t = 60)]
    seconds: u64,
    /// Simulated time runs this many times faster in the load (default: the whole run in --seconds).
    #[arg(long)]
    speedup: Option<u32>,
    /// The load's `.timeout` in ms (default: the scenario's busy_timeout_ms / speedup).
    #[arg(long)]
    busy_timeout_ms: Option<u64>,
    /// Hold one connection open on the database during the load, as the sessions' comms-link
    /// server does: no sqlite3 process is then the last to close and checkpoint the WAL.
    #[arg(long)]
    keep_open: bool,
    /// The load as sessions make it: a process and a connection per actor (conductor, session,
    /// watcher), its statements in order, each the simulated gap / K after the previous ended.
    #[arg(long)]
    closed_loop: bool,
    /// Output folder (on the file system to measure).
    #[arg(long, default_value = "reports/calibration/load")]
    out: PathBuf,
    /// Replace what an earlier load wrote there.
    #[arg(long)]
    force: bool,
    /// The sqlite3 shell to run.
    #[arg(long, default_value = "sqlite3")]
    sqlite3: PathBuf,
}

#[derive(Args)]
pub struct PredictArgs {
    /// A folder `calibrate load` wrote (load.csv and what it replayed).
    dir: PathBuf,
    /// The scenario the load ran, for a folder without scenario.toml (a load of before).
    #[arg(long)]
    scenario: Option<PathBuf>,
    /// For a folder without load.json (a load of before): the seed it ran.
    #[arg(long)]
    seed: Option<u64>,
    /// For a folder without load.json: its speedup K (comparison.md: "at Kx speed").
    #[arg(long)]
    speedup: Option<u32>,
    /// For a folder without load.json: its `.timeout` in ms.
    #[arg(long)]
    busy_timeout_ms: Option<u64>,
    /// For a folder without load.json: it held a connection open.
    #[arg(long)]
    keep_open: bool,
    /// For a folder without load.json: it was closed loop.
    #[arg(long)]
    closed_loop: bool,
    /// Another load of the same scenario and options: the closed-loop prediction draws its
    /// holds and service times from it, not from the load it is set beside.
    #[arg(long)]
    inputs_from: Option<PathBuf>,
}

/// Runs one `calibrate` command and prints its report (a measurement: it passes or errs).
pub fn calibrate(command: CalibrateCommand) -> Result<Outcome, Error> {
    match command {
        CalibrateCommand::Statements(a) => {
            let options = statements::StatementsOptions {
                scenario: a.scenario,
                seed: a.seed,
                samples: a.samples,
                max_seconds: a.max_seconds,
                out: a.out,
                force: a.force,
                sqlite3: a.sqlite3,
            };
            print!("{}", statements::calibrate_statements(&options)?.render());
        }
        CalibrateCommand::Load(a) => {
            let options = load::LoadOptions {
                scenario: a.scenario,
                seed: a.seed,
                procs: a.procs,
                seconds: a.seconds,
                speedup: a.speedup,
                busy_timeout_ms: a.busy_timeout_ms,
                keep_open: a.keep_open,
                closed_loop: a.closed_loop,
                out: a.out,
                force: a.force,
                sqlite3: a.sqlite3,
            };
            print!("{}", load::calibrate_load(&options)?.render());
        }
        CalibrateCommand::Predict(a) => {
            let options = saved::PredictOptions {
                dir: a.dir,
                scenario: a.scenario,
                seed: a.seed,
                speedup: a.speedup,
                busy_timeout_ms: a.busy_timeout_ms,
                keep_open: a.keep_open,
                closed_loop: a.closed_loop,
                inputs_from: a.inputs_from,
            };
            print!("{}", saved::predict_saved(&options)?.render());
        }
        CalibrateCommand::Worker(a) => closed_loop::worker(&a)?,
    }
    Ok(Outcome::PASS)
}
