//! Helpers shared by the test modules: running the binary, scratch folders, reading outputs.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use rehearsal::trace::trace_reader::{self, TraceRecord};
use rehearsal::vocab::{ActorName, SessionPlace, WatcherKind};

/// The project root, so tests find `scenarios/` wherever cargo runs them from.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Copies the folder `from` to `to`, files and sub-folders.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

pub fn scenario(name: &str) -> PathBuf {
    root().join("scenarios").join(name)
}

/// Shipped scenarios left out of the whole-set tests, with the reason: their runs take
/// minutes in a debug build.
pub const TOO_LONG: &[&str] = &["scenarios/bench/fleet-1000.toml", "scenarios/bench/fleet-day.toml"];

/// The CI suites' folder: strict copies of shipped scenarios (tests/it/ci_gate.rs checks them
/// against their originals and runs them), left out of the whole-set tests, which run the
/// originals.
pub const CI_SUITES: &str = "scenarios/ci/";
/// The repaired protocol's proof suites (issue 28): strict copies run under the profile.
pub const PROOF_SUITES: &str = "scenarios/proof/";

/// Extra seeds of the random-fault scenarios: swarm draws differ per seed.
const EXTRA_SEEDS: &[(&str, &[u64])] =
    &[("scenarios/faults/random-faults.toml", &[1, 2, 7, 90, 221]), ("scenarios/bench/ci-smoke.toml", &[2, 3, 4])];

/// Every `.toml` file under `dir`, at any depth, sorted.
pub fn toml_files(dir: &Path) -> Vec<PathBuf> {
    files_ending(dir, "toml")
}

/// Every file under `dir` with the extension `ext`, at any depth, sorted.
pub fn files_ending(dir: &Path, ext: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, ext, out);
            } else if path.extension().is_some_and(|e| e == ext) {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, ext, &mut files);
    files.sort();
    files
}

/// Every shipped scenario file (but `TOO_LONG`), relative to the project root, sorted.
pub fn shipped_scenarios() -> Vec<String> {
    let mut names: Vec<String> = toml_files(&root().join("scenarios"))
        .iter()
        .map(|p| p.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/"))
        .filter(|p| !TOO_LONG.contains(&p.as_str()) && !p.starts_with(CI_SUITES) && !p.starts_with(PROOF_SUITES))
        .collect();
    names.sort();
    names
}

/// Every shipped scenario on its own seed (`None`), then the extra seeds of the random-fault
/// ones: the runs the golden file and re-judging check.
pub fn shipped_cases() -> Vec<(String, Option<u64>)> {
    let mut cases: Vec<(String, Option<u64>)> = shipped_scenarios().into_iter().map(|s| (s, None)).collect();
    for (scenario, seeds) in EXTRA_SEEDS {
        cases.extend(seeds.iter().map(|seed| (scenario.to_string(), Some(*seed))));
    }
    cases
}

/// The golden file's runs: `shipped_cases`, and the proof suites' scenarios on their own
/// seeds (strict copies and the proof's own demonstrations: shipped, so a change of their
/// behaviour must show in the golden file too).
pub fn golden_cases() -> Vec<(String, Option<u64>)> {
    let mut cases = shipped_cases();
    let proof = toml_files(&root().join(PROOF_SUITES));
    cases.extend(proof.iter().map(|p| (p.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/"), None)));
    cases
}

/// Runs `job(i)` for every `i < n` on two threads (the machines running the tests share
/// their cores), results in order.
pub fn on_two_threads<T: Send>(n: usize, job: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new((0..n).map(|_| None).collect::<Vec<Option<T>>>());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if i >= n {
                    return;
                }
                let result = job(i);
                results.lock().unwrap()[i] = Some(result);
            });
        }
    });
    results.into_inner().unwrap().into_iter().map(|r| r.expect("every job ran")).collect()
}

/// Runs the `rehearsal` binary with `args` from the project root.
pub fn rehearsal(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rehearsal"))
        .args(args)
        .current_dir(root())
        .env_remove("REHEARSAL_SEED")
        .output()
        .expect("rehearsal runs")
}

/// Starts the `rehearsal` binary with `args` from the project root, its output piped: for a
/// test that interrupts it (Ctrl-C) while it runs.
pub fn spawn_rehearsal(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_rehearsal"))
        .args(args)
        .current_dir(root())
        .env_remove("REHEARSAL_SEED")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rehearsal starts")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `rehearsal run SCENARIO --seed SEED --out DIR`, asserting the exit code.
pub fn run_ok(scenario: &Path, seed: u64, out: &Path) -> String {
    let o = rehearsal(&["run", scenario.to_str().unwrap(), "--seed", &seed.to_string(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "stdout:\n{}\nstderr:\n{}", stdout(&o), stderr(&o));
    stdout(&o)
}

/// The value printed after `label` in the run summary.
pub fn summary_field(stdout: &str, label: &str) -> String {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(label).map(|v| v.trim().to_string()))
        .unwrap_or_else(|| panic!("no `{label}` line in:\n{stdout}"))
}

pub fn open_db(dir: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open_with_flags(dir.join("comms.db"), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).expect("comms.db opens")
}

/// The trace, typed: rehearsal's own reader, which refuses a file whose header is not the
/// trace's and any row whose actor, statement or state does not parse.
pub fn trace(dir: &Path) -> Vec<TraceRecord> {
    trace_reader::read(&dir.join("trace.csv")).unwrap_or_else(|e| panic!("{e}"))
}

/// An actor by its name in the trace, e.g. `task-01.S1.bg-watcher-1`.
pub fn actor(name: &str) -> ActorName {
    ActorName::parse(name).unwrap_or_else(|| panic!("`{name}` is no actor name"))
}

/// A session by its name, e.g. `task-01.S2`, or a double launch's twin `task-01.S1b`.
pub fn session(name: &str) -> SessionPlace {
    match actor(name) {
        ActorName::Session(place) => place,
        other => panic!("`{name}` is {other:?}, not a session"),
    }
}

/// Whether a row was written by one of `session`'s watchers of `kind`.
pub fn by_watcher(record: &TraceRecord, session: SessionPlace, kind: WatcherKind) -> bool {
    matches!(record.actor, Some(ActorName::Watcher(place, k, _)) if place == session && k == kind)
}

/// Every SQL row of the trace, in order.
pub fn sql_rows(dir: &Path) -> Vec<TraceRecord> {
    trace(dir).into_iter().filter(TraceRecord::is_sql).collect()
}

/// The SQL rows of one session: its own, its watchers' and its subagents'.
pub fn session_sql(dir: &Path, name: &str) -> Vec<TraceRecord> {
    let place = session(name);
    sql_rows(dir).into_iter().filter(|r| r.place() == Some(place)).collect()
}

/// The SQL rows of one actor.
pub fn actor_sql(dir: &Path, name: &str) -> Vec<TraceRecord> {
    let who = actor(name);
    sql_rows(dir).into_iter().filter(|r| r.actor == Some(who)).collect()
}

/// Runs a shipped scenario with its own seed into a fresh folder; returns (folder, stdout,
/// exit code). The folder lives as long as the returned guard.
pub fn run_example(name: &str) -> (tempfile::TempDir, String, i32) {
    let tmp = tempfile::tempdir().unwrap();
    let path = root().join("scenarios/examples").join(format!("{name}.toml"));
    let o = rehearsal(&["run", path.to_str().unwrap(), "--out", tmp.path().to_str().unwrap()]);
    let code = o.status.code().expect("exit code");
    assert!(code == 0 || code == 1, "{name}: exit {code}\n{}", stderr(&o));
    (tmp, stdout(&o), code)
}

/// The lines of `temp/<task>-status`.
pub fn status_lines(dir: &Path, task: &str) -> Vec<String> {
    std::fs::read_to_string(dir.join(format!("temp/{task}-status"))).expect("status file").lines().map(str::to_string).collect()
}

/// The `[ctx: NN%]` of a status line (every line has one: 000 "Temporary File Management").
pub fn ctx_of(line: &str) -> i64 {
    let tail = line.rsplit("[ctx: ").next().unwrap_or_else(|| panic!("no [ctx: in `{line}`"));
    tail.trim_end_matches("%]").parse().unwrap_or_else(|_| panic!("bad ctx in `{line}`"))
}

/// Index of the first status line that starts with `prefix`, and its context.
pub fn find_line(lines: &[String], prefix: &str) -> (usize, i64) {
    let i = lines
        .iter()
        .position(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no status line starting `{prefix}` in:\n{}", lines.join("\n")));
    (i, ctx_of(&lines[i]))
}

/// Every message: (id, task_id, from_session, message_type, message).
pub fn messages(dir: &Path) -> Vec<(i64, String, String, String, String)> {
    let db = open_db(dir);
    let mut stmt = db.prepare("SELECT id, task_id, from_session, message_type, message FROM orchestration_messages ORDER BY id").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))).unwrap().map(Result::unwrap).collect()
}

/// (state, worked_by, retry_count, last_error) of one task row.
pub fn task_row(dir: &Path, task: &str) -> (String, String, i64, String) {
    open_db(dir)
        .query_row(
            "SELECT state, coalesce(worked_by, ''), retry_count, coalesce(last_error, '') FROM orchestration_tasks WHERE task_id = ?1",
            [task],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap()
}

/// The integer after `label` in a message body (`35%` reads 35).
pub fn field(body: &str, label: &str) -> i64 {
    let line = body.lines().find(|l| l.contains(label)).unwrap_or_else(|| panic!("no `{label}` in:\n{body}"));
    let word = line.split(label).nth(1).unwrap().split_whitespace().next().unwrap_or("");
    word.trim_end_matches('%').parse().unwrap_or_else(|_| panic!("no number after `{label}` in:\n{body}"))
}

/// The shipped scenarios without a `[faults]` section (but `TOO_LONG`): the protocol as the
/// seeds say it, no crash, hang, jitter or spike. Emergencies, scripted answers, scripted
/// subagent failures and protocol variants are not faults.
pub fn fault_free_scenarios() -> Vec<String> {
    shipped_scenarios()
        .into_iter()
        .filter(|path| {
            let text = std::fs::read_to_string(root().join(path)).unwrap();
            let doc: toml::Table = text.parse().unwrap_or_else(|e| panic!("{path}: {e}"));
            !doc.contains_key("faults")
        })
        .collect()
}

/// Runs a shipped scenario (a path relative to the project root) on its own seed into `out`,
/// with `variants`; returns the exit code (0 or 1, anything else fails the test) and stdout.
pub fn run_into(scenario: &str, variants: &[&str], out: &Path) -> (i32, String) {
    let mut args = vec!["run", scenario, "--out", out.to_str().unwrap()];
    for variant in variants {
        args.extend(["--variant", variant]);
    }
    let o = rehearsal(&args);
    let code = o.status.code().expect("exit code");
    assert!(code == 0 || code == 1, "{scenario}: exit {code}\n{}\n{}", stdout(&o), stderr(&o));
    (code, stdout(&o))
}

/// Writes `text` as `dir/NAME.toml` and runs it through the library into `dir/out`, with
/// `variants`; returns the run folder and the summary.
pub fn run_text(name: &str, text: &str, dir: &Path, variants: &[&str]) -> (PathBuf, rehearsal::run::RunSummary) {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    (dir.join("out"), run_path(&path, &dir.join("out"), variants))
}

/// Runs the scenario file `path` through the library into `out`, with `variants`.
pub fn run_path(path: &Path, out: &Path, variants: &[&str]) -> rehearsal::run::RunSummary {
    let options = rehearsal::run::RunOptions {
        scenario_path: path.to_path_buf(),
        seed: None,
        out_dir: Some(out.to_path_buf()),
        variants: variants.iter().map(|v| v.to_string()).collect(),
    };
    rehearsal::run::run_scenario(rehearsal::input::scenario::Scenario::load(path).unwrap(), &options).unwrap()
}

/// A scenario of `tasks` tasks of two 1-agent steps with a checkpoint after the first: 4-minute
/// agents and 1-minute verifications, so reviews are asked for at about 5 minutes; `conductor`
/// holds the `[conductor]` keys, `rest` any further sections (faults, expectations).
pub fn two_step_scenario(seed: u64, tasks: u64, conductor: &str, rest: &str) -> String {
    format!(
        "[run]\nseed = {seed}\nsim_time_max_ms = 21_600_000\n\n[timing]\nsubagent_ms = 240000\nverification_ms = 60000\n\n\
         [conductor]\n{conductor}\n\n[tasks]\ncount = {tasks}\nsteps = 2\nsubagents_per_step = 1\ncheckpoints = [1]\n\n{rest}\n"
    )
}

/// `--protocol seeds` and `--variant` arguments for the `repaired` profile without `removed`:
/// what a change's necessity is shown against (`--protocol seeds` so that a scenario whose
/// file names the profile runs without it too).
pub fn repaired_without(removed: &str) -> Vec<String> {
    let profile = rehearsal::vocab::find_profile("repaired").expect("the repaired profile");
    let variants = profile.variants.iter().filter(|v| **v != removed).flat_map(|v| ["--variant".to_string(), v.to_string()]);
    ["--protocol".to_string(), "seeds".to_string()].into_iter().chain(variants).collect()
}
