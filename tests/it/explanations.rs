//! Explanations say what this run did, not what the seeds' SQL would have: an
//! owner-writes-only violation names the statement in force (its file:line, built in, a
//! variant's or the user's) and the clause that let the write through; a liveness failure of
//! many tasks groups them by state in a few lines.

use crate::support::*;

fn violations_csv(dir: &std::path::Path) -> String {
    std::fs::read_to_string(dir.join("violations.csv")).unwrap()
}

#[test]
fn a_fenced_user_sql_that_still_lets_a_zombie_write_is_named_in_the_explanation() {
    let tmp = tempfile::tempdir().unwrap();
    // Fenced by session_id, but a `working` row lets any session beat: zombie.toml's replaced
    // session still overwrites its successor's heartbeat.
    let sql = tmp.path().join("leaky.sql");
    std::fs::write(
        &sql,
        "-- name: heartbeat\n-- fenced, but a working row lets anyone beat\nUPDATE orchestration_tasks\nSET last_heartbeat = datetime('now')\n\
         WHERE task_id = :task_id AND (session_id = :session_id OR state = 'working');\n",
    )
    .unwrap();
    let zombie = scenario("faults/zombie.toml");
    let out = tmp.path().join("run");
    let o = rehearsal(&["run", zombie.to_str().unwrap(), "--seed", "21", "--sql", sql.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}{}", stderr(&o));
    let expected = format!(
        "because `heartbeat` ({}:1) checks session_id, yet its `WHERE task_id = :task_id AND (session_id = :session_id OR state = 'working')` let a session that did not own the row write it",
        sql.display()
    );
    assert!(text.contains(&expected), "{text}");
    assert!(!text.contains("no musician UPDATE checks session_id"), "{text}");

    // The seeds' own SQL: the built-in statement, which checks only the task.
    let plain = tmp.path().join("plain");
    let o = rehearsal(&["run", zombie.to_str().unwrap(), "--seed", "21", "--out", plain.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let csv = violations_csv(&plain);
    assert!(csv.contains("because `heartbeat` (scenarios/protocol.sql:"), "{csv}");
    assert!(csv.contains(", built in) checks no session_id: `WHERE task_id = :task_id`"), "{csv}");
    // `judge` rebuilds the same explanation from the scenario's SQL.
    let o = rehearsal(&["judge", plain.to_str().unwrap(), "--scenario", zombie.to_str().unwrap()]);
    assert!(stdout(&o).contains("agrees with the run's violations.csv"), "{}{}", stdout(&o), stderr(&o));
}

#[test]
fn a_collapsed_run_of_64_musicians_explains_its_liveness_failure_in_a_few_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let quickstart = std::fs::read_to_string(scenario("quickstart.toml")).unwrap();
    let text =
        quickstart.replacen("count = 4\n", "count = 64\n", 1).replacen("sim_time_max_ms = 28_800_000", "sim_time_max_ms = 1_500_000", 1);
    assert_ne!(text, quickstart);
    let file = tmp.path().join("q64.toml");
    std::fs::write(&file, text).unwrap();
    let out = tmp.path().join("run");
    let o = rehearsal(&["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let printed = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{printed}");
    let liveness = printed.lines().find(|l| l.contains("not every task completed")).unwrap_or_else(|| panic!("{printed}"));
    assert!(liveness.contains(" of 64 tasks stuck in `working` (task-01, task-02, task-03, …, task-64): "), "{liveness}");
    assert!(liveness.contains("e.g. task-01 by session S1 ("), "one session named, with how it ended: {liveness}");
    assert!(liveness.matches("task-").count() < 20, "not one entry a task: {liveness}");
    assert!(liveness.len() < 900, "a few lines, not one a task ({} chars): {liveness}", liveness.len());
}
