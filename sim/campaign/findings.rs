//! `rehearsal findings`: for each disagreement of docs/protocol.md, the seeds' default reading
//! against the variant on a shipped scenario that exercises it, over the same seeds —
//! written to reports/FINDINGS.md.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::base::error::Result;
use crate::campaign::compare::{compare, CompareOptions};
use crate::input::variant::VARIANTS;

/// Seed 000's own scripts judge every shipped run in a file of their own (sim/campaign/seed_scripts.rs).
const SEED_SCRIPTS_LINK: &str = "Seed 000's own scripts as a second opinion on every shipped run, and where they fail or disagree with the simulator: [SEED-SCRIPTS.md](SEED-SCRIPTS.md) (`rehearsal findings --seed-scripts`).";

/// What a section's table cannot say by itself: why two rows look alike, or what to read in
/// them.
const NOTES: &[(&str, &str)] = &[
    (
        "worked-by-session-id",
        "The variant changes only the `worked_by` value: every database differs (the `comms.db` column), and no rule or timing reads `worked_by`, so the rest of the row is the default's. Nothing in the seeds reads the column back either; the difference is in what a human or a later tool finds in it.",
    ),
    (
        "instruction-any-type",
        "The runs are identical, database included: the simulated conductor writes each task's instruction right after the task row and before any other message to that task (C1), so \"the first conductor message\" is the instruction under both readings. The reading matters only to a conductor that messages a task before its instruction, which neither the seeds nor the simulator's conductor do.",
    ),
    (
        "table-transitions-only",
        "An oracle-only reading: the databases are the default's, and the difference is in the violation count. slow-review's pause-watcher TIMEOUT (`needs_review → error`, implied by 000 \"Mode Transitions\") is a violation only under 002's table alone; by default the conductor withholds its late answer to a task that had exited (docs/protocol.md C37), so no transition rule fires.",
    ),
    (
        "act-on-poll",
        "Measured over 1000 seeds (`rehearsal compare scenarios/faults/random-faults.toml --variants default,act-on-poll --seeds 1..=1000`, every run passing on the scenario's allowances; runs showing each rule): no-false-stale 0 by default against 22, answer-own-request 153 against 175, completed-once 169 against 189, allowed-transitions 275 against 292, liveness 246 against 246. (With the first conductor, before docs/protocol.md C37, the default had no-false-stale 1 against 24.) The re-read is one more statement, so every later draw shifts and the two runs of a seed part early: small gaps are noise. A session that wakes between the conductor's re-read and its hand-over is still handed over alive, the window of one statement that a guarded hand-over `UPDATE` would close (docs/protocol.md C4).",
    ),
    (
        "first-conductor",
        "The first conductor's databases equal those of the build before docs/protocol.md C37-C40 seed for seed. Its stray answers onto rows that changed hands show in allowed-transitions and conductor-outlasts-sessions; the charitable default withholds them, and the zombies it leaves waiting show in answer-own-request and one-live-session-per-task instead (docs/protocol.md C37 has the measurement over 1000 seeds).",
    ),
    (
        "thresholds-002",
        "The readings' context warnings, those in the ask zone, hand-offs, context at a hand-off and makespan over seeds 1..=50 are D7's table in docs/protocol.md, with the build each row was measured on (they are not repeated here, where they went stale once: the figures this section's first version gave predate issue 42). Since issue 42 the work that would cross a reading's ceiling is escalated before it starts (C50, C55), so 002's later evaluation (65 %) no longer walks a session into its 75 % mandatory exit unasked; before it, a session that passed a checkpoint at 64 % went on unevaluated, met the exit after an agent minutes after its last heartbeat, and its clean exit (watchers stopped first, D14) was handed over alive.",
    ),
    (
        "messages-logged-only",
        "Which findings survive a musician that reads its messages (docs/protocol.md C51, measured with `rehearsal compare … --variants default,messages-logged-only,fencing`): D11 (no fencing) survives, smaller. Over `scenarios/faults/random-faults.toml` seeds 1..=100 (this build, after C152: a session woken from a hang reads its watcher's overdue poll before it writes), owner-writes-only shows in 42 runs under both readings, with 79 writes when the musician reads its hand-over against 2354 when it only logs it (194 against 2058 before C152): a woken session can still write before any read reports the hand-over, and only `fencing` removes those writes (0 runs). D15 (replies name no request) survives whole: `scenarios/faults/reply-to-zombie.toml` is the same under both readings (its zombie wakes in a pause and reads no hand-over). What falls is zombie.toml's own finding (its zombie reads the hand-over before any write: this section's default row) and the zombie's long afterlife in random-faults (runs showing answer-own-request 20 → 0, completed-once 20 → 2, liveness 28 → 4, logged only → reading). The `repaired` profile's necessities are the same under both readings (C51).",
    ),
    (
        "ceiling-before-work",
        "The simulator's earlier reading (docs/protocol.md C32): a worst-case prediction before every piece of work hands off below the ceiling without asking the conductor. Its warnings, hand-offs and context at a hand-off against the default's, over seeds 1..=50, are a row of D7's table in docs/protocol.md. The seeds describe no such check (000 evaluates after agents from 50 % and asks).",
    ),
];

/// Variants whose difference shows only over more seeds than the rest use: a hand-over on a
/// stale poll needs a hang that ends between the poll and the hand-over (6 runs in 300).
const DEMO_SEEDS_MAX: &[(&str, u64)] = &[("act-on-poll", 300), ("first-conductor", 200)];

/// FINDINGS.md: every variant against the default, on its demo scenario. With `protocol` (a
/// profile, `--protocol`), both columns run under that profile instead of the seeds': a
/// variant the profile applies, or one that contradicts it (refused, sim/input/variant.rs), gets a
/// line saying so instead of a table, and the notes (measured on the seeds' protocol) are left out.
pub fn findings(seeds: &[u64], runs_dir: &Path, protocol: Option<&str>) -> Result<String> {
    let mut md = String::new();
    let _ = writeln!(md, "# Findings: what each reading of the seeds leads to\n");
    if let Some(name) = protocol {
        crate::vocab::check_profile_name(name).map_err(|m| crate::base::error::Error::input(format!("--protocol: {m}")))?;
        let _ = writeln!(md, "Under protocol profile `{name}` (`--protocol {name}`, docs/profiles.md): `default` is the profile itself.\n");
    }
    let _ = writeln!(
        md,
        "Generated by `cargo run --release -- findings --seeds {}..={}`; do not edit by hand. Each section runs the same seeds of one shipped scenario under the seeds' default reading and under the variant, with the oracles of sim/judging/oracle/. \"runs showing each rule\" counts runs in which that rule was violated (expected or not), with the violations in all in parentheses; \"comms.db unlike `default`\" counts seeds whose database differs byte for byte from the default's run of the same seed; a run passes when only its scenario's expected violations occur.\n",
        seeds.first().copied().unwrap_or(0),
        seeds.last().copied().unwrap_or(0)
    );
    let _ = writeln!(md, "{SEED_SCRIPTS_LINK}\n");
    for variant in VARIANTS {
        let scenario = variant.id.demo();
        let wider: Option<Vec<u64>> = DEMO_SEEDS_MAX.iter().find(|(v, _)| *v == variant.name).map(|(_, max)| (1..=*max).collect());
        let seeds = wider.as_deref().unwrap_or(seeds);
        // The runs folder is findings' own, regenerated whole: an earlier run's is replaced.
        let variants = ["default".to_string(), variant.name.to_string()];
        let _ = writeln!(md, "## {}. `{}`\n", variant.disagreement, variant.name);
        if let Some(skipped) = profile_skips(protocol, variant.name, scenario)? {
            let _ = writeln!(md, "{}.\n\n{skipped}\n", variant.summary);
            continue;
        }
        let out = runs_dir.join(variant.name);
        let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
        // Its run folders are kept: the notes below count things in them.
        let options = CompareOptions {
            scenario: Path::new(scenario),
            columns: &variants,
            seeds,
            out: &out,
            force: true,
            sql: None,
            protocol,
            conductor: None,
            jobs,
            keep_runs: true,
        };
        let (table, _) = compare(&options)?;
        let range = format!("seeds {}..={}", seeds.first().copied().unwrap_or(0), seeds.last().copied().unwrap_or(0));
        let _ = writeln!(md, "{}.\n\nScenario: `{scenario}`, {range}.\n", variant.summary);
        md.push_str(&table);
        md.push('\n');
        if let Some((_, note)) = NOTES.iter().find(|(v, _)| protocol.is_none() && *v == variant.name) {
            let _ = writeln!(md, "{note}\n");
        }
    }
    Ok(md)
}

/// Under a profile, why a variant gets no table: the profile applies it already, or refuses it
/// as a contradiction (the refusal's own words).
fn profile_skips(protocol: Option<&str>, variant: &str, scenario: &str) -> Result<Option<String>> {
    let Some(name) = protocol else { return Ok(None) };
    if crate::vocab::find_profile(name).is_some_and(|p| p.variants.contains(&variant)) {
        return Ok(Some(format!("Applied by the profile `{name}`: its effect is the profile's, against `--protocol seeds`.")));
    }
    let loaded = crate::input::scenario::Scenario::load(Path::new(scenario))?.with_profile(protocol)?;
    match crate::input::variant::with_variants(&loaded, &[variant.to_string()]) {
        Ok(_) => Ok(None),
        Err(crate::base::error::Error::Input(why)) => Ok(Some(format!("Not run: {why}."))),
        Err(e) => Err(e),
    }
}

pub fn default_runs_dir() -> PathBuf {
    PathBuf::from("reports/findings-runs")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_has_a_shipped_demo_scenario() {
        for variant in VARIANTS {
            let scenario = variant.id.demo();
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(scenario);
            assert!(path.is_file(), "{}: {} is not a shipped scenario", variant.name, path.display());
        }
    }

    #[test]
    fn every_note_names_a_variant() {
        for (name, _) in NOTES {
            assert!(VARIANTS.iter().any(|v| v.name == *name), "{name}");
        }
    }

    #[test]
    fn under_a_profile_its_own_variants_get_a_line_instead_of_a_table() {
        let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/quickstart.toml");
        let scenario = scenario.to_str().unwrap();
        let applied = profile_skips(Some("repaired"), "fencing", scenario).unwrap().unwrap();
        assert!(applied.starts_with("Applied by the profile `repaired`"), "{applied}");
        assert_eq!(profile_skips(Some("repaired"), "strict-terminal", scenario).unwrap(), None);
        assert_eq!(profile_skips(None, "fencing", scenario).unwrap(), None);
    }
}
