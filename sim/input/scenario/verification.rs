//! `[verification]`: what a checkpoint verification finds (000 "Reference: Checkpoint
//! Verification Checklist"): failing tests, flaky ones, a coverage gap, code to clean up;
//! by odds or scripted per task and step. Every default is "all passing" and draws nothing, so
//! a scenario without this section runs as before (docs/protocol.md C31).

use serde::Deserialize;

use super::deserialize::{positive_u32, probability};
use crate::base::dist::Dist;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VerificationSection {
    /// Odds that a test fails on every run: a consistent failure (000 "Flaky Test Handling" 3).
    #[serde(deserialize_with = "probability")]
    pub test_failure_probability: f64,
    /// Odds that a flaky test fails the first run; its re-runs pass by
    /// `flaky_rerun_pass_probability` each (000 "Flaky Test Handling").
    #[serde(deserialize_with = "probability")]
    pub flaky_test_probability: f64,
    #[serde(deserialize_with = "probability")]
    pub flaky_rerun_pass_probability: f64,
    /// Of the consistent failures, the odds that the root cause stays unclear: an error report
    /// (000 "Test Failure Analysis Decision Tree" Step 5); the others are implementation bugs
    /// the musician fixes (Step 3).
    #[serde(deserialize_with = "probability")]
    pub unclear_cause_probability: f64,
    /// Odds that the self code review finds debug code to clean up (000 Verification
    /// Protocol 4; the matrix's "Clean up, then report").
    #[serde(deserialize_with = "probability")]
    pub unclean_probability: f64,
    /// Coverage on modified code per verification, in percent; not modelled when absent
    /// (000 "Coverage Targets": 80 % minimum, 90 % target).
    pub coverage_pct: Option<Dist>,
    /// Tests the task has before its first agent; test counts are reported only when set
    /// (000 "Review Request": "Tests: All passing (14 tests, 2 new)").
    pub tests_at_start: Option<u64>,
    /// Tests each integrated agent (and each rework or coverage improvement) adds.
    pub new_tests_per_agent: Dist,
    /// Scripted findings that replace the odds at one checkpoint of one task.
    pub script: Vec<VerificationScript>,
}

impl Default for VerificationSection {
    fn default() -> VerificationSection {
        VerificationSection {
            test_failure_probability: 0.0,
            flaky_test_probability: 0.0,
            flaky_rerun_pass_probability: 0.5,
            unclear_cause_probability: 0.0,
            unclean_probability: 0.0,
            coverage_pct: None,
            tests_at_start: None,
            new_tests_per_agent: Dist::Const(1),
            script: Vec::new(),
        }
    }
}

/// What the first verification at one checkpoint of one session finds, whatever the odds say.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerificationScript {
    pub task: u64,
    /// The checkpoint's step (the plan's last step for the completion review).
    pub step: u64,
    #[serde(default = "one_u32", deserialize_with = "positive_u32")]
    pub session: u32,
    pub finding: Finding,
}

fn one_u32() -> u32 {
    1
}

/// The findings of 000's checklist that change what the musician does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Finding {
    /// A test fails once and passes all 3 re-runs: flaky, marked, proceed.
    Flaky,
    /// A test fails once and passes 2 of 3 re-runs: definitively flaky, escalate.
    Inconsistent,
    /// A test fails every run, the implementation is wrong: fix it (a self-correction).
    Implementation,
    /// A test fails every run, the test itself is broken: fix the test (a self-correction).
    TestBug,
    /// A test fails every run and the root cause is unclear: an error report.
    Unclear,
    /// The self code review finds debug code: clean up, then report.
    Unclean,
    /// Coverage below the 80 % minimum: improve it first, then report.
    CoverageLow,
}
