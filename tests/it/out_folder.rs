//! The commands that write a folder of results (sweep, compare, bench, explore, search) refuse
//! one that already holds something, as `run` does, and with `--force` clear what they wrote
//! there before: no stale run folder or saved failure of an earlier command is left to be
//! read as theirs.

use std::path::Path;

use crate::support::{rehearsal, stderr, stdout};

/// A folder with an earlier command's leftovers: a stale run folder and a stale failure, and
/// the record of the command that wrote them (sim/base/out_owner.rs).
fn stale(out: &Path) {
    std::fs::create_dir_all(out).unwrap();
    std::fs::write(out.join(".rehearsal-owned"), "owns fencing-99\nowns failures\nowns summary.md\n").unwrap();
    std::fs::create_dir_all(out.join("fencing-99")).unwrap();
    std::fs::write(out.join("fencing-99/comms.db"), "").unwrap();
    std::fs::create_dir_all(out.join("failures")).unwrap();
    std::fs::write(out.join("failures/other-default-7.toml"), "not a failure of this sweep").unwrap();
    std::fs::write(out.join("summary.md"), "an earlier summary").unwrap();
}

#[test]
fn every_results_command_refuses_a_folder_holding_results_unless_forced() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    stale(&out);
    let o = out.to_str().unwrap();
    let commands: [&[&str]; 6] = [
        &["sweep", "scenarios/examples/bootstrap.toml", "--seeds", "1", "--out", o],
        &["compare", "scenarios/examples/bootstrap.toml", "--seeds", "1", "--out", o],
        &["bench", "scenarios/examples/bootstrap.toml", "--param", "tasks.count=1", "--seeds", "1", "--out", o],
        &["explore", "crashes", "scenarios/examples/bootstrap.toml", "--points", "1", "--out", o],
        &["search", "scenarios/examples/bootstrap.toml", "--runs", "1", "--out", o],
        &["explore", "schedules", "scenarios/schedules/double-launch.toml", "--bound", "0", "--out", o],
    ];
    for args in commands {
        let r = rehearsal(args);
        assert_eq!(r.status.code(), Some(2), "{args:?}: {}{}", stdout(&r), stderr(&r));
        assert!(stderr(&r).contains("already holds results") && stderr(&r).contains("--force"), "{args:?}: {}", stderr(&r));
        assert!(out.join("fencing-99/comms.db").exists(), "{args:?} touched nothing");
    }
    // A file no rehearsal command wrote (issue 41): refused by each, --force or not, naming it.
    std::fs::write(out.join("mine.txt"), "the user's").unwrap();
    for args in commands {
        let r = rehearsal(&[args, &["--force"]].concat());
        assert_eq!(r.status.code(), Some(2), "{args:?}: {}{}", stdout(&r), stderr(&r));
        assert!(stderr(&r).contains("mine.txt: not rehearsal's to replace"), "{args:?}: {}", stderr(&r));
        assert!(out.join("fencing-99/comms.db").exists() && out.join("mine.txt").exists(), "{args:?} touched nothing");
    }
}

#[test]
fn a_forced_sweep_and_compare_leave_no_stale_run_folder_or_failure() {
    let tmp = tempfile::tempdir().unwrap();
    for command in ["sweep", "compare"] {
        let out = tmp.path().join(command);
        stale(&out);
        let r = rehearsal(&[command, "scenarios/examples/bootstrap.toml", "--seeds", "1", "--force", "--out", out.to_str().unwrap()]);
        assert_eq!(r.status.code(), Some(0), "{command}: {}{}", stdout(&r), stderr(&r));
        assert!(!out.join("fencing-99").exists(), "{command}: the earlier run folder is gone");
        if command == "sweep" {
            assert!(!out.join("failures/other-default-7.toml").exists(), "the earlier sweep's failure is gone");
        }
        assert_ne!(std::fs::read_to_string(out.join("summary.md")).unwrap(), "an earlier summary", "{command}");
    }
}
