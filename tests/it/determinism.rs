//! Same scenario, seed and build ⇒ byte-identical `trace.csv` and `comms.db`, across
//! processes; another seed ⇒ another trace (ARCHITECTURE.md, invariant "byte-identical `trace.csv`").

use crate::support::{run_ok, scenario, summary_field};

#[test]
fn the_same_seed_in_two_processes_gives_identical_bytes_and_another_seed_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b, c) = (tmp.path().join("a"), tmp.path().join("b"), tmp.path().join("c"));
    let quickstart = scenario("quickstart.toml");
    let out_a = run_ok(&quickstart, 7, &a);
    std::thread::sleep(std::time::Duration::from_millis(1100)); // a wall-clock leak would show
    let out_b = run_ok(&quickstart, 7, &b);
    let out_c = run_ok(&quickstart, 8, &c);
    for file in ["trace.csv", "comms.db"] {
        let (bytes_a, bytes_b) = (std::fs::read(a.join(file)).unwrap(), std::fs::read(b.join(file)).unwrap());
        assert!(bytes_a.len() > 1000, "{file} is suspiciously small");
        assert!(bytes_a == bytes_b, "{file} differs between two runs of seed 7");
    }
    assert_eq!(summary_field(&out_a, "trace hash"), summary_field(&out_b, "trace hash"));
    assert_ne!(std::fs::read(a.join("trace.csv")).unwrap(), std::fs::read(c.join("trace.csv")).unwrap());
    assert_ne!(summary_field(&out_a, "trace hash"), summary_field(&out_c, "trace hash"));
    // The printed hash is the hash of the file on disk.
    let digest = sha256_hex(&std::fs::read(a.join("trace.csv")).unwrap());
    assert_eq!(summary_field(&out_a, "trace hash"), digest);
}

#[test]
fn runs_on_parallel_threads_keep_their_own_clocks() {
    // Two different scenarios' seeds run at once in one process; each must equal its
    // single-threaded run byte for byte.
    let tmp = tempfile::tempdir().unwrap();
    let run = |seed: u64, dir: std::path::PathBuf| {
        let options = rehearsal::run::RunOptions {
            scenario_path: scenario("quickstart.toml"),
            seed: Some(seed),
            out_dir: Some(dir),
            variants: Vec::new(),
        };
        rehearsal::run::run(&options).expect("run").trace_hash
    };
    let (p1, p2) = (tmp.path().join("p1"), tmp.path().join("p2"));
    let (h1, h2) = std::thread::scope(|s| {
        let t1 = s.spawn(|| run(11, p1.clone()));
        let t2 = s.spawn(|| run(12, p2.clone()));
        (t1.join().unwrap(), t2.join().unwrap())
    });
    assert_eq!(h1, run(11, tmp.path().join("s1")));
    assert_eq!(h2, run(12, tmp.path().join("s2")));
    assert_eq!(std::fs::read(p1.join("comms.db")).unwrap(), std::fs::read(tmp.path().join("s1/comms.db")).unwrap());
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The trace names its scenario (its first row), so the path's spelling reached the trace
/// hash: `./scenarios/x.toml` or the absolute path gave another hash than
/// `scenarios/x.toml` for the same run. One file from one folder is now named one way.
#[test]
fn the_same_scenario_however_its_path_is_spelled_gives_the_same_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let absolute = crate::support::root().join("scenarios/examples/bootstrap.toml");
    let spellings = ["scenarios/examples/bootstrap.toml", "./scenarios/examples/bootstrap.toml", absolute.to_str().unwrap()];
    let traces: Vec<Vec<u8>> = spellings
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let out = tmp.path().join(format!("run-{i}"));
            let o = crate::support::rehearsal(&["--quiet", "run", path, "--out", out.to_str().unwrap()]);
            assert_eq!(o.status.code(), Some(0), "{path}: {}", crate::support::stderr(&o));
            std::fs::read(out.join("trace.csv")).unwrap()
        })
        .collect();
    assert!(traces[1] == traces[0], "./ spelled another trace");
    assert!(traces[2] == traces[0], "the absolute path spelled another trace");
}
