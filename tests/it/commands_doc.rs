//! docs/commands.md says it lists every command and flag: checked against the clap definitions
//! as the built binary's `--help` prints them. Every command (and subcommand: `explore
//! crashes`, `calibrate load`, …) has an entry (a definition term naming `rehearsal COMMAND`),
//! and each of its flags is in one of its entries or in an entry whose term names the flag and
//! the command (`--force` (sweep, compare, bench, explore, search)). A flag added without its
//! documentation fails here.

use std::process::Command;

use crate::support::root;

fn help(path: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_rehearsal")).args(path).arg("--help").output().unwrap();
    assert!(o.status.success(), "{path:?} --help");
    String::from_utf8(o.stdout).unwrap()
}

/// The names listed under a help text's `Commands:` heading (`help` aside).
fn subcommands(help: &str) -> Vec<String> {
    let Some((_, rest)) = help.split_once("Commands:\n") else { return Vec::new() };
    rest.lines()
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("    "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// The long flags of a help text's `Options:`, those every command has aside.
fn flags(help: &str) -> Vec<String> {
    let Some((_, rest)) = help.split_once("Options:\n") else { return Vec::new() };
    rest.lines()
        .filter(|l| l.trim_start().starts_with('-'))
        .filter_map(|l| l.split(|c: char| c.is_whitespace() || c == ',' || c == '=' || c == '<' || c == '[').find(|w| w.starts_with("--")))
        .filter(|f| !["--help", "--version", "--quiet"].contains(f))
        .map(str::to_string)
        .collect()
}

/// Every command path of the binary: `run`, …, `explore crashes`, `calibrate load`.
fn command_paths() -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    for name in subcommands(&help(&[])) {
        let nested = subcommands(&help(&[&name]));
        if nested.is_empty() {
            paths.push(vec![name]);
        } else {
            paths.extend(nested.into_iter().map(|sub| vec![name.clone(), sub]));
        }
    }
    paths
}

/// The page's entries: each starts at a definition term, a line that opens with a backtick.
fn entries(page: &str) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = Vec::new();
    for line in page.lines() {
        if line.starts_with('`') {
            found.push((line.to_string(), String::new()));
        } else if line.starts_with('#') {
            found.push((String::new(), String::new()));
        } else if let Some(entry) = found.last_mut() {
            entry.1.push_str(line);
            entry.1.push('\n');
        }
    }
    found
}

/// Whether `text` holds `word` whole (not as the start of a longer flag or name).
fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            && !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    })
}

/// What docs/commands.md lacks: commands without an entry, and (command, flag) pairs.
fn undocumented(page: &str, paths: &[(Vec<String>, Vec<String>)]) -> Vec<String> {
    let entries = entries(page);
    let mut missing = Vec::new();
    for (path, flags) in paths {
        let command = path.join(" ");
        let own: Vec<&(String, String)> = entries.iter().filter(|(term, _)| has_word(term, &format!("rehearsal {command}"))).collect();
        if own.is_empty() {
            missing.push(format!("`rehearsal {command}`: no entry"));
            continue;
        }
        for flag in flags {
            let in_own = own.iter().any(|(term, body)| has_word(term, flag) || has_word(body, flag));
            let shared =
                entries.iter().any(|(term, _)| has_word(term, flag) && (has_word(term, &path[0]) || term.contains("every command")));
            if !in_own && !shared {
                missing.push(format!("`rehearsal {command} {flag}`"));
            }
        }
    }
    missing
}

#[test]
fn docs_commands_md_has_every_command_and_flag_of_the_binary() {
    let paths: Vec<(Vec<String>, Vec<String>)> = command_paths()
        .into_iter()
        .map(|p| {
            let words: Vec<&str> = p.iter().map(String::as_str).collect();
            let flags = flags(&help(&words));
            (p, flags)
        })
        .collect();
    assert!(paths.len() >= 19, "{paths:?}");
    assert!(paths.iter().any(|(p, f)| p == &["bench"] && f.contains(&"--param".to_string())), "{paths:?}");
    let page = std::fs::read_to_string(root().join("docs/commands.md")).unwrap();
    let missing = undocumented(&page, &paths);
    assert!(missing.is_empty(), "docs/commands.md lacks:\n{}", missing.join("\n"));
}

#[test]
fn a_flag_counts_as_documented_in_its_commands_entry_or_a_shared_one_naming_the_command() {
    let page = "# Commands\n\n`rehearsal run SCENARIO [--seed N]`\n: One run; `--out DIR` names its folder.\n\n\
                `--force` (run, sweep)\n: Replaces.\n\n`rehearsal sweep SCENARIO...`\n: Pairs.\n";
    let paths = |command: &str, flags: &[&str]| vec![(vec![command.to_string()], flags.iter().map(|f| f.to_string()).collect::<Vec<_>>())];
    assert!(undocumented(page, &paths("run", &["--seed", "--out", "--force"])).is_empty());
    assert_eq!(undocumented(page, &paths("sweep", &["--force", "--seeds"])), ["`rehearsal sweep --seeds`"]);
    assert_eq!(undocumented(page, &paths("bench", &[])), ["`rehearsal bench`: no entry"]);
    // `--seed` is not documented by `--seeds`, nor `rehearsal run` by `rehearsal runs`.
    assert!(!has_word("--seeds 1..=3", "--seed") && has_word("[--seed N]", "--seed"));
}
