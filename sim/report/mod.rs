//! Reports people look at, written into the run folder after `rehearsal run`: summary.md,
//! timeline.html (one self-contained file, no network) and SVG plots. They are built from
//! the run's own files (trace.csv, comms.db, violations.csv), so any run folder can be
//! reported on again. The trace is read only through `trace_reader`: actors, statements and
//! states arrive typed, never re-parsed here from names or detail strings.
//!
//! `model.rs`: what the pictures show, gathered in one typed pass over the trace;
//! `timeline.rs` (and its script `timeline.js`): timeline.html; `plots.rs`: the SVG charts;
//! `summary.rs`: summary.md; `causes.rs`: where latency went, and the budget breaches; `html.rs`: the crate's one HTML/SVG/XML escaper.
//! `grid_charts.rs`, `line_chart.rs`, `stacked_bars.rs`: the pictures of `rehearsal bench`, with
//! round axis ticks from `ticks.rs` (docs/metrics.md).

mod causes;
pub mod grid_charts;
mod html;
pub mod line_chart;
mod model;
mod plots;
mod series;
pub mod stacked_bars;
mod streamed;
mod summary;
pub mod ticks;
mod timeline;

use std::path::Path;

use crate::base::error::{Error, Result};
use crate::input::scenario::Scenario;
use crate::run::RunSummary;
use crate::trace::trace_reader;
use model::{Focus, Model};

pub use html::{esc, esc_into};
pub use streamed::{StreamedModel, TraceCopy};
pub use timeline::timeline;

/// Trace rows above which the reports show a window of the run rather than all of it: a
/// fleet of a thousand has millions of rows, more than a page should carry (a day of 32
/// musicians, about 430,000 rows, is shown whole: timeline.html draws its many marks as
/// density bands until zoomed in).
pub const REPORT_ROWS_MAX: u64 = 1_000_000;

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

/// Opens a finished run's comms.db without writing anything beside it: `immutable=1` reads
/// the checkpointed file as it is, with no -wal or -shm files.
pub fn open_finished_db(path: &Path) -> Result<rusqlite::Connection> {
    let uri = format!("file:{}?immutable=1", path.display());
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_URI;
    rusqlite::Connection::open_with_flags(uri, flags).map_err(|e| Error::harness(format!("{}: {e}", path.display())))
}

/// The run's budget for each of `Measurements::named()`, in that order (set or derived).
fn budget_limits(scenario: &Scenario) -> [Option<i64>; 5] {
    let limits = crate::judging::oracle::rules::budget::limits(scenario);
    let limit = |name: &str| limits.iter().find(|l| l.name == name).map(|l| l.limit);
    [limit("message_notice_ms"), limit("review_resume_ms"), limit("crash_detect_ms"), limit("heartbeat_age_s"), limit("exit_to_claim_ms")]
}

/// The pictures' model of the run, gathered in one typed pass over `trace.csv`: the run's
/// effects (not its first and last rows nor the facts of ground truth), all of them or
/// `report_window`'s. The run has just written this trace, so one that does not read back is
/// the harness's fault, not the input's.
pub fn report_model(dir: &Path, summary: &RunSummary) -> Result<Model> {
    let path = dir.join("trace.csv");
    let (from, to) = report_window(summary).unwrap_or((i64::MIN, i64::MAX));
    let focus = focus(summary);
    let mut model = Model::new(focus);
    trace_reader::for_each_in_window(&path, from, to, |record| model.add(record)).map_err(|e| match e {
        Error::Input(message) => Error::harness(message),
        other => other,
    })?;
    Ok(model)
}

/// The first violation, whose write the timeline marks.
fn focus(summary: &RunSummary) -> Option<Focus<'_>> {
    summary.verdict.violations.first().map(|v| Focus { t_ms: v.t_ms, explanation: &v.explanation })
}

/// Writes `name` under `dir` whole or not at all (sim/base/atomic.rs).
fn write_file(dir: &Path, name: &str, text: &str) -> Result<()> {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        crate::base::live_files::create_dir_all(parent)?;
    }
    crate::base::atomic::write_atomically(&path, text.as_bytes())
}

pub fn write_run_reports(dir: &Path, summary: &RunSummary, scenario: &Scenario) -> Result<()> {
    write_run_reports_streamed(dir, summary, scenario, None)
}

/// `write_run_reports`, from the model `streamed` built while the run wrote its trace when it
/// has one for the whole trace (sim/report/streamed.rs), else from trace.csv read back.
pub fn write_run_reports_streamed(dir: &Path, summary: &RunSummary, scenario: &Scenario, streamed: Option<StreamedModel>) -> Result<()> {
    use crate::run::timings;
    let streamed = streamed.filter(|_| report_window(summary).is_none());
    let model = match timings::time("reports: streamed model", || streamed.and_then(|s| s.finish(&dir.join("trace.csv"), focus(summary)))) {
        Some(model) => model,
        None => timings::time("reports: model", || report_model(dir, summary))?,
    };
    // timeline.html is written on a thread of its own while the plots and summary.md are
    // written here: each only reads the model and the run's files and writes its own files,
    // so every byte is the same, and with a second core the reports take the longer of the
    // two instead of their sum (issue 47: the timeline and the plots cost about alike).
    std::thread::scope(|scope| {
        let page = std::thread::Builder::new()
            .name("timeline".to_string())
            .spawn_scoped(scope, || {
                let page = timings::time("reports: timeline build", || timeline(&model, summary));
                timings::time("reports: timeline write", || write_file(dir, "timeline.html", &page))
            })
            .map_err(|e| Error::harness(format!("cannot start the timeline's thread: {e}")))?;
        let rest = (|| {
            let plotting = timings::start("reports: plots");
            for (name, svg) in plots::plots(&model, summary, scenario) {
                write_file(dir, &name, &svg)?;
            }
            plotting.end();
            timings::time("reports: summary.md", || write_file(dir, "summary.md", &summary::summary_md(dir, summary, scenario)?))
        })();
        // The timeline's error first, as when it was written first.
        page.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        rest
    })
}

/// A trace record for the reports' unit tests.
#[cfg(test)]
pub(crate) fn test_record(
    t_ms: i64,
    actor: &str,
    event: &str,
    statement: &str,
    state_after: Option<crate::vocab::TaskState>,
    detail: &str,
) -> crate::trace::trace_reader::TraceRecord {
    use crate::vocab::{ActorName, Stmt};
    crate::trace::trace_reader::TraceRecord {
        t_ms,
        actor: if actor == "engine" { None } else { Some(ActorName::parse(actor).expect("an actor name")) },
        session: String::new(),
        event: event.to_string(),
        stmt: if event == "sql" { Stmt::parse(statement) } else { None },
        statement: statement.to_string(),
        rows: "1".to_string(),
        state_after,
        detail: detail.to_string(),
        seq: t_ms as u64,
        observed: String::new(),
    }
}
