//! Kills at many instants (issue 30): SIGKILL the binary while it runs, then read what it
//! left. A run leaves no `comms.db` or the whole one (never a database cut short, even by a
//! kill inside a checkpoint); a sweep keeps every pair it finished, shows `INCOMPLETE` from
//! its start and never a half failure folder; one writer per output folder, and what a
//! killed command left (its lock, its temporaries, its scratch folder) is cleared by the
//! next one. docs/outputs.md states these guarantees.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use crate::support::{on_two_threads, rehearsal, spawn_rehearsal, stderr};

fn kill(mut child: Child) {
    child.kill().expect("SIGKILL"); // no handler runs
    child.wait().expect("reaped");
}

/// Waits (bounded) until `path` exists.
fn wait_for(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(180);
    while !path.exists() {
        assert!(Instant::now() < deadline, "{} never appeared", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = match std::fs::read_dir(dir) {
        Ok(entries) => entries.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    names
}

fn integrity(db: &Path) -> String {
    let conn = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).expect("opens");
    conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).expect("checks")
}

const RUN: [&str; 6] = ["run", "scenarios/bench/ci-smoke.toml", "--seed", "3", "-q", "--out"];

/// What a killed run left in `dir`: no `comms.db`, or the run's whole one (with its trace).
/// Returns whether the kill came before the run ended.
fn assert_no_half_database(dir: &Path, whole_db: &[u8], whole_trace: &[u8]) -> bool {
    let left = names(dir);
    assert!(!left.iter().any(|n| n.starts_with("comms.db-")), "no WAL or journal beside it: {left:?}");
    if !dir.join("comms.db").exists() {
        return true;
    }
    assert_eq!(integrity(&dir.join("comms.db")), "ok");
    assert!(std::fs::read(dir.join("comms.db")).unwrap() == whole_db, "a comms.db is the finished run's: {left:?}");
    assert!(std::fs::read(dir.join("trace.csv")).unwrap() == whole_trace, "and its trace is whole");
    false
}

#[test]
fn a_run_killed_at_any_instant_leaves_no_database_or_the_whole_one_and_a_rerun_clears_what_it_left() {
    let tmp = tempfile::tempdir().unwrap();
    let reference = tmp.path().join("reference");
    let started = Instant::now();
    let o = rehearsal(&[&RUN[..], &[reference.to_str().unwrap()]].concat());
    let full = started.elapsed();
    let code = o.status.code();
    assert!(matches!(code, Some(0 | 1)), "{}", stderr(&o));
    let (whole_db, whole_trace) = (std::fs::read(reference.join("comms.db")).unwrap(), std::fs::read(reference.join("trace.csv")).unwrap());
    assert!(!reference.join(".rehearsal-lock").exists(), "the lock goes with its run");
    // Instants from a tenth of the run's time to past its end: startup, the statements, the
    // final checkpoint, the reports.
    let instants: Vec<Duration> = (1..=12).map(|k| full * k / 10).collect();
    let mid_run = on_two_threads(instants.len(), |i| {
        let dir = tmp.path().join(format!("killed-{i}"));
        let child = spawn_rehearsal(&[&RUN[..], &[dir.to_str().unwrap()]].concat());
        std::thread::sleep(instants[i]);
        kill(child);
        let mid_run = assert_no_half_database(&dir, &whole_db, &whole_trace);
        // A rerun into the folder, without --force: the killed run's lock and temporaries are
        // no run and no holder.
        let o = rehearsal(&[&RUN[..], &[dir.to_str().unwrap()]].concat());
        if mid_run {
            assert_eq!(o.status.code(), code, "{}", stderr(&o));
            assert!(std::fs::read(dir.join("comms.db")).unwrap() == whole_db, "the rerun gives the same database");
            let left = names(&dir);
            assert!(!left.iter().any(|n| n.ends_with(".tmp") || n.starts_with(".rehearsal-lock")), "{left:?}");
        } else {
            assert_eq!(o.status.code(), Some(2), "a finished run is kept without --force: {}", stderr(&o));
            assert!(stderr(&o).contains("already holds a run (comms.db, trace.csv)"), "{}", stderr(&o));
        }
        mid_run
    });
    assert!(mid_run.iter().filter(|m| **m).count() >= 2, "kills before the run ended: {mid_run:?}");
}

/// fleet-day checkpoints its log into the database about once a second of a debug build: kills
/// in its first seconds land between and inside checkpoints, and none leaves a `comms.db`.
/// A `--force` run over a finished one is killed too: the earlier run's files are gone,
/// not mixed with the new run's.
#[test]
fn kills_across_checkpoints_and_over_an_earlier_run_leave_no_database_of_the_killed_run() {
    let tmp = tempfile::tempdir().unwrap();
    let over = tmp.path().join("over");
    let o = rehearsal(&["run", "scenarios/bench/ci-smoke.toml", "--seed", "2", "-q", "--out", over.to_str().unwrap()]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    std::fs::create_dir_all(over.join("docs/implementation/reports")).unwrap();
    std::fs::write(over.join("docs/implementation/reports/task-99-completion.md"), "an earlier run's").unwrap();
    let left = on_two_threads(4, |i| {
        let dir = if i == 3 { over.clone() } else { tmp.path().join(format!("fleet-{i}")) };
        let args = match i {
            3 => vec!["run", "scenarios/bench/ci-smoke.toml", "--seed", "3", "-q", "--force", "--out", dir.to_str().unwrap()],
            _ => vec!["run", "scenarios/bench/fleet-day.toml", "-q", "--out", dir.to_str().unwrap()],
        };
        let child = spawn_rehearsal(&args);
        if i == 3 {
            // The run over the earlier one is killed early, while ci-smoke is surely running, but
            // only once it has taken the folder (it clears the earlier database and trace first):
            // before that, on a loaded machine, the files there are still the earlier run's.
            for _ in 0..600 {
                if !dir.join("comms.db").exists() && !dir.join("trace.csv").exists() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        std::thread::sleep(Duration::from_millis(if i == 3 { 300 } else { 700 * (i as u64 + 1) }));
        kill(child);
        names(&dir)
    });
    // The killed --force run may also have ended before its kill on a quiet machine: then its
    // comms.db is there, and it must be that run's whole database, byte for byte what an
    // unkilled run of the same seed writes, never the earlier run's or a half one.
    let whole = tmp.path().join("whole");
    let o = rehearsal(&["run", "scenarios/bench/ci-smoke.toml", "--seed", "3", "-q", "--out", whole.to_str().unwrap()]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    for (i, names) in left.iter().enumerate() {
        let ended = i == 3 && names.contains(&"comms.db".to_string());
        if ended {
            let db = |dir: &Path| std::fs::read(dir.join("comms.db")).unwrap();
            assert!(db(&over) == db(&whole), "kill {i}: the comms.db left is not the killed run's whole database");
            continue;
        }
        for absent in ["comms.db", "trace.csv"] {
            assert!(!names.contains(&absent.to_string()), "kill {i}: {absent} left: {names:?}");
        }
    }
    // The killed --force run may have been stopped before it had cleared every file of the
    // earlier one (its database and trace go first): the next run clears the rest. A killed run
    // that had ended holds a finished run, which only --force replaces.
    let mut args = vec!["run", "scenarios/bench/ci-smoke.toml", "--seed", "3", "-q", "--out", over.to_str().unwrap()];
    if over.join("comms.db").exists() {
        args.push("--force");
    }
    let o = rehearsal(&args);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    assert!(!over.join("docs/implementation/reports/task-99-completion.md").exists(), "the earlier run's documents are gone");
}

const SWEEP_SEEDS: &str = "1..=400";

fn sweep_args<'a>(out: &'a str, scratch: &'a str, seeds: &'a str) -> Vec<&'a str> {
    let scenario = "scenarios/regression/zombie-owner-writes.toml";
    vec!["sweep", scenario, "--seeds", seeds, "--jobs", "2", "--out", out, "--scratch", scratch]
}

/// The failure folders of a sweep: each visible one is whole (its run and its reports) and
/// has its replay file; returns their seeds.
fn whole_failure_folders(out: &Path) -> Vec<u64> {
    let mut seeds = Vec::new();
    for name in names(&out.join("failures")) {
        let path = out.join("failures").join(&name);
        if name.starts_with('.') || !path.is_dir() {
            continue;
        }
        let files = names(&path);
        for file in ["comms.db", "trace.csv", "violations.csv", "timeline.html", "summary.md", "plots", "temp"] {
            assert!(files.contains(&file.to_string()), "failures/{name} is whole: {files:?}");
        }
        assert_eq!(integrity(&path.join("comms.db")), "ok");
        seeds.push(name.rsplit('-').next().unwrap().parse().unwrap());
    }
    seeds
}

#[test]
fn a_killed_sweep_keeps_every_finished_pair_and_whole_failures_and_holds_its_folder_until_then() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, scratch) = (tmp.path().join("sweep"), tmp.path().join("scratch"));
    std::fs::create_dir_all(&scratch).unwrap();
    let (out_s, scratch_s) = (out.to_str().unwrap(), scratch.to_str().unwrap());
    let first = spawn_rehearsal(&sweep_args(out_s, scratch_s, SWEEP_SEEDS));
    let pid = first.id();
    wait_for(&out.join(".rehearsal-lock"));
    wait_for(&out.join("INCOMPLETE"));
    // A second command into the folder is refused, naming the holder, and touches nothing.
    let run = vec!["run", "scenarios/quickstart.toml", "--out", out_s];
    for second in [sweep_args(out_s, scratch_s, "1..=2"), run.clone(), [&run[..], &["--force"]].concat()] {
        let o = rehearsal(&second);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(&format!("is in use by another rehearsal command (pid {pid} ")), "{}", stderr(&o));
    }
    assert!(out.join("INCOMPLETE").exists());
    // Killed once some failures are saved and some pairs are in the journal.
    wait_for(&out.join("failures").join("zombie-owner-writes-default-3.toml"));
    std::thread::sleep(Duration::from_millis(300));
    kill(first);
    let marker = std::fs::read_to_string(out.join("INCOMPLETE")).expect("the marker stays");
    assert!(marker.contains("of 400 pairs finished"), "{marker}");
    let rows = rehearsal::campaign::sweep::read_results(&out.join("results.csv")).expect("the finished pairs read whole");
    let journaled: Vec<rehearsal::campaign::sweep::ResultRow> =
        rehearsal::base::results_journal::read(&out.join(rehearsal::campaign::sweep::JOURNAL)).expect("the journal reads");
    assert!(!rows.is_empty() && rows.len() < 400 && rows.len() == journaled.len(), "{} rows, {} journaled", rows.len(), journaled.len());
    // Every failure kept on disk (its folder and replay file whole) is a pair in the results,
    // but those whose row the kill came before (at most one per job).
    let kept = whole_failure_folders(&out);
    let unlisted: Vec<&u64> = kept.iter().filter(|seed| !rows.iter().any(|r| r.seed == **seed)).collect();
    assert!(!kept.is_empty() && unlisted.len() <= 2, "kept {kept:?}, not in the results {unlisted:?}");
    for row in rows.iter().filter(|r| r.verdict == rehearsal::vocab::RunOutcome::Fail) {
        assert!(kept.contains(&row.seed), "a failing pair's folder is kept: seed {}", row.seed);
    }
    assert!(names(&scratch).iter().any(|n| n.starts_with(&format!("sweep-pid{pid}-"))), "SIGKILL left its scratch folder");
    // The next sweep takes the dead holder's lock over and removes its scratch folder.
    let o = rehearsal(&[sweep_args(out_s, scratch_s, "1..=2"), vec!["--force", "-q"]].concat());
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    assert_eq!(names(&scratch), Vec::<String>::new(), "no scratch folder is left");
    let left = names(&out);
    for gone in [".rehearsal-lock", "INCOMPLETE", rehearsal::campaign::sweep::JOURNAL] {
        assert!(!left.contains(&gone.to_string()), "{gone} in {left:?}");
    }
    assert_eq!(rehearsal::campaign::sweep::read_results(&out.join("results.csv")).unwrap().len(), 2);
}

/// The pid of a sweep that has ended (for the scratch folder of a process that is gone).
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn a_run_into_a_folder_with_a_dead_holder_s_lock_takes_it_over() {
    let tmp = tempfile::tempdir().unwrap();
    let out: PathBuf = tmp.path().join("run");
    std::fs::create_dir_all(&out).unwrap();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let stale = format!("pid={}\nstarted=\nhost={}\ncommand=rehearsal run\n", dead_pid(), host.trim());
    std::fs::write(out.join(".rehearsal-lock"), stale).unwrap();
    let o = rehearsal(&["run", "scenarios/quickstart.toml", "-q", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!out.join(".rehearsal-lock").exists());
}

/// A second Ctrl-C exits at once, without the destructors that remove scratch folders: its
/// handler removes them first. The second signal goes only once the first was handled (its
/// line on stderr): two SIGINTs pending at once are one (POSIX does not queue them), which is
/// how this test failed under load (notes s5/47ex "Full suite": a loaded process ran no
/// handler between two signals 100 ms apart, took one interrupt and finished its runs, so
/// stderr had no "interrupted twice"). The runs under way take seconds, so the second signal
/// lands while they run; in the interleaving where they end first (the first Ctrl-C's
/// cooperative end, stdout's "(interrupted)") the test starts again, up to 3 times. A second
/// Ctrl-C that is ignored, exits otherwise or leaves the scratch folder fails every attempt.
#[test]
fn a_second_ctrl_c_removes_the_scratch_folder_before_it_exits() {
    for _attempt in 0..3 {
        if second_ctrl_c_during_the_runs() {
            return;
        }
    }
    panic!("3 attempts and the sweep always ended before its second Ctrl-C: the signal is ignored, or runs end at once");
}

/// One attempt: `true` when the second Ctrl-C found the sweep still waiting for its runs and
/// exited at once, `false` when the runs had ended first (asserted to be the cooperative end).
fn second_ctrl_c_during_the_runs() -> bool {
    use std::io::{BufRead, Read};
    let tmp = tempfile::tempdir().unwrap();
    let (out, scratch) = (tmp.path().join("sweep"), tmp.path().join("scratch"));
    std::fs::create_dir_all(&scratch).unwrap();
    // Pairs that take seconds each (fleet-day), so the first Ctrl-C is still waiting for the
    // running ones when the second arrives; more pairs than two rounds, so the first one finds
    // some not started (an interrupted sweep, exit 130) however late it comes.
    let args = [
        "sweep",
        "scenarios/bench/fleet-day.toml",
        "--seeds",
        "1..=8",
        "--jobs",
        "2",
        "--out",
        out.to_str().unwrap(),
        "--scratch",
        scratch.to_str().unwrap(),
    ];
    let mut child = spawn_rehearsal(&args);
    wait_for(&out.join("INCOMPLETE"));
    let mine = format!("sweep-pid{}-", child.id());
    assert!(names(&scratch).iter().any(|n| n.starts_with(&mine)), "{:?}", names(&scratch));
    ctrl_c(&child);
    let mut err = std::io::BufReader::new(child.stderr.take().expect("piped"));
    let mut said = String::new();
    loop {
        let mut line = String::new();
        assert!(err.read_line(&mut line).unwrap() > 0, "the sweep ended without taking the first Ctrl-C:\n{said}");
        said.push_str(&line);
        if line.contains("interrupted; finishing the runs under way") {
            break;
        }
    }
    ctrl_c(&child);
    err.read_to_string(&mut said).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{said}");
    assert_eq!(names(&scratch), Vec::<String>::new(), "the scratch folder is gone:\n{said}");
    if said.contains("interrupted twice") {
        return true;
    }
    let printed = String::from_utf8_lossy(&o.stdout);
    assert!(printed.contains("(interrupted)"), "no exit at once, no cooperative end:\n{said}\n{printed}");
    false
}

/// Every file under `dir`, as paths relative to it.
fn files_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path.clone());
            }
            found.push(path.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
        }
    }
    found.sort();
    found
}

/// Waits (bounded) until a file under `dir` ends with `suffix`.
fn wait_for_under(dir: &Path, suffix: &str) {
    let deadline = Instant::now() + Duration::from_secs(180);
    while !files_under(dir).iter().any(|f| f.ends_with(suffix)) {
        assert!(Instant::now() < deadline, "no {suffix} under {} appeared", dir.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn ctrl_c(child: &Child) {
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
}

/// What an exit at once must not leave: a temporary, a partial copy, a lock.
fn temporaries(dir: &Path) -> Vec<String> {
    files_under(dir)
        .into_iter()
        .filter(|f| f.ends_with(".tmp") || f.contains(".tmp-") || f.contains(".partial-") || f.ends_with(".rehearsal-lock"))
        .collect()
}

/// Issue 41, item 2: one Ctrl-C (a real SIGINT) ends a command that does not stop
/// cooperatively at once, exit 130, after removing the temporaries it made and its lock; what
/// it finished stays. A run and a replay caught while its database and trace are temporaries (none is left,
/// and the folder takes the next run without --force: it holds no run); a compare caught
/// while its kept runs are written (its finished run folders stay whole: a comms.db beside
/// each trace.csv).
#[test]
fn one_ctrl_c_ends_a_run_or_a_compare_at_once_with_130_and_leaves_no_temporary() {
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("run");
    let out = run_dir.to_str().unwrap();
    let child = spawn_rehearsal(&["run", "scenarios/bench/fleet-day.toml", "--seed", "1", "-q", "--out", out]);
    wait_for(&run_dir.join("trace.csv.tmp"));
    ctrl_c(&child);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(stderr(&o).contains("temporaries are removed, its finished files kept"), "{}", stderr(&o));
    assert_eq!(temporaries(&run_dir), Vec::<String>::new(), "left: {:?}", files_under(&run_dir));
    assert!(!run_dir.join("comms.db").exists(), "the run did not finish: no database");
    let again = rehearsal(&["run", "scenarios/quickstart.toml", "-q", "--out", out]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));

    // replay: a failure file of a long run (its hash is never reached: the Ctrl-C comes first).
    let failure = tmp.path().join("long.toml");
    let text = format!(
        "scenario = \"{}\"\nseed = 1\nrule = \"budget\"\ntrace_hash = \"{}\"\n",
        crate::support::root().join("scenarios/bench/fleet-day.toml").display(),
        "0".repeat(64)
    );
    std::fs::write(&failure, text).unwrap();
    let replay_dir = tmp.path().join("replay");
    let child = spawn_rehearsal(&["replay", failure.to_str().unwrap(), "--out", replay_dir.to_str().unwrap()]);
    wait_for(&replay_dir.join("trace.csv.tmp"));
    ctrl_c(&child);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert_eq!(temporaries(&replay_dir), Vec::<String>::new(), "left: {:?}", files_under(&replay_dir));

    let compare_dir = tmp.path().join("compare");
    let args = ["compare", "scenarios/bench/ci-smoke.toml", "--variants", "default,fencing", "--seeds", "1..=40", "--jobs", "1"];
    let child = spawn_rehearsal(&[&args[..], &["--keep-runs", "--out", compare_dir.to_str().unwrap()]].concat());
    wait_for_under(&compare_dir, "trace.csv");
    wait_for_under(&compare_dir, "trace.csv.tmp");
    ctrl_c(&child);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert_eq!(temporaries(&compare_dir), Vec::<String>::new(), "left: {:?}", files_under(&compare_dir));
    let traces: Vec<String> = files_under(&compare_dir).into_iter().filter(|f| f.ends_with("/trace.csv")).collect();
    assert!(!traces.is_empty(), "the runs finished before the Ctrl-C are kept");
    for trace in traces {
        let db = compare_dir.join(trace.trim_end_matches("trace.csv")).join("comms.db");
        assert!(db.exists(), "{trace}: a finished run keeps its database");
    }
}

/// Issue 41, case 5: a merge stopped at any instant, by one Ctrl-C (it exits at once, 130,
/// removing its partial copies and its lock) or by SIGKILL (its partial copies are hidden
/// `.NAME.partial-PID` folders), never leaves a half-copied failure folder under its name, nor
/// a replay file without its folder; an unfinished merge is marked INCOMPLETE, and a merge
/// --force over it gives the whole result.
#[test]
fn a_merge_stopped_at_any_instant_leaves_whole_failure_folders_or_none_and_says_it_is_unfinished() {
    let tmp = tempfile::tempdir().unwrap();
    let shard = tmp.path().join("shard");
    let o =
        rehearsal(&["-q", "sweep", "scenarios/faults/zombie.toml", "--seeds", "1..=4", "--shard", "1/1", "--out", shard.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let source = shard.join("failures");
    let whole_folder = |name: &str| files_under(&source.join(name));
    assert!(!names(&source).is_empty(), "failures to copy");
    for i in 0..8_u64 {
        let out = tmp.path().join(format!("merged-{i}"));
        let child = spawn_rehearsal(&["-q", "merge", shard.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        std::thread::sleep(Duration::from_millis(10 + 25 * i));
        let by_ctrl_c = i % 2 == 0;
        if by_ctrl_c {
            ctrl_c(&child);
        } else {
            let mut child = child;
            child.kill().unwrap();
            child.wait().unwrap();
            continue_checks(&out, &whole_folder, None);
            continue;
        }
        let o = child.wait_with_output().unwrap();
        let code = o.status.code();
        if code == Some(130) {
            assert_eq!(temporaries(&out), Vec::<String>::new(), "merge {i}: {:?}", files_under(&out));
        }
        continue_checks(&out, &whole_folder, code);
    }

    /// What a stopped (or finished) merge left in `out`, then a merge --force over it.
    fn continue_checks(out: &Path, whole_folder: &dyn Fn(&str) -> Vec<String>, code: Option<i32>) {
        let failures = out.join("failures");
        for name in names(&failures).into_iter().filter(|n| !n.starts_with('.')) {
            let path = failures.join(&name);
            if path.is_dir() {
                assert_eq!(files_under(&path), whole_folder(&name), "{name}: a failure folder is whole or absent");
            } else if let Some(stem) = name.strip_suffix(".toml") {
                assert!(failures.join(stem).is_dir(), "{name}: a replay file has its folder");
            }
        }
        // Unmarked only when whole: its manifest is its last file (a kill after it leaves only
        // the lock), or before it copied anything.
        let whole = out.join("manifest.toml").exists() || !failures.exists();
        assert!(out.join("INCOMPLETE").exists() || whole, "exit {code:?}: an unfinished merge is marked: {:?}", names(out));
        let shard = out.parent().unwrap().join("shard");
        let o = rehearsal(&["-q", "merge", shard.to_str().unwrap(), "--out", out.to_str().unwrap(), "--force"]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(!out.join("INCOMPLETE").exists());
        assert_eq!(temporaries(out), Vec::<String>::new(), "{:?}", files_under(out));
    }
}

/// `rehearsal ARGS` started in `cwd` with `TMPDIR` set to `tmpdir` (where a command's own
/// temporary folders go), its output piped: for a Ctrl-C while it runs.
fn spawn_in(cwd: &Path, tmpdir: &Path, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_rehearsal"))
        .args(args)
        .current_dir(cwd)
        .env("TMPDIR", tmpdir)
        .env_remove("REHEARSAL_SEED")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("rehearsal starts")
}

/// Waits (bounded) until `dir` holds something.
fn wait_for_any(dir: &Path) {
    let deadline = Instant::now() + Duration::from_secs(180);
    while names(dir).is_empty() {
        assert!(Instant::now() < deadline, "nothing appeared in {}", dir.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A Ctrl-C test's folder: the commands' TMPDIR, and a file of the user's beside their outputs.
struct Sandbox {
    tmp: tempfile::TempDir,
    tmpdir: std::path::PathBuf,
    neighbour: std::path::PathBuf,
}

impl Sandbox {
    fn new() -> Sandbox {
        let tmp = tempfile::tempdir().unwrap();
        let tmpdir = tmp.path().join("tmpdir");
        std::fs::create_dir_all(&tmpdir).unwrap();
        let neighbour = tmp.path().join("notes.txt");
        std::fs::write(&neighbour, "the user's").unwrap();
        Sandbox { tmp, tmpdir, neighbour }
    }

    /// A command stopped by one Ctrl-C: exit 130, no panic, the user's file as it was, and
    /// its temporary folders gone.
    fn assert_interrupted(&self, what: &str, child: Child) {
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(130), "{what}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{what}: {}", stderr(&o));
        assert_eq!(std::fs::read_to_string(&self.neighbour).unwrap(), "the user's", "{what}");
        assert_eq!(names(&self.tmpdir), Vec::<String>::new(), "{what}: its temporary folders are removed");
    }
}

/// Issue 41, item 2, end to end for shrink and swarm (calibrate and findings: the test
/// below): one real SIGINT (`kill -INT`) while each works ends it as docs/commands.md says —
/// shrink at once, swarm after its runs under way — with exit 130; what it had not
/// written whole is gone (its temporary folders, an unfinished database, a lock), nothing of
/// the user's is deleted or changed (the failure and scenario it read, a document it would
/// have replaced, a neighbour's file), and a swarm's folder stays marked `INCOMPLETE`.
#[test]
fn one_ctrl_c_ends_shrink_and_swarm_as_documented() {
    let sandbox = Sandbox::new();
    let (tmp, tmpdir, root) = (&sandbox.tmp, &sandbox.tmpdir, crate::support::root());
    let assert_interrupted = |what: &str, child: Child| sandbox.assert_interrupted(what, child);

    // shrink: a failure of a long run (fleet-day), stopped in its first run.
    let scenario = root.join("scenarios/bench/fleet-day.toml");
    let scenario_bytes = std::fs::read(&scenario).unwrap();
    let failure = tmp.path().join("long.toml");
    let text = format!("scenario = \"{}\"\nseed = 1\nrule = \"budget\"\ntrace_hash = \"{}\"\n", scenario.display(), "0".repeat(64));
    std::fs::write(&failure, &text).unwrap();
    let shrunk = tmp.path().join("shrunk.toml");
    let child = spawn_in(&root, tmpdir, &["shrink", failure.to_str().unwrap(), "--out", shrunk.to_str().unwrap()]);
    wait_for_any(tmpdir);
    std::thread::sleep(Duration::from_millis(300));
    ctrl_c(&child);
    assert_interrupted("shrink", child);
    assert!(!shrunk.exists(), "shrink wrote nothing");
    assert_eq!(std::fs::read_to_string(&failure).unwrap(), text, "the failure is kept as it was");
    assert_eq!(std::fs::read(&scenario).unwrap(), scenario_bytes, "its scenario too");

    // swarm: stops starting runs, writes what finished, keeps its folder marked.
    let swarm = tmp.path().join("swarm");
    let child =
        spawn_in(&root, tmpdir, &["swarm", "--scenarios", "60", "--seeds-per", "5", "--jobs", "2", "--out", swarm.to_str().unwrap()]);
    wait_for(&swarm.join("INCOMPLETE"));
    std::thread::sleep(Duration::from_millis(1000));
    ctrl_c(&child);
    assert_interrupted("swarm", child);
    assert!(swarm.join("INCOMPLETE").exists(), "an interrupted swarm is marked: {:?}", names(&swarm));
    assert!(swarm.join("pairs.csv").exists() && swarm.join("swarm.md").exists(), "what finished is written: {:?}", names(&swarm));
    assert_eq!(temporaries(&swarm), Vec::<String>::new(), "left: {:?}", files_under(&swarm));
    assert!(!swarm.join("scratch").exists(), "its scratch folder is removed");
    // A swarm over it (--force) finishes whole and lifts the mark.
    let o = rehearsal(&["-q", "swarm", "--scenarios", "1", "--seeds-per", "1", "--out", swarm.to_str().unwrap(), "--force"]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    assert!(!swarm.join("INCOMPLETE").exists());
}

/// calibrate statements and findings stopped by one real SIGINT: exit 130, the document
/// findings would replace kept, no temporary left. Ignored until issue 41's third round: in
/// about one Ctrl-C in five another thread made a file after the interrupt removed its
/// command's temporaries and before the process exited (findings: a run's `comms.db.tmp`;
/// calibrate: `calibration.db`, made by a `sqlite3` child started after the removal). Every
/// such file is now made through sim/base/live_files.rs's registry, which the interrupt holds
/// from its removal to the exit.
#[test]
fn one_ctrl_c_ends_calibrate_and_findings_and_keeps_their_documents() {
    let sandbox = Sandbox::new();
    let (tmp, tmpdir, root) = (&sandbox.tmp, &sandbox.tmpdir, crate::support::root());
    let assert_interrupted = |what: &str, child: Child| sandbox.assert_interrupted(what, child);
    // calibrate statements: stopped while it times statements on its database.
    if Command::new("sqlite3").arg("--version").output().is_ok_and(|o| o.status.success()) {
        let cal = tmp.path().join("cal");
        let args = ["calibrate", "statements", "--max-seconds", "120", "--out", cal.to_str().unwrap()];
        let child = spawn_in(&root, tmpdir, &args);
        wait_for(&cal.join("calibration.db"));
        std::thread::sleep(Duration::from_millis(200));
        ctrl_c(&child);
        assert_interrupted("calibrate statements", child);
        // Nothing appears after the exit either: its sqlite3 processes were killed and had
        // ended before the removal.
        std::thread::sleep(Duration::from_millis(500));
        let left: Vec<String> = names(&cal).into_iter().filter(|n| n != ".rehearsal-owned").collect();
        assert_eq!(left, Vec::<String>::new(), "no unfinished database, file or lock");
    } else {
        assert!(std::env::var_os("CI").is_none(), "sqlite3 is not installed (scripts/test.sh installs it)");
        eprintln!("calibrate's Ctrl-C: SKIPPED, sqlite3 is not installed");
    }

    // findings: stopped in its compares (run where it finds the scenarios, its runs beside
    // them); the generated document it would replace is kept as it was.
    let cwd = tmp.path().join("findings");
    std::fs::create_dir_all(&cwd).unwrap();
    std::os::unix::fs::symlink(root.join("scenarios"), cwd.join("scenarios")).unwrap();
    let doc = cwd.join("FINDINGS.md");
    let old = "# Findings\n\nGenerated by `rehearsal findings` (an earlier one).\n";
    std::fs::write(&doc, old).unwrap();
    let child = spawn_in(&cwd, tmpdir, &["findings", "--seeds", "1..=20", "--out", "FINDINGS.md"]);
    let runs = cwd.join("reports/findings-runs");
    wait_for_under(&runs, "trace.csv");
    ctrl_c(&child);
    assert_interrupted("findings", child);
    assert_eq!(std::fs::read_to_string(&doc).unwrap(), old, "the document is not replaced");
    assert_eq!(names(&cwd), ["FINDINGS.md", "reports", "scenarios"], "no temporary beside it");
    assert_eq!(temporaries(&runs), Vec::<String>::new(), "left: {:?}", files_under(&runs));
}
