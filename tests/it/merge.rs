//! `rehearsal merge`: a complete set of shards gives the unsharded sweep's folder byte for
//! byte; a partial set exits 1 naming the shards and pairs it lacks; shards of different
//! sweeps exit 2 naming the difference. Nothing is written by a refused merge.

use std::path::{Path, PathBuf};

use crate::support::{rehearsal, stderr, stdout};

/// Two scenarios, one that passes and one that fails on the seed protocol (zombie), so the
/// summary has rules, latencies and a failure list, and failures/ is not empty.
const SUITE: [&str; 4] = ["scenarios/faults/random-faults.toml", "scenarios/faults/zombie.toml", "--seeds", "1..=6"];

fn sweep(shard: Option<&str>, out: &Path) -> i32 {
    let mut args = vec!["sweep"];
    args.extend_from_slice(&SUITE);
    if let Some(shard) = shard {
        args.extend_from_slice(&["--shard", shard]);
    }
    args.extend_from_slice(&["--jobs", "2", "--quiet", "--out", out.to_str().unwrap()]);
    rehearsal(&args).status.code().unwrap()
}

fn merge(dirs: &[&PathBuf], out: &Path) -> (i32, String) {
    let mut args = vec!["merge"];
    args.extend(dirs.iter().map(|d| d.to_str().unwrap()));
    args.extend_from_slice(&["--out", out.to_str().unwrap()]);
    let o = rehearsal(&args);
    (o.status.code().unwrap(), format!("{}{}", stdout(&o), stderr(&o)))
}

/// junit.xml without its wall times: the one thing in it that differs from run to run.
fn without_times(junit: &str) -> String {
    junit.split(" time=\"").enumerate().map(|(i, part)| if i == 0 { part } else { part.split_once('"').unwrap().1 }).collect()
}

fn replay_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.join("failures"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect();
    files.sort();
    files
}

#[test]
fn four_shards_merge_into_the_unsharded_sweep_byte_for_byte_and_a_partial_or_mixed_set_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    assert_eq!(sweep(None, &whole), 1, "zombie fails on the seed protocol");
    let shards: Vec<PathBuf> = (1..=4).map(|i| tmp.path().join(format!("shard-{i}"))).collect();
    for (i, dir) in shards.iter().enumerate() {
        sweep(Some(&format!("{}/4", i + 1)), dir);
    }
    let all: Vec<&PathBuf> = shards.iter().collect();
    let merged = tmp.path().join("merged");
    let (code, out) = merge(&all, &merged);
    assert_eq!(code, 1, "the worst verdict, as the unsharded sweep's\n{out}");
    for file in ["results.csv", "summary.md", "coverage.csv", "manifest.toml"] {
        assert_eq!(std::fs::read(merged.join(file)).unwrap(), std::fs::read(whole.join(file)).unwrap(), "{file}: merged = unsharded");
    }
    let summary = std::fs::read_to_string(merged.join("summary.md")).unwrap();
    assert!(summary.contains("| scenarios/faults/zombie.toml | default | 6 | 0 | 0 | 6 |"), "{summary}");
    let junit = |dir: &Path| without_times(&std::fs::read_to_string(dir.join("junit.xml")).unwrap());
    assert_eq!(junit(&merged), junit(&whole), "junit.xml differs only by wall times");
    assert_eq!(replay_files(&merged), replay_files(&whole));
    assert_eq!(replay_files(&merged).len(), 6);

    // Three of four: exit 1 naming the missing shard and its pairs; nothing written.
    let partial = tmp.path().join("partial");
    let (code, out) = merge(&all[..3], &partial);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("shard 4/4 is missing: its 3 pair(s)"), "{out}");
    assert!(out.contains("scenarios/faults/random-faults.toml seed 4 (default)"), "{out}");
    assert!(!partial.exists(), "a refused merge writes nothing");
    // A shard twice in place of another: exit 1 naming both.
    let (code, out) = merge(&[all[0], all[1], all[2], all[2]], &partial);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("shard 3/4 is given 2 times") && out.contains("shard 4/4 is missing"), "{out}");
    // A pair lost from a shard's results.csv: exit 1 naming it.
    let lossy = tmp.path().join("lossy");
    copy_folder(&shards[1], &lossy);
    let results = std::fs::read_to_string(lossy.join("results.csv")).unwrap();
    let kept: Vec<&str> = results.lines().filter(|l| !l.starts_with("scenarios/faults/zombie.toml,default,4,")).collect();
    assert_eq!(kept.len() + 1, results.lines().count(), "zombie seed 4 is pair 10, in shard 2");
    std::fs::write(lossy.join("results.csv"), kept.join("\n") + "\n").unwrap();
    let (code, out) = merge(&[all[0], &lossy, all[2], all[3]], &partial);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("(shard 2/4) lacks 1 of its 3 pair(s): scenarios/faults/zombie.toml seed 4 (default)"), "{out}");

    // A shard of another suite (seeds 1..=8 split in 4): exit 2 naming the seeds.
    let other = tmp.path().join("other");
    let mut args = vec!["sweep", SUITE[0], SUITE[1], "--seeds", "1..=8", "--shard", "4/4", "--quiet", "--out"];
    args.push(other.to_str().unwrap());
    rehearsal(&args);
    let (code, out) = merge(&[all[0], all[1], all[2], &other], &partial);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("are shards of different sweeps (seeds: 1..=6 vs 1..=8)"), "{out}");
    // Another build, or another scenario file at the same path: exit 2 naming it.
    for (what, from, to) in [("build", "build = \"rehearsal ", "build = \"rehearsal-old "), ("contents", "sha256 = \"", "sha256 = \"0")] {
        let changed = tmp.path().join(format!("changed-{what}"));
        copy_folder(&shards[3], &changed);
        let manifest = std::fs::read_to_string(changed.join("manifest.toml")).unwrap();
        std::fs::write(changed.join("manifest.toml"), manifest.replacen(from, to, 1)).unwrap();
        let (code, out) = merge(&[all[0], all[1], all[2], &changed], &partial);
        assert_eq!(code, 2, "{what}: {out}");
        let named = if what == "build" { "different sweeps (build: " } else { "scenarios/faults/random-faults.toml contents (sha256)" };
        assert!(out.contains(named), "{what}: {out}");
    }
    // A folder no sweep wrote (no manifest): exit 2.
    let (code, out) = merge(&[all[0], &tmp.path().join("partial-nothing")], &partial);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("manifest.toml: cannot read"), "{out}");
    assert!(!partial.exists(), "a refused merge writes nothing");
}

fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}
