//! manifest.toml: what a sweep folder is the result of. Every sweep writes it before its
//! first pair runs (a shard with `--shard I/N`, an unsharded sweep as shard 1 of 1), so
//! `rehearsal merge` can tell a complete set of shards of one suite from a partial or mixed
//! one (sim/campaign/merge.rs): the suite's fingerprint (each scenario as the command line named it,
//! the SHA-256 of its contents and of its `[protocol] sql` file, its own `run.seed`; the
//! seeds; the variants; `--sql` with its SHA-256), the build that ran it, and I/N.

use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::base::atomic::write_atomically;
use crate::base::error::{Error, Result};
use crate::base::seed_set::SeedSet;
use crate::input::scenario::Scenario;

pub const MANIFEST_FILE: &str = "manifest.toml";

/// The build that wrote a manifest: the crate version, a hash of its sources (sim/,
/// Cargo.toml, Cargo.lock, build.rs) and the compiler's version, captured by build.rs.
/// Shards of one commit built on different machines with one toolchain agree.
pub const BUILD_ID: &str = env!("REHEARSAL_BUILD_ID");

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// This folder's shard, 1-based, of `shards`.
    pub shard: usize,
    pub shards: usize,
    /// The pairs this shard runs.
    pub pairs: usize,
    pub build: String,
    pub suite: Suite,
}

/// What every shard of one sweep shares.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Suite {
    /// `--seeds`, as runs of consecutive seeds (`1..=40`) in the order the sweep ran them;
    /// empty: each scenario's own `run.seed`.
    pub seeds: Vec<String>,
    /// `--protocol NAME`, if the sweep had it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// `--variant`, in order.
    pub variants: Vec<String>,
    /// `--sql FILE`, if the sweep had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sql: Option<FileId>,
    /// In the order the command line gave them: pairs are numbered (and sharded) in it.
    pub scenarios: Vec<ScenarioId>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScenarioId {
    /// As the command line gave it: results.csv and the traces name it so.
    pub path: String,
    pub sha256: String,
    /// Its `run.seed`: the one seed it runs in a sweep without `--seeds`.
    pub run_seed: u64,
    /// Its `[protocol] sql` file, if it names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sql: Option<FileId>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileId {
    pub path: String,
    pub sha256: String,
}

impl FileId {
    pub fn of(path: &Path) -> Result<FileId> {
        let bytes = std::fs::read(path).map_err(|e| Error::input(format!("{}: cannot read: {e}", path.display())))?;
        Ok(FileId { path: path.display().to_string(), sha256: sha256_hex(&bytes) })
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

impl Suite {
    /// The suite of a sweep over `scenarios` (loaded, in the command line's order).
    pub fn of(scenarios: &[Scenario], seeds: &SeedSet, protocol: Option<&str>, variants: &[String], sql: Option<&Path>) -> Result<Suite> {
        let scenarios = scenarios
            .iter()
            .map(|s| {
                let file = FileId::of(&s.path)?;
                let sql = s.protocol_sql.as_deref().map(FileId::of).transpose()?;
                Ok(ScenarioId { path: file.path, sha256: file.sha256, run_seed: s.run.seed, sql })
            })
            .collect::<Result<Vec<_>>>()?;
        let (protocol, variants) = (protocol.map(str::to_string), variants.to_vec());
        Ok(Suite { seeds: seeds.run_texts(), protocol, variants, sql: sql.map(FileId::of).transpose()?, scenarios })
    }

    /// The seeds back from their runs (empty: each scenario's own), still as runs.
    pub fn seed_set(&self) -> Result<SeedSet> {
        SeedSet::parse_runs(&self.seeds)
    }
}

impl Manifest {
    pub fn write(&self, dir: &Path) -> Result<()> {
        let text = toml::to_string(self).map_err(|e| Error::harness(format!("manifest: {e}")))?;
        let text = format!(
            "# What this folder's sweep ran: `rehearsal merge` joins only a complete set of shards of one suite and build.\n{text}"
        );
        write_atomically(&dir.join(MANIFEST_FILE), text.as_bytes())
    }

    pub fn read(dir: &Path) -> Result<Manifest> {
        let path = dir.join(MANIFEST_FILE);
        // A device or FIFO in its place is refused, not read (sim/base/input_file.rs).
        if path.exists() {
            crate::base::input_file::ensure_regular(&path, "manifest")?;
        }
        let text = std::fs::read_to_string(&path).map_err(|e| {
            Error::input(format!(
                "{}: cannot read ({e}): not the folder of a `rehearsal sweep`, or one written before sweeps kept a manifest",
                path.display()
            ))
        })?;
        let manifest: Manifest =
            toml::from_str(&text).map_err(|e| Error::input(format!("{}: not a sweep manifest: {}", path.display(), e.message())))?;
        if manifest.shards == 0 || manifest.shard == 0 || manifest.shard > manifest.shards {
            return Err(Error::input(format!("{}: shard {} of {} is no shard", path.display(), manifest.shard, manifest.shards)));
        }
        Ok(manifest)
    }

    /// How `other` is not a shard of the same sweep as this one: build, shard count, seeds,
    /// variants, `--sql`, scenarios (each named by its path, or its place when paths differ).
    pub fn differences(&self, other: &Manifest) -> Vec<String> {
        let mut found = Vec::new();
        let mut differ = |what: &str, a: String, b: String| {
            if a != b {
                found.push(format!("{what}: {a} vs {b}"));
            }
        };
        differ("build", self.build.clone(), other.build.clone());
        differ("shard count N", self.shards.to_string(), other.shards.to_string());
        let (a, b) = (&self.suite, &other.suite);
        differ("seeds", describe_seeds(&a.seeds), describe_seeds(&b.seeds));
        differ("protocol", format!("{:?}", a.protocol), format!("{:?}", b.protocol));
        differ("variants", format!("{:?}", a.variants), format!("{:?}", b.variants));
        differ("--sql", describe_file(a.sql.as_ref()), describe_file(b.sql.as_ref()));
        differ("scenario count", a.scenarios.len().to_string(), b.scenarios.len().to_string());
        for (place, (x, y)) in a.scenarios.iter().zip(&b.scenarios).enumerate() {
            if x.path != y.path {
                differ(&format!("scenario {}", place + 1), x.path.clone(), y.path.clone());
                continue;
            }
            differ(&format!("{} contents (sha256)", x.path), x.sha256.clone(), y.sha256.clone());
            differ(&format!("{} run.seed", x.path), x.run_seed.to_string(), y.run_seed.to_string());
            differ(&format!("{} [protocol] sql", x.path), describe_file(x.sql.as_ref()), describe_file(y.sql.as_ref()));
        }
        found
    }
}

fn describe_seeds(runs: &[String]) -> String {
    if runs.is_empty() {
        "each scenario's run.seed".to_string()
    } else {
        runs.join(", ")
    }
}

fn describe_file(file: Option<&FileId>) -> String {
    file.map_or_else(|| "none".to_string(), |f| format!("{} (sha256 {})", f.path, &f.sha256[..16.min(f.sha256.len())]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite(seeds: &[u64]) -> Suite {
        let scenario = ScenarioId { path: "a.toml".into(), sha256: "00".repeat(32), run_seed: 7, sql: None };
        Suite { seeds: SeedSet::of_list(seeds).run_texts(), protocol: None, variants: Vec::new(), sql: None, scenarios: vec![scenario] }
    }

    #[test]
    fn seeds_are_kept_as_runs_and_read_back_in_order() {
        let seeds = [1, 2, 3, 7, 9, 10, 4];
        let s = suite(&seeds);
        assert_eq!(s.seeds, ["1..=3", "7", "9..=10", "4"]);
        assert_eq!(s.seed_set().unwrap().to_vec("--seeds").unwrap(), seeds);
        assert!(suite(&[]).seed_set().unwrap().is_empty());
    }

    #[test]
    fn a_manifest_reads_back_and_names_each_difference() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = Manifest { shard: 2, shards: 4, pairs: 10, build: BUILD_ID.to_string(), suite: suite(&[1, 2, 3]) };
        manifest.write(dir.path()).unwrap();
        assert_eq!(Manifest::read(dir.path()).unwrap(), manifest);
        assert!(manifest.differences(&Manifest { shard: 3, pairs: 9, ..manifest.clone() }).is_empty(), "I and its pairs may differ");
        let mut other = Manifest { shards: 3, build: "another".into(), suite: suite(&[1, 2]), ..manifest.clone() };
        other.suite.scenarios[0].sha256 = "11".repeat(32);
        let found = manifest.differences(&other).join("\n");
        for what in ["build: ", "shard count N: 4 vs 3", "seeds: 1..=3 vs 1..=2", "a.toml contents (sha256)"] {
            assert!(found.contains(what), "{what} in:\n{found}");
        }
        assert!(BUILD_ID.starts_with("rehearsal ") && BUILD_ID.contains("sources ") && BUILD_ID.contains("rustc"), "{BUILD_ID}");
    }
}
