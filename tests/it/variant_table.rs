//! Issue 46: variants that replace the same statement or undo each other are refused naming
//! both unless the variant table declares what they are together (`guard-not-in` with
//! `worked-by-session-id` is seed 004's own claim, in either order), and a user's SQL entry
//! that a variant in force also replaces is refused naming both (docs/protocol.md C135-C136):
//! nothing a designer wrote goes unused in silence.

use crate::support::*;

fn run(args: &[&str]) -> std::process::Output {
    rehearsal(args)
}

fn refused(o: &std::process::Output, fragments: &[&str]) {
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(o), stderr(o));
    for fragment in fragments {
        assert!(stderr(o).contains(fragment), "`{fragment}` in:\n{}", stderr(o));
    }
}

#[test]
fn the_two_claim_variants_run_seed_004s_claim_in_either_order() {
    let dir = tempfile::tempdir().unwrap();
    let quickstart = scenario("quickstart.toml");
    let mut traces = Vec::new();
    for (name, first, second) in [("a", "guard-not-in", "worked-by-session-id"), ("b", "worked-by-session-id", "guard-not-in")] {
        let out = dir.path().join(name);
        let o = run(&[
            "run",
            quickstart.to_str().unwrap(),
            "--seed",
            "2",
            "--variant",
            first,
            "--variant",
            second,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
        let (session_id, worked_by): (String, String) = open_db(&out)
            .query_row("SELECT session_id, worked_by FROM orchestration_tasks WHERE task_id = 'task-01'", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!(worked_by, session_id, "004's claim records the session id");
        let trace = std::fs::read_to_string(out.join("trace.csv")).unwrap();
        // The first row names the command line's variants, in their order, and the last row's
        // seal (docs/protocol.md C120) hashes that row too; the rows between are the run.
        let lines: Vec<&str> = trace.lines().collect();
        assert!(lines.last().is_some_and(|l| l.contains(",run_end,")), "the trace ends with its seal");
        traces.push(lines[2..lines.len() - 1].join("\n"));
    }
    assert_eq!(traces[0], traces[1], "the same protocol in either order");
}

#[test]
fn two_variants_that_undo_each_other_are_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let quickstart = scenario("quickstart.toml");
    let out = dir.path().join("out");
    let o = run(&[
        "run",
        quickstart.to_str().unwrap(),
        "--variant",
        "thresholds-headroom",
        "--variant",
        "thresholds-002",
        "--out",
        out.to_str().unwrap(),
    ]);
    refused(&o, &["--variant `thresholds-002` contradicts variant `thresholds-headroom`, applied before it"]);
    assert!(!out.join("trace.csv").exists());
}

#[test]
fn a_user_entry_the_repaired_profile_rewrites_is_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let quickstart = scenario("quickstart.toml");
    let sql = dir.path().join("my-claim.sql");
    // A designer's claim: the seeds' own, which the profile's claim-compare-and-set replaces.
    std::fs::write(
        &sql,
        "-- my claim\n-- name: claim_task\nUPDATE orchestration_tasks SET state = 'working', session_id = :session_id, worked_by = :worked_by,\n  started_at = datetime('now'), last_heartbeat = datetime('now'), retry_count = 0\nWHERE task_id = :task_id AND state IN ('watching', 'fix_proposed', 'exit_requested');\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = run(&[
        "run",
        quickstart.to_str().unwrap(),
        "--protocol",
        "repaired",
        "--sql",
        sql.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    refused(
        &o,
        &[
            &format!("{}:2: your entry `claim_task` would never run", sql.display()),
            "variant `claim-compare-and-set` of protocol profile `repaired` replaces `claim_task` too (scenarios/variants/claim-compare-and-set.sql)",
            "(`--protocol seeds`)",
        ],
    );
    assert!(!out.join("trace.csv").exists());
    // The near miss: the same file under the seeds' protocol runs it.
    let o =
        run(&["run", quickstart.to_str().unwrap(), "--sql", sql.to_str().unwrap(), "--out", dir.path().join("seeds").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
}
