//! Every pointer a document or a scenario's header comment makes into the repository exists:
//! a relative Markdown link (`[x](docs/ci.md)`) and its `#anchor` (a heading of the target, as
//! GitHub makes its id), a path named in the text (`docs/profiles.md`, `sim/run/mod.rs`,
//! `scenarios/faults/zombie.toml`), and a named section (`README.md "Exit codes"`,
//! `docs/ci.md's "Baselines"`): a heading of that file holds the name. A renamed section or a
//! moved file fails here, naming the file and line that point to it.

use std::path::{Path, PathBuf};

use crate::support::root;

/// The documents and scenario files checked: tracked Markdown (but `reports/`, which runs
/// write) and every scenario's comment lines.
fn sources() -> Vec<PathBuf> {
    let o = std::process::Command::new("git").args(["ls-files", "*.md", "scenarios/*.toml"]).current_dir(root()).output().unwrap();
    assert!(o.status.success(), "git ls-files");
    String::from_utf8(o.stdout).unwrap().lines().filter(|p| !p.starts_with("reports/")).map(PathBuf::from).collect()
}

/// The text of a source that may point somewhere: a `.md` whole, a `.toml` its `#` comments.
fn pointing_lines(path: &Path, text: &str) -> Vec<(usize, String)> {
    let toml = path.extension().is_some_and(|e| e == "toml");
    text.lines().enumerate().filter(|(_, l)| !toml || l.trim_start().starts_with('#')).map(|(i, l)| (i + 1, l.to_string())).collect()
}

/// GitHub's id of a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`.
fn anchor_of(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn headings(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let mut fence = false;
    let mut found = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
        } else if !fence && line.starts_with('#') {
            found.push(line.trim_start_matches('#').trim().to_string());
        }
    }
    found
}

/// The relative links of a Markdown line: `[text](target)`.
fn links(line: &str) -> Vec<String> {
    line.match_indices("](")
        .filter_map(|(i, _)| line[i + 2..].split_once(')').map(|(t, _)| t.split_whitespace().next().unwrap_or("").to_string()))
        .filter(|t| !t.is_empty() && !t.contains("://") && !t.starts_with("mailto:"))
        .collect()
}

/// Repository paths named in a line: words that start with a top folder and end with a
/// file's extension, without a pattern or placeholder in them.
fn named_paths(line: &str) -> Vec<String> {
    const TOPS: &[&str] = &["docs/", "sim/", "tests/", "scripts/", "scenarios/", "benches/"];
    const ENDS: &[&str] = &[".md", ".rs", ".toml", ".sql", ".sh", ".py", ".txt", ".tsv"];
    line.split(|c: char| !(c.is_ascii_alphanumeric() || "_./-+".contains(c)))
        .map(|w| w.trim_end_matches('.'))
        .filter(|w| TOPS.iter().any(|t| w.starts_with(t)) && ENDS.iter().any(|e| w.ends_with(e)))
        // A placeholder: ARCHITECTURE.md's module `m`, a date or number to fill in.
        .filter(|w| *w != "sim/m.rs" && !w.contains("YYYY") && !w.contains("-NN"))
        .map(str::to_string)
        .collect()
}

/// Named sections: `FILE "Name"` or `FILE's "Name"`, FILE a document of the repository.
fn named_sections(line: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (i, _) in line.match_indices(" \"") {
        let before = line[..i].trim_end_matches("'s");
        let Some(file) = before.rsplit(|c: char| c.is_whitespace() || c == '(' || c == '`').next() else { continue };
        let file = file.trim_matches('`');
        let file = if file == "README" { "README.md" } else { file };
        if !(file.ends_with(".md")
            && (file.starts_with("docs/") || file == "README.md" || file == "ARCHITECTURE.md" || file == "scenarios/README.md"))
        {
            continue;
        }
        if let Some((name, _)) = line[i + 2..].split_once('"') {
            found.push((file.to_string(), name.to_string()));
        }
    }
    found
}

/// What `source` points to that does not exist, as `file:line: …`.
fn dangling(source: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(source)).unwrap();
    let dir = source.parent().unwrap_or(Path::new(""));
    let markdown = source.extension().is_some_and(|e| e == "md");
    let mut bad = Vec::new();
    let mut fence = false;
    for (n, line) in pointing_lines(source, &text) {
        if line.trim_start().starts_with("```") {
            fence = !fence;
        }
        let at = format!("{}:{n}", source.display());
        for link in if markdown && !fence { links(&line) } else { Vec::new() } {
            let (file, anchor) = link.split_once('#').map_or((link.as_str(), None), |(f, a)| (f, Some(a)));
            let target = if file.is_empty() { source.to_path_buf() } else { dir.join(file) };
            if !root().join(&target).exists() {
                bad.push(format!("{at}: link to {link}: no {}", target.display()));
            } else if let Some(anchor) = anchor {
                if !headings(&root().join(&target)).iter().any(|h| anchor_of(h) == anchor) {
                    bad.push(format!("{at}: link to {link}: {} has no heading #{anchor}", target.display()));
                }
            }
        }
        for path in named_paths(&line) {
            if !root().join(&path).exists() && !root().join(dir).join(&path).exists() {
                bad.push(format!("{at}: names {path}, which does not exist"));
            }
        }
        for (file, name) in named_sections(&line) {
            let lower = name.to_lowercase();
            if !headings(&root().join(&file)).iter().any(|h| h.to_lowercase().contains(&lower)) {
                bad.push(format!("{at}: names {file} \"{name}\": no heading of {file} holds it"));
            }
        }
    }
    bad
}

#[test]
fn every_link_path_and_named_section_of_the_docs_and_scenario_headers_exists() {
    let sources = sources();
    assert!(sources.iter().any(|s| s.ends_with("README.md")) && sources.iter().any(|s| s.starts_with("scenarios/bench")), "{sources:?}");
    let bad: Vec<String> = sources.iter().flat_map(|s| dangling(s)).collect();
    assert!(bad.is_empty(), "{} dangling pointer(s):\n{}", bad.len(), bad.join("\n"));
}

#[test]
fn links_paths_and_sections_are_read_as_a_reader_follows_them() {
    assert_eq!(
        links("see [ci](docs/ci.md#baselines) and [web](https://x.org/a) or [here](#exit-codes)"),
        ["docs/ci.md#baselines", "#exit-codes"]
    );
    assert_eq!(anchor_of("3. A seeded suite in CI: a strict suite"), "3-a-seeded-suite-in-ci-a-strict-suite");
    assert_eq!(named_paths("(sim/run/mod.rs) and `scenarios/faults/*.toml`, docs/ci.md."), ["sim/run/mod.rs", "docs/ci.md"]);
    assert_eq!(
        named_sections("see README \"Benchmarks\": and docs/ci.md's \"Baselines\", 000 \"Heartbeat\""),
        [("README.md".to_string(), "Benchmarks".to_string()), ("docs/ci.md".to_string(), "Baselines".to_string())]
    );
}
