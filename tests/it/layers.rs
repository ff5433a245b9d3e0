//! The layer rule of ARCHITECTURE.md, checked on the code: every module of sim/ is in one layer
//! of sim/layers.txt, and no file imports (`crate::…`) from a layer above its own. The table is
//! keyed by module and by layer folder, so the check holds on the flat tree and on the one
//! scripts/relayout.py makes (sim/<layer>/<module>).

use std::collections::BTreeMap;
use std::path::Path;

use super::function_length::code_only;
use crate::support::files_ending;

/// Module or layer folder name → (layer rank, layer name), from sim/layers.txt.
fn layers(table: &str) -> BTreeMap<String, (usize, String)> {
    let mut of = BTreeMap::new();
    let rows = table.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#'));
    for (rank, row) in rows.enumerate() {
        let (layer, modules) = row.split_once(':').unwrap_or_else(|| panic!("sim/layers.txt: `{row}` lacks `layer:`"));
        for name in std::iter::once(layer).chain(modules.split_whitespace()) {
            let placed = of.entry(name.to_string()).or_insert_with(|| (rank, layer.to_string()));
            assert_eq!(placed.1, layer, "sim/layers.txt: {name} is in two layers");
        }
    }
    of
}

/// The first segment of every `crate::` path in `code`, grouped ones (`crate::{a::B, c}`) too.
fn imported(code: &str) -> Vec<String> {
    let ident = |s: &str| s.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut found = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        if at > 0 && code.as_bytes()[at - 1] == b'$' {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let (mut depth, mut item) = (0, String::new());
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        found.push(ident(&item));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
            found.push(ident(&item));
        } else {
            found.push(ident(rest));
        }
    }
    found.retain(|name| !name.is_empty() && name != "self");
    found
}

#[test]
fn no_module_imports_from_a_higher_layer() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("sim");
    let layers = layers(&std::fs::read_to_string(root.join("layers.txt")).unwrap());
    let files = files_ending(&root, "rs");
    let (mut upward, mut unplaced) = (Vec::new(), Vec::new());
    for file in &files {
        let relative = file.strip_prefix(&root).unwrap();
        let top = relative.components().next().unwrap().as_os_str().to_string_lossy().trim_end_matches(".rs").to_string();
        if top == "lib" || top == "main" {
            continue;
        }
        let Some((rank, layer)) = layers.get(&top) else {
            unplaced.push(top);
            continue;
        };
        for name in imported(&code_only(&std::fs::read_to_string(file).unwrap())) {
            match layers.get(&name) {
                Some((to, to_layer)) if to > rank => {
                    upward.push(format!("sim/{} ({layer}) imports crate::{name} ({to_layer})", relative.display()))
                }
                Some(_) => {}
                None => unplaced.push(name),
            }
        }
    }
    unplaced.sort();
    unplaced.dedup();
    assert!(unplaced.is_empty(), "modules in no layer of sim/layers.txt (add each to its layer): {unplaced:?}");
    assert!(upward.is_empty(), "imports from a higher layer:\n{}", upward.join("\n"));
}

#[test]
fn the_scan_sees_plain_and_grouped_imports_and_ranks_layers_in_table_order() {
    let code = code_only("use crate::{a::B, c, d::{E, F}};\nfn f() { crate::g::h(); } // crate::comment\n");
    assert_eq!(imported(&code), ["a", "c", "d", "g"]);
    let table = layers("# lowest first\nlow: x\nhost: host y\n");
    assert_eq!(table["x"], (0, "low".to_string()));
    assert_eq!((table["y"].0, table["host"].0), (1, 1), "a module named like its layer hosts it");
}
