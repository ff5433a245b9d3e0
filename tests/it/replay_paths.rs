//! Replay commands paste as written: a scenario under a path with a space is quoted for the
//! shell in stdout, results.csv and junit.xml, and a saved failure file names its scenario by
//! an absolute path, so `rehearsal replay` on it works from any folder and matches the hash.

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
    let results = rehearsal::sweep::read_results(&out.join("results.csv")).unwrap();
    assert_eq!(results[0].replay, expected);
    assert_eq!(words(&results[0].replay)[2], "my scenarios/zombie.toml");
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert!(junit.contains(&format!("reproduce with: {}", expected.replace('\'', "&apos;"))) || junit.contains(expected), "{junit}");
    assert!(stdout(&o).contains("failures     1 failed, 0 error(s) of 1 pairs"), "{}", stdout(&o));
    // The failure replays from another folder (the project root), to the same trace hash.
    let failure = out.join("failures/zombie-default-21.toml");
    let saved = rehearsal::sweep::Failure::load(&failure).unwrap();
    assert!(std::path::Path::new(&saved.scenario).is_absolute(), "{saved:?}");
    assert_eq!(saved.named, "my scenarios/zombie.toml");
    let o = Command::new(env!("CARGO_BIN_EXE_rehearsal"))
        .args(["replay", failure.to_str().unwrap(), "--out", tmp.path().join("replayed").to_str().unwrap()])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(stdout(&o).contains("replay       matches the saved trace hash"), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains(expected), "the replay command is quoted too: {}", stdout(&o));
}
