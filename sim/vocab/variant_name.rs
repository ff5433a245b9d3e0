//! The variant table: every protocol variant, once — its name, the disagreement of
//! docs/protocol.md it reads (D1–D16; 0 for a reading the seeds imply or a choice where they are
//! silent), the SQL file under `scenarios/variants/` it replaces statements with, the shipped
//! scenario `rehearsal findings` demonstrates it on, its summary and the settings it flips.
//! `variant_table!` hands the rows to a macro of the caller's, as `rule_table!` does: here they
//! make `VariantId` and the names (so a scenario is checked without the input layer);
//! sim/input/variant.rs makes `VARIANTS` (the SQL text and the settings applied) from the same
//! rows. A new variant is one row here (and its SQL file, if it has one): docs/development.md.
//! Which profile applies it is the profile's list (sim/vocab/profile.rs), in its own order.

/// `Id "name": D n, sql ["file.sql"], demo "scenarios/….toml", summary "…", apply |s| …;` in
/// the order of the disagreements (D1–D16), then the readings that are no disagreement. `apply`
/// is compiled only where `Scenario` is known (sim/input/variant.rs), `s` being the scenario.
macro_rules! variant_table {
    ($then:ident) => {
        $then! {
            GuardNotIn "guard-not-in": D 1, sql ["guard-not-in.sql"], demo "scenarios/faults/claim-under-review.toml",
                summary "claim guard `state NOT IN ('working','complete','exited')` (004) instead of `IN ('watching','fix_proposed','exit_requested')`",
                apply no_settings;
            WorkedBySessionId "worked-by-session-id": D 2, sql ["worked-by-session-id.sql"], demo "scenarios/examples/bootstrap.toml",
                summary "worked_by records the session id (004) instead of musician-task-NN[-SN]",
                apply no_settings;
            StateFirst "state-first": D 3, sql [], demo "scenarios/faults/crash-between-state-and-message.toml",
                summary "review request as UPDATE then INSERT (000 Execution Queries 5) instead of message first",
                apply |s| s.settings.state_first = true;
            InstructionAnyType "instruction-any-type": D 4, sql ["instruction-any-type.sql"], demo "scenarios/quickstart.toml",
                summary "instruction read without the message_type filter (000 Bootstrap 6)",
                apply no_settings;
            Polls004 "polls-004": D 5, sql [], demo "scenarios/slow-review.toml",
                summary "watchers poll every 8 s; the pause watcher gives up after 150 polls (\"20 minutes\", 004)",
                apply |s| {
                    s.timing.background_poll_ms = 8_000;
                    s.timing.pause_poll_ms = 8_000;
                    s.timing.pause_timeout_ms = 150 * 8_000;
                };
            DetectByTimestamp "detect-by-timestamp": D 6, sql [], demo "scenarios/faults/same-second-burst.toml",
                summary "new conductor messages by `ORDER BY timestamp DESC LIMIT 1` (004) instead of `id > last_processed`",
                apply |s| s.settings.detect_by_timestamp = true;
            Thresholds002 "thresholds-002": D 7, sql [], demo "scenarios/context-thresholds.toml",
                summary "context: handoff preparation at 65 %, mandatory exit at 75 % (002)",
                apply |s| {
                    s.context.evaluate_at_pct = 65;
                    s.context.proceed_below_pct = 70.max(s.context.evaluate_at_pct);
                    s.context.ceiling_pct = 75;
                };
            ThresholdsHeadroom "thresholds-headroom": D 7, sql [], demo "scenarios/context-thresholds.toml",
                summary "context: caution 60 %, critical 75 %, ceiling 80 % (check-context-headroom.sh)",
                apply |s| {
                    s.context.evaluate_at_pct = 60;
                    s.context.proceed_below_pct = 75;
                    s.context.escalate_above_pct = 80;
                    s.context.ceiling_pct = 80;
                };
            ResumptionStatusType "resumption-status-type": D 8, sql ["resumption-status-type.sql"], demo "scenarios/examples/mid-session-resumption.toml",
                summary "resumption message typed `resumption_status` as the text says (the CHECK allows only `resumption`)",
                apply no_settings;
            StrictTerminal "strict-terminal": D 9, sql [], demo "scenarios/examples/clean-exit-handoff.toml",
                summary "`exited` is absolute: the conductor never moves an exited task to fix_proposed to relaunch it",
                apply |s| s.settings.relaunch_exited = false;
            TableTransitionsOnly "table-transitions-only": D 10, sql [], demo "scenarios/slow-review.toml",
                summary "the oracle accepts only the transitions in 002's table, not those the text implies",
                apply |s| s.settings.implied_transitions = false;
            Fencing "fencing": D 11, sql ["fencing.sql"], demo "scenarios/faults/zombie.toml",
                summary "every musician UPDATE of its task row also checks `session_id = :session_id`",
                apply no_settings;
            EscalateOverTwo "escalate-over-two": D 12, sql [], demo "scenarios/deviation-escalation.toml",
                summary "deviation escalation on \"> 2 deviations\" (000 text) instead of REF-6 (2+ Medium or 1+ High)",
                apply |s| s.settings.escalate_over_two = true;
            TerminalErrorNoMessage "terminal-error-no-message": D 13, sql [], demo "scenarios/examples/fifth-failure.toml",
                summary "the 5th failure writes `exited` with no final message (004 \"Terminal Failure (5th retry)\") instead of a final message first (000 \"Terminal Write Atomicity\")",
                apply |s| s.settings.terminal_error_message = false;
            HeartbeatUntilExit "heartbeat-until-exit": D 14, sql [], demo "scenarios/faults/slow-clean-exit.toml",
                summary "a clean exit keeps its background watcher (and heartbeat) until the final write (000 \"Reference: Watcher Protocol Detail\": a watcher runs \"until terminal state\") instead of stopping every watcher first (000 \"Clean Exit Protocol\" 2)",
                apply |s| s.settings.watcher_until_exit = true;
            RepliesCiteRequest "replies-cite-request": D 15, sql [], demo "scenarios/faults/reply-to-zombie.toml",
                summary "every conductor answer ends `In reply to: #<request id>`; a musician acts only on a reply to its own request, and a hand-over closes the replaced session's requests",
                apply |s| s.settings.replies_cite_request = true;
            ExitRequestedConductorOnly "exit-requested-conductor-only": D 16, sql [], demo "scenarios/exit-requested.toml",
                summary "`exit_requested` is only the conductor's own end state (004 \"Conductor States (task-00)\"): a musician does not take it as a request to exit (000 and 002 \"States the Conductor Sets\"), and the oracle rejects it on a musician's row",
                apply |s| s.settings.exit_request_to_musician = false;
            // Not a disagreement: what the seeds imply (002 "Guard Clause Rules": the conductor
            // "detects the stale heartbeat, reviews state" before it hands over) against the
            // simulator's earlier conductor, which acted on its last poll.
            ActOnPoll "act-on-poll": D 0, sql [], demo "scenarios/faults/random-faults.toml",
                summary "the conductor hands a stale task over on its last poll, without re-reading the row first",
                apply |s| s.settings.act_on_poll = true;
            // Not a disagreement: the seeds are silent on a launch that never claims.
            NoRelaunchUnclaimed "no-relaunch-unclaimed": D 0, sql [], demo "scenarios/faults/crash-before-claim.toml",
                summary "the conductor only acts on the seeds' staleness rule: no relaunch when a launched session never claims, no hand-over of a fix proposed to a session that went silent",
                apply |s| s.settings.relaunch_unclaimed = false;
            // The conductor's own choices where the seeds are silent (docs/protocol.md C37-C39): each
            // restores one habit of the simulator's first conductor, `first-conductor` all of them, so
            // `rehearsal compare --variants default,first-conductor` measures what the charitable
            // reading changes.
            AnswerOnPoll "answer-on-poll": D 0, sql [], demo "scenarios/slow-review.toml",
                summary "the conductor answers a request on its poll, without reading the row again: its answer may land on a row that exited or changed hands (C37)",
                apply |s| s.conductor.reread_before_answer = false;
            SilentReviews "silent-reviews": D 0, sql [], demo "scenarios/slow-review-heartbeat.toml",
                summary "the conductor writes no heartbeat while it reviews (C38): a review longer than 9 minutes makes a waiting musician call it down",
                apply |s| s.conductor.review_heartbeat_ms = Some(0);
            IgnoreClaimBlocked "ignore-claim-blocked": D 0, sql [], demo "scenarios/examples/guard-block.toml",
                summary "the conductor notes `claim_blocked` and does nothing (C39): a row no session holds stays so",
                apply |s| s.conductor.claim_blocked = ClaimBlockedReply::Ignore;
            FirstConductor "first-conductor": D 0, sql [], demo "scenarios/faults/random-faults.toml",
                summary "the simulator's first conductor: answer-on-poll, silent-reviews and ignore-claim-blocked together",
                apply |s| {
                    s.conductor.reread_before_answer = false;
                    s.conductor.review_heartbeat_ms = Some(0);
                    s.conductor.claim_blocked = ClaimBlockedReply::Ignore;
                };
            // Not a disagreement: a check the seeds do not describe (docs/protocol.md C32).
            CeilingBeforeWork "ceiling-before-work": D 0, sql [], demo "scenarios/context-thresholds.toml",
                summary "before every agent, review, rework, report and escalation the musician predicts its worst-case cost and hands off below the ceiling without asking the conductor",
                apply |s| s.settings.ceiling_before_work = true;
            // Not a disagreement: 000 "Mode Transitions" (Timeout handling 3) says to set `error`
            // and send a timeout message, not whether it counts against the five retries (C21).
            TimeoutNotCounted "timeout-not-counted": D 0, sql [], demo "scenarios/slow-review.toml",
                summary "a pause-watcher TIMEOUT sets `error` with its message but does not count against the five error retries (retry_count unchanged)",
                apply |s| s.settings.timeout_counts_retry = false;
            // 000 "Example: Bootstrap & First Execution", Summary: "Bootstrap takes ~5 minutes";
            // by default a bootstrap costs only its launch delay and statements (~35 s), N18.
            Bootstrap5min "bootstrap-5min": D 0, sql [], demo "scenarios/quickstart.toml",
                summary "a bootstrap takes 4-6 minutes after the claim (000 \"Bootstrap takes ~5 minutes\") instead of its statements alone (~35 s)",
                apply |s| s.timing.bootstrap_ms = Dist::uniform(240_000, 360_000);
            // Not a disagreement: 003 says "recent" and "stale" with no number (C25).
            HandoffStaleByAge "handoff-stale-by-age": D 0, sql [], demo "scenarios/slow-review.toml",
                summary "a HANDOFF is stale when written more than conductor.staleness_s (9 min) before the successor's claim, instead of when written by a session other than the task's previous holder",
                apply |s| s.settings.handoff_stale_by_age = true;
            ExitRequestNoState "exit-request-no-state": D 16, sql [], demo "scenarios/exit-requested.toml",
                summary "a session asked to exit writes no state: its final `handoff` message is its last write and the row stays `exit_requested` for the successor's claim (002's table has no `exit_requested → exited`), instead of 000 \"Clean Exit Protocol\" 7's `exited`",
                apply |s| s.settings.exit_request_no_state = true;
            // Not a disagreement: 000 "Emergency Messages" says "Kill current subagent
            // immediately (urgent: 'stop all work')" and no more (C23, C41).
            EmergencyStopEscalates "emergency-stop-escalates": D 0, sql [], demo "scenarios/emergency.toml",
                summary "an urgent emergency's stop is reported to the conductor (an `error` message, `error` with last_error `emergency_stop`) and the musician pauses for its answer, instead of waiting, `working`, for the conductor's next message",
                apply |s| s.settings.emergency_stop_escalates = true;
            // Not a disagreement: 000 says ">2 tasks in `working` state (potential crash
            // indicator)" and no more (C42).
            WorkingCountStaleOnly "working-count-stale-only": D 0, sql [], demo "scenarios/faults/working-tasks-on-resumption.toml",
                summary "a successor reports 000's \">2 tasks in `working`\" only for other tasks in `working` whose heartbeat is older than conductor.staleness_s (the crash the seed says it indicates), instead of every other task in `working`",
                apply |s| s.settings.working_count_stale_only = true;
            // Not a disagreement of its own: 000 "Completion Flow" 5 implies `review_approved →
            // complete`, which 002's table lacks (D10 lists it as implied; C20).
            CompleteFromApproved "complete-from-approved": D 0, sql [], demo "scenarios/quickstart.toml",
                summary "after the completion review's approval the musician writes `complete` straight from `review_approved` (000 \"Completion Flow\" 5), instead of `resume_working` first (002's `review_approved → working`, `working → complete`)",
                apply |s| s.settings.complete_from_approved = true;
            // The repaired protocol's own changes (issue 28, docs/repaired-protocol.md): not readings
            // of the seeds but the fixes the proof suite shows are needed on top of fencing and
            // heartbeat-until-exit (replies-cite-request was tried and left out: no run needs it).
            DurableCursor "durable-cursor": D 0, sql ["durable-cursor.sql"], demo "scenarios/faults/crash-after-answer.toml",
                summary "every read of new conductor messages is one atomic receipt message (`send_receipt`); a successor resumes after its predecessor's last receipt instead of handling again what it read (000 keeps last_processed_message_id in memory); a message counts as handled at the commit of the receipt that returned it",
                apply |s| s.settings.durable_cursor = true;
            PatientRelaunch "patient-relaunch": D 0, sql [], demo "scenarios/faults/long-hang-before-claim.toml",
                summary "the conductor launches a task's next session only after its launched session has been silent before its claim for 30 minutes (conductor.claim_overdue_s = 1800), longer than any hang the fault model injects, and only if a fresh read of the row still finds it unclaimed (the poll may be reviews old), instead of one staleness window (9 min) on the poll's word",
                apply |s| {
                    s.conductor.claim_overdue_s = Some(PATIENT_CLAIM_OVERDUE_S);
                    s.settings.confirm_unclaimed = true;
                };
            ReleaseStale "release-stale": D 0, sql [], demo "scenarios/proof/proof-ci-smoke.toml",
                summary "the conductor's hand-over of a silent session also clears the row's session_id (`release_task`), so a replaced session that wakes is fenced out at its first row write instead of writing until its successor claims",
                apply |s| s.settings.release_stale = true;
            UncapLostSessions "uncap-lost-sessions": D 0, sql [], demo "scenarios/proof/proof-random-faults.toml",
                summary "a session the conductor replaces because it went silent (stale heartbeat, claim overdue) does not count against the cap of 5 sessions per task (docs/protocol.md C8); only sessions that ended by a write of their own do, so crashes and hangs during the fault phase cannot make the conductor give a task up",
                apply |s| s.settings.uncap_lost_sessions = true;
            // demo: Its collapse needs 64 musicians (docs/protocol.md C62); at 12 the demo shows it changes nothing.
            ConductorBusyBackoff "conductor-busy-backoff": D 0, sql [], demo "scenarios/faults/contention.toml",
                summary "the conductor retries a statement answered SQLITE_BUSY with backoff (1 s, 2 s, 4 s, … at most 60 s apart) for as long as it takes, instead of ending after 4 SQLITE_BUSY (docs/protocol.md C43, C62): under heavy contention the fleet slows down instead of collapsing",
                apply |s| s.settings.conductor_busy_backoff = true;
            RetryFailedReads "retry-failed-reads": D 0, sql [], demo "scenarios/faults/io-error-on-pause-poll.toml",
                summary "a read that fails with a disk error (SQLITE_IOERR) is tried again a second later, up to 3 times, as SQLITE_BUSY is (docs/protocol.md C13), instead of ending the actor (C43): a pause watcher whose poll failed otherwise ends as if the conductor had timed out, and its session reports an `error` over an approval",
                apply |s| s.settings.retry_failed_reads = true;
            LeaseSelfCheck "lease-self-check": D 0, sql [], demo "scenarios/proof/hang-at-staleness.toml",
                summary "a session holds its task on a lease of its own clock, the staleness threshold less one statement round trip and a second (sim/actors/lease.rs): every actor of the session checks it before each request and when each returns, writes a heartbeat first past the refresh threshold, and ends the session without writing past the lease, instead of acting on after a hang the conductor may have handed it over in; the durable cursor's receipt carries the lease's end and comms.db refuses it past that instant",
                apply |s| s.settings.lease_self_check = true;
            CheckedTransitions "checked-transitions": D 0, sql ["checked-transitions.sql"], demo "scenarios/faults/answer-during-timeout.toml",
                summary "the musician's `set_error`, `set_escalation`, `set_context_warning` and `mark_exited` also check the row's state (the states 002 lets the musician leave by them, with D10's implied ones), so a conductor answer that lands between a pause TIMEOUT's read and its `error`, or during a clean exit's HANDOFF, is not overwritten: a write that changes no row while the row still names the session finds the answer and acts on it (a TIMEOUT writes its state before its message, as 000 \"Mode Transitions\" Timeout handling 3 orders them)",
                apply |s| s.settings.checked_transitions = true;
            ClaimBlockedOwnerAlive "claim-blocked-owner-alive": D 0, sql [], demo "scenarios/proof/twin-then-fix.toml",
                summary "a `claim_blocked` record does not outlive the conductor's later answer to the task, and the conductor's intervention on one leaves a claimable row (`fix_proposed` after its answer) alone while the session the row names is unhandled and beats, instead of handing a live task over to a new session (docs/protocol.md C80)",
                apply |s| s.settings.claim_blocked_owner_alive = true;
            ClaimCompareAndSet "claim-compare-and-set": D 0, sql ["claim-compare-and-set.sql"], demo "scenarios/proof/late-twin-on-answered-row.toml",
                summary "the claim takes the row only if it still names the owner the claiming session saw (`:previous_session_id`: a successor's `read_task_record`, none for a task's first session), so a double launch's twin, late or early, cannot take a row whose owner claimed it and is alive, whatever its state (a `fix_proposed` answer the owner is reworking, an `exit_requested` it is leaving), and a task's first session claims only a row no session has claimed yet (`watching`), not one the conductor released for its successor (docs/protocol.md C82, C89)",
                apply no_settings;
            CheckedAnswers "checked-answers": D 0, sql ["checked-answers.sql"], demo "scenarios/proof/exit-request-over-review.toml",
                summary "a musician's `set_needs_review` also checks the row's state (the states 002 lets it ask for a review from), so a conductor's exit request that lands between its decision and its write is not overwritten, and the conductor's `set_task_state` changes no `complete` row and puts a review's answer only on a row that asked for one (docs/protocol.md C83)",
                apply |s| s.settings.checked_answers = true;
            ReleaseAskedExit "release-asked-exit": D 0, sql [], demo "scenarios/proof/late-exited-after-exit-request.toml",
                summary "the hand-over of a session asked to exit that went silent before its `exited` releases the row (`release_task`: `exit_requested` kept, session_id cleared) before the successor's launch, as `release-stale` does for a stale row, so a late `exited` of the asked session is fenced out instead of blocking the successor's claim (docs/protocol.md C81)",
                apply |s| s.settings.release_asked_exit = true;
            // Not a disagreement: the simulator's reading before issue 42 (docs/protocol.md C50).
            CeilingAfterAgent "ceiling-after-agent": D 0, sql [], demo "scenarios/context-thresholds.toml",
                summary "no escalation before the work that would cross the ceiling: the ceiling is met after an agent and the session hands off there, above it if the return was large",
                apply |s| s.settings.ceiling_escalates = false;
            // Not a disagreement: the simulator's reading before issue 42 (docs/protocol.md C51).
            MessagesLoggedOnly "messages-logged-only": D 0, sql [], demo "scenarios/faults/zombie-reads-handover.toml",
                summary "a session that reads the conductor's hand-over of its own task logs it and works on, instead of stopping at once",
                apply |s| s.settings.reads_handover = false;
            // Not a disagreement: the simulator's reading before C180 (docs/protocol.md).
            NoWakePoll "no-wake-poll": D 0, sql [], demo "scenarios/faults/contradictory-resumption.toml",
                summary "a session woken late from a hang reads only what its watcher reports by exiting (000 \"Background Watcher\" read literally), instead of polling the messages itself when its watcher has not polled them since the wake (C180): it may write before it learns of its hand-over",
                apply |s| s.settings.wake_poll = false;
        }
    };
}
pub(crate) use variant_table;

/// `VariantId` and its words, from the table.
macro_rules! variant_ids {
    ($($id:ident $name:literal: D $d:literal, sql [$($sql:literal)?], demo $demo:literal, summary $summary:literal, apply $apply:expr;)*) => {
        /// A protocol variant, from the command line (`--variant`) or a scenario's
        /// `[protocol] variants` to the plan.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum VariantId {
            $($id,)*
        }

        impl VariantId {
            pub const ALL: [VariantId; [$($name),*].len()] = [$(VariantId::$id),*];

            /// The word `--variant` and `[protocol] variants` take.
            pub fn name(self) -> &'static str {
                match self {
                    $(VariantId::$id => $name,)*
                }
            }

            /// The disagreement of docs/protocol.md it reads (0: none).
            pub fn disagreement(self) -> u8 {
                match self {
                    $(VariantId::$id => $d,)*
                }
            }

            /// Its SQL file's path from the repository's root, if it replaces statements.
            pub fn sql_file(self) -> Option<&'static str> {
                match self {
                    $(VariantId::$id => variant_ids!(@sql $($sql)?),)*
                }
            }

            /// The shipped scenario `rehearsal findings` runs it on.
            pub fn demo(self) -> &'static str {
                match self {
                    $(VariantId::$id => $demo,)*
                }
            }
        }

        /// Every variant's name, in the table's order.
        pub const VARIANT_NAMES: &[&str] = &[$($name),*];
    };
    (@sql) => { None };
    (@sql $sql:literal) => { Some(concat!("scenarios/variants/", $sql)) };
}
variant_table!(variant_ids);

impl VariantId {
    pub fn parse(name: &str) -> Option<VariantId> {
        VariantId::ALL.into_iter().find(|v| v.name() == name)
    }
}

impl std::fmt::Display for VariantId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// `Ok` for a variant name; otherwise the message that lists the known ones.
pub fn check_variant_name(name: &str) -> Result<VariantId, String> {
    VariantId::parse(name).ok_or_else(|| {
        let hint = super::suggest::did_you_mean(name, VARIANT_NAMES.iter().copied());
        format!("unknown variant `{name}`{hint}; variants: {}", VARIANT_NAMES.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_name_passes_and_an_unknown_one_lists_them_all() {
        assert_eq!(check_variant_name("fencing"), Ok(VariantId::Fencing));
        assert_eq!(VariantId::Fencing.sql_file(), Some("scenarios/variants/fencing.sql"));
        assert_eq!((VariantId::StateFirst.sql_file(), VariantId::StateFirst.disagreement()), (None, 3));
        let message = check_variant_name("Fencing").unwrap_err();
        assert!(
            message.starts_with("unknown variant `Fencing`; did you mean `fencing`?; variants: guard-not-in, worked-by-session-id, "),
            "{message}"
        );
        assert!(
            message.ends_with(
                ", terminal-error-no-message, heartbeat-until-exit, replies-cite-request, exit-requested-conductor-only, act-on-poll, no-relaunch-unclaimed, answer-on-poll, silent-reviews, ignore-claim-blocked, first-conductor, ceiling-before-work, timeout-not-counted, bootstrap-5min, handoff-stale-by-age, exit-request-no-state, emergency-stop-escalates, working-count-stale-only, complete-from-approved, durable-cursor, patient-relaunch, release-stale, uncap-lost-sessions, conductor-busy-backoff, retry-failed-reads, lease-self-check, checked-transitions, claim-blocked-owner-alive, claim-compare-and-set, checked-answers, release-asked-exit, ceiling-after-agent, messages-logged-only, no-wake-poll"
            ),
            "{message}"
        );
    }
}
