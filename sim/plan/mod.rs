//! The run plan: everything a run needs, resolved once before it starts, from (scenario,
//! seed, variants, SQL overrides). The statement catalog, every fault decision and draw
//! (random odds drawn from the seed, scripted faults, context-spike odds, double launches)
//! and the scenario the actors read, with its variants applied — a new value: the loaded
//! scenario is never changed. After this, the run only applies what the plan says
//! (TigerBeetle's VOPR draws and logs every option before the simulation starts).

pub mod census;
pub mod faults;
pub mod schedule;

use std::path::PathBuf;
use std::rc::Rc;

use crate::base::error::Result;
use crate::input::scenario::Scenario;
use crate::input::sql_catalog::Catalog;
use crate::plan::faults::FaultPlan;
use crate::plan::schedule::Schedule;

pub struct RunPlan {
    /// The scenario the actors read: the file's, with the command line's variants applied.
    pub scenario: Rc<Scenario>,
    pub seed: u64,
    /// The statements the run executes: defaults, the scenario's SQL, then its variants'.
    pub catalog: Catalog,
    /// Every fault of the run, its odds drawn from the seed.
    pub faults: FaultPlan,
    pub out_dir: PathBuf,
    /// The variants named on the command line (for the replay command).
    pub cli_variants: Vec<String>,
    /// Whether a launcher starts the conductor and relaunches it after a crash (C34): in
    /// scenarios with `[[faults.conductor_crash]]`. `rehearsal explore` also sets it for the
    /// run its conductor crashes are told apart from: the base run as the launcher starts it.
    pub launcher: bool,
    /// The choices at decision points (`[schedule]`); `None`: the engine's own order, and no
    /// decision point is looked for.
    pub schedule: Option<Schedule>,
}

impl RunPlan {
    /// Resolves a plan. `out_dir` defaults to `reports/runs/<scenario>-<seed>/`, with the
    /// command line's variants in the name (`default_out_dir`).
    pub fn resolve(scenario: &Scenario, seed: Option<u64>, variants: &[String], out_dir: Option<PathBuf>) -> Result<RunPlan> {
        // The file's own variants first, then the command line's (sim/input/variant.rs).
        let resolved = crate::input::variant::with_variants(scenario, variants)?;
        let seed = seed.unwrap_or(resolved.run.seed);
        let out_dir = out_dir.unwrap_or_else(|| default_out_dir(&resolved.name, variants, seed));
        let catalog = catalog_for(&resolved)?;
        let faults = FaultPlan::new(seed, &resolved.faults);
        let launcher = !resolved.faults.conductor_crash.is_empty();
        let schedule = schedule_of(&resolved);
        let cli_variants = variants.to_vec();
        Ok(RunPlan { scenario: Rc::new(resolved), seed, catalog, faults, out_dir, cli_variants, launcher, schedule })
    }

    /// The plan's schedule, recording every decision point the run meets (a schedule of
    /// defaults if the scenario has none: the same run).
    pub fn record_decisions(&mut self) -> crate::plan::schedule::DecisionLog {
        let window_ms = Schedule::default_window_ms(&self.scenario.timing.statement_ms);
        self.schedule.get_or_insert_with(|| Schedule::new(window_ms, Vec::new())).record()
    }
}

/// The scenario's `[schedule]`, its window defaulting to the statement round trip's spread.
fn schedule_of(scenario: &Scenario) -> Option<Schedule> {
    let section = scenario.schedule.as_ref()?;
    let window_ms = section.window_ms.unwrap_or_else(|| Schedule::default_window_ms(&scenario.timing.statement_ms));
    Some(Schedule::new(window_ms, section.choices.clone()))
}

/// `reports/runs/<scenario>-<seed>/`, or `reports/runs/<scenario>+<variant>…-<seed>/` with the
/// command line's variants: the same scenario and seed under another variant is another run,
/// so it gets its own folder instead of being refused as "already holds a run".
pub fn default_out_dir(scenario: &str, variants: &[String], seed: u64) -> PathBuf {
    let variants: String = variants.iter().map(|v| format!("+{v}")).collect();
    PathBuf::from("reports/runs").join(format!("{scenario}{variants}-{seed}"))
}

/// The protocol statements a scenario runs: the default catalog, then the scenario's own SQL,
/// then `--sql`, then its variants' (the scenario's own variants are applied here if they are not yet).
pub fn catalog_for(scenario: &Scenario) -> Result<Catalog> {
    let scenario = crate::input::variant::with_variants(scenario, &[])?;
    let mut catalog = Catalog::default_protocol();
    for sql in scenario.sql_files() {
        catalog.override_from_file(sql)?;
    }
    // A user's entry a variant in force replaces too would never run (docs/protocol.md C135).
    let user = scenario.sql_files().next().is_some();
    for entry in catalog.names().iter().filter_map(|n| catalog.find(n)).filter(|e| user && !e.is_built_in()) {
        crate::input::variant::check_user_entry(&scenario, entry)?;
    }
    for (origin, text) in &scenario.variant_sql {
        catalog.override_with(text, origin)?;
    }
    Ok(catalog)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::error::Error;

    fn scenario(text: &str) -> Scenario {
        Scenario::parse(text, std::path::Path::new("plan-test.toml")).expect("a scenario")
    }

    #[test]
    fn a_plan_leaves_the_loaded_scenario_unchanged_and_applies_variants_to_its_own_copy() {
        let loaded = scenario("[run]\nseed = 3\n[tasks]\ncount = 1\n");
        let plan = RunPlan::resolve(&loaded, None, &["fencing".to_string()], None).unwrap();
        assert_eq!(plan.seed, 3);
        assert!(loaded.variant_sql.is_empty(), "the loaded scenario is never changed");
        assert!(!plan.scenario.variant_sql.is_empty(), "the plan's scenario has the variant's SQL");
        assert_eq!(plan.out_dir, PathBuf::from("reports/runs/plan-test+fencing-3"));
    }

    #[test]
    fn the_default_output_folder_names_the_command_lines_variants() {
        let loaded = scenario("[run]\nseed = 3\n[tasks]\ncount = 1\n");
        let plain = RunPlan::resolve(&loaded, None, &[], None).unwrap();
        assert_eq!(plain.out_dir, PathBuf::from("reports/runs/plan-test-3"));
        let two = RunPlan::resolve(&loaded, Some(4), &["fencing".to_string(), "state-first".to_string()], None).unwrap();
        assert_eq!(two.out_dir, PathBuf::from("reports/runs/plan-test+fencing+state-first-4"));
    }

    #[test]
    fn the_seed_decides_every_drawn_odds_before_the_run() {
        let loaded = scenario("[tasks]\ncount = 1\n[faults]\ncrash_probability = { min = 0.0, max = 0.5 }\n");
        let a = RunPlan::resolve(&loaded, Some(1), &[], None).unwrap();
        let b = RunPlan::resolve(&loaded, Some(1), &[], None).unwrap();
        let c = RunPlan::resolve(&loaded, Some(2), &[], None).unwrap();
        assert_eq!(a.faults.drawn, b.faults.drawn);
        assert_ne!(a.faults.drawn, c.faults.drawn);
    }

    #[test]
    fn an_unknown_variant_is_an_input_error() {
        let loaded = scenario("[tasks]\ncount = 1\n");
        let err = RunPlan::resolve(&loaded, None, &["no-such".to_string()], None).err().expect("refused");
        assert!(matches!(err, Error::Input(_)), "{err}");
    }
}
