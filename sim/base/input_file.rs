//! Reading a file the user named as input (a scenario, a protocol SQL file, a saved failure, a
//! coverage list, a baseline) with a bound: only a regular file is opened, so a FIFO is never
//! waited on and a device (`/dev/zero`, `/dev/urandom`) never read; and at most `MAX_BYTES`
//! are read, so a huge file is refused at the cost of the bound, not of its size (issue 30:
//! `rehearsal run /dev/zero` grew to 24 GB; a 60 MB file peaked at 560 MB). Every refusal is
//! bad input (exit 2) naming the file.

use std::io::Read;
use std::path::Path;

use crate::base::error::{Error, Result};

/// The largest input file read: the shipped scenarios are under 4 KiB and the protocol's SQL
/// under 12 KiB; a saved failure embeds no more than its scenario. 4 MiB leaves two orders of
/// magnitude of room for a hand-written or generated file.
pub const MAX_BYTES: u64 = 4 << 20;

/// The largest file a command wrote for another to read back (a shard's coverage.csv and
/// pairs.jsonl, read by `merge`): they grow with the pairs, up to `seed_set::MAX_RUNS` of them.
pub const MAX_WRITTEN_BYTES: u64 = 1 << 30;

/// The bytes of `path`, `what` naming its role in messages ("scenario", "SQL file").
pub fn read(path: &Path, what: &str) -> Result<Vec<u8>> {
    read_at_most(path, what, MAX_BYTES)
}

/// Refuses `path` unless it is a regular file: before a reader that opens it itself (a CSV
/// reader) is given it. Bad input naming the file.
pub fn ensure_regular(path: &Path, what: &str) -> Result<()> {
    // Looked at before it is opened: opening a FIFO for reading waits for a writer.
    let meta = std::fs::metadata(path).map_err(|e| Error::input(format!("{}: cannot read {what}: {e}", path.display())))?;
    if !meta.is_file() {
        return Err(Error::input(format!("{}: cannot read {what}: {}, not a regular file", path.display(), kind_of(&meta.file_type()))));
    }
    Ok(())
}

/// `read` with another bound: for the files a command wrote itself and another reads back
/// (a sweep's coverage.csv, pairs.jsonl), which grow with the pairs.
pub fn read_at_most(path: &Path, what: &str, max_bytes: u64) -> Result<Vec<u8>> {
    let refuse = |why: String| Error::input(format!("{}: cannot read {what}: {why}", path.display()));
    ensure_regular(path, what)?;
    let meta = std::fs::metadata(path).map_err(|e| refuse(e.to_string()))?;
    if meta.len() > max_bytes {
        return Err(refuse(too_big(meta.len(), max_bytes)));
    }
    let file = std::fs::File::open(path).map_err(|e| refuse(e.to_string()))?;
    // Checked again on the open file: the path may have been replaced in between.
    let opened = file.metadata().map_err(|e| refuse(e.to_string()))?;
    if !opened.is_file() {
        return Err(refuse(format!("{}, not a regular file", kind_of(&opened.file_type()))));
    }
    let mut bytes = Vec::with_capacity(opened.len().min(max_bytes) as usize);
    // One byte past the bound tells a file that grew after its size was read.
    file.take(max_bytes.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| refuse(e.to_string()))?;
    if bytes.len() as u64 > max_bytes {
        return Err(refuse(too_big(bytes.len() as u64, max_bytes)));
    }
    Ok(bytes)
}

/// `read`, as UTF-8 text: the position of the first byte that is not.
pub fn read_text(path: &Path, what: &str) -> Result<String> {
    read_text_at_most(path, what, MAX_BYTES)
}

/// `read_at_most`, as UTF-8 text.
pub fn read_text_at_most(path: &Path, what: &str, max_bytes: u64) -> Result<String> {
    String::from_utf8(read_at_most(path, what, max_bytes)?)
        .map_err(|e| Error::input(format!("{}: not UTF-8 text (byte {}): not a {what}", path.display(), e.utf8_error().valid_up_to())))
}

fn too_big(len: u64, max_bytes: u64) -> String {
    format!("{len} bytes or more; an input file is at most {max_bytes} bytes ({} MiB)", max_bytes >> 20)
}

pub(crate) fn kind_of(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_dir() {
        "a folder"
    } else if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(path: &Path) -> String {
        let e = read(path, "scenario").expect_err("refused");
        assert_eq!(e.exit_code(), 2, "{e}");
        e.to_string()
    }

    #[test]
    fn devices_folders_and_fifos_are_refused_without_being_opened() {
        assert!(refusal(Path::new("/dev/zero")).contains("/dev/zero: cannot read scenario: a character device, not a regular file"));
        assert!(refusal(Path::new("/tmp")).contains("a folder, not a regular file"));
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().map(|s| s.success()).unwrap_or(false);
        if made {
            // No writer ever opens it: a read would wait forever.
            assert!(refusal(&fifo).contains("a FIFO (named pipe), not a regular file"));
        }
    }

    #[test]
    fn a_file_past_the_bound_is_refused_and_one_at_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let (at, past) = (dir.path().join("at"), dir.path().join("past"));
        std::fs::write(&at, vec![b'#'; MAX_BYTES as usize]).unwrap();
        std::fs::write(&past, vec![b'#'; MAX_BYTES as usize + 1]).unwrap();
        assert_eq!(read(&at, "scenario").unwrap().len() as u64, MAX_BYTES);
        assert!(refusal(&past).contains("4194305 bytes or more; an input file is at most 4194304 bytes"));
        assert!(refusal(&dir.path().join("missing")).contains("No such file"));
    }
}
