//! The README's examples run as written, and those of the reference pages it links to
//! (`PAGES`, in that order). Every command of their `sh` code blocks, their indented
//! command blocks and the `$ rehearsal …` lines of their transcripts is taken from the pages themselves (so a changed
//! example is tested as changed), `cargo run --release --` read as the built `rehearsal`, and
//! run in order through `sh` in one scratch folder laid out as a fresh clone (`scenarios/`,
//! `tests/coverage/`): a later example sees what an earlier one wrote, as a reader's would.
//! An example exits 0 unless its line says `# exit N`. The slow ones are skipped, each with
//! its reason; a skip that matches no example fails, so the list cannot rot.
//!
//! An example's quoted output is compared with what it printed, line for line: the lines after
//! a transcript's `$ rehearsal …` line, or the fence after a `<!-- output of: COMMAND -->`
//! comment (README.md's quickstart block). A change of behaviour that alters a quoted output
//! fails here until the page follows; `REHEARSAL_BLESS=1` rewrites the quoted blocks from the
//! runs instead (scripts/regen-docs.sh, which also sets `REHEARSAL_DOCS_ALL=1` to run the slow
//! examples of `REGENERATED`, and `REHEARSAL_DOCS_BIN` to run them with the release build).

use std::path::Path;
use std::process::Command;

use crate::support::{copy_tree, root};

/// Examples not run here: (a piece of the command, why).
const SKIPPED: &[(&str, &str)] = &[
    ("scripts/test.sh", "it is this test suite"),
    ("--out reports/ci/", "tests/it/ci_gate.rs runs the CI commands, with and without mutants"),
    ("corpus tests/corpus", "tests/it/corpus.rs runs the regression corpus"),
    ("--require-coverage tests/coverage/required.txt --out reports/coverage", "tests/it/coverage.rs runs this sweep"),
    ("explore crashes scenarios/faults/crash-between-state-and-message.toml", "1764 runs: minutes in a debug build"),
    ("explore crashes scenarios/quickstart.toml", "5388 runs: minutes even in a release build"),
    ("search scenarios/faults/random-faults.toml --strict --runs 800", "1600 runs: minutes in a debug build"),
    ("bench scenarios/bench/poll-jitter.toml", "400 runs; its figures are committed in reports/bench/poll-jitter/"),
    ("bench scenarios/bench/ci-smoke.toml", "160 runs of 8 musicians; tests/it/conductor_policy.rs covers the keys"),
];

/// Skipped examples that quote their output: run (and compared or rewritten) only with
/// `REHEARSAL_DOCS_ALL=1`, as scripts/regen-docs.sh does.
const REGENERATED: &[&str] = &[
    "explore crashes scenarios/faults/crash-between-state-and-message.toml",
    "explore crashes scenarios/quickstart.toml",
    "search scenarios/faults/random-faults.toml --strict --runs 800",
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
    /// The output the page quotes for it, if any.
    pub(crate) output: Option<Quoted>,
}

/// Lines a page quotes as a command's output: `first` is the 1-based line of the first, each
/// written after `indent`.
#[derive(Debug)]
pub(crate) struct Quoted {
    pub(crate) first: usize,
    pub(crate) indent: String,
    pub(crate) lines: Vec<String>,
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

/// The commands of the README, in order, with the output each quotes.
pub(crate) fn examples(readme: &str) -> Vec<Example> {
    let mut found: Vec<Example> = Vec::new();
    let mut fence: Option<String> = None;
    let mut pending: Option<Example> = None;
    // The command named by the latest `<!-- output of: … -->`, and whether its fence is open.
    let mut output_of: Option<String> = None;
    let mut in_output = false;
    // Whether the lines of the open fence are the output of the last transcript command.
    let mut in_transcript = false;
    for (i, raw) in readme.lines().enumerate() {
        let trimmed = raw.trim_start();
        if let Some(command) = trimmed.strip_prefix("<!-- output of: ").and_then(|c| c.strip_suffix("-->")) {
            output_of = Some(command.trim().to_string());
            continue;
        }
        if let Some(lang) = trimmed.strip_prefix("```") {
            if fence.is_some() {
                fence = None;
                if in_output {
                    output_of = None;
                }
                (in_output, in_transcript) = (false, false);
            } else {
                fence = Some(lang.trim().to_string());
                if let Some(command) = output_of.as_ref().filter(|_| lang.trim().is_empty()) {
                    let example = found.iter_mut().rev().find(|e| bare(&e.command) == command);
                    let example =
                        example.unwrap_or_else(|| panic!("line {}: `<!-- output of: {command} -->` names no example above it", i + 1));
                    let indent = raw[..raw.len() - trimmed.len()].to_string();
                    example.output = Some(Quoted { first: i + 2, indent, lines: Vec::new() });
                    in_output = true;
                }
            }
            continue;
        }
        if in_output {
            let example = found.iter_mut().rev().find(|e| Some(bare(&e.command)) == output_of.as_deref()).expect("found above");
            example.output.as_mut().expect("set at the fence").lines.push(raw.to_string());
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
        if fence.as_deref() == Some("") && command.is_none() && in_transcript {
            found.last_mut().and_then(|e| e.output.as_mut()).expect("a transcript's command").lines.push(raw.to_string());
            continue;
        }
        let Some(command) = command.filter(|c| !c.is_empty()) else { continue };
        let transcript = fence.as_deref() == Some("");
        let output = transcript.then(|| Quoted { first: i + 2, indent: raw[..raw.len() - trimmed.len()].to_string(), lines: Vec::new() });
        in_transcript = transcript;
        let example = Example { page: "", line: i + 1, command: command.trim_end_matches('\\').trim().to_string(), output };
        if command.ends_with('\\') {
            pending = Some(example);
        } else {
            found.push(example);
        }
    }
    found
}

/// A command without its trailing `# …` comment.
fn bare(command: &str) -> &str {
    command.split(" #").next().unwrap_or(command).trim()
}

fn is_command(text: &str) -> bool {
    text.starts_with("rehearsal ") || text.starts_with("cargo run ")
}

/// The exit code an example's `# exit N` comment names, 0 without one.
fn expected_exit(command: &str) -> i32 {
    command.split_once("# exit ").and_then(|(_, rest)| rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()).unwrap_or(0)
}

fn skip_reason(command: &str) -> Option<&'static str> {
    let regenerating = std::env::var_os("REHEARSAL_DOCS_ALL").is_some();
    SKIPPED
        .iter()
        .find(|(piece, _)| command.contains(piece) && !(regenerating && REGENERATED.iter().any(|r| command.contains(r))))
        .map(|(_, why)| *why)
}

/// A scratch folder laid out as the parts of a clone the examples read; its `.bin/rehearsal`
/// is this build's, or the one `REHEARSAL_DOCS_BIN` names (scripts/regen-docs.sh: the release
/// build, for the slow examples).
pub(crate) fn fresh_clone(dir: &Path) {
    for part in ["scenarios", "tests/coverage"] {
        copy_tree(&root().join(part), &dir.join(part));
    }
    let bin = dir.join(".bin");
    std::fs::create_dir_all(&bin).unwrap();
    let exe = std::env::var_os("REHEARSAL_DOCS_BIN").map_or_else(|| env!("CARGO_BIN_EXE_rehearsal").into(), std::path::PathBuf::from);
    std::os::unix::fs::symlink(exe, bin.join("rehearsal")).unwrap();
}

/// Whether a quoted line says what the printed one says: exactly, but for a `wall` line (a
/// wall time, never the same twice), of which only the word is compared.
fn same_line(quoted: &str, printed: &str) -> bool {
    let word = |l: &str| l.split_whitespace().next().map(str::to_string);
    quoted.trim_end() == printed.trim_end() || (word(quoted).as_deref() == Some("wall") && word(quoted) == word(printed))
}

/// A stale quoted output: (page, the quoted block's first line, its length, the printed lines
/// written with its indent).
type Stale = (&'static str, usize, usize, Vec<String>);

fn stale_output(example: &Example, stdout: &str) -> Option<Stale> {
    let quoted = example.output.as_ref()?;
    let printed: Vec<&str> = stdout.lines().collect();
    let same = quoted.lines.len() == printed.len()
        && quoted.lines.iter().zip(&printed).all(|(q, p)| same_line(q.strip_prefix(quoted.indent.as_str()).unwrap_or(q), p));
    let lines = printed.iter().map(|p| if p.is_empty() { String::new() } else { format!("{}{p}", quoted.indent) }).collect();
    (!same).then_some((example.page, quoted.first, quoted.lines.len(), lines))
}

/// Rewrites the stale blocks of every page with what their commands printed.
fn bless(stale: &[Stale]) {
    for page in PAGES {
        let mut blocks: Vec<&Stale> = stale.iter().filter(|s| s.0 == *page).collect();
        if blocks.is_empty() {
            continue;
        }
        blocks.sort_by_key(|s| std::cmp::Reverse(s.1));
        let path = root().join(page);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        for (_, first, len, new) in blocks {
            lines.splice(first - 1..first - 1 + len, new.iter().cloned());
        }
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    }
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
    let mut stale = Vec::new();
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
        stale.extend(stale_output(example, &String::from_utf8_lossy(&out.stdout)));
        ran += 1;
    }
    assert!(ran >= 7, "only {ran} examples ran: {examples:#?}");
    let in_readme = examples.iter().filter(|e| e.page == "README.md" && skip_reason(&e.command).is_none()).count();
    assert!(in_readme >= 5, "the README's own examples run too: {in_readme}");
    assert!(examples.iter().any(|e| e.page == "README.md" && e.output.is_some()), "the README quotes the quickstart's output");
    if std::env::var_os("REHEARSAL_BLESS").is_some() {
        bless(&stale);
        return;
    }
    let report: Vec<String> = stale
        .iter()
        .map(|(page, first, _, new)| format!("{page}:{first}: the quoted output is stale; the run printed:\n{}", new.join("\n")))
        .collect();
    assert!(
        stale.is_empty(),
        "{}\nIf the change is intended, run scripts/regen-docs.sh (or REHEARSAL_BLESS=1 cargo test --test it readme).",
        report.join("\n\n")
    );
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

#[test]
fn quoted_outputs_are_read_from_transcripts_and_marked_fences_and_a_stale_one_is_named_and_rewritten() {
    let text =
        "```sh\nrehearsal run q.toml\n```\n<!-- output of: rehearsal run q.toml -->\n```\nverdict      PASS\nwall         1.0 s\n```\n\
                  ```\n  $ rehearsal judge r\n  r: PASS\n  ```\n";
    let found = examples(text);
    let quoted: Vec<(usize, Vec<String>)> =
        found.iter().map(|e| e.output.as_ref().map(|q| (q.first, q.lines.clone())).unwrap_or_default()).collect();
    assert_eq!(quoted[0], (6, vec!["verdict      PASS".to_string(), "wall         1.0 s".to_string()]));
    assert_eq!(quoted[1], (11, vec!["  r: PASS".to_string()]));
    assert_eq!(found[1].output.as_ref().unwrap().indent, "  ");
    // The same lines, a wall time aside, are not stale; another verdict is.
    assert!(stale_output(&found[0], "verdict      PASS\nwall         7.9 s\n").is_none());
    let stale = stale_output(&found[0], "verdict      FAIL: liveness\nwall         1.0 s\n").expect("stale");
    assert_eq!((stale.1, stale.2), (6, 2));
    assert_eq!(stale.3[0], "verdict      FAIL: liveness");
    assert!(stale_output(&found[1], "r: PASS\n").is_none());
    assert_eq!(stale_output(&found[1], "r: FAIL\n").expect("stale").3, ["  r: FAIL"]);
}

/// The quoted run of `explore crashes` on the quickstart is regenerated only by
/// scripts/regen-docs.sh (5388 runs); its point counts are checked here against this build's
/// base run (`--list-points`), so a change that moves them fails at once.
#[test]
fn the_quoted_quickstart_exploration_has_this_builds_points() {
    let example = all_examples().into_iter().find(|e| e.command.contains("explore crashes scenarios/quickstart.toml")).expect("quoted");
    let quoted = example.output.expect("with its output").lines;
    let line =
        |label: &str| quoted.iter().find(|l| l.trim_start().starts_with(label)).unwrap_or_else(|| panic!("{label}: {quoted:?}")).clone();
    let tmp = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_rehearsal"))
        .args(["explore", "crashes", "scenarios/quickstart.toml", "--list-points", "--out"])
        .arg(tmp.path().join("x"))
        .current_dir(root())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let listed = String::from_utf8(o.stdout).unwrap();
    let sessions: Vec<&str> = listed.lines().skip(1).filter_map(|l| l.split(',').nth(1)).collect();
    let conductor = sessions.iter().filter(|s| s.starts_with("conductor")).count();
    let points =
        format!("points       {} ({} of musician sessions, {conductor} of the conductor)", sessions.len(), sessions.len() - conductor);
    let runs = format!("runs         {0} of {0} (crash before and after each point)", 2 * sessions.len());
    let stale = "docs/commands.md's quoted exploration of the quickstart is stale: run scripts/regen-docs.sh";
    assert_eq!(line("points").trim(), points, "{stale}");
    assert_eq!(line("runs").trim(), runs, "{stale}");
}
