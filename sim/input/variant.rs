//! Protocol variants: one named reading per place where the seeds disagree (docs/protocol.md
//! §3, D1–D16, each has one), then readings the seeds imply or leave open
//! (disagreement 0). A variant replaces named SQL entries (files under `scenarios/variants/`)
//! and/or changes protocol settings; `--variant NAME` or a scenario's `[protocol] variants =
//! [...]` names it and `with_variants` applies it before a run.

use crate::base::dist::Dist;
use crate::base::error::Error;
use crate::input::scenario::{ClaimBlockedReply, Scenario};
use crate::vocab::variant_name::VariantId;
use crate::vocab::{check_variant_name, Profile};

pub struct Variant {
    pub id: VariantId,
    pub name: &'static str,
    /// The disagreement of docs/protocol.md it reads differently (D1–D16; 0: a reading the
    /// seeds imply but do not spell out, or a choice where they are silent).
    pub disagreement: u8,
    pub summary: &'static str,
    sql: Option<(&'static str, &'static str)>,
    apply: fn(&mut Scenario),
}

fn no_settings(_: &mut Scenario) {}

/// `VARIANTS`, from the variant table (sim/vocab/variant_name.rs): each row's SQL compiled in,
/// its `apply` over a `Scenario`.
macro_rules! variants {
    ($($id:ident $name:literal: D $d:literal, sql [$($sql:literal)?], demo $demo:literal, summary $summary:literal, apply $apply:expr;)*) => {
        pub const VARIANTS: &[Variant] = &[$(
            Variant {
                id: VariantId::$id,
                name: $name,
                disagreement: $d,
                summary: $summary,
                sql: variants!(@sql $($sql)?),
                apply: $apply,
            },
        )*];
    };
    (@sql) => { None };
    (@sql $sql:literal) => {
        Some((concat!("scenarios/variants/", $sql), include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/variants/", $sql))))
    };
}
crate::vocab::variant_name::variant_table!(variants);

/// `patient-relaunch`: how long a launched session may stay silent before its claim. A hung
/// session and a dead one look the same to the conductor (nothing of the seeds reports a
/// session's death), so no wait is safe against every hang: this one exceeds the longest hang
/// of the proof's fault model (25 min drawn by ci-smoke and random-faults, 18 min for
/// `explore crashes --hangs`), which is the proof's assumption A1 (docs/repaired-protocol.md).
pub const PATIENT_CLAIM_OVERDUE_S: i64 = 1_800;

pub fn find(name: &str) -> Option<&'static Variant> {
    VARIANTS.iter().find(|v| v.name == name)
}

/// Two variants that replace the same statement and what they are together: the SQL that
/// replaces it when both are in force, in either order (issue 46). Any other pair that replaces
/// one statement (unless the later only narrows the earlier's, `refines`) or undoes the other's
/// setting is refused.
pub struct Composition {
    pub first: &'static str,
    pub second: &'static str,
    pub sql: (&'static str, &'static str),
}

pub const COMPOSITIONS: &[Composition] = &[Composition {
    // docs/protocol.md D1 and D2 read together: seed 004's own claim ("SQL Patterns / Atomic
    // claim") has both its guard and its worked_by.
    first: "guard-not-in",
    second: "worked-by-session-id",
    sql: ("scenarios/variants/claim-004.sql", include_str!("../../scenarios/variants/claim-004.sql")),
}];

/// The composition of `a` and `b`, in either order.
fn composition(a: &str, b: &str) -> Option<&'static Composition> {
    COMPOSITIONS.iter().find(|c| (c.first == a && c.second == b) || (c.first == b && c.second == a))
}

/// A new scenario with the variants applied: its profile's (sim/vocab/profile.rs), then the
/// scenario's own (`[protocol] variants`, which `Scenario::load` only records), unless they
/// already are, then `extra` (`--variant`), in order, each name once. A variant that undoes a
/// change of one applied before it — a setting, or a statement both replace — is refused
/// (`contradiction`) unless `COMPOSITIONS` says what the two are together: a profile is a
/// protocol, and a run that names it runs all of it; and two variants applied in one order
/// must not run another protocol than in the other. `scenario` itself is left as it is;
/// applying to the result again changes nothing but the extra names it did not have. An
/// unknown name lists the known ones.
pub fn with_variants(scenario: &Scenario, extra: &[String]) -> Result<Scenario, Error> {
    let mut applied = scenario.clone();
    let profile = crate::vocab::check_profile_name(&scenario.profile).map_err(Error::input)?;
    if !scenario.variants_applied {
        applied.variant_names.clear();
        // docs/protocol.md C110: the conductor's policy first, so variants apply over it.
        crate::input::conductor_profile::apply(&mut applied).map_err(Error::input)?;
        for name in profile.variants {
            apply(&mut applied, name).map_err(Error::input)?;
        }
        for name in &scenario.variant_names {
            apply_after(&mut applied, profile, name, "[protocol] variants")?;
        }
        applied.variants_applied = true;
    }
    for name in extra {
        apply_after(&mut applied, profile, name, "--variant")?;
    }
    Ok(applied)
}

/// `apply`, refusing a variant that undoes a change of the profile or of a variant applied
/// before it (`source` says where it was named); a declared composition adds its SQL.
fn apply_after(scenario: &mut Scenario, profile: &Profile, name: &str, source: &str) -> Result<(), Error> {
    let earlier = scenario.variant_names.clone();
    if earlier.iter().any(|n| n == name) {
        return Ok(());
    }
    let before = scenario.clone();
    apply(scenario, name).map_err(Error::input)?;
    let (of_profile, others): (Vec<&str>, Vec<&str>) = earlier.iter().map(String::as_str).partition(|n| profile.variants.contains(n));
    if let Some(why) = contradiction(&before, scenario, &of_profile, name) {
        return Err(Error::input(format!(
            "{}: {source} `{name}` contradicts protocol profile `{}`: {why}; run it under `--protocol {}` (the seeds' protocol) or without that variant",
            scenario.path.display(),
            profile.name,
            crate::vocab::DEFAULT_PROFILE
        )));
    }
    let composed: Vec<&str> = others.iter().copied().filter(|other| composition(other, name).is_some()).collect();
    let alone: Vec<&str> = others.iter().copied().filter(|other| !composed.contains(other)).collect();
    if let Some(why) = contradiction(&before, scenario, &alone, name) {
        return Err(Error::input(format!(
            "{}: {source} `{name}` contradicts variant `{}`, applied before it: {why}; the two would run another protocol in the other order, so name one of them (docs/protocol.md C136)",
            scenario.path.display(),
            why.earlier
        )));
    }
    for other in composed {
        let (origin, text) = composition(other, name).expect("filtered on it").sql;
        scenario.variant_sql.push((origin.to_string(), text));
    }
    Ok(())
}

/// Why a variant undoes an earlier one, and which.
struct Undone {
    earlier: &'static str,
    why: String,
}

impl std::fmt::Display for Undone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.why)
    }
}

/// Whether `name`, applied to `before` (giving `scenario`) after the variants `earlier`, undid
/// one of them: an earlier variant's settings that, applied again, changed nothing before and
/// change the scenario now (a key set after the variants, as `bench --param` does, is no
/// variant's undoing), or a statement both replace (unless `name`'s only narrows the earlier
/// one's).
fn contradiction(before: &Scenario, scenario: &Scenario, earlier: &[&str], name: &str) -> Option<Undone> {
    if earlier.contains(&name) {
        return None;
    }
    let later = find(name)?;
    let undoes = |s: &Scenario, variant: &Variant| {
        let mut again = s.clone();
        (variant.apply)(&mut again);
        format!("{again:?}") != format!("{s:?}")
    };
    for earlier in earlier.iter().filter_map(|p| find(p)) {
        if undoes(scenario, earlier) && !undoes(before, earlier) {
            return Some(Undone { earlier: earlier.name, why: format!("it undoes a setting of `{}` ({})", earlier.name, earlier.summary) });
        }
        let replaced = statements(later);
        let undone = statements(earlier).into_iter().find(|(name, sql)| replaced.iter().any(|(n, s)| n == name && !refines(s, sql)));
        if let Some((statement, _)) = undone {
            return Some(Undone {
                earlier: earlier.name,
                why: format!("it replaces statement `{statement}`, which `{}` replaces too ({})", earlier.name, earlier.summary),
            });
        }
    }
    None
}

/// A user's SQL entry (`[protocol] sql`, `--sql`) that a variant in force replaces with other
/// SQL: the entry would never run as written, so the run is refused naming both
/// (docs/protocol.md C135). An entry equal (spacing aside) to a variant's in force is that
/// variant's: the variants compose as `with_variants` checked.
pub fn check_user_entry(scenario: &Scenario, entry: &crate::input::sql_catalog::Statement) -> Result<(), Error> {
    let profile = crate::vocab::check_profile_name(&scenario.profile).map_err(Error::input)?;
    let mut theirs = Vec::new();
    for (origin, text) in &scenario.variant_sql {
        let parsed = crate::input::sql_catalog::parse(text, origin)?;
        theirs.extend(parsed.into_iter().filter(|s| s.name == entry.name).map(|s| (origin, s)));
    }
    if theirs.iter().any(|(_, s)| words(&s.sql) == words(&entry.sql)) {
        // The entry is a variant's own (a scenario that names a variant's file, as
        // late-exit-fenced names fencing's): the variants in force compose as checked above.
        return Ok(());
    }
    if let Some((origin, _)) = theirs.into_iter().next() {
        let by = variant_of_sql(origin);
        let whose = if by.split(" + ").all(|v| profile.variants.contains(&v)) {
            format!("variant `{by}` of protocol profile `{}`", profile.name)
        } else {
            format!("variant `{by}`")
        };
        return Err(Error::input(format!(
            "{}: your entry `{}` would never run: {whose} replaces `{}` too ({origin}), and a variant's SQL applies after yours; refused (docs/protocol.md C135): drop the entry, or run without that variant{}",
            entry.origin,
            entry.name,
            entry.name,
            if profile.variants.is_empty() { String::new() } else { format!(" (`--protocol {}`)", crate::vocab::DEFAULT_PROFILE) }
        )));
    }
    Ok(())
}

/// The variant (or composition, `a + b`) whose SQL file is `origin`.
fn variant_of_sql(origin: &str) -> String {
    let single = VARIANTS.iter().find(|v| v.sql.is_some_and(|(o, _)| o == origin)).map(|v| v.name.to_string());
    let composed = || COMPOSITIONS.iter().find(|c| c.sql.0 == origin).map(|c| format!("{} + {}", c.first, c.second));
    single.or_else(composed).unwrap_or_else(|| origin.to_string())
}

/// The statements a variant's SQL replaces: name and SQL (comments stripped).
fn statements(variant: &Variant) -> Vec<(String, String)> {
    let Some((origin, text)) = variant.sql else { return Vec::new() };
    let parsed = crate::input::sql_catalog::parse(text, origin).expect("a variant's SQL parses (a test checks it)");
    parsed.into_iter().map(|s| (s.name, s.sql)).collect()
}

/// Whether statement `later` keeps all of `earlier` and only narrows it: the same SQL (spacing
/// aside) with `AND` conditions added at its end, as `checked-transitions` adds a state check
/// to fencing's `session_id` check. An `OR` among the added words could widen the whole `WHERE`
/// again (`… AND x OR 1`), so it is not a narrowing. Anything else that replaces an earlier
/// variant's statement may undo it.
fn refines(later: &str, earlier: &str) -> bool {
    let (later, earlier) = (words(later), words(earlier));
    later.strip_prefix(&earlier).is_some_and(|rest| {
        rest.starts_with(" AND ") && !rest.split(|c: char| !c.is_alphanumeric() && c != '_').any(|w| w.eq_ignore_ascii_case("OR"))
    })
}

/// A statement's SQL with its spacing and final `;` dropped.
fn words(sql: &str) -> String {
    sql.trim().trim_end_matches(';').split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Applies the named variant to a scenario whose `variant_names` are applied; a name it
/// already has changes nothing.
fn apply(scenario: &mut Scenario, name: &str) -> Result<(), String> {
    check_variant_name(name)?;
    let variant = find(name).expect("VARIANT_NAMES and VARIANTS name the same variants");
    if scenario.variant_names.iter().any(|n| n == name) {
        return Ok(());
    }
    (variant.apply)(scenario);
    if let Some((origin, text)) = variant.sql {
        scenario.variant_sql.push((origin.to_string(), text));
    }
    scenario.variant_names.push(name.to_string());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_disagreement_of_protocol_md_has_a_variant_and_their_sql_parses() {
        for n in 1..=16u8 {
            assert!(VARIANTS.iter().any(|v| v.disagreement == n), "disagreement {n} has no variant");
        }
        let mut names: Vec<&str> = VARIANTS.iter().map(|v| v.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), VARIANTS.len(), "variant names are unique");
        for variant in VARIANTS {
            if let Some((origin, text)) = variant.sql {
                let mut catalog = crate::input::sql_catalog::Catalog::default_protocol();
                catalog.override_with(text, origin).unwrap();
            }
        }
    }

    #[test]
    fn the_vocabulary_names_the_variants_in_order() {
        let names: Vec<&str> = VARIANTS.iter().map(|v| v.name).collect();
        assert_eq!(names, crate::vocab::VARIANT_NAMES);
    }

    fn scenario(variants: &str) -> Scenario {
        let text = format!("[tasks]\ncount = 1\n[protocol]\nvariants = [{variants}]\n");
        Scenario::parse(&text, std::path::Path::new("s.toml")).unwrap()
    }

    fn names(s: &Scenario) -> Vec<&str> {
        s.variant_names.iter().map(String::as_str).collect()
    }

    #[test]
    fn the_file_variants_apply_first_then_the_extra_ones_each_once() {
        let loaded = scenario("\"thresholds-002\", \"fencing\", \"fencing\"");
        let extra = ["polls-004".to_string(), "fencing".to_string(), "state-first".to_string()];
        let s = with_variants(&loaded, &extra).unwrap();
        assert_eq!(names(&s), ["thresholds-002", "fencing", "polls-004", "state-first"]);
        assert!(s.variants_applied && s.settings.state_first);
        assert_eq!((s.context.evaluate_at_pct, s.timing.background_poll_ms), (65, 8_000));
        assert_eq!(s.variant_sql.iter().map(|(origin, _)| origin.as_str()).collect::<Vec<_>>(), ["scenarios/variants/fencing.sql"]);
        assert!(!loaded.variants_applied && loaded.context.evaluate_at_pct == 50, "the loaded scenario is left as it is");
    }

    #[test]
    fn applying_again_applies_nothing_twice() {
        let once = with_variants(&scenario("\"polls-004\", \"fencing\""), &[]).unwrap();
        let mut changed = once.clone();
        changed.timing.background_poll_ms = 1_000;
        let twice = with_variants(&changed, &["fencing".to_string(), "detect-by-timestamp".to_string()]).unwrap();
        assert_eq!(names(&twice), ["polls-004", "fencing", "detect-by-timestamp"]);
        assert_eq!(twice.variant_sql.len(), 1);
        assert_eq!(twice.timing.background_poll_ms, 1_000, "polls-004 is not applied again");
    }

    fn with_profile(variants: &str, profile: &str) -> Scenario {
        scenario(variants).with_profile(Some(profile)).unwrap()
    }

    #[test]
    fn a_profile_applies_its_variants_first_then_the_files_then_the_command_lines() {
        let s = with_variants(&with_profile("\"strict-terminal\", \"fencing\"", "repaired"), &["polls-004".to_string()]).unwrap();
        let profile = crate::vocab::check_profile_name("repaired").unwrap().variants;
        let expected: Vec<&str> = profile.iter().copied().chain(["strict-terminal", "polls-004"]).collect();
        assert_eq!(names(&s), expected);
        assert!(s.settings.durable_cursor && s.settings.watcher_until_exit && !s.settings.relaunch_exited);
        let sql = profile.iter().filter(|v| find(v).is_some_and(|v| v.sql.is_some())).count();
        assert_eq!(s.variant_sql.len(), sql, "fencing's SQL once, though the file names it too");
        let seeds = with_variants(&scenario("\"strict-terminal\""), &[]).unwrap();
        assert_eq!(names(&seeds), ["strict-terminal"], "the seeds' profile applies nothing");
    }

    const TEST_PROFILE: Profile = Profile { name: "test", summary: "a test", variants: &["thresholds-002", "guard-not-in"] };

    fn after_test_profile(name: &str) -> Result<Scenario, Error> {
        let mut s = scenario("");
        for earlier in TEST_PROFILE.variants {
            apply(&mut s, earlier).unwrap();
        }
        apply_after(&mut s, &TEST_PROFILE, name, "--variant").map(|()| s)
    }

    #[test]
    fn a_variant_that_undoes_a_setting_or_replaces_a_statement_of_the_profile_is_refused() {
        let undone = after_test_profile("thresholds-headroom").err().unwrap().to_string();
        assert!(
            undone.contains(
                "s.toml: --variant `thresholds-headroom` contradicts protocol profile `test`: it undoes a setting of `thresholds-002`"
            ),
            "{undone}"
        );
        assert!(undone.ends_with("run it under `--protocol seeds` (the seeds' protocol) or without that variant"), "{undone}");
        let replaced = after_test_profile("worked-by-session-id").err().unwrap().to_string();
        assert!(replaced.contains("it replaces statement `claim_task`, which `guard-not-in` replaces too"), "{replaced}");
        // A variant that touches nothing of the profile's, or that is one of its own, applies.
        assert!(after_test_profile("strict-terminal").is_ok());
        assert!(after_test_profile("thresholds-002").is_ok());
    }

    #[test]
    fn two_variants_that_undo_each_other_are_refused_in_either_order_naming_both() {
        for (first, second) in [("thresholds-002", "thresholds-headroom"), ("thresholds-headroom", "thresholds-002")] {
            let e = with_variants(&scenario(&format!("\"{first}\"")), &[second.to_string()]).unwrap_err().to_string();
            assert!(
                e.contains(&format!(
                    "s.toml: --variant `{second}` contradicts variant `{first}`, applied before it: it undoes a setting of `{first}`"
                )),
                "{e}"
            );
        }
        // Both named in the file: the second is refused there.
        let e = with_variants(&scenario("\"instruction-any-type\", \"fencing\", \"thresholds-002\", \"thresholds-headroom\""), &[])
            .unwrap_err();
        assert!(e.to_string().contains("[protocol] variants `thresholds-headroom` contradicts variant `thresholds-002`"), "{e}");
        // A variant that re-applies what an earlier one set (first-conductor after answer-on-poll) undoes nothing.
        assert!(with_variants(&scenario("\"answer-on-poll\""), &["first-conductor".to_string()]).is_ok());
    }

    #[test]
    fn the_two_claim_variants_compose_as_declared_in_either_order() {
        let claim = |s: &Scenario| {
            let mut catalog = crate::input::sql_catalog::Catalog::default_protocol();
            for (origin, text) in &s.variant_sql {
                catalog.override_with(text, origin).unwrap();
            }
            catalog.get("claim_task").sql.clone()
        };
        let one = with_variants(&scenario("\"guard-not-in\""), &["worked-by-session-id".to_string()]).unwrap();
        let other = with_variants(&scenario("\"worked-by-session-id\""), &["guard-not-in".to_string()]).unwrap();
        assert_eq!(claim(&one), claim(&other));
        assert!(
            claim(&one).contains("worked_by = :session_id") && claim(&one).contains("NOT IN ('working', 'complete', 'exited')"),
            "{}",
            claim(&one)
        );
        assert_eq!(names(&one), ["guard-not-in", "worked-by-session-id"]);
        // Without the declaration the same pair is refused, naming both.
        let mut s = scenario("\"guard-not-in\"");
        apply(&mut s, "guard-not-in").unwrap();
        let why = contradiction(&s, &s_after(&s, "worked-by-session-id"), &["guard-not-in"], "worked-by-session-id").unwrap();
        assert_eq!(
            (why.earlier, why.why.contains("it replaces statement `claim_task`, which `guard-not-in` replaces too")),
            ("guard-not-in", true)
        );
    }

    fn s_after(s: &Scenario, name: &str) -> Scenario {
        let mut s = s.clone();
        apply(&mut s, name).unwrap();
        s
    }

    #[test]
    fn a_statement_that_only_adds_conditions_refines_the_earlier_one_and_nothing_else_does() {
        let fenced = "UPDATE t SET state = 'error'\nWHERE task_id = :task_id AND session_id = :session_id;";
        assert!(refines(
            "UPDATE t SET state = 'error' WHERE task_id = :task_id AND session_id = :session_id\n  AND state IN ('working');",
            fenced
        ));
        // Near misses: the same statement, a dropped condition, an added one that is not `AND`.
        assert!(!refines(fenced, fenced));
        assert!(!refines("UPDATE t SET state = 'error' WHERE task_id = :task_id AND state IN ('working');", fenced));
        assert!(!refines("UPDATE t SET state = 'error' WHERE task_id = :task_id AND session_id = :session_id OR 1;", fenced));
        assert!(!refines("UPDATE t SET state = 'error' WHERE task_id = :task_id AND session_id = :session_idx;", fenced));
        // An `OR` after an added condition widens the `WHERE` again; a word containing it does not.
        assert!(!refines(&fenced.replace(';', " AND state IN ('working') or 1;"), fenced));
        assert!(refines(&fenced.replace(';', " AND state IN ('working', 'error_or_not');"), fenced));
    }

    #[test]
    fn no_variant_of_a_profile_undoes_an_earlier_one_of_it() {
        for profile in crate::vocab::PROFILES {
            let mut s = scenario("");
            for (i, name) in profile.variants.iter().enumerate() {
                let before = s.clone();
                apply(&mut s, name).unwrap();
                let why = contradiction(&before, &s, &profile.variants[..i], name).map(|u| u.to_string());
                assert_eq!(why, None, "{}: {name}", profile.name);
            }
        }
    }

    #[test]
    fn an_unknown_extra_variant_is_bad_input_listing_the_known_ones() {
        let e = with_variants(&scenario(""), &["fencng".to_string()]).unwrap_err();
        assert!(
            e.to_string().starts_with("invalid input: unknown variant `fencng`; did you mean `fencing`?; variants: guard-not-in, "),
            "{e}"
        );
    }
}
