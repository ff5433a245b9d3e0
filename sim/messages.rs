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
    pub self_correction: bool,
    pub deviations: usize,
    pub agents_remaining: u64,
    pub agent_cost_pct: i64,
    pub summary: &'a str,
    pub files_modified: u64,
}

/// 000 "Review Request" format, with the fields 004 "Request Review" requires.
pub fn review_request(checkpoint: usize, checkpoints_total: usize, r: &Report<'_>) -> String {
    format!(
        "REVIEW REQUEST (Smoothness: {smooth}/9):\n  Checkpoint: {checkpoint} of {checkpoints_total}\n  Context Usage: {ctx}%\n  Self-Correction: {sc}\n  Deviations: {dev}\n  Agents Remaining: {left} (~{cost}% each, ~{total}% total)\n  Proposal: N/A\n  Summary: {summary}\n  Files Modified: {files}\n  Tests: All passing\n  Reason: scheduled checkpoint {checkpoint}\n\nReview focus:\n- checkpoint {checkpoint} deliverables",
        smooth = smoothness(r),
        ctx = r.context_pct,
        sc = yes_no(r.self_correction),
        dev = r.deviations,
        left = r.agents_remaining,
        cost = r.agent_cost_pct,
        total = r.agents_remaining as i64 * r.agent_cost_pct,
        summary = r.summary,
        files = r.files_modified,
    )
}

/// 000 "Completion Report" format (message type `completion`).
pub fn completion(task_id: &str, r: &Report<'_>, final_write: bool) -> String {
    let tail = if final_write { "\n  All verification checks: PASSED" } else { "\n  Awaiting final review" };
    format!(
        "TASK COMPLETE (Smoothness: {smooth}/9):\n  Context Usage: {ctx}%\n  Self-Correction: {sc}\n  Deviations: {dev}\n  Report: {report}\n  Summary: {summary}\n  Files Modified: {files}\n  Tests: All passing{tail}",
        smooth = smoothness(r),
        ctx = r.context_pct,
        sc = yes_no(r.self_correction),
        dev = r.deviations,
        report = report_path(task_id),
        summary = r.summary,
        files = r.files_modified,
    )
}

/// 000 "Claim Blocked" format.
pub fn claim_blocked(task_id: &str, why: &str) -> String {
    format!("CLAIM BLOCKED: Guard prevented claim on {task_id} ({why}).\n  Created fallback row to exit cleanly. Conductor intervention needed.")
}

/// 000 "Context Warning (Error State)" format (message type `context_warning`).
pub struct ContextWarning<'a> {
    pub context_pct: i64,
    pub self_correction: Option<&'a str>,
    pub agents_remaining: u64,
    pub agent_cost_pct: i64,
    pub risk_cost_pct: i64,
    pub agents_fit: i64,
    pub budget_pct: i64,
    pub estimate_pct: i64,
    pub deviations: &'a str,
    /// "ask" (70-80 %) or "escalate" (> 80 %).
    pub zone: &'a str,
}

pub fn context_warning(w: &ContextWarning<'_>) -> String {
    let sc = match w.self_correction {
        Some(details) => format!("YES ({details}. ~6x context impact)"),
        None => "NO".to_string(),
    };
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
    let ask = if w.zone == "ask" {
        "I think I can reach the checkpoint, but what do you think?"
    } else {
        "Cannot reliably reach the checkpoint: must pause now"
    };
    format!(
        "CONTEXT WARNING: {ctx}% usage\n  Self-Correction: {sc}\n  Agents Remaining: {remaining}\n  Agents That Fit in {budget}% Budget: {fit}\n  Estimated Context at Checkpoint: {est}%\n  Deviations: {dev}\n  Recommendation: complete {fit} more agent(s), then checkpoint and handoff ({ask})\n  Awaiting conductor instructions",
        ctx = w.context_pct,
        budget = w.budget_pct,
        fit = w.agents_fits_display(),
        est = w.estimate_pct,
        dev = w.deviations,
    )
}

impl ContextWarning<'_> {
    fn agents_fits_display(&self) -> i64 {
        self.agents_fit.max(0)
    }
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
pub fn exited(task_id: &str, reason: &str, context_pct: i64, self_correction: bool, last_completed: &str, remaining: &str) -> String {
    format!(
        "EXITED: {reason}, clean handoff prepared.\nHANDOFF: temp/{task_id}-HANDOFF\nContext Usage: {context_pct}%\nSelf-Correction: {sc}\nLast Completed Step: {last_completed}\nRemaining Steps: {remaining}",
        sc = yes_no(self_correction),
    )
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

/// The conductor's rejection with feedback (message type `rejection`).
pub fn rejection(task_id: &str) -> String {
    format!("REVIEW FAILED: {task_id} needs changes before approval.\n  Issues: see review notes\n  Apply the feedback, re-run verification and resubmit.")
}

/// The conductor's proposed fix for a review or an error (message type `fix_proposal`).
pub fn fix_proposal(task_id: &str, what: &str) -> String {
    format!("FIX PROPOSED: {task_id}\n  {what}\n  Apply it, re-run verification and resubmit or resume.")
}

/// The conductor's reduced scope after a context warning (000 "Context-Tight Break Point").
pub fn reduced_scope(agents: i64) -> String {
    format!("Context plan accepted with modification:\n- Complete {agents} more agents\n- Run checkpoint verification on completed work\n- Prepare handoff after checkpoint approval")
}

/// Parses `Complete N more agents` from a reduced-scope message.
pub fn parse_reduced_scope(message: &str) -> Option<u64> {
    let rest = message.split("Complete ").nth(1)?;
    rest.split_whitespace().next()?.parse().ok()
}

/// Parses `Agents That Fit in NN% Budget: N` from a context warning.
pub fn parse_agents_fit(message: &str) -> Option<i64> {
    let line = message.lines().find(|l| l.contains("Agents That Fit"))?;
    line.rsplit(':').next()?.trim().parse().ok()
}

/// The conductor's handoff message to the next session (message type `handoff`).
pub fn conductor_handoff(task_id: &str, previous_session: u32, why: &str) -> String {
    format!("HANDOFF: {task_id} session S{previous_session} {why}. Resumption instructions:\n- Read temp/{task_id}-HANDOFF if present, and temp/{task_id}-status\n- Re-run verification from the last checkpoint\n- Then continue from the pending work")
}

/// A conductor emergency message (000 "Emergency Messages"; message type `emergency`).
pub fn emergency(task_id: &str, urgent: bool) -> String {
    if urgent {
        format!("EMERGENCY (urgent): stop all work on {task_id} now; a sibling change invalidates the current step.")
    } else {
        format!("EMERGENCY (informational): heads up for {task_id} about a future step; no action needed now.")
    }
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "YES"
    } else {
        "NO"
    }
}

/// 0 is smooth, 9 is rough: deviations and self-correction make a run rougher.
fn smoothness(r: &Report<'_>) -> usize {
    (r.deviations * 2 + if r.self_correction { 3 } else { 0 }).min(9)
}
