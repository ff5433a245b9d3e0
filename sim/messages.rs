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

/// The conductor's answer to a review (message type `approval`).
pub fn approval(task_id: &str, completion: bool) -> String {
    if completion {
        format!("REVIEW APPROVED: {task_id} completion accepted. Write the final report and mark complete.")
    } else {
        format!("REVIEW APPROVED: {task_id} checkpoint passed. Proceed with the next steps.")
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
