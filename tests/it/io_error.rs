//! The fault kind `io_error` (docs/protocol.md C43): a session's statement fails with
//! SQLITE_IOERR at a protocol point. The statement does not run, the trace shows it failed,
//! and the session meets it as any failed statement: it ends there, its watchers with it, and
//! the conductor hands the task over to a successor that finishes it.

use rehearsal::input::scenario::Scenario;
use rehearsal::run::{run_scenario, RunOptions};
use rehearsal::vocab::{Stmt, TaskState};

use crate::support::{root, session, trace};

#[test]
fn an_io_error_on_a_state_write_ends_the_session_and_a_successor_finishes_the_task() {
    let tmp = tempfile::tempdir().unwrap();
    let path = root().join("scenarios/faults/io-error-on-review-state.toml");
    let options = RunOptions { scenario_path: path.clone(), seed: None, out_dir: Some(tmp.path().to_path_buf()), variants: Vec::new() };
    let summary = run_scenario(Scenario::load(&path).unwrap(), &options).unwrap();
    assert!(summary.verdict.passed(), "{}", summary.render());
    assert_eq!(summary.tasks_complete, 1, "{}", summary.render());
    let rows = trace(tmp.path());
    let s1 = session("task-01.S1");
    let failed = rows.iter().find(|r| r.stmt == Some(Stmt::SetNeedsReview) && r.place() == Some(s1)).expect("S1 tries to set needs_review");
    assert_eq!(failed.rows, "error", "{failed:?}");
    assert!(failed.observed.contains("result=sqlite_error") && failed.detail.starts_with("disk I/O error"), "{failed:?}");
    assert_eq!(failed.state_after, None, "the statement did not run");
    // Its review request went first (000 "Terminal Write Atomicity"), and nothing of S1 after
    // the failure but the end of the session.
    let request = rows.iter().position(|r| r.stmt == Some(Stmt::SendReviewRequest) && r.place() == Some(s1));
    assert!(request.is_some_and(|at| rows[at].seq < failed.seq), "the message is the recovery record");
    let after: Vec<&str> =
        rows.iter().filter(|r| r.seq > failed.seq && r.place() == Some(s1) && r.is_sql()).map(|r| r.statement.as_str()).collect();
    assert_eq!(after, Vec::<&str>::new(), "S1 and its watchers write nothing after the failure");
    assert!(rows.iter().any(|r| r.event == "session_sql_failure" && r.place() == Some(s1)));
    let s2 = session("task-01.S2");
    let done = rows.iter().find(|r| r.stmt == Some(Stmt::MarkComplete) && r.place() == Some(s2)).expect("S2 completes");
    assert_eq!(done.state_after, Some(TaskState::Complete));
}

/// `explore crashes --io-errors` places the same fault as the scenario's `[[faults.io_error]]`:
/// at S1's first `set_needs_review`, its run is the shipped scenario's run byte for byte.
#[test]
fn explore_places_an_io_error_that_is_the_scenarios_own() {
    let out = tempfile::tempdir().unwrap();
    let mut options = rehearsal::campaign::explore::ExploreOptions {
        scenario: root().join("scenarios/faults/io-error-on-review-state.toml"),
        seed: None,
        protocol: None,
        variants: Vec::new(),
        sessions: vec![rehearsal::campaign::explore::parse_session("task-01.S1").unwrap()],
        points: Vec::new(),
        hangs: false,
        io_errors: true,
        keep_faults: false,
        jobs: 2,
        out: out.path().to_path_buf(),
        scratch: None,
        progress_every: 0,
        force: false,
    };
    let listed = rehearsal::campaign::explore::list_points(&options).unwrap();
    let point = listed.lines().find(|l| l.contains(",task-01.S1,set_needs_review,1,")).expect("S1 sets needs_review");
    options.points = vec![point.split(',').next().unwrap().parse().unwrap()];
    let exploration = rehearsal::campaign::explore::explore_crashes(&options).unwrap();
    let placed: Vec<(&str, &str)> = exploration.rows.iter().map(|r| (r.fault.as_str(), r.when.as_str())).collect();
    assert_eq!(placed, [("crash", "before"), ("crash", "after"), ("io-error", "before"), ("io-error", "after")]);
    let golden = std::fs::read_to_string(root().join("tests/golden/hashes.tsv")).unwrap();
    let shipped = golden.lines().find(|l| l.starts_with("scenarios/faults/io-error-on-review-state.toml\t")).expect("a golden row");
    assert_eq!(shipped.split('\t').nth(2), Some(exploration.rows[2].trace_hash.as_str()), "the scenario's own run");
}
