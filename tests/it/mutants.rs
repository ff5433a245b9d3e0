//! Mutation testing of the oracles (issue 13): a catalog of deliberately wrong protocols,
//! kept as data in `tests/mutants/`, each run against a shipped scenario that passes with the
//! right protocol. A mutant is **caught** when some seed's verdict fails (the table names the
//! rules that fired), **refused at load** when the simulator rejects it before any actor runs
//! (a statement that changed its write flag), and **survives** when every seed passes: then
//! the oracles cannot tell that protocol from the right one, and the test fails naming it —
//! unless the catalog lists it as a known gap (`expected_missing`), which says what rule is
//! missing.
//!
//! A mutant is one file: `NAME.sql` replaces the named statements of `scenarios/protocol.sql`
//! (it becomes the scenario's `[protocol] sql`; over a scenario with SQL of its own, such as a
//! fenced protocol, it replaces only its statements of that file); `NAME.toml` is merged over the scenario (a
//! behaviour the simulator already has, switched on by a protocol variant or a scenario key).
//! Each file starts with a comment: what is wrong, and which seed text it breaks.
//!
//! `cargo test --locked mutants -- --nocapture` prints the table and the score.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use rehearsal::base::error::Error;
use rehearsal::run::{run, RunOptions};

use crate::support::root;

/// The seeds every mutant (and every unmutated scenario, the control) runs with.
const SEEDS: [u64; 3] = [1, 2, 3];

pub(crate) struct Mutant {
    /// A file of `tests/mutants/`.
    pub(crate) file: &'static str,
    /// A shipped scenario, relative to `scenarios/`, that passes with the right protocol on
    /// every seed of `SEEDS` and runs the mutated statement (or behaviour).
    scenario: &'static str,
    /// The mutant is meant to be refused when the run loads it, naming its statement.
    pub(crate) at_load: bool,
    /// A mutant today's rules cannot catch: why, and what rule would. Reported, not failed;
    /// once a rule catches it the test fails until this is cleared.
    pub(crate) expected_missing: Option<&'static str>,
    /// The rule the mutant was made for (issue 26): caught without it, the test fails.
    target: Option<&'static str>,
    /// Why the CI suites cannot catch it (what it breaks needs a fault none of their
    /// scenarios has): tests/it/ci_gate.rs leaves it out. `None`: the gate must fail on it.
    pub(crate) outside_ci: Option<&'static str>,
}

const fn caught(file: &'static str, scenario: &'static str) -> Mutant {
    Mutant { file, scenario, at_load: false, expected_missing: None, target: None, outside_ci: None }
}

/// A mutant made for one rule, which must be among those that fire.
const fn caught_by(file: &'static str, scenario: &'static str, rule: &'static str) -> Mutant {
    Mutant { target: Some(rule), ..caught(file, scenario) }
}

/// `caught_by`, for a mutant that only a scenario outside the CI suites runs into.
const fn caught_by_outside_ci(file: &'static str, scenario: &'static str, rule: &'static str, why: &'static str) -> Mutant {
    Mutant { outside_ci: Some(why), ..caught_by(file, scenario, rule) }
}

const fn gap(file: &'static str, scenario: &'static str, reason: &'static str) -> Mutant {
    Mutant { expected_missing: Some(reason), ..caught(file, scenario) }
}

/// The catalog: every file of `tests/mutants/`, the scenario that exercises it, and what
/// the oracles should make of it.
pub(crate) const MUTANTS: &[Mutant] = &[
    // The claim guard only matters when a second session tries to claim: the scenario's
    // double launch (a structural fault) starts a twin while the task is under review.
    caught("claim-without-guard.sql", "faults/claim-under-review.toml"),
    caught("claim-without-session.sql", "quickstart.toml"),
    caught("heartbeat-refreshes-nothing.sql", "quickstart.toml"),
    caught("heartbeat-matches-no-row.sql", "quickstart.toml"),
    Mutant { at_load: true, ..caught("heartbeat-as-select.sql", "quickstart.toml") },
    caught("mark-complete-every-row.sql", "quickstart.toml"),
    caught("cursor-rereads-last.sql", "examples/pause-feedback.toml"),
    // Skipping `last + 1` loses a message only when two conductor messages to one task are
    // adjacent: the two same-second emergencies of this (fault-free) scenario.
    caught("cursor-skips-next.sql", "faults/same-second-burst.toml"),
    // Once caught only incidentally (seed 1): the background watcher exited on another task's
    // message during the musician's own work and was not relaunched, so the heartbeat lapsed
    // and the conductor declared a live session stale. The musician now relaunches it at once
    // (000 Key Principles 6a), and nothing else tells the two protocols apart.
    gap(
        "messages-of-every-task.sql",
        "quickstart.toml",
        "sessions read and handle other tasks' conductor messages, but every message is still seen by its own task's session and the watchers are relaunched at once; no rule says a session handles only its own task's messages: needs messages-seen-once to count a message handled by a session of another task (000 Background Watcher query `WHERE task_id = ...`, 000 Emergency Messages: separate messages per task)",
    ),
    caught("review-request-wrong-task.sql", "examples/pause-feedback.toml"),
    caught("set-error-counts-no-retry.sql", "examples/error-recovery.toml"),
    caught("needs-review-sets-working.sql", "quickstart.toml"),
    caught("exited-sets-complete.sql", "examples/clean-exit-handoff.toml"),
    // The conductor's staleness check only matters when a session is lost: this scenario's
    // session crashes (a scripted fault) and must be replaced.
    caught("poll-sees-no-staleness.sql", "faults/crash-between-state-and-message.toml"),
    caught("poll-sees-all-stale.sql", "examples/verification-checkpoint.toml"),
    caught("resume-clears-session.sql", "quickstart.toml"),
    caught("completion-typed-review-request.sql", "quickstart.toml"),
    caught("set-task-state-every-row.sql", "quickstart.toml"),
    gap(
        "conductor-cursor-rereads-last.sql",
        "examples/pause-feedback.toml",
        "the conductor counts one request as several reviews (the scripted review_failed of review 2 never happens) but answers only by state; no rule watches how the conductor reads musician messages: needs a conductor-side messages-seen-once (each musician message handled once)",
    ),
    gap(
        "create-task-working.sql",
        "quickstart.toml",
        "the conductor creates rows `working` and every claim is blocked, but its intervention on claim_blocked (docs/protocol.md C39) hands each row over and S2 completes it, so liveness holds: needs a rule that the conductor creates rows in a claimable state (004 \"Initial State\"); caught under --variant ignore-claim-blocked",
    ),
    gap(
        "stop-hook-finds-no-row.sql",
        "quickstart.toml",
        "finished sessions spin in their stop hook (reads only) for 500 checks after their terminal write: conductor-outlasts-sessions does not see it (a session past its terminal write is not working); needs a rule that a session ends within a stop-hook check or two of its terminal write (004 stop-hook exit criteria)",
    ),
    // Issue 26: a mutant for each property of its round, each made for the rule named (which
    // must fire) and caught by it alone where no other rule sees the same write.
    caught_by("approvals-to-missing-task.sql", "quickstart.toml", "message-to-existing-task"),
    caught_by("answers-inserted-twice.sql", "quickstart.toml", "request-answered-once"),
    // Beside retry-count-counts-errors.
    caught_by("set-error-counts-down.sql", "examples/error-recovery.toml", "retry-count-never-decreases"),
    // A conductor too impatient for a claim relaunches a task whose session is frozen before
    // it (the rule alone).
    caught_by_outside_ci(
        "claim-overdue-too-soon.toml",
        "faults/hang-before-claim.toml",
        "no-relaunch-while-claim-pending",
        "a session must be slow to reach its claim for the patience to matter, and every session of the CI suites claims as it starts (the seeds' suite with claim_overdue_s = 60 merged in: 0 regressions)",
    ),
    // A fenced protocol (D11's fix) that forgot the fence on `mark_exited`: a replaced
    // session's `exited` on its successor's row, acted on (beside it owner-writes-only and
    // one-live-session-per-task for the write, messages-seen-once for the second hand-over's
    // message).
    caught_by_outside_ci(
        "mark-exited-unfenced.sql",
        "faults/late-exit-fenced.toml",
        "hand-over-on-owner-exit",
        "the strict suite's `--variant fencing` applies after `--sql` and puts the fence back, and the seeds' suite runs the unfenced SQL, whose `mark_exited` this is",
    ),
    // The seeds' own clean exit (watchers stopped first, D14) against the reading that keeps
    // the heartbeat until the final write: a live session handed over writes `exited` before
    // its successor claims (beside no-false-stale for the hand-over, and what follows).
    caught_by_outside_ci(
        "watchers-stopped-before-exit.toml",
        "faults/slow-clean-exit-watched.toml",
        "silent-after-hand-over",
        "the strict suite's `--variant heartbeat-until-exit` is on its command line, which no scenario key undoes, and the seeds' suite runs the seeds' reading, which this is",
    ),
    // Behaviours the simulator already has, switched on over a fault-free scenario.
    caught("state-first.toml", "examples/clean-exit-handoff.toml"),
    caught("detect-by-timestamp.toml", "faults/same-second-burst.toml"),
    caught("heartbeat-refresh-without-margin.toml", "quickstart.toml"),
];

#[derive(Debug)]
enum Outcome {
    /// Seeds whose verdict failed, the rules that headlined them, every rule that fired.
    Caught {
        seeds: Vec<u64>,
        headlines: BTreeSet<String>,
        rules: BTreeSet<&'static str>,
    },
    /// The load error, which names the statement.
    Refused(String),
    Survived,
    /// Anything else: a harness error, or a refusal the catalog did not expect.
    Broken(String),
}

pub(crate) fn mutants_dir() -> PathBuf {
    root().join("tests").join("mutants")
}

/// Deep merge: tables merge key by key, anything else replaces.
pub(crate) fn merge(base: &mut toml::Table, patch: toml::Table) {
    for (key, value) in patch {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(into)), toml::Value::Table(from)) => merge(into, from),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// The statements a mutant file defines (none for a `.toml` mutant).
fn statements_of(path: &Path) -> Vec<String> {
    if path.extension().is_some_and(|e| e == "sql") {
        let text = std::fs::read_to_string(path).unwrap();
        rehearsal::input::sql_catalog::parse(&text, &path.display().to_string())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .into_iter()
            .map(|s| s.name)
            .collect()
    } else {
        Vec::new()
    }
}

/// Writes the scenario under `dir` with the mutant applied (`None`: unchanged, the control)
/// and returns its path. The copy keeps the scenario's file name, so runs are named as its.
fn write_scenario(scenario: &str, mutant: Option<&Path>, dir: &Path) -> PathBuf {
    let base_path = root().join("scenarios").join(scenario);
    let mut table: toml::Table = toml::from_str(&std::fs::read_to_string(&base_path).unwrap()).unwrap();
    let own_sql = table.get("protocol").and_then(|p| p.get("sql")).and_then(|s| s.as_str()).map(|s| base_path.parent().unwrap().join(s));
    std::fs::create_dir_all(dir).unwrap();
    if let Some(own) = &own_sql {
        // The copy lives elsewhere: name the scenario's own SQL by its full path.
        let protocol = table.get_mut("protocol").and_then(|p| p.as_table_mut()).unwrap();
        protocol.insert("sql".into(), toml::Value::String(own.to_str().unwrap().to_string()));
    }
    if let Some(path) = mutant {
        let patch: toml::Table = if path.extension().is_some_and(|e| e == "sql") {
            // Over a scenario with SQL of its own (a fenced protocol, say), the mutant's
            // statements replace only theirs: the mutant changes one thing.
            let sql = match &own_sql {
                Some(own) => layered_sql(own, path, dir),
                None => path.to_path_buf(),
            };
            let mut protocol = toml::Table::new();
            protocol.insert("sql".into(), toml::Value::String(sql.to_str().unwrap().to_string()));
            toml::Table::from_iter([("protocol".to_string(), toml::Value::Table(protocol))])
        } else {
            toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        };
        merge(&mut table, patch);
    }
    let path = dir.join(Path::new(scenario).file_name().unwrap());
    std::fs::write(&path, toml::to_string(&table).unwrap()).unwrap();
    path
}

/// The statements of `own` with those of `mutant` in place of theirs (and any others of
/// `mutant` after them), written under `dir`.
fn layered_sql(own: &Path, mutant: &Path, dir: &Path) -> PathBuf {
    let parse = |path: &Path| {
        rehearsal::input::sql_catalog::parse(&std::fs::read_to_string(path).unwrap(), &path.display().to_string())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    let (base, replacing) = (parse(own), parse(mutant));
    let kept = base.iter().filter(|s| !replacing.iter().any(|m| m.name == s.name));
    let text: String = kept.chain(&replacing).map(|s| format!("-- name: {}\n{}\n\n", s.name, s.sql)).collect();
    let path = dir.join("layered.sql");
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs `scenario` (with `mutant` applied, if any) for every seed of `SEEDS` and says what
/// came of it.
fn check(scenario: &str, mutant: Option<&Path>, dir: &Path) -> Outcome {
    let path = write_scenario(scenario, mutant, dir);
    let statements = mutant.map(statements_of).unwrap_or_default();
    let (mut seeds, mut headlines, mut rules) = (Vec::new(), BTreeSet::new(), BTreeSet::new());
    let mut refused = None;
    for seed in SEEDS {
        let options = RunOptions {
            scenario_path: path.clone(),
            seed: Some(seed),
            out_dir: Some(dir.join(format!("seed-{seed}"))),
            variants: Vec::new(),
        };
        match run(&options) {
            Ok(summary) if summary.verdict.passed() => {}
            Ok(summary) => {
                seeds.push(seed);
                headlines.insert(summary.verdict.failure.clone());
                rules.extend(summary.verdict.rules());
            }
            Err(Error::Input(message)) if statements.iter().any(|s| message.contains(&format!("statement `{s}`"))) => {
                refused = Some(message);
            }
            Err(e) => return Outcome::Broken(format!("seed {seed}: {e}")),
        }
    }
    match refused {
        Some(message) if seeds.is_empty() => Outcome::Refused(message),
        Some(message) => Outcome::Broken(format!("refused on some seeds only: {message}")),
        None if seeds.is_empty() => Outcome::Survived,
        None => Outcome::Caught { seeds, headlines, rules },
    }
}

/// `f` over `items` on a few threads; results in the order of `items`.
fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 4);
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new(items.iter().map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(index) else { break };
                let result = f(item);
                results.lock().unwrap()[index] = Some(result);
            });
        }
    });
    results.into_inner().unwrap().into_iter().map(|r| r.expect("every item ran")).collect()
}

fn join<I: IntoIterator<Item = S>, S: AsRef<str>>(items: I, sep: &str) -> String {
    items.into_iter().map(|s| s.as_ref().to_string()).collect::<Vec<_>>().join(sep)
}

#[test]
fn every_mutant_of_the_catalog_is_caught_or_a_known_gap() {
    let started = Instant::now();
    let tmp = tempfile::tempdir().unwrap();

    // The catalog and the folder hold the same files, once each.
    let mut on_disk: Vec<String> =
        std::fs::read_dir(mutants_dir()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    on_disk.sort();
    let mut listed: Vec<String> = MUTANTS.iter().map(|m| m.file.to_string()).collect();
    listed.sort();
    assert_eq!(listed, on_disk, "MUTANTS must list every file of tests/mutants/ exactly once");
    for m in MUTANTS {
        let text = std::fs::read_to_string(mutants_dir().join(m.file)).unwrap();
        let comment = if m.file.ends_with(".sql") { "-- MUTANT " } else { "# MUTANT " };
        assert!(text.starts_with(comment), "{} must start with `{comment}NAME: what is wrong`", m.file);
        assert!(text.contains("Breaks "), "{}'s comment must say which seed text it breaks (`Breaks …`)", m.file);
    }

    // Controls: every scenario used passes unmutated, or a failure would prove nothing.
    let scenarios: Vec<&str> = MUTANTS.iter().map(|m| m.scenario).collect::<BTreeSet<_>>().into_iter().collect();
    let controls = parallel_map(&scenarios, |s| check(s, None, &tmp.path().join("control").join(s.replace('/', "-"))));
    let mut problems = Vec::new();
    for (scenario, outcome) in scenarios.iter().zip(&controls) {
        if !matches!(outcome, Outcome::Survived) {
            problems.push(format!("control {scenario} does not pass unmutated on seeds {SEEDS:?}: {outcome:?}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));

    let outcomes = parallel_map(MUTANTS, |m| check(m.scenario, Some(&mutants_dir().join(m.file)), &tmp.path().join(m.file)));

    let header = ["mutant", "scenario", "seeds", "outcome", "caught by", "every rule fired / why"];
    let mut rows: Vec<[String; 6]> = Vec::new();
    let (mut caught_n, mut at_load_n, mut gaps) = (0, 0, Vec::new());
    for (m, outcome) in MUTANTS.iter().zip(&outcomes) {
        let (seeds, verdict, by, rest) = match (outcome, m.expected_missing, m.at_load) {
            (Outcome::Caught { seeds, headlines, rules }, None, false) => {
                caught_n += 1;
                if let Some(target) = m.target.filter(|t| !rules.contains(t)) {
                    problems.push(format!("mutant {} is caught, but not by {target}, the rule it was made for: {rules:?}", m.file));
                }
                let seeds = join(seeds.iter().map(u64::to_string), ",");
                (seeds, "caught".to_string(), join(headlines, ", "), join(rules, ", "))
            }
            (Outcome::Refused(message), None, true) => {
                caught_n += 1;
                at_load_n += 1;
                let why = message.replace(&format!("{}/", root().display()), "");
                ("-".into(), "refused at load".into(), "load".into(), why)
            }
            (Outcome::Survived, Some(reason), _) => {
                gaps.push(m.file);
                ("-".into(), "KNOWN GAP".into(), "-".into(), reason.to_string())
            }
            (Outcome::Survived, None, _) => {
                problems.push(format!(
                    "mutant {} SURVIVED on {} (seeds {SEEDS:?}): no rule caught it; if no rule can yet, mark it expected_missing with the rule it needs",
                    m.file, m.scenario
                ));
                ("-".into(), "SURVIVED".into(), "-".into(), "-".into())
            }
            (Outcome::Caught { seeds, rules, .. }, Some(_), _) => {
                problems.push(format!(
                    "mutant {} is now caught (seeds {seeds:?}, rules {rules:?}): clear its expected_missing in tests/it/mutants.rs",
                    m.file
                ));
                ("-".into(), "GAP CLOSED".into(), join(rules, ", "), "clear expected_missing".into())
            }
            (Outcome::Broken(why), _, _) => {
                problems.push(format!("mutant {}: {why}", m.file));
                ("-".into(), "BROKEN".into(), "-".into(), why.clone())
            }
            (other, _, at_load) => {
                problems.push(format!("mutant {} (at_load: {at_load}): unexpected outcome {other:?}", m.file));
                ("-".into(), "UNEXPECTED".into(), "-".into(), format!("{other:?}"))
            }
        };
        rows.push([m.file.to_string(), m.scenario.to_string(), seeds, verdict, by, rest]);
    }

    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row).take(5) {
            *w = (*w).max(cell.len());
        }
    }
    let line = |cells: [&str; 6]| {
        let mut out = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i < 5 {
                out.push_str(&format!("{cell:<w$}  ", w = widths[i]));
            } else {
                out.push_str(cell);
            }
        }
        out
    };
    println!("oracle mutation testing: {} mutants, seeds {SEEDS:?}", MUTANTS.len());
    println!("{}", line(header));
    for row in &rows {
        println!("{}", line([&row[0], &row[1], &row[2], &row[3], &row[4], &row[5]]));
    }
    println!("controls: {} pass unmutated on every seed", join(scenarios.iter().map(|s| s.to_string()), ", "));
    println!(
        "score: {caught_n}/{} caught ({at_load_n} at load); {} known gap(s){}; {:.1} s",
        MUTANTS.len(),
        gaps.len(),
        if gaps.is_empty() { String::new() } else { format!(": {}", gaps.join(", ")) },
        started.elapsed().as_secs_f64()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
