//! `rehearsal merge`: joins the folders of `rehearsal sweep --shard I/N` into the folder one
//! unsharded sweep of the same suite writes, byte for byte (results.csv, summary.md,
//! coverage.csv, manifest.toml; junit.xml and pairs.jsonl hold wall times), or refuses.
//! Each shard's manifest.toml (sim/campaign/manifest.rs) says which suite, build and I/N it ran:
//! shards of different sweeps are bad input (exit 2, naming what differs); a set that lacks
//! a shard, gives one twice, or whose shards lack pairs is incomplete (exit 1, naming the
//! shards and pairs). A refused merge writes nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::base::error::{Error, Result};
use crate::campaign::manifest::{Manifest, BUILD_ID};
use crate::campaign::sweep::{self, PairOutcome, ResultRow, SweepOptions};
use crate::judging::coverage::{Coverage, Item, Required};

/// A pair as results.csv keys it: scenario as given, variant label, seed.
type Key = (String, String, u64);

/// A merged folder: every pair of the suite, exactly once.
pub struct Merged {
    pub rows: Vec<ResultRow>,
    pub coverage: Coverage,
    /// The `--require-coverage` items no shard reached.
    pub missing_coverage: Vec<Item>,
    /// The merged set judged against `--baseline` (sim/campaign/baseline.rs), as one sweep's would be.
    pub baseline: Option<crate::campaign::baseline::Comparison>,
    /// The baseline's failure modes `--expire-after` no longer counts as known.
    pub expired: Vec<crate::campaign::baseline_expiry::Expired>,
}

/// `merge --expire-after N` and `--record-night` (sim/campaign/baseline_expiry.rs).
#[derive(Clone, Copy, Debug, Default)]
pub struct Nights {
    pub expire_after: Option<u64>,
    pub record: bool,
}

pub enum MergeOutcome {
    Written(Merged),
    /// Shards or pairs missing or given twice: one line each, naming them.
    Incomplete(Vec<String>),
}

struct Shard {
    dir: PathBuf,
    manifest: Manifest,
}

/// `merge --bless` / `--bless-modes`: write the `--baseline` file from the merged pairs (a
/// line a pair, as blessing the unsharded sweep writes; or a failure mode a scenario).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bless {
    Pairs,
    Modes,
}

pub fn merge(dirs: &[PathBuf], out: &Path, required: Option<&Required>, baseline: Option<&Path>, force: bool) -> Result<MergeOutcome> {
    merge_blessing(dirs, out, required, baseline, None, force, Nights::default())
}

/// `merge`, and with `bless` the baseline file written from the merged pairs first, then
/// the pairs judged against it as a sweep's `--bless` does.
pub fn merge_blessing(
    dirs: &[PathBuf],
    out: &Path,
    required: Option<&Required>,
    baseline: Option<&Path>,
    bless: Option<Bless>,
    force: bool,
    nights: Nights,
) -> Result<MergeOutcome> {
    refuse_non_shards(dirs)?;
    let shards = dirs.iter().map(|dir| Ok(Shard { dir: dir.clone(), manifest: Manifest::read(dir)? })).collect::<Result<Vec<_>>>()?;
    refuse_mixed(&shards)?;
    refuse_out_among_inputs(&shards, out)?;
    let (rows, problems) = check_complete(&shards)?;
    if !problems.is_empty() {
        return Ok(MergeOutcome::Incomplete(problems));
    }
    let first = &shards[0].manifest;
    if first.build != BUILD_ID {
        eprintln!("rehearsal: note: the shards were run by another build ({}) than this merge ({BUILD_ID})", first.build);
    }
    let (pairs, coverage) = outcomes(&shards, rows)?;
    let _lock = crate::base::out_folder::claim(out, &sweep::folder_spec(out, force, None).owned(), force)?;
    // Marked until every file is written: a merge killed or stopped by an error is never
    // taken for a whole one (issue 41: 12 of 15 killed merges left half-copied failures).
    crate::campaign::marker::mark(out, &format!("merge of {} shard(s) unfinished (killed, or stopped by an error)", shards.len()))?;
    crate::base::live_files::create_dir_all(out.join("failures"))?;
    for shard in &shards {
        copy_failures(&shard.dir, out)?;
    }
    let missing_coverage = required.map(|r| r.missing(&coverage)).unwrap_or_default();
    let total = pairs.len();
    let merged_rows: Vec<ResultRow> = pairs.iter().map(|pair| pair.row.clone()).collect();
    let (comparison, expired) = match baseline {
        Some(file) => {
            let outcomes = sweep::outcomes(&merged_rows);
            let keys = crate::campaign::merge_keys::keys(&outcomes, &first.suite, file)?;
            if let Some(how) = bless {
                crate::campaign::baseline::bless_keyed(&outcomes, &keys, file, how == Bless::Modes)?;
            }
            let loaded = crate::campaign::baseline::Baseline::load(file)?;
            let (judged_by, expired) = judged_by(&loaded, &outcomes, &keys, file, nights)?;
            (Some(crate::campaign::baseline::compare(&outcomes, &keys, &judged_by, file)), expired)
        }
        None => (None, Vec::new()),
    };
    let rows = sweep::write_files(out, pairs, &coverage, required, &missing_coverage, "", comparison.as_ref())?;
    // The manifest of the whole suite: what an unsharded sweep of it writes.
    Manifest { shard: 1, shards: 1, pairs: total, ..first.clone() }.write(out)?;
    crate::campaign::marker::unmark(out)?;
    Ok(MergeOutcome::Written(Merged { rows, coverage, missing_coverage, baseline: comparison, expired }))
}

/// The baseline the night is judged by (its expired failure modes judged as `pass -`, judged
/// by the counts before this night), and with `--record-night` the file rewritten whole with
/// this night counted.
fn judged_by(
    loaded: &crate::campaign::baseline::Baseline,
    outcomes: &[crate::campaign::baseline::Outcome],
    keys: &[Key],
    file: &Path,
    nights: Nights,
) -> Result<(crate::campaign::baseline::Baseline, Vec<crate::campaign::baseline_expiry::Expired>)> {
    use crate::campaign::baseline_expiry::{expire, record_night};
    let (judged, expired) = match nights.expire_after {
        Some(after) => expire(loaded, after),
        None => (loaded.clone(), Vec::new()),
    };
    if nights.record {
        crate::base::atomic::write_atomically(file, record_night(loaded, outcomes, keys).render().as_bytes())?;
    }
    Ok((judged, expired))
}

/// Exit 2 on a path that is a file, before anything is read: ci-local's `shard-1.log` picked
/// up by an `OUT/shard-*` glob once said only that it held no manifest.
fn refuse_non_shards(dirs: &[PathBuf]) -> Result<()> {
    if let Some(dir) = dirs.iter().find(|dir| dir.exists() && !dir.is_dir()) {
        return Err(Error::input(format!(
            "{} is not a shard folder (a file): merge takes the folders `rehearsal sweep --shard I/N --out DIR` wrote; \
             a glob such as OUT/shard-* that also matches files can be written OUT/shard-*/ to match folders only",
            dir.display()
        )));
    }
    Ok(())
}

/// Copies a shard's saved failures into `out/failures` as a sweep saves them: each run folder
/// under `.NAME.partial-PID`, renamed into place once whole, and only then the replay files,
/// so a replay file never names a half-copied folder. The copies' reports name the merged
/// folder's replay files, not the shard's (which CI discards). A shard's own leftover
/// partial copies are not failures and are not copied.
fn copy_failures(shard: &Path, out: &Path) -> Result<()> {
    let (from, to) = (shard.join("failures"), out.join("failures"));
    let Ok(read) = std::fs::read_dir(&from) else { return Ok(()) };
    let mut names: Vec<(bool, String)> = Vec::new();
    for entry in read {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with('.') {
            names.push((!entry.file_type()?.is_dir(), name));
        }
    }
    // Folders (false) before files (true).
    names.sort();
    let plain = (from.display().to_string(), to.display().to_string());
    for (is_file, name) in names {
        let partial = to.join(format!(".{name}.partial-{}", std::process::id()));
        // Removed by a Ctrl-C that ends the merge before its rename (issue 41, item 2).
        let _live = crate::base::live_files::track([partial.clone()]);
        let copied = if is_file {
            // Made through the registry: never after a Ctrl-C's removal of the tracked name.
            crate::base::live_files::make(|| std::fs::copy(from.join(&name), &partial)).map(|_| ()).map_err(Error::from)
        } else {
            sweep::copy_dir(&from.join(&name), &partial).and_then(|()| name_merged(&partial, &plain))
        };
        let placed = copied.and_then(|()| {
            crate::base::live_files::rename(&partial, &to.join(&name))
                .map_err(|e| Error::harness(format!("cannot rename {}: {e}", partial.display())))
        });
        if let Err(e) = placed {
            // An orderly error leaves no temporary behind.
            let _ = std::fs::remove_dir_all(&partial);
            let _ = std::fs::remove_file(&partial);
            return Err(e);
        }
    }
    Ok(())
}

/// Rewrites the shard's failures folder to the merged one in a copied failure's reports
/// (summary.md, timeline.html): their "replay with" lines name the file beside them. (A path
/// quoted for the shell keeps its quotes: the folder's name is replaced inside them.)
fn name_merged(folder: &Path, plain: &(String, String)) -> Result<()> {
    for report in ["summary.md", "timeline.html"] {
        let path = folder.join(report);
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let renamed = text.replace(&plain.0, &plain.1);
        if renamed != text {
            std::fs::write(&path, renamed)?;
        }
    }
    Ok(())
}

/// Exit 2 unless every shard ran the same suite, with the same build, split in the same N.
fn refuse_mixed(shards: &[Shard]) -> Result<()> {
    let first = &shards[0];
    for other in &shards[1..] {
        let found = first.manifest.differences(&other.manifest);
        if !found.is_empty() {
            return Err(Error::input(format!(
                "{} and {} are shards of different sweeps ({}); merge only the shards of one `rehearsal sweep --shard I/N` command run by one build",
                first.dir.display(),
                other.dir.display(),
                found.join("; ")
            )));
        }
    }
    Ok(())
}

/// `--out` is cleared before the merge writes it: it must not be a shard being read.
fn refuse_out_among_inputs(shards: &[Shard], out: &Path) -> Result<()> {
    let Ok(out_real) = std::fs::canonicalize(out) else { return Ok(()) };
    match shards.iter().find(|s| std::fs::canonicalize(&s.dir).is_ok_and(|d| d == out_real)) {
        Some(shard) => Err(Error::input(format!("--out {} is one of the shards being merged; choose another folder", shard.dir.display()))),
        None => Ok(()),
    }
}

/// Each shard's results.csv rows (one entry per shard folder), and what makes the set
/// incomplete: a shard index missing or given twice, a shard marked INCOMPLETE, a pair
/// missing from its shard or there twice. A row its shard should not hold is exit 2.
fn check_complete(shards: &[Shard]) -> Result<(Vec<Vec<ResultRow>>, Vec<String>)> {
    let n = shards[0].manifest.shards;
    let mut problems = Vec::new();
    let mut given: BTreeMap<usize, Vec<&Path>> = BTreeMap::new();
    for shard in shards {
        given.entry(shard.manifest.shard).or_default().push(&shard.dir);
    }
    for i in 1..=n {
        let expected = expected_pairs(&shards[0].manifest, i)?;
        match given.get(&i).map(Vec::as_slice) {
            None | Some([]) => problems.push(format!("shard {i}/{n} is missing: its {} pair(s) {}", expected.len(), name_pairs(&expected))),
            Some([_]) => {}
            Some(dirs) => problems.push(format!(
                "shard {i}/{n} is given {} times ({}): its {} pair(s) would count more than once",
                dirs.len(),
                dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", "),
                expected.len()
            )),
        }
    }
    let mut all_rows = Vec::new();
    for shard in shards {
        let (i, dir) = (shard.manifest.shard, shard.dir.display());
        if let Ok(why) = std::fs::read_to_string(shard.dir.join(sweep::INCOMPLETE_MARKER)) {
            problems.push(format!("{dir} (shard {i}/{n}) is an incomplete sweep ({}); run it again before merging", why.trim()));
        }
        let rows = sweep::read_results(&shard.dir.join("results.csv"))?;
        let expected: BTreeSet<Key> = expected_pairs(&shard.manifest, i)?.into_iter().collect();
        let mut seen: BTreeSet<Key> = BTreeSet::new();
        let mut twice = Vec::new();
        for row in &rows {
            if !seen.insert(row.key()) {
                twice.push(row.key());
            }
        }
        let stray: Vec<Key> = seen.difference(&expected).cloned().collect();
        if !stray.is_empty() {
            return Err(Error::input(format!(
                "{dir}/results.csv holds {} pair(s) that shard {i}/{n} of its manifest's suite does not: {}",
                stray.len(),
                name_pairs(&stray)
            )));
        }
        let missing: Vec<Key> = expected.difference(&seen).cloned().collect();
        if !missing.is_empty() {
            problems.push(format!(
                "{dir} (shard {i}/{n}) lacks {} of its {} pair(s): {}",
                missing.len(),
                expected.len(),
                name_pairs(&missing)
            ));
        }
        if !twice.is_empty() {
            problems.push(format!("{dir} (shard {i}/{n}) holds {} pair(s) more than once: {}", twice.len(), name_pairs(&twice)));
        }
        all_rows.push(rows);
    }
    Ok((all_rows, problems))
}

/// The pairs shard `i` of the manifest's suite runs, as `rehearsal sweep --shard` picks them.
fn expected_pairs(manifest: &Manifest, i: usize) -> Result<Vec<Key>> {
    let suite = &manifest.suite;
    let options = SweepOptions {
        scenarios: suite.scenarios.iter().map(|s| PathBuf::from(&s.path)).collect(),
        seeds: suite.seed_set()?,
        protocol: suite.protocol.clone(),
        variants: suite.variants.clone(),
        shard: Some((i, manifest.shards)),
        ..SweepOptions::default()
    };
    let own_seeds: Vec<u64> = suite.scenarios.iter().map(|s| s.run_seed).collect();
    let variant = sweep::variant_label(suite.protocol.as_deref(), &suite.variants);
    Ok(sweep::pairs(&options, &own_seeds).into_iter().map(|(_, path, seed)| (path.display().to_string(), variant.clone(), seed)).collect())
}

/// The first few pairs, then how many more.
fn name_pairs(keys: &[Key]) -> String {
    const SHOWN: usize = 5;
    let mut named: Vec<String> =
        keys.iter().take(SHOWN).map(|(scenario, variant, seed)| format!("{scenario} seed {seed} ({variant})")).collect();
    if keys.len() > SHOWN {
        named.push(format!("and {} more", keys.len() - SHOWN));
    }
    named.join(", ")
}

/// Every pair as the sweep had it (its row with the rules, measurements and wall time its
/// shard's pairs.jsonl kept), sorted, and the shards' coverage added up.
fn outcomes(shards: &[Shard], rows: Vec<Vec<ResultRow>>) -> Result<(Vec<PairOutcome>, Coverage)> {
    let mut pairs = Vec::new();
    let mut coverage = Coverage::default();
    for (shard, rows) in shards.iter().zip(rows) {
        coverage.merge(&Coverage::read(&shard.dir.join("coverage.csv"))?);
        let mut details: BTreeMap<Key, _> = crate::campaign::pair_details::read(&shard.dir)?.into_iter().map(|d| (d.key(), d)).collect();
        for row in rows {
            let detail = details.remove(&row.key()).ok_or_else(|| {
                let (scenario, variant, seed) = row.key();
                let path = shard.dir.join(crate::campaign::pair_details::PAIR_DETAILS_FILE);
                Error::input(format!("{}: no line for {scenario} seed {seed} ({variant}), which results.csv holds", path.display()))
            })?;
            let wall = Duration::from_millis(detail.wall_ms);
            pairs.push(PairOutcome { row, measured: detail.measured, coverage: Coverage::default(), wall });
        }
    }
    pairs.sort_by_key(|pair| pair.row.key());
    Ok((pairs, coverage))
}
