//! Issue 44's nightly lane: a night's seeds from its date alone (`--seeds night:DATE`), re-run
//! byte for byte; shards blessed into one baseline by `merge --bless`, byte-identical to
//! blessing the unsharded sweep; `merge --baseline` from another folder judging alike; failure
//! modes (`*` lines) judging a night's new seeds; a file among the shard folders refused.

use std::path::Path;

use crate::support::{rehearsal, stderr, stdout};

const SUITE: &str = "scenarios/ci/faults/strict-ci-smoke.toml";

fn sweep(seeds: &str, out: &Path, extra: &[&str]) -> std::process::Output {
    let out = out.display().to_string();
    let mut args = vec!["sweep", SUITE, "--seeds", seeds, "--quiet", "--out", &out];
    args.extend_from_slice(extra);
    rehearsal(&args)
}

fn shards(seeds: &str, dir: &Path) -> Vec<String> {
    (1..=2)
        .map(|i| {
            let out = dir.join(format!("shard-{i}"));
            let o = sweep(seeds, &out, &["--shard", &format!("{i}/2")]);
            assert!(o.status.code().unwrap() <= 1, "{}", stderr(&o));
            std::fs::write(dir.join(format!("shard-{i}.log")), stdout(&o)).unwrap();
            out.display().to_string()
        })
        .collect()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn a_night_is_rerun_byte_for_byte_from_its_date_and_its_shards_bless_the_unsharded_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let night = "night:2026-12-02:4";
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let whole = dir.path().join("whole.txt").display().to_string();
    let first = sweep(night, &a, &["--baseline", &whole, "--bless"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let c = dir.path().join("c");
    for folder in [&b, &c] {
        let again = sweep(night, folder, &["--baseline", &whole]);
        assert_eq!(again.status.code(), Some(0), "{}", stdout(&again));
    }
    assert_eq!(read(&a.join("results.csv")), read(&b.join("results.csv")), "results.csv of the same night");
    for file in ["results.csv", "summary.md", "coverage.csv", "failures/known.txt"] {
        assert_eq!(read(&b.join(file)), read(&c.join(file)), "{file} of the same night");
    }
    // Known failures are lines, not folders (issue 44: artifacts sized for a nightly).
    let known = read(&b.join("failures/known.txt"));
    assert!(known.lines().filter(|l| !l.starts_with('#')).all(|l| l.contains("\trehearsal run ")), "{known}");
    let folders = std::fs::read_dir(b.join("failures")).unwrap().filter(|e| e.as_ref().unwrap().path().is_dir()).count();
    assert_eq!(folders, 0, "no run folder for a known failure");
    assert!(std::fs::read_dir(a.join("failures")).unwrap().count() > 1, "the blessing sweep kept its failures' folders");
    // A regression keeps its whole folder: the baseline without one failing pair's line.
    let text = read(Path::new(&whole));
    let dropped = text.lines().find(|l| l.contains(" fail ")).expect("a failing pair").to_string();
    let seed = dropped.split(' ').nth(2).unwrap().to_string();
    let narrow = dir.path().join("narrow.txt");
    std::fs::write(&narrow, text.replace(&format!("{dropped}\n"), "")).unwrap();
    let d = dir.path().join("d");
    let regressed = sweep(night, &d, &["--baseline", &narrow.display().to_string()]);
    assert_eq!(regressed.status.code(), Some(1), "{}", stdout(&regressed));
    assert!(d.join(format!("failures/strict-ci-smoke-default-{seed}/trace.csv")).exists(), "the regression's folder is kept");
    assert!(!read(&d.join("failures/known.txt")).contains(&format!(" {seed} ")), "and it is no known line");
    assert!(
        read(&a.join("manifest.toml")).contains("21789000000..=21789000003"),
        "2026-12-02 is day 20789: {}",
        read(&a.join("manifest.toml"))
    );

    let shard_dirs = shards(night, dir.path());
    let merged = dir.path().join("merged.txt").display().to_string();
    let mut args = vec!["merge"];
    args.extend(shard_dirs.iter().map(String::as_str));
    let out = dir.path().join("m").display().to_string();
    args.extend(["--out", &out, "--baseline", &merged, "--bless"]);
    let blessed = rehearsal(&args);
    assert_eq!(blessed.status.code(), Some(0), "{}\n{}", stdout(&blessed), stderr(&blessed));
    assert_eq!(read(Path::new(&merged)), read(Path::new(&whole)), "merge --bless writes what blessing the unsharded sweep does");

    // The same merge from another folder: each pair found by its scenario's contents.
    let elsewhere = std::process::Command::new(env!("CARGO_BIN_EXE_rehearsal"))
        .args(["merge", &shard_dirs[0], &shard_dirs[1], "--out", &dir.path().join("m2").display().to_string(), "--baseline", &merged])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(elsewhere.status.code(), Some(0), "{}\n{}", stdout(&elsewhere), stderr(&elsewhere));
    assert!(stdout(&elsewhere).contains(": 0 regression(s)"), "{}", stdout(&elsewhere));

    // A glob that also matched ci-local's logs: refused, naming the file, nothing written.
    let log = dir.path().join("shard-1.log").display().to_string();
    let refused = rehearsal(&["merge", &shard_dirs[0], &shard_dirs[1], &log, "--out", &dir.path().join("m3").display().to_string()]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(stderr(&refused).contains("shard-1.log is not a shard folder (a file)"), "{}", stderr(&refused));
    assert!(!dir.path().join("m3").exists());
}

#[test]
fn failure_modes_judge_another_nights_seeds_and_a_new_rule_regresses() {
    let dir = tempfile::tempdir().unwrap();
    let shard_dirs = shards("night:2026-12-01:6", dir.path());
    let modes = dir.path().join("modes.txt").display().to_string();
    let (m1, m2) = (dir.path().join("m1").display().to_string(), dir.path().join("m2").display().to_string());
    let blessed = rehearsal(&["merge", &shard_dirs[0], &shard_dirs[1], "--out", &m1, "--baseline", &modes, "--bless-modes"]);
    assert_eq!(blessed.status.code(), Some(0), "{}", stderr(&blessed));
    let text = read(Path::new(&modes));
    let line = text.lines().find(|l| !l.starts_with('#')).unwrap().to_string();
    assert!(line.contains(" default * fail "), "{text}");
    // Another night, other seeds, judged by the modes: exit 0 unless a new rule shows.
    let next = sweep("night:2026-12-02:4", &dir.path().join("next"), &["--baseline", &modes]);
    let said = stdout(&next);
    let regressions = said.lines().filter(|l| l.starts_with("regression")).count();
    assert_eq!(next.status.code(), Some(if regressions == 0 { 0 } else { 1 }), "{said}");
    // Near miss: the modes without one of their rules make the nights that break it regress.
    let (head, rules) = line.rsplit_once(' ').unwrap();
    let fewer: Vec<&str> = rules.split(',').collect();
    let narrowed = dir.path().join("narrow.txt");
    std::fs::write(&narrowed, format!("{head} {}\n", fewer[1..].join(","))).unwrap();
    let narrow = rehearsal(&["merge", &shard_dirs[0], &shard_dirs[1], "--out", &m2, "--baseline", &narrowed.display().to_string()]);
    assert_eq!(narrow.status.code(), Some(1), "{}", stdout(&narrow));
    assert!(stdout(&narrow).contains(&format!("new rule(s) {}", fewer[0])), "{}", stdout(&narrow));
}

/// Expiry (issue 44): `--record-night` counts the nights a failing mode's scenario passed
/// (`passed-nights=K`), a failing night resets it, and `--expire-after N` stops counting a mode
/// at N as known: reported `expired`, its failures regressions.
#[test]
fn a_known_failure_that_keeps_passing_expires_and_a_failing_night_resets_its_count() {
    let dir = tempfile::tempdir().unwrap();
    let merge = |shards: &[String], out: &str, extra: &[&str]| {
        let out = dir.path().join(out).display().to_string();
        let mut args = vec!["merge"];
        args.extend(shards.iter().map(String::as_str));
        args.extend(["--out", &out]);
        args.extend_from_slice(extra);
        rehearsal(&args)
    };
    // A passing suite: strict-crash-between-state-and-message passes its first seeds.
    let passing = "scenarios/ci/faults/strict-crash-between-state-and-message.toml";
    let shard_dirs: Vec<String> = (1..=2)
        .map(|i| {
            let out = dir.path().join(format!("p{i}"));
            let o = rehearsal(&[
                "sweep",
                passing,
                "--seeds",
                "1..=2",
                "--shard",
                &format!("{i}/2"),
                "--quiet",
                "--out",
                &out.display().to_string(),
            ]);
            assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
            out.display().to_string()
        })
        .collect();
    let file = dir.path().join("modes.txt");
    let modes = file.display().to_string();
    let o = merge(&shard_dirs, "m0", &["--baseline", &modes, "--bless-modes"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let line = read(&file).lines().find(|l| l.ends_with(" * pass -")).unwrap().to_string();
    // As if the scenario had been known to fail, and had passed one night since.
    std::fs::write(&file, format!("{}fail budget passed-nights=1\n", line.trim_end_matches("pass -"))).unwrap();
    let o = merge(&shard_dirs, "m1", &["--baseline", &modes, "--record-night", "--expire-after", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(!stdout(&o).contains("expired"), "2 nights of 3: still known\n{}", stdout(&o));
    assert!(read(&file).contains(" * fail budget passed-nights=2\n"), "{}", read(&file));
    let o = merge(&shard_dirs, "m2", &["--baseline", &modes, "--expire-after", "2"]);
    assert_eq!(o.status.code(), Some(0), "a pass is no regression: {}", stdout(&o));
    assert!(stdout(&o).contains("expired      ") && stdout(&o).contains("passed 2 nights in a row"), "{}", stdout(&o));

    // A failing night under an expired mode is a regression; recorded, it resets the count.
    let failing = shards("night:2026-12-01:6", dir.path());
    let o = merge(&failing, "f0", &["--baseline", &modes, "--bless-modes"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = read(&file);
    let fail_line = text.lines().find(|l| l.contains(" default * fail ")).unwrap().to_string();
    std::fs::write(&file, format!("{fail_line} passed-nights=4\n")).unwrap();
    let o = merge(&failing, "f1", &["--baseline", &modes, "--expire-after", "4", "--record-night"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("regression   ") && stdout(&o).contains("expired      "), "{}", stdout(&o));
    assert_eq!(read(&file).lines().find(|l| !l.starts_with('#')).unwrap(), fail_line, "the failing night reset the count");
    let o = merge(&failing, "f2", &["--baseline", &modes, "--expire-after", "4"]);
    assert_eq!(o.status.code(), Some(0), "known again: {}", stdout(&o));
}
