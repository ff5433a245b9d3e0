//! junit.xml of a sweep: one test case a pair, in results.csv's order.

use std::path::Path;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use super::results::ResultRow;
use super::spool::Rows;
use crate::base::atomic::write_atomically_with;
use crate::base::error::{Error, Result};
use crate::vocab::RunOutcome;

/// JUnit XML (quick-junit): one test case per pair with its wall-clock time; a failure's
/// text holds its replay command. Written as the rows are read (`rows`, twice: the counts go
/// first), so a sweep of 10^6 pairs never holds its report whole (issue 41): each batch of
/// cases is quick-junit's own text of them, between the head and tail of a report that has
/// the sweep's counts, byte for byte the report made whole.
pub fn write_junit(path: &Path, rows: &Rows, baseline: Option<&crate::campaign::baseline::Comparison>) -> Result<()> {
    let xml_error = |e: &dyn std::fmt::Display| Error::harness(format!("{}: {e}", path.display()));
    let mut counts = TestSuite::new(SUITE);
    rows.each(|index, row, wall| {
        counts.add_test_case(test_case(index, &row, wall, baseline));
        counts.test_cases.clear();
        Ok(())
    })?;
    if counts.tests == 0 {
        // No case: quick-junit closes the empty suite in its opening tag.
        let mut report = Report::new("rehearsal");
        report.add_test_suite(counts);
        let text = report.to_string().map_err(|e| xml_error(&e))?;
        return write_atomically_with(path, |file| file.write_all(text.as_bytes()).map_err(|e| xml_error(&e)));
    }
    // A report of one placeholder case with the sweep's counts: its text around that case is
    // the whole report's head and tail.
    let placeholder = TestCase::new("placeholder", TestCaseStatus::success());
    let placeholder_text = cases_text(vec![placeholder.clone()]).map_err(|e| xml_error(&e))?;
    let mut suite = TestSuite::new(SUITE);
    suite.test_cases.push(placeholder);
    (suite.tests, suite.failures, suite.errors, suite.skipped) = (counts.tests, counts.failures, counts.errors, counts.skipped);
    let mut report = Report::new("rehearsal");
    report.add_test_suite(suite);
    let text = report.to_string().map_err(|e| xml_error(&e))?;
    let (head, tail) = text.split_once(&placeholder_text).ok_or_else(|| xml_error(&"the report's text around its cases"))?;
    write_atomically_with(path, |file| {
        let io = |e: std::io::Error| xml_error(&e);
        file.write_all(head.as_bytes()).map_err(io)?;
        let mut batch = Vec::with_capacity(BATCH);
        let flush = |batch: &mut Vec<TestCase>, file: &mut dyn std::io::Write| -> Result<()> {
            if !batch.is_empty() {
                file.write_all(cases_text(std::mem::take(batch)).map_err(|e| xml_error(&e))?.as_bytes()).map_err(io)?;
            }
            Ok(())
        };
        rows.each(|index, row, wall| {
            batch.push(test_case(index, &row, wall, baseline));
            if batch.len() == BATCH {
                flush(&mut batch, file)?;
            }
            Ok(())
        })?;
        flush(&mut batch, file)?;
        file.write_all(tail.as_bytes()).map_err(io)
    })
}

const SUITE: &str = "rehearsal sweep";

/// Test cases made into text at a time.
const BATCH: usize = 256;

/// quick-junit's text of some test cases, as they stand in a report: the lines between their
/// suite's opening and closing tags (no case holds a `<`: quick-junit escapes their text).
fn cases_text(cases: Vec<TestCase>) -> std::result::Result<String, String> {
    let mut suite = TestSuite::new(SUITE);
    suite.add_test_cases(cases);
    let mut report = Report::new("rehearsal");
    report.add_test_suite(suite);
    let text = report.to_string().map_err(|e| e.to_string())?;
    let opened = text.find("<testsuite ").and_then(|at| text[at..].find('\n').map(|end| at + end + 1));
    let closed = text.rfind("</testsuite>").and_then(|at| text[..at].rfind('\n').map(|end| end + 1));
    match (opened, closed) {
        (Some(from), Some(to)) if from <= to => Ok(text[from..to].to_string()),
        _ => Err(format!("unexpected report text: {text}")),
    }
}

/// One pair's test case: `index` is its row's place in results.csv.
fn test_case(
    index: usize,
    row: &ResultRow,
    wall: std::time::Duration,
    baseline: Option<&crate::campaign::baseline::Comparison>,
) -> TestCase {
    use crate::campaign::baseline::Judgement;
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
    case.set_time(wall);
    if row.verdict == RunOutcome::Pass && !row.rules.is_empty() {
        // A pass with violations its scenario allows or expects says so (issue 25).
        case.set_system_out(format!("PASS with known: {}", row.rules));
    }
    case
}

/// A pair's JUnit test case name.
fn case_name(row: &ResultRow) -> String {
    format!("{}/{}/seed-{}", row.scenario, row.variant, row.seed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::sweep::spool::Spool;

    fn row(seed: u64) -> ResultRow {
        let verdict = [RunOutcome::Pass, RunOutcome::Fail, RunOutcome::Error][(seed % 3) as usize];
        ResultRow {
            scenario: "scenarios/a & <b>.toml".into(),
            variant: "default".into(),
            seed,
            verdict,
            first_violation: if verdict == RunOutcome::Pass { String::new() } else { "budget: \"late\" <x>\nline".into() },
            rules: crate::campaign::sweep::results::Rules::of(if seed.is_multiple_of(4) { vec!["liveness"] } else { vec![] }),
            sim_time_ms: seed as i64 * 1001,
            statements: seed,
            trace_hash: "ab".into(),
            replay: format!("rehearsal run x --seed {seed}"),
            sql: String::new(),
            collapsed: String::new(),
            faults_armed: String::new(),
            faults_fired: String::new(),
            faults_unreached: String::new(),
        }
    }

    /// junit.xml streamed a batch of cases at a time is, byte for byte, quick-junit's report
    /// made whole of the same cases: for no pair, one, and more than a batch.
    #[test]
    fn the_streamed_report_is_the_whole_report() {
        let dir = tempfile::tempdir().unwrap();
        for count in [0_u64, 1, BATCH as u64 + 45] {
            let mut spool = Spool::new(dir.path()).unwrap();
            let rows: Vec<ResultRow> = (1..=count).map(row).collect();
            let walls: Vec<std::time::Duration> = (1..=count).map(|i| std::time::Duration::from_micros(i * 1_234_567)).collect();
            for (row, wall) in rows.iter().zip(&walls) {
                spool.push(row, *wall).unwrap();
            }
            let path = dir.path().join("junit.xml");
            write_junit(&path, &spool.seal().unwrap(), None).unwrap();
            let mut suite = TestSuite::new(SUITE);
            for (index, (row, wall)) in rows.iter().zip(&walls).enumerate() {
                suite.add_test_case(test_case(index, row, *wall, None));
            }
            let mut report = Report::new("rehearsal");
            report.add_test_suite(suite);
            assert_eq!(std::fs::read_to_string(&path).unwrap(), report.to_string().unwrap(), "{count} pairs");
        }
    }
}
