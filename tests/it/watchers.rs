//! 000 Key Principles 6a, "Watcher continuity": "A background or pause watcher MUST always be
//! running while the task is active. When any watcher exits (message, state change, timeout),
//! immediately relaunch the appropriate replacement." Checked from traces: a watcher actor is
//! alive from its first row to its end row (`exit`, `killed`, `killed_with_parent`); between a
//! session's claim and its terminal write no stretch longer than two background polls has
//! neither a background nor a pause watcher alive. The one exception is the exit itself: 000
//! Clean Exit Protocol step 2 stops the watchers before the HANDOFF, the report and the final
//! message (docs/protocol.md D14), and a completion ends the same way. A session asked
//! to exit ends with its final message (docs/protocol.md D16).

use std::collections::BTreeMap;

use rehearsal::trace::trace_reader::TraceRecord;
use rehearsal::vocab::{ActorName, SessionPlace, Stmt, TaskState};

use crate::support::{fault_free_scenarios, on_two_threads, rehearsal, run_into, session, stdout, trace};

/// 000 Background Watcher: one poll every 15 s (the scenarios' `timing.background_poll_ms`).
const POLL_MS: i64 = 15_000;
const GAP_MAX_MS: i64 = 2 * POLL_MS;

/// What a session may still do once its last watcher is gone: read the conductor's answer,
/// and the exit's own writes (000 Completion Flow 5, Clean Exit Protocol 3-7, the 5th
/// failure's final message and `exited`), and the heartbeat that closes a step whose last agent
/// has just returned when the hand-off is decided (000 "9. Begin Execution": a heartbeat at
/// each step boundary; `close_finished_step`, issue 27).
const EXIT_PHASE: [Stmt; 8] = [
    Stmt::Heartbeat,
    Stmt::ReadNewConductorMessages,
    Stmt::ReadLatestConductorMessage,
    Stmt::ResumeWorking,
    Stmt::SendCompletion,
    Stmt::MarkComplete,
    Stmt::SendHandoff,
    Stmt::MarkExited,
];

fn is_end(row: &TraceRecord) -> bool {
    matches!(row.event.as_str(), "exit" | "killed" | "killed_with_parent")
}

/// Per session: the longest stretch without a live watcher between its claim and its terminal
/// write (or its end), the exit phase aside, as (length, from, to).
fn watcherless_stretches(rows: &[TraceRecord]) -> BTreeMap<SessionPlace, (i64, i64, i64)> {
    let mut claims: BTreeMap<SessionPlace, i64> = BTreeMap::new();
    let mut terminal: BTreeMap<SessionPlace, i64> = BTreeMap::new();
    let mut ended: BTreeMap<SessionPlace, i64> = BTreeMap::new();
    let mut watchers: BTreeMap<ActorName, (i64, Option<i64>)> = BTreeMap::new();
    for row in rows {
        match row.actor {
            Some(ActorName::Session(place)) => {
                if row.stmt == Some(Stmt::ClaimTask) && row.rows == "1" {
                    claims.entry(place).or_insert(row.t_ms);
                }
                if matches!(row.stmt, Some(Stmt::MarkComplete | Stmt::MarkExited)) && row.rows == "1" {
                    terminal.entry(place).or_insert(row.t_ms);
                }
                // Asked to exit, a session leaves the row `exit_requested`: its final message
                // is its last write (docs/protocol.md D16).
                if row.stmt == Some(Stmt::SendHandoff) && row.state_after == Some(TaskState::ExitRequested) {
                    terminal.entry(place).or_insert(row.t_ms);
                }
                if is_end(row) {
                    ended.insert(place, row.t_ms);
                }
            }
            Some(name @ ActorName::Watcher(..)) => {
                let alive = watchers.entry(name).or_insert((row.t_ms, None));
                if is_end(row) {
                    alive.1 = Some(row.t_ms);
                }
            }
            _ => {}
        }
    }
    let mut worst = BTreeMap::new();
    for (place, claim_ms) in claims {
        let end_ms = terminal.get(&place).or(ended.get(&place)).copied().unwrap_or(i64::MAX);
        let mut alive: Vec<(i64, i64)> = watchers
            .iter()
            .filter(|(name, _)| name.place() == Some(place))
            .map(|(_, (from, to))| (*from, to.unwrap_or(i64::MAX)))
            .collect();
        alive.sort();
        let last_watcher_end = alive.iter().map(|(_, to)| *to).filter(|to| *to <= end_ms).max();
        // The exit phase: from the last watcher's end to the terminal write, if the session did
        // nothing in it but the exit (no subagent but the one it stops, 000 Clean Exit Protocol
        // 1; no other statement).
        let exit_from = last_watcher_end.filter(|from| {
            terminal.contains_key(&place)
                && rows.iter().filter(|r| r.t_ms > *from && r.t_ms <= end_ms && r.place() == Some(place)).all(|r| {
                    (!matches!(r.actor, Some(ActorName::Subagent(..))) || is_end(r))
                        && (r.actor != Some(ActorName::Session(place)) || !r.is_sql() || r.stmt.is_some_and(|s| EXIT_PHASE.contains(&s)))
                })
        });
        let until = exit_from.unwrap_or(end_ms);
        let (mut covered_to, mut longest) = (claim_ms, (0, claim_ms, claim_ms));
        for (from, to) in alive {
            if from > covered_to && covered_to < until {
                let gap_end = from.min(until);
                if gap_end - covered_to > longest.0 {
                    longest = (gap_end - covered_to, covered_to, gap_end);
                }
            }
            covered_to = covered_to.max(to);
        }
        if covered_to < until && until != i64::MAX && until - covered_to > longest.0 {
            longest = (until - covered_to, covered_to, until);
        }
        worst.insert(place, longest);
    }
    worst
}

/// Asserts the continuity of every claiming session; returns how many it checked.
fn assert_continuity(label: &str, rows: &[TraceRecord]) -> usize {
    let stretches = watcherless_stretches(rows);
    for (place, (ms, from, to)) in &stretches {
        eprintln!("{label} {}.{}: longest stretch without a watcher {ms} ms (t={from}..{to})", place.task_id(), place.label());
        assert!(*ms <= GAP_MAX_MS, "{label}: {}.{} ran {ms} ms without a watcher, from t={from} to t={to}", place.task_id(), place.label());
    }
    stretches.len()
}

#[test]
fn a_watcher_runs_from_claim_to_exit_in_every_fault_free_scenario() {
    let scenarios = fault_free_scenarios();
    let tmp = tempfile::tempdir().unwrap();
    let traces = on_two_threads(scenarios.len(), |i| {
        let out = tmp.path().join(format!("r{i}"));
        run_into(&scenarios[i], &[], &out);
        trace(&out)
    });
    let sessions: usize = scenarios.iter().zip(&traces).map(|(scenario, rows)| assert_continuity(scenario, rows)).sum();
    assert!(sessions >= 20, "only {sessions} sessions claimed a task");
}

#[test]
fn a_watcher_that_exits_during_integration_is_relaunched_at_once() {
    // random-faults seed 2: task-05's S2 had its background watcher exit on a message at
    // t=5177655 ms while it integrated an agent, and none ran until its pause at t=5416970 ms.
    let tmp = tempfile::tempdir().unwrap();
    let o = rehearsal(&["run", "scenarios/faults/random-faults.toml", "--seed", "2", "--out", tmp.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let rows = trace(tmp.path());
    let s2 = session("task-05.S2");
    let (ms, from, to) = watcherless_stretches(&rows)[&s2];
    assert!(ms <= GAP_MAX_MS, "task-05.S2 ran {ms} ms without a watcher, t={from}..{to}");
}
