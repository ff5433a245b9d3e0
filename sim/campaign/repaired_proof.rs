//! The parts of the repaired protocol's proof beyond the random-faults and ci-smoke sweeps
//! (issue 28, 4): `explore crashes --hangs` on quickstart and on a ci-smoke seed, `search` on
//! random-faults, `explore schedules` on the double-launch scenarios, and every shipped scenario
//! with nothing expected; all under `--protocol repaired` with every rule on. Each part is run
//! by `rehearsal findings --repaired` with the sizes of `ProofSizes` (options of that command),
//! and its table row is what the run measured, sizes included.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::base::error::Result;
use crate::campaign::explore::{document, ExploreOptions, PointOutcome};
use crate::campaign::schedules::SchedulesOptions;
use crate::campaign::search::SearchOptions;
use crate::campaign::shipped_scope::{self, Scope};
use crate::campaign::DistinctFailure;
use crate::input::scenario::Scenario;
use crate::run::{execute, Execution, Keep, RunOptions, RunSummary};
use crate::vocab::RunOutcome;
use crate::vocab::{Ending, FaultName};

/// The profile every part runs under.
const PROFILE: &str = "repaired";

/// The scenarios `explore crashes` runs on: the quickstart without its own `[budgets]` (so the
/// derived budgets judge it, conductor crashes included), and the strict copy of ci-smoke
/// (`allowed = []`).
const EXPLORE_QUICKSTART: &str = "scenarios/proof/proof-quickstart.toml";
const EXPLORE_CI_SMOKE: &str = "scenarios/proof/proof-ci-smoke.toml";
/// The strict copy of random-faults `search` runs on (`allowed = []`, so `--strict` is moot).
const SEARCH_SCENARIO: &str = "scenarios/proof/proof-random-faults.toml";
/// The double-launch scenarios (no `[expect]`: every rule on).
const SCHEDULE_SCENARIOS: &[&str] = &["scenarios/schedules/double-launch.toml", "scenarios/schedules/double-launch-review.toml"];
/// The folder of shipped scenarios every one of which is run with nothing expected.
const SHIPPED: &str = "scenarios";

/// How much of each part runs: options of `findings --repaired`, written into the document.
#[derive(Clone, Debug)]
pub struct ProofSizes {
    /// `explore crashes --hangs` explores the first this many points of each run (`--points
    /// 1..=N`; 0: every point), on quickstart and on the ci-smoke seed.
    pub explore_points: u64,
    /// The ci-smoke seed explored (0: that part is not run).
    pub explore_ci_seed: u64,
    /// `search --runs` on random-faults (0: not run).
    pub search_runs: usize,
    /// `explore schedules --bound` on the double-launch scenarios.
    pub schedules_bound: usize,
    pub jobs: usize,
}

/// One row of the proof table: the command as run, its size, what failed.
struct Part {
    command: String,
    size: String,
    failing: String,
    detail: Vec<String>,
    /// Lines printed below the table (the shipped scenarios not judged as written, the replay
    /// runs of distinct failures), under `notes_head`.
    notes: Vec<String>,
    notes_head: String,
}

/// The proof parts' rows (`| part | size | failing | distinct failures |`) and, below, each
/// failure with the file that replays it.
pub fn section(md: &mut String, sizes: &ProofSizes, runs_dir: &Path) -> Result<()> {
    let mut parts = Vec::new();
    parts.push(explore_part(EXPLORE_QUICKSTART, None, sizes, runs_dir)?);
    if sizes.explore_ci_seed > 0 {
        parts.push(explore_part(EXPLORE_CI_SMOKE, Some(sizes.explore_ci_seed), sizes, runs_dir)?);
    }
    if sizes.search_runs > 0 {
        parts.push(search_part(sizes, runs_dir)?);
    }
    for scenario in SCHEDULE_SCENARIOS {
        parts.push(schedules_part(scenario, sizes, runs_dir)?);
    }
    parts.push(shipped_part(sizes, runs_dir)?);
    let _ = writeln!(md, "Beyond the sweeps, with the sizes this command ran (options of `findings --repaired`; every command under `--protocol repaired`, every rule on):\n");
    let _ = writeln!(md, "| command | size | failing | distinct failures (first violation: runs) |");
    let _ = writeln!(md, "| --- | --- | --- | --- |");
    for p in &parts {
        let detail = if p.detail.is_empty() { "none".to_string() } else { p.detail.join("; ") };
        let _ = writeln!(md, "| `{}` | {} | {} | {} |", p.command, p.size, p.failing, detail.replace('|', "\\|"));
    }
    md.push('\n');
    for p in parts.iter().filter(|p| !p.notes.is_empty()) {
        let _ = writeln!(md, "{}\n", p.notes_head);
        for note in &p.notes {
            let _ = writeln!(md, "{note}");
        }
        md.push('\n');
    }
    Ok(())
}

fn explore_part(scenario: &str, seed: Option<u64>, sizes: &ProofSizes, runs_dir: &Path) -> Result<Part> {
    let stem = Path::new(scenario).file_stem().and_then(|s| s.to_str()).unwrap_or("explore");
    let options = ExploreOptions {
        scenario: PathBuf::from(scenario),
        seed,
        protocol: Some(PROFILE.to_string()),
        variants: Vec::new(),
        sessions: Vec::new(),
        points: (1..=sizes.explore_points).collect(),
        faults: FaultName::ALL.to_vec(),
        keep_faults: false,
        jobs: sizes.jobs,
        out: runs_dir.join(format!("explore-{stem}")),
        scratch: None,
        progress_every: usize::MAX,
        force: true,
        prefix: Default::default(),
    };
    let found = crate::campaign::explore::explore_crashes(&options)?;
    let mut command = format!("explore crashes {scenario} --faults {} --protocol {PROFILE}", fault_list(&FaultName::ALL));
    if let Some(seed) = seed {
        let _ = write!(command, " --seed {seed}");
    }
    if sizes.explore_points > 0 {
        let _ = write!(command, " --points 1..={}", sizes.explore_points);
    }
    let failing = found.rows.iter().filter(|r| !matches!(r.outcome, PointOutcome::Ran(RunOutcome::Pass) | PointOutcome::Unreached)).count();
    Ok(Part {
        notes_head: replay_head(&command),
        command,
        size: format!("seed {}: {} of the run's {} points, {} runs", found.seed, found.points, found.points_in_run, found.rows.len()),
        failing: format!("{failing} runs"),
        detail: distinct(&found.failures),
        notes: replay_notes(&options.out, runs_dir)?,
    })
}

/// One line per replay file a campaign saved under `out/failures/` (one per distinct
/// failure): its first violation when run again, and whether that run is the case of one of
/// the proof's assumptions (sim/campaign/assumption.rs). Only the replay run is checked, not
/// every run of its distinct failure.
fn replay_notes(out: &Path, runs_dir: &Path) -> Result<Vec<String>> {
    let Ok(entries) = std::fs::read_dir(out.join("failures")) else { return Ok(Vec::new()) };
    let mut files: Vec<PathBuf> =
        entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "toml")).collect();
    files.sort();
    let mut notes = Vec::new();
    for file in files {
        let scenario = crate::input::scenario::Scenario::load(&file)?;
        let (rule, case, _) = assumption_case(&scenario, &file, None, &[], &runs_dir.join("assumption-check"))?;
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
        notes.push(format!("- `{name}`: its replay run first breaks {rule}: {}", case_text(case)));
    }
    Ok(notes)
}

fn replay_head(command: &str) -> String {
    format!("Each distinct failure of `{command}` run again from its replay file (the proof's assumptions are checked on that run, sim/campaign/assumption.rs):")
}

/// Runs `scenario` (loaded from `path`) at `seed` under `variants` into `folder` (removed
/// after) and returns its first violated rule, the assumption whose case it is, if any, and
/// the hangs (ms) that kept the pending session silent (`assumption::hangs_before_claim_ms`). A1
/// is judged against its own 30 minutes (`PATIENT_CLAIM_OVERDUE_S`), not the run's setting: a
/// conductor that relaunches sooner breaks the rule outside the assumption.
pub fn assumption_case(
    scenario: &crate::input::scenario::Scenario,
    path: &Path,
    seed: Option<u64>,
    variants: &[String],
    folder: &Path,
) -> Result<(String, Option<&'static str>, Vec<i64>)> {
    let patience_ms = crate::input::variant::PATIENT_CLAIM_OVERDUE_S * 1000;
    let options = crate::run::RunOptions {
        scenario_path: path.to_path_buf(),
        seed,
        out_dir: Some(folder.to_path_buf()),
        variants: variants.to_vec(),
    };
    let summary = crate::run::execute(options.plan(scenario)?, crate::run::Execution::default())?.summary;
    let events = crate::trace::trace_reader::events(&folder.join("trace.csv"))?.events;
    let _ = std::fs::remove_dir_all(folder);
    let first = summary.verdict.violations.iter().filter(|v| v.first).min_by_key(|v| v.t_ms);
    let case = first.and_then(|v| crate::campaign::assumption::assumption_of(&events, v, patience_ms));
    let hangs_ms =
        first.filter(|_| case.is_some()).map_or_else(Vec::new, |v| crate::campaign::assumption::hangs_before_claim_ms(&events, v));
    Ok((first.map_or("none".to_string(), |v| v.rule.to_string()), case, hangs_ms))
}

/// How the document says whether a failure is an assumption's case.
pub(crate) fn case_text(case: Option<&str>) -> String {
    case.map_or("no assumption's case, a failure of the proof".to_string(), |a| format!("assumption {a}'s case (checked from its events)"))
}

/// `crash,hang,io_error`: the `--faults` value that places `faults`.
fn fault_list(faults: &[FaultName]) -> String {
    faults.iter().map(|f| f.as_str()).collect::<Vec<_>>().join(",")
}

fn distinct(failures: &[DistinctFailure]) -> Vec<String> {
    failures.iter().map(|f| format!("{} {}: {}", f.id, f.first_violation, f.runs)).collect()
}

fn search_part(sizes: &ProofSizes, runs_dir: &Path) -> Result<Part> {
    let options = SearchOptions {
        scenario: PathBuf::from(SEARCH_SCENARIO),
        runs: sizes.search_runs,
        seed: 1,
        strict: true,
        protocol: Some(PROFILE.to_string()),
        variants: Vec::new(),
        jobs: sizes.jobs,
        faults: FaultName::ALL.to_vec(),
        out: runs_dir.join("search-random-faults"),
        scratch: None,
        progress: false,
        force: true,
    };
    let found = crate::campaign::search::search(&options)?;
    let rows = found.search.rows.iter().chain(&found.random.rows);
    let failing = rows.clone().filter(|r| !r.violation.is_empty()).count();
    let mut rules: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for row in rows.filter(|r| !r.violation.is_empty()) {
        let rule = row.violation.split([' ', ':']).next().unwrap_or("").to_string();
        *rules.entry(rule).or_default() += 1;
    }
    let command = format!(
        "search {SEARCH_SCENARIO} --runs {} --strict --faults {} --protocol {PROFILE}",
        sizes.search_runs,
        fault_list(&FaultName::ALL)
    );
    Ok(Part {
        notes_head: replay_head(&command),
        command,
        size: format!("{} search + {} random runs", found.search.rows.len(), found.random.rows.len()),
        failing: format!("{failing} runs"),
        detail: rules.iter().map(|(r, n)| format!("{r}: {n}")).collect(),
        notes: replay_notes(&options.out, runs_dir)?,
    })
}

fn schedules_part(scenario: &str, sizes: &ProofSizes, runs_dir: &Path) -> Result<Part> {
    let stem = Path::new(scenario).file_stem().and_then(|s| s.to_str()).unwrap_or("schedules");
    let options = SchedulesOptions {
        scenario: PathBuf::from(scenario),
        seed: None,
        protocol: Some(PROFILE.to_string()),
        variants: Vec::new(),
        bound: sizes.schedules_bound,
        depth: usize::MAX,
        jobs: sizes.jobs,
        out: runs_dir.join(format!("schedules-{stem}")),
        scratch: None,
        progress: false,
        force: true,
    };
    let found = crate::campaign::schedules::explore_schedules(&options)?;
    let failing = found.rows.iter().filter(|r| r.outcome != RunOutcome::Pass).count();
    Ok(Part {
        command: format!("explore schedules {scenario} --bound {} --protocol {PROFILE}", sizes.schedules_bound),
        size: format!("seed {}: {} decision points, {} schedules", found.seed, found.base_decisions, found.rows.len()),
        failing: format!("{failing} runs"),
        detail: distinct(&found.failures),
        notes: Vec::new(),
        notes_head: String::new(),
    })
}

/// Every shipped scenario at its own seed, under the profile, with its `[expect]` table
/// removed: nothing expected, nothing allowed, so any violation fails it (a scenario that
/// demonstrates a flaw of the seeds' protocol must show none under the repaired one). A
/// scenario whose own `[protocol]` makes another protocol is judged under the profile alone
/// (and a shrunk one without the time limit shrink cut), and one outside the proof is run and shown but not counted (`shipped_scope`); the notes
/// below the table list both, each with its reasons and its verdict as written.
fn shipped_part(sizes: &ProofSizes, runs_dir: &Path) -> Result<Part> {
    let files: Vec<PathBuf> = crate::input::scenario_list::list(Path::new(SHIPPED))?.into_iter().map(|l| l.path).collect();
    let profile = crate::vocab::find_profile(PROFILE).expect("the profile exists");
    let mut judged = Vec::new();
    let mut written = Vec::new();
    let mut scopes = Vec::new();
    for path in &files {
        let doc = nothing_expected_doc(path)?;
        // Loaded and resolved (the profile with the scenario's own variants), as its run plans it.
        let resolved = document::scenario(&doc, path).and_then(|s| crate::input::variant::with_variants(&s, &[]).map(|_| s));
        let (scenario, scope) = match resolved {
            Ok(scenario) => {
                let scope = shipped_scope::scope(&doc, &scenario, profile)?;
                (scenario, scope)
            }
            // Its own `[protocol]` contradicts the profile (two variants replacing one
            // statement are refused): it cannot run as written under the profile, only
            // without its own protocol changes, and is judged so.
            Err(refused) => {
                let alone = shipped_scope::profile_alone(&doc, profile);
                let why = vec![format!("its own `[protocol]` cannot run under the profile ({refused}): judged without it")];
                let scenario = document::scenario(&alone, path).map_err(|_| refused)?;
                (scenario, Scope::Adjusted { doc: alone, why })
            }
        };
        match &scope {
            Scope::Adjusted { doc, .. } => judged.push((path.clone(), document::scenario(doc, path)?)),
            _ => judged.push((path.clone(), scenario.clone())),
        }
        written.push((path.clone(), scenario));
        scopes.push(scope);
    }
    // A scenario judged as adjusted also runs as written, for its note; one outside the proof
    // is judged as written, so its one run serves both.
    let mut all = judged.clone();
    let adjusted_at: Vec<usize> = (0..files.len()).filter(|i| matches!(scopes[*i], Scope::Adjusted { .. })).collect();
    all.extend(adjusted_at.iter().map(|i| written[*i].clone()));
    let mut runs = run_each(&all, sizes.jobs, runs_dir)?;
    let mut notes = run_on_past_cuts(&judged, &scopes, &mut runs[..files.len()], sizes.jobs, runs_dir)?;
    let (judged_runs, written_runs) = runs.split_at(files.len());
    let mut detail = Vec::new();
    for (i, (path, run)) in files.iter().zip(judged_runs).enumerate() {
        let outside = matches!(scopes[i], Scope::Outside(_));
        if !run.verdict.passed() && !outside {
            detail.push(format!("{} seed {}: {}", path.display(), run.seed, rules(run)));
        }
    }
    let run_on = notes.len();
    let mut as_written = adjusted_at.iter().zip(written_runs);
    for (i, scope) in scopes.iter().enumerate().filter(|(_, s)| **s != Scope::AsWritten) {
        let written_run = match scope {
            Scope::Adjusted { .. } => as_written.next().map(|(_, run)| run).expect("one as-written run per adjusted scenario"),
            _ => &judged_runs[i],
        };
        notes.push(scope_note(&files[i], scope, written_run, &judged_runs[i]));
    }
    let (adjusted, outside) = (adjusted_at.len(), count(&scopes, |s| matches!(s, Scope::Outside(_))));
    Ok(Part {
        command: format!("run SCENARIO --protocol {PROFILE}"),
        size: format!(
            "every scenario under {SHIPPED}/ ({}), each at its own seed, its [expect] table removed; {adjusted} of them without their own [protocol] changes or shrink-cut time limit, {run_on} run on past a time limit that cut their work, {outside} outside the proof (run, not counted): listed below",
            files.len()
        ),
        failing: format!("{} scenarios", detail.len()),
        detail,
        notes,
        notes_head: format!(
            "Not judged as written by `run SCENARIO --protocol {PROFILE}` (each reason computed from the scenario, sim/campaign/shipped_scope.rs, or from its run: a time limit that cut its work, `run_on_past_cuts`):"
        ),
    })
}

/// How much longer a run cut by its time limit is run on: three times its limit.
const RUN_ON_FACTOR: i64 = 3;

/// A judged run that failed where its time limit cut it, with work in flight
/// (scenarios/bench/fleet-day.toml: plans longer than its day, by design), is run again with
/// three times the limit and judged there instead. The same seed runs the same events up to the
/// first limit (the limit decides nothing before it), so a violation found before the cut is
/// found again; only what the cut left undecided (`liveness`, a message no session had read
/// yet) gets the time to be decided. A run still cut fails as it is. Each one is a note.
fn run_on_past_cuts(
    judged: &[(PathBuf, Scenario)],
    scopes: &[Scope],
    runs: &mut [RunSummary],
    jobs: usize,
    runs_dir: &Path,
) -> Result<Vec<String>> {
    let cut: Vec<usize> = (0..runs.len())
        .filter(|i| !matches!(scopes[*i], Scope::Outside(_)) && !runs[*i].verdict.passed() && runs[*i].ending == Ending::TimeLimit)
        .collect();
    let longer: Vec<(PathBuf, Scenario)> = cut
        .iter()
        .map(|i| {
            let (path, scenario) = &judged[*i];
            let mut scenario = scenario.clone();
            scenario.run.sim_time_max_ms *= RUN_ON_FACTOR;
            scenario.run.events_max = scenario.run.events_max.saturating_mul(RUN_ON_FACTOR as u64);
            (path.clone(), scenario)
        })
        .collect();
    let on = run_each(&longer, jobs, &runs_dir.join("run-on"))?;
    let mut notes = Vec::new();
    for (i, run) in cut.into_iter().zip(on) {
        let limit_h = judged[i].1.run.sim_time_max_ms as f64 / 3_600_000.0;
        notes.push(format!(
            "- `{}` seed {}, **cut by its time limit with work in flight** ({limit_h:.0} h, {} of {} tasks complete), so judged run on to {:.0} h: at {limit_h:.0} h: {}; run on: {} ({} of {} tasks complete, makespan {:.1} h)",
            judged[i].0.display(),
            run.seed,
            runs[i].tasks_complete,
            runs[i].tasks_total,
            limit_h * RUN_ON_FACTOR as f64,
            rules(&runs[i]),
            rules(&run),
            run.tasks_complete,
            run.tasks_total,
            run.makespan_ms as f64 / 3_600_000.0
        ));
        runs[i] = run;
    }
    Ok(notes)
}

fn count(scopes: &[Scope], which: impl Fn(&Scope) -> bool) -> usize {
    scopes.iter().filter(|s| which(s)).count()
}

fn rules(run: &RunSummary) -> String {
    if run.verdict.passed() {
        return "pass".to_string();
    }
    let mut rules: Vec<&str> = run.verdict.violations.iter().map(|v| v.rule.as_str()).collect();
    rules.sort_unstable();
    rules.dedup();
    rules.join(", ")
}

/// One listed scenario: why it is not judged as written, and what each run showed.
fn scope_note(path: &Path, scope: &Scope, as_written: &RunSummary, judged: &RunSummary) -> String {
    let seed = as_written.seed;
    match scope {
        Scope::Adjusted { why, .. } => format!(
            "- `{}` seed {seed}, **judged with these removed** ({}); as written: {}; judged: {}",
            path.display(),
            why.join("; "),
            rules(as_written),
            rules(judged)
        ),
        Scope::Outside(why) => {
            format!("- `{}` seed {seed}, **outside the proof** ({}); as written: {}", path.display(), why.join("; "), rules(as_written))
        }
        Scope::AsWritten => unreachable!("only scenarios not judged as written are listed"),
    }
}

/// The document of the scenario at `path` as it would run under the profile with nothing
/// expected.
pub fn nothing_expected_doc(path: &Path) -> Result<toml::Table> {
    let text = crate::base::input_file::read_text(path, "scenario")?;
    let (mut doc, _) = document::base(&text, path, true)?;
    doc.remove("expect");
    document::set_profile(&mut doc, Some(PROFILE))?;
    Ok(doc)
}

/// The scenario at `path` as it would run under the profile with nothing expected.
pub fn nothing_expected(path: &Path) -> Result<Scenario> {
    let scenario = document::scenario(&nothing_expected_doc(path)?, path)?;
    debug_assert!(scenario.expect.violations.is_empty() && scenario.expect.allowed.is_empty());
    Ok(scenario)
}

fn run_each(scenarios: &[(PathBuf, Scenario)], jobs: usize, runs_dir: &Path) -> Result<Vec<RunSummary>> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new((0..scenarios.len()).map(|_| None).collect::<Vec<Option<Result<RunSummary>>>>());
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if i >= scenarios.len() {
                    return;
                }
                let (path, scenario) = &scenarios[i];
                let out = runs_dir.join(format!("shipped-{i}"));
                let options = RunOptions { scenario_path: path.clone(), seed: None, out_dir: Some(out.clone()), variants: Vec::new() };
                let result = options
                    .plan(scenario)
                    .and_then(|plan| execute(plan, Execution { keep: Keep::Hash, ..Execution::default() }))
                    .map(|executed| executed.summary);
                let _ = std::fs::remove_dir_all(&out);
                results.lock().expect("no worker panics")[i] = Some(result);
            });
        }
    });
    results.into_inner().expect("no worker panics").into_iter().map(|r| r.expect("every file ran")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scenario_that_expects_a_flaw_runs_with_nothing_expected_under_the_profile() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let path = root.join("scenarios/faults/reply-to-zombie.toml");
        let shipped = Scenario::load(&path).unwrap();
        assert!(!shipped.expect.violations.is_empty(), "reply-to-zombie.toml expects its flaws");
        let strict = nothing_expected(&path).unwrap();
        assert!(strict.expect.violations.is_empty() && strict.expect.allowed.is_empty());
        assert_eq!(strict.profile, PROFILE);
    }

    /// The quickstart under the profile with its limit at half its makespan: cut with work in
    /// flight (liveness), run on to three times the limit it finishes and passes, and the note
    /// says both; a run that passed, or one outside the proof, is left as it is.
    #[test]
    fn a_run_its_time_limit_cut_is_judged_run_on_to_three_times_the_limit() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/proof/proof-quickstart.toml");
        let whole = nothing_expected(&path).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let full = run_each(&[(path.clone(), whole.clone())], 1, dir.path()).unwrap().remove(0);
        assert!(full.verdict.passed() && full.ending == Ending::Quiescent, "{}", full.render());
        let mut cut = whole.clone();
        cut.run.sim_time_max_ms = full.makespan_ms / 2;
        let judged = vec![(path.clone(), cut.clone()), (path.clone(), cut), (path.clone(), whole)];
        let mut runs = run_each(&judged, 1, dir.path()).unwrap();
        assert_eq!(runs[0].ending, Ending::TimeLimit);
        assert!(!runs[0].verdict.passed());
        let scopes = [Scope::AsWritten, Scope::Outside(vec!["a reason".to_string()]), Scope::AsWritten];
        let notes = run_on_past_cuts(&judged, &scopes, &mut runs, 1, dir.path()).unwrap();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("**cut by its time limit with work in flight**"), "{}", notes[0]);
        assert!(notes[0].contains(": liveness; run on: pass (4 of 4 tasks complete"), "{}", notes[0]);
        let limit_h = judged[0].1.run.sim_time_max_ms as f64 / 3_600_000.0;
        let hours = format!("({limit_h:.0} h, 0 of 4 tasks complete), so judged run on to {:.0} h", limit_h * 3.0);
        assert!(notes[0].contains(&hours), "{hours} in {}", notes[0]);
        assert!(runs[0].verdict.passed() && runs[0].ending == Ending::Quiescent, "the judged run is the longer one");
        assert!(!runs[1].verdict.passed(), "outside the proof: not run on");
        assert_eq!(runs[2].trace_hash, full.trace_hash, "a run that passed stays");
    }
}
