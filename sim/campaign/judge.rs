//! `rehearsal judge RUN_DIR...`: judges finished runs again from their files alone. The
//! trace (format v2) gives back every event the run's checker consumed and names the scenario,
//! variants and epoch the run was made with; `comms.db` gives liveness. The checker is built
//! as the run builds it (`run::checker_for`), fed the same events in the same order, and the
//! verdict is reached by the same function (`verdict::judge`), so a build whose oracles did
//! not change writes the same `violations.csv` byte for byte; one whose oracles changed says
//! what the old runs would have come to now.

use std::path::{Path, PathBuf};

use crate::base::error::{Error, Result};
use crate::input::scenario::Scenario;
use crate::judging::verdict::Verdict;
use crate::trace::trace_reader::EventStream;
use crate::trace::{RunEnd, RunStart};
use crate::vocab::RunOutcome;

/// How the verdict compares with the `violations.csv` the run wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agreement {
    /// The same bytes.
    Agrees,
    /// Different bytes, left as they were.
    Differs,
    /// `--write`: written; `Some(agreed)` when there was a file to compare with first.
    Written(Option<bool>),
}

/// One run folder judged again.
#[derive(Clone, Debug)]
pub struct Judged {
    pub dir: PathBuf,
    /// The scenario file the verdict was reached with.
    pub scenario: PathBuf,
    pub start: RunStart,
    pub end: RunEnd,
    pub verdict: Verdict,
    pub agreement: Agreement,
}

impl Judged {
    /// Pass when the verdict passes and agrees (or was written); fail when it fails; an error
    /// when it differs from what the run wrote: the build or the scenario changed since.
    pub fn outcome(&self) -> RunOutcome {
        match (self.agreement, self.verdict.passed()) {
            (Agreement::Differs, _) => RunOutcome::Error,
            (_, true) => RunOutcome::Pass,
            (_, false) => RunOutcome::Fail,
        }
    }

    /// The line `rehearsal judge` prints for the folder.
    pub fn line(&self) -> String {
        let agreement = match self.agreement {
            Agreement::Agrees => "agrees with the run's violations.csv",
            Agreement::Differs => "DIFFERS from the run's violations.csv (build or scenario changed?)",
            Agreement::Written(None) => "violations.csv written",
            Agreement::Written(Some(true)) => "violations.csv written (the same as the run's)",
            Agreement::Written(Some(false)) => "violations.csv rewritten (it differed from the run's)",
        };
        format!("{}: {} seed {}: {} — {agreement}", self.dir.display(), self.scenario.display(), self.start.seed, self.verdict.headline())
    }
}

/// What the trace says the run left in comms.db: every message inserted (id, task, type, and
/// the second it was inserted at) and each task row as the last write on it left it.
#[derive(Default)]
struct Written {
    messages: std::collections::BTreeMap<i64, (String, String, i64)>,
    /// `None`: a statement changed the row without the trace saying how (`also=`).
    tasks: std::collections::BTreeMap<String, Option<(String, String, i64)>>,
}

impl Written {
    fn see(&mut self, event: &crate::world::event::Event) {
        let crate::world::event::EventKind::Sql(sql) = &event.kind else { return };
        for (id, task, kind) in sql.message.iter().chain(&sql.more_messages) {
            self.messages.insert(*id, (task.clone(), kind.clone(), event.t_ms));
        }
        if let Some(row) = &sql.after {
            let state = row.state.to_string();
            self.tasks.insert(sql.task_id.clone(), Some((state, row.session_id.clone(), row.retry_count)));
        }
        for other in &sql.other_rows {
            self.tasks.insert(other.clone(), None);
        }
    }

    /// Refuses a comms.db that is not the one this trace's run left (issue 41: another run's
    /// comms.db was judged "PASS, agrees"): its messages must be the ones the trace inserted,
    /// each at the second the trace inserted it, and each task row the last write left.
    fn matches(&self, conn: &rusqlite::Connection, db: &Path, trace: &Path, epoch_unix_ms: i64) -> Result<()> {
        let unlike = |what: String| {
            Error::input(format!(
                "{}: {what}: not the comms.db of the run {} records (another run's, or changed since)",
                db.display(),
                trace.display()
            ))
        };
        let read = |e: rusqlite::Error| Error::input(format!("{}: cannot read it as a run's comms.db: {e}", db.display()));
        let mut stmt = conn
            .prepare("SELECT id, task_id, coalesce(message_type, ''), CAST(strftime('%s', timestamp) AS INTEGER) FROM orchestration_messages ORDER BY id")
            .map_err(read)?;
        let rows =
            stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, Option<i64>>(3)?)));
        let mut seen = 0;
        for row in rows.map_err(read)? {
            let (id, task, kind, at_s) = row.map_err(read)?;
            seen += 1;
            let Some((t_task, t_kind, t_ms)) = self.messages.get(&id) else {
                return Err(unlike(format!("message {id} ({kind} for {task}) is in no row of the trace")));
            };
            let t_s = (epoch_unix_ms + t_ms).div_euclid(1000);
            if (t_task, t_kind) != (&task, &kind) || at_s != Some(t_s) {
                return Err(unlike(format!(
                    "message {id} is {kind} for {task} at {} s, the trace inserted {t_kind} for {t_task} at {t_s} s (unix)",
                    at_s.map_or("no time".to_string(), |s| s.to_string())
                )));
            }
        }
        if seen != self.messages.len() {
            return Err(unlike(format!("{seen} message(s), the trace inserted {}", self.messages.len())));
        }
        let mut stmt = conn
            .prepare("SELECT state, coalesce(session_id, ''), coalesce(retry_count, 0) FROM orchestration_tasks WHERE task_id = ?1")
            .map_err(read)?;
        for (task, row) in self.tasks.iter().filter_map(|(t, r)| Some((t, r.as_ref()?))) {
            let found: Option<(String, String, i64)> =
                stmt.query_row([task], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).map(Some).or_else(|e| match e {
                    rusqlite::Error::QueryReturnedNoRows => Ok(None),
                    e => Err(read(e)),
                })?;
            if found.as_ref() != Some(row) {
                return Err(unlike(format!("task {task} is {found:?}, the trace's last write left {row:?} (state, session, retries)")));
            }
        }
        Ok(())
    }
}

/// The scenario file judge found (or was given) is the one the run was made with: its text's
/// SHA-256 is the one the trace's first row records (C120). A trace whose run parsed its
/// scenario from a document in memory (explore, swarm) records none: only its name and epoch
/// are checked then.
fn same_scenario(trace: &Path, start: &RunStart, scenario_path: &Path, found: Option<&str>) -> Result<()> {
    let (Some(recorded), Some(found)) = (&start.scenario_sha256, found) else { return Ok(()) };
    if recorded == found {
        return Ok(());
    }
    let short = crate::input::scenario::identity::short;
    Err(Error::input(format!(
        "{}:2: column `observed`: the run was made with a scenario whose text has sha256 {}, {} has sha256 {}: edited since, another scenario of the name {} (pass --scenario with the run's file), or the trace's first row changed",
        trace.display(),
        short(recorded),
        scenario_path.display(),
        short(found),
        start.scenario
    )))
}

/// Judges the run in `dir` again, with `scenario` or else the file the trace names, found by
/// its name (`scenario_lookup::find`); `write` writes `violations.csv` instead of only comparing.
/// A folder that holds no whole run, a trace of another format or cut short, or a scenario
/// that is not the run's, is an input error naming the file (and the line).
pub fn judge_run(dir: &Path, scenario: Option<&Path>, write: bool) -> Result<Judged> {
    if !dir.is_dir() {
        return Err(Error::input(format!("{}: no such run folder", dir.display())));
    }
    let trace_path = dir.join("trace.csv");
    if !trace_path.is_file() {
        let stopped = dir.join("trace.csv.tmp").exists();
        let hint = if stopped { " (only trace.csv.tmp: the run was stopped before its end)" } else { "" };
        return Err(Error::input(format!("{}: no trace.csv: not a run folder{hint}", dir.display())));
    }
    let db_path = dir.join("comms.db");
    if !db_path.is_file() {
        return Err(Error::input(format!("{}: no comms.db beside the trace", dir.display())));
    }
    let violations_path = dir.join("violations.csv");
    if !write && !violations_path.is_file() {
        return Err(Error::input(format!("{}: no violations.csv to compare the verdict with; pass --write to write it", dir.display())));
    }
    let stream = EventStream::open(&trace_path)?;
    let start = stream.start.clone();
    let scenario_path = match scenario {
        Some(given) => given.to_path_buf(),
        None => crate::input::scenario_lookup::find(&start.scenario, dir)?,
    };
    // The profile the run had (its trace says it: the file's or `--protocol`'s), then its variants.
    let loaded = Scenario::load(&scenario_path)?;
    let text_sha256 = loaded.text_sha256.clone();
    let loaded = loaded.with_profile(Some(&start.profile))?.with_conductor(Some(&start.conductor))?;
    let resolved = crate::input::variant::with_variants(&loaded, &start.variants)?;
    if resolved.run.epoch_unix_ms != start.epoch_unix_ms {
        return Err(Error::input(format!(
            "{}:2: the run's epoch is {} but {} has run.epoch_unix_ms = {}: not the scenario this run was made with (pass --scenario)",
            trace_path.display(),
            start.epoch_unix_ms,
            scenario_path.display(),
            resolved.run.epoch_unix_ms
        )));
    }
    same_scenario(&trace_path, &start, &scenario_path, text_sha256.as_deref())?;
    // The SQL the run ran, as its scenario and variants make it (a `--sql` file of the run's
    // command line is not in the trace: its explanations name the scenario's statements).
    let sql = crate::judging::oracle::SqlInForce::of(&crate::plan::catalog_for(&resolved)?);
    let mut checker = crate::run::checker_for(&resolved).with_sql_in_force(sql);
    let mut written = Written::default();
    let end = stream.for_each(|event| {
        written.see(&event);
        checker.on_event(&event)
    })?;
    // A comms.db that is not a database is the user's input, named (issue 41: exit 3, unnamed).
    let conn = crate::report::open_finished_db(&db_path).map_err(|e| Error::input(e.to_string()))?;
    written.matches(&conn, &db_path, &trace_path, start.epoch_unix_ms)?;
    let verdict = crate::judging::verdict::judge(&conn, &resolved, end.ending, end.makespan_ms, checker)?;
    drop(conn);
    let bytes = crate::run::violations_csv(&verdict)?;
    let previous = match std::fs::read(&violations_path) {
        Ok(previous) => Some(previous),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::harness(format!("{}: {e}", violations_path.display()))),
    };
    let agrees = previous.map(|previous| previous == bytes);
    let agreement = if write {
        crate::run::write_violations(&violations_path, &verdict)?;
        Agreement::Written(agrees)
    } else if agrees == Some(true) {
        Agreement::Agrees
    } else {
        Agreement::Differs
    };
    Ok(Judged { dir: dir.to_path_buf(), scenario: scenario_path, start, end, verdict, agreement })
}
