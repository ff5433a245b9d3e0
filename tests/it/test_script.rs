//! `scripts/test.sh`, the README's test command and what `.ci/run` calls: it runs `cargo test
//! --locked` only once the tools the tests use outside cargo are there, and otherwise names
//! them. Run here with a PATH of stand-ins, so nothing is installed and no cargo is started.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::root;

/// A PATH folder holding `id` and, as stand-ins that print their name and arguments, `tools`.
fn path_with(dir: &Path, tools: &[&str]) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let id = which("id");
    std::os::unix::fs::symlink(id, dir.join("id")).unwrap();
    for tool in tools {
        let stand_in = dir.join(tool);
        std::fs::write(&stand_in, format!("#!/bin/sh\necho \"{tool} $*\"\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&stand_in, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir.display().to_string()
}

fn which(tool: &str) -> String {
    let o = Command::new("sh").args(["-c", &format!("command -v {tool}")]).output().unwrap();
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}

/// Runs scripts/test.sh as a person would: without the upgrade permission `.ci/run` exports
/// for CI's throwaway machine (inherited, it would let the script upgrade what it must refuse).
fn run_script(path: &str, home: &Path) -> Output {
    Command::new(which("bash"))
        .arg(root().join("scripts/test.sh"))
        .arg("golden")
        .env("PATH", path)
        .env("HOME", home)
        .env_remove("REHEARSAL_TEST_ALLOW_UPGRADES")
        .output()
        .unwrap()
}

#[test]
fn the_test_script_names_the_missing_tools_and_stops_when_it_cannot_install_them() {
    let tmp = tempfile::tempdir().unwrap();
    // No apt-get on this PATH: the script cannot install, as root or not.
    let path = path_with(&tmp.path().join("bin"), &["cargo", "sqlite3"]);
    let o = run_script(&path, tmp.path());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("the tests need faketime chromium"), "{stderr}");
    assert!(stderr.contains("apt-get install faketime chromium"), "{stderr}");
    assert!(!String::from_utf8_lossy(&o.stdout).contains("cargo test"), "cargo must not run without the tools");
}

#[test]
fn the_test_script_runs_cargo_test_locked_with_its_arguments_once_every_tool_is_there() {
    let tmp = tempfile::tempdir().unwrap();
    let path = path_with(&tmp.path().join("bin"), &["cargo", "sqlite3", "faketime", "chromium", "python3"]);
    let o = run_script(&path, tmp.path());
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).ends_with("cargo test --locked golden\n"), "{}", String::from_utf8_lossy(&o.stdout));
}

#[test]
fn ci_runs_the_readmes_test_command() {
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(ci.lines().any(|l| l.trim() == "exec scripts/test.sh"), "{ci}");
    assert!(readme.contains("\nscripts/test.sh "), "the README's set-up shows the script");
}

/// A PATH for a root run with apt-get: `id` says 0, `awk` and `tr` are the real ones, and
/// `apt-get` a stand-in that logs its calls to `apt.log` and answers `install -s` with `plan`.
fn root_path_with_apt(dir: &Path, tools: &[&str], plan: &str) -> String {
    let path = path_with(dir, tools);
    for real in ["awk", "tr", "dirname", "cat"] {
        std::os::unix::fs::symlink(which(real), dir.join(real)).unwrap();
    }
    std::fs::remove_file(dir.join("id")).unwrap();
    let write = |name: &str, body: String| {
        std::fs::write(dir.join(name), body).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.join(name), std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    write("id", "#!/bin/sh\necho 0\n".to_string());
    std::fs::write(dir.join("plan.txt"), plan).unwrap();
    let log = dir.join("apt.log");
    write(
        "apt-get",
        format!(
            "#!/bin/sh\necho \"apt-get $*\" >> '{}'\ncase \" $* \" in *\" -s \"*) cat '{}' ;; esac\n",
            log.display(),
            dir.join("plan.txt").display()
        ),
    );
    path
}

fn apt_calls(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("apt.log")).unwrap_or_default().lines().map(str::to_string).collect()
}

#[test]
fn as_root_the_test_script_refuses_an_install_that_would_upgrade_an_installed_package() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    let plan = "Inst libsystemd0 [252.1-1] (252.2-1 Debian:12/stable [amd64])\nInst chromium (120.0-1 Debian:12/stable [amd64])\n";
    let path = root_path_with_apt(&bin, &["cargo", "sqlite3", "faketime", "python3"], plan);
    let o = run_script(&path, tmp.path());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    // Said before anything: what it will install and how to do it by hand.
    assert!(
        stderr.contains("about to install them with apt-get") && stderr.contains("by hand instead: apt-get install chromium"),
        "{stderr}"
    );
    assert!(stderr.contains("would also upgrade installed packages: libsystemd0"), "{stderr}");
    let calls = apt_calls(&bin);
    assert_eq!(
        calls,
        ["apt-get update -qq", "apt-get install -s --no-upgrade --no-install-recommends chromium"],
        "simulated only, nothing installed"
    );
    assert!(!String::from_utf8_lossy(&o.stdout).contains("cargo test"), "cargo must not run");
}

#[test]
fn as_root_the_test_script_installs_only_what_is_missing_when_nothing_installed_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    let plan = "Inst libfaketime (0.9.10-2.1 Debian:12/stable [amd64])\nInst faketime (0.9.10-2.1 Debian:12/stable [amd64])\n";
    let path = root_path_with_apt(&bin, &["cargo", "sqlite3", "chromium", "python3"], plan);
    let o = run_script(&path, tmp.path());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("installing libfaketime faketime"), "{stderr}");
    let calls = apt_calls(&bin);
    assert_eq!(calls.last().map(String::as_str), Some("apt-get install -y -qq --no-upgrade --no-install-recommends faketime"), "{calls:?}");
    assert!(String::from_utf8_lossy(&o.stdout).ends_with("cargo test --locked golden\n"));
}
