//! `rehearsal findings`: reports/FINDINGS.md (every disagreement, default against variant),
//! or reports/SEED-SCRIPTS.md, or docs/repaired-protocol.md.

use std::path::{Path, PathBuf};

use clap::Args;

use super::args::SeedRangeArg;
use super::Outcome;
use crate::base::error::Error;

#[derive(Args)]
pub struct FindingsArgs {
    #[command(flatten)]
    pub seeds: SeedRangeArg,
    /// The Markdown file to write [default: reports/FINDINGS.md, or reports/SEED-SCRIPTS.md].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Instead: run seed 000's scripts (scripts/seed-000/) at instants of every shipped
    /// scenario and compare their answers with the simulator's (sim/campaign/seed_scripts.rs).
    #[arg(long)]
    pub seed_scripts: bool,
    /// Instead: docs/repaired-protocol.md, the `repaired` profile's changes, their cost, the
    /// proof over --seeds of each strict suite and the necessity of each change
    /// (sim/campaign/repaired_doc.rs).
    #[arg(long, conflicts_with = "seed_scripts")]
    pub repaired: bool,
    /// With --repaired: the seeds of ci-smoke the cost is measured on.
    #[arg(long, default_value = "1..=50", requires = "repaired")]
    pub cost_seeds: String,
    /// With --repaired: the sizes of the proof's parts beyond the sweeps (sim/campaign/repaired_proof.rs).
    #[command(flatten)]
    pub proof: ProofSizeArgs,
    /// Every variant against this protocol profile instead of the seeds' protocol.
    #[arg(long = "protocol", value_name = "NAME", conflicts_with = "seed_scripts")]
    pub protocol: Option<String>,
    /// Instead: each finding (or with --repaired, each necessity) under every conductor profile
    /// named (comma-separated, the first the reference; docs/protocol.md C110), over --seeds;
    /// the section is spliced into --out (reports/FINDINGS.md, docs/repaired-protocol.md).
    #[arg(long, value_delimiter = ',', value_name = "A,B,…", conflicts_with_all = ["seed_scripts", "protocol"])]
    pub conductors: Vec<String>,
    /// With --conductors or --context-table: runs at once [default: the machine's cores].
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Instead: docs/protocol.md D7's measured table, each reading of the context thresholds
    /// on scenarios/context-thresholds.toml over --seeds, counted from the run folders and
    /// spliced between its markers in --out [default: docs/protocol.md]
    /// (sim/campaign/context_table.rs).
    #[arg(long, conflicts_with_all = ["seed_scripts", "repaired", "protocol", "conductors"])]
    pub context_table: bool,
}

/// `findings --repaired`: how much of each proof part runs (written into the document).
#[derive(Args)]
pub struct ProofSizeArgs {
    /// `explore crashes --hangs` explores the first this many points of quickstart's run and
    /// of the ci-smoke seed's (0: every point).
    #[arg(long, default_value_t = 100)]
    pub explore_points: u64,
    /// The ci-smoke seed `explore crashes --hangs` explores (0: that part is not run).
    #[arg(long, default_value_t = 1)]
    pub explore_ci_seed: u64,
    /// `search --runs` on random-faults (0: not run).
    #[arg(long, default_value_t = 200)]
    pub search_runs: usize,
    /// `explore schedules --bound` on the double-launch scenarios.
    #[arg(long, default_value_t = 1)]
    pub schedules_bound: usize,
    /// Worker threads of the proof's explorations, search and shipped runs.
    #[arg(long, default_value_t = 2)]
    pub proof_jobs: usize,
}

/// `findings --conductors`: the section measured and spliced into its document.
fn under_conductors(args: FindingsArgs, quiet: bool) -> Result<Outcome, Error> {
    use crate::campaign::conductor_findings as cf;
    args.seeds.seeds.announce(quiet);
    let seeds = args.seeds.seeds.list("--seeds")?;
    let jobs = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    let scratch = crate::campaign::findings::default_runs_dir().join("conductors");
    let out = match (args.out, args.repaired) {
        (Some(out), _) => out,
        (None, true) => crate::campaign::repaired_doc::default_out(),
        (None, false) => PathBuf::from("reports/FINDINGS.md"),
    };
    // The section goes into a document that exists: said before the runs, not after.
    if !out.is_file() {
        return Err(Error::input(format!("{}: no such document to splice the section into", out.display())));
    }
    let (heading, section) = if args.repaired {
        (cf::NECESSITY_HEADING, cf::necessity_section(&args.conductors, &seeds, jobs, &scratch, None)?)
    } else {
        (cf::FINDINGS_HEADING, cf::findings_section(&args.conductors, &seeds, jobs, &scratch)?)
    };
    let _ = std::fs::remove_dir_all(&scratch);
    cf::splice(&out, heading, &section)?;
    println!("written {} (section \"{}\")", out.display(), heading.trim_start_matches("## "));
    Ok(Outcome::PASS)
}

/// `findings --context-table`: D7's table measured and spliced into its document.
fn context_table(args: FindingsArgs, quiet: bool) -> Result<Outcome, Error> {
    use crate::campaign::context_table as ct;
    args.seeds.seeds.announce(quiet);
    let seeds = args.seeds.seeds.list("--seeds")?;
    let jobs = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    let out = args.out.unwrap_or_else(|| PathBuf::from("docs/protocol.md"));
    // The markers are checked before the runs, not after.
    ct::marked_span(&out)?;
    let scratch = crate::campaign::findings::default_runs_dir().join("context-table");
    let text = ct::measure(&seeds, jobs, &scratch)?;
    let _ = std::fs::remove_dir_all(&scratch);
    ct::splice_between(&out, &text)?;
    println!("written {} (D7's measured table)", out.display());
    Ok(Outcome::PASS)
}

pub fn findings(args: FindingsArgs, quiet: bool) -> Result<Outcome, Error> {
    if !args.conductors.is_empty() {
        return under_conductors(args, quiet);
    }
    if args.context_table {
        return context_table(args, quiet);
    }
    let default_out = if args.seed_scripts {
        PathBuf::from("reports/SEED-SCRIPTS.md")
    } else if args.repaired {
        crate::campaign::repaired_doc::default_out()
    } else {
        PathBuf::from("reports/FINDINGS.md")
    };
    let out = args.out.clone().unwrap_or(default_out);
    // Before any run: the document it would replace must be one findings wrote (issue 41).
    refuse_foreign_document(&out)?;
    let md = if args.seed_scripts {
        crate::campaign::seed_scripts::seed_scripts(Path::new("scenarios"), Path::new("scripts/seed-000"))?.1
    } else if args.repaired {
        args.seeds.seeds.announce(quiet);
        let cost_seeds = crate::campaign::compare::parse_seeds(&args.cost_seeds)?;
        let runs_dir = crate::campaign::findings::default_runs_dir().join("repaired");
        let p = args.proof;
        let sizes = crate::campaign::repaired_proof::ProofSizes {
            explore_points: p.explore_points,
            explore_ci_seed: p.explore_ci_seed,
            search_runs: p.search_runs,
            schedules_bound: p.schedules_bound,
            jobs: p.proof_jobs.max(1),
        };
        crate::campaign::repaired_doc::document(&args.seeds.seeds.list("--seeds")?, &cost_seeds, &sizes, &runs_dir)?
    } else {
        args.seeds.seeds.announce(quiet);
        let runs_dir = crate::campaign::findings::default_runs_dir();
        crate::campaign::findings::findings(&args.seeds.seeds.list("--seeds")?, &runs_dir, args.protocol.as_deref())?
    };
    crate::base::atomic::write_atomically(&out, md.as_bytes())?;
    println!("written {}", out.display());
    Ok(Outcome::PASS)
}

/// An existing `--out` is replaced only when it is a document rehearsal generated: a regular
/// file with a `Generated by` line among its first lines, as every document findings writes
/// has. Anything else is the user's: exit 2 naming it (issue 41: never replace what no
/// rehearsal command wrote).
fn refuse_foreign_document(out: &Path) -> Result<(), Error> {
    let Ok(meta) = std::fs::symlink_metadata(out) else { return Ok(()) };
    let ours = meta.is_file()
        && std::fs::read(out).is_ok_and(|bytes| {
            String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]).lines().take(5).any(|l| l.starts_with("Generated by `"))
        });
    if ours {
        return Ok(());
    }
    Err(Error::input(format!(
        "{}: not a document rehearsal findings wrote (no `Generated by` line at its head): refused; move it away or name another --out",
        out.display()
    )))
}
