//! The fault kind `io_error` (docs/protocol.md C43): a session's statement fails with
//! SQLITE_IOERR at a protocol point. The statement does not run, the trace shows it failed,
//! and the session meets it as any failed statement: it ends there, its watchers with it, and
//! the conductor hands the task over to a successor that finishes it.

use rehearsal::input::scenario::Scenario;
use rehearsal::run::{run_scenario, RunOptions};
use rehearsal::vocab::{FaultKind, FaultName, Stmt, TaskState};

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
        faults: vec![FaultName::Crash, FaultName::IoError],
        keep_faults: false,
        jobs: 2,
        out: out.path().to_path_buf(),
        scratch: None,
        progress_every: 0,
        force: false,
        prefix: Default::default(),
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

fn search_options(faults: Vec<FaultName>, out: &std::path::Path) -> rehearsal::campaign::search::SearchOptions {
    rehearsal::campaign::search::SearchOptions {
        scenario: root().join("scenarios/quickstart.toml"),
        runs: 32,
        seed: 1,
        strict: false,
        protocol: None,
        variants: Vec::new(),
        faults,
        jobs: 2,
        out: out.to_path_buf(),
        scratch: None,
        progress: false,
        force: false,
    }
}

/// `search --faults io_error` places I/O errors (and nothing else), and they are judged: a
/// kept input's replay file holds `[[faults.io_error]]`, and running it fails the statement
/// there. Without `io_error` in `--faults` the search places none.
#[test]
fn search_places_io_errors_only_when_asked_and_they_strike() {
    let out = tempfile::tempdir().unwrap();
    let found = rehearsal::campaign::search::search(&search_options(vec![FaultName::IoError], out.path())).unwrap();
    let placed: Vec<FaultKind> = found.search.inputs.iter().flat_map(|i| i.faults.iter().map(|f| f.kind)).collect();
    assert!(!placed.is_empty() && placed.iter().all(|k| *k == FaultKind::IoError), "{placed:?}");
    assert!(found.search.rows.iter().all(|r| !r.violation.starts_with("harness:")), "every run judged");
    let corpus = std::fs::read_dir(out.path().join("corpus")).unwrap().map(|e| e.unwrap().path());
    let with_io_error = corpus.filter(|p| std::fs::read_to_string(p).unwrap().contains("[[faults.io_error]]")).collect::<Vec<_>>();
    let struck = with_io_error.iter().any(|path| {
        let tmp = tempfile::tempdir().unwrap();
        let options = RunOptions { scenario_path: path.clone(), seed: None, out_dir: Some(tmp.path().to_path_buf()), variants: Vec::new() };
        run_scenario(Scenario::load(path).unwrap(), &options).unwrap();
        trace(tmp.path()).iter().any(|r| r.detail.starts_with("disk I/O error"))
    });
    assert!(struck, "a kept input's I/O error fails its statement ({} corpus files with one)", with_io_error.len());
    let default = tempfile::tempdir().unwrap();
    let found = rehearsal::campaign::search::search(&search_options(FaultName::SEARCHED.to_vec(), default.path())).unwrap();
    assert!(found.search.inputs.iter().flat_map(|i| &i.faults).all(|f| f.kind != FaultKind::IoError));
}

fn run_pause_poll(variants: &[&str], out: &std::path::Path) -> rehearsal::run::RunSummary {
    let path = root().join("scenarios/faults/io-error-on-pause-poll.toml");
    let variants = variants.iter().map(|v| v.to_string()).collect();
    let options = RunOptions { scenario_path: path.clone(), seed: None, out_dir: Some(out.to_path_buf()), variants };
    run_scenario(Scenario::load(&path).unwrap(), &options).unwrap()
}

/// C43 ends a pause watcher whose poll failed, and its session reads that as 000's TIMEOUT: an
/// `error` over the conductor's approval. Under `retry-failed-reads` the watcher polls again a
/// second later (000 "Pause Watcher" 4: "Wait 10 seconds, repeat from step 1") and the session
/// resumes on the approval.
#[test]
fn a_failed_pause_poll_is_read_as_a_timeout_unless_reads_are_retried() {
    let seeds = tempfile::tempdir().unwrap();
    let summary = run_pause_poll(&[], seeds.path());
    assert!(summary.verdict.passed(), "the seeds' flaw is the scenario's expected one: {}", summary.render());
    let s1 = session("task-04.S1");
    let rows = trace(seeds.path());
    assert!(rows.iter().any(|r| r.event == "watcher_sql_failure" && r.detail.contains("disk I/O error")), "the watcher ends");
    assert!(rows.iter().any(|r| r.stmt == Some(Stmt::SetError) && r.place() == Some(s1)), "an error over the approval");
    assert!(!rows.iter().any(|r| r.event == "io_retry"));

    let retried = tempfile::tempdir().unwrap();
    let summary = run_pause_poll(&["retry-failed-reads"], retried.path());
    let violations = std::fs::read_to_string(retried.path().join("violations.csv")).unwrap();
    assert_eq!(violations.lines().count(), 1, "no violation, only the header: {violations}");
    assert!(!summary.verdict.passed(), "the expected flaws are gone: {}", summary.render());
    let rows = trace(retried.path());
    let failed = rows.iter().find(|r| r.detail.starts_with("disk I/O error")).expect("the fault strikes");
    let retry = rows.iter().find(|r| r.event == "io_retry").expect("a retry note");
    assert!(retry.seq > failed.seq && retry.detail.contains("read_task_state"), "{retry:?}");
    let next = rows.iter().find(|r| r.seq > retry.seq && r.stmt == Some(Stmt::ReadTaskState) && r.actor == failed.actor);
    assert!(next.is_some_and(|r| r.t_ms >= failed.t_ms + 1_000 && r.rows != "error"), "the same watcher reads again a second later");
    assert!(!rows.iter().any(|r| r.event == "watcher_sql_failure"));
    assert!(!rows.iter().any(|r| r.stmt == Some(Stmt::SetError) && r.place() == Some(s1)), "no error over the approval");
}
