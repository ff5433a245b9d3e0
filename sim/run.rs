//! One run: scenario + seed → run folder with `comms.db` and `trace.csv`, and a verdict.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::clock::SimClock;
use crate::conductor::{self, CONDUCTOR_TASK_ID};
use crate::db::CommsDb;
use crate::engine::{ActorMeta, Engine, EngineConfig};
use crate::error::{Error, Result};
use crate::scenario::Scenario;
use crate::sql_catalog::Catalog;
use crate::trace::TraceSink;
use crate::verdict::{self, Verdict};

#[derive(Clone, Debug)]
pub struct RunOptions {
    pub scenario_path: PathBuf,
    /// Overrides the scenario's `run.seed`.
    pub seed: Option<u64>,
    /// Defaults to `reports/runs/<scenario>-<seed>/`.
    pub out_dir: Option<PathBuf>,
}

#[derive(Clone, Debug)]
pub struct RunSummary {
    pub scenario: String,
    pub seed: u64,
    pub out_dir: PathBuf,
    pub verdict: Verdict,
    pub tasks_total: usize,
    pub tasks_complete: usize,
    /// Simulated ms from the epoch to the last event.
    pub makespan_ms: i64,
    pub statements: u64,
    pub events: u64,
    pub trace_rows: u64,
    pub trace_hash: String,
    pub replay: String,
}

pub fn default_out_dir(scenario: &str, seed: u64) -> PathBuf {
    PathBuf::from("reports/runs").join(format!("{scenario}-{seed}"))
}

pub fn run(options: &RunOptions) -> Result<RunSummary> {
    let scenario = Scenario::load(&options.scenario_path)?;
    run_scenario(scenario, options)
}

pub fn run_scenario(scenario: Scenario, options: &RunOptions) -> Result<RunSummary> {
    let seed = options.seed.unwrap_or(scenario.run.seed);
    let out_dir = options.out_dir.clone().unwrap_or_else(|| default_out_dir(&scenario.name, seed));
    let mut catalog = Catalog::default_protocol();
    if let Some(sql) = &scenario.protocol_sql {
        catalog.override_from_file(sql)?;
    }
    std::fs::create_dir_all(&out_dir).map_err(|e| Error::input(format!("cannot create output folder {}: {e}", out_dir.display())))?;
    let epoch = scenario.run.epoch_unix_ms;
    let clock = SimClock::new(epoch);
    let db = CommsDb::create(&out_dir.join("comms.db"), clock.clone(), seed, catalog)?;
    let trace = TraceSink::create(&out_dir.join("trace.csv"), epoch)?;
    let config = EngineConfig {
        seed,
        epoch_unix_ms: epoch,
        statement_ms: scenario.timing.statement_ms.clone(),
        sim_time_max_ms: scenario.run.sim_time_max_ms,
        events_max: scenario.run.events_max,
    };
    // A fresh temp/ for this run: the protocol's files must come from this run alone.
    let temp_dir = out_dir.join("temp");
    if temp_dir.exists() {
        std::fs::remove_dir_all(&temp_dir).map_err(|e| Error::harness(format!("cannot clear {}: {e}", temp_dir.display())))?;
    }
    let mut engine = Engine::new(config, clock, db, trace, out_dir.clone());
    let scenario = Rc::new(scenario);
    let conductor_meta = ActorMeta {
        name: "conductor".to_string(),
        task_id: CONDUCTOR_TASK_ID.to_string(),
        session_id: conductor::CONDUCTOR_SESSION_ID.to_string(),
    };
    let for_conductor = scenario.clone();
    engine.spawn(conductor_meta, 0, move |ctx| conductor::conductor(ctx, for_conductor));
    let ending = engine.run()?;
    let (makespan_ms, events) = (engine.now_ms(), engine.events());
    let (db, trace) = engine.into_parts();
    let statements = db.stats.statements;
    let verdict = verdict::judge(&db, &scenario, ending)?;
    let tasks_complete = verdict::tasks_in_state(&db, "complete")?;
    db.close()?;
    let trace_rows = trace.rows_written();
    let (trace_hash, _rows) = trace.finish()?;
    Ok(RunSummary {
        scenario: scenario.name.clone(),
        seed,
        replay: replay_command(&scenario.path, seed, &out_dir),
        out_dir,
        verdict,
        tasks_total: scenario.tasks.len(),
        tasks_complete,
        makespan_ms,
        statements,
        events,
        trace_rows,
        trace_hash,
    })
}

pub fn replay_command(scenario: &Path, seed: u64, out_dir: &Path) -> String {
    format!("rehearsal run {} --seed {seed} --out {}", scenario.display(), out_dir.display())
}

impl RunSummary {
    /// The lines `rehearsal run` prints on stdout.
    pub fn render(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!("scenario     {}\n", self.scenario));
        out.push_str(&format!("seed         {}\n", self.seed));
        out.push_str(&format!("tasks        {}/{} complete\n", self.tasks_complete, self.tasks_total));
        out.push_str(&format!("makespan     {} (simulated, {} ms)\n", human_ms(self.makespan_ms), self.makespan_ms));
        out.push_str(&format!("statements   {}\n", self.statements));
        out.push_str(&format!("events       {} ({} trace rows)\n", self.events, self.trace_rows));
        out.push_str(&format!("output       {}\n", self.out_dir.display()));
        out.push_str(&format!("verdict      {}\n", self.verdict.headline()));
        for line in self.verdict.explanation() {
            out.push_str(&format!("             {line}\n"));
        }
        out.push_str(&format!("trace hash   {}\n", self.trace_hash));
        out.push_str(&format!("replay       {}\n", self.replay));
        out
    }
}

pub fn human_ms(ms: i64) -> String {
    let s = ms / 1000;
    format!("{}h{:02}m{:02}s", s / 3600, s / 60 % 60, s % 60)
}
