//! The regression corpus (issue 44): minimized failing scenarios (`shrink --into DIR`), each
//! with the fingerprint of its failure in a `[corpus]` table — the first failing rule, the
//! statement, the role that ran it. `rehearsal corpus DIR` runs every entry on its own seed and
//! profile and re-checks the fingerprint: the same failure is a known flaw (kept); a different
//! one is a change to look at (exit 1); a pass means the flaw no longer shows, and an entry
//! that passed `remove_after` corpus runs in a row (counted in a streaks file the caller keeps)
//! is reported for removal. Seeds are version-local, scenarios with scripted faults are not:
//! the corpus keeps findings across behaviour changes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::base::error::{Error, Result};
use crate::campaign::shrink::signature::Signature;
use crate::input::scenario::{CorpusSection, Scenario};
use crate::plan::RunPlan;

/// What one entry did this time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// It failed with its recorded fingerprint.
    Reproduces,
    /// It passed; `in_a_row` corpus runs so far (this one included).
    Passes { in_a_row: u64 },
    /// It failed another way: `now` is how.
    Changed { now: String },
}

#[derive(Clone, Debug)]
pub struct EntryRun {
    /// The file name, `strict-random-faults-seed2-owner-writes-only.toml`.
    pub name: String,
    pub recorded: CorpusSection,
    pub status: Status,
}

impl EntryRun {
    /// Whether the entry has passed often enough to be removed.
    pub fn due_for_removal(&self, remove_after: u64) -> bool {
        matches!(self.status, Status::Passes { in_a_row } if in_a_row >= remove_after)
    }
}

/// The fingerprint a signature stands for, in the corpus's words.
pub fn fingerprint(signature: &Signature, found: String) -> CorpusSection {
    CorpusSection { rule: signature.rule.clone(), statement: signature.statement.clone(), actor: signature.actor.clone(), found }
}

/// `rule at statement by actor`, as the corpus prints a fingerprint.
pub fn describe(f: &CorpusSection) -> String {
    format!("`{}` at {} by {}", f.rule, f.statement, f.actor)
}

/// The entries of `dir` (its `.toml` files, sorted by name).
fn entries(dir: &Path) -> Result<Vec<PathBuf>> {
    let read = std::fs::read_dir(dir).map_err(|e| Error::input(format!("{}: not a corpus folder ({e})", dir.display())))?;
    let mut files: Vec<PathBuf> =
        read.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|e| e == "toml")).collect();
    files.sort();
    Ok(files)
}

/// The `[corpus]` table of an entry: bad input when it has none.
fn recorded(path: &Path) -> Result<CorpusSection> {
    #[derive(serde::Deserialize)]
    struct Only {
        corpus: Option<CorpusSection>,
    }
    let text = crate::base::input_file::read_text(path, "corpus entry")?;
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| Error::input(format!("{}: {}", path.display(), e.message())))?;
    let only: Only = toml::Value::Table(table.into_iter().filter(|(k, _)| k == "corpus").collect())
        .try_into()
        .map_err(|e: toml::de::Error| Error::input(format!("{}: [corpus]: {}", path.display(), e.message())))?;
    only.corpus.ok_or_else(|| {
        Error::input(format!(
            "{}: no [corpus] table (rule, statement, actor): not a corpus entry; write one with `rehearsal shrink FAILURE --into {}`",
            path.display(),
            path.parent().unwrap_or(Path::new(".")).display()
        ))
    })
}

/// Runs `path` on its own seed and profile, nothing kept: how it failed, `None` if it passed.
fn signature_of(path: &Path, scratch: &Path) -> Result<Option<Signature>> {
    let scenario = Scenario::load(path)?;
    let plan = RunPlan::resolve(&scenario, None, &[], Some(scratch.to_path_buf()))?;
    let how = crate::run::Execution { keep: crate::run::Keep::Hash, ..Default::default() };
    let summary = crate::run::execute(plan, how)?.summary;
    Ok(Signature::of(&summary))
}

/// Runs every entry of `dir`; `streaks` (entry name -> passes in a row before this run) is
/// updated in place.
pub fn run_corpus(dir: &Path, streaks: &mut BTreeMap<String, u64>) -> Result<Vec<EntryRun>> {
    let files = entries(dir)?;
    // Every entry is read before any runs: a bad one is exit 2 with nothing run.
    let recorded: Vec<CorpusSection> = files.iter().map(|f| recorded(f)).collect::<Result<_>>()?;
    let scratch = tempfile::tempdir().map_err(|e| Error::harness(e.to_string()))?;
    let mut out = Vec::new();
    for (path, recorded) in files.iter().zip(recorded) {
        let name = path.file_name().unwrap_or_default().to_string_lossy().to_string();
        let status = match signature_of(path, scratch.path())? {
            None => {
                let in_a_row = streaks.get(&name).copied().unwrap_or(0) + 1;
                Status::Passes { in_a_row }
            }
            Some(now) if fingerprint(&now, String::new()) == CorpusSection { found: String::new(), ..recorded.clone() } => {
                Status::Reproduces
            }
            Some(now) => Status::Changed { now: describe(&fingerprint(&now, String::new())) },
        };
        match status {
            Status::Passes { in_a_row } => streaks.insert(name.clone(), in_a_row),
            _ => streaks.remove(&name),
        };
        out.push(EntryRun { name, recorded, status });
    }
    // Entries no longer in the folder leave the record.
    let names: Vec<&String> = out.iter().map(|e| &e.name).collect();
    streaks.retain(|k, _| names.contains(&k));
    Ok(out)
}

const STREAKS_HEADER: &str = "# rehearsal corpus: passes in a row of each entry (entry<TAB>count); kept by `rehearsal corpus --streaks`\n";

/// A streaks file: none yet is an empty record.
pub fn read_streaks(path: &Path) -> Result<BTreeMap<String, u64>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(Error::input(format!("{}: {e}", path.display()))),
    };
    let mut out = BTreeMap::new();
    for (index, line) in text.lines().enumerate().filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty()) {
        let parsed = line.split_once('\t').and_then(|(name, n)| n.trim().parse::<u64>().ok().map(|n| (name.to_string(), n)));
        let (name, n) =
            parsed.ok_or_else(|| Error::input(format!("{}:{}:1: expected `entry<TAB>count`, got `{line}`", path.display(), index + 1)))?;
        out.insert(name, n);
    }
    Ok(out)
}

/// Writes the record whole (temp + rename), its folder made if missing (a fresh clone's
/// `reports/`).
pub fn write_streaks(path: &Path, streaks: &BTreeMap<String, u64>) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        crate::base::live_files::create_dir_all(parent)?;
    }
    let mut text = STREAKS_HEADER.to_string();
    for (name, n) in streaks {
        text.push_str(&format!("{name}\t{n}\n"));
    }
    crate::base::atomic::write_atomically(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streaks_round_trip_and_a_bad_line_names_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/streaks.txt");
        assert!(read_streaks(&path).unwrap().is_empty(), "no file yet: no record");
        let streaks = BTreeMap::from([("a.toml".to_string(), 2), ("b.toml".to_string(), 1)]);
        write_streaks(&path, &streaks).unwrap();
        assert_eq!(read_streaks(&path).unwrap(), streaks);
        std::fs::write(&path, "a.toml\tmany\n").unwrap();
        let error = read_streaks(&path).unwrap_err().to_string();
        assert!(error.contains("streaks.txt:1:1: expected `entry<TAB>count`"), "{error}");
    }

    #[test]
    fn only_enough_passes_in_a_row_make_an_entry_due() {
        let recorded = CorpusSection { rule: "r".into(), statement: "heartbeat".into(), actor: "S1".into(), found: String::new() };
        let run = |status| EntryRun { name: "e.toml".into(), recorded: recorded.clone(), status };
        assert!(run(Status::Passes { in_a_row: 3 }).due_for_removal(3));
        assert!(!run(Status::Passes { in_a_row: 2 }).due_for_removal(3), "near miss");
        assert!(!run(Status::Reproduces).due_for_removal(0));
        assert_eq!(describe(&recorded), "`r` at heartbeat by S1");
    }
}
