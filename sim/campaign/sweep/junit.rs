//! junit.xml of a sweep: one test case a pair, in results.csv's order.

use std::path::Path;

use super::results::ResultRow;
use crate::base::atomic::write_atomically;
use crate::base::error::{Error, Result};
use crate::vocab::RunOutcome;

/// JUnit XML (quick-junit): one test case per pair with its wall-clock time (`walls[i]` of
/// `rows[i]`, 0 for a pair without one); a failure's text holds its replay command.
pub fn write_junit(
    path: &Path,
    rows: &[ResultRow],
    walls: &[std::time::Duration],
    baseline: Option<&crate::campaign::baseline::Comparison>,
) -> Result<()> {
    use crate::campaign::baseline::Judgement;
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut suite = TestSuite::new("rehearsal sweep");
    for (index, row) in rows.iter().enumerate() {
        let judgement = baseline.and_then(|b| b.of(index));
        let status = match (row.verdict, judgement) {
            (RunOutcome::Pass, _) => TestCaseStatus::success(),
            (_, Some(Judgement::Known { .. })) => {
                let mut status = TestCaseStatus::skipped();
                status.set_message(format!("known failure (baseline): {}", row.rules)).set_description(format!(
                    "seed {} fails as the baseline says: {}\nreproduce with: {}",
                    row.seed, row.first_violation, row.replay
                ));
                status
            }
            (kind, _) => {
                let mut status =
                    TestCaseStatus::non_success(if kind == RunOutcome::Fail { NonSuccessKind::Failure } else { NonSuccessKind::Error });
                let seconds = row.sim_time_ms as f64 / 1000.0;
                let message = match judgement {
                    Some(Judgement::Regression(why)) => format!("regression: {why}"),
                    _ => row.first_violation.clone(),
                };
                status.set_message(message).set_description(format!(
                    "seed {} failed after {seconds} simulated seconds: {}\nreproduce with: {}",
                    row.seed, row.first_violation, row.replay
                ));
                status
            }
        };
        let mut case = TestCase::new(case_name(row), status);
        case.set_classname(row.scenario.as_str());
        case.set_time(walls.get(index).copied().unwrap_or_default());
        if row.verdict == RunOutcome::Pass && !row.rules.is_empty() {
            // A pass with violations its scenario allows or expects says so (issue 25).
            case.set_system_out(format!("PASS with known: {}", row.rules));
        }
        suite.add_test_case(case);
    }
    let mut report = Report::new("rehearsal");
    report.add_test_suite(suite);
    let xml = report.to_string().map_err(|e| Error::harness(format!("{}: {e}", path.display())))?;
    write_atomically(path, xml.as_bytes())
}

/// A pair's JUnit test case name.
fn case_name(row: &ResultRow) -> String {
    format!("{}/{}/seed-{}", row.scenario, row.variant, row.seed)
}
