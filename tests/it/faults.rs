//! Faults, oracles and variants: each shipped scenario under scenarios/faults/ shows a flaw
//! with the seeds' own protocol and its absence under the fixing variant; a sweep of random
//! faults ends with only the violations the scenario allows.

use std::path::PathBuf;

use rehearsal::base::dist::Dist;
use rehearsal::input::scenario::Scenario;
use rehearsal::run::{run_scenario, RunOptions, RunSummary};

use rehearsal::vocab::{RuleId, Stmt, TaskState};

use crate::support::{actor, root, session, trace};

fn scenario(name: &str) -> PathBuf {
    root().join("scenarios/faults").join(format!("{name}.toml"))
}

fn run_with(name: &str, variants: &[&str], seed: Option<u64>) -> (tempfile::TempDir, RunSummary) {
    let tmp = tempfile::tempdir().unwrap();
    let path = scenario(name);
    let options = RunOptions {
        scenario_path: path.clone(),
        seed,
        out_dir: Some(tmp.path().to_path_buf()),
        variants: variants.iter().map(|v| v.to_string()).collect(),
    };
    let summary = run_scenario(Scenario::load(&path).unwrap(), &options).unwrap();
    (tmp, summary)
}

fn first(summary: &RunSummary) -> (&str, &str) {
    let v = summary.verdict.violations.first().unwrap_or_else(|| panic!("no violation: {}", summary.render()));
    (v.rule.as_str(), v.explanation.as_str())
}

#[test]
fn a_zombie_overwrites_its_successor_without_fencing_and_is_fenced_out_with_it() {
    let (_dir, plain) = run_with("zombie", &[], None);
    assert!(!plain.verdict.passed());
    let (rule, why) = first(&plain);
    assert_eq!(rule, "owner-writes-only", "{}", plain.render());
    assert!(why.contains("hung from t=900000 ms") && why.contains("but the row belonged to session"), "{why}");
    assert!(plain.replay.contains("scenarios/faults/zombie.toml --seed 21"), "{}", plain.replay);
    let (dir, fenced) = run_with("zombie", &["fencing"], None);
    assert!(fenced.verdict.passed(), "{}", fenced.render());
    assert!(fenced.replay.contains("--variant fencing"));
    let rows = trace(dir.path());
    let fenced_out = rows.iter().find(|r| r.event == "fenced_out").expect("the zombie learns it lost the task");
    assert_eq!(fenced_out.place(), Some(session("task-01.S1")), "{fenced_out:?}");
    assert_eq!(fenced.tasks_complete, fenced.tasks_total);
}

#[test]
fn the_not_in_guard_lets_a_second_session_claim_a_task_under_review() {
    let (dir, plain) = run_with("claim-under-review", &[], None);
    assert!(plain.verdict.passed(), "{}", plain.render());
    let rows = trace(dir.path());
    let twin = actor("task-01.S1b");
    let blocked = rows.iter().find(|r| r.actor == Some(twin) && r.stmt == Some(Stmt::ClaimTask)).expect("the twin tries to claim");
    assert_eq!(
        (blocked.rows.as_str(), blocked.state_after),
        ("0", Some(TaskState::NeedsReview)),
        "the IN guard blocks it while the task is under review"
    );
    assert!(rows.iter().any(|r| r.actor == Some(twin) && r.stmt == Some(Stmt::InsertFallbackRow)));
    let (_dir, not_in) = run_with("claim-under-review", &["guard-not-in"], None);
    let (rule, why) = first(&not_in);
    assert_eq!(rule, "allowed-transitions");
    assert!(why.contains("claimed task-01 while it was `needs_review`"), "{why}");
    assert!(not_in.verdict.rules().contains(&"one-live-session-per-task"));
}

#[test]
fn a_same_second_burst_is_missed_by_timestamp_detection_but_not_by_id() {
    let (dir, by_id) = run_with("same-second-burst", &[], None);
    assert!(by_id.verdict.passed(), "{}", by_id.render());
    let db = crate::support::open_db(dir.path());
    let stamps: Vec<String> = db
        .prepare("SELECT timestamp FROM orchestration_messages WHERE message_type = 'emergency'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(stamps.len(), 2);
    assert_eq!(stamps[0], stamps[1], "the burst is written within one second");
    let (_dir, by_time) = run_with("same-second-burst", &["detect-by-timestamp"], None);
    let (rule, why) = first(&by_time);
    assert_eq!(rule, "messages-seen-once");
    assert!(why.contains("(emergency) to task-01") && why.contains("was read by nobody"), "{why}");
}

#[test]
fn a_crash_between_state_and_message_strands_needs_review_only_in_state_first_order() {
    let (dir, message_first) = run_with("crash-between-state-and-message", &[], None);
    assert!(message_first.verdict.passed(), "{}", message_first.render());
    let rows = trace(dir.path());
    let crash = rows.iter().find(|r| r.event == "fault_crash").expect("the scripted crash");
    assert!(crash.detail.contains("crashed after `set_needs_review`"), "{crash:?}");
    let s2 = actor("task-01.S2");
    assert!(rows.iter().any(|r| r.actor == Some(s2) && r.stmt == Some(Stmt::ClaimTask) && r.rows == "1"), "S2 takes over");
    let (_dir, state_first) = run_with("crash-between-state-and-message", &["state-first"], None);
    let (rule, why) = first(&state_first);
    assert_eq!(rule, "message-before-state");
    assert!(why.contains("in `needs_review` with no review request"), "{why}");
}

/// Runs watcher-jitter.toml with a constant jitter and a conductor that acts on its last poll;
/// true if a live session was handed over as stale.
fn false_stale_at(jitter_ms: i64, seed: u64) -> bool {
    let tmp = tempfile::tempdir().unwrap();
    let path = scenario("watcher-jitter");
    let mut loaded = Scenario::load(&path).unwrap();
    loaded.faults.watcher_jitter_ms = Some(Dist::Const(jitter_ms));
    let options =
        RunOptions { scenario_path: path, seed: Some(seed), out_dir: Some(tmp.path().to_path_buf()), variants: vec!["act-on-poll".into()] };
    run_scenario(loaded, &options).unwrap().verdict.rules().contains(&"no-false-stale")
}

#[test]
fn watcher_jitter_past_the_one_minute_buffer_gets_live_sessions_declared_stale() {
    // A conductor that acts on its last poll hands a live session over.
    let (_dir, on_poll) = run_with("watcher-jitter", &["act-on-poll"], None);
    assert_eq!(first(&on_poll).0, "no-false-stale", "{}", on_poll.render());
    assert!(first(&on_poll).1.contains("was alive and running (not crashed, not frozen by a hang"));
    // The default conductor re-reads the row first (002 "Guard Clause Rules") and finds the
    // late refresh; what remains is the heartbeat age it read past the 540 s threshold.
    let (_dir, shipped) = run_with("watcher-jitter", &[], None);
    assert!(!shipped.verdict.rules().contains(&"no-false-stale"), "{}", shipped.render());
    let breach = shipped.verdict.violations.iter().find(|v| v.rule == RuleId::Budget && v.explanation.starts_with("heartbeat_age_s"));
    assert!(breach.is_some(), "{}", shipped.render());
    // The smallest jitter (5 s steps) at which a false alarm first happens, on 3 seeds:
    // refresh after 480 s at the first poll (15 s + jitter + statements) must land before the
    // conductor's 540 s, so the threshold sits near 60 − 15 − statement time ≈ 40 s.
    let smallest =
        (0..=18).map(|step| step * 5_000).find(|j| (25..28).any(|seed| false_stale_at(*j, seed))).expect("90 s of jitter already fails");
    eprintln!("smallest watcher jitter with a false stale alarm: {smallest} ms");
    assert!((30_000..=60_000).contains(&smallest), "threshold {smallest} ms");
    assert!(!(25..28).any(|seed| false_stale_at(smallest - 5_000, seed)));
}

#[test]
fn random_faults_over_many_seeds_show_only_the_allowed_flaws_and_no_harness_error() {
    let mut rules_seen = std::collections::BTreeSet::new();
    let seeds = 1..41u64;
    for seed in seeds.clone() {
        let (_dir, summary) = run_with("random-faults", &[], Some(seed));
        assert!(summary.verdict.passed(), "seed {seed}: {}", summary.render());
        assert!(summary.drawn.iter().any(|(name, _)| name == "crash_probability"), "swarm odds are logged");
        rules_seen.extend(summary.verdict.rules());
    }
    // The faults are not idle: across the sweep the default protocol shows its known flaws.
    assert!(rules_seen.contains("owner-writes-only"), "{rules_seen:?}");
}

#[test]
fn the_variants_of_the_other_disagreements_change_what_the_run_does() {
    let examples = |name: &str| root().join("scenarios/examples").join(format!("{name}.toml"));
    let run_example = |name: &str, variant: &str| {
        let tmp = tempfile::tempdir().unwrap();
        let options = RunOptions {
            scenario_path: examples(name),
            seed: None,
            out_dir: Some(tmp.path().to_path_buf()),
            variants: vec![variant.to_string()],
        };
        (rehearsal::run::run(&options).unwrap(), tmp)
    };
    // 8: `resumption_status` fails the CHECK constraint when S2 reports its takeover.
    let (summary, _t) = run_example("mid-session-resumption", "resumption-status-type");
    assert_eq!(first(&summary).0, "no-constraint-failure", "{}", summary.render());
    // 9: with `exited` absolute, a clean handoff is never resumed: liveness fails.
    let (summary, _t) = run_example("clean-exit-handoff", "strict-terminal");
    assert_eq!(summary.verdict.rules(), vec!["liveness"], "{}", summary.render());
    // 2: worked_by is the session id.
    let (summary, tmp) = run_example("bootstrap", "worked-by-session-id");
    assert!(summary.verdict.passed());
    let (worked_by, session): (String, String) = crate::support::open_db(tmp.path())
        .query_row("SELECT worked_by, session_id FROM orchestration_tasks WHERE task_id = 'task-01'", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    assert_eq!(worked_by, session);
    // 10: the strict table rejects the implied needs_review → error of a pause timeout.
    let tmp = tempfile::tempdir().unwrap();
    let options = RunOptions {
        scenario_path: root().join("scenarios/slow-review.toml"),
        seed: None,
        out_dir: Some(tmp.path().to_path_buf()),
        variants: vec!["table-transitions-only".to_string()],
    };
    let summary = rehearsal::run::run(&options).unwrap();
    assert!(
        summary
            .verdict
            .violations
            .iter()
            .any(|v| v.rule == RuleId::AllowedTransitions && v.explanation.contains("from `needs_review` to `error`")),
        "{}",
        summary.render()
    );
}

#[test]
fn write_lock_contention_is_modelled_in_virtual_time_and_a_claim_lost_to_busy_strands_the_task() {
    let (_dir, summary) = run_with("contention", &[], None);
    assert!(summary.verdict.passed(), "{}", summary.render());
    assert!(summary.contention.lock_waits > 50 && summary.contention.busy_errors > 0, "{:?}", summary.contention);
    assert!(summary.render().contains(&format!("contention   {} lock waits", summary.contention.lock_waits)));
    // Seed 16: a session whose claim fails after its BUSY retries dies before claiming; the
    // task stays `watching` with no heartbeat, which the seeds' staleness rule never sees.
    let (dir, stranded) = run_with("contention", &["no-relaunch-unclaimed"], Some(16));
    assert_eq!(stranded.verdict.rules(), vec!["liveness"], "{}", stranded.render());
    assert!(stranded.verdict.violations[0].explanation.contains("ended in `watching`"));
    // The verdict names the session that ended on SQLITE_BUSY, in a line of its own.
    let named = "session task-04.S1 ended at t=0h 00m 50s after 4 SQLITE_BUSY on claim_task; 11 of 12 tasks complete";
    assert!(stranded.verdict.explanation.iter().any(|l| l == named), "{:?}", stranded.verdict.explanation);
    let rows = trace(dir.path());
    assert!(rows.iter().any(|r| r.stmt == Some(Stmt::ClaimTask) && r.is_busy()), "a claim answered SQLITE_BUSY");
    // The default conductor relaunches once the claim is a staleness window overdue.
    let (dir, relaunched) = run_with("contention", &[], Some(16));
    assert!(relaunched.verdict.passed() && relaunched.tasks_complete == relaunched.tasks_total, "{}", relaunched.render());
    assert!(trace(dir.path()).iter().any(|r| r.event == "claim_overdue"));
}

/// Issue 43 (docs/protocol.md C62): at 64 musicians the conductor gives up after 4 SQLITE_BUSY
/// and the verdict names it; under `conductor-busy-backoff` it retries and the fleet finishes.
#[test]
fn a_conductor_that_gives_up_on_busy_is_named_and_backoff_keeps_the_fleet_alive() {
    let dir = tempfile::tempdir().unwrap();
    let text =
        std::fs::read_to_string(root().join("scenarios/faults/contention.toml")).unwrap().replace("\ncount = 12\n", "\ncount = 64\n");
    let path = dir.path().join("contention-64.toml");
    std::fs::write(&path, text).unwrap();
    let run = |variants: Vec<String>| {
        let out = tempfile::tempdir().unwrap();
        let options = RunOptions { scenario_path: path.clone(), seed: Some(1), out_dir: Some(out.path().to_path_buf()), variants };
        run_scenario(Scenario::load(&path).unwrap(), &options).unwrap()
    };
    let collapsed = run(Vec::new());
    let named = "the conductor (conductor) ended at t=0h 02m 47s after 4 SQLITE_BUSY on conductor_heartbeat; 0 of 64 tasks complete";
    assert!(collapsed.verdict.explanation.iter().any(|l| l.starts_with(named)), "{:?}", collapsed.verdict.explanation);
    assert!(collapsed.measured.designer.collapsed() && collapsed.render().contains("(collapsed: the conductor ended on SQLITE_BUSY"));
    let backed_off = run(vec!["conductor-busy-backoff".to_string()]);
    assert!(!backed_off.measured.designer.collapsed(), "{:?}", backed_off.verdict.explanation);
    assert_eq!(backed_off.tasks_complete, 64, "{}", backed_off.render());
}

#[test]
fn context_spikes_end_in_a_hard_stop_without_handoff_and_resumption_from_the_last_checkpoint() {
    let (dir, summary) = run_with("context-exhaustion", &[], None);
    assert!(summary.verdict.passed(), "the expected violation occurs and nothing else: {}", summary.render());
    let rows = trace(dir.path());
    let stop = rows.iter().find(|r| r.event == "context_exhausted").expect("a hard stop at 100 %");
    assert!(!rows.iter().any(|r| r.actor == stop.actor && r.stmt == Some(Stmt::SendHandoff)), "a hard stop writes no HANDOFF message");
    let lines = crate::support::status_lines(dir.path(), &stop.task_id().expect("a session's task"));
    assert!(lines.iter().any(|l| l.starts_with("  HANDOFF: missing")), "the successor finds no HANDOFF");
    assert!(lines.iter().any(|l| l.starts_with("  Assessment: needs verification")));
    assert_eq!(summary.tasks_complete, summary.tasks_total);
}

/// docs/protocol.md C151 (issue 42, R1): the hard stop is where an agent's return fills the
/// window; a hand-off already decided after an escalation makes its last writes at 100 %
/// (context-exhaustion seed 27: a session escalates at 96 %, then its final message says
/// "Context Usage: 100%" and `exited` follows it), and context never reads above 100 %.
#[test]
fn a_handoff_under_way_when_the_window_fills_makes_its_last_writes() {
    let (dir, _summary) = run_with("context-exhaustion", &[], None);
    let messages = crate::support::messages(dir.path());
    let full = messages.iter().find(|m| m.4.starts_with("EXITED: ") && m.4.contains("Context Usage: 100%")).expect("an exit at 100 %");
    let rows = trace(dir.path());
    let exits: Vec<_> = rows.iter().filter(|r| r.stmt == Some(Stmt::MarkExited) && r.session == full.2).collect();
    assert_eq!(exits.len(), 1, "the terminal write follows the final message");
    assert!(!rows.iter().any(|r| r.event == "context_exhausted" && r.session == full.2), "no hard stop for it");
    let lines = crate::support::status_lines(dir.path(), &full.1);
    assert!(lines.iter().all(|l| crate::support::ctx_of(l) <= 100));
}

#[test]
fn sessions_lost_before_their_claim_or_while_awaiting_a_fix_are_replaced_unless_only_the_seeds_rule_runs() {
    let path = root().join("scenarios/faults/crash-before-claim.toml");
    let run = |variants: Vec<String>| {
        let tmp = tempfile::tempdir().unwrap();
        let options = RunOptions { scenario_path: path.clone(), seed: None, out_dir: Some(tmp.path().to_path_buf()), variants };
        let summary = run_scenario(Scenario::load(&path).unwrap(), &options).unwrap();
        (tmp, summary)
    };
    let (dir, relaunching) = run(Vec::new());
    assert!(relaunching.verdict.passed(), "{}", relaunching.render());
    assert_eq!(relaunching.tasks_complete, 2);
    let rows = trace(dir.path());
    let overdue = rows.iter().find(|r| r.event == "claim_overdue").expect("the unclaimed launch is noticed");
    assert!(overdue.detail.starts_with("task-01:"), "{overdue:?}");
    let lost = rows.iter().find(|r| r.event == "stale_detected").expect("the silent session awaiting a fix is handed over");
    assert!(lost.detail.starts_with("task-02") && lost.detail.ends_with("in fix_proposed"), "{lost:?}");
    let (_dir, seeds_only) = run(vec!["no-relaunch-unclaimed".into()]);
    assert_eq!(seeds_only.verdict.headline(), "FAIL: liveness", "{}", seeds_only.render());
    assert_eq!(seeds_only.tasks_complete, 0);
}

#[test]
fn a_slow_clean_exit_is_handed_over_alive_unless_its_watcher_runs_until_the_exit() {
    // docs/protocol.md D14. 000 "Clean Exit Protocol": the watchers stop first, and S1's
    // heartbeat, ~470 s old when its exit starts, passes 540 s while it writes its HANDOFF.
    let (dir, plain) = run_with("slow-clean-exit", &[], None);
    assert!(plain.verdict.passed(), "exactly the expected violations\n{}", plain.render());
    let mut rules = plain.verdict.rules();
    rules.sort();
    // silent-after-hand-over: S1's `exited` comes after the hand-over, before S2's claim.
    assert_eq!(rules, ["allowed-transitions", "budget", "liveness", "messages-seen-once", "no-false-stale", "silent-after-hand-over"]);
    assert_eq!(plain.tasks_complete, 0);
    let rows = trace(dir.path());
    let s1 = session("task-01.S1");
    let exit_starts = rows.iter().find(|r| r.place() == Some(s1) && r.detail.contains("is past the 80% ceiling, handing off now"));
    let stale = rows.iter().find(|r| r.event == "stale_detected").expect("the conductor declares S1 stale");
    let exited = rows.iter().find(|r| r.stmt == Some(Stmt::MarkExited)).expect("S1 writes exited");
    assert!(exit_starts.unwrap().t_ms < stale.t_ms && stale.t_ms < exited.t_ms, "handed over during the exit");
    assert_eq!(exited.place(), Some(s1));
    let handed = rows.iter().rfind(|r| r.stmt == Some(Stmt::SetTaskState) && r.t_ms < exited.t_ms).unwrap();
    assert_eq!(handed.state_after, Some(TaskState::FixProposed), "S1's exited lands on the hand-over");
    let claim = rows.iter().find(|r| r.actor == Some(actor("task-01.S2")) && r.stmt == Some(Stmt::ClaimTask)).unwrap();
    assert_eq!((claim.rows.as_str(), claim.state_after), ("0", Some(TaskState::Exited)), "the guard blocks S2");
    assert!(rows.iter().any(|r| r.actor == Some(actor("task-01.S2")) && r.stmt == Some(Stmt::InsertFallbackRow)));

    // heartbeat-until-exit: the watcher refreshes the heartbeat while S1 writes its HANDOFF.
    let (dir, kept) = run_with("slow-clean-exit", &["heartbeat-until-exit"], None);
    assert!(kept.verdict.violations.is_empty(), "{}", kept.render());
    assert_eq!(kept.tasks_complete, kept.tasks_total);
    let rows = trace(dir.path());
    assert!(!rows.iter().any(|r| r.event == "stale_detected"), "no hand-over of a live session");
    let exited = rows.iter().find(|r| r.stmt == Some(Stmt::MarkExited)).unwrap();
    let refreshed = rows.iter().rfind(|r| r.place() == Some(s1) && r.stmt == Some(Stmt::Heartbeat) && r.t_ms < exited.t_ms);
    let exit_starts = rows.iter().find(|r| r.place() == Some(s1) && r.detail.contains("is past the 80% ceiling, handing off now")).unwrap();
    assert!(refreshed.is_some_and(|r| r.t_ms > exit_starts.t_ms), "a watcher beats during the exit: {refreshed:?}");
    let claim = rows.iter().find(|r| r.actor == Some(actor("task-01.S2")) && r.stmt == Some(Stmt::ClaimTask)).unwrap();
    assert_eq!(claim.rows, "1");
}

/// A hang `after:` a statement: the statement runs (its write committed), then the session
/// freezes; its next statement comes no sooner than the hang's end. Without the hang the
/// session's next statement follows within the hang's length.
#[test]
fn a_hang_after_a_statement_freezes_the_session_once_the_statement_has_run() {
    let hang_ms = 120_000;
    let text = |faults: &str| crate::support::two_step_scenario(1, 1, "", faults);
    let after = format!("[[faults.hang]]\ntask = 1\nat = \"after:claim_task\"\nduration_ms = {hang_ms}\n");
    let tmp = tempfile::tempdir().unwrap();
    for dir in ["hung", "free"] {
        std::fs::create_dir(tmp.path().join(dir)).unwrap();
    }
    let (hung, _) = crate::support::run_text("hang-after", &text(&after), &tmp.path().join("hung"), &[]);
    let (free, _) = crate::support::run_text("free", &text(""), &tmp.path().join("free"), &[]);
    // (t of the claim, its rows, t of the session's next statement) of a run.
    let around_claim = |dir: &std::path::Path| {
        let rows = crate::support::session_sql(dir, "task-01.S1");
        let at = rows.iter().position(|r| r.stmt == Some(Stmt::ClaimTask)).expect("a claim");
        (rows[at].t_ms, rows[at].rows.clone(), rows[at + 1].t_ms)
    };
    let (claimed_ms, claimed_rows, next_ms) = around_claim(&hung);
    assert_eq!(claimed_rows, "1", "the claim ran and changed its row");
    assert!(next_ms >= claimed_ms + hang_ms, "the next statement waits for the hang's end: {claimed_ms} → {next_ms}");
    let hangs: Vec<_> = trace(&hung).into_iter().filter(|r| r.event == "fault_hang").collect();
    assert_eq!(hangs.len(), 1);
    assert_eq!(hangs[0].t_ms, claimed_ms, "the hang starts when the claim's result is in");
    assert!(hangs[0].detail.contains("after `claim_task`"), "{}", hangs[0].detail);
    let (free_claimed_ms, _, free_next_ms) = around_claim(&free);
    assert_eq!(free_claimed_ms, claimed_ms, "the same run up to the claim");
    assert!(free_next_ms < free_claimed_ms + hang_ms, "without the hang the session goes on at once");
}
