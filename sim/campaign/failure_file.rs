//! A sweep's saved failure (`failures/<scenario>-<variants>-<seed>.toml`): everything
//! `rehearsal replay` and `rehearsal shrink` need, made to travel. The scenario and `--sql`
//! file are named by the path the sweep was given (relative to the folder it ran in, the
//! suite's root, when they were inside it) with the SHA-256 of their text, so a failures
//! folder downloaded from CI replays in a checkout anywhere: the file is looked for from the
//! current folder, from each folder above the replay file, and (the scenario) by name and hash
//! in their `scenarios/` trees; one whose text changed since is refused naming both hashes.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::base::error::{Error, Result};
use crate::input::scenario::{identity, Scenario};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Failure {
    /// The scenario as the sweep was given it, relative to the folder it ran in when it was
    /// inside it (an older file may hold an absolute path).
    pub scenario: String,
    /// The SHA-256 of the scenario's text (`identity::content_sha256`); empty in older files,
    /// which are then not checked.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub scenario_sha256: String,
    /// Older files only: the path the sweep was given, when `scenario` was absolute.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub named: String,
    /// `--sql FILE` of the sweep, named as `scenario` is, if it had one.
    #[serde(default)]
    pub sql: Option<String>,
    /// The SHA-256 of the `--sql` file's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sql_sha256: Option<String>,
    pub seed: u64,
    /// `--protocol NAME` of the sweep, if it had one: the profile in place of the scenario's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    #[serde(default)]
    pub variants: Vec<String>,
    pub rule: String,
    pub trace_hash: String,
    #[serde(default)]
    pub explanation: String,
}

/// A TOML text with a scenario's `[run]` or `[tasks]` table and no failure's `rule`.
fn looks_like_scenario(text: &str) -> bool {
    let Ok(table) = text.parse::<toml::Table>() else { return false };
    (table.contains_key("run") || table.contains_key("tasks")) && !table.contains_key("rule")
}

/// Where a failure's files are on this machine.
#[derive(Clone, Debug)]
pub struct Located {
    pub scenario: PathBuf,
    pub sql: Option<PathBuf>,
}

impl Failure {
    pub fn load(path: &Path) -> Result<Failure> {
        let text = crate::base::input_file::read_text(path, "failure file")?;
        toml::from_str(&text).map_err(|e| match looks_like_scenario(&text) {
            // explore, schedules and search save each failure as a scenario of its own.
            true => Error::input(format!(
                "{}: a scenario, not a sweep's failure file: run it with `rehearsal run {}`",
                path.display(),
                path.display()
            )),
            false => Error::input(format!("{}: not a failure file: {}", path.display(), e.message())),
        })
    }

    /// The failure of a pair run with `scenario` (and `sql`) as the sweep was given them, from
    /// the current folder: paths inside it are written relative to it.
    pub fn describe(scenario: &Path, sql: Option<&Path>) -> Result<(String, String, Option<String>, Option<String>)> {
        let scenario_sha256 = file_sha256(scenario)?;
        let sql_sha256 = sql.map(file_sha256).transpose()?;
        Ok((suite_relative(scenario), scenario_sha256, sql.map(suite_relative), sql_sha256))
    }

    /// Finds the scenario and SQL file of the failure saved at `file` (see the module).
    pub fn locate(&self, file: &Path) -> Result<Located> {
        let scenario = locate_one(file, "scenario", &self.scenario, &self.scenario_sha256, true)?;
        let sql = match (&self.sql, &self.sql_sha256) {
            (Some(sql), hash) => Some(locate_one(file, "--sql file", sql, hash.as_deref().unwrap_or(""), false)?),
            (None, _) => None,
        };
        Ok(Located { scenario, sql })
    }

    /// The scenario of the failure saved at `file`, with its `--sql` and `--protocol`, ready to run.
    pub fn load_scenario(&self, file: &Path) -> Result<Scenario> {
        let located = self.locate(file)?;
        Scenario::load(&located.scenario)?.with_sql(located.sql.as_deref()).with_profile(self.protocol.as_deref())
    }
}

/// The SHA-256 of a file's text as `identity` reads a scenario.
fn file_sha256(path: &Path) -> Result<String> {
    let text = crate::base::input_file::read_text(path, "file")?;
    Ok(identity::content_sha256(&text))
}

/// `path` relative to the current folder when it is inside it (the suite's root: where the
/// sweep ran), else as given.
fn suite_relative(path: &Path) -> String {
    let inside = std::env::current_dir().ok().and_then(|cwd| {
        let cwd = std::fs::canonicalize(cwd).ok()?;
        let real = std::fs::canonicalize(path).ok()?;
        real.strip_prefix(&cwd).ok().map(Path::to_path_buf)
    });
    inside.unwrap_or_else(|| path.to_path_buf()).display().to_string()
}

/// The file `named` (`what` of the failure saved at `file`) whose text hashes to `sha256`
/// (any text when empty): `named` as it is, from the current folder, then from each folder
/// above `file`; for a scenario also by file name and hash (`scenario_lookup`).
fn locate_one(file: &Path, what: &str, named: &str, sha256: &str, by_name: bool) -> Result<PathBuf> {
    let named_path = Path::new(named);
    let mut candidates = vec![named_path.to_path_buf()];
    if named_path.is_relative() {
        if let Ok(real) = std::fs::canonicalize(file) {
            candidates.extend(real.ancestors().skip(1).map(|folder| folder.join(named_path)));
        }
    }
    let mut changed: Option<(PathBuf, String)> = None;
    for candidate in candidates {
        let Ok(found) = file_sha256(&candidate) else { continue };
        if sha256.is_empty() || found == sha256 {
            return Ok(candidate);
        }
        changed.get_or_insert((candidate, found));
    }
    if by_name {
        let found = crate::input::scenario_lookup::find(&identity::file_name(named_path), file.parent().unwrap_or(Path::new(".")));
        if let Some(found) = found.ok().filter(|found| file_sha256(found).is_ok_and(|hash| hash == sha256)) {
            return Ok(found);
        }
    }
    Err(match changed {
        Some((path, found)) => Error::input(format!(
            "{}: the {what} changed since the failure was saved: {} has sha256 {}, the failure was saved with sha256 {}; replay it with the {what} it was saved with",
            file.display(),
            path.display(),
            identity::short(&found),
            identity::short(sha256)
        )),
        None => Error::input(format!(
            "{}: cannot find the {what} {named} (sha256 {}) from the current folder or the folders above the failure file; run the replay from the checkout the sweep ran in",
            file.display(),
            identity::short(sha256)
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(scenario: &str, sha256: &str) -> Failure {
        Failure {
            scenario: scenario.to_string(),
            scenario_sha256: sha256.to_string(),
            named: String::new(),
            sql: None,
            sql_sha256: None,
            seed: 1,
            protocol: None,
            variants: Vec::new(),
            rule: "liveness".into(),
            trace_hash: "00".into(),
            explanation: String::new(),
        }
    }

    #[test]
    fn a_scenario_is_found_from_the_folders_above_the_failure_and_an_older_absolute_one_unchecked() {
        let dir = tempfile::tempdir().unwrap();
        let suite = dir.path().join("suite");
        std::fs::create_dir_all(suite.join("scenarios/x")).unwrap();
        std::fs::create_dir_all(suite.join("out/failures")).unwrap();
        std::fs::write(suite.join("scenarios/x/s.toml"), "text\n").unwrap();
        let file = suite.join("out/failures/s-default-1.toml");
        let located = failure("scenarios/x/s.toml", &identity::content_sha256("text\n")).locate(&file).unwrap();
        assert_eq!(std::fs::canonicalize(located.scenario).unwrap(), std::fs::canonicalize(suite.join("scenarios/x/s.toml")).unwrap());
        // A file saved before the hash was: its absolute path, not checked.
        let absolute = suite.join("scenarios/x/s.toml").display().to_string();
        assert_eq!(failure(&absolute, "").locate(&file).unwrap().scenario, PathBuf::from(&absolute));
        let missing = failure("scenarios/x/gone.toml", &identity::content_sha256("text\n")).locate(&file).unwrap_err();
        assert_eq!(missing.exit_code(), 2);
        assert!(missing.to_string().contains("cannot find the scenario scenarios/x/gone.toml"), "{missing}");
    }
}
