//! A sweep's summary keeps apart what it swept together: one latency table per scenario and
//! variant; and its stdout says how many pairs failed in one line that points at failures/,
//! instead of a line per failure.

use crate::support::{rehearsal, stderr, stdout};

#[test]
fn latency_is_tabled_per_scenario_and_variant_and_failures_are_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sweep");
    let o = rehearsal(&[
        "sweep",
        "scenarios/examples/bootstrap.toml",
        "scenarios/faults/zombie.toml",
        "--seeds",
        "21..=23",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "zombie fails\n{}{}", stdout(&o), stderr(&o));
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("### `scenarios/examples/bootstrap.toml`, variant default"), "{md}");
    assert!(md.contains("### `scenarios/faults/zombie.toml`, variant default"), "{md}");
    assert!(!md.contains("over all runs"), "no pooled table: {md}");
    let printed = stdout(&o);
    let lines: Vec<&str> = printed.lines().filter(|l| l.contains("zombie")).collect();
    assert_eq!(lines.len(), 1, "one line for the failures: {printed}");
    assert!(lines[0].starts_with("failures     ") && lines[0].contains(" of 6 pairs") && lines[0].contains("failures"), "{printed}");
    assert!(!printed.contains("rehearsal run"), "no replay command per failure on stdout: {printed}");
}

/// junit.xml (quick-junit) gives each case its real wall-clock time, so CI dashboards show
/// durations; results.csv, compared byte for byte, holds none and stays identical.
#[test]
fn junit_cases_carry_their_wall_clock_time_and_results_csv_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    let sweep = |name: &str| {
        let out = tmp.path().join(name);
        let o = rehearsal(&["sweep", "scenarios/examples/bootstrap.toml", "--seeds", "1..=2", "--quiet", "--out", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        out
    };
    let (a, b) = (sweep("a"), sweep("b"));
    let junit = std::fs::read_to_string(a.join("junit.xml")).unwrap();
    let times: Vec<f64> = junit.split("time=\"").skip(1).filter_map(|rest| rest.split('"').next()?.parse().ok()).collect();
    assert_eq!(times.len(), 2, "{junit}");
    assert!(times.iter().all(|t| *t > 0.0), "every case has a duration: {junit}");
    assert_eq!(std::fs::read(a.join("results.csv")).unwrap(), std::fs::read(b.join("results.csv")).unwrap());
}
