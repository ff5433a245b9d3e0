//! Coverage on small synthetic event streams: each fault context, and the near misses that
//! must not count as one.

use super::*;
use crate::vocab::{ActorName, Stmt, TaskState};
use crate::world::db::RowSnapshot;
use crate::world::event::{Event, EventKind, Fact, SqlEvent, SqlResult, Who};

struct Run {
    observer: CoverageObserver,
}

fn row(state: &str, owner: &str) -> Option<RowSnapshot> {
    Some(RowSnapshot { state: state.parse().unwrap(), session_id: owner.into(), retry_count: 0, heartbeat_age_s: Some(0.0) })
}

impl Run {
    fn new() -> Run {
        Run { observer: CoverageObserver::default() }
    }

    fn event(&mut self, t_ms: i64, actor: &str, session: &str, kind: EventKind) -> &mut Run {
        let who = Who::Actor(ActorName::parse(actor).expect("an actor name"));
        self.observer.on_event(&Event { t_ms, who, session: session.into(), kind });
        self
    }

    fn fact(&mut self, t_ms: i64, fact: Fact) -> &mut Run {
        self.event(t_ms, "conductor", "conductor-session", EventKind::Truth(fact))
    }

    fn launch(&mut self, t_ms: i64, label: &str, sid: &str) -> &mut Run {
        self.fact(t_ms, Fact::Launched { at_ms: t_ms, label: label.into(), session_id: sid.into(), task_id: "task-01".into() })
    }

    fn sql(&mut self, t_ms: i64, actor: &str, sid: &str, stmt: Stmt, result: SqlResult, moved: Option<(&str, &str)>) -> &mut Run {
        let rows = match result {
            SqlResult::Rows(n) => n,
            _ => 0,
        };
        let sql = SqlEvent {
            stmt,
            task_id: "task-01".into(),
            result,
            rows_affected: rows,
            before: moved.and_then(|(from, _)| row(from, sid)),
            after: moved.and_then(|(_, to)| row(to, sid)),
            message: None,
            more_messages: Vec::new(),
            other_rows: Vec::new(),
            polled: Vec::new(),
            params_text: Default::default(),
        };
        self.event(t_ms, actor, sid, EventKind::Sql(Box::new(sql)))
    }

    /// A write by `actor` that moved task-01 from `from` to `to`.
    fn moves(&mut self, t_ms: i64, actor: &str, sid: &str, from: &str, to: &str) -> &mut Run {
        self.sql(t_ms, actor, sid, Stmt::SetTaskState, SqlResult::Rows(1), Some((from, to)))
    }

    /// The contexts counted for `writer FROM->TO`.
    fn contexts(&self, writer: Writer, from: TaskState, to: TaskState) -> Vec<&'static str> {
        let coverage = self.observer.coverage();
        assert_eq!(coverage.count(&Item::Transition { writer, from, to, context: None }), 1, "counted once in any context");
        Context::ALL
            .into_iter()
            .filter(|c| coverage.count(&Item::Transition { writer, from, to, context: Some(*c) }) > 0)
            .map(Context::as_str)
            .collect()
    }
}

use TaskState::{FixProposed, NeedsReview, Watching, Working};

#[test]
fn a_successor_claim_after_a_crash_counts_after_crash_and_after_relaunch() {
    let mut run = Run::new();
    run.launch(0, "S1", "s1").fact(100, Fact::Crashed { session_id: "s1".into(), why: "fault".into() });
    run.moves(200, "conductor", "conductor-session", "working", "fix_proposed").launch(300, "S2", "s2");
    run.moves(400, "task-01.S2", "s2", "fix_proposed", "working");
    assert_eq!(run.contexts(Writer::Conductor, Working, FixProposed), ["after-crash"]);
    assert_eq!(run.contexts(Writer::Musician, FixProposed, Working), ["after-crash", "after-relaunch"]);
}

#[test]
fn a_crash_of_the_writer_itself_or_later_is_no_context() {
    let mut run = Run::new();
    run.launch(0, "S1", "s1").moves(50, "task-01.S1", "s1", "watching", "working");
    run.fact(100, Fact::Crashed { session_id: "s1".into(), why: "fault".into() });
    assert_eq!(run.contexts(Writer::Musician, Watching, Working), Vec::<&str>::new());
}

#[test]
fn hangs_count_during_for_others_and_after_for_the_writer() {
    let mut run = Run::new();
    run.launch(0, "S1", "s1").launch(0, "S2", "s2");
    run.fact(100, Fact::Hung { session_id: "s1".into(), until_ms: 1_000 });
    run.moves(500, "conductor", "conductor-session", "working", "fix_proposed");
    run.moves(600, "task-01.S2", "s2", "fix_proposed", "working");
    run.moves(2_000, "task-01.S1.bg-watcher-1", "s1", "working", "needs_review");
    assert_eq!(run.contexts(Writer::Conductor, Working, FixProposed), ["during-hang", "after-relaunch"]);
    assert_eq!(run.contexts(Writer::Musician, FixProposed, Working), ["during-hang", "after-relaunch"]);
    assert_eq!(run.contexts(Writer::Musician, Working, NeedsReview), ["after-hang"], "S1 woke; S2's hang is none");
}

#[test]
fn a_conductor_hang_is_a_hang_for_musician_writes() {
    let mut run = Run::new();
    run.launch(0, "S1", "s1").fact(100, Fact::Hung { session_id: "conductor-session".into(), until_ms: 1_000 });
    run.moves(500, "task-01.S1", "s1", "working", "needs_review");
    assert_eq!(run.contexts(Writer::Musician, Working, NeedsReview), ["during-hang"]);
}

#[test]
fn busy_marks_the_same_actors_next_statement_only() {
    let mut run = Run::new();
    run.launch(0, "S1", "s1");
    run.sql(10, "task-01.S1", "s1", Stmt::SetNeedsReview, SqlResult::Busy("locked".into()), None);
    run.sql(20, "task-01.S1.bg-watcher-1", "s1", Stmt::Heartbeat, SqlResult::Rows(1), Some(("working", "working")));
    run.moves(1_010, "task-01.S1", "s1", "working", "needs_review").moves(2_000, "task-01.S1", "s1", "needs_review", "error");
    assert_eq!(run.contexts(Writer::Musician, Working, NeedsReview), ["after-busy"]);
    assert_eq!(run.contexts(Writer::Musician, NeedsReview, TaskState::Error), Vec::<&str>::new());
}

#[test]
fn a_live_twin_is_a_context_and_an_ended_one_is_not() {
    let mut run = Run::new();
    run.launch(0, "S1", "s1").launch(10, "S1b", "s1b");
    run.moves(20, "task-01.S1", "s1", "watching", "working");
    run.fact(30, Fact::Ended { session_id: "s1b".into() }).moves(40, "task-01.S1", "s1", "working", "needs_review");
    assert_eq!(run.contexts(Writer::Musician, Watching, Working), ["twin"]);
    assert_eq!(run.contexts(Writer::Musician, Working, NeedsReview), Vec::<&str>::new());
}

#[test]
fn writes_that_change_no_row_are_counted_by_statement_and_are_no_transition() {
    let mut run = Run::new();
    run.launch(0, "S1", "s1");
    run.sql(10, "task-01.S1", "s1", Stmt::Heartbeat, SqlResult::Rows(0), None);
    run.sql(20, "task-01.S1", "s1", Stmt::ReadTaskState, SqlResult::Rows(0), None);
    run.sql(30, "task-01.S1", "s1", Stmt::Heartbeat, SqlResult::Rows(1), Some(("working", "working")));
    let coverage = run.observer.coverage();
    let reached: Vec<String> = coverage.reached().map(|(item, n)| format!("{item} {n}")).collect();
    assert_eq!(reached, ["zero-rows heartbeat 1"], "a read returning nothing and a write keeping the state are not counted");
}

#[test]
fn coverage_csv_reads_back_merges_by_adding_and_lists_002s_table_always() {
    let mut run = Run::new();
    run.launch(0, "S1", "s1").moves(10, "task-01.S1", "s1", "watching", "working");
    let mut coverage = run.observer.coverage().clone();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("coverage.csv");
    coverage.write(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("item,count\nmusician watching->working,1\n"), "{text}");
    assert!(text.contains("musician error->exited,0\n") && text.contains("musician review_approved->complete,0\n"), "{text}");
    let read = Coverage::read(&path).unwrap();
    coverage.merge(&read);
    assert_eq!(coverage.count(&Item::parse("musician watching->working").unwrap()), 2);
    std::fs::write(&path, "item,count\nmusician watching->wrking,1\n").unwrap();
    let e = Coverage::read(&path).unwrap_err().to_string();
    assert!(e.ends_with("coverage.csv:2: `wrking` is no task state"), "{e}");
}

#[test]
fn a_required_file_names_the_line_of_a_bad_item_and_reports_what_is_missing() {
    let path = std::path::Path::new("required.txt");
    let required = Required::parse("# comment\n\nmusician watching->working  # the claim\nzero-rows heartbeat\n", path).unwrap();
    let mut coverage = Coverage::default();
    coverage.add(Item::parse("zero-rows heartbeat").unwrap());
    assert_eq!(required.missing(&coverage), [Item::parse("musician watching->working").unwrap()]);
    let e = Required::parse("musician watching->working\nconductor x->y\n", path).unwrap_err().to_string();
    assert!(e.contains("required.txt:2: `x` is no task state"), "{e}");
    assert!(Required::parse("# nothing\n", path).unwrap_err().to_string().contains("lists no coverage item"));
}
