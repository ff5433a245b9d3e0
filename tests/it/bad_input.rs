//! Bad input exits 2 with a message that names the file, the line, the column and the key,
//! or the broken SQL statement, before anything runs.

use crate::support::{rehearsal, stderr, stdout};

/// Writes `scenario` (and `sql` beside it, if any), runs it, and checks the exit code and
/// that every `expect` fragment is in stderr.
fn check(scenario: &str, sql: Option<&str>, expect: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("bad.toml");
    std::fs::write(&path, scenario).unwrap();
    if let Some(sql) = sql {
        std::fs::write(tmp.path().join("variant.sql"), sql).unwrap();
    }
    let out = tmp.path().join("out");
    let o = rehearsal(&["run", path.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "stdout:\n{}\nstderr:\n{err}", stdout(&o));
    for fragment in expect {
        let fragment = fragment.replace("FILE", path.to_str().unwrap());
        assert!(err.contains(&fragment), "expected `{fragment}` in stderr:\n{err}");
    }
    assert!(!out.join("trace.csv").exists(), "nothing runs on bad input");
}

#[test]
fn malformed_toml_names_file_line_and_key() {
    check("[tasks]\ncount = 4\nsteps = = 3\n", None, &["FILE:3:", "key `tasks.steps`"]);
}

#[test]
fn an_unknown_key_is_an_error_naming_it() {
    check("[tasks]\ncount = 4\n[timing]\nbackground_pol_ms = 8000\n", None, &["FILE:4:1: key `timing.background_pol_ms`", "unknown field"]);
}

#[test]
fn a_negative_duration_is_an_error_naming_its_key() {
    check("[tasks]\ncount = 4\n[timing]\nsubagent_ms = -60000\n", None, &["FILE:4:15: key `timing.subagent_ms`", "cannot be negative"]);
    check(
        "[tasks]\ncount = 4\n[conductor]\nreview_ms = { kind = \"uniform\", min = -1, max = 5 }\n",
        None,
        &["FILE:4:", "key `conductor.review_ms", "cannot be negative"],
    );
}

#[test]
fn a_missing_scenario_file_is_bad_input() {
    let o = rehearsal(&["run", "scenarios/does-not-exist.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("scenarios/does-not-exist.toml: cannot read scenario"), "{}", stderr(&o));
}

#[test]
fn a_broken_sql_statement_is_named_before_the_run() {
    let scenario = "[tasks]\ncount = 1\n[protocol]\nsql = \"variant.sql\"\n";
    check(
        scenario,
        Some("-- name: claim_task\nUPDATE orchestration_tasks SET stat = 'working' WHERE task_id = :task_id;\n"),
        &["statement `claim_task`", "variant.sql:1", "no such column: stat"],
    );
    check(
        scenario,
        Some("-- name: heartbeat\nUPDATE orchestration_tasks SET last_heartbeat = datetime('now') WHERE task_id = :task;\n"),
        &["statement `heartbeat`", "uses parameter :task, which the engine does not supply; did you mean `:task_id`?"],
    );
    check(
        scenario,
        Some("-- name: hartbeat\nSELECT 1;\n"),
        &["statement `hartbeat`", "is not one the engine runs; did you mean `heartbeat`?"],
    );
}

#[test]
fn a_bad_command_line_is_a_usage_error() {
    let o = rehearsal(&["run", "scenarios/quickstart.toml", "--seed", "minus-one"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// One scenario per class of bad input (issue 8): each exits 2 naming file:line:col and key.
#[test]
fn every_class_of_bad_scenario_names_file_line_column_and_key() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("wrong type", "[tasks]\ncount = \"four\"\n", &["FILE:2:9: key `tasks.count`", "invalid type: string \"four\""]),
        ("missing required section", "[run]\nseed = 3\n", &["FILE:1:1: key `tasks`", "missing field `tasks`"]),
        ("zero musicians", "[tasks]\ncount = 0\n", &["FILE:2:9: key `tasks.count`", "must be positive, got 0"]),
        (
            "zero duration",
            "[tasks]\ncount = 2\n[timing]\nbackground_poll_ms = 0\n",
            &["FILE:4:22: key `timing.background_poll_ms`", "must be positive"],
        ),
        (
            "percentage above 100",
            "[tasks]\ncount = 2\n[context]\nceiling_pct = 120\n",
            &["FILE:4:15: key `context.ceiling_pct`", "between 0 and 100, got 120"],
        ),
        (
            "probability above 1",
            "[tasks]\ncount = 2\n[conductor]\nreject_probability = 1.5\n",
            &["FILE:4:22: key `conductor.reject_probability`", "between 0 and 1, got 1.5"],
        ),
        (
            "no review in flight",
            "[tasks]\ncount = 2\n[conductor]\nreviews_in_flight = 0\n",
            &["FILE:4:21: key `conductor.reviews_in_flight`", "must be positive, got 0"],
        ),
        (
            "poll during reviews not a bool",
            "[tasks]\ncount = 2\n[conductor]\npoll_during_reviews = 1\n",
            &["FILE:4:23: key `conductor.poll_during_reviews`", "invalid type: integer `1`, expected a boolean"],
        ),
        (
            "swarm probability below 0",
            "[tasks]\ncount = 2\n[faults]\ncrash_probability = { min = -0.1, max = 0.2 }\n",
            &["FILE:4:21: key `faults.crash_probability`", "between 0 and 1, got -0.1"],
        ),
        (
            "refresh longer than staleness",
            "[tasks]\ncount = 2\n[timing]\nheartbeat_refresh_s = 600\n",
            &[
                "FILE:4:1: key `timing.heartbeat_refresh_s`",
                "must be below the conductor's staleness threshold (540 s): otherwise a live session is declared stale",
            ],
        ),
        (
            "task that does not exist",
            "[tasks]\ncount = 2\n[[conductor.answers]]\ntask = 5\nreview = 1\nanswer = \"review_approved\"\n",
            &["FILE:4:1: key `conductor.answers.task`", "task 5 does not exist: tasks.count is 2"],
        ),
        (
            "session that never exists",
            "[tasks]\ncount = 2\n[[faults.crash]]\ntask = 1\nsession = 9\nat_ms = 1000\n",
            &["FILE:5:1: key `faults.crash.session`", "session S9 of task 1, which never exists: sessions are S1..S5"],
        ),
        (
            "duplicate task",
            "[tasks]\ncount = 2\n[[tasks.custom]]\ntask = 1\nsteps = 2\n[[tasks.custom]]\ntask = 1\nsteps = 3\n",
            &["FILE:7:1: key `tasks.custom.task`", "task 1 is customised twice"],
        ),
        (
            "id with quotes and SQL",
            "[tasks]\ncount = 2\n[[faults.crash]]\ntask = \"1'; DROP TABLE orchestration_tasks; --\"\nat_ms = 5\n",
            &["FILE:4:8: key `faults.crash.task`", "invalid type: string"],
        ),
        (
            "protocol point with SQL in it",
            "[tasks]\ncount = 2\n[[faults.crash]]\ntask = 1\nat = \"before:claim_task'; DROP TABLE orchestration_tasks; --\"\n",
            &["FILE:5:6: key `faults.crash.at`", "is not before:STATEMENT or after:STATEMENT"],
        ),
        (
            "watcher death at a protocol point",
            "[tasks]\ncount = 2\n[[faults.watcher_death]]\ntask = 1\nat = \"before:heartbeat\"\n",
            &["FILE:5:1: key `faults.watcher_death.at`", "a watcher death takes `at_ms` only"],
        ),
        (
            "unknown rule",
            "[tasks]\ncount = 2\n[expect]\nallowed = [\"no-such-rule\"]\n",
            &["key `expect.allowed`", "`no-such-rule` is not a rule"],
        ),
        ("empty file", "", &["FILE:1:1: key `tasks`", "missing field `tasks`"]),
        ("not UTF-8", "[tasks]\ncount = 2\n# caf\u{FFFD}\n", &[]),
    ];
    for (what, text, expect) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("bad.toml");
        let bytes: Vec<u8> = if *what == "not UTF-8" { b"[tasks]\ncount = 2\n# caf\xe9\n".to_vec() } else { text.as_bytes().to_vec() };
        std::fs::write(&path, bytes).unwrap();
        let o = rehearsal(&["run", path.to_str().unwrap(), "--out", tmp.path().join("out").to_str().unwrap()]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{what}: {err}");
        assert!(!err.contains("panicked"), "{what}: {err}");
        let expect: Vec<String> = if *what == "not UTF-8" {
            vec![format!("{}:3:6: not UTF-8 text", path.display())]
        } else {
            expect.iter().map(|f| f.replace("FILE", path.to_str().unwrap())).collect()
        };
        for fragment in expect {
            assert!(err.contains(&fragment), "{what}: expected `{fragment}` in:\n{err}");
        }
        assert!(!tmp.path().join("out").exists(), "{what}: nothing is written on bad input");
    }
}

#[test]
fn a_protocol_statement_with_a_syntax_error_is_named_before_the_run() {
    check(
        "[tasks]\ncount = 1\n[protocol]\nsql = \"variant.sql\"\n",
        Some("-- name: heartbeat\nUPDATE orchestration_tasks SET WHERE task_id = :task_id;\n"),
        &["statement `heartbeat`", "variant.sql:1", "does not prepare", "syntax error"],
    );
}

#[test]
fn bad_files_are_named_and_nothing_is_overwritten() {
    let tmp = tempfile::tempdir().unwrap();
    let quickstart = crate::support::scenario("quickstart.toml");
    let q = quickstart.to_str().unwrap();
    // A folder given as the scenario, and an output folder that cannot be created.
    let o = rehearsal(&["run", "scenarios", "--out", tmp.path().join("a").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("scenarios: cannot read scenario"), "{}", stderr(&o));
    let file = tmp.path().join("plain-file");
    std::fs::write(&file, "x").unwrap();
    let o = rehearsal(&["run", q, "--out", file.join("sub").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(&format!("cannot create output folder {}", file.join("sub").display())), "{}", stderr(&o));
    let o = rehearsal(&["run", q, "--out", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is a file, not a folder"), "{}", stderr(&o));
    // An existing run is kept unless --force.
    let out = tmp.path().join("run");
    crate::support::run_ok(&quickstart, 42, &out);
    let before = std::fs::read(out.join("comms.db")).unwrap();
    let o = rehearsal(&["run", q, "--seed", "7", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("already holds a run (comms.db, trace.csv); pass --force"), "{}", stderr(&o));
    assert_eq!(std::fs::read(out.join("comms.db")).unwrap(), before, "refused: the old run is untouched");
    // A comms.db another process holds locked is refused even with --force.
    let holder = rusqlite::Connection::open(out.join("comms.db")).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE;").unwrap();
    let o = rehearsal(&["run", q, "--seed", "7", "--out", out.to_str().unwrap(), "--force"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("comms.db is locked by another process"), "{}", stderr(&o));
    holder.execute_batch("ROLLBACK;").unwrap();
    drop(holder);
    assert_eq!(std::fs::read(out.join("comms.db")).unwrap(), before, "locked: the old run is untouched");
    let o = rehearsal(&["run", q, "--seed", "7", "--out", out.to_str().unwrap(), "--force"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_ne!(std::fs::read(out.join("comms.db")).unwrap(), before, "--force replaced it");
}

#[test]
fn a_full_disk_is_a_harness_error_naming_the_file_and_leaves_no_half_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("full");
    // A 64 KiB file-size limit stands in for a full disk: writes past it fail with EFBIG
    // (SIGXFSZ ignored), as they would with ENOSPC.
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("trap '' XFSZ; ulimit -f 64; exec \"$0\" run scenarios/quickstart.toml --out {}", out.display()))
        .arg(env!("CARGO_BIN_EXE_rehearsal"))
        .current_dir(crate::support::root())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    // The first file to outgrow the limit is named: the trace, which grows as the run goes, or
    // comms.db, written only at checkpoints now that its WAL is in memory (sim/base/wal_memory.rs).
    let names = |file: &str| err.contains(&format!("{}/{file}", out.display()));
    let full = err.contains("File too large") || err.contains("disk full") || err.contains("os error 27");
    assert!(full && (names("trace.csv.tmp") || names("comms.db")), "{err}");
    assert!(!out.join("trace.csv").exists(), "a trace is whole under its name or absent");
}

#[test]
fn bad_seed_ranges_shards_and_job_counts_are_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("s");
    let sweep = |extra: &[&str]| {
        let mut args = vec!["sweep", "scenarios/quickstart.toml", "--out", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        rehearsal(&args)
    };
    for (args, message) in [
        (&["--seeds", "5..2"][..], "seed range `5..2`"),
        (&["--seeds", "a..b"], "seed range `a..b`"),
        (&["--seeds", "1..="], "seed range `1..=`"),
        (&["--seeds", "3..3"], "seed range `3..3`"),
        (&["--seeds", "1", "--shard", "0/3"], "shard `0/3`"),
        (&["--seeds", "1", "--shard", "4/3"], "shard `4/3`"),
        (&["--seeds", "1", "--shard", "x"], "shard `x`"),
        (&["--seeds", "1", "--jobs", "0"], "--jobs must be at least 1"),
    ] {
        let o = sweep(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(message), "{args:?}: {}", stderr(&o));
        assert!(!out.join("results.csv").exists(), "{args:?}: nothing ran");
    }
}

/// A mistyped `--scratch` is bad input found before the output folder is touched: `--force`
/// would otherwise have cleared the earlier sweep's results first.
#[test]
fn a_missing_scratch_folder_is_refused_before_force_clears_the_earlier_results() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("s");
    let sweep = |extra: &[&str]| {
        let mut args = vec!["sweep", "scenarios/quickstart.toml", "--seeds", "1..=2", "--out", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        rehearsal(&args)
    };
    assert_eq!(sweep(&[]).status.code(), Some(0));
    let before = std::fs::read(out.join("results.csv")).expect("the first sweep's results");
    let missing = tmp.path().join("no-such-folder");
    let o = sweep(&["--force", "--scratch", missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not an existing folder"), "{}", stderr(&o));
    assert_eq!(std::fs::read(out.join("results.csv")).expect("still there"), before);
}

/// A sweep's pair runs first without writing its files, and one that fails runs again in
/// full: a full disk that only the second run meets is that pair's error, named, not a claim
/// that the two runs disagreed.
#[test]
fn a_failing_pair_whose_full_run_meets_a_full_disk_names_the_disk_not_nondeterminism() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, scratch) = (tmp.path().join("s"), tmp.path().join("scratch"));
    std::fs::create_dir(&scratch).unwrap();
    // As in the full-disk test above: a 64 KiB file-size limit stands in for a full disk.
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f 64; exec \"$0\" -q sweep scenarios/faults/zombie.toml --seeds 1..=1 --out {} --scratch {}",
            out.display(),
            scratch.display()
        ))
        .arg(env!("CARGO_BIN_EXE_rehearsal"))
        .current_dir(crate::support::root())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let results = std::fs::read_to_string(out.join("results.csv")).expect("results");
    assert!(results.contains(",error,") && results.contains("File too large"), "{results}");
    assert!(!results.contains("nondeterminism"), "{results}");
}
