//! A sweep's saved failures: each failing pair's run folder and replay file under
//! `failures/`, each appearing whole or not at all; and, before a sweep replaces a folder,
//! the replay of the failures saved there, so a regression shows before any new seed.

use std::path::{Path, PathBuf};

use super::options::SweepOptions;
use super::results::{variant_label, ResultRow};
use crate::base::atomic::write_atomically;
use crate::base::error::{Error, Result};
use crate::campaign::failure_file::Failure;
use crate::run::{run_scenario, RunOptions};

/// Saved failures of an earlier sweep into the same folder run first, so a regression shows
/// before any new seed: each is reported as still failing, now passing, or diverged.
pub(super) fn replay_saved_failures(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut saved: Vec<PathBuf> =
        entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "toml")).collect();
    saved.sort();
    for path in saved {
        let Ok(failure) = Failure::load(&path) else { continue };
        let scenario = match failure.load_scenario(&path) {
            Ok(scenario) => scenario,
            Err(e) => {
                eprintln!("rehearsal: saved failure {}: cannot run: {e}", path.display());
                continue;
            }
        };
        let Ok(scratch) = tempfile::tempdir() else { return };
        let options = RunOptions {
            scenario_path: scenario.path.clone(),
            seed: Some(failure.seed),
            out_dir: Some(scratch.path().to_path_buf()),
            variants: failure.variants.clone(),
        };
        let status = match run_scenario(scenario, &options) {
            Ok(s) if s.trace_hash == failure.trace_hash => "still fails the same way".to_string(),
            Ok(s) if s.verdict.passed() => "now passes".to_string(),
            Ok(s) => format!("diverged: now {}", s.verdict.headline()),
            Err(e) => format!("cannot run: {e}"),
        };
        eprintln!("rehearsal: saved failure {}: {status}", path.display());
    }
}

/// Where a failing pair's run folder is kept: `failures/<scenario>-<variant>-<seed>`.
pub(super) fn failure_folder(out: &Path, stem: &str, protocol: Option<&str>, variants: &[String], seed: u64) -> PathBuf {
    out.join("failures").join(format!("{stem}-{}-{seed}", variant_label(protocol, variants)))
}

/// `failures/<scenario>-<seed>/` (the run folder, to look at) and then
/// `failures/<scenario>-<seed>.toml` (the replay file): each appears whole or not at all. The
/// folder is copied under a hidden name (the scratch folder is on another file system) and
/// renamed into place; the replay file, written last, says its folder is there.
pub(super) fn save_failure(
    out: &Path,
    stem: &str,
    row: &ResultRow,
    run_dir: &Path,
    options: &SweepOptions,
    explanation: &str,
) -> Result<()> {
    let (variants, sql) = (&options.variants, options.sql.as_deref());
    let keep = failure_folder(out, stem, options.protocol.as_deref(), variants, row.seed);
    // Relative to the suite's root, with the content hashes: the file replays in any checkout.
    let (scenario, scenario_sha256, sql, sql_sha256) = Failure::describe(Path::new(&row.scenario), sql)?;
    let failure = Failure {
        scenario,
        scenario_sha256,
        named: String::new(),
        sql,
        sql_sha256,
        seed: row.seed,
        protocol: options.protocol.clone(),
        variants: variants.to_vec(),
        rule: row.first_violation.clone(),
        trace_hash: row.trace_hash.clone(),
        explanation: explanation.to_string(),
    };
    let text = format!(
        "# A failing run saved by `rehearsal sweep`; replay it with `rehearsal replay` on this file.\n{}",
        toml::to_string(&failure).map_err(|e| Error::harness(e.to_string()))?
    );
    if run_dir.exists() {
        move_whole(run_dir, &keep)?;
    }
    write_atomically(&keep.with_extension("toml"), text.as_bytes())
}

/// Moves the folder `from` to `to` (replacing it) so that `to` is never seen half made: a
/// rename where one works, else a copy under `.NAME.partial-PID` renamed into place. A
/// partial copy a killed sweep left is cleared with `failures/` by the next sweep's `--force`.
fn move_whole(from: &Path, to: &Path) -> Result<()> {
    let _ = std::fs::remove_dir_all(to);
    if crate::base::live_files::rename(from, to).is_ok() {
        return Ok(());
    }
    let name = to.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let partial = to.with_file_name(format!(".{name}.partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&partial);
    // Removed by an error or a Ctrl-C that ends the command before the rename (issue 41).
    let _live = crate::base::live_files::track([partial.clone()]);
    copy_dir(from, &partial).inspect_err(|_| drop(std::fs::remove_dir_all(&partial)))?;
    crate::base::live_files::rename(&partial, to)
        .map_err(|e| Error::harness(format!("cannot rename {} to {}: {e}", partial.display(), to.display())))
}

pub(crate) fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    crate::base::live_files::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}
