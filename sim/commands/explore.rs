//! `rehearsal explore crashes` (a crash, or a hang, at every protocol point of one run) and
//! `rehearsal explore schedules` (every order of the statements that may race).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::args::{
    fault_name, parse_depth, parse_points, parse_session, points_of, ForceArg, JobsArg, JsonArg, ScratchArg, Seeds, VariantArgs,
};
use super::Outcome;
use crate::base::error::Error;
use crate::vocab::FaultName;

#[derive(Subcommand)]
pub enum ExploreCommand {
    /// For every protocol point of the seed's run (before and after each statement of each
    /// musician session and of the conductor), run the scenario with a crash of that session
    /// there; group the outcomes into distinct failures, each with a replay file.
    Crashes(ExploreCrashesArgs),
    /// Run the scenario with every order of the statements that may race (effects of
    /// different actors due within the statement round trip's spread), up to a bound on the
    /// non-default choices; group the outcomes, and write each failure's shortest schedule as
    /// a replay file.
    Schedules(ExploreSchedulesArgs),
}

pub fn explore(command: ExploreCommand, quiet: bool) -> Result<Outcome, Error> {
    match command {
        ExploreCommand::Crashes(args) => crashes(args, quiet),
        ExploreCommand::Schedules(args) => schedules(args, quiet),
    }
}

#[derive(Args)]
pub struct ExploreSchedulesArgs {
    /// Scenario file (TOML), e.g. scenarios/schedules/double-launch.toml.
    pub scenario: PathBuf,
    /// The seed whose runs are re-ordered; defaults to the scenario's run.seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// At most this many non-default choices per schedule (preemption bound).
    #[arg(long, default_value_t = 1)]
    pub bound: usize,
    /// Only the first this many decision points of a run may take a non-default choice
    /// (default: all).
    #[arg(long, value_parser = parse_depth)]
    pub depth: Option<usize>,
    #[command(flatten)]
    pub jobs: JobsArg,
    #[command(flatten)]
    pub variants: VariantArgs,
    /// Output folder: schedules.csv, summary.md, failures/.
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub force: ForceArg,
    #[command(flatten)]
    pub scratch: ScratchArg,
}

#[derive(Args)]
#[command(mut_arg("scratch", |a| a.help(
    "Where the runs are made and removed (default: /dev/shm where it exists, else --out): on a disk file system, \
     creating and deleting each run's files costs more than the run"
)))]
pub struct ExploreCrashesArgs {
    /// Scenario file (TOML), e.g. scenarios/quickstart.toml.
    pub scenario: PathBuf,
    /// The seed of the run whose points are explored; defaults to the scenario's run.seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Only these sessions' points, comma-separated: task-01.S1,conductor,conductor.S2
    /// (default: every session's, the conductor's included).
    #[arg(long, value_delimiter = ',', value_parser = parse_session)]
    pub sessions: Vec<crate::campaign::explore::Target>,
    /// Only the points with these numbers (explore.csv's `point` column, fixed by the base
    /// run; --list-points lists them), comma-separated: N, A..B (B excluded) or A..=B.
    #[arg(long, value_delimiter = ',', value_parser = parse_points)]
    pub points: Vec<Seeds>,
    /// The fault kinds placed before and after each point, comma-separated (a hang once per
    /// length class: short, threshold, long; `io_error` is SQLITE_IOERR on the statement). The
    /// conductor's points get crashes only.
    #[arg(long, value_delimiter = ',', value_parser = fault_name(), default_values_t = [FaultName::Crash])]
    pub faults: Vec<FaultName>,
    /// Also hangs: `--faults` with `hang` added.
    #[arg(long)]
    pub hangs: bool,
    /// Also I/O errors: `--faults` with `io_error` added.
    #[arg(long)]
    pub io_errors: bool,
    /// Print the base run's points (those --sessions and --points choose) as CSV and stop:
    /// nothing is explored or written.
    #[arg(long)]
    pub list_points: bool,
    /// Keep the scenario's own scripted crashes, hangs and conductor crashes (set aside by
    /// default).
    #[arg(long)]
    pub keep_faults: bool,
    /// What each run shares of the base run up to its point: fork (start from the base run's
    /// nearest snapshot before it), reads (run it all again, its reads answered from the base
    /// run's rows), none (run it all again: the runs one by one). explore.csv is the same
    /// whichever; they differ in cost.
    #[arg(long, value_enum, default_value_t = crate::campaign::explore::Prefix::Fork, conflicts_with = "no_fork")]
    pub prefix: crate::campaign::explore::Prefix,
    /// `--prefix reads`: every run from its start (explore as it was before runs were forked).
    #[arg(long)]
    pub no_fork: bool,
    #[command(flatten)]
    pub jobs: JobsArg,
    #[command(flatten)]
    pub variants: VariantArgs,
    /// Output folder: explore.csv, summary.md, coverage.csv, failures/.
    #[arg(long, required_unless_present = "list_points")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub force: ForceArg,
    #[command(flatten)]
    pub json: JsonArg,
    #[command(flatten)]
    pub scratch: ScratchArg,
}

/// `explore crashes`: distinct failures fail it (1), a run's harness error is 3, Ctrl-C 130.
fn crashes(args: ExploreCrashesArgs, quiet: bool) -> Result<Outcome, Error> {
    let faults = fault_kinds(&args);
    let options = crate::campaign::explore::ExploreOptions {
        scenario: args.scenario,
        seed: args.seed,
        protocol: args.variants.protocol,
        variants: args.variants.variants,
        sessions: args.sessions,
        points: points_of(&args.points)?,
        faults,
        keep_faults: args.keep_faults,
        jobs: args.jobs.get(),
        out: args.out.unwrap_or_default(),
        scratch: args.scratch.scratch,
        progress_every: if quiet { 0 } else { 500 },
        force: args.force.force,
        prefix: if args.no_fork { crate::campaign::explore::Prefix::Reads } else { args.prefix },
    };
    if args.list_points {
        print!("{}", crate::campaign::explore::list_points(&options)?);
        return Ok(Outcome::PASS);
    }
    let started = std::time::Instant::now();
    crate::base::interrupt::install();
    let exploration = crate::campaign::explore::explore_crashes(&options)?;
    let result =
        if exploration.interrupted && !exploration.complete() { Outcome::Interrupted } else { Outcome::Runs(exploration.outcome()) };
    if args.json.json {
        println!("{}", crate::commands::json_out::explore(&exploration, &options.out));
        return Ok(result);
    }
    if !exploration.complete() {
        println!(
            "incomplete   {} of {} runs finished (interrupted); results kept, marked in {}",
            exploration.rows.len(),
            exploration.planned,
            options.out.join(crate::campaign::explore::INCOMPLETE_MARKER).display()
        );
    }
    print!("{}", exploration.render());
    println!("explore.csv  {}", options.out.join("explore.csv").display());
    println!("summary      {}", options.out.join("summary.md").display());
    // Wall time goes to stdout only; the files do not depend on it.
    let seconds = started.elapsed().as_secs_f64();
    println!("wall         {seconds:.1} s, {:.0} runs/s with {} jobs", exploration.rows.len() as f64 / seconds.max(1e-9), options.jobs);
    Ok(result)
}

/// `--faults` with what `--hangs` and `--io-errors` add (the flags it replaced, kept as
/// aliases), each kind once.
fn fault_kinds(args: &ExploreCrashesArgs) -> Vec<FaultName> {
    let added = [(args.hangs, FaultName::Hang), (args.io_errors, FaultName::IoError)];
    let mut kinds: Vec<FaultName> = args.faults.iter().copied().chain(added.into_iter().filter(|(on, _)| *on).map(|(_, k)| k)).collect();
    kinds.sort_unstable();
    kinds.dedup();
    kinds
}

/// `explore schedules`: distinct failures fail it (1), a run's harness error is 3, Ctrl-C 130.
fn schedules(args: ExploreSchedulesArgs, quiet: bool) -> Result<Outcome, Error> {
    let options = crate::campaign::schedules::SchedulesOptions {
        scenario: args.scenario,
        seed: args.seed,
        protocol: args.variants.protocol,
        variants: args.variants.variants,
        bound: args.bound,
        depth: args.depth.unwrap_or(usize::MAX),
        jobs: args.jobs.get(),
        out: args.out,
        scratch: args.scratch.scratch,
        progress: !quiet,
        force: args.force.force,
    };
    let started = std::time::Instant::now();
    crate::base::interrupt::install();
    let enumeration = crate::campaign::schedules::explore_schedules(&options)?;
    if enumeration.interrupted {
        let marker = options.out.join(crate::campaign::schedules::INCOMPLETE_MARKER);
        println!("incomplete   interrupted; the finished runs are kept, marked in {}", marker.display());
    }
    print!("{}", enumeration.render());
    println!("schedules    {}", options.out.join("schedules.csv").display());
    println!("summary      {}", options.out.join("summary.md").display());
    // Wall time goes to stdout only; the files do not depend on it.
    let seconds = started.elapsed().as_secs_f64();
    println!("wall         {seconds:.1} s, {:.1} runs/s with {} jobs", enumeration.rows.len() as f64 / seconds.max(1e-9), options.jobs);
    Ok(if enumeration.interrupted { Outcome::Interrupted } else { Outcome::Runs(enumeration.outcome()) })
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Crashes {
        #[command(flatten)]
        args: ExploreCrashesArgs,
    }

    fn kinds(line: &[&str]) -> Vec<FaultName> {
        let parsed = Crashes::try_parse_from([&["crashes", "s.toml", "--out", "o"], line].concat()).unwrap();
        fault_kinds(&parsed.args)
    }

    #[test]
    fn faults_default_to_crashes_and_the_old_flags_add_their_kinds() {
        use FaultName::{Crash, Hang, IoError};
        assert_eq!(kinds(&[]), [Crash]);
        assert_eq!(kinds(&["--hangs", "--io-errors"]), [Crash, Hang, IoError]);
        assert_eq!(kinds(&["--faults", "io_error,crash,hang"]), kinds(&["--hangs", "--io-errors"]), "in one order");
        assert_eq!(kinds(&["--faults", "io_error", "--hangs"]), [Hang, IoError], "no crash unless listed");
        assert!(Crashes::try_parse_from(["crashes", "s.toml", "--out", "o", "--faults", "disk"]).is_err());
    }
}
