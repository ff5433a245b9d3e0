//! `rehearsal compare`: the table tells a variant that changes what the protocol writes from
//! one that only changes the oracle's reading, and counts violations, not only runs.

use crate::support::{rehearsal, scenario, stdout};

/// The table row of `variant` in `compare`'s output, split into its cells.
fn row(table: &str, variant: &str) -> Vec<String> {
    let line = table.lines().find(|l| l.starts_with(&format!("| {variant} |"))).unwrap_or_else(|| panic!("no row {variant} in\n{table}"));
    line.trim_matches('|').split('|').map(|c| c.trim().to_string()).collect()
}

fn compare(scenario_name: &str, variant: &str, seeds: &str) -> String {
    let out = tempfile::tempdir().unwrap();
    let path = scenario(scenario_name);
    let variants = format!("default,{variant}");
    let o =
        rehearsal(&["compare", path.to_str().unwrap(), "--variants", &variants, "--seeds", seeds, "--out", out.path().to_str().unwrap()]);
    // 1 when a run failed (issue 44): the table is written either way.
    let failed = stdout(&o).lines().filter(|l| l.starts_with("| ") && !l.starts_with("| variant") && !l.starts_with("| ---")).any(|l| {
        let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
        cells[4] != "0"
    });
    assert_eq!(o.status.code(), Some(i32::from(failed)), "{}\n{}", stdout(&o), String::from_utf8_lossy(&o.stderr));
    stdout(&o)
}

#[test]
fn a_variant_that_only_changes_worked_by_changes_every_database_and_nothing_else() {
    let table = compare("examples/bootstrap.toml", "worked-by-session-id", "1..=2");
    let (default, variant) = (row(&table, "default"), row(&table, "worked-by-session-id"));
    assert_eq!(default[6], "0", "the first variant is the baseline:\n{table}");
    assert_eq!(variant[6], "2", "worked_by differs in both databases:\n{table}");
    assert_eq!(default[5], variant[5], "no rule sees worked_by:\n{table}");
}

#[test]
fn an_oracle_only_variant_leaves_the_database_and_shows_in_the_violation_count() {
    // slow-review's pause-watcher TIMEOUT writes `needs_review → error`, which only the text
    // of 000 implies (docs/protocol.md D10); the default run breaks no transition rule (the
    // conductor withholds its late answer to an exited task, C37).
    let table = compare("slow-review.toml", "table-transitions-only", "1");
    let (default, variant) = (row(&table, "default"), row(&table, "table-transitions-only"));
    assert_eq!(variant[6], "0", "the oracle's reading does not change the run:\n{table}");
    assert!(!default[5].contains("allowed-transitions"), "{table}");
    assert!(variant[5].contains("allowed-transitions ×1 (5)"), "{table}");
}

/// compare.csv has a row per run, the same with one job or two; run folders (191 MB for 300
/// runs of random-faults) are written only with --keep-runs.
#[test]
fn compare_writes_a_row_per_run_the_same_for_any_jobs_and_keeps_run_folders_only_on_request() {
    let tmp = tempfile::tempdir().unwrap();
    let path = scenario("faults/zombie.toml");
    let run = |jobs: &str, keep: bool, name: &str| {
        let out = tmp.path().join(name);
        let mut args = vec!["compare", path.to_str().unwrap(), "--variants", "default,fencing", "--seeds", "1..=3", "--jobs", jobs];
        if keep {
            args.push("--keep-runs");
        }
        args.extend(["--out", out.to_str().unwrap()]);
        let o = rehearsal(&args);
        assert_eq!(o.status.code(), Some(1), "seed 1 of default fails: exit 1 (issue 44)\n{}", String::from_utf8_lossy(&o.stderr));
        (out, stdout(&o))
    };
    let (one, table_one) = run("1", false, "one");
    let (two, table_two) = run("2", true, "two");
    assert_eq!(table_one.replace(one.to_str().unwrap(), ""), table_two.replace(two.to_str().unwrap(), ""));
    let csv = std::fs::read_to_string(one.join("compare.csv")).unwrap();
    assert_eq!(csv, std::fs::read_to_string(two.join("compare.csv")).unwrap(), "--jobs changes nothing");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 7, "header + 2 columns × 3 seeds:\n{csv}");
    assert!(lines[0].starts_with("column,seed,verdict,failure,rules,violations,db_differs,"), "{csv}");
    assert!(lines[1].starts_with("default,1,fail,owner-writes-only,"), "{csv}");
    assert!(lines[4].starts_with("fencing,1,pass,,,0,true,"), "fencing changes what the protocol writes:\n{csv}");
    let folders = |dir: &std::path::Path| std::fs::read_dir(dir).unwrap().filter(|e| e.as_ref().unwrap().path().is_dir()).count();
    assert_eq!(folders(&one), 0, "no run folder without --keep-runs");
    assert_eq!(folders(&two), 6);
    assert!(two.join("fencing-3/comms.db").exists());
}

/// Issue 44: a profile is a column beside variants, every column says what was in force, and
/// compare exits 1 when a run failed, 0 when every run passed.
#[test]
fn a_profile_is_a_column_every_column_says_what_was_in_force_and_a_failure_exits_1() {
    let tmp = tempfile::tempdir().unwrap();
    let path = scenario("faults/zombie.toml");
    let run = |variants: &str, protocol: Option<&str>, name: &str| {
        let out = tmp.path().join(name);
        let mut args = vec!["compare", path.to_str().unwrap(), "--variants", variants, "--seeds", "1", "--out", out.to_str().unwrap()];
        if let Some(protocol) = protocol {
            args.extend(["--protocol", protocol]);
        }
        let o = rehearsal(&args);
        (o.status.code(), stdout(&o))
    };
    let (code, table) = run("default,repaired,fencing", None, "side");
    assert_eq!(code, Some(1), "default fails seed 1:\n{table}");
    let last = |variant: &str| row(&table, variant).last().unwrap().clone();
    assert_eq!(last("default"), "profile seeds");
    assert_eq!(last("repaired"), "profile repaired");
    assert_eq!(last("fencing"), "profile seeds + variant fencing");
    assert_eq!(row(&table, "repaired")[4], "0", "the repaired profile passes:\n{table}");
    let (code, table) = run("default", Some("repaired"), "under");
    assert_eq!(code, Some(0), "every run passed:\n{table}");
    assert_eq!(row(&table, "default").last().unwrap(), "profile repaired", "a default column under --protocol says so");
}
