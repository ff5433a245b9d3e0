//! `rehearsal judge`: a finished run judged again from its trace.csv and comms.db alone gives
//! the violations.csv the run wrote, byte for byte, for every shipped scenario; a folder that
//! holds no whole run of this trace format is bad input (exit 2) naming the file and the line.

use std::path::{Path, PathBuf};

use crate::support::{on_two_threads, rehearsal, root, shipped_cases, stderr, stdout, summary_field};

/// `rehearsal judge ARGS...`: (exit code, stdout, stderr).
fn judge(args: &[&Path], flags: &[&str]) -> (i32, String, String) {
    let mut all: Vec<&str> = vec!["judge"];
    all.extend(flags);
    all.extend(args.iter().map(|p| p.to_str().unwrap()));
    let o = rehearsal(&all);
    (o.status.code().expect("an exit code"), stdout(&o), stderr(&o))
}

#[test]
fn judging_every_shipped_scenario_again_reproduces_its_violations_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = shipped_cases();
    // Each run as the golden file makes it: the scenario named relative to the project root.
    let runs = on_two_threads(cases.len(), |i| {
        let (scenario, seed) = &cases[i];
        let out = tmp.path().join(format!("r{i}"));
        let seed_text = seed.map(|s| s.to_string());
        let mut args = vec!["run", scenario.as_str(), "--out", out.to_str().unwrap()];
        if let Some(seed) = &seed_text {
            args.extend(["--seed", seed]);
        }
        let o = rehearsal(&args);
        let code = o.status.code().unwrap();
        assert!(code == 0 || code == 1, "{scenario}: exit {code}\n{}", stderr(&o));
        (out, code, summary_field(&stdout(&o), "verdict"))
    });
    let dirs: Vec<&Path> = runs.iter().map(|(dir, _, _)| dir.as_path()).collect();
    let worst = runs.iter().map(|(_, code, _)| *code).max().unwrap();

    // Compared with what each run wrote: every verdict agrees, with the run's headline.
    let (code, out, err) = judge(&dirs, &[]);
    assert_eq!(code, worst, "stdout:\n{out}\nstderr:\n{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), runs.len(), "one line per folder:\n{out}");
    for ((dir, _, headline), line) in runs.iter().zip(&lines) {
        assert!(line.starts_with(&format!("{}: ", dir.display())), "{line}");
        assert!(line.contains(&format!(": {headline} — agrees with the run's violations.csv")), "{line}");
    }

    // Written afresh: the same bytes as the run's.
    let written: Vec<Vec<u8>> = dirs.iter().map(|dir| std::fs::read(dir.join("violations.csv")).unwrap()).collect();
    for dir in &dirs {
        std::fs::remove_file(dir.join("violations.csv")).unwrap();
    }
    let (code, out, err) = judge(&dirs, &["--write"]);
    assert_eq!(code, worst, "stdout:\n{out}\nstderr:\n{err}");
    for ((dir, bytes), (scenario, seed)) in dirs.iter().zip(&written).zip(&cases) {
        assert!(std::fs::read(dir.join("violations.csv")).unwrap() == *bytes, "{scenario} seed {seed:?}: violations.csv differs");
    }
}

/// A finished run of the bootstrap example, made from a copy of its scenario in `dir`, so a
/// test can take the scenario away. Returns (run folder, scenario copy).
fn bootstrap_run(dir: &Path) -> (PathBuf, PathBuf) {
    let scenario = dir.join("bootstrap.toml");
    std::fs::copy(root().join("scenarios/examples/bootstrap.toml"), &scenario).unwrap();
    let out = dir.join("run");
    let o = rehearsal(&["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    (out, scenario)
}

/// A copy of a run folder's files whose trace is `trace`.
fn with_trace(run: &Path, to: &Path, trace: &[u8]) -> PathBuf {
    std::fs::create_dir_all(to).unwrap();
    for file in ["comms.db", "violations.csv"] {
        std::fs::copy(run.join(file), to.join(file)).unwrap();
    }
    std::fs::write(to.join("trace.csv"), trace).unwrap();
    to.to_path_buf()
}

fn assert_bad_input(dirs: &[&Path], flags: &[&str], fragments: &[&str]) {
    let (code, out, err) = judge(dirs, flags);
    assert_eq!(code, 2, "stdout:\n{out}\nstderr:\n{err}");
    for fragment in fragments {
        assert!(err.contains(fragment), "expected `{fragment}` in stderr:\n{err}");
    }
}

#[test]
fn a_run_judged_again_agrees_and_a_changed_violations_csv_is_found_and_rewritten() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, _) = bootstrap_run(tmp.path());
    let (code, out, _) = judge(&[&run], &[]);
    assert_eq!(code, 0);
    assert!(out.contains("seed 1: PASS — agrees with the run's violations.csv"), "{out}");
    let original = std::fs::read(run.join("violations.csv")).unwrap();
    std::fs::write(run.join("violations.csv"), b"t_ms,rule,explanation\n1,liveness,made up\n").unwrap();
    let (code, out, _) = judge(&[&run], &[]);
    assert_eq!(code, 3, "a verdict that differs from the run's is the harness's: {out}");
    assert!(out.contains("DIFFERS from the run's violations.csv"), "{out}");
    let (code, out, _) = judge(&[&run], &["--write"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("violations.csv rewritten (it differed from the run's)"), "{out}");
    assert_eq!(std::fs::read(run.join("violations.csv")).unwrap(), original);
}

#[test]
fn the_scenario_is_found_by_its_file_name_or_given_and_one_of_another_epoch_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, scenario) = bootstrap_run(tmp.path());
    std::fs::remove_file(&scenario).unwrap();
    // The trace names the file `bootstrap.toml`: from the project root, the shipped
    // scenarios/examples/bootstrap.toml (the same text) is found.
    let (code, out, err) = judge(&[&run], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("scenarios/examples/bootstrap.toml seed 1: PASS — agrees"), "{out}");
    // From a folder with no such file above the run or in scenarios/: named, with the way out.
    let judge_in = |cwd: &Path| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_rehearsal"))
            .args(["judge", run.to_str().unwrap()])
            .current_dir(cwd)
            .output()
            .unwrap();
        (o.status.code(), stderr(&o))
    };
    let (code, err) = judge_in(tmp.path());
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("cannot find the scenario bootstrap.toml") && err.contains("pass --scenario FILE"), "{err}");
    let (code, out, err) = judge(&[&run], &["--scenario", "scenarios/examples/bootstrap.toml"]);
    assert_eq!(code, 0, "{out}{err}");
    // Two texts of that name are not chosen between.
    let text = std::fs::read_to_string(root().join("scenarios/examples/bootstrap.toml")).unwrap();
    std::fs::create_dir_all(tmp.path().join("scenarios")).unwrap();
    std::fs::write(tmp.path().join("scenarios/bootstrap.toml"), &text).unwrap();
    std::fs::write(tmp.path().join("bootstrap.toml"), format!("{text}\n# edited\n")).unwrap();
    let (code, err) = judge_in(tmp.path());
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("several files named bootstrap.toml with different texts"), "{err}");
    // A scenario with another epoch is not the run's.
    let other = tmp.path().join("other-epoch.toml");
    std::fs::write(&other, text.replace("[run]\n", "[run]\nepoch = \"2030-01-01 00:00:00\"\n")).unwrap();
    let trace = run.join("trace.csv");
    assert_bad_input(&[&run], &["--scenario", other.to_str().unwrap()], &[&format!("{}:2: the run's epoch", trace.display())]);
}

#[test]
fn a_folder_with_no_run_is_bad_input_and_the_other_folders_are_still_judged() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, _) = bootstrap_run(tmp.path());
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let (code, out, err) = judge(&[&empty, &run], &[]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains(&format!("{}: no trace.csv: not a run folder", empty.display())), "{err}");
    assert!(err.contains("1 of 2 run folder(s) could not be judged (bad input)"), "{err}");
    assert!(out.contains("PASS — agrees"), "the good folder is judged: {out}");
    // A run stopped before its end leaves only the temporary trace.
    std::fs::write(empty.join("trace.csv.tmp"), "t_ms\n").unwrap();
    assert_bad_input(&[&empty], &[], &["the run was stopped before its end"]);
    assert_bad_input(&[&tmp.path().join("nowhere")], &[], &["nowhere: no such run folder"]);
    // Without --write there must be a violations.csv to compare with.
    std::fs::remove_file(run.join("violations.csv")).unwrap();
    assert_bad_input(&[&run], &[], &["no violations.csv to compare the verdict with; pass --write"]);
}

#[test]
fn a_truncated_trace_is_bad_input_naming_the_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, _) = bootstrap_run(tmp.path());
    let text = std::fs::read_to_string(run.join("trace.csv")).unwrap();
    let lines = text.lines().count();
    assert!(text.lines().last().unwrap().contains(",run_end,"), "the last row is run_end");

    // The last row cut in half.
    let last_start = text[..text.len() - 1].rfind('\n').unwrap() + 1;
    let cut = &text[..last_start + (text.len() - last_start) / 2];
    let dir = with_trace(&run, &tmp.path().join("cut"), cut.as_bytes());
    let trace = dir.join("trace.csv");
    assert_bad_input(&[&dir], &[], &[&format!("{}:{lines}: the last row is cut short", trace.display()), "a truncated trace"]);

    // Cut after a whole row: no run_end row.
    let dir = with_trace(&run, &tmp.path().join("no-end"), &text.as_bytes()[..last_start]);
    let trace = dir.join("trace.csv");
    assert_bad_input(&[&dir], &[], &[&format!("{}:{}: the trace ends without its run_end row", trace.display(), lines - 1)]);

    // Only the header.
    let header_end = text.find('\n').unwrap() + 1;
    let dir = with_trace(&run, &tmp.path().join("header-only"), &text.as_bytes()[..header_end]);
    assert_bad_input(&[&dir], &[], &[&format!("{}:1: a header and no rows", dir.join("trace.csv").display())]);
}

#[test]
fn a_trace_of_another_format_is_bad_input_saying_which_it_is() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, _) = bootstrap_run(tmp.path());
    let text = std::fs::read_to_string(run.join("trace.csv")).unwrap();
    let body = &text[text.find('\n').unwrap()..];
    let v1 = format!("t_ms,time,actor,session,event,statement,rows,state_after,detail,seq{body}");
    let dir = with_trace(&run, &tmp.path().join("v1"), v1.as_bytes());
    let trace = dir.join("trace.csv");
    assert_bad_input(
        &[&dir],
        &[],
        &[
            &format!("{}:1: a trace of format v1 (no `observed` column", trace.display()),
            "this build reads format v2: `t_ms,time,actor,session,event,statement,rows,state_after,detail,seq,observed`",
        ],
    );
    let dir = with_trace(&run, &tmp.path().join("csv"), b"a,b,c\n1,2,3\n");
    assert_bad_input(&[&dir], &[], &[&format!("{}:1: not a trace of a known format: header `a,b,c`", dir.join("trace.csv").display())]);
    // A row whose observed column was tampered with is named by line and column.
    let second = text.match_indices('\n').nth(1).unwrap().0;
    let (head, tail) = text.split_at(second);
    let tampered = format!("{}{}", head.replace("scenario=", "scenery="), tail);
    let dir = with_trace(&run, &tmp.path().join("tampered"), tampered.as_bytes());
    assert_bad_input(&[&dir], &[], &[&format!("{}:2: column `observed`: expected `scenario=`", dir.join("trace.csv").display())]);
}
