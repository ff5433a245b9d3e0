//! timeline.html: a lane per task (its state over time) and under it a lane per session
//! (lifetime, messages, heartbeats, watcher polls); faults shaded; the first violation
//! marked and explained. Hovering any mark shows its trace row (SVG `<title>`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::html::esc;
use super::report_window;
use crate::event::ActorEnd;
use crate::run::{human_ms, RunSummary};
use crate::trace_reader::TraceRecord;
use crate::vocab::{ActorName, SessionPlace, Stmt, TaskState};

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

fn color(state: TaskState) -> &'static str {
    STATE_COLORS.iter().find(|(s, _)| *s == state).map_or("#bbbbbb", |(_, c)| c)
}

const WIDTH: f64 = 1800.0;
/// Room for the lane labels.
const LEFT: f64 = 170.0;
const LANE_H: f64 = 22.0;

/// Simulated milliseconds to pixels: the first row shown at `LEFT`, `span_ms` later at the
/// right edge.
struct Scale {
    start_ms: i64,
    span_ms: i64,
}

impl Scale {
    fn of(records: &[TraceRecord]) -> Scale {
        let start_ms = records.iter().map(|r| r.t_ms).min().unwrap_or(0);
        let span_ms = (records.iter().map(|r| r.t_ms).max().unwrap_or(1) - start_ms).max(1);
        Scale { start_ms, span_ms }
    }

    fn x(&self, t: i64) -> f64 {
        LEFT + ((t - self.start_ms) as f64 / self.span_ms as f64) * (WIDTH - LEFT - 20.0)
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
    /// The SVG's height: every lane plus the axis above and a margin below.
    height: f64,
}

/// A lane for every task a row is about (`TraceRecord::task_id`), and under it one for every
/// session whose actors wrote a row.
fn lanes(records: &[TraceRecord]) -> Lanes {
    let mut tasks: BTreeMap<String, Vec<SessionPlace>> = BTreeMap::new();
    for record in records {
        if let Some(task) = record.task_id() {
            let sessions = tasks.entry(task).or_default();
            if let Some(place) = record.place() {
                if !sessions.contains(&place) {
                    sessions.push(place);
                }
            }
        }
    }
    let mut y = 40.0;
    let mut lanes = BTreeMap::new();
    for (task, places) in tasks {
        let task_y = y;
        y += LANE_H + 4.0;
        let mut sessions = Vec::new();
        for place in places {
            sessions.push((place, y));
            y += LANE_H;
        }
        y += 10.0;
        lanes.insert(task, TaskLane { y: task_y, sessions });
    }
    Lanes { tasks: lanes, height: y + 40.0 }
}

pub fn timeline(records: &[TraceRecord], summary: &RunSummary) -> String {
    let scale = Scale::of(records);
    let lanes = lanes(records);
    let height = lanes.height;
    let mut svg = String::new();
    let width = WIDTH;
    let _ = writeln!(svg, "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"11\">");
    axis(&mut svg, &scale, height);
    faults(&mut svg, records, &scale, height);
    task_lanes(&mut svg, records, &lanes, &scale);
    session_lanes(&mut svg, records, &lanes, &scale);
    conductor_messages(&mut svg, records, &lanes, &scale);
    violation_marker(&mut svg, summary, &scale, height);
    svg.push_str("</svg>\n");
    page(&svg, summary)
}

/// The time axis: a tick every tenth of the run.
fn axis(svg: &mut String, scale: &Scale, height: f64) {
    for i in 0..=10 {
        let t = scale.start_ms + scale.span_ms * i / 10;
        let _ = writeln!(svg, "<line x1=\"{0:.1}\" y1=\"30\" x2=\"{0:.1}\" y2=\"{1:.1}\" stroke=\"#eee\"/><text x=\"{0:.1}\" y=\"24\" text-anchor=\"middle\">{2}</text>", scale.x(t), height - 30.0, human_ms(t));
    }
}

/// Faults across every lane: a hang as a shaded window, a crash (or another fault) and a
/// statement answered SQLITE_BUSY as a dashed line.
fn faults(svg: &mut String, records: &[TraceRecord], scale: &Scale, height: f64) {
    for record in records.iter().filter(|r| r.is_fault() || r.is_busy()) {
        let title = esc(&format!("t={} ms {} {} {}", record.t_ms, record.event, record.actor_text(), record.detail));
        let x = scale.x(record.t_ms);
        match record.hang_ms() {
            Some(ms) => {
                let _ = writeln!(svg, "<rect class=\"fault hang\" x=\"{:.1}\" y=\"30\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#888\" fill-opacity=\"0.18\"><title>{title}</title></rect>", x, (scale.x(record.t_ms + ms) - x).max(1.0), height - 60.0);
            }
            None => {
                let (class, stroke) = if record.is_busy() { ("fault busy", "#e67e22") } else { ("fault crash", "#c0392b") };
                let _ = writeln!(svg, "<line class=\"{class}\" x1=\"{0:.1}\" y1=\"30\" x2=\"{0:.1}\" y2=\"{1:.1}\" stroke=\"{stroke}\" stroke-dasharray=\"4 3\"><title>{title}</title></line>", x, height - 30.0);
            }
        }
    }
}

/// Each task's label and its state over time: a span from every write that changed the
/// state (`state_after`) to the next one.
fn task_lanes(svg: &mut String, records: &[TraceRecord], lanes: &Lanes, scale: &Scale) {
    let mut changes: BTreeMap<String, Vec<&TraceRecord>> = BTreeMap::new();
    for record in records.iter().filter(|r| r.is_sql() && r.state_after.is_some()) {
        if let Some(task) = record.task_id() {
            changes.entry(task).or_default().push(record);
        }
    }
    for (task, lane) in &lanes.tasks {
        let ly = lane.y;
        let _ = writeln!(svg, "<text x=\"4\" y=\"{:.1}\" font-weight=\"bold\">{task}</text>", ly + 15.0);
        let mut spans: Vec<(i64, TaskState, &TraceRecord)> = Vec::new();
        for record in changes.get(task).into_iter().flatten().copied() {
            let state = record.state_after.expect("filtered on state_after");
            if spans.last().is_none_or(|(_, s, _)| *s != state) {
                spans.push((record.t_ms, state, record));
            }
        }
        for (i, (start, state, record)) in spans.iter().enumerate() {
            // The last span ends at `span_ms` as a time, not `start_ms + span_ms`: the same
            // for a whole run (it starts at 0), short of the right edge in a window.
            let stop = spans.get(i + 1).map_or(scale.span_ms, |s| s.0);
            let title = esc(&format!("{state} from t={start} ms ({} by {}: {})", record.statement, record.actor_text(), record.detail));
            let _ = writeln!(
                svg,
                "<rect class=\"state state-{state}\" data-state=\"{state}\" x=\"{:.1}\" y=\"{ly:.1}\" width=\"{:.1}\" height=\"{LANE_H}\" fill=\"{}\"><title>{title}</title></rect>",
                scale.x(*start),
                (scale.x(stop) - scale.x(*start)).max(0.5),
                color(*state)
            );
        }
    }
}

/// Each session's label, its lifetime (first to last row of its actors) and its marks.
fn session_lanes(svg: &mut String, records: &[TraceRecord], lanes: &Lanes, scale: &Scale) {
    let mut by_session: BTreeMap<SessionPlace, Vec<&TraceRecord>> = BTreeMap::new();
    for record in records {
        if let Some(place) = record.place() {
            by_session.entry(place).or_default().push(record);
        }
    }
    for (place, ly) in lanes.tasks.values().flat_map(|lane| &lane.sessions) {
        let mine = by_session.get(place).map_or(&[][..], Vec::as_slice);
        let (Some(first), Some(last)) = (mine.first(), mine.last()) else { continue };
        let name = ActorName::Session(*place).to_string();
        let _ = writeln!(svg, "<text x=\"14\" y=\"{:.1}\">{}</text>", ly + 14.0, esc(&place.label()));
        let _ = writeln!(svg, "<rect class=\"session\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"4\" fill=\"#999\"><title>{} from t={} to t={} ms</title></rect>", scale.x(first.t_ms), ly + 9.0, (scale.x(last.t_ms) - scale.x(first.t_ms)).max(1.0), esc(&name), first.t_ms, last.t_ms);
        for record in mine {
            let Some(mark) = session_mark(record, scale.x(record.t_ms), *ly) else { continue };
            let title = esc(&format!(
                "#{} t={} ms {} {} {} {} {}",
                record.seq,
                record.t_ms,
                record.actor_text(),
                record.event,
                record.statement,
                record.rows,
                record.detail
            ));
            let Mark { class, tag, attributes } = mark;
            let _ = writeln!(svg, "<g class=\"mark {class}\"><{tag} {attributes}><title>{title}</title></{tag}></g>");
        }
    }
}

/// One mark on a session's lane: its class, SVG element and that element's attributes.
#[derive(Debug, PartialEq)]
struct Mark {
    class: &'static str,
    tag: &'static str,
    attributes: String,
}

/// A message sent (▲), a heartbeat (▮), a watcher's poll (•) or the session's end by a crash
/// or a hard stop (✕); other rows draw no mark.
fn session_mark(record: &TraceRecord, cx: f64, ly: f64) -> Option<Mark> {
    let (class, tag, attributes) = if record.stmt.is_some_and(Stmt::inserts_message) {
        ("message", "path", format!("d=\"M{cx:.1} {:.1} l4 6 l-8 0 z\" fill=\"#2c3e50\"", ly + 1.0))
    } else if record.stmt == Some(Stmt::Heartbeat) {
        ("heartbeat", "rect", format!("x=\"{:.1}\" y=\"{:.1}\" width=\"1.5\" height=\"8\" fill=\"#e84393\"", cx, ly + 12.0))
    } else if record.actor.is_some_and(|a| a.is_watcher()) && record.is_sql() {
        ("poll", "circle", format!("cx=\"{cx:.1}\" cy=\"{:.1}\" r=\"1\" fill=\"#74b9ff\"", ly + 19.0))
    } else if record.event == ActorEnd::Crashed.as_str() || record.event == "context_exhausted" {
        ("crash", "path", format!("d=\"M{:.1} {:.1} l8 8 m0 -8 l-8 8\" stroke=\"#c0392b\" stroke-width=\"2\"", cx - 4.0, ly + 6.0))
    } else {
        return None;
    };
    Some(Mark { class, tag, attributes })
}

/// The conductor's messages, as marks on the lane of the task they are for.
fn conductor_messages(svg: &mut String, records: &[TraceRecord], lanes: &Lanes, scale: &Scale) {
    let sent = records.iter().filter(|r| r.actor.is_some_and(|a| a.is_conductor()) && r.stmt.is_some_and(Stmt::inserts_message));
    for record in sent {
        let Some(lane) = record.task_id().and_then(|task| lanes.tasks.get(&task)) else { continue };
        let title = esc(&format!("#{} t={} ms conductor {} {}", record.seq, record.t_ms, record.statement, record.detail));
        let _ = writeln!(svg, "<g class=\"mark conductor-message\"><circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"#fff\" stroke=\"#2c3e50\"><title>{title}</title></circle></g>", scale.x(record.t_ms), lane.y + 11.0);
    }
}

/// The first violation: a line across every lane, explained on hover.
fn violation_marker(svg: &mut String, summary: &RunSummary, scale: &Scale, height: f64) {
    if let Some(v) = summary.verdict.violations.first() {
        let _ = writeln!(svg, "<g id=\"first-violation\" class=\"violation\"><line x1=\"{0:.1}\" y1=\"30\" x2=\"{0:.1}\" y2=\"{1:.1}\" stroke=\"#d0021b\" stroke-width=\"2\"/><title>{2}: {3}</title></g>", scale.x(v.t_ms), height - 30.0, v.rule, esc(&v.explanation));
    }
}

/// The verdict above the timeline: PASS, the failure and its explanation, or the first
/// expected violation; for a large run, which window the timeline shows.
fn banner(summary: &RunSummary) -> String {
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
    match report_window(summary) {
        Some((from, to)) => format!(
            "{banner}\n<p class=\"expected\">This run has {} trace rows; the timeline shows t={from}..{to} ms ({} to {}) around the first violation. trace.csv holds everything; <code>rehearsal replay --until</code> stops a replay at any moment.</p>",
            summary.trace_rows,
            human_ms(from),
            human_ms(to)
        ),
        None => banner,
    }
}

/// The whole page: title, verdict, run facts, legend, zoom buttons and the SVG.
fn page(svg: &str, summary: &RunSummary) -> String {
    let legend: String =
        STATE_COLORS.iter().map(|(s, c)| format!("<span class=\"key\"><i style=\"background:{c}\"></i>{s}</span>")).collect();
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>rehearsal timeline: {scenario} seed {seed}</title>\n<style>body{{font-family:sans-serif;margin:12px}} .fail{{background:#fde2e2;padding:8px}} .pass{{background:#e2f5e2;padding:8px}} .expected{{background:#fff4d6;padding:8px}} .key{{margin-right:10px}} .key i{{display:inline-block;width:12px;height:12px;margin-right:3px;vertical-align:middle}} #wrap{{overflow-x:auto;border:1px solid #ddd}} code{{background:#f4f4f4}}</style></head>\n<body>\n<h1>{scenario}, seed {seed}</h1>\n{banner}\n<p>makespan {makespan}, {events} events, trace hash <code>{hash}</code><br>replay: <code>{replay}</code></p>\n<p>{legend} <span class=\"key\">▲ message · ▮ heartbeat · • watcher poll · ○ conductor message · ✕ crash · dashed: fault</span></p>\n<p>zoom: <button onclick=\"zoom(2)\">+</button> <button onclick=\"zoom(0.5)\">−</button> (hover a mark for its trace row)</p>\n<div id=\"wrap\">\n{svg}</div>\n<script>var z=1;function zoom(f){{z=Math.max(1,Math.min(64,z*f));var s=document.getElementById('timeline');s.setAttribute('width',{width}*z);s.setAttribute('viewBox','0 0 {width} '+s.getAttribute('height'));s.setAttribute('preserveAspectRatio','none');}}</script>\n</body></html>\n",
        banner = banner(summary),
        width = WIDTH,
        scenario = esc(&summary.scenario),
        seed = summary.seed,
        makespan = human_ms(summary.makespan_ms),
        events = summary.events,
        hash = summary.trace_hash,
        replay = esc(&summary.replay),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::report::test_record as record;

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
            record(60, "engine", "fault_hang", "", None, "task-01.S1 hangs for 20 ms"),
            record(70, "task-02.S2", "sql", "claim_task", Some(TaskState::Working), "task_id=task-02"),
            record(80, "task-02.S1.agent-1", "exit", "", None, ""),
            record(100, "conductor", "sql", "send_conductor_message", None, "task_id=task-02 message=x"),
        ]
    }

    #[test]
    fn a_lane_per_task_in_id_order_then_its_sessions_in_order_of_appearance() {
        let lanes = lanes(&trace());
        assert_eq!(lanes.tasks.keys().map(String::as_str).collect::<Vec<_>>(), ["task-01", "task-02"]);
        assert_eq!(lanes.tasks["task-01"], TaskLane { y: 40.0, sessions: vec![(place(1, 1, false), 66.0)] });
        // The twin S1b gets its own lane, after S1 and before the successor S2.
        let task_02 = vec![(place(2, 1, false), 124.0), (place(2, 1, true), 146.0), (place(2, 2, false), 168.0)];
        assert_eq!(lanes.tasks["task-02"], TaskLane { y: 98.0, sessions: task_02 });
        assert_eq!(lanes.height, 168.0 + LANE_H + 10.0 + 40.0);
        assert_eq!(super::lanes(&[]), Lanes { tasks: BTreeMap::new(), height: 80.0 });
    }

    #[test]
    fn the_scale_maps_the_first_row_to_the_left_edge_and_the_last_to_the_right() {
        let scale = Scale::of(&trace()[2..]);
        assert_eq!((scale.start_ms, scale.span_ms), (20, 80));
        assert_eq!(scale.x(20), LEFT);
        assert_eq!(scale.x(100), WIDTH - 20.0);
        let one = Scale::of(&[]);
        assert_eq!((one.start_ms, one.span_ms), (0, 1));
    }

    #[test]
    fn marks_are_messages_heartbeats_watcher_polls_and_crashes() {
        let trace = trace();
        let heartbeat = record(5, "task-01.S1", "sql", "heartbeat", Some(TaskState::Working), "task_id=task-01");
        let class = |r: &TraceRecord| session_mark(r, 200.0, 40.0).map(|m| m.class);
        assert_eq!(class(&heartbeat), Some("heartbeat"));
        assert_eq!(class(&trace[9]), Some("message"));
        assert_eq!(class(&trace[4]), Some("poll"));
        assert_eq!(class(&trace[5]), Some("crash"));
        assert_eq!(class(&trace[2]), None, "a claim by the session itself is no mark");
        assert_eq!(class(&trace[8]), None);
        let crash = session_mark(&trace[5], 200.0, 40.0).unwrap();
        assert_eq!(
            (crash.tag, crash.attributes.as_str()),
            ("path", "d=\"M196.0 46.0 l8 8 m0 -8 l-8 8\" stroke=\"#c0392b\" stroke-width=\"2\"")
        );
    }

    #[test]
    fn faults_and_state_spans_are_drawn_on_their_lanes() {
        let trace = trace();
        let (scale, lanes) = (Scale::of(&trace), lanes(&trace));
        let mut svg = String::new();
        faults(&mut svg, &trace, &scale, lanes.height);
        assert_eq!(svg.matches("class=\"fault hang\"").count(), 1, "{svg}");
        assert!(svg.contains("<title>t=60 ms fault_hang engine task-01.S1 hangs for 20 ms</title>"), "{svg}");
        let mut svg = String::new();
        task_lanes(&mut svg, &trace, &lanes, &scale);
        // task-02: working from the first claim; the successor's claim keeps it working.
        assert_eq!(svg.matches("class=\"state state-working\"").count(), 1, "{svg}");
        assert!(svg.contains(">task-01</text>") && svg.contains("working from t=20 ms (claim_task by task-02.S1: task_id=task-02)"));
        let mut svg = String::new();
        conductor_messages(&mut svg, &trace, &lanes, &scale);
        assert!(svg.contains(&format!("cy=\"{:.1}\"", 98.0 + 11.0)), "on task-02's lane: {svg}");
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
        assert_eq!(color(TaskState::Complete), "#2c7bb6");
    }
}
