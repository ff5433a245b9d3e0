//! `explore crashes` forks each run from the base run's nearest snapshot before its point
//! (issue 47, sim/run/fork.rs): its explore.csv and coverage.csv must be, byte for byte, those
//! of the runs made from their start (`--prefix reads`, the path before issue 47, and `none`,
//! every statement on SQLite), on the quickstart, the proof's scenarios and random-faults with
//! its own faults kept; and the runs must really have been forked, none parting from its base
//! run. Points are taken at a stride through the whole run (the first and the last included),
//! so early and late snapshots, the conductor's points (forked from the launcher's base run)
//! and every fault kind are met.

use std::path::Path;

use rehearsal::campaign::explore::{explore_crashes, list_points, Exploration, ExploreOptions, Prefix};
use rehearsal::vocab::FaultName;

use crate::support::root;

fn options(scenario: &str, protocol: Option<&str>, faults: &[FaultName], keep_faults: bool, out: &Path) -> ExploreOptions {
    ExploreOptions {
        scenario: root().join(scenario),
        seed: None,
        protocol: protocol.map(str::to_string),
        variants: Vec::new(),
        sessions: Vec::new(),
        points: Vec::new(),
        faults: faults.to_vec(),
        keep_faults,
        jobs: 2,
        out: out.to_path_buf(),
        scratch: None,
        progress_every: 0,
        force: false,
        prefix: Prefix::Fork,
    }
}

/// Every `stride`-th point of the base run, the last included.
fn strided(options: &ExploreOptions, stride: usize) -> Vec<u64> {
    let all = list_points(options).unwrap().lines().count() as u64 - 1;
    let mut points: Vec<u64> = (1..=all).step_by(stride).collect();
    if points.last() != Some(&all) {
        points.push(all);
    }
    points
}

/// Explores `scenario` at every `stride`-th point with each of `prefixes` (the first `fork`)
/// and checks every output is the same bytes; returns the forked exploration.
fn same_every_way(
    scenario: &str,
    protocol: Option<&str>,
    faults: &[FaultName],
    keep_faults: bool,
    stride: usize,
    prefixes: &[Prefix],
) -> Exploration {
    let tmp = tempfile::tempdir().unwrap();
    let mut base = options(scenario, protocol, faults, keep_faults, tmp.path());
    base.points = strided(&base, stride);
    let mut explored = Vec::new();
    for prefix in prefixes {
        let out = tmp.path().join(format!("{prefix:?}"));
        let exploration = explore_crashes(&ExploreOptions { prefix: *prefix, out: out.clone(), ..base.clone() }).unwrap();
        assert!(exploration.complete(), "{scenario} {prefix:?}");
        explored.push((out, exploration));
    }
    let (fork_out, forked) = explored.remove(0);
    for (out, other) in &explored {
        assert_eq!(other.rows, forked.rows, "{scenario}: {out:?}");
        for file in ["explore.csv", "coverage.csv"] {
            let read = |dir: &Path| std::fs::read(dir.join(file)).unwrap();
            assert!(read(out) == read(&fork_out), "{scenario}: {file} of {out:?} differs from the forked exploration's");
        }
        assert_eq!(other.forked, 0, "only --prefix fork forks");
    }
    assert_eq!(forked.parted, 0, "{scenario}: a run parted from its base run before its snapshot");
    // The first snapshot is taken some statements in: the first points are made from the start.
    assert!(forked.forked > forked.rows.len() / 2, "{scenario}: {} of {} runs forked", forked.forked, forked.rows.len());
    forked
}

#[test]
fn the_quickstart_forked_is_the_quickstart_run_from_the_start_every_fault_kind_and_every_way() {
    let forked =
        same_every_way("scenarios/quickstart.toml", None, &FaultName::ALL, false, 331, &[Prefix::Fork, Prefix::Reads, Prefix::None]);
    let conductor = forked.rows.iter().filter(|r| r.session.starts_with("conductor")).count();
    assert!(conductor > 0, "the conductor's points, forked from the launcher's base run");
    assert!(forked.rows.iter().any(|r| r.outcome.fired()) && !forked.failures.is_empty(), "faults fired, and failed runs");
}

#[test]
fn the_proofs_scenarios_forked_are_their_runs_from_the_start() {
    for scenario in ["scenarios/proof/proof-quickstart.toml", "scenarios/proof/proof-ci-smoke.toml"] {
        same_every_way(scenario, Some("repaired"), &[FaultName::Crash], false, 401, &[Prefix::Fork, Prefix::Reads]);
    }
    same_every_way("scenarios/proof/proof-random-faults.toml", None, &[FaultName::Crash], true, 307, &[Prefix::Fork, Prefix::Reads]);
}

#[test]
fn random_faults_with_its_own_faults_kept_forked_is_its_runs_from_the_start() {
    same_every_way(
        "scenarios/faults/random-faults.toml",
        None,
        &[FaultName::Crash, FaultName::Hang],
        true,
        293,
        &[Prefix::Fork, Prefix::Reads],
    );
}
