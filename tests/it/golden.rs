//! The behaviour guard: the trace hash and the SHA-256 of `comms.db` and `violations.csv` of every shipped scenario
//! on its own seed, the proof suites' included (and a few more seeds of the random-fault scenarios), against the committed
//! `tests/golden/hashes.tsv`. A refactor leaves every line unchanged; a change of behaviour
//! rewrites the file in the same commit (`REHEARSAL_BLESS=1 cargo test golden`) and says why.

use std::path::Path;

use crate::support::{golden_cases, on_two_threads, rehearsal, root, stderr, stdout, summary_field};

const GOLDEN: &str = "tests/golden/hashes.tsv";

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
    let (seed, trace) = (summary_field(&text, "seed"), summary_field(&text, "trace hash"));
    format!("{scenario}\t{seed}\t{trace}\t{}\t{}", sha256_file(&out.join("comms.db")), sha256_file(&out.join("violations.csv")))
}

#[test]
fn every_shipped_scenario_keeps_its_trace_and_database_hashes() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = golden_cases();
    let lines = on_two_threads(cases.len(), |i| measure(&cases[i].0, cases[i].1, &tmp.path().join(format!("r{i}"))));
    let mut actual = String::from("scenario\tseed\ttrace_sha256\tcomms_db_sha256\tviolations_sha256\n");
    for line in lines {
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
