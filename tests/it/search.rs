//! `rehearsal search`: the same search seed gives the same files whatever `--jobs`; a corpus
//! entry and a distinct violation's replay file run as the search ran them; bad input exits 2
//! before anything runs. The runs are few (one batch and a few mutants): what the search
//! finds in many is measured in the README, not asserted here.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::Command;

use rehearsal::campaign::search::SearchRow;

use crate::support::{rehearsal, spawn_rehearsal, stderr, stdout, summary_field};

const RANDOM_FAULTS: &str = "scenarios/faults/random-faults.toml";

/// `rehearsal search RANDOM_FAULTS --runs 20 --strict --seed 5 --jobs JOBS --out OUT`.
fn search(jobs: &str, out: &Path) -> (i32, String) {
    let o =
        rehearsal(&["search", RANDOM_FAULTS, "--runs", "20", "--strict", "--seed", "5", "--jobs", jobs, "--out", out.to_str().unwrap()]);
    (o.status.code().unwrap(), format!("{}{}", stdout(&o), stderr(&o)))
}

fn rows(out: &Path) -> Vec<SearchRow> {
    rehearsal::campaign::search::read_csv(&out.join("search.csv")).expect("search.csv is whole")
}

/// Every file under `dir`, by name, with its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut all: Vec<(String, Vec<u8>)> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).map(|p| (p.display().to_string(), std::fs::read(&p).unwrap())).collect();
    all.sort();
    all.into_iter().map(|(p, bytes)| (Path::new(&p).file_name().unwrap().to_string_lossy().into_owned(), bytes)).collect()
}

#[test]
fn the_output_does_not_depend_on_jobs_and_a_corpus_entry_replays() {
    let tmp = tempfile::tempdir().unwrap();
    let (one, two) = (tmp.path().join("one"), tmp.path().join("two"));
    let (code, text) = search("1", &one);
    assert_eq!(code, 1, "under --strict, random-faults violates rules: {text}");
    assert_eq!(search("2", &two).0, 1);
    for name in ["search.csv", "summary.md"] {
        assert_eq!(std::fs::read(one.join(name)).unwrap(), std::fs::read(two.join(name)).unwrap(), "{name}");
    }
    assert_eq!(files(&one.join("corpus")), files(&two.join("corpus")));
    assert_eq!(files(&one.join("failures")), files(&two.join("failures")));
    let rows = rows(&one);
    assert_eq!(rows.iter().filter(|r| r.side == "search").count(), 20);
    assert_eq!(rows.iter().filter(|r| r.side == "random").count(), 20);
    assert!(rows.iter().any(|r| r.origin.starts_with("mutant-of-")), "the batch after the first is made of mutants");
    // A kept mutant that placed a fault: its corpus file runs it as the search did.
    let kept = rows
        .iter()
        .find(|r| {
            r.origin.starts_with("mutant-of-") && r.input.contains('@') && one.join("corpus").join(format!("C{}.toml", r.run)).exists()
        })
        .expect("a kept mutant with a scripted fault");
    replays(&one.join("corpus").join(format!("C{}.toml", kept.run)), kept, &tmp.path().join("corpus-replay"));
    // The search's first distinct violation: its replay file fails the same way.
    let first = rows.iter().find(|r| r.side == "search" && r.distinct == "V1").expect("a violation under --strict");
    let (name, _) = files(&one.join("failures")).into_iter().find(|(name, _)| name.starts_with("search-V1-")).expect("V1's replay file");
    replays(&one.join("failures").join(name), first, &tmp.path().join("failure-replay"));
}

/// `rehearsal run FILE` runs as the search's row says: as many statements, the same verdict.
fn replays(file: &Path, row: &SearchRow, out: &Path) {
    let o = rehearsal(&["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let shown = stdout(&o);
    assert_eq!(summary_field(&shown, "statements").split(' ').next().unwrap(), row.statements.to_string(), "{shown}");
    let rule = row.violation.split(' ').next().unwrap_or("");
    if rule.is_empty() {
        assert_eq!(o.status.code(), Some(0), "{shown}");
    } else {
        assert_eq!(o.status.code(), Some(1), "{shown}");
        assert!(shown.contains(&format!("verdict      FAIL: {rule}")), "{rule}: {shown}");
    }
}

#[test]
fn bad_input_exits_2_with_the_reason_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let broken = tmp.path().join("broken.toml");
    std::fs::write(&broken, "[tasks]\ncount = 1\n[timing]\nbackground_pol_ms = 8000\n").unwrap();
    let broken = broken.to_str().unwrap().to_string();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (vec!["scenarios/no-such.toml", "--runs", "4"], "scenarios/no-such.toml: cannot read scenario".into()),
        (vec![&broken, "--runs", "4"], format!("{broken}:4:1: key `timing.background_pol_ms`")),
        (vec![RANDOM_FAULTS, "--runs", "0"], "--runs must be at least 1".into()),
        (vec![RANDOM_FAULTS, "--runs", "4", "--variant", "no-such"], "no-such".into()),
        (vec![RANDOM_FAULTS, "--runs", "many"], "invalid value 'many'".into()),
    ];
    for (args, message) in cases {
        let out = tmp.path().join("out");
        let mut all = vec!["search"];
        all.extend_from_slice(&args);
        all.extend_from_slice(&["--out", out.to_str().unwrap()]);
        let o = rehearsal(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}\n{}\n{}", stdout(&o), stderr(&o));
        assert!(stderr(&o).contains(&message), "{args:?}: expected `{message}` in\n{}", stderr(&o));
        assert!(!out.join("search.csv").exists(), "{args:?}: nothing searched");
    }
}

/// Ctrl-C during the search: the runs under way finish, and what finished is kept — search.csv
/// whole with those rows, the INCOMPLETE marker, summary.md saying so — with exit 130.
#[test]
fn ctrl_c_keeps_the_finished_runs_marked_incomplete() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, scratch) = (tmp.path().join("interrupted"), tmp.path().join("scratch"));
    std::fs::create_dir(&scratch).unwrap();
    let runs = 2000;
    let runs_text = runs.to_string();
    let (out_text, scratch_text) = (out.to_str().unwrap(), scratch.to_str().unwrap());
    let args = ["search", RANDOM_FAULTS, "--runs", &runs_text, "--strict", "--jobs", "2", "--out", out_text, "--scratch", scratch_text];
    let mut child = spawn_rehearsal(&args);
    // The first batch's progress line: some runs have finished.
    let mut stderr_lines = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    while !seen.contains("rehearsal: search ") {
        seen.clear();
        assert!(stderr_lines.read_line(&mut seen).unwrap() > 0, "the search ended before its first batch");
    }
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let mut rest = String::new();
    stderr_lines.read_to_string(&mut rest).unwrap();
    let o = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(130), "{stdout}\n{rest}");
    let finished = rows(&out);
    assert!(!finished.is_empty() && finished.len() < 2 * runs, "{} runs", finished.len());
    assert!(stdout.contains("incomplete   interrupted; results kept"), "{stdout}");
    let marker = std::fs::read_to_string(out.join("INCOMPLETE")).unwrap();
    assert!(marker.contains(&format!("of {runs} + {runs} runs finished: interrupted (Ctrl-C)")), "{marker}");
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("**Incomplete**: interrupted"), "{summary}");
    assert_eq!(scratch.read_dir().unwrap().count(), 0, "the runs under way finished and their scratch folder went");
}

/// SIGKILL, no handler, during the search side: search.csv is written only at the end, so
/// what is kept is the journal (sim/campaign/ledger.rs): every run folded so far, each the
/// row the same run has in a search that ran to its end.
#[test]
fn a_killed_search_keeps_every_run_it_finished() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, scratch) = (tmp.path().join("killed"), tmp.path().join("scratch"));
    std::fs::create_dir(&scratch).unwrap();
    let (out_text, scratch_text) = (out.to_str().unwrap(), scratch.to_str().unwrap());
    let args =
        ["search", RANDOM_FAULTS, "--runs", "2000", "--strict", "--seed", "5", "--jobs", "2", "--out", out_text, "--scratch", scratch_text];
    let mut child = spawn_rehearsal(&args);
    let journal = out.join(rehearsal::campaign::search::JOURNAL);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    while std::fs::read_to_string(&journal).map_or(0, |text| text.lines().count()) < 16 {
        assert!(std::time::Instant::now() < deadline, "no 16 runs journaled within 300 s");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    assert!(!out.join("search.csv").exists() && out.join("INCOMPLETE").exists());
    let kept = rehearsal::campaign::search::read_csv(&out.join("search.csv")).expect("the journal reads");
    assert!(kept.len() >= 16 && kept.iter().all(|r| r.side == "search"), "{} rows", kept.len());
    // A search of whole batches at least as long makes the same first runs.
    let runs = kept.len().div_ceil(rehearsal::campaign::search::BATCH) * rehearsal::campaign::search::BATCH;
    let whole = tmp.path().join("whole");
    let o = rehearsal(&[
        "search",
        RANDOM_FAULTS,
        "--runs",
        &runs.to_string(),
        "--strict",
        "--seed",
        "5",
        "--jobs",
        "2",
        "--out",
        whole.to_str().unwrap(),
    ]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    assert_eq!(kept, rows(&whole)[..kept.len()]);
}
