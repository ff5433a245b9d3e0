//! Protocol profiles (issue 28): `[protocol] profile` and `--protocol` choose a whole protocol;
//! the trace, the replay command and a sweep's saved failure carry it, so every replay and
//! `rehearsal judge` reproduce the run; an unknown name is bad input listing the profiles.

use crate::support::*;

/// The first row of a run's trace, and the whole trace.
/// The rows between the first and the last: the run's events, without the first row's
/// scenario hash and the last row's seal (docs/protocol.md C120).
fn event_rows(trace: &str) -> Vec<&str> {
    let lines: Vec<&str> = trace.lines().collect();
    lines[2..lines.len() - 1].to_vec()
}

fn first_row_and_hash(run: &std::path::Path) -> (String, String) {
    let trace = std::fs::read_to_string(run.join("trace.csv")).unwrap();
    (trace.lines().nth(1).unwrap().to_string(), trace)
}

#[test]
fn a_profile_from_the_command_line_or_the_file_is_the_same_run_and_judge_reproduces_it() {
    let dir = tempfile::tempdir().unwrap();
    let quickstart = scenario("quickstart.toml");
    let run = |out: &str, scenario: &std::path::Path, protocol: Option<&str>| {
        let out = dir.path().join(out);
        let mut args = vec!["run", scenario.to_str().unwrap(), "--seed", "3", "--out", out.to_str().unwrap()];
        args.extend(protocol.iter().flat_map(|p| ["--protocol", *p]));
        let o = rehearsal(&args);
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
        (out, stdout(&o))
    };
    let (seeds_run, _) = run("seeds", &quickstart, None);
    let (cli_run, text) = run("cli", &quickstart, Some("repaired"));
    assert!(
        text.contains(
            "protocol     repaired\nvariants     fencing, heartbeat-until-exit, durable-cursor, patient-relaunch, release-stale, uncap-lost-sessions, retry-failed-reads, lease-self-check, checked-transitions, claim-blocked-owner-alive, release-asked-exit, claim-compare-and-set, checked-answers, conductor-busy-backoff\n"
        ),
        "{text}"
    );
    assert!(text.contains(" --seed 3 --protocol repaired --out "), "the replay command names the profile: {text}");
    let (seeds_row, seeds_hash) = first_row_and_hash(&seeds_run);
    let (cli_row, cli_hash) = first_row_and_hash(&cli_run);
    assert!(!seeds_row.contains("profile="), "{seeds_row}");
    assert!(cli_row.contains(" seed=3 profile=repaired variants= "), "{cli_row}");
    assert_ne!(seeds_hash, cli_hash, "the profile changes the run");
    // The same file name in another folder, with the key: the same run; and
    // `--protocol seeds` over the key gives the seeds' run back.
    let keyed = dir.path().join("copy").join("quickstart.toml");
    std::fs::create_dir_all(keyed.parent().unwrap()).unwrap();
    let text = std::fs::read_to_string(&quickstart).unwrap();
    std::fs::write(&keyed, format!("{text}\n[protocol]\nprofile = \"repaired\"\n")).unwrap();
    // (The copy's text is not the file's: its first row says so by the text's hash, C120, so
    // the events are compared.)
    assert_eq!(event_rows(&first_row_and_hash(&run("keyed", &keyed, None).0).1), event_rows(&cli_hash));
    assert_eq!(event_rows(&first_row_and_hash(&run("overridden", &keyed, Some("seeds")).0).1), event_rows(&seeds_hash));
    // judge rebuilds the checker from the trace's profile, not the file's.
    for folder in [&cli_run, &seeds_run] {
        let o = rehearsal(&["judge", folder.to_str().unwrap(), "--scenario", quickstart.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
        assert!(stdout(&o).contains("agrees with the run's violations.csv"), "{}", stdout(&o));
    }
}

#[test]
fn a_sweeps_saved_failure_under_a_profile_replays_it() {
    // reply-to-zombie expects the flaws fencing and cited replies close: under the repaired
    // profile its expected violations do not occur, so the pair fails and is saved.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    let o = rehearsal(&[
        "sweep",
        "scenarios/faults/reply-to-zombie.toml",
        "--protocol",
        "repaired",
        "--jobs",
        "1",
        "-q",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let saved = out.join("failures").join("reply-to-zombie-repaired-15.toml");
    let failure = std::fs::read_to_string(&saved).unwrap();
    assert!(failure.contains("\nprotocol = \"repaired\"\n"), "{failure}");
    assert!(std::fs::read_to_string(out.join("manifest.toml")).unwrap().contains("\nprotocol = \"repaired\"\n"));
    let results = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(results.contains(",repaired,15,fail,"), "{results}");
    assert!(results.contains("--seed 15 --protocol repaired"), "{results}");
    let o = rehearsal(&["replay", saved.to_str().unwrap(), "--out", dir.path().join("replay").to_str().unwrap()]);
    assert!(stdout(&o).contains("replay       matches the saved trace hash"), "{}{}", stdout(&o), stderr(&o));
}

#[test]
fn an_unknown_profile_is_bad_input_listing_the_profiles_on_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let quickstart = "scenarios/quickstart.toml";
    let commands: [&[&str]; 9] = [
        &["run", quickstart, "--out", out],
        &["sweep", quickstart, "--out", out],
        &["compare", quickstart, "--seeds", "1", "--out", out],
        &["bench", quickstart, "--param", "run.seed=1", "--seeds", "1", "--out", out],
        &["explore", "crashes", quickstart, "--out", out],
        &["explore", "schedules", quickstart, "--out", out],
        &["search", quickstart, "--runs", "1", "--out", out],
        &["check", quickstart],
        &["findings", "--seeds", "1", "--out", out],
    ];
    for command in commands {
        let mut args = command.to_vec();
        args.extend(["--protocol", "repiared"]);
        let o = rehearsal(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}{}", stdout(&o), stderr(&o));
        assert!(
            stderr(&o).contains("--protocol: unknown protocol profile `repiared`; did you mean `repaired`?; profiles: seeds, repaired"),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(!dir.path().join("out").join("comms.db").exists(), "{args:?}: nothing ran");
    }
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[tasks]\ncount = 1\n\n[protocol]\nprofile = \"nope\"\n").unwrap();
    let o = rehearsal(&["run", bad.to_str().unwrap(), "--out", out]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("bad.toml:5:1: key `protocol.profile`: unknown protocol profile `nope`; profiles: seeds, repaired"),
        "{}",
        stderr(&o)
    );
}
