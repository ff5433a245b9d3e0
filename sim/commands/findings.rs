//! `rehearsal findings`: reports/FINDINGS.md (every disagreement, default against variant),
//! or reports/SEED-SCRIPTS.md, or docs/repaired-protocol.md.

use std::path::{Path, PathBuf};

use clap::Args;

use super::args::SeedRangeArg;
use super::Outcome;
use crate::error::Error;

#[derive(Args)]
pub struct FindingsArgs {
    #[command(flatten)]
    pub seeds: SeedRangeArg,
    /// The Markdown file to write [default: reports/FINDINGS.md, or reports/SEED-SCRIPTS.md].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Instead: run seed 000's scripts (scripts/seed-000/) at instants of every shipped
    /// scenario and compare their answers with the simulator's (sim/seed_scripts.rs).
    #[arg(long)]
    pub seed_scripts: bool,
    /// Instead: docs/repaired-protocol.md, the `repaired` profile's changes, their cost, the
    /// proof over --seeds of each strict suite and the necessity of each change
    /// (sim/repaired_doc.rs).
    #[arg(long, conflicts_with = "seed_scripts")]
    pub repaired: bool,
    /// With --repaired: the seeds of ci-smoke the cost is measured on.
    #[arg(long, default_value = "1..=50", requires = "repaired")]
    pub cost_seeds: String,
    /// Every variant against this protocol profile instead of the seeds' protocol.
    #[arg(long = "protocol", value_name = "NAME", conflicts_with = "seed_scripts")]
    pub protocol: Option<String>,
}

pub fn findings(args: FindingsArgs, quiet: bool) -> Result<Outcome, Error> {
    let (out, md) = if args.seed_scripts {
        let (_, md) = crate::seed_scripts::seed_scripts(Path::new("scenarios"), Path::new("scripts/seed-000"))?;
        (args.out.unwrap_or_else(|| PathBuf::from("reports/SEED-SCRIPTS.md")), md)
    } else if args.repaired {
        args.seeds.seeds.announce(quiet);
        let cost_seeds = crate::compare::parse_seeds(&args.cost_seeds)?;
        let runs_dir = crate::findings::default_runs_dir().join("repaired");
        let md = crate::repaired_doc::document(&args.seeds.seeds.list("--seeds")?, &cost_seeds, &runs_dir)?;
        (args.out.unwrap_or_else(crate::repaired_doc::default_out), md)
    } else {
        args.seeds.seeds.announce(quiet);
        let runs_dir = crate::findings::default_runs_dir();
        let md = crate::findings::findings(&args.seeds.seeds.list("--seeds")?, &runs_dir, args.protocol.as_deref())?;
        (args.out.unwrap_or_else(|| PathBuf::from("reports/FINDINGS.md")), md)
    };
    crate::atomic::write_atomically(&out, md.as_bytes())?;
    println!("written {}", out.display());
    Ok(Outcome::PASS)
}
