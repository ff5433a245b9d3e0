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

use crate::atomic::write_atomically;
use crate::error::{Error, Result};
use crate::oracle::quantiles;
use crate::run::{run_scenario, RunOptions, RunSummary};
use crate::scenario::Scenario;

/// One `--param NAME=V1,V2,…`: a dotted scenario key and the TOML values it takes.
#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    pub values: Vec<toml::Value>,
    /// The values as written, for CSV columns and axis labels.
    pub labels: Vec<String>,
}

/// Splits `text` at commas outside braces, brackets and quotes, so inline tables such as
/// `{ kind = "uniform", min = 0, max = 9 }` stay whole.
fn split_top_level(text: &str) -> Vec<String> {
    let (mut parts, mut current, mut depth, mut quote) = (Vec::new(), String::new(), 0_i32, None::<char>);
    for c in text.chars() {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '{' | '[') => depth += 1,
            (None, '}' | ']') => depth -= 1,
            (None, ',') if depth == 0 => {
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

pub fn parse_param(text: &str) -> Result<Param> {
    let bad = |why: String| Error::input(format!("--param `{text}`: {why}"));
    let (name, list) = text.split_once('=').ok_or_else(|| bad("expected NAME=V1,V2,… e.g. timing.background_poll_ms=5000,15000".into()))?;
    let name = name.trim().to_string();
    let key_ok = |k: &str| !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !name.split('.').all(key_ok) {
        return Err(bad(format!("`{name}` is not a dotted scenario key such as timing.background_poll_ms")));
    }
    let mut param = Param { name, values: Vec::new(), labels: Vec::new() };
    for item in split_top_level(list) {
        if item.is_empty() {
            return Err(bad("an empty value".into()));
        }
        let value = match toml::from_str::<toml::Table>(&format!("v = {item}")) {
            Ok(mut table) => table.remove("v").expect("the key just written"),
            // A bare word is a string: `conductor.context_reply=approve,fix`.
            Err(_) if item.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') => toml::Value::String(item.clone()),
            Err(e) => return Err(bad(format!("value `{item}` is not a TOML value: {}", e.message().trim()))),
        };
        param.values.push(value);
        param.labels.push(item);
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
    pub variants: Vec<String>,
    pub jobs: usize,
    pub out: PathBuf,
    /// The two parameters the heatmaps are drawn over (default: the first two).
    pub heatmap: Option<(String, String)>,
    /// Print a progress line every this many runs (stderr); 0 for none.
    pub progress_every: usize,
    /// Replace what an earlier command left in `out` (refused without it: sim/out_folder.rs).
    pub force: bool,
    /// `--sql FILE`: the protocol SQL of every grid point, in place of the scenario's own.
    pub sql: Option<PathBuf>,
}

/// What a grid writes into its folder (sim/out_folder.rs), its scratch folder included.
const OWNED: crate::out_folder::Owned = &["bench.csv", "points", "heatmap-*", crate::sweep::INCOMPLETE_MARKER, "bench-*"];

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
    /// pass | fail | error
    pub verdict: String,
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
}

/// The metrics of `bench.csv` that heatmaps can show: (column, what it means).
pub const HEATMAP_METRICS: [(&str, &str); 4] = [
    ("false_alarm_rate", "share of runs in which the conductor declared a live, healthy session stale"),
    ("crash_detect_ms_p95", "95th percentile of crash-to-stale-declaration latency (ms)"),
    ("message_notice_ms_p95", "95th percentile of message-sent-to-noticed latency (ms)"),
    ("statements_per_sim_hour", "protocol statements per simulated hour"),
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
fn combinations(params: &[Param]) -> Vec<Vec<usize>> {
    let mut all = vec![Vec::new()];
    for param in params {
        all = all.into_iter().flat_map(|prefix| (0..param.values.len()).map(move |i| [prefix.clone(), vec![i]].concat())).collect();
    }
    all
}

/// Writes every grid point's scenario under `out/points/` and loads it, so a bad key or value
/// is reported, with the point's file, line and column, before any run starts.
pub fn prepare_points(options: &BenchOptions) -> Result<Vec<Point>> {
    let base_text = std::fs::read_to_string(&options.scenario)
        .map_err(|e| Error::input(format!("{}: cannot read scenario: {e}", options.scenario.display())))?;
    Scenario::parse(&base_text, &options.scenario)?;
    let base: toml::Table =
        toml::from_str(&base_text).map_err(|e| Error::input(format!("{}: {}", options.scenario.display(), e.message())))?;
    crate::out_folder::claim(&options.out, OWNED, options.force)?;
    let points_dir = options.out.join("points");
    std::fs::create_dir_all(&points_dir).map_err(|e| Error::input(format!("cannot create {}: {e}", points_dir.display())))?;
    let mut points = Vec::new();
    for (index, choice) in combinations(&options.params).into_iter().enumerate() {
        let mut table = base.clone();
        // The point lives in another folder: a protocol SQL file named relative to the
        // scenario is named absolutely in the point.
        if let Some(toml::Value::String(sql)) = table.get("protocol").and_then(|p| p.get("sql")).cloned() {
            let from_scenario = options.scenario.parent().unwrap_or(Path::new(".")).join(&sql);
            let absolute = std::fs::canonicalize(&from_scenario).unwrap_or(from_scenario);
            set_dotted(&mut table, "protocol.sql", toml::Value::String(absolute.display().to_string())).map_err(Error::input)?;
        }
        // `--sql FILE` takes the place of the scenario's own, named absolutely too.
        if let Some(sql) = &options.sql {
            let absolute = std::fs::canonicalize(sql).map_err(|e| Error::input(format!("--sql {}: {e}", sql.display())))?;
            set_dotted(&mut table, "protocol.sql", toml::Value::String(absolute.display().to_string())).map_err(Error::input)?;
        }
        let mut described = Vec::new();
        for (param, &i) in options.params.iter().zip(&choice) {
            set_dotted(&mut table, &param.name, param.values[i].clone())
                .map_err(|why| Error::input(format!("--param {}: {why} in {}", param.name, options.scenario.display())))?;
            described.push(format!("{} = {}", param.name, param.labels[i]));
        }
        let body = toml::to_string(&table).map_err(|e| Error::harness(format!("grid point {index}: {e}")))?;
        let text = format!(
            "# Grid point {index} of `rehearsal bench {}`: {}\n# Replay one of its runs with: rehearsal run <this file> --seed N\n{body}",
            options.scenario.display(),
            described.join(", ")
        );
        let path = points_dir.join(format!("p{index:03}.toml"));
        write_atomically(&path, text.as_bytes())?;
        Scenario::parse(&text, &path).map_err(|e| Error::input(format!("grid point {index} ({}): {e}", described.join(", "))))?;
        points.push(Point { index, choice, path });
    }
    Ok(points)
}

fn run_one(point: &Point, seed: u64, options: &BenchOptions, scratch: &Path) -> RunStat {
    let mut stat = RunStat {
        point: point.index,
        seed,
        verdict: "error".to_string(),
        // The point's file names its SQL (`--sql` included).
        replay: crate::shell::run_command(&point.path, seed, &options.variants, None),
        ..RunStat::default()
    };
    let dir = scratch.join(format!("p{}-{seed}", point.index));
    let outcome = Scenario::load(&point.path).and_then(|scenario| {
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
    stat.verdict = if s.verdict.passed() { "pass" } else { "fail" }.to_string();
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
}

/// The metric columns of one row, over any set of runs (a grid point, or a heatmap cell).
pub fn aggregate(runs: &[&RunStat]) -> Vec<(&'static str, String)> {
    let count = |v: &str| runs.iter().filter(|r| r.verdict == v).count();
    let ok: Vec<&&RunStat> = runs.iter().filter(|r| r.verdict != "error").collect();
    let pooled = |f: fn(&RunStat) -> &Vec<i64>| ok.iter().flat_map(|r| f(r).iter().copied()).collect::<Vec<i64>>();
    let q = |sample: &[i64]| match quantiles(sample) {
        Some((p50, p95, max)) => [p50.to_string(), p95.to_string(), max.to_string()],
        None => [String::new(), String::new(), String::new()],
    };
    let crash = pooled(|r| &r.crash_detect_ms);
    let notice = pooled(|r| &r.message_notice_ms);
    let ages = pooled(|r| &r.heartbeat_age_s);
    let makespans: Vec<i64> = ok.iter().map(|r| r.makespan_ms).collect();
    let sim_hours: f64 = makespans.iter().map(|ms| *ms as f64 / 3_600_000.0).sum();
    let statements: u64 = ok.iter().map(|r| r.statements).sum();
    let with_alarm = ok.iter().filter(|r| r.false_stale_alarms > 0).count();
    let rate = |n: usize| if ok.is_empty() { String::new() } else { format!("{:.4}", n as f64 / ok.len() as f64) };
    let [crash_p50, crash_p95, crash_max] = q(&crash);
    let [notice_p50, notice_p95, notice_max] = q(&notice);
    let [_, _, age_max] = q(&ages);
    let [makespan_p50, _, makespan_max] = q(&makespans);
    vec![
        ("runs", runs.len().to_string()),
        ("pass", count("pass").to_string()),
        ("fail", count("fail").to_string()),
        ("error", count("error").to_string()),
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
    for (i, p) in options.params.iter().enumerate() {
        if options.params[..i].iter().any(|q| q.name == p.name) {
            return Err(Error::input(format!("--param {} is given twice", p.name)));
        }
    }
    let heatmap = match &options.heatmap {
        Some((x, y)) => {
            for axis in [x, y] {
                if !options.params.iter().any(|p| &p.name == axis) {
                    return Err(Error::input(format!("--heatmap {axis}: not one of the --param names")));
                }
            }
            if x == y {
                return Err(Error::input("--heatmap needs two different parameters"));
            }
            Some((x.clone(), y.clone()))
        }
        None if options.params.len() >= 2 => Some((options.params[0].name.clone(), options.params[1].name.clone())),
        None => None,
    };
    let points = prepare_points(options)?;
    let scratch =
        tempfile::Builder::new().prefix("bench-").tempdir_in(&options.out).map_err(|e| Error::harness(format!("scratch folder: {e}")))?;
    let work: Vec<(&Point, u64)> = points.iter().flat_map(|p| options.seeds.iter().map(move |s| (p, *s))).collect();
    let progress = crate::progress::Progress::new(work.len(), options.progress_every, "runs");
    let results =
        crate::pool::map(options.jobs, &work, |(point, seed)| run_one(point, *seed, options, scratch.path()), |done| progress.done(done));
    let planned = work.len();
    let runs: Vec<RunStat> = results
        .into_iter()
        .zip(&work)
        .filter_map(|(outcome, work)| outcome.map(|outcome| (outcome, work)))
        .map(|(outcome, (point, seed))| {
            outcome.unwrap_or_else(|panic| {
                eprintln!("rehearsal: grid point {} seed {seed} panicked: {panic}", point.index);
                RunStat { point: point.index, seed: *seed, verdict: "error".into(), ..RunStat::default() }
            })
        })
        .collect();
    // Interrupted: the grid's files describe the runs that finished, and say so.
    let marker = options.out.join(crate::sweep::INCOMPLETE_MARKER);
    if runs.len() < planned {
        write_atomically(&marker, format!("{} of {planned} runs finished: interrupted (Ctrl-C)\n", runs.len()).as_bytes())?;
    } else if marker.exists() {
        std::fs::remove_file(&marker)?;
    }
    let csv = options.out.join("bench.csv");
    write_atomically(&csv, bench_csv(options, &points, &runs)?.as_bytes())?;
    let mut heatmaps = Vec::new();
    if let Some((x, y)) = heatmap {
        for (metric, meaning) in HEATMAP_METRICS {
            let path = options.out.join(format!("heatmap-{metric}.svg"));
            write_atomically(&path, heatmap_svg(options, &points, &runs, (&x, &y), metric, meaning).as_bytes())?;
            heatmaps.push(path);
        }
    }
    Ok(BenchOutcome { points, runs, csv, heatmaps, planned })
}

fn bench_csv(options: &BenchOptions, points: &[Point], runs: &[RunStat]) -> Result<String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = vec!["point".into()];
    header.extend(options.params.iter().map(|p| p.name.clone()));
    header.extend(aggregate(&[]).into_iter().map(|(name, _)| name.to_string()));
    header.push("first_failure".into());
    writer.write_record(&header).map_err(|e| Error::harness(format!("bench.csv: {e}")))?;
    for point in points {
        let mine: Vec<&RunStat> = runs.iter().filter(|r| r.point == point.index).collect();
        let mut record: Vec<String> = vec![format!("p{:03}", point.index)];
        record.extend(options.params.iter().zip(&point.choice).map(|(p, &i)| p.labels[i].clone()));
        record.extend(aggregate(&mine).into_iter().map(|(_, v)| v));
        record.push(mine.iter().find(|r| r.verdict != "pass").map(|r| r.replay.clone()).unwrap_or_default());
        writer.write_record(&record).map_err(|e| Error::harness(format!("bench.csv: {e}")))?;
    }
    let bytes = writer.into_inner().map_err(|e| Error::harness(format!("bench.csv: {e}")))?;
    String::from_utf8(bytes).map_err(|e| Error::harness(format!("bench.csv: {e}")))
}

fn esc(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A heatmap of `metric` over parameters `x` (columns) and `y` (rows). A cell pools every run
/// with those two values, whatever the other parameters are; an empty cell (no sample, e.g. no
/// crash to detect) is grey.
fn heatmap_svg(options: &BenchOptions, points: &[Point], runs: &[RunStat], (x, y): (&str, &str), metric: &str, meaning: &str) -> String {
    let position = |name: &str| options.params.iter().position(|p| p.name == name).expect("checked before the runs");
    let (xi, yi) = (position(x), position(y));
    let (xs, ys) = (&options.params[xi].labels, &options.params[yi].labels);
    let mut cells: Vec<Vec<Option<f64>>> = vec![vec![None; xs.len()]; ys.len()];
    for (row, cells_row) in cells.iter_mut().enumerate() {
        for (col, cell) in cells_row.iter_mut().enumerate() {
            let in_cell: Vec<usize> = points.iter().filter(|p| p.choice[xi] == col && p.choice[yi] == row).map(|p| p.index).collect();
            let mine: Vec<&RunStat> = runs.iter().filter(|r| in_cell.contains(&r.point)).collect();
            *cell = aggregate(&mine).into_iter().find(|(name, _)| *name == metric).and_then(|(_, v)| v.parse().ok());
        }
    }
    let values: Vec<f64> = cells.iter().flatten().flatten().copied().collect();
    let (lo, hi) = (values.iter().copied().fold(f64::INFINITY, f64::min), values.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    let (cell_w, cell_h, left, top) = (110.0, 44.0, 170.0, 70.0);
    let (w, h) = (left + cell_w * xs.len() as f64 + 30.0, top + cell_h * ys.len() as f64 + 60.0);
    let mut svg =
        format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n");
    let _ = writeln!(svg, "<text x=\"10\" y=\"20\" font-size=\"14\">{}</text>", esc(&format!("{metric} over {x} × {y}")));
    let _ = writeln!(
        svg,
        "<text x=\"10\" y=\"38\" fill=\"#555\">{}</text>",
        esc(&format!("{meaning}; {} seeds per grid point", options.seeds.len()))
    );
    for (col, label) in xs.iter().enumerate() {
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            left + cell_w * (col as f64 + 0.5),
            top - 8.0,
            esc(label)
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#555\">{}</text>",
        left + cell_w * xs.len() as f64 / 2.0,
        h - 20.0,
        esc(x)
    );
    let _ = writeln!(svg, "<text x=\"10\" y=\"{:.1}\" fill=\"#555\">{}</text>", top - 8.0, esc(&format!("{y} ↓")));
    for (row, label) in ys.iter().enumerate() {
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left - 8.0,
            top + cell_h * (row as f64 + 0.5) + 4.0,
            esc(label)
        );
        for (col, value) in cells[row].iter().enumerate() {
            let (cx, cy) = (left + cell_w * col as f64, top + cell_h * row as f64);
            let (fill, text) = match value {
                Some(v) => {
                    // White (lowest) to deep red (highest) of this map.
                    let t = if hi > lo { (v - lo) / (hi - lo) } else { 0.0 };
                    let g = (235.0 - 190.0 * t) as u8;
                    (format!("rgb(245,{g},{g})"), if v.fract() == 0.0 { format!("{v:.0}") } else { format!("{v:.3}") })
                }
                None => ("#ddd".to_string(), "–".to_string()),
            };
            let _ = writeln!(
                svg,
                "<rect x=\"{cx:.1}\" y=\"{cy:.1}\" width=\"{cell_w}\" height=\"{cell_h}\" fill=\"{fill}\" stroke=\"#fff\"><title>{}</title></rect><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                esc(&format!("{x}={}, {y}={}: {metric} {text}", xs[col], ys[row])),
                cx + cell_w / 2.0,
                cy + cell_h / 2.0 + 4.0,
                esc(&text)
            );
        }
    }
    svg.push_str("</svg>\n");
    svg
}

/// The stdout table of a finished bench: one line per grid point.
pub fn render(options: &BenchOptions, outcome: &BenchOutcome) -> String {
    let mut out = String::new();
    let names: Vec<&str> = options.params.iter().map(|p| p.name.as_str()).collect();
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
        let values: Vec<String> = options.params.iter().zip(&point.choice).map(|(p, &i)| format!("{}={}", p.name, p.labels[i])).collect();
        let row = aggregate(&mine);
        let get = |name: &str| {
            row.iter().find(|(n, _)| *n == name).map(|(_, v)| if v.is_empty() { "-".to_string() } else { v.clone() }).unwrap_or_default()
        };
        let _ = writeln!(
            out,
            "p{:03}         {}: pass {}/{}, false alarms {} (rate {}), crash detect p95 {} ms, notice p95 {} ms",
            point.index,
            values.join(" "),
            get("pass"),
            get("runs"),
            get("false_stale_alarms"),
            get("false_alarm_rate"),
            get("crash_detect_ms_p95"),
            get("message_notice_ms_p95")
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
    let errors = outcome.runs.iter().filter(|r| r.verdict == "error").count();
    if errors > 0 {
        let _ = writeln!(out, "errors       {errors} runs ended in a harness error (see stderr)");
    }
    let _ = writeln!(out, "results      {}", outcome.csv.display());
    for path in &outcome.heatmaps {
        let _ = writeln!(out, "heatmap      {}", path.display());
    }
    out
}
