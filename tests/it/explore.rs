//! `rehearsal explore crashes`: every protocol point of a run, each with a crash of its
//! session before and after it (and hangs with `--hangs`); distinct failures with replay
//! files that fail the same way; output independent of `--jobs`; Ctrl-C keeps what finished;
//! bad input exits 2. Point numbers are fixed by the base run: if the protocol changes (the
//! golden file is re-blessed), look the statements up in a fresh explore.csv.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rehearsal::explore::PointRow;

use crate::support::{rehearsal, root, stderr, stdout};

const STATE_AND_MESSAGE: &str = "scenarios/faults/crash-between-state-and-message.toml";
const BEFORE_CLAIM: &str = "scenarios/faults/crash-before-claim.toml";

/// `rehearsal explore crashes SCENARIO ARGS… --out OUT`: (exit code, stdout, stderr).
fn explore(scenario: &str, args: &[&str], out: &Path) -> (i32, String, String) {
    let mut all = vec!["explore", "crashes", scenario];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", out.to_str().unwrap()]);
    let o = rehearsal(&all);
    (o.status.code().unwrap(), stdout(&o), stderr(&o))
}

fn rows(out: &Path) -> Vec<PointRow> {
    rehearsal::explore::read_csv(&out.join("explore.csv")).expect("explore.csv is whole")
}

/// (point, session, at, nth, fault, outcome, failure, first violation) of every row.
fn table(rows: &[PointRow]) -> Vec<String> {
    rows.iter()
        .map(|r| {
            format!(
                "{} {} {}:{} #{} {} {} {} {}",
                r.point, r.session, r.when, r.statement, r.nth, r.fault, r.outcome, r.failure, r.first_violation
            )
        })
        .collect()
}

/// Runs a replay file and checks it fails with `rule` and leaves the very comms.db of the
/// exploration's kept run folder.
fn replays(out: &Path, stem: &str, rule: &str) {
    let file = out.join("failures").join(format!("{stem}.toml"));
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    assert!(text.starts_with("# Found by `rehearsal explore crashes`"), "{text}");
    let replay = out.join("replay").join(stem);
    let o = rehearsal(&["run", file.to_str().unwrap(), "--out", replay.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains(&format!("verdict      FAIL: {rule}")), "{}", stdout(&o));
    let kept = out.join("failures").join(stem);
    assert!(kept.join("timeline.html").exists(), "the first point's run folder is kept with its reports");
    assert_eq!(std::fs::read(replay.join("comms.db")).unwrap(), std::fs::read(kept.join("comms.db")).unwrap(), "{stem}: same comms.db");
}

#[test]
fn a_crash_between_state_and_message_fails_under_state_first_only_and_replays() {
    let tmp = tempfile::tempdir().unwrap();
    // Points 112 and 113 are task-01.S1's first review request and state change.
    let (code, out, err) = explore(STATE_AND_MESSAGE, &["--points", "112..=113"], &tmp.path().join("default"));
    assert_eq!(code, 0, "message first: no crash between the two loses anything\n{out}\n{err}");
    assert!(out.contains("set aside    1 scripted crash/hang fault(s)") && out.contains("points       2 chosen of 339"), "{out}");
    let dir = tmp.path().join("state-first");
    let (code, out, err) = explore(STATE_AND_MESSAGE, &["--points", "112..=113", "--variant", "state-first"], &dir);
    assert_eq!(code, 1, "{out}\n{err}");
    assert_eq!(
        table(&rows(&dir)),
        [
            "112 task-01.S1 before:set_needs_review #1 crash pass  ",
            "112 task-01.S1 after:set_needs_review #1 crash fail F1 message-before-state",
            "113 task-01.S1 before:send_review_request #1 crash fail F1 message-before-state",
            "113 task-01.S1 after:send_review_request #1 crash pass  ",
        ]
    );
    assert!(out.contains("runs         4 of 4 (crash before and after each point)\npassed       2"), "{out}");
    assert!(out.contains("failed       2 in 1 distinct failure(s)"), "{out}");
    assert!(out.contains("F1   message-before-state — 2 run(s); ends task-00=complete task-01=complete; first: crash of task-01.S1 after:set_needs_review #1"), "{out}");
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        summary.contains(
            "| F1 | message-before-state | 2 | task-00=complete task-01=complete | crash of task-01.S1 after:set_needs_review #1 |"
        ),
        "{summary}"
    );
    assert!(summary.contains("## Protocol coverage"), "explore writes coverage too");
    assert!(dir.join("coverage.csv").exists());
    replays(&dir, "F1-message-before-state", "message-before-state");
}

#[test]
fn a_crash_before_the_claim_is_a_stuck_task_without_the_conductors_relaunch() {
    let tmp = tempfile::tempdir().unwrap();
    // Points 1 and 2 are the two tasks' claims.
    let dir = tmp.path().join("seeds-only");
    let (code, out, err) = explore(BEFORE_CLAIM, &["--points", "1..=2", "--variant", "no-relaunch-unclaimed"], &dir);
    assert_eq!(code, 1, "{out}\n{err}");
    assert_eq!(
        table(&rows(&dir)),
        [
            "1 task-02.S1 before:claim_task #1 crash fail F1 liveness",
            "1 task-02.S1 after:claim_task #1 crash pass  ",
            "2 task-01.S1 before:claim_task #1 crash fail F2 liveness",
            "2 task-01.S1 after:claim_task #1 crash pass  ",
        ]
    );
    let ends: Vec<String> = rows(&dir).into_iter().filter(|r| r.outcome == "fail").map(|r| r.end_states).collect();
    assert_eq!(ends, ["task-00=watching task-01=complete task-02=watching", "task-00=watching task-01=watching task-02=complete"]);
    replays(&dir, "F1-liveness", "liveness");
    replays(&dir, "F2-liveness", "liveness");
    // The simulated conductor relaunches a session that never claimed: nothing is lost.
    let (code, out, _) = explore(BEFORE_CLAIM, &["--points", "1..=2"], &tmp.path().join("default"));
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("passed       4\n"), "{out}");
}

#[test]
fn the_output_does_not_depend_on_jobs_and_hangs_of_each_class_are_placed() {
    let tmp = tempfile::tempdir().unwrap();
    let args = |jobs: &'static str| vec!["--points", "1..=4", "--hangs", "--variant", "no-relaunch-unclaimed", "--jobs", jobs];
    let (one, two) = (tmp.path().join("one"), tmp.path().join("two"));
    let (code_one, out, _) = explore(BEFORE_CLAIM, &args("1"), &one);
    let (code_two, _, _) = explore(BEFORE_CLAIM, &args("2"), &two);
    assert_eq!((code_one, code_two), (1, 1), "{out}");
    for file in ["explore.csv", "summary.md", "coverage.csv", "failures/F1-liveness.toml"] {
        assert_eq!(std::fs::read(one.join(file)).unwrap(), std::fs::read(two.join(file)).unwrap(), "{file} differs with --jobs");
    }
    let rows = rows(&one);
    assert_eq!(rows.len(), 20, "4 points × (2 crashes + 3 hangs)");
    let faults: Vec<&str> = rows[..5].iter().map(|r| r.fault.as_str()).collect();
    assert_eq!(faults, ["crash", "crash", "hang-short", "hang-threshold", "hang-long"]);
    assert!(
        rows.iter().filter(|r| r.fault.starts_with("hang")).all(|r| r.when == "before" && r.outcome != "unreached"),
        "every hang fired"
    );
    assert!(out.contains("(crash before and after each point, hangs (short, threshold, long) before it)"), "{out}");
}

#[test]
fn ctrl_c_keeps_the_finished_runs_marked_incomplete() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, scratch) = (tmp.path().join("interrupted"), tmp.path().join("scratch"));
    std::fs::create_dir(&scratch).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_rehearsal"))
        .args(["explore", "crashes", "scenarios/quickstart.toml", "--jobs", "2", "--out", out.to_str().unwrap()])
        .args(["--scratch", scratch.to_str().unwrap()])
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // explore.csv appears with the first checkpoint, 25 runs in.
    let deadline = Instant::now() + Duration::from_secs(300);
    while !out.join("explore.csv").exists() {
        assert!(Instant::now() < deadline, "no checkpoint of explore.csv within 300 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let o = child.wait_with_output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(130), "{stdout}\n{stderr}");
    let finished = rows(&out);
    assert!(finished.len() >= 25 && finished.len() < 4594, "{} runs", finished.len());
    assert!(finished.iter().all(|r| r.outcome != "error" && r.trace_hash.len() == 64), "every kept row is a finished run");
    assert!(stdout.contains(&format!("incomplete   {} of 4594 runs finished (interrupted)", finished.len())), "{stdout}");
    let marker = std::fs::read_to_string(out.join("INCOMPLETE")).unwrap();
    assert!(marker.contains(&format!("{} of 4594 runs finished: interrupted (Ctrl-C)", finished.len())), "{marker}");
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.starts_with(&format!("**Incomplete**: {} of 4594 runs finished", finished.len())), "{summary}");
    assert_eq!(scratch.read_dir().unwrap().count(), 0, "the runs under way finished and their scratch folder went");
}

#[test]
fn bad_input_exits_2_with_the_reason_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let broken = tmp.path().join("broken.toml");
    std::fs::write(&broken, "[tasks]\ncount = 1\n[timing]\nbackground_pol_ms = 8000\n").unwrap();
    let broken = broken.to_str().unwrap().to_string();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (vec!["scenarios/no-such.toml"], "scenarios/no-such.toml: cannot read scenario".into()),
        (vec![&broken], format!("{broken}:4:1: key `timing.background_pol_ms`")),
        (vec![BEFORE_CLAIM, "--variant", "no-such"], "no-such".into()),
        (vec![BEFORE_CLAIM, "--sessions", "conductor"], "the conductor's points are not explored yet".into()),
        (vec![BEFORE_CLAIM, "--sessions", "task-01.S1b"], "a double launch's twin".into()),
        (vec![BEFORE_CLAIM, "--sessions", "task-07.S1"], "--sessions task-07.S1: no such session ran in the base run".into()),
        (vec![BEFORE_CLAIM, "--points", "5..2"], "point range `5..2`".into()),
        (vec![BEFORE_CLAIM, "--points", "100000"], "there is no point 100000; the base run has points 1 to 882".into()),
    ];
    for (args, message) in cases {
        let out = tmp.path().join("out");
        let (code, stdout, stderr) = explore(args[0], &args[1..], &out);
        assert_eq!(code, 2, "{args:?}\n{stdout}\n{stderr}");
        assert!(stderr.contains(&message), "{args:?}: expected `{message}` in\n{stderr}");
        assert!(!out.join("explore.csv").exists(), "{args:?}: nothing explored");
    }
}

#[test]
fn a_fault_that_never_fires_is_unreached_and_its_run_is_the_base_run() {
    let tmp = tempfile::tempdir().unwrap();
    // Point 2: task-08.S1's first claim waits for the write lock; the plan is asked again
    // when the lock frees (that is claim_task #2), so `after:` its first asking never fires.
    let (code, out, err) = explore("scenarios/faults/contention.toml", &["--points", "2"], tmp.path());
    assert_eq!(code, 0, "{out}\n{err}");
    let rows = rows(tmp.path());
    assert_eq!(table(&rows), ["2 task-08.S1 before:claim_task #1 crash pass  ", "2 task-08.S1 after:claim_task #1 crash unreached  "]);
    let base = out.lines().find_map(|l| l.strip_prefix("base run     PASS (trace ")).expect("the base run's line");
    assert!(base.starts_with(&rows[1].trace_hash), "the unreached run is the base run, byte for byte: {base}");
    assert_ne!(rows[0].trace_hash, rows[1].trace_hash);
    assert!(out.contains("unreached    1 (the fault never fired: the run is the base run)"), "{out}");
}
