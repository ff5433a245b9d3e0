//! The baseline keys of merged pairs (issue 44): a pair's scenario as the baseline file names
//! it, relative to that file's folder, found from any current folder. The shards' manifest
//! names each scenario as their command lines gave it, with the SHA-256 of its contents; a
//! merge run elsewhere (another folder, another checkout, the artifacts of CI) finds the file
//! with those contents from the current folder or among the baseline's own lines, so the
//! same results give the same keys and no false regression.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::base::error::{Error, Result};
use crate::campaign::baseline::{self, Baseline, Key, Outcome};
use crate::campaign::manifest::Suite;

/// The keys of `rows` (a merged sweep's, of `suite`) against the baseline `file`.
pub fn keys(rows: &[Outcome], suite: &Suite, file: &Path) -> Result<Vec<Key>> {
    let folder = baseline::baseline_folder(file);
    // The baseline's own paths: a file it does not exist yet (`--bless`) has none.
    let listed: BTreeSet<String> = if file.exists() {
        let loaded = Baseline::load(file)?;
        loaded.entries.keys().map(|k| k.0.clone()).chain(loaded.modes.keys().map(|k| k.0.clone())).collect()
    } else {
        BTreeSet::new()
    };
    let mut paths: BTreeMap<&str, String> = BTreeMap::new();
    for scenario in &suite.scenarios {
        paths.insert(&scenario.path, path_of(&scenario.path, &scenario.sha256, &folder, &listed, file)?);
    }
    rows.iter()
        .map(|row| {
            let path = paths
                .get(row.scenario)
                .cloned()
                .ok_or_else(|| Error::input(format!("{}: not a scenario of the shards' manifest", row.scenario)))?;
            Ok((path, row.variant.to_string(), row.seed))
        })
        .collect()
}

/// The scenario `given` (as the shards' command line named it) relative to `folder`: the
/// file at `given` from here if its contents are the shards', else the baseline's line whose
/// file has them, else (contents changed since) the file at `given` from here as it is.
fn path_of(given: &str, sha256: &str, folder: &Path, listed: &BTreeSet<String>, file: &Path) -> Result<String> {
    let here = Path::new(given);
    if hash_of(here).as_deref() == Some(sha256) {
        return Ok(baseline::key_of(&outcome(given), folder)?.0);
    }
    let name = here.file_name();
    let found: Vec<&String> = listed
        .iter()
        .filter(|p| Path::new(p.as_str()).file_name() == name && hash_of(&folder.join(p.as_str())).as_deref() == Some(sha256))
        .collect();
    match found.as_slice() {
        [one] => Ok((*one).clone()),
        _ if here.exists() => Ok(baseline::key_of(&outcome(given), folder)?.0),
        _ => Err(Error::input(format!(
            "{given}: the shards' scenario (sha256 {}) is neither there from the current folder nor among the lines of {} relative to its folder; run the merge from the folder the shards ran in",
            &sha256[..16.min(sha256.len())],
            file.display()
        ))),
    }
}

/// A row naming only `path`: what `baseline::key_of` needs of it.
fn outcome(path: &str) -> Outcome<'_> {
    Outcome { scenario: path, variant: "", seed: 0, verdict: crate::vocab::RunOutcome::Pass, rules: &[], first_violation: "" }
}

fn hash_of(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    Some(Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect())
}
