//! The repaired protocol (issue 28): the profile passes seeds of the proof suites with every
//! rule on (`[expect] allowed = []`), and a change taken out of it makes a known run fail
//! (necessity). Few runs, so CI time stays small; docs/repaired-protocol.md has the full
//! proof (`rehearsal findings --repaired`).

use crate::support::*;

fn run(args: &[&str]) -> (Option<i32>, String) {
    let o = rehearsal(args);
    (o.status.code(), format!("{}{}", stdout(&o), stderr(&o)))
}

#[test]
fn the_repaired_profile_passes_seeds_of_the_strict_proof_suites() {
    let dir = tempfile::tempdir().unwrap();
    // Seeds that pass every rule in this build (docs/repaired-protocol.md lists the others).
    for (suite, seed) in [("proof-ci-smoke.toml", "6"), ("proof-ci-smoke.toml", "17"), ("proof-random-faults.toml", "3")] {
        let path = root().join("scenarios/proof").join(suite);
        let out = dir.path().join(format!("{suite}-{seed}"));
        let (code, text) = run(&["run", path.to_str().unwrap(), "--seed", seed, "--protocol", "repaired", "--out", out.to_str().unwrap()]);
        assert_eq!(code, Some(0), "{suite} seed {seed}: {text}");
        assert!(text.contains("verdict      PASS\n"), "nothing allowed, nothing found: {text}");
    }
}

#[test]
fn without_the_durable_cursor_a_successor_handles_its_predecessors_approval_again() {
    let dir = tempfile::tempdir().unwrap();
    let demo = scenario("faults/crash-after-answer.toml");
    let demo = demo.to_str().unwrap();
    // The whole profile: the expected messages-seen-once does not occur, so the run fails.
    let out = dir.path().join("repaired");
    let (code, text) = run(&["run", demo, "--protocol", "repaired", "--out", out.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("expected violation(s) did not occur: messages-seen-once"), "{text}");
    // The profile's other changes without durable-cursor: the approval is handled twice.
    let out = dir.path().join("without");
    let mut args = vec!["run", demo, "--out", out.to_str().unwrap()];
    for v in ["fencing", "replies-cite-request", "heartbeat-until-exit", "patient-relaunch", "release-stale"] {
        args.extend(["--variant", v]);
    }
    let (code, text) = run(&args);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("PASS with known: messages-seen-once ×1"), "{text}");
}

#[test]
fn without_patience_the_conductor_relaunches_while_a_hung_first_session_may_still_claim() {
    let dir = tempfile::tempdir().unwrap();
    let demo = scenario("faults/long-hang-before-claim.toml");
    let demo = demo.to_str().unwrap();
    let out = dir.path().join("repaired");
    let (code, text) = run(&["run", demo, "--protocol", "repaired", "--out", out.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("expected violation(s) did not occur: no-relaunch-while-claim-pending"), "{text}");
    let out = dir.path().join("without");
    let mut args = vec!["run", demo, "--out", out.to_str().unwrap()];
    for v in ["fencing", "replies-cite-request", "heartbeat-until-exit", "durable-cursor", "release-stale"] {
        args.extend(["--variant", v]);
    }
    let (code, text) = run(&args);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("PASS with known: no-relaunch-while-claim-pending ×1"), "{text}");
}
