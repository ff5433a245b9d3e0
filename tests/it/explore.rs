//! `rehearsal explore crashes`: every protocol point of a run, each with a crash of its
//! session before and after it (and hangs with `--hangs`); distinct failures with replay
//! files that fail the same way; output independent of `--jobs`; Ctrl-C keeps what finished;
//! bad input exits 2; the conductor's points get crashes. Point numbers are fixed by the base
//! run, and change with the protocol: the tests look them up with `--list-points` (by
//! session, statement and run number) and count what they expect from that list.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use rehearsal::campaign::explore::{PointOutcome, PointRow};
use rehearsal::vocab::RunOutcome;

use crate::support::{rehearsal, spawn_rehearsal, stderr, stdout};

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
    rehearsal::campaign::explore::read_csv(&out.join("explore.csv")).expect("explore.csv is whole")
}

/// A point as `--list-points` lists it.
struct Listed {
    number: usize,
    session: String,
    statement: String,
    nth: u64,
}

/// The base run's points (`--list-points`, with `args` such as `--variant`).
fn list_points(scenario: &str, args: &[&str]) -> Vec<Listed> {
    let mut all = vec!["explore", "crashes", scenario, "--list-points"];
    all.extend_from_slice(args);
    let o = rehearsal(&all);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("point,session,statement,nth,prefix_statements"));
    lines
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            Listed { number: f[0].parse().unwrap(), session: f[1].into(), statement: f[2].into(), nth: f[3].parse().unwrap() }
        })
        .collect()
}

/// The number of `session`'s `nth` run of `statement`.
fn point(points: &[Listed], session: &str, statement: &str, nth: u64) -> usize {
    let found = points.iter().find(|p| p.session == session && p.statement == statement && p.nth == nth);
    found.unwrap_or_else(|| panic!("no point {session} {statement} #{nth}")).number
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
    // task-01.S1's first review request and state change, in either order.
    let chosen = |variant: &[&str]| {
        let points = list_points(STATE_AND_MESSAGE, variant);
        let (state, message) =
            (point(&points, "task-01.S1", "set_needs_review", 1), point(&points, "task-01.S1", "send_review_request", 1));
        (state, message, points.len())
    };
    let (state, message, all) = chosen(&[]);
    let list = format!("{state},{message}");
    let (code, out, err) = explore(STATE_AND_MESSAGE, &["--points", &list], &tmp.path().join("default"));
    assert_eq!(code, 0, "message first: no crash between the two loses anything\n{out}\n{err}");
    assert!(out.contains("set aside    1 scripted crash/hang fault(s)"), "{out}");
    assert!(out.contains(&format!("points       2 chosen of {all} (2 of musician sessions, 0 of the conductor)")), "{out}");
    let (state, message, _) = chosen(&["--variant", "state-first"]);
    assert_eq!(message, state + 1, "state first: the message right after the state change");
    let dir = tmp.path().join("state-first");
    let (code, out, err) = explore(STATE_AND_MESSAGE, &["--points", &format!("{state},{message}"), "--variant", "state-first"], &dir);
    assert_eq!(code, 1, "{out}\n{err}");
    assert_eq!(
        table(&rows(&dir)),
        [
            format!("{state} task-01.S1 before:set_needs_review #1 crash pass  "),
            format!("{state} task-01.S1 after:set_needs_review #1 crash fail F1 message-before-state"),
            format!("{message} task-01.S1 before:send_review_request #1 crash fail F1 message-before-state"),
            format!("{message} task-01.S1 after:send_review_request #1 crash pass  "),
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
    // Every failing point of F1 by statement, not only its first (issue 31).
    assert!(out.contains("     at set_needs_review ×1 (crash after 1), send_review_request ×1 (crash before 1)\n"), "{out}");
    assert!(summary.contains("### F1 — message-before-state (2 run(s))"), "{summary}");
    assert!(summary.contains("| `send_review_request` | crash before | 1 | task-01.S1 #1 |"), "{summary}");
    assert!(summary.contains("## Protocol coverage"), "explore writes coverage too");
    assert!(dir.join("coverage.csv").exists());
    replays(&dir, "F1-message-before-state", "message-before-state");
}

#[test]
fn a_crash_before_the_claim_is_a_stuck_task_without_the_conductors_relaunch() {
    let tmp = tempfile::tempdir().unwrap();
    let seeds_only = ["--variant", "no-relaunch-unclaimed"];
    let points = list_points(BEFORE_CLAIM, &seeds_only);
    let mut claims = [(point(&points, "task-01.S1", "claim_task", 1), 1), (point(&points, "task-02.S1", "claim_task", 1), 2)];
    claims.sort();
    let list = format!("{},{}", claims[0].0, claims[1].0);
    let dir = tmp.path().join("seeds-only");
    let (code, out, err) = explore(BEFORE_CLAIM, &["--points", &list, "--variant", "no-relaunch-unclaimed"], &dir);
    assert_eq!(code, 1, "{out}\n{err}");
    let expected: Vec<String> = claims
        .iter()
        .enumerate()
        .flat_map(|(i, (number, task))| {
            [
                format!("{number} task-0{task}.S1 before:claim_task #1 crash fail F{} liveness", i + 1),
                format!("{number} task-0{task}.S1 after:claim_task #1 crash pass  "),
            ]
        })
        .collect();
    assert_eq!(table(&rows(&dir)), expected);
    // Each crash leaves its own task waiting, claimed by nobody: two distinct failures.
    let ends: Vec<String> =
        rows(&dir).into_iter().filter(|r| r.outcome == PointOutcome::Ran(RunOutcome::Fail)).map(|r| r.end_states).collect();
    let stuck = |task: u64| {
        let state = |t: u64| if t == task { "watching" } else { "complete" };
        format!("task-00=watching task-01={} task-02={}", state(1), state(2))
    };
    assert_eq!(ends, [stuck(claims[0].1), stuck(claims[1].1)]);
    replays(&dir, "F1-liveness", "liveness");
    replays(&dir, "F2-liveness", "liveness");
    // The simulated conductor relaunches a session that never claimed: nothing is lost.
    let points = list_points(BEFORE_CLAIM, &[]);
    let list = format!("{},{}", point(&points, "task-01.S1", "claim_task", 1), point(&points, "task-02.S1", "claim_task", 1));
    let (code, out, _) = explore(BEFORE_CLAIM, &["--points", &list], &tmp.path().join("default"));
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("passed       4\n"), "{out}");
}

#[test]
fn the_output_does_not_depend_on_jobs_and_hangs_of_each_class_are_placed_before_and_after() {
    let tmp = tempfile::tempdir().unwrap();
    let points = list_points(BEFORE_CLAIM, &["--variant", "no-relaunch-unclaimed"]);
    // The first four points of musician sessions and the conductor's first.
    let mut chosen: Vec<usize> = points.iter().filter(|p| p.session.starts_with("task-")).take(4).map(|p| p.number).collect();
    chosen.push(points.iter().find(|p| p.session == "conductor").expect("a conductor point").number);
    let list: Vec<String> = chosen.iter().map(usize::to_string).collect();
    let list = list.join(",");
    let args = |jobs: &'static str| vec!["--points", &list, "--hangs", "--variant", "no-relaunch-unclaimed", "--jobs", jobs];
    let (one, two) = (tmp.path().join("one"), tmp.path().join("two"));
    let (code_one, out, _) = explore(BEFORE_CLAIM, &args("1"), &one);
    let (code_two, _, _) = explore(BEFORE_CLAIM, &args("2"), &two);
    assert_eq!((code_one, code_two), (1, 1), "{out}");
    for file in ["explore.csv", "summary.md", "coverage.csv", "failures/F1-liveness.toml"] {
        assert_eq!(std::fs::read(one.join(file)).unwrap(), std::fs::read(two.join(file)).unwrap(), "{file} differs with --jobs");
    }
    let rows = rows(&one);
    assert_eq!(rows.len(), 4 * (2 + 2 * 3) + 2, "musicians' points: 2 crashes + 3 hangs before and after; the conductor's: 2 crashes");
    let placed = |session_is_conductor: bool| -> Vec<String> {
        let mut faults: Vec<String> =
            rows.iter().filter(|r| (r.session == "conductor") == session_is_conductor).map(|r| format!("{} {}", r.fault, r.when)).collect();
        faults.dedup();
        faults.truncate(8);
        faults
    };
    let each_class = ["short", "threshold", "long"].iter().flat_map(|c| [format!("hang-{c} before"), format!("hang-{c} after")]);
    let expected: Vec<String> = ["crash before".to_string(), "crash after".to_string()].into_iter().chain(each_class).collect();
    assert_eq!(placed(false), expected);
    assert_eq!(placed(true), ["crash before", "crash after"]);
    assert!(rows.iter().filter(|r| r.fault.starts_with("hang")).all(|r| r.outcome != PointOutcome::Unreached), "every hang fired");
    assert!(
        out.contains("(crash before and after each point, hangs (short, threshold, long) before and after a musician session's)"),
        "{out}"
    );
}

#[test]
fn the_conductors_points_get_crashes_whose_replay_files_relaunch_it() {
    let tmp = tempfile::tempdir().unwrap();
    let seeds_only = ["--variant", "no-relaunch-unclaimed"];
    let points = list_points(BEFORE_CLAIM, &seeds_only);
    let conductor: Vec<&Listed> = points.iter().filter(|p| p.session == "conductor").collect();
    let listed = list_points(BEFORE_CLAIM, &["--variant", "no-relaunch-unclaimed", "--sessions", "conductor"]);
    assert_eq!(listed.iter().map(|p| p.number).collect::<Vec<_>>(), conductor.iter().map(|p| p.number).collect::<Vec<_>>());
    // The conductor's first task row: a crash once it is written, before the task's session
    // was launched.
    let created = point(&points, "conductor", "create_task", 1);
    let dir = tmp.path().join("conductor");
    let (code, out, err) =
        explore(BEFORE_CLAIM, &["--sessions", "conductor", "--points", &created.to_string(), "--variant", "no-relaunch-unclaimed"], &dir);
    assert!(code == 0 || code == 1, "{out}\n{err}");
    assert!(out.contains("points       1 chosen of"), "{out}");
    assert!(out.contains("(0 of musician sessions, 1 of the conductor)"), "{out}");
    assert!(out.contains("launcher     trace "), "{out}");
    let rows = rows(&dir);
    assert_eq!(table(&rows).len(), 2);
    assert!(
        rows.iter().all(|r| r.session == "conductor" && r.fault == "crash" && r.outcome != PointOutcome::Unreached),
        "{:?}",
        table(&rows)
    );
    // Without its session's relaunch (the seeds' conductor), a conductor that dies once the
    // task row is written leaves it unclaimed: its successor never launches it.
    assert_eq!(rows[1].first_violation, "liveness", "{:?}", table(&rows));
    for failure in rows.iter().filter(|r| r.outcome == PointOutcome::Ran(RunOutcome::Fail)).map(|r| r.failure.clone()) {
        let stem = std::fs::read_dir(dir.join("failures"))
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .find(|n| n.starts_with(&format!("{failure}-")) && n.ends_with(".toml"))
            .expect("a replay file");
        let text = std::fs::read_to_string(dir.join("failures").join(&stem)).unwrap();
        assert!(text.contains("[[faults.conductor_crash]]") && text.contains("at = \"after:create_task\""), "{text}");
        let rule = rows.iter().find(|r| r.failure == failure).unwrap().first_violation.clone();
        replays(&dir, stem.trim_end_matches(".toml"), &rule);
    }
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("**The conductor's points**"), "{summary}");
}

#[test]
fn ctrl_c_keeps_the_finished_runs_marked_incomplete() {
    let tmp = tempfile::tempdir().unwrap();
    let planned = 2 * list_points("scenarios/quickstart.toml", &[]).len();
    let (out, scratch) = (tmp.path().join("interrupted"), tmp.path().join("scratch"));
    std::fs::create_dir(&scratch).unwrap();
    let (out_text, scratch_text) = (out.to_str().unwrap(), scratch.to_str().unwrap());
    let child =
        spawn_rehearsal(&["explore", "crashes", "scenarios/quickstart.toml", "--jobs", "2", "--out", out_text, "--scratch", scratch_text]);
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
    assert!(finished.len() >= 25 && finished.len() < planned, "{} runs", finished.len());
    assert!(
        finished.iter().all(|r| r.outcome != PointOutcome::Ran(RunOutcome::Error) && r.trace_hash.len() == 64),
        "every kept row is a finished run"
    );
    assert!(stdout.contains(&format!("incomplete   {} of {planned} runs finished (interrupted)", finished.len())), "{stdout}");
    let marker = std::fs::read_to_string(out.join("INCOMPLETE")).unwrap();
    assert!(marker.contains(&format!("{} of {planned} runs finished: interrupted (Ctrl-C)", finished.len())), "{marker}");
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.starts_with(&format!("**Incomplete**: {} of {planned} runs finished", finished.len())), "{summary}");
    assert_eq!(scratch.read_dir().unwrap().count(), 0, "the runs under way finished and their scratch folder went");
}

/// SIGKILL, no handler: the runs finished before the kill are kept (the journal beside
/// explore.csv, sim/campaign/ledger.rs), each the row the same run has in a whole
/// exploration, and the folder is marked incomplete.
#[test]
fn a_killed_exploration_keeps_every_run_it_finished() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, scratch) = (tmp.path().join("killed"), tmp.path().join("scratch"));
    std::fs::create_dir(&scratch).unwrap();
    let (out_text, scratch_text) = (out.to_str().unwrap(), scratch.to_str().unwrap());
    // One worker: the runs finish in job order, so the kept ones are the first jobs.
    let mut child =
        spawn_rehearsal(&["explore", "crashes", "scenarios/quickstart.toml", "--jobs", "1", "--out", out_text, "--scratch", scratch_text]);
    let journal = out.join(rehearsal::campaign::explore::JOURNAL);
    let deadline = Instant::now() + Duration::from_secs(300);
    while std::fs::read_to_string(&journal).map_or(0, |text| text.lines().count()) < 3 {
        assert!(Instant::now() < deadline, "no 3 runs journaled within 300 s");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    let kept = rows(&out);
    let journaled = std::fs::read_to_string(&journal).expect("the journal stays").lines().count();
    assert!(kept.len() >= 3 && kept.len() == journaled, "{} rows kept, {journaled} journaled", kept.len());
    assert!(out.join("INCOMPLETE").exists());
    // The same points explored whole: the kept rows are their first runs' rows (before
    // grouping numbers the failures).
    let points: Vec<String> = (1..=kept.len().div_ceil(2)).map(|n| n.to_string()).collect();
    let (code, text, err) = explore("scenarios/quickstart.toml", &["--points", &points.join(",")], &tmp.path().join("whole"));
    assert!(code == 0 || code == 1, "{text}\n{err}");
    let whole: Vec<PointRow> =
        rows(&tmp.path().join("whole")).into_iter().take(kept.len()).map(|r| PointRow { failure: String::new(), ..r }).collect();
    assert_eq!(kept, whole);
}

#[test]
fn bad_input_exits_2_with_the_reason_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let broken = tmp.path().join("broken.toml");
    std::fs::write(&broken, "[tasks]\ncount = 1\n[timing]\nbackground_pol_ms = 8000\n").unwrap();
    let broken = broken.to_str().unwrap().to_string();
    let all = list_points(BEFORE_CLAIM, &[]).len();
    let past = (all + 1).to_string();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (vec!["scenarios/no-such.toml"], "scenarios/no-such.toml: cannot read scenario".into()),
        (vec![&broken], format!("{broken}:4:1: key `timing.background_pol_ms`")),
        (vec![BEFORE_CLAIM, "--variant", "no-such"], "no-such".into()),
        (vec![BEFORE_CLAIM, "--sessions", "conductor.review-1"], "is a review: its statements are its conductor session's points".into()),
        (vec![BEFORE_CLAIM, "--sessions", "conductor.S2"], "--sessions conductor.S2: no such session ran in the base run".into()),
        (vec![BEFORE_CLAIM, "--sessions", "task-01.S1b"], "a double launch's twin".into()),
        (vec![BEFORE_CLAIM, "--sessions", "task-07.S1"], "--sessions task-07.S1: no such session ran in the base run".into()),
        (vec![BEFORE_CLAIM, "--points", "5..2"], "point range `5..2`".into()),
        (vec![BEFORE_CLAIM, "--points", &past], format!("there is no point {past}; the base run has points 1 to {all}")),
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
    // task-08.S1's first claim waits for the write lock; the plan is asked again when the
    // lock frees (that is claim_task #2), so `after:` its first asking never fires.
    let points = list_points("scenarios/faults/contention.toml", &[]);
    let claim = point(&points, "task-08.S1", "claim_task", 1);
    let (code, out, err) = explore("scenarios/faults/contention.toml", &["--points", &claim.to_string()], tmp.path());
    assert_eq!(code, 0, "{out}\n{err}");
    let rows = rows(tmp.path());
    assert_eq!(
        table(&rows),
        [
            format!("{claim} task-08.S1 before:claim_task #1 crash pass  "),
            format!("{claim} task-08.S1 after:claim_task #1 crash unreached  ")
        ]
    );
    let base = out.lines().find_map(|l| l.strip_prefix("base run     PASS (trace ")).expect("the base run's line");
    assert!(base.starts_with(&rows[1].trace_hash), "the unreached run is the base run, byte for byte: {base}");
    assert_ne!(rows[0].trace_hash, rows[1].trace_hash);
    assert!(out.contains("unreached    1 (the fault never fired: the run is the base run)"), "{out}");
}

#[test]
fn a_conductor_crash_that_never_fires_is_unreached_and_its_run_is_the_launchers_base_run() {
    let tmp = tempfile::tempdir().unwrap();
    // The conductor's first task row waits for the write lock; asked again when the lock
    // frees (create_task #2), `after:` its first asking never fires.
    let points = list_points("scenarios/faults/contention.toml", &[]);
    let created = point(&points, "conductor", "create_task", 1);
    let (code, out, err) = explore("scenarios/faults/contention.toml", &["--points", &created.to_string()], tmp.path());
    assert!(code == 0 || code == 1, "{out}\n{err}");
    let rows = rows(tmp.path());
    assert_eq!(rows.len(), 2);
    assert_eq!((rows[0].when.as_str(), rows[1].when.as_str(), rows[1].outcome.as_str()), ("before", "after", "unreached"));
    assert_ne!(rows[0].outcome, PointOutcome::Unreached, "a crash before the statement fires");
    let launcher = out.lines().find_map(|l| l.strip_prefix("launcher     trace ")).expect("the launcher's base run");
    assert!(launcher.starts_with(&rows[1].trace_hash), "the unreached run is the base run the launcher starts: {launcher}");
    let base = out.lines().find_map(|l| l.strip_prefix("base run     PASS (trace ")).expect("the base run's line");
    assert!(!base.starts_with(&rows[1].trace_hash), "the launcher is an actor of its own: its run is not the base run");
}
