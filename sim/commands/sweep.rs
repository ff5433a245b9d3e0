//! `rehearsal sweep` (every scenario × seed pair in parallel) and `rehearsal merge` (the
//! shards of one sweep joined): their stdout lines.

use std::path::{Path, PathBuf};

use clap::Args;

use super::args::{
    parse_seeds, parse_shard, BaselineArg, ForceArg, JobsArg, JsonArg, RequireCoverageArg, ScratchArg, Seeds, SqlArg, VariantArgs,
};
use super::Outcome;
use crate::base::error::Error;
use crate::vocab::RunOutcome;

#[derive(Args)]
pub struct SweepArgs {
    /// Scenario files (TOML), e.g. scenarios/quickstart.toml scenarios/faults/*.toml.
    #[arg(required = true)]
    pub scenarios: Vec<PathBuf>,
    /// Seeds of every scenario: N, A..B (B excluded) or A..=B; default: each scenario's own
    /// run.seed (the shipped suite as the golden file runs it).
    #[arg(long, value_parser = parse_seeds)]
    pub seeds: Option<Seeds>,
    #[command(flatten)]
    pub jobs: JobsArg,
    /// Run only shard I of N (1-based), e.g. 2/4.
    #[arg(long, value_parser = parse_shard)]
    pub shard: Option<(usize, usize)>,
    /// Stop starting new pairs after the first failure (with --baseline: the first regression).
    #[arg(long)]
    pub fail_fast: bool,
    /// Run every pair twice and fail on any difference in trace or database bytes.
    #[arg(long)]
    pub check_determinism: bool,
    #[command(flatten)]
    pub variants: VariantArgs,
    #[command(flatten)]
    pub require: RequireCoverageArg,
    /// Output folder: results.csv, junit.xml, summary.md, coverage.csv, failures/.
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub force: ForceArg,
    #[command(flatten)]
    pub sql: SqlArg,
    #[command(flatten)]
    pub scratch: ScratchArg,
    #[command(flatten)]
    pub baseline: BaselineArg,
    /// Write the pairs' outcomes to the --baseline file (all of it), then judge them by it.
    #[arg(long, requires = "baseline")]
    pub bless: bool,
    /// Fail (exit 1) when a declared fault kind, or a scripted fault, never fired in any pair
    /// of its scenario, naming it.
    #[arg(long)]
    pub require_faults_fired: bool,
    /// With --baseline: keep the run folder of a known failure too (by default a known
    /// failure is a line of failures/known.txt; a regression keeps its folder).
    #[arg(long, requires = "baseline")]
    pub keep_known: bool,
    #[command(flatten)]
    pub json: JsonArg,
}

pub fn sweep(args: SweepArgs, quiet: bool) -> Result<Outcome, Error> {
    if let Some(seeds) = &args.seeds {
        // A shard says how many pairs it runs itself (sweep::sweep): not the whole range.
        seeds.announce(quiet || args.shard.is_some());
    }
    let options = crate::campaign::sweep::SweepOptions {
        scenarios: args.scenarios,
        seeds: args.seeds.map(|s| s.0).unwrap_or_default(),
        protocol: args.variants.protocol,
        variants: args.variants.variants,
        jobs: args.jobs.get(),
        shard: args.shard,
        fail_fast: args.fail_fast,
        check_determinism: args.check_determinism,
        out: args.out,
        progress_every: if quiet { 0 } else { 100 },
        require_coverage: args.require.require_coverage,
        force: args.force.force,
        sql: args.sql.sql,
        scratch: args.scratch.scratch,
        baseline: args.baseline.baseline,
        bless: args.bless,
        require_faults_fired: args.require_faults_fired,
        keep_known: args.keep_known,
    };
    crate::base::interrupt::install();
    let outcome = crate::campaign::sweep::sweep(&options)?;
    let result = if outcome.interrupted && !outcome.complete() { Outcome::Interrupted } else { Outcome::Runs(outcome.outcome()) };
    if args.json.json {
        crate::commands::json_out::print_sweep(&outcome, &options.out)?;
    } else {
        print_sweep(&outcome, &options)?;
    }
    Ok(result)
}

/// A sweep's stdout lines: its counts, the baseline's verdict, where the files are.
fn print_sweep(outcome: &crate::campaign::sweep::SweepOutcome, options: &crate::campaign::sweep::SweepOptions) -> Result<(), Error> {
    let totals = &outcome.totals;
    if !outcome.complete() {
        println!(
            "incomplete   {} of {} pairs finished{}; results kept, marked in {}",
            totals.pairs,
            outcome.planned,
            if outcome.interrupted { " (interrupted)" } else { "" },
            options.out.join(crate::campaign::sweep::INCOMPLETE_MARKER).display()
        );
    }
    let known = &totals.known;
    println!("pairs        {}", totals.pairs);
    // A pass that broke a rule its scenario allows or expects is not counted as passed.
    println!("passed       {}", totals.clean);
    if known.runs > 0 {
        println!("known        {} passed with violations their scenarios allow or expect{}", known.runs, known.rules_text());
    }
    println!("failed       {}", totals.failed);
    println!("errors       {}", totals.errors);
    if let Some(comparison) = &outcome.baseline {
        let rows = outcome.rows_listed()?;
        print!("{}", crate::campaign::baseline::stdout_lines(comparison, &crate::campaign::sweep::outcomes(&rows)));
    }
    if let (Some(n), Some(file)) = (outcome.blessed, &options.baseline) {
        println!("blessed      {n} pairs written to {}", file.display());
    }
    // One line for all the failures, however many: they are listed in summary.md.
    if let Some(line) = outcome.failures_line(&options.out) {
        println!("{line}");
    }
    println!("results      {}", options.out.join("results.csv").display());
    println!("coverage     {}", options.out.join("coverage.csv").display());
    print_required(options.require_coverage.as_deref(), &outcome.missing_coverage);
    print_unfired(&outcome.unfired);
    Ok(())
}

/// The stdout lines of `--require-faults-fired` on what never fired.
fn print_unfired(unfired: &[String]) {
    for line in unfired {
        println!("never fired  {line}");
    }
}

/// The stdout lines on a `--require-coverage` file.
fn print_required(file: Option<&Path>, missing: &[crate::judging::coverage::Item]) {
    let Some(file) = file else { return };
    match missing.len() {
        0 => println!("coverage     every item of {} reached", file.display()),
        n => println!("coverage     {n} item(s) of {} never reached", file.display()),
    }
    for item in missing {
        println!("never reached: {item}");
    }
}

#[derive(Args)]
pub struct MergeArgs {
    /// Shard output folders of `rehearsal sweep --shard I/N`: all N of them, of one sweep.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    #[command(flatten)]
    pub require: RequireCoverageArg,
    #[command(flatten)]
    pub baseline: BaselineArg,
    /// Output folder: results.csv, junit.xml, summary.md, coverage.csv, manifest.toml,
    /// pairs.jsonl, failures/.
    #[arg(long)]
    pub out: PathBuf,
    /// Replace the results already in the output folder (refused without it).
    #[arg(long)]
    pub force: bool,
    /// Fail (exit 1) when a declared fault kind, or a scripted fault, never fired in any pair
    /// of its scenario over all the shards, naming it.
    #[arg(long)]
    pub require_faults_fired: bool,
    /// Write the merged pairs' outcomes to the --baseline file (all of it, as blessing the
    /// unsharded sweep would), then judge them by it.
    #[arg(long, requires = "baseline", conflicts_with = "bless_modes")]
    pub bless: bool,
    /// Write the --baseline file as failure modes: one `*` line per scenario and variant with
    /// every rule its failing pairs broke (a nightly lane's baseline, for seeds not yet run).
    #[arg(long, requires = "baseline")]
    pub bless_modes: bool,
    /// A failing failure mode (`* fail`) of the --baseline file that passed this many nights
    /// in a row (`passed-nights=K`) no longer counts as known: its failures are regressions,
    /// and it is reported `expired`, an improvement to bless.
    #[arg(long, requires = "baseline", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub expire_after: Option<u64>,
    /// Count this night in the --baseline file: each failing mode's `passed-nights` one more
    /// when no pair of its scenario failed, else 0 (the file rewritten whole).
    #[arg(long, requires = "baseline", conflicts_with_all = ["bless", "bless_modes"])]
    pub record_night: bool,
}

pub fn merge(args: MergeArgs) -> Result<Outcome, Error> {
    let required = args.require.require_coverage.as_deref().map(crate::judging::coverage::Required::load).transpose()?;
    let baseline = args.baseline.baseline.as_deref();
    let bless = match (args.bless, args.bless_modes) {
        (true, _) => Some(crate::campaign::merge::Bless::Pairs),
        (_, true) => Some(crate::campaign::merge::Bless::Modes),
        _ => None,
    };
    let nights = crate::campaign::merge::Nights { expire_after: args.expire_after, record: args.record_night };
    let merged =
        match crate::campaign::merge::merge_blessing(&args.dirs, &args.out, required.as_ref(), baseline, bless, args.force, nights)? {
            crate::campaign::merge::MergeOutcome::Written(merged) => merged,
            crate::campaign::merge::MergeOutcome::Incomplete(problems) => {
                for problem in &problems {
                    eprintln!("rehearsal: merge: {problem}");
                }
                eprintln!("rehearsal: merge: incomplete set of shards, nothing written to {}", args.out.display());
                return Ok(Outcome::FAIL);
            }
        };
    let (rows, missing) = (&merged.rows, &merged.missing_coverage);
    println!("merged {} pairs into {}", rows.len(), args.out.join("results.csv").display());
    if let Some(comparison) = &merged.baseline {
        print!("{}", crate::campaign::baseline::stdout_lines(comparison, &crate::campaign::sweep::outcomes(rows)));
    }
    for expired in &merged.expired {
        println!("{}", crate::campaign::baseline_expiry::line(expired, args.expire_after.unwrap_or(0)));
    }
    if let (Some(_), Some(file)) = (bless, baseline) {
        println!("blessed      {} written from the merged pairs", file.display());
    }
    if let (true, Some(file)) = (args.record_night, baseline) {
        println!("recorded     this night's passes in {}", file.display());
    }
    println!("summary      {}", args.out.join("summary.md").display());
    println!("coverage     {}", args.out.join("coverage.csv").display());
    print_required(args.require.require_coverage.as_deref(), missing);
    let unfired = if args.require_faults_fired { crate::campaign::fault_proof::unfired(rows) } else { Vec::new() };
    print_unfired(&unfired);
    let worst = match &merged.baseline {
        Some(comparison) => crate::campaign::baseline::worst_against(&crate::campaign::sweep::outcomes(rows), comparison),
        None => crate::campaign::sweep::worst_of(rows),
    };
    let short = !missing.is_empty() || !unfired.is_empty();
    Ok(Outcome::Runs(if worst == RunOutcome::Pass && short { RunOutcome::Fail } else { worst }))
}
