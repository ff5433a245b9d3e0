//! What a run costs (issue 7), with criterion: `cargo bench --bench run`.
//!
//! - `engine/quickstart`: a whole run end to end, per event (scenario load, comms.db creation,
//!   every statement, oracles, trace).
//! - `floor/…`: the same run against the floor, per statement: the statements it executed,
//!   replayed through bare prepared statements with the same database settings.
//! - `contention/N`: N musicians with write-lock contention modelled (1 to 256).
//! - `duration/Hh`: 8 musicians for longer and longer plans: cost against simulated time.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rehearsal::input::scenario::Scenario;
use rehearsal::run::{catalog_for, execute, run_scenario, Execution, RunOptions, RunSummary};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn options(scenario: &Path, out: &Path) -> RunOptions {
    RunOptions { scenario_path: scenario.to_path_buf(), seed: None, out_dir: Some(out.to_path_buf()), variants: Vec::new() }
}

fn run_text(text: &str, out: &Path) -> RunSummary {
    let path = out.join("bench.toml");
    let scenario = Scenario::parse(text, &path).expect("bench scenario parses");
    run_scenario(scenario, &options(&path, out)).expect("bench scenario runs")
}

fn engine_and_floor(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let path = root().join("scenarios/quickstart.toml");
    let run_options = options(&path, tmp.path());
    let executed =
        execute(run_options.plan(&Scenario::load(&path).unwrap()).unwrap(), Execution { record: true, ..Execution::default() }).unwrap();
    let (summary, recorded) = (executed.summary, executed.recorded);
    let catalog = catalog_for(&Scenario::load(&path).unwrap()).unwrap();

    let mut group = c.benchmark_group("engine");
    group.throughput(Throughput::Elements(summary.events));
    group.sample_size(20);
    group
        .bench_function("quickstart", |b| b.iter(|| black_box(run_scenario(Scenario::load(&path).unwrap(), &run_options).unwrap().events)));
    group.finish();

    // Statements per second: the simulator against bare rusqlite on the same statements.
    let mut group = c.benchmark_group("floor");
    group.throughput(Throughput::Elements(recorded.len() as u64));
    group.sample_size(20);
    group.bench_function("simulator", |b| {
        b.iter(|| black_box(run_scenario(Scenario::load(&path).unwrap(), &run_options).unwrap().statements))
    });
    let db = tmp.path().join("floor.db");
    group.bench_function("bare_rusqlite", |b| {
        b.iter(|| black_box(rehearsal::campaign::overhead::replay_floor(&db, &catalog, &recorded, summary.seed).unwrap()))
    });
    group.finish();
}

/// N musicians, every write holding the write lock 20-200 ms in simulated time.
fn contention_scenario(musicians: u64) -> String {
    format!(
        r#"description = "contention bench"
[run]
seed = 3
sim_time_max_ms = 43_200_000
events_max = 50_000_000
[context]
agent_launch_pct = 1
agent_return_pct = 2
integration_pct = 1
[faults]
write_hold_ms = {{ kind = "uniform", min = 20, max = 200 }}
busy_timeout_ms = 5000
[tasks]
count = {musicians}
steps = 2
subagents_per_step = 2
checkpoints = [2]
"#
    )
}

fn contention(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("contention");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    for musicians in [1_u64, 4, 16, 64, 256] {
        let text = contention_scenario(musicians);
        let statements = run_text(&text, tmp.path()).statements;
        group.throughput(Throughput::Elements(statements));
        group.bench_with_input(BenchmarkId::from_parameter(musicians), &text, |b, text| {
            b.iter(|| black_box(run_text(text, tmp.path()).events))
        });
    }
    group.finish();
}

/// 8 musicians whose plans are `steps` long: about 40 simulated minutes per 2 steps.
fn duration_scenario(steps: u64) -> String {
    format!(
        r#"description = "duration bench"
[run]
seed = 5
sim_time_max_ms = 604_800_000
events_max = 50_000_000
[conductor]
sessions_per_task_max = 100
[context]
agent_launch_pct = 1
agent_return_pct = 2
integration_pct = 1
[tasks]
count = 8
steps = {steps}
subagents_per_step = 2
checkpoints = [{steps}]
"#
    )
}

fn duration(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("duration");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    for steps in [4_u64, 16, 64] {
        let text = duration_scenario(steps);
        let simulated_h = run_text(&text, tmp.path()).makespan_ms / 3_600_000;
        // Throughput in simulated hours: criterion prints simulated hours per second.
        group.throughput(Throughput::Elements(simulated_h.max(1) as u64));
        group.bench_with_input(BenchmarkId::new("steps", format!("{steps}-{simulated_h}h")), &text, |b, text| {
            b.iter(|| black_box(run_text(text, tmp.path()).events))
        });
    }
    group.finish();
}

criterion_group!(benches, engine_and_floor, contention, duration);
criterion_main!(benches);
