//! The journal of a running sweep: one JSON line per finished pair (any serde row type; the
//! sweep's is `sweep::ResultRow`), appended before the
//! pair is counted or reported. results.csv is rewritten whole only every few pairs (each
//! rewrite is the whole file, synced), so without the journal a sweep killed between two of
//! them lost up to 24 finished pairs (issue 30). `sweep::read_results` (what `merge` and the
//! tests read) folds the journal's rows into results.csv's; a sweep that ends (Ctrl-C
//! included) writes results.csv whole and removes the journal.
//!
//! A line is appended with one `write` on a file opened for appending, so a kill leaves
//! whole lines and at most a last line cut short, which the reader skips: that pair had not
//! been reported. Lines are not synced one by one: a killed process loses none (they are in
//! the kernel's page cache), a power cut may lose the last ones.

use std::fs::File;
use std::io::Write;
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::base::error::{Error, Result};

/// The journal file a sweep appends to.
#[derive(Debug)]
pub struct Journal {
    file: File,
    path: std::path::PathBuf,
}

impl Journal {
    /// A new, empty journal at `path` (an older one is replaced).
    pub fn create(path: &Path) -> Result<Journal> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(path)
            .map_err(|e| Error::harness(format!("cannot create {}: {e}", path.display())))?;
        // Opened again for appending: every write lands at the end, whole.
        let append = std::fs::OpenOptions::new().append(true).open(path);
        drop(file);
        let file = append.map_err(|e| Error::harness(format!("cannot open {}: {e}", path.display())))?;
        Ok(Journal { file, path: path.to_path_buf() })
    }

    /// Appends `row` as one line, in one write.
    pub fn append<T: Serialize>(&self, row: &T) -> Result<()> {
        let mut line = serde_json::to_vec(row).map_err(|e| Error::harness(format!("{}: {e}", self.path.display())))?;
        line.push(b'\n');
        (&self.file).write_all(&line).map_err(|e| Error::harness(format!("cannot append to {}: {e}", self.path.display())))
    }
}

/// The rows of a journal, in the order they were appended; none when there is no journal.
/// A last line without its newline (cut short by a kill) is skipped; any other line that is
/// not a row is an error naming the file and line.
pub fn read<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::harness(format!("cannot read {}: {e}", path.display()))),
    };
    let whole = match bytes.iter().rposition(|b| *b == b'\n') {
        Some(last) => &bytes[..=last],
        None => &bytes[..0],
    };
    let mut rows = Vec::new();
    for (index, line) in whole.split(|b| *b == b'\n').enumerate().filter(|(_, l)| !l.is_empty()) {
        let row =
            serde_json::from_slice(line).map_err(|e| Error::input(format!("{}:{}: not a result row: {e}", path.display(), index + 1)))?;
        rows.push(row);
    }
    Ok(rows)
}

/// Removes the journal, if there is one.
pub fn remove(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::harness(format!("cannot remove {}: {e}", path.display()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Row {
        seed: u64,
        text: String,
    }

    fn row(seed: u64) -> Row {
        Row { seed, text: "a line\nwith a newline, \"quotes\" and, commas".into() }
    }

    #[test]
    fn rows_come_back_as_appended_and_a_line_cut_short_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.journal.jsonl");
        assert!(read::<Row>(&path).unwrap().is_empty(), "no journal, no rows");
        let journal = Journal::create(&path).unwrap();
        for seed in [3, 1, 2] {
            journal.append(&row(seed)).unwrap();
        }
        assert_eq!(read::<Row>(&path).unwrap(), [row(3), row(1), row(2)]);
        // A kill in the middle of a line: the part written is not a row.
        let whole = std::fs::read(&path).unwrap();
        let line = serde_json::to_vec(&row(4)).unwrap();
        std::fs::write(&path, [&whole[..], &line[..line.len() / 2]].concat()).unwrap();
        assert_eq!(read::<Row>(&path).unwrap(), [row(3), row(1), row(2)]);
        std::fs::write(&path, [&whole[..], b"not json\n"].concat()).unwrap();
        assert!(read::<Row>(&path).unwrap_err().to_string().contains("results.journal.jsonl:4: not a result row"));
        remove(&path).unwrap();
        remove(&path).unwrap();
        assert!(!path.exists());
    }
}
