//! The behaviour guard: the trace hash and the SHA-256 of `comms.db` and `violations.csv` of every shipped scenario
//! on its own seed (and a few more seeds of the random-fault scenarios), against the committed
//! `tests/golden/hashes.tsv`. A refactor leaves every line unchanged; a change of behaviour
//! rewrites the file in the same commit (`REHEARSAL_BLESS=1 cargo test golden`) and says why.

use std::path::{Path, PathBuf};

use crate::support::{rehearsal, root, stderr, stdout, summary_field};

const GOLDEN: &str = "tests/golden/hashes.tsv";

/// Scenarios left out, with the reason: their runs take minutes in a debug build.
const TOO_LONG: &[&str] = &["scenarios/bench/fleet-1000.toml", "scenarios/bench/fleet-day.toml"];

/// Extra seeds of the random-fault scenarios: swarm draws differ per seed.
const EXTRA_SEEDS: &[(&str, &[u64])] =
    &[("scenarios/faults/random-faults.toml", &[1, 2, 7, 90, 221]), ("scenarios/bench/ci-smoke.toml", &[2, 3, 4])];

fn shipped_scenarios() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "toml") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root().join("scenarios"), &mut files);
    let mut names: Vec<String> = files
        .iter()
        .map(|p| p.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/"))
        .filter(|p| !TOO_LONG.contains(&p.as_str()))
        .collect();
    names.sort();
    names
}

/// (scenario, seed or None for the scenario's own).
fn cases() -> Vec<(String, Option<u64>)> {
    let mut cases: Vec<(String, Option<u64>)> = shipped_scenarios().into_iter().map(|s| (s, None)).collect();
    for (scenario, seeds) in EXTRA_SEEDS {
        cases.extend(seeds.iter().map(|seed| (scenario.to_string(), Some(*seed))));
    }
    cases
}

fn sha256_file(path: &Path) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(std::fs::read(path).unwrap()).iter().map(|b| format!("{b:02x}")).collect()
}

/// One line of the golden file: scenario, seed, trace hash, comms.db hash, violations.csv hash
/// (the verdict's violations and their explanations).
fn measure(scenario: &str, seed: Option<u64>, out: &Path) -> String {
    let seed_text = seed.map(|s| s.to_string());
    let mut args = vec!["run", scenario, "--out", out.to_str().unwrap()];
    if let Some(seed) = &seed_text {
        args.extend(["--seed", seed]);
    }
    let o = rehearsal(&args);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{scenario}: {}\n{}", stdout(&o), stderr(&o));
    let text = stdout(&o);
    format!(
        "{scenario}\t{}\t{}\t{}\t{}",
        summary_field(&text, "seed"),
        summary_field(&text, "trace hash"),
        sha256_file(&out.join("comms.db")),
        sha256_file(&out.join("violations.csv"))
    )
}

#[test]
fn every_shipped_scenario_keeps_its_trace_and_database_hashes() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = cases();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let lines = std::sync::Mutex::new(vec![String::new(); cases.len()]);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some((scenario, seed)) = cases.get(i) else { return };
                let line = measure(scenario, *seed, &tmp.path().join(format!("r{i}")));
                lines.lock().unwrap()[i] = line;
            });
        }
    });
    let mut actual = String::from("scenario\tseed\ttrace_sha256\tcomms_db_sha256\tviolations_sha256\n");
    for line in lines.into_inner().unwrap() {
        actual.push_str(&line);
        actual.push('\n');
    }
    let golden_path = root().join(GOLDEN);
    if std::env::var_os("REHEARSAL_BLESS").is_some() {
        std::fs::write(&golden_path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&golden_path).unwrap_or_default();
    let differing: Vec<String> =
        actual.lines().filter(|line| !expected.lines().any(|e| e == *line)).map(|line| format!("  now:  {line}")).collect();
    assert!(
        differing.is_empty() && expected.lines().count() == actual.lines().count(),
        "behaviour changed against {GOLDEN}:\n{}\nIf the change is intended, rerun with REHEARSAL_BLESS=1 and say why in the commit.",
        differing.join("\n")
    );
}
