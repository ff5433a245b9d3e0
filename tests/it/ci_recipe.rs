//! The CI recipe: .github/workflows/rehearsal.yml is YAML with two lanes (issue 44): a PR lane
//! running README's CI commands, and a nightly lane (`schedule:`) with a shard matrix over the
//! night's seeds, an artifact per shard, a merge job judged by a baseline and a JUnit report;
//! every `rehearsal` command of the nightly lane's `run:` steps runs as written (on a few
//! seeds of one night); scripts/ci-local.sh runs both lanes, the shards in parallel, and exits
//! with the first non-zero code; the README points at the workflow.

use std::path::{Path, PathBuf};
use std::process::Command;

use yaml_rust2::{Yaml, YamlLoader};

use crate::support::root;

const WORKFLOW: &str = ".github/workflows/rehearsal.yml";

fn workflow() -> Yaml {
    let text = std::fs::read_to_string(root().join(WORKFLOW)).unwrap();
    YamlLoader::load_from_str(&text).expect("the workflow is YAML").remove(0)
}

fn text(yaml: &Yaml) -> String {
    match yaml {
        Yaml::String(s) => s.clone(),
        Yaml::Integer(n) => n.to_string(),
        other => panic!("not a scalar: {other:?}"),
    }
}

fn steps<'a>(doc: &'a Yaml, job: &str) -> &'a [Yaml] {
    doc["jobs"][job]["steps"].as_vec().unwrap_or_else(|| panic!("job {job} has steps"))
}

/// The step of `job` that uses the action `prefix` (e.g. `actions/upload-artifact@`), the
/// one whose `with` has `key` when several do.
fn uses<'a>(doc: &'a Yaml, job: &str, prefix: &str, key: &str) -> &'a Yaml {
    steps(doc, job)
        .iter()
        .find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with(prefix)) && !s["with"][key].is_badvalue())
        .unwrap_or_else(|| panic!("job {job} uses {prefix} with {key}"))
}

/// The `run:` scripts of `job` that call the `rehearsal` command (a shell word of its own).
fn rehearsal_scripts(doc: &Yaml, job: &str) -> Vec<String> {
    steps(doc, job)
        .iter()
        .filter_map(|s| s["run"].as_str())
        .filter(|script| script.lines().any(|line| shlex::split(line).unwrap_or_default().iter().any(|w| w == "rehearsal")))
        .map(String::from)
        .collect()
}

/// The job's `${{ matrix.shard }}` replaced by `shard`; no other expression may be left.
fn expand(text: &str, shard: usize) -> String {
    let expanded = text.replace("${{ matrix.shard }}", &shard.to_string());
    assert!(!expanded.contains("${{"), "an expression the test does not know: {expanded}");
    expanded
}

fn shards(doc: &Yaml) -> usize {
    text(&doc["env"]["SHARDS"]).parse().expect("SHARDS is a number")
}

#[test]
fn the_workflow_is_yaml_with_a_shard_matrix_an_artifact_per_shard_a_merge_and_a_junit_report() {
    let doc = workflow();
    let n = shards(&doc);
    let matrix: Vec<usize> =
        doc["jobs"]["shard"]["strategy"]["matrix"]["shard"].as_vec().unwrap().iter().map(|v| text(v).parse().unwrap()).collect();
    assert_eq!(matrix, (1..=n).collect::<Vec<_>>(), "the matrix lists shards 1..=SHARDS");
    let upload = &uses(&doc, "shard", "actions/upload-artifact@", "name")["with"];
    assert_eq!((text(&upload["name"]), text(&upload["path"])), ("shard-${{ matrix.shard }}".into(), "shard-${{ matrix.shard }}".into()));
    assert_eq!(doc["jobs"]["shard"]["strategy"]["fail-fast"], Yaml::Boolean(false), "a failing shard does not cancel the others");
    let merge = &doc["jobs"]["merge"];
    let needs: Vec<String> = merge["needs"].as_vec().unwrap().iter().map(text).collect();
    assert_eq!(needs, ["build", "shard"]);
    assert_eq!(
        text(&merge["if"]),
        "${{ !cancelled() && needs.build.result == 'success' }}",
        "the merge runs when a shard failed, to name what is missing, but not in the PR lane"
    );
    assert!(!doc["on"]["schedule"].is_badvalue(), "the nightly lane has a schedule");
    assert!(text(&doc["jobs"]["build"]["if"]).contains("'schedule'"), "the nightly lane runs on its schedule only (or by hand)");
    assert!(text(&doc["jobs"]["pr"]["if"]).contains("'pull_request'"), "the PR lane runs on pull requests");
    let download = &uses(&doc, "merge", "actions/download-artifact@", "pattern")["with"];
    assert_eq!(text(&download["pattern"]), "shard-*");
    let [script] = &rehearsal_scripts(&doc, "merge")[..] else { panic!("one merge command") };
    let words = shlex::split(script).unwrap();
    assert_eq!(&words[..2], ["rehearsal", "merge"]);
    assert_eq!(words[2], format!("{}/shard-*/", text(&download["path"])), "the merge reads every downloaded shard");
    assert!(
        words.windows(2).any(|w| w == ["--baseline", "$NIGHT_BASELINE"]) && words.contains(&"--require-faults-fired".to_string()),
        "{words:?}"
    );
    let out = &words[words.iter().position(|w| w == "--out").unwrap() + 1];
    let junit = uses(&doc, "merge", "mikepenz/action-junit-report@", "report_paths");
    assert_eq!(text(&junit["with"]["report_paths"]), format!("{out}/junit.xml"), "the merged JUnit is published");
    assert_eq!(text(&junit["if"]), "${{ !cancelled() }}", "published when the merge failed too");
}

/// Issue 48: the nightly lane runs a swarm of the night's own seed after the build, and
/// uploads its folder (failures with their replay commands) even when it failed.
#[test]
fn the_nightly_lane_runs_a_swarm_of_the_nights_seed() {
    let doc = workflow();
    let swarm = &doc["jobs"]["swarm"];
    assert_eq!(text(&swarm["needs"]), "build", "the night's binary");
    assert_eq!(text(&swarm["env"]["NIGHT"]), "${{ needs.build.outputs.night }}", "the night every shard sweeps");
    let [script] = &rehearsal_scripts(&doc, "swarm")[..] else { panic!("one swarm command") };
    let words = shlex::split(script).unwrap();
    assert_eq!(&words[..2], ["rehearsal", "swarm"]);
    let seed = &words[words.iter().position(|w| w == "--seed").unwrap() + 1];
    assert!(seed.contains("$NIGHT"), "each night its own swarm: {seed}");
    let out = &words[words.iter().position(|w| w == "--out").unwrap() + 1];
    let upload = uses(&doc, "swarm", "actions/upload-artifact@", "name");
    assert_eq!(text(&upload["with"]["path"]), *out);
    assert_eq!(text(&upload["if"]), "${{ !cancelled() }}", "uploaded when the swarm failed too");
}

/// A folder to run the workflow's steps in: `scenarios` is the project's, `bin/rehearsal`
/// the binary under test.
fn checkout() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(root().join("scenarios"), tmp.path().join("scenarios")).unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_rehearsal"), bin.join("rehearsal")).unwrap();
    (tmp, bin)
}

fn path_with(bin: &Path) -> String {
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default())
}

/// The workflow's SUITE, after checking that its scenarios exist and that it leaves the seeds
/// to the night.
fn checked_suite(suite: &str) -> String {
    let words: Vec<&str> = suite.split_whitespace().collect();
    assert!(!words.contains(&"--seeds"), "each night brings its own seeds: {suite}");
    for scenario in words.iter().filter(|w| w.ends_with(".toml")) {
        assert!(root().join(scenario).is_file(), "SUITE's scenario {scenario} exists");
    }
    suite.to_string()
}

fn bash(script: &str, dir: &Path, env: &[(&str, &str)]) -> std::process::Output {
    // As GitHub Actions runs a `run:` step.
    Command::new("bash")
        .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
        .current_dir(dir)
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

#[test]
fn every_rehearsal_command_of_the_workflow_runs_as_written_on_a_few_seeds() {
    let doc = workflow();
    let n = shards(&doc);
    let (tmp, bin) = checkout();
    let suite = checked_suite(&text(&doc["env"]["SUITE"]));
    let baseline = text(&doc["env"]["NIGHT_BASELINE"]);
    assert!(root().join(&baseline).is_file(), "{baseline}");
    assert_eq!(text(&doc["jobs"]["shard"]["env"]["NIGHT"]), "${{ needs.build.outputs.night }}", "one night for every shard");
    // One small night: 8 seeds a scenario, enough for every declared fault to fire.
    let (path, shards_text) = (path_with(&bin), n.to_string());
    let env = [
        ("SUITE", suite.as_str()),
        ("SHARDS", shards_text.as_str()),
        ("PATH", path.as_str()),
        ("NIGHT", "2026-12-01"),
        ("NIGHT_SEEDS", "8"),
        ("NIGHT_BASELINE", baseline.as_str()),
    ];
    let sweeps = rehearsal_scripts(&doc, "shard");
    assert!(
        sweeps.iter().any(|s| s.contains("rehearsal sweep $SUITE --seeds night:$NIGHT:$NIGHT_SEEDS --baseline $NIGHT_BASELINE")),
        "{sweeps:?}"
    );
    let upload = &uses(&doc, "shard", "actions/upload-artifact@", "name")["with"];
    let download = text(&uses(&doc, "merge", "actions/download-artifact@", "pattern")["with"]["path"]);
    for shard in 1..=n {
        for script in &sweeps {
            let o = bash(&expand(script, shard), tmp.path(), &env);
            assert!(o.status.success(), "shard {shard}: {script}\n{}", String::from_utf8_lossy(&o.stderr));
        }
        // What upload-artifact and download-artifact (by pattern) do: shards/<name>/.
        let (name, uploaded) = (expand(&text(&upload["name"]), shard), tmp.path().join(expand(&text(&upload["path"]), shard)));
        std::fs::create_dir_all(tmp.path().join(&download)).unwrap();
        std::fs::rename(&uploaded, tmp.path().join(&download).join(name)).unwrap();
    }
    for script in rehearsal_scripts(&doc, "merge") {
        let o = bash(&script, tmp.path(), &env);
        assert!(o.status.success(), "{script}\n{}", String::from_utf8_lossy(&o.stderr));
        let report = text(&uses(&doc, "merge", "mikepenz/action-junit-report@", "report_paths")["with"]["report_paths"]);
        let junit = std::fs::read_to_string(tmp.path().join(report)).unwrap();
        let scenarios = suite.split_whitespace().filter(|w| w.ends_with(".toml")).count();
        assert_eq!(junit.matches("<testcase ").count(), 8 * scenarios, "every pair of every shard, once");
    }
}

/// The PR lane runs README's CI commands as written (tests/it/ci_gate.rs runs those).
#[test]
fn the_pr_lane_runs_the_readmes_ci_commands() {
    let doc = workflow();
    let flat = |s: &str| s.replace("\\\n", " ").split_whitespace().collect::<Vec<_>>().join(" ");
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap().replace("\\\n", " ");
    let ci = |l: &&str| l.starts_with("rehearsal sweep scenarios/ci/") || l.starts_with("rehearsal corpus ");
    let commands: Vec<String> = readme.lines().filter(ci).map(flat).collect();
    assert_eq!(commands.len(), 3, "README's corpus, strict and baselined suites");
    assert!(commands[0].starts_with("rehearsal corpus tests/corpus"), "the corpus first: {commands:?}");
    let scripts = steps(&doc, "pr").iter().filter_map(|s| s["run"].as_str()).filter(|s| s.trim_start().starts_with("rehearsal "));
    let lane: Vec<String> = scripts.map(flat).collect();
    assert_eq!(lane, commands);
}

#[test]
fn ci_local_runs_the_workflows_suite_in_parallel_shards_and_exits_with_the_merges_code() {
    let tmp = tempfile::tempdir().unwrap();
    let script = root().join("scripts/ci-local.sh");
    let run = |suite: Option<&str>, rehearsal: &Path, out: &Path| {
        let mut command = Command::new("bash");
        command
            .arg(&script)
            .arg("3")
            .arg(out)
            .env("REHEARSAL", rehearsal)
            .env_remove("SUITE")
            .env("LANES", "nightly")
            .env("NIGHT", "2026-12-02");
        if let Some(suite) = suite {
            command.env("SUITE", suite);
        }
        command.output().unwrap()
    };
    // A stand-in binary that records its arguments: without SUITE the script sweeps the
    // workflow's, shard by shard.
    let recorder = tmp.path().join("record.sh");
    let calls = tmp.path().join("calls.txt");
    std::fs::write(&recorder, format!("#!/bin/sh\necho \"$*\" >> {}\n", calls.display())).unwrap();
    std::fs::set_permissions(&recorder, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let o = run(None, &recorder, &tmp.path().join("recorded"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let recorded: Vec<String> = std::fs::read_to_string(&calls).unwrap().lines().map(String::from).collect();
    let mut sweeps: Vec<&String> = recorded.iter().filter(|c| c.starts_with("sweep ")).collect();
    sweeps.sort();
    let (suite, seeds) = (text(&workflow()["env"]["SUITE"]), text(&workflow()["env"]["NIGHT_SEEDS"]));
    let out = tmp.path().join("recorded");
    let expected: Vec<String> = (1..=3)
        .map(|shard| {
            format!(
                "sweep {suite} --seeds night:2026-12-02:{seeds} --baseline scenarios/ci/nightly-baseline.txt --shard {shard}/3 --jobs 1 --quiet --force --out {}/shard-{shard}",
                out.display()
            )
        })
        .collect();
    assert_eq!(sweeps, expected.iter().collect::<Vec<_>>());
    let merge = recorded.last().unwrap();
    assert!(
        merge.starts_with("merge ") && merge.contains("--baseline scenarios/ci/nightly-baseline.txt --require-faults-fired"),
        "{recorded:?}"
    );
    // Both lanes by default: the PR lane's two sweeps first.
    std::fs::remove_file(&calls).unwrap();
    let both = Command::new("bash")
        .arg(&script)
        .arg("2")
        .arg(tmp.path().join("both"))
        .env("REHEARSAL", &recorder)
        .env_remove("SUITE")
        .env_remove("LANES")
        .output()
        .unwrap();
    assert!(both.status.success(), "{}", String::from_utf8_lossy(&both.stderr));
    let recorded = std::fs::read_to_string(&calls).unwrap();
    let firsts: Vec<&str> = recorded.lines().take(3).collect();
    assert!(firsts[0].starts_with("corpus tests/corpus --streaks "), "the corpus first: {recorded}");
    assert!(firsts[1].contains("--protocol repaired") && firsts[2].contains("--baseline scenarios/ci/baseline.txt"), "{recorded}");
    assert_eq!(recorded.lines().filter(|l| l.starts_with("sweep ")).count(), 4, "{recorded}");

    // The real binary on a small suite: a failing scenario makes the merge, and so the
    // script, exit 1 with the unsharded sweep's results; a passing one exits 0.
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_rehearsal"));
    let failing = "scenarios/faults/zombie.toml scenarios/quickstart.toml --seeds 1..=4";
    let o = run(Some(failing), &bin, &tmp.path().join("failing"));
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let whole = tmp.path().join("whole");
    let args = ["sweep", "scenarios/faults/zombie.toml", "scenarios/quickstart.toml", "--seeds", "1..=4", "--quiet", "--out"];
    let o = Command::new(&bin).args(args).arg(&whole).current_dir(root()).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    for file in ["results.csv", "summary.md"] {
        let merged = std::fs::read(tmp.path().join("failing/merged").join(file)).unwrap();
        assert_eq!(merged, std::fs::read(whole.join(file)).unwrap(), "{file}");
    }
    let o = run(Some("scenarios/quickstart.toml --seeds 1..=3"), &bin, &tmp.path().join("passing"));
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn the_readme_points_at_the_workflow_and_its_yaml_blocks_parse() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(readme.contains(WORKFLOW) && readme.contains("scripts/ci-local.sh"), "the README's CI section names the recipe");
    let blocks: Vec<&str> = readme.split("```yaml\n").skip(1).map(|rest| rest.split("```").next().unwrap()).collect();
    for block in blocks {
        YamlLoader::load_from_str(block).unwrap_or_else(|e| panic!("a README yaml block does not parse: {e}\n{block}"));
    }
}
