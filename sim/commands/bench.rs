//! `rehearsal bench`: a parameter grid over seeds, or with `--overhead` one run timed against
//! the bare replay of its statements.

use std::path::PathBuf;

use clap::Args;

use super::args::{ForceArg, JobsArg, JsonArg, SeedRangeArg, SqlArg, VariantArgs};
use super::Outcome;
use crate::base::error::Error;
use crate::vocab::RunOutcome;

#[derive(Args)]
#[command(mut_arg("seeds", |a| a.help("Seeds run at every grid point: N, A..B (B excluded) or A..=B")))]
pub struct BenchArgs {
    /// Scenario file (TOML) every grid point starts from, e.g. scenarios/bench/poll-jitter.toml.
    pub scenario: PathBuf,
    /// NAME=V1,V2,…: a dotted scenario key and its values (TOML values; repeatable), e.g.
    /// timing.background_poll_ms=5000,15000 or faults.watcher_jitter_ms.max=0,30000. Keys
    /// swept together: A,B=A1,B1;A2,B2;… (a tuple per step, `;` between tuples), e.g.
    /// timing.heartbeat_refresh_s,conductor.staleness_s=300,360;480,540.
    #[arg(long = "param")]
    pub params: Vec<String>,
    #[command(flatten)]
    pub seeds: SeedRangeArg,
    #[command(flatten)]
    pub jobs: JobsArg,
    /// The two parameters of the heatmaps (default: the first two --param; with one --param,
    /// bar charts instead).
    #[arg(long, value_delimiter = ',')]
    pub heatmap: Vec<String>,
    /// Time one run against the bare replay of its statements instead of a grid.
    #[arg(long)]
    pub overhead: bool,
    /// With --overhead: the seed to run (default: the scenario's run.seed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// With --overhead: timed repeats; the fastest of each side is reported.
    #[arg(long, default_value_t = 5)]
    pub repeat: usize,
    #[command(flatten)]
    pub variants: VariantArgs,
    /// Output folder of the grid (bench.csv, heatmaps, points/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub force: ForceArg,
    #[command(flatten)]
    pub sql: SqlArg,
    #[command(flatten)]
    pub json: JsonArg,
}

/// `bench --overhead`: one run timed against the bare replay of its statements.
pub fn overhead(args: BenchArgs) -> Result<Outcome, Error> {
    if args.repeat == 0 {
        return Err(Error::input("--repeat must be at least 1"));
    }
    let report = crate::campaign::overhead::overhead(
        &args.scenario,
        args.seed,
        args.variants.protocol.as_deref(),
        &args.variants.variants,
        args.sql.sql.as_deref(),
        args.repeat,
    )?;
    print!("{}", report.render());
    Ok(Outcome::PASS)
}

/// `bench` over a parameter grid. Its figures count every run; the exit code follows README's
/// table (issue 44): 1 when a run failed the protocol (a violation its scenario allows is no
/// failure), 3 on a harness error, 130 on Ctrl-C.
pub fn bench(args: BenchArgs, quiet: bool) -> Result<Outcome, Error> {
    args.seeds.seeds.announce(quiet);
    let params = args.params.iter().map(|p| crate::campaign::bench::parse_param(p)).collect::<Result<Vec<_>, _>>()?;
    let heatmap = match args.heatmap.as_slice() {
        [] => None,
        [x, y] => Some((x.clone(), y.clone())),
        _ => return Err(Error::input("--heatmap takes two parameter names: X,Y")),
    };
    let stem = args.scenario.file_stem().and_then(|s| s.to_str()).unwrap_or("scenario").to_string();
    let options = crate::campaign::bench::BenchOptions {
        seeds: args.seeds.seeds.list("--seeds")?,
        params,
        protocol: args.variants.protocol,
        variants: args.variants.variants,
        jobs: args.jobs.get(),
        out: args.out.unwrap_or_else(|| PathBuf::from("reports/bench").join(stem)),
        heatmap,
        scenario: args.scenario,
        progress_every: if quiet { 0 } else { 200 },
        force: args.force.force,
        sql: args.sql.sql,
    };
    let started = std::time::Instant::now();
    crate::base::interrupt::install();
    let outcome = crate::campaign::bench::bench(&options)?;
    if args.json.json {
        println!("{}", crate::commands::json_out::bench(&outcome, &options.out));
    } else {
        print!("{}", crate::campaign::bench::render(&options, &outcome));
        // Wall time goes to stdout only; the files hold simulated quantities.
        let seconds = started.elapsed().as_secs_f64();
        println!("wall         {seconds:.1} s, {:.0} runs/s with {} jobs", outcome.runs.len() as f64 / seconds.max(1e-9), options.jobs);
    }
    Ok(if outcome.runs.len() < outcome.planned {
        Outcome::Interrupted
    } else if outcome.runs.iter().any(|r| r.verdict == RunOutcome::Error) {
        Outcome::Runs(RunOutcome::Error)
    } else if outcome.runs.iter().any(|r| r.verdict == RunOutcome::Fail) {
        Outcome::FAIL
    } else {
        Outcome::PASS
    })
}
