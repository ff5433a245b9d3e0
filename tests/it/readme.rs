//! The README's examples run as written, and those of the reference pages it links to
//! (`PAGES`, in that order). Every command of their `sh` code blocks, their indented
//! command blocks and the `$ rehearsal …` lines of their transcripts is taken from the pages themselves (so a changed
//! example is tested as changed), `cargo run --release --` read as the built `rehearsal`, and
//! run in order through `sh` in one scratch folder laid out as a fresh clone (`scenarios/`,
//! `tests/coverage/`): a later example sees what an earlier one wrote, as a reader's would.
//! An example exits 0 unless its line says `# exit N`. The slow ones are skipped, each with
//! its reason; a skip that matches no example fails, so the list cannot rot.

use std::path::Path;
use std::process::Command;

use crate::support::{copy_tree, root};

/// Examples not run here: (a piece of the command, why).
const SKIPPED: &[(&str, &str)] = &[
    ("scripts/test.sh", "it is this test suite"),
    ("--out reports/ci/", "tests/it/ci_gate.rs runs the CI commands, with and without mutants"),
    ("--require-coverage tests/coverage/required.txt --out reports/coverage", "tests/it/coverage.rs runs this sweep"),
    ("explore crashes scenarios/faults/crash-between-state-and-message.toml", "1764 runs: minutes in a debug build"),
    ("search scenarios/faults/random-faults.toml --strict --runs 800", "1600 runs: minutes in a debug build"),
    ("bench scenarios/bench/poll-jitter.toml", "400 runs; its figures are committed in reports/bench/poll-jitter/"),
    ("bench scenarios/bench/ci-smoke.toml", "160 runs of 8 musicians; tests/it/conductor_policy.rs covers the keys"),
];

/// README.md, then the reference pages it links to, in the order their examples run: a later
/// page's example may read what an earlier one wrote (docs/commands.md's `judge` reads the
/// quickstart run of README.md's set-up).
const PAGES: &[&str] = &[
    "README.md",
    "docs/commands.md",
    "docs/ci.md",
    "docs/scenarios.md",
    "docs/reports.md",
    "docs/oracles.md",
    "docs/development.md",
    "docs/performance.md",
];

/// One example: the command as the page writes it (continuations joined), its page and line.
#[derive(Debug)]
pub(crate) struct Example {
    pub(crate) page: &'static str,
    pub(crate) line: usize,
    pub(crate) command: String,
}

/// The examples of every page of `PAGES`, in order.
fn all_examples() -> Vec<Example> {
    let mut all = Vec::new();
    for page in PAGES {
        let text = std::fs::read_to_string(root().join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
        all.extend(examples(&text).into_iter().map(|e| Example { page, ..e }));
    }
    all
}

/// The commands of the README, in order.
pub(crate) fn examples(readme: &str) -> Vec<Example> {
    let mut found = Vec::new();
    let mut fence: Option<String> = None;
    let mut pending: Option<Example> = None;
    for (i, raw) in readme.lines().enumerate() {
        let trimmed = raw.trim_start();
        if let Some(lang) = trimmed.strip_prefix("```") {
            fence = if fence.is_some() { None } else { Some(lang.trim().to_string()) };
            continue;
        }
        if let Some(mut example) = pending.take() {
            example.command.push(' ');
            example.command.push_str(trimmed.trim_end_matches('\\').trim());
            if trimmed.ends_with('\\') {
                pending = Some(example);
            } else {
                found.push(example);
            }
            continue;
        }
        let command = match fence.as_deref() {
            Some("sh") => Some(trimmed),
            // A transcript: its `$ ` lines are the commands, the rest what they print.
            Some("") => trimmed.strip_prefix("$ ").filter(|c| is_command(c)),
            Some(_) => None,
            // Outside fences: an indented command block.
            None if raw.starts_with("    ") && is_command(trimmed) => Some(trimmed),
            None => None,
        };
        let Some(command) = command.filter(|c| !c.is_empty()) else { continue };
        let example = Example { page: "", line: i + 1, command: command.trim_end_matches('\\').trim().to_string() };
        if command.ends_with('\\') {
            pending = Some(example);
        } else {
            found.push(example);
        }
    }
    found
}

fn is_command(text: &str) -> bool {
    text.starts_with("rehearsal ") || text.starts_with("cargo run ")
}

/// The exit code an example's `# exit N` comment names, 0 without one.
fn expected_exit(command: &str) -> i32 {
    command.split_once("# exit ").and_then(|(_, rest)| rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()).unwrap_or(0)
}

fn skip_reason(command: &str) -> Option<&'static str> {
    SKIPPED.iter().find(|(piece, _)| command.contains(piece)).map(|(_, why)| *why)
}

/// A scratch folder laid out as the parts of a clone the examples read.
pub(crate) fn fresh_clone(dir: &Path) {
    for part in ["scenarios", "tests/coverage"] {
        copy_tree(&root().join(part), &dir.join(part));
    }
    let bin = dir.join(".bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_rehearsal"), bin.join("rehearsal")).unwrap();
}

#[test]
fn the_readmes_examples_run_as_written_from_a_fresh_clone() {
    let examples = all_examples();
    for (piece, _) in SKIPPED {
        assert!(examples.iter().any(|e| e.command.contains(piece)), "the skip `{piece}` matches no example of {PAGES:?}");
    }
    let dir = tempfile::tempdir().unwrap();
    fresh_clone(dir.path());
    let path = format!("{}:{}", dir.path().join(".bin").display(), std::env::var("PATH").unwrap_or_default());
    let mut ran = 0;
    for example in &examples {
        if skip_reason(&example.command).is_some() {
            continue;
        }
        let command = example.command.replace("cargo run --release --", "rehearsal");
        let out = Command::new("sh")
            .args(["-c", &command])
            .current_dir(dir.path())
            .env("PATH", &path)
            .env_remove("REHEARSAL_SEED")
            .output()
            .expect("sh runs");
        assert_eq!(
            out.status.code(),
            Some(expected_exit(&example.command)),
            "{}:{}: `{}`\nstdout:\n{}\nstderr:\n{}",
            example.page,
            example.line,
            example.command,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        ran += 1;
    }
    assert!(ran >= 7, "only {ran} examples ran: {examples:#?}");
    let in_readme = examples.iter().filter(|e| e.page == "README.md" && skip_reason(&e.command).is_none()).count();
    assert!(in_readme >= 5, "the README's own examples run too: {in_readme}");
}

#[test]
fn examples_are_read_from_fences_indented_blocks_and_dollar_lines_with_their_exit_codes() {
    let text = "intro\n```sh\ncargo run --release -- run a.toml   # exit 1: x\n```\n```\nrehearsal printed, not run\n```\n\
                : Runs.\n  ```\n  $ rehearsal judge r\n  output line\n  ```\n    rehearsal bench b.toml \\\n      --seeds 1..=2\n";
    let found = examples(text);
    let commands: Vec<&str> = found.iter().map(|e| e.command.as_str()).collect();
    assert_eq!(commands, ["cargo run --release -- run a.toml   # exit 1: x", "rehearsal judge r", "rehearsal bench b.toml --seeds 1..=2"]);
    assert_eq!(found.iter().map(|e| e.line).collect::<Vec<_>>(), [3, 10, 13]);
    assert_eq!(expected_exit(commands[0]), 1);
    assert_eq!(expected_exit(commands[1]), 0);
}
