//! The regression corpus (issue 44): `shrink --into DIR` writes a failure as a minimized
//! scenario with its fingerprint (rule, statement, actor) in `[corpus]`; `rehearsal corpus DIR`
//! re-checks every entry: the same failure passes the lane, another failure exits 1, a pass is
//! counted in the streaks file and reported for removal after `--remove-after` runs in a row;
//! an entry without a fingerprint is bad input. The shipped corpus (tests/corpus/) reproduces.

use std::path::Path;

use crate::support::{rehearsal, root, stderr, stdout};

/// The shipped corpus: every entry fails as recorded, and the lane passes.
#[test]
fn every_entry_of_the_shipped_corpus_fails_with_its_recorded_fingerprint() {
    let dir = root().join("tests/corpus");
    let entries = std::fs::read_dir(&dir).unwrap().filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "toml")).count();
    assert!(entries >= 3, "at least the shrunk failures of the three new fault kinds");
    let o = rehearsal(&["corpus", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let text = stdout(&o);
    assert_eq!(text.lines().filter(|l| l.starts_with("reproduces ")).count(), entries, "{text}");
    for kind in ["ambiguous_commit", "poll_error", "dead_heartbeat"] {
        let named = std::fs::read_dir(&dir).unwrap().map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap());
        assert!(named.into_iter().any(|t| t.contains(&format!("[[faults.{kind}]]"))), "an entry with {kind}");
    }
}

fn corpus(dir: &Path, streaks: &Path) -> (i32, String) {
    let o = rehearsal(&["corpus", dir.to_str().unwrap(), "--streaks", streaks.to_str().unwrap(), "--remove-after", "2"]);
    (o.status.code().unwrap(), format!("{}{}", stdout(&o), stderr(&o)))
}

#[test]
fn a_shrunk_entry_reproduces_then_a_changed_failure_fails_and_a_passing_one_is_due_for_removal() {
    let tmp = tempfile::tempdir().unwrap();
    let sweep = tmp.path().join("sweep");
    let scenario = "scenarios/faults/zombie.toml";
    let o = rehearsal(&["sweep", scenario, "--seeds", "1", "--out", sweep.to_str().unwrap(), "-q"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let failure = std::fs::read_dir(sweep.join("failures")).unwrap().map(|e| e.unwrap().path()).find(|p| p.is_file()).unwrap();
    let dir = tmp.path().join("corpus");
    let o = rehearsal(&["shrink", failure.to_str().unwrap(), "--into", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("fingerprint  `"), "{}", stdout(&o));
    let entry = std::fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
    let name = entry.file_name().unwrap().to_str().unwrap().to_string();
    assert!(name.starts_with("zombie-seed1-"), "{name}");
    let text = std::fs::read_to_string(&entry).unwrap();
    let table: toml::Table = text.parse().unwrap();
    let recorded = table["corpus"].as_table().unwrap();
    for key in ["rule", "statement", "actor", "found"] {
        assert!(recorded.contains_key(key), "{key}:\n{text}");
    }
    // The entry is a scenario: run alone it fails, as the original did.
    let o = rehearsal(&["run", entry.to_str().unwrap(), "--out", tmp.path().join("run").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    // In a folder that does not exist yet, as `reports/` on a fresh clone.
    let streaks = tmp.path().join("state/streaks.txt");
    let (code, out) = corpus(&dir, &streaks);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(&format!("reproduces   {name}")), "{out}");
    // Another statement recorded: the failure changed, exit 1.
    let changed = text.replace(&format!("statement = \"{}\"", recorded["statement"].as_str().unwrap()), "statement = \"poll_tasks\"");
    assert_ne!(changed, text);
    std::fs::write(&entry, &changed).unwrap();
    let (code, out) = corpus(&dir, &streaks);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(&format!("changed      {name}  recorded `")), "{out}");
    // Without its faults it passes: counted, and due for removal at the second pass in a row.
    let mut passing = table.clone();
    passing.remove("faults");
    // And the whole run's time back (the shrink ended it soon after the violation).
    passing["run"].as_table_mut().unwrap().insert("sim_time_max_ms".into(), toml::Value::Integer(43_200_000));
    std::fs::write(&entry, toml::to_string(&passing).unwrap()).unwrap();
    let (code, out) = corpus(&dir, &streaks);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("(1 corpus run(s) in a row") && !out.contains("remove "), "{out}");
    let (code, out) = corpus(&dir, &streaks);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(&format!("remove       {name}  passed 2 runs in a row")), "{out}");
    assert_eq!(std::fs::read_to_string(&streaks).unwrap().lines().last().unwrap(), format!("{name}\t2"));
    // A scenario with no [corpus] table is not an entry: exit 2, nothing run.
    std::fs::copy(root().join("scenarios/quickstart.toml"), dir.join("plain.toml")).unwrap();
    let (code, out) = corpus(&dir, &streaks);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("plain.toml: no [corpus] table"), "{out}");
}
