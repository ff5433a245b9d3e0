//! `rehearsal run` (one scenario, one seed) and `rehearsal variants` (what `--protocol` and
//! `--variant` accept).

use std::path::PathBuf;

use clap::Args;

use super::args::{JsonArg, SqlArg, VariantArgs};
use super::Outcome;
use crate::base::error::Error;

#[derive(Args)]
pub struct RunArgs {
    /// Scenario file (TOML), e.g. scenarios/quickstart.toml.
    pub scenario: PathBuf,
    /// Seed in decimal; defaults to the scenario's run.seed.
    #[arg(long, env = "REHEARSAL_SEED")]
    pub seed: Option<u64>,
    /// Output folder; defaults to reports/runs/<scenario>-<seed>/ (<scenario>+<variant>-<seed> with --variant).
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub variants: VariantArgs,
    /// Conductor profile, in place of the scenario's `[conductor] profile` (default
    /// `invented`; docs/protocol.md C110): `rehearsal variants` lists them.
    #[arg(long, value_name = "NAME")]
    pub conductor: Option<String>,
    /// Replace the run already in the output folder (refused without it).
    #[arg(long)]
    pub force: bool,
    /// Install the history recorder in the run's comms.db (as `rehearsal record install` does
    /// for a deployment), so `rehearsal judge --db` can judge it. Off by default: the run's
    /// files are then the bytes they always were.
    #[arg(long)]
    pub record_history: bool,
    #[command(flatten)]
    pub sql: SqlArg,
    #[command(flatten)]
    pub json: JsonArg,
}

pub fn run(args: RunArgs, quiet: bool) -> Result<Outcome, Error> {
    // The scenario is loaded once; the plan says where the run goes before anything is written.
    let whole = crate::run::timings::start("whole command");
    let loading = crate::run::timings::start("load, plan, claim");
    let loaded = crate::input::scenario::Scenario::load(&args.scenario)?;
    let scenario = loaded
        .with_sql(args.sql.sql.as_deref())
        .with_profile(args.variants.protocol.as_deref())?
        .with_conductor(args.conductor.as_deref())?;
    let plan = crate::plan::RunPlan::resolve(&scenario, args.seed, &args.variants.variants, args.out)?;
    // Issue 48: a configuration outside the proof's assumptions says so at the start, and its
    // verdict says so again (`Verdict::outside`, printed and in summary.md).
    for line in crate::judging::outside::outside_lines(&scenario).iter().filter(|_| !quiet) {
        eprintln!("rehearsal: outside {line}");
    }
    // Held until the run's reports are written: one writer per folder (sim/base/out_lock.rs).
    let _lock = crate::world::run_folder::claim(&plan.out_dir, args.force)?;
    // A run that ends in an error (an event cap, a statement that never ends, a panic) says
    // how to reproduce it, as a failing one does.
    let replay = crate::run::replay_of(&plan);
    loading.end();
    let mut progress = (!quiet).then(crate::campaign::progress::RunProgress::new);
    let mut show = |now_ms, max_ms| {
        if let Some(progress) = progress.as_mut() {
            progress.update(now_ms, max_ms);
        }
    };
    // The reports' model is built from the trace's bytes as the run writes them
    // (sim/report/streamed.rs), so reading trace.csv back does not wait for the run's end.
    let (trace_copy, streamed) = crate::report::StreamedModel::start(&plan.out_dir.join("trace.csv")).unzip();
    let how = crate::run::Execution { progress: Some(&mut show), record_history: args.record_history, trace_copy, ..Default::default() };
    let mut summary = crate::run::execute(plan, how).map_err(|e| e.with_replay(&replay))?.summary;
    drop(progress);
    // A scripted fault that never struck proves nothing (issue 44): `sweep
    // --require-faults-fired` fails on it; a single run warns.
    for entry in summary.faults.unreached() {
        eprintln!(
            "rehearsal: warning: scripted fault {entry} of {} never struck: its point or time was never reached",
            args.scenario.display()
        );
    }
    crate::run::timings::time("reports", || {
        crate::report::write_run_reports_streamed(&summary.out_dir, &summary, &summary.resolved, streamed)
    })?;
    whole.end();
    let outcome = if summary.verdict.passed() { Outcome::PASS } else { Outcome::FAIL };
    if args.json.json {
        println!("{}", crate::commands::json_out::run(&summary));
        return Ok(outcome);
    }
    // The files keep `rehearsal …`; the terminal shows a command that runs as pasted.
    summary.replay = crate::base::shell::for_terminal(&summary.replay);
    print!("{}", summary.render());
    if outcome != Outcome::PASS {
        eprintln!("rehearsal: the protocol failed with seed {}; reproduce with: {}", summary.seed, summary.replay);
    }
    Ok(outcome)
}

pub fn variants() -> Result<Outcome, Error> {
    println!("profiles (`[protocol] profile`, `--protocol`):");
    for p in crate::vocab::PROFILES {
        let applies = if p.variants.is_empty() { "no variant".to_string() } else { p.variants.join(", ") };
        println!("{:<24} {}: {applies}", p.name, p.summary);
    }
    println!("\nvariants (`[protocol] variants`, `--variant`):");
    for v in crate::input::variant::VARIANTS {
        println!("{:<24} #{:<3} {}", v.name, v.disagreement, v.summary);
    }
    println!("\nconductor profiles (`[conductor] profile`, `--conductor`; docs/protocol.md C110):");
    for c in crate::input::conductor_profile::CONDUCTOR_PROFILES {
        println!("{:<24} {}", c.name, c.summary);
    }
    Ok(Outcome::PASS)
}
