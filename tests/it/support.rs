//! Helpers shared by the test modules: running the binary, scratch folders, reading outputs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The project root, so tests find `scenarios/` wherever cargo runs them from.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn scenario(name: &str) -> PathBuf {
    root().join("scenarios").join(name)
}

/// Runs the `rehearsal` binary with `args` from the project root.
pub fn rehearsal(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rehearsal"))
        .args(args)
        .current_dir(root())
        .env_remove("REHEARSAL_SEED")
        .output()
        .expect("rehearsal runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `rehearsal run SCENARIO --seed SEED --out DIR`, asserting the exit code.
pub fn run_ok(scenario: &Path, seed: u64, out: &Path) -> String {
    let o = rehearsal(&["run", scenario.to_str().unwrap(), "--seed", &seed.to_string(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "stdout:\n{}\nstderr:\n{}", stdout(&o), stderr(&o));
    stdout(&o)
}

/// The value printed after `label` in the run summary.
pub fn summary_field(stdout: &str, label: &str) -> String {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(label).map(|v| v.trim().to_string()))
        .unwrap_or_else(|| panic!("no `{label}` line in:\n{stdout}"))
}

pub fn open_db(dir: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open_with_flags(dir.join("comms.db"), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).expect("comms.db opens")
}

/// The trace as rows of fields, header first.
pub fn trace_rows(dir: &Path) -> Vec<Vec<String>> {
    let mut reader = csv::ReaderBuilder::new().has_headers(false).from_path(dir.join("trace.csv")).expect("trace.csv");
    reader.records().map(|r| r.expect("csv row").iter().map(str::to_string).collect()).collect()
}
