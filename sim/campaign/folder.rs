//! A campaign's output folder and scratch folder. The output folder is claimed (its lock
//! held while the campaign runs, refused when it holds results unless `--force`, which
//! clears what the command owns: sim/base/out_folder.rs); what every campaign writes there is
//! owned without the command listing it: the `INCOMPLETE` marker, its journal, its scratch
//! folder (made there when there is no tmpfs) and its sub-folders (`failures/`, …). The
//! runs are made in the scratch folder and removed (sim/base/scratch.rs).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::ledger::Ledger;
use super::marker::{self, INCOMPLETE_MARKER};
use crate::base::error::{Error, Result};
use crate::base::out_folder::Owned;
use crate::base::out_lock::OutLock;
use crate::base::scratch::Scratch;
use crate::campaign::progress::Progress;

/// What a command asks of its folders.
pub struct FolderSpec<'a> {
    /// Its scratch folder is `<name>-pid…` (owned as `<name>-*`).
    pub name: &'static str,
    pub out: &'a Path,
    /// What the command writes there besides what every campaign does.
    pub owned: Owned,
    /// Sub-folders made (empty) in `out`: `failures`, `corpus`.
    pub folders: &'static [&'static str],
    /// The journal of its finished runs, beside its CSV (sim/base/results_journal.rs).
    pub journal: Option<&'static str>,
    pub force: bool,
    /// `--scratch DIR`, checked before the output folder is touched.
    pub scratch: Option<&'a Path>,
}

impl FolderSpec<'_> {
    /// Everything the command owns in its folder: its own entries and every campaign's (the
    /// marker, the journal, the scratch folder's prefix, the sub-folders).
    pub fn owned(&self) -> Vec<String> {
        let mut owned: Vec<String> = self.owned.iter().map(|s| s.to_string()).collect();
        owned.push(INCOMPLETE_MARKER.to_string());
        owned.push(format!("{}-*", self.name));
        owned.extend(self.journal.iter().map(|s| s.to_string()));
        owned.extend(self.folders.iter().map(|s| s.to_string()));
        owned
    }
}

/// A claimed output folder, its lock and its scratch folder (removed when dropped).
pub struct Campaign {
    out: PathBuf,
    journal: Option<PathBuf>,
    scratch: Scratch,
    _lock: OutLock,
}

impl Campaign {
    /// Claims the folder and makes the scratch folder.
    pub fn open(spec: &FolderSpec) -> Result<Campaign> {
        Self::open_with(spec, |_| {})
    }

    /// As `open`, with `before_clear` called once the folder is found free (or `--force`
    /// given) and before what the command owns is cleared: sweep replays the saved failures
    /// of the sweep it replaces there.
    pub fn open_with(spec: &FolderSpec, before_clear: impl FnOnce(&Path)) -> Result<Campaign> {
        crate::base::scratch::check_chosen(spec.scratch)?;
        // The lock first: a folder in use is refused as such, naming its holder.
        let lock = OutLock::acquire(spec.out)?;
        // A file no rehearsal command wrote stops it, `--force` or not (issue 41).
        crate::base::out_owner::refuse_foreign(spec.out)?;
        crate::base::out_folder::refuse_unless_forced(spec.out, spec.force)?;
        crate::base::out_probe::ensure_writable(spec.out)?;
        before_clear(spec.out);
        crate::base::out_owner::clear_and_record(spec.out, &spec.owned(), true)?;
        for sub in spec.folders {
            let dir = spec.out.join(sub);
            crate::base::live_files::create_dir_all(&dir).map_err(|e| Error::input(format!("cannot create {}: {e}", dir.display())))?;
        }
        let scratch = crate::base::scratch::scratch_folder(&format!("{}-", spec.name), spec.scratch, spec.out)?;
        Ok(Campaign { out: spec.out.to_path_buf(), journal: spec.journal.map(|name| spec.out.join(name)), scratch, _lock: lock })
    }

    pub fn out(&self) -> &Path {
        &self.out
    }

    /// Where the runs are made.
    pub fn scratch(&self) -> &Path {
        self.scratch.path()
    }

    pub fn journal(&self) -> Option<&Path> {
        self.journal.as_deref()
    }

    /// Marks the folder incomplete, saying why (`0 of 40 runs finished: …`).
    pub fn mark(&self, why: &str) -> Result<()> {
        marker::mark(&self.out, why)
    }

    /// The ledger of `planned` runs (sim/campaign/ledger.rs), journaled in the campaign's
    /// journal, with the folder marked (`running` says why) from now until `finish`: a
    /// campaign killed at any moment, even before its first run, is never taken for a
    /// whole one.
    pub fn ledger<'a, Row: Clone + Serialize>(
        &'a self,
        planned: usize,
        running: &str,
        progress: Progress,
        checkpoint: impl Fn(&[Row]) -> Result<()> + Sync + 'a,
    ) -> Result<Ledger<'a, Row>> {
        self.mark(running)?;
        Ledger::new(self.journal(), planned, progress, checkpoint)
    }

    /// The campaign's files written by `write`, marked while runs are missing (`missing`
    /// says why); the journal goes once they hold every finished run.
    pub fn finish(&self, missing: Option<&str>, write: impl FnOnce() -> Result<()>) -> Result<()> {
        marker::settle(&self.out, missing, || {
            write()?;
            match &self.journal {
                Some(journal) => crate::base::results_journal::remove(journal),
                None => Ok(()),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(out: &Path, force: bool) -> FolderSpec<'_> {
        FolderSpec {
            name: "demo",
            out,
            owned: &["demo.csv"],
            folders: &["failures"],
            journal: Some("demo.journal.jsonl"),
            force,
            scratch: None,
        }
    }

    #[test]
    fn force_clears_what_every_campaign_writes_and_what_the_command_names_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir_all(out.join("failures/F1-liveness")).unwrap();
        std::fs::create_dir_all(out.join("demo-pid1-AbCdEf")).unwrap();
        for file in ["demo.csv", "INCOMPLETE", "demo.journal.jsonl", "failures/F1-liveness.toml", "notes.txt"] {
            std::fs::write(out.join(file), "x").unwrap();
        }
        // An earlier campaign's record (sim/base/out_owner.rs): its names, not notes.txt.
        crate::base::out_owner::record(&out, &spec(&out, true).owned()).unwrap();
        let refused = Campaign::open(&spec(&out, true)).err().expect("a file no rehearsal command wrote, --force or not");
        assert!(refused.to_string().contains("notes.txt: not rehearsal's to replace"), "{refused}");
        std::fs::remove_file(out.join("notes.txt")).unwrap();
        let refused = Campaign::open(&spec(&out, false)).err().expect("a folder with results is refused");
        assert!(refused.to_string().contains("already holds results"), "{refused}");
        assert!(out.join("demo.csv").exists(), "refused before anything is cleared");
        let campaign = Campaign::open(&spec(&out, true)).unwrap();
        let mut left: Vec<String> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        left.retain(|n| !n.starts_with(".rehearsal-") && !n.starts_with("demo-pid"));
        left.sort();
        assert_eq!(left, ["failures"]);
        assert_eq!(std::fs::read_dir(out.join("failures")).unwrap().count(), 0, "failures/ is made empty");
        assert!(campaign.scratch().is_dir());
        let again = Campaign::open(&spec(&out, true)).err().expect("locked while the campaign runs");
        assert!(again.to_string().contains("in use"), "{again}");
    }

    #[test]
    fn a_missing_scratch_folder_is_refused_before_the_output_folder_is_touched() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("demo.csv"), "x").unwrap();
        let missing = dir.path().join("no-such");
        let refused = Campaign::open(&FolderSpec { scratch: Some(&missing), ..spec(&out, true) }).err().expect("refused");
        assert_eq!(refused.exit_code(), 2, "{refused}");
        assert!(out.join("demo.csv").exists());
    }

    #[test]
    fn finish_removes_the_journal_and_the_marker_only_when_nothing_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let campaign = Campaign::open(&spec(&out, false)).unwrap();
        let journal = campaign.journal().unwrap().to_path_buf();
        std::fs::write(&journal, "{}\n").unwrap();
        campaign.mark("0 of 2 runs finished: running").unwrap();
        campaign.finish(Some("1 of 2 runs finished: interrupted (Ctrl-C)"), || Ok(())).unwrap();
        assert!(!journal.exists(), "the files hold every finished run");
        assert!(std::fs::read_to_string(out.join(INCOMPLETE_MARKER)).unwrap().starts_with("1 of 2"));
        campaign.finish(None, || Ok(())).unwrap();
        assert!(!out.join(INCOMPLETE_MARKER).exists());
    }
}
