//! budget: timing measurements stay within the scenario's budgets.

use super::{Meaning, RuleDoc};
use crate::judging::oracle::latency::Decomposition;
use crate::judging::oracle::{quantiles, Findings, Measurements};
use crate::input::scenario::Scenario;
use crate::vocab::RuleId;

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::Budget,
    says: "timing measurements stay within the scenario's budgets",
    seed: "000 \"Heartbeat Protocol\" and \"Watcher Architecture\": the poll intervals and thresholds the budgets derive from",
    consumes: "the run's measurements, at its end",
    truth: "message notice, review resume, crash detection, heartbeat age of live sessions, exit to claim",
    meaning: Meaning::ProtocolFlaw,
};

/// One timing budget as a run applies it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetLimit {
    /// The measurement it bounds (`Measurements::named`).
    pub name: &'static str,
    pub limit: i64,
    /// Where the limit comes from: the scenario's `[budgets]`, or the seed text and scenario
    /// numbers it is derived from.
    pub source: String,
    /// For a limit derived from the conductor's policy (its cycle and review queue: crash
    /// detection and exit to claim), the conductor profile and policy it was derived from
    /// (docs/protocol.md C115): "conductor profile invented: serial reviews, 30 s poll, …".
    pub conductor: Option<String>,
    /// `message_notice_ms` derived with the pause's answer (docs/protocol.md C85): the limit
    /// of a message that reached no pause (`Decomposition::reached_pause`), the derivation
    /// without that allowance; `limit` applies to one that did.
    pub outside_pause: Option<i64>,
}

impl BudgetLimit {
    /// " (derived from conductor profile …)" for a limit derived from the conductor's policy,
    /// else nothing: what every report line that shows the limit appends to it.
    pub fn derivation_note(&self) -> String {
        self.conductor.as_ref().map_or(String::new(), |c| format!(" (derived from {c})"))
    }

    /// The limit of one measurement: a message that reached no pause has the allowance of
    /// the pause's answer taken off (C85), every other measurement has `limit`.
    pub fn limit_for(&self, d: &Decomposition) -> i64 {
        match self.outside_pause {
            Some(limit) if !d.reached_pause => limit,
            _ => self.limit,
        }
    }
}

/// The measurements whose derived budget includes the conductor's cycle and review queue.
const CONDUCTOR_DERIVED: &[&str] = &["crash_detect_ms", "exit_to_claim_ms"];

/// The numbers of a run's configuration every derived budget is built from (issue 28: a
/// fault-free or single-crash run stays within its budgets by construction, so a breach is
/// news). Each is an upper bound of the scenario's own settings, with its variants applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// One statement's round trip, and with lock contention (`faults.write_hold_ms`) the
    /// longest wait for the write lock before SQLITE_BUSY (`faults.busy_timeout_ms`).
    pub statement_ms: i64,
    /// Injected watcher jitter added to each watcher sleep (`faults.watcher_jitter_ms`).
    pub jitter_ms: i64,
    /// The longest review (`conductor.review_ms`).
    pub review_ms: i64,
    /// How long the conductor's loop can wait for reviews between two polls: none when it
    /// polls during reviews; otherwise one review per task (a task has one request pending at
    /// a time), `conductor.reviews_in_flight` at once (docs/protocol.md C3).
    pub review_wait_ms: i64,
    /// The longest gap between two polls of the conductor: its poll interval, the poll's own
    /// statements (heartbeat, messages, tasks) and up to 4 per task it handles (re-read,
    /// message, state, launch), and the review wait.
    pub cycle_ms: i64,
    /// How long the scenario's scripted conductor faults leave no conductor running, all of
    /// them together (one measurement can span several): each `[[faults.conductor_down]]`
    /// window, and for each `[[faults.conductor_crash]]` the relaunch wait
    /// (`conductor.relaunch_after_ms`, C34) and the relaunched session's recovery (C35,
    /// sim/actors/conductor/recover.rs: `RECOVERY_STATEMENTS`) before it writes anything a
    /// musician waits for.
    pub conductor_absent_ms: i64,
    /// The scripted conductor crashes: each loses the cycle its session was in (what it had
    /// polled and not yet handled is polled again by its successor).
    pub conductor_crashes: i64,
}

/// The statements a relaunched conductor runs before its first cycle (docs/protocol.md C35,
/// `Conductor::resume`): its own row, the takeover, everything it wrote, the rows and every
/// musician message (5); per task at most a missing row and its instruction, a half-written
/// exit request's state, a half-written answer's state, the task record and a half-written
/// hand-over's state (6). An answer whose message the crash left without its state is
/// finished among these, so a musician waiting in its pause sees that state after them.
const RECOVERY_STATEMENTS_FIXED: i64 = 5;
const RECOVERY_STATEMENTS_PER_TASK: i64 = 6;

impl Bounds {
    pub fn of(scenario: &Scenario) -> Bounds {
        let (t, c, f) = (&scenario.timing, &scenario.conductor, &scenario.faults);
        let lock_wait_ms = if f.write_hold_ms.is_some() { f.busy_timeout_ms.unwrap_or(5_000) } else { 0 };
        let statement_ms = t.statement_ms.upper() + lock_wait_ms;
        let jitter_ms = f.watcher_jitter_ms.as_ref().map_or(0, |d| d.upper());
        let tasks = scenario.tasks.len().max(1) as i64;
        let review_ms = c.review_ms.upper();
        let review_wait_ms =
            if c.poll_during_reviews { 0 } else { (tasks + c.reviews_in_flight as i64 - 1) / c.reviews_in_flight as i64 * review_ms };
        let cycle_ms = c.poll_ms + statement_ms * (3 + 4 * tasks) + review_wait_ms;
        let down_ms: i64 = f.conductor_down.iter().map(|w| (w.to_ms - w.from_ms).max(0)).sum();
        let conductor_crashes = f.conductor_crash.len() as i64;
        let recovery_ms = statement_ms * (RECOVERY_STATEMENTS_FIXED + RECOVERY_STATEMENTS_PER_TASK * tasks);
        let conductor_absent_ms = down_ms + conductor_crashes * (c.relaunch_after_ms + recovery_ms);
        Bounds { statement_ms, jitter_ms, review_ms, review_wait_ms, cycle_ms, conductor_absent_ms, conductor_crashes }
    }
}

/// How old a live session's heartbeat can be when the conductor reads it: the refresh
/// threshold, one background watcher poll with its jitter, and the 2 statements of the refresh
/// (000 "Heartbeat Protocol", "Background Watcher"). Above `conductor.staleness_s` the
/// configuration itself leaves no margin.
pub fn heartbeat_reach_ms(scenario: &Scenario) -> i64 {
    let (t, n) = (&scenario.timing, Bounds::of(scenario));
    t.heartbeat_refresh_s * 1000 + t.background_poll_ms + n.jitter_ms + 2 * n.statement_ms
}

/// How long a conductor message can wait for a working session's background watcher: one
/// poll with its injected jitter, and the 2 statements of the watcher's query and the
/// musician's read (000 "Background Watcher": "Sleep for 15 seconds"; the musician reads a
/// message when its watcher exits with it). messages-seen-once does not ask a session to read a
/// message sent within this window before its terminal write (docs/protocol.md C86).
pub fn watcher_read_window_ms(scenario: &Scenario) -> i64 {
    let n = Bounds::of(scenario);
    scenario.timing.background_poll_ms + n.jitter_ms + 2 * n.statement_ms
}

/// Every budget of a run: the scenario's `[budgets]` where it sets one, otherwise derived from
/// the whole configuration (`Bounds`): the protocol's own numbers (the scenario's timing,
/// which defaults to the seeds'), the conductor's poll and review policy, injected jitter and
/// lock contention. Each source says how its limit was derived.
pub fn limits(scenario: &Scenario) -> Vec<BudgetLimit> {
    let (t, c, b) = (&scenario.timing, &scenario.conductor, &scenario.budgets);
    let n = Bounds::of(scenario);
    let statements = |k: i64| k * n.statement_ms;
    let watcher_poll_ms = t.background_poll_ms.max(t.pause_poll_ms);
    let policy = if c.poll_during_reviews {
        "the conductor polls during reviews (C3), so no review delays a poll".to_string()
    } else {
        format!(
            "the conductor does not poll during reviews (C3): a poll can wait for one review per task ({} tasks, {} at once, up to {} ms each: {} ms)",
            scenario.tasks.len(),
            c.reviews_in_flight,
            n.review_ms,
            n.review_wait_ms
        )
    };
    let cycle = format!(
        "one conductor cycle of up to {} ms (poll {} ms, {} statements of up to {} ms; {policy})",
        n.cycle_ms,
        c.poll_ms,
        3 + 4 * scenario.tasks.len(),
        n.statement_ms
    );
    // A conductor answer's message and its state can be split by the conductor's absence;
    // crash detection and a successor's launch wait for a conductor that runs, and lose the
    // cycle a crash cut short.
    let (notice_absent_ms, notice_absent) = absence(&n, false);
    let (handling_absent_ms, handling_absent) = absence(&n, true);
    let (relaunch_ms, relaunch) = patient_relaunch(scenario, &n);
    let (queue_ms, queue) = review_queue(scenario, &n);
    let (pause_ms, pause) = pause_answer(scenario, &n, queue_ms, &cycle);
    let notice_ms = watcher_poll_ms + n.jitter_ms + statements(4) + notice_absent_ms;
    let derived = [
        (
            "message_notice_ms",
            b.message_notice_ms_max,
            notice_ms + pause_ms,
            format!(
                "000 \"Background Watcher\" and \"Pause Watcher\": a conductor message is noticed within one watcher poll ({watcher_poll_ms} ms) lengthened by the injected watcher jitter (up to {} ms), plus 4 statements (up to {} ms each){notice_absent}{pause}",
                n.jitter_ms, n.statement_ms
            ),
        ),
        (
            "review_resume_ms",
            b.review_resume_ms_max,
            t.pause_poll_ms + n.jitter_ms + t.rework_ms.upper() + t.verification_ms.upper() + statements(10),
            format!(
                "000 \"Pause Watcher\" and \"Response Handling\": an answer is seen within one pause poll ({} ms) lengthened by the injected watcher jitter (up to {} ms), then acted on: after a rejection or a fix, the rework (up to {} ms) and the re-verification (up to {} ms) come before the re-submission, with 10 statements (the pause poll, the answer read, status lines, the request and the state; up to {} ms each)",
                t.pause_poll_ms,
                n.jitter_ms,
                t.rework_ms.upper(),
                t.verification_ms.upper(),
                n.statement_ms
            ),
        ),
        (
            "crash_detect_ms",
            b.crash_detect_ms_max,
            c.staleness_s * 1000 + queue_ms + 3 * n.cycle_ms + handling_absent_ms,
            format!(
                "000 \"Heartbeat Protocol\": a heartbeat older than {} s is stale. A session lost with a request pending has its heartbeat set again by the conductor's answer (004 \"Heartbeat Rule\"), read within one cycle and reviewed ({queue}); the stale row is then seen by the next poll and handled in the cycle after it: {} s + {} ms + 3 × {cycle}{handling_absent}",
                c.staleness_s, c.staleness_s, queue_ms
            ),
        ),
        (
            "heartbeat_age_s",
            b.heartbeat_age_s_max,
            c.staleness_s,
            format!(
                "000 \"Heartbeat Protocol\": a live session's heartbeat, as the conductor reads it, stays under the {} s staleness threshold (older, the conductor would hand a live session over); the configuration lets it reach {} s: the {} s refresh threshold, one watcher poll ({} ms) with its jitter (up to {} ms) and 2 statements",
                c.staleness_s,
                heartbeat_reach_ms(scenario) / 1000,
                t.heartbeat_refresh_s,
                t.background_poll_ms,
                n.jitter_ms
            ),
        ),
        (
            "exit_to_claim_ms",
            b.exit_to_claim_ms_max,
            2 * n.cycle_ms + t.launch_delay_ms.upper() + statements(8) + handling_absent_ms + relaunch_ms,
            format!(
                "000 Bootstrap 5 \"Session Handoff\": the conductor sees the exit at its next poll and handles it in that cycle (2 × {cycle}), launches the successor (up to {} ms), which claims within 8 statements{handling_absent}{relaunch}",
                t.launch_delay_ms.upper()
            ),
        ),
    ];
    let conductor = crate::input::conductor_profile::derived_from(scenario);
    let outside_pause = (pause_ms > 0).then_some(notice_ms);
    derived.into_iter().map(|(name, set, derived_limit, why)| applied(name, set, (derived_limit, why), &conductor, outside_pause)).collect()
}

/// One budget as a run applies it: the scenario's own `set`, else the `derived` limit and its
/// derivation; `outside_pause` is the message notice's limit without the pause's answer (C85).
fn applied(name: &'static str, set: Option<i64>, derived: (i64, String), conductor: &str, outside_pause: Option<i64>) -> BudgetLimit {
    match set {
        Some(limit) => BudgetLimit { name, limit, source: "the scenario's [budgets]".to_string(), conductor: None, outside_pause: None },
        None => BudgetLimit {
            name,
            limit: derived.0,
            source: derived.1,
            conductor: CONDUCTOR_DERIVED.contains(&name).then(|| conductor.to_string()),
            outside_pause: outside_pause.filter(|_| name == "message_notice_ms"),
        },
    }
}

/// Under `patient-relaunch` (the conductor relaunches a task whose launched session never
/// claimed only after `conductor.claim_overdue_s`, 30 minutes), a single crash of the successor
/// before its claim costs that wait, the cycle that notices it, the re-read of the row, the
/// next launch and its claim (issue 48: one task, an exit, a crash before the successor's
/// claim breached the budget by the patience). Empty without it, so other runs read as before.
fn patient_relaunch(scenario: &Scenario, n: &Bounds) -> (i64, String) {
    if !(scenario.settings.confirm_unclaimed && scenario.settings.relaunch_unclaimed) {
        return (0, String::new());
    }
    let overdue_ms = scenario.claim_overdue_s() * 1000;
    let launch_ms = scenario.timing.launch_delay_ms.upper();
    let ms = overdue_ms + n.cycle_ms + launch_ms + n.statement_ms;
    let why = format!(
        "; a successor lost before its claim (one crash) is relaunched after the conductor's patience ({overdue_ms} ms, patient-relaunch), noticed within one cycle ({} ms), read again (1 statement) and launched (up to {launch_ms} ms): {ms} ms more",
        n.cycle_ms
    );
    (ms, why)
}

/// A conductor message that changes no state (an emergency, or its follow-up, C41) reaching a
/// session in its pause, or just before it pauses, is read only with the pause's answer:
/// 000 "Pause Watcher" reads the state alone ("Exit condition query": `SELECT state`; "The
/// musician then reads the new state and latest message from the database"), and the
/// transition to pause mode terminates the background watcher that would have read it
/// ("Transition to pause mode" 2). So the notice can wait for the answer: the conductor's next
/// poll takes the pending request (one cycle), its review after the reviews queued before it,
/// the answer's message and state (2 statements), then one pause poll with its jitter
/// (docs/protocol.md C85; issue 48: 187 of 9,240 swarm pairs, every one with an emergency).
/// A message the background watcher already returned is read as the pause begins (000
/// "Background Watcher"), so it needs none of this. The allowance is the message's, not the
/// scenario's: only a message that reached the pause has it (`Attribution::reached_pause`,
/// `BudgetLimit::outside_pause`). Empty without emergencies, so that every other run's budget
/// reads as before.
fn pause_answer(scenario: &Scenario, n: &Bounds, queue_ms: i64, cycle: &str) -> (i64, String) {
    if scenario.conductor.emergencies.is_empty() {
        return (0, String::new());
    }
    let pause_poll_ms = scenario.timing.pause_poll_ms;
    let ms = n.cycle_ms + queue_ms + 2 * n.statement_ms + pause_poll_ms + n.jitter_ms;
    let why = format!(
        "; an emergency reaching a session in (or entering) its pause is read with the pause's answer (000 \"Pause Watcher\" reads the state alone, C85): the request is taken at the next poll ({cycle}), reviewed ({queue_ms} ms with the reviews queued before it), answered (2 statements) and seen within one pause poll ({pause_poll_ms} ms) with its jitter: {ms} ms more, for such a message only (noticed by the pause watcher, sent after the session entered its pause or less than one background watcher read of {window_ms} ms before it); any other message has the budget without it",
        window_ms = watcher_read_window_ms(scenario)
    );
    (ms, why)
}

/// How long a lost session's pending request waits for its review before the answer sets its
/// heartbeat again: one review when the conductor's loop waits for its reviews (the rest of
/// the queue is in its cycle), ⌈tasks / reviews_in_flight⌉ reviews when it polls during them
/// (a request waits for a free desk, C3).
fn review_queue(scenario: &Scenario, n: &Bounds) -> (i64, String) {
    let c = &scenario.conductor;
    if !c.poll_during_reviews {
        return (n.review_ms, format!("up to {} ms", n.review_ms));
    }
    let tasks = scenario.tasks.len().max(1) as i64;
    let queue = (tasks + c.reviews_in_flight as i64 - 1) / c.reviews_in_flight as i64;
    (queue * n.review_ms, format!("after the reviews queued before it: {queue} × up to {} ms", n.review_ms))
}

/// The time the scenario's scripted conductor faults add to a measurement that waits for the
/// conductor, with its derivation (empty without such faults, so that the budgets of every
/// other run read as before). `lost_cycles`: the measurement also waits for a cycle, which a
/// crash cuts short (its successor polls again, C35).
fn absence(n: &Bounds, lost_cycles: bool) -> (i64, String) {
    if n.conductor_absent_ms == 0 {
        return (0, String::new());
    }
    let lost = if lost_cycles && n.conductor_crashes > 0 {
        format!(" and the cycle each crash cuts short ({} × {} ms)", n.conductor_crashes, n.cycle_ms)
    } else {
        String::new()
    };
    let ms = n.conductor_absent_ms + if lost_cycles { n.conductor_crashes * n.cycle_ms } else { 0 };
    let why = format!(
        "; plus {ms} ms while the scenario's scripted conductor faults leave no conductor running (docs/protocol.md C34, C35: its `conductor_down` windows, each crash's `relaunch_after_ms` and the relaunched session's recovery statements: {} ms in all){lost}",
        n.conductor_absent_ms
    );
    (ms, why)
}

/// A violation's budget names a conductor profile other than the default (the default's
/// explanations keep their bytes: the budget's derivation already names its policy, C3).
fn profile_named(budget: &BudgetLimit) -> String {
    let default = format!("conductor profile {}:", crate::input::conductor_profile::DEFAULT_CONDUCTOR);
    match &budget.conductor {
        Some(c) if !c.starts_with(&default) => budget.derivation_note(),
        _ => String::new(),
    }
}

/// A measurement above its budget fails the run. The explanation names the largest
/// measurement's causes (sim/judging/oracle/latency.rs): the budget says what the protocol's numbers
/// allow, the causes say where the time went.
pub fn check(limits: &[BudgetLimit], measured: &Measurements, end_ms: i64, findings: &mut Findings) {
    for (name, sample) in measured.named() {
        let Some(budget) = limits.iter().find(|l| l.name == name) else { continue };
        let Some((_, _, max)) = quantiles(sample) else { continue };
        if max > budget.limit {
            let over = sample.iter().filter(|v| **v > budget.limit).count();
            // Heartbeat ages within the refresh threshold are not split (meter.rs): the
            // threshold is their whole cause.
            let within_threshold =
                if name == "heartbeat_age_s" { "; the largest is within the heartbeat refresh threshold, its whole cause" } else { "" }
                    .to_string();
            let causes = measured.largest(name).map_or(within_threshold, largest_causes);
            findings.violate(
                DOC.id,
                name,
                end_ms,
                format!(
                    "{name} reached {max} against a budget of {} ({over} of {} measurements above it){causes}; the budget: {}{}",
                    budget.limit,
                    sample.len(),
                    budget.source,
                    profile_named(budget)
                ),
            );
        } else if let Some(limit) = budget.outside_pause {
            outside_pause(budget, limit, measured, end_ms, findings);
        }
    }
}

/// "; the largest (task-01 of session 1a2b3c4d…, t=…..… ms): noticed by …".
fn largest_causes(d: &Decomposition) -> String {
    format!(
        "; the largest ({} of session {}…, t={}..{} ms): {}",
        d.task_id,
        &d.session_id[..d.session_id.len().min(8)],
        d.start_ms,
        d.end_ms,
        d.explain()
    )
}

/// docs/protocol.md C85: the pause's answer is allowed only to a message that reached the
/// pause; a message noticed otherwise, or sent long before the pause, is held to the budget
/// without it (`limit`), and the largest such measurement above it fails the run.
fn outside_pause(budget: &BudgetLimit, limit: i64, measured: &Measurements, end_ms: i64, findings: &mut Findings) {
    let name = budget.name;
    let outside: Vec<&Decomposition> =
        measured.decompositions.iter().filter(|d| d.measurement == name && !d.reached_pause).collect();
    let above: Vec<&Decomposition> = outside.iter().copied().filter(|d| d.total_ms > limit).collect();
    let Some(largest) = above.iter().copied().reduce(|best, d| if d.total_ms > best.total_ms { d } else { best }) else { return };
    findings.violate(
        DOC.id,
        name,
        end_ms,
        format!(
            "{name} reached {} against a budget of {limit} for a message that reached no pause (docs/protocol.md C85: {} of {} such measurements above it){}; the budget: {}{}",
            largest.total_ms,
            above.len(),
            outside.len(),
            largest_causes(largest),
            budget.source,
            profile_named(budget)
        ),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(text: &str) -> Scenario {
        Scenario::parse(text, std::path::Path::new("b.toml")).unwrap()
    }

    fn limit(text: &str, name: &str) -> i64 {
        limits(&scenario(text)).into_iter().find(|l| l.name == name).unwrap().limit
    }

    /// Issue 48: a single crash of a successor before its claim costs the patient relaunch
    /// (30 min, a cycle, a re-read, a launch), and polling during reviews a lost session's
    /// request waits for every review queued before it.
    #[test]
    fn the_patient_relaunch_and_the_review_queue_are_in_the_derived_budgets() {
        let plain = scenario("[tasks]\ncount = 3\n");
        let patient = crate::input::variant::with_variants(&plain, &["patient-relaunch".to_string()]).unwrap();
        let find = |s: &Scenario, name: &str| limits(s).into_iter().find(|l| l.name == name).unwrap();
        let n = Bounds::of(&patient);
        let more = 1_800_000 + n.cycle_ms + 30_000 + n.statement_ms;
        assert_eq!(find(&patient, "exit_to_claim_ms").limit, find(&plain, "exit_to_claim_ms").limit + more);
        assert!(find(&patient, "exit_to_claim_ms").source.contains("patient-relaunch"));
        assert_eq!(find(&patient, "crash_detect_ms"), find(&plain, "crash_detect_ms"), "no polling during reviews: unchanged");
        assert_eq!(limit("[tasks]\ncount = 3\n[conductor]\npoll_during_reviews = true\n", "crash_detect_ms"), 540_000 + 3 * 300_000 + 3 * 75_000);
        let two = "[tasks]\ncount = 3\n[conductor]\npoll_during_reviews = true\nreviews_in_flight = 2\n";
        assert_eq!(limit(two, "crash_detect_ms"), 540_000 + 2 * 300_000 + 3 * 75_000);
    }

    /// docs/protocol.md C85: with emergencies, a message can wait for a pause's answer: the next
    /// poll's cycle, the review queue, the answer (2 statements) and one pause poll with jitter.
    /// Without emergencies every budget reads as before; the window messages-seen-once allows
    /// before a terminal write is one background poll, its jitter and 2 statements.
    #[test]
    fn an_emergency_can_wait_for_the_answer_to_the_pause_it_reaches() {
        let polling = "[tasks]\ncount = 3\n[conductor]\npoll_during_reviews = true\n";
        let with = format!("{polling}[[conductor.emergencies]]\nat_ms = 60000\ntask = 1\n");
        // 75 000 (a cycle) + 3 × 300 000 (the queue) + 2 × 3000 + 10 000 (a pause poll).
        assert_eq!(limit(&with, "message_notice_ms"), limit(polling, "message_notice_ms") + 75_000 + 900_000 + 6000 + 10_000);
        let found = limits(&scenario(&with)).into_iter().find(|l| l.name == "message_notice_ms").unwrap();
        assert!(found.source.contains("C85") && found.source.contains("Pause Watcher"), "{}", found.source);
        // The allowance is the message's: one that reached no pause keeps the budget without it.
        assert_eq!(found.outside_pause, Some(limit(polling, "message_notice_ms")));
        assert!(limits(&scenario(polling)).iter().all(|l| l.outside_pause.is_none()));
        for name in ["crash_detect_ms", "exit_to_claim_ms", "review_resume_ms", "heartbeat_age_s"] {
            assert_eq!(limit(&with, name), limit(polling, name), "{name}");
        }
        assert!(!limits(&scenario(polling)).iter().any(|l| l.source.contains("C85")));
        assert_eq!(watcher_read_window_ms(&scenario(polling)), 15_000 + 2 * 3000);
    }

    /// The derivations, with the seeds' numbers: statements 3000 ms at most, conductor poll
    /// 30 s, reviews 300 s at most, staleness 540 s, watcher polls 15 s and 10 s.
    #[test]
    fn every_default_budget_is_derived_from_the_whole_configuration() {
        // 3 tasks, reviewed one at a time without polling: a cycle is 30 000 + 3000 × (3 + 12)
        // + 3 × 300 000 = 975 000 ms.
        let three = "[tasks]\ncount = 3\n";
        assert_eq!(Bounds::of(&scenario(three)).cycle_ms, 975_000);
        // 540 000 + 300 000 (the answer that refreshes a lost session's heartbeat) + 3 cycles.
        assert_eq!(limit(three, "crash_detect_ms"), 540_000 + 300_000 + 3 * 975_000);
        // Polling during reviews, no review holds a poll: a cycle is 75 000 ms; a lost
        // session's request waits for the 3 reviews queued before it (issue 48).
        let polling = "[tasks]\ncount = 3\n[conductor]\npoll_during_reviews = true\n";
        assert_eq!(limit(polling, "crash_detect_ms"), 540_000 + 3 * 300_000 + 3 * 75_000);
        // Two reviews at once: two rounds of reviews for three tasks.
        let two = "[tasks]\ncount = 3\n[conductor]\nreviews_in_flight = 2\n";
        assert_eq!(limit(two, "crash_detect_ms"), 540_000 + 300_000 + 3 * (75_000 + 600_000));
        // Exit to claim: two cycles, the launch delay (30 000) and 8 statements.
        assert_eq!(limit(polling, "exit_to_claim_ms"), 2 * 75_000 + 30_000 + 8 * 3000);
        // Message notice: the slower watcher poll (15 000), its jitter (20 000) and 4 statements.
        assert_eq!(limit(three, "message_notice_ms"), 15_000 + 4 * 3000);
        let jitter = "[tasks]\ncount = 3\n[faults]\nwatcher_jitter_ms = { kind = \"uniform\", min = 0, max = 20000 }\n";
        assert_eq!(limit(jitter, "message_notice_ms"), 15_000 + 20_000 + 4 * 3000);
        // Review resume: pause poll 10 000, jitter, rework 300 000, verification 240 000, 10 statements.
        assert_eq!(limit(jitter, "review_resume_ms"), 10_000 + 20_000 + 300_000 + 240_000 + 10 * 3000);
        // Lock contention: each statement may wait the busy timeout (5000 ms) for the lock.
        let contention = "[tasks]\ncount = 3\n[faults]\nwrite_hold_ms = 100\n";
        assert_eq!(limit(contention, "message_notice_ms"), 15_000 + 4 * 8000);
        // The heartbeat age is the staleness threshold: above it a live session is handed over.
        assert_eq!(limit(jitter, "heartbeat_age_s"), 540);
        // A budget the scenario sets is kept as it is.
        assert_eq!(limit("[tasks]\ncount = 3\n[budgets]\ncrash_detect_ms_max = 700000\n", "crash_detect_ms"), 700_000);
    }

    /// Scripted conductor faults (docs/protocol.md C34, C35): a measurement that waits for
    /// the conductor waits out its outages and each relaunch with its recovery; crash
    /// detection and exit-to-claim also lose the cycle a crash cut short. What does not wait
    /// for the conductor (the heartbeat age, a resume after the answer's state) is unchanged.
    #[test]
    fn a_scripted_conductor_fault_adds_its_absence_to_what_waits_for_the_conductor() {
        let polling = "[tasks]\ncount = 3\n[conductor]\npoll_during_reviews = true\n";
        let down = format!("{polling}[[faults.conductor_down]]\nfrom_ms = 600000\nto_ms = 4800000\n");
        assert_eq!(limit(&down, "exit_to_claim_ms"), limit(polling, "exit_to_claim_ms") + 4_200_000);
        assert_eq!(limit(&down, "crash_detect_ms"), limit(polling, "crash_detect_ms") + 4_200_000);
        assert_eq!(limit(&down, "message_notice_ms"), limit(polling, "message_notice_ms") + 4_200_000);
        // One crash: the 300 000 ms relaunch wait and 5 + 6 × 3 recovery statements of 3000 ms.
        let crash = format!("{polling}relaunch_after_ms = 300000\n[[faults.conductor_crash]]\nat = \"after:send_conductor_message\"\n");
        let absent = 300_000 + 23 * 3000;
        assert_eq!(Bounds::of(&scenario(&crash)).conductor_absent_ms, absent);
        assert_eq!(limit(&crash, "message_notice_ms"), limit(polling, "message_notice_ms") + absent);
        assert_eq!(limit(&crash, "exit_to_claim_ms"), limit(polling, "exit_to_claim_ms") + absent + 75_000);
        assert_eq!(limit(&crash, "crash_detect_ms"), limit(polling, "crash_detect_ms") + absent + 75_000);
        for name in ["heartbeat_age_s", "review_resume_ms"] {
            assert_eq!(limit(&crash, name), limit(polling, name), "{name}");
            assert_eq!(limit(&down, name), limit(polling, name), "{name}");
        }
        // Without conductor faults a budget's derivation reads as before.
        assert!(!limits(&scenario(polling)).iter().any(|l| l.source.contains("no conductor running")));
        assert!(limits(&scenario(&crash)).iter().find(|l| l.name == "exit_to_claim_ms").unwrap().source.contains("relaunch_after_ms"));
    }
}
