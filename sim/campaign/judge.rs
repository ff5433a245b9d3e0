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
    let loaded = Scenario::load(&scenario_path)?.with_profile(Some(&start.profile))?;
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
    // The SQL the run ran, as its scenario and variants make it (a `--sql` file of the run's
    // command line is not in the trace: its explanations name the scenario's statements).
    let sql = crate::judging::oracle::SqlInForce::of(&crate::plan::catalog_for(&resolved)?);
    let mut checker = crate::run::checker_for(&resolved).with_sql_in_force(sql);
    let end = stream.for_each(|event| checker.on_event(&event))?;
    let conn = crate::report::open_finished_db(&db_path)?;
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
