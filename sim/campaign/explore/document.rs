//! The scenario documents explore runs and writes: the file's TOML with its own scripted
//! crashes and hangs set aside, the same with one fault at a point, and a distinct failure's
//! replay file. Every run parses the very text a replay file holds (with the original path,
//! so its trace names the scenario as the base run's does), so what ran is what is written.

use std::path::Path;

use toml::{Table, Value};

use crate::base::error::{Error, Result};
use crate::input::scenario::Scenario;
use crate::vocab::{FaultName, PointFault};

/// The scenario's document, with its scripted point faults (`[[faults.crash]]`,
/// `[[faults.hang]]`, `[[faults.io_error]]`, `[[faults.conductor_crash]]`) set aside unless `keep`: explore places one fault of its own
/// at every point, and a scripted one would stop the session (or freeze it) before the points
/// after it. Returns the document and how many it set aside.
pub fn base(text: &str, path: &Path, keep: bool) -> Result<(Table, usize)> {
    let mut doc: Table = text.parse().map_err(|e: toml::de::Error| Error::input(format!("{}: {}", path.display(), e.message())))?;
    if keep {
        return Ok((doc, 0));
    }
    let Some(Value::Table(faults)) = doc.get_mut("faults") else { return Ok((doc, 0)) };
    // Every point-fault kind's arrays (`FaultName::point_sections`), at `at` or at `at_ms`.
    let set_aside = FaultName::point_sections().filter_map(|key| faults.remove(key)).filter_map(|v| v.as_array().map(Vec::len)).sum();
    Ok((doc, set_aside))
}

/// The base document with `fault` added (`crate::input::scenario::add_point_fault`): a
/// `[[faults.crash]]` or `[[faults.hang]]` of a task's session, a `[[faults.conductor_crash]]`
/// of a conductor session (which has the run's launcher start the conductor, C34).
pub fn with_fault(base: &Table, fault: &PointFault) -> Table {
    let mut doc = base.clone();
    crate::input::scenario::add_point_fault(&mut doc, fault);
    doc
}

/// `--protocol NAME` written into the document as `[protocol] profile`, so its runs have the
/// profile and every replay file written from it names it (an unknown name is bad input).
pub fn set_profile(doc: &mut Table, profile: Option<&str>) -> Result<()> {
    let Some(name) = profile else { return Ok(()) };
    crate::vocab::check_profile_name(name).map_err(|m| Error::input(format!("--protocol: {m}")))?;
    let protocol = doc.entry("protocol").or_insert_with(|| Value::Table(Table::new()));
    if let Value::Table(protocol) = protocol {
        protocol.insert("profile".into(), Value::String(name.to_string()));
    }
    Ok(())
}

/// Parses a document as the scenario at `path` (its name, its folder for a relative SQL file).
pub fn scenario(doc: &Table, path: &Path) -> Result<Scenario> {
    scenario_of_file(doc, path, file_sha256(path))
}

/// The hash of the text of the scenario file at `path` (`None` if it cannot be read), which
/// every run made from it names (`scenario_of_file`).
pub fn file_sha256(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|text| crate::input::scenario::identity::content_sha256(&text))
}

/// `scenario`, the file's hash given (`file_sha256`): read once for a campaign's many runs.
pub fn scenario_of_file(doc: &Table, path: &Path, file_sha256: Option<String>) -> Result<Scenario> {
    let text = toml::to_string(doc).map_err(|e| Error::harness(format!("scenario document: {e}")))?;
    let mut scenario = Scenario::parse(&text, path)?;
    // Its trace names the file it was made from by that file's text, as by its name (C120):
    // a point whose fault never fires is its base run, and the file's own run, byte for byte.
    scenario.text_sha256 = file_sha256;
    Ok(scenario)
}

/// A replay file to be written in `dest_dir`: `doc` seeded, with the command line's variants
/// added to its own and its SQL file copied beside it and named by its file name, so the
/// folder replays after it is copied elsewhere (another machine, a CI artifact). Under
/// `header` (comment lines).
pub fn replay_file(doc: &Table, header: &str, seed: u64, variants: &[String], scenario_path: &Path, dest_dir: &Path) -> Result<String> {
    let mut doc = doc.clone();
    let run = doc.entry("run").or_insert_with(|| Value::Table(Table::new()));
    if let Value::Table(run) = run {
        run.insert("seed".into(), Value::Integer(seed as i64));
    }
    let protocol = doc.entry("protocol").or_insert_with(|| Value::Table(Table::new()));
    if let Value::Table(protocol) = protocol {
        if !variants.is_empty() {
            let listed = protocol.entry("variants").or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(listed) = listed {
                listed.extend(variants.iter().map(|v| Value::String(v.clone())));
            }
        }
        if let Some(Value::String(sql)) = protocol.get_mut("sql") {
            let original = scenario_path.parent().unwrap_or(Path::new(".")).join(&*sql);
            *sql = copy_beside(&original, dest_dir)?;
        }
        if protocol.is_empty() {
            doc.remove("protocol");
        }
    }
    let body = toml::to_string(&doc).map_err(|e| Error::harness(e.to_string()))?;
    Ok(format!("{header}{body}"))
}

/// Copies the SQL file `original` into `dest_dir` (once: the replay files of one command share
/// it) and returns the name a replay file there gives it.
fn copy_beside(original: &Path, dest_dir: &Path) -> Result<String> {
    let name = crate::input::scenario::identity::file_name(original);
    let text = std::fs::read(original).map_err(|e| Error::input(format!("{}: cannot read SQL file: {e}", original.display())))?;
    let copy = dest_dir.join(&name);
    if std::fs::read(&copy).ok().as_deref() != Some(&text[..]) {
        crate::base::live_files::create_dir_all(dest_dir)?;
        crate::base::atomic::write_atomically(&copy, &text)?;
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_file_names_its_sql_file_by_a_copy_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("suite")).unwrap();
        std::fs::write(dir.path().join("suite/own.sql"), "-- name: heartbeat\nSELECT 1;\n").unwrap();
        let doc: Table = "[tasks]\ncount = 1\n[protocol]\nsql = \"own.sql\"\n".parse().unwrap();
        let failures = dir.path().join("out/failures");
        let text = replay_file(&doc, "# h\n", 3, &[], &dir.path().join("suite/s.toml"), &failures).unwrap();
        assert!(text.contains("sql = \"own.sql\""), "named beside the replay file, not by an absolute path: {text}");
        assert_eq!(std::fs::read_to_string(failures.join("own.sql")).unwrap(), "-- name: heartbeat\nSELECT 1;\n");
    }
}
