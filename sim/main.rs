//! The `rehearsal` command. Arguments are parsed (and seed ranges, job counts and shards
//! validated) once, by clap; each command is one `cmd_*` function that calls the library and
//! says how it went (`Outcome`); `exit` is the one place that turns that, or an error, into
//! the exit code: 0 pass, 1 protocol failure, 2 bad input, 3 harness error, 130 interrupted.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use rehearsal::error::Error;
use rehearsal::vocab::RunOutcome;

/// A run allocates and frees small strings and vectors per event (values read from SQLite,
/// rows, messages): with glibc's allocator that was ~11 % of fleet-day's profile (issue 17).
/// Nothing the program writes depends on where memory comes from.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "rehearsal", version, about = "Deterministic simulator and test harness for the conductor/musician comms.db protocol")]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// No progress on stderr (bars or lines) and no notes such as the seed count.
    #[arg(long, short, global = true)]
    quiet: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Run one scenario with one seed; prints the verdict, the trace hash and a replay command.
    Run(RunArgs),
    /// List the protocol profiles and variants (one variant per disagreement of docs/protocol.md).
    Variants,
    /// Run every (scenario, seed) pair in parallel; write results.csv, junit.xml, failures/.
    Sweep(SweepArgs),
    /// Join the shards of one sweep into the folder the unsharded sweep writes; refuse a
    /// partial set (exit 1) or shards of different sweeps (exit 2).
    Merge(MergeArgs),
    /// Re-run a saved failure and confirm its trace hash; --until stops early and shows state.
    Replay(ReplayArgs),
    /// Judge finished runs again from their trace.csv and comms.db alone; compare the verdict
    /// with the violations.csv each run wrote (or --write it).
    Judge(JudgeArgs),
    /// Minimize a saved failure while it keeps failing the same way; write the scenario.
    Shrink(ShrinkArgs),
    /// Regenerate reports/FINDINGS.md: every disagreement, default against variant.
    Findings(FindingsArgs),
    /// Parameter grid over seeds (CSV per grid point, heatmaps), or with --overhead the cost
    /// of one run against the SQLite floor of its own statements.
    Bench(BenchArgs),
    /// Validate scenario files and their SQL (or a --sql file alone) without running them.
    Check(CheckArgs),
    /// Run the same seeds under several variants and tabulate violations and latencies.
    Compare(CompareArgs),
    /// Explore every point of one run instead of random seeds.
    #[command(subcommand)]
    Explore(ExploreCommand),
    /// Coverage-guided search (mutants of the inputs that reached new coverage or a new
    /// violation) beside a random sweep of the same size; both side by side.
    Search(SearchArgs),
    /// List the scenario files under a folder with their descriptions.
    List(ListArgs),
    /// Write a commented scenario template that runs as it is.
    New(NewArgs),
    /// Measure the protocol's statements and a scenario's load on this machine's SQLite and
    /// compare with rehearsal's contention model (docs/calibration.md).
    #[command(subcommand)]
    Calibrate(rehearsal::calibrate::CalibrateCommand),
    /// Print a shell completion script, e.g. `rehearsal completions bash > /etc/bash_completion.d/rehearsal`.
    Completions(CompletionsArgs),
}

#[derive(Args)]
struct ListArgs {
    /// The folder to list (searched recursively for .toml files).
    #[arg(default_value = "scenarios")]
    dir: PathBuf,
}

#[derive(Args)]
struct NewArgs {
    /// The scenario file to write, e.g. scenarios/mine.toml.
    file: PathBuf,
    /// Replace the file if it exists.
    #[arg(long)]
    force: bool,
}

#[derive(Args)]
struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    shell: clap_complete::Shell,
}

/// `--json`: one JSON object on stdout instead of the text.
#[derive(Args)]
struct JsonArg {
    /// Print one JSON object on stdout instead of the text (verdict, violations, timings,
    /// paths, trace hash, SQL); progress and notes still go to stderr.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct SearchArgs {
    /// Scenario file (TOML), e.g. scenarios/faults/random-faults.toml.
    scenario: PathBuf,
    /// Runs of each side: the search's, and the random sweep's beside it.
    #[arg(long)]
    runs: usize,
    /// The search's seed: its mutations' stream and the random sweep's seeds.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Empty the scenario's `[expect] allowed` (in a copy): every violation counts.
    #[arg(long)]
    strict: bool,
    #[command(flatten)]
    jobs: JobsArg,
    #[command(flatten)]
    variants: VariantArgs,
    /// Output folder: search.csv, summary.md, corpus/, failures/.
    #[arg(long)]
    out: PathBuf,
    /// Replace the results already in the output folder (refused without it); what this
    /// command wrote there before is cleared first.
    #[arg(long)]
    force: bool,
    /// Where the runs are made and removed (default: /dev/shm where it exists, else --out).
    #[arg(long)]
    scratch: Option<PathBuf>,
}

#[derive(Subcommand)]
enum ExploreCommand {
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

#[derive(Args)]
struct ExploreSchedulesArgs {
    /// Scenario file (TOML), e.g. scenarios/schedules/double-launch.toml.
    scenario: PathBuf,
    /// The seed whose runs are re-ordered; defaults to the scenario's run.seed.
    #[arg(long)]
    seed: Option<u64>,
    /// At most this many non-default choices per schedule (preemption bound).
    #[arg(long, default_value_t = 1)]
    bound: usize,
    /// Only the first this many decision points of a run may take a non-default choice
    /// (default: all).
    #[arg(long, value_parser = parse_depth)]
    depth: Option<usize>,
    #[command(flatten)]
    jobs: JobsArg,
    #[command(flatten)]
    variants: VariantArgs,
    /// Output folder: schedules.csv, summary.md, failures/.
    #[arg(long)]
    out: PathBuf,
    /// Replace the results already in the output folder (refused without it); what this
    /// command wrote there before is cleared first.
    #[arg(long)]
    force: bool,
    /// Where the runs are made and removed (default: /dev/shm where it exists, else --out).
    #[arg(long)]
    scratch: Option<PathBuf>,
}

fn parse_depth(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("--depth must be at least 1".to_string()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("--depth takes a whole number of decision points: {e}")),
    }
}

#[derive(Args)]
struct ExploreCrashesArgs {
    /// Scenario file (TOML), e.g. scenarios/quickstart.toml.
    scenario: PathBuf,
    /// The seed of the run whose points are explored; defaults to the scenario's run.seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Only these sessions' points, comma-separated: task-01.S1,conductor,conductor.S2
    /// (default: every session's, the conductor's included).
    #[arg(long, value_delimiter = ',', value_parser = parse_session)]
    sessions: Vec<rehearsal::explore::Target>,
    /// Only the points with these numbers (explore.csv's `point` column, fixed by the base
    /// run; --list-points lists them), comma-separated: N, A..B (B excluded) or A..=B.
    #[arg(long, value_delimiter = ',', value_parser = parse_points)]
    points: Vec<Seeds>,
    /// Also a hang of each length class (short, threshold, long) before and after each point
    /// of a musician session (the conductor's get crashes only).
    #[arg(long)]
    hangs: bool,
    /// Also an I/O error (SQLITE_IOERR, `[[faults.io_error]]`) before and after each point of
    /// a musician session.
    #[arg(long)]
    io_errors: bool,
    /// Print the base run's points (those --sessions and --points choose) as CSV and stop:
    /// nothing is explored or written.
    #[arg(long)]
    list_points: bool,
    /// Keep the scenario's own scripted crashes, hangs and conductor crashes (set aside by
    /// default).
    #[arg(long)]
    keep_faults: bool,
    #[command(flatten)]
    jobs: JobsArg,
    #[command(flatten)]
    variants: VariantArgs,
    /// Output folder: explore.csv, summary.md, coverage.csv, failures/.
    #[arg(long, required_unless_present = "list_points")]
    out: Option<PathBuf>,
    /// Replace the results already in the output folder (refused without it); what this
    /// command wrote there before is cleared first.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    json: JsonArg,
    /// Where the runs are made and removed (default: /dev/shm where it exists, else --out):
    /// on a disk file system, creating and deleting each run's files costs more than the run.
    #[arg(long)]
    scratch: Option<PathBuf>,
}

/// Seeds, parsed from `--seeds` text as runs (never listed whole: `rehearsal::seed_set`), and
/// the text they were written as.
#[derive(Clone, Debug)]
struct Seeds(rehearsal::seed_set::SeedSet, String);

impl Seeds {
    /// Every seed, listed: refused above `seed_set::MAX_RUNS` (exit 2) before any is.
    fn list(&self, flag: &str) -> Result<Vec<u64>, Error> {
        self.0.to_vec(flag)
    }

    /// Says on stderr how many seeds a range runs (`1..20` runs 19), unless `quiet`.
    fn announce(&self, quiet: bool) {
        if quiet {
            return;
        }
        if let Some(line) = rehearsal::compare::describe_seeds(&self.1, &self.0) {
            eprintln!("rehearsal: {line}");
        }
    }
}

/// `--seeds`, 1..=10 unless given.
#[derive(Args)]
struct SeedRangeArg {
    /// Seeds: N, A..B (B excluded) or A..=B.
    #[arg(long, value_parser = parse_seeds, default_value = "1..=10")]
    seeds: Seeds,
}

/// `--jobs`: at least 1, all cores unless given.
#[derive(Args)]
struct JobsArg {
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long, value_parser = parse_jobs)]
    jobs: Option<usize>,
}

impl JobsArg {
    fn get(&self) -> usize {
        self.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    }
}

/// `--protocol` and `--variant`, repeatable.
#[derive(Args)]
struct VariantArgs {
    /// Protocol profile, in place of the scenario's `[protocol] profile` (default `seeds`):
    /// `rehearsal variants` lists the profiles and the variants each applies.
    #[arg(long = "protocol", value_name = "NAME")]
    protocol: Option<String>,
    /// Protocol variant to apply (repeatable), after the profile's and the scenario's own;
    /// `rehearsal variants` lists them.
    #[arg(long = "variant")]
    variants: Vec<String>,
}

#[derive(Args)]
struct RunArgs {
    /// Scenario file (TOML), e.g. scenarios/quickstart.toml.
    scenario: PathBuf,
    /// Seed in decimal; defaults to the scenario's run.seed.
    #[arg(long, env = "REHEARSAL_SEED")]
    seed: Option<u64>,
    /// Output folder; defaults to reports/runs/<scenario>-<seed>/ (<scenario>+<variant>-<seed> with --variant).
    #[arg(long)]
    out: Option<PathBuf>,
    #[command(flatten)]
    variants: VariantArgs,
    /// Replace the run already in the output folder (refused without it).
    #[arg(long)]
    force: bool,
    /// Protocol SQL file whose `-- name:` entries replace the defaults and those of the
    /// scenario's `[protocol] sql` (applied after it; variants still apply last).
    #[arg(long, value_name = "FILE")]
    sql: Option<PathBuf>,
    #[command(flatten)]
    json: JsonArg,
}

#[derive(Args)]
struct SweepArgs {
    /// Scenario files (TOML), e.g. scenarios/quickstart.toml scenarios/faults/*.toml.
    #[arg(required = true)]
    scenarios: Vec<PathBuf>,
    /// Seeds of every scenario: N, A..B (B excluded) or A..=B; default: each scenario's own
    /// run.seed (the shipped suite as the golden file runs it).
    #[arg(long, value_parser = parse_seeds)]
    seeds: Option<Seeds>,
    #[command(flatten)]
    jobs: JobsArg,
    /// Run only shard I of N (1-based), e.g. 2/4.
    #[arg(long, value_parser = parse_shard)]
    shard: Option<(usize, usize)>,
    /// Stop starting new pairs after the first failure (with --baseline: the first regression).
    #[arg(long)]
    fail_fast: bool,
    /// Run every pair twice and fail on any difference in trace or database bytes.
    #[arg(long)]
    check_determinism: bool,
    #[command(flatten)]
    variants: VariantArgs,
    #[command(flatten)]
    require: RequireCoverageArg,
    /// Output folder: results.csv, junit.xml, summary.md, coverage.csv, failures/.
    #[arg(long)]
    out: PathBuf,
    /// Replace the results already in the output folder (refused without it); what this
    /// command wrote there before is cleared first.
    #[arg(long)]
    force: bool,
    /// Protocol SQL file whose `-- name:` entries replace the defaults and those of the
    /// scenario's `[protocol] sql` (applied after it; variants still apply last).
    #[arg(long, value_name = "FILE")]
    sql: Option<PathBuf>,
    /// Where the runs are made and removed (default: /dev/shm where it exists, else --out).
    #[arg(long)]
    scratch: Option<PathBuf>,
    #[command(flatten)]
    baseline: BaselineArg,
    /// Write the pairs' outcomes to the --baseline file (all of it), then judge them by it.
    #[arg(long, requires = "baseline")]
    bless: bool,
    #[command(flatten)]
    json: JsonArg,
}

/// `--baseline FILE`.
#[derive(Args)]
struct BaselineArg {
    /// Judge the pairs against FILE (one pair a line: scenario relative to FILE's folder,
    /// variant, seed, verdict, rules): exit 1 only on a regression, a pair that fails where
    /// FILE says it passed, or with a rule FILE does not list for it, or that FILE lacks.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
}

/// `--require-coverage FILE`.
#[derive(Args)]
struct RequireCoverageArg {
    /// Fail (exit 1) when an item listed in FILE was never reached (one item a line, e.g.
    /// `musician watching->working` or `conductor working->fix_proposed after-crash`).
    #[arg(long = "require-coverage", value_name = "FILE")]
    require_coverage: Option<PathBuf>,
}

#[derive(Args)]
struct MergeArgs {
    /// Shard output folders of `rehearsal sweep --shard I/N`: all N of them, of one sweep.
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    #[command(flatten)]
    require: RequireCoverageArg,
    #[command(flatten)]
    baseline: BaselineArg,
    /// Output folder: results.csv, junit.xml, summary.md, coverage.csv, manifest.toml,
    /// pairs.jsonl, failures/.
    #[arg(long)]
    out: PathBuf,
    /// Replace the results already in the output folder (refused without it).
    #[arg(long)]
    force: bool,
}

#[derive(Args)]
struct ReplayArgs {
    /// A saved failure file, e.g. DIR/failures/zombie-default-21.toml from a sweep.
    failure: PathBuf,
    /// Stop at this simulated time (ms) and print every task's row.
    #[arg(long)]
    until: Option<i64>,
    /// Folder of the replayed run; defaults to reports/replays/<failure file's name>/.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Args)]
struct JudgeArgs {
    /// Run folders (each with trace.csv, comms.db and violations.csv), e.g. reports/runs/quickstart-1.
    #[arg(required = true)]
    runs: Vec<PathBuf>,
    /// Scenario file to judge with, instead of the one each trace names (relative to the folder
    /// the run was made in): for a trace made elsewhere.
    #[arg(long)]
    scenario: Option<PathBuf>,
    /// Write violations.csv into each run folder instead of only comparing with it.
    #[arg(long)]
    write: bool,
}

#[derive(Args)]
struct ShrinkArgs {
    /// A saved failure file, e.g. DIR/failures/zombie-default-21.toml from a sweep.
    failure: PathBuf,
    /// The minimized scenario file to write (TOML).
    #[arg(long)]
    out: PathBuf,
}

#[derive(Args)]
struct FindingsArgs {
    #[command(flatten)]
    seeds: SeedRangeArg,
    /// The Markdown file to write [default: reports/FINDINGS.md, or reports/SEED-SCRIPTS.md].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Instead: run seed 000's scripts (scripts/seed-000/) at instants of every shipped
    /// scenario and compare their answers with the simulator's (sim/seed_scripts.rs).
    #[arg(long)]
    seed_scripts: bool,
    /// Instead: docs/repaired-protocol.md, the `repaired` profile's changes, their cost, the
    /// proof over --seeds of each strict suite and the necessity of each change
    /// (sim/repaired_doc.rs).
    #[arg(long, conflicts_with = "seed_scripts")]
    repaired: bool,
    /// With --repaired: the seeds of ci-smoke the cost is measured on.
    #[arg(long, default_value = "1..=50", requires = "repaired")]
    cost_seeds: String,
    /// Every variant against this protocol profile instead of the seeds' protocol.
    #[arg(long = "protocol", value_name = "NAME", conflicts_with = "seed_scripts")]
    protocol: Option<String>,
}

#[derive(Args)]
#[command(mut_arg("seeds", |a| a.help("Seeds run at every grid point: N, A..B (B excluded) or A..=B")))]
struct BenchArgs {
    /// Scenario file (TOML) every grid point starts from, e.g. scenarios/bench/poll-jitter.toml.
    scenario: PathBuf,
    /// NAME=V1,V2,…: a dotted scenario key and its values (TOML values; repeatable), e.g.
    /// timing.background_poll_ms=5000,15000 or faults.watcher_jitter_ms.max=0,30000. Keys
    /// swept together: A,B=A1,B1;A2,B2;… (a tuple per step, `;` between tuples), e.g.
    /// timing.heartbeat_refresh_s,conductor.staleness_s=300,360;480,540.
    #[arg(long = "param")]
    params: Vec<String>,
    #[command(flatten)]
    seeds: SeedRangeArg,
    #[command(flatten)]
    jobs: JobsArg,
    /// The two parameters of the heatmaps (default: the first two --param; with one --param,
    /// bar charts instead).
    #[arg(long, value_delimiter = ',')]
    heatmap: Vec<String>,
    /// Time one run against the bare replay of its statements instead of a grid.
    #[arg(long)]
    overhead: bool,
    /// With --overhead: the seed to run (default: the scenario's run.seed).
    #[arg(long)]
    seed: Option<u64>,
    /// With --overhead: timed repeats; the fastest of each side is reported.
    #[arg(long, default_value_t = 5)]
    repeat: usize,
    #[command(flatten)]
    variants: VariantArgs,
    /// Output folder of the grid (bench.csv, heatmaps, points/).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Replace the results already in the output folder (refused without it); what this
    /// command wrote there before is cleared first.
    #[arg(long)]
    force: bool,
    /// Protocol SQL file whose `-- name:` entries replace the defaults and those of the
    /// scenario's `[protocol] sql` (applied after it; variants still apply last).
    #[arg(long, value_name = "FILE")]
    sql: Option<PathBuf>,
    #[command(flatten)]
    json: JsonArg,
}

#[derive(Args)]
struct CheckArgs {
    /// Scenario files (TOML) to validate, with their SQL and variants.
    #[arg(required_unless_present = "sql")]
    scenarios: Vec<PathBuf>,
    /// A protocol SQL file to validate: alone (over the default protocol), or with each
    /// scenario as `--sql` would run it (over the scenario's own SQL).
    #[arg(long, value_name = "FILE")]
    sql: Option<PathBuf>,
    /// Validate each scenario under this protocol profile, in place of its own.
    #[arg(long = "protocol", value_name = "NAME")]
    protocol: Option<String>,
}

#[derive(Args)]
struct CompareArgs {
    /// Scenario file (TOML), e.g. scenarios/faults/zombie.toml.
    scenario: PathBuf,
    /// Comma-separated columns: variant names, `default` (the scenario as it is), or protocol
    /// SQL files (ending .sql), e.g. default,fencing,my-claim.sql.
    #[arg(long, value_delimiter = ',', default_value = "default")]
    variants: Vec<String>,
    #[command(flatten)]
    seeds: SeedRangeArg,
    /// Protocol profile of every column, in place of the scenario's `[protocol] profile`.
    #[arg(long = "protocol", value_name = "NAME")]
    protocol: Option<String>,
    /// Folder for summary.md and compare.csv (a row per run); defaults to
    /// reports/compare/<scenario>/.
    #[arg(long)]
    out: Option<PathBuf>,
    #[command(flatten)]
    jobs: JobsArg,
    /// Keep every run's folder (trace.csv, comms.db, …) under --out as <column>-<seed>/;
    /// without it runs are made in a scratch folder and removed.
    #[arg(long)]
    keep_runs: bool,
    /// Replace the results already in the output folder (refused without it); what this
    /// command wrote there before is cleared first.
    #[arg(long)]
    force: bool,
    /// Protocol SQL file whose `-- name:` entries replace the defaults and those of the
    /// scenario's `[protocol] sql` (applied after it; variants still apply last).
    #[arg(long, value_name = "FILE")]
    sql: Option<PathBuf>,
    #[command(flatten)]
    json: JsonArg,
}

/// The message of an input error, for clap to print after "invalid value … for '--flag'".
fn input_message(e: Error) -> String {
    match e {
        Error::Input(message) | Error::Harness(message) => message,
    }
}

fn parse_seeds(text: &str) -> Result<Seeds, String> {
    rehearsal::seed_set::SeedSet::parse(text).map(|seeds| Seeds(seeds, text.to_string())).map_err(input_message)
}

fn parse_shard(text: &str) -> Result<(usize, usize), String> {
    rehearsal::sweep::parse_shard(text).map_err(input_message)
}

fn parse_points(text: &str) -> Result<Seeds, String> {
    rehearsal::seed_set::SeedSet::parse(text)
        .map(|points| Seeds(points, text.to_string()))
        .map_err(|_| format!("point range `{text}`: expected N, A..B or A..=B with A < B (point numbers from 1)"))
}

/// Every point of `--points`, listed: refused above `seed_set::MAX_RUNS` in all before any is.
fn points_of(points: &[Seeds]) -> Result<Vec<u64>, Error> {
    let total: u128 = points.iter().map(|p| p.0.len()).sum();
    rehearsal::seed_set::check_runs(total, "--points", "")?;
    Ok(points.iter().flat_map(|p| p.list("--points").unwrap_or_default()).collect())
}

fn parse_session(text: &str) -> Result<rehearsal::explore::Target, String> {
    rehearsal::explore::parse_session(text).map_err(input_message)
}

fn parse_jobs(text: &str) -> Result<usize, String> {
    match text.parse::<usize>().map_err(|e| e.to_string())? {
        0 => Err("--jobs must be at least 1".to_string()),
        jobs => Ok(jobs),
    }
}

/// How a command that ran to its end went; a command that could not is an `Error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// Every run passed (0), the protocol failed (1), or a run hit a harness error (3).
    Runs(RunOutcome),
    /// Ctrl-C stopped it; what finished is kept and marked incomplete (130).
    Interrupted,
}

impl Outcome {
    const PASS: Outcome = Outcome::Runs(RunOutcome::Pass);
}

/// The exit-code policy, the only one: an outcome's code, or the error's (2 bad input, 3
/// harness), printed with the seed a harness error happened with when the command has one.
fn exit(result: Result<Outcome, Error>, seed: Option<u64>) -> ExitCode {
    let code = match result {
        Ok(Outcome::Runs(outcome)) => outcome.exit_code(),
        Ok(Outcome::Interrupted) => rehearsal::interrupt::EXIT_INTERRUPTED,
        Err(e) => {
            eprintln!("rehearsal: {e}");
            if let (Error::Harness(_), Some(seed)) = (&e, seed) {
                eprintln!("rehearsal: seed {seed}");
            }
            e.exit_code()
        }
    };
    ExitCode::from(code as u8)
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    // The seed of a single run, named with a harness error.
    let seed = match &cli.command {
        Command::Run(args) => args.seed,
        Command::Bench(args) if args.overhead => args.seed,
        _ => None,
    };
    let quiet = cli.quiet;
    let result = match cli.command {
        Command::Run(args) => cmd_run(args, quiet),
        Command::Variants => cmd_variants(),
        Command::Sweep(args) => cmd_sweep(args, quiet),
        Command::Merge(args) => cmd_merge(args),
        Command::Replay(args) => cmd_replay(args),
        Command::Judge(args) => cmd_judge(args),
        Command::Shrink(args) => cmd_shrink(args),
        Command::Findings(args) => cmd_findings(args, quiet),
        Command::Bench(args) if args.overhead => cmd_overhead(args),
        Command::Bench(args) => cmd_bench(args, quiet),
        Command::Check(args) => cmd_check(args),
        Command::Compare(args) => cmd_compare(args, quiet),
        Command::Explore(ExploreCommand::Crashes(args)) => cmd_explore_crashes(args, quiet),
        Command::Explore(ExploreCommand::Schedules(args)) => cmd_explore_schedules(args, quiet),
        Command::Search(args) => cmd_search(args, quiet),
        Command::List(args) => cmd_list(args),
        Command::New(args) => cmd_new(args),
        Command::Completions(args) => cmd_completions(args),
        Command::Calibrate(command) => rehearsal::calibrate::run(command).map(|()| Outcome::PASS),
    };
    exit(result, seed)
}

fn cmd_run(args: RunArgs, quiet: bool) -> Result<Outcome, Error> {
    // The scenario is loaded once; the plan says where the run goes before anything is written.
    let loaded = rehearsal::scenario::Scenario::load(&args.scenario)?;
    let scenario = loaded.with_sql(args.sql.as_deref()).with_profile(args.variants.protocol.as_deref())?;
    let plan = rehearsal::plan::RunPlan::resolve(&scenario, args.seed, &args.variants.variants, args.out)?;
    // Held until the run's reports are written: one writer per folder (sim/out_lock.rs).
    let _lock = rehearsal::run_folder::claim(&plan.out_dir, args.force)?;
    // A run that ends in an error (an event cap, a statement that never ends, a panic) says
    // how to reproduce it, as a failing one does.
    let replay = rehearsal::run::replay_of(&plan);
    let mut progress = (!quiet).then(rehearsal::progress::RunProgress::new);
    let (mut summary, _) = rehearsal::run::execute_with_progress(plan, false, &mut |now_ms, max_ms| {
        if let Some(progress) = progress.as_mut() {
            progress.update(now_ms, max_ms);
        }
    })
    .map_err(|e| e.with_replay(&replay))?;
    drop(progress);
    rehearsal::report::write_run_reports(&summary.out_dir, &summary, &summary.resolved)?;
    if args.json.json {
        println!("{}", rehearsal::json_out::run(&summary));
        return Ok(if summary.verdict.passed() { Outcome::PASS } else { Outcome::Runs(RunOutcome::Fail) });
    }
    // The files keep `rehearsal …`; the terminal shows a command that runs as pasted.
    summary.replay = rehearsal::shell::for_terminal(&summary.replay);
    print!("{}", summary.render());
    if summary.verdict.passed() {
        Ok(Outcome::PASS)
    } else {
        eprintln!("rehearsal: the protocol failed with seed {}; reproduce with: {}", summary.seed, summary.replay);
        Ok(Outcome::Runs(RunOutcome::Fail))
    }
}

fn cmd_variants() -> Result<Outcome, Error> {
    println!("profiles (`[protocol] profile`, `--protocol`):");
    for p in rehearsal::vocab::PROFILES {
        let applies = if p.variants.is_empty() { "no variant".to_string() } else { p.variants.join(", ") };
        println!("{:<24} {}: {applies}", p.name, p.summary);
    }
    println!("\nvariants (`[protocol] variants`, `--variant`):");
    for v in rehearsal::variant::VARIANTS {
        println!("{:<24} #{:<3} {}", v.name, v.disagreement, v.summary);
    }
    Ok(Outcome::PASS)
}

fn cmd_sweep(args: SweepArgs, quiet: bool) -> Result<Outcome, Error> {
    if let Some(seeds) = &args.seeds {
        // A shard says how many pairs it runs itself (sweep::sweep): not the whole range.
        seeds.announce(quiet || args.shard.is_some());
    }
    let options = rehearsal::sweep::SweepOptions {
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
        force: args.force,
        sql: args.sql,
        scratch: args.scratch,
        baseline: args.baseline.baseline,
        bless: args.bless,
    };
    rehearsal::interrupt::install();
    let outcome = rehearsal::sweep::sweep(&options)?;
    let result = if outcome.interrupted && !outcome.complete() { Outcome::Interrupted } else { Outcome::Runs(outcome.outcome()) };
    if args.json.json {
        println!("{}", rehearsal::json_out::sweep(&outcome, &options.out));
        return Ok(result);
    }
    if !outcome.complete() {
        println!(
            "incomplete   {} of {} pairs finished{}; results kept, marked in {}",
            outcome.rows.len(),
            outcome.planned,
            if outcome.interrupted { " (interrupted)" } else { "" },
            options.out.join(rehearsal::sweep::INCOMPLETE_MARKER).display()
        );
    }
    let count = |v: &str| outcome.rows.iter().filter(|r| r.verdict == v).count();
    let (clean, known) = rehearsal::sweep::passes(&outcome.rows);
    println!("pairs        {}", outcome.rows.len());
    // A pass that broke a rule its scenario allows or expects is not counted as passed.
    println!("passed       {clean}");
    if known.runs > 0 {
        println!("known        {} passed with violations their scenarios allow or expect{}", known.runs, known.rules_text());
    }
    println!("failed       {}", count("fail"));
    println!("errors       {}", count("error"));
    if let Some(comparison) = &outcome.baseline {
        print!("{}", rehearsal::baseline::stdout_lines(comparison, &rehearsal::sweep::outcomes(&outcome.rows)));
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
    Ok(result)
}

/// The stdout lines on a `--require-coverage` file.
fn print_required(file: Option<&std::path::Path>, missing: &[rehearsal::coverage::Item]) {
    let Some(file) = file else { return };
    match missing.len() {
        0 => println!("coverage     every item of {} reached", file.display()),
        n => println!("coverage     {n} item(s) of {} never reached", file.display()),
    }
    for item in missing {
        println!("never reached: {item}");
    }
}

fn cmd_merge(args: MergeArgs) -> Result<Outcome, Error> {
    let required = args.require.require_coverage.as_deref().map(rehearsal::coverage::Required::load).transpose()?;
    let baseline = args.baseline.baseline.as_deref();
    let merged = match rehearsal::merge::merge(&args.dirs, &args.out, required.as_ref(), baseline, args.force)? {
        rehearsal::merge::MergeOutcome::Written(merged) => merged,
        rehearsal::merge::MergeOutcome::Incomplete(problems) => {
            for problem in &problems {
                eprintln!("rehearsal: merge: {problem}");
            }
            eprintln!("rehearsal: merge: incomplete set of shards, nothing written to {}", args.out.display());
            return Ok(Outcome::Runs(RunOutcome::Fail));
        }
    };
    let (rows, missing) = (&merged.rows, &merged.missing_coverage);
    println!("merged {} pairs into {}", rows.len(), args.out.join("results.csv").display());
    if let Some(comparison) = &merged.baseline {
        print!("{}", rehearsal::baseline::stdout_lines(comparison, &rehearsal::sweep::outcomes(rows)));
    }
    println!("summary      {}", args.out.join("summary.md").display());
    println!("coverage     {}", args.out.join("coverage.csv").display());
    print_required(args.require.require_coverage.as_deref(), missing);
    let worst = match &merged.baseline {
        Some(comparison) => rehearsal::baseline::worst_against(&rehearsal::sweep::outcomes(rows), comparison),
        None => rehearsal::sweep::worst_of(rows),
    };
    Ok(Outcome::Runs(if worst == RunOutcome::Pass && !missing.is_empty() { RunOutcome::Fail } else { worst }))
}

fn cmd_replay(args: ReplayArgs) -> Result<Outcome, Error> {
    let again = format!("rehearsal replay {}", rehearsal::shell::quote_path(&args.failure));
    let (text, outcome) = rehearsal::replay::replay(&args.failure, args.until, args.out).map_err(|e| e.with_replay(&again))?;
    print!("{text}");
    Ok(Outcome::Runs(outcome))
}

/// One line per folder. A folder that cannot be judged is reported and the others are still
/// judged; then the worst decides: a harness error (3), bad input (2), a verdict that differs
/// from the run's (3), a failing verdict (1), else 0.
fn cmd_judge(args: JudgeArgs) -> Result<Outcome, Error> {
    let mut outcomes = Vec::new();
    let (mut bad_input, mut harness) = (0, 0);
    for dir in &args.runs {
        match rehearsal::judge::judge_run(dir, args.scenario.as_deref(), args.write) {
            Ok(judged) => {
                println!("{}", judged.line());
                outcomes.push(judged.outcome());
            }
            Err(e) => {
                eprintln!("rehearsal: {e}");
                match e {
                    Error::Input(_) => bad_input += 1,
                    Error::Harness(_) => harness += 1,
                }
            }
        }
    }
    let total = args.runs.len();
    if harness > 0 {
        return Err(Error::harness(format!("{harness} of {total} run folder(s) could not be judged (a harness error)")));
    }
    if bad_input > 0 {
        return Err(Error::input(format!("{bad_input} of {total} run folder(s) could not be judged (bad input)")));
    }
    Ok(Outcome::Runs(RunOutcome::worst(outcomes)))
}

fn cmd_shrink(args: ShrinkArgs) -> Result<Outcome, Error> {
    let report = rehearsal::shrink::shrink(&args.failure, &args.out)?;
    println!("fails        {}", report.signature);
    println!("events       {} -> {}", report.events_before, report.events_after);
    println!("faults       {} -> {} ({})", report.faults_before, report.faults_after, report.scripting);
    println!("runs         {}", report.runs);
    println!("written      {}", args.out.display());
    Ok(Outcome::PASS)
}

fn cmd_findings(args: FindingsArgs, quiet: bool) -> Result<Outcome, Error> {
    if args.seed_scripts {
        let out = args.out.unwrap_or_else(|| PathBuf::from("reports/SEED-SCRIPTS.md"));
        let (_, md) = rehearsal::seed_scripts::seed_scripts(Path::new("scenarios"), Path::new("scripts/seed-000"))?;
        rehearsal::atomic::write_atomically(&out, md.as_bytes())?;
        println!("written {}", out.display());
        return Ok(Outcome::PASS);
    }
    args.seeds.seeds.announce(quiet);
    if args.repaired {
        let out = args.out.unwrap_or_else(rehearsal::repaired_doc::default_out);
        let cost_seeds = rehearsal::compare::parse_seeds(&args.cost_seeds)?;
        let runs_dir = rehearsal::findings::default_runs_dir().join("repaired");
        let md = rehearsal::repaired_doc::document(&args.seeds.seeds.list("--seeds")?, &cost_seeds, &runs_dir)?;
        rehearsal::atomic::write_atomically(&out, md.as_bytes())?;
        println!("written {}", out.display());
        return Ok(Outcome::PASS);
    }
    let out = args.out.unwrap_or_else(|| PathBuf::from("reports/FINDINGS.md"));
    let runs_dir = rehearsal::findings::default_runs_dir();
    let md = rehearsal::findings::findings(&args.seeds.seeds.list("--seeds")?, &runs_dir, args.protocol.as_deref())?;
    rehearsal::atomic::write_atomically(&out, md.as_bytes())?;
    println!("written {}", out.display());
    Ok(Outcome::PASS)
}

/// `bench --overhead`: one run timed against the bare replay of its statements.
fn cmd_overhead(args: BenchArgs) -> Result<Outcome, Error> {
    if args.repeat == 0 {
        return Err(Error::input("--repeat must be at least 1"));
    }
    let report = rehearsal::overhead::overhead(
        &args.scenario,
        args.seed,
        args.variants.protocol.as_deref(),
        &args.variants.variants,
        args.sql.as_deref(),
        args.repeat,
    )?;
    print!("{}", report.render());
    Ok(Outcome::PASS)
}

/// `bench` over a parameter grid. Runs that fail the protocol are data here, not a failure
/// of the command: only harness errors and Ctrl-C change the exit code.
fn cmd_bench(args: BenchArgs, quiet: bool) -> Result<Outcome, Error> {
    args.seeds.seeds.announce(quiet);
    let params = args.params.iter().map(|p| rehearsal::bench::parse_param(p)).collect::<Result<Vec<_>, _>>()?;
    let heatmap = match args.heatmap.as_slice() {
        [] => None,
        [x, y] => Some((x.clone(), y.clone())),
        _ => return Err(Error::input("--heatmap takes two parameter names: X,Y")),
    };
    let stem = args.scenario.file_stem().and_then(|s| s.to_str()).unwrap_or("scenario").to_string();
    let options = rehearsal::bench::BenchOptions {
        seeds: args.seeds.seeds.list("--seeds")?,
        params,
        protocol: args.variants.protocol,
        variants: args.variants.variants,
        jobs: args.jobs.get(),
        out: args.out.unwrap_or_else(|| PathBuf::from("reports/bench").join(stem)),
        heatmap,
        scenario: args.scenario,
        progress_every: if quiet { 0 } else { 200 },
        force: args.force,
        sql: args.sql,
    };
    let started = std::time::Instant::now();
    rehearsal::interrupt::install();
    let outcome = rehearsal::bench::bench(&options)?;
    if args.json.json {
        println!("{}", rehearsal::json_out::bench(&outcome, &options.out));
    } else {
        print!("{}", rehearsal::bench::render(&options, &outcome));
        // Wall time goes to stdout only; the files hold simulated quantities.
        let seconds = started.elapsed().as_secs_f64();
        println!("wall         {seconds:.1} s, {:.0} runs/s with {} jobs", outcome.runs.len() as f64 / seconds.max(1e-9), options.jobs);
    }
    Ok(if outcome.runs.len() < outcome.planned {
        Outcome::Interrupted
    } else if outcome.runs.iter().any(|r| r.verdict == "error") {
        Outcome::Runs(RunOutcome::Error)
    } else {
        Outcome::PASS
    })
}

/// `explore crashes`: distinct failures fail it (1), a run's harness error is 3, Ctrl-C 130.
fn cmd_explore_crashes(args: ExploreCrashesArgs, quiet: bool) -> Result<Outcome, Error> {
    let options = rehearsal::explore::ExploreOptions {
        scenario: args.scenario,
        seed: args.seed,
        protocol: args.variants.protocol,
        variants: args.variants.variants,
        sessions: args.sessions,
        points: points_of(&args.points)?,
        hangs: args.hangs,
        io_errors: args.io_errors,
        keep_faults: args.keep_faults,
        jobs: args.jobs.get(),
        out: args.out.unwrap_or_default(),
        scratch: args.scratch,
        progress_every: if quiet { 0 } else { 500 },
        force: args.force,
    };
    if args.list_points {
        print!("{}", rehearsal::explore::list_points(&options)?);
        return Ok(Outcome::PASS);
    }
    let started = std::time::Instant::now();
    rehearsal::interrupt::install();
    let exploration = rehearsal::explore::explore_crashes(&options)?;
    let result =
        if exploration.interrupted && !exploration.complete() { Outcome::Interrupted } else { Outcome::Runs(exploration.outcome()) };
    if args.json.json {
        println!("{}", rehearsal::json_out::explore(&exploration, &options.out));
        return Ok(result);
    }
    if !exploration.complete() {
        println!(
            "incomplete   {} of {} runs finished (interrupted); results kept, marked in {}",
            exploration.rows.len(),
            exploration.planned,
            options.out.join(rehearsal::explore::INCOMPLETE_MARKER).display()
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

/// `explore schedules`: distinct failures fail it (1), a run's harness error is 3, Ctrl-C 130.
fn cmd_explore_schedules(args: ExploreSchedulesArgs, quiet: bool) -> Result<Outcome, Error> {
    let options = rehearsal::schedules::SchedulesOptions {
        scenario: args.scenario,
        seed: args.seed,
        protocol: args.variants.protocol,
        variants: args.variants.variants,
        bound: args.bound,
        depth: args.depth.unwrap_or(usize::MAX),
        jobs: args.jobs.get(),
        out: args.out,
        scratch: args.scratch,
        progress: !quiet,
        force: args.force,
    };
    let started = std::time::Instant::now();
    rehearsal::interrupt::install();
    let enumeration = rehearsal::schedules::explore_schedules(&options)?;
    if enumeration.interrupted {
        let marker = options.out.join(rehearsal::schedules::INCOMPLETE_MARKER);
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

/// `search`: a violation the search found fails it (1), a run's harness error is 3, Ctrl-C 130.
fn cmd_search(args: SearchArgs, quiet: bool) -> Result<Outcome, Error> {
    let options = rehearsal::search::SearchOptions {
        scenario: args.scenario,
        runs: args.runs,
        seed: args.seed,
        strict: args.strict,
        protocol: args.variants.protocol,
        variants: args.variants.variants,
        jobs: args.jobs.get(),
        out: args.out,
        scratch: args.scratch,
        progress: !quiet,
        force: args.force,
    };
    let started = std::time::Instant::now();
    rehearsal::interrupt::install();
    let found = rehearsal::search::search(&options)?;
    if !found.complete() {
        println!("incomplete   interrupted; results kept, marked in {}", options.out.join(rehearsal::search::INCOMPLETE_MARKER).display());
    }
    print!("{}", found.render());
    println!("search.csv   {}", options.out.join("search.csv").display());
    println!("summary      {}", options.out.join("summary.md").display());
    // Wall time goes to stdout only; the files do not depend on it.
    println!("wall         {:.1} s with {} jobs", started.elapsed().as_secs_f64(), options.jobs);
    Ok(if found.interrupted && !found.complete() { Outcome::Interrupted } else { Outcome::Runs(found.outcome()) })
}

fn cmd_check(args: CheckArgs) -> Result<Outcome, Error> {
    if args.scenarios.is_empty() {
        if let Some(sql) = &args.sql {
            println!("{}", rehearsal::replay::check_sql(sql)?);
        }
    }
    for path in &args.scenarios {
        println!("{}", rehearsal::replay::check(path, args.sql.as_deref(), args.protocol.as_deref(), &[])?);
    }
    Ok(Outcome::PASS)
}

fn cmd_compare(args: CompareArgs, quiet: bool) -> Result<Outcome, Error> {
    args.seeds.seeds.announce(quiet);
    let out = args.out.unwrap_or_else(|| rehearsal::compare::default_out(&args.scenario));
    let options = rehearsal::compare::CompareOptions {
        scenario: &args.scenario,
        columns: &args.variants,
        seeds: &args.seeds.seeds.list("--seeds")?,
        out: &out,
        force: args.force,
        sql: args.sql.as_deref(),
        protocol: args.protocol.as_deref(),
        jobs: args.jobs.get(),
        keep_runs: args.keep_runs,
    };
    let (table, sql) = rehearsal::compare::compare(&options)?;
    if args.json.json {
        println!("{}", rehearsal::json_out::compare(&table, &sql, &out));
    } else {
        print!("{table}\nprotocol SQL of each column:\n{sql}");
        println!("per run      {}", out.join("compare.csv").display());
    }
    Ok(Outcome::PASS)
}

fn cmd_list(args: ListArgs) -> Result<Outcome, Error> {
    print!("{}", rehearsal::scenario_list::render(&rehearsal::scenario_list::list(&args.dir)?));
    Ok(Outcome::PASS)
}

fn cmd_new(args: NewArgs) -> Result<Outcome, Error> {
    rehearsal::new_scenario::write(&args.file, args.force)?;
    println!("written      {}", args.file.display());
    println!("run it with  {} run {}", rehearsal::shell::program(), rehearsal::shell::quote_path(&args.file));
    Ok(Outcome::PASS)
}

fn cmd_completions(args: CompletionsArgs) -> Result<Outcome, Error> {
    use clap::CommandFactory;
    clap_complete::generate(args.shell, &mut Cli::command(), "rehearsal", &mut std::io::stdout());
    Ok(Outcome::PASS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    /// Every argument of every command, nested ones too, says what it is in `--help`.
    #[test]
    fn every_argument_has_help_text() {
        fn missing(command: &clap::Command, path: &str, out: &mut Vec<String>) {
            for arg in command.get_arguments() {
                let builtin = matches!(arg.get_id().as_str(), "help" | "version");
                if !builtin && arg.get_help().is_none() && arg.get_long_help().is_none() {
                    out.push(format!("{path} {}", arg.get_id()));
                }
            }
            for sub in command.get_subcommands() {
                missing(sub, &format!("{path} {}", sub.get_name()), out);
            }
        }
        let mut out = Vec::new();
        missing(&Cli::command(), "rehearsal", &mut out);
        assert!(out.is_empty(), "arguments without help text: {out:#?}");
    }

    #[test]
    fn shared_flags_are_parsed_and_checked_once_by_clap() {
        let parse = |args: &[&str]| Cli::try_parse_from([&["rehearsal"], args].concat());
        let cli =
            parse(&["sweep", "a.toml", "--seeds", "3..=5", "--jobs", "2", "--shard", "1/2", "--variant", "fencing", "--out", "o"]).unwrap();
        let Command::Sweep(args) = cli.command else { panic!("a sweep") };
        assert_eq!(
            (args.seeds.map(|s| s.0.to_vec("--seeds").unwrap()), args.jobs.get(), args.shard),
            (Some(vec![3, 4, 5]), 2, Some((1, 2)))
        );
        assert_eq!(args.variants.variants, ["fencing"]);
        let Command::Bench(args) = parse(&["bench", "a.toml"]).unwrap().command else { panic!("a bench") };
        assert_eq!((args.seeds.seeds.list("--seeds").unwrap(), args.jobs.jobs), ((1..=10).collect(), None), "defaults: 1..=10, all cores");
        assert!(args.jobs.get() >= 1);
        for (flag, value, message) in
            [("--jobs", "0", "--jobs must be at least 1"), ("--seeds", "5..2", "seed range `5..2`"), ("--shard", "4/3", "shard `4/3`")]
        {
            let mut args = vec!["sweep", "a.toml", "--out", "o", flag, value];
            if flag != "--seeds" {
                args.extend(["--seeds", "1"]);
            }
            let e = parse(&args).err().expect("refused");
            assert!(e.use_stderr() && e.to_string().contains(message), "{e}");
        }
    }
}
