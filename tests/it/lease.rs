//! Variant `lease-self-check` (issue 28, sim/actors/lease.rs): a session woken from a hang past
//! its lease ends itself at once, writing nothing, before the conductor can hand its task over
//! (what was assumption A2 of docs/repaired-protocol.md); a shorter hang leaves it working.
//! `scenarios/proof/hang-at-staleness.toml`: task-04's first session hangs for the staleness
//! threshold (540 s) right after its claim.

use crate::support::*;

const SESSION: &str = "a81d9129-9223-430f-a763-1f2ae67d62a3";
const HANG_FROM_MS: i64 = 34_475;
const WAKE_MS: i64 = 574_475;

/// The shipped demo with its `[expect]` table removed (nothing expected: every rule judged) and
/// its hang set to `hang_ms`; run with `args`. The printed text and the trace.
fn run_demo(dir: &std::path::Path, name: &str, hang_ms: i64, args: &[&str]) -> (Option<i32>, String, String) {
    let shipped = std::fs::read_to_string(scenario("proof/hang-at-staleness.toml")).unwrap();
    let strict = shipped[..shipped.find("[expect]").expect("the demo expects its flaw")].to_string();
    let text = strict.replace("duration_ms = 540000", &format!("duration_ms = {hang_ms}"));
    assert!(text.contains(&format!("duration_ms = {hang_ms}")), "the hang's length is in the file");
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    let out = dir.join(name);
    let mut all = vec!["run", path.to_str().unwrap(), "--out", out.to_str().unwrap()];
    all.extend(args);
    let o = rehearsal(&all);
    let trace = std::fs::read_to_string(out.join("trace.csv")).unwrap();
    (o.status.code(), format!("{}{}", stdout(&o), stderr(&o)), trace)
}

/// (t_ms, actor, event) of every trace row of the session's actors after `from_ms`, read by
/// rehearsal's own trace reader from the run folder `out`.
fn session_rows(out: &std::path::Path, from_ms: i64) -> Vec<(i64, String, String)> {
    trace(out)
        .into_iter()
        .filter(|r| r.session == SESSION && r.actor.is_some() && r.t_ms > from_ms)
        .map(|r| (r.t_ms, r.actor_text(), r.event))
        .collect()
}

#[test]
fn a_session_woken_past_its_lease_ends_itself_without_a_write_before_the_hand_over() {
    let dir = tempfile::tempdir().unwrap();
    let (code, text, trace) = run_demo(dir.path(), "lease", 540_000, &["--protocol", "repaired"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("verdict      PASS\n"), "nothing expected, every rule holds: {text}");
    // From the hang on, the session's only rows are its end at the instant it woke: no
    // statement, no file, and the truth says it ended there (not crashed, not alive).
    let rows = session_rows(&dir.path().join("lease"), HANG_FROM_MS);
    let events: Vec<&str> = rows.iter().map(|(_, _, e)| e.as_str()).collect();
    assert_eq!(events, ["lease_expired", "truth", "killed"], "{rows:?}");
    assert!(rows.iter().all(|(t, actor, _)| *t == WAKE_MS && actor == "task-04.S1"), "{rows:?}");
    let note = trace.lines().find(|l| l.contains(",lease_expired,")).unwrap();
    assert!(note.contains("lease expired: heartbeat age 542.3 s >= lease 536.0 s; ending without a write"), "{note}");
    assert!(trace.contains(&format!(",ended session_id={SESSION}")), "the oracle's truth sees it end");
}

#[test]
fn without_the_lease_the_woken_session_is_handed_over_alive() {
    let dir = tempfile::tempdir().unwrap();
    let without = repaired_without("lease-self-check");
    let args: Vec<&str> = without.iter().map(String::as_str).collect();
    let (code, text, trace) = run_demo(dir.path(), "without", 540_000, &args);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("verdict      FAIL: no-false-stale"), "{text}");
    assert!(!trace.contains("lease_expired"), "the lease is the variant's");
    // The shipped file expects exactly that of the profile without the lease.
    let o = rehearsal(&[
        "run",
        scenario("proof/hang-at-staleness.toml").to_str().unwrap(),
        "--out",
        dir.path().join("shipped").to_str().unwrap(),
    ]);
    assert!(stdout(&o).contains("no-false-stale"), "{}", stdout(&o));
}

#[test]
fn a_hang_shorter_than_the_lease_leaves_the_session_working() {
    let dir = tempfile::tempdir().unwrap();
    // 480 s: the heartbeat is 482 s old when the session wakes, under the 536 s lease.
    let (code, text, trace) = run_demo(dir.path(), "near-miss", 480_000, &["--protocol", "repaired"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("verdict      PASS\n"), "{text}");
    assert!(!trace.contains("lease_expired"), "a session inside its lease goes on");
    // Past the 480 s refresh threshold on its own clock, it writes a heartbeat first.
    let refresh = trace.lines().find(|l| l.contains(",lease_refresh,")).expect("a heartbeat first");
    assert!(refresh.starts_with(&format!("{},", HANG_FROM_MS + 480_000)) && refresh.contains("heartbeat 482.3 s old"), "{refresh}");
    let rows = session_rows(&dir.path().join("near-miss"), HANG_FROM_MS + 480_000);
    assert!(rows.iter().any(|(_, actor, e)| actor == "task-04.S1" && e == "sql"), "it writes after it wakes");
    let completed = trace.lines().any(|l| l.contains(&format!("task-04.S1,{SESSION},sql,mark_complete,1,")));
    assert!(completed, "the first session completes its task");
}

#[test]
fn proof_seeds_a_lease_once_failed_pass() {
    let dir = tempfile::tempdir().unwrap();
    // proof-ci-smoke 17: paused for a review, the session's own heartbeat count passed the
    // lease while the conductor's answer kept comms.db's young (no refresh by the session's
    // clock then). proof-ci-smoke 38: a receipt sent just before a 9-minute hang ran when it
    // ended, moved the cursor past an approval, and the session ended itself (no `:lease_until`
    // on the receipt then): messages-seen-once.
    for (suite, seed) in [("proof-ci-smoke.toml", "17"), ("proof-ci-smoke.toml", "38")] {
        let path = root().join("scenarios/proof").join(suite);
        let out = dir.path().join(format!("{suite}-{seed}"));
        let o = rehearsal(&["run", path.to_str().unwrap(), "--seed", seed, "--protocol", "repaired", "--out", out.to_str().unwrap()]);
        let text = format!("{}{}", stdout(&o), stderr(&o));
        assert!(text.contains("verdict      PASS\n"), "{suite} seed {seed}: {text}");
        let trace = std::fs::read_to_string(out.join("trace.csv")).unwrap();
        assert!(trace.contains(",lease_refresh,"), "{suite} seed {seed}: the lease is in force");
    }
}
