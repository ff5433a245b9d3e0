//! `rehearsal record install DB` / `rehearsal record remove DB`: the history recorder of a
//! deployment's comms.db (scenarios/recorder/install.sql, sim/world/recorder.rs).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::base::error::Error;
use crate::commands::outcome::Outcome;
use crate::world::recorder::{self, Change};

#[derive(Subcommand)]
pub enum RecordCommand {
    /// Add the append-only history table and its triggers to DB (idempotent; changes no row of
    /// the two tables; waits up to 10 s for a live database's write lock).
    Install(RecordArgs),
    /// Drop the recording triggers from DB; the history stays for `judge --db`.
    Remove(RecordArgs),
}

#[derive(Args)]
pub struct RecordArgs {
    /// The comms.db (seed 004's schema).
    pub db: PathBuf,
}

pub fn record(command: RecordCommand) -> Result<Outcome, Error> {
    match command {
        RecordCommand::Install(args) => {
            let change = recorder::install_at(&args.db)?;
            let what = if change == Change::Done { "installed" } else { "already installed: nothing changed" };
            println!("{}: recorder {what}", args.db.display());
            println!("each session's connection names its writer with (once per connection):");
            println!("  {}", recorder::identity_statement("SESSION_ID"));
        }
        RecordCommand::Remove(args) => {
            let change = recorder::remove_at(&args.db)?;
            let what = if change == Change::Done { "removed (the history stays)" } else { "not installed: nothing changed" };
            println!("{}: recorder {what}", args.db.display());
        }
    }
    Ok(Outcome::PASS)
}
