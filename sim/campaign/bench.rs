//! `rehearsal bench SCENARIO --param NAME=V1,V2,… --seeds RANGE --out DIR`: a parameter grid
//! for benchmarkers. Every grid point is the scenario with some keys replaced; it is written
//! to `DIR/points/pNNN.toml` (so any of its runs replays with `rehearsal run`), validated
//! before anything runs, and run for every seed. `bench.csv` gets one row per grid point with
//! simulated outcomes (false stale alarms, detection and notice latency quantiles, statements
//! per simulated hour, lock waits, BUSY errors, makespan); `heatmap-<metric>.svg` shows a
//! metric over two of the parameters. Outputs are simulated quantities only, so they are the
//! same for every `--jobs`; wall-clock speed is printed, never written.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

pub mod figures;
mod pictures;

use crate::base::atomic::write_atomically;
use crate::base::error::{Error, Result};
use crate::campaign::{Campaign, FolderSpec};
use crate::input::scenario::Scenario;
use crate::judging::oracle::quantiles;
use crate::report::grid_charts::{self, Metric};
use crate::run::{run_scenario, RunOptions, RunSummary};
use crate::vocab::{RuleId, RunOutcome};

/// One `--param`: one dotted scenario key and its values (`NAME=V1,V2,…`), or several keys
/// swept together, a tuple of values per step (`A,B=A1,B1;A2,B2;…`: paired parameters move
/// together rather than over every combination).
#[derive(Clone, Debug)]
pub struct Param {
    /// The dotted keys: one, or the paired ones in the order given.
    pub names: Vec<String>,
    /// One tuple per step: a TOML value per name.
    pub values: Vec<Vec<toml::Value>>,
    /// The tuples as written (a label per name), for CSV columns and axis labels.
    pub labels: Vec<Vec<String>>,
}

impl Param {
    /// The keys as given: `timing.background_poll_ms`, or `a,b` for paired keys.
    pub fn name(&self) -> String {
        self.names.join(",")
    }

    /// Step `i` as written: `15000`, or `300,360` for paired keys.
    pub fn label(&self, i: usize) -> String {
        self.labels[i].join(",")
    }

    /// How many steps the parameter takes.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// Splits `text` at `sep` outside braces, brackets and quotes, so inline tables such as
/// `{ kind = "uniform", min = 0, max = 9 }` stay whole.
fn split_top_level(text: &str, sep: char) -> Vec<String> {
    let (mut parts, mut current, mut depth, mut quote) = (Vec::new(), String::new(), 0_i32, None::<char>);
    for c in text.chars() {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '{' | '[') => depth += 1,
            (None, '}' | ']') => depth -= 1,
            (None, c) if c == sep && depth == 0 => {
                parts.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    parts.push(current);
    parts.into_iter().map(|p| p.trim().to_string()).collect()
}

/// One value as TOML; a bare word is a string (`conductor.context_reply=approve,fix`).
fn toml_value(item: &str) -> std::result::Result<toml::Value, String> {
    if item.is_empty() {
        return Err("an empty value".into());
    }
    match toml::from_str::<toml::Table>(&format!("v = {item}")) {
        Ok(mut table) => Ok(table.remove("v").expect("the key just written")),
        Err(_) if item.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') => Ok(toml::Value::String(item.to_string())),
        Err(e) => Err(format!("value `{item}` is not a TOML value: {}", e.message().trim())),
    }
}

/// `NAME=V1,V2,…` or, for keys swept together, `A,B=A1,B1;A2,B2;…` (a tuple per step,
/// separated by `;`, a value per key in each). Anything else is an input error (exit 2).
pub fn parse_param(text: &str) -> Result<Param> {
    let bad = |why: String| Error::input(format!("--param `{text}`: {why}"));
    let (names, list) = text.split_once('=').ok_or_else(|| {
        bad("expected NAME=V1,V2,… e.g. timing.background_poll_ms=5000,15000, or A,B=A1,B1;A2,B2 for keys swept together".into())
    })?;
    let names: Vec<String> = names.split(',').map(|n| n.trim().to_string()).collect();
    let key_ok = |k: &str| !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if let Some(name) = names.iter().find(|n| !n.split('.').all(key_ok)) {
        return Err(bad(format!("`{name}` is not a dotted scenario key such as timing.background_poll_ms")));
    }
    if names.iter().enumerate().any(|(i, n)| names[..i].contains(n)) {
        return Err(bad("a key is named twice".into()));
    }
    let steps: Vec<Vec<String>> = if names.len() == 1 {
        if split_top_level(list, ';').len() > 1 {
            return Err(bad("`;` separates the tuples of keys swept together (A,B=A1,B1;A2,B2); one key takes V1,V2,…".into()));
        }
        split_top_level(list, ',').into_iter().map(|v| vec![v]).collect()
    } else {
        split_top_level(list, ';').into_iter().map(|tuple| split_top_level(&tuple, ',')).collect()
    };
    let mut param = Param { names, values: Vec::new(), labels: Vec::new() };
    for step in steps {
        if step.len() != param.names.len() {
            return Err(bad(format!(
                "`{}` has {} values for {} keys ({}): give a value per key in each `;`-separated tuple",
                step.join(","),
                step.len(),
                param.names.len(),
                param.name()
            )));
        }
        param.values.push(step.iter().map(|v| toml_value(v)).collect::<std::result::Result<_, _>>().map_err(bad)?);
        param.labels.push(step);
    }
    if param.labels.iter().enumerate().any(|(i, l)| param.labels[..i].contains(l)) {
        return Err(bad("a value is listed twice".into()));
    }
    Ok(param)
}

#[derive(Clone, Debug)]
pub struct BenchOptions {
    pub scenario: PathBuf,
    pub params: Vec<Param>,
    pub seeds: Vec<u64>,
    /// `--protocol NAME`: the profile of every grid point's runs, in place of the scenario's
    /// (a point's file names the scenario's own; its replay command carries `--protocol`).
    pub protocol: Option<String>,
    pub variants: Vec<String>,
    pub jobs: usize,
    pub out: PathBuf,
    /// The two parameters the heatmaps are drawn over (default: the first two).
    pub heatmap: Option<(String, String)>,
    /// Print a progress line every this many runs (stderr); 0 for none.
    pub progress_every: usize,
    /// Replace what an earlier command left in `out` (refused without it: sim/base/out_folder.rs).
    pub force: bool,
    /// `--sql FILE`: layered over the scenario's own SQL in every grid point's runs (a point's
    /// file names the scenario's own; its replay command carries `--sql`).
    pub sql: Option<PathBuf>,
}

/// A grid's folder (sim/campaign/folder.rs): what it writes there besides what every
/// campaign does. `points/` is made only once every point's file is known to load.
fn folder_spec(options: &BenchOptions) -> FolderSpec<'_> {
    FolderSpec {
        name: "bench",
        out: &options.out,
        owned: &["bench.csv", "causes.csv", "points", "heatmap-*", "lines-*", "causes-*"],
        folders: &[],
        journal: None,
        force: options.force,
        scratch: None,
    }
}

/// A grid point: the value index of each parameter, and its scenario file.
#[derive(Clone, Debug)]
pub struct Point {
    pub index: usize,
    pub choice: Vec<usize>,
    pub path: PathBuf,
}

/// What one run contributes to its grid point.
#[derive(Clone, Debug, Default)]
pub struct RunStat {
    pub point: usize,
    pub seed: u64,
    /// `Error` until the run is judged (the default).
    pub verdict: RunOutcome,
    pub replay: String,
    pub makespan_ms: i64,
    /// Tasks not `complete` at the end (given up, or stuck: `liveness`).
    pub tasks_unfinished: usize,
    pub statements: u64,
    pub lock_waits: u64,
    pub busy_errors: u64,
    pub false_stale_alarms: u64,
    pub stale_declared: u64,
    pub crash_detect_ms: Vec<i64>,
    pub message_notice_ms: Vec<i64>,
    pub heartbeat_age_s: Vec<i64>,
    /// The rules the run violated, allowed ones included (`[expect] allowed` makes a
    /// violation no failure, but a benchmark still counts it).
    pub violated: Vec<&'static str>,
    /// Throughput, the designer's figures and latency causes; whether the time limit cut the
    /// run off (sim/campaign/bench/figures.rs).
    pub figures: figures::RunFigures,
}

/// The metrics of `bench.csv` the pictures show: (column, what it means, the unit it is shown
/// in, the divisor from the column's unit to that one, the top of its scale if it has one).
pub const PICTURE_METRICS: [(&str, &str, &str, f64, Option<f64>); 6] = [
    ("false_alarm_rate", "share of runs in which the conductor declared a live, healthy session stale", "share of runs", 1.0, Some(1.0)),
    ("tasks_per_sim_hour", "tasks completed per simulated hour, finished runs only", "tasks / simulated hour", 1.0, None),
    ("crash_detect_ms_p95", "95th percentile of crash-to-stale-declaration latency, finished runs", "s", 1000.0, None),
    ("recovery_ms_p95", "95th percentile of crash-to-successor's-claim latency, finished runs", "s", 1000.0, None),
    ("message_notice_ms_p95", "95th percentile of message-sent-to-noticed latency, finished runs", "s", 1000.0, None),
    ("statements_per_sim_hour", "protocol statements per simulated hour", "statements / simulated hour", 1.0, None),
];

/// Sets `dotted` in `table`, creating tables on the way; a value that is not a table on the
/// way is an error naming the key.
fn set_dotted(table: &mut toml::Table, dotted: &str, value: toml::Value) -> std::result::Result<(), String> {
    let mut keys: Vec<&str> = dotted.split('.').collect();
    let last = keys.pop().expect("split yields one key at least");
    let mut here = table;
    for (depth, key) in keys.iter().enumerate() {
        let entry = here.entry(key.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
        here = match entry {
            toml::Value::Table(t) => t,
            other => {
                return Err(format!("`{}` is a {}, not a table, so `{dotted}` cannot be set", keys[..=depth].join("."), other.type_str()))
            }
        };
    }
    here.insert(last.to_string(), value);
    Ok(())
}

/// Every combination of parameter values, the first parameter varying slowest.
/// The most grid points one bench writes (a file each): a heatmap of 100 × 100.
pub const MAX_GRID_POINTS: u128 = 10_000;

/// Refuses a grid of more than `MAX_GRID_POINTS` points, or more runs than
/// `seed_set::MAX_RUNS` with its seeds, before any point is built (issue 30: a grid of 4·10^6
/// points grew without end).
fn check_grid_size(options: &BenchOptions) -> Result<()> {
    let points: u128 = options.params.iter().map(|p| p.len() as u128).product();
    if points > MAX_GRID_POINTS {
        return Err(Error::input(format!("the --param grid has {points} points; a bench makes at most {MAX_GRID_POINTS}")));
    }
    let seeds = options.seeds.len() as u128;
    crate::base::seed_set::check_runs(points * seeds, &format!("the --param grid of {points} point(s) over {seeds} seed(s)"), "")
}

fn combinations(params: &[Param]) -> Vec<Vec<usize>> {
    let mut all = vec![Vec::new()];
    for param in params {
        all = all.into_iter().flat_map(|prefix| (0..param.len()).map(move |i| [prefix.clone(), vec![i]].concat())).collect();
    }
    all
}

/// Builds every grid point's scenario and loads it, so a bad key or value is reported, with
/// the point's file, line and column, before any run starts; only when every point loads
/// are they written under `out/points/` (an invalid grid leaves no point files). Returns the
/// claimed folder with them.
pub fn prepare_points(options: &BenchOptions) -> Result<(Campaign, Vec<Point>)> {
    check_grid_size(options)?;
    let base_text = crate::base::input_file::read_text(&options.scenario, "scenario")?;
    let scenario = Scenario::parse(&base_text, &options.scenario)?;
    if let Some(warning) = fault_load_warning(&scenario, options) {
        eprintln!("rehearsal: warning: {warning}");
    }
    // Its SQL, `--sql` over its own, before any point: a bad file is bad input, once.
    crate::campaign::replay::check(&options.scenario, options.sql.as_deref(), options.protocol.as_deref(), &options.variants)?;
    let base: toml::Table =
        toml::from_str(&base_text).map_err(|e| Error::input(format!("{}: {}", options.scenario.display(), e.message())))?;
    let points_dir = options.out.join("points");
    let mut points = Vec::new();
    for (index, choice) in combinations(&options.params).into_iter().enumerate() {
        let path = points_dir.join(format!("p{index:03}.toml"));
        let text = point_text(options, &base, index, &choice)?;
        points.push((Point { index, choice, path }, text));
    }
    // Only once every point is a valid scenario: a refused grid leaves no folder behind.
    let campaign = Campaign::open(&folder_spec(options))?;
    crate::base::live_files::create_dir_all(&points_dir)
        .map_err(|e| Error::input(format!("cannot create {}: {e}", points_dir.display())))?;
    for (point, text) in &points {
        write_atomically(&point.path, text.as_bytes())?;
    }
    Ok((campaign, points.into_iter().map(|(point, _)| point).collect()))
}

/// A grid point the scenario checks refuse, said in the user's terms: the parameters and
/// values that make it, and the scenario they change, not the point's file, which is never
/// written (its line and column are of text the user did not write).
fn point_refused(options: &BenchOptions, path: &Path, described: &[String], e: &Error) -> Error {
    let (Error::Input(why) | Error::Harness(why)) = e;
    let why = match why.strip_prefix(&format!("{}:", path.display())) {
        // `LINE:COL: ` of the point's text.
        Some(rest) => rest.splitn(3, ':').nth(2).map_or(rest, str::trim_start),
        None => why.as_str(),
    };
    Error::input(format!("--param {}: {} with this value is refused: {why}", described.join(", "), options.scenario.display()))
}

/// Odds rolled per write (`crash_probability`, `hang_probability`) make a run's fault load
/// follow its number of writes: a swept parameter that changes how often sessions write (a
/// poll or refresh interval, the task count, anything outside `[faults]`) hands the same
/// seeds a different number of faults, and the grid compares fault loads, not the parameter.
fn fault_load_warning(scenario: &Scenario, options: &BenchOptions) -> Option<String> {
    use crate::input::scenario::Odds;
    // Unset (issue 44) is no fault, as a written 0 is none here: neither rolls a crash.
    let on = |odds: Odds| !matches!(odds, Odds::Unset) && !matches!(odds, Odds::Fixed(p) if p == 0.0);
    let per_write: Vec<&str> =
        [("crash_probability", scenario.faults.crash_probability), ("hang_probability", scenario.faults.hang_probability)]
            .into_iter()
            .filter(|(_, odds)| on(*odds))
            .map(|(name, _)| name)
            .collect();
    let swept: Vec<String> = options.params.iter().flat_map(|p| p.names.iter()).filter(|n| !n.starts_with("faults.")).cloned().collect();
    if per_write.is_empty() || swept.is_empty() {
        return None;
    }
    Some(format!(
        "faults.{} rolled per write, and --param {} may change how many writes a run makes: the same seeds then meet different numbers of faults. Give the odds per simulated hour (faults.crash_per_sim_hour, faults.hang_per_sim_hour) to hold the fault load",
        per_write.join(" and faults."),
        swept.join(", ")
    ))
}

/// Grid point `index`: the scenario with each parameter's chosen step, as the text of its
/// file, checked as a scenario at the path it will have.
fn point_text(options: &BenchOptions, base: &toml::Table, index: usize, choice: &[usize]) -> Result<String> {
    let mut table = base.clone();
    // The point lives in another folder: a protocol SQL file named relative to the
    // scenario is named absolutely in the point.
    if let Some(toml::Value::String(sql)) = table.get("protocol").and_then(|p| p.get("sql")).cloned() {
        let from_scenario = options.scenario.parent().unwrap_or(Path::new(".")).join(&sql);
        let absolute = std::fs::canonicalize(&from_scenario).unwrap_or(from_scenario);
        set_dotted(&mut table, "protocol.sql", toml::Value::String(absolute.display().to_string())).map_err(Error::input)?;
    }
    let mut described = Vec::new();
    for (param, &i) in options.params.iter().zip(choice) {
        for (name, value) in param.names.iter().zip(&param.values[i]) {
            set_dotted(&mut table, name, value.clone())
                .map_err(|why| Error::input(format!("--param {name}: {why} in {}", options.scenario.display())))?;
        }
        described.push(format!("{} = {}", param.name(), param.label(i)));
    }
    let body = toml::to_string(&table).map_err(|e| Error::harness(format!("grid point {index}: {e}")))?;
    let text = format!(
        "# Grid point {index} of `rehearsal bench {}`: {}\n# Replay one of its runs with: rehearsal run <this file> --seed N\n{body}",
        options.scenario.display(),
        described.join(", ")
    );
    let path = options.out.join("points").join(format!("p{index:03}.toml"));
    Scenario::parse(&text, &path).map_err(|e| point_refused(options, &path, &described, &e))?;
    Ok(text)
}

fn run_one(point: &Point, seed: u64, options: &BenchOptions, scratch: &Path) -> RunStat {
    let mut stat = RunStat {
        point: point.index,
        seed,
        verdict: RunOutcome::Error,
        // The point's file names the scenario's own SQL; `--sql` layers over it.
        replay: crate::base::shell::run_command(&point.path, seed, options.protocol.as_deref(), &options.variants, options.sql.as_deref()),
        ..RunStat::default()
    };
    let dir = scratch.join(format!("p{}-{seed}", point.index));
    let outcome = Scenario::load(&point.path).and_then(|scenario| {
        let scenario = scenario.with_sql(options.sql.as_deref()).with_profile(options.protocol.as_deref())?;
        let run_options = RunOptions {
            scenario_path: point.path.clone(),
            seed: Some(seed),
            out_dir: Some(dir.clone()),
            variants: options.variants.clone(),
        };
        run_scenario(scenario, &run_options)
    });
    let _ = std::fs::remove_dir_all(&dir);
    match outcome {
        Ok(summary) => fill(&mut stat, &summary),
        Err(e) => eprintln!("rehearsal: grid point {} seed {seed}: {e}", point.index),
    }
    stat
}

fn fill(stat: &mut RunStat, s: &RunSummary) {
    stat.verdict = if s.verdict.passed() { RunOutcome::Pass } else { RunOutcome::Fail };
    stat.makespan_ms = s.makespan_ms;
    stat.tasks_unfinished = s.tasks_total - s.tasks_complete;
    stat.statements = s.statements;
    stat.lock_waits = s.contention.lock_waits;
    stat.busy_errors = s.contention.busy_errors;
    stat.false_stale_alarms = s.measured.false_stale_alarms;
    stat.stale_declared = s.measured.stale_declared;
    stat.crash_detect_ms = s.measured.crash_detect_ms.clone();
    stat.message_notice_ms = s.measured.message_notice_ms.clone();
    stat.heartbeat_age_s = s.measured.heartbeat_age_s.clone();
    stat.violated = s.verdict.rules();
    stat.figures = figures::RunFigures::of(s);
}

/// A grid point's verdict over its runs: `fail` when most runs failed (or ended in an
/// error), `partial` when some did; when none did, `unfinished` if a run left tasks not
/// complete (cut off by the time limit, or given up, where the scenario allows `liveness`),
/// `known` if a run broke a rule its scenario allows or expects, and `pass` only when every
/// run finished with no violation. A point whose runs mostly fail never reads as passing,
/// whatever its other runs did, and neither does one whose runs never finished (issue 25).
pub fn status(runs: &[&RunStat]) -> PointStatus {
    let failed = runs.iter().filter(|r| r.verdict != RunOutcome::Pass).count();
    if failed * 2 > runs.len() {
        PointStatus::Fail
    } else if failed > 0 {
        PointStatus::Partial
    } else if runs.iter().any(|r| r.tasks_unfinished > 0) {
        PointStatus::Unfinished
    } else if runs.iter().any(|r| !r.violated.is_empty()) {
        PointStatus::Known
    } else {
        PointStatus::Pass
    }
}

/// A grid point's verdict over its runs (`status`): bench.csv's `status` column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointStatus {
    Fail,
    Partial,
    Unfinished,
    Known,
    Pass,
}

impl PointStatus {
    pub const ALL: [PointStatus; 5] =
        [PointStatus::Fail, PointStatus::Partial, PointStatus::Unfinished, PointStatus::Known, PointStatus::Pass];

    pub fn as_str(self) -> &'static str {
        match self {
            PointStatus::Fail => "fail",
            PointStatus::Partial => "partial",
            PointStatus::Unfinished => "unfinished",
            PointStatus::Known => "known",
            PointStatus::Pass => "pass",
        }
    }
}

crate::vocab::word::word_traits!(PointStatus, "grid point status");

/// How stdout shows a status: `known` is a pass with known violations, never a bare PASS.
fn status_words(status: PointStatus) -> String {
    match status {
        PointStatus::Known => "PASS with known violations".to_string(),
        other => other.as_str().to_uppercase(),
    }
}

/// The column of bench.csv counting the runs that violated `rule`.
fn rule_column(rule: RuleId) -> String {
    format!("runs_violating_{}", rule.as_str())
}

/// The metric columns of one row, over any set of runs (a grid point, or a heatmap cell):
/// the verdicts, the measurements, and for every rule of the oracle the runs violating it.
pub fn aggregate(runs: &[&RunStat]) -> Vec<(String, String)> {
    let count = |v: RunOutcome| runs.iter().filter(|r| r.verdict == v).count();
    let ok: Vec<&&RunStat> = runs.iter().filter(|r| r.verdict != RunOutcome::Error).collect();
    // Latencies and makespans of finished runs only: the time limit truncates a cut-off
    // run's (issue 31); `cut_off_runs` counts those apart.
    let finished: Vec<&&RunStat> = ok.iter().copied().filter(|r| !r.figures.cut_off && !r.figures.collapsed).collect();
    let pooled = |f: fn(&RunStat) -> &Vec<i64>| finished.iter().flat_map(|r| f(r).iter().copied()).collect::<Vec<i64>>();
    let q = |sample: &[i64]| match quantiles(sample) {
        Some((p50, p95, max)) => [p50.to_string(), p95.to_string(), max.to_string()],
        None => [String::new(), String::new(), String::new()],
    };
    let crash = pooled(|r| &r.crash_detect_ms);
    let notice = pooled(|r| &r.message_notice_ms);
    let ages = pooled(|r| &r.heartbeat_age_s);
    let makespans: Vec<i64> = finished.iter().map(|r| r.makespan_ms).collect();
    let sim_hours: f64 = ok.iter().map(|r| r.makespan_ms as f64 / 3_600_000.0).sum();
    let statements: u64 = ok.iter().map(|r| r.statements).sum();
    let with_alarm = ok.iter().filter(|r| r.false_stale_alarms > 0).count();
    let rate = |n: usize| if ok.is_empty() { String::new() } else { format!("{:.4}", n as f64 / ok.len() as f64) };
    let [crash_p50, crash_p95, crash_max] = q(&crash);
    let [notice_p50, notice_p95, notice_max] = q(&notice);
    let [_, _, age_max] = q(&ages);
    let [makespan_p50, _, makespan_max] = q(&makespans);
    let mut row: Vec<(String, String)> = [
        ("runs", runs.len().to_string()),
        ("status", status(runs).to_string()),
        (RunOutcome::Pass.as_str(), count(RunOutcome::Pass).to_string()),
        (RunOutcome::Fail.as_str(), count(RunOutcome::Fail).to_string()),
        (RunOutcome::Error.as_str(), count(RunOutcome::Error).to_string()),
        ("runs_with_violations", ok.iter().filter(|r| !r.violated.is_empty()).count().to_string()),
        ("unfinished_runs", ok.iter().filter(|r| r.tasks_unfinished > 0).count().to_string()),
        ("false_stale_alarms", ok.iter().map(|r| r.false_stale_alarms).sum::<u64>().to_string()),
        ("false_alarm_rate", rate(with_alarm)),
        ("stale_declared", ok.iter().map(|r| r.stale_declared).sum::<u64>().to_string()),
        ("crashes_detected", crash.len().to_string()),
        ("crash_detect_ms_p50", crash_p50),
        ("crash_detect_ms_p95", crash_p95),
        ("crash_detect_ms_max", crash_max),
        ("message_notice_ms_p50", notice_p50),
        ("message_notice_ms_p95", notice_p95),
        ("message_notice_ms_max", notice_max),
        ("heartbeat_age_s_max", age_max),
        ("statements_per_sim_hour", if sim_hours > 0.0 { format!("{:.1}", statements as f64 / sim_hours) } else { String::new() }),
        ("lock_waits", ok.iter().map(|r| r.lock_waits).sum::<u64>().to_string()),
        ("busy_errors", ok.iter().map(|r| r.busy_errors).sum::<u64>().to_string()),
        ("makespan_ms_p50", makespan_p50),
        ("makespan_ms_max", makespan_max),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_string(), value))
    .collect();
    let ok_runs: Vec<&RunStat> = ok.iter().map(|r| **r).collect();
    row.extend(figures::columns(&ok_runs));
    for rule in RuleId::ALL {
        let violating = ok.iter().filter(|r| r.violated.contains(&rule.as_str())).count();
        row.push((rule_column(rule), violating.to_string()));
    }
    row
}

/// The rules violated in `runs`, with how many runs violated each, most first: `liveness 26`.
fn violated_rules(runs: &[&RunStat]) -> Vec<(&'static str, usize)> {
    let mut counts: Vec<(&'static str, usize)> = RuleId::ALL
        .iter()
        .map(|rule| (rule.as_str(), runs.iter().filter(|r| r.violated.contains(&rule.as_str())).count()))
        .filter(|(_, n)| *n > 0)
        .collect();
    counts.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    counts
}

pub struct BenchOutcome {
    /// Runs the grid asked for; more than `runs.len()` after Ctrl-C.
    pub planned: usize,
    pub points: Vec<Point>,
    pub runs: Vec<RunStat>,
    pub csv: PathBuf,
    pub heatmaps: Vec<PathBuf>,
}

pub fn bench(options: &BenchOptions) -> Result<BenchOutcome> {
    if options.params.is_empty() {
        return Err(Error::input("bench needs at least one --param NAME=V1,V2,… (or --overhead)"));
    }
    let names: Vec<&String> = options.params.iter().flat_map(|p| &p.names).collect();
    if let Some(twice) = names.iter().enumerate().find(|(i, n)| names[..*i].contains(n)).map(|(_, n)| n) {
        return Err(Error::input(format!("--param {twice} is given twice")));
    }
    let pictures = pictures_over(options)?;
    let (campaign, points) = prepare_points(options)?;
    let work: Vec<(&Point, u64)> = points.iter().flat_map(|p| options.seeds.iter().map(move |s| (p, *s))).collect();
    let progress = crate::campaign::progress::Progress::new(work.len(), options.progress_every, "runs");
    let done = std::sync::atomic::AtomicUsize::new(0);
    let panicked = |(point, seed): &(&Point, u64), panic: &str| {
        eprintln!("rehearsal: grid point {} seed {seed} panicked: {panic}", point.index);
        RunStat { point: point.index, seed: *seed, verdict: RunOutcome::Error, ..RunStat::default() }
    };
    let run = |(point, seed): &(&Point, u64)| run_one(point, *seed, options, campaign.scratch());
    let count = |_: usize, _: &RunStat| progress.done(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1);
    let results = crate::campaign::map(options.jobs, &work, run, panicked, || false, count);
    let planned = work.len();
    let runs: Vec<RunStat> = results.into_iter().flatten().collect();
    // Interrupted: the grid's files describe the runs that finished, and say so.
    let missing = format!("{} of {planned} runs finished: interrupted (Ctrl-C)", runs.len());
    let csv = options.out.join("bench.csv");
    let mut heatmaps = Vec::new();
    campaign.finish((runs.len() < planned).then_some(&missing), || {
        write_atomically(&csv, bench_csv(options, &points, &runs)?.as_bytes())?;
        if let Pictures::Heatmap(x, y) = pictures {
            for (metric, meaning, unit, divisor, fixed_max) in PICTURE_METRICS {
                let metric = Metric { name: metric, meaning, unit, fixed_max };
                let path = options.out.join(format!("heatmap-{}.svg", metric.name));
                write_atomically(&path, heatmap_svg(options, &points, &runs, (x, y), &metric, divisor).as_bytes())?;
                heatmaps.push(path);
            }
        }
        let (x, along) = match pictures {
            Pictures::Heatmap(x, y) => (x, Some(y)),
            Pictures::Lines(x) => (x, None),
        };
        heatmaps.extend(pictures::write(options, &points, &runs, x, along)?);
        Ok(())
    })?;
    Ok(BenchOutcome { points, runs, csv, heatmaps, planned })
}

/// What the grid is drawn as: heatmaps over two parameters (by index) and line charts over
/// the first with a line per value of the second, or with one parameter line charts over it.
#[derive(Clone, Copy, Debug)]
enum Pictures {
    Heatmap(usize, usize),
    Lines(usize),
}

/// The pictures' parameters: `--heatmap X,Y` (each one of the --param keys; a key of paired
/// parameters names the pair), else the first two parameters, else the only one.
fn pictures_over(options: &BenchOptions) -> Result<Pictures> {
    let position = |axis: &str| options.params.iter().position(|p| p.names.iter().any(|n| n == axis) || p.name() == axis);
    match &options.heatmap {
        Some((x, y)) => {
            let (Some(xi), Some(yi)) = (position(x), position(y)) else {
                let missing = if position(x).is_none() { x } else { y };
                return Err(Error::input(format!("--heatmap {missing}: not one of the --param names")));
            };
            if xi == yi {
                return Err(Error::input("--heatmap needs two different parameters (paired keys are one parameter)"));
            }
            Ok(Pictures::Heatmap(xi, yi))
        }
        None if options.params.len() >= 2 => Ok(Pictures::Heatmap(0, 1)),
        None => Ok(Pictures::Lines(0)),
    }
}

fn bench_csv(options: &BenchOptions, points: &[Point], runs: &[RunStat]) -> Result<String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = vec!["point".into()];
    header.extend(options.params.iter().flat_map(|p| p.names.iter().cloned()));
    header.extend(aggregate(&[]).into_iter().map(|(name, _)| name));
    header.push("first_failure".into());
    writer.write_record(&header).map_err(|e| Error::harness(format!("bench.csv: {e}")))?;
    for point in points {
        let mine: Vec<&RunStat> = runs.iter().filter(|r| r.point == point.index).collect();
        let mut record: Vec<String> = vec![format!("p{:03}", point.index)];
        record.extend(options.params.iter().zip(&point.choice).flat_map(|(p, &i)| p.labels[i].iter().cloned()));
        record.extend(aggregate(&mine).into_iter().map(|(_, v)| v));
        record.push(mine.iter().find(|r| r.verdict != RunOutcome::Pass).map(|r| r.replay.clone()).unwrap_or_default());
        writer.write_record(&record).map_err(|e| Error::harness(format!("bench.csv: {e}")))?;
    }
    let bytes = writer.into_inner().map_err(|e| Error::harness(format!("bench.csv: {e}")))?;
    String::from_utf8(bytes).map_err(|e| Error::harness(format!("bench.csv: {e}")))
}

/// `metric` over the runs of the points `in_cell` picks, in the picture's unit (`None`: no
/// sample, e.g. no crash to detect).
fn metric_over(points: &[Point], runs: &[RunStat], in_cell: impl Fn(&Point) -> bool, metric: &str, divisor: f64) -> Option<f64> {
    let chosen: Vec<usize> = points.iter().filter(|p| in_cell(p)).map(|p| p.index).collect();
    let mine: Vec<&RunStat> = runs.iter().filter(|r| chosen.contains(&r.point)).collect();
    aggregate(&mine).into_iter().find(|(name, _)| name == metric).and_then(|(_, v)| v.parse::<f64>().ok()).map(|v| v / divisor)
}

/// A heatmap of `metric` over parameters `x` (columns) and `y` (rows). A cell pools every run
/// with those two values, whatever the other parameters are.
fn heatmap_svg(
    options: &BenchOptions,
    points: &[Point],
    runs: &[RunStat],
    (xi, yi): (usize, usize),
    metric: &Metric,
    divisor: f64,
) -> String {
    let (px, py) = (&options.params[xi], &options.params[yi]);
    let xs: Vec<String> = (0..px.len()).map(|i| px.label(i)).collect();
    let ys: Vec<String> = (0..py.len()).map(|i| py.label(i)).collect();
    let cells: Vec<Vec<Option<f64>>> = (0..ys.len())
        .map(|row| {
            (0..xs.len())
                .map(|col| metric_over(points, runs, |p| p.choice[xi] == col && p.choice[yi] == row, metric.name, divisor))
                .collect()
        })
        .collect();
    let cut_off: Vec<Vec<(usize, usize)>> = (0..ys.len())
        .map(|row| {
            (0..xs.len())
                .map(|col| {
                    let cell = |r: &&RunStat| points[r.point].choice[xi] == col && points[r.point].choice[yi] == row;
                    let ok: Vec<&RunStat> = runs.iter().filter(cell).filter(|r| r.verdict != RunOutcome::Error).collect();
                    (ok.iter().filter(|r| r.figures.cut_off && !r.figures.collapsed).count(), figures::collapsed_runs(&ok))
                })
                .collect()
        })
        .collect();
    let subtitle = heatmap_subtitle(options, (xi, yi), metric.name);
    grid_charts::heatmap(metric, &px.name(), &xs, &py.name(), &ys, &cells, &cut_off, &subtitle)
}

/// What a heatmap's cells are over (issue 43): the seeds, the axes it does not draw (a cell
/// pools every value of them), and which runs its metric counts (`aggregate`).
fn heatmap_subtitle(options: &BenchOptions, (xi, yi): (usize, usize), metric: &str) -> String {
    let hidden: Vec<String> = options.params.iter().enumerate().filter(|(i, _)| *i != xi && *i != yi).map(|(_, p)| p.name()).collect();
    let pooled = if hidden.is_empty() { String::new() } else { format!("; averaged over {} (not drawn)", hidden.join(", ")) };
    let counted = match metric {
        "false_alarm_rate" | "statements_per_sim_hour" => "every run counted, cut-off and collapsed ones included",
        _ => "finished runs only: cut-off and collapsed runs kept out",
    };
    format!("{} seeds per grid point{pooled}; {counted}", options.seeds.len())
}

/// The stdout table of a finished bench: one line per grid point (its status first, and the
/// rules its runs violated, allowed ones included), then how many runs failed.
pub fn render(options: &BenchOptions, outcome: &BenchOutcome) -> String {
    let mut out = String::new();
    let names: Vec<String> = options.params.iter().map(Param::name).collect();
    let _ = writeln!(
        out,
        "grid         {} points × {} seeds = {} runs ({})",
        outcome.points.len(),
        options.seeds.len(),
        outcome.runs.len(),
        names.join(" × ")
    );
    for point in &outcome.points {
        let mine: Vec<&RunStat> = outcome.runs.iter().filter(|r| r.point == point.index).collect();
        let values: Vec<String> = options.params.iter().zip(&point.choice).map(|(p, &i)| format!("{}={}", p.name(), p.label(i))).collect();
        let row = aggregate(&mine);
        let get = |name: &str| {
            row.iter().find(|(n, _)| n == name).map(|(_, v)| if v.is_empty() { "-".to_string() } else { v.clone() }).unwrap_or_default()
        };
        let violated: Vec<String> = violated_rules(&mine).into_iter().map(|(rule, n)| format!("{rule} {n}/{}", mine.len())).collect();
        let _ = writeln!(
            out,
            "p{:03}         {}: {} — failed {}/{}, unfinished {}/{}{}{}; {} tasks/h; false alarms {} (rate {}), crash detect p95 {}, recovery p95 {}, notice p95 {}",
            point.index,
            values.join(" "),
            status_words(status(&mine)),
            mine.len() - mine.iter().filter(|r| r.verdict == RunOutcome::Pass).count(),
            get("runs"),
            get("unfinished_runs"),
            get("runs"),
            cut_off_words(&get("cut_off_runs"), &get("runs"), &get("tasks_per_sim_hour_cut_off"))
                + &collapsed_words(&get("collapsed_runs"), &get("runs")),
            if violated.is_empty() { String::new() } else { format!(", violated: {}", violated.join(", ")) },
            get("tasks_per_sim_hour"),
            get("false_stale_alarms"),
            get("false_alarm_rate"),
            seconds(&get("crash_detect_ms_p95")),
            seconds(&get("recovery_ms_p95")),
            seconds(&get("message_notice_ms_p95"))
        );
    }
    if outcome.runs.len() < outcome.planned {
        let _ = writeln!(
            out,
            "incomplete   {} of {} runs finished (interrupted); the files describe those",
            outcome.runs.len(),
            outcome.planned
        );
    }
    let failed = outcome.runs.iter().filter(|r| r.verdict != RunOutcome::Pass).count();
    let failing_points = outcome
        .points
        .iter()
        .filter(|p| status(&outcome.runs.iter().filter(|r| r.point == p.index).collect::<Vec<_>>()) == PointStatus::Fail)
        .count();
    let with_violations = outcome.runs.iter().filter(|r| !r.violated.is_empty()).count();
    let _ = writeln!(
        out,
        "failed       {failed} of {} runs ({} points mostly failing); {with_violations} runs violated a rule, allowed ones included",
        outcome.runs.len(),
        failing_points
    );
    let errors = outcome.runs.iter().filter(|r| r.verdict == RunOutcome::Error).count();
    if errors > 0 {
        let _ = writeln!(out, "errors       {errors} runs ended in a harness error (see stderr)");
    }
    let _ = writeln!(out, "results      {}", outcome.csv.display());
    for path in &outcome.heatmaps {
        let _ = writeln!(out, "{:<12} {}", pictures::kind_of(path), path.display());
    }
    out
}

/// ", COLLAPSED 2/3 (the conductor ended on SQLITE_BUSY or an I/O error; ...)", or nothing.
fn collapsed_words(collapsed: &str, runs: &str) -> String {
    if collapsed == "0" || collapsed == "-" || collapsed.is_empty() {
        return String::new();
    }
    format!(", COLLAPSED {collapsed}/{runs} (the conductor ended on SQLITE_BUSY or an I/O error; not in the throughput)")
}

/// ", cut off by the time limit 2/2 (5.83 tasks/h by then)", or nothing when no run was.
fn cut_off_words(cut: &str, runs: &str, rate: &str) -> String {
    if cut == "0" || cut == "-" {
        return String::new();
    }
    format!(", cut off by the time limit {cut}/{runs} ({rate} tasks/h by then; not in the quantiles)")
}

/// A ms column as stdout shows it, in the plots' unit: `16831.5 s` (`-`: no sample).
fn seconds(ms: &str) -> String {
    match ms.parse::<f64>() {
        Ok(ms) => format!("{:.1} s", ms / 1000.0),
        Err(_) => ms.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_outside_faults_over_odds_per_write_is_warned_and_odds_per_hour_are_not() {
        let options = |names: &[&str]| BenchOptions {
            scenario: PathBuf::from("s.toml"),
            params: names.iter().map(|n| Param { names: vec![n.to_string()], values: Vec::new(), labels: Vec::new() }).collect(),
            seeds: vec![1],
            protocol: None,
            variants: Vec::new(),
            jobs: 1,
            out: PathBuf::from("out"),
            heatmap: None,
            progress_every: 0,
            force: false,
            sql: None,
        };
        let scenario = |faults: &str| Scenario::parse(&format!("[tasks]\ncount = 2\n[faults]\n{faults}"), Path::new("s.toml")).unwrap();
        let per_write = scenario("crash_probability = 0.01\n");
        let warning = fault_load_warning(&per_write, &options(&["timing.background_poll_ms"])).expect("warned");
        assert!(
            warning.contains("faults.crash_probability rolled per write") && warning.contains("--param timing.background_poll_ms"),
            "{warning}"
        );
        assert_eq!(fault_load_warning(&per_write, &options(&["faults.hang_ms"])), None, "a fault parameter is the point of the sweep");
        assert_eq!(fault_load_warning(&scenario("crash_per_sim_hour = 0.5\n"), &options(&["timing.background_poll_ms"])), None);
        assert_eq!(fault_load_warning(&scenario(""), &options(&["tasks.count"])), None);
    }

    #[test]
    fn a_point_reads_as_passing_only_when_every_run_passed_clean() {
        let run = |verdict, unfinished, violated: &[&'static str]| RunStat {
            verdict,
            tasks_unfinished: unfinished,
            violated: violated.to_vec(),
            ..RunStat::default()
        };
        let pass = run(RunOutcome::Pass, 0, &[]);
        let known = run(RunOutcome::Pass, 0, &["liveness"]);
        let error = RunStat::default();
        assert_eq!(error.verdict, RunOutcome::Error, "a run not judged yet is no pass");
        assert_eq!(status(&[&pass, &error, &error]), PointStatus::Fail);
        assert_eq!(status(&[&pass, &pass, &error]), PointStatus::Partial);
        assert_eq!(status(&[&pass, &run(RunOutcome::Pass, 1, &[])]), PointStatus::Unfinished);
        assert_eq!(status(&[&pass, &known]), PointStatus::Known);
        assert_eq!(status(&[&pass, &pass]), PointStatus::Pass);
        assert_eq!(status_words(PointStatus::Known), "PASS with known violations");
        crate::vocab::word::check::round_trips::<PointStatus>("passed");
    }
}
