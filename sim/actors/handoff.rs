//! The HANDOFF document (seed 003 "HANDOFF Document Structure"), the resumption assessment
//! (003 "Resumption Decision Tree", "State Reconciliation") and the RESUMPTION status
//! (003 "Verbose Resumption Status"). A successor session knows only what these files and
//! the database say: nothing passes between sessions in memory.

use std::fmt::Write;

use crate::vocab::{MessageKind, TaskState};

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
    pub worked_by: String,
    pub timestamp: String,
    pub context_pct: Option<i64>,
    pub next: Option<Position>,
    pub deviations: usize,
    pub self_correction: bool,
}

/// Reads a HANDOFF in one pass over its lines: every resumption parses the one on disk, and
/// a pass per field and section was a third of the assessment (issue 17). Each field is its
/// first line's; a section runs from the line after its heading to the next `## ` line.
pub fn parse(text: &str) -> ParsedHandoff {
    const FIELDS: [&str; 4] = ["- Session ID:", "- worked_by:", "- Timestamp:", "- Context at exit:"];
    let mut fields: [Option<&str>; 4] = [None; 4];
    let mut next = None;
    let (mut deviations_section, mut self_correction_section) = (Section::new("## Deviations"), Section::new("## Self-Correction"));
    let (mut deviations, mut self_correction) = (0, false);
    for line in text.lines() {
        let trimmed = line.trim();
        for (name, value) in FIELDS.iter().zip(fields.iter_mut()) {
            if value.is_none() {
                *value = trimmed.strip_prefix(name).map(str::trim);
            }
        }
        // Only a line with the capital of `Continue` is searched for it: a search per line
        // set its pattern up again each time, a third of the parse.
        if next.is_none() && line.as_bytes().contains(&b'C') {
            next = continue_from(line);
        }
        if deviations_section.holds(line, trimmed) && line.starts_with("- ") && trimmed != "- none" {
            deviations += 1;
        }
        if self_correction_section.holds(line, trimmed) && line.contains("YES") {
            self_correction = true;
        }
    }
    let [session_id, worked_by, timestamp, context] = fields.map(|f| f.unwrap_or_default());
    ParsedHandoff {
        session_id: session_id.to_string(),
        worked_by: worked_by.to_string(),
        timestamp: timestamp.to_string(),
        context_pct: context.trim_end_matches('%').parse().ok(),
        next,
        deviations,
        self_correction,
    }
}

/// The position of a `Continue from step N, agent M` line.
fn continue_from(line: &str) -> Option<Position> {
    let rest = line.split("Continue from step ").nth(1)?;
    let mut words = rest.split_whitespace();
    let step = words.next()?.parse().ok()?;
    let agent = words.nth(1)?.parse().ok()?;
    Some(Position { step, agent })
}

/// Where a pass over the lines stands with one section: before its (first) heading, inside
/// it, or past it. Sections are tracked apart, as a pass per section would read them.
struct Section {
    heading: &'static str,
    at: SectionAt,
}

#[derive(Clone, Copy, PartialEq)]
enum SectionAt {
    Before,
    Inside,
    Past,
}

impl Section {
    fn new(heading: &'static str) -> Section {
        Section { heading, at: SectionAt::Before }
    }

    /// Whether `line` (`trimmed`, trimmed) is one of the section's lines.
    fn holds(&mut self, line: &str, trimmed: &str) -> bool {
        match self.at {
            SectionAt::Before => {
                if trimmed == self.heading {
                    self.at = SectionAt::Inside;
                }
                false
            }
            SectionAt::Inside if line.starts_with("## ") => {
                self.at = SectionAt::Past;
                false
            }
            SectionAt::Inside => true,
            SectionAt::Past => false,
        }
    }
}

/// Where the status file says work stood: the position after the last `agent M integrated`
/// (or `completed by musician`) line, and the step of the last approved checkpoint.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatusProgress {
    pub last_done: Option<Position>,
    pub last_checkpoint_step: Option<u64>,
    /// Where the last approved checkpoint leaves the work: after its step, or after the agent
    /// it names when it was taken inside a step (`checkpoint 3 approved (step 5 agent 2)`,
    /// docs/protocol.md C52).
    pub last_checkpoint_next: Option<Position>,
    /// How many deviations earlier escalations covered: the count of the last
    /// `ESCALATION_ANSWERED` line (read in the same pass: a status file can be long).
    pub deviations_escalated: usize,
}

/// Reads the status file from its end: each figure is its last line's, and a status file
/// holds every session's lines of the task, so a forward pass re-read the whole history at
/// every resumption (2 % of fleet-day, issue 17). A figure whose kind of line the file lacks
/// is not looked for, so most resumptions read only the last few lines. Whether the file has a
/// kind of line at all is asked of its text as a whole (`contains`, which the standard library
/// answers 16 bytes at a time for a needle of at most 32 bytes); a needle found that is no
/// such line only lets the pass go on to the file's start, reading nothing more.
pub fn status_progress(status: &str) -> StatusProgress {
    let mut progress = StatusProgress::default();
    // The escalation's words are 35 bytes: their first 32 are asked for (any line that has
    // all 35 has these), so that the search is the fast one.
    let mut escalated_found = !status.contains(&ESCALATION_ANSWERED[..ESCALATION_ANSWERED.len().min(32)]);
    let mut done_found = !status.contains("step");
    // Status files mention checkpoints in other lines: the approval's own word is looked for.
    let mut checkpoint_found = !status.contains("(step");
    // `lines()` also strips a `\r` before the `\n`; every test below splits words on
    // whitespace or looks for text without one, so a `\r` changes none of them.
    for line in status.rsplit('\n') {
        if escalated_found && done_found && checkpoint_found {
            break;
        }
        if let Some(rest) = line.strip_prefix(ESCALATION_ANSWERED) {
            if !escalated_found {
                if let Some(covered) = rest.split_whitespace().next().and_then(|w| w.parse().ok()) {
                    progress.deviations_escalated = covered;
                    escalated_found = true;
                }
            }
            continue;
        }
        // Only an earlier escalation is still looked for: the line's words are not needed
        // (a status file holds every session's lines, and its escalation may be far back).
        if done_found && checkpoint_found {
            continue;
        }
        let first_word = line.trim_start();
        if !FIRST_WORDS.iter().any(|w| first_word.starts_with(w)) {
            continue;
        }
        let (first, count) = first_words(line);
        let words = &first[..count];
        if !done_found {
            if let Some(done) = done_position(line, words) {
                progress.last_done = Some(done);
                done_found = true;
            }
        }
        // An approved checkpoint whose step does not parse still counts: it clears the step.
        if !checkpoint_found {
            if let Some(covered) = approval_cover(words) {
                (progress.last_checkpoint_step, progress.last_checkpoint_next) = checkpoint_cover(covered);
                checkpoint_found = true;
            }
        }
    }
    progress
}

/// The review an approval line names, in the words of the musician's status lines: a scheduled
/// checkpoint (`checkpoint 3`), a context worry checkpoint (`context checkpoint after step 2`)
/// or the completion review (`final checkpoint`). The musician formats its lines with these
/// words and a successor reads them back with the same ones (`approval_cover`), so the two
/// cannot drift apart (issue 42: `final checkpoint approved (step 3)` was not read back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reviewed {
    Checkpoint(usize),
    ContextWorry(u64),
    Final,
}

impl Reviewed {
    /// The words that name the review at the start of its status lines.
    pub fn name(self) -> String {
        match self {
            Reviewed::Checkpoint(index) => format!("{CHECKPOINT_WORD} {index}"),
            Reviewed::ContextWorry(step) => format!("{CONTEXT_WORRY_WORDS} {step}"),
            Reviewed::Final => FINAL_WORDS.to_string(),
        }
    }
}

const CHECKPOINT_WORD: &str = "checkpoint";
/// How the lines `status_progress` reads start: a step's, or an approval's (each review name's
/// first word).
const FIRST_WORDS: [&str; 4] = ["step", CHECKPOINT_WORD, "final", "context"];
const CONTEXT_WORRY_WORDS: &str = "context checkpoint after step";
const FINAL_WORDS: &str = "final checkpoint";
/// The word after the review's name on its approval line, and how the coverage opens.
const APPROVED_WORD: &str = "approved";
const COVER_OPEN: &str = "(step";

/// What an approved review covers (docs/protocol.md C52): every agent through the end of a
/// step, or through an agent inside one (a checkpoint brought forward into a step).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Covered {
    Step(u64),
    Through(Position),
}

impl Covered {
    /// What the work done covers when `next` is the next agent to run: `None` before any.
    pub fn before(next: Position) -> Option<Covered> {
        match (next.agent, next.step) {
            (2.., step) => Some(Covered::Through(Position { step, agent: next.agent - 1 })),
            (_, 0 | 1) => None,
            (_, step) => Some(Covered::Step(step - 1)),
        }
    }
}

/// The status line of an approval: `checkpoint 3 approved (step 5 agent 2)`, `final
/// checkpoint approved (step 3)`; with nothing covered, `… approved (no agent done yet)`, which
/// no successor reads as coverage.
pub fn approval_line(review: Reviewed, covered: Option<Covered>) -> String {
    let name = review.name();
    match covered {
        Some(Covered::Step(step)) => format!("{name} {APPROVED_WORD} {COVER_OPEN} {step})"),
        Some(Covered::Through(p)) => format!("{name} {APPROVED_WORD} {COVER_OPEN} {} agent {})", p.step, p.agent),
        None => format!("{name} {APPROVED_WORD} (no agent done yet)"),
    }
}

/// How many of `words` name the review of an approval line (`checkpoint N`, `final
/// checkpoint`, `context checkpoint after step N`), if they name one.
fn review_words(words: &[&str]) -> Option<usize> {
    let named = |text: &str, count: usize| words.len() >= count && words[..count].iter().copied().eq(text.split(' '));
    if named(CONTEXT_WORRY_WORDS, 4) {
        return Some(5);
    }
    if named(FINAL_WORDS, 2) {
        return Some(2);
    }
    named(CHECKPOINT_WORD, 1).then_some(2)
}

/// An approval line read back (`words`, its first words): `None` if it is none; otherwise
/// what it covers, `None` inside when its step does not parse (it still counts: it clears
/// the step).
fn approval_cover(words: &[&str]) -> Option<Option<Covered>> {
    let at = review_words(words)?;
    if words.len() < at + 3 || words[at] != APPROVED_WORD || words[at + 1] != COVER_OPEN {
        return None;
    }
    let cover = &words[at + 2..];
    let inside = cover.len() >= 3 && cover[1] == "agent";
    if !inside {
        return Some(cover[0].trim_end_matches(')').parse().ok().map(Covered::Step));
    }
    let (Ok(step), Ok(agent)) = (cover[0].parse::<u64>(), cover[2].trim_end_matches(')').parse::<u64>()) else { return Some(None) };
    Some(Some(Covered::Through(Position { step, agent })))
}

/// What an approval covers as a resumption reads it: the last step it completes (S, or
/// S − 1 inside a step) and where work continues after it (000 "Mid-Session Resumption
/// Protocol" 5: "resumes from the last checkpoint"; docs/protocol.md C52, C160).
fn checkpoint_cover(covered: Option<Covered>) -> (Option<u64>, Option<Position>) {
    match covered {
        None => (None, None),
        Some(Covered::Step(step)) => (Some(step), Some(Position { step: step + 1, agent: 1 })),
        Some(Covered::Through(p)) => (p.step.checked_sub(1).filter(|s| *s > 0), Some(Position { step: p.step, agent: p.agent + 1 })),
    }
}

/// A line's first words (only they decide: a context checkpoint's approval has ten) and how
/// many there are, without a vector per line.
fn first_words(line: &str) -> ([&str; 10], usize) {
    let (mut first, mut count) = ([""; 10], 0);
    for word in line.split_whitespace().take(10) {
        first[count] = word;
        count += 1;
    }
    (first, count)
}

/// The position a `step N agent M integrated` (or `completed by musician`) line reports done.
fn done_position(line: &str, words: &[&str]) -> Option<Position> {
    if words.len() >= 5 && words[0] == "step" && words[2] == "agent" && (words[4] == "integrated" || line.contains("completed by musician"))
    {
        if let (Ok(step), Ok(agent)) = (words[1].parse(), words[3].parse()) {
            return Some(Position { step, agent });
        }
    }
    None
}

/// 003 "State Reconciliation" categories, in order of gravity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mismatch {
    None,
    /// "One field differs with clear explanation": auto-correct from temp/.
    Benign,
    /// "Multiple fields differ, needs investigation": re-run verification.
    Suspicious,
    /// "Fundamental state conflict": escalate to the conductor immediately.
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

/// REF-5 severities of deviation lines (000 "Deviations & Escalation Thresholds"): each line
/// of the deviations file names one of Low, Medium, High; `total` counts every line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Severities {
    pub high: usize,
    pub medium: usize,
    pub low: usize,
    pub total: usize,
}

impl Severities {
    pub fn of_lines<'a>(lines: impl IntoIterator<Item = &'a str>) -> Severities {
        let mut s = Severities::default();
        for line in lines.into_iter().filter(|l| !l.trim().is_empty()) {
            s.total += 1;
            match severity_rank(line) {
                Some(2) => s.high += 1,
                Some(1) => s.medium += 1,
                Some(_) => s.low += 1,
                None => {}
            }
        }
        s
    }

    /// The counts of two groups of lines together (each line counts on its own).
    pub fn plus(self, other: Severities) -> Severities {
        Severities {
            high: self.high + other.high,
            medium: self.medium + other.medium,
            low: self.low + other.low,
            total: self.total + other.total,
        }
    }

    /// "N High, N Medium, N Low", as 003's "breakdown by severity".
    pub fn breakdown(&self) -> String {
        format!("{} High, {} Medium, {} Low", self.high, self.medium, self.low)
    }
}

/// The rank (High 2, Medium 1, Low 0) of the first word of `line` that names a REF-5
/// severity, in any case; words are the runs of alphanumeric characters. Compared without a
/// lower-cased copy of every word, and ASCII bytes told apart without decoding them as
/// characters: a resumption reads the whole deviations file, and fleet-day resumes thousands
/// of times (splitting on a character test was 0.4 % of its run).
fn severity_rank(line: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    let (mut start, mut at) = (0, 0);
    loop {
        // `at` is always at a character's start: ASCII bytes are one wide, others decoded.
        let (in_word, width) = match bytes.get(at) {
            None => (false, 0),
            Some(b) if b.is_ascii() => (b.is_ascii_alphanumeric(), 1),
            Some(_) => line[at..].chars().next().map_or((false, 0), |c| (c.is_alphanumeric(), c.len_utf8())),
        };
        if !in_word {
            let word = &bytes[start..at];
            if let Some((_, rank)) =
                [(&b"high"[..], 2), (b"medium", 1), (b"low", 0)].into_iter().find(|(name, _)| word.eq_ignore_ascii_case(name))
            {
                return Some(rank);
            }
            if width == 0 {
                return None;
            }
            start = at + width;
        }
        at += width;
    }
}

/// When deviations are escalated to the conductor (docs/protocol.md D12).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EscalationRule {
    /// 000 "Deviations & Escalation Thresholds", REF-6: "2+ Medium deviations OR 1+ High
    /// deviation triggers escalation to conductor (replaces vague ">2 deviations" rule)".
    /// The default; 003's decision tree defers to it ("See the deviation escalation
    /// thresholds in SKILL.md for severity rules").
    Ref6,
    /// 000 "Temporary File Management" and 003 "Resumption Decision Tree": "> 2 deviations"
    /// (the `escalate-over-two` variant).
    OverTwo,
}

impl EscalationRule {
    pub fn of(escalate_over_two: bool) -> EscalationRule {
        if escalate_over_two {
            EscalationRule::OverTwo
        } else {
            EscalationRule::Ref6
        }
    }

    /// Whether these deviations (those not yet escalated) call for an escalation.
    pub fn met_by(self, s: &Severities) -> bool {
        match self {
            EscalationRule::Ref6 => s.medium >= 2 || s.high >= 1,
            EscalationRule::OverTwo => s.total > 2,
        }
    }

    pub fn text(self) -> &'static str {
        match self {
            EscalationRule::Ref6 => "REF-6: 2+ Medium or 1+ High",
            EscalationRule::OverTwo => "> 2 deviations",
        }
    }
}

/// The status line that records an answered escalation, and how many deviation lines (of
/// the task's deviations file, in order) it covered. A successor reads it back, so what the
/// conductor already answered is not escalated again.
pub const ESCALATION_ANSWERED: &str = "deviations escalated and answered: ";

/// The task row as a successor found it just before its claim (000 "Example: Mid-Session
/// Resumption" Step 3: the musician queries the task record, then claims). The claim
/// overwrites `session_id`, `worked_by` and `started_at`, so this read is what names the
/// session that held the task immediately before.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PriorRow {
    pub state: String,
    pub session_id: Option<String>,
    pub worked_by: Option<String>,
    pub started_at: Option<String>,
}

impl PriorRow {
    /// `<session id> (<worked_by>)`, or what the row lacks.
    pub fn describe(&self) -> String {
        match (&self.session_id, &self.worked_by) {
            (Some(id), Some(by)) if by != id => format!("{id} ({by})"),
            (Some(id), _) => id.clone(),
            (None, _) => "none (the task row names no session)".to_string(),
        }
    }
}

/// One message of the task as `read_task_messages` returns it (its text left out).
#[derive(Clone, Debug, PartialEq)]
pub struct MessageMeta {
    pub id: i64,
    pub from_session: String,
    pub kind: String,
    pub timestamp: String,
}

/// Everything a successor read for its assessment: the temp/ files and the database.
pub struct Found<'a> {
    pub handoff: Option<&'a str>,
    pub status: Option<&'a str>,
    pub deviations: Option<&'a str>,
    pub prior: &'a PriorRow,
    /// Every message of the task, in id order.
    pub messages: &'a [MessageMeta],
    /// This session's own start (its claim), `YYYY-MM-DD HH:MM:SS`.
    pub started_at: &'a str,
    /// Subagents of each step (`step_agents[s - 1]` for step `s`).
    pub step_agents: &'a [u64],
    pub rule: EscalationRule,
    /// How 003's "recent" is read (docs/protocol.md C25): `None`, written by the session that
    /// held the task immediately before; `Some(s)`, written at most `s` seconds before this
    /// session's claim (variant `handoff-stale-by-age`).
    pub recent_within_s: Option<i64>,
}

/// The successor's reading of what it found (003 "Resumption Decision Tree", "State
/// Reconciliation").
#[derive(Clone, Debug, PartialEq)]
pub struct Assessment {
    pub handoff: HandoffState,
    /// Why the HANDOFF is stale or missing, or how the previous session exited.
    pub handoff_detail: String,
    pub mismatch: Mismatch,
    pub mismatches: Vec<String>,
    pub deviations: Severities,
    /// Deviation lines earlier escalations covered (the conductor answered them).
    pub deviations_escalated: usize,
    /// The deviations not yet escalated meet the escalation rule.
    pub escalation_due: bool,
    /// Why 003 "Resumption Decision Tree" 5 says "Report to conductor for guidance" (or "State
    /// Reconciliation", Contradictory, "Escalate to conductor immediately"): one line per
    /// trigger met; empty when the session continues.
    pub report_reasons: Vec<String>,
    pub rule: EscalationRule,
    pub resume_from: Position,
    /// The step of the last approved checkpoint the status file records.
    pub last_checkpoint_step: Option<u64>,
    /// The session that held the task immediately before, as the task row named it.
    pub previous_session: String,
    pub previous_self_correction: bool,
    /// Conductor messages the previous session had not answered (003 step 3).
    pub pending_messages: Vec<i64>,
}

impl Assessment {
    /// 003: deviations within the threshold and no mismatches → clean; deviations past it
    /// (REF-6 by default, "> 2" under the variant) or a contradiction → guidance; otherwise
    /// verification clarifies.
    pub fn verdict(&self) -> &'static str {
        if !self.report_reasons.is_empty() {
            "needs guidance"
        } else if self.handoff == HandoffState::Present && self.mismatch == Mismatch::None {
            "clean handoff"
        } else {
            "needs verification"
        }
    }
}

/// Conductor answers to a musician's request (000 "Response Handling").
const ANSWERS: [MessageKind; 3] = [MessageKind::Approval, MessageKind::Rejection, MessageKind::FixProposal];

/// The 003 assessment. The HANDOFF is current only if the session that held the task
/// immediately before (the task row's `session_id` before the claim) wrote it; it is then
/// reconciled against the status and deviations files and against the database: the
/// messages since it was written, with their timestamps.
pub fn assess(found: &Found<'_>) -> Assessment {
    let parsed = found.handoff.map(parse);
    let progress = found.status.map(status_progress).unwrap_or_default();
    let deviation_lines: Vec<&str> = found.deviations.unwrap_or("").lines().filter(|l| !l.trim().is_empty()).collect();
    let deviations_escalated = progress.deviations_escalated.min(deviation_lines.len());
    // Each line is read once: the escalated ones and the others, which the rule judges.
    let not_escalated = Severities::of_lines(deviation_lines[deviations_escalated..].iter().copied());
    let deviations = Severities::of_lines(deviation_lines[..deviations_escalated].iter().copied()).plus(not_escalated);
    let escalation_due = found.rule.met_by(&not_escalated);
    let prior = found.prior;
    let previous = prior.session_id.as_deref();

    // 003 "Resumption Decision Tree" 2: present (the previous session's clean exit), missing,
    // or stale (written by an earlier session: the previous one crashed or exited unexpectedly).
    let mut mismatches = Mismatches::new();
    let stale = staleness(found, parsed.as_ref(), &mut mismatches);
    let handoff_state = match (&parsed, stale.is_empty()) {
        (None, _) => HandoffState::Missing,
        (Some(_), false) => HandoffState::Stale,
        (Some(_), true) => HandoffState::Present,
    };
    let handoff_detail = match (&parsed, handoff_state) {
        (Some(h), HandoffState::Present) => {
            format!("clean exit at {}% context", h.context_pct.map_or("?".to_string(), |c| c.to_string()))
        }
        (_, HandoffState::Stale) => stale.join("; "),
        _ => format!("{} left none: forced exit", prior.describe()),
    };

    let status_next = progress.last_done.map(|p| next_after(p, found.step_agents));
    let checkpoint_next = progress.last_checkpoint_next;
    if let (Some(h), HandoffState::Present) = (&parsed, handoff_state) {
        present_mismatches(found, h, status_next, deviations.total, &mut mismatches);
    }
    comms_mismatches(found, &mut mismatches);
    let worst = mismatches.iter().map(|(m, _, _)| *m).max().unwrap_or(Mismatch::None);
    // "Multiple fields differ" is suspicious even when each alone would be benign.
    let mismatch = if mismatches.len() > 1 { worst.max(Mismatch::Suspicious) } else { worst };

    // A current, consistent HANDOFF says where to continue; otherwise the last approved
    // checkpoint does (000 "Mid-Session Resumption Protocol": resume from last checkpoint).
    let resume_from = match (handoff_state, mismatch, parsed.as_ref().and_then(|p| p.next)) {
        (HandoffState::Present, Mismatch::None | Mismatch::Benign, Some(next)) => next,
        _ => checkpoint_next.unwrap_or(Position::START),
    };
    let previous_self_correction = match (&parsed, handoff_state) {
        (Some(h), HandoffState::Present) => h.self_correction,
        // No current HANDOFF: the previous session's own lines of the status file say.
        _ => previous.is_some_and(|id| session_lines(found.status.unwrap_or(""), id).any(|l| l.contains(" self-correction: "))),
    };
    Assessment {
        handoff: handoff_state,
        handoff_detail,
        mismatch,
        report_reasons: report_reasons(&mismatches, escalation_due, found.rule),
        mismatches: mismatches.into_iter().map(|(_, text, _)| text).collect(),
        deviations,
        deviations_escalated,
        escalation_due,
        rule: found.rule,
        resume_from,
        last_checkpoint_step: progress.last_checkpoint_step,
        previous_session: prior.describe(),
        previous_self_correction,
        pending_messages: pending_messages(found, parsed.as_ref()),
    }
}

/// A mismatch, and whether it sets temp/ against comms (the row or the messages) rather than
/// temp/ files against each other: 003 step 5's "temp/comms mismatch" trigger counts the former.
type Mismatches = Vec<(Mismatch, String, bool)>;

/// 003 "Resumption Decision Tree" 2: why the HANDOFF is stale (written by an earlier session:
/// the previous one crashed or exited unexpectedly), empty when it is current or missing; a
/// later message of a session the row no longer names is a mismatch.
fn staleness(found: &Found<'_>, parsed: Option<&ParsedHandoff>, mismatches: &mut Mismatches) -> Vec<String> {
    let prior = found.prior;
    let previous = prior.session_id.as_deref();
    let is_musician = |m: &&MessageMeta| m.from_session != crate::vocab::CONDUCTOR_TASK_ID && !MessageKind::ClaimBlocked.is(&m.kind);
    let mut stale = Vec::new();
    if let Some(h) = parsed {
        let later: Vec<&MessageMeta> =
            found.messages.iter().filter(is_musician).filter(|m| m.from_session != h.session_id && m.timestamp >= h.timestamp).collect();
        let age_s = seconds_between(&h.timestamp, found.started_at);
        let stale_by = match found.recent_within_s {
            None => previous != Some(h.session_id.as_str()),
            Some(limit) => age_s.is_none_or(|age| age > limit),
        };
        if stale_by && found.recent_within_s.is_some() {
            stale.push(format!(
                "written by {} ({}) at {}, {} before this session's claim at {} (recent: within {} s)",
                h.session_id,
                h.worked_by,
                h.timestamp,
                age_s.map_or("an unknown time".to_string(), |a| format!("{a} s")),
                found.started_at,
                found.recent_within_s.unwrap_or(0)
            ));
        } else if stale_by {
            let mut why = format!(
                "written by {} ({}) at {}, but the task was last held by {}",
                h.session_id,
                h.worked_by,
                h.timestamp,
                prior.describe()
            );
            if let Some(started) = &prior.started_at {
                let _ = write!(why, ", which claimed it at {started}");
            }
            if let Some(m) = later.iter().find(|m| Some(m.from_session.as_str()) == previous) {
                let _ = write!(why, " and wrote `{}` at {}", m.kind, m.timestamp);
            }
            stale.push(why);
        } else if let Some(m) = later.first() {
            // Neither the HANDOFF's session nor the row's: a session the row no longer names.
            mismatches.push((
                Mismatch::Suspicious,
                format!("{} wrote `{}` at {}, after the HANDOFF of {}", m.from_session, m.kind, m.timestamp, h.session_id),
                true,
            ));
        }
    }
    stale
}

/// The mismatches of a current HANDOFF with the status and deviations files and with comms.
fn present_mismatches(
    found: &Found<'_>,
    h: &ParsedHandoff,
    status_next: Option<Position>,
    deviations_total: usize,
    mismatches: &mut Mismatches,
) {
    if found.status.is_none() {
        mismatches.push((Mismatch::Contradictory, "HANDOFF present but no status file".to_string(), false));
    }
    if let (Some(next), Some(s)) = (h.next, status_next) {
        if next != s {
            // 003: "Step count off by 1" is benign, "Different step reported as current" not.
            let off_by_one = index(next, found.step_agents).abs_diff(index(s, found.step_agents)) == 1;
            mismatches.push((
                if off_by_one { Mismatch::Benign } else { Mismatch::Suspicious },
                format!("HANDOFF continues from step {} agent {}, status from step {} agent {}", next.step, next.agent, s.step, s.agent),
                false,
            ));
        }
    }
    if h.deviations != deviations_total {
        // 003: "Deviations count mismatch" is suspicious.
        mismatches.push((
            Mismatch::Suspicious,
            format!("HANDOFF lists {} deviations, the deviations file {}", h.deviations, deviations_total),
            false,
        ));
    }
    // A clean exit sends its `handoff` message after writing the HANDOFF (000 "Clean Exit
    // Protocol" 3-6): without it, comms do not confirm the exit the HANDOFF describes.
    let confirmed =
        found.messages.iter().any(|m| m.from_session == h.session_id && MessageKind::Handoff.is(&m.kind) && m.timestamp >= h.timestamp);
    if !confirmed {
        mismatches.push((
            Mismatch::Suspicious,
            format!("no `handoff` message from {} since its HANDOFF at {}: comms do not confirm its clean exit", h.session_id, h.timestamp),
            true,
        ));
    }
}

/// 003 Contradictory findings between the task row or the conductor's answers and this session.
fn comms_mismatches(found: &Found<'_>, mismatches: &mut Mismatches) {
    let prior = found.prior;
    // 003 Contradictory: "DB says `error` but temp shows checkpoint passed" — the row was not
    // handed over when this session claimed it (a claim guard that admits it, docs/protocol.md D1).
    // Claimable states of 000 Bootstrap 3 / 002 "Guard Clause Rules": the states a task is in
    // once its previous session has handed it over.
    if !prior.state.is_empty() && !TaskState::parse(&prior.state).is_some_and(TaskState::is_claimable) {
        mismatches.push((
            Mismatch::Contradictory,
            format!("the task row was `{}` when this session claimed it: {} had not handed it over", prior.state, prior.describe()),
            true,
        ));
    }
    // 003 Contradictory: "Conductor message timestamp > session start" — an answer written
    // after this session started answers an earlier session's request (docs/protocol.md D15).
    if let Some(m) = found.messages.iter().find(|m| {
        m.from_session == crate::vocab::CONDUCTOR_TASK_ID
            && MessageKind::parse(&m.kind).is_some_and(|kind| ANSWERS.contains(&kind))
            && m.timestamp.as_str() > found.started_at
    }) {
        mismatches.push((
            Mismatch::Contradictory,
            format!(
                "conductor `{}` at {}, after this session started at {}: it answers an earlier session",
                m.kind, m.timestamp, found.started_at
            ),
            true,
        ));
    }
}

/// 003 "Resumption Decision Tree" 5: "≤2 deviations AND no mismatches: Continue from last
/// checkpoint"; ">2 deviations OR multiple mismatches OR temp/comms mismatch: Report to
/// conductor for guidance", with "the deviation escalation thresholds in SKILL.md for severity
/// rules" (000 REF-6 by default, "> 2" under `escalate-over-two`); and 003 "State
/// Reconciliation": Contradictory → "Escalate to conductor immediately". A single benign
/// mismatch is auto-corrected from temp/ (State Reconciliation, Benign: "Auto-correct using
/// temp/ files"), so the temp/comms trigger counts suspicious and contradictory ones only
/// (docs/protocol.md N25, C25).
fn report_reasons(mismatches: &[(Mismatch, String, bool)], escalation_due: bool, rule: EscalationRule) -> Vec<String> {
    let mut reasons = Vec::new();
    if escalation_due {
        reasons.push(format!("deviations past the escalation threshold ({})", rule.text()));
    }
    if mismatches.len() >= 2 {
        reasons.push(format!("multiple mismatches ({})", mismatches.len()));
    }
    if mismatches.iter().any(|(m, _, comms)| *comms && *m >= Mismatch::Suspicious) {
        reasons.push("a temp/comms mismatch".to_string());
    }
    if mismatches.iter().any(|(m, _, _)| *m == Mismatch::Contradictory) {
        reasons.push("a contradictory state".to_string());
    }
    reasons
}

/// Seconds from `from` to `to`, both `YYYY-MM-DD HH:MM:SS` (SQLite's `datetime('now')`).
fn seconds_between(from: &str, to: &str) -> Option<i64> {
    Some(epoch_s(to)? - epoch_s(from)?)
}

/// A `YYYY-MM-DD HH:MM:SS` time as seconds since 1970 (the civil-from-days algorithm).
fn epoch_s(t: &str) -> Option<i64> {
    let (date, time) = t.trim().split_once(' ')?;
    let mut d = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let mut h = time.split(':').map(|p| p.parse::<i64>().ok());
    let (hh, mm, ss) = (h.next()??, h.next()??, h.next()??);
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some((era * 146_097 + doe - 719_468) * 86_400 + hh * 3600 + mm * 60 + ss)
}

/// The position after `done`.
fn next_after(done: Position, step_agents: &[u64]) -> Position {
    if done.agent >= agents_in(step_agents, done.step) {
        Position { step: done.step + 1, agent: 1 }
    } else {
        Position { step: done.step, agent: done.agent + 1 }
    }
}

/// A position as the number of agents before it.
fn index(p: Position, step_agents: &[u64]) -> u64 {
    (1..p.step).map(|s| agents_in(step_agents, s)).sum::<u64>() + (p.agent - 1)
}

/// The subagents of `step` (1-based); 0 past the plan.
fn agents_in(step_agents: &[u64], step: u64) -> u64 {
    step.checked_sub(1).and_then(|i| step_agents.get(i as usize)).copied().unwrap_or(0)
}

/// The status lines one session wrote: from its `task claimed, session: <id>` line to the
/// next session's bootstrap.
fn session_lines<'a>(status: &'a str, session_id: &'a str) -> impl Iterator<Item = &'a str> {
    let claimed = format!("task claimed, session: {session_id},");
    // The last line that starts with the claim, searched from the end: a status file holds
    // every session's lines, and splitting it all into a vector cost a pass and a copy.
    let after_claim = status
        .rmatch_indices(claimed.as_str())
        .find(|(i, _)| *i == 0 || status.as_bytes()[i - 1] == b'\n')
        .map_or("", |(i, _)| status[i..].split_once('\n').map_or("", |(_, rest)| rest));
    after_claim.lines().take_while(|l| !l.starts_with("bootstrap started"))
}

/// 003 step 3: the conductor's messages the previous session had not answered — those after
/// the last message it wrote (its `handoff` message on a clean exit). Without any, those since
/// its claim, or since the HANDOFF.
fn pending_messages(found: &Found<'_>, handoff: Option<&ParsedHandoff>) -> Vec<i64> {
    let previous = found.prior.session_id.as_deref();
    let last_own = found.messages.iter().filter(|m| Some(m.from_session.as_str()) == previous).map(|m| m.id).max();
    let since = found.prior.started_at.clone().or_else(|| handoff.map(|h| h.timestamp.clone())).unwrap_or_default();
    found
        .messages
        .iter()
        .filter(|m| m.from_session == crate::vocab::CONDUCTOR_TASK_ID && !MessageKind::Instruction.is(&m.kind))
        .filter(|m| match last_own {
            Some(id) => m.id > id,
            None => m.timestamp >= since,
        })
        .map(|m| m.id)
        .collect()
}

/// 003 "Verbose Resumption Status", with the line 000's worked example adds ("Verification
/// tests: all passing (44 tests)"): `verified` is what the successor's own re-verification
/// found (003 "Post-Resumption Verification").
pub fn resumption_status(worked_by: &str, a: &Assessment, context_pct: i64, verified: &str) -> String {
    let mismatches =
        if a.mismatches.is_empty() { "none".to_string() } else { format!("{} ({})", a.mismatches.len(), a.mismatches.join("; ")) };
    format!(
        "RESUMPTION: {worked_by} taking over\n  Previous session: {prev}\n  HANDOFF: {handoff} ({detail})\n  Context Usage: {context_pct}% (fresh session)\n  Deviations found: {dev} ({severities})\n  Status/comms mismatches: {mismatches}\n  Pending conductor messages: {pending}\n  Self-correction in previous session: {sc}\n  Assessment: {verdict}\n  Verification tests: {verified}\n  Resuming from: step {step} agent {agent}",
        prev = a.previous_session,
        handoff = a.handoff.word(),
        detail = a.handoff_detail,
        dev = a.deviations.total,
        severities = match (a.deviations_escalated, a.escalation_due) {
            (0, false) => a.deviations.breakdown(),
            (0, true) => format!("{}; past the threshold, {}", a.deviations.breakdown(), a.rule.text()),
            (n, due) => format!(
                "{}; {n} already escalated and answered{}",
                a.deviations.breakdown(),
                if due { format!(", the others past the threshold, {}", a.rule.text()) } else { String::new() }
            ),
        },
        pending = a.pending_messages.len(),
        sc = if a.previous_self_correction { "YES" } else { "NO" },
        verdict = a.verdict(),
        step = a.resume_from.step,
        agent = a.resume_from.agent,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const S1: &str = "abc";
    const S2: &str = "def";
    /// S1 worked step 5 agents 1-2 under a reduced scope, then its checkpoint, brought forward,
    /// was approved: it covers those two agents (issue 42: the line said "(step 4)" and a
    /// successor without a HANDOFF redid them).
    const STATUS: &str = "task claimed, session: abc, worked_by: musician-task-03 [ctx: 7%]\nstep 5 agent 2 integrated [ctx: 65%]\ncheckpoint 3 approved (step 5 agent 2) [ctx: 67%]\n";
    const DEVIATION: &str = "checkpoint 2: review_failed (Smoothness 6/9) [Medium]";

    fn doc(deviations: &[String]) -> String {
        render(&HandoffDoc {
            task_id: "task-03",
            session_id: S1,
            worked_by: "musician-task-03",
            exit_reason: "context exhaustion",
            context_pct: 72,
            timestamp: "2026-02-07 16:45:00",
            steps: 5,
            agents_per_step: 3,
            next: Position { step: 5, agent: 3 },
            deviations,
            self_correction: Some("step 3, agent 2"),
            last_checkpoint_step: Some(4),
            proposals: &[],
        })
    }

    fn message(id: i64, from: &str, kind: &str, timestamp: &str) -> MessageMeta {
        MessageMeta { id, from_session: from.to_string(), kind: kind.to_string(), timestamp: timestamp.to_string() }
    }

    /// S1 claimed at 15:00, wrote its HANDOFF at 16:45 and its `handoff` message; the
    /// conductor answered with its handoff instructions.
    fn clean_messages() -> Vec<MessageMeta> {
        vec![
            message(1, "task-00", "instruction", "2026-02-07 14:59:00"),
            message(7, S1, "handoff", "2026-02-07 16:45:30"),
            message(8, "task-00", "handoff", "2026-02-07 16:46:00"),
        ]
    }

    fn prior(session: &str, worked_by: &str, started_at: &str) -> PriorRow {
        PriorRow {
            state: "fix_proposed".to_string(),
            session_id: Some(session.to_string()),
            worked_by: Some(worked_by.to_string()),
            started_at: Some(started_at.to_string()),
        }
    }

    fn assess_with(handoff: Option<&str>, deviations: &str, prior: &PriorRow, messages: &[MessageMeta]) -> Assessment {
        assess(&Found {
            handoff,
            status: Some(STATUS),
            deviations: Some(deviations),
            prior,
            messages,
            started_at: "2026-02-07 16:47:00",
            step_agents: &[3; 5],
            rule: EscalationRule::Ref6,
            recent_within_s: None,
        })
    }

    #[test]
    fn session_lines_are_those_after_the_sessions_last_claim_up_to_the_next_bootstrap() {
        let status = "bootstrap started\ntask claimed, session: abc, worked_by: m\nstep 1 agent 1 integrated\nbootstrap started\n\
                      task claimed, session: def, worked_by: m\nX task claimed, session: abc, worked_by: m\nself-correction: a\n\
                      bootstrap started\ntask claimed, session: abc, worked_by: m\r\nstep 2 agent 1 integrated\r\nlast";
        // The claim inside the def line is no line start; abc's last claim is its second.
        assert_eq!(session_lines(status, "def").collect::<Vec<_>>(), ["X task claimed, session: abc, worked_by: m", "self-correction: a"]);
        assert_eq!(session_lines(status, "abc").collect::<Vec<_>>(), ["step 2 agent 1 integrated", "last"]);
        assert_eq!(session_lines(status, "ghi").count(), 0);
        assert_eq!(session_lines("task claimed, session: abc, worked_by: m", "abc").count(), 0);
    }

    /// The forward pass `status_progress` replaced: every line read, the last one wins.
    fn status_progress_forward(status: &str) -> StatusProgress {
        let mut progress = StatusProgress::default();
        for line in status.lines() {
            if let Some(rest) = line.strip_prefix(ESCALATION_ANSWERED) {
                if let Some(covered) = rest.split_whitespace().next().and_then(|w| w.parse().ok()) {
                    progress.deviations_escalated = covered;
                }
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().take(10).collect();
            if let Some(done) = done_position(line, &words) {
                progress.last_done = Some(done);
            }
            if let Some(covered) = approval_cover(&words) {
                (progress.last_checkpoint_step, progress.last_checkpoint_next) = checkpoint_cover(covered);
            }
        }
        progress
    }

    /// The pass per field and section `parse` replaced.
    fn parse_by_passes(text: &str) -> ParsedHandoff {
        let section = |heading: &str| -> Vec<&str> {
            text.lines().skip_while(|l| l.trim() != heading).skip(1).take_while(|l| !l.starts_with("## ")).collect()
        };
        let field = |name: &str| text.lines().find_map(|l| l.trim().strip_prefix(name).map(|v| v.trim().to_string())).unwrap_or_default();
        ParsedHandoff {
            session_id: field("- Session ID:"),
            worked_by: field("- worked_by:"),
            timestamp: field("- Timestamp:"),
            context_pct: field("- Context at exit:").trim_end_matches('%').parse().ok(),
            next: text.lines().find_map(continue_from),
            deviations: section("## Deviations").iter().filter(|l| l.starts_with("- ") && l.trim() != "- none").count(),
            self_correction: section("## Self-Correction").iter().any(|l| l.contains("YES")),
        }
    }

    proptest::proptest! {
        /// Lines of every kind `parse` tells apart, their near misses, headings repeated,
        /// out of order or indented.
        #[test]
        fn a_handoff_parses_in_one_pass_as_in_a_pass_per_field(picks in proptest::collection::vec(0_usize..22, 0..16)) {
            let kinds = [
                "- Session ID: abc", "  - Session ID:  def  ", "- worked_by: m", "- Timestamp: 2026-02-07 16:45:00", "- Context at exit: 72%",
                "- Context at exit: x%", "1. Continue from step 5, agent 3", "Continue from step x, agent 1", "Continue from step 6, agent",
                "## Deviations", "  ## Deviations", "## Self-Correction", " ## Self-Correction", "- none", "- a deviation", " - indented",
                "- YES, step 3", "YES", "## Other", "", "text", "- Session ID:",
            ];
            let text = picks.iter().map(|k| kinds[*k]).collect::<Vec<_>>().join("\n");
            let (one, passes) = (parse(&text), parse_by_passes(&text));
            proptest::prop_assert_eq!(
                (one.session_id, one.worked_by, one.timestamp, one.context_pct, one.next, one.deviations, one.self_correction),
                (passes.session_id, passes.worked_by, passes.timestamp, passes.context_pct, passes.next, passes.deviations, passes.self_correction)
            );
        }
    }

    /// The split on a character test `severity_rank` replaced.
    fn severity_rank_by_split(line: &str) -> Option<usize> {
        line.split(|c: char| !c.is_alphanumeric()).find_map(|w| {
            [("high", 2), ("medium", 1), ("low", 0)].into_iter().find(|(name, _)| w.eq_ignore_ascii_case(name)).map(|(_, rank)| rank)
        })
    }

    proptest::proptest! {
        /// Words, near misses and separators, ASCII or not (alphanumeric or not), in any order.
        #[test]
        fn a_severity_is_read_as_the_split_on_characters_reads_it(picks in proptest::collection::vec(0_usize..20, 0..12)) {
            let kinds = [
                "High", "medium", "LOW", "low", "highs", "lowe", "Médium", "éLow", "low\u{e9}", "Low—", "—", " ", "[", "-", "9", "l0w",
                "\u{660}", "Ⅻ", "step 3 agent 1", "\t",
            ];
            let line: String = picks.iter().map(|k| kinds[*k]).collect();
            proptest::prop_assert_eq!(severity_rank(&line), severity_rank_by_split(&line), "{:?}", line);
        }
    }

    proptest::proptest! {
        /// Lines drawn from every kind the reader tells apart (and their near misses), joined
        /// by `\n` or `\r\n`, with or without a final line end.
        #[test]
        fn status_progress_from_the_end_reads_as_the_forward_pass(
            picks in proptest::collection::vec((0_usize..24, proptest::bool::ANY), 0..12),
            final_break in proptest::bool::ANY,
        ) {
            let kinds = [
                "step 2 agent 1 integrated [ctx: 5%]", "  step 3 agent 2 integrated", "step 4 agent 1 completed by musician x",
                "step x agent 1 integrated", "step 5 agent 2 started", "step 6 agent", "checkpoint 2 approved (step 2)",
                "checkpoint 3 approved (step x)", "checkpoint 5 approved (step 3 agent 1)", "checkpoint 6 approved (step 3 agent x)", "checkpoint 4 rejected (step 4)", "deviations escalated and answered: 2 [ctx: 9%]",
                "final checkpoint approved (step 4)", "context checkpoint after step 1 approved (step 1 agent 2)", "conductor review_approved: proceed",
                "final checkpoint approved (no agent done yet)", "context check before step 2: x",
                "deviations escalated and answered: ? [ctx: 9%]", " deviations escalated and answered: 4", "", "bootstrap started",
                "task claimed, session: abc, worked_by: m", "stepping 1 agent 1 integrated", "\r",
            ];
            let mut status = String::new();
            for (i, (kind, crlf)) in picks.iter().enumerate() {
                if i > 0 {
                    status.push_str(if *crlf { "\r\n" } else { "\n" });
                }
                status.push_str(kinds[*kind]);
            }
            if final_break && !status.is_empty() {
                status.push('\n');
            }
            proptest::prop_assert_eq!(status_progress(&status), status_progress_forward(&status));
        }
    }

    /// docs/protocol.md C52: a checkpoint approved inside a step is resumed after its last
    /// agent; one after a whole step, at the next step's first agent.
    #[test]
    fn an_approved_checkpoint_is_resumed_after_what_it_covers() {
        let inside = status_progress("checkpoint 3 approved (step 5 agent 2) [ctx: 60%]\n");
        assert_eq!((inside.last_checkpoint_step, inside.last_checkpoint_next), (Some(4), Some(Position { step: 5, agent: 3 })));
        let whole = status_progress("checkpoint 3 approved (step 4) [ctx: 60%]\n");
        assert_eq!((whole.last_checkpoint_step, whole.last_checkpoint_next), (Some(4), Some(Position { step: 5, agent: 1 })));
        let first = status_progress("checkpoint 1 approved (step 1 agent 3) [ctx: 60%]\n");
        assert_eq!((first.last_checkpoint_step, first.last_checkpoint_next), (None, Some(Position { step: 1, agent: 4 })));
    }

    /// Issue 42 (F2): every approval line the musician writes (`review.rs` formats them with
    /// `approval_line`) is read back as covering what it says, the completion review's and a
    /// context checkpoint's too: `final checkpoint approved (step 3)` was skipped, and a
    /// successor of a session lost after its final approval redid step 3.
    #[test]
    fn every_approval_line_the_musician_writes_is_read_back() {
        let at = |step, agent| Position { step, agent };
        let reviews = [Reviewed::Checkpoint(3), Reviewed::ContextWorry(1), Reviewed::Final];
        let covers = [
            (Covered::Step(4), Some(4), at(5, 1)),
            (Covered::Through(at(5, 2)), Some(4), at(5, 3)),
            (Covered::Through(at(1, 3)), None, at(1, 4)),
        ];
        for review in reviews {
            for (covered, step, next) in covers {
                let line = format!("{} [ctx: 60%]\n", approval_line(review, Some(covered)));
                let read = status_progress(&format!("step 9 agent 9 integrated [ctx: 59%]\n{line}"));
                assert_eq!((read.last_checkpoint_step, read.last_checkpoint_next), (step, Some(next)), "{line}");
                assert!(FIRST_WORDS.iter().any(|w| line.starts_with(w)), "{line}");
            }
            // Nothing covered (a context checkpoint before any agent): no coverage read.
            let none = status_progress(&format!("checkpoint 1 approved (step 1) [ctx: 9%]\n{} [ctx: 9%]\n", approval_line(review, None)));
            assert_eq!(none.last_checkpoint_next, Some(at(2, 1)), "the approval before it stands");
        }
        // The exact words, as status files and tests/it/resumption.rs read them.
        assert_eq!(approval_line(Reviewed::Final, Some(Covered::Step(3))), "final checkpoint approved (step 3)");
        assert_eq!(
            approval_line(Reviewed::ContextWorry(1), Some(Covered::Through(at(1, 2)))),
            "context checkpoint after step 1 approved (step 1 agent 2)"
        );
        assert_eq!(approval_line(Reviewed::Checkpoint(2), None), "checkpoint 2 approved (no agent done yet)");
        // Lines that say "approved" and cover nothing: the conductor's answers to a context
        // warning or an escalation, a submission, a rejection.
        for line in [
            "conductor review_approved: proceed to checkpoint, then hand off",
            "conductor review_approved: no correction needed, resuming",
            "final checkpoint submitted for review",
            "checkpoint 4 rejected (step 4)",
            "context check before step 2 agent 1 launch: approved (step 1)",
        ] {
            assert_eq!(status_progress(&format!("{line} [ctx: 50%]\n")).last_checkpoint_next, None, "{line}");
        }
    }

    #[test]
    fn the_work_done_before_the_next_agent_is_what_an_approval_covers() {
        let at = |step, agent| Position { step, agent };
        assert_eq!(Covered::before(at(1, 1)), None);
        assert_eq!(Covered::before(at(1, 3)), Some(Covered::Through(at(1, 2))));
        assert_eq!(Covered::before(at(4, 1)), Some(Covered::Step(3)));
        assert_eq!(Covered::before(at(4, 2)), Some(Covered::Through(at(4, 1))));
    }

    #[test]
    fn status_progress_reads_the_last_answered_escalation_with_the_progress_in_one_pass() {
        let status = format!(
            "{STATUS}{ESCALATION_ANSWERED}2 [ctx: 50%]\nstep 5 agent 3 integrated [ctx: 66%]\n{ESCALATION_ANSWERED}3 [ctx: 70%]\n{ESCALATION_ANSWERED}? [ctx: 71%]\n"
        );
        let progress = status_progress(&status);
        // The last line that names a count wins; one that names none is passed over.
        assert_eq!(progress.deviations_escalated, 3);
        assert_eq!(progress.last_done, Some(Position { step: 5, agent: 3 }));
        assert_eq!(progress.last_checkpoint_step, Some(4));
        assert_eq!(progress.last_checkpoint_next, Some(Position { step: 5, agent: 3 }));
        assert_eq!(status_progress(STATUS).deviations_escalated, 0);
    }

    #[test]
    fn a_rendered_handoff_parses_back_and_is_current_when_the_previous_session_wrote_it() {
        let doc = doc(&[DEVIATION.to_string()]);
        assert!(doc.contains("1. Claim task with worked_by = musician-task-03-S2"));
        let parsed = parse(&doc);
        assert_eq!(
            (parsed.session_id.as_str(), parsed.worked_by.as_str(), parsed.context_pct, parsed.next, parsed.deviations),
            (S1, "musician-task-03", Some(72), Some(Position { step: 5, agent: 3 }), 1)
        );
        let a = assess_with(Some(&doc), DEVIATION, &prior(S1, "musician-task-03", "2026-02-07 15:00:00"), &clean_messages());
        assert_eq!(
            (a.handoff, a.mismatch, a.resume_from, a.verdict(), a.pending_messages.as_slice()),
            (HandoffState::Present, Mismatch::None, Position { step: 5, agent: 3 }, "clean handoff", &[8][..])
        );
        assert_eq!((a.previous_session.as_str(), a.previous_self_correction), ("abc (musician-task-03)", true));
        let text = resumption_status("musician-task-03-S2", &a, 18, "all passing (44 tests)");
        assert!(text.contains("\n  HANDOFF: present (clean exit at 72% context)\n"), "{text}");
        assert!(text.contains("\n  Deviations found: 1 (0 High, 1 Medium, 0 Low)\n"), "{text}");
        // What the successor's own verification found, not a fixed "all passing".
        assert!(text.contains("\n  Verification tests: all passing (44 tests)\n"), "{text}");
        let found = resumption_status("musician-task-03-S2", &a, 18, "all passing (44 tests); Test Failures: 1 fixed (t: Test bug fixed)");
        assert!(found.contains("\n  Verification tests: all passing (44 tests); Test Failures: 1 fixed (t: Test bug fixed)\n"), "{found}");
    }

    #[test]
    fn without_a_handoff_the_successor_resumes_from_the_last_checkpoint() {
        let missing = assess_with(None, "", &prior(S1, "musician-task-03", "2026-02-07 15:00:00"), &clean_messages()[..1]);
        assert_eq!(
            (missing.handoff, missing.resume_from, missing.verdict()),
            // After the checkpoint's step 5 agents 1-2 (STATUS), not from step 5 agent 1 again.
            (HandoffState::Missing, Position { step: 5, agent: 3 }, "needs verification")
        );
        assert_eq!(missing.handoff_detail, "abc (musician-task-03) left none: forced exit");
    }

    /// S1 handed off cleanly, S2 claimed, wrote its RESUMPTION and crashed; the conductor
    /// handed the task to S3. The HANDOFF on disk is S1's: stale for S3.
    #[test]
    fn a_handoff_written_before_the_previous_session_claimed_is_stale() {
        let doc = doc(&[DEVIATION.to_string()]);
        let mut messages = clean_messages();
        messages.push(message(9, S2, "resumption", "2026-02-07 16:50:00"));
        messages.push(message(10, "task-00", "handoff", "2026-02-07 17:05:00"));
        let s2 = prior(S2, "musician-task-03-S2", "2026-02-07 16:48:00");
        let status = format!("{STATUS}task claimed, session: def, worked_by: musician-task-03-S2 [ctx: 7%]\n");
        let a = assess(&Found {
            handoff: Some(&doc),
            status: Some(&status),
            deviations: Some(DEVIATION),
            prior: &s2,
            messages: &messages,
            started_at: "2026-02-07 17:06:00",
            step_agents: &[3; 5],
            rule: EscalationRule::Ref6,
            recent_within_s: None,
        });
        assert_eq!(
            (a.handoff, a.mismatch, a.resume_from, a.verdict()),
            (HandoffState::Stale, Mismatch::None, Position { step: 5, agent: 3 }, "needs verification")
        );
        assert_eq!(a.previous_session, "def (musician-task-03-S2)");
        assert_eq!(
            a.handoff_detail,
            "written by abc (musician-task-03) at 2026-02-07 16:45:00, but the task was last held by def (musician-task-03-S2), which claimed it at 2026-02-07 16:48:00 and wrote `resumption` at 2026-02-07 16:50:00"
        );
        // S1's self-correction was S1's; S2's own status lines show none.
        assert!(!a.previous_self_correction);
        // Only what came after S2's last message is pending: the handoff to S3, not S2's.
        assert_eq!(a.pending_messages, vec![10]);
        assert!(resumption_status("musician-task-03-S3", &a, 14, "all passing").contains("\n  HANDOFF: stale (written by abc"));
    }

    #[test]
    fn mismatches_are_classified_as_003_state_reconciliation_says() {
        let s1 = prior(S1, "musician-task-03", "2026-02-07 15:00:00");
        // A deviations count mismatch is suspicious (the HANDOFF lists 1, the file holds 2).
        let two = format!("{DEVIATION}\nstep 5 agent 1: succeeded after 1 retry (Low — adjusted prompt)\n");
        let a = assess_with(Some(&doc(&[DEVIATION.to_string()])), &two, &s1, &clean_messages());
        assert_eq!(
            (a.mismatch, a.mismatches.as_slice()),
            (Mismatch::Suspicious, &["HANDOFF lists 1 deviations, the deviations file 2".to_string()][..])
        );
        assert_eq!((a.resume_from, a.verdict()), (Position { step: 5, agent: 3 }, "needs verification"));
        // The step count off by one is benign: the HANDOFF's position stands.
        let ahead = doc(&[DEVIATION.to_string()]).replace("Continue from step 5 agent 3", "Continue from step 6 agent 1");
        let a = assess_with(Some(&ahead), DEVIATION, &s1, &clean_messages());
        assert_eq!((a.mismatch, a.resume_from), (Mismatch::Benign, Position { step: 6, agent: 1 }));
        // No `handoff` message after the HANDOFF: the exit is not confirmed in comms.
        let a = assess_with(Some(&doc(&[DEVIATION.to_string()])), DEVIATION, &s1, &clean_messages()[..1]);
        assert_eq!(a.mismatch, Mismatch::Suspicious);
        assert!(a.mismatches[0].starts_with("no `handoff` message from abc since its HANDOFF"), "{:?}", a.mismatches);
        // DB state not handed over, and a conductor answer after this session started:
        // contradictory, needs guidance.
        let under_review = PriorRow { state: "needs_review".to_string(), ..s1.clone() };
        let mut messages = clean_messages();
        messages.push(message(11, "task-00", "approval", "2026-02-07 16:48:00"));
        let a = assess_with(Some(&doc(&[DEVIATION.to_string()])), DEVIATION, &under_review, &messages);
        assert_eq!((a.mismatch, a.verdict()), (Mismatch::Contradictory, "needs guidance"));
        assert_eq!(a.mismatches.len(), 2, "{:?}", a.mismatches);
        assert!(a.mismatches[0].starts_with("the task row was `needs_review` when this session claimed it"));
        assert!(a.mismatches[1].starts_with("conductor `approval` at 2026-02-07 16:48:00, after this session started"));
    }

    /// 003 "Resumption Decision Tree" 5: each of its three triggers (and a contradiction) calls
    /// for a report; a lone benign mismatch, or a lone suspicious one between temp/ files, does not.
    #[test]
    fn step_5s_three_triggers_each_call_for_a_report() {
        let s1 = prior(S1, "musician-task-03", "2026-02-07 15:00:00");
        let clean = assess_with(Some(&doc(&[DEVIATION.to_string()])), DEVIATION, &s1, &clean_messages());
        assert!(clean.report_reasons.is_empty() && clean.verdict() == "clean handoff", "{:?}", clean.report_reasons);
        // A lone benign mismatch: auto-corrected, no report.
        let ahead = doc(&[DEVIATION.to_string()]).replace("Continue from step 5 agent 3", "Continue from step 6 agent 1");
        assert!(assess_with(Some(&ahead), DEVIATION, &s1, &clean_messages()).report_reasons.is_empty());
        // A lone suspicious mismatch of temp/ files (deviation counts): verification, no report.
        let two = format!("{DEVIATION}\nstep 5 agent 1: succeeded after 1 retry (Low — adjusted prompt)\n");
        assert!(assess_with(Some(&doc(&[DEVIATION.to_string()])), &two, &s1, &clean_messages()).report_reasons.is_empty());
        // temp/comms: the HANDOFF's exit has no `handoff` message.
        let a = assess_with(Some(&doc(&[DEVIATION.to_string()])), DEVIATION, &s1, &clean_messages()[..1]);
        assert_eq!((a.report_reasons.as_slice(), a.verdict()), (&["a temp/comms mismatch".to_string()][..], "needs guidance"));
        // Multiple mismatches, each alone no trigger: the benign step and the deviation count.
        let a = assess_with(Some(&ahead), &two, &s1, &clean_messages());
        assert_eq!(a.report_reasons, ["multiple mismatches (2)"]);
        // Deviations past REF-6 (003 defers to SKILL.md's severity rules).
        let high = "step 2: wrong module rewritten [High]";
        let a = assess_with(Some(&doc(&[high.to_string()])), high, &s1, &clean_messages());
        assert_eq!(a.report_reasons, ["deviations past the escalation threshold (REF-6: 2+ Medium or 1+ High)"]);
    }

    /// docs/protocol.md C25: "recent" read as written by the previous holder (default) or, under
    /// `handoff-stale-by-age`, as written at most N seconds before this session's claim.
    #[test]
    fn a_handoff_is_recent_by_its_writer_or_by_its_age() {
        let s1 = prior(S1, "musician-task-03", "2026-02-07 15:00:00");
        let by_age = |limit: i64| {
            assess(&Found {
                handoff: Some(&doc(&[DEVIATION.to_string()])),
                status: Some(STATUS),
                deviations: Some(DEVIATION),
                prior: &s1,
                messages: &clean_messages(),
                started_at: "2026-02-07 16:55:00",
                step_agents: &[3; 5],
                rule: EscalationRule::Ref6,
                recent_within_s: Some(limit),
            })
        };
        // Written at 16:45:00, claimed at 16:55:00: 600 s.
        assert_eq!(by_age(600).handoff, HandoffState::Present);
        let stale = by_age(540);
        assert_eq!(stale.handoff, HandoffState::Stale);
        assert!(stale.handoff_detail.contains("600 s before this session's claim"), "{}", stale.handoff_detail);
        assert_eq!(stale.resume_from, Position { step: 5, agent: 3 }, "after the last approved checkpoint's agents");
        assert_eq!(epoch_s("1970-01-02 00:00:01"), Some(86_401));
        assert_eq!(seconds_between("2026-02-28 23:59:30", "2026-03-01 00:00:30"), Some(60));
    }

    #[test]
    fn ref_6_counts_severities_and_over_two_counts_deviations() {
        let s = |high, medium, low| Severities { high, medium, low, total: high + medium + low };
        // 000 "Example: Mid-Session Resumption" Step 7: "2 total (1 Medium, 1 Low) ≤ 2 allowed".
        let example = s(0, 1, 1);
        let cases = [(s(0, 0, 3), false, true), (s(0, 2, 0), true, false), (s(1, 0, 0), true, false), (example, false, false)];
        for (severities, ref_6, over_two) in cases {
            assert_eq!(EscalationRule::Ref6.met_by(&severities), ref_6, "{severities:?}");
            assert_eq!(EscalationRule::OverTwo.met_by(&severities), over_two, "{severities:?}");
        }
        assert_eq!((EscalationRule::of(false), EscalationRule::of(true)), (EscalationRule::Ref6, EscalationRule::OverTwo));
    }

    #[test]
    fn deviations_an_answered_escalation_covered_do_not_count_again() {
        let s1 = prior(S1, "musician-task-03", "2026-02-07 15:00:00");
        let escalated = format!("{STATUS}{ESCALATION_ANSWERED}2 [ctx: 50%]\n");
        let found = |status: &str, deviations: &str, rule| {
            assess(&Found {
                handoff: None,
                status: Some(status),
                deviations: Some(deviations),
                prior: &s1,
                messages: &clean_messages(),
                started_at: "2026-02-07 16:47:00",
                step_agents: &[3; 5],
                rule,
                recent_within_s: None,
            })
        };
        let three = format!("{DEVIATION}\n{DEVIATION}\n{DEVIATION}\n");
        // Never escalated: three Mediums are past REF-6 and past "> 2".
        for rule in [EscalationRule::Ref6, EscalationRule::OverTwo] {
            let a = found(STATUS, &three, rule);
            assert_eq!((a.deviations_escalated, a.escalation_due, a.verdict()), (0, true, "needs guidance"));
        }
        // The first two were answered: one Medium remains, within either reading.
        let a = found(&escalated, &three, EscalationRule::Ref6);
        assert_eq!((a.deviations.total, a.deviations_escalated, a.escalation_due), (3, 2, false));
        assert!(resumption_status("musician-task-03-S2", &a, 14, "all passing")
            .contains("Deviations found: 3 (0 High, 3 Medium, 0 Low; 2 already escalated and answered)"));
        let four = format!("{three}{DEVIATION}\n");
        assert!(found(&escalated, &four, EscalationRule::Ref6).escalation_due, "two new Mediums");
        assert!(!found(&escalated, &four, EscalationRule::OverTwo).escalation_due, "two new deviations are not > 2");
    }

    #[test]
    fn severities_are_counted_by_their_ref_5_word() {
        let file = "a [Medium]\nb (Low — x)\n\nc (High — y)\nd (Medium — z)\nno severity\n";
        assert_eq!(Severities::of_lines(file.lines()), Severities { high: 1, medium: 2, low: 1, total: 5 });
        assert_eq!(Severities::of_lines(file.lines()).breakdown(), "1 High, 2 Medium, 1 Low");
    }
}
