//! Fuzzing the scenario loader (issue 8) with proptest: shipped scenarios mutated line by
//! line, and random TOML-ish text. Every input must load or be refused as bad input naming
//! the file; nothing may panic. `REHEARSAL_FUZZ_CASES` raises the number of cases.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use rehearsal::base::error::Error;
use rehearsal::input::scenario::Scenario;

/// Values that break loaders: wrong types, out of range, huge, odd strings, SQL.
const TOKENS: &[&str] = &[
    "-1",
    "0",
    "1",
    "101",
    "-0.5",
    "1.5",
    "1e309",
    "nan",
    "inf",
    "-inf",
    "99999999999999999999",
    "9223372036854775807",
    "\"x\"",
    "\"'; DROP TABLE orchestration_tasks; --\"",
    "\"before:claim_task\"",
    "\"after:nothing\"",
    "true",
    "[]",
    "[1, 2, 2]",
    "[3, 1]",
    "{}",
    "{ kind = \"uniform\", min = 5, max = 1 }",
    "{ kind = \"normal\", mean = 1, sd = -1 }",
    "{ kind = \"exponential\", mean = 0 }",
    "{ min = 0.9, max = 0.1 }",
    "\"2026-13-45 99:99:99\"",
    "\"\"",
    "1979-05-27T07:32:00Z",
];

fn shipped_scenarios() -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    let mut stack = vec![crate::support::root().join("scenarios")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "toml") {
                found.push((path.clone(), std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    found.sort();
    found
}

#[derive(Clone, Debug)]
enum Mutation {
    DeleteLine(usize),
    DuplicateLine(usize),
    ReplaceValue(usize, usize),
    InsertKey(usize, String, usize),
    Truncate(usize),
    InsertChar(usize, char),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let key = prop::sample::select(vec![
        "count",
        "steps",
        "seed",
        "sim_time_max_ms",
        "events_max",
        "poll_ms",
        "staleness_s",
        "heartbeat_refresh_s",
        "task",
        "session",
        "at",
        "at_ms",
        "nth",
        "crash_probability",
        "write_hold_ms",
        "checkpoints",
        "ceiling_pct",
        "unknown_key",
    ]);
    prop_oneof![
        any::<usize>().prop_map(Mutation::DeleteLine),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (any::<usize>(), 0..TOKENS.len()).prop_map(|(l, t)| Mutation::ReplaceValue(l, t)),
        (any::<usize>(), key, 0..TOKENS.len()).prop_map(|(l, k, t)| Mutation::InsertKey(l, k.to_string(), t)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), prop::sample::select(vec!['[', ']', '=', '"', '{', '}', '\n', ',', '.', '#', '\u{0}', 'é']))
            .prop_map(|(p, c)| Mutation::InsertChar(p, c)),
    ]
}

fn apply(text: &str, mutations: &[Mutation]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for m in mutations {
        let n = lines.len().max(1);
        match m {
            Mutation::DeleteLine(l) if !lines.is_empty() => {
                lines.remove(l % n);
            }
            Mutation::DuplicateLine(l) if !lines.is_empty() => {
                let line = lines[l % n].clone();
                lines.insert(l % n, line);
            }
            Mutation::ReplaceValue(l, t) if !lines.is_empty() => {
                let line = &mut lines[l % n];
                if let Some((key, _)) = line.split_once('=') {
                    *line = format!("{key}= {}", TOKENS[*t]);
                }
            }
            Mutation::InsertKey(l, key, t) => lines.insert(l % (lines.len() + 1), format!("{key} = {}", TOKENS[*t])),
            Mutation::Truncate(p) => {
                let joined = lines.join("\n");
                let cut = joined.char_indices().map(|(i, _)| i).nth(p % joined.chars().count().max(1)).unwrap_or(0);
                lines = joined[..cut].lines().map(str::to_string).collect();
            }
            Mutation::InsertChar(p, c) if !lines.is_empty() => {
                let line = &mut lines[p % n];
                let at = line.char_indices().map(|(i, _)| i).nth(p % (line.chars().count() + 1)).unwrap_or(line.len());
                line.insert(at, *c);
            }
            _ => {}
        }
    }
    lines.join("\n")
}

/// Loads `text` as if it were `path`: it must load, or be refused as bad input naming the file.
fn loads_or_refuses(text: &str, path: &Path) -> Result<(), TestCaseError> {
    match Scenario::parse(text, path) {
        Ok(_) => Ok(()),
        Err(Error::Input(message)) => {
            prop_assert!(message.contains(&path.display().to_string()), "an error that does not name the file: {message}");
            Ok(())
        }
        Err(other) => Err(TestCaseError::fail(format!("not a bad-input error: {other}\n--- input ---\n{text}"))),
    }
}

fn cases(default: u32) -> u32 {
    std::env::var("REHEARSAL_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
fn mutated_shipped_scenarios_load_or_are_refused_without_panicking() {
    let scenarios = shipped_scenarios();
    assert!(scenarios.len() >= 20, "found {}", scenarios.len());
    let mut runner = TestRunner::new(Config { cases: cases(20_000), failure_persistence: None, ..Config::default() });
    let strategy = (0..scenarios.len(), prop::collection::vec(mutation(), 1..6));
    runner
        .run(&strategy, |(which, mutations)| {
            let (path, text) = &scenarios[which];
            loads_or_refuses(&apply(text, &mutations), path)
        })
        .unwrap();
}

#[test]
fn random_toml_like_text_loads_or_is_refused_without_panicking() {
    let mut runner = TestRunner::new(Config { cases: cases(10_000), failure_persistence: None, ..Config::default() });
    let path = PathBuf::from("fuzz.toml");
    runner.run(&"(\\[tasks\\]\ncount = [0-9]{1,3}\n)?[\\[\\]a-z_.=\"{}, 0-9\n#-]{0,300}", |text| loads_or_refuses(&text, &path)).unwrap();
}
