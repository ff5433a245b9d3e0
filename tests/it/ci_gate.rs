//! The CI gate (issue 25): the README's CI commands (section "CI: a strict suite and a
//! baselined one") pass with the shipped protocol, and fail (exit 1) with every protocol
//! mutant of `tests/mutants/` that the oracles are meant to catch. They are taken from
//! README.md itself and run through `sh` in a fresh copy of `scenarios/`, as a reader would
//! run them. `cargo test --locked ci_gate -- --nocapture` prints the table.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::mutants::{merge, mutants_dir, MUTANTS};
use crate::readme::{examples, fresh_clone};
use crate::support::{on_two_threads, root, toml_files, CI_SUITES};

/// The README's CI commands, in its order: the strict suite, then the baselined one.
fn ci_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let commands: Vec<String> = examples(&readme)
        .into_iter()
        .map(|e| e.command)
        .filter(|c| c.starts_with("rehearsal sweep") && c.contains("--out reports/ci/"))
        .collect();
    assert_eq!(commands.len(), 2, "the README's CI section runs two suites: {commands:#?}");
    assert!(commands[1].contains("--baseline scenarios/ci/baseline.txt"), "{}", commands[1]);
    commands
}

/// Runs `command` with `extra` arguments through `sh` in the fresh clone `dir`.
fn sh(dir: &Path, command: &str, extra: &str) -> (i32, String, String) {
    let path = format!("{}:{}", dir.join(".bin").display(), std::env::var("PATH").unwrap_or_default());
    let o = Command::new("sh")
        .args(["-c", &format!("{command} {extra}")])
        .current_dir(dir)
        .env("PATH", path)
        .env_remove("REHEARSAL_SEED")
        .output()
        .expect("sh runs");
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// Every scenario file of the CI suites under `dir` (a clone).
fn suite_files(dir: &Path) -> Vec<PathBuf> {
    toml_files(&dir.join(CI_SUITES))
}

/// A `.toml` mutant merged over every suite scenario of the clone (as tests/it/mutants.rs
/// merges it over one): the baseline's lines still name the same files.
fn merge_into_suites(dir: &Path, mutant: &Path) {
    let patch: toml::Table = toml::from_str(&std::fs::read_to_string(mutant).unwrap()).unwrap();
    for file in suite_files(dir) {
        let mut table: toml::Table = toml::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        merge(&mut table, patch.clone());
        std::fs::write(&file, toml::to_string(&table).unwrap()).unwrap();
    }
}

#[test]
fn the_readmes_ci_commands_pass_as_written_and_report_against_the_baseline() {
    let tmp = tempfile::tempdir().unwrap();
    fresh_clone(tmp.path());
    let commands = ci_commands();
    let (code, out, err) = sh(tmp.path(), &commands[0], "--quiet");
    assert_eq!(code, 0, "the strict suite passes today\n{out}\n{err}");
    assert!(out.contains("failed       0\n") && !out.contains("known "), "no violation at all, allowed or known:\n{out}");
    let (code, out, err) = sh(tmp.path(), &commands[1], "--quiet");
    assert_eq!(code, 0, "the seeds' suite fails only as its baseline says\n{out}\n{err}");
    assert!(out.contains("baseline     scenarios/ci/baseline.txt: 0 regression(s), "), "{out}");
    let seeds = tmp.path().join("reports/ci/seeds");
    let junit = std::fs::read_to_string(seeds.join("junit.xml")).unwrap();
    assert!(junit.contains("<skipped message=\"known failure (baseline): "), "known failures are skipped, with their rules:\n{junit}");
    assert!(!junit.contains("<failure"), "{junit}");
    let summary = std::fs::read_to_string(seeds.join("summary.md")).unwrap();
    assert!(summary.contains("## Baseline `scenarios/ci/baseline.txt`\n\n0 regression(s); "), "{summary}");
}

/// What the gate made of one mutant: the exit code of each command run (the strict suite
/// only when the baselined one passed), and the first regression line.
struct Gated {
    file: &'static str,
    codes: Vec<i32>,
    regression: String,
    seconds: f64,
}

/// Runs the README's CI commands with `mutant` in a fresh clone, the baselined suite first,
/// stopping at the first that does not pass. `--fail-fast` stops each at its first regression
/// (a known failure does not stop it), which leaves the exit code as it would be, sooner.
fn gate(file: &'static str, commands: &[String]) -> Gated {
    let started = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    fresh_clone(tmp.path());
    let path = mutants_dir().join(file);
    let mut extra = String::from("--fail-fast --jobs 1 --quiet");
    if file.ends_with(".sql") {
        extra.push_str(&format!(" --sql '{}'", path.display()));
    } else {
        merge_into_suites(tmp.path(), &path);
    }
    let (mut codes, mut regression) = (Vec::new(), String::new());
    for command in commands.iter().rev() {
        let (code, out, err) = sh(tmp.path(), command, &extra);
        codes.push(code);
        if code != 0 {
            regression = out
                .lines()
                .find(|l| l.starts_with("regression"))
                .map_or_else(|| err.lines().next().unwrap_or("").to_string(), str::to_string);
            break;
        }
    }
    Gated { file, codes, regression, seconds: started.elapsed().as_secs_f64() }
}

#[test]
fn every_mutant_the_oracles_are_meant_to_catch_fails_the_ci_gate() {
    let commands = ci_commands();
    // A known gap is no rule's to catch; it is reported by tests/it/mutants.rs, not run here,
    // nor is a mutant whose fault no CI scenario has (its catalog entry says why).
    let meant: Vec<_> = MUTANTS.iter().filter(|m| m.expected_missing.is_none() && m.outside_ci.is_none()).collect();
    for must in ["heartbeat-refreshes-nothing.sql", "mark-complete-every-row.sql", "cursor-skips-next.sql"] {
        assert!(meant.iter().any(|m| m.file == must), "{must} is in the catalog, meant to be caught");
    }
    let gated = on_two_threads(meant.len(), |i| gate(meant[i].file, &commands));
    println!("{:<40} {:<8} {:>6}  first regression", "mutant", "exits", "wall s");
    let mut wrong = Vec::new();
    for (mutant, g) in meant.iter().zip(&gated) {
        let codes = g.codes.iter().map(i32::to_string).collect::<Vec<_>>().join(",");
        println!("{:<40} {codes:<8} {:>6.1}  {}", g.file, g.seconds, g.regression);
        let last = *g.codes.last().unwrap();
        let right = if mutant.at_load { last != 0 } else { last == 1 };
        if !right {
            wrong.push(format!("{}: exit codes {codes} ({})", g.file, g.regression));
        }
    }
    assert!(wrong.is_empty(), "the CI gate let these mutants through (or broke on them):\n{}", wrong.join("\n"));
}

#[test]
fn every_ci_suite_file_is_its_original_with_every_violation_failing() {
    let files = suite_files(&root());
    assert!(files.len() >= 10, "{files:?}");
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let first = text.lines().next().unwrap_or("");
        let origin = first
            .split_once(" of ")
            .and_then(|(_, rest)| rest.split_once(" with "))
            .map(|(path, _)| path.trim_matches('`'))
            .unwrap_or_else(|| panic!("{}: its first line names its original: `{first}`", file.display()));
        let copy: toml::Table = toml::from_str(&text).unwrap();
        let mut original: toml::Table = toml::from_str(&std::fs::read_to_string(root().join(origin)).unwrap()).unwrap();
        let strict: toml::Table = toml::from_str("allowed = []").unwrap();
        assert_eq!(copy.get("expect"), Some(&toml::Value::Table(strict)), "{}: [expect] allows nothing", file.display());
        let (mut copy, _) = (copy, original.remove("expect"));
        copy.remove("expect");
        assert_eq!(copy, original, "{} is {origin} but for [expect]", file.display());
    }
}
