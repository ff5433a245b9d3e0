//! The highest session a scenario's scripted entries (`[[faults.*]] session`,
//! `[[verification.script]] session`) may name. Under the seeds' protocol a task never has more
//! than `conductor.sessions_per_task_max` sessions (docs/protocol.md C8), so a larger number
//! is a mistake the file is refused for. Under issue 28's variant `uncap-lost-sessions`, a
//! session replaced because it went silent does not count against that cap, so a task can have
//! more: a number past it names a session that may run, and an entry for one that does not run
//! never fires, as an entry at any point a run does not reach.

/// The variant that lets a task have sessions past the cap (sim/input/variant.rs).
const UNCAP: &str = "uncap-lost-sessions";

/// `Some(sessions_per_task_max)`, or `None` (no highest) when the protocol named by `profile`
/// (the default's when absent; an unknown one is refused elsewhere) and `variants` uncaps lost
/// sessions.
pub fn session_cap(profile: Option<&str>, variants: &[String], sessions_per_task_max: u64) -> Option<u64> {
    let profile = crate::vocab::find_profile(profile.unwrap_or(crate::vocab::DEFAULT_PROFILE));
    let uncapped = profile.is_some_and(|p| p.variants.contains(&UNCAP)) || variants.iter().any(|v| v == UNCAP);
    (!uncapped).then_some(sessions_per_task_max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_protocol_that_uncaps_lost_sessions_lets_a_file_name_sessions_past_the_cap() {
        assert_eq!(session_cap(None, &[], 5), Some(5));
        assert_eq!(session_cap(Some("seeds"), &["fencing".to_string()], 4), Some(4));
        assert_eq!(session_cap(Some("repaired"), &[], 5), None);
        assert_eq!(session_cap(None, &[UNCAP.to_string()], 5), None);
        assert!(crate::input::variant::VARIANTS.iter().any(|v| v.name == UNCAP), "the variant this file names exists");
    }
}
