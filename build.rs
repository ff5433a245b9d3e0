//! Captures the build's identity at compile time as `REHEARSAL_BUILD_ID`, which a sweep writes
//! into its folder's manifest.toml so `rehearsal merge` refuses shards of different builds
//! (sim/campaign/manifest.rs). The identity is the crate version, a hash of every file that decides
//! what a run does (the sources under sim/, Cargo.toml, Cargo.lock — it pins the bundled
//! SQLite — and this file) and the compiler's version: two checkouts of one commit built with
//! one toolchain agree on different machines (a CI matrix building once per shard), with no
//! need of git, while any edit, even uncommitted, changes it. Not the binary's own hash: a
//! build embeds its folder's path, so one commit built in two places would differ.

use std::path::{Path, PathBuf};

/// FNV-1a, 64 bits: stable across toolchains (std's hashers are not promised to be), and
/// enough to tell builds apart (this is no defence against someone forging a collision).
fn fnv1a(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

fn files_under(dir: &Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, into);
        } else {
            into.push(path);
        }
    }
}

fn main() {
    let mut files = vec![PathBuf::from("Cargo.toml"), PathBuf::from("Cargo.lock"), PathBuf::from("build.rs")];
    files_under(Path::new("sim"), &mut files);
    files.sort();
    let mut hash = 0xcbf2_9ce4_8422_2325;
    for file in &files {
        // Names with `/` on every platform, so the hash does not depend on the separator.
        hash = fnv1a(hash, file.to_string_lossy().replace('\\', "/").as_bytes());
        hash = fnv1a(hash, &[0]);
        hash = fnv1a(hash, &std::fs::read(file).unwrap_or_default());
        hash = fnv1a(hash, &[0]);
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let compiler = std::process::Command::new(rustc)
        .arg("-V")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "rustc unknown".to_string());
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    println!("cargo:rustc-env=REHEARSAL_BUILD_ID=rehearsal {version}, sources {hash:016x}, {compiler}");
    // A folder is scanned whole for changes (Cargo's rerun-if-changed).
    for watched in ["sim", "Cargo.toml", "Cargo.lock", "build.rs"] {
        println!("cargo:rerun-if-changed={watched}");
    }
}
