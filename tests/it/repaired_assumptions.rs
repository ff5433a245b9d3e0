//! The repaired protocol's assumptions (docs/repaired-protocol.md, issue 28): each names a
//! fault outside the proof's model, shown by a shipped run under the profile; the same run with
//! the fault inside the model passes, so the assumption is what the run needs and no more.

use crate::support::*;

fn run_text(text: &str, dir: &std::path::Path, name: &str) -> (Option<i32>, String) {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    let out = dir.join(name);
    let o = rehearsal(&["run", path.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    (o.status.code(), format!("{}{}", stdout(&o), stderr(&o)))
}

#[test]
fn a2_a_hang_as_long_as_the_staleness_threshold_is_handed_over_and_a_shorter_one_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let shipped = std::fs::read_to_string(scenario("proof/assumption-hang-at-staleness.toml")).unwrap();
    assert!(shipped.contains("profile = \"repaired\""), "the assumption is shown under the profile");
    let (code, text) = run_text(&shipped, dir.path(), "at-threshold");
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("PASS with known: no-false-stale ×1"), "{text}");
    // The same hang 60 s shorter ends while the heartbeat is still fresh enough: no hand-over,
    // and with nothing expected every rule holds.
    let shorter = shipped.replace("duration_ms = 540000", "duration_ms = 480000");
    assert_ne!(shorter, shipped, "the hang's length is in the file");
    let strict = shorter.replace("violations = [\"no-false-stale\"]", "violations = []");
    let (code, text) = run_text(&strict, dir.path(), "shorter");
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("verdict      PASS\n"), "{text}");
}
