//! No result is ever lost: a sweep killed part way leaves whole files behind, Ctrl-C keeps
//! every finished seed (marked incomplete), and an incomplete sweep cannot be merged as if
//! it were whole.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{rehearsal, root, stderr};

/// Its runs are made beside `out` (`--scratch`), in the test's own temporary folder: a sweep
/// killed with SIGKILL cannot remove its scratch folder, and in /dev/shm it would stay.
fn start_sweep(out: &Path) -> Child {
    let scratch = out.parent().expect("out is in a folder");
    Command::new(env!("CARGO_BIN_EXE_rehearsal"))
        .args(["sweep", "scenarios/bench/ci-smoke.toml", "--seeds", "1..=2000", "--jobs", "2", "--out", out.to_str().unwrap()])
        .args(["--scratch", scratch.to_str().unwrap()])
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sweep starts")
}

/// Waits (bounded) until the sweep has written its first checkpoint of results.csv.
fn wait_for_checkpoint(out: &Path) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !out.join("results.csv").exists() {
        assert!(Instant::now() < deadline, "no checkpoint of results.csv within 120 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// results.csv parses whole, and every row is a finished pair.
fn finished_rows(out: &Path) -> Vec<rehearsal::campaign::sweep::ResultRow> {
    let rows = rehearsal::campaign::sweep::read_results(&out.join("results.csv")).expect("results.csv is whole");
    for row in &rows {
        assert!(["pass", "fail", "error"].contains(&row.verdict.as_str()), "{row:?}");
        assert!(row.verdict == rehearsal::vocab::RunOutcome::Error || (row.trace_hash.len() == 64 && row.sim_time_ms > 0), "{row:?}");
        assert!(row.replay.contains(&format!("--seed {}", row.seed)), "{row:?}");
    }
    rows
}

#[test]
fn a_sweep_killed_part_way_leaves_whole_results_that_merge_refuses_as_incomplete() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("killed");
    let mut child = start_sweep(&out);
    wait_for_checkpoint(&out);
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap(); // SIGKILL: no handler runs
    child.wait().unwrap();
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert!(left.iter().any(|name| name.starts_with("sweep-")), "the runs were made in --scratch, left there by SIGKILL: {left:?}");
    let rows = finished_rows(&out);
    assert!(rows.len() >= 25 && rows.len() < 2000, "{} rows", rows.len());
    let marker = std::fs::read_to_string(out.join("INCOMPLETE")).expect("the marker stays");
    assert!(marker.contains("of 2000 pairs finished"), "{marker}");
    // Every saved failure file is whole too.
    for entry in std::fs::read_dir(out.join("failures")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            rehearsal::campaign::failure_file::Failure::load(&path).expect("a whole failure file");
        }
    }
    let o = rehearsal(&["merge", out.to_str().unwrap(), "--out", tmp.path().join("merged").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "pairs are missing: {}", stderr(&o));
    assert!(stderr(&o).contains("is an incomplete sweep"), "{}", stderr(&o));
}

#[test]
fn ctrl_c_stops_a_sweep_cleanly_and_keeps_every_finished_seed_marked_incomplete() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("interrupted");
    let child = start_sweep(&out);
    wait_for_checkpoint(&out);
    let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let o = child.wait_with_output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(130), "{stdout}\n{stderr}");
    assert!(stderr.contains("interrupted; finishing the runs under way"), "{stderr}");
    let rows = finished_rows(&out);
    assert!(stdout.contains(&format!("incomplete   {} of 2000 pairs finished (interrupted)", rows.len())), "{stdout}");
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert!(junit.contains(&format!("tests=\"{}\"", rows.len())), "junit holds the finished pairs");
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.starts_with(&format!("**Incomplete**: {} of 2000 pairs finished (interrupted)", rows.len())), "{summary}");
    assert!(std::fs::read_to_string(out.join("INCOMPLETE")).unwrap().contains("interrupted (Ctrl-C)"));
    assert!(!out.read_dir().unwrap().any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".tmp")), "no temporary files left");
}

#[test]
fn a_finished_sweep_removes_the_incomplete_marker_of_an_earlier_interrupted_one() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("again");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("INCOMPLETE"), "3 of 9 pairs finished: interrupted (Ctrl-C)\n").unwrap();
    // The record the interrupted sweep wrote first (sim/base/out_owner.rs): its files are rehearsal's.
    std::fs::write(out.join(".rehearsal-owned"), "owns INCOMPLETE\nowns results.csv\nowns failures\n").unwrap();
    // Replacing an earlier sweep's folder takes --force (a sweep never replaces results
    // silently); the forced one clears the marker with the rest.
    let o = rehearsal(&["sweep", "scenarios/quickstart.toml", "--seeds", "1..=3", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = rehearsal(&["sweep", "scenarios/quickstart.toml", "--seeds", "1..=3", "--force", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!out.join("INCOMPLETE").exists());
    assert_eq!(finished_rows(&out).len(), 3);
}

#[test]
fn ctrl_c_stops_a_bench_grid_and_its_files_describe_the_finished_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("grid");
    let child = Command::new(env!("CARGO_BIN_EXE_rehearsal"))
        .args(["bench", "scenarios/bench/poll-jitter.toml", "--param", "timing.background_poll_ms=5000,15000", "--seeds", "1..=2000"])
        .args(["--out", out.to_str().unwrap()])
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The grid point files are written before the first run starts.
    let deadline = Instant::now() + Duration::from_secs(120);
    while !out.join("points").join("p001.toml").exists() {
        assert!(Instant::now() < deadline, "the grid never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let o = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(130), "{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    let marker = std::fs::read_to_string(out.join("INCOMPLETE")).unwrap();
    let finished: usize = marker.split_whitespace().next().unwrap().parse().unwrap();
    assert!(finished < 4000 && marker.contains("of 4000 runs finished: interrupted"), "{marker}");
    let mut reader = csv::Reader::from_path(out.join("bench.csv")).unwrap();
    let runs: usize = reader.records().map(|r| r.unwrap()[2].parse::<usize>().unwrap()).sum();
    assert_eq!(runs, finished, "bench.csv counts exactly the finished runs");
}
