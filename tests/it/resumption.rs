//! Resumption (seed 003) on variations of the worked examples: what a successor session
//! finds, reconciles and reports when its predecessors handed off, crashed, or both.

use std::path::Path;

use crate::support::{rehearsal, root, status_lines, stderr, stdout};

/// Runs a copy of `scenarios/examples/<name>.toml` changed by `edit` (the TOML text in, the
/// TOML text out), with `variants`; returns (run folder, stdout, exit code).
fn run_edited(name: &str, edit: impl Fn(&str) -> String, variants: &[&str]) -> (tempfile::TempDir, String, i32) {
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("scenarios/examples").join(format!("{name}.toml"))).unwrap();
    let edited = edit(&text);
    assert_ne!(edited, text, "the edit changes the scenario");
    let path = tmp.path().join(format!("{name}.toml"));
    std::fs::write(&path, edited).unwrap();
    let out = tmp.path().join("run");
    let mut args = vec!["run", path.to_str().unwrap(), "--out", out.to_str().unwrap()];
    for variant in variants {
        args.extend(["--variant", variant]);
    }
    let o = rehearsal(&args);
    let code = o.status.code().expect("exit code");
    assert!(code == 0 || code == 1, "{name}: exit {code}\n{}", stderr(&o));
    (tmp, stdout(&o), code)
}

fn run_dir(tmp: &tempfile::TempDir) -> std::path::PathBuf {
    tmp.path().join("run")
}

/// The lines of one section (`## Deviations`) of a HANDOFF document.
fn handoff_section(doc: &str, heading: &str) -> Vec<String> {
    doc.lines().skip_while(|l| l.trim() != heading).skip(1).take_while(|l| !l.starts_with("## ")).map(str::to_string).collect()
}

/// The RESUMPTION blocks of the status file, each as its lines without `[ctx: NN%]`.
fn resumptions(dir: &Path, task: &str) -> Vec<Vec<String>> {
    let lines = status_lines(dir, task);
    let strip = |l: &String| l.rsplit_once(" [ctx: ").map_or(l.clone(), |(text, _)| text.to_string());
    let mut blocks = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        if line.starts_with("RESUMPTION: ") {
            let block: Vec<String> =
                std::iter::once(line).chain(lines[at + 1..].iter().take_while(|l| l.starts_with("  "))).map(strip).collect();
            blocks.push(block);
        }
    }
    blocks
}

fn field<'a>(block: &'a [String], label: &str) -> &'a str {
    block.iter().find_map(|l| l.trim_start().strip_prefix(label)).map(str::trim).unwrap_or_else(|| panic!("no `{label}` in {block:#?}"))
}

/// With 16 steps (11 more of 3 agents) and no rejected checkpoint the context-tight story
/// hands off three times; each session defers agents (a Low deviation), the only deviations.
/// 003 "HANDOFF Document Structure": the Deviations section is the list of the deviations
/// file, which is the task's, not one session's.
#[test]
fn a_handoff_lists_every_deviation_of_the_task_so_far() {
    let longer = |t: &str| {
        t.replace("steps = 5\n", "steps = 16\n")
            .replace("step_agents = [1, 1, 2, 2, 3]", "step_agents = [1, 1, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3]")
            .replace("[[conductor.answers]]\ntask = 1\nreview = 2\nanswer = \"review_failed\"\n", "")
    };
    let (tmp, out, code) = run_edited("context-tight-break-point", longer, &[]);
    assert_eq!(code, 0, "{out}");
    let dir = run_dir(&tmp);
    let file: Vec<String> = std::fs::read_to_string(dir.join("temp/task-01-deviations")).unwrap().lines().map(str::to_string).collect();
    assert_eq!(file.len(), 3, "one deferral per handing-off session: {file:?}");
    // The last HANDOFF (S3's) lists all three, in the file's order.
    let doc = std::fs::read_to_string(dir.join("temp/task-01-HANDOFF")).unwrap();
    let listed: Vec<String> =
        handoff_section(&doc, "## Deviations").into_iter().filter_map(|l| l.strip_prefix("- ").map(str::to_string)).collect();
    assert_eq!(listed, file);
    // Every successor finds the HANDOFF and the file agreeing.
    let blocks = resumptions(&dir, "task-01");
    assert_eq!(blocks.len(), 3, "S2, S3 and S4 resume");
    for (n, block) in blocks.iter().enumerate() {
        assert!(field(block, "Deviations found:").starts_with(&format!("{} ", n + 1)), "{block:#?}");
        assert_eq!(field(block, "Status/comms mismatches:"), "none", "{block:#?}");
    }
}

/// The session id a status file's `task claimed` line gives for `worked_by`.
fn claimed_session(dir: &Path, worked_by: &str) -> String {
    status_lines(dir, "task-01")
        .iter()
        .find_map(|l| {
            let rest = l.strip_prefix("task claimed, session: ")?;
            let (id, by) = rest.split_once(", worked_by: ")?;
            (by.split(" [ctx").next() == Some(worked_by)).then(|| id.to_string())
        })
        .unwrap_or_else(|| panic!("no claim by {worked_by}"))
}

/// Issue 14: S1 hands off cleanly, S2 resumes and crashes right after its RESUMPTION message,
/// the conductor finds S2 stale and launches S3. The HANDOFF on disk is S1's: for S3 it is
/// stale (003 "Resumption Decision Tree": the previous session, S2, crashed), and S3 names S2
/// as its previous session.
#[test]
fn a_successor_of_a_crashed_session_finds_the_handoff_stale_and_names_its_predecessor() {
    let crash = "\n[[faults.crash]]\ntask = 1\nsession = 2\nat = \"after:send_resumption\"\n";
    let (tmp, out, code) = run_edited("clean-exit-handoff", |t| format!("{t}{crash}"), &[]);
    assert_eq!(code, 0, "{out}");
    let dir = run_dir(&tmp);
    let (s1, s2) = (claimed_session(&dir, "musician-task-01"), claimed_session(&dir, "musician-task-01-S2"));
    let blocks = resumptions(&dir, "task-01");
    assert_eq!(blocks.len(), 2, "S2 and S3 resume");
    // S2 took over from S1's clean exit.
    assert_eq!(field(&blocks[0], "Previous session:"), format!("{s1} (musician-task-01)"));
    assert!(field(&blocks[0], "HANDOFF:").starts_with("present (clean exit at "), "{:#?}", blocks[0]);
    assert_eq!(field(&blocks[0], "Assessment:"), "clean handoff");
    // S3 took over from S2, which crashed: S1's HANDOFF is stale, with the reason.
    let s3 = &blocks[1];
    assert_eq!(field(s3, "Previous session:"), format!("{s2} (musician-task-01-S2)"));
    let handoff = field(s3, "HANDOFF:");
    assert!(handoff.starts_with(&format!("stale (written by {s1} (musician-task-01) at ")), "{handoff}");
    assert!(handoff.contains(&format!("but the task was last held by {s2} (musician-task-01-S2), which claimed it at ")), "{handoff}");
    assert!(handoff.contains("and wrote `resumption` at "), "{handoff}");
    assert_eq!(field(s3, "Assessment:"), "needs verification");
    assert_eq!(field(s3, "Self-correction in previous session:"), "NO", "S1 self-corrected, S2 did not");
    // Only the conductor's handoff to S3 is pending: S1's handoff instructions were S2's.
    assert_eq!(field(s3, "Pending conductor messages:"), "1");
    // S3 resumes after the last approved checkpoint, as no current HANDOFF says: S1's
    // checkpoint brought forward after step 5 agents 1-2 covered them (issue 42, C52).
    let doc = std::fs::read_to_string(dir.join("temp/task-01-HANDOFF")).unwrap();
    assert!(doc.contains(&format!("- Session ID: {s1}")), "the HANDOFF on disk is S1's");
    assert!(status_lines(&dir, "task-01").iter().any(|l| l.starts_with("checkpoint 3 approved (step 5 agent 2)")));
    assert_eq!(field(s3, "Resuming from:"), "step 5 agent 3");
}

/// Issue 27: a hand-off decided by the context check right after a step's last agent
/// (context-exhaustion: S4 of task-01 reaches the ceiling on step 4's last agent) closes the
/// step first. Its HANDOFF continued from "step 4 agent 3" of a 2-agent step ("Step 4 agents
/// 3-2"), the status file from step 5: the successor called that a mismatch and redid step 4.
/// Under `ceiling-after-agent` (docs/protocol.md C50): by default a return past the ceiling is
/// handed off before its integration, so the step is never complete when the hand-off starts.
#[test]
fn a_handoff_right_after_a_steps_last_agent_continues_from_the_next_step() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out) = crate::support::run_into("scenarios/faults/context-exhaustion.toml", &["ceiling-after-agent"], tmp.path());
    assert_eq!(code, 0, "{out}");
    let doc = std::fs::read_to_string(tmp.path().join("temp/task-01-HANDOFF")).unwrap();
    assert!(doc.contains("- Exit reason: context exhaustion"), "{doc}");
    assert!(doc.contains("- Step 4: done ✅") && doc.contains("4. Continue from step 5 agent 1"), "{doc}");
    assert!(!doc.contains("agents 3-2"), "{doc}");
    let lines = status_lines(tmp.path(), "task-01");
    let closed = lines.iter().rposition(|l| l.starts_with("step 4 completed")).expect("step 4 closed");
    let handoff = lines.iter().rposition(|l| l.starts_with("HANDOFF written")).expect("a HANDOFF");
    assert!(closed < handoff, "the step is closed before the HANDOFF");
    let last = resumptions(tmp.path(), "task-01").pop().expect("a successor");
    assert!(field(&last, "HANDOFF:").starts_with("present"), "{last:#?}");
    assert_eq!(field(&last, "Status/comms mismatches:"), "none", "{last:#?}");
    assert_eq!(field(&last, "Resuming from:"), "step 5 agent 1", "step 4 is not redone");
    assert!(!lines[handoff..].iter().any(|l| l.starts_with("step 4 agent")), "{:#?}", &lines[handoff..]);
}

/// A successor that continues right after a scheduled checkpoint no review approved holds that
/// checkpoint's review first (slow-review: S1 asks for checkpoint 1's review, times out twice
/// and hands off; S2 resumes at step 2). Before, S2 went on with step 2 and checkpoint 1 was
/// never reviewed.
#[test]
fn a_successor_reviews_the_checkpoint_its_predecessor_left_unreviewed() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, out) = crate::support::run_into("scenarios/slow-review.toml", &[], tmp.path());
    let lines = status_lines(tmp.path(), "task-01");
    let first = resumptions(tmp.path(), "task-01").remove(0);
    assert_eq!(field(&first, "Resuming from:"), "step 2 agent 1", "{out}");
    let resumed = lines.iter().position(|l| l.starts_with("  Resuming from: step 2 agent 1")).unwrap();
    let next = lines[resumed + 1..].iter().find(|l| !l.starts_with("  ")).unwrap();
    assert!(next.starts_with("checkpoint 1 of step 1 not yet reviewed: reviewing it first"), "{next}");
    assert!(lines[resumed..].iter().any(|l| l.starts_with("checkpoint 1 submitted for review")), "{lines:#?}");
}

/// scenarios/faults/stale-handoff.toml (003 "Resumption Decision Tree" 2, docs/protocol.md
/// C25): S3 finds S1's HANDOFF stale (S2 held the task since), says so, resumes from the last
/// approved checkpoint instead of the HANDOFF's position, and does not report (a stale HANDOFF
/// alone is no trigger of 003 step 5).
#[test]
fn the_shipped_stale_handoff_resumes_from_the_last_checkpoint() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out) = crate::support::run_into("scenarios/faults/stale-handoff.toml", &[], tmp.path());
    assert_eq!(code, 0, "{out}");
    let blocks = resumptions(tmp.path(), "task-01");
    assert_eq!(blocks.len(), 2, "S2 and S3 resume");
    assert!(field(&blocks[0], "HANDOFF:").starts_with("present"), "{:#?}", blocks[0]);
    assert_eq!(field(&blocks[0], "Resuming from:"), "step 5 agent 3", "S2 trusts S1's HANDOFF");
    assert!(field(&blocks[1], "HANDOFF:").starts_with("stale (written by "), "{:#?}", blocks[1]);
    assert_eq!(field(&blocks[1], "Assessment:"), "needs verification");
    // Not from step 5 agent 1: the last approved checkpoint covered step 5 agents 1-2 (issue 42).
    assert_eq!(field(&blocks[1], "Resuming from:"), "step 5 agent 3", "S3 does not trust it, and resumes after the checkpoint");
    assert!(!status_lines(tmp.path(), "task-01").iter().any(|l| l.starts_with("ESCALATION")));
}

/// scenarios/faults/unconfirmed-handoff.toml (003 "Resumption Decision Tree" 5, the temp/comms
/// trigger): S1 crashes after its HANDOFF, before its final message; S2 finds the HANDOFF
/// present but unconfirmed in comms, assesses "needs guidance" and reports to the conductor
/// before any work, then resumes from the last approved checkpoint.
#[test]
fn a_handoff_comms_do_not_confirm_is_reported_before_any_work() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out) = crate::support::run_into("scenarios/faults/unconfirmed-handoff.toml", &[], tmp.path());
    assert_eq!(code, 0, "{out}");
    let block = resumptions(tmp.path(), "task-01").remove(0);
    assert!(field(&block, "HANDOFF:").starts_with("present"), "{block:#?}");
    assert!(field(&block, "Status/comms mismatches:").contains("comms do not confirm its clean exit"), "{block:#?}");
    assert_eq!(field(&block, "Assessment:"), "needs guidance");
    assert_eq!(field(&block, "Resuming from:"), "step 5 agent 3", "after the approved checkpoint's agents");
    let lines = status_lines(tmp.path(), "task-01");
    let resumed = lines.iter().position(|l| l.starts_with("  Resuming from:")).unwrap();
    let next = lines[resumed + 1..].iter().find(|l| !l.starts_with("  ")).unwrap();
    assert!(next.starts_with("ESCALATION to conductor: resumption needs guidance: a temp/comms mismatch"), "{next}");
    let row = crate::support::task_row(tmp.path(), "task-01");
    assert_eq!(row.0, "complete");
    let errors: Vec<_> = crate::support::messages(tmp.path()).into_iter().filter(|m| m.3 == "error").collect();
    assert!(errors.iter().any(|m| m.4.contains("a temp/comms mismatch")), "{errors:?}");
}

/// 003 "Post-Resumption Verification" and 000 "Mid-Session Resumption Protocol" 3 ("Apply any
/// fixes, re-run verification tests"): the successor's RESUMPTION reports what its own
/// re-verification found. In 000's example nothing ("Verification tests: all passing (44
/// tests)"); with a broken test scripted for S2 at step 5 (the step S2 resumes inside), S2
/// re-runs it three times, fixes the test, and says so — until issue 27 the line was a fixed
/// "all passing" whatever happened.
#[test]
fn the_resumption_reports_what_the_successors_verification_found() {
    let counted = |t: &str| format!("{t}\n[verification]\ntests_at_start = 40\n");
    let (tmp, out, code) = run_edited("mid-session-resumption", counted, &[]);
    assert_eq!(code, 0, "{out}");
    let block = resumptions(&run_dir(&tmp), "task-01").remove(0);
    let clean = field(&block, "Verification tests:");
    assert!(clean.starts_with("all passing (") && clean.ends_with(" tests)"), "{block:#?}");
    let broken = |t: &str| {
        format!("{t}\n[verification]\ntests_at_start = 40\n\n[[verification.script]]\ntask = 1\nstep = 5\nsession = 2\nfinding = \"test_bug\"\n")
    };
    let (tmp, out, code) = run_edited("mid-session-resumption", broken, &[]);
    assert_eq!(code, 0, "{out}");
    let block = resumptions(&run_dir(&tmp), "task-01").remove(0);
    assert_eq!(
        field(&block, "Verification tests:"),
        format!("{clean}; Test Failures: 1 fixed (test_step5_agent3: Test bug fixed)"),
        "{block:#?}"
    );
    let lines = status_lines(&run_dir(&tmp), "task-01");
    let resumed = lines.iter().position(|l| l.starts_with("RESUMPTION: ")).unwrap();
    assert!(lines[..resumed].iter().any(|l| l.starts_with("verification: test_step5_agent3 re-run 3/3 failed")), "{lines:#?}");
}

/// The RESUMPTION block of `scenario`'s S2 on its own seed, its status lines, and the run folder.
fn shipped_resumption(scenario: &str) -> (tempfile::TempDir, Vec<String>, Vec<String>) {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out) = crate::support::run_into(scenario, &[], tmp.path());
    assert_eq!(code, 0, "{scenario}: {out}");
    let block = resumptions(tmp.path(), "task-01").remove(0);
    let lines = status_lines(tmp.path(), "task-01");
    (tmp, block, lines)
}

/// The first status line after the RESUMPTION block, without its `[ctx: NN%]`.
fn after_resumption(lines: &[String]) -> &str {
    let resumed = lines.iter().position(|l| l.starts_with("  Resuming from:")).expect("a RESUMPTION");
    let next = lines[resumed + 1..].iter().find(|l| !l.starts_with("  ")).expect("a line after it");
    next.rsplit_once(" [ctx: ").map_or(next.as_str(), |(text, _)| text)
}

/// The notes of `name` in a run's trace.
fn notes(dir: &Path, name: &str) -> usize {
    crate::support::trace(dir).iter().filter(|r| r.event == name).count()
}

/// scenarios/faults/benign-mismatch.toml (003 "State Reconciliation", Benign: "Step count off by
/// 1 … Auto-correct using temp/ files"): one benign field, no report; S2 continues from the
/// HANDOFF's position (step 2 agent 1), not the status file's (step 1 agent 2), and completes.
#[test]
fn the_shipped_benign_mismatch_is_auto_corrected_without_a_report() {
    let (tmp, block, lines) = shipped_resumption("scenarios/faults/benign-mismatch.toml");
    assert_eq!(field(&block, "Status/comms mismatches:"), "1 (HANDOFF continues from step 2 agent 1, status from step 1 agent 2)");
    assert_eq!(field(&block, "Assessment:"), "needs verification");
    assert_eq!(field(&block, "Resuming from:"), "step 2 agent 1");
    let resumed = lines.iter().position(|l| l.starts_with("  Resuming from:")).unwrap();
    let first_agent = lines[resumed..].iter().find(|l| l.contains(" agent ") && l.contains(" launched")).unwrap();
    assert!(first_agent.starts_with("step 2 agent 1 launched"), "{first_agent}");
    assert!(!lines.iter().any(|l| l.starts_with("ESCALATION")), "no report");
    assert_eq!(notes(tmp.path(), "resumption_benign_mismatch"), 1);
    assert_eq!(crate::support::task_row(tmp.path(), "task-01").0, "complete");
}

/// scenarios/faults/contradictory-resumption.toml (003 "State Reconciliation", Contradictory:
/// "Escalate to conductor immediately"): under 004's guard S2 claims the row its hung
/// predecessor rewrote to `needs_review` after the hand-over; it says so, escalates
/// (`resumption_contradiction`) before any work, applies the correction task and completes.
#[test]
fn the_shipped_contradictory_resumption_is_escalated_before_any_work() {
    let (tmp, block, lines) = shipped_resumption("scenarios/faults/contradictory-resumption.toml");
    let mismatches = field(&block, "Status/comms mismatches:");
    assert!(mismatches.starts_with("1 (the task row was `needs_review` when this session claimed it: "), "{mismatches}");
    assert_eq!(field(&block, "Assessment:"), "needs guidance");
    assert_eq!(field(&block, "Resuming from:"), "step 1 agent 1", "no approved checkpoint: from the start");
    assert_eq!(
        after_resumption(&lines),
        "ESCALATION to conductor: resumption needs guidance: a temp/comms mismatch, a contradictory state"
    );
    assert_eq!(notes(tmp.path(), "resumption_contradiction"), 1);
    // The escalation's state write, then the conductor's correction task answers it.
    let s2 = crate::support::session_sql(tmp.path(), "task-01.S2");
    let escalation = s2.iter().find(|r| r.stmt == Some(rehearsal::vocab::Stmt::SetEscalation)).expect("S2 escalates");
    assert!(escalation.detail.contains("last_error=resumption_contradiction"), "{}", escalation.detail);
    assert!(lines.iter().any(|l| l.starts_with("conductor fix_proposed: correction task")), "{lines:#?}");
    assert_eq!(crate::support::task_row(tmp.path(), "task-01").0, "complete");
}

/// scenarios/faults/multiple-mismatches.toml (003 step 5, "multiple mismatches"): a benign and a
/// temp/comms mismatch together are reported; S2 resumes from the last approved checkpoint.
#[test]
fn the_shipped_multiple_mismatches_are_reported() {
    let (tmp, block, lines) = shipped_resumption("scenarios/faults/multiple-mismatches.toml");
    assert!(
        field(&block, "Status/comms mismatches:")
            .starts_with("2 (HANDOFF continues from step 2 agent 1, status from step 1 agent 2; no `handoff` message"),
        "{block:#?}"
    );
    assert_eq!(field(&block, "Assessment:"), "needs guidance");
    assert_eq!(field(&block, "Resuming from:"), "step 1 agent 1");
    assert_eq!(
        after_resumption(&lines),
        "ESCALATION to conductor: resumption needs guidance: multiple mismatches (2), a temp/comms mismatch"
    );
    assert_eq!((notes(tmp.path(), "resumption_report_multiple_mismatches"), notes(tmp.path(), "resumption_benign_mismatch")), (1, 0));
    assert_eq!(crate::support::task_row(tmp.path(), "task-01").0, "complete");
}

/// scenarios/faults/deviations-on-resumption.toml (003 step 5 with 000's REF-6): two Mediums no
/// escalation covered are reported by the successor; under `escalate-over-two` ("> 2") not.
#[test]
fn the_shipped_deviations_past_ref_6_are_reported_on_resumption() {
    let (tmp, block, lines) = shipped_resumption("scenarios/faults/deviations-on-resumption.toml");
    assert_eq!(field(&block, "Deviations found:"), "2 (0 High, 2 Medium, 0 Low; past the threshold, REF-6: 2+ Medium or 1+ High)");
    assert_eq!(field(&block, "Status/comms mismatches:"), "none");
    assert_eq!(field(&block, "Assessment:"), "needs guidance");
    assert_eq!(
        after_resumption(&lines),
        "ESCALATION to conductor: resumption needs guidance: deviations past the escalation threshold (REF-6: 2+ Medium or 1+ High)"
    );
    assert_eq!(notes(tmp.path(), "resumption_report_deviations"), 1);
    let row = crate::support::task_row(tmp.path(), "task-01");
    assert_eq!(row.0, "complete");
    let over_two = tempfile::tempdir().unwrap();
    let (code, out) = crate::support::run_into("scenarios/faults/deviations-on-resumption.toml", &["escalate-over-two"], over_two.path());
    assert_eq!(code, 0, "{out}");
    let block = resumptions(over_two.path(), "task-01").remove(0);
    assert_eq!(field(&block, "Assessment:"), "clean handoff", "2 deviations are not > 2");
    assert!(!status_lines(over_two.path(), "task-01").iter().any(|l| l.starts_with("ESCALATION")));
}

/// scenarios/faults/working-tasks-on-resumption.toml (000 "Mid-Session Resumption Protocol" 5,
/// ">2 tasks in `working` state", docs/protocol.md C42): S2 reads its siblings' states, finds
/// three `working` and reports before any work; under `working-count-stale-only` their fresh
/// heartbeats are no crash indicator and it goes on.
#[test]
fn the_shipped_working_tasks_trigger_reports_more_than_two_siblings_in_working() {
    let (tmp, block, lines) = shipped_resumption("scenarios/faults/working-tasks-on-resumption.toml");
    assert_eq!(field(&block, "Assessment:"), "needs guidance");
    assert_eq!(
        after_resumption(&lines),
        "ESCALATION to conductor: resumption needs guidance: more than 2 other tasks in `working` (3: task-02, task-03, task-04)"
    );
    assert_eq!(notes(tmp.path(), "resumption_report_working_tasks"), 1);
    let s2 = crate::support::session_sql(tmp.path(), "task-01.S2");
    assert!(s2.iter().any(|r| r.stmt == Some(rehearsal::vocab::Stmt::ReadSiblingStates)), "000's sibling query");
    let escalation = s2.iter().find(|r| r.stmt == Some(rehearsal::vocab::Stmt::SetEscalation)).expect("S2 reports");
    assert!(escalation.detail.contains("last_error=resumption_working_tasks"), "{}", escalation.detail);
    assert_eq!(crate::support::task_row(tmp.path(), "task-01").0, "complete");
    let stale_only = tempfile::tempdir().unwrap();
    let (code, out) =
        crate::support::run_into("scenarios/faults/working-tasks-on-resumption.toml", &["working-count-stale-only"], stale_only.path());
    assert_eq!(code, 0, "{out}");
    assert_eq!(field(&resumptions(stale_only.path(), "task-01").remove(0), "Assessment:"), "clean handoff");
}

/// The agents an approval line covers: every agent through `step S agent A`, or through the
/// end of step S (`(S, u64::MAX)`).
fn covered_by(line: &str) -> Option<(u64, u64)> {
    let inside = line.split(" approved (step ").nth(1)?;
    let inside = inside.split(')').next()?;
    match inside.split_once(" agent ") {
        Some((step, agent)) => Some((step.parse().ok()?, agent.parse().ok()?)),
        None => Some((inside.parse().ok()?, u64::MAX)),
    }
}

/// Every agent launch of `lines` that an approval before it covered (`checkpoint N approved …`,
/// `final checkpoint approved …`, `context checkpoint after step N approved …`): empty when no
/// session redoes approved work.
fn redone_launches(lines: &[String]) -> Vec<String> {
    let mut approved: Option<(u64, u64)> = None;
    let mut redone = Vec::new();
    for line in lines {
        if line.contains(" approved (step ") {
            approved = covered_by(line).or(approved);
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        if let ["step", step, "agent", agent, "launched", ..] = words.as_slice() {
            let at: (u64, u64) = (step.parse().unwrap(), agent.parse().unwrap());
            if approved.is_some_and(|done| at <= done) {
                redone.push(format!("`{line}` redoes an agent approved through {approved:?}"));
            }
        }
    }
    redone
}

/// Issue 42, docs/protocol.md C52: S1's checkpoint, brought forward by a reduced scope after
/// step 5 agents 1-2, covers those agents, and its approval says so; the successors that find
/// no usable HANDOFF (stale-handoff's S3, unconfirmed-handoff's S2) resume after it. No agent an
/// approved checkpoint covered is launched again (it used to say "(step 4)", and both
/// successors redid step 5 agents 1-2). C160 (issue 42, F2): the same for an approved final
/// checkpoint (final-approval-lost's S2 redid step 3: `final checkpoint approved (step 3)` was
/// not read back).
#[test]
fn no_successor_redoes_an_agent_an_approved_checkpoint_covered() {
    for scenario in ["scenarios/faults/stale-handoff.toml", "scenarios/faults/unconfirmed-handoff.toml"] {
        let tmp = tempfile::tempdir().unwrap();
        let (code, out) = crate::support::run_into(scenario, &[], tmp.path());
        assert_eq!(code, 0, "{scenario}: {out}");
        let lines = status_lines(tmp.path(), "task-01");
        assert!(lines.iter().any(|l| l.starts_with("checkpoint 3 approved (step 5 agent 2)")), "{scenario}: {lines:#?}");
        assert_eq!(redone_launches(&lines), Vec::<String>::new(), "{scenario}");
        assert!(lines.iter().any(|l| l.starts_with("step 5 agent 3 launched")), "{scenario}: the successor goes on");
    }
    assert_eq!(covered_by("checkpoint 2 approved (step 3) [ctx: 4%]"), Some((3, u64::MAX)));
    assert_eq!(covered_by("checkpoint 3 approved (step 5 agent 2) [ctx: 69%]"), Some((5, 2)));
    assert_eq!(covered_by("final checkpoint approved (step 3) [ctx: 49%]"), Some((3, u64::MAX)));
    let redo = ["final checkpoint approved (step 3) [ctx: 49%]", "step 3 agent 1 launched [ctx: 23%]"].map(String::from);
    assert_eq!(redone_launches(&redo).len(), 1, "the checker sees a redo after a final approval");
}

/// C160 (issue 42, F2; 003 "Resumption Decision Tree" 5: "Continue from last checkpoint"):
/// S1 of final-approval-lost is lost after the conductor approved its completion review, before
/// its final message. S2 continues from that approved final checkpoint: it re-runs the
/// verification (003 "Post-Resumption Verification"), launches no agent, asks for its own
/// completion review and completes on its answer.
#[test]
fn a_successor_of_a_session_lost_after_its_final_approval_redoes_no_step() {
    let (tmp, block, lines) = shipped_resumption("scenarios/faults/final-approval-lost.toml");
    let approved = lines.iter().position(|l| l.starts_with("final checkpoint approved (step 3)")).expect("S1's final approval");
    let claimed = lines.iter().position(|l| l.contains("worked_by: musician-task-01-S2")).expect("S2's claim");
    assert!(approved < claimed, "{lines:#?}");
    assert_eq!(field(&block, "HANDOFF:").split(' ').next(), Some("missing"));
    assert_eq!(field(&block, "Resuming from:"), "step 4 agent 1", "after the plan's 3 steps");
    assert!(field(&block, "Estimated remaining work:").starts_with("0 agents + final checkpoint"), "{block:#?}");
    assert_eq!(redone_launches(&lines), Vec::<String>::new());
    assert!(!lines[approved..].iter().any(|l| l.contains(" launched")), "no agent after the final approval: {lines:#?}");
    // Its own completion review (C160), after the re-verification the RESUMPTION reports.
    assert_eq!(after_resumption(&lines), "final checkpoint reached");
    let s2: Vec<&String> = lines[claimed..].iter().collect();
    let submitted = s2.iter().position(|l| l.starts_with("final checkpoint submitted for review")).expect("S2 asks");
    let own = s2.iter().position(|l| l.starts_with("final checkpoint approved (step 3)")).expect("S2's own approval");
    let complete = s2.iter().position(|l| l.starts_with("task complete")).expect("S2 completes");
    assert!(submitted < own && own < complete, "{s2:#?}");
    assert_eq!(crate::support::task_row(tmp.path(), "task-01").0, "complete");
}

/// Issue 42, docs/protocol.md C54 (000 "Mid-Session Resumption Protocol" 4): a successor whose
/// temp/ files and comms differ creates a verification task and launches its agent before its
/// RESUMPTION status; partial (several fields) brings a correction task and a second run; every
/// mismatch is echoed and logged to the deviations file.
#[test]
fn differing_states_get_a_verification_task_and_are_logged_to_the_deviations_file() {
    let (tmp, _block, lines) = shipped_resumption("scenarios/faults/multiple-mismatches.toml");
    let at = |prefix: &str| lines.iter().position(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("no `{prefix}`: {lines:#?}"));
    let created = at("temp/comms differ (2): verification task created");
    let partial = at("verification task: partial");
    let correction = at("correction task agent launched");
    let again = at("verification task (again): complete");
    let resumption = at("RESUMPTION: ");
    assert!(created < partial && partial < correction && correction < again && again < resumption, "{lines:#?}");
    let deviations = std::fs::read_to_string(tmp.path().join("temp/task-01-deviations")).unwrap();
    let logged: Vec<&str> = deviations.lines().filter(|l| l.starts_with("resumption mismatch: ")).collect();
    assert_eq!(logged.len(), 2, "{deviations}");
    assert!(logged.iter().all(|l| l.ends_with("verification task partial [Low — correction echoed]")), "{logged:#?}");
    let (_tmp, _block, lines) = shipped_resumption("scenarios/faults/contradictory-resumption.toml");
    assert!(lines.iter().any(|l| l.starts_with("verification task: fully incomplete")), "{lines:#?}");
    assert!(lines.iter().any(|l| l.starts_with("corrective message echoed: the task row was `needs_review`")), "{lines:#?}");
}
