//! Protocol coverage (sim/judging/coverage/): a sweep counts every task-row transition by writer and
//! fault context, writes coverage.csv and a table in summary.md, and `--require-coverage`
//! fails it when a listed item was never reached; shards' coverage merges.

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::{rehearsal, root, shipped_scenarios, stderr, stdout, trace};

/// The shipped suite tests/coverage/required.txt names: every shipped scenario outside
/// scenarios/bench/ on its own seed, but the two that fail by design on it.
fn suite() -> Vec<String> {
    // Issue 44's fleet faults fail by design too (docs/protocol.md C70-C72): their shrunk
    // failures are the regression corpus.
    let by_design = [
        "scenarios/faults/zombie.toml",
        "scenarios/faults/watcher-jitter.toml",
        "scenarios/faults/ambiguous-commit.toml",
        "scenarios/faults/poll-error-swallowed.toml",
        "scenarios/faults/dead-heartbeat.toml",
    ];
    shipped_scenarios().into_iter().filter(|s| !s.starts_with("scenarios/bench/") && !by_design.contains(&s.as_str())).collect()
}

/// `rehearsal sweep SCENARIOS… EXTRA… --out OUT`: (exit code, stdout, stderr).
fn sweep(scenarios: &[String], extra: &[&str], out: &Path) -> (i32, String, String) {
    let mut args: Vec<&str> = vec!["sweep"];
    args.extend(scenarios.iter().map(String::as_str));
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--jobs", "2", "--out", out.to_str().unwrap()]);
    let o = rehearsal(&args);
    (o.status.code().unwrap(), stdout(&o), stderr(&o))
}

/// coverage.csv as item → count.
fn coverage(dir: &Path) -> BTreeMap<String, u64> {
    let text = std::fs::read_to_string(dir.join("coverage.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("item,count"));
    lines.map(|l| l.rsplit_once(',').unwrap()).map(|(item, n)| (item.to_string(), n.parse().unwrap())).collect()
}

const REQUIRED: &str = "tests/coverage/required.txt";

#[test]
fn the_shipped_suite_reaches_every_required_item_and_misses_one_without_transitions_toml() {
    let tmp = tempfile::tempdir().unwrap();
    let all = suite();
    let (code, out, err) = sweep(&all, &["--require-coverage", REQUIRED], &tmp.path().join("all"));
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains(&format!("coverage     every item of {REQUIRED} reached")), "{out}");
    let summary = std::fs::read_to_string(tmp.path().join("all/summary.md")).unwrap();
    assert!(summary.contains("## Protocol coverage") && summary.contains("| transition | any | after-crash | during-hang |"), "{summary}");
    assert!(summary.contains("Every transition of 002's table was reached."), "{summary}");
    assert!(summary.contains("59 of 59 required items reached."), "{summary}");
    let reached = coverage(&tmp.path().join("all"));
    assert!(reached["musician review_approved->complete"] >= 1, "completion-from-approved.toml's variant makes it");
    // scenarios/transitions.toml and review-odds.toml are the only ones whose session
    // re-submits straight from fix_proposed (and whose conductor proposes a fix for a review):
    // without them, both go, and review-odds' drawn answers with them. (The zombie of
    // faults/contradictory-resumption.toml also re-submits from the `fix_proposed` its hand-over
    // left, so it goes too, and so does faults/io-error-on-pause-poll.toml, whose seeds' session
    // writes an `error` over an approval and re-submits from the fix the conductor proposes, and
    // faults/answer-during-timeout.toml, whose seeds' session does the same after a TIMEOUT.)
    let dropped = [
        "scenarios/transitions.toml",
        "scenarios/review-odds.toml",
        "scenarios/faults/contradictory-resumption.toml",
        "scenarios/faults/io-error-on-pause-poll.toml",
        "scenarios/faults/answer-during-timeout.toml",
    ];
    let without: Vec<String> = all.iter().filter(|s| !dropped.contains(&s.as_str())).cloned().collect();
    let (code, out, _) = sweep(&without, &["--require-coverage", REQUIRED], &tmp.path().join("without"));
    assert_eq!(code, 1, "a required item never reached fails the sweep\n{out}");
    assert!(out.contains(&format!("coverage     5 item(s) of {REQUIRED} never reached")), "{out}");
    assert!(out.contains("never reached: note resumption_contradiction\n"), "{out}");
    assert!(
        out.contains(
            "never reached: musician fix_proposed->needs_review\nnever reached: conductor needs_review->fix_proposed\n\
             never reached: note review_rejected_by_odds\nnever reached: note review_fix_by_odds"
        ),
        "{out}"
    );
    // Passes with the violations their scenarios expect are counted apart, as known (issue 25).
    let count =
        |label: &str| out.lines().find_map(|l| l.strip_prefix(label)?.split_whitespace().next()?.parse::<usize>().ok()).unwrap_or(0);
    assert_eq!(
        (count("passed "), count("failed "), count("errors ")),
        (without.len() - count("known "), 0, 0),
        "every pair passed: the coverage alone fails it\n{out}"
    );
    let summary = std::fs::read_to_string(tmp.path().join("without/summary.md")).unwrap();
    assert!(summary.contains("Never reached (1 of 11): `fix_proposed → needs_review`."), "{summary}");
    assert!(summary.contains("- never reached: `musician fix_proposed->needs_review`"), "{summary}");
}

#[test]
fn shards_merge_their_coverage_into_the_whole_sweeps() {
    let tmp = tempfile::tempdir().unwrap();
    let scenarios: Vec<String> =
        ["scenarios/faults/crash-before-claim.toml", "scenarios/faults/contention.toml", "scenarios/examples/guard-block.toml"]
            .map(String::from)
            .to_vec();
    let seeds = ["--seeds", "1..=3"];
    let (code, out, _) = sweep(&scenarios, &seeds, &tmp.path().join("whole"));
    assert!(code <= 1, "{out}");
    for shard in ["1/2", "2/2"] {
        let dir = tmp.path().join(shard.replace('/', "-of-"));
        sweep(&scenarios, &[&seeds[..], &["--shard", shard]].concat(), &dir);
    }
    let required = tmp.path().join("required.txt");
    let shards = [tmp.path().join("1-of-2"), tmp.path().join("2-of-2")];
    let merge = |out: &str| {
        let out = tmp.path().join(out);
        let (a, b, r) = (shards[0].to_str().unwrap(), shards[1].to_str().unwrap(), required.to_str().unwrap());
        let o = rehearsal(&["merge", a, b, "--require-coverage", r, "--out", out.to_str().unwrap()]);
        (o.status.code().unwrap(), stdout(&o), out)
    };
    std::fs::write(&required, "musician watching->working after-crash\nmusician watching->working after-busy\nzero-rows claim_task\n")
        .unwrap();
    let (_, out, merged) = merge("merged");
    assert!(out.contains("every item of"), "{out}");
    let whole = std::fs::read(tmp.path().join("whole/coverage.csv")).unwrap();
    assert_eq!(std::fs::read(merged.join("coverage.csv")).unwrap(), whole, "merged shards = one sweep");
    assert_ne!(std::fs::read(shards[0].join("coverage.csv")).unwrap(), whole, "a shard alone has less");
    // A requirement neither shard reached fails the merge.
    std::fs::write(&required, "musician review_failed->exited\n").unwrap();
    let (code, out, _) = merge("merged-again");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("never reached: musician review_failed->exited"), "{out}");
}

#[test]
fn a_bad_required_file_is_bad_input_naming_its_line_before_any_pair_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let required = tmp.path().join("required.txt");
    std::fs::write(&required, "# fine\nmusician watching->working\nconductor needs_review->reviewd\n").unwrap();
    let out = tmp.path().join("out");
    let o = rehearsal(&[
        "sweep",
        "scenarios/quickstart.toml",
        "--require-coverage",
        required.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(&format!("{}:3: `reviewd` is no task state", required.display())), "{}", stderr(&o));
    assert!(!out.join("results.csv").exists(), "nothing ran");
    let o = rehearsal(&["sweep", "scenarios/quickstart.toml", "--require-coverage", "no/such/file.txt", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no/such/file.txt: cannot read the required coverage"), "{}", stderr(&o));
}

/// Every musician state change the trace shows (the row's state before a write is the last
/// state the trace left it in), by (from, to).
fn transitions_in_trace(dir: &Path) -> BTreeMap<String, u64> {
    let mut state = BTreeMap::new();
    let mut moves = BTreeMap::new();
    for row in trace(dir).into_iter().filter(|r| r.is_sql()) {
        let (Some(after), Some(task)) = (row.state_after, row.task_id()) else { continue };
        let before = state.insert(task.clone(), after);
        let writer = if row.actor.is_some_and(|a| a.is_conductor()) { "conductor" } else { "musician" };
        match before {
            Some(before) if before != after && task != "task-00" => *moves.entry(format!("{writer} {before}->{after}")).or_insert(0) += 1,
            _ => {}
        }
    }
    moves
}

#[test]
fn coverage_counts_every_transition_the_trace_shows_and_no_other() {
    for scenario in
        ["scenarios/transitions.toml", "scenarios/faults/crash-before-claim.toml", "scenarios/regression/zombie-owner-writes.toml"]
    {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path().join("run");
        let o = rehearsal(&["run", scenario, "--out", run.to_str().unwrap()]);
        assert!(o.status.code().unwrap() <= 1, "{}", stderr(&o));
        let (_, out, _) = sweep(&[scenario.to_string()], &[], &tmp.path().join("sweep"));
        let counted: BTreeMap<String, u64> = coverage(&tmp.path().join("sweep"))
            .into_iter()
            .filter(|(item, n)| *n > 0 && item.split(' ').count() == 2 && !item.starts_with("zero-rows") && !item.starts_with("note "))
            .collect();
        assert_eq!(counted, transitions_in_trace(&run), "{scenario}: coverage (any context) against the trace\n{out}");
    }
    assert!(root().join(REQUIRED).exists());
}
