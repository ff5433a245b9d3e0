//! `rehearsal findings --conductors A,B,…`: which conclusions survive another conductor
//! (docs/protocol.md C110, issue 42 item 6). The seeds do not describe the conductor, so every
//! finding measured with the invented one may be a finding about that conductor. Each finding
//! of reports/FINDINGS.md (its variant against the default on its demo scenario,
//! the variant table's demo scenarios) and each necessity of docs/repaired-protocol.md (the `repaired` profile
//! without one change, `repaired_doc::CHANGES`) is run again under every conductor profile
//! named, and its conclusion is compared with the first profile's: a finding holds under every
//! conductor when its conclusion is the same under all of them. The sections are spliced into
//! the two documents (`splice`), as `swarm --doc` splices its own.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::base::error::{Error, Result};
use crate::input::scenario::Scenario;
use crate::run::{execute, Execution, RunOptions};

/// The heading of FINDINGS.md's section.
pub const FINDINGS_HEADING: &str = "## Under every conductor profile";
/// The heading of docs/repaired-protocol.md's section.
pub const NECESSITY_HEADING: &str = "## Necessity under every conductor profile";

/// What one run gives the tables: whether it passed, the rules it broke, the figures a
/// finding about numbers is read from (`Figure`), and a digest of what it did (`run_digest`), so
/// that a variant that changes nothing in a run is told from one that changes something.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judged {
    pub passed: bool,
    pub rules: BTreeSet<String>,
    pub figures: BTreeMap<Figure, i64>,
    /// `run_digest` of the run's folder; empty for a harness error.
    pub digest: String,
}

/// The digest of a run's comms.db and of its trace without the two rows that name the run
/// rather than say what happened in it (`run_start` names the variants, `run_end` the hash of
/// the rows before it): two runs with equal digests wrote the same database and did the same
/// things in the same order, whatever variant each was given.
pub fn run_digest(dir: &Path) -> Result<String> {
    use sha2::{Digest, Sha256};
    let read =
        |name: &str| std::fs::read(dir.join(name)).map_err(|e| Error::harness(format!("cannot read {}: {e}", dir.join(name).display())));
    let mut hasher = Sha256::new();
    hasher.update(Sha256::digest(read("comms.db")?));
    let trace = read("trace.csv")?;
    for row in trace.split(|b| *b == b'\n') {
        let event = row.split(|b| *b == b',').nth(4).unwrap_or_default();
        if event != b"run_start" && event != b"run_end" {
            hasher.update(row);
            hasher.update(b"\n");
        }
    }
    Ok(format!("{:x}", hasher.finalize()))
}

/// The figures of a run that a finding whose verdicts do not move is about (FINDINGS.md's
/// numeric findings: D7's hand-offs and makespan, `ceiling-before-work`'s hand-offs, …). Without
/// them such a finding "held" under every conductor by construction: no pass count and no rule
/// moved under any (issue 42's cold review).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Figure {
    /// Claims by a successor session: after a clean exit (`exit_to_claim_ms`) or a crash or
    /// hang (`recovery_ms`), i.e. the hand-overs of the run.
    Successors,
    /// Simulated time from the epoch to the run's last event.
    MakespanMs,
    /// Tasks `complete` at the end.
    TasksComplete,
    /// A musician putting its row in `error`: context warnings (000 "Context Monitoring"), and
    /// the other escalations; D7's finding is about the first (warnings per run).
    Escalations,
}

impl Figure {
    pub const ALL: [Figure; 4] = [Figure::Successors, Figure::MakespanMs, Figure::TasksComplete, Figure::Escalations];

    pub fn name(self) -> &'static str {
        match self {
            Figure::Successors => "successors",
            Figure::MakespanMs => "makespan",
            Figure::TasksComplete => "tasks complete",
            Figure::Escalations => "escalations",
        }
    }

    fn of(summary: &crate::run::RunSummary) -> BTreeMap<Figure, i64> {
        let measured = &summary.measured;
        let successors = measured.exit_to_claim_ms.len() + measured.designer.recovery_ms.len();
        BTreeMap::from([
            (Figure::Successors, successors as i64),
            (Figure::MakespanMs, summary.makespan_ms),
            (Figure::TasksComplete, summary.tasks_complete as i64),
            (Figure::Escalations, escalations(&summary.coverage) as i64),
        ])
    }
}

/// Musician transitions into `error`, counted once each (coverage also counts them per context).
fn escalations(coverage: &crate::judging::coverage::Coverage) -> u64 {
    use crate::judging::coverage::{Item, Writer};
    let into_error =
        |item: &Item| matches!(item, Item::Transition { writer: Writer::Musician, to: crate::vocab::TaskState::Error, context: None, .. });
    coverage.reached().filter(|(item, _)| into_error(item)).map(|(_, n)| n).sum()
}

/// A figure moves when the variant's mean over the seeds is more than this share of the
/// default's mean away from it (any change at all when the default's mean is 0): below it, a
/// seed's noise is not a finding.
pub const FIGURE_MOVE_PERCENT: f64 = 5.0;

/// How the variant's mean of each figure compares with the default's, for the figures that move.
fn figure_moves(default: &[&Judged], variant: &[&Judged]) -> BTreeMap<Figure, (std::cmp::Ordering, i64)> {
    let mean = |runs: &[&Judged], f: Figure| {
        runs.iter().map(|j| j.figures.get(&f).copied().unwrap_or(0) as f64).sum::<f64>() / runs.len().max(1) as f64
    };
    let mut moves = BTreeMap::new();
    for f in Figure::ALL {
        let (d, v) = (mean(default, f), mean(variant, f));
        let percent = if d == 0.0 {
            if v == 0.0 {
                0.0
            } else {
                100.0 * v.signum()
            }
        } else {
            100.0 * (v - d) / d.abs()
        };
        if percent.abs() > FIGURE_MOVE_PERCENT {
            moves.insert(f, (if percent > 0.0 { std::cmp::Ordering::Greater } else { std::cmp::Ordering::Less }, percent.round() as i64));
        }
    }
    moves
}

/// One run of `path` at `seed` under `conductor`, with `variants` (the command line's) over the
/// scenario's own; `protocol` replaces the scenario's profile when given. Only its verdict is
/// kept (its folder `scratch`, its own, is removed). A harness error is a failing run that says so
/// (one seed never takes the table down); bad input stops the command.
fn judge_one(path: &str, conductor: &str, protocol: Option<&str>, variants: &[String], seed: u64, scratch: &Path) -> Result<Judged> {
    let scenario = Scenario::load(Path::new(path))?.with_profile(protocol)?.with_conductor(Some(conductor))?;
    let out = scratch.to_path_buf();
    let options = RunOptions { scenario_path: PathBuf::new(), seed: Some(seed), out_dir: Some(out.clone()), variants: variants.to_vec() };
    // The folder is written (not only the trace's hash) for `run_digest`: the trace hash names
    // the variants, so it differs between two runs that did the same.
    let run =
        options.plan(&scenario).and_then(|plan| execute(plan, Execution::default())).and_then(|executed| Ok((run_digest(&out)?, executed)));
    let _ = std::fs::remove_dir_all(&out);
    match run {
        Ok((digest, executed)) => {
            let verdict = &executed.summary.verdict;
            let rules = verdict.rules().iter().map(|r| r.to_string()).collect();
            Ok(Judged { passed: verdict.passed(), rules, figures: Figure::of(&executed.summary), digest })
        }
        Err(Error::Input(message)) => Err(Error::Input(message)),
        Err(e) => Ok(Judged {
            passed: false,
            rules: BTreeSet::from([format!("harness error: {e}")]),
            figures: BTreeMap::new(),
            digest: String::new(),
        }),
    }
}

/// One run to make: scenario, conductor, protocol profile, variants, seed.
type Job = (String, String, Option<String>, Vec<String>, u64);

/// Runs every job once (the same job named twice runs once), `jobs` at a time.
fn run_all(wanted: &[Job], jobs: usize, scratch: &Path) -> Result<BTreeMap<Job, Judged>> {
    let unique: Vec<(usize, Job)> = wanted.iter().cloned().collect::<BTreeSet<_>>().into_iter().enumerate().collect();
    let work = |(i, (path, conductor, protocol, variants, seed)): &(usize, Job)| {
        judge_one(path, conductor, protocol.as_deref(), variants, *seed, &scratch.join(format!("run-{i}")))
    };
    let panicked = |_: &(usize, Job), panic: &str| Err(Error::harness(format!("a run panicked: {panic}")));
    let results = crate::campaign::map(jobs, &unique, work, panicked, || false, |_, _| {});
    let mut out = BTreeMap::new();
    for ((_, job), result) in unique.into_iter().zip(results) {
        match result {
            Some(judged) => out.insert(job, judged?),
            None => return Err(Error::harness("interrupted".to_string())),
        };
    }
    Ok(out)
}

/// A finding's conclusion, read off its two columns over the same seeds: whether the variant
/// passes more, fewer or as many runs as the default, and the rules it shows in more runs and
/// in fewer. Counts are what the table shows; the conclusion compares only these directions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conclusion {
    pub pass: std::cmp::Ordering,
    pub more: BTreeSet<String>,
    pub fewer: BTreeSet<String>,
    /// Pass counts, default then variant, and the seeds run (shown, not compared).
    pub counts: (usize, usize, usize),
    /// The figures whose mean moves by more than `FIGURE_MOVE_PERCENT`, their direction and
    /// change in whole percent. Compared only when the verdicts say nothing (`silent`).
    pub figures: BTreeMap<Figure, (std::cmp::Ordering, i64)>,
    /// Set when no seed exercises the finding (`NotShown`): the cell says so, and the finding
    /// cannot hold under every conductor.
    pub not_shown: Option<NotShown>,
}

/// Why no seed of a cell exercises its finding. A seed exercises it when its two runs' verdicts
/// differ (whether they pass, or the rules they break: an oracle-only variant changes no byte
/// of the run), or when the runs differ (`run_digest`) and the default's meets its scenario's
/// own expectations. So a seed does not when the variant changes nothing in the run, or when the
/// default already fails its scenario's expectations and the variant leaves the verdict as it
/// is: the demo does not happen under that conductor, and "no difference" there is no evidence
/// (issue 42's cold review, P1). A default that fails and a variant that passes (fencing on
/// faults/zombie.toml, whose violations are the finding and declared in no `[expect]`) is
/// exercised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotShown {
    /// Seeds whose two runs are the same run (`run_digest`).
    pub identical: usize,
    /// The other seeds: the runs differ, the default fails its scenario's expectations, the
    /// verdicts are the same.
    pub default_failing: usize,
}

impl NotShown {
    /// The seeds of two columns, paired in order: `None` when some seed exercises the finding.
    pub fn of(default: &[&Judged], variant: &[&Judged]) -> Option<NotShown> {
        let mut not_shown = NotShown { identical: 0, default_failing: 0 };
        for (d, v) in default.iter().zip(variant) {
            let same_verdict = d.passed == v.passed && d.rules == v.rules;
            if !same_verdict {
                return None;
            }
            if d.digest == v.digest {
                not_shown.identical += 1;
            } else if !d.passed {
                not_shown.default_failing += 1;
            } else {
                return None;
            }
        }
        Some(not_shown)
    }

    /// "every run identical to the default's", "the default failing its expectations in 5 of 5",
    /// or both counts.
    fn text(&self) -> String {
        let n = self.identical + self.default_failing;
        match (self.identical, self.default_failing) {
            (_, 0) => "every run identical to the default's".to_string(),
            (0, failing) => format!("the default failing its scenario's expectations in {failing} of {n}"),
            (same, failing) => format!(
                "{same} of {n} runs identical to the default's, the default failing its scenario's expectations in the other {failing}"
            ),
        }
    }
}

impl Conclusion {
    pub fn of(default: &[&Judged], variant: &[&Judged]) -> Conclusion {
        let passes = |runs: &[&Judged]| runs.iter().filter(|j| j.passed).count();
        let showing = |runs: &[&Judged], rule: &str| runs.iter().filter(|j| j.rules.contains(rule)).count();
        let rules: BTreeSet<&String> = default.iter().chain(variant).flat_map(|j| j.rules.iter()).collect();
        let (mut more, mut fewer) = (BTreeSet::new(), BTreeSet::new());
        for rule in rules {
            match showing(variant, rule).cmp(&showing(default, rule)) {
                std::cmp::Ordering::Greater => more.insert(rule.clone()),
                std::cmp::Ordering::Less => fewer.insert(rule.clone()),
                std::cmp::Ordering::Equal => false,
            };
        }
        let (d, v) = (passes(default), passes(variant));
        let not_shown = NotShown::of(default, variant);
        Conclusion { pass: v.cmp(&d), more, fewer, counts: (d, v, default.len()), figures: figure_moves(default, variant), not_shown }
    }

    /// Whether some seed exercises the finding (`NotShown`).
    pub fn shown(&self) -> bool {
        self.not_shown.is_none()
    }

    /// Whether the verdicts say nothing: as many passes either way and no rule moving. Such a
    /// finding is about figures, and is compared by them.
    pub fn silent(&self) -> bool {
        self.pass == std::cmp::Ordering::Equal && self.more.is_empty() && self.fewer.is_empty()
    }

    /// The directions of the moving figures.
    fn figure_directions(&self) -> BTreeMap<Figure, std::cmp::Ordering> {
        self.figures.iter().map(|(f, (direction, _))| (*f, *direction)).collect()
    }

    /// Whether two conclusions say the same (the counts aside; the figures' directions when both
    /// verdicts are silent).
    pub fn same_as(&self, other: &Conclusion) -> bool {
        let verdicts = (self.pass, &self.more, &self.fewer) == (other.pass, &other.more, &other.fewer);
        verdicts && (!self.silent() || self.figure_directions() == other.figure_directions())
    }

    /// How `other` agrees with this conclusion (the reference's).
    pub fn agreement(&self, other: &Conclusion) -> Agreement {
        if self.same_as(other) {
            return Agreement::Same;
        }
        if self.silent() && other.silent() {
            return self.figures_agreement(other);
        }
        let opposite = !self.more.is_disjoint(&other.fewer) || !self.fewer.is_disjoint(&other.more);
        let shared = !self.more.is_disjoint(&other.more) || !self.fewer.is_disjoint(&other.fewer);
        let both_silent = self.more.is_empty() && self.fewer.is_empty() && other.more.is_empty() && other.fewer.is_empty();
        if self.pass == other.pass && !opposite && (shared || both_silent) {
            Agreement::Direction
        } else {
            Agreement::Differs
        }
    }

    /// Two silent conclusions whose moving figures differ: in direction when at least one
    /// figure moves the same way and none the opposite way, else they differ.
    fn figures_agreement(&self, other: &Conclusion) -> Agreement {
        let (mine, theirs) = (self.figure_directions(), other.figure_directions());
        let opposite = mine.iter().any(|(f, d)| theirs.get(f).is_some_and(|t| t != d));
        let shared = mine.iter().any(|(f, d)| theirs.get(f) == Some(d));
        if shared && !opposite {
            Agreement::Direction
        } else {
            Agreement::Differs
        }
    }

    /// "pass 3 → 0 of 3; more: owner-writes-only; fewer: liveness", after "not shown (why): "
    /// when no seed exercises the finding.
    pub fn text(&self) -> String {
        let (d, v, n) = self.counts;
        let mut text = match &self.not_shown {
            Some(why) => format!("not shown ({}): ", why.text()),
            None => String::new(),
        };
        let _ = write!(text, "pass {d} → {v} of {n}");
        let list = |set: &BTreeSet<String>| set.iter().map(|r| r.replace('|', "/")).collect::<Vec<_>>().join(", ");
        if !self.more.is_empty() {
            let _ = write!(text, "; more: {}", list(&self.more));
        }
        if !self.fewer.is_empty() {
            let _ = write!(text, "; fewer: {}", list(&self.fewer));
        }
        if self.silent() && !self.figures.is_empty() {
            let moves: Vec<String> = self.figures.iter().map(|(f, (_, percent))| format!("{} {percent:+} %", f.name())).collect();
            let _ = write!(text, "; figures: {}", moves.join(", "));
        } else if self.more.is_empty() && self.fewer.is_empty() && d == v {
            text.push_str("; no difference");
        }
        text
    }
}

/// How a conclusion under another conductor agrees with the reference's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Agreement {
    /// The same pass direction and the same rules moving the same way.
    Same,
    /// The same pass direction, at least one rule moving the same way (or none on either
    /// side), none moving the opposite way: the finding's direction holds, its detail differs.
    Direction,
    /// Another pass direction, a rule moving the opposite way, or no rule in common.
    Differs,
}

/// The profiles named, each known, the first being the reference; bad input otherwise.
pub fn check_conductors(names: &[String]) -> Result<()> {
    if names.len() < 2 {
        return Err(Error::input("--conductors: name at least two conductor profiles, the first the reference (e.g. invented,attentive)"));
    }
    for (i, name) in names.iter().enumerate() {
        crate::input::conductor_profile::check_conductor_name(name).map_err(|m| Error::input(format!("--conductors: {m}")))?;
        if names[..i].contains(name) {
            return Err(Error::input(format!("--conductors: `{name}` named twice")));
        }
    }
    Ok(())
}

/// One row of a conclusions table: the finding, its scenario, its conclusion per conductor.
pub type Row = (String, String, Vec<Conclusion>);

/// The rows of FINDINGS.md's section: per finding of `demos` (variant, demo scenario; the
/// section runs the variant table's demo scenarios), in `VARIANTS`' order, its conclusion under each conductor.
pub fn findings_rows(demos: &[(&str, &str)], conductors: &[String], seeds: &[u64], jobs: usize, scratch: &Path) -> Result<Vec<Row>> {
    check_conductors(conductors)?;
    let mut wanted: Vec<Job> = Vec::new();
    for (variant, path) in demos {
        for conductor in conductors {
            for seed in seeds {
                wanted.push((path.to_string(), conductor.clone(), None, Vec::new(), *seed));
                wanted.push((path.to_string(), conductor.clone(), None, vec![variant.to_string()], *seed));
            }
        }
    }
    let judged = run_all(&wanted, jobs, scratch)?;
    let mut rows = Vec::new();
    for variant in crate::input::variant::VARIANTS {
        let Some((_, path)) = demos.iter().find(|(v, _)| *v == variant.name) else { continue };
        let conclusions = conductors
            .iter()
            .map(|conductor| {
                let column = |variants: Vec<String>| -> Vec<&Judged> {
                    seeds.iter().map(|s| &judged[&(path.to_string(), conductor.clone(), None, variants.clone(), *s)]).collect()
                };
                Conclusion::of(&column(Vec::new()), &column(vec![variant.name.to_string()]))
            })
            .collect();
        rows.push((format!("{}. `{}`", variant.disagreement, variant.name), format!("`{path}`"), conclusions));
    }
    Ok(rows)
}

/// A table of conclusions, one row a finding, a column a conductor, and whether it holds under
/// every one, then the count of each class. A finding holds under every conductor when it is
/// shown under each (`Conclusion::shown`) and its conclusion is the reference's under each: the
/// first profile's, or when the finding is not shown under that one, the first it is shown
/// under. Its class, the first that applies: it depends on the conductor when a conclusion
/// differs from the reference's; it is not shown under some profile when a cell is not shown
/// (it cannot hold under every profile, nor be said to depend); it holds in direction when a
/// conclusion agrees in direction only; else it holds.
pub fn conclusions_table(conductors: &[String], rows: &[Row], first_header: &str) -> String {
    let mut md = String::new();
    let names: Vec<String> = conductors.iter().map(|c| format!("`{c}`")).collect();
    let _ = writeln!(md, "| {first_header} | scenario | {} | holds under every conductor |", names.join(" | "));
    let _ = writeln!(md, "|{}", " --- |".repeat(3 + conductors.len()));
    let (mut direction, mut not_shown, mut depends) = (Vec::new(), Vec::new(), Vec::new());
    for (name, scenario, conclusions) in rows {
        let holds = holds_text(conductors, conclusions);
        match holds.class {
            Class::Holds => {}
            Class::Direction => direction.push(name.clone()),
            Class::NotShown => not_shown.push(name.clone()),
            Class::Depends => depends.push(name.clone()),
        }
        let cells: Vec<String> = conclusions.iter().map(Conclusion::text).collect();
        let _ = writeln!(md, "| {name} | {scenario} | {} | {} |", cells.join(" | "), holds.text);
    }
    let list = |names: &[String]| if names.is_empty() { String::new() } else { format!(" ({})", names.join(", ")) };
    let _ = writeln!(
        md,
        "\nOf {} findings, {} hold under every conductor profile named, {} hold in direction only{}, {} are not shown under some profile{}, and {} depend on the conductor{}.",
        rows.len(),
        rows.len() - depends.len() - direction.len() - not_shown.len(),
        direction.len(),
        list(&direction),
        not_shown.len(),
        list(&not_shown),
        depends.len(),
        list(&depends)
    );
    md
}

/// The four classes of a finding under the conductors (`conclusions_table`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Holds,
    Direction,
    NotShown,
    Depends,
}

/// A row's class and its "holds under every conductor" cell.
pub struct Holds {
    pub class: Class,
    pub text: String,
}

/// The class of one row's conclusions (one per conductor, in `conductors`' order), and its
/// cell: the class's clause first, then the profiles not shown under when the finding differs
/// elsewhere too, and those it agrees with in direction only.
pub fn holds_text(conductors: &[String], conclusions: &[Conclusion]) -> Holds {
    let hidden: Vec<&str> = conductors.iter().zip(conclusions).filter(|(_, c)| !c.shown()).map(|(n, _)| n.as_str()).collect();
    let (mut detail, mut differs) = (Vec::new(), Vec::new());
    if let Some(reference) = conclusions.iter().position(Conclusion::shown) {
        for (i, (name, conclusion)) in conductors.iter().zip(conclusions).enumerate() {
            if i == reference || !conclusion.shown() {
                continue;
            }
            match conclusions[reference].agreement(conclusion) {
                Agreement::Same => {}
                Agreement::Direction => detail.push(name.as_str()),
                Agreement::Differs => differs.push(name.as_str()),
            }
        }
    }
    let hidden_clause = format!("not shown under {}", hidden.join(", "));
    let detail_clause = format!("its rules or figures differ under {}", detail.join(", "));
    let (class, mut text) = if !differs.is_empty() {
        (Class::Depends, format!("no: differs under {}", differs.join(", ")))
    } else if !hidden.is_empty() {
        (Class::NotShown, format!("no: {hidden_clause}"))
    } else if !detail.is_empty() {
        (Class::Direction, format!("in direction: {detail_clause}"))
    } else {
        (Class::Holds, "yes".to_string())
    };
    if class == Class::Depends && !hidden.is_empty() {
        let _ = write!(text, "; {hidden_clause}");
    }
    if matches!(class, Class::Depends | Class::NotShown) && !detail.is_empty() {
        let _ = write!(text, "; in direction under {}", detail.join(", "));
    }
    Holds { class, text }
}

/// FINDINGS.md's section, measured.
pub fn findings_section(conductors: &[String], seeds: &[u64], jobs: usize, scratch: &Path) -> Result<String> {
    let demos: Vec<(&str, &str)> = crate::input::variant::VARIANTS.iter().map(|v| (v.name, v.id.demo())).collect();
    let rows = findings_rows(&demos, conductors, seeds, jobs, scratch)?;
    let mut md = format!("{FINDINGS_HEADING}\n\n");
    let _ = writeln!(
        md,
        "Generated by `cargo run --release -- findings --conductors {} --seeds {}` (sim/campaign/conductor_findings.rs); do not edit by hand. The seeds do not describe the conductor (docs/protocol.md C110): every finding above was measured with the invented one. Here each finding's variant is run against the default on its demo scenario again under every conductor profile named ({} seeds each, {} runs in all; the sections above use more seeds and some use their own, so their counts differ). A cell is the finding's conclusion under that conductor: the default's and the variant's passing runs, and the rules the variant shows in more runs (`more`) or fewer (`fewer`) than the default. A cell reads \"not shown\" when no seed exercises the finding under that conductor: a seed does when its two runs' verdicts differ (whether they pass, or the rules they break), or when the runs differ (comms.db, or the trace but for the rows that name the run) and the default's meets its scenario's own expectations; so the variant's runs identical to the default's, or a default that fails its scenario's expectations with the variant leaving the verdict as it is, show nothing there, and \"no difference\" in such a cell is no evidence. A finding holds under every conductor when it is shown under each and its conclusion (the direction of the pass count and the two sets of rules, not the counts) is the first profile's under every other (the first it is shown under, when it is not shown under the first); it depends on the conductor when under some profile it is shown and its conclusion differs; it is not shown under some profile when a cell is not shown and none differs (it cannot hold under every profile, nor be said to depend on one); it holds in direction when under some profile the pass count moves the same way and at least one rule moves the same way (or none does on either side) but the sets differ, no rule moving the opposite way. A finding whose verdicts do not move (as many passes, no rule in more or fewer runs: a finding about numbers) is compared by its figures instead: the means over the seeds of the successor sessions' claims (hand-overs), the makespan, the tasks complete and the musicians' escalations (rows put in `error`: context warnings and the others), a figure moving when the variant's mean is more than {FIGURE_MOVE_PERCENT} % from the default's (`figures: makespan +16 %`); it holds when the same figures move the same way under every profile, in direction when at least one does and none moves the opposite way, and \"no difference\" means no figure moved either. With few seeds a rule seen in one run more or less moves a set: a difference here is a lead to follow with `rehearsal compare <scenario> --variants default,<variant> --conductor <profile>` over more seeds, not a measurement.\n",
        conductors.join(","),
        range_text(seeds),
        seeds.len(),
        rows.len() * conductors.len() * seeds.len() * 2
    );
    md.push_str(&profiles_list(conductors));
    md.push_str(&conclusions_table(conductors, &rows, "finding"));
    md.push('\n');
    Ok(md)
}

/// The profiles named, each with what it sets (sim/input/conductor_profile.rs).
fn profiles_list(conductors: &[String]) -> String {
    let mut md = String::new();
    for name in conductors {
        let profile = crate::input::conductor_profile::find_conductor(name).expect("checked");
        let _ = writeln!(md, "- `{name}`: {}", profile.summary);
    }
    md.push('\n');
    md
}

fn range_text(seeds: &[u64]) -> String {
    format!("{}..={}", seeds.first().copied().unwrap_or(0), seeds.last().copied().unwrap_or(0))
}

/// docs/repaired-protocol.md's section: each change's necessity under each conductor. The
/// profile without the change, against the whole profile, on the change's necessity scenario
/// at its necessity seed and at `seeds`: the change is shown necessary under a conductor when
/// some seed breaks a rule without it that it does not break with it. `only`: these changes alone
/// (the tests'); `None`, every change of the profile.
pub fn necessity_section(conductors: &[String], seeds: &[u64], jobs: usize, scratch: &Path, only: Option<&[&str]>) -> Result<String> {
    check_conductors(conductors)?;
    let profile = crate::vocab::check_profile_name("repaired").map_err(Error::input)?;
    let all: Vec<String> = profile.variants.iter().map(|v| v.to_string()).collect();
    let checked: Vec<&String> = all.iter().filter(|v| only.is_none_or(|o| o.contains(&v.as_str()))).collect();
    let seeds_protocol = Some(crate::vocab::DEFAULT_PROFILE.to_string());
    let mut plans = Vec::new();
    let mut wanted: Vec<Job> = Vec::new();
    for variant in checked {
        let change = crate::campaign::repaired_doc::CHANGES
            .iter()
            .find(|c| c.variant == variant)
            .ok_or_else(|| Error::input(format!("the profile's variant `{variant}` has no entry in CHANGES")))?;
        let (path, _, seed) = change.necessity()?;
        let mut its_seeds: Vec<u64> = seeds.to_vec();
        if !its_seeds.contains(&seed) {
            its_seeds.insert(0, seed);
        }
        let without: Vec<String> = all.iter().filter(|v| *v != variant).cloned().collect();
        for conductor in conductors {
            for s in &its_seeds {
                wanted.push((path.to_string(), conductor.clone(), seeds_protocol.clone(), without.clone(), *s));
                wanted.push((path.to_string(), conductor.clone(), seeds_protocol.clone(), all.clone(), *s));
            }
        }
        plans.push((variant.clone(), change.rule, path, seed, its_seeds, without));
    }
    let judged = run_all(&wanted, jobs, scratch)?;
    let mut md = format!("{NECESSITY_HEADING}\n\n");
    let _ = writeln!(
        md,
        "Generated by `cargo run --release -- findings --repaired --conductors {} --seeds {}` (sim/campaign/conductor_findings.rs), spliced into this document; do not edit by hand. The necessity above was measured with the invented conductor on one run per change. Here each change's necessity scenario runs under every conductor profile named at its necessity seed and at seeds {} (reduced: {} runs in all, where the proof above runs thousands), under the profile without the change and under the whole profile. A cell counts the seeds where the run without the change breaks a rule the whole profile's run of the same seed does not (any rule, as the necessity table above names the first violation, whichever it is), and names those rules; the change is shown necessary under that conductor when the count is above 0, and its necessity holds under every conductor when it is shown under each. The rule after each change is the one its necessity run breaks under the first profile at its necessity seed and the whole profile's run does not, read from the runs: the one its finding is about when that run breaks it.\n",
        conductors.join(","),
        range_text(seeds),
        range_text(seeds),
        wanted.iter().collect::<BTreeSet<_>>().len()
    );
    md.push_str(&profiles_list(conductors));
    let names: Vec<String> = conductors.iter().map(|c| format!("`{c}`")).collect();
    let _ = writeln!(md, "| change | scenario, rule | {} | holds under every conductor |", names.join(" | "));
    let _ = writeln!(md, "|{}", " --- |".repeat(3 + conductors.len()));
    let mut held = 0;
    for (variant, rule, path, seed, its_seeds, without) in &plans {
        let mut cells = Vec::new();
        let mut missing = Vec::new();
        // A seed shows the change necessary under a conductor when the run without it breaks a
        // rule the whole profile's run of that seed does not (the document's necessity table
        // names the first violation, whichever rule it is: retry-failed-reads' is a budget).
        let introduced_under = |conductor: &String, s: u64| -> BTreeSet<String> {
            let key = |variants: &Vec<String>| (path.to_string(), conductor.clone(), seeds_protocol.clone(), variants.clone(), s);
            let with = &judged[&key(&all)].rules;
            judged[&key(without)].rules.difference(with).cloned().collect()
        };
        for conductor in conductors {
            let introduced = |s: u64| introduced_under(conductor, s);
            let shown: Vec<(u64, BTreeSet<String>)> =
                its_seeds.iter().map(|s| (*s, introduced(*s))).filter(|(_, rules)| !rules.is_empty()).collect();
            if shown.is_empty() {
                missing.push(conductor.as_str());
            }
            let seeds_text = shown.iter().map(|(s, _)| s.to_string()).collect::<Vec<_>>().join(", ");
            let rules: BTreeSet<&String> = shown.iter().flat_map(|(_, r)| r.iter()).collect();
            let rules_text = rules.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ");
            cells.push(if shown.is_empty() {
                format!("0 of {}", its_seeds.len())
            } else {
                format!("{} of {} (seeds {seeds_text}: {rules_text})", shown.len(), its_seeds.len())
            });
        }
        let named = named_rule(rule, &introduced_under(&conductors[0], *seed));
        let holds = if missing.is_empty() {
            held += 1;
            "yes".to_string()
        } else {
            format!("no: not shown under {}", missing.join(", "))
        };
        // "`X` removed", not "`X`": the document's other tables key their rows by the change
        // (tests/it/repaired.rs regenerates its single-run lines by that key).
        let _ = writeln!(md, "| `{variant}` removed | `{path}` (necessity seed {seed}), {named} | {} | {holds} |", cells.join(" | "));
    }
    let _ = writeln!(md, "\n{held} of {} changes are shown necessary under every conductor profile named in these seeds.\n", plans.len());
    Ok(md)
}

/// The rule a necessity row names: the one the change's finding is about (`Change::rule`) when
/// its necessity run breaks it (and the whole profile's run does not) under the first conductor,
/// else the rules that run does break, read from the runs (retry-failed-reads: its demo's rule is
/// allowed-transitions, its necessity run's is the budget), else the change's rule, said to be
/// broken at no seed there.
pub fn named_rule(rule: &str, introduced: &BTreeSet<String>) -> String {
    if introduced.contains(rule) {
        rule.to_string()
    } else if introduced.is_empty() {
        format!("{rule} (not broken at its necessity seed)")
    } else {
        introduced.iter().map(String::as_str).collect::<Vec<_>>().join(", ")
    }
}

/// Replaces the section of the document at `path` that starts at the line `heading` (up to the
/// next `## ` heading) with `section`, or appends it; whole or not at all.
pub fn splice(path: &Path, heading: &str, section: &str) -> Result<()> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::input(format!("{}: {e}", path.display())))?;
    let start = text.find(&format!("{heading}\n")).filter(|i| *i == 0 || text[..*i].ends_with('\n'));
    let out = match start {
        Some(start) => {
            let rest = &text[start + 1..];
            let end = rest.find("\n## ").map_or(text.len(), |e| start + 1 + e + 1);
            format!("{}{section}{}", &text[..start], &text[end..])
        }
        None => format!("{}\n{section}", text.trim_end_matches('\n').to_string() + "\n"),
    };
    crate::base::atomic::write_atomically(path, out.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run with this verdict; its digest is its verdict's, so two runs with the same verdict
    /// are the same run unless `other_run` says otherwise.
    fn judged(passed: bool, rules: &[&str]) -> Judged {
        let rules: BTreeSet<String> = rules.iter().map(|r| r.to_string()).collect();
        Judged { passed, digest: format!("{passed} {rules:?}"), rules, figures: BTreeMap::new() }
    }

    /// The same verdict from another run (another digest).
    fn other_run(judged: &Judged) -> Judged {
        Judged { digest: format!("{} (another run)", judged.digest), ..judged.clone() }
    }

    /// A passing run with these successors and makespan (ms) and 3 tasks complete.
    fn passing(successors: i64, makespan_ms: i64) -> Judged {
        let figures = BTreeMap::from([(Figure::Successors, successors), (Figure::MakespanMs, makespan_ms), (Figure::TasksComplete, 3)]);
        Judged { passed: true, rules: BTreeSet::new(), digest: format!("{successors} {makespan_ms}"), figures }
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_seed_not_exercised_is_one_whose_runs_are_the_same_or_whose_default_fails_alike() {
        let (ok, bad) = (judged(true, &[]), judged(false, &["liveness"]));
        let (ok2, bad2) = (other_run(&ok), other_run(&bad));
        // The variant changes no byte: not shown, whatever the verdicts.
        let same = Conclusion::of(&[&ok, &bad], &[&ok, &bad]);
        assert_eq!(same.not_shown, Some(NotShown { identical: 2, default_failing: 0 }));
        assert_eq!(same.text(), "not shown (every run identical to the default's): pass 1 → 1 of 2; no difference");
        // The default fails its expectations and the variant, another run, fails alike.
        let failing = Conclusion::of(&[&bad, &bad], &[&bad2, &bad2]);
        assert_eq!(failing.not_shown, Some(NotShown { identical: 0, default_failing: 2 }));
        assert!(
            failing.text().starts_with("not shown (the default failing its scenario's expectations in 2 of 2): pass 0 → 0 of 2"),
            "{}",
            failing.text()
        );
        let mixed = Conclusion::of(&[&ok, &bad], &[&ok, &bad2]);
        assert_eq!(mixed.not_shown, Some(NotShown { identical: 1, default_failing: 1 }));
        assert!(mixed
            .text()
            .contains("1 of 2 runs identical to the default's, the default failing its scenario's expectations in the other 1"));
        // Near misses, each exercised by one seed: another run of a passing default (a finding
        // about figures); a verdict that moves with the same bytes (an oracle-only variant); a
        // failing default the variant fixes (fencing on zombie.toml); one it fails otherwise.
        assert!(Conclusion::of(&[&bad, &ok], &[&bad2, &ok2]).shown(), "a passing default's other run");
        assert!(Conclusion::of(
            &[&ok],
            &[&Judged { passed: false, rules: BTreeSet::from(["allowed-transitions".to_string()]), ..ok.clone() }]
        )
        .shown());
        assert!(Conclusion::of(&[&bad], &[&ok]).shown(), "a failing default fixed");
        assert!(
            Conclusion::of(&[&bad], &[&judged(false, &["liveness", "owner-writes-only"])]).shown(),
            "a failing default failing otherwise"
        );
        assert!(Conclusion::of(&[&bad], &[&judged(false, &[])]).shown(), "the same pass count, another rule set");
    }

    #[test]
    fn a_finding_not_shown_under_a_profile_is_a_class_of_its_own_with_its_count() {
        let (ok, bad) = (judged(true, &[]), judged(false, &["liveness"]));
        let fixes = Conclusion::of(&[&bad], &[&ok]);
        let other_fix = Conclusion::of(&[&judged(false, &["liveness", "budget"])], &[&ok]);
        let identical = Conclusion::of(&[&ok], &[&ok]);
        let fails_alike = Conclusion::of(&[&bad], &[&other_run(&bad)]);
        let breaks = Conclusion::of(&[&ok], &[&bad]);
        let conductors = names(&["invented", "attentive", "strict"]);
        let class = |cells: &[&Conclusion]| {
            let cells: Vec<Conclusion> = cells.iter().map(|c| (*c).clone()).collect();
            let holds = holds_text(&conductors, &cells);
            (holds.class, holds.text)
        };
        assert_eq!(class(&[&fixes, &fixes, &fixes]), (Class::Holds, "yes".to_string()));
        assert_eq!(class(&[&fixes, &fixes, &other_fix]).0, Class::Direction);
        assert_eq!(class(&[&fixes, &identical, &fixes]), (Class::NotShown, "no: not shown under attentive".to_string()));
        assert_eq!(
            class(&[&fixes, &fails_alike, &other_fix]),
            (Class::NotShown, "no: not shown under attentive; in direction under strict".to_string())
        );
        // Nothing moves anywhere: "no difference" = "no difference" is not a "yes" (P1).
        assert_eq!(
            class(&[&identical, &identical, &fails_alike]),
            (Class::NotShown, "no: not shown under invented, attentive, strict".to_string())
        );
        assert_eq!(
            class(&[&fixes, &breaks, &identical]),
            (Class::Depends, "no: differs under attentive; not shown under strict".to_string())
        );
        // Not shown under the first profile: the others are compared with the first shown.
        assert_eq!(class(&[&identical, &fixes, &fixes]), (Class::NotShown, "no: not shown under invented".to_string()));
        assert_eq!(class(&[&identical, &fixes, &breaks]).0, Class::Depends);
        let rows = vec![
            ("1. `a`".to_string(), "`a.toml`".to_string(), vec![fixes.clone(), fixes.clone(), fixes.clone()]),
            ("2. `b`".to_string(), "`b.toml`".to_string(), vec![fixes.clone(), identical.clone(), fixes.clone()]),
            ("3. `c`".to_string(), "`c.toml`".to_string(), vec![fixes.clone(), fixes.clone(), other_fix]),
            ("4. `d`".to_string(), "`d.toml`".to_string(), vec![fixes.clone(), breaks, fixes]),
        ];
        let md = conclusions_table(&conductors, &rows, "finding");
        assert!(md.contains("| 2. `b` | `b.toml` | pass 0 → 1 of 1; fewer: liveness | not shown (every run identical to the default's): pass 1 → 1 of 1; no difference | pass 0 → 1 of 1; fewer: liveness | no: not shown under attentive |"), "{md}");
        assert!(
            md.contains("Of 4 findings, 1 hold under every conductor profile named, 1 hold in direction only (3. `c`), 1 are not shown under some profile (2. `b`), and 1 depend on the conductor (4. `d`)."),
            "{md}"
        );
    }

    #[test]
    fn the_digest_of_a_run_leaves_out_the_rows_that_name_it() {
        let dir = tempfile::tempdir().unwrap();
        let folder = |name: &str, start: &str, middle: &str, db: &[u8]| {
            let d = dir.path().join(name);
            std::fs::create_dir(&d).unwrap();
            let trace = format!("t_ms,time,actor,session,event,statement\n0,x,engine,,run_start,{start}\n5,x,task-01.S1,s,sql,{middle}\n9,x,engine,,run_end,sha256={start}\n");
            std::fs::write(d.join("trace.csv"), trace).unwrap();
            std::fs::write(d.join("comms.db"), db).unwrap();
            run_digest(&d).unwrap()
        };
        let base = folder("a", "variants=", "claim_task", b"db");
        assert_eq!(folder("b", "variants=instruction-any-type", "claim_task", b"db"), base, "only the rows naming the run differ");
        assert_ne!(folder("c", "variants=", "claim_task", b"db2"), base, "comms.db differs");
        assert_ne!(folder("d", "variants=", "set_error", b"db"), base, "a row of the run differs");
        assert!(run_digest(&dir.path().join("none")).is_err());
    }

    #[test]
    fn a_necessity_row_names_the_rule_its_run_breaks() {
        let set = |rules: &[&str]| rules.iter().map(|r| r.to_string()).collect::<BTreeSet<_>>();
        assert_eq!(named_rule("owner-writes-only", &set(&["liveness", "owner-writes-only"])), "owner-writes-only");
        assert_eq!(named_rule("allowed-transitions", &set(&["budget"])), "budget", "retry-failed-reads' necessity run (P3)");
        assert_eq!(named_rule("liveness", &set(&[])), "liveness (not broken at its necessity seed)");
    }

    #[test]
    fn a_finding_whose_verdicts_do_not_move_is_compared_by_its_figures() {
        let (base, slower, more_handoffs) = (passing(10, 1000), passing(10, 1200), passing(12, 1000));
        let slower_run = Conclusion::of(&[&base, &base], &[&slower, &slower]);
        assert!(slower_run.silent());
        assert_eq!(slower_run.text(), "pass 2 → 2 of 2; figures: makespan +20 %");
        assert_eq!(slower_run.agreement(&Conclusion::of(&[&base], &[&slower])), Agreement::Same);
        let nothing = Conclusion::of(&[&base], &[&other_run(&base)]);
        assert_eq!(nothing.text(), "pass 1 → 1 of 1; no difference");
        assert_eq!(slower_run.agreement(&nothing), Agreement::Differs, "a figure that moves under one profile only");
        assert_eq!(slower_run.agreement(&Conclusion::of(&[&slower], &[&base])), Agreement::Differs, "the opposite way");
        let both = Conclusion::of(&[&base], &[&passing(12, 1200)]);
        assert_eq!(slower_run.agreement(&both), Agreement::Direction, "makespan moves the same way, successors too");
        assert_eq!(slower_run.agreement(&Conclusion::of(&[&base], &[&more_handoffs])), Agreement::Differs, "no figure in common");
    }

    #[test]
    fn escalations_are_the_musicians_moves_into_error_counted_once() {
        use crate::judging::coverage::{Context, Coverage, Item, Writer};
        use crate::vocab::TaskState;
        let mut coverage = Coverage::default();
        let moved = |writer, from, to| Item::Transition { writer, from, to, context: None };
        coverage.add(moved(Writer::Musician, TaskState::Working, TaskState::Error));
        coverage.add(moved(Writer::Musician, TaskState::Working, TaskState::Error));
        coverage.add(moved(Writer::Musician, TaskState::NeedsReview, TaskState::Error));
        coverage.add(moved(Writer::Conductor, TaskState::Working, TaskState::Error));
        coverage.add(moved(Writer::Musician, TaskState::Error, TaskState::Working));
        let in_context = Item::Transition {
            writer: Writer::Musician,
            from: TaskState::Working,
            to: TaskState::Error,
            context: Some(Context::AfterCrash),
        };
        coverage.add(in_context);
        assert_eq!(escalations(&coverage), 3, "the same move counted again in its context is not another");
    }

    #[test]
    fn a_figure_within_the_noise_does_not_move_and_a_verdict_outranks_the_figures() {
        let (base, near) = (passing(100, 100_000), passing(105, 104_999));
        assert!(Conclusion::of(&[&base], &[&near]).figures.is_empty(), "5 % is not a move");
        let from_zero = Conclusion::of(&[&passing(0, 1000)], &[&passing(1, 1000)]);
        assert_eq!(from_zero.text(), "pass 1 → 1 of 1; figures: successors +100 %");
        let fixed = Conclusion::of(&[&judged(false, &["liveness"])], &[&base]);
        assert!(!fixed.silent());
        assert!(!fixed.text().contains("figures"), "{}", fixed.text());
        let fixed_other_figures = Conclusion::of(&[&judged(false, &["liveness"])], &[&near]);
        assert_eq!(fixed.agreement(&fixed_other_figures), Agreement::Same, "figures are not compared when the verdicts speak");
    }

    #[test]
    fn a_conclusion_is_the_direction_of_each_count_not_the_counts() {
        let (ok, bad) = (judged(true, &[]), judged(false, &["owner-writes-only"]));
        let fixed = Conclusion::of(&[&bad, &bad, &ok], &[&ok, &ok, &ok]);
        assert_eq!(fixed.text(), "pass 1 → 3 of 3; fewer: owner-writes-only");
        let fixed_less = Conclusion::of(&[&bad, &ok, &ok], &[&ok, &ok, &ok]);
        assert!(fixed.same_as(&fixed_less), "the counts differ, the conclusion does not");
        let ok2 = other_run(&ok);
        let none = Conclusion::of(&[&ok, &ok, &ok], &[&ok2, &ok2, &ok2]);
        assert_eq!(none.text(), "pass 3 → 3 of 3; no difference");
        assert!(!none.same_as(&fixed));
        let broken = Conclusion::of(&[&ok], &[&bad]);
        assert_eq!((broken.pass, broken.more.len()), (std::cmp::Ordering::Less, 1));
    }

    #[test]
    fn a_finding_whose_rules_differ_but_move_the_same_way_holds_in_direction() {
        let (ok, zombie, stuck) =
            (judged(true, &[]), judged(false, &["owner-writes-only", "completed-once"]), judged(false, &["owner-writes-only", "liveness"]));
        let reference = Conclusion::of(&[&zombie], &[&ok]);
        assert_eq!(reference.agreement(&Conclusion::of(&[&zombie], &[&ok])), Agreement::Same);
        assert_eq!(reference.agreement(&Conclusion::of(&[&stuck], &[&ok])), Agreement::Direction);
        assert_eq!(reference.agreement(&Conclusion::of(&[&ok], &[&zombie])), Agreement::Differs, "the opposite way");
        assert_eq!(reference.agreement(&Conclusion::of(&[&ok], &[&ok])), Agreement::Differs, "no rule in common");
    }

    #[test]
    fn the_table_says_which_findings_hold_under_every_conductor() {
        let (ok, bad) = (judged(true, &[]), judged(false, &["liveness"]));
        let fixes = Conclusion::of(&[&bad], &[&ok]);
        let nothing = Conclusion::of(&[&ok], &[&other_run(&ok)]);
        let names = vec!["invented".to_string(), "attentive".to_string()];
        let rows = vec![
            ("1. `a`".to_string(), "`a.toml`".to_string(), vec![fixes.clone(), fixes.clone()]),
            ("2. `b`".to_string(), "`b.toml`".to_string(), vec![fixes, nothing]),
        ];
        let md = conclusions_table(&names, &rows, "finding");
        assert!(md.contains("| 1. `a` | `a.toml` | pass 0 → 1 of 1; fewer: liveness | pass 0 → 1 of 1; fewer: liveness | yes |"), "{md}");
        assert!(md.contains("| no: differs under attentive |"), "{md}");
        assert!(
            md.contains("Of 2 findings, 1 hold under every conductor profile named, 0 hold in direction only, 0 are not shown under some profile, and 1 depend on the conductor (2. `b`)."),
            "{md}"
        );
    }

    #[test]
    fn the_profiles_must_be_known_distinct_and_at_least_two() {
        let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(check_conductors(&names(&["invented", "strict"])).is_ok());
        for bad in [&["invented"][..], &["invented", "invented"], &["invented", "fast"]] {
            assert!(matches!(check_conductors(&names(bad)), Err(Error::Input(_))), "{bad:?}");
        }
    }

    #[test]
    fn a_section_is_replaced_where_it_is_or_appended() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("doc.md");
        std::fs::write(&path, "# Doc\n\n## A\n\na\n\n## Under every conductor profile\n\nold\n\n## B\n\nb\n").unwrap();
        splice(&path, FINDINGS_HEADING, "## Under every conductor profile\n\nnew\n\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "# Doc\n\n## A\n\na\n\n## Under every conductor profile\n\nnew\n\n## B\n\nb\n");
        std::fs::write(&path, "# Doc\n\n## A\n\na\n").unwrap();
        splice(&path, NECESSITY_HEADING, "## Necessity under every conductor profile\n\nnew\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "# Doc\n\n## A\n\na\n\n## Necessity under every conductor profile\n\nnew\n");
    }
}
