//! Budgets derived from the whole configuration (issue 28): a single crash while the conductor
//! reviews, with a conductor that does not poll during reviews, breaches no default budget.

use crate::support::*;

#[test]
fn a_single_crash_detected_after_a_review_breaches_no_derived_budget() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = rehearsal(&["run", "scenarios/faults/crash-between-state-and-message.toml", "--out", out.to_str().unwrap(), "-q"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    // The crash's detection waited for the conductor's review (the case this is about) and
    // went past the 540 s threshold + one poll + 4 statements the old budget allowed (582 s).
    let latency = std::fs::read_to_string(out.join("latency.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(latency.as_bytes());
    let header = rows.headers().unwrap().clone();
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    let crash: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).filter(|r| &r[0] == "crash_detect_ms").collect();
    assert_eq!(crash.len(), 1, "{latency}");
    let review_ms: i64 = crash[0][column("conductor_review_ms")].parse().unwrap();
    let total_ms: i64 = crash[0][column("total_ms")].parse().unwrap();
    assert!(review_ms > 0 && total_ms > 582_000, "{latency}");
    let violations = std::fs::read_to_string(out.join("violations.csv")).unwrap();
    assert!(!violations.contains("budget"), "{violations}");
    assert!(stdout(&o).contains("crash_detect_ms: p50 660398"), "{}", stdout(&o));
}
