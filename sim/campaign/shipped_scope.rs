//! What the proof's last row (every shipped scenario under the repaired profile, nothing
//! expected: issue 28, 4) holds the profile to, scenario by scenario, and why, from the
//! scenario's own settings: a scenario whose `[protocol] variants` or `sql` change the
//! protocol runs another protocol, so it is judged under the profile alone (those removed);
//! a scenario whose keys install a variant the profile does not apply, whose work no protocol
//! can finish, or whose injected jitter exceeds the seeds' timing margin is outside the proof.
//! Each reason is computed here, never listed by hand, and the document prints every one.

use toml::{Table, Value};

use crate::base::error::Result;
use crate::input::scenario::Scenario;
use crate::input::variant::{with_variants, VARIANTS};
use crate::plan::catalog_for;
use crate::vocab::Profile;

/// How the proof's row takes one shipped scenario.
#[derive(Clone, Debug, PartialEq)]
pub enum Scope {
    /// It runs the profile: judged as written (its `[expect]` removed).
    AsWritten,
    /// Judged as `doc`: without its own `[protocol]` changes, which make another protocol,
    /// and without a time limit `rehearsal shrink` cut; each reason names one change.
    Adjusted { doc: Table, why: Vec<String> },
    /// Outside what the proof covers: its result is shown, not counted; each reason says why.
    Outside(Vec<String>),
}

/// The scope of `scenario`, parsed from `doc` (profile set, `[expect]` removed).
pub fn scope(doc: &Table, scenario: &Scenario, profile: &Profile) -> Result<Scope> {
    let alone = crate::campaign::explore::document::scenario(&profile_alone(doc, profile), &scenario.path)?;
    let mut outside = installed_variants(&alone, profile)?;
    outside.extend(unfinishable_work(scenario));
    outside.extend(reviews_past_limit(scenario));
    outside.extend(jitter_past_margin(scenario));
    if !outside.is_empty() {
        return Ok(Scope::Outside(outside));
    }
    let mut why = own_protocol(scenario, &alone, profile)?;
    let mut judged = if why.is_empty() { doc.clone() } else { profile_alone(doc, profile) };
    why.extend(lift_shrink_cut(&mut judged, scenario)?);
    Ok(if why.is_empty() { Scope::AsWritten } else { Scope::Adjusted { doc: judged, why } })
}

/// `rehearsal shrink` cuts a shrunk scenario's run one minute after its first violation
/// (sim/campaign/shrink/candidates.rs) to keep only the failure's events: a limit of the
/// failing run, not of the protocol, that ends the run before a protocol without that flaw can
/// finish (liveness). Such a file (its header says it was shrunk) is judged with the default
/// limit instead.
fn lift_shrink_cut(doc: &mut Table, scenario: &Scenario) -> Result<Option<String>> {
    let text = crate::base::input_file::read_text(&scenario.path, "scenario")?;
    if !text.starts_with(SHRUNK_HEADER) {
        return Ok(None);
    }
    let Some(Value::Table(run)) = doc.get_mut("run") else { return Ok(None) };
    let Some(limit_ms) = run.remove("sim_time_max_ms").and_then(|v| v.as_integer()) else { return Ok(None) };
    let default_ms = crate::input::scenario::RunSection::default().sim_time_max_ms;
    Ok(Some(format!(
        "`[run] sim_time_max_ms = {limit_ms}` is where `rehearsal shrink` cut the run (a minute after its first violation), not a limit of the protocol: judged with the default {} h",
        default_ms / 3_600_000
    )))
}

/// The first words `rehearsal shrink` writes at the head of a shrunk scenario.
const SHRUNK_HEADER: &str = "# Shrunk by `rehearsal shrink`";

/// `doc` without its own protocol: `[protocol] sql` and every `[protocol] variants` name the
/// profile does not apply.
pub fn profile_alone(doc: &Table, profile: &Profile) -> Table {
    let mut doc = doc.clone();
    if let Some(Value::Table(protocol)) = doc.get_mut("protocol") {
        protocol.remove("sql");
        if let Some(Value::Array(names)) = protocol.get_mut("variants") {
            names.retain(|n| n.as_str().is_some_and(|n| profile.variants.contains(&n)));
        }
    }
    doc
}

/// The scenario's own `[protocol]` changes that make a protocol other than the profile: each
/// variant name the profile does not apply and that changes the run, and a SQL file whose
/// statements differ from the profile's.
fn own_protocol(scenario: &Scenario, alone: &Scenario, profile: &Profile) -> Result<Vec<String>> {
    let base = with_variants(alone, &[])?;
    let mut own = Vec::new();
    for name in scenario.variant_names.iter().filter(|n| !profile.variants.contains(&n.as_str())) {
        let summary = VARIANTS.iter().find(|v| v.name == name).map_or("", |v| v.summary);
        if with_variants(&base, std::slice::from_ref(name)).map_or(true, |with| differs(&base, &with)) {
            own.push(format!("`[protocol] variants` names `{name}`, which the profile does not apply ({summary})"));
        }
    }
    if let Some(sql) = &scenario.protocol_sql {
        // An entry the profile's variants replace with other SQL is refused (docs/protocol.md
        // C135): the scenario's own protocol is then not the profile's.
        let mine = match catalog_for(scenario) {
            Ok(mine) => mine,
            Err(crate::base::error::Error::Input(why)) => {
                own.push(format!("`[protocol] sql` is refused under the profile: {why}"));
                return Ok(own);
            }
            Err(other) => return Err(other),
        };
        let theirs = catalog_for(alone)?;
        let changed: Vec<String> = mine.names().into_iter().filter(|n| mine.get(n).sql != theirs.get(n).sql).collect();
        if !changed.is_empty() {
            let file = sql.file_name().map_or_else(|| sql.display().to_string(), |f| f.to_string_lossy().into_owned());
            own.push(format!("`[protocol] sql` (`{file}`) replaces {} with other SQL than the profile's", quoted(&changed)));
        }
    }
    Ok(own)
}

/// Variants the profile does not apply whose every change the scenario's own keys already
/// make (`silent-reviews` is `conductor.review_heartbeat_ms = 0`): it runs that variant's
/// protocol without naming it, and no key can be removed without changing what it tests.
fn installed_variants(alone: &Scenario, profile: &Profile) -> Result<Vec<String>> {
    let base = with_variants(alone, &[])?;
    let plain =
        with_variants(&Scenario::parse(&format!("[tasks]\ncount = 1\n[protocol]\nprofile = \"{}\"\n", profile.name), &alone.path)?, &[])?;
    let mut installed = Vec::new();
    for variant in VARIANTS.iter().filter(|v| !profile.variants.contains(&v.name)) {
        let names = [variant.name.to_string()];
        let (Ok(with), Ok(plain_with)) = (with_variants(&base, &names), with_variants(&plain, &names)) else { continue };
        if differs(&plain, &plain_with) && !differs(&base, &with) {
            installed.push(format!(
                "its keys make the change of variant `{}`, which the profile does not apply ({})",
                variant.name, variant.summary
            ));
        }
    }
    Ok(installed)
}

/// Whether two scenarios (the same file, variants applied) run different protocols: any
/// setting or key apart from the variant names, or any statement.
fn differs(a: &Scenario, b: &Scenario) -> bool {
    let keys = |s: &Scenario| {
        let mut s = s.clone();
        s.variant_names.clear();
        s.variant_sql.clear();
        format!("{s:?}")
    };
    let sql = |s: &Scenario| catalog_for(s).map(|c| c.identity().sha256).ok();
    keys(a) != keys(b) || sql(a) != sql(b)
}

/// Work no protocol can finish: every subagent attempt fails unrecoverably, so the fifth
/// failure ends the task `exited` (004 "Terminal Failure (5th retry)"), never `complete`.
fn unfinishable_work(scenario: &Scenario) -> Option<String> {
    let s = &scenario.subagents;
    (s.failure_probability >= 1.0 && s.unrecoverable_probability >= 1.0).then(|| {
        "every subagent attempt fails unrecoverably (`[subagents] failure_probability = 1`, `unrecoverable_probability = 1`): the fifth failure ends the task `exited` (004 \"Terminal Failure (5th retry)\"), so no protocol completes it".to_string()
    })
}

/// Reviews that alone need more of the conductor's time than the run has: every scheduled
/// checkpoint and every completion is one review at least (000 "Review Request Flow"), each
/// takes at least `conductor.review_ms`'s lowest draw, and the conductor runs at most
/// `conductor.reviews_in_flight` at once. Past `[run] sim_time_max_ms` no protocol with the
/// seeds' one conductor finishes the work in time (scenarios/bench/fleet-1000.toml).
fn reviews_past_limit(scenario: &Scenario) -> Option<String> {
    let reviews: u64 = scenario.tasks.iter().map(|t| t.checkpoints.iter().filter(|c| **c <= t.steps).count() as u64 + 1).sum();
    let conductor = &scenario.conductor;
    let need_ms = reviews as i64 * conductor.review_ms.lower() / conductor.reviews_in_flight.max(1) as i64;
    let limit_ms = scenario.run.sim_time_max_ms;
    (need_ms > limit_ms).then(|| {
        format!(
            "its {reviews} reviews (every scheduled checkpoint and completion of its {} tasks) need at least {:.1} h of the conductor's time ({} s each at least, {} at once), more than its {:.1} h time limit: no protocol with one conductor reviewing every request finishes its work in time",
            scenario.tasks.len(),
            need_ms as f64 / 3_600_000.0,
            conductor.review_ms.lower() / 1000,
            conductor.reviews_in_flight,
            limit_ms as f64 / 3_600_000.0
        )
    })
}

/// A2's check, in the judging layer (the verdict says it too).
pub(crate) use crate::judging::outside::jitter_past_margin;

fn quoted(names: &[String]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::repaired_proof::{nothing_expected, nothing_expected_doc};
    use std::path::Path;

    fn scope_of(file: &str) -> Scope {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        let doc = nothing_expected_doc(&path).unwrap();
        let scenario = crate::campaign::explore::document::scenario(&doc, &path).unwrap();
        scope(&doc, &scenario, crate::vocab::find_profile("repaired").unwrap()).unwrap()
    }

    #[test]
    fn a_flawed_reading_its_own_sql_or_a_shrink_cut_time_limit_is_removed_before_judging() {
        let Scope::Adjusted { doc, why } = scope_of("scenarios/regression/guard-not-in-claim-under-review.toml") else { panic!() };
        assert!(why[0].contains("`guard-not-in`"), "{why:?}");
        // Shrunk: its time limit is lifted too.
        assert!(why[1].contains("`[run] sim_time_max_ms = 2486072` is where `rehearsal shrink` cut the run"), "{why:?}");
        assert!(!doc["run"].as_table().unwrap().contains_key("sim_time_max_ms"));
        assert_eq!(doc["protocol"]["variants"].as_array().map(Vec::len), Some(0), "{doc:?}");
        let Scope::Adjusted { why, .. } = scope_of("scenarios/examples/missing-instruction.toml") else { panic!() };
        assert!(why[0].contains("`missing-instruction.sql`") && why[0].contains("`send_instruction`"), "{why:?}");
        // Its SQL is the profile's own fencing: the same protocol, run as written.
        assert_eq!(scope_of("scenarios/faults/late-exit-fenced.toml"), Scope::AsWritten);
        assert_eq!(scope_of("scenarios/quickstart.toml"), Scope::AsWritten);
        let Scope::Adjusted { why, .. } = scope_of("scenarios/regression/zombie-owner-writes.toml") else { panic!() };
        // Its reading `messages-logged-only` (docs/protocol.md C51) and its time limit.
        assert_eq!(why.len(), 2, "{why:?}");
        assert!(why[0].contains("`messages-logged-only`"), "{why:?}");
    }

    #[test]
    fn a_scenario_outside_the_proof_says_why() {
        let Scope::Outside(why) = scope_of("scenarios/slow-review.toml") else { panic!() };
        assert!(why[0].contains("`silent-reviews`"), "{why:?}");
        let Scope::Outside(why) = scope_of("scenarios/examples/fifth-failure.toml") else { panic!() };
        assert!(why[0].contains("fails unrecoverably"), "{why:?}");
        let Scope::Outside(why) = scope_of("scenarios/faults/watcher-jitter.toml") else { panic!() };
        assert!(why[0].contains("reach 591 s, past the 540 s"), "{why:?}");
        // The proof's own jitter (0-20 s) stays within the margin.
        assert_eq!(scope_of("scenarios/proof/proof-ci-smoke.toml"), Scope::AsWritten);
        let Scope::Outside(why) = scope_of("scenarios/bench/fleet-1000.toml") else { panic!() };
        assert!(
            why[0].starts_with("its 5000 reviews (every scheduled checkpoint and completion of its 1000 tasks) need at least 27.8 h"),
            "{why:?}"
        );
        // A near miss: fleet-day's 32 tasks need 0.9 h of reviews in its 24 h.
        let fleet_day = nothing_expected(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/bench/fleet-day.toml")).unwrap();
        assert!(reviews_past_limit(&fleet_day).is_none());
        // Reviews in flight share the demand: fleet-1000's 27.8 h on two at once fit in 24 h,
        // on one at a time within 20 h they do not.
        let fleet = nothing_expected(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/bench/fleet-1000.toml")).unwrap();
        let mut two = fleet.clone();
        two.conductor.reviews_in_flight = 2;
        assert!(reviews_past_limit(&two).is_none());
        // Exactly as long as the limit still fits: 5000 × 20 s / 2 = 50,000 s.
        let mut exact = two.clone();
        exact.run.sim_time_max_ms = 50_000_000;
        assert!(reviews_past_limit(&exact).is_none());
        exact.run.sim_time_max_ms -= 1;
        assert!(reviews_past_limit(&exact).is_some());
        let mut shorter = two;
        shorter.run.sim_time_max_ms = 12 * 3_600_000;
        let why = reviews_past_limit(&shorter).expect("13.9 h of reviews in 12 h");
        assert!(
            why.contains("need at least 13.9 h of the conductor's time (20 s each at least, 2 at once), more than its 12.0 h"),
            "{why}"
        );
    }
}
