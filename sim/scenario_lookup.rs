//! Finding the scenario a trace names. The trace holds only its file name and content hash
//! (sim/scenario/identity.rs), so `rehearsal judge` looks for a file of that name whose text
//! has that hash, where a run's scenario usually is: in the current folder and its
//! `scenarios/` tree, then in each folder above the run folder and its `scenarios/` tree (a
//! run folder under `reports/runs/` of a checkout finds the checkout's scenarios). A file of
//! that name with another hash is named in the error, since it is most likely the scenario
//! edited since the run.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::scenario::identity;

/// The file named `name` whose text hashes to `sha256`, searched as the module says.
pub fn find(name: &str, sha256: &str, run_dir: &Path) -> Result<PathBuf> {
    // The current folder as the empty path, so what is found there is named as typed.
    let mut roots: Vec<PathBuf> = vec![PathBuf::new()];
    if let Ok(run_dir) = std::fs::canonicalize(run_dir) {
        roots.extend(run_dir.ancestors().map(Path::to_path_buf));
    }
    // (where found, the file itself, its hash): one file reached twice is named once.
    let mut other_hashes: Vec<(PathBuf, PathBuf, String)> = Vec::new();
    for root in &roots {
        let mut candidates = vec![root.join(name)];
        walk(&root.join("scenarios"), name, &mut candidates);
        for candidate in candidates {
            let Ok(text) = std::fs::read_to_string(&candidate) else { continue };
            let found = identity::content_sha256(&text);
            if found == sha256 {
                return Ok(candidate);
            }
            let real = std::fs::canonicalize(&candidate).unwrap_or_else(|_| candidate.clone());
            if !other_hashes.iter().any(|(_, seen, _)| seen == &real) {
                other_hashes.push((candidate, real, found));
            }
        }
    }
    let others: Vec<String> =
        other_hashes.iter().map(|(path, _, hash)| format!("{} has sha256 {}", path.display(), identity::short(hash))).collect();
    Err(Error::input(format!(
        "cannot find the scenario {name} of sha256 {} in the current folder, the folders above the run folder or their scenarios/ folders{}; pass --scenario FILE",
        identity::short(sha256),
        if others.is_empty() { String::new() } else { format!(" ({})", others.join("; ")) }
    )))
}

/// Every file named `name` under `dir`, in sorted order (so the first match is the same on
/// every machine). Links to folders are not followed: a tree that links to itself ends.
fn walk(dir: &Path, name: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        let Ok(kind) = std::fs::symlink_metadata(&path) else { continue };
        if kind.is_dir() {
            walk(&path, name, out);
        } else if path.file_name().is_some_and(|f| f == name) {
            out.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_of_that_name_and_hash_is_found_above_the_run_folder_and_another_hash_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let checkout = dir.path().join("checkout");
        std::fs::create_dir_all(checkout.join("scenarios/faults")).unwrap();
        std::fs::create_dir_all(checkout.join("reports/runs/z-1")).unwrap();
        std::fs::create_dir_all(checkout.join("scenarios/old")).unwrap();
        std::fs::write(checkout.join("scenarios/old/z.toml"), "old text\n").unwrap();
        std::fs::write(checkout.join("scenarios/faults/z.toml"), "text\n").unwrap();
        let run_dir = checkout.join("reports/runs/z-1");
        let found = find("z.toml", &identity::content_sha256("text\n"), &run_dir).unwrap();
        assert_eq!(std::fs::canonicalize(found).unwrap(), std::fs::canonicalize(checkout.join("scenarios/faults/z.toml")).unwrap());
        let missing = find("z.toml", &identity::content_sha256("new text\n"), &run_dir).unwrap_err().to_string();
        assert!(missing.contains("cannot find the scenario z.toml of sha256"), "{missing}");
        assert!(
            missing.contains(&format!("old/z.toml has sha256 {}", identity::short(&identity::content_sha256("old text\n")))),
            "{missing}"
        );
    }
}
