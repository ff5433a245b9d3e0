//! Replay commands paste as written: a scenario under a path with a space is quoted for the
//! shell in stdout, results.csv and junit.xml, and a saved failure file names its scenario
//! relative to the sweep's folder with its content hash, so `rehearsal replay` on it works from
//! any folder, and after the failures folder and the scenarios are copied to another place, and
//! refuses a changed scenario naming both hashes.

use std::process::Command;

use crate::support::{root, stderr, stdout};

#[test]
fn a_sweep_under_a_path_with_spaces_prints_quoted_replays_and_saves_failures_that_replay_from_anywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let here = tmp.path().join("my work");
    std::fs::create_dir_all(here.join("my scenarios")).unwrap();
    std::fs::copy(root().join("scenarios/faults/zombie.toml"), here.join("my scenarios/zombie.toml")).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_rehearsal"))
        .args(["sweep", "my scenarios/zombie.toml", "--seeds", "21", "--out", "sweep out"])
        .current_dir(&here)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "zombie fails owner-writes-only\n{}{}", stdout(&o), stderr(&o));
    let expected = "rehearsal run 'my scenarios/zombie.toml' --seed 21";
    let words = |command: &str| shlex::split(command).expect("the shell reads it");
    let out = here.join("sweep out");
    let results = rehearsal::campaign::sweep::read_results(&out.join("results.csv")).unwrap();
    assert_eq!(results[0].replay, expected);
    assert_eq!(words(&results[0].replay)[2], "my scenarios/zombie.toml");
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert!(junit.contains(&format!("reproduce with: {}", expected.replace('\'', "&apos;"))) || junit.contains(expected), "{junit}");
    assert!(stdout(&o).contains("failures     1 failed, 0 error(s) of 1 pairs"), "{}", stdout(&o));
    // The failure replays from another folder (the project root), to the same trace hash.
    let failure = out.join("failures/zombie-default-21.toml");
    let saved = rehearsal::campaign::failure_file::Failure::load(&failure).unwrap();
    assert_eq!(saved.scenario, "my scenarios/zombie.toml", "relative to the sweep's folder: {saved:?}");
    assert_eq!(saved.scenario_sha256.len(), 64, "{saved:?}");
    let o = Command::new(env!("CARGO_BIN_EXE_rehearsal"))
        .args(["replay", failure.to_str().unwrap(), "--out", tmp.path().join("replayed").to_str().unwrap()])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(stdout(&o).contains("replay       matches the saved trace hash"), "{}{}", stdout(&o), stderr(&o));
    // Run from the project root, the scenario is found beside the sweep's folder: by a path
    // from here, quoted too.
    let replay_line = stdout(&o).lines().find(|l| l.starts_with("replay       ")).unwrap_or_default().to_string();
    assert!(replay_line.contains("rehearsal run '") && replay_line.contains("my scenarios/zombie.toml' --seed 21"), "{replay_line}");
}

#[test]
fn a_failures_folder_copied_to_another_place_replays_and_a_changed_scenario_is_refused_naming_both_hashes() {
    let tmp = tempfile::tempdir().unwrap();
    let sweep_out = tmp.path().join("sweep");
    let o = Command::new(env!("CARGO_BIN_EXE_rehearsal"))
        .args(["sweep", "scenarios/faults/zombie.toml", "--seeds", "21", "--out", sweep_out.to_str().unwrap()])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    // The failure's reports name the folder it is kept in, not the removed scratch folder.
    let report = std::fs::read_to_string(sweep_out.join("failures/zombie-default-21/summary.md")).unwrap();
    let replay_line = report.lines().find(|l| l.starts_with("Replay:")).unwrap();
    assert!(replay_line.contains("rehearsal replay ") && replay_line.contains("failures/zombie-default-21.toml"), "{replay_line}");
    // Another machine: a checkout elsewhere (its scenarios) and the downloaded failures folder.
    let machine = tmp.path().join("other machine");
    crate::support::copy_tree(&root().join("scenarios"), &machine.join("checkout/scenarios"));
    crate::support::copy_tree(&sweep_out.join("failures"), &machine.join("downloads/failures"));
    let replay = |cwd: &std::path::Path| {
        Command::new(env!("CARGO_BIN_EXE_rehearsal"))
            .args(["replay", machine.join("downloads/failures/zombie-default-21.toml").to_str().unwrap(), "--out"])
            .arg(machine.join("replayed"))
            .current_dir(cwd)
            .output()
            .unwrap()
    };
    let o = replay(&machine.join("checkout"));
    assert_eq!(o.status.code(), Some(1), "it fails as saved: {}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("replay       matches the saved trace hash"), "{}{}", stdout(&o), stderr(&o));
    let saved = rehearsal::campaign::failure_file::Failure::load(&machine.join("downloads/failures/zombie-default-21.toml")).unwrap();
    let scenario = machine.join("checkout/scenarios/faults/zombie.toml");
    let text = std::fs::read_to_string(&scenario).unwrap();
    std::fs::write(&scenario, text.replace("[run]\n", "[run]\nsim_time_max_ms = 7200000\n")).unwrap();
    let o = replay(&machine.join("checkout"));
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    let now = rehearsal::input::scenario::identity::content_sha256(&std::fs::read_to_string(&scenario).unwrap());
    for fragment in ["the scenario changed since the failure was saved", &now[..16], &saved.scenario_sha256[..16]] {
        assert!(stderr(&o).contains(fragment), "`{fragment}` in: {}", stderr(&o));
    }
}
