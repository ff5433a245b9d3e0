//! Issue 44: every fault proves it fired. A scripted fault whose point is never reached (a
//! misspelt point: task 1's S1 runs `claim_task` once, so `nth = 9` is never reached) warns
//! on `run` and fails `sweep --require-faults-fired` (exit 1), naming it; declared odds of 0
//! fail the flag naming the kind; results.csv and summary.md carry the counts. The same
//! scenario with the point reached passes the flag.

use std::path::Path;

use crate::support::{rehearsal, stderr, stdout};

fn scenario(dir: &Path, name: &str, faults: &str) -> String {
    let text = format!(
        "description = \"a fault that must fire\"\n[run]\nseed = 3\nsim_time_max_ms = 21_600_000\n[tasks]\ncount = 2\nsteps = 2\nsubagents_per_step = 1\ncheckpoints = []\n{faults}"
    );
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn sweep(scenario: &str, out: &Path, flag: bool) -> std::process::Output {
    let out = out.display().to_string();
    let mut args = vec!["sweep", scenario, "--seeds", "1..=2", "--quiet", "--out", &out];
    if flag {
        args.push("--require-faults-fired");
    }
    rehearsal(&args)
}

#[test]
fn a_scripted_fault_never_reached_warns_on_run_and_fails_the_flag_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let misspelt = scenario(dir.path(), "misspelt.toml", "[[faults.crash]]\ntask = 1\nat = \"before:claim_task\"\nnth = 9\n");
    let run_out = dir.path().join("run").display().to_string();
    let run = rehearsal(&["run", &misspelt, "--out", &run_out]);
    assert_eq!(run.status.code(), Some(0), "a warning, not a failure: {}", stderr(&run));
    assert!(stderr(&run).contains("warning: scripted fault crash[1]") && stderr(&run).contains("never struck"), "{}", stderr(&run));
    assert!(stdout(&run).contains("faults       crash: armed 1, fired 0"), "{}", stdout(&run));

    let plain = sweep(&misspelt, &dir.path().join("plain"), false);
    assert_eq!(plain.status.code(), Some(0), "without the flag the suite passes green: {}", stdout(&plain));
    let strict = sweep(&misspelt, &dir.path().join("strict"), true);
    assert_eq!(strict.status.code(), Some(1), "{}\n{}", stdout(&strict), stderr(&strict));
    let said = stdout(&strict);
    assert!(said.contains("declared fault kind `crash` never fired in its 2 pair(s)"), "{said}");
    assert!(said.contains("scripted fault crash[1] never struck"), "{said}");
    let csv = std::fs::read_to_string(dir.path().join("strict/results.csv")).unwrap();
    assert!(csv.lines().next().unwrap().ends_with(",faults_armed,faults_fired,faults_unreached"), "{csv}");
    assert!(csv.contains(",crash=1,crash=0,crash[1]"), "{csv}");
    let summary = std::fs::read_to_string(dir.path().join("strict/summary.md")).unwrap();
    assert!(summary.contains("| crash | 1 | 0 | 0 of 1 |") || summary.contains("| crash | 2 | 0 | 0 of 2 |"), "{summary}");

    // Near miss: the point its session reaches (nth 1) fires in every pair.
    let reached = scenario(dir.path(), "reached.toml", "[[faults.crash]]\ntask = 1\nat = \"before:claim_task\"\n");
    let ok = sweep(&reached, &dir.path().join("reached"), true);
    assert_eq!(ok.status.code(), Some(0), "{}\n{}", stdout(&ok), stderr(&ok));
    assert!(!stdout(&ok).contains("never fired"), "{}", stdout(&ok));
}

#[test]
fn declared_odds_of_zero_fail_the_flag_naming_the_kind() {
    let dir = tempfile::tempdir().unwrap();
    let zero = scenario(dir.path(), "zero.toml", "[faults]\nhang_probability = 0.0\n");
    let strict = sweep(&zero, &dir.path().join("strict"), true);
    assert_eq!(strict.status.code(), Some(1), "{}", stdout(&strict));
    assert!(stdout(&strict).contains("declared fault kind `hang` never fired"), "{}", stdout(&strict));
    // No [faults] at all: nothing is declared, nothing to prove.
    let none = scenario(dir.path(), "none.toml", "");
    let ok = sweep(&none, &dir.path().join("none"), true);
    assert_eq!(ok.status.code(), Some(0), "{}", stdout(&ok));
}

/// Issue 44's new kinds prove they fired like the others: an ambiguous commit at a point never
/// reached, a poll-error window after the run's end and a dead heartbeat of a session that
/// never runs each fail the flag, naming the entry; reached, they fire (a dead heartbeat once a
/// heartbeat, a poll error once a failed poll).
#[test]
fn the_fleet_fault_kinds_report_armed_and_fired_and_fail_the_flag_when_inert() {
    let dir = tempfile::tempdir().unwrap();
    let inert = scenario(
        dir.path(),
        "inert.toml",
        "[[faults.ambiguous_commit]]\ntask = 1\nat = \"after:claim_task\"\nnth = 9\n\
         [[faults.poll_error]]\nfrom_ms = 30_000_000\nto_ms = 31_000_000\n\
         [[faults.dead_heartbeat]]\ntask = 2\nsession = 4\n",
    );
    let strict = sweep(&inert, &dir.path().join("inert"), true);
    assert_eq!(strict.status.code(), Some(1), "{}\n{}", stdout(&strict), stderr(&strict));
    let said = stdout(&strict);
    for entry in ["ambiguous_commit[1]", "poll_error[1]", "dead_heartbeat[1]"] {
        assert!(said.contains(&format!("scripted fault {entry} never struck")), "{entry}: {said}");
    }
    let live = scenario(
        dir.path(),
        "live.toml",
        "[[faults.ambiguous_commit]]\ntask = 1\nat = \"after:claim_task\"\n\
         [[faults.poll_error]]\nfrom_ms = 60_000\nto_ms = 180_000\n\
         [[faults.dead_heartbeat]]\ntask = 2\n",
    );
    let run_out = dir.path().join("run").display().to_string();
    let run = rehearsal(&["run", &live, "--out", &run_out]);
    let text = stdout(&run);
    assert!(text.contains("faults       ambiguous_commit: armed 1, fired 1"), "{text}");
    let fired = |kind: &str| -> u64 {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("faults       {kind}: armed 1, fired ")))
            .unwrap_or_else(|| panic!("{kind}: {text}"));
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    assert!(fired("poll_error") >= 3, "a poll every 30 s for 2 minutes: {text}");
    assert!(fired("dead_heartbeat") >= 1, "{text}");
    let trace = std::fs::read_to_string(dir.path().join("run/trace.csv")).unwrap();
    assert_eq!(trace.lines().filter(|l| l.contains(",sql,claim_task,") && l.contains(",task-01.S1,")).count(), 2, "S1's claim ran twice");
    assert!(trace.contains("blind_retry"), "the truth says the second is a retry");
}
