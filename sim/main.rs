//! The `rehearsal` command. `main` only parses arguments, calls the library and maps the
//! outcome to an exit code: 0 pass, 1 protocol failure, 2 bad input, 3 harness error.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use rehearsal::error::Error;
use rehearsal::run::{run, RunOptions};

#[derive(Parser)]
#[command(name = "rehearsal", version, about = "Deterministic simulator and test harness for the conductor/musician comms.db protocol")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one scenario with one seed; prints the verdict, the trace hash and a replay command.
    Run {
        /// Scenario file (TOML), e.g. scenarios/quickstart.toml.
        scenario: PathBuf,
        /// Seed in decimal; defaults to the scenario's run.seed.
        #[arg(long, env = "REHEARSAL_SEED")]
        seed: Option<u64>,
        /// Output folder; defaults to reports/runs/<scenario>-<seed>/.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Protocol variant to apply (repeatable); `rehearsal variants` lists them.
        #[arg(long = "variant")]
        variants: Vec<String>,
    },
    /// List the protocol variants: one per disagreement of PROTOCOL.md.
    Variants,
    /// Run the same seeds under several variants and tabulate violations and latencies.
    Compare {
        scenario: PathBuf,
        /// Comma-separated variant names; `default` is the seeds' own protocol.
        #[arg(long, value_delimiter = ',', default_value = "default")]
        variants: Vec<String>,
        /// Seeds: N, A..B (B excluded) or A..=B.
        #[arg(long, default_value = "1..=10")]
        seeds: String,
        /// Folder for the runs; defaults to reports/compare/<scenario>/.
        #[arg(long)]
        out: Option<PathBuf>,
    },
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
    match cli.command {
        Command::Compare { scenario, variants, seeds, out } => {
            let seeds = match rehearsal::compare::parse_seeds(&seeds) {
                Ok(seeds) => seeds,
                Err(e) => return fail(e, None),
            };
            let out = out.unwrap_or_else(|| rehearsal::compare::default_out(&scenario));
            match rehearsal::compare::compare(&scenario, &variants, &seeds, &out) {
                Ok(table) => {
                    print!("{table}");
                    ExitCode::from(0)
                }
                Err(e) => fail(e, None),
            }
        }
        Command::Variants => {
            for v in rehearsal::variant::VARIANTS {
                println!("{:<24} #{:<3} {}", v.name, v.disagreement, v.summary);
            }
            ExitCode::from(0)
        }
        Command::Run { scenario, seed, out, variants } => {
            let options = RunOptions { scenario_path: scenario, seed, out_dir: out, variants };
            match run(&options) {
                Ok(summary) => {
                    print!("{}", summary.render());
                    if summary.verdict.passed() {
                        ExitCode::from(0)
                    } else {
                        eprintln!("rehearsal: the protocol failed with seed {}; reproduce with: {}", summary.seed, summary.replay);
                        ExitCode::from(1)
                    }
                }
                Err(e) => fail(e, options.seed),
            }
        }
    }
}

fn fail(e: Error, seed: Option<u64>) -> ExitCode {
    eprintln!("rehearsal: {e}");
    if let (Error::Harness(_), Some(seed)) = (&e, seed) {
        eprintln!("rehearsal: seed {seed}");
    }
    ExitCode::from(e.exit_code() as u8)
}
