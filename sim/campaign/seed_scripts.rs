//! `rehearsal findings --seed-scripts`: the three bash scripts of seed 000, shipped verbatim in
//! `scripts/seed-000/`, as a second opinion on every shipped scenario. Each scenario runs once
//! in full; then, at a few simulated instants where a musician (or the conductor spot-checking
//! it) would run a script, the run is replayed to that instant (`run.sim_time_max_ms`, as
//! `rehearsal replay --until` does) so `comms.db` and `temp/` are as of then, and the script
//! runs on them under `faketime` frozen at that instant. Its answer is compared with what the
//! simulator decided there. A script that fails, or answers otherwise, is a finding in
//! reports/SEED-SCRIPTS.md.

use std::collections::BTreeSet;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::base::error::{Error, Result};
use crate::input::scenario::Scenario;
use crate::run::{run_scenario, RunOptions};
use crate::trace::trace_reader::TraceRecord;

/// Instants checked per run after its bootstrap ones: the agent returns where the simulator
/// made a context decision first, then others spread over the run (keeps the sweep bounded).
const AGENT_INSTANTS_MAX: usize = 4;

/// Where in the run a script is run, and what the simulator decided there.
#[derive(Clone, Debug, PartialEq)]
pub enum Moment {
    /// 000 verify-temp-files.sh: "Run at bootstrap or resumption": the session's first step
    /// start, its bootstrap (or resumption) done.
    Bootstrap,
    /// 000 "Context Monitoring": after an agent's return the session evaluates its context;
    /// check-context-headroom.sh is the passive view of the same file.
    AgentReturn(Decision),
    /// The run's last instant, every session gone: what the conductor would read afterwards.
    End,
}

/// The simulator's context decision after an agent, read from the status lines it wrote.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decision {
    /// Below the evaluation threshold: no evaluation.
    NotEvaluated,
    Proceed,
    Ask,
    Escalate,
    HandOff,
    /// No evaluation because the session already warned this session and its scope is
    /// reduced or a hand-off is scheduled (sim/actors/musician/context.rs: `scope != Normal`).
    AlreadyWarned,
}

impl Decision {
    /// Whether the simulator treats the context as a concern (warns, escalates, hands off, or
    /// works under a scope reduced by an earlier warning).
    fn concerned(self) -> bool {
        matches!(self, Decision::Ask | Decision::Escalate | Decision::HandOff | Decision::AlreadyWarned)
    }
}

/// One script run at one instant.
#[derive(Clone, Debug)]
pub struct Check {
    pub scenario: String,
    pub t_ms: i64,
    pub task: String,
    pub script: &'static str,
    pub moment: Moment,
    /// The script's `=== RESULT: … ===` line, or "(none)".
    pub result: String,
    pub outcome: Outcome,
    /// What bash wrote on stderr although the script answered (its errors), else empty.
    pub errors: String,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Agree,
    /// The script answered where the simulator made no decision to set against it
    /// (check-context-headroom.sh at a bootstrap or at the end).
    NotCompared,
    /// The script answered, otherwise than the simulator: why.
    Disagree(String),
    /// The script broke: no RESULT line. Its stderr.
    Failed(String),
}

/// The shipped scenarios: every `.toml` under `dir` except the bench and CI folders.
pub fn shipped_scenarios(dir: &Path) -> Result<Vec<PathBuf>> {
    let listed = crate::input::scenario_list::list(dir)?;
    Ok(listed
        .into_iter()
        .map(|l| l.path)
        .filter(|p| !p.strip_prefix(dir).is_ok_and(|rel| rel.starts_with("bench") || rel.starts_with("ci")))
        .collect())
}

/// Runs `path` (its own seed) and the scripts at its instants.
pub fn check_scenario(path: &Path, scripts_dir: &Path) -> Result<Vec<Check>> {
    let scenario = Scenario::load(path)?;
    let name = path.display().to_string();
    let scratch = tempfile::tempdir().map_err(|e| Error::harness(e.to_string()))?;
    let full = scratch.path().join("full");
    run_to(&scenario, path, &full, None)?;
    let trace = crate::trace::trace_reader::read(&full.join("trace.csv"))?;
    let mut checks = Vec::new();
    for (i, point) in instants(&trace).into_iter().enumerate() {
        let dir = scratch.path().join(format!("at-{i}"));
        run_to(&scenario, path, &dir, Some(point.t_ms))?;
        let at = crate::base::clock::format_utc_ms(scenario.run.epoch_unix_ms + point.t_ms)[..19].to_string();
        for &script in scripts_for(&point.moment) {
            let mut args = vec![point.task.clone()];
            if script == VALIDATE {
                args.push(point.session.clone());
            }
            let (stdout, stderr) = run_script(&scripts_dir.join(script), &dir, &args, &at)?;
            let status = std::fs::read_to_string(dir.join("temp").join(format!("{}-status", point.task))).unwrap_or_default();
            let outcome = judge(script, &point, &stdout, &stderr, &trace, &status);
            let result = stdout.lines().find(|l| l.starts_with("=== RESULT:")).unwrap_or("(none)").to_string();
            let errors = if matches!(outcome, Outcome::Failed(_)) { String::new() } else { stderr_errors(&stderr) };
            checks.push(Check {
                scenario: name.clone(),
                t_ms: point.t_ms,
                task: point.task.clone(),
                script,
                moment: point.moment.clone(),
                result,
                outcome,
                errors,
            });
        }
    }
    Ok(checks)
}

const VERIFY: &str = "verify-temp-files.sh";
const HEADROOM: &str = "check-context-headroom.sh";
const VALIDATE: &str = "validate-musician-state.sh";

/// The scripts a musician (or the conductor) would run at such a moment.
fn scripts_for(moment: &Moment) -> &'static [&'static str] {
    match moment {
        Moment::Bootstrap => &[VERIFY, VALIDATE, HEADROOM],
        Moment::AgentReturn(_) => &[HEADROOM, VALIDATE],
        Moment::End => &[VERIFY, HEADROOM],
    }
}

fn run_to(scenario: &Scenario, path: &Path, out: &Path, until_ms: Option<i64>) -> Result<()> {
    let mut scenario = scenario.clone();
    if let Some(t) = until_ms {
        scenario.run.sim_time_max_ms = t;
    }
    let options = RunOptions { scenario_path: path.to_path_buf(), seed: None, out_dir: Some(out.to_path_buf()), variants: vec![] };
    run_scenario(scenario, &options)?;
    Ok(())
}

/// A script on the run folder `dir`, the clock frozen at `at` (UTC): (stdout, stderr).
fn run_script(script: &Path, dir: &Path, args: &[String], at: &str) -> Result<(String, String)> {
    let out = Command::new("faketime")
        .arg("-f")
        .arg(at)
        .arg("bash")
        .arg(script)
        .args(args)
        .env("PROJECT_DIR", dir)
        .env("DB_PATH", dir.join("comms.db"))
        .env("TZ", "UTC")
        .output()
        .map_err(|e| {
            Error::harness(format!("cannot run faketime bash {} (bash, sqlite3 and faketime are needed): {e}", script.display()))
        })?;
    Ok((String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned()))
}

/// One instant: a task's session at a moment.
#[derive(Clone, Debug)]
pub struct Instant {
    pub t_ms: i64,
    pub task: String,
    pub session: String,
    pub moment: Moment,
}

/// A status line the musician appended: (t_ms, task, session, line).
fn status_lines(trace: &[TraceRecord]) -> Vec<(i64, String, String, &str)> {
    trace
        .iter()
        .filter(|r| r.event == "file_append")
        .filter_map(|r| {
            let task = r.statement.strip_prefix("temp/")?.strip_suffix("-status")?;
            Some((r.t_ms, task.to_string(), r.session.clone(), r.detail.as_str()))
        })
        .collect()
}

/// The instants of a run: each session's bootstrap, some agent returns, and the end.
pub fn instants(trace: &[TraceRecord]) -> Vec<Instant> {
    let lines = status_lines(trace);
    let mut out: Vec<Instant> = Vec::new();
    for (t, task, session, line) in &lines {
        let started = line.starts_with("step ") && line.contains(" started");
        if started && !out.iter().any(|i| &i.session == session) {
            out.push(Instant { t_ms: *t, task: task.clone(), session: session.clone(), moment: Moment::Bootstrap });
        }
    }
    let returns: Vec<Instant> = lines
        .iter()
        .enumerate()
        .filter(|(_, (_, _, _, line))| is_agent_end(line))
        .map(|(i, (t, task, session, _))| {
            let warned_before = lines[..i].iter().any(|(_, _, s, line)| s == session && warns(line));
            let decision = match decision_after(&lines[i + 1..], task) {
                Decision::NotEvaluated if warned_before => Decision::AlreadyWarned,
                d => d,
            };
            Instant { t_ms: *t, task: task.clone(), session: session.clone(), moment: Moment::AgentReturn(decision) }
        })
        .collect();
    out.extend(pick_returns(returns));
    let end_ms = trace.iter().map(|r| r.t_ms).max().unwrap_or(0);
    let mut tasks: Vec<&String> = lines.iter().map(|(_, task, _, _)| task).collect();
    tasks.sort();
    tasks.dedup();
    for task in tasks {
        out.push(Instant { t_ms: end_ms, task: task.clone(), session: String::new(), moment: Moment::End });
    }
    out
}

/// The line after which the session evaluates its context: an agent integrated (or failed
/// for good), 000 "Context Monitoring" ("after every agent return").
fn is_agent_end(line: &str) -> bool {
    line.contains(" agent ") && (line.contains(" integrated [") || line.contains(" FAILED"))
}

/// The decisions first, then returns spread evenly, at most `AGENT_INSTANTS_MAX`, in time order.
fn pick_returns(returns: Vec<Instant>) -> Vec<Instant> {
    let decided = |i: &Instant| matches!(i.moment, Moment::AgentReturn(d) if d != Decision::NotEvaluated);
    let mut picked: Vec<usize> = (0..returns.len()).filter(|&i| decided(&returns[i])).take(AGENT_INSTANTS_MAX / 2).collect();
    let rest = AGENT_INSTANTS_MAX - picked.len();
    if !returns.is_empty() {
        for k in 0..rest {
            let i = k * returns.len() / rest.max(1);
            if !picked.contains(&i) {
                picked.push(i);
            }
        }
    }
    picked.sort();
    picked.into_iter().map(|i| returns[i].clone()).collect()
}

/// A status line that says the session warned the conductor or is handing off.
fn warns(line: &str) -> bool {
    line.contains("sending context warning") || line.contains("handing off now") || line.starts_with("self-correction: escalating")
}

/// What the session wrote about its context before its next piece of work.
fn decision_after(next: &[(i64, String, String, &str)], task: &str) -> Decision {
    for (_, _, _, line) in next.iter().filter(|(_, t, _, _)| t == task) {
        if line.contains("sending context warning") {
            return if line.contains(": ask,") { Decision::Ask } else { Decision::Escalate };
        }
        if line.contains("handing off now") {
            return Decision::HandOff;
        }
        if line.starts_with("self-correction: escalating") {
            return Decision::Escalate;
        }
        if line.starts_with("context estimate") && line.contains("proceed") {
            return Decision::Proceed;
        }
        if line.contains(" launched [") || line.contains(" started [") || line.contains(" reached [") || is_agent_end(line) {
            break;
        }
    }
    Decision::NotEvaluated
}

/// The script's answer against the simulator's.
fn judge(script: &str, point: &Instant, stdout: &str, stderr: &str, trace: &[TraceRecord], status: &str) -> Outcome {
    if !stdout.contains("=== RESULT:") {
        return Outcome::Failed(stderr_errors(stderr));
    }
    match script {
        HEADROOM => judge_headroom(point, stdout, status),
        VALIDATE => judge_validate(stdout),
        _ => judge_verify(point, stdout, trace),
    }
}

/// check-context-headroom.sh's RESULT (CAUTION/CRITICAL, or HEALTHY) against the context
/// model's choice after the same agent (warning or hand-off, or proceed / no evaluation).
fn judge_headroom(point: &Instant, stdout: &str, status: &str) -> Outcome {
    let Moment::AgentReturn(decision) = point.moment else {
        return Outcome::NotCompared;
    };
    let script_concerned = !stdout.contains("=== RESULT: HEALTHY ===");
    if script_concerned == decision.concerned() {
        return Outcome::Agree;
    }
    Outcome::Disagree(format!(
        "simulator {decision:?}, script {}: {}",
        if script_concerned { "concerned" } else { "healthy" },
        headroom_reason(stdout, status, &point.session)
    ))
}

/// Why check-context-headroom.sh and the context model part, read from the script's RESULT
/// and the status file it read.
fn headroom_reason(stdout: &str, status: &str, session: &str) -> &'static str {
    if stdout.contains("=== RESULT: HEALTHY ===") {
        return "the script reads the current context (below 60 %), the simulator the estimate at the next checkpoint (000 Context-Tight Break Point: the worst case decides)";
    }
    if !stdout.contains("self-correction detected") {
        return "the script cautions from 60 % of current context (CRITICAL from 75 %), the simulator judges the estimate at the next checkpoint (000 Context Monitoring: proceed below 70 %)";
    }
    let matching: Vec<&str> = status.lines().filter(|l| l.to_lowercase().contains("self-correction")).collect();
    if matching.iter().all(|l| l.contains("Self-correction in previous session: NO")) {
        return "the script's `grep -ci 'self-correction'` counts 003's RESUMPTION line \"Self-correction in previous session: NO\" as a self-correction";
    }
    // The session's own part of the file starts at its claim line.
    let own = status.rfind(&format!("session: {session}")).map_or(status, |i| &status[i..]);
    if !own.to_lowercase().lines().any(|l| l.contains("self-correction") && !l.contains("in previous session")) {
        return "the self-correction was an earlier session's: the script reads the whole status file, the simulator's session counts its own";
    }
    "a self-correction earlier in this session, already escalated once (000: escalate when flagged); the script stays CAUTION for the rest of the file"
}

/// The non-empty lines bash wrote on stderr, joined.
fn stderr_errors(stderr: &str) -> String {
    stderr.lines().filter(|l| !l.trim().is_empty()).collect::<Vec<_>>().join(" / ")
}

/// validate-musician-state.sh, run by the live session that owns the row and goes on working:
/// the simulator saw nothing wrong, so any issue the script lists is a disagreement.
fn judge_validate(stdout: &str) -> Outcome {
    if stdout.contains("=== RESULT: HEALTHY ===") {
        return Outcome::Agree;
    }
    let reasons: Vec<&str> = stdout
        .lines()
        .filter(|l| {
            l.contains("[MISMATCH")
                || l.contains("[STALE]")
                || l.contains("[ALARM]")
                || l.contains("WARNING")
                || (l.starts_with("Messages:") && !l.contains(" 0 pending"))
        })
        .collect();
    Outcome::Disagree(format!("session working, script: {}", reasons.join("; ")))
}

/// verify-temp-files.sh's reading of temp/ against the lines and files the trace says the
/// simulator wrote by then.
fn judge_verify(point: &Instant, stdout: &str, trace: &[TraceRecord]) -> Outcome {
    let written = |suffix: &str| -> Option<i64> {
        let path = format!("temp/{}-{suffix}", point.task);
        let rows: Vec<i64> = trace
            .iter()
            .filter(|r| r.t_ms <= point.t_ms && r.statement == path && (r.event == "file_append" || r.event == "file_write"))
            .map(|r| r.rows.parse().unwrap_or(0))
            .collect();
        (!rows.is_empty()).then(|| rows.iter().sum())
    };
    let mut reasons = Vec::new();
    match written("status") {
        Some(n) if !stdout.contains(&format!("-status ({n} lines)")) => reasons.push(format!("simulator wrote {n} status lines")),
        None if !stdout.contains("Status File:    MISSING") => reasons.push("simulator wrote no status file".to_string()),
        _ => {}
    }
    if written("deviations").is_none() != stdout.contains("Deviations:     MISSING") {
        reasons.push("deviations file presence differs".to_string());
    }
    if written("HANDOFF").is_some() != stdout.contains("HANDOFF:        present") {
        reasons.push("HANDOFF presence differs".to_string());
    }
    if reasons.is_empty() {
        Outcome::Agree
    } else {
        Outcome::Disagree(reasons.join("; "))
    }
}

/// reports/SEED-SCRIPTS.md: counts per script, the findings grouped by what they say, then
/// every disagreement.
pub fn render(checks: &[Check], runs: usize) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Seed 000's scripts as a second opinion\n");
    let _ = writeln!(
        md,
        "Generated by `rehearsal findings --seed-scripts` (sim/campaign/seed_scripts.rs); do not edit. Every shipped scenario (scenarios/ without bench/ and ci/) runs with its own seed; at each session's bootstrap, at up to {AGENT_INSTANTS_MAX} agent returns (those with a context decision first) and at the run's end, the run is replayed to that instant and the unchanged scripts of scripts/seed-000/ read its comms.db and temp/ under `faketime` frozen at that instant. Their answers are compared with the simulator's: check-context-headroom.sh's RESULT (CAUTION or CRITICAL = concerned) with the context model's choice after the same agent (a warning, a hand-off, or a scope already reduced by one = concerned); validate-musician-state.sh, run by the session that owns the row and goes on working, must say HEALTHY; verify-temp-files.sh must count the status lines and see the deviations and HANDOFF files the trace says were written.\n"
    );
    let instants: BTreeSet<(&str, i64, &str)> = checks.iter().map(|c| (c.scenario.as_str(), c.t_ms, c.task.as_str())).collect();
    let _ = writeln!(md, "{runs} runs, {} instants, {} script runs.\n", instants.len(), checks.len());
    let _ = writeln!(md, "| script | runs | agree | disagree | answered, nothing to compare | fails (no RESULT) | answers with bash errors on stderr |\n| --- | --- | --- | --- | --- | --- | --- |");
    for script in [VERIFY, HEADROOM, VALIDATE] {
        let of: Vec<&Check> = checks.iter().filter(|c| c.script == script).collect();
        let count = |f: &dyn Fn(&Check) -> bool| of.iter().filter(|c| f(c)).count();
        let _ = writeln!(
            md,
            "| {script} | {} | {} | {} | {} | {} | {} |",
            of.len(),
            count(&|c| c.outcome == Outcome::Agree),
            count(&|c| matches!(c.outcome, Outcome::Disagree(_))),
            count(&|c| c.outcome == Outcome::NotCompared),
            count(&|c| matches!(c.outcome, Outcome::Failed(_))),
            count(&|c| !c.errors.is_empty())
        );
    }
    headroom_matrix(&mut md, checks);
    let _ =
        writeln!(md, "\n## Findings, grouped\n\n| script | finding | script runs | runs | first seen |\n| --- | --- | --- | --- | --- |");
    for ((script, finding), of) in grouped(checks) {
        let runs: BTreeSet<&str> = of.iter().map(|c| c.scenario.as_str()).collect();
        let first = of[0];
        let _ = writeln!(
            md,
            "| {script} | {} | {} | {} | {} t={} ms {} |",
            cell(&finding),
            of.len(),
            runs.len(),
            first.scenario,
            first.t_ms,
            first.task
        );
    }
    let _ = writeln!(md, "\n## Every disagreement\n\n| scenario | t (ms) | task | moment | script | result | why |\n| --- | --- | --- | --- | --- | --- | --- |");
    for c in checks {
        if let Outcome::Disagree(why) = &c.outcome {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} | {} |",
                c.scenario,
                c.t_ms,
                c.task,
                moment_name(&c.moment),
                c.script,
                cell(&c.result),
                cell(why)
            );
        }
    }
    md
}

/// check-context-headroom.sh after an agent: the simulator's decision against the script's
/// RESULT word, counted.
fn headroom_matrix(md: &mut String, checks: &[Check]) {
    let words = ["HEALTHY", "CAUTION", "CRITICAL", "(none)"];
    let _ = writeln!(
        md,
        "\ncheck-context-headroom.sh after an agent, the simulator's decision (rows) against the script's RESULT (columns):\n"
    );
    let _ = writeln!(md, "| simulator | {} |\n| --- |{}", words.join(" | "), " --- |".repeat(words.len()));
    let decisions =
        [Decision::NotEvaluated, Decision::Proceed, Decision::Ask, Decision::Escalate, Decision::HandOff, Decision::AlreadyWarned];
    for decision in decisions {
        let of: Vec<&Check> = checks.iter().filter(|c| c.script == HEADROOM && c.moment == Moment::AgentReturn(decision)).collect();
        let counts: Vec<String> = words
            .iter()
            .map(|w| {
                of.iter()
                    .filter(|c| if *w == "(none)" { c.result == *w } else { c.result.starts_with(&format!("=== RESULT: {w}")) })
                    .count()
                    .to_string()
            })
            .collect();
        let _ = writeln!(md, "| {decision:?} | {} |", counts.join(" | "));
    }
}

/// The findings by (script, what it says), in order of first appearance.
fn grouped(checks: &[Check]) -> Vec<((&'static str, String), Vec<&Check>)> {
    let mut groups: Vec<((&'static str, String), Vec<&Check>)> = Vec::new();
    for c in checks {
        let mut findings = Vec::new();
        match &c.outcome {
            Outcome::Agree | Outcome::NotCompared => {}
            // The simulator's moment is dropped so one reason groups across decisions.
            Outcome::Disagree(why) => findings.push(format!("disagrees: {}", why.split_once(": ").map_or(why.as_str(), |(_, r)| r))),
            Outcome::Failed(err) => findings.push(format!("**fails** ({}): {err}", moment_name(&c.moment))),
        }
        if !c.errors.is_empty() {
            findings.push(format!("answers, with bash errors: {}", c.errors));
        }
        for finding in findings {
            let key = (c.script, without_digits_in_ages(&finding));
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, of)) => of.push(c),
                None => groups.push((key, vec![c])),
            }
        }
    }
    groups
}

/// validate-musician-state.sh's reasons carry times and session ids; a group keeps the kind.
fn without_digits_in_ages(finding: &str) -> String {
    if finding.contains("[STALE]") {
        return "disagrees: session working, script: heartbeat 480-539 s old [STALE]".to_string();
    }
    if finding.contains("[ALARM]") {
        return "disagrees: session working, script: heartbeat 540 s or older [ALARM]".to_string();
    }
    if finding.contains("[MISMATCH") {
        return "disagrees: session working, script: session [MISMATCH] (the row has another owner)".to_string();
    }
    if finding.contains(" pending") {
        return "disagrees: session working, script: conductor messages newer than the heartbeat pending".to_string();
    }
    finding.to_string()
}

fn moment_name(moment: &Moment) -> String {
    match moment {
        Moment::Bootstrap => "bootstrap".to_string(),
        Moment::AgentReturn(d) => format!("after an agent, simulator {d:?}"),
        Moment::End => "end of run".to_string(),
    }
}

/// Text safe in a Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// Every shipped scenario under `scenarios_dir`: the checks and the report.
pub fn seed_scripts(scenarios_dir: &Path, scripts_dir: &Path) -> Result<(Vec<Check>, String)> {
    let paths = shipped_scenarios(scenarios_dir)?;
    let mut checks = Vec::new();
    for path in &paths {
        checks.extend(check_scenario(path, scripts_dir)?);
    }
    let md = render(&checks, paths.len());
    Ok((checks, md))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines<'a>(text: &[&'a str]) -> Vec<(i64, String, String, &'a str)> {
        text.iter().enumerate().map(|(i, l)| (i as i64, "task-01".to_string(), "s1".to_string(), *l)).collect()
    }

    #[test]
    fn the_decision_is_the_context_line_before_the_next_work() {
        let d = |text: &[&str]| decision_after(&lines(text), "task-01");
        assert_eq!(
            d(&[
                "CONTEXT EVALUATION triggered at 74% [ctx: 74%]",
                "context estimate 118% at next checkpoint: escalate, sending context warning [ctx: 74%]"
            ]),
            Decision::Escalate
        );
        assert_eq!(d(&["context estimate 75% at next checkpoint: ask, sending context warning [ctx: 60%]"]), Decision::Ask);
        assert_eq!(d(&["context estimate 66% at next checkpoint: proceed [ctx: 62%]"]), Decision::Proceed);
        assert_eq!(d(&["context at the 80% ceiling: handing off now [ctx: 80%]"]), Decision::HandOff);
        // A decision after the next launch belongs to the next agent.
        assert_eq!(
            d(&["step 1 agent 2 launched [ctx: 20%]", "context estimate 66% at next checkpoint: proceed [ctx: 62%]"]),
            Decision::NotEvaluated
        );
    }

    #[test]
    fn a_resumption_line_saying_no_self_correction_is_named_as_the_scripts_false_alarm() {
        let stdout = "=== RESULT: CAUTION (self-correction detected) ===\n";
        let status = "task claimed, session: s2, worked_by: m [ctx: 7%]\n  Self-correction in previous session: NO [ctx: 19%]\n";
        assert!(headroom_reason(stdout, status, "s2").contains("RESUMPTION line"));
        let status = "task claimed, session: s1, worked_by: m [ctx: 7%]\nstep 3 self-correction: agent 2 [ctx: 30%]\ntask claimed, session: s2, worked_by: m [ctx: 7%]\n";
        assert!(headroom_reason(stdout, status, "s2").contains("earlier session"));
        assert!(headroom_reason(stdout, status, "s1").contains("earlier in this session"));
    }
}
