//! `rehearsal compare`: the same seeds under several variants, side by side.

use std::path::PathBuf;

use clap::Args;

use super::args::{ForceArg, JobsArg, JsonArg, SeedRangeArg, SqlArg};
use super::Outcome;
use crate::base::error::Error;

#[derive(Args)]
pub struct CompareArgs {
    /// Scenario file (TOML), e.g. scenarios/faults/zombie.toml.
    pub scenario: PathBuf,
    /// Comma-separated columns: variant names, `default` (the scenario as it is), protocol
    /// profiles (`repaired`, `seeds`) or protocol SQL files (ending .sql), e.g.
    /// default,repaired,fencing,my-claim.sql. Exit 1 when any run fails.
    #[arg(long, value_delimiter = ',', default_value = "default")]
    pub variants: Vec<String>,
    #[command(flatten)]
    pub seeds: SeedRangeArg,
    /// Protocol profile of every column, in place of the scenario's `[protocol] profile`.
    #[arg(long = "protocol", value_name = "NAME")]
    pub protocol: Option<String>,
    /// Conductor profile of every column, in place of the scenario's `[conductor] profile`
    /// (docs/protocol.md C110).
    #[arg(long, value_name = "NAME")]
    pub conductor: Option<String>,
    /// Folder for summary.md and compare.csv (a row per run); defaults to
    /// reports/compare/<scenario>/.
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub jobs: JobsArg,
    /// Keep every run's folder (trace.csv, comms.db, …) under --out as <column>-<seed>/;
    /// without it runs are made in a scratch folder and removed.
    #[arg(long)]
    pub keep_runs: bool,
    #[command(flatten)]
    pub force: ForceArg,
    #[command(flatten)]
    pub sql: SqlArg,
    #[command(flatten)]
    pub json: JsonArg,
}

pub fn compare(args: CompareArgs, quiet: bool) -> Result<Outcome, Error> {
    args.seeds.seeds.announce(quiet);
    let out = args.out.unwrap_or_else(|| crate::campaign::compare::default_out(&args.scenario));
    let options = crate::campaign::compare::CompareOptions {
        scenario: &args.scenario,
        columns: &args.variants,
        seeds: &args.seeds.seeds.list("--seeds")?,
        out: &out,
        force: args.force.force,
        sql: args.sql.sql.as_deref(),
        protocol: args.protocol.as_deref(),
        conductor: args.conductor.as_deref(),
        jobs: args.jobs.get(),
        keep_runs: args.keep_runs,
    };
    let (table, sql, failed) = crate::campaign::compare::compare_judged(&options)?;
    if args.json.json {
        println!("{}", crate::commands::json_out::compare(&table, &sql, &out));
    } else {
        print!("{table}\nprotocol SQL of each column:\n{sql}");
        println!("per run      {}", out.join("compare.csv").display());
    }
    // README's exit table: 1 when a run failed (a violation its scenario allows is no failure).
    Ok(if failed { Outcome::FAIL } else { Outcome::PASS })
}
