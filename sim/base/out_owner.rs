//! Which files of an output folder are rehearsal's to delete or replace (issue 41: a folder
//! of the user's own `summary.md`, `temp/notes`, `plots/x.svg`, and no temporary, was
//! emptied by `rehearsal run --out DIR`, its files recognised by name alone).
//!
//! A command that claims a folder writes a record there, `.rehearsal-owned`, before it writes
//! anything else: the names it will write (the `Owned` patterns of sim/base/out_folder.rs).
//! The next command into the folder may delete or replace only what that record claims; any
//! other file (one the user put there, or a folder no rehearsal command ever wrote into)
//! stops it with exit 2 naming the file, `--force` or not. A folder that could hold the
//! user's whole world (`/`, the home folder, a repository's root) is refused as `--out`
//! before anything is made in it.

use std::path::{Path, PathBuf};

use crate::base::error::{Error, Result};

/// The lock's file name in the output folder. Hidden, and never counted as a result
/// (sim/base/out_folder.rs skips it).
pub const LOCK_FILE: &str = ".rehearsal-lock";

/// The record's file name in the output folder; like the lock, never a result.
pub const RECORD_FILE: &str = ".rehearsal-owned";

/// Whether `name` (an entry of the output folder) is the ownership record or its temporary.
pub fn is_record(name: &str) -> bool {
    name.starts_with(RECORD_FILE)
}

/// Refuses an output folder whose clearing could take the user's files with it: the file
/// system's root, the home folder, and a folder holding `.git` or `Cargo.toml` (a
/// repository's root, such as this one).
pub fn refuse_unsafe(out: &Path) -> Result<()> {
    let resolved = std::fs::canonicalize(out).unwrap_or_else(|_| out.to_path_buf());
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    let home = home.map(|h| std::fs::canonicalize(&h).unwrap_or(h));
    let why = if resolved.parent().is_none() {
        Some("the file system's root")
    } else if home.as_deref() == Some(resolved.as_path()) {
        Some("the home folder")
    } else if resolved.join(".git").exists() {
        Some("a repository's root (it holds .git)")
    } else if resolved.join("Cargo.toml").exists() {
        Some("a source tree's root (it holds Cargo.toml)")
    } else {
        None
    };
    match why {
        Some(why) => Err(Error::input(format!(
            "--out {}: refused as an output folder, it is {why}; choose a folder of its own (e.g. reports/…)",
            out.display()
        ))),
        None => Ok(()),
    }
}

/// The patterns the folder's record claims (`owns NAME` lines), or none when there is no
/// record (nothing in the folder is then provably rehearsal's).
pub fn recorded(out: &Path) -> Vec<String> {
    record_lines(out, "owns ")
}

/// The files the record names as someone else's, known and left alone (`keeps NAME` lines,
/// written by hand: a README beside a shipped report's figures).
pub fn kept(out: &Path) -> Vec<String> {
    record_lines(out, "keeps ")
}

fn record_lines(out: &Path, key: &str) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(out.join(RECORD_FILE)) else { return Vec::new() };
    text.lines().filter_map(|line| line.strip_prefix(key)).map(str::to_string).collect()
}

/// Writes the record (whole: a temporary renamed into place): `owned`, and the command line
/// that wrote it for whoever reads it.
pub fn record<S: AsRef<str>>(out: &Path, owned: &[S]) -> Result<()> {
    let command = std::env::args().collect::<Vec<_>>().join(" ").replace('\n', " ");
    let mut text = format!("# Written by `{command}`: the names below are rehearsal's to replace here; nothing else is.\n");
    for pattern in owned {
        text.push_str(&format!("owns {}\n", pattern.as_ref()));
    }
    for name in kept(out) {
        text.push_str(&format!("keeps {name}\n"));
    }
    let path = out.join(RECORD_FILE);
    let tmp = out.join(format!("{RECORD_FILE}.{}.tmp", std::process::id()));
    let fail = |e: std::io::Error| Error::harness(format!("cannot write {}: {e}", path.display()));
    // Removed by a Ctrl-C that ends the command before the rename (issue 41, item 2).
    let _live = crate::base::live_files::track([tmp.clone()]);
    crate::base::live_files::make(|| std::fs::write(&tmp, text)).map_err(fail)?;
    std::fs::rename(&tmp, &path).map_err(fail)
}

/// Whether the relative path `rel` (`docs/implementation`, `.results.csv.Ab12Cd.tmp`) is
/// claimed by `owned`: equal to a pattern or inside one, matching a `prefix*`, or a
/// temporary of a whole-file write of a claimed name (sim/base/atomic.rs).
pub fn claims<S: AsRef<str>>(owned: &[S], rel: &str) -> bool {
    owned.iter().map(AsRef::as_ref).any(|pattern| {
        let (dir, name) = rel.rsplit_once('/').map_or(("", rel), |(d, n)| (d, n));
        let temp_of = name.strip_prefix('.').and_then(|n| n.strip_suffix(".tmp")).is_some_and(|inner| {
            let (pdir, pname) = pattern.rsplit_once('/').map_or(("", pattern), |(d, n)| (d, n));
            pdir == dir && pattern.strip_suffix('*').is_none() && inner.starts_with(&format!("{pname}."))
        });
        temp_of
            || match pattern.strip_suffix('*') {
                Some(prefix) => rel.starts_with(prefix),
                None => rel == pattern || rel.starts_with(&format!("{pattern}/")),
            }
    })
}

/// The files under `out` that `owned` does not claim (at most `limit`), as paths relative to
/// `out`; the lock, the record and their temporaries aside. A top-level folder holding a run
/// (`comms.db`, `trace.csv`) counts as claimed when the folder has a record (every command
/// that records writes runs), and so does a folder inside with a record of its own whose
/// files that record claims (`calibrate load`'s folder inside `calibrate statements`').
pub fn unclaimed<S: AsRef<str>>(out: &Path, owned: &[S], limit: usize) -> Vec<String> {
    let mut found = Vec::new();
    walk(out, "", owned, limit, &mut found);
    let kept = kept(out);
    found.retain(|f| !claims(&kept, f));
    found
}

fn walk<S: AsRef<str>>(dir: &Path, rel: &str, owned: &[S], limit: usize, found: &mut Vec<String>) {
    let Ok(read) = std::fs::read_dir(dir) else { return };
    let mut names: Vec<String> = read.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    for name in names {
        if found.len() >= limit {
            return;
        }
        if rel.is_empty() && (name.starts_with(LOCK_FILE) || is_record(&name)) {
            continue;
        }
        let sub = if rel.is_empty() { name.clone() } else { format!("{rel}/{name}") };
        let path = dir.join(&name);
        if claims(owned, &sub) || (rel.is_empty() && !owned.is_empty() && is_run_folder(&path)) {
            continue;
        }
        // A symlink is a file here: never followed out of the folder.
        if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
            found.push(sub);
        } else if path.join(RECORD_FILE).exists() {
            let inner = unclaimed(&path, &recorded(&path), limit - found.len());
            found.extend(inner.into_iter().map(|f| format!("{sub}/{f}")));
        } else {
            // Empty folders are nobody's results; a folder's files are judged one by one.
            walk(&path, &sub, owned, limit, found);
        }
    }
}

fn is_run_folder(path: &Path) -> bool {
    path.is_dir() && (path.join("comms.db").exists() || path.join("trace.csv").exists())
}

/// Removes what this command's names (`owned`) claim in `out` (with `runs`, every top-level
/// run folder too), then records the earlier record's names and `owned`. Called after
/// `refuse_foreign`: everything removed is then provably rehearsal's.
pub fn clear_and_record<S: AsRef<str>>(out: &Path, owned: &[S], runs: bool) -> Result<()> {
    let (earlier, kept) = (recorded(out), kept(out));
    for pattern in owned.iter().map(AsRef::as_ref).filter(|p| !p.ends_with('*') && p.contains('/')) {
        remove(&out.join(pattern))?;
    }
    if let Ok(read) = std::fs::read_dir(out) {
        let mut names: Vec<String> = read.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        for name in names {
            if name.starts_with(LOCK_FILE) || is_record(&name) {
                continue;
            }
            let path = out.join(&name);
            if !claims(&kept, &name) && (claims(owned, &name) || (runs && is_run_folder(&path))) {
                remove(&path)?;
            }
        }
    }
    // The folders a nested name made (`docs/plans` of `docs/plans/implementation`), when empty.
    for pattern in owned.iter().map(AsRef::as_ref).filter(|p| p.contains('/')) {
        let mut dir = Path::new(pattern).parent();
        while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
            let _ = std::fs::remove_dir(out.join(d));
            dir = d.parent();
        }
    }
    let mut all = earlier;
    for pattern in owned.iter().map(AsRef::as_ref) {
        if !all.iter().any(|p| p == pattern) {
            all.push(pattern.to_string());
        }
    }
    record(out, &all)
}

fn remove(path: &Path) -> Result<()> {
    let is_dir = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir());
    let removed = if is_dir { std::fs::remove_dir_all(path) } else { std::fs::remove_file(path) };
    match removed {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::harness(format!("cannot remove {}: {e}", path.display()))),
        _ => Ok(()),
    }
}

/// Refuses `out` when it holds a file no rehearsal command's record claims, naming it.
pub fn refuse_foreign(out: &Path) -> Result<()> {
    let owned = recorded(out);
    let foreign = unclaimed(out, &owned, 4);
    let Some(first) = foreign.first() else { return Ok(()) };
    let more = if foreign.len() > 1 { format!(" (and {} more: {})", foreign.len() - 1, foreign[1..].join(", ")) } else { String::new() };
    let why = if out.join(RECORD_FILE).exists() {
        "no rehearsal command wrote it there"
    } else {
        "the folder has no record of a rehearsal command (.rehearsal-owned), so none of its files is provably rehearsal's"
    };
    Err(Error::input(format!(
        "{}: not rehearsal's to replace{more}: {why}; move it away or choose another --out (--force replaces only rehearsal's own files)",
        out.join(first).display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(dir: &Path, files: &[&str]) {
        for file in files {
            let path = dir.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
    }

    #[test]
    fn without_a_record_every_file_is_foreign_and_empty_folders_are_not() {
        let dir = tempfile::tempdir().unwrap();
        put(dir.path(), &["summary.md", "temp/notes"]);
        std::fs::create_dir_all(dir.path().join("plots/empty")).unwrap();
        assert_eq!(unclaimed(dir.path(), &recorded(dir.path()), 9), ["summary.md", "temp/notes"]);
        let e = refuse_foreign(dir.path()).expect_err("foreign");
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("summary.md: not rehearsal's to replace (and 1 more: temp/notes)"), "{e}");
    }

    #[test]
    fn a_record_claims_its_names_their_insides_and_their_temporaries_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        record(dir.path(), &["summary.md", "temp", "docs/implementation", "sweep-*"]).unwrap();
        put(dir.path(), &["summary.md", ".summary.md.Ab12Cd.tmp", "temp/s1.md", "docs/implementation/a.md", "sweep-123/x"]);
        refuse_foreign(dir.path()).expect("all claimed");
        put(dir.path(), &["docs/mine.md", ".mine.Ab12Cd.tmp", "summary.md.bak"]);
        assert_eq!(unclaimed(dir.path(), &recorded(dir.path()), 9), [".mine.Ab12Cd.tmp", "docs/mine.md", "summary.md.bak"]);
        assert!(refuse_foreign(dir.path()).expect_err("foreign").to_string().contains("no rehearsal command wrote it"));
    }

    #[test]
    fn the_root_the_home_folder_and_a_repository_are_refused() {
        assert!(refuse_unsafe(Path::new("/")).is_err());
        assert!(refuse_unsafe(Path::new("/tmp/..")).is_err());
        let dir = tempfile::tempdir().unwrap();
        refuse_unsafe(dir.path()).expect("a plain folder");
        refuse_unsafe(&dir.path().join("missing")).expect("a folder to make");
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        assert!(refuse_unsafe(dir.path()).unwrap_err().to_string().contains("holds .git"));
        if let Some(home) = std::env::var_os("HOME").filter(|h| Path::new(h).is_dir()) {
            assert!(refuse_unsafe(Path::new(&home)).unwrap_err().to_string().contains("home folder"));
        }
    }
}
