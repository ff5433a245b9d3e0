//! Writing a file so that it is whole or absent under its name: the bytes go to a temporary
//! file in the same folder, are synced, and the temporary file is renamed over the target.
//! A process killed at any moment leaves the old file, the new one, or none — never half of
//! one. Every output file written in one piece goes through here (results.csv, junit.xml,
//! saved failures, bench grids, reports, violations.csv, shrunk scenarios); trace.csv is
//! streamed and hashed as it is written, so it does its own `.tmp` and rename.

use std::io::Write;
use std::path::Path;

use crate::base::error::{Error, Result};

/// Writes `bytes` to `path`, replacing any file there, whole or not at all. The folder must
/// exist. A failure is a harness error naming `path`.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomically_with(path, |file| file.write_all(bytes).map_err(|e| Error::harness(format!("cannot write {}: {e}", path.display()))))
}

/// As `write_atomically`, the bytes written by `write` as they are made (a file too large to
/// hold in memory whole: a sweep's junit.xml of 10^6 pairs, issue 41). An error of `write`
/// leaves the old file, or none.
pub fn write_atomically_with(path: &Path, write: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
    refuse_to_replace_a_special_file(path)?;
    let fail = |e: std::io::Error| Error::harness(format!("cannot write {}: {e}", path.display()));
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    // A leftover of a killed process says whose it was: `.results.csv.XXXXXX.tmp`.
    let prefix = format!(".{}.", path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // The same permissions `File::create` gives (0666 less the umask), not the 0600 of a
    // temporary file: these are outputs people and other tools read.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    // A Ctrl-C that ends the command before the rename removes it (the drop does otherwise):
    // made and tracked in one step, as its name is known only once it is made.
    let (_live, mut file) =
        crate::base::live_files::make_tracked(|| builder.tempfile_in(folder), |file| vec![file.path().to_path_buf()]).map_err(fail)?;
    {
        let mut buffered = std::io::BufWriter::new(file.as_file_mut());
        write(&mut buffered)?;
        buffered.flush().map_err(fail)?;
    }
    file.as_file().sync_all().map_err(fail)?;
    file.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
}

/// The rename would put a regular file in place of a device, a FIFO or a folder the user named
/// (`rehearsal new /dev/null --force` as root replaced /dev/null): bad input, refused. A
/// symbolic link is replaced itself, never what it points at.
fn refuse_to_replace_a_special_file(path: &Path) -> Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return Ok(()) };
    let kind = meta.file_type();
    if kind.is_file() || kind.is_symlink() {
        return Ok(());
    }
    Err(Error::input(format!(
        "{} is {}, not a regular file: refusing to replace it",
        path.display(),
        crate::base::input_file::kind_of(&kind)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leftovers(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    #[test]
    fn writes_the_whole_file_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("results.csv");
        let bytes: Vec<u8> = (0..200_000u32).flat_map(|i| i.to_le_bytes()).collect();
        write_atomically(&path, &bytes).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
        assert_eq!(leftovers(tmp.path()), ["results.csv"], "no temporary file is left");
    }

    #[test]
    fn replaces_an_existing_file() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("summary.md");
        std::fs::write(&path, "an older and much longer text than the new one").unwrap();
        write_atomically(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(leftovers(tmp.path()), ["summary.md"]);
    }

    #[cfg(unix)]
    #[test]
    fn the_file_is_readable_by_others_as_a_created_file_is() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let (atomic, plain) = (tmp.path().join("a"), tmp.path().join("b"));
        write_atomically(&atomic, b"x").unwrap();
        std::fs::write(&plain, b"x").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&atomic), mode(&plain));
    }

    #[test]
    fn a_folder_or_a_fifo_in_the_way_is_refused_and_left_as_it_is_and_a_link_is_replaced_itself() {
        let tmp = tempfile::tempdir().unwrap();
        let folder = tmp.path().join("d");
        std::fs::create_dir(&folder).unwrap();
        let e = write_atomically(&folder, b"x").unwrap_err();
        assert!(matches!(e, Error::Input(_)) && e.to_string().contains("is a folder, not a regular file: refusing to replace it"), "{e}");
        assert!(folder.is_dir());
        let target = tmp.path().join("target");
        std::fs::write(&target, "kept").unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_atomically(&link, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "kept", "what the link pointed at is untouched");
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "new");
    }

    #[test]
    fn a_missing_folder_is_a_harness_error_naming_the_path() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("no-such-folder").join("junit.xml");
        let e = write_atomically(&path, b"x").unwrap_err();
        assert!(matches!(e, Error::Harness(_)), "{e:?}");
        assert!(e.to_string().contains(&path.display().to_string()), "{e}");
        assert!(!path.exists());
    }
}
