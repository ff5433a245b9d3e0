//! 002 "Valid State Transitions", checked from the traces of the shipped fault-free
//! scenarios: together they walk every transition of the table, and no musician moves a row
//! along a transition that is neither in the table, nor one of the three docs/protocol.md
//! D10 lists as implied by the text, nor a claim the guard admits, unless the
//! scenario declares the `allowed-transitions` violation it demonstrates.

use std::collections::{BTreeMap, BTreeSet};

// 002 "Valid State Transitions", the musician's eleven, and the three docs/protocol.md D10
// lists as implied by the text: `review_approved → complete` (000 Completion Flow 5),
// `needs_review → error` (a pause TIMEOUT, 000 Mode Transitions), the musician's side of the
// conductor's reply to a context warning (`review_failed` — "prepare handoff now", then the
// clean exit's `exited`). The oracle and coverage read the same tables.
use rehearsal::judging::oracle::rules::allowed_transitions::{IMPLIED_D10 as IMPLIED, TABLE_002 as TABLE};
use rehearsal::vocab::TaskState::{self, *};

use crate::support::{fault_free_scenarios, on_two_threads, run_into, trace};

/// The claims 002 "Guard Clause Rules" admits beyond the table's `watching → working` and
/// `fix_proposed → working`: "States that **allow** claiming: `watching`, `fix_proposed`,
/// `exit_requested`". A successor claims from `exit_requested` after its predecessor exited
/// on the conductor's request (docs/protocol.md D16).
const GUARD_CLAIMS: [(TaskState, TaskState); 1] = [(ExitRequested, Working)];

/// 000 "Clean Exit Protocol" 7 for a session the conductor asked to exit (docs/protocol.md D16):
/// `exited` after its final message, a way out of `exit_requested` 002's table lacks.
const ASKED_EXIT: (TaskState, TaskState) = (ExitRequested, Exited);

/// Every state change a musician session (or one of its watchers) made, with where: the
/// row's state before it is the last state any row of the trace left it in.
fn musician_transitions(dir: &std::path::Path) -> Vec<(TaskState, TaskState, String)> {
    let mut state: BTreeMap<String, TaskState> = BTreeMap::new();
    let mut moves = Vec::new();
    for row in trace(dir).into_iter().filter(|r| r.is_sql()) {
        let (Some(after), Some(task)) = (row.state_after, row.task_id()) else { continue };
        let before = state.insert(task.clone(), after);
        let by_musician = row.actor.is_some_and(|a| !a.is_conductor());
        if let (true, Some(before)) = (by_musician, before) {
            if before != after {
                moves.push((before, after, format!("t={} {} {}", row.t_ms, row.actor_text(), row.statement)));
            }
        }
    }
    moves
}

/// Whether the scenario's `[expect] violations` name `allowed-transitions`.
fn expects_allowed_transitions(scenario: &str) -> bool {
    let text = std::fs::read_to_string(crate::support::root().join(scenario)).unwrap();
    let doc: toml::Table = text.parse().unwrap();
    let expected = doc.get("expect").and_then(|e| e.get("violations")).and_then(|v| v.as_array());
    expected.is_some_and(|rules| rules.iter().any(|r| r.as_str() == Some("allowed-transitions")))
}

#[test]
fn the_fault_free_scenarios_walk_all_of_002s_table_and_nothing_else() {
    let scenarios = fault_free_scenarios();
    for expected in ["scenarios/transitions.toml", "scenarios/examples/fifth-failure.toml", "scenarios/quickstart.toml"] {
        assert!(scenarios.iter().any(|s| s == expected), "{expected} is a fault-free shipped scenario: {scenarios:?}");
    }
    let tmp = tempfile::tempdir().unwrap();
    let per_scenario = on_two_threads(scenarios.len(), |i| {
        let out = tmp.path().join(format!("r{i}"));
        let (code, stdout) = run_into(&scenarios[i], &[], &out);
        assert_eq!(code, 0, "{}: a fault-free shipped scenario passes\n{stdout}", scenarios[i]);
        (musician_transitions(&out), std::fs::read_to_string(out.join("violations.csv")).unwrap())
    });
    let mut seen: BTreeMap<(TaskState, TaskState), Vec<&str>> = BTreeMap::new();
    let mut outside = Vec::new();
    for (scenario, (moves, violations)) in scenarios.iter().zip(&per_scenario) {
        for (from, to, at) in moves {
            seen.entry((*from, *to)).or_default().push(scenario);
            let known = TABLE.contains(&(*from, *to))
                || IMPLIED.contains(&(*from, *to))
                || GUARD_CLAIMS.contains(&(*from, *to))
                || (*from, *to) == ASKED_EXIT;
            if known {
                continue;
            }
            // A scenario that demonstrates a flaw producing one declares it, and the oracle
            // reported this one (scenarios/faults/slow-clean-exit.toml).
            let reported = violations.contains(&format!("from `{from}` to `{to}`"));
            if expects_allowed_transitions(scenario) && reported {
                eprintln!("{scenario}: {from} → {to} ({at}), expected by the scenario");
            } else {
                outside.push(format!("{scenario}: {from} → {to} ({at})"));
            }
        }
    }
    assert!(outside.is_empty(), "musician transitions outside 002's table and the implied ones:\n{}", outside.join("\n"));
    let missing: Vec<String> = TABLE.iter().filter(|t| !seen.contains_key(t)).map(|(f, t)| format!("{f} → {t}")).collect();
    let coverage: Vec<String> = seen
        .iter()
        .map(|((f, t), s)| format!("{f} → {t}: {}", s.iter().copied().collect::<BTreeSet<_>>().into_iter().collect::<Vec<_>>().join(", ")))
        .collect();
    eprintln!("musician transitions walked by the fault-free scenarios:\n{}", coverage.join("\n"));
    assert!(missing.is_empty(), "never walked: {missing:?}\nwalked:\n{}", coverage.join("\n"));
}

#[test]
fn transitions_toml_alone_walks_the_review_and_error_transitions() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, stdout) = run_into("scenarios/transitions.toml", &[], tmp.path());
    assert_eq!(code, 0, "{stdout}");
    let walked: Vec<(TaskState, TaskState)> = musician_transitions(tmp.path()).into_iter().map(|(f, t, _)| (f, t)).collect();
    // In the order the scenario's comment tells them.
    let story = [
        (Watching, Working),
        (Working, NeedsReview),
        (FixProposed, NeedsReview),
        (ReviewFailed, NeedsReview),
        (ReviewApproved, Working),
        (Working, Error),
        (FixProposed, Working),
        (Working, NeedsReview),
        (ReviewApproved, NeedsReview),
        (ReviewApproved, Working),
        (Working, Complete),
    ];
    assert_eq!(walked, story);
}
