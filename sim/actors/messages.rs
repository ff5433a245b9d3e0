//! Message bodies in the seeds' formats (000 "Message Format Standards", 004 "SQL Patterns").
//! Only the text is built here; which statement carries it is the actor's business.

/// The conductor's `instruction` message: the instruction file path (000 Bootstrap 1a/6).
pub fn instruction(task_id: &str, instruction_path: &str) -> String {
    format!("TASK INSTRUCTION: {instruction_path}\n\nContext:\n  Task ID: {task_id}\n  Phase: 1")
}

pub fn instruction_path(task_id: &str) -> String {
    format!("docs/plans/implementation/{task_id}.md")
}

pub fn report_path(task_id: &str) -> String {
    format!("docs/implementation/reports/{task_id}-completion.md")
}

/// What a musician knows when it writes to the conductor.
pub struct Report<'a> {
    pub context_pct: i64,
    /// Where and what, when the session self-corrected: "step 3, agent 2 — test failure, …".
    pub self_correction: Option<String>,
    /// A self-correction without the ~6x bloat, when there was no other: the self code
    /// review's clean-up (000 Example: Verification Checkpoint Flow, Step 7: "Self-Correction:
    /// YES (removed debug code)").
    pub self_correction_minor: Option<String>,
    pub deviations: usize,
    /// "1 (Medium — …)" or "2 (1 Medium, 1 Low)" (000 Execution Queries 5: "N (severity —
    /// description)").
    pub deviation_summary: String,
    /// 1 (smooth) to 9 (rough).
    pub smoothness: i64,
    pub agents_remaining: u64,
    pub agent_cost_pct: i64,
    /// The latest proposal this session created (000 "Proposal System").
    pub proposal: Option<String>,
    pub summary: &'a str,
    pub files_modified: u64,
    /// "All passing", with the counts when modelled: "All passing (47 tests, 3 new)".
    pub tests: String,
    /// What the checkpoint verification found, one line each ("Flaky Tests: …", "Coverage:
    /// …"): 000 "Flaky Test Handling" 2, "Test Failure Analysis Decision Tree" ("Note in
    /// review"), "Verification Decision Matrix" ("Note coverage gap").
    pub verification: Vec<String>,
    /// 000 "Key Outputs Format": (path, "created" | "modified" | "rag-addition").
    pub key_outputs: Vec<(String, &'static str)>,
    /// The commits of the work this review covers (004 "Request Review": "Commits: [SHA]").
    pub commits: Vec<String>,
    /// A self-correction since the last approved checkpoint, escalated with this request
    /// (000 "Escalation triggers": "Self-correction issues during execution").
    pub escalation: Option<String>,
}

/// 000 "Review Request" format (and Execution Queries 5: "… agent estimates, proposal
/// paths, summary, files modified, test status, and key outputs"), with the fields 004
/// "Request Review" requires ("Reason", "Review focus", "Commits: [SHA]").
pub fn review_request(checkpoint: usize, checkpoints_total: usize, r: &Report<'_>) -> String {
    let escalation = match &r.escalation {
        Some(e) => format!("\n  {e}"),
        None => String::new(),
    };
    format!(
        "REVIEW REQUEST (Smoothness: {smooth}/9):\n  Checkpoint: {checkpoint} of {checkpoints_total}\n  Context Usage: {ctx}%\n  Self-Correction: {sc}\n  Deviations: {dev}\n  Agents Remaining: {left} (~{cost}% each, ~{total}% total)\n  Proposal: {proposal}\n  Summary: {summary}\n  Files Modified: {files}\n  Tests: {tests}{notes}\n{outputs}{escalation}\n  Reason: scheduled checkpoint {checkpoint}\n\nReview focus:\n- checkpoint {checkpoint} deliverables\n\nCommits: {commits}",
        smooth = smoothness(r),
        ctx = r.context_pct,
        sc = self_correction(r),
        dev = r.deviation_summary,
        left = r.agents_remaining,
        cost = r.agent_cost_pct,
        total = r.agents_remaining as i64 * r.agent_cost_pct,
        proposal = r.proposal.as_deref().unwrap_or("N/A"),
        summary = r.summary,
        files = r.files_modified,
        tests = r.tests,
        notes = verification_notes(r),
        outputs = key_outputs(&r.key_outputs, "  "),
        commits = commits(&r.commits),
    )
}

/// 000 "Completion Report" format (message type `completion`), with its Key Outputs (000
/// Execution Queries 8); the final one (`final_write`) also as 004 "Mark Complete": "Commit:
/// [SHA]", "All verification checks: PASSED".
pub fn completion(task_id: &str, r: &Report<'_>, final_write: bool) -> String {
    let tail = if final_write {
        format!("\n  Commit: {}\n  All verification checks: PASSED", r.commits.last().map_or("none", String::as_str))
    } else {
        "\n  Awaiting final review".to_string()
    };
    format!(
        "TASK COMPLETE (Smoothness: {smooth}/9):\n  Context Usage: {ctx}%\n  Self-Correction: {sc}\n  Deviations: {dev}\n  Report: {report}\n  Summary: {summary}\n  Files Modified: {files}\n  Tests: {tests}{notes}\n{outputs}{tail}",
        smooth = smoothness(r),
        ctx = r.context_pct,
        sc = self_correction(r),
        dev = r.deviation_summary,
        report = report_path(task_id),
        summary = r.summary,
        files = r.files_modified,
        tests = r.tests,
        notes = verification_notes(r),
        outputs = key_outputs(&r.key_outputs, "  "),
    )
}

/// The verification's notes, one indented line each after `Tests:` (none: nothing).
fn verification_notes(r: &Report<'_>) -> String {
    r.verification.iter().map(|note| format!("\n  {note}")).collect()
}

/// "YES (step 3, agent 2 — …. ~6x context impact for affected segment)" or "NO" (000
/// "Review Request").
fn self_correction(r: &Report<'_>) -> String {
    match &r.self_correction {
        Some(details) => format!("YES ({details}. ~6x context impact for affected segment)"),
        None => match &r.self_correction_minor {
            Some(what) => format!("YES ({what})"),
            None => "NO".to_string(),
        },
    }
}

fn commits(shas: &[String]) -> String {
    if shas.is_empty() {
        "none".to_string()
    } else {
        shas.join(", ")
    }
}

/// The escalation a self-correction triggers (000 "Deviations & Escalation Thresholds":
/// "Escalation triggers: … Self-correction issues during execution"; the flag is a "Critical
/// signal to conductor: … context usage estimates are off by ~6x … should plan for early
/// handoff when flagged").
pub fn self_correction_escalation(details: &str) -> String {
    format!("Escalation: self-correction during execution ({details}): context estimates are off by ~6x; plan for an early handoff")
}

/// 000 "Claim Blocked" format.
pub fn claim_blocked(task_id: &str, why: &str) -> String {
    format!("CLAIM BLOCKED: Guard prevented claim on {task_id} ({why}).\n  Created fallback row to exit cleanly. Conductor intervention needed.")
}

/// 000 "Context Warning (Error State)" format (message type `context_warning`), with the
/// estimate and the recommendation of 000 Example: Context-Tight Break Point, Step 3.
pub struct ContextWarning<'a> {
    pub context_pct: i64,
    pub self_correction: Option<&'a str>,
    pub agents_remaining: u64,
    pub agent_cost_pct: i64,
    pub risk_cost_pct: i64,
    pub agents_fit: i64,
    pub budget_pct: i64,
    /// Context at the checkpoint at the nominal cost, and at the worst case.
    pub estimate_pct: i64,
    pub worst_pct: i64,
    /// The worst case is the ceiling check's projection, the hand-off after the checkpoint
    /// included (docs/protocol.md C161).
    pub worst_with_handoff: bool,
    /// The agents the musician recommends before the checkpoint and hand-off.
    pub recommended: u64,
    /// Those agents: "step 4 agent 2 + step 5 agents 1-2".
    pub recommendation: &'a str,
    pub deviations: &'a str,
    /// "ask" (70-80 %) or "escalate" (> 80 %).
    pub zone: &'a str,
    /// Set when a self-correction, not the 50 % threshold, triggered the warning.
    pub escalation: Option<String>,
}

pub fn context_warning(w: &ContextWarning<'_>) -> String {
    let sc = match w.self_correction {
        Some(details) => format!("YES ({details}. ~6x context impact)"),
        None => "NO".to_string(),
    };
    // 000's own example totals all remaining agents at the risk cost ("~32% total").
    let remaining = if w.risk_cost_pct != w.agent_cost_pct {
        format!(
            "{n} (~{c}% each nominal, but ~{r}% each with self-correction risk = ~{t}% total)",
            n = w.agents_remaining,
            c = w.agent_cost_pct,
            r = w.risk_cost_pct,
            t = w.agents_remaining as i64 * w.risk_cost_pct
        )
    } else {
        format!(
            "{n} (~{c}% each, ~{t}% total)",
            n = w.agents_remaining,
            c = w.agent_cost_pct,
            t = w.agents_remaining as i64 * w.agent_cost_pct
        )
    };
    let fit = if w.risk_cost_pct != w.agent_cost_pct {
        format!("{} (due to self-correction bloat)", w.agents_fit.max(0))
    } else {
        format!("{}", w.agents_fit.max(0))
    };
    let estimate = if w.worst_with_handoff {
        format!("{}% (worst case {}% with the hand-off)", w.estimate_pct, w.worst_pct)
    } else if w.worst_pct != w.estimate_pct {
        format!("{}% (worst case {}%)", w.estimate_pct, w.worst_pct)
    } else {
        format!("{}%", w.estimate_pct)
    };
    let ask = if w.zone == "ask" {
        "I think I can reach the checkpoint, but what do you think?"
    } else {
        "Cannot reliably reach the checkpoint: must pause now"
    };
    let recommendation = if w.recommended == 0 {
        "checkpoint on the work done, then handoff".to_string()
    } else {
        format!("Complete {} ({} more agents), then checkpoint and handoff", w.recommendation, w.recommended)
    };
    let escalation = match &w.escalation {
        Some(e) => format!("\n  {e}"),
        None => String::new(),
    };
    format!(
        "CONTEXT WARNING: {ctx}% usage{escalation}\n  Self-Correction: {sc}\n  Agents Remaining: {remaining}\n  Agents That Fit in {budget}% Budget: {fit}\n  Estimated Context at Checkpoint: {estimate}\n  Deviations: {dev}\n  Recommendation: {recommendation} ({ask})\n  Awaiting conductor instructions",
        ctx = w.context_pct,
        budget = w.budget_pct,
        dev = w.deviations,
    )
}

/// 000 "Error Report" format (message type `error`).
pub fn error_report(retry: u64, context_pct: i64, self_correction: bool, error: &str, task_id: &str, terminal: bool) -> String {
    format!(
        "ERROR (Retry {retry}/5):\n  Context Usage: {context_pct}%\n  Self-Correction: {sc}\n  Error: {error}\n  Report: docs/implementation/reports/{task_id}-error-retry-{retry}.md\n  Key Outputs:\n    - docs/implementation/reports/{task_id}-error-retry-{retry}.md (created)\n  {next}",
        sc = yes_no(self_correction),
        // 004 "Terminal Failure (5th retry)": the 5th report asks for nothing; the session exits.
        next = if terminal {
            "Terminal: 5th failure, the session exits (no further retries)"
        } else {
            "Awaiting conductor fix proposal"
        },
    )
}

/// What the final message of a clean exit says.
pub struct Exited<'a> {
    pub task_id: &'a str,
    pub reason: &'a str,
    pub context_pct: i64,
    /// "step 3, agent 2" when the session self-corrected.
    pub self_correction: Option<&'a str>,
    pub last_completed: &'a str,
    pub remaining: &'a str,
    pub proposals: &'a [String],
    /// (path, "created" | "modified" | "rag-addition"), 000 "Key Outputs Format".
    pub key_outputs: &'a [(String, &'a str)],
}

/// The first line of an escalation, which the conductor tells from an error report by it.
pub const ESCALATION: &str = "ESCALATION: ";

/// An escalation to the conductor (message type `error`, the one type the CHECK offers for
/// "cannot continue without intervention"): deviations past the threshold (000 "Deviations &
/// Escalation Thresholds", REF-6) or a contradictory resumption (003 "State Reconciliation").
/// `what` says why, `details` are listed below it.
pub fn escalation(task_id: &str, what: &str, details: &[String], context_pct: i64, self_correction: bool) -> String {
    let mut text = format!("{ESCALATION}{task_id} {what}\n");
    for d in details {
        text.push_str(&format!("  - {d}\n"));
    }
    text.push_str(&format!(
        "Context Usage: {context_pct}%\nSelf-Correction: {sc}\nAwaiting conductor guidance (a correction task, 003 Resumption Decision Tree)",
        sc = yes_no(self_correction)
    ));
    text
}

/// The conductor's answer to an escalation (message type `fix_proposal`): a correction
/// task, "a scoped set of fixes to apply before resuming normal execution" (003).
pub fn correction_task(task_id: &str) -> String {
    format!("CORRECTION TASK: {task_id}\n- Apply the fixes for what you escalated\n- Re-run verification\n- Then resume from the last checkpoint")
}

/// 000 Execution Queries 10 / "Example: Clean Exit & Handoff" step 7 (message type `handoff`).
pub fn exited(e: &Exited<'_>) -> String {
    let sc = match e.self_correction {
        Some(where_) => format!("YES ({where_}, ~6x impact)"),
        None => "NO".to_string(),
    };
    let proposals = if e.proposals.is_empty() { "0".to_string() } else { format!("{} (anti-pattern)", e.proposals.len()) };
    format!(
        "EXITED: {reason}, clean handoff prepared.\nHANDOFF: temp/{task_id}-HANDOFF\nContext Usage: {ctx}%\nSelf-Correction: {sc}\nLast Completed Step: {last}\nRemaining Steps: {remaining}\nProposals Pending: {proposals}\n{outputs}",
        reason = e.reason,
        task_id = e.task_id,
        ctx = e.context_pct,
        last = e.last_completed,
        remaining = e.remaining,
        outputs = key_outputs(e.key_outputs, ""),
    )
}

/// 000 "Key Outputs Format": project-root-relative paths, each annotated.
pub fn key_outputs(outputs: &[(String, &str)], indent: &str) -> String {
    let mut text = format!("{indent}Key Outputs:");
    if outputs.is_empty() {
        text.push_str(&format!("\n{indent}  - none"));
    }
    for (path, what) in outputs {
        text.push_str(&format!("\n{indent}  - {path} ({what})"));
    }
    text
}

/// The final message of a session whose 5th error report is terminal (message type
/// `handoff`, as 000 Execution Queries 10 writes before `exited`): no HANDOFF, the task is
/// given up (000 "Terminal Write Atomicity": the message first, then the terminal state).
pub fn retries_exhausted(task_id: &str, context_pct: i64, self_correction: bool, last_error: &str) -> String {
    format!(
        "EXITED: unrecoverable failure, retry 5/5: {task_id} given up after 5 failures.\nHANDOFF: none (no clean handoff)\nContext Usage: {context_pct}%\nSelf-Correction: {sc}\nLast Error: {last_error}\nReports: docs/implementation/reports/{task_id}-error-retry-1.md … -5.md",
        sc = yes_no(self_correction),
    )
}

/// The conductor's answer to a review (message type `approval`).
pub fn approval(task_id: &str, completion: bool) -> String {
    if completion {
        format!("REVIEW APPROVED: {task_id} completion accepted. Write the final report and mark complete.")
    } else {
        format!("REVIEW APPROVED: {task_id} checkpoint passed. Proceed with the next steps.")
    }
}

/// The conductor's rejection with feedback (message type `rejection`): the three issues of
/// 000 Example: Conductor Pause & Feedback Cycle, Step 1.
pub fn rejection(task_id: &str) -> String {
    format!("REVIEW FAILED: {task_id} needs changes before approval.\n  Issues: 3\n  1. A knowledge-base file contains an incorrect cross-reference to a deleted file\n  2. Two test assertions are too broad (testing truthiness rather than specific values)\n  3. Missing coverage for an edge case (empty input)\n  Apply the feedback, re-run verification and resubmit.")
}

/// The conductor's proposed fix for a review or an error (message type `fix_proposal`).
pub fn fix_proposal(task_id: &str, what: &str) -> String {
    format!("FIX PROPOSED: {task_id}\n  {what}\n  Apply it, re-run verification and resubmit or resume.")
}

/// The stop hook's fallback prompt (000 "Implementation-Hook Integration": "If exit criteria not
/// met: injects `fallback_prompt`, increments iteration counter"). Its words are in the hook's
/// preset (`tools/implementation-hook/preset-musician.yaml`), which no seed quotes: this one
/// says what the check found and what 000 "Design Rationale" says the block is for ("keeping
/// the session alive for cleanup", the terminal state "as the absolute last operation";
/// docs/protocol.md C141).
pub fn stop_hook_fallback_prompt(task_id: &str, states: &[String], iteration: u32) -> String {
    format!(
        "Exit criteria not met: {task_id} is `{}` (exit allowed on `complete` or `exited`; check {iteration} of 500).\nFinish the cleanup before exiting: HANDOFF, report, final message, then the terminal state as the absolute last database write.",
        states.join("`, `")
    )
}

/// The conductor's reduced scope after a context warning: the musician's recommendation,
/// accepted (000 Example: Context-Tight Break Point, Step 5: "Total: 3 more agents +
/// checkpoint").
pub fn reduced_scope(agents: u64, which: Option<&str>) -> String {
    let complete = match which {
        Some(which) if agents > 0 => format!("- Complete {which}\n"),
        _ => String::new(),
    };
    format!("Context plan accepted with modification:\n{complete}- Skip the rest of the way to the checkpoint (can be done by next session)\n- Run checkpoint verification on completed work\n- Prepare handoff after checkpoint approval\nTotal: {agents} more agents + checkpoint.")
}

/// The first words of the conductor's other `fix_proposed` reply to a context warning (000
/// "Context escalation response states" 2: "Adjust approach as follows: [instructions]").
const ADJUST_APPROACH: &str = "Adjust approach as follows:";

/// 000's "Adjust approach as follows: [instructions]": a change of how the work is done, with
/// no scope reduction and no hand-off.
pub fn adjusted_approach() -> String {
    format!("{ADJUST_APPROACH}\n- Integrate each agent's result as a summary, not its full output\n- Keep the planned agents and the checkpoint\n- Re-evaluate context after every agent and report again if it gets worse")
}

/// Whether a `fix_proposed` reply to a context warning adjusts the approach (no `Total: N more
/// agents` scope).
pub fn is_adjusted_approach(message: &str) -> bool {
    message.trim_start().starts_with(ADJUST_APPROACH)
}

/// Parses `Total: N more agents` from a reduced-scope message.
pub fn parse_reduced_scope(message: &str) -> Option<u64> {
    let rest = message.split("Total: ").nth(1)?;
    rest.split_whitespace().next()?.parse().ok()
}

/// Parses `Agents That Fit in NN% Budget: N` from a context warning.
pub fn parse_agents_fit(message: &str) -> Option<i64> {
    let line = message.lines().find(|l| l.contains("Agents That Fit"))?;
    line.rsplit(':').next()?.split_whitespace().next()?.parse().ok()
}

/// Parses the recommendation of a context warning: the agents (`step 4 agent 2 + step 5
/// agents 1-2`) and their number; `(0, None)` for a checkpoint on the work done.
pub fn parse_recommendation(message: &str) -> Option<(u64, Option<String>)> {
    let line = message.lines().find_map(|l| l.trim().strip_prefix("Recommendation: "))?;
    let Some(rest) = line.strip_prefix("Complete ") else { return Some((0, None)) };
    let (which, tail) = rest.split_once(" (")?;
    let count = tail.split_whitespace().next()?.parse().ok()?;
    Some((count, Some(which.to_string())))
}

/// The line that ends a conductor answer under `replies-cite-request` (docs/protocol.md D15):
/// `In reply to: #<id>`, the `orchestration_messages.id` of the request it answers.
const IN_REPLY_TO: &str = "In reply to: #";

/// `answer` with the request it replies to named on a last line of its own; the seeds'
/// text above it is unchanged (docs/protocol.md D15).
pub fn citing_request(answer: String, request_id: i64) -> String {
    format!("{answer}\n{IN_REPLY_TO}{request_id}")
}

/// The request a conductor message names on its last line, if it names one.
pub fn cited_request(message: &str) -> Option<i64> {
    message.lines().next_back()?.strip_prefix(IN_REPLY_TO)?.parse().ok()
}

/// The conductor's request that a session prepare a handoff and exit (message type
/// `handoff`; 000 and 002 "States the Conductor Sets": `exit_requested`, docs/protocol.md D16).
pub fn exit_request(task_id: &str, why: &str) -> String {
    format!("{EXIT_REQUEST}{task_id}: prepare handoff and exit ({why}).\n- Stop at a safe point, write temp/{task_id}-HANDOFF and your final handoff message\n- Leave the task in exit_requested: the next session claims it from there")
}

/// How an exit request's text begins.
pub const EXIT_REQUEST: &str = "EXIT REQUESTED: ";

/// The conductor's handoff message to the next session (message type `handoff`).
pub fn conductor_handoff(task_id: &str, previous_session: u32, why: &str) -> String {
    format!("HANDOFF: {task_id} session S{previous_session} {why}. Resumption instructions:\n- Read temp/{task_id}-HANDOFF if present, and temp/{task_id}-status\n- Re-run verification from the last checkpoint\n- Then continue from the pending work")
}

/// Whether `text` is a conductor hand-over (`conductor_handoff`) after its session's own exit
/// (`relaunch_after_exit`'s reasons), not after a session that went silent.
pub fn hands_over_an_exit(text: &str) -> bool {
    text.starts_with("HANDOFF: ") && (text.contains(" exited cleanly. ") || text.contains(" exited without a HANDOFF. "))
}

/// Whether `text` is the conductor's hand-over of `task_id` from session `S{session_no}`
/// (`conductor_handoff`): read by that very session, it says the session was replaced
/// (docs/protocol.md C51; 000 "Background Watcher": the musician "reads the message from the
/// database, decides whether to interrupt current work").
pub fn hands_over_session(text: &str, task_id: &str, session_no: u32) -> bool {
    text.starts_with(&format!("HANDOFF: {task_id} session S{session_no} "))
}

/// A conductor emergency message (000 "Emergency Messages"; message type `emergency`), one of
/// the three responses the seed names: "Kill current subagent immediately (urgent: 'stop all
/// work')", "Wait for current subagent to finish (informational: 'heads up about future
/// step')", "Acknowledge and continue (advisory: instructions for a step not yet in
/// progress)".
pub fn emergency(task_id: &str, kind: EmergencyKind) -> String {
    match kind {
        EmergencyKind::Urgent => {
            format!("EMERGENCY (urgent): stop all work on {task_id} now; a sibling change invalidates the current step.")
        }
        EmergencyKind::Informational => format!(
            "EMERGENCY (informational): heads up for {task_id} about a future step; let the current subagent finish, then take it into account."
        ),
        EmergencyKind::Advisory => {
            format!("EMERGENCY (advisory): instructions for a step of {task_id} not yet in progress; acknowledge and continue.")
        }
    }
}

/// The conductor's instructions after an urgent emergency's "stop all work" (message type
/// `emergency`): the cross-cutting issue is dealt with, run the stopped work again
/// (docs/protocol.md C41; the seeds give no text).
pub fn emergency_resume(task_id: &str) -> String {
    format!("EMERGENCY (resume): the cross-cutting issue is resolved; resume work on {task_id}, running the stopped subagent again.")
}

/// Whether a conductor message is `emergency_resume`'s.
pub fn is_emergency_resume(text: &str) -> bool {
    text.starts_with("EMERGENCY (resume)")
}

/// Which of 000's three responses an emergency asks for, read back from its text.
pub fn emergency_kind(text: &str) -> Option<EmergencyKind> {
    [EmergencyKind::Urgent, EmergencyKind::Informational, EmergencyKind::Advisory]
        .into_iter()
        .find(|k| text.starts_with(&format!("EMERGENCY ({})", k.word())))
}

pub use crate::input::scenario::EmergencyKind;

fn yes_no(b: bool) -> &'static str {
    if b {
        "YES"
    } else {
        "NO"
    }
}

fn smoothness(r: &Report<'_>) -> i64 {
    r.smoothness
}

/// What a skip guidance says (000 "Example: Error Recovery & Retry Logic" Step 7: "Guidance on
/// skipping this work"); the musician recognises the guidance by it.
const SKIP_WORK: &str = "Skip this work:";

/// The conductor's answer to an error report (message type `fix_proposal`, docs/protocol.md
/// C40): one of the three 000 "Example: Error Recovery" Step 7 has the musician wait for.
pub fn error_fix(task_id: &str, reply: crate::input::scenario::ErrorReply) -> String {
    use crate::input::scenario::ErrorReply;
    let what = match reply {
        ErrorReply::Alternative => {
            "Alternative instructions: take the content from the task's other sources instead and retry the step.".to_string()
        }
        ErrorReply::Skip => format!("{SKIP_WORK} it is deferred to a later session; go on with the next agent without it."),
        ErrorReply::CorrectedPath | ErrorReply::ExitRequest => {
            "Use the corrected path docs2/guidelines/conductor/process-patterns.md and retry the step.".to_string()
        }
    };
    fix_proposal(task_id, &what)
}

/// Whether a conductor message is a guidance on skipping the failed work.
pub fn is_skip_guidance(message: &str) -> bool {
    message.contains(SKIP_WORK)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/protocol.md C87: a relaunched conductor counts as lost the sessions of its
    /// hand-overs that do not follow an exit.
    #[test]
    fn a_hand_over_after_an_exit_is_told_from_one_after_a_silence() {
        assert!(hands_over_an_exit(&conductor_handoff("task-01", 1, "exited cleanly")));
        assert!(hands_over_an_exit(&conductor_handoff("task-01", 2, "exited without a HANDOFF")));
        assert!(!hands_over_an_exit(&conductor_handoff("task-01", 1, "went stale (heartbeat 560 s old)")));
        assert!(!hands_over_an_exit(&conductor_handoff("task-01", 1, "was asked to exit and went silent (heartbeat 600 s old)")));
        assert!(!hands_over_an_exit("EXITED: the conductor requested exit (exit_requested), clean handoff prepared."));
    }

    /// 000 Example: Context-Tight Break Point, Step 3, with the simulator's numbers for it.
    fn warning() -> String {
        context_warning(&ContextWarning {
            context_pct: 52,
            self_correction: Some("step 3, agent 2 — test failure in parser, rewrote tokenizer"),
            agents_remaining: 4,
            agent_cost_pct: 4,
            risk_cost_pct: 8,
            agents_fit: 2,
            budget_pct: 65,
            estimate_pct: 71,
            worst_pct: 83,
            worst_with_handoff: false,
            recommended: 3,
            recommendation: "step 4 agent 2 + step 5 agents 1-2",
            deviations: "1 (Medium — checkpoint 2: review_failed)",
            zone: "escalate",
            escalation: None,
        })
    }

    #[test]
    fn a_context_warning_carries_the_seeds_fields_and_its_recommendation_reads_back() {
        let text = warning();
        assert_eq!(
            text,
            "CONTEXT WARNING: 52% usage\n  Self-Correction: YES (step 3, agent 2 — test failure in parser, rewrote tokenizer. ~6x context impact)\n  Agents Remaining: 4 (~4% each nominal, but ~8% each with self-correction risk = ~32% total)\n  Agents That Fit in 65% Budget: 2 (due to self-correction bloat)\n  Estimated Context at Checkpoint: 71% (worst case 83%)\n  Deviations: 1 (Medium — checkpoint 2: review_failed)\n  Recommendation: Complete step 4 agent 2 + step 5 agents 1-2 (3 more agents), then checkpoint and handoff (Cannot reliably reach the checkpoint: must pause now)\n  Awaiting conductor instructions"
        );
        assert_eq!(parse_agents_fit(&text), Some(2));
        assert_eq!(parse_recommendation(&text), Some((3, Some("step 4 agent 2 + step 5 agents 1-2".to_string()))));
        let scope = reduced_scope(3, Some("step 4 agent 2 + step 5 agents 1-2"));
        assert!(scope.contains("- Complete step 4 agent 2 + step 5 agents 1-2\n") && scope.ends_with("Total: 3 more agents + checkpoint."));
        assert_eq!(parse_reduced_scope(&scope), Some(3));
        assert_eq!(parse_reduced_scope(&reduced_scope(0, None)), Some(0));
    }

    #[test]
    fn the_exited_message_lists_pending_proposals_and_key_outputs() {
        let proposals = vec!["docs/implementation/proposals/2026-02-07-parser-rewrite-antipattern.md".to_string()];
        let outputs = vec![("docs/implementation/reports/task-03-handoff-s1.md".to_string(), "created"), (proposals[0].clone(), "created")];
        let text = exited(&Exited {
            task_id: "task-03",
            reason: "Context exhaustion",
            context_pct: 72,
            self_correction: Some("step 3"),
            last_completed: "5 (partial — agents 1-2)",
            remaining: "step 5 agent 3, final verification",
            proposals: &proposals,
            key_outputs: &outputs,
        });
        // 000 Example: Clean Exit & Handoff, Step 7, line for line.
        assert_eq!(
            text,
            "EXITED: Context exhaustion, clean handoff prepared.\nHANDOFF: temp/task-03-HANDOFF\nContext Usage: 72%\nSelf-Correction: YES (step 3, ~6x impact)\nLast Completed Step: 5 (partial — agents 1-2)\nRemaining Steps: step 5 agent 3, final verification\nProposals Pending: 1 (anti-pattern)\nKey Outputs:\n  - docs/implementation/reports/task-03-handoff-s1.md (created)\n  - docs/implementation/proposals/2026-02-07-parser-rewrite-antipattern.md (created)"
        );
    }

    fn report(escalation: bool) -> Report<'static> {
        Report {
            context_pct: 47,
            self_correction: Some("step 2, agent 3 — test failure in auth module, rewrote validation logic".to_string()),
            self_correction_minor: None,
            deviations: 1,
            deviation_summary: "1 (Medium — switched from TDD to fix-first due to flaky test fixture)".to_string(),
            smoothness: 4,
            agents_remaining: 3,
            agent_cost_pct: 8,
            proposal: Some("docs/implementation/proposals/task-03-auth-validation.md".to_string()),
            summary: "Completed auth module extraction, 2 knowledge-base files created",
            files_modified: 8,
            tests: "All passing".to_string(),
            verification: Vec::new(),
            key_outputs: vec![("docs/implementation/proposals/task-03-auth-validation.md".to_string(), "created")],
            commits: vec!["1a2b3c4".to_string(), "5d6e7f8".to_string()],
            escalation: escalation.then(|| self_correction_escalation("step 2, agent 3 — test failure in auth module")),
        }
    }

    /// 000 "Review Request" (its example's figures) with Execution Queries 5's Key Outputs and
    /// 004 "Request Review"'s Reason, Review focus and Commits.
    #[test]
    fn a_review_request_has_every_field_of_000_and_004() {
        assert_eq!(
            review_request(2, 5, &report(false)),
            "REVIEW REQUEST (Smoothness: 4/9):\n  Checkpoint: 2 of 5\n  Context Usage: 47%\n  Self-Correction: YES (step 2, agent 3 — test failure in auth module, rewrote validation logic. ~6x context impact for affected segment)\n  Deviations: 1 (Medium — switched from TDD to fix-first due to flaky test fixture)\n  Agents Remaining: 3 (~8% each, ~24% total)\n  Proposal: docs/implementation/proposals/task-03-auth-validation.md\n  Summary: Completed auth module extraction, 2 knowledge-base files created\n  Files Modified: 8\n  Tests: All passing\n  Key Outputs:\n    - docs/implementation/proposals/task-03-auth-validation.md (created)\n  Reason: scheduled checkpoint 2\n\nReview focus:\n- checkpoint 2 deliverables\n\nCommits: 1a2b3c4, 5d6e7f8"
        );
        let escalated = review_request(2, 5, &report(true));
        assert!(escalated.contains("(created)\n  Escalation: self-correction during execution (step 2, agent 3 — test failure in auth module): context estimates are off by ~6x; plan for an early handoff\n  Reason:"), "{escalated}");
        let mut bare = report(false);
        (bare.self_correction, bare.proposal, bare.key_outputs, bare.commits) = (None, None, Vec::new(), Vec::new());
        let text = review_request(1, 4, &bare);
        assert!(text.contains("  Self-Correction: NO\n") && text.contains("  Proposal: N/A\n"), "{text}");
        assert!(text.contains("  Key Outputs:\n    - none\n") && text.ends_with("Commits: none"), "{text}");
        // 000 Example: Verification Checkpoint Flow, Step 7: "Self-Correction: YES (removed
        // debug code)", "Tests: All 47 passing, 3 new tests", in 000 "Review Request"'s form.
        bare.self_correction_minor = Some("removed debug code".to_string());
        (bare.tests, bare.verification) = ("All passing (47 tests, 3 new)".to_string(), vec!["Flaky Tests: 1 (…)".to_string()]);
        let text = review_request(1, 4, &bare);
        assert!(text.contains("  Self-Correction: YES (removed debug code)\n"), "{text}");
        assert!(text.contains("  Tests: All passing (47 tests, 3 new)\n  Flaky Tests: 1 (…)\n  Key Outputs:"), "{text}");
    }

    /// 000 "Completion Report" with Key Outputs (Execution Queries 8); the final one with 004
    /// "Mark Complete"'s "Commit: [SHA]" and "All verification checks: PASSED".
    #[test]
    fn completion_messages_carry_key_outputs_and_the_final_one_its_commit() {
        let mut r = report(false);
        r.key_outputs.insert(0, (report_path("task-03"), "created"));
        let review = completion("task-03", &r, false);
        assert!(review.starts_with("TASK COMPLETE (Smoothness: 4/9):\n  Context Usage: 47%\n"), "{review}");
        assert!(
            review.ends_with("  Key Outputs:\n    - docs/implementation/reports/task-03-completion.md (created)\n    - docs/implementation/proposals/task-03-auth-validation.md (created)\n  Awaiting final review"),
            "{review}"
        );
        let last = completion("task-03", &r, true);
        assert!(last.ends_with("(created)\n  Commit: 5d6e7f8\n  All verification checks: PASSED"), "{last}");
    }

    /// 000 "Emergency Messages": three responses, each readable back from the text.
    #[test]
    fn emergencies_say_which_of_the_three_responses_they_ask_for() {
        for kind in [EmergencyKind::Urgent, EmergencyKind::Informational, EmergencyKind::Advisory] {
            let text = emergency("task-02", kind);
            assert_eq!(emergency_kind(&text), Some(kind), "{text}");
        }
        assert!(emergency("task-02", EmergencyKind::Urgent).contains("stop all work"));
        assert!(emergency("task-02", EmergencyKind::Informational).contains("let the current subagent finish"));
        assert!(emergency("task-02", EmergencyKind::Advisory).contains("acknowledge and continue"));
        assert_eq!(emergency_kind("REVIEW APPROVED: task-02 checkpoint passed."), None);
        // The resume is none of the three, and is told apart.
        assert_eq!(emergency_kind(&emergency_resume("task-02")), None);
        assert!(is_emergency_resume(&emergency_resume("task-02")));
        assert!(!is_emergency_resume(&emergency("task-02", EmergencyKind::Urgent)));
    }

    /// docs/protocol.md D15: the citation is a last line of its own, read back; the seeds'
    /// text stays as it was, so what the musician parses from it still parses.
    #[test]
    fn an_answer_cites_its_request_on_its_last_line_and_reads_back() {
        let scope = reduced_scope(2, Some("step 3 agents 1-2"));
        let cited = citing_request(scope.clone(), 17);
        assert_eq!(cited, format!("{scope}\nIn reply to: #17"));
        assert_eq!(cited_request(&cited), Some(17));
        assert_eq!(parse_reduced_scope(&cited), Some(2));
        assert_eq!(cited_request(&approval("task-01", true)), None, "the seeds' answers name no request");
        assert_eq!(cited_request("In reply to: #17\nREVIEW APPROVED"), None, "only the last line cites");
        assert_eq!(cited_request("REVIEW APPROVED\nIn reply to: #x"), None);
    }

    #[test]
    fn a_self_correction_escalation_warning_says_so_first() {
        let text = context_warning(&ContextWarning {
            context_pct: 34,
            self_correction: Some("step 3, agent 1 — test failure, rewrote the module"),
            agents_remaining: 1,
            agent_cost_pct: 4,
            risk_cost_pct: 8,
            agents_fit: 4,
            budget_pct: 65,
            estimate_pct: 41,
            worst_pct: 41,
            worst_with_handoff: false,
            recommended: 1,
            recommendation: "step 3 agent 2",
            deviations: "0",
            zone: "ask",
            escalation: Some(self_correction_escalation("step 3, agent 1 — test failure, rewrote the module")),
        });
        assert!(
            text.starts_with("CONTEXT WARNING: 34% usage\n  Escalation: self-correction during execution (step 3, agent 1 — test failure, rewrote the module): context estimates are off by ~6x; plan for an early handoff\n  Self-Correction: YES"),
            "{text}"
        );
        assert_eq!(parse_recommendation(&text), Some((1, Some("step 3 agent 2".to_string()))));
    }
}
