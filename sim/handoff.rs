//! The HANDOFF document (seed 003 "HANDOFF Document Structure"), the resumption assessment
//! (003 "Resumption Decision Tree", "State Reconciliation") and the RESUMPTION status
//! (003 "Verbose Resumption Status"). A successor session knows only what these files and
//! the database say: nothing passes between sessions in memory.

use std::fmt::Write;

/// Where work continues: the next subagent to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    pub step: u64,
    pub agent: u64,
}

impl Position {
    pub const START: Position = Position { step: 1, agent: 1 };
}

pub struct HandoffDoc<'a> {
    pub task_id: &'a str,
    pub session_id: &'a str,
    pub worked_by: &'a str,
    pub exit_reason: &'a str,
    pub context_pct: i64,
    pub timestamp: &'a str,
    pub steps: u64,
    pub agents_per_step: u64,
    pub next: Position,
    pub deviations: &'a [String],
    pub self_correction: Option<&'a str>,
    pub last_checkpoint_step: Option<u64>,
    /// Proposals created and not yet integrated (000 Example: Clean Exit & Handoff, Step 4).
    pub proposals: &'a [String],
}

/// The 003 structure, with a machine-readable "Continue from" line in the instructions.
pub fn render(h: &HandoffDoc<'_>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# HANDOFF: {}\n", h.task_id);
    let _ = writeln!(out, "## Session Info");
    let _ = writeln!(out, "- Session ID: {}", h.session_id);
    let _ = writeln!(out, "- worked_by: {}", h.worked_by);
    let _ = writeln!(out, "- Exit reason: {}", h.exit_reason);
    let _ = writeln!(out, "- Context at exit: {}%", h.context_pct);
    let _ = writeln!(out, "- Timestamp: {}\n", h.timestamp);
    let _ = writeln!(out, "## Completed Steps");
    for step in 1..=h.steps {
        if step < h.next.step {
            let _ = writeln!(out, "- Step {step}: done ✅");
        } else if step == h.next.step && h.next.agent > 1 {
            let _ = writeln!(out, "- Step {step}: partial — agents 1-{} done, agent {} not started", h.next.agent - 1, h.next.agent);
        }
    }
    let _ = writeln!(out, "\n## Pending Steps");
    for step in h.next.step..=h.steps {
        if step == h.next.step && h.next.agent > 1 {
            let _ = writeln!(out, "- Step {step} agents {}-{}: remaining work", h.next.agent, h.agents_per_step);
        } else {
            let _ = writeln!(out, "- Step {step}: full step");
        }
    }
    let _ = writeln!(out, "- Final verification and completion\n");
    let _ = writeln!(out, "## Deviations");
    if h.deviations.is_empty() {
        let _ = writeln!(out, "- none");
    }
    for d in h.deviations {
        let _ = writeln!(out, "- {d}");
    }
    let _ = writeln!(out, "\n## Self-Correction");
    let _ = writeln!(out, "- {}", h.self_correction.map_or("NO".to_string(), |d| format!("YES ({d})")));
    let _ = writeln!(out, "\n## Pending Proposals");
    if h.proposals.is_empty() {
        let _ = writeln!(out, "- none");
    }
    for p in h.proposals {
        let _ = writeln!(out, "- {p} (ANTI_PATTERN)");
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "## Next Session Instructions");
    let n = h.worked_by.rsplit_once("-S").and_then(|(_, n)| n.parse::<u32>().ok()).unwrap_or(1) + 1;
    let base = h.worked_by.rsplit_once("-S").map_or(h.worked_by, |(b, _)| b);
    let _ = writeln!(out, "1. Claim task with worked_by = {base}-S{n}");
    let _ = writeln!(out, "2. Read this HANDOFF + conductor's handoff message");
    match h.last_checkpoint_step {
        Some(step) => {
            let _ = writeln!(out, "3. Re-run verification tests from the checkpoint after step {step}");
        }
        None => {
            let _ = writeln!(out, "3. Re-run verification tests");
        }
    }
    let _ = writeln!(out, "4. Continue from step {} agent {}", h.next.step, h.next.agent);
    let _ = writeln!(out, "5. Run final checkpoint, submit completion review");
    out
}

/// What a successor reads back from a HANDOFF document.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedHandoff {
    pub session_id: String,
    pub timestamp: String,
    pub context_pct: Option<i64>,
    pub next: Option<Position>,
    pub deviations: usize,
    pub self_correction: bool,
}

pub fn parse(text: &str) -> ParsedHandoff {
    let field = |name: &str| text.lines().find_map(|l| l.trim().strip_prefix(name).map(|v| v.trim().to_string())).unwrap_or_default();
    let next = text.lines().find_map(|l| {
        let rest = l.split("Continue from step ").nth(1)?;
        let mut words = rest.split_whitespace();
        let step = words.next()?.parse().ok()?;
        let agent = words.nth(1)?.parse().ok()?;
        Some(Position { step, agent })
    });
    let deviations = section(text, "## Deviations").iter().filter(|l| l.starts_with("- ") && l.trim() != "- none").count();
    let self_correction = section(text, "## Self-Correction").iter().any(|l| l.contains("YES"));
    ParsedHandoff {
        session_id: field("- Session ID:"),
        timestamp: field("- Timestamp:"),
        context_pct: field("- Context at exit:").trim_end_matches('%').parse().ok(),
        next,
        deviations,
        self_correction,
    }
}

fn section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    text.lines().skip_while(|l| l.trim() != heading).skip(1).take_while(|l| !l.starts_with("## ")).collect()
}

/// Where the status file says work stood: the position after the last `agent M integrated`
/// (or `completed by musician`) line, and the step of the last approved checkpoint.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatusProgress {
    pub last_done: Option<Position>,
    pub last_checkpoint_step: Option<u64>,
    pub lines: usize,
}

pub fn status_progress(status: &str) -> StatusProgress {
    let mut progress = StatusProgress::default();
    for line in status.lines() {
        progress.lines += 1;
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.len() >= 5
            && words[0] == "step"
            && words[2] == "agent"
            && (words[4] == "integrated" || line.contains("completed by musician"))
        {
            if let (Ok(step), Ok(agent)) = (words[1].parse(), words[3].parse()) {
                progress.last_done = Some(Position { step, agent });
            }
        }
        if words.len() >= 5 && words[0] == "checkpoint" && words[2] == "approved" && words[3] == "(step" {
            progress.last_checkpoint_step = words[4].trim_end_matches(')').parse().ok();
        }
    }
    progress
}

/// 003 "State Reconciliation" categories.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mismatch {
    None,
    Benign,
    Suspicious,
    Contradictory,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandoffState {
    Present,
    Missing,
    Stale,
}

impl HandoffState {
    pub fn word(self) -> &'static str {
        match self {
            HandoffState::Present => "present",
            HandoffState::Missing => "missing",
            HandoffState::Stale => "stale",
        }
    }
}

/// The successor's reading of what it found (003 "Resumption Decision Tree").
#[derive(Clone, Debug, PartialEq)]
pub struct Assessment {
    pub handoff: HandoffState,
    pub mismatch: Mismatch,
    pub mismatches: Vec<String>,
    pub deviations: usize,
    pub resume_from: Position,
    pub previous_session: String,
    pub previous_self_correction: bool,
}

impl Assessment {
    /// 003: ≤ 2 deviations and no mismatches → clean; > 2 deviations or a contradiction →
    /// guidance; otherwise verification clarifies.
    pub fn verdict(&self) -> &'static str {
        if self.deviations > 2 || self.mismatch == Mismatch::Contradictory {
            "needs guidance"
        } else if self.handoff == HandoffState::Present && self.mismatch == Mismatch::None {
            "clean handoff"
        } else {
            "needs verification"
        }
    }
}

/// Compares HANDOFF, status and deviations files. `handoff_max_age_s` is how old a HANDOFF
/// may be and still count as "recent"; `age_s` is its age now.
pub fn assess(
    handoff: Option<&str>,
    handoff_age_s: Option<i64>,
    handoff_max_age_s: i64,
    status: Option<&str>,
    deviations: Option<&str>,
    agents_per_step: u64,
) -> Assessment {
    let parsed = handoff.map(parse);
    let progress = status.map(status_progress).unwrap_or_default();
    let deviation_lines = deviations.map_or(0, |d| d.lines().filter(|l| !l.trim().is_empty()).count());
    let handoff_state = match (&parsed, handoff_age_s) {
        (None, _) => HandoffState::Missing,
        (Some(_), Some(age)) if age > handoff_max_age_s => HandoffState::Stale,
        (Some(_), _) => HandoffState::Present,
    };
    let status_next = progress.last_done.map(|p| {
        if p.agent >= agents_per_step {
            Position { step: p.step + 1, agent: 1 }
        } else {
            Position { step: p.step, agent: p.agent + 1 }
        }
    });
    let checkpoint_next = progress.last_checkpoint_step.map(|s| Position { step: s + 1, agent: 1 });
    let mut mismatches = Vec::new();
    if let Some(p) = &parsed {
        if status.is_none() {
            mismatches.push("HANDOFF present but no status file".to_string());
        }
        if let (Some(h), Some(s)) = (p.next, status_next) {
            if h != s {
                mismatches.push(format!(
                    "HANDOFF continues from step {} agent {}, status from step {} agent {}",
                    h.step, h.agent, s.step, s.agent
                ));
            }
        }
        if p.deviations != deviation_lines {
            mismatches.push(format!("HANDOFF lists {} deviations, the deviations file {}", p.deviations, deviation_lines));
        }
    }
    let mismatch = match (mismatches.len(), parsed.is_some() && status.is_none()) {
        (_, true) => Mismatch::Contradictory,
        (0, _) => Mismatch::None,
        (1, _) => Mismatch::Benign,
        _ => Mismatch::Suspicious,
    };
    // A fresh, consistent HANDOFF says where to continue; otherwise the last approved
    // checkpoint does (000 "Mid-Session Resumption Protocol": resume from last checkpoint).
    let resume_from = match (handoff_state, mismatch, parsed.as_ref().and_then(|p| p.next)) {
        (HandoffState::Present, Mismatch::None | Mismatch::Benign, Some(next)) => next,
        _ => checkpoint_next.unwrap_or(Position::START),
    };
    Assessment {
        handoff: handoff_state,
        mismatch,
        mismatches,
        deviations: deviation_lines,
        resume_from,
        previous_session: parsed.as_ref().map(|p| p.session_id.clone()).unwrap_or_else(|| "unknown (no HANDOFF)".to_string()),
        previous_self_correction: parsed.as_ref().is_some_and(|p| p.self_correction),
    }
}

/// 003 "Verbose Resumption Status".
pub fn resumption_status(worked_by: &str, a: &Assessment, context_pct: i64, pending_messages: usize, severities: &str) -> String {
    let mismatches =
        if a.mismatches.is_empty() { "none".to_string() } else { format!("{} ({})", a.mismatches.len(), a.mismatches.join("; ")) };
    format!(
        "RESUMPTION: {worked_by} taking over\n  Previous session: {prev}\n  HANDOFF: {handoff}\n  Context Usage: {context_pct}% (fresh session)\n  Deviations found: {dev} ({severities})\n  Status/comms mismatches: {mismatches}\n  Pending conductor messages: {pending_messages}\n  Self-correction in previous session: {sc}\n  Assessment: {verdict}\n  Verification tests: all passing\n  Resuming from: step {step} agent {agent}",
        prev = a.previous_session,
        handoff = a.handoff.word(),
        dev = a.deviations,
        sc = if a.previous_self_correction { "YES" } else { "NO" },
        verdict = a.verdict(),
        step = a.resume_from.step,
        agent = a.resume_from.agent,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rendered_handoff_parses_back_and_agrees_with_its_status_file() {
        let deviations = vec!["checkpoint 2: review_failed (Smoothness 6/9) [Medium]".to_string()];
        let doc = render(&HandoffDoc {
            task_id: "task-03",
            session_id: "abc",
            worked_by: "musician-task-03",
            exit_reason: "context exhaustion",
            context_pct: 72,
            timestamp: "2026-02-07 16:45:00",
            steps: 5,
            agents_per_step: 3,
            next: Position { step: 5, agent: 3 },
            deviations: &deviations,
            self_correction: Some("step 3, agent 2"),
            last_checkpoint_step: Some(4),
            proposals: &[],
        });
        assert!(doc.contains("1. Claim task with worked_by = musician-task-03-S2"));
        let parsed = parse(&doc);
        assert_eq!(
            (parsed.session_id.as_str(), parsed.context_pct, parsed.next, parsed.deviations),
            ("abc", Some(72), Some(Position { step: 5, agent: 3 }), 1)
        );
        let status = "step 5 agent 2 integrated [ctx: 65%]\ncheckpoint 3 approved (step 4) [ctx: 60%]\n";
        let a = assess(Some(&doc), Some(60), 3600, Some(status), Some(&deviations[0]), 3);
        assert_eq!(
            (a.handoff, a.mismatch, a.resume_from, a.verdict()),
            (HandoffState::Present, Mismatch::None, Position { step: 5, agent: 3 }, "clean handoff")
        );
        let missing = assess(None, None, 3600, Some(status), None, 3);
        assert_eq!(
            (missing.handoff, missing.resume_from, missing.verdict()),
            (HandoffState::Missing, Position { step: 5, agent: 1 }, "needs verification")
        );
        let stale = assess(Some(&doc), Some(7200), 3600, Some(status), Some(&deviations[0]), 3);
        assert_eq!((stale.handoff, stale.resume_from), (HandoffState::Stale, Position { step: 5, agent: 1 }));
    }
}
