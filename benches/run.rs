//! Cost of a whole run: the quickstart scenario end to end (scenario load, comms.db creation,
//! every statement, trace). `cargo bench --bench run`.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rehearsal::run::{run, RunOptions};

fn quickstart(c: &mut Criterion) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let options = RunOptions {
        scenario_path: root.join("scenarios/quickstart.toml"),
        seed: Some(42),
        out_dir: Some(tmp.path().to_path_buf()),
        variants: Vec::new(),
    };
    let events = run(&options).unwrap().events;
    let mut group = c.benchmark_group("run");
    group.throughput(Throughput::Elements(events));
    group.sample_size(20);
    group.bench_function("quickstart_seed42_events", |b| b.iter(|| black_box(run(&options).unwrap().trace_hash)));
    group.finish();
}

criterion_group!(benches, quickstart);
criterion_main!(benches);
