//! Reports people look at: timeline.html rendered in headless Chromium (lanes, states,
//! faults and the violation must be in the rendered page), valid SVG plots, summary.md.

use std::path::Path;
use std::process::Command;

use crate::support::{rehearsal, root, stdout};

/// Chromium as the machine probe runs it: headless, no sandbox (root), no background
/// networking (the network is closed), a fresh profile.
fn render(file: &Path, profile: &Path) -> String {
    let o = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", file.display()))
        .output()
        .expect("chromium runs (.ci/run installs the Debian package `chromium`)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn a_fault_runs_timeline_renders_with_its_lanes_states_faults_and_violation() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let o = rehearsal(&["run", root().join("scenarios/faults/zombie.toml").to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let html = std::fs::read_to_string(out.join("timeline.html")).unwrap();
    // The SVG namespace is a name, not a fetch; nothing else may point off the machine.
    let without_namespace = html.replace("http://www.w3.org/2000/svg", "");
    assert!(!without_namespace.contains("http://") && !without_namespace.contains("https://"), "no network references");
    assert!(!html.contains("<script src") && !html.contains("<link"), "self-contained");
    let dom = render(&out.join("timeline.html"), &tmp.path().join("profile"));
    assert!(dom.contains("<svg id=\"timeline\""), "the timeline SVG is in the rendered page");
    for lane in [">task-01<", ">task-02<", ">S1<", ">S2<"] {
        assert!(dom.contains(lane), "lane {lane} missing");
    }
    for state in ["state-working", "state-needs_review", "state-complete"] {
        assert!(dom.contains(state), "state span {state} missing");
    }
    assert!(dom.contains("class=\"fault hang\""), "the hang is shaded");
    assert!(dom.contains("id=\"first-violation\"") && dom.contains("FAIL: owner-writes-only"), "the violation is marked and explained");
    assert!(dom.contains("class=\"mark heartbeat\"") && dom.contains("class=\"mark poll\"") && dom.contains("class=\"mark message\""));
    assert!(dom.contains("<title>#"), "marks carry their trace row for hovering");
}

#[test]
fn every_plot_is_valid_svg_and_the_summary_states_verdict_settings_and_replay() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let o = rehearsal(&["run", root().join("scenarios/quickstart.toml").to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let mut plots: Vec<_> = std::fs::read_dir(out.join("plots")).unwrap().map(|e| e.unwrap().path()).collect();
    plots.sort();
    assert_eq!(plots.len(), 7, "{plots:?}");
    for plot in &plots {
        let text = std::fs::read_to_string(plot).unwrap();
        assert!(text.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""), "{}", plot.display());
        // Chromium parses it as XML: a malformed file renders a parser error instead.
        let dom = render(plot, &tmp.path().join("profile"));
        assert!(
            !dom.contains("parsererror") && !dom.contains("This page contains the following errors"),
            "{} is not valid SVG",
            plot.display()
        );
    }
    let heartbeat = std::fs::read_to_string(out.join("plots/heartbeat-age.svg")).unwrap();
    assert!(heartbeat.contains("refresh 480 s") && heartbeat.contains("stale 540 s"));
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    for part in [
        "**Verdict: PASS**",
        "| heartbeat refresh / staleness | 480 s / 540 s |",
        "| task-01 | complete |",
        "| heartbeat_age_s |",
        "Replay: `rehearsal run ",
    ] {
        assert!(summary.contains(part), "summary.md lacks `{part}`:\n{summary}");
    }
    assert!(!out.join("comms.db-wal").exists() && !out.join("comms.db-shm").exists(), "reports leave comms.db alone");
}
