//! The `rehearsal` command. Arguments are parsed (and seed ranges, job counts and shards
//! validated) once, by clap, with the argument groups several commands share
//! (`commands::args`); each command's body is one function of `rehearsal::commands` that calls
//! the library and says how it went (`Outcome`); `exit` is the one place that turns that, or an
//! error, into the exit code: 0 pass, 1 protocol failure, 2 bad input, 3 harness error, 130
//! interrupted.

use std::process::ExitCode;

// Every line the crate prints goes through sim/base/console.rs, which never panics on a
// closed or full stream (issue 41); these shadow the standard macros here.
macro_rules! eprintln {
    () => { rehearsal::base::console::err(format_args!("\n")) };
    ($($arg:tt)*) => { rehearsal::base::console::err(format_args!("{}\n", format_args!($($arg)*))) };
}

use clap::{Args, Parser, Subcommand};

use rehearsal::base::error::Error;
use rehearsal::commands::bench::BenchArgs;
use rehearsal::commands::compare::CompareArgs;
use rehearsal::commands::explore::ExploreCommand;
use rehearsal::commands::findings::FindingsArgs;
use rehearsal::commands::replay::{CheckArgs, JudgeArgs, ReplayArgs, ShrinkArgs};
use rehearsal::commands::run::RunArgs;
use rehearsal::commands::scenarios::{ListArgs, NewArgs};
use rehearsal::commands::search::SearchArgs;
use rehearsal::commands::swarm::SwarmArgs;
use rehearsal::commands::sweep::{MergeArgs, SweepArgs};
use rehearsal::commands::{self, Outcome};

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
    /// Run a regression corpus (shrunk failures with their fingerprints): exit 1 when an
    /// entry fails another way; entries that keep passing are reported for removal.
    Corpus(rehearsal::commands::corpus::CorpusArgs),
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
    /// The repaired profile over scenarios generated at random from every feature of the
    /// scenario format, each checked fault-free first; failures classified by assumption.
    Swarm(SwarmArgs),
    /// List the scenario files under a folder with their descriptions.
    List(ListArgs),
    /// Write a commented scenario template that runs as it is.
    New(NewArgs),
    /// Measure the protocol's statements and a scenario's load on this machine's SQLite and
    /// compare with rehearsal's contention model (docs/calibration.md).
    #[command(subcommand)]
    Calibrate(rehearsal::commands::calibrate::CalibrateCommand),
    /// Install or remove the history recorder of a deployment's comms.db, for `judge --db`.
    #[command(subcommand)]
    Record(rehearsal::commands::record::RecordCommand),
    /// Print a shell completion script, e.g. `rehearsal completions bash > /etc/bash_completion.d/rehearsal`.
    Completions(CompletionsArgs),
}

#[derive(Args)]
struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    shell: clap_complete::Shell,
}

/// The exit-code policy, the only one: an outcome's code, or the error's (2 bad input, 3
/// harness), printed with the seed a harness error happened with when the command has one.
fn exit(result: Result<Outcome, Error>, seed: Option<u64>) -> ExitCode {
    let code = match result {
        Ok(outcome) => outcome.exit_code(),
        Err(e) => {
            eprintln!("rehearsal: {e}");
            if let (Error::Harness(_), Some(seed)) = (&e, seed) {
                eprintln!("rehearsal: seed {seed}");
            }
            e.exit_code()
        }
    };
    ExitCode::from(rehearsal::base::console::exit_code(code) as u8)
}

fn main() -> ExitCode {
    rehearsal::base::keep_memory::keep_freed_memory();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            // Help into a full disk is an I/O error (exit 3), into a closed pipe nothing (issue 41).
            if let Err(io) = e.print() {
                if io.kind() != std::io::ErrorKind::BrokenPipe {
                    eprintln!("rehearsal: cannot write to standard output: {io} (an I/O error: exit 3)");
                    return ExitCode::from(3);
                }
            }
            return ExitCode::from(code);
        }
    };
    // The seed of a single run, named with a harness error.
    let seed = match &cli.command {
        Command::Run(args) => args.seed,
        Command::Bench(args) if args.overhead => args.seed,
        _ => None,
    };
    // Ctrl-C removes the command's temporaries before it exits 130 (issue 41); the long
    // commands that stop cooperatively make it so when they start.
    rehearsal::base::interrupt::install_at_once();
    // A panic anywhere is a harness error (exit 3), never 101 (issue 41).
    exit(rehearsal::base::panic_guard::guarded("rehearsal", || dispatch(cli.command, cli.quiet)), seed)
}

fn dispatch(command: Command, quiet: bool) -> Result<Outcome, Error> {
    match command {
        Command::Run(args) => commands::run::run(args, quiet),
        Command::Variants => commands::run::variants(),
        Command::Sweep(args) => commands::sweep::sweep(args, quiet),
        Command::Merge(args) => commands::sweep::merge(args),
        Command::Replay(args) => commands::replay::replay(args),
        Command::Judge(args) => commands::replay::judge(args),
        Command::Shrink(args) => commands::replay::shrink(args),
        Command::Corpus(args) => commands::corpus::corpus(args),
        Command::Findings(args) => commands::findings::findings(args, quiet),
        Command::Bench(args) if args.overhead => commands::bench::overhead(args),
        Command::Bench(args) => commands::bench::bench(args, quiet),
        Command::Check(args) => commands::replay::check(args),
        Command::Compare(args) => commands::compare::compare(args, quiet),
        Command::Explore(command) => commands::explore::explore(command, quiet),
        Command::Search(args) => commands::search::search(args, quiet),
        Command::Swarm(args) => commands::swarm::swarm(args, quiet),
        Command::List(args) => commands::scenarios::list(args),
        Command::New(args) => commands::scenarios::new(args),
        Command::Completions(args) => completions(args),
        Command::Calibrate(command) => commands::calibrate::calibrate(command),
        Command::Record(command) => rehearsal::commands::record::record(command),
    }
}

fn completions(args: CompletionsArgs) -> Result<Outcome, Error> {
    use clap::CommandFactory;
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "rehearsal", &mut script);
    rehearsal::base::console::out_bytes(&script);
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
