//! Issue 31: the designer's figures of `rehearsal bench` — throughput, recovery and its causes,
//! runs cut off by the time limit counted apart and kept out of the quantiles — and the line
//! and stacked-bar pictures drawn from them.

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::{rehearsal, stderr, stdout};

/// A CSV file as one map (column → value) per row.
fn rows(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_string).collect();
    reader.records().map(|r| header.iter().cloned().zip(r.unwrap().iter().map(str::to_string)).collect()).collect()
}

fn number(row: &BTreeMap<String, String>, column: &str) -> f64 {
    row[column].parse::<f64>().unwrap_or_else(|_| panic!("{column} = {:?} in {row:?}", row[column]))
}

#[test]
fn a_grid_with_a_cut_off_point_counts_it_apart_and_measures_recovery_where_runs_finish() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("grid");
    // The scripted crash of task-01's first session comes at about 17 minutes: a 30-minute
    // limit cuts every run off before the task completes; 8 hours let every run finish.
    let o = rehearsal(&[
        "bench",
        "scenarios/faults/crash-between-state-and-message.toml",
        "--param",
        "run.sim_time_max_ms=1800000,28800000",
        "--seeds",
        "1..=2",
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = stdout(&o);
    // The cut-off point's runs fail liveness: exit 1 (issue 44, README's exit table).
    assert_eq!(o.status.code(), Some(1), "{text}{}", stderr(&o));
    let points = rows(&out.join("bench.csv"));
    let (cut, whole) = (&points[0], &points[1]);
    assert_eq!((cut["finished_runs"].as_str(), cut["cut_off_runs"].as_str()), ("0", "2"), "{cut:?}");
    assert_eq!((whole["finished_runs"].as_str(), whole["cut_off_runs"].as_str()), ("2", "0"), "{whole:?}");
    // Cut-off runs enter no quantile and no finished throughput; their own throughput is apart.
    for column in ["tasks_per_sim_hour", "crash_detect_ms_p95", "recovery_ms_p50", "review_wait_ms_p50", "makespan_ms_p50"] {
        assert_eq!(cut[column], "", "{column}: {cut:?}");
    }
    assert_eq!(cut["tasks_per_sim_hour_cut_off"], "0.00", "no task completes in 30 minutes");
    assert_ne!(cut["status"], "pass");
    assert!(text.contains("run.sim_time_max_ms=1800000: ") && text.contains("cut off by the time limit 2/2"), "{text}");
    // Where runs finish: one task in about an hour and a half, one recovery per run, after
    // the crash was detected (the successor claims after the declaration).
    let rate = number(whole, "tasks_per_sim_hour");
    assert!((0.5..1.0).contains(&rate), "{rate}");
    assert_eq!(whole["tasks_per_sim_hour_cut_off"], "");
    assert_eq!(whole["recoveries"], "2");
    assert!(number(whole, "recovery_ms_p50") > number(whole, "crash_detect_ms_p50"), "{whole:?}");
    assert!(number(whole, "review_wait_ms_p50") > 0.0 && number(whole, "first_claim_ms_p50") > 0.0, "{whole:?}");
    assert!(number(whole, "review_queue_len_max") >= 1.0, "{whole:?}");
    // causes.csv: the recovery's mean split into its causes, which sum to it.
    let causes = rows(&out.join("causes.csv"));
    let recovery = causes.iter().find(|r| r["point"] == "p001" && r["measurement"] == "recovery_ms").expect("a recovery row");
    assert_eq!(recovery["n"], "2");
    let parts: f64 = recovery
        .iter()
        .filter(|(k, _)| k.ends_with("_ms") && *k != "mean_ms" && !k.contains('.'))
        .map(|(_, v)| v.parse::<f64>().unwrap())
        .sum();
    assert!((parts - number(recovery, "mean_ms")).abs() <= 13.0, "the causes sum to the mean, to rounding: {recovery:?}");
    assert!(number(recovery, "threshold_ms") > 0.0 && number(recovery, "bootstrap_ms") > 0.0, "{recovery:?}");
    let cut_recovery = causes.iter().find(|r| r["point"] == "p000" && r["measurement"] == "recovery_ms").unwrap();
    assert_eq!((cut_recovery["n"].as_str(), cut_recovery["cut_off_runs"].as_str()), ("0", "2"));
    // The pictures: a line chart per metric over the one parameter, the cut-off point hollow,
    // and the stacked bars of where recovery went.
    let throughput = std::fs::read_to_string(out.join("lines-throughput.svg")).unwrap();
    assert_eq!(throughput.matches("class=\"point\"").count(), 2, "{throughput}");
    assert!(throughput.contains("fill=\"#fff\" stroke=") && throughput.contains(">2 runs, 2 cut off</text>"), "{throughput}");
    let bars = std::fs::read_to_string(out.join("causes-recovery_ms.svg")).unwrap();
    assert!(bars.contains(">heartbeat threshold</text>") && bars.contains(">successor bootstrap</text>"), "{bars}");
    assert!(bars.contains(">2 runs cut off</text>") && bars.contains(">none</text>"), "{bars}");
}
