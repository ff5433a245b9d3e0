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
        /// Replace the run already in the output folder (refused without it).
        #[arg(long)]
        force: bool,
    },
    /// List the protocol variants: one per disagreement of PROTOCOL.md.
    Variants,
    /// Run every (scenario, seed) pair in parallel; write results.csv, junit.xml, failures/.
    Sweep {
        #[arg(required = true)]
        scenarios: Vec<PathBuf>,
        /// Seeds: N, A..B (B excluded) or A..=B.
        #[arg(long)]
        seeds: String,
        /// Worker threads (default: all cores). Results do not depend on it.
        #[arg(long)]
        jobs: Option<usize>,
        /// Run only shard I of N (1-based), e.g. 2/4.
        #[arg(long)]
        shard: Option<String>,
        /// Stop starting new pairs after the first failure.
        #[arg(long)]
        fail_fast: bool,
        /// Run every pair twice and fail on any difference in trace or database bytes.
        #[arg(long)]
        check_determinism: bool,
        #[arg(long = "variant")]
        variants: Vec<String>,
        #[arg(long)]
        out: PathBuf,
    },
    /// Join shard outputs into one results.csv and junit.xml; every pair exactly once.
    Merge {
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        #[arg(long)]
        out: PathBuf,
    },
    /// Re-run a saved failure and confirm its trace hash; --until stops early and shows state.
    Replay {
        failure: PathBuf,
        /// Stop at this simulated time (ms) and print every task's row.
        #[arg(long)]
        until: Option<i64>,
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Minimize a saved failure while it keeps failing the same way; write the scenario.
    Shrink {
        failure: PathBuf,
        #[arg(long)]
        out: PathBuf,
    },
    /// Regenerate reports/FINDINGS.md: every disagreement, default against variant.
    Findings {
        #[arg(long, default_value = "1..=10")]
        seeds: String,
        #[arg(long, default_value = "reports/FINDINGS.md")]
        out: PathBuf,
    },
    /// Parameter grid over seeds (CSV per grid point, heatmaps), or with --overhead the cost
    /// of one run against the SQLite floor of its own statements.
    Bench {
        scenario: PathBuf,
        /// NAME=V1,V2,…: a dotted scenario key and its values (TOML values; repeatable), e.g.
        /// timing.background_poll_ms=5000,15000 or faults.watcher_jitter_ms.max=0,30000.
        #[arg(long = "param")]
        params: Vec<String>,
        /// Seeds run at every grid point: N, A..B (B excluded) or A..=B.
        #[arg(long, default_value = "1..=10")]
        seeds: String,
        /// Worker threads (default: all cores). Results do not depend on it.
        #[arg(long)]
        jobs: Option<usize>,
        /// The two parameters of the heatmaps (default: the first two --param).
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
        #[arg(long = "variant")]
        variants: Vec<String>,
        /// Output folder of the grid (bench.csv, heatmaps, points/).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Validate scenario files and their SQL without running them.
    Check {
        #[arg(required = true)]
        scenarios: Vec<PathBuf>,
    },
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
        Command::Sweep { scenarios, seeds, jobs, shard, fail_fast, check_determinism, variants, out } => {
            let parsed = (|| -> Result<rehearsal::sweep::SweepOptions, Error> {
                let seeds = rehearsal::compare::parse_seeds(&seeds)?;
                let shard = shard.as_deref().map(rehearsal::sweep::parse_shard).transpose()?;
                let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
                if jobs == 0 {
                    return Err(Error::input("--jobs must be at least 1"));
                }
                Ok(rehearsal::sweep::SweepOptions {
                    scenarios,
                    seeds,
                    variants,
                    jobs,
                    shard,
                    fail_fast,
                    check_determinism,
                    out,
                    progress_every: 100,
                })
            })();
            let options = match parsed {
                Ok(options) => options,
                Err(e) => return fail(e, None),
            };
            rehearsal::interrupt::install();
            match rehearsal::sweep::sweep(&options) {
                Ok(outcome) => {
                    if outcome.rows.len() < outcome.planned {
                        println!(
                            "incomplete   {} of {} pairs finished{}; results kept, marked in {}",
                            outcome.rows.len(),
                            outcome.planned,
                            if outcome.interrupted { " (interrupted)" } else { "" },
                            options.out.join(rehearsal::sweep::INCOMPLETE_MARKER).display()
                        );
                    }
                    let count = |v: &str| outcome.rows.iter().filter(|r| r.verdict == v).count();
                    println!("pairs        {}", outcome.rows.len());
                    println!("passed       {}", count("pass"));
                    println!("failed       {}", count("fail"));
                    println!("errors       {}", count("error"));
                    for row in outcome.rows.iter().filter(|r| r.verdict != "pass") {
                        println!("{} seed {}: {} — {}", row.verdict, row.seed, row.first_violation, row.replay);
                    }
                    println!("results      {}", options.out.join("results.csv").display());
                    ExitCode::from(outcome.exit_code as u8)
                }
                Err(e) => fail(e, None),
            }
        }
        Command::Merge { dirs, out } => match rehearsal::sweep::merge(&dirs, &out) {
            Ok(rows) => {
                println!("merged {} pairs into {}", rows.len(), out.join("results.csv").display());
                let code = if rows.iter().any(|r| r.verdict == "error") {
                    3
                } else if rows.iter().any(|r| r.verdict == "fail") {
                    1
                } else {
                    0
                };
                ExitCode::from(code)
            }
            Err(e) => fail(e, None),
        },
        Command::Replay { failure, until, out } => match rehearsal::replay::replay(&failure, until, out) {
            Ok((text, code)) => {
                print!("{text}");
                ExitCode::from(code as u8)
            }
            Err(e) => fail(e, None),
        },
        Command::Shrink { failure, out } => match rehearsal::shrink::shrink(&failure, &out) {
            Ok(report) => {
                println!("rule         {}", report.rule);
                println!("events       {} -> {}", report.events_before, report.events_after);
                println!("faults       {} -> {}", report.faults_before, report.faults_after);
                println!("runs         {}", report.runs);
                println!("written      {}", out.display());
                ExitCode::from(0)
            }
            Err(e) => fail(e, None),
        },
        Command::Findings { seeds, out } => {
            let result = rehearsal::compare::parse_seeds(&seeds)
                .and_then(|seeds| rehearsal::findings::findings(&seeds, &rehearsal::findings::default_runs_dir()));
            match result.and_then(|md| std::fs::write(&out, md).map_err(Error::from)) {
                Ok(()) => {
                    println!("written {}", out.display());
                    ExitCode::from(0)
                }
                Err(e) => fail(e, None),
            }
        }
        Command::Bench { scenario, params, seeds, jobs, heatmap, overhead, seed, repeat, variants, out } => {
            if overhead {
                if repeat == 0 {
                    return fail(Error::input("--repeat must be at least 1"), None);
                }
                return match rehearsal::overhead::overhead(&scenario, seed, &variants, repeat) {
                    Ok(report) => {
                        print!("{}", report.render());
                        ExitCode::from(0)
                    }
                    Err(e) => fail(e, seed),
                };
            }
            let parsed = (|| -> Result<rehearsal::bench::BenchOptions, Error> {
                let params = params.iter().map(|p| rehearsal::bench::parse_param(p)).collect::<Result<Vec<_>, _>>()?;
                let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
                if jobs == 0 {
                    return Err(Error::input("--jobs must be at least 1"));
                }
                let heatmap = match heatmap.as_slice() {
                    [] => None,
                    [x, y] => Some((x.clone(), y.clone())),
                    _ => return Err(Error::input("--heatmap takes two parameter names: X,Y")),
                };
                let stem = scenario.file_stem().and_then(|s| s.to_str()).unwrap_or("scenario").to_string();
                Ok(rehearsal::bench::BenchOptions {
                    seeds: rehearsal::compare::parse_seeds(&seeds)?,
                    params,
                    variants,
                    jobs,
                    out: out.unwrap_or_else(|| PathBuf::from("reports/bench").join(stem)),
                    heatmap,
                    scenario,
                    progress_every: 200,
                })
            })();
            let options = match parsed {
                Ok(options) => options,
                Err(e) => return fail(e, None),
            };
            let started = std::time::Instant::now();
            rehearsal::interrupt::install();
            match rehearsal::bench::bench(&options) {
                Ok(outcome) => {
                    print!("{}", rehearsal::bench::render(&options, &outcome));
                    // Wall time goes to stdout only; the files hold simulated quantities.
                    let seconds = started.elapsed().as_secs_f64();
                    println!(
                        "wall         {seconds:.1} s, {:.0} runs/s with {} jobs",
                        outcome.runs.len() as f64 / seconds.max(1e-9),
                        options.jobs
                    );
                    let errors = outcome.runs.iter().any(|r| r.verdict == "error");
                    let code = if outcome.runs.len() < outcome.planned {
                        rehearsal::interrupt::EXIT_INTERRUPTED
                    } else if errors {
                        3
                    } else {
                        0
                    };
                    ExitCode::from(code as u8)
                }
                Err(e) => fail(e, None),
            }
        }
        Command::Check { scenarios } => {
            for path in &scenarios {
                match rehearsal::replay::check(path) {
                    Ok(line) => println!("{line}"),
                    Err(e) => return fail(e, None),
                }
            }
            ExitCode::from(0)
        }
        Command::Variants => {
            for v in rehearsal::variant::VARIANTS {
                println!("{:<24} #{:<3} {}", v.name, v.disagreement, v.summary);
            }
            ExitCode::from(0)
        }
        Command::Run { scenario, seed, out, variants, force } => {
            let options = RunOptions { scenario_path: scenario, seed, out_dir: out, variants };
            let result = rehearsal::run::refuse_existing_run(&options, force).and_then(|()| run(&options)).and_then(|summary| {
                let loaded = rehearsal::scenario::Scenario::load(&options.scenario_path)?;
                let scenario = rehearsal::variant::with_variants(&loaded, &options.variants)?;
                rehearsal::report::write_run_reports(&summary.out_dir, &summary, &scenario)?;
                Ok(summary)
            });
            match result {
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
