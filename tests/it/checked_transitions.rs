//! Variant `checked-transitions` (issue 28, scenarios/variants/checked-transitions.sql): a
//! musician write decided on an earlier read (a pause TIMEOUT's `error`, an error report's,
//! a clean exit's `exited`) also checks the row's state, so the conductor's answer or exit
//! request that lands in between is acted on instead of overwritten. Three shipped demos, each
//! run with its `[expect]` removed (every rule judged): under the profile every rule holds and
//! the session notes `answer_first`; without the variant the write lands on the conductor's
//! state (allowed-transitions); without `release-stale` (a hand-over would keep `session_id`)
//! the checked write still refuses, and the session stops instead of guessing (`state_moved`).

use crate::support::*;

/// The demo `file` with its `[expect]` table removed, run with `args`: exit code, printed
/// text with the run's violations.csv, and task-01.S1's trace rows as (event, statement, rows
/// changed).
fn strict_run(dir: &std::path::Path, file: &str, args: &[String]) -> (Option<i32>, String, Vec<(String, String, String)>) {
    let shipped = std::fs::read_to_string(scenario(file)).unwrap();
    let strict = &shipped[..shipped.find("[expect]").expect("each demo expects the seeds' flaw")];
    let name = file.replace(['/', '.'], "-");
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, strict).unwrap();
    let out = dir.join(&name);
    let mut all = vec!["run".to_string(), path.to_string_lossy().into_owned(), "--out".to_string(), out.to_string_lossy().into_owned()];
    all.extend(args.iter().cloned());
    let o = rehearsal(&all.iter().map(String::as_str).collect::<Vec<_>>());
    let violations = std::fs::read_to_string(out.join("violations.csv")).unwrap_or_default();
    let rows = trace(&out)
        .into_iter()
        .filter(|r| r.actor_text() == "task-01.S1")
        .map(|r| (r.event.clone(), r.statement.clone(), r.rows.clone()))
        .collect();
    (o.status.code(), format!("{}{}{violations}", stdout(&o), stderr(&o)), rows)
}

fn profile() -> Vec<String> {
    vec!["--protocol".to_string(), "repaired".to_string()]
}

/// The statements task-01.S1 ran after its `answer_first` note, in order.
fn after_the_answer(rows: &[(String, String, String)]) -> Vec<String> {
    let at = rows.iter().position(|(event, _, _)| event == "answer_first").expect("S1 finds the conductor's state first");
    rows[at..].iter().filter(|(event, _, _)| event == "sql").map(|(_, stmt, _)| stmt.clone()).collect()
}

#[test]
fn a_timeout_that_crossed_the_approval_resumes_on_it_and_reports_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (code, text, rows) = strict_run(dir.path(), "faults/answer-during-timeout.toml", &profile());
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("verdict      PASS\n"), "{text}");
    // The TIMEOUT's state first, refused; no error message was sent; S1 takes the approval.
    let refused = rows.iter().find(|(_, stmt, _)| stmt == "set_error").expect("S1 tries the TIMEOUT's error");
    assert_eq!(refused.2, "0", "the checked write changed no row: {rows:?}");
    assert!(!rows.iter().any(|(_, stmt, _)| stmt == "send_error"), "no TIMEOUT report: {rows:?}");
    let next = after_the_answer(&rows);
    assert_eq!(next.iter().find(|s| *s == "resume_working").map(String::as_str), Some("resume_working"), "{next:?}");
}

#[test]
fn an_exit_that_crossed_a_fix_leaves_by_working_with_its_final_message_again() {
    let dir = tempfile::tempdir().unwrap();
    let (code, text, rows) = strict_run(dir.path(), "faults/answer-during-exit.toml", &profile());
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("verdict      PASS\n") && text.contains("tasks        1/1 complete"), "{text}");
    assert_eq!(after_the_answer(&rows)[..3], ["resume_working", "send_handoff", "mark_exited"], "{rows:?}");
}

#[test]
fn an_exit_request_that_crossed_an_error_report_is_an_exit_as_asked() {
    let dir = tempfile::tempdir().unwrap();
    let (code, text, rows) = strict_run(dir.path(), "faults/exit-request-during-report.toml", &profile());
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("verdict      PASS\n") && text.contains("tasks        1/1 complete"), "{text}");
    let next = after_the_answer(&rows);
    assert_eq!(next[next.len() - 3..], ["send_handoff", "mark_exited", "stop_hook_state"], "S1 exits as asked: {next:?}");
    assert!(!next.iter().any(|s| s == "set_error"), "{next:?}");
}

#[test]
fn without_the_variant_each_write_lands_on_the_conductors_state() {
    let dir = tempfile::tempdir().unwrap();
    let without = repaired_without("checked-transitions");
    for (file, overwritten) in [
        ("faults/answer-during-timeout.toml", "from `review_approved` to `error` with `set_error`"),
        ("faults/answer-during-exit.toml", "from `fix_proposed` to `exited` with `mark_exited`"),
        ("faults/exit-request-during-report.toml", "from `exit_requested` to `error` with `set_error`"),
    ] {
        let (code, text, _) = strict_run(dir.path(), file, &without);
        assert_eq!(code, Some(1), "{file}: {text}");
        assert!(text.contains("allowed-transitions") && text.contains(overwritten), "{file}: {text}");
    }
}

#[test]
fn without_release_stale_a_moved_row_stops_the_session_instead_of_reading_a_hand_over_as_an_answer() {
    let dir = tempfile::tempdir().unwrap();
    let (code, text, rows) = strict_run(dir.path(), "faults/answer-during-timeout.toml", &repaired_without("release-stale"));
    assert_eq!(code, Some(0), "the write is still refused, nothing is overwritten: {text}");
    assert!(rows.iter().any(|(event, _, _)| event == "state_moved"), "{rows:?}");
    assert!(!rows.iter().any(|(event, _, _)| event == "answer_first"), "{rows:?}");
    let moved = rows.iter().position(|(event, _, _)| event == "state_moved").unwrap();
    assert!(!rows[moved..].iter().any(|(event, _, _)| event == "sql"), "S1 writes nothing after it: {rows:?}");
}
