//! Conductor profiles: the invented conductor's policy as one named, swappable choice
//! (docs/protocol.md C110), `[conductor] profile = NAME` or `--conductor NAME`. The seeds do not
//! describe the conductor's skill (000 "3-Tier Orchestration Model" only has it "Monitors all
//! Tier 1 sessions via database" and "Handles reviews"), so its review schedule, poll interval,
//! review time and reply odds (C1-C3, C5) are the simulator's; a profile sets them together.
//! `invented` sets nothing: it is the conductor docs/protocol.md C1-C11 and C33-C41 describe,
//! byte for byte. Precedence follows the command line's: a profile the file names
//! (`[conductor] profile`) sets only what the file's own `[conductor]` keys leave (the file's
//! author wrote both); `--conductor` replaces the conductor's policy whole, the file's keys
//! included (shipped scenarios restate the invented conductor's numbers, e.g. quickstart's
//! `poll_ms = 30000`; a finding that holds only with them depends on the conductor). Variants
//! apply after both. The profiles themselves are sim/input/conductor_table.rs.

use crate::base::dist::Dist;
pub use crate::input::conductor_table::{
    check_conductor_name, find_conductor, ConductorProfile, Setting, CONDUCTOR_PROFILES, DEFAULT_CONDUCTOR,
};
use crate::input::scenario::{ConductorSection, Scenario};

/// Sets one policy of a profile on `c`.
fn apply_setting(setting: &Setting, c: &mut ConductorSection) {
    match *setting {
        Setting::PollMs(ms) => c.poll_ms = ms,
        Setting::ReviewMs { min_ms, max_ms } => c.review_ms = Dist::uniform(min_ms, max_ms),
        Setting::Schedule { poll_during_reviews, reviews_in_flight } => {
            c.poll_during_reviews = poll_during_reviews;
            c.reviews_in_flight = reviews_in_flight;
        }
        Setting::ReplyOdds { reject, fix } => {
            c.reject_probability = reject;
            c.fix_probability = fix;
        }
    }
}

/// Sets the scenario's conductor policy from its profile (`Scenario::conductor_profile`): from
/// `--conductor` every setting, from the file's `[conductor] profile` every setting none of
/// whose keys the file sets. Called once, where the variants are applied
/// (`crate::input::variant::with_variants`), before them.
pub fn apply(scenario: &mut Scenario) -> Result<(), String> {
    let profile = check_conductor_name(&scenario.conductor_profile)?;
    let whole = scenario.conductor_override.is_some();
    for setting in profile.settings {
        if whole || !setting.keys().iter().any(|k| scenario.conductor_keys.iter().any(|set| set == k)) {
            apply_setting(setting, &mut scenario.conductor);
        }
    }
    Ok(())
}

/// The conductor policy a scenario runs, in a few words read off its resolved `[conductor]`
/// (so a scenario's own keys show): "serial reviews, 30 s poll, reviews 60-300 s".
pub fn policy_words(c: &ConductorSection) -> String {
    let schedule = match (c.poll_during_reviews, c.reviews_in_flight) {
        (false, 1) => "serial reviews".to_string(),
        (false, n) => format!("{n} reviews per poll"),
        (true, n) => format!("polls during reviews, {n} at once"),
    };
    let odds = if c.reject_probability + c.fix_probability > 0.0 {
        format!(", {:.0} % rejected, {:.0} % fixes", c.reject_probability * 100.0, c.fix_probability * 100.0)
    } else {
        String::new()
    };
    let s = |ms: i64| ms as f64 / 1000.0;
    format!("{schedule}, {} s poll, reviews {}-{} s{odds}", s(c.poll_ms), s(c.review_ms.lower()), s(c.review_ms.upper()))
}

/// "conductor profile invented: serial reviews, 30 s poll, reviews 60-300 s": what a budget
/// derived from the conductor's policy says of its source.
pub fn derived_from(scenario: &Scenario) -> String {
    format!("conductor profile {}: {}", scenario.conductor_profile, policy_words(&scenario.conductor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_sets_nothing_and_every_profile_is_named_once() {
        assert!(check_conductor_name(DEFAULT_CONDUCTOR).unwrap().settings.is_empty());
        assert_eq!(CONDUCTOR_PROFILES[0].name, DEFAULT_CONDUCTOR);
        for (i, p) in CONDUCTOR_PROFILES.iter().enumerate() {
            assert!(CONDUCTOR_PROFILES[..i].iter().all(|q| q.name != p.name), "{} twice", p.name);
            let mut keys: Vec<&str> = p.settings.iter().flat_map(|s| s.keys().iter().copied()).collect();
            let all = keys.len();
            keys.sort();
            keys.dedup();
            assert_eq!(keys.len(), all, "{}: a key set twice", p.name);
        }
        let bad = Scenario::parse("[tasks]\ncount = 1\n[conductor]\nprofile = \"fast\"\n", std::path::Path::new("c.toml")).err().unwrap();
        assert!(bad.to_string().contains("c.toml:4:1: key `conductor.profile`: unknown conductor profile `fast`"), "{bad}");
        let err = check_conductor_name("atentive").err().unwrap();
        assert!(err.contains("unknown conductor profile `atentive`") && err.contains("invented, attentive"), "{err}");
    }

    #[test]
    fn a_profile_sets_what_the_file_leaves_and_the_file_keeps_what_it_sets() {
        let path = std::path::Path::new("c.toml");
        let plain = Scenario::parse("[tasks]\ncount = 2\n[conductor]\nprofile = \"attentive\"\n", path).unwrap();
        let mut applied = plain.clone();
        apply(&mut applied).unwrap();
        assert_eq!(
            (applied.conductor.poll_ms, applied.conductor.poll_during_reviews, applied.conductor.reviews_in_flight),
            (10_000, true, 4)
        );
        assert_eq!(policy_words(&applied.conductor), "polls during reviews, 4 at once, 10 s poll, reviews 30-120 s");
        let own =
            Scenario::parse("[tasks]\ncount = 2\n[conductor]\nprofile = \"attentive\"\nreviews_in_flight = 2\npoll_ms = 5000\n", path)
                .unwrap();
        let mut applied = own.clone();
        apply(&mut applied).unwrap();
        // The schedule is the file's (one of its keys is set), the review time the profile's.
        assert_eq!(
            (applied.conductor.poll_ms, applied.conductor.poll_during_reviews, applied.conductor.reviews_in_flight),
            (5_000, false, 2)
        );
        assert_eq!(applied.conductor.review_ms, Dist::uniform(30_000, 120_000));
        // From the command line the profile replaces the file's keys too.
        let mut replaced = Scenario::parse("[tasks]\ncount = 2\n[conductor]\nreviews_in_flight = 2\npoll_ms = 5000\n", path)
            .unwrap()
            .with_conductor(Some("attentive"))
            .unwrap();
        apply(&mut replaced).unwrap();
        assert_eq!((replaced.conductor.poll_ms, replaced.conductor.reviews_in_flight), (10_000, 4));
        let mut invented = Scenario::parse("[tasks]\ncount = 2\n", path).unwrap();
        let before = format!("{:?}", invented.conductor);
        apply(&mut invented).unwrap();
        assert_eq!(format!("{:?}", invented.conductor), before, "the default changes nothing");
        assert_eq!(derived_from(&invented), "conductor profile invented: serial reviews, 30 s poll, reviews 60-300 s");
    }
}
