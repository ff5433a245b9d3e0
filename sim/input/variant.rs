//! Protocol variants: one named reading per place where the seeds disagree (docs/protocol.md
//! §3, D1–D16, each has one), then readings the seeds imply or leave open
//! (disagreement 0). A variant replaces named SQL entries (files under `scenarios/variants/`)
//! and/or changes protocol settings; `--variant NAME` or a scenario's `[protocol] variants =
//! [...]` names it and `with_variants` applies it before a run.

use crate::base::error::Error;
use crate::input::scenario::Scenario;
use crate::vocab::{check_variant_name, Profile};

pub struct Variant {
    pub name: &'static str,
    /// The disagreement of docs/protocol.md it reads differently (D1–D16; 0: a reading the
    /// seeds imply but do not spell out, or a choice where they are silent).
    pub disagreement: u8,
    pub summary: &'static str,
    sql: Option<(&'static str, &'static str)>,
    apply: fn(&mut Scenario),
}

fn no_settings(_: &mut Scenario) {}

pub const VARIANTS: &[Variant] = &[
    Variant {
        name: "guard-not-in",
        disagreement: 1,
        summary:
            "claim guard `state NOT IN ('working','complete','exited')` (004) instead of `IN ('watching','fix_proposed','exit_requested')`",
        sql: Some(("scenarios/variants/guard-not-in.sql", include_str!("../../scenarios/variants/guard-not-in.sql"))),
        apply: no_settings,
    },
    Variant {
        name: "worked-by-session-id",
        disagreement: 2,
        summary: "worked_by records the session id (004) instead of musician-task-NN[-SN]",
        sql: Some(("scenarios/variants/worked-by-session-id.sql", include_str!("../../scenarios/variants/worked-by-session-id.sql"))),
        apply: no_settings,
    },
    Variant {
        name: "state-first",
        disagreement: 3,
        summary: "review request as UPDATE then INSERT (000 Execution Queries 5) instead of message first",
        sql: None,
        apply: |s| s.settings.state_first = true,
    },
    Variant {
        name: "instruction-any-type",
        disagreement: 4,
        summary: "instruction read without the message_type filter (000 Bootstrap 6)",
        sql: Some(("scenarios/variants/instruction-any-type.sql", include_str!("../../scenarios/variants/instruction-any-type.sql"))),
        apply: no_settings,
    },
    Variant {
        name: "polls-004",
        disagreement: 5,
        summary: "watchers poll every 8 s; the pause watcher gives up after 150 polls (\"20 minutes\", 004)",
        sql: None,
        apply: |s| {
            s.timing.background_poll_ms = 8_000;
            s.timing.pause_poll_ms = 8_000;
            s.timing.pause_timeout_ms = 150 * 8_000;
        },
    },
    Variant {
        name: "detect-by-timestamp",
        disagreement: 6,
        summary: "new conductor messages by `ORDER BY timestamp DESC LIMIT 1` (004) instead of `id > last_processed`",
        sql: None,
        apply: |s| s.settings.detect_by_timestamp = true,
    },
    Variant {
        name: "thresholds-002",
        disagreement: 7,
        summary: "context: handoff preparation at 65 %, mandatory exit at 75 % (002)",
        sql: None,
        apply: |s| {
            s.context.evaluate_at_pct = 65;
            s.context.proceed_below_pct = 70.max(s.context.evaluate_at_pct);
            s.context.ceiling_pct = 75;
        },
    },
    Variant {
        name: "thresholds-headroom",
        disagreement: 7,
        summary: "context: caution 60 %, critical 75 %, ceiling 80 % (check-context-headroom.sh)",
        sql: None,
        apply: |s| {
            s.context.evaluate_at_pct = 60;
            s.context.proceed_below_pct = 75;
            s.context.escalate_above_pct = 80;
            s.context.ceiling_pct = 80;
        },
    },
    Variant {
        name: "resumption-status-type",
        disagreement: 8,
        summary: "resumption message typed `resumption_status` as the text says (the CHECK allows only `resumption`)",
        sql: Some(("scenarios/variants/resumption-status-type.sql", include_str!("../../scenarios/variants/resumption-status-type.sql"))),
        apply: no_settings,
    },
    Variant {
        name: "strict-terminal",
        disagreement: 9,
        summary: "`exited` is absolute: the conductor never moves an exited task to fix_proposed to relaunch it",
        sql: None,
        apply: |s| s.settings.relaunch_exited = false,
    },
    Variant {
        name: "table-transitions-only",
        disagreement: 10,
        summary: "the oracle accepts only the transitions in 002's table, not those the text implies",
        sql: None,
        apply: |s| s.settings.implied_transitions = false,
    },
    Variant {
        name: "fencing",
        disagreement: 11,
        summary: "every musician UPDATE of its task row also checks `session_id = :session_id`",
        sql: Some(("scenarios/variants/fencing.sql", include_str!("../../scenarios/variants/fencing.sql"))),
        apply: no_settings,
    },
    Variant {
        name: "escalate-over-two",
        disagreement: 12,
        summary: "deviation escalation on \"> 2 deviations\" (000 text) instead of REF-6 (2+ Medium or 1+ High)",
        sql: None,
        apply: |s| s.settings.escalate_over_two = true,
    },
    Variant {
        name: "terminal-error-no-message",
        disagreement: 13,
        summary: "the 5th failure writes `exited` with no final message (004 \"Terminal Failure (5th retry)\") instead of a final message first (000 \"Terminal Write Atomicity\")",
        sql: None,
        apply: |s| s.settings.terminal_error_message = false,
    },
    Variant {
        name: "heartbeat-until-exit",
        disagreement: 14,
        summary: "a clean exit keeps its background watcher (and heartbeat) until the final write (000 \"Reference: Watcher Protocol Detail\": a watcher runs \"until terminal state\") instead of stopping every watcher first (000 \"Clean Exit Protocol\" 2)",
        sql: None,
        apply: |s| s.settings.watcher_until_exit = true,
    },
    Variant {
        name: "replies-cite-request",
        disagreement: 15,
        summary: "every conductor answer ends `In reply to: #<request id>`; a musician acts only on a reply to its own request, and a hand-over closes the replaced session's requests",
        sql: None,
        apply: |s| s.settings.replies_cite_request = true,
    },
    Variant {
        name: "exit-requested-conductor-only",
        disagreement: 16,
        summary: "`exit_requested` is only the conductor's own end state (004 \"Conductor States (task-00)\"): a musician does not take it as a request to exit (000 and 002 \"States the Conductor Sets\"), and the oracle rejects it on a musician's row",
        sql: None,
        apply: |s| s.settings.exit_request_to_musician = false,
    },
    Variant {
        name: "act-on-poll",
        // Not a disagreement: what the seeds imply (002 "Guard Clause Rules": the conductor
        // "detects the stale heartbeat, reviews state" before it hands over) against the
        // simulator's earlier conductor, which acted on its last poll.
        disagreement: 0,
        summary: "the conductor hands a stale task over on its last poll, without re-reading the row first",
        sql: None,
        apply: |s| s.settings.act_on_poll = true,
    },
    Variant {
        name: "no-relaunch-unclaimed",
        // Not a disagreement: the seeds are silent on a launch that never claims.
        disagreement: 0,
        summary: "the conductor only acts on the seeds' staleness rule: no relaunch when a launched session never claims, no hand-over of a fix proposed to a session that went silent",
        sql: None,
        apply: |s| s.settings.relaunch_unclaimed = false,
    },
    // The conductor's own choices where the seeds are silent (docs/protocol.md C37-C39): each
    // restores one habit of the simulator's first conductor, `first-conductor` all of them, so
    // `rehearsal compare --variants default,first-conductor` measures what the charitable
    // reading changes.
    Variant {
        name: "answer-on-poll",
        disagreement: 0,
        summary: "the conductor answers a request on its poll, without reading the row again: its answer may land on a row that exited or changed hands (C37)",
        sql: None,
        apply: |s| s.conductor.reread_before_answer = false,
    },
    Variant {
        name: "silent-reviews",
        disagreement: 0,
        summary: "the conductor writes no heartbeat while it reviews (C38): a review longer than 9 minutes makes a waiting musician call it down",
        sql: None,
        apply: |s| s.conductor.review_heartbeat_ms = Some(0),
    },
    Variant {
        name: "ignore-claim-blocked",
        disagreement: 0,
        summary: "the conductor notes `claim_blocked` and does nothing (C39): a row no session holds stays so",
        sql: None,
        apply: |s| s.conductor.claim_blocked = crate::input::scenario::ClaimBlockedReply::Ignore,
    },
    Variant {
        name: "first-conductor",
        disagreement: 0,
        summary: "the simulator's first conductor: answer-on-poll, silent-reviews and ignore-claim-blocked together",
        sql: None,
        apply: |s| {
            s.conductor.reread_before_answer = false;
            s.conductor.review_heartbeat_ms = Some(0);
            s.conductor.claim_blocked = crate::input::scenario::ClaimBlockedReply::Ignore;
        },
    },
    Variant {
        name: "ceiling-before-work",
        // Not a disagreement: a check the seeds do not describe (docs/protocol.md C32).
        disagreement: 0,
        summary: "before every agent, review, rework, report and escalation the musician predicts its worst-case cost and hands off below the ceiling without asking the conductor",
        sql: None,
        apply: |s| s.settings.ceiling_before_work = true,
    },
    Variant {
        name: "timeout-not-counted",
        // Not a disagreement: 000 "Mode Transitions" (Timeout handling 3) says to set `error`
        // and send a timeout message, not whether it counts against the five retries (C21).
        disagreement: 0,
        summary: "a pause-watcher TIMEOUT sets `error` with its message but does not count against the five error retries (retry_count unchanged)",
        sql: None,
        apply: |s| s.settings.timeout_counts_retry = false,
    },
    Variant {
        name: "bootstrap-5min",
        // 000 "Example: Bootstrap & First Execution", Summary: "Bootstrap takes ~5 minutes";
        // by default a bootstrap costs only its launch delay and statements (~35 s), N18.
        disagreement: 0,
        summary: "a bootstrap takes 4-6 minutes after the claim (000 \"Bootstrap takes ~5 minutes\") instead of its statements alone (~35 s)",
        sql: None,
        apply: |s| s.timing.bootstrap_ms = crate::base::dist::Dist::uniform(240_000, 360_000),
    },
    Variant {
        name: "handoff-stale-by-age",
        // Not a disagreement: 003 says "recent" and "stale" with no number (C25).
        disagreement: 0,
        summary: "a HANDOFF is stale when written more than conductor.staleness_s (9 min) before the successor's claim, instead of when written by a session other than the task's previous holder",
        sql: None,
        apply: |s| s.settings.handoff_stale_by_age = true,
    },
    Variant {
        name: "exit-request-no-state",
        disagreement: 16,
        summary: "a session asked to exit writes no state: its final `handoff` message is its last write and the row stays `exit_requested` for the successor's claim (002's table has no `exit_requested → exited`), instead of 000 \"Clean Exit Protocol\" 7's `exited`",
        sql: None,
        apply: |s| s.settings.exit_request_no_state = true,
    },
    Variant {
        name: "emergency-stop-escalates",
        // Not a disagreement: 000 "Emergency Messages" says "Kill current subagent
        // immediately (urgent: 'stop all work')" and no more (C23, C41).
        disagreement: 0,
        summary: "an urgent emergency's stop is reported to the conductor (an `error` message, `error` with last_error `emergency_stop`) and the musician pauses for its answer, instead of waiting, `working`, for the conductor's next message",
        sql: None,
        apply: |s| s.settings.emergency_stop_escalates = true,
    },
    Variant {
        name: "working-count-stale-only",
        // Not a disagreement: 000 says ">2 tasks in `working` state (potential crash
        // indicator)" and no more (C42).
        disagreement: 0,
        summary: "a successor reports 000's \">2 tasks in `working`\" only for other tasks in `working` whose heartbeat is older than conductor.staleness_s (the crash the seed says it indicates), instead of every other task in `working`",
        sql: None,
        apply: |s| s.settings.working_count_stale_only = true,
    },
    Variant {
        name: "complete-from-approved",
        // Not a disagreement of its own: 000 "Completion Flow" 5 implies `review_approved →
        // complete`, which 002's table lacks (D10 lists it as implied; C20).
        disagreement: 0,
        summary: "after the completion review's approval the musician writes `complete` straight from `review_approved` (000 \"Completion Flow\" 5), instead of `resume_working` first (002's `review_approved → working`, `working → complete`)",
        sql: None,
        apply: |s| s.settings.complete_from_approved = true,
    },
    // The repaired protocol's own changes (issue 28, docs/repaired-protocol.md): not readings
    // of the seeds but the fixes the proof suite shows are needed on top of fencing and
    // heartbeat-until-exit (replies-cite-request was tried and left out: no run needs it).
    Variant {
        name: "durable-cursor",
        disagreement: 0,
        summary: "every read of new conductor messages is one atomic receipt message (`send_receipt`); a successor resumes after its predecessor's last receipt instead of handling again what it read (000 keeps last_processed_message_id in memory); a message counts as handled at the commit of the receipt that returned it",
        sql: Some(("scenarios/variants/durable-cursor.sql", include_str!("../../scenarios/variants/durable-cursor.sql"))),
        apply: |s| s.settings.durable_cursor = true,
    },
    Variant {
        name: "patient-relaunch",
        disagreement: 0,
        summary: "the conductor launches a task's next session only after its launched session has been silent before its claim for 30 minutes (conductor.claim_overdue_s = 1800), longer than any hang the fault model injects, and only if a fresh read of the row still finds it unclaimed (the poll may be reviews old), instead of one staleness window (9 min) on the poll's word",
        sql: None,
        apply: |s| {
            s.conductor.claim_overdue_s = Some(PATIENT_CLAIM_OVERDUE_S);
            s.settings.confirm_unclaimed = true;
        },
    },
    Variant {
        name: "release-stale",
        disagreement: 0,
        summary: "the conductor's hand-over of a silent session also clears the row's session_id (`release_task`), so a replaced session that wakes is fenced out at its first row write instead of writing until its successor claims",
        sql: None,
        apply: |s| s.settings.release_stale = true,
    },
    Variant {
        name: "uncap-lost-sessions",
        disagreement: 0,
        summary: "a session the conductor replaces because it went silent (stale heartbeat, claim overdue) does not count against the cap of 5 sessions per task (docs/protocol.md C8); only sessions that ended by a write of their own do, so crashes and hangs during the fault phase cannot make the conductor give a task up",
        sql: None,
        apply: |s| s.settings.uncap_lost_sessions = true,
    },
    Variant {
        name: "conductor-busy-backoff",
        disagreement: 0,
        summary: "the conductor retries a statement answered SQLITE_BUSY with backoff (1 s, 2 s, 4 s, … at most 60 s apart) for as long as it takes, instead of ending after 4 SQLITE_BUSY (docs/protocol.md C43, C62): under heavy contention the fleet slows down instead of collapsing",
        sql: None,
        apply: |s| s.settings.conductor_busy_backoff = true,
    },
    Variant {
        name: "retry-failed-reads",
        disagreement: 0,
        summary: "a read that fails with a disk error (SQLITE_IOERR) is tried again a second later, up to 3 times, as SQLITE_BUSY is (docs/protocol.md C13), instead of ending the actor (C43): a pause watcher whose poll failed otherwise ends as if the conductor had timed out, and its session reports an `error` over an approval",
        sql: None,
        apply: |s| s.settings.retry_failed_reads = true,
    },
    Variant {
        name: "lease-self-check",
        disagreement: 0,
        summary: "a session holds its task on a lease of its own clock, the staleness threshold less one statement round trip and a second (sim/actors/lease.rs): every actor of the session checks it before each request and when each returns, writes a heartbeat first past the refresh threshold, and ends the session without writing past the lease, instead of acting on after a hang the conductor may have handed it over in; the durable cursor's receipt carries the lease's end and comms.db refuses it past that instant",
        sql: None,
        apply: |s| s.settings.lease_self_check = true,
    },
    Variant {
        name: "checked-transitions",
        disagreement: 0,
        summary: "the musician's `set_error`, `set_escalation`, `set_context_warning` and `mark_exited` also check the row's state (the states 002 lets the musician leave by them, with D10's implied ones), so a conductor answer that lands between a pause TIMEOUT's read and its `error`, or during a clean exit's HANDOFF, is not overwritten: a write that changes no row while the row still names the session finds the answer and acts on it (a TIMEOUT writes its state before its message, as 000 \"Mode Transitions\" Timeout handling 3 orders them)",
        sql: Some(("scenarios/variants/checked-transitions.sql", include_str!("../../scenarios/variants/checked-transitions.sql"))),
        apply: |s| s.settings.checked_transitions = true,
    },
    Variant {
        name: "claim-blocked-owner-alive",
        disagreement: 0,
        summary: "a `claim_blocked` record does not outlive the conductor's later answer to the task, and the conductor's intervention on one leaves a claimable row (`fix_proposed` after its answer) alone while the session the row names is unhandled and beats, instead of handing a live task over to a new session (docs/protocol.md C80)",
        sql: None,
        apply: |s| s.settings.claim_blocked_owner_alive = true,
    },
    Variant {
        name: "claim-compare-and-set",
        disagreement: 0,
        summary: "the claim takes the row only if it still names the owner the claiming session saw (`:previous_session_id`: a successor's `read_task_record`, none for a task's first session), so a double launch's twin, late or early, cannot take a row whose owner claimed it and is alive, whatever its state (a `fix_proposed` answer the owner is reworking, an `exit_requested` it is leaving) (docs/protocol.md C82)",
        sql: Some(("scenarios/variants/claim-compare-and-set.sql", include_str!("../../scenarios/variants/claim-compare-and-set.sql"))),
        apply: no_settings,
    },
    Variant {
        name: "checked-answers",
        disagreement: 0,
        summary: "a musician's `set_needs_review` also checks the row's state (the states 002 lets it ask for a review from), so a conductor's exit request that lands between its decision and its write is not overwritten, and the conductor's `set_task_state` changes no `complete` row and puts a review's answer only on a row that asked for one (docs/protocol.md C83)",
        sql: Some(("scenarios/variants/checked-answers.sql", include_str!("../../scenarios/variants/checked-answers.sql"))),
        apply: |s| s.settings.checked_answers = true,
    },
    Variant {
        name: "release-asked-exit",
        disagreement: 0,
        summary: "the hand-over of a session asked to exit that went silent before its `exited` releases the row (`release_task`: `exit_requested` kept, session_id cleared) before the successor's launch, as `release-stale` does for a stale row, so a late `exited` of the asked session is fenced out instead of blocking the successor's claim (docs/protocol.md C81)",
        sql: None,
        apply: |s| s.settings.release_asked_exit = true,
    },
    Variant {
        name: "ceiling-after-agent",
        // Not a disagreement: the simulator's reading before issue 42 (docs/protocol.md C50).
        disagreement: 0,
        summary: "no escalation before the work that would cross the ceiling: the ceiling is met after an agent and the session hands off there, above it if the return was large",
        sql: None,
        apply: |s| s.settings.ceiling_escalates = false,
    },
    Variant {
        name: "messages-logged-only",
        // Not a disagreement: the simulator's reading before issue 42 (docs/protocol.md C51).
        disagreement: 0,
        summary: "a session that reads the conductor's hand-over of its own task logs it and works on, instead of stopping at once",
        sql: None,
        apply: |s| s.settings.reads_handover = false,
    },
];

/// `patient-relaunch`: how long a launched session may stay silent before its claim. A hung
/// session and a dead one look the same to the conductor (nothing of the seeds reports a
/// session's death), so no wait is safe against every hang: this one exceeds the longest hang
/// of the proof's fault model (25 min drawn by ci-smoke and random-faults, 18 min for
/// `explore crashes --hangs`), which is the proof's assumption A1 (docs/repaired-protocol.md).
pub const PATIENT_CLAIM_OVERDUE_S: i64 = 1_800;

pub fn find(name: &str) -> Option<&'static Variant> {
    VARIANTS.iter().find(|v| v.name == name)
}

/// A new scenario with the variants applied: its profile's (sim/vocab/profile.rs), then the
/// scenario's own (`[protocol] variants`, which `Scenario::load` only records), unless they
/// already are, then `extra` (`--variant`), in order, each name once. A variant after the
/// profile's that undoes one of the profile's changes is refused (`contradiction`): a profile
/// is a protocol, and a run that names it runs all of it. `scenario` itself is left as it is;
/// applying to the result again changes nothing but the extra names it did not have. An
/// unknown name lists the known ones.
pub fn with_variants(scenario: &Scenario, extra: &[String]) -> Result<Scenario, Error> {
    let mut applied = scenario.clone();
    let profile = crate::vocab::check_profile_name(&scenario.profile).map_err(Error::input)?;
    if !scenario.variants_applied {
        applied.variant_names.clear();
        for name in profile.variants {
            apply(&mut applied, name).map_err(Error::input)?;
        }
        for name in &scenario.variant_names {
            apply_after_profile(&mut applied, profile, name, "[protocol] variants")?;
        }
        applied.variants_applied = true;
    }
    for name in extra {
        apply_after_profile(&mut applied, profile, name, "--variant")?;
    }
    Ok(applied)
}

/// `apply`, refusing a variant that undoes a change of the profile (`source` says where it
/// was named).
fn apply_after_profile(scenario: &mut Scenario, profile: &Profile, name: &str, source: &str) -> Result<(), Error> {
    apply(scenario, name).map_err(Error::input)?;
    match contradiction(scenario, profile, name) {
        Some(why) => Err(Error::input(format!(
            "{}: {source} `{name}` contradicts protocol profile `{}`: {why}; run it under `--protocol {}` (the seeds' protocol) or without that variant",
            scenario.path.display(),
            profile.name,
            crate::vocab::DEFAULT_PROFILE
        ))),
        None => Ok(()),
    }
}

/// Whether `name`, applied after `profile`'s variants, undid one of them: a profile variant's
/// settings that, applied again, would change the scenario, or a statement both replace.
fn contradiction(scenario: &Scenario, profile: &Profile, name: &str) -> Option<String> {
    if profile.variants.contains(&name) {
        return None;
    }
    let later = find(name)?;
    let now = format!("{scenario:?}");
    for earlier in profile.variants.iter().filter_map(|p| find(p)) {
        let mut again = scenario.clone();
        (earlier.apply)(&mut again);
        if format!("{again:?}") != now {
            return Some(format!("it undoes a setting of `{}` ({})", earlier.name, earlier.summary));
        }
        let replaced = statements(later);
        let undone = statements(earlier).into_iter().find(|(name, sql)| replaced.iter().any(|(n, s)| n == name && !refines(s, sql)));
        if let Some((statement, _)) = undone {
            return Some(format!("it replaces statement `{statement}`, which `{}` replaces too ({})", earlier.name, earlier.summary));
        }
    }
    None
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
    let words = |sql: &str| sql.trim().trim_end_matches(';').split_whitespace().collect::<Vec<_>>().join(" ");
    let (later, earlier) = (words(later), words(earlier));
    later.strip_prefix(&earlier).is_some_and(|rest| {
        rest.starts_with(" AND ") && !rest.split(|c: char| !c.is_alphanumeric() && c != '_').any(|w| w.eq_ignore_ascii_case("OR"))
    })
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
        let extra = ["thresholds-headroom".to_string(), "fencing".to_string(), "state-first".to_string()];
        let s = with_variants(&loaded, &extra).unwrap();
        assert_eq!(names(&s), ["thresholds-002", "fencing", "thresholds-headroom", "state-first"]);
        assert!(s.variants_applied && s.settings.state_first);
        assert_eq!((s.context.evaluate_at_pct, s.context.proceed_below_pct), (60, 75), "the later variant wins");
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
        apply_after_profile(&mut s, &TEST_PROFILE, name, "--variant").map(|()| s)
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
                apply(&mut s, name).unwrap();
                let earlier = Profile { name: profile.name, summary: profile.summary, variants: &profile.variants[..i] };
                assert_eq!(contradiction(&s, &earlier, name), None, "{}: {name}", profile.name);
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
