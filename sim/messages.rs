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
    /// 1 (smooth) to 9 (rough).
    pub smoothness: i64,
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
    /// The agents the musician recommends before the checkpoint and hand-off.
    pub recommended: u64,
    /// Those agents: "step 4 agent 2 + step 5 agents 1-2".
    pub recommendation: &'a str,
    pub deviations: &'a str,
    /// "ask" (70-80 %) or "escalate" (> 80 %).
    pub zone: &'a str,
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
    let estimate = if w.worst_pct != w.estimate_pct {
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
    format!(
        "CONTEXT WARNING: {ctx}% usage\n  Self-Correction: {sc}\n  Agents Remaining: {remaining}\n  Agents That Fit in {budget}% Budget: {fit}\n  Estimated Context at Checkpoint: {estimate}\n  Deviations: {dev}\n  Recommendation: {recommendation} ({ask})\n  Awaiting conductor instructions",
        ctx = w.context_pct,
        budget = w.budget_pct,
        dev = w.deviations,
    )
}

/// 000 "Error Report" format (message type `error`).
pub fn error_report(retry: u64, context_pct: i64, self_correction: bool, error: &str, task_id: &str) -> String {
    format!(
        "ERROR (Retry {retry}/5):\n  Context Usage: {context_pct}%\n  Self-Correction: {sc}\n  Error: {error}\n  Report: docs/implementation/reports/{task_id}-error-retry-{retry}.md\n  Key Outputs:\n    - docs/implementation/reports/{task_id}-error-retry-{retry}.md (created)\n  Awaiting conductor fix proposal",
        sc = yes_no(self_correction),
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

fn smoothness(r: &Report<'_>) -> i64 {
    r.smoothness
}

#[cfg(test)]
mod tests {
    use super::*;

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
            recommended: 3,
            recommendation: "step 4 agent 2 + step 5 agents 1-2",
            deviations: "1 (Medium — checkpoint 2: review_failed)",
            zone: "escalate",
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
}
