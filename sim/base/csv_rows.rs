//! CSV files of typed rows (results.csv, explore.csv): one header, one row per value, written
//! whole or not at all (sim/base/atomic.rs) and read back with the file named in errors.

use std::path::Path;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::base::atomic::write_atomically;
use crate::base::error::{Error, Result};

pub fn write_rows<T: Serialize>(path: &Path, rows: &[T]) -> Result<()> {
    let name = path.file_name().map_or(String::new(), |n| n.to_string_lossy().into_owned());
    let mut writer = csv::Writer::from_writer(Vec::new());
    for row in rows {
        writer.serialize(row).map_err(|e| Error::harness(format!("{name}: {e}")))?;
    }
    let bytes = writer.into_inner().map_err(|e| Error::harness(format!("{name}: {e}")))?;
    write_atomically(path, &bytes)
}

pub fn read_rows<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    crate::base::input_file::ensure_regular(path, "CSV file")?;
    let mut reader = csv::Reader::from_path(path).map_err(|e| Error::input(format!("{}: {e}", path.display())))?;
    reader.deserialize().map(|r| r.map_err(|e| located(path, &e))).collect()
}

/// `results.csv:2: unknown run outcome `passed` (…)`: the file and line of a row that is not
/// one, and what is wrong with it, without csv's record and byte counts.
fn located(path: &Path, e: &csv::Error) -> Error {
    match (e.kind(), e.position()) {
        (csv::ErrorKind::Deserialize { err, .. }, Some(at)) => Error::input(format!("{}:{}: {err}", path.display(), at.line())),
        _ => Error::input(format!("{}: {e}", path.display())),
    }
}
