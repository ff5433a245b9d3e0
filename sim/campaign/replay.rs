//! `rehearsal replay` (re-run a saved failure and confirm its trace hash, or stop early and
//! show the state) and `rehearsal check` (validate scenarios and SQL without running).

use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::base::clock::SimClock;
use crate::base::error::{Error, Result};
use crate::campaign::failure_file::Failure;
use crate::input::scenario::Scenario;
use crate::input::sql_catalog::Catalog;
use crate::run::{run_scenario, RunOptions};
use crate::vocab::RunOutcome;
use crate::world::db::CommsDb;

/// Returns the text to print and the outcome: the run's verdict when the trace hash matches
/// (always a pass with `--until`), an error when it diverged.
pub fn replay(path: &Path, until_ms: Option<i64>, out: Option<PathBuf>, force: bool) -> Result<(String, RunOutcome)> {
    let failure = Failure::load(path)?;
    let mut scenario = failure.load_scenario(path)?;
    let scenario_path = scenario.path.clone();
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("failure");
    let out_dir = out.unwrap_or_else(|| PathBuf::from("reports/replays").join(stem));
    if let Some(until) = until_ms {
        if until <= 0 || i128::from(until) > crate::input::scenario::MAX_MAGNITUDE {
            return Err(Error::input(format!("--until {until}: a positive simulated time in ms, at most 10^12")));
        }
        scenario.run.sim_time_max_ms = until;
    }
    let options = RunOptions {
        scenario_path: scenario_path.clone(),
        seed: Some(failure.seed),
        out_dir: Some(out_dir.clone()),
        variants: failure.variants.clone(),
    };
    // As `rehearsal run`: the folder's lock, and an earlier run there kept unless `force`
    // (issue 41: a replay into a folder a run was writing mixed the two runs' trace.csv).
    let _lock = crate::world::run_folder::claim(&out_dir, force)?;
    let mut summary = run_scenario(scenario, &options)?;
    // The same reports `rehearsal run` writes: a replayed failure is read in them (issue 31).
    crate::report::write_run_reports(&out_dir, &summary, &summary.resolved)?;
    // The report keeps `rehearsal …`; the terminal shows a command that runs as pasted.
    summary.replay = crate::base::shell::for_terminal(&summary.replay);
    let mut text = summary.render();
    let _ = writeln!(text, "reports      {} and {}", out_dir.join("summary.md").display(), out_dir.join("timeline.html").display());
    if let Some(until) = until_ms {
        let _ = writeln!(text, "state at t={until} ms:");
        let db = crate::report::open_finished_db(&out_dir.join("comms.db"))?;
        let mut stmt = db.prepare("SELECT task_id, state, coalesce(session_id, ''), coalesce(worked_by, ''), coalesce(last_heartbeat, ''), retry_count FROM orchestration_tasks ORDER BY task_id")?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, i64>(5)?,
            ))
        })?;
        for row in rows {
            let (task, state, session, worked_by, heartbeat, retries) = row?;
            let _ =
                writeln!(text, "  {task:<28} {state:<16} session {session:<36} {worked_by:<24} heartbeat {heartbeat} retries {retries}");
        }
        return Ok((text, RunOutcome::Pass));
    }
    if summary.trace_hash == failure.trace_hash {
        let _ = writeln!(text, "replay       matches the saved trace hash");
        Ok((text, if summary.verdict.passed() { RunOutcome::Pass } else { RunOutcome::Fail }))
    } else {
        let _ = writeln!(text, "replay       DIVERGED: saved {} (build or scenario changed?)", failure.trace_hash);
        Ok((text, RunOutcome::Error))
    }
}

/// Loads a scenario, applies its profile (`--protocol` over its own) and variants (`variants`
/// after its own) and prepares all its SQL (`--sql` over its own) against the schema in
/// memory: every input error a run would meet, without running.
pub fn check(path: &Path, sql: Option<&Path>, protocol: Option<&str>, variants: &[String]) -> Result<String> {
    let loaded = Scenario::load(path)?.with_sql(sql).with_profile(protocol)?;
    let scenario = crate::input::variant::with_variants(&loaded, variants)?;
    let sql = prepare_on_scratch(crate::plan::catalog_for(&scenario)?, scenario.run.epoch_unix_ms)?;
    Ok(format!(
        "ok  {} ({} tasks, protocol: {}, variants: {}, SQL: {sql})",
        path.display(),
        scenario.tasks.len(),
        scenario.profile,
        if scenario.variant_names.is_empty() { "none".to_string() } else { scenario.variant_names.join(", ") }
    ))
}

/// `check --sql FILE` with no scenario: the file over the default protocol, every statement
/// prepared against the schema and checked as a run checks it.
pub fn check_sql(sql: &Path) -> Result<String> {
    let mut catalog = Catalog::default_protocol();
    catalog.override_from_file(sql)?;
    let identity = prepare_on_scratch(catalog, 0)?;
    Ok(format!("ok  {} (SQL: {identity})", sql.display()))
}

/// Prepares `catalog` on a fresh comms.db in a scratch folder: its identity, or the first
/// input error a run would meet.
fn prepare_on_scratch(catalog: Catalog, epoch_unix_ms: i64) -> Result<crate::input::sql_catalog::SqlIdentity> {
    let identity = catalog.identity();
    let scratch = tempfile::tempdir().map_err(|e| Error::harness(e.to_string()))?;
    let db = CommsDb::create(&scratch.path().join("comms.db"), SimClock::new(epoch_unix_ms), 0, catalog)?;
    db.close()?;
    Ok(identity)
}
