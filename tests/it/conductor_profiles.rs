//! Conductor profiles (docs/protocol.md C110-C115, issue 42 item 6): a profile changes the run
//! as it declares (poll interval, reviews beside the poll, review time, reply odds), the
//! default is the run as it always was byte for byte, a scenario's own `[conductor]` keys win
//! over the profile the file names and `--conductor` replaces them,
//! the run's header, budgets and trace name the profile, and `findings --conductors` computes
//! its tables from runs.

use std::path::Path;

use rehearsal::campaign::conductor_findings::{self, Agreement};
use rehearsal::input::scenario::Scenario;
use rehearsal::run::{run_scenario, RunOptions, RunSummary};
use rehearsal::vocab::{ActorName, Stmt, TaskState};

use crate::support::{rehearsal, root, stderr, stdout, trace, two_step_scenario};

/// Six tasks of two steps, written to `dir`; run under `conductor` (None: no `--conductor`).
fn run_six(dir: &Path, conductor_keys: &str, conductor: Option<&str>) -> RunSummary {
    let path = dir.join("six.toml");
    std::fs::write(&path, two_step_scenario(3, 6, conductor_keys, "")).unwrap();
    let out = dir.join(format!("out-{}", conductor.unwrap_or("none")));
    let scenario = Scenario::load(&path).unwrap().with_conductor(conductor).unwrap();
    let options = RunOptions { scenario_path: path, seed: None, out_dir: Some(out), variants: Vec::new() };
    run_scenario(scenario, &options).unwrap()
}

/// The gaps between the conductor's successive `poll_tasks`, in ms.
fn poll_gaps_ms(summary: &RunSummary) -> Vec<i64> {
    let polls: Vec<i64> = trace(&summary.out_dir)
        .iter()
        .filter(|r| matches!(r.actor, Some(ActorName::Conductor(_))) && r.stmt == Some(Stmt::PollTasks))
        .map(|r| r.t_ms)
        .collect();
    polls.windows(2).map(|w| w[1] - w[0]).collect()
}

/// Review actors (`conductor.review-N`) that wrote to the trace, and answers that sent a
/// review back (`review_failed`) or proposed a fix after a review.
fn reviews_beside_and_rejections(summary: &RunSummary) -> (usize, usize) {
    let rows = trace(&summary.out_dir);
    let beside = rows.iter().filter(|r| matches!(r.actor, Some(ActorName::Review(..)))).count();
    let rejected = rows
        .iter()
        .filter(|r| r.actor.as_ref().is_some_and(|a| a.is_conductor()) && r.state_after == Some(TaskState::ReviewFailed))
        .count();
    (beside, rejected)
}

#[test]
fn each_profile_changes_the_run_as_it_declares_and_the_default_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let plain = run_six(tmp.path(), "", None);
    let invented = run_six(tmp.path(), "", Some("invented"));
    assert_eq!(plain.trace_hash, invented.trace_hash, "`invented` is the run without a profile, byte for byte");
    assert!(poll_gaps_ms(&invented).iter().all(|g| *g >= 30_000), "the invented conductor polls every 30 s or later");
    assert_eq!(reviews_beside_and_rejections(&invented), (0, 0), "reviews in its own poll, all approved");

    let attentive = run_six(tmp.path(), "", Some("attentive"));
    let gaps = poll_gaps_ms(&attentive);
    assert!(gaps.iter().all(|g| *g >= 10_000) && gaps.iter().any(|g| *g < 30_000), "a poll every 10 s: {gaps:?}");
    assert!(reviews_beside_and_rejections(&attentive).0 > 0, "its reviews run beside the poll (C3)");
    assert_eq!(attentive.resolved.conductor.review_ms.upper(), 120_000);

    let slow = run_six(tmp.path(), "", Some("slow-serial"));
    assert!(poll_gaps_ms(&slow).iter().all(|g| *g >= 60_000), "a poll every 60 s or later");
    assert_eq!(reviews_beside_and_rejections(&slow).0, 0, "serial reviews");

    let strict = run_six(tmp.path(), "", Some("strict"));
    assert!(reviews_beside_and_rejections(&strict).1 > 0, "one review in five sent back: none in this run");

    // The header says whose policy the numbers are; the budgets derived from it say so too.
    assert!(attentive.render().contains("conductor    attentive (polls during reviews, 4 at once, 10 s poll, reviews 30-120 s)\n"));
    assert!(plain.render().contains("conductor    invented (serial reviews, 30 s poll, reviews 60-300 s)\n"));
    for (summary, name) in [(&plain, "invented"), (&attentive, "attentive")] {
        let crash = summary.budgets.iter().find(|b| b.name == "crash_detect_ms").unwrap();
        assert!(crash.derivation_note().contains(&format!("derived from conductor profile {name}: ")), "{crash:?}");
        let heartbeat = summary.budgets.iter().find(|b| b.name == "heartbeat_age_s").unwrap();
        assert_eq!(heartbeat.derivation_note(), "", "the heartbeat age budget is the seeds' threshold, not the conductor's");
    }
    let limit = |s: &RunSummary| s.budgets.iter().find(|b| b.name == "crash_detect_ms").unwrap().limit;
    let (serial_budget, attentive_budget) = (limit(&plain), limit(&attentive));
    assert!(attentive_budget < serial_budget, "no review queue in the attentive conductor's cycle");
}

#[test]
fn a_scenarios_own_conductor_keys_win_over_its_profile() {
    let tmp = tempfile::tempdir().unwrap();
    let own = run_six(tmp.path(), "profile = \"attentive\"\npoll_ms = 20000", None);
    assert_eq!(own.resolved.conductor_profile, "attentive");
    let gaps = poll_gaps_ms(&own);
    assert!(gaps.iter().all(|g| *g >= 20_000) && gaps.iter().any(|g| *g < 30_000), "the file's 20 s poll: {gaps:?}");
    assert!(own.resolved.conductor.poll_during_reviews, "the rest is the profile's");
    // `--conductor` replaces the conductor's policy whole, the file's keys included.
    let replaced = run_six(tmp.path(), "poll_ms = 20000\nreview_ms = 120000", Some("slow-serial"));
    assert!(poll_gaps_ms(&replaced).iter().all(|g| *g >= 60_000), "the profile's 60 s poll over the file's 20 s");
    assert_eq!(replaced.resolved.conductor.review_ms.upper(), 600_000);
}

#[test]
fn the_command_line_names_the_profile_and_judge_reads_it_back() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let o = rehearsal(&["run", "scenarios/quickstart.toml", "--conductor", "slow-serial", "--out", out.to_str().unwrap()]);
    let code = o.status.code().unwrap();
    assert!(code == 0 || code == 1, "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("conductor    slow-serial (serial reviews, 60 s poll, reviews 180-600 s)"), "{text}");
    assert!(text.contains("--conductor slow-serial"), "the replay names it: {text}");
    let first = std::fs::read_to_string(out.join("trace.csv")).unwrap();
    assert!(first.lines().nth(1).unwrap().contains("conductor=slow-serial"), "the trace's run_start names it");
    let judged = rehearsal(&["judge", out.to_str().unwrap()]);
    assert_eq!(judged.status.code(), Some(code), "judged again under the same conductor: {}", stderr(&judged));
    let bad = rehearsal(&["run", "scenarios/quickstart.toml", "--conductor", "fast", "--out", tmp.path().join("bad").to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("unknown conductor profile `fast`"), "{}", stderr(&bad));
}

/// The findings table is measured: a finding whose demo the attentive conductor changes is
/// said to depend on it, one it leaves alone is said to hold, and each cell's counts are those
/// of the runs themselves.
#[test]
fn findings_under_conductors_are_computed_from_their_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let names = vec!["invented".to_string(), "attentive".to_string()];
    let slow_review = root().join("scenarios/slow-review.toml");
    let state_first = root().join("scenarios/faults/crash-between-state-and-message.toml");
    let quickstart = root().join("scenarios/quickstart.toml");
    let demos = [
        ("state-first", state_first.to_str().unwrap()),
        ("instruction-any-type", quickstart.to_str().unwrap()),
        ("silent-reviews", slow_review.to_str().unwrap()),
    ];
    let rows = conductor_findings::findings_rows(&demos, &names, &[1], 2, tmp.path()).unwrap();
    assert_eq!(rows.len(), 3);
    // Each cell's pass counts are the runs' own verdicts (rows in VARIANTS' order, as demos).
    for ((variant, path), (_, _, conclusions)) in demos.iter().zip(&rows) {
        for (name, conclusion) in names.iter().zip(conclusions) {
            let passes = |variants: &[&str]| {
                let scenario = Scenario::load(Path::new(path)).unwrap().with_conductor(Some(name)).unwrap();
                let out = tmp.path().join(format!("check-{name}-{}", variants.len()));
                let options = RunOptions {
                    scenario_path: Path::new(path).to_path_buf(),
                    seed: Some(1),
                    out_dir: Some(out),
                    variants: variants.iter().map(|v| v.to_string()).collect(),
                };
                usize::from(run_scenario(scenario, &options).unwrap().verdict.passed())
            };
            assert_eq!(conclusion.counts, (passes(&[]), passes(&[variant]), 1), "{variant} under {name}");
        }
    }
    let (state_first_row, instruction_row, silent_row) = (&rows[0].2, &rows[1].2, &rows[2].2);
    assert_eq!(state_first_row[0].agreement(&state_first_row[1]), Agreement::Same, "message-before-state does not depend on the conductor");
    assert!(state_first_row.iter().all(|c| c.shown()), "the variant breaks a rule the default does not");
    // The simulated conductor sends each task's instruction first (C1): the variant changes no
    // byte of quickstart's run, under either conductor (issue 42's cold review, P1).
    for cell in instruction_row {
        assert_eq!(cell.not_shown, Some(conductor_findings::NotShown { identical: 1, default_failing: 0 }), "{}", cell.text());
    }
    let table = conductor_findings::conclusions_table(&names, &rows, "finding");
    assert!(table.contains("| 4. `instruction-any-type` | "), "{table}");
    assert!(table.contains("| no: not shown under invented, attentive |"), "{table}");
    let expected = if !silent_row[0].shown() || !silent_row[1].shown() {
        "no: not shown under"
    } else if silent_row[0].agreement(&silent_row[1]) == Agreement::Differs {
        "no: differs under attentive"
    } else {
        "| yes |"
    };
    assert!(table.lines().any(|l| l.contains("`silent-reviews`") && l.contains(expected)), "{table}");
}

/// The necessity table runs each change's necessity scenario without the change and with the
/// whole profile: fencing's necessity seed shows it under the invented conductor.
#[test]
fn necessity_under_conductors_is_computed_from_its_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let names = vec!["invented".to_string(), "strict".to_string()];
    // CHANGES names scenarios from the project root, where cargo runs the tests.
    let section = conductor_findings::necessity_section(&names, &[], 2, tmp.path(), Some(&["fencing"])).unwrap();
    let row = section.lines().find(|l| l.starts_with("| `fencing` removed |")).unwrap_or_else(|| panic!("{section}"));
    // The same runs by hand: ci-smoke seed 5 under the profile without fencing, and whole.
    let by_hand = |name: &str, protocol: Vec<String>| {
        let out = tmp.path().join(name);
        let mut args: Vec<String> =
            ["run", "scenarios/proof/proof-ci-smoke.toml", "--seed", "5", "--out", out.to_str().unwrap()].map(str::to_string).to_vec();
        args.extend(protocol);
        stdout(&rehearsal(&args.iter().map(String::as_str).collect::<Vec<_>>()))
    };
    let without = by_hand("without", crate::support::repaired_without("fencing"));
    let whole = by_hand("whole", vec!["--protocol".to_string(), "repaired".to_string()]);
    let shown = summary_has_rule(&without, "owner-writes-only") && !summary_has_rule(&whole, "owner-writes-only");
    let invented_cell = row.split(" | ").nth(2).unwrap();
    assert_eq!(invented_cell.starts_with("1 of 1 (seeds 5: ") && invented_cell.contains("owner-writes-only"), shown, "{row}");
    assert!(row.ends_with(if shown && row.split(" | ").nth(3).unwrap().starts_with("1 of 1") { "| yes |" } else { "|" }), "{row}");
}

fn summary_has_rule(stdout: &str, rule: &str) -> bool {
    stdout.lines().any(|l| l.starts_with("violations") && l.contains(rule))
}
