//! `rehearsal swarm`: the repaired profile over generated scenarios (sim/campaign/swarm.rs).

use std::path::PathBuf;

use clap::Args;

use super::args::{ForceArg, JobsArg};
use super::Outcome;
use crate::base::error::Error;

#[derive(Args)]
pub struct SwarmArgs {
    /// The swarm's seed: every scenario is drawn from it and its index.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// How many scenarios to draw.
    #[arg(long, default_value_t = 100)]
    pub scenarios: usize,
    /// Seeds 1..=M of each scenario whose fault-free run passes.
    #[arg(long, default_value_t = 10)]
    pub seeds_per: u64,
    /// Output folder: scenarios/, failures/, pairs.csv, scenarios.csv, swarm.md.
    #[arg(long, default_value = "reports/swarm")]
    pub out: PathBuf,
    /// Also write the swarm section into this document (docs/repaired-protocol.md), replacing
    /// its `## The swarm` section.
    #[arg(long)]
    pub doc: Option<PathBuf>,
    /// Shrink each failing pair (`rehearsal shrink`) into `failures/NAME-sSEED/shrunk.toml`,
    /// its replay file `failure.toml` beside it; pairs.csv names it.
    #[arg(long)]
    pub shrink: bool,
    #[command(flatten)]
    pub jobs: JobsArg,
    #[command(flatten)]
    pub force: ForceArg,
}

/// `swarm`: exit 1 when a failing pair falls under no assumption, 0 otherwise.
pub fn swarm(args: SwarmArgs, quiet: bool) -> Result<Outcome, Error> {
    let options = crate::campaign::swarm::SwarmOptions {
        seed: args.seed,
        scenarios: args.scenarios,
        seeds_per: args.seeds_per,
        out: args.out.clone(),
        jobs: args.jobs.get(),
        progress_every: if quiet { usize::MAX } else { 500 },
        shrink: args.shrink,
    };
    if !quiet {
        eprintln!(
            "swarm: seed {}, {} scenarios, seeds 1..={} each, into {}",
            args.seed,
            args.scenarios,
            args.seeds_per,
            args.out.display()
        );
    }
    // The folder's lock and record first, as every command that writes a folder (issue 41):
    // a folder in use, or holding a file no rehearsal command wrote, is refused.
    let _lock = crate::base::out_folder::claim(&args.out, crate::campaign::swarm::OWNED, args.force.force)?;
    crate::base::interrupt::install();
    let found = crate::campaign::swarm::swarm(&options)?;
    let mut md = String::new();
    crate::campaign::swarm::section(&mut md, &found);
    crate::base::atomic::write_atomically(&args.out.join("swarm.md"), md.as_bytes())?;
    if found.not_run > 0 {
        // Ctrl-C: what finished is written, the folder stays marked, and no document is spliced.
        crate::campaign::swarm::mark_interrupted(&args.out, found.not_run)?;
        eprintln!("swarm: interrupted, {} run(s) not started; the finished ones are in {}", found.not_run, args.out.display());
        return Ok(Outcome::Interrupted);
    }
    crate::campaign::swarm::unmark(&args.out)?;
    if let Some(doc) = &args.doc {
        crate::campaign::swarm::splice_section(doc, &md)?;
    }
    println!(
        "swarm seed {}: {} scenarios, {} swept, {} pairs, {} failing, {} unexplained ({})",
        args.seed,
        args.scenarios,
        found.swept,
        found.rows.len(),
        found.failing().count(),
        found.unexplained(),
        args.out.join("pairs.csv").display()
    );
    Ok(if found.unexplained() == 0 { Outcome::PASS } else { Outcome::FAIL })
}
