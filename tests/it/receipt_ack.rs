//! `durable-cursor` (issue 28): a message counts as handled at the commit of the receipt that
//! returned it (sim/world/receipt.rs), so a crash right after `send_receipt` loses no fact and
//! leaves no message "read by nobody"; a crash just before it leaves the message to the
//! successor, which handles it once.

use crate::support::*;
use rehearsal::trace::trace_reader::TraceRecord;
use rehearsal::vocab::Stmt;

/// One task, one checkpoint, under the profile: task-01's first session crashes `when`
/// (`before` or `after`) its first `send_receipt`, the read of the checkpoint's answer. No
/// `[expect]`, so every rule counts.
fn crash_at_receipt(when: &str, out: &std::path::Path) -> (Option<i32>, String) {
    let file = out.with_extension("toml");
    let text = format!(
        "description = \"crash {when} send_receipt\"\n[run]\nseed = 1\nsim_time_max_ms = 21_600_000\n\
         [context]\nagent_launch_pct = 1\nagent_return_pct = 1\nintegration_pct = 1\n\
         [[faults.crash]]\ntask = 1\nsession = 1\nat = \"{when}:send_receipt\"\n\
         [protocol]\nprofile = \"repaired\"\n\
         [tasks]\ncount = 1\nsteps = 2\nsubagents_per_step = 1\ncheckpoints = [1]\n"
    );
    std::fs::write(&file, text).unwrap();
    let o = rehearsal(&["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    (o.status.code(), format!("{}{}", stdout(&o), stderr(&o)))
}

/// The run of `crash_at_receipt`, which passes every rule (messages-seen-once too): its trace,
/// and the crash's row.
fn passing_crash_at_receipt(when: &str, dir: &std::path::Path) -> (Vec<TraceRecord>, TraceRecord) {
    let out = dir.join(when);
    let (code, text) = crash_at_receipt(when, &out);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("verdict      PASS\n"), "nothing allowed, nothing found: {text}");
    let rows = trace(&out);
    let crash = rows.iter().find(|r| r.event == "fault_crash").expect("the crash fired").clone();
    assert!(crash.detail.ends_with(&format!("crashed {when} `send_receipt`")), "{}", crash.detail);
    (rows, crash)
}

/// The `message_handled` facts of the trace: (time, session id, message id).
fn handled(rows: &[TraceRecord]) -> Vec<(i64, String, i64)> {
    rows.iter()
        .filter_map(|r| {
            let rest = r.observed.strip_prefix("message_handled session_id=")?;
            let (session, id) = rest.split_once(" message_id=")?;
            Some((r.t_ms, session.to_string(), id.parse().unwrap()))
        })
        .collect()
}

/// Every message handled exactly once: no id twice among the facts.
fn assert_each_once(facts: &[(i64, String, i64)]) {
    let mut ids: Vec<i64> = facts.iter().map(|f| f.2).collect();
    ids.sort();
    let before = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), before, "a message handled twice: {facts:?}");
}

#[test]
fn a_crash_right_after_the_receipt_keeps_the_facts_at_its_commit() {
    let dir = tempfile::tempdir().unwrap();
    let (rows, crash) = passing_crash_at_receipt("after", dir.path());
    let receipt = rows
        .iter()
        .find(|r| r.stmt == Some(Stmt::SendReceipt) && r.session == crash.session)
        .expect("the crashed session's receipt is in the trace");
    let facts = handled(&rows);
    let at_commit: Vec<_> = facts.iter().filter(|(t, s, _)| *t == receipt.t_ms && *s == crash.session).collect();
    assert!(!at_commit.is_empty(), "the receipt's messages are handled at its commit, t={} ms: {facts:?}", receipt.t_ms);
    // Observed at the commit, before the crash row: no crash after the statement loses them.
    let last_fact = rows.iter().rfind(|r| r.observed.starts_with("message_handled") && r.session == crash.session).unwrap();
    assert!(last_fact.seq < crash.seq, "facts at rows up to {}, crash at {}", last_fact.seq, crash.seq);
    assert_each_once(&facts);
}

#[test]
fn a_crash_just_before_the_receipt_leaves_the_message_to_the_successor_once() {
    let dir = tempfile::tempdir().unwrap();
    let (rows, crash) = passing_crash_at_receipt("before", dir.path());
    let facts = handled(&rows);
    assert!(facts.iter().all(|(_, s, _)| *s != crash.session), "the crashed session received nothing: {facts:?}");
    // The successor's first receipt returns what its predecessor never received, and the
    // facts are at that receipt's commit, attributed to the successor.
    let successor = rows.iter().find(|r| r.stmt == Some(Stmt::SendReceipt)).expect("the successor's receipt");
    assert_ne!(successor.session, crash.session);
    assert!(facts.iter().any(|(t, s, _)| *t == successor.t_ms && *s == successor.session), "{facts:?}");
    assert_each_once(&facts);
}
