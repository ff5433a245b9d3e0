//! `rehearsal search`: coverage-guided search beside a random sweep of the same size.

use std::path::PathBuf;

use clap::Args;

use super::args::{ForceArg, JobsArg, ScratchArg, VariantArgs};
use super::Outcome;
use crate::base::error::Error;
use crate::vocab::FaultName;

#[derive(Args)]
pub struct SearchArgs {
    /// Scenario file (TOML), e.g. scenarios/faults/random-faults.toml.
    pub scenario: PathBuf,
    /// Runs of each side: the search's, and the random sweep's beside it.
    #[arg(long)]
    pub runs: usize,
    /// The search's seed: its mutations' stream and the random sweep's seeds.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Empty the scenario's `[expect] allowed` (in a copy): every violation counts.
    #[arg(long)]
    pub strict: bool,
    #[command(flatten)]
    pub jobs: JobsArg,
    #[command(flatten)]
    pub variants: VariantArgs,
    /// The fault kinds the search places at points its runs reached, comma-separated (any
    /// other than crash and hang is opt-in).
    #[arg(long, value_delimiter = ',', value_parser = super::args::fault_name(), default_values_t = FaultName::SEARCHED)]
    pub faults: Vec<FaultName>,
    /// Output folder: search.csv, summary.md, corpus/, failures/.
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub force: ForceArg,
    #[command(flatten)]
    pub scratch: ScratchArg,
}

/// `search`: a violation the search found fails it (1), a run's harness error is 3, Ctrl-C 130.
pub fn search(args: SearchArgs, quiet: bool) -> Result<Outcome, Error> {
    let options = crate::campaign::search::SearchOptions {
        scenario: args.scenario,
        runs: args.runs,
        seed: args.seed,
        strict: args.strict,
        protocol: args.variants.protocol,
        variants: args.variants.variants,
        faults: args.faults,
        jobs: args.jobs.get(),
        out: args.out,
        scratch: args.scratch.scratch,
        progress: !quiet,
        force: args.force.force,
    };
    let started = std::time::Instant::now();
    crate::base::interrupt::install();
    let found = crate::campaign::search::search(&options)?;
    if !found.complete() {
        println!(
            "incomplete   interrupted; results kept, marked in {}",
            options.out.join(crate::campaign::search::INCOMPLETE_MARKER).display()
        );
    }
    print!("{}", found.render());
    println!("search.csv   {}", options.out.join("search.csv").display());
    println!("summary      {}", options.out.join("summary.md").display());
    // Wall time goes to stdout only; the files do not depend on it.
    println!("wall         {:.1} s with {} jobs", started.elapsed().as_secs_f64(), options.jobs);
    Ok(if found.interrupted && !found.complete() { Outcome::Interrupted } else { Outcome::Runs(found.outcome()) })
}
