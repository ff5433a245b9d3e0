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

fn run_script(path: &str, home: &Path) -> Output {
    Command::new(which("bash")).arg(root().join("scripts/test.sh")).arg("golden").env("PATH", path).env("HOME", home).output().unwrap()
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
