//! budget: timing measurements stay within the scenario's budgets.

use super::{Meaning, RuleDoc};
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
}

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
}

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
        Bounds { statement_ms, jitter_ms, review_ms, review_wait_ms, cycle_ms }
    }
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
    let derived = [
        (
            "message_notice_ms",
            b.message_notice_ms_max,
            watcher_poll_ms + n.jitter_ms + statements(4),
            format!(
                "000 \"Background Watcher\" and \"Pause Watcher\": a conductor message is noticed within one watcher poll ({watcher_poll_ms} ms) lengthened by the injected watcher jitter (up to {} ms), plus 4 statements (up to {} ms each)",
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
            c.staleness_s * 1000 + n.review_ms + 3 * n.cycle_ms,
            format!(
                "000 \"Heartbeat Protocol\": a heartbeat older than {} s is stale. A session lost with a request pending has its heartbeat set again by the conductor's answer (004 \"Heartbeat Rule\"), read within one cycle and reviewed (up to {} ms); the stale row is then seen by the next poll and handled in the cycle after it: {} s + {} ms + 3 × {cycle}",
                c.staleness_s, n.review_ms, c.staleness_s, n.review_ms
            ),
        ),
        (
            "heartbeat_age_s",
            b.heartbeat_age_s_max,
            c.staleness_s,
            format!(
                "000 \"Heartbeat Protocol\": a live session's heartbeat, as the conductor reads it, stays under the {} s staleness threshold (older, the conductor would hand a live session over); the configuration lets it reach {} s: the {} s refresh threshold, one watcher poll ({} ms) with its jitter (up to {} ms) and 2 statements",
                c.staleness_s,
                (t.heartbeat_refresh_s * 1000 + t.background_poll_ms + n.jitter_ms + statements(2)) / 1000,
                t.heartbeat_refresh_s,
                t.background_poll_ms,
                n.jitter_ms
            ),
        ),
        (
            "exit_to_claim_ms",
            b.exit_to_claim_ms_max,
            2 * n.cycle_ms + t.launch_delay_ms.upper() + statements(8),
            format!(
                "000 Bootstrap 5 \"Session Handoff\": the conductor sees the exit at its next poll and handles it in that cycle (2 × {cycle}), launches the successor (up to {} ms), which claims within 8 statements",
                t.launch_delay_ms.upper()
            ),
        ),
    ];
    derived
        .into_iter()
        .map(|(name, set, derived_limit, why)| match set {
            Some(limit) => BudgetLimit { name, limit, source: "the scenario's [budgets]".to_string() },
            None => BudgetLimit { name, limit: derived_limit, source: why },
        })
        .collect()
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
            let causes = measured.largest(name).map_or(within_threshold, |d| {
                format!(
                    "; the largest ({} of session {}…, t={}..{} ms): {}",
                    d.task_id,
                    &d.session_id[..d.session_id.len().min(8)],
                    d.start_ms,
                    d.end_ms,
                    d.explain()
                )
            });
            findings.violate(
                DOC.id,
                name,
                end_ms,
                format!(
                    "{name} reached {max} against a budget of {} ({over} of {} measurements above it){causes}; the budget: {}",
                    budget.limit,
                    sample.len(),
                    budget.source
                ),
            );
        }
    }
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
        // Polling during reviews, no review holds a poll: a cycle is 75 000 ms.
        let polling = "[tasks]\ncount = 3\n[conductor]\npoll_during_reviews = true\n";
        assert_eq!(limit(polling, "crash_detect_ms"), 540_000 + 300_000 + 3 * 75_000);
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
}
