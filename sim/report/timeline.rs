//! timeline.html: a lane per task (its state over time) and under it a lane per session
//! (lifetime, messages, heartbeats, watcher polls); a hang shaded on its session's lane; the
//! first violation marked across every lane and its write on its session's lane.
//!
//! Level of detail, so a day-long fleet stays a page a browser opens: what is few (state
//! spans, lifetimes, faults, the violation) is SVG drawn here, stretched with the page's
//! width; what is many (heartbeats, polls) and what must keep its shape (marks, the time
//! axis) is data the page's script draws for the part in view: each heartbeat and poll with
//! its trace row on hover when few enough are in view, density bands otherwise. The axis
//! ticks fall on round times (15 min, 1 h, …) at every zoom, and the page fits the window.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::html::{esc, esc_into};
use super::model::{Mark, Model};
use super::report_window;
use crate::base::time_text::{duration, humanize_instants};
use crate::run::RunSummary;
use crate::vocab::{SessionPlace, TaskState};

/// Each state's colour, in the legend's order.
const STATE_COLORS: [(TaskState, &str); 11] = [
    (TaskState::Watching, "#c9d6e3"),
    (TaskState::Working, "#4e9a06"),
    (TaskState::NeedsReview, "#f5a623"),
    (TaskState::ReviewApproved, "#8fd14f"),
    (TaskState::ReviewFailed, "#d0021b"),
    (TaskState::Error, "#e74c3c"),
    (TaskState::FixProposed, "#9b59b6"),
    (TaskState::Complete, "#2c7bb6"),
    (TaskState::Exited, "#555555"),
    (TaskState::Reviewing, "#f8e71c"),
    (TaskState::ExitRequested, "#7f8c8d"),
];

/// The width of the lanes' drawing in its own units: the page stretches it to the window
/// (and to the zoom), so it is no pixel count.
const VIEW_W: f64 = 1000.0;
/// Room for the lane labels (pixels, beside the lanes, never stretched).
const LABELS_W: f64 = 190.0;
const LANE_H: f64 = 22.0;
const TOP: f64 = 40.0;

/// Simulated milliseconds to drawing units: the first row shown at 0, the last at `VIEW_W`.
struct Scale {
    start_ms: i64,
    span_ms: i64,
}

impl Scale {
    fn of(model: &Model) -> Scale {
        let start_ms = model.start_ms.unwrap_or(0);
        Scale { start_ms, span_ms: (model.end_ms - start_ms).max(1) }
    }

    fn x(&self, t: i64) -> f64 {
        (t - self.start_ms) as f64 / self.span_ms as f64 * VIEW_W
    }
}

/// One task's lane and, under it, a lane per session of the task in order of appearance.
#[derive(Debug, PartialEq)]
struct TaskLane {
    y: f64,
    sessions: Vec<(SessionPlace, f64)>,
}

/// The lanes top to bottom: tasks in task id order, each followed by its sessions.
#[derive(Debug, PartialEq)]
struct Lanes {
    tasks: BTreeMap<String, TaskLane>,
    /// The drawing's height: every lane plus the axis above and a margin below.
    height: f64,
}

impl Lanes {
    fn of(model: &Model) -> Lanes {
        let mut y = TOP;
        let mut tasks = BTreeMap::new();
        for (task, lane) in &model.tasks {
            let task_y = y;
            y += LANE_H + 4.0;
            let mut sessions = Vec::new();
            for place in &lane.sessions {
                sessions.push((*place, y));
                y += LANE_H;
            }
            y += 10.0;
            tasks.insert(task.clone(), TaskLane { y: task_y, sessions });
        }
        Lanes { tasks, height: y + 40.0 }
    }

    fn session_y(&self, place: SessionPlace) -> Option<f64> {
        self.tasks.get(&place.task_id())?.sessions.iter().find(|(p, _)| *p == place).map(|(_, y)| *y)
    }
}

/// A session as the lanes name it, the way the verdict's explanations (and so the banner)
/// do: `S2 (ad660549…)`, its place in the task and its session id abbreviated.
fn session_name(model: &Model, place: SessionPlace) -> String {
    match model.sessions.get(&place).map(|s| id_prefix(&s.session_id)).filter(|p| !p.is_empty()) {
        Some(prefix) => format!("{} ({prefix}…)", place.label()),
        None => place.label(),
    }
}

/// The first 8 characters of a session id: how explanations name a session.
fn id_prefix(session_id: &str) -> &str {
    session_id.char_indices().nth(8).map_or(session_id, |(i, _)| &session_id[..i])
}

pub fn timeline(model: &Model, summary: &RunSummary) -> String {
    let scale = Scale::of(model);
    let lanes = Lanes::of(model);
    let h = lanes.height;
    let mut svg = String::with_capacity(1 << 16);
    let _ = writeln!(svg, "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {VIEW_W} {h}\" preserveAspectRatio=\"none\" width=\"100%\" height=\"{h}\">");
    hangs(&mut svg, model, &lanes, &scale);
    fault_lines(&mut svg, model, &lanes, &scale);
    task_lanes(&mut svg, model, &lanes, &scale);
    session_lifetimes(&mut svg, model, &lanes, &scale);
    budget_breaches(&mut svg, summary, &lanes, &scale);
    violation_line(&mut svg, summary, &scale, h);
    svg.push_str("</svg>\n");
    let labels = labels(model, &lanes);
    let violation_t_ms = summary.verdict.violations.first().map(|v| v.t_ms);
    let mut data = data(model, &lanes, &scale, violation_t_ms);
    let (from, to) = active_window(model, violation_t_ms);
    // The page opens on this window (timeline.js); `data` ends with its closing brace.
    data.pop();
    let _ = write!(data, ",\"a0\":{from},\"a1\":{to}}}");
    page(&labels, &svg, &data, h, summary)
}

/// The part of the run where something happens, which the page opens on (issue 31): from the
/// first row to the last state change, message, fault or hang's end, and the first violation,
/// with a margin. A run whose sessions only poll and refresh heartbeats for hours after (a
/// stuck task held until `sim_time_max_ms`) would otherwise show its action in a sliver.
fn active_window(model: &Model, violation_t_ms: Option<i64>) -> (i64, i64) {
    let start = model.start_ms.unwrap_or(0);
    let states = model.tasks.values().flat_map(|t| t.states.iter().map(|s| s.t_ms).chain(t.conductor_messages.iter().map(|m| m.t_ms)));
    let marks = model.sessions.values().flat_map(|s| s.marks.iter().map(|m| m.t_ms));
    let faults = model.fault_lines.iter().map(|f| f.t_ms).chain(model.hangs.iter().map(|h| h.t_ms + h.ms));
    // A violation judged at the end (liveness, a budget) says nothing of where the action is.
    let violation = violation_t_ms.filter(|t| *t < model.end_ms);
    let last = states.chain(marks).chain(faults).chain(violation).max().unwrap_or(model.end_ms);
    let margin = (last - start) / 20;
    (start, (last + margin).min(model.end_ms).max(start + 1))
}

/// A hang as a shaded window on the hung session's own lane (across every lane only when the
/// hung actor is no session's).
fn hangs(svg: &mut String, model: &Model, lanes: &Lanes, scale: &Scale) {
    for hang in &model.hangs {
        let (y, height) = match hang.place.and_then(|p| lanes.session_y(p)) {
            Some(y) => (y, LANE_H),
            None => (30.0, lanes.height - 60.0),
        };
        let x = scale.x(hang.t_ms);
        let w = (scale.x(hang.t_ms + hang.ms) - x).max(0.5);
        let _ = writeln!(svg, "<rect class=\"fault hang\" x=\"{x:.2}\" y=\"{y:.1}\" width=\"{w:.2}\" height=\"{height:.1}\" fill=\"#888\" fill-opacity=\"0.3\"><title>{}</title></rect>", esc(&hang.title));
    }
}

/// A crash or another fault, or a statement answered SQLITE_BUSY, as a dashed line on the
/// lane of the session it struck (across every lane when it struck none).
fn fault_lines(svg: &mut String, model: &Model, lanes: &Lanes, scale: &Scale) {
    for line in &model.fault_lines {
        let (y1, y2) = match line.place.and_then(|p| lanes.session_y(p)) {
            Some(y) => (y, y + LANE_H),
            None => (30.0, lanes.height - 30.0),
        };
        let (class, stroke) = if line.busy { ("fault busy", "#e67e22") } else { ("fault crash", "#c0392b") };
        let _ = writeln!(svg, "<line class=\"{class}\" x1=\"{0:.2}\" y1=\"{y1:.1}\" x2=\"{0:.2}\" y2=\"{y2:.1}\" stroke=\"{stroke}\" stroke-dasharray=\"4 3\" vector-effect=\"non-scaling-stroke\"><title>{1}</title></line>", scale.x(line.t_ms), esc(&line.title));
    }
}

/// Each task's state over time: a span from every write that changed it to the next one (the
/// last to the end of what is shown).
fn task_lanes(svg: &mut String, model: &Model, lanes: &Lanes, scale: &Scale) {
    for (task, lane) in &lanes.tasks {
        let states = &model.tasks[task].states;
        for (i, change) in states.iter().enumerate() {
            let stop = states.get(i + 1).map_or(scale.start_ms + scale.span_ms, |s| s.t_ms);
            let (x, state) = (scale.x(change.t_ms), change.state);
            // The colour comes from the page's style sheet (`.state-working`, …).
            let _ = write!(
                svg,
                "<rect class=\"state state-{state}\" x=\"{x:.2}\" y=\"{:.1}\" width=\"{:.2}\" height=\"{LANE_H}\"><title>",
                lane.y,
                (scale.x(stop) - x).max(0.2),
            );
            esc_into(svg, &change.title);
            svg.push_str("</title></rect>\n");
        }
    }
}

/// Each session's lifetime: its first to its last row.
fn session_lifetimes(svg: &mut String, model: &Model, lanes: &Lanes, scale: &Scale) {
    for (place, y) in lanes.tasks.values().flat_map(|lane| &lane.sessions) {
        let Some(s) = model.sessions.get(place) else { continue };
        let x = scale.x(s.first_ms);
        let _ = writeln!(svg, "<rect class=\"session\" x=\"{x:.2}\" y=\"{:.1}\" width=\"{:.2}\" height=\"4\" fill=\"#999\"><title>{}.{} from t={} to t={} ms</title></rect>", y + 9.0, (scale.x(s.last_ms) - x).max(0.2), place.task_id(), esc(&session_name(model, *place)), s.first_ms, s.last_ms);
    }
}

/// Each measurement above its budget: a red bar over its window along the top of its task's
/// lane, its causes on hover (sim/judging/oracle/latency.rs).
fn budget_breaches(svg: &mut String, summary: &RunSummary, lanes: &Lanes, scale: &Scale) {
    for (d, limit) in super::causes::breaches(summary) {
        let Some(lane) = lanes.tasks.get(&d.task_id) else { continue };
        let x = scale.x(d.start_ms);
        let w = (scale.x(d.end_ms) - x).max(0.5);
        let _ = writeln!(svg, "<rect class=\"breach\" x=\"{x:.2}\" y=\"{:.1}\" width=\"{w:.2}\" height=\"4\" fill=\"#d0021b\" fill-opacity=\"0.8\"><title>{}</title></rect>", lane.y, esc(&super::causes::breach_title(d, limit)));
    }
}

/// The first violation: a line across every lane, explained on hover.
fn violation_line(svg: &mut String, summary: &RunSummary, scale: &Scale, height: f64) {
    if let Some(v) = summary.verdict.violations.first() {
        let _ = writeln!(svg, "<g id=\"first-violation\" class=\"violation\"><line x1=\"{0:.2}\" y1=\"30\" x2=\"{0:.2}\" y2=\"{1:.1}\" stroke=\"#d0021b\" stroke-width=\"2\" vector-effect=\"non-scaling-stroke\"/><title>{2}: {3}</title></g>", scale.x(v.t_ms), height - 30.0, v.rule, esc(&v.explanation));
    }
}

/// The lane labels, beside the lanes: tasks in bold, sessions named as the banner names them.
fn labels(model: &Model, lanes: &Lanes) -> String {
    let mut svg = format!("<svg id=\"labels\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{LABELS_W}\" height=\"{}\">\n", lanes.height);
    for (task, lane) in &lanes.tasks {
        let _ = writeln!(svg, "<text x=\"4\" y=\"{:.1}\" font-weight=\"bold\">{task}</text>", lane.y + 15.0);
        for (place, y) in &lane.sessions {
            let _ =
                writeln!(svg, "<text class=\"session-name\" x=\"14\" y=\"{:.1}\">{}</text>", y + 14.0, esc(&session_name(model, *place)));
        }
    }
    svg.push_str("</svg>\n");
    svg
}

/// `text` as a JSON string, safe inside a `<script>` element (no `<` appears in it). What
/// needs no escape is copied a run at a time: every character escaped is ASCII, so no byte
/// of another character can be taken for one.
fn json_str(out: &mut String, text: &str) {
    out.push('"');
    let mut copied = 0;
    for (i, b) in text.bytes().enumerate() {
        let escaped = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            // No `<` at all inside the script element: neither `</script` nor `<!--` can occur.
            b'<' => "\\u003c",
            b'\n' => "\\n",
            b if b < 0x20 => "",
            _ => continue,
        };
        out.push_str(&text[copied..i]);
        copied = i + 1;
        if escaped.is_empty() {
            let _ = write!(out, "\\u{:04x}", b);
        } else {
            out.push_str(escaped);
        }
    }
    out.push_str(&text[copied..]);
    out.push('"');
}

fn sparse_entry(out: &mut String, mark: &Mark, y: f64) {
    let _ = write!(out, "[{},{y},\"{}\",", mark.t_ms, mark.class);
    json_str(out, &mark.title);
    out.push_str("],\n");
}

/// What the page's script draws, as JSON: the time span, the first violation's time, each
/// session lane's dense marks (times and row numbers as differences from the previous mark,
/// with an index into the lane's hover texts) and every other mark whole.
fn data(model: &Model, lanes: &Lanes, scale: &Scale, violation_t_ms: Option<i64>) -> String {
    let mut out = String::with_capacity(1 << 20);
    let violation = violation_t_ms.map_or("null".to_string(), |t| t.to_string());
    let _ = writeln!(out, "{{\"t0\":{},\"span\":{},\"h\":{},\"v\":{violation},\"lanes\":[", scale.start_ms, scale.span_ms, lanes.height);
    let mut sparse = String::new();
    for (task, lane) in &lanes.tasks {
        for mark in &model.tasks[task].conductor_messages {
            sparse_entry(&mut sparse, mark, lane.y);
        }
        for (place, y) in &lane.sessions {
            let Some(s) = model.sessions.get(place) else { continue };
            s.marks.iter().for_each(|m| sparse_entry(&mut sparse, m, *y));
            let _ = write!(out, "{{\"y\":{y},\"k\":[");
            for (i, kind) in s.kinds.iter().enumerate() {
                let _ = write!(out, "{}[\"{}\",", if i > 0 { "," } else { "" }, kind.class);
                json_str(&mut out, &kind.text());
                out.push(']');
            }
            out.push_str("],\"d\":\"");
            dense_marks(&mut out, &s.dense);
            out.push_str("\"},\n");
        }
    }
    if let Some((place, mark)) = &model.violating_write {
        if let Some(y) = lanes.session_y(*place) {
            sparse_entry(&mut sparse, mark, y);
        }
    }
    trim_comma(&mut out);
    out.push_str("],\"sparse\":[\n");
    out.push_str(&sparse);
    trim_comma(&mut out);
    out.push_str("]}");
    out
}

/// A session lane's dense marks, `dt,dseq,kind` each in base 36, comma-separated: times and
/// row numbers as differences from the previous mark. Gathered as bytes and checked as text
/// once (a day's fleet has ~200,000 marks: a `push_str` of each number was half the page's
/// cost, issue 47).
fn dense_marks(out: &mut String, dense: &[super::model::Dense]) {
    let mut bytes = Vec::with_capacity(dense.len() * 12);
    let (mut t, mut seq) = (0_i64, 0_u64);
    for (i, d) in dense.iter().enumerate() {
        if i > 0 {
            bytes.push(b',');
        }
        // Rows come in time order, so both differences are never negative.
        base36(&mut bytes, (d.t_ms - t).max(0) as u64);
        bytes.push(b',');
        base36(&mut bytes, d.seq.saturating_sub(seq));
        bytes.push(b',');
        base36(&mut bytes, u64::from(d.kind));
        (t, seq) = (d.t_ms, d.seq);
    }
    out.push_str(std::str::from_utf8(&bytes).expect("ASCII digits and commas"));
}

/// `n` in base 36 (digits, then lower-case letters): a day's milliseconds in 5 characters.
fn base36(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0_u8; 13];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b"0123456789abcdefghijklmnopqrstuvwxyz"[(n % 36) as usize];
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

fn trim_comma(out: &mut String) {
    if out.ends_with(",\n") {
        out.truncate(out.len() - 2);
    }
}

/// The verdict above the timeline: PASS, the failure and its explanation, or the first
/// expected violation; for a large run, which window the timeline shows.
fn banner(summary: &RunSummary) -> String {
    let banner = match summary.verdict.violations.first() {
        Some(v) if !summary.verdict.passed() => {
            format!(
                "<div id=\"violation\" class=\"fail\"><b>{}</b> — {}</div>",
                esc(&summary.verdict.headline()),
                esc(&humanize_instants(&v.explanation))
            )
        }
        Some(v) => format!(
            "<div id=\"violation\" class=\"expected\"><b>{}</b> (first, at {}): {}</div>",
            esc(&summary.verdict.headline()),
            duration(v.t_ms),
            esc(&humanize_instants(&v.explanation))
        ),
        None => "<div id=\"verdict\" class=\"pass\"><b>PASS</b></div>".to_string(),
    };
    match report_window(summary) {
        Some((from, to)) => format!(
            "{banner}\n<p class=\"expected\">This run has {} trace rows; the timeline shows t={from}..{to} ms ({} to {}) around the first violation. trace.csv holds everything; <code>rehearsal replay --until</code> stops a replay at any moment.</p>",
            summary.trace_rows,
            duration(from),
            duration(to)
        ),
        None => banner,
    }
}

/// The page's script: the axis, the marks and the density bands for the part in view, drawn
/// again on every zoom, scroll and resize.
const SCRIPT: &str = include_str!("timeline.js");

/// The whole page: title, verdict, run facts, legend, zoom buttons, the labels beside the
/// lanes, the data and the script.
fn page(labels: &str, svg: &str, data: &str, height: f64, summary: &RunSummary) -> String {
    let state_css: String = STATE_COLORS.iter().map(|(s, c)| format!(".state-{s}{{fill:{c}}} ")).collect();
    let legend: String =
        STATE_COLORS.iter().map(|(s, c)| format!("<span class=\"key\"><i style=\"background:{c}\"></i>{s}</span>")).collect();
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>rehearsal timeline: {scenario} seed {seed}</title>\n<style>body{{font-family:sans-serif;font-size:12px;margin:12px}} .fail{{background:#fde2e2;padding:8px}} .pass{{background:#e2f5e2;padding:8px}} .expected{{background:#fff4d6;padding:8px}} .key{{margin-right:10px;white-space:nowrap}} .key i{{display:inline-block;width:12px;height:12px;margin-right:3px;vertical-align:middle}} #wrap{{display:flex;border:1px solid #ddd}} #labels{{flex:none;font-size:11px}} #scroll{{flex:1;min-width:0;overflow-x:auto}} #inner{{position:relative;width:100%}} #timeline{{display:block}} #overlay{{position:absolute;left:0;top:0;pointer-events:none;font-size:11px}} #overlay .mark,#overlay .band{{pointer-events:all}} code{{background:#f4f4f4;word-break:break-all}} {state_css}</style></head>\n<body>\n<h1>{scenario}, seed {seed}</h1>\n{banner}\n<p>makespan {makespan}, {events} events, trace hash <code>{hash}</code><br>replay: <code>{replay}</code></p>\n<p>{legend} <span class=\"marks-key\">▲ message · ▮ heartbeat · • watcher poll · ○ conductor message · ✕ crash · ◎ the violating write · red bar on a task lane: a measurement over its budget (hover: its causes) · shaded: a session's hang · dashed: fault · bands: heartbeats and polls too dense to draw one by one (zoom in)</span></p>\n<p>zoom: <button id=\"zoom-in\">+</button> <button id=\"zoom-out\">−</button> <button id=\"to-violation\">first violation</button> <button id=\"active\">active window</button> <button id=\"whole-run\">whole run</button> <span id=\"in-view\"></span> (hover a mark for its trace row)</p>\n<div id=\"wrap\">\n{labels}<div id=\"scroll\"><div id=\"inner\">\n{svg}<svg id=\"overlay\" xmlns=\"http://www.w3.org/2000/svg\" height=\"{height}\"></svg></div></div></div>\n<script type=\"application/json\" id=\"data\">{data}</script>\n<script>\n{SCRIPT}</script>\n</body></html>\n",
        banner = banner(summary),
        scenario = esc(&summary.scenario),
        seed = summary.seed,
        makespan = duration(summary.makespan_ms),
        events = summary.events,
        hash = summary.trace_hash,
        replay = esc(&summary.replay),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::report::test_record as record;
    use crate::trace::trace_reader::TraceRecord;

    fn place(task: u64, session: u32, twin: bool) -> SessionPlace {
        SessionPlace { task, session, twin }
    }

    /// Two tasks, the second with a successor session and a double launch's twin.
    fn trace() -> Vec<TraceRecord> {
        vec![
            record(0, "conductor", "sql", "create_task", None, "task_id=task-02 instruction_path=x"),
            record(10, "conductor", "sql", "create_task", None, "task_id=task-01 instruction_path=x"),
            record(20, "task-02.S1", "sql", "claim_task", Some(TaskState::Working), "task_id=task-02"),
            record(30, "task-02.S1b", "sql", "claim_task", None, "task_id=task-02"),
            record(40, "task-01.S1.bg-watcher-1", "sql", "read_new_conductor_messages", None, "task_id=task-01"),
            record(50, "task-02.S1", "crashed", "", None, ""),
            record(60, "engine", "fault_hang", "", None, "task-01.S1 (before `heartbeat`) hangs for 20 ms"),
            record(70, "task-02.S2", "sql", "claim_task", Some(TaskState::Working), "task_id=task-02"),
            record(80, "task-02.S1.agent-1", "exit", "", None, ""),
            record(100, "conductor", "sql", "send_conductor_message", None, "task_id=task-02 message=x"),
        ]
    }

    #[test]
    fn a_lane_per_task_in_id_order_then_its_sessions_in_order_of_appearance() {
        let lanes = Lanes::of(&Model::of(&trace()));
        assert_eq!(lanes.tasks.keys().map(String::as_str).collect::<Vec<_>>(), ["task-01", "task-02"]);
        assert_eq!(lanes.tasks["task-01"], TaskLane { y: 40.0, sessions: vec![(place(1, 1, false), 66.0)] });
        // The twin S1b gets its own lane, after S1 and before the successor S2.
        let task_02 = vec![(place(2, 1, false), 124.0), (place(2, 1, true), 146.0), (place(2, 2, false), 168.0)];
        assert_eq!(lanes.tasks["task-02"], TaskLane { y: 98.0, sessions: task_02 });
        assert_eq!(lanes.height, 168.0 + LANE_H + 10.0 + 40.0);
        assert_eq!(Lanes::of(&Model::of(&[])), Lanes { tasks: BTreeMap::new(), height: 80.0 });
    }

    #[test]
    fn the_scale_maps_the_first_row_to_the_left_edge_and_the_last_to_the_right() {
        let scale = Scale::of(&Model::of(&trace()[2..]));
        assert_eq!((scale.start_ms, scale.span_ms), (20, 80));
        assert_eq!(scale.x(20), 0.0);
        assert_eq!(scale.x(100), VIEW_W);
        let one = Scale::of(&Model::of(&[]));
        assert_eq!((one.start_ms, one.span_ms), (0, 1));
    }

    #[test]
    fn a_hang_is_shaded_on_its_own_sessions_lane_only() {
        let model = Model::of(&trace());
        let (scale, lanes) = (Scale::of(&model), Lanes::of(&model));
        let mut svg = String::new();
        hangs(&mut svg, &model, &lanes, &scale);
        assert_eq!(svg.matches("class=\"fault hang\"").count(), 1, "{svg}");
        // task-01.S1's lane is at y=66, one lane high; not from the axis to the bottom.
        assert!(svg.contains(&format!("y=\"66.0\" width=\"200.00\" height=\"{LANE_H:.1}\"")), "{svg}");
        assert!(svg.contains("<title>t=60 ms fault_hang engine task-01.S1 (before `heartbeat`) hangs for 20 ms</title>"), "{svg}");
    }

    #[test]
    fn state_spans_and_conductor_messages_are_on_their_tasks_lanes() {
        let model = Model::of(&trace());
        let (scale, lanes) = (Scale::of(&model), Lanes::of(&model));
        let mut svg = String::new();
        task_lanes(&mut svg, &model, &lanes, &scale);
        // task-02: working from the first claim; the successor's claim keeps it working.
        assert_eq!(svg.matches("class=\"state state-working\"").count(), 1, "{svg}");
        assert!(svg.contains("working from t=20 ms (claim_task by task-02.S1: task_id=task-02)"), "{svg}");
        let data = data(&model, &lanes, &scale, None);
        assert!(data.contains("[100,98,\"conductor-message\","), "on task-02's lane: {data}");
        assert!(data.contains("[50,124,\"crash\","), "{data}");
    }

    #[test]
    fn the_active_window_ends_at_the_last_change_not_at_hours_of_polling_after_it() {
        let mut records = trace();
        records.extend(
            (1..=50)
                .map(|i| record(100 + i * 1000, "task-01.S1.bg-watcher-1", "sql", "read_new_conductor_messages", None, "task_id=task-01")),
        );
        let model = Model::of(&records);
        assert_eq!(model.end_ms, 50_100);
        // The last change is the conductor's message at t=100: the window ends a twentieth after it.
        assert_eq!(active_window(&model, None), (0, 105));
        assert_eq!(active_window(&model, Some(20_000)), (0, 21_000), "a violation while it polls is in the window");
        assert_eq!(active_window(&model, Some(50_100)), (0, 105), "a violation judged at the end is not");
    }

    #[test]
    fn dense_marks_are_differences_from_the_previous_one() {
        let mut records = trace();
        records.push(record(130, "task-01.S1.bg-watcher-1", "sql", "read_new_conductor_messages", None, "task_id=task-01"));
        let model = Model::of(&records);
        let (scale, lanes) = (Scale::of(&model), Lanes::of(&model));
        let data = data(&model, &lanes, &scale, None);
        // 40 and 90 in base 36: 14 and 2i.
        assert!(data.contains("{\"y\":66,\"k\":[[\"poll\",\"task-01.S1.bg-watcher-1 sql read_new_conductor_messages 1 task_id=task-01\"]],\"d\":\"14,14,0,2i,2i,0\"}"), "{data}");
        let mut out = Vec::new();
        [0, 35, 36, 86_400_000].iter().for_each(|n| {
            base36(&mut out, *n);
            out.push(b' ');
        });
        assert_eq!(out, b"0 z 10 1ffuo0 ");
    }

    #[test]
    fn json_strings_are_escaped_and_never_close_the_script() {
        let mut out = String::new();
        json_str(&mut out, "a \"b\" \\ </script>\n\u{1}é temp/x");
        assert_eq!(out, r#""a \"b\" \\ \u003c/script>\n\u0001é temp/x""#);
        out.clear();
        json_str(&mut out, "é<ü\t\u{1f}");
        assert_eq!(out, r#""é\u003cü\u0009\u001f""#);
    }

    #[test]
    fn lanes_name_sessions_as_the_explanations_do() {
        let mut claim = record(20, "task-02.S1", "sql", "claim_task", Some(TaskState::Working), "task_id=task-02");
        claim.session = "ad660549-0000".into();
        let model = Model::of(&[claim]);
        // The oracle's explanations (and so the banner) say `session S1 (ad660549…) of task-02`.
        assert_eq!(session_name(&model, place(2, 1, false)), "S1 (ad660549…)");
        assert!(labels(&model, &Lanes::of(&model)).contains(">S1 (ad660549…)</text>"));
    }

    #[test]
    fn every_state_has_its_own_colour_in_the_legend() {
        let mut states: Vec<TaskState> = STATE_COLORS.iter().map(|(s, _)| *s).collect();
        states.sort();
        let mut all = TaskState::ALL.to_vec();
        all.sort();
        assert_eq!(states, all);
        let mut colours: Vec<&str> = STATE_COLORS.iter().map(|(_, c)| *c).collect();
        colours.sort();
        colours.dedup();
        assert_eq!(colours.len(), STATE_COLORS.len());
    }
}
