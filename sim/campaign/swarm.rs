//! `rehearsal swarm` (issue 48): the repaired profile over scenarios generated at random from
//! every feature of the scenario format (sim/campaign/swarm_draw.rs), not only its own proof
//! suites. Each scenario is first run fault-free (its faults removed) and swept only if that
//! run passes; then `seeds_per` seeds of it run under `--protocol repaired` with every rule on
//! (a generated scenario has no `[expect]`). Every failing pair is run again with its trace,
//! kept under `failures/`, and classified by the proof's assumption checker
//! (sim/campaign/assumption.rs) and the configuration checks of the assumptions
//! (`outside_of`): a failure under no assumption is "unexplained". The swarm's seed and every
//! scenario's draws are printed into the files it writes, so `--seed S --scenarios N` writes
//! the same scenarios, byte for byte, anywhere.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::base::error::Result;
use crate::campaign::swarm_draw::{draw, Drawn};
use crate::input::scenario::Scenario;
use crate::run::{execute, Execution, Keep, RunOptions, RunSummary};

/// What `rehearsal swarm` runs.
#[derive(Clone, Debug)]
pub struct SwarmOptions {
    pub seed: u64,
    pub scenarios: usize,
    pub seeds_per: u64,
    pub out: PathBuf,
    pub jobs: usize,
    /// Print a line every this many runs (`usize::MAX`: never).
    pub progress_every: usize,
    /// `--shrink`: each failing pair is also shrunk (`rehearsal shrink`) into
    /// `failures/NAME-sSEED/shrunk.toml`, from the replay file written beside it.
    pub shrink: bool,
}

/// One pair's row of `pairs.csv`.
#[derive(Clone, Debug, Serialize)]
pub struct PairRow {
    pub scenario: String,
    pub seed: u64,
    pub passed: bool,
    pub rules: String,
    /// `pass`, an assumption's id (`A1`, `A2`, …) or `unexplained`.
    pub class: String,
    pub replay: String,
    /// Under `--shrink`, the shrunk scenario of a failing pair (or why there is none); empty
    /// otherwise.
    pub shrunk: String,
}

/// What one swarm found.
pub struct SwarmFound {
    pub options: SwarmOptions,
    /// Scenarios whose fault-free run failed (not swept): name and rules.
    pub not_fault_free: Vec<(String, String)>,
    pub swept: usize,
    pub rows: Vec<PairRow>,
    /// How often each feature was drawn among the swept scenarios.
    pub features: BTreeMap<String, usize>,
    /// Runs a Ctrl-C kept from starting (0: the swarm is whole). The files hold the finished
    /// ones only, and the folder stays marked `INCOMPLETE`.
    pub not_run: usize,
}

impl SwarmFound {
    pub fn failing(&self) -> impl Iterator<Item = &PairRow> {
        self.rows.iter().filter(|r| !r.passed)
    }

    pub fn unexplained(&self) -> usize {
        self.failing().filter(|r| r.class == "unexplained").count()
    }
}

/// What a swarm writes in its folder (its record, sim/base/out_owner.rs): `rehearsal swarm`
/// claims the folder with these names before it runs.
pub const OWNED: &[&str] =
    &["scenarios", "failures", "scratch", "pairs.csv", "scenarios.csv", "swarm.md", crate::campaign::marker::INCOMPLETE_MARKER];

/// The folder of a swarm a Ctrl-C stopped stays marked, saying so.
pub fn mark_interrupted(dir: &Path, not_run: usize) -> Result<()> {
    crate::campaign::marker::mark(
        dir,
        &format!("interrupted (Ctrl-C): {not_run} run(s) never started; pairs.csv and swarm.md hold the finished ones"),
    )
}

/// A whole swarm's folder: its mark lifted once its last file is written.
pub fn unmark(dir: &Path) -> Result<()> {
    crate::campaign::marker::unmark(dir)
}

/// Runs the swarm into `options.out` (scenarios/, failures/, pairs.csv, scenarios.csv).
pub fn swarm(options: &SwarmOptions) -> Result<SwarmFound> {
    let dir = &options.out;
    crate::base::live_files::create_dir_all(dir.join("scenarios"))?;
    // Until its last file is written (the command lifts it): a swarm killed or stopped by
    // Ctrl-C is never taken for a whole one.
    crate::campaign::marker::mark(dir, "the swarm is running, was killed or was interrupted: its files hold the finished runs only")?;
    let drawn: Vec<Drawn> = (0..options.scenarios).map(|i| draw(options.seed, i)).collect();
    let mut loaded = Vec::with_capacity(drawn.len());
    for d in &drawn {
        let path = dir.join("scenarios").join(format!("{}.toml", d.name));
        crate::base::atomic::write_atomically(&path, d.text.as_bytes())?;
        let full = Scenario::parse(&d.text, &path)?;
        let free = Scenario::parse(&d.fault_free, &path)?;
        loaded.push((path, full, free));
    }
    let scratch = dir.join("scratch");
    // Removed at the end, and by a second Ctrl-C that ends the swarm at once.
    let _live = crate::base::live_files::track([scratch.clone()]);
    let free_jobs: Vec<(usize, u64, bool)> = (0..loaded.len()).map(|i| (i, 1, true)).collect();
    let free_runs = run_all(&loaded, &free_jobs, options, &scratch)?;
    let mut not_run = free_runs.iter().filter(|run| run.is_none()).count();
    let mut not_fault_free = Vec::new();
    let mut pairs = Vec::new();
    let mut features: BTreeMap<String, usize> = BTreeMap::new();
    for (i, run) in free_runs.iter().enumerate() {
        // Not run (Ctrl-C): neither swept nor counted.
        let Some(run) = run else { continue };
        if !run.verdict.passed() {
            not_fault_free.push((drawn[i].name.clone(), rules(run)));
            continue;
        }
        for f in &drawn[i].features {
            *features.entry(feature_word(f)).or_default() += 1;
        }
        pairs.extend((1..=options.seeds_per).map(|seed| (i, seed, false)));
    }
    let runs = run_all(&loaded, &pairs, options, &scratch)?;
    not_run += runs.iter().filter(|run| run.is_none()).count();
    let mut rows = Vec::with_capacity(runs.len());
    for ((i, seed, _), run) in pairs.iter().zip(&runs) {
        let Some(run) = run else { continue };
        let (path, full, _) = &loaded[*i];
        let replay = format!("rehearsal run {} --seed {seed}", path.display());
        let folder = dir.join("failures").join(format!("{}-s{seed}", drawn[*i].name));
        let (passed, class, shrunk) = if run.verdict.passed() {
            (true, "pass".to_string(), String::new())
        } else {
            let class = classify(full, path, *seed, &folder)?;
            let shrunk = if options.shrink { shrink_pair(path, *seed, run, &folder)? } else { String::new() };
            (false, class, shrunk)
        };
        rows.push(PairRow { scenario: drawn[*i].name.clone(), seed: *seed, passed, rules: rules(run), class, replay, shrunk });
    }
    let _ = std::fs::remove_dir_all(&scratch);
    crate::base::csv_rows::write_rows(&dir.join("pairs.csv"), &rows)?;
    write_scenarios_csv(dir, &drawn, &free_runs)?;
    let swept = free_runs.iter().flatten().count() - not_fault_free.len();
    Ok(SwarmFound { options: options.clone(), not_fault_free, swept, rows, features, not_run })
}

/// `--shrink`: the failing pair's replay file (`failures/NAME-sSEED/failure.toml`, as a
/// sweep saves one) and `rehearsal shrink` of it into `shrunk.toml` beside it: the scenario cut
/// down while it fails with the same first rule at the same protocol point. Returns the shrunk
/// file's path, or why there is none (a shrink that cannot reproduce the failure is said, not
/// fatal: one pair never takes the swarm down).
fn shrink_pair(path: &Path, seed: u64, run: &RunSummary, folder: &Path) -> Result<String> {
    let (scenario, scenario_sha256, _, _) = crate::campaign::failure_file::Failure::describe(path, None)?;
    let first = run.verdict.violations.iter().find(|v| v.first);
    let failure = crate::campaign::failure_file::Failure {
        scenario,
        scenario_sha256,
        named: String::new(),
        sql: None,
        sql_sha256: None,
        seed,
        protocol: None,
        variants: Vec::new(),
        rule: first.map_or_else(String::new, |v| v.rule.to_string()),
        trace_hash: run.trace_hash.clone(),
        explanation: first.map_or_else(String::new, |v| v.explanation.clone()),
    };
    let text = format!(
        "# A failing pair saved by `rehearsal swarm --shrink`; replay it with `rehearsal replay` on this file.\n{}",
        toml::to_string(&failure).map_err(|e| crate::base::error::Error::harness(e.to_string()))?
    );
    crate::base::live_files::create_dir_all(folder)?;
    let failure_path = folder.join("failure.toml");
    crate::base::atomic::write_atomically(&failure_path, text.as_bytes())?;
    let out = folder.join("shrunk.toml");
    Ok(match crate::campaign::shrink::shrink(&failure_path, crate::campaign::shrink::Target::File(&out), true) {
        Ok(report) => format!("{} ({} -> {} events, {} runs)", out.display(), report.events_before, report.events_after, report.runs),
        Err(e) => format!("not shrunk: {e}"),
    })
}

/// The feature's kind without its number (`jitter 35 s` → `jitter`), for the table.
fn feature_word(feature: &str) -> String {
    let word = feature.split(['=', ' ']).next().unwrap_or(feature);
    match word {
        "scripted" | "long" | "short" | "late" | "early" | "answer" | "emergency" | "context" | "exit" | "conductor" | "missing"
        | "watcher" | "error" | "subagent" | "reject+fix" => feature.split('=').next().unwrap_or(feature).to_string(),
        _ => word.to_string(),
    }
}

#[derive(Serialize)]
struct ScenarioRow<'a> {
    scenario: &'a str,
    fault_free: &'a str,
    features: String,
}

fn write_scenarios_csv(dir: &Path, drawn: &[Drawn], free_runs: &[Option<RunSummary>]) -> Result<()> {
    let rows: Vec<ScenarioRow> = drawn
        .iter()
        .zip(free_runs)
        .filter_map(|(d, run)| run.as_ref().map(|run| (d, run)))
        .map(|(d, run)| ScenarioRow {
            scenario: &d.name,
            fault_free: if run.verdict.passed() { "pass" } else { "fail" },
            features: d.features.join("; "),
        })
        .collect();
    crate::base::csv_rows::write_rows(&dir.join("scenarios.csv"), &rows)
}

/// A failing pair run again with its trace kept in `folder` (`failures/NAME-sSEED/`), and
/// the assumption it falls under: A1 or A3 from its events (sim/campaign/assumption.rs), A2 when the
/// configuration's jitter is past the seeds' margin; otherwise `unexplained`.
fn classify(scenario: &Scenario, path: &Path, seed: u64, folder: &Path) -> Result<String> {
    let _ = std::fs::remove_dir_all(folder);
    let options =
        RunOptions { scenario_path: path.to_path_buf(), seed: Some(seed), out_dir: Some(folder.to_path_buf()), variants: Vec::new() };
    let summary = execute(options.plan(scenario)?, Execution::default())?.summary;
    let events = crate::trace::trace_reader::events(&folder.join("trace.csv"))?.events;
    let patience_ms = crate::input::variant::PATIENT_CLAIM_OVERDUE_S * 1000;
    let firsts: Vec<_> = summary.verdict.violations.iter().filter(|v| v.first).collect();
    let cap = scenario.conductor.sessions_per_task_max;
    let case = |v: &&crate::judging::oracle::Violation| {
        crate::campaign::assumption::assumption_of(&events, v, patience_ms)
            .or_else(|| crate::campaign::assumption::cap_spent_by_clean_exits(&events, v, cap))
    };
    let cases: Vec<Option<&str>> = firsts.iter().map(case).collect();
    if !cases.is_empty() && cases.iter().all(Option::is_some) {
        let mut ids: Vec<&str> = cases.into_iter().flatten().collect();
        ids.sort_unstable();
        ids.dedup();
        return Ok(ids.join("+"));
    }
    if let Some(id) = outside_of(scenario).first() {
        return Ok(id.0.to_string());
    }
    Ok("unexplained".to_string())
}

/// The assumptions of the proof a configuration is outside of (A1, A2), and the lines a
/// run's verdict says them in: computed in the judging layer, so the verdict has them.
pub use crate::judging::outside::{outside_lines, outside_of};

fn rules(run: &RunSummary) -> String {
    let mut rules: Vec<&str> = run.verdict.violations.iter().map(|v| v.rule.as_str()).collect();
    rules.sort_unstable();
    rules.dedup();
    rules.join(",")
}

/// Runs `jobs` (scenario index, seed, fault-free) on `options.jobs` threads, in order.
fn run_all(
    loaded: &[(PathBuf, Scenario, Scenario)],
    jobs: &[(usize, u64, bool)],
    options: &SwarmOptions,
    scratch: &Path,
) -> Result<Vec<Option<RunSummary>>> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new((0..jobs.len()).map(|_| None).collect::<Vec<Option<Result<RunSummary>>>>());
    std::thread::scope(|s| {
        for _ in 0..options.jobs.max(1) {
            s.spawn(|| loop {
                // Ctrl-C: no run starts; those under way finish (their slots stay empty otherwise).
                if crate::base::interrupt::interrupted() {
                    return;
                }
                let k = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if k >= jobs.len() {
                    return;
                }
                if k > 0 && k.is_multiple_of(options.progress_every) {
                    eprintln!("swarm: {k} of {} runs", jobs.len());
                }
                let (i, seed, free) = jobs[k];
                let (path, full, fault_free) = &loaded[i];
                let scenario = if free { fault_free } else { full };
                let out = scratch.join(format!("run-{k}"));
                let options =
                    RunOptions { scenario_path: path.clone(), seed: Some(seed), out_dir: Some(out.clone()), variants: Vec::new() };
                let result = options
                    .plan(scenario)
                    .and_then(|plan| execute(plan, Execution { keep: Keep::Hash, ..Execution::default() }))
                    .map(|e| e.summary);
                let _ = std::fs::remove_dir_all(&out);
                results.lock().expect("no worker panics")[k] = Some(result);
            });
        }
    });
    results.into_inner().expect("no worker panics").into_iter().map(|r| r.transpose()).collect()
}

/// The swarm section of docs/repaired-protocol.md: the command, the sizes, the pairs by class,
/// the features drawn, every failing pair with its class and replay.
pub fn section(md: &mut String, found: &SwarmFound) {
    let o = &found.options;
    let _ = writeln!(md, "## The swarm\n");
    let _ = writeln!(
        md,
        "Generated by `cargo run --release -- swarm --seed {} --scenarios {} --seeds-per {} --doc docs/repaired-protocol.md` (sim/campaign/swarm.rs, swarm_draw.rs): {} scenarios drawn at random from every feature of the scenario format, each run fault-free first under the profile and swept only if it passes, then seeds 1..={} of each under `--protocol repaired` with every rule on. A failing pair is classified by the proof's assumption checker (sim/campaign/assumption.rs: A1, a silence before the claim past the conductor's 30-minute patience, and A3, a double launch's twin not yet started when the conductor launches the next session, and A4, a task whose work does not fit in `conductor.sessions_per_task_max` sessions: given up at the cap (docs/protocol.md C8) after that many of its sessions ended in their own clean exit (context spikes and thresholds use the cap up without any fault, under any protocol that keeps it), all from the run's events) and the configuration checks of the assumptions (A2: watcher jitter past the seeds' margin; A1: a twin later than the patience); a failure under none is unexplained.\n",
        o.seed, o.scenarios, o.seeds_per, o.scenarios, o.seeds_per
    );
    let failing = found.failing().count();
    let mut by_class: BTreeMap<&str, usize> = BTreeMap::new();
    for r in found.failing() {
        *by_class.entry(r.class.as_str()).or_default() += 1;
    }
    let classes = if by_class.is_empty() {
        "none".to_string()
    } else {
        by_class.iter().map(|(c, n)| format!("{c}: {n}")).collect::<Vec<_>>().join(", ")
    };
    let _ = writeln!(md, "| scenarios drawn | fault-free pass (swept) | pairs | failing pairs | by class | unexplained |");
    let _ = writeln!(md, "| --- | --- | --- | --- | --- | --- |");
    let _ =
        writeln!(md, "| {} | {} | {} | {failing} | {classes} | {} |\n", o.scenarios, found.swept, found.rows.len(), found.unexplained());
    let features = found.features.iter().map(|(f, n)| format!("{f} {n}")).collect::<Vec<_>>().join(", ");
    let _ = writeln!(md, "Features among the swept scenarios (scenarios drawing each): {features}.\n");
    if !found.not_fault_free.is_empty() {
        let list = found.not_fault_free.iter().map(|(n, r)| format!("`{n}` ({r})")).collect::<Vec<_>>().join(", ");
        let _ = writeln!(md, "Not swept, their fault-free run failing under the profile: {list}.\n");
    }
    if failing > 0 {
        let _ = writeln!(
            md,
            "Failing pairs (replay: `rehearsal run OUT/scenarios/NAME.toml --seed N`; `--seed {} --scenarios {}` writes the same files):\n",
            o.seed, o.scenarios
        );
        for r in found.failing() {
            let _ = writeln!(md, "- `{}` seed {}: {}: {}", r.scenario, r.seed, r.rules, r.class);
        }
        md.push('\n');
    }
}

/// Replaces the `## The swarm` section of the document at `path` (up to the next `## `
/// heading) with `section`, or appends it: the splice the conductor sections use too.
pub fn splice_section(path: &Path, section: &str) -> Result<()> {
    crate::campaign::conductor_findings::splice(path, "## The swarm", section)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_text(text: &str, dir: &Path, name: &str, seed: u64) -> RunSummary {
        let path = dir.join(format!("{name}.toml"));
        let scenario = Scenario::parse(text, &path).unwrap();
        let options =
            RunOptions { scenario_path: path, seed: Some(seed), out_dir: Some(dir.join(format!("{name}-{seed}"))), variants: Vec::new() };
        execute(options.plan(&scenario).unwrap(), Execution { keep: Keep::Hash, ..Execution::default() }).unwrap().summary
    }

    /// `--shrink`: a failing pair gets its replay file and a shrunk scenario that still fails
    /// with the same rule (here the session cap case of docs/protocol.md C87 under the seeds'
    /// protocol, which has no `uncap-lost-sessions`: liveness).
    #[test]
    fn a_failing_pair_is_shrunk_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let text = std::fs::read_to_string("scenarios/proof/cap-after-conductor-crash.toml").unwrap();
        std::fs::write(dir.path().join("cap.toml"), &text).unwrap();
        let run = run_text(&text, dir.path(), "cap", 1);
        assert_eq!(run.verdict.failure, "liveness");
        let folder = dir.path().join("failures").join("cap-s1");
        let said = shrink_pair(&dir.path().join("cap.toml"), 1, &run, &folder).unwrap();
        assert!(said.starts_with(&folder.join("shrunk.toml").display().to_string()), "{said}");
        assert!(folder.join("failure.toml").is_file());
        let shrunk = std::fs::read_to_string(folder.join("shrunk.toml")).unwrap();
        let again = run_text(&shrunk, dir.path(), "shrunk", 1);
        assert_eq!(again.verdict.failure, "liveness", "{shrunk}");
    }

    /// Issue 48, 3: a single-crash run of a generated configuration stays within every derived
    /// budget (the patient relaunch and the review queue included): the first generated
    /// scenarios of seed 1 whose fault-free run passes, with one crash of task-01's S1 at its
    /// second heartbeat instead of their faults.
    #[test]
    fn a_single_crash_run_of_a_generated_configuration_stays_within_its_budgets() {
        let dir = tempfile::tempdir().unwrap();
        let mut checked = 0;
        for index in 0..12 {
            let d = draw(1, index);
            if !run_text(&d.fault_free, dir.path(), &d.name, 1).verdict.passed() {
                continue;
            }
            let crash = format!("{}\n[[faults.crash]]\ntask = 1\nat = \"before:heartbeat\"\nnth = 2\n", d.fault_free);
            let run = run_text(&crash, dir.path(), &format!("{}-crash", d.name), 1);
            let budget: Vec<&str> =
                run.verdict.violations.iter().filter(|v| v.rule.as_str() == "budget").map(|v| v.explanation.as_str()).collect();
            assert!(budget.is_empty(), "{}: {budget:?}", d.name);
            checked += 1;
        }
        assert!(checked >= 8, "{checked} scenarios checked");
    }

    #[test]
    fn a_twin_later_than_the_patience_or_jitter_past_the_margin_is_outside_the_proof() {
        let dir = tempfile::tempdir().unwrap();
        let base = "[protocol]\nprofile = \"repaired\"\n[tasks]\ncount = 1\n";
        let inside =
            Scenario::parse(&format!("{base}[[faults.double_launch]]\ntask = 1\nafter_ms = 1200000\n"), &dir.path().join("a.toml"))
                .unwrap();
        assert!(outside_lines(&inside).is_empty());
        let late = Scenario::parse(&format!("{base}[[faults.double_launch]]\ntask = 1\nafter_ms = 1900000\n"), &dir.path().join("b.toml"))
            .unwrap();
        assert_eq!(outside_of(&late)[0].0, "A1");
        assert!(outside_lines(&late)[0].contains("assumption A1"), "{:?}", outside_lines(&late));
        let jitter = Scenario::parse(&format!("{base}[faults]\nwatcher_jitter_ms = 90000\n"), &dir.path().join("c.toml")).unwrap();
        assert_eq!(outside_of(&jitter)[0].0, "A2");
        let seeds = Scenario::parse("[tasks]\ncount = 1\n[faults]\nwatcher_jitter_ms = 90000\n", &dir.path().join("d.toml")).unwrap();
        assert!(outside_lines(&seeds).is_empty(), "only the repaired profile's proof has these assumptions");
    }

    #[test]
    fn the_swarm_section_replaces_its_old_self_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("doc.md");
        std::fs::write(&path, "# Doc\n\n## A\n\na\n\n## The swarm\n\nold\n\n## B\n\nb\n").unwrap();
        splice_section(&path, "## The swarm\n\nnew\n\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "# Doc\n\n## A\n\na\n\n## The swarm\n\nnew\n\n## B\n\nb\n");
        std::fs::write(&path, "# Doc\n\n## A\n\na\n").unwrap();
        splice_section(&path, "## The swarm\n\nnew\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "# Doc\n\n## A\n\na\n\n## The swarm\n\nnew\n");
    }
}
