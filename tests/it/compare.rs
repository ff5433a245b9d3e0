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
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
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
