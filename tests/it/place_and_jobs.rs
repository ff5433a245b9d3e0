//! A run's bytes depend on its scenario, seed and build only: not on the folder a command ran
//! in, the checkout's place, a symlinked current folder, or how many runs share the process
//! (`--jobs`), also when the protocol's SQL calls `random()` (issue 25, item 5).

use std::path::Path;
use std::process::Command;

use crate::support::{root, stderr, stdout, summary_field};

/// The heartbeat: it skips one refresh in 50 at random, so some seeds fail and the
/// verdicts depend on the draws.
const HEARTBEAT_AT_RANDOM: &str = "-- name: heartbeat\nUPDATE orchestration_tasks\nSET last_heartbeat = datetime('now')\n\
                                   WHERE task_id = :task_id AND abs(random()) % 50 != 0;\n";

fn sweep(cwd: &Path, sql: &Path, jobs: &str, out: &Path) -> Vec<u8> {
    let o = Command::new(env!("CARGO_BIN_EXE_rehearsal"))
        .args(["sweep", "scenarios/quickstart.toml", "--seeds", "1..=20", "--jobs", jobs])
        .arg("--sql")
        .arg(sql)
        .arg("--out")
        .arg(out)
        .current_dir(cwd)
        .output()
        .unwrap();
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}{}", stdout(&o), stderr(&o));
    std::fs::read(out.join("results.csv")).unwrap()
}

#[test]
fn sql_calling_random_gives_one_result_under_any_jobs_from_any_checkout_and_cwd() {
    let tmp = tempfile::tempdir().unwrap();
    let sql = tmp.path().join("heartbeat-at-random.sql");
    std::fs::write(&sql, HEARTBEAT_AT_RANDOM).unwrap();
    // A second checkout: the scenarios tree copied elsewhere, and a link to it.
    let checkout = tmp.path().join("elsewhere");
    crate::support::copy_tree(&root().join("scenarios"), &checkout.join("scenarios"));
    let linked = tmp.path().join("linked");
    std::os::unix::fs::symlink(&checkout, &linked).unwrap();
    let one_job = sweep(&root(), &sql, "1", &tmp.path().join("j1"));
    let two_jobs = sweep(&checkout, &sql, "2", &tmp.path().join("j2"));
    let through_link = sweep(&linked, &sql, "2", &tmp.path().join("j2-linked"));
    let text = String::from_utf8(one_job.clone()).unwrap();
    assert!(!text.contains(",error,"), "no pair is an error (nondeterminism):\n{text}");
    assert!(text.contains(",fail,") && text.contains(",pass,"), "the draws decide some verdicts:\n{text}");
    assert!(one_job == two_jobs, "--jobs 1 and --jobs 2 (another checkout) differ:\n{text}\n{}", String::from_utf8_lossy(&two_jobs));
    assert!(one_job == through_link, "a symlinked current folder changed the results");
    // One run, its scenario typed as an absolute path from another folder: the sweep's hash.
    let column = text.lines().next().unwrap().split(',').position(|c| c == "trace_hash").expect("results.csv has trace_hash");
    let seed_1 = text.lines().nth(1).unwrap().split(',').nth(column).unwrap().to_string();
    let o = Command::new(env!("CARGO_BIN_EXE_rehearsal"))
        .args(["run", checkout.join("scenarios/quickstart.toml").to_str().unwrap(), "--seed", "1", "--sql", sql.to_str().unwrap()])
        .args(["--out", tmp.path().join("one").to_str().unwrap()])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(summary_field(&stdout(&o), "trace hash"), seed_1, "{}", stderr(&o));
}
