//! Context control as 000 "Context Monitoring & Break Point Logic" says it (issue 27,
//! docs/protocol.md C16, C17, C32, D7): the evaluation after every agent return from 50 %, the
//! ask and escalate zones, the "adjust approach" reply, and no hand-off before the work.

use std::path::Path;

use crate::support::{ctx_of, root, run_into, run_text, status_lines};

const THRESHOLDS: &str = "scenarios/context-thresholds.toml";

/// The status lines of one session of `task`: from its claim to the next session's bootstrap.
fn session_lines(dir: &Path, task: &str, worked_by: &str) -> Vec<String> {
    let lines = status_lines(dir, task);
    let claim = format!(", worked_by: {worked_by} [");
    let from = lines.iter().position(|l| l.contains(&claim)).unwrap_or_else(|| panic!("no claim by {worked_by}"));
    lines[from + 1..].iter().take_while(|l| !l.starts_with("bootstrap started")).cloned().collect()
}

/// From 50 % the musician evaluates after every agent return, not once per checkpoint segment:
/// S1 of task-01 evaluates twice before checkpoint 1 (both "proceed") and again after it.
#[test]
fn context_is_evaluated_after_every_agent_from_the_threshold() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out) = run_into(THRESHOLDS, &[], tmp.path());
    assert_eq!(code, 0, "{out}");
    let s1 = session_lines(tmp.path(), "task-01", "musician-task-01");
    let checkpoint = s1.iter().position(|l| l.starts_with("checkpoint 1 reached")).unwrap();
    let before: Vec<&String> = s1[..checkpoint].iter().filter(|l| l.starts_with("CONTEXT EVALUATION triggered")).collect();
    assert!(before.len() >= 2, "an evaluation after each agent from 50 %: {s1:#?}");
    assert!(before.iter().all(|l| ctx_of(l) >= 50), "{before:?}");
    // Each evaluation follows an agent's integration, or (C55) opens a step after an approved
    // checkpoint grew the context.
    for (i, _) in s1.iter().enumerate().filter(|(_, l)| l.starts_with("CONTEXT EVALUATION")) {
        let step_line = |end: &str| s1[i - 1].starts_with("step ") && s1[i - 1].split(" [ctx").next().is_some_and(|l| l.ends_with(end));
        assert!(s1[i - 1].contains(" integrated") || step_line("completed") || step_line("started"), "{:?}", &s1[i - 1..=i]);
    }
}

/// The two zones are distinct: an ask (70-80 %) proposes every agent to the checkpoint ("I think
/// I can reach the checkpoint"), an escalation (> 80 %) only those that fit ("must pause now").
#[test]
fn the_ask_zone_proposes_the_way_to_the_checkpoint_and_the_escalate_zone_fewer_agents() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out) = run_into(THRESHOLDS, &[], tmp.path());
    assert_eq!(code, 0, "{out}");
    let messages = crate::support::messages(tmp.path());
    let warnings: Vec<&String> = messages.iter().map(|m| &m.4).filter(|t| t.starts_with("CONTEXT WARNING")).collect();
    let field = |text: &str, label: &str| -> String {
        text.lines().find_map(|l| l.trim().strip_prefix(label)).unwrap_or_else(|| panic!("no {label} in {text}")).to_string()
    };
    let asks: Vec<&&String> = warnings.iter().filter(|t| t.contains("what do you think?")).collect();
    let escalations: Vec<&&String> = warnings.iter().filter(|t| t.contains("must pause now")).collect();
    assert!(!asks.is_empty() && !escalations.is_empty(), "both zones occur on seed 15: {warnings:#?}");
    for ask in asks {
        let remaining: u64 = field(ask, "Agents Remaining: ").split_whitespace().next().unwrap().parse().unwrap();
        // With the checkpoint next there is nothing to propose but the checkpoint itself.
        let proposed = if remaining == 0 { "checkpoint on the work done".to_string() } else { format!("({remaining} more agents)") };
        assert!(field(ask, "Recommendation: ").contains(&proposed), "{ask}");
    }
    for esc in escalations {
        let remaining: u64 = field(esc, "Agents Remaining: ").split_whitespace().next().unwrap().parse().unwrap();
        let recommendation = field(esc, "Recommendation: ");
        assert!(!recommendation.contains(&format!("({remaining} more agents)")), "fewer than all: {esc}");
    }
}

/// No hand-off the seeds do not describe: slow-clean-exit's S1 hands off when an agent's return
/// takes it past the ceiling (81 %; it hands off on that line, C151), where the simulator's old check before the next agent
/// (`ceiling-before-work`) handed off at 48 %, below the 50 % evaluation, asking nobody.
#[test]
fn the_ceiling_is_met_after_an_agent_and_the_old_check_before_work_is_a_variant() {
    let scenario = "scenarios/faults/slow-clean-exit.toml";
    let tmp = tempfile::tempdir().unwrap();
    let (code, out) = run_into(scenario, &[], tmp.path());
    assert_eq!(code, 0, "{out}");
    let s1 = session_lines(tmp.path(), "task-01", "musician-task-01");
    let handoff = s1.iter().find(|l| l.contains("handing off now")).expect("S1 hands off");
    // Handed off on the return that crossed the ceiling, its result taken in first (C151).
    assert!(handoff.starts_with("step 1 agent 2 returned: context 81% is past the 80% ceiling") && ctx_of(handoff) > 80, "{handoff}");
    let at = s1.iter().position(|l| l == handoff).unwrap();
    assert!(s1[at + 1].starts_with("step 1 agent 2 integrated into the hand-off"), "{s1:#?}");
    assert!(!s1.iter().any(|l| l.starts_with("context check before")), "{s1:#?}");
    let tmp = tempfile::tempdir().unwrap();
    run_into(scenario, &["ceiling-before-work"], tmp.path());
    let s1 = session_lines(tmp.path(), "task-01", "musician-task-01");
    let handoff = s1.iter().find(|l| l.contains("handing off now")).expect("S1 hands off");
    assert!(handoff.starts_with("context check before step 1 agent 2 launch") && ctx_of(handoff) < 50, "{handoff}");
}

/// 000 "Context escalation response states" 2, "Adjust approach as follows: [instructions]":
/// the musician applies it and goes on with its scope as planned — no agent skipped, no
/// hand-off scheduled by the reply.
#[test]
fn an_adjust_approach_reply_keeps_the_scope_and_schedules_no_handoff() {
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join(THRESHOLDS)).unwrap().replace("context_reply = \"fix\"", "context_reply = \"adjust\"");
    let (dir, summary) = run_text("adjust", &text, tmp.path(), &[]);
    assert!(summary.verdict.passed(), "{}", summary.render());
    let lines = status_lines(&dir, "task-01");
    let adjusted = lines
        .iter()
        .position(|l| l.starts_with("conductor fix_proposed: adjusting approach — Adjust approach as follows:"))
        .expect("an adjust reply");
    assert!(!lines.iter().any(|l| l.contains("reduced scope")), "{lines:#?}");
    // The agent right after the reply is the next of the plan, run in the same session.
    let next = lines[adjusted + 1..].iter().find(|l| l.contains(" launched")).unwrap();
    assert!(next.starts_with("step "), "{next}");
    let deviations = std::fs::read_to_string(dir.join("temp/task-01-deviations")).unwrap();
    assert!(deviations.contains("approach adjusted per conductor after a context warning [Low"), "{deviations}");
}

/// The largest figure of a warning's `Estimated Context at Checkpoint:` line (the nominal
/// estimate, or its worst case when one is given).
fn estimate_reported(warning: &str) -> i64 {
    let line = warning.lines().find_map(|l| l.trim().strip_prefix("Estimated Context at Checkpoint: ")).expect("an estimate");
    line.split(|c: char| !c.is_ascii_digit()).filter_map(|n| n.parse().ok()).max().expect("a figure")
}

/// Issue 42 (R2), docs/protocol.md C161: a warning's zone is 000's zone of the estimate it
/// reports ("70-80% … ask for confirmation", ">80% … escalate to conductor (must pause now)").
/// In approve seed 15 S2's ceiling escalation reported "76%", an ask-zone figure, under "must
/// pause now": the check that fired also keeps room for the checkpoint and the hand-off. The
/// warning now reports that projection as its worst case.
#[test]
fn a_warning_labelled_must_pause_now_reports_an_estimate_past_80_and_an_ask_one_at_most_80() {
    for scenario in ["scenarios/context-replies/approve.toml", THRESHOLDS] {
        let tmp = tempfile::tempdir().unwrap();
        let (_, out) = run_into(scenario, &[], tmp.path());
        let warnings: Vec<String> =
            crate::support::messages(tmp.path()).into_iter().map(|m| m.4).filter(|t| t.starts_with("CONTEXT WARNING")).collect();
        // A self-correction escalates whatever its estimate (000 "Deviations & Escalation
        // Thresholds"); it says so on its own line.
        let by_zone =
            |label: &str| warnings.iter().filter(move |t| t.contains(label) && !t.contains("\n  Escalation: ")).collect::<Vec<_>>();
        let (escalations, asks) = (by_zone("must pause now"), by_zone("what do you think?"));
        assert!(!escalations.is_empty(), "{scenario}: {out}");
        for warning in escalations {
            assert!(estimate_reported(warning) > 80, "{scenario}: {warning}");
        }
        for warning in asks {
            assert!(estimate_reported(warning) <= 80, "{scenario}: {warning}");
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    run_into("scenarios/context-replies/approve.toml", &[], tmp.path());
    let s2 = session_lines(tmp.path(), "task-01", "musician-task-01-S2");
    assert!(
        s2.iter().any(|l| l.starts_with("context check before step 2 agent 6 launch: ~15% more would cross the 80% ceiling (estimate 76% at next checkpoint, worst case ")
            && l.contains("% with the hand-off): escalating, must pause now")),
        "{s2:#?}"
    );
}
