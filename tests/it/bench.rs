//! The benchmarker's commands: `rehearsal bench` over a parameter grid (CSV, heatmaps, grid
//! point files that replay) and `rehearsal bench --overhead` against the SQLite floor.

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::{rehearsal, stderr, stdout, summary_field};

fn bench(args: &[&str], out: &Path) -> (i32, String) {
    let mut all = vec!["bench", "scenarios/bench/poll-jitter.toml"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", out.to_str().unwrap()]);
    let o = rehearsal(&all);
    (o.status.code().unwrap(), format!("{}{}", stdout(&o), stderr(&o)))
}

/// bench.csv as one map (column → value) per grid point.
fn rows(out: &Path) -> Vec<BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_path(out.join("bench.csv")).expect("bench.csv");
    let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_string).collect();
    reader.records().map(|r| header.iter().cloned().zip(r.unwrap().iter().map(str::to_string)).collect()).collect()
}

#[test]
fn a_poll_by_jitter_grid_shows_false_alarms_growing_with_jitter_and_is_the_same_for_any_job_count() {
    let tmp = tempfile::tempdir().unwrap();
    let (one, two) = (tmp.path().join("one"), tmp.path().join("two"));
    let grid = ["--param", "timing.background_poll_ms=15000,60000", "--param", "faults.watcher_jitter_ms.max=0,120000", "--seeds", "1..=4"];
    let (code, out) = bench(&[&grid[..], &["--jobs", "1"]].concat(), &one);
    // The jittered points' runs fail (false alarms): exit 1, as README's exit table says.
    assert_eq!(code, 1, "{out}");
    assert_eq!(bench(&[&grid[..], &["--jobs", "2"]].concat(), &two).0, 1);
    // Identical but for the output folder named in the replay commands.
    let csv = |dir: &Path| std::fs::read_to_string(dir.join("bench.csv")).unwrap().replace(dir.to_str().unwrap(), "OUT");
    assert!(csv(&one) == csv(&two), "--jobs must not change bench.csv:\n{}\n{}", csv(&one), csv(&two));
    let rows = rows(&one);
    assert_eq!(rows.len(), 4, "2 × 2 grid points");
    let at = |poll: &str, jitter: &str| {
        rows.iter()
            .find(|r| r["timing.background_poll_ms"] == poll && r["faults.watcher_jitter_ms.max"] == jitter)
            .unwrap_or_else(|| panic!("no point {poll} × {jitter}"))
    };
    // The seed's 15 s polls keep heartbeats fresh without jitter; two minutes of jitter on
    // every sleep overruns the 60 s margin between refresh (480 s) and staleness (540 s).
    let (calm, jittery) = (at("15000", "0"), at("15000", "120000"));
    assert_eq!((calm["runs"].as_str(), calm["false_stale_alarms"].as_str(), calm["false_alarm_rate"].as_str()), ("4", "0", "0.0000"));
    assert_eq!(calm["unfinished_runs"], "0", "every task of the calm point completes");
    assert!(jittery["false_stale_alarms"].parse::<u64>().unwrap() > 0, "{jittery:?}");
    assert!(jittery["message_notice_ms_p95"].parse::<i64>().unwrap() > calm["message_notice_ms_p95"].parse::<i64>().unwrap());
    assert!(
        calm["statements_per_sim_hour"].parse::<f64>().unwrap() > at("60000", "0")["statements_per_sim_hour"].parse::<f64>().unwrap(),
        "slower polls, fewer statements"
    );
    assert!(!calm["crash_detect_ms_p50"].is_empty() && calm["crash_detect_ms_p50"].parse::<i64>().unwrap() > 0);
    for metric in [
        "false_alarm_rate",
        "tasks_per_sim_hour",
        "crash_detect_ms_p95",
        "recovery_ms_p95",
        "message_notice_ms_p95",
        "statements_per_sim_hour",
    ] {
        let svg = std::fs::read_to_string(one.join(format!("heatmap-{metric}.svg"))).unwrap();
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n") && svg.matches("class=\"cell\"").count() == 4, "{metric}: {svg}");
        assert!(svg.contains("class=\"legend\""), "an absolute colour scale with its legend: {svg}");
    }
    // Issue 18 item 4: a column per rule, a status per point, failures counted on stdout.
    assert!(jittery["runs_violating_no-false-stale"].parse::<u64>().unwrap() > 0, "{jittery:?}");
    assert_eq!(calm["runs_violating_no-false-stale"], "0");
    let failed: usize = jittery["fail"].parse::<usize>().unwrap() + jittery["error"].parse::<usize>().unwrap();
    let expected_status = if failed * 2 > 4 {
        "fail"
    } else if failed > 0 {
        "partial"
    } else if jittery["unfinished_runs"] != "0" {
        "unfinished"
    } else {
        "known"
    };
    assert_eq!(jittery["status"], expected_status, "{jittery:?}");
    assert_ne!(jittery["status"], "pass", "a point with failing runs never reads as passing");
    let failed_all: usize = rows.iter().map(|r| r["fail"].parse::<usize>().unwrap() + r["error"].parse::<usize>().unwrap()).sum();
    assert!(out.contains(&format!("failed       {failed_all} of 16 runs")), "{out}");
    assert!(out.contains("violated: ") && out.contains("no-false-stale 4/4"), "{out}");
    // A failing point names a replay command, and that command reproduces the failure.
    let replay = &jittery["first_failure"];
    assert!(replay.starts_with("rehearsal run ") && replay.contains("points/p"), "{replay}");
    let args: Vec<&str> = replay.split_whitespace().skip(1).collect();
    let o = rehearsal(&[&args[..], &["--out", tmp.path().join("replayed").to_str().unwrap()]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(summary_field(&stdout(&o), "verdict").contains("no-false-stale"), "{}", stdout(&o));
}

#[test]
fn bad_grid_parameters_are_named_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 10] = [
        (&["--param", "timing.no_such_key=1,2"], "no_such_key"),
        (&["--param", "timing.background_poll_ms=-5"], "background_poll_ms"),
        // Only the second point is invalid: no point file of the first is left behind.
        (&["--param", "timing.background_poll_ms=15000,-5"], "background_poll_ms"),
        (&["--param", "timing.heartbeat_refresh_s,conductor.staleness_s=300,360;480"], "1 values for 2 keys"),
        (&["--param", "timing.background_poll_ms=5000;15000"], "`;` separates"),
        (&["--param", "conductor.staleness_s,conductor.staleness_s=1,2"], "named twice"),
        (&["--param", "timing.background_poll_ms"], "expected NAME=V1,V2"),
        (&["--param", "timing.background_poll_ms=1,1"], "listed twice"),
        (&["--param", "tasks.count=2", "--heatmap", "tasks.count,run.seed"], "--heatmap run.seed"),
        // A value the scenario's checks refuse: named as the parameter and its value, with the
        // scenario it changes, not by the point file that is never written (issue 45).
        (
            &["--param", "conductor.staleness_s=300"],
            "--param conductor.staleness_s = 300: scenarios/bench/poll-jitter.toml with this value is refused: key `timing.heartbeat_refresh_s`",
        ),
    ];
    for (i, (args, expected)) in cases.iter().enumerate() {
        let out = tmp.path().join(i.to_string());
        let (code, text) = bench(args, &out);
        assert_eq!(code, 2, "{args:?}: {text}");
        assert!(text.contains(expected), "{args:?} should name {expected}: {text}");
        assert!(!out.join("bench.csv").exists(), "{args:?}: nothing ran");
        assert!(!out.join("points").exists(), "{args:?}: no grid point file is written unless every point is valid");
        assert!(!text.contains("points/p0"), "{args:?}: names a file never written: {text}");
        assert!(!out.exists(), "{args:?}: a refused grid leaves no output folder");
    }
}

/// Issue 18 item 9: keys swept together (`A,B=A1,B1;A2,B2`); one parameter is drawn as line
/// charts over its steps, with its unit (issue 31).
#[test]
fn paired_parameters_move_together_and_one_parameter_gets_line_charts() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("paired");
    let (code, text) = bench(&["--param", "timing.heartbeat_refresh_s,conductor.staleness_s=300,360;480,540", "--seeds", "1..=1"], &out);
    assert_eq!(code, 0, "{text}");
    let rows = rows(&out);
    let pairs: Vec<(&str, &str)> =
        rows.iter().map(|r| (r["timing.heartbeat_refresh_s"].as_str(), r["conductor.staleness_s"].as_str())).collect();
    assert_eq!(pairs, [("300", "360"), ("480", "540")], "two points, not the four combinations");
    let point = std::fs::read_to_string(out.join("points/p000.toml")).unwrap();
    assert!(point.contains("heartbeat_refresh_s = 300") && point.contains("staleness_s = 360"), "{point}");
    assert!(text.contains("timing.heartbeat_refresh_s,conductor.staleness_s=300,360"), "{text}");
    for stem in ["throughput", "crash-detect", "recovery", "review-wait", "notice-background", "notice-pause", "statements"] {
        let svg = std::fs::read_to_string(out.join(format!("lines-{stem}.svg"))).unwrap();
        assert!(svg.contains(">300,360</text>") && svg.contains(">480,540</text>"), "{stem}: {svg}");
        assert!(svg.contains(">1 runs</text>") || svg.contains(">1 runs, 1 cut off</text>"), "run counts under the steps: {svg}");
    }
    let crash = std::fs::read_to_string(out.join("lines-crash-detect.svg")).unwrap();
    assert!(crash.contains("rotate(-90") && crash.contains(">s</text>"), "latencies in seconds: {crash}");
    assert!(text.contains("crash detect p95 ") && !text.contains(" ms, notice"), "stdout in the plots' unit: {text}");
    assert!(text.contains("lines        "), "{text}");
    assert!(!out.join("heatmap-false_alarm_rate.svg").exists());
}

#[test]
fn overhead_times_a_run_against_the_bare_replay_of_its_own_statements() {
    let o = rehearsal(&["bench", "scenarios/quickstart.toml", "--overhead", "--repeat", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let statements: u64 = summary_field(&text, "workload").split_whitespace().next().unwrap().parse().unwrap();
    assert!(statements > 1000, "{text}");
    let ms = |label: &str| summary_field(&text, label).split_whitespace().next().unwrap().parse::<f64>().unwrap();
    let (run_ms, floor_ms) = (ms("run"), ms("floor"));
    let ratio: f64 = summary_field(&text, "ratio").split('x').next().unwrap().parse().unwrap();
    assert!(run_ms > 0.0 && floor_ms > 0.0 && (ratio - run_ms / floor_ms).abs() < 0.05, "{text}");
}

/// Issue 43: a 64-musician contention grid whose conductor gives up on SQLITE_BUSY says so in
/// the terminal, bench.csv and the throughput plot, and its throughput leaves those runs out.
#[test]
fn a_collapsing_fleet_is_shown_collapsed_in_the_terminal_the_csv_and_the_plot() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("grid");
    let args =
        ["bench", "scenarios/faults/contention.toml", "--param", "tasks.count=4,64", "--seeds", "1..=3", "--out", out.to_str().unwrap()];
    let o = rehearsal(&args);
    let text = format!("{}{}", stdout(&o), stderr(&o));
    assert!(o.status.code().is_some_and(|c| c <= 1), "{text}");
    let rows = rows(&out);
    let at = |count: &str| rows.iter().find(|r| r["tasks.count"] == count).unwrap_or_else(|| panic!("no point {count}"));
    assert_eq!(at("4")["collapsed_runs"], "0", "{:?}", at("4"));
    // Seeds 1 and 3: the conductor ends after 4 SQLITE_BUSY on its heartbeat minutes in.
    assert_eq!(at("64")["collapsed_runs"], "2", "{:?}", at("64"));
    assert!(text.contains("COLLAPSED 2/3 (the conductor ended on SQLITE_BUSY or an I/O error; not in the throughput)"), "{text}");
    let svg = std::fs::read_to_string(out.join("lines-throughput.svg")).unwrap();
    assert!(svg.contains(">3 runs, 2 COLLAPSED</text>"), "{svg}");
}
