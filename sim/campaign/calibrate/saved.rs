//! `rehearsal calibrate predict DIR` (issue 43): the current model set beside a load measured
//! before, without measuring again. A load folder keeps what it measured (load.csv), what it
//! replayed (shape.csv: each statement's actor and planned instant; a closed-loop folder of
//! before has it in closed-loop/actor-N.jsonl), its scenario (scenario.toml) and its options
//! (load.json). `predict` reads them and rewrites comparison.md and comparison.csv, so a model
//! change is judged against loads measured on a quiet machine, on any machine. A folder
//! written before load.json and scenario.toml were saved is completed from the flags once.

use std::path::{Path, PathBuf};

use super::load::{compare, write_record, LoadRecord, LoadReport, LoadRow, Planned, Saved, OWNED};
use crate::base::error::{Error, Result};
use crate::input::scenario::Scenario;

pub struct PredictOptions {
    pub dir: PathBuf,
    /// For a folder without scenario.toml.
    pub scenario: Option<PathBuf>,
    /// For a folder without load.json: the options the load was measured with.
    pub seed: Option<u64>,
    pub speedup: Option<u32>,
    pub busy_timeout_ms: Option<u64>,
    pub keep_open: bool,
    pub closed_loop: bool,
    /// Another load of the same scenario and options to draw the prediction's holds and
    /// service times from (its load.csv), so the prediction is not fitted on this load.
    pub inputs_from: Option<PathBuf>,
}

impl PredictOptions {
    fn any_load_option(&self) -> bool {
        self.seed.is_some() || self.speedup.is_some() || self.busy_timeout_ms.is_some() || self.keep_open || self.closed_loop
    }
}

pub fn predict_saved(options: &PredictOptions) -> Result<LoadReport> {
    let dir = &options.dir;
    if !dir.join("load.csv").is_file() {
        return Err(Error::input(format!("{}: no load.csv there: not a folder `rehearsal calibrate load` wrote", dir.display())));
    }
    // Held to the end, as `calibrate load` holds it; only what a rehearsal command wrote may be there.
    let _lock = crate::base::out_lock::OutLock::acquire(dir)?;
    crate::base::out_owner::refuse_foreign(dir)?;
    let rows: Vec<LoadRow> = crate::base::csv_rows::read_rows(&dir.join("load.csv"))?;
    let copy = dir.join("scenario.toml");
    let scenario_path = match (&options.scenario, copy.is_file()) {
        (Some(_), true) => {
            return Err(Error::input(format!(
                "{}: the load's scenario is saved there; --scenario is for a folder without it",
                copy.display()
            )))
        }
        (Some(path), false) => path.clone(),
        (None, true) => copy.clone(),
        (None, false) => {
            return Err(Error::input(format!(
                "{}: no scenario.toml (a load of before): give the scenario it ran, --scenario PATH",
                dir.display()
            )))
        }
    };
    let scenario = Scenario::load(&scenario_path)?;
    let planned = planned_of(dir, &rows)?;
    let saved_record = dir.join("load.json");
    let (record, completed) = if saved_record.is_file() {
        if options.any_load_option() {
            return Err(Error::input(format!(
                "{}: the load's options are saved there; --seed, --speedup, --busy-timeout-ms, --keep-open and --closed-loop are for a folder without it",
                saved_record.display()
            )));
        }
        let text = std::fs::read_to_string(&saved_record)?;
        let record: LoadRecord = serde_json::from_str(&text).map_err(|e| Error::input(format!("{}: {e}", saved_record.display())))?;
        (record, false)
    } else {
        (record_from_flags(options, &scenario_path, &rows, &planned, dir)?, true)
    };
    if completed {
        // Once: the next `predict` needs no flags.
        crate::base::out_owner::record(dir, OWNED)?;
        write_record(dir, &record)?;
        let text = std::fs::read_to_string(&scenario_path)?;
        crate::base::atomic::write_atomically(&copy, text.as_bytes())?;
    }
    let inputs = match &options.inputs_from {
        Some(other) if other.join("load.csv").is_file() => {
            Some((other.clone(), crate::base::csv_rows::read_rows(&other.join("load.csv"))?))
        }
        Some(other) => {
            return Err(Error::input(format!(
                "--inputs-from {}: no load.csv there: not a folder `rehearsal calibrate load` wrote",
                other.display()
            )))
        }
        None => None,
    };
    compare(&Saved { record, scenario, scenario_path, rows, planned, inputs }, dir)
}

/// The statements as the load planned them: shape.csv, or a closed-loop folder's workers'
/// steps, or (an open-loop folder of before) the replayed statements' due instants, without
/// their actors.
fn planned_of(dir: &Path, rows: &[LoadRow]) -> Result<Vec<Planned>> {
    if dir.join("shape.csv").is_file() {
        return crate::base::csv_rows::read_rows(&dir.join("shape.csv"));
    }
    let names: std::collections::BTreeMap<usize, &str> = rows.iter().map(|r| (r.index, r.statement.as_str())).collect();
    let work = dir.join("closed-loop");
    if work.is_dir() {
        let steps = super::closed_loop::planned_from_work(&work)?;
        return Ok(steps
            .into_iter()
            .map(|(actor, index, writes, due_us)| Planned {
                index,
                actor,
                statement: names.get(&index).unwrap_or(&"").to_string(),
                writes,
                due_us,
            })
            .collect());
    }
    let mut planned: Vec<Planned> = rows
        .iter()
        .filter(|r| r.attempt == 1)
        .map(|r| Planned {
            index: r.index,
            actor: String::new(),
            statement: r.statement.clone(),
            writes: r.writes,
            due_us: (r.due_ms * 1000.0).round() as i64,
        })
        .collect();
    planned.sort_by_key(|p| p.index);
    Ok(planned)
}

/// load.json for a folder of before, from the flags; what the flags cannot say is read from
/// the folder (the processes of a closed loop are its actors; the elapsed time is when its
/// last statement ended).
fn record_from_flags(options: &PredictOptions, scenario: &Path, rows: &[LoadRow], planned: &[Planned], dir: &Path) -> Result<LoadRecord> {
    let missing: Vec<&str> = [
        ("--seed", options.seed.is_none()),
        ("--speedup", options.speedup.is_none()),
        ("--busy-timeout-ms", options.busy_timeout_ms.is_none()),
    ]
    .iter()
    .filter(|(_, absent)| *absent)
    .map(|(flag, _)| *flag)
    .collect();
    if !missing.is_empty() {
        return Err(Error::input(format!(
            "{}: no load.json (a load of before): give the options it was measured with ({}; comparison.md and .rehearsal-owned there say them)",
            dir.display(),
            missing.join(", ")
        )));
    }
    let actors = planned.iter().map(|p| p.actor.as_str()).filter(|a| !a.is_empty()).collect::<std::collections::BTreeSet<_>>().len();
    let ended_ms = rows.iter().map(|r| r.due_ms + r.late_ms + r.wall_ms).fold(0.0, f64::max);
    Ok(LoadRecord {
        scenario: scenario.file_stem().and_then(|s| s.to_str()).unwrap_or("scenario").to_string(),
        seed: options.seed.unwrap_or_default(),
        speedup: options.speedup.unwrap_or(1).max(1),
        busy_timeout_ms: options.busy_timeout_ms.unwrap_or_default(),
        keep_open: options.keep_open,
        closed_loop: options.closed_loop,
        procs: (options.closed_loop && actors > 0).then_some(actors),
        seconds: None,
        elapsed_s: ended_ms / 1000.0,
        statements: planned.len(),
        sqlite_version: if options.closed_loop { rusqlite::version().to_string() } else { "sqlite3".to_string() },
    })
}
