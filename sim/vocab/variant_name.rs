//! Variant names: the words `[protocol] variants` and `--variant` accept. What each variant
//! changes lives in sim/input/variant.rs (`VARIANTS`, in this order; a test there keeps the two
//! lists equal); these are only the names, so a scenario can be checked without it.

/// Every protocol variant, in the order of the disagreements of docs/protocol.md (D1–D16),
/// then the readings that are no disagreement.
pub const VARIANT_NAMES: &[&str] = &[
    "guard-not-in",
    "worked-by-session-id",
    "state-first",
    "instruction-any-type",
    "polls-004",
    "detect-by-timestamp",
    "thresholds-002",
    "thresholds-headroom",
    "resumption-status-type",
    "strict-terminal",
    "table-transitions-only",
    "fencing",
    "escalate-over-two",
    "terminal-error-no-message",
    "heartbeat-until-exit",
    "replies-cite-request",
    "exit-requested-conductor-only",
    "act-on-poll",
    "no-relaunch-unclaimed",
    "answer-on-poll",
    "silent-reviews",
    "ignore-claim-blocked",
    "first-conductor",
    "ceiling-before-work",
    "timeout-not-counted",
    "bootstrap-5min",
    "handoff-stale-by-age",
    "exit-request-no-state",
    "emergency-stop-escalates",
    "working-count-stale-only",
    "complete-from-approved",
    "durable-cursor",
    "patient-relaunch",
    "release-stale",
    "uncap-lost-sessions",
    "conductor-busy-backoff",
    "retry-failed-reads",
    "lease-self-check",
    "checked-transitions",
    "claim-blocked-owner-alive",
    "claim-compare-and-set",
    "checked-answers",
    "release-asked-exit",
    "ceiling-after-agent",
    "messages-logged-only",
];

/// `Ok` for a variant name; otherwise the message that lists the known ones.
pub fn check_variant_name(name: &str) -> Result<(), String> {
    if VARIANT_NAMES.contains(&name) {
        Ok(())
    } else {
        let hint = super::suggest::did_you_mean(name, VARIANT_NAMES.iter().copied());
        Err(format!("unknown variant `{name}`{hint}; variants: {}", VARIANT_NAMES.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_name_passes_and_an_unknown_one_lists_them_all() {
        assert_eq!(check_variant_name("fencing"), Ok(()));
        let message = check_variant_name("Fencing").unwrap_err();
        assert!(
            message.starts_with("unknown variant `Fencing`; did you mean `fencing`?; variants: guard-not-in, worked-by-session-id, "),
            "{message}"
        );
        assert!(
            message.ends_with(
                ", terminal-error-no-message, heartbeat-until-exit, replies-cite-request, exit-requested-conductor-only, act-on-poll, no-relaunch-unclaimed, answer-on-poll, silent-reviews, ignore-claim-blocked, first-conductor, ceiling-before-work, timeout-not-counted, bootstrap-5min, handoff-stale-by-age, exit-request-no-state, emergency-stop-escalates, working-count-stale-only, complete-from-approved, durable-cursor, patient-relaunch, release-stale, uncap-lost-sessions, conductor-busy-backoff, retry-failed-reads, lease-self-check, checked-transitions, claim-blocked-owner-alive, claim-compare-and-set, checked-answers, release-asked-exit, ceiling-after-agent, messages-logged-only"
            ),
            "{message}"
        );
    }
}
