//! Reports people look at, written into the run folder after `rehearsal run`: summary.md,
//! timeline.html (one self-contained file, no network) and SVG plots. They are built from
//! the run's own files (trace.csv, comms.db, violations.csv), so any run folder can be
//! reported on again.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::error::{Error, Result};
use crate::oracle::quantiles;
use crate::run::{human_ms, RunSummary};
use crate::scenario::Scenario;

/// One trace row, as read back from trace.csv.
#[derive(Clone, Debug)]
pub struct Row {
    pub t_ms: i64,
    pub actor: String,
    pub event: String,
    pub statement: String,
    pub rows: String,
    pub state_after: String,
    pub detail: String,
    pub seq: String,
}

pub fn read_trace(dir: &Path) -> Result<Vec<Row>> {
    read_trace_window(dir, i64::MIN, i64::MAX)
}

/// Rows with `from_ms <= t_ms < to_ms`, streamed, so a window of a trace of any size fits in
/// memory.
pub fn read_trace_window(dir: &Path, from_ms: i64, to_ms: i64) -> Result<Vec<Row>> {
    let mut reader = csv::Reader::from_path(dir.join("trace.csv")).map_err(|e| Error::harness(format!("trace.csv: {e}")))?;
    let mut rows = Vec::new();
    for record in reader.records() {
        let r = record.map_err(|e| Error::harness(format!("trace.csv: {e}")))?;
        let t_ms: i64 = r[0].parse().unwrap_or(0);
        if t_ms < from_ms || t_ms >= to_ms {
            continue;
        }
        rows.push(Row {
            t_ms,
            actor: r[2].to_string(),
            event: r[4].to_string(),
            statement: r[5].to_string(),
            rows: r[6].to_string(),
            state_after: r[7].to_string(),
            detail: r[8].to_string(),
            seq: r[9].to_string(),
        });
    }
    Ok(rows)
}

/// Opens a finished run's comms.db without writing anything beside it: `immutable=1` reads
/// the checkpointed file as it is, with no -wal or -shm files.
pub fn open_finished_db(path: &Path) -> Result<rusqlite::Connection> {
    let uri = format!("file:{}?immutable=1", path.display());
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_URI;
    rusqlite::Connection::open_with_flags(uri, flags).map_err(|e| Error::harness(format!("{}: {e}", path.display())))
}

fn esc(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The task a trace row is about: `task-01.S1.bg-watcher-2` → task-01; conductor writes name
/// it in their detail (`task_id=task-01`).
fn task_of(row: &Row) -> Option<String> {
    if row.actor.starts_with("task-") {
        return row.actor.split('.').next().map(str::to_string);
    }
    let rest = row.detail.split("task_id=").nth(1)?;
    Some(rest.split_whitespace().next()?.to_string())
}

fn session_of(row: &Row) -> Option<String> {
    let mut parts = row.actor.split('.');
    let (task, session) = (parts.next()?, parts.next()?);
    task.starts_with("task-").then(|| format!("{task}.{session}"))
}

fn ctx_of(detail: &str) -> Option<i64> {
    detail.rsplit("[ctx: ").next().filter(|_| detail.contains("[ctx: "))?.trim_end_matches("%]").parse().ok()
}

const STATE_COLORS: [(&str, &str); 11] = [
    ("watching", "#c9d6e3"),
    ("working", "#4e9a06"),
    ("needs_review", "#f5a623"),
    ("review_approved", "#8fd14f"),
    ("review_failed", "#d0021b"),
    ("error", "#e74c3c"),
    ("fix_proposed", "#9b59b6"),
    ("complete", "#2c7bb6"),
    ("exited", "#555555"),
    ("reviewing", "#f8e71c"),
    ("exit_requested", "#7f8c8d"),
];

fn color(state: &str) -> &'static str {
    STATE_COLORS.iter().find(|(s, _)| *s == state).map_or("#bbbbbb", |(_, c)| c)
}

/// timeline.html: a lane per task (its state over time) and under it a lane per session
/// (lifetime, messages, heartbeats, watcher polls); faults shaded; the first violation
/// marked and explained. Hovering any mark shows its trace row (SVG `<title>`).
/// Trace rows above which the reports show a window of the run rather than all of it: a
/// fleet-sized run has millions of rows, more than a browser draws or memory should hold.
pub const REPORT_ROWS_MAX: u64 = 250_000;

/// The simulated-time window the reports show: the whole run, or for a large trace a window
/// of about `REPORT_ROWS_MAX` rows centred on the first violation (or at the start).
pub fn report_window(summary: &RunSummary) -> Option<(i64, i64)> {
    if summary.trace_rows <= REPORT_ROWS_MAX {
        return None;
    }
    let span_ms = (summary.makespan_ms as f64 * REPORT_ROWS_MAX as f64 / summary.trace_rows as f64).max(1.0) as i64;
    let focus = summary.verdict.violations.first().map_or(0, |v| v.t_ms);
    let from = (focus - span_ms / 2).max(0);
    Some((from, from + span_ms))
}

pub fn timeline(rows: &[Row], summary: &RunSummary) -> String {
    let start_ms = rows.iter().map(|r| r.t_ms).min().unwrap_or(0);
    let end_ms = (rows.iter().map(|r| r.t_ms).max().unwrap_or(1) - start_ms).max(1);
    let width = 1800.0_f64;
    let left = 170.0;
    let x = |t: i64| left + ((t - start_ms) as f64 / end_ms as f64) * (width - left - 20.0);
    // Lanes: each task, then its sessions in order of appearance.
    let mut tasks: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for row in rows {
        if let Some(task) = task_of(row) {
            let sessions = tasks.entry(task).or_default();
            if let Some(session) = session_of(row) {
                if !sessions.contains(&session) {
                    sessions.push(session);
                }
            }
        }
    }
    let lane_h = 22.0;
    let mut lane_y: BTreeMap<String, f64> = BTreeMap::new();
    let mut y = 40.0;
    for (task, sessions) in &tasks {
        lane_y.insert(task.clone(), y);
        y += lane_h + 4.0;
        for session in sessions {
            lane_y.insert(session.clone(), y);
            y += lane_h;
        }
        y += 10.0;
    }
    let height = y + 40.0;
    let mut svg = String::new();
    let _ = writeln!(svg, "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"11\">");
    // Time axis: a tick every tenth of the run.
    for i in 0..=10 {
        let t = start_ms + end_ms * i / 10;
        let _ = writeln!(svg, "<line x1=\"{0:.1}\" y1=\"30\" x2=\"{0:.1}\" y2=\"{1:.1}\" stroke=\"#eee\"/><text x=\"{0:.1}\" y=\"24\" text-anchor=\"middle\">{2}</text>", x(t), height - 30.0, human_ms(t));
    }
    // Faults as shaded windows or lines.
    for row in rows.iter().filter(|r| r.event.starts_with("fault_") || r.rows == "busy") {
        let title = esc(&format!("t={} ms {} {} {}", row.t_ms, row.event, row.actor, row.detail));
        let hang_ms = row.detail.split("hangs for ").nth(1).and_then(|s| s.split(' ').next()).and_then(|s| s.parse::<i64>().ok());
        match (row.event.as_str(), hang_ms) {
            ("fault_hang", Some(ms)) => {
                let _ = writeln!(svg, "<rect class=\"fault hang\" x=\"{:.1}\" y=\"30\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#888\" fill-opacity=\"0.18\"><title>{title}</title></rect>", x(row.t_ms), (x(row.t_ms + ms) - x(row.t_ms)).max(1.0), height - 60.0);
            }
            _ => {
                let stroke = if row.rows == "busy" { "#e67e22" } else { "#c0392b" };
                let class = if row.rows == "busy" { "fault busy" } else { "fault crash" };
                let _ = writeln!(svg, "<line class=\"{class}\" x1=\"{0:.1}\" y1=\"30\" x2=\"{0:.1}\" y2=\"{1:.1}\" stroke=\"{stroke}\" stroke-dasharray=\"4 3\"><title>{title}</title></line>", x(row.t_ms), height - 30.0);
            }
        }
    }
    // Task state spans from every write's state_after.
    for task in tasks.keys() {
        let ly = lane_y[task];
        let _ = writeln!(svg, "<text x=\"4\" y=\"{:.1}\" font-weight=\"bold\">{task}</text>", ly + 15.0);
        let changes: Vec<&Row> =
            rows.iter().filter(|r| r.event == "sql" && !r.state_after.is_empty() && task_of(r).as_deref() == Some(task.as_str())).collect();
        let mut spans: Vec<(i64, String, &Row)> = Vec::new();
        for row in changes {
            if spans.last().is_none_or(|(_, s, _)| *s != row.state_after) {
                spans.push((row.t_ms, row.state_after.clone(), row));
            }
        }
        for (i, (start, state, row)) in spans.iter().enumerate() {
            let stop = spans.get(i + 1).map_or(end_ms, |s| s.0);
            let title = esc(&format!("{state} from t={start} ms ({} by {}: {})", row.statement, row.actor, row.detail));
            let _ = writeln!(
                svg,
                "<rect class=\"state state-{state}\" data-state=\"{state}\" x=\"{:.1}\" y=\"{ly:.1}\" width=\"{:.1}\" height=\"{lane_h}\" fill=\"{}\"><title>{title}</title></rect>",
                x(*start),
                (x(stop) - x(*start)).max(0.5),
                color(state)
            );
        }
    }
    // Session lanes: lifetime bar, then marks.
    for sessions in tasks.values() {
        for session in sessions {
            let ly = lane_y[session];
            let mine: Vec<&Row> = rows.iter().filter(|r| session_of(r).as_deref() == Some(session.as_str())).collect();
            let (Some(first), Some(last)) = (mine.first(), mine.last()) else { continue };
            let _ = writeln!(svg, "<text x=\"14\" y=\"{:.1}\">{}</text>", ly + 14.0, esc(session.split('.').nth(1).unwrap_or("")));
            let _ = writeln!(svg, "<rect class=\"session\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"4\" fill=\"#999\"><title>{} from t={} to t={} ms</title></rect>", x(first.t_ms), ly + 9.0, (x(last.t_ms) - x(first.t_ms)).max(1.0), esc(session), first.t_ms, last.t_ms);
            for row in mine {
                let title = esc(&format!(
                    "#{} t={} ms {} {} {} {} {}",
                    row.seq, row.t_ms, row.actor, row.event, row.statement, row.rows, row.detail
                ));
                let cx = x(row.t_ms);
                let (class, shape) = if row.statement.starts_with("send_") {
                    ("message", format!("<path d=\"M{cx:.1} {:.1} l4 6 l-8 0 z\" fill=\"#2c3e50\">", ly + 1.0))
                } else if row.statement == "heartbeat" {
                    ("heartbeat", format!("<rect x=\"{:.1}\" y=\"{:.1}\" width=\"1.5\" height=\"8\" fill=\"#e84393\">", cx, ly + 12.0))
                } else if row.actor.contains("watcher") && row.event == "sql" {
                    ("poll", format!("<circle cx=\"{cx:.1}\" cy=\"{:.1}\" r=\"1\" fill=\"#74b9ff\">", ly + 19.0))
                } else if row.event == "crashed" || row.event == "context_exhausted" {
                    (
                        "crash",
                        format!("<path d=\"M{:.1} {:.1} l8 8 m0 -8 l-8 8\" stroke=\"#c0392b\" stroke-width=\"2\">", cx - 4.0, ly + 6.0),
                    )
                } else {
                    continue;
                };
                let _ = writeln!(
                    svg,
                    "<g class=\"mark {class}\">{shape}<title>{title}</title></{}></g>",
                    shape.split_whitespace().next().unwrap_or("<g").trim_start_matches('<')
                );
            }
        }
    }
    // Conductor messages: marks on the task lane.
    for row in rows.iter().filter(|r| r.actor == "conductor" && r.statement.starts_with("send_")) {
        let Some(task) = task_of(row) else { continue };
        let Some(ly) = lane_y.get(&task) else { continue };
        let title = esc(&format!("#{} t={} ms conductor {} {}", row.seq, row.t_ms, row.statement, row.detail));
        let _ = writeln!(svg, "<g class=\"mark conductor-message\"><circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"#fff\" stroke=\"#2c3e50\"><title>{title}</title></circle></g>", x(row.t_ms), ly + 11.0);
    }
    // The first violation.
    if let Some(v) = summary.verdict.violations.first() {
        let _ = writeln!(svg, "<g id=\"first-violation\" class=\"violation\"><line x1=\"{0:.1}\" y1=\"30\" x2=\"{0:.1}\" y2=\"{1:.1}\" stroke=\"#d0021b\" stroke-width=\"2\"/><title>{2}: {3}</title></g>", x(v.t_ms), height - 30.0, v.rule, esc(&v.explanation));
    }
    svg.push_str("</svg>\n");
    let legend: String =
        STATE_COLORS.iter().map(|(s, c)| format!("<span class=\"key\"><i style=\"background:{c}\"></i>{s}</span>")).collect();
    let banner = match summary.verdict.violations.first() {
        Some(v) if !summary.verdict.passed() => {
            format!("<div id=\"violation\" class=\"fail\"><b>{}</b> — {}</div>", esc(&summary.verdict.headline()), esc(&v.explanation))
        }
        Some(v) => format!(
            "<div id=\"violation\" class=\"expected\"><b>{}</b> (first, at t={} ms): {}</div>",
            esc(&summary.verdict.headline()),
            v.t_ms,
            esc(&v.explanation)
        ),
        None => "<div id=\"verdict\" class=\"pass\"><b>PASS</b></div>".to_string(),
    };
    let banner = match report_window(summary) {
        Some((from, to)) => format!(
            "{banner}\n<p class=\"expected\">This run has {} trace rows; the timeline shows t={from}..{to} ms ({} to {}) around the first violation. trace.csv holds everything; <code>rehearsal replay --until</code> stops a replay at any moment.</p>",
            summary.trace_rows,
            human_ms(from),
            human_ms(to)
        ),
        None => banner,
    };
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>rehearsal timeline: {scenario} seed {seed}</title>\n<style>body{{font-family:sans-serif;margin:12px}} .fail{{background:#fde2e2;padding:8px}} .pass{{background:#e2f5e2;padding:8px}} .expected{{background:#fff4d6;padding:8px}} .key{{margin-right:10px}} .key i{{display:inline-block;width:12px;height:12px;margin-right:3px;vertical-align:middle}} #wrap{{overflow-x:auto;border:1px solid #ddd}} code{{background:#f4f4f4}}</style></head>\n<body>\n<h1>{scenario}, seed {seed}</h1>\n{banner}\n<p>makespan {makespan}, {events} events, trace hash <code>{hash}</code><br>replay: <code>{replay}</code></p>\n<p>{legend} <span class=\"key\">▲ message · ▮ heartbeat · • watcher poll · ○ conductor message · ✕ crash · dashed: fault</span></p>\n<p>zoom: <button onclick=\"zoom(2)\">+</button> <button onclick=\"zoom(0.5)\">−</button> (hover a mark for its trace row)</p>\n<div id=\"wrap\">\n{svg}</div>\n<script>var z=1;function zoom(f){{z=Math.max(1,Math.min(64,z*f));var s=document.getElementById('timeline');s.setAttribute('width',{width}*z);s.setAttribute('viewBox','0 0 {width} '+s.getAttribute('height'));s.setAttribute('preserveAspectRatio','none');}}</script>\n</body></html>\n",
        scenario = esc(&summary.scenario),
        seed = summary.seed,
        makespan = human_ms(summary.makespan_ms),
        events = summary.events,
        hash = summary.trace_hash,
        replay = esc(&summary.replay),
    )
}

/// A small SVG chart: series of (x, y) points, optional horizontal reference lines.
fn chart(title: &str, x_label: &str, y_label: &str, series: &[(String, Vec<(f64, f64)>)], lines: &[(f64, &str)], bars: bool) -> String {
    let (w, h, l, b) = (720.0, 360.0, 60.0, 40.0);
    let xs = series.iter().flat_map(|(_, p)| p.iter().map(|(x, _)| *x));
    let ys = series.iter().flat_map(|(_, p)| p.iter().map(|(_, y)| *y)).chain(lines.iter().map(|(y, _)| *y));
    let x_max = xs.fold(1.0_f64, f64::max);
    let y_max = ys.fold(1.0_f64, f64::max) * 1.1;
    let px = |x: f64| l + x / x_max * (w - l - 20.0);
    let py = |y: f64| h - b - y / y_max * (h - b - 30.0);
    let mut svg = format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"11\">\n<text x=\"{l}\" y=\"16\" font-size=\"13\">{}</text>\n", esc(title));
    let _ = writeln!(svg, "<line x1=\"{l}\" y1=\"{0}\" x2=\"{1}\" y2=\"{0}\" stroke=\"#333\"/><line x1=\"{l}\" y1=\"30\" x2=\"{l}\" y2=\"{0}\" stroke=\"#333\"/>", h - b, w - 20.0);
    let _ = writeln!(svg, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text><text x=\"14\" y=\"{}\" transform=\"rotate(-90 14 {})\" text-anchor=\"middle\">{}</text>", (w + l) / 2.0, h - 8.0, esc(x_label), h / 2.0, h / 2.0, esc(y_label));
    for i in 0..=4 {
        let yv = y_max * i as f64 / 4.0;
        let _ = writeln!(svg, "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{:.0}</text>", l - 4.0, py(yv) + 4.0, yv);
        let xv = x_max * i as f64 / 4.0;
        let _ = writeln!(svg, "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{:.0}</text>", px(xv), h - b + 14.0, xv);
    }
    let palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
    for (i, (name, points)) in series.iter().enumerate() {
        let c = palette[i % palette.len()];
        if bars {
            let bw = ((w - l - 20.0) / points.len().max(1) as f64 * 0.8).max(1.0);
            for (x, y) in points {
                let _ = writeln!(
                    svg,
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{bw:.1}\" height=\"{:.1}\" fill=\"{c}\"><title>{x:.0}: {y:.0}</title></rect>",
                    px(*x) - bw / 2.0,
                    py(*y),
                    (h - b) - py(*y)
                );
            }
        } else {
            let d: String = points
                .iter()
                .enumerate()
                .map(|(j, (x, y))| format!("{}{:.1} {:.1}", if j == 0 { "M" } else { " L" }, px(*x), py(*y)))
                .collect();
            let _ = writeln!(svg, "<path d=\"{d}\" fill=\"none\" stroke=\"{c}\" stroke-width=\"1.2\"><title>{}</title></path>", esc(name));
        }
        let _ = writeln!(svg, "<text x=\"{}\" y=\"{}\" fill=\"{c}\">{}</text>", w - 150.0, 30.0 + 13.0 * i as f64, esc(name));
    }
    for (y, label) in lines {
        let _ = writeln!(svg, "<line x1=\"{l}\" y1=\"{0:.1}\" x2=\"{1}\" y2=\"{0:.1}\" stroke=\"#d0021b\" stroke-dasharray=\"5 4\"/><text x=\"{2}\" y=\"{3:.1}\" fill=\"#d0021b\">{4}</text>", py(*y), w - 20.0, l + 4.0, py(*y) - 3.0, esc(label));
    }
    svg.push_str("</svg>\n");
    svg
}

/// Heartbeat age of each task at each conductor poll: time since the last write on its row
/// (every state change and heartbeat sets last_heartbeat, 004 "Heartbeat Rule").
fn heartbeat_ages(rows: &[Row]) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut last_write: BTreeMap<String, i64> = BTreeMap::new();
    let mut series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for row in rows {
        if row.event != "sql" {
            continue;
        }
        if !row.state_after.is_empty() {
            if let Some(task) = task_of(row) {
                if task != "task-00" {
                    last_write.insert(task, row.t_ms);
                }
            }
        }
        if row.statement == "poll_tasks" {
            for (task, at) in &last_write {
                series.entry(task.clone()).or_default().push((row.t_ms as f64 / 60_000.0, (row.t_ms - at) as f64 / 1000.0));
            }
        }
    }
    series.into_iter().collect()
}

pub fn write_run_reports(dir: &Path, summary: &RunSummary, scenario: &Scenario) -> Result<()> {
    let rows = match report_window(summary) {
        Some((from, to)) => read_trace_window(dir, from, to)?,
        None => read_trace(dir)?,
    };
    let write = |name: &str, text: &str| -> Result<()> {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        crate::atomic::write_atomically(&path, text.as_bytes())
    };
    write("timeline.html", &timeline(&rows, summary))?;
    // Latency distributions against their budgets.
    let budgets = &scenario.budgets;
    let limits = [
        budgets.message_notice_ms_max,
        budgets.review_resume_ms_max,
        budgets.crash_detect_ms_max,
        budgets.heartbeat_age_s_max,
        budgets.exit_to_claim_ms_max,
    ];
    for ((name, sample), limit) in summary.measured.named().into_iter().zip(limits) {
        let mut sorted = sample.clone();
        sorted.sort_unstable();
        let points: Vec<(f64, f64)> =
            sorted.iter().enumerate().map(|(i, v)| ((i + 1) as f64 / sorted.len().max(1) as f64 * 100.0, *v as f64)).collect();
        let budget_label = limit.map(|l| format!("budget {l}"));
        let lines: Vec<(f64, &str)> = match (&budget_label, limit) {
            (Some(label), Some(l)) => vec![(l as f64, label.as_str())],
            _ => Vec::new(),
        };
        write(
            &format!("plots/{name}.svg"),
            &chart(&format!("{name}: distribution (n={})", sample.len()), "percentile", name, &[(name.to_string(), points)], &lines, false),
        )?;
    }
    // Context trajectories per session.
    let mut trajectories: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for row in rows.iter().filter(|r| r.event == "file_append" && r.statement.ends_with("-status")) {
        if let (Some(session), Some(ctx)) = (session_of(row), ctx_of(&row.detail)) {
            trajectories.entry(session).or_default().push((row.t_ms as f64 / 60_000.0, ctx as f64));
        }
    }
    let series: Vec<(String, Vec<(f64, f64)>)> = trajectories.into_iter().collect();
    write(
        "plots/context.svg",
        &chart("context per session", "simulated minutes", "context %", &series, &[(50.0, "evaluate 50 %"), (80.0, "ceiling 80 %")], false),
    )?;
    let ages = heartbeat_ages(&rows);
    write(
        "plots/heartbeat-age.svg",
        &chart(
            "heartbeat age at conductor polls",
            "simulated minutes",
            "seconds",
            &ages,
            &[(480.0, "refresh 480 s"), (540.0, "stale 540 s")],
            false,
        ),
    )?;
    write("summary.md", &summary_md(dir, summary, scenario)?)?;
    Ok(())
}

fn summary_md(dir: &Path, summary: &RunSummary, scenario: &Scenario) -> Result<String> {
    let mut md = String::new();
    let _ = writeln!(md, "# {} — seed {}\n", summary.scenario, summary.seed);
    let _ = writeln!(md, "**Verdict: {}**\n", summary.verdict.headline());
    for line in summary.verdict.explanation() {
        let _ = writeln!(md, "> {line}\n");
    }
    let _ = writeln!(md, "Replay: `{}`\n", summary.replay);
    let _ = writeln!(md, "## Settings\n");
    let _ = writeln!(md, "| setting | value |\n| --- | --- |");
    let _ = writeln!(md, "| scenario file | `{}` |", scenario.path.display());
    let _ = writeln!(
        md,
        "| variants | {} |",
        if summary.variants.is_empty() { "none (the seeds' own protocol)".to_string() } else { summary.variants.join(", ") }
    );
    let _ = writeln!(md, "| tasks | {} |", scenario.tasks.len());
    let _ = writeln!(md, "| background / pause poll | {} ms / {} ms |", scenario.timing.background_poll_ms, scenario.timing.pause_poll_ms);
    let _ = writeln!(
        md,
        "| heartbeat refresh / staleness | {} s / {} s |",
        scenario.timing.heartbeat_refresh_s, scenario.conductor.staleness_s
    );
    let _ = writeln!(md, "| conductor poll / review | {} ms / {} |", scenario.conductor.poll_ms, scenario.conductor.review_ms);
    for (name, value) in &summary.drawn {
        let _ = writeln!(md, "| drawn from the seed: {name} | {value} |");
    }
    let _ = writeln!(md, "| makespan | {} |", human_ms(summary.makespan_ms));
    let _ = writeln!(md, "| statements / events | {} / {} |", summary.statements, summary.events);
    let _ = writeln!(md, "| trace hash | `{}` |\n", summary.trace_hash);
    let _ = writeln!(md, "## Tasks\n\n| task | state | worked_by | retries | completed |\n| --- | --- | --- | --- | --- |");
    let db = crate::report::open_finished_db(&dir.join("comms.db"))?;
    let mut stmt = db.prepare(
        "SELECT task_id, state, coalesce(worked_by, ''), retry_count, coalesce(completed_at, '') FROM orchestration_tasks ORDER BY task_id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, i64>(3)?, r.get::<_, String>(4)?))
    })?;
    for row in rows {
        let (task, state, worked_by, retries, completed) = row?;
        let _ = writeln!(md, "| {task} | {state} | {worked_by} | {retries} | {completed} |");
    }
    let _ = writeln!(
        md,
        "\n## Timing against budgets\n\n| measurement | n | p50 | p95 | max | budget |\n| --- | --- | --- | --- | --- | --- |"
    );
    let b = &scenario.budgets;
    let limits = [b.message_notice_ms_max, b.review_resume_ms_max, b.crash_detect_ms_max, b.heartbeat_age_s_max, b.exit_to_claim_ms_max];
    for ((name, sample), limit) in summary.measured.named().into_iter().zip(limits) {
        let (p50, p95, max) = quantiles(sample)
            .map_or(("-".to_string(), "-".to_string(), "-".to_string()), |(a, b, c)| (a.to_string(), b.to_string(), c.to_string()));
        let _ =
            writeln!(md, "| {name} | {} | {p50} | {p95} | {max} | {} |", sample.len(), limit.map_or("-".to_string(), |l| l.to_string()));
    }
    if !summary.verdict.violations.is_empty() {
        let _ = writeln!(md, "\n## Violations\n");
        for v in &summary.verdict.violations {
            let _ = writeln!(md, "- **{}** at t={} ms: {}", v.rule, v.t_ms, v.explanation);
        }
    }
    let _ = writeln!(md, "\nFiles: `timeline.html`, `plots/*.svg`, `trace.csv`, `comms.db`, `violations.csv`, `temp/`.");
    Ok(md)
}
