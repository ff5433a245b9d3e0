//! `rehearsal list` (the scenario files under a folder) and `rehearsal new` (a template).

use std::path::PathBuf;

use clap::Args;

use super::Outcome;
use crate::base::error::Error;

#[derive(Args)]
pub struct ListArgs {
    /// The folder to list (searched recursively for .toml files).
    #[arg(default_value = "scenarios")]
    pub dir: PathBuf,
}

pub fn list(args: ListArgs) -> Result<Outcome, Error> {
    print!("{}", crate::input::scenario_list::render(&crate::input::scenario_list::list(&args.dir)?));
    Ok(Outcome::PASS)
}

#[derive(Args)]
pub struct NewArgs {
    /// The scenario file to write, e.g. scenarios/mine.toml.
    pub file: PathBuf,
    /// Replace the file if it exists.
    #[arg(long)]
    pub force: bool,
}

pub fn new(args: NewArgs) -> Result<Outcome, Error> {
    crate::commands::new_scenario::write(&args.file, args.force)?;
    println!("written      {}", args.file.display());
    println!("run it with  {} run {}", crate::base::shell::program(), crate::base::shell::quote_path(&args.file));
    Ok(Outcome::PASS)
}
