//! Protocol profiles: a whole protocol as one choice, `[protocol] profile = NAME` or
//! `--protocol NAME`. A profile is an ordered list of variant names (sim/input/variant.rs) that
//! `crate::input::variant::with_variants` applies before the scenario's own variants and the command
//! line's; `seeds` applies none, so it is the seeds' protocol as the simulator reads it by
//! default, byte for byte. This file is the one place a profile is defined (issue 28).

/// A named protocol: the variants it applies, in order.
pub struct Profile {
    pub name: &'static str,
    pub summary: &'static str,
    /// Variant names (`super::VARIANT_NAMES`), applied in this order before any other.
    pub variants: &'static [&'static str],
}

/// The profile a scenario runs when neither its file nor the command line names one.
pub const DEFAULT_PROFILE: &str = "seeds";

pub const PROFILES: &[Profile] = &[
    Profile { name: "seeds", summary: "the seeds' protocol as docs/protocol.md reads it by default", variants: &[] },
    Profile {
        name: "repaired",
        summary: "the seeds' protocol with the changes that make every rule hold under every fault rehearsal injects (issue 28)",
        variants: &[
            "fencing",
            "heartbeat-until-exit",
            "durable-cursor",
            "patient-relaunch",
            "release-stale",
            "uncap-lost-sessions",
            "retry-failed-reads",
            "lease-self-check",
            "checked-transitions",
            "claim-blocked-owner-alive",
            "release-asked-exit",
            "claim-compare-and-set",
            "checked-answers",
            "conductor-busy-backoff",
        ],
    },
];

/// The profile named `name`, if there is one.
pub fn find_profile(name: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.name == name)
}

/// `Ok` for a profile name; otherwise the message that lists the known ones.
pub fn check_profile_name(name: &str) -> Result<&'static Profile, String> {
    find_profile(name).ok_or_else(|| {
        let names = PROFILES.iter().map(|p| p.name);
        let hint = super::suggest::did_you_mean(name, names.clone());
        format!("unknown protocol profile `{name}`{hint}; profiles: {}", names.collect::<Vec<_>>().join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_profile_names_known_variants_once_and_the_default_names_none() {
        for profile in PROFILES {
            let mut names = profile.variants.to_vec();
            for name in &names {
                assert!(super::super::VARIANT_NAMES.contains(name), "{}: unknown variant {name}", profile.name);
            }
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), profile.variants.len(), "{}: a variant named twice", profile.name);
        }
        assert!(check_profile_name(DEFAULT_PROFILE).unwrap().variants.is_empty(), "the default is the seeds' protocol");
    }

    #[test]
    fn an_unknown_profile_lists_the_profiles() {
        assert_eq!(check_profile_name("repaired").unwrap().name, "repaired");
        assert_eq!(
            check_profile_name("repiared").err().unwrap(),
            "unknown protocol profile `repiared`; did you mean `repaired`?; profiles: seeds, repaired"
        );
    }
}
