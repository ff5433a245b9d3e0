//! The layer rule of ARCHITECTURE.md, checked on the code. A layer is a folder of sim/ and its
//! modules are the files in it: the one list kept by hand is the order of the layers, lowest
//! first (`LAYERS`). No file imports (`crate::…`) from a layer above its own, and no files import
//! each other in a circle, inside a folder or across (issue 46).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::function_length::code_only;
use crate::support::files_ending;

/// The layers of sim/, lowest first: a module may import from its own layer and the ones before
/// it, never from one after it. Each is the folder sim/<layer>/; a new module goes into the
/// folder of what it knows.
const LAYERS: [&str; 12] =
    ["vocab", "base", "input", "plan", "world", "trace", "actors", "judging", "run", "report", "campaign", "commands"];

/// The rank of a layer in `LAYERS`.
fn rank(layer: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == layer)
}

/// Every path `crate::…`, `super::…` or `self::…` names in `code`, with grouped imports
/// (`crate::{a::B, c::{D, E}}`) expanded: each as the segments it names after its root, the root
/// kept as the first segment.
fn paths(code: &str) -> Vec<Vec<String>> {
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let starts_path = ["crate::", "super::", "self::"].iter().find(|root| code[at..].starts_with(*root));
        let after_ident =
            at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_' || bytes[at - 1] == b'$' || bytes[at - 1] == b':');
        match starts_path {
            Some(_) if !after_ident => {
                let (end, mut expanded) = path_at(code, at, Vec::new());
                found.append(&mut expanded);
                at = end.max(at + 1);
            }
            _ => at += 1,
        }
    }
    found
}

/// The path starting at `at` (after `prefix`): where it ends, and the paths it names.
fn path_at(code: &str, mut at: usize, prefix: Vec<String>) -> (usize, Vec<Vec<String>>) {
    let bytes = code.as_bytes();
    let mut segments = prefix;
    loop {
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        if at < bytes.len() && bytes[at] == b'{' {
            return group_at(code, at + 1, segments);
        }
        let start = at;
        while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
            at += 1;
        }
        if at > start {
            segments.push(code[start..at].to_string());
        }
        if code[at..].starts_with("::") && at > start {
            at += 2;
            continue;
        }
        return (at, vec![segments]);
    }
}

/// The paths of a group `{a::B, c}` whose `{` was just before `at`, each after `prefix`.
fn group_at(code: &str, mut at: usize, prefix: Vec<String>) -> (usize, Vec<Vec<String>>) {
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    while at < bytes.len() {
        match bytes[at] {
            b'}' => return (at + 1, found),
            b',' | b' ' | b'\n' | b'\t' | b'\r' => at += 1,
            _ => {
                let (end, mut inner) = path_at(code, at, prefix.clone());
                found.append(&mut inner);
                // Skip what follows an item up to the next `,` or `}` (`as Name`, `*`).
                at = end.max(at + 1);
                while at < bytes.len() && bytes[at] != b',' && bytes[at] != b'}' {
                    at += 1;
                }
            }
        }
    }
    (at, found)
}

/// A file's module path under sim/: `world/db/mod.rs` → `["world", "db"]`.
fn module_of(relative: &Path) -> Vec<String> {
    let mut segments: Vec<String> = relative.iter().map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
    if segments.last().is_some_and(|s| s == "mod") {
        segments.pop();
    }
    segments
}

/// The module a path in `from` reaches, as an absolute module path (its root resolved); `None`
/// when it climbs above the crate.
fn absolute(from: &[String], path: &[String]) -> Option<Vec<String>> {
    let (root, rest) = path.split_first()?;
    // `self` and `super` count from the module the file is (a folder's mod.rs is the folder).
    let module: Vec<String> = from.to_vec();
    let mut base = match root.as_str() {
        "crate" => Vec::new(),
        "self" => module,
        "super" => module[..module.len().checked_sub(1)?].to_vec(),
        _ => return None,
    };
    let mut rest = rest.iter().peekable();
    while rest.peek().is_some_and(|s| *s == "super") {
        base.pop()?;
        rest.next();
    }
    base.extend(rest.cloned());
    Some(base)
}

/// The longest prefix of `path` that is a module of `modules`.
fn file_of(path: &[String], modules: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    (1..=path.len()).rev().map(|n| path[..n].to_vec()).find(|prefix| modules.contains(prefix))
}

/// `code` up to its unit tests (`#[cfg(test)] mod NAME {`, at the end of a file by the project's
/// style): what a test module takes from a sibling is not an import of the module it tests.
fn without_tests(code: &str) -> String {
    let inline_tests = code.match_indices("#[cfg(test)]").map(|(at, _)| at).find(|&at| {
        let after = code[at + "#[cfg(test)]".len()..].trim_start();
        after.starts_with("mod ") && after.split_once('\n').map_or(after, |(line, _)| line).contains('{')
    });
    inline_tests.map_or(code, |at| &code[..at]).to_string()
}

/// Whether a file is a test module of its own (`#[cfg(test)] mod tests;` → tests.rs, tests_x.rs).
fn is_test_file(module: &[String]) -> bool {
    module.last().is_some_and(|name| name == "tests" || name.starts_with("tests_"))
}

/// Every module of sim/ (lib.rs and main.rs left out) → the modules its code names.
fn import_graph(root: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let files: Vec<(Vec<String>, String)> = files_ending(root, "rs")
        .into_iter()
        .map(|file| (module_of(file.strip_prefix(root).unwrap()), without_tests(&code_only(&std::fs::read_to_string(&file).unwrap()))))
        .filter(|(module, _)| module.first().is_some_and(|top| top != "lib" && top != "main") && !is_test_file(module))
        .collect();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|(m, _)| m.clone()).collect();
    graph_of(&files, &modules)
}

fn graph_of(files: &[(Vec<String>, String)], modules: &BTreeSet<Vec<String>>) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut graph = BTreeMap::new();
    for (module, code) in files {
        let reached: BTreeSet<Vec<String>> = paths(code)
            .iter()
            .filter_map(|path| absolute(module, path))
            .filter_map(|path| file_of(&path, modules))
            // A folder's module holds its files: what it takes from them is containment, not
            // an import (a file taking from its folder's module still is one).
            .filter(|to| !to.starts_with(module))
            .collect();
        graph.insert(module.clone(), reached);
    }
    graph
}

/// The circles of `graph` (its strongly connected components of two or more modules), each sorted.
fn circles(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    let reach = |from: &Vec<String>| {
        let (mut seen, mut stack) = (BTreeSet::new(), vec![from.clone()]);
        while let Some(m) = stack.pop() {
            for next in graph.get(&m).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&Vec<String>, BTreeSet<Vec<String>>> = graph.keys().map(|m| (m, reach(m))).collect();
    let mut found: BTreeSet<Vec<String>> = BTreeSet::new();
    for (m, reached) in &reaches {
        let circle: Vec<String> =
            reached.iter().filter(|other| reaches.get(other).is_some_and(|back| back.contains(*m))).map(|other| other.join("::")).collect();
        if circle.len() >= 2 {
            found.insert(circle);
        }
    }
    found.into_iter().collect()
}

#[test]
fn no_module_imports_from_a_higher_layer() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("sim");
    let folders: BTreeSet<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().to_string())
        .collect();
    let layers: BTreeSet<String> = LAYERS.iter().map(|l| l.to_string()).collect();
    assert_eq!(folders, layers, "every folder of sim/ is a layer of LAYERS (tests/it/layers.rs) and every layer a folder");
    let mut upward = Vec::new();
    for (module, reached) in import_graph(&root) {
        let from = rank(&module[0]).unwrap();
        for to in reached.iter().filter(|to| rank(&to[0]).unwrap() > from) {
            upward.push(format!("crate::{} ({}) imports crate::{} ({})", module.join("::"), module[0], to.join("::"), to[0]));
        }
    }
    assert!(upward.is_empty(), "imports from a higher layer:\n{}", upward.join("\n"));
}

#[test]
fn no_modules_import_each_other_in_a_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("sim");
    let found = circles(&import_graph(&root));
    assert!(found.is_empty(), "modules that import each other in a circle (move what both need into a module of its own):\n{found:#?}");
}

#[test]
fn the_scan_sees_plain_grouped_and_relative_paths() {
    let code = code_only("use crate::{a::B, c, d::{E, F as G}};\nfn f() { crate::g::h(); super::super::x::y(); self::z::W; } // crate::comment\nuse my_crate::q;\n");
    let seen: Vec<String> = paths(&code).iter().map(|p| p.join("::")).collect();
    assert_eq!(seen, ["crate::a::B", "crate::c", "crate::d::E", "crate::d::F", "crate::g::h", "super::super::x::y", "self::z::W"]);
    let module = vec!["campaign".to_string(), "shrink".to_string(), "plan".to_string()];
    let path = |s: &str| s.split("::").map(str::to_string).collect::<Vec<_>>();
    assert_eq!(absolute(&module, &path("super::super::corpus::X")), Some(path("campaign::corpus::X")));
    assert_eq!(absolute(&module, &path("self::inner")), Some(path("campaign::shrink::plan::inner")));
    assert_eq!(absolute(&module, &path("super::super::super::super::x")), None);
}

#[test]
fn unit_tests_are_left_out_and_test_only_items_are_kept() {
    let code =
        "use crate::a::B;\n#[cfg(test)]\nfn helper() { crate::c::d(); }\nfn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::e::F;\n}\n";
    let seen: Vec<String> = paths(&without_tests(code)).iter().map(|p| p.join("::")).collect();
    assert_eq!(seen, ["crate::a::B", "crate::c::d"]);
    let m = |s: &str| s.split("::").map(str::to_string).collect::<Vec<_>>();
    assert!(is_test_file(&m("judging::oracle::tests_designer")) && is_test_file(&m("judging::oracle::tests")));
    assert!(!is_test_file(&m("judging::oracle::rules")) && !is_test_file(&m("campaign::testing")));
}

#[test]
fn a_circle_is_found_across_folders_and_inside_one_and_a_chain_is_not_one() {
    let m = |s: &str| s.split("::").map(str::to_string).collect::<Vec<_>>();
    let files = vec![
        (m("campaign::corpus"), "use crate::campaign::shrink::Signature;".to_string()),
        (m("campaign::shrink"), "use super::corpus::entry_name;".to_string()),
        (m("input::scenario"), "use crate::base::error::Error;".to_string()),
        (m("base::error"), String::new()),
    ];
    let modules: BTreeSet<Vec<String>> = files.iter().map(|(m, _)| m.clone()).collect();
    assert_eq!(circles(&graph_of(&files, &modules)), vec![vec!["campaign::corpus".to_string(), "campaign::shrink".to_string()]]);
    let chain = &files[2..];
    assert!(circles(&graph_of(chain, &modules)).is_empty(), "a one-way import is not a circle");
}

/// ARCHITECTURE.md's row of each layer (`| \`world/\` | … |`): its text up to the row's end.
fn architecture_rows(architecture: &str) -> BTreeMap<String, String> {
    let mut rows = BTreeMap::new();
    for line in architecture.lines() {
        if let Some(rest) = line.strip_prefix("| `") {
            if let Some((folder, row)) = rest.split_once("/` |") {
                rows.insert(folder.to_string(), row.to_string());
            }
        }
    }
    rows
}

/// The modules of a layer's folder that its ARCHITECTURE.md row does not name in backticks.
fn unnamed_modules(folder: &Path, row: &str) -> Vec<String> {
    let mut unnamed: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|name| name != "mod.rs")
        .map(|name| name.trim_end_matches(".rs").to_string())
        .filter(|name| !row.contains(&format!("`{name}")))
        .collect();
    unnamed.sort();
    unnamed
}

#[test]
fn architecture_names_every_module_in_its_layer_s_row() {
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rows = architecture_rows(&std::fs::read_to_string(top.join("ARCHITECTURE.md")).unwrap());
    let mut stale = Vec::new();
    for layer in LAYERS {
        let Some(row) = rows.get(layer) else {
            stale.push(format!("{layer}/: no row in ARCHITECTURE.md's layer table"));
            continue;
        };
        for name in unnamed_modules(&top.join("sim").join(layer), row) {
            stale.push(format!("sim/{layer}/{name}: not named in the `{layer}/` row"));
        }
    }
    assert!(stale.is_empty(), "ARCHITECTURE.md's layer table is stale:\n{}", stale.join("\n"));
}

#[test]
fn a_module_the_row_does_not_name_is_found() {
    let rows = architecture_rows("| folder | holds |\n| `world/` | `db/`, `event` | x |\n| `vocab/` | `actor` (`ActorName`) | y |\n");
    assert_eq!(rows.keys().collect::<Vec<_>>(), ["vocab", "world"]);
    let dir = std::env::temp_dir().join(format!("layers-row-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("db")).unwrap();
    for file in ["mod.rs", "event.rs", "executor.rs"] {
        std::fs::write(dir.join(file), "").unwrap();
    }
    let unnamed = unnamed_modules(&dir, &rows["world"]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(unnamed, ["executor"]);
}
