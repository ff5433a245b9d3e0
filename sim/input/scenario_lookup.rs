//! Finding the scenario a trace names. The trace holds only its file name (so its hash does
//! not depend on where the run was made: sim/input/scenario/identity.rs), so `rehearsal judge`
//! looks for a file of that name where a run's scenario usually is: in the current folder and
//! its `scenarios/` tree, then in each folder above the run folder and its `scenarios/` tree
//! (a run folder under `reports/runs/` of a checkout finds the checkout's scenarios). Files
//! of that name with different texts are not chosen between: the error names each with its
//! hash, and `--scenario` says which.

use std::path::{Path, PathBuf};

use crate::base::error::{Error, Result};
use crate::input::scenario::identity;

/// The one text among the files named `name`, searched as the module says (the first found
/// names it).
pub fn find(name: &str, run_dir: &Path) -> Result<PathBuf> {
    // The current folder as the empty path, so what is found there is named as typed.
    let mut roots: Vec<PathBuf> = vec![PathBuf::new()];
    if let Ok(run_dir) = std::fs::canonicalize(run_dir) {
        roots.extend(run_dir.ancestors().map(Path::to_path_buf));
    }
    // (where found, the file itself, its text's hash): one file reached twice counts once.
    let mut found: Vec<(PathBuf, PathBuf, String)> = Vec::new();
    for root in &roots {
        let mut candidates = vec![root.join(name)];
        walk(&root.join("scenarios"), name, &mut candidates);
        for candidate in candidates {
            let Ok(text) = std::fs::read_to_string(&candidate) else { continue };
            let real = std::fs::canonicalize(&candidate).unwrap_or_else(|_| candidate.clone());
            if !found.iter().any(|(_, seen, _)| seen == &real) {
                found.push((candidate, real, identity::content_sha256(&text)));
            }
        }
    }
    let Some((first, _, hash)) = found.first() else {
        return Err(Error::input(format!(
            "cannot find the scenario {name} in the current folder, the folders above the run folder or their scenarios/ folders; pass --scenario FILE"
        )));
    };
    if found.iter().any(|(_, _, other)| other != hash) {
        let listed: Vec<String> =
            found.iter().map(|(path, _, hash)| format!("{} (sha256 {})", path.display(), identity::short(hash))).collect();
        return Err(Error::input(format!(
            "several files named {name} with different texts: {}; pass --scenario FILE to say which the run was made with",
            listed.join(", ")
        )));
    }
    Ok(first.clone())
}

/// Every file named `name` under `dir`, in sorted order (so the first is the same on every
/// machine). Links to folders are not followed: a tree that links to itself ends.
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
    fn the_file_of_that_name_is_found_above_the_run_folder_and_two_texts_are_not_chosen_between() {
        let dir = tempfile::tempdir().unwrap();
        let checkout = dir.path().join("checkout");
        std::fs::create_dir_all(checkout.join("scenarios/faults")).unwrap();
        std::fs::create_dir_all(checkout.join("reports/runs/z-1")).unwrap();
        std::fs::write(checkout.join("scenarios/faults/z.toml"), "text\n").unwrap();
        let run_dir = checkout.join("reports/runs/z-1");
        let found = find("z.toml", &run_dir).unwrap();
        assert_eq!(std::fs::canonicalize(found).unwrap(), std::fs::canonicalize(checkout.join("scenarios/faults/z.toml")).unwrap());
        assert!(find("y.toml", &run_dir).unwrap_err().to_string().contains("cannot find the scenario y.toml"));
        // The same text twice is one scenario; another text makes the name ambiguous.
        std::fs::create_dir_all(checkout.join("scenarios/copy")).unwrap();
        std::fs::write(checkout.join("scenarios/copy/z.toml"), "text\n").unwrap();
        assert!(find("z.toml", &run_dir).is_ok());
        std::fs::write(checkout.join("scenarios/copy/z.toml"), "edited\n").unwrap();
        let ambiguous = find("z.toml", &run_dir).unwrap_err().to_string();
        assert!(ambiguous.contains("several files named z.toml with different texts"), "{ambiguous}");
        assert!(ambiguous.contains(&format!("(sha256 {})", identity::short(&identity::content_sha256("edited\n")))), "{ambiguous}");
    }
}
