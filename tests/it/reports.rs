//! Reports people look at: timeline.html rendered in headless Chromium (lanes, states,
//! faults and the violation must be in the rendered page), valid SVG plots, summary.md.

use std::path::Path;
use std::process::Command;

use crate::support::{rehearsal, root, stdout};

/// Chromium as the machine probe runs it: headless, no sandbox (root), no background
/// networking (the network is closed), a fresh profile.
pub fn render(file: &Path, profile: &Path) -> String {
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
        .expect("chromium runs (scripts/test.sh installs the Debian package `chromium`)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The `attribute="value"` values of every element of `dom` whose class is `class`.
fn attribute_of(dom: &str, class: &str, attribute: &str) -> Vec<String> {
    dom.split(&format!("class=\"{class}\""))
        .skip(1)
        .filter_map(|rest| {
            let tag = &rest[..rest.find('>')?];
            Some(tag.split(&format!(" {attribute}=\"")).nth(1)?.split('"').next()?.to_string())
        })
        .collect()
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
    for lane in [">task-01<", ">task-02<", ">S1 (", ">S2 ("] {
        assert!(dom.contains(lane), "lane {lane} missing");
    }
    for state in ["state-working", "state-needs_review", "state-complete"] {
        assert!(dom.contains(state), "state span {state} missing");
    }
    assert!(dom.contains("id=\"first-violation\"") && dom.contains("FAIL: owner-writes-only"), "the violation is marked and explained");
    assert!(dom.contains("class=\"mark heartbeat\"") && dom.contains("class=\"mark poll\"") && dom.contains("class=\"mark message\""));
    assert!(dom.contains("data-detail=\"marks\""), "a small run's heartbeats and polls are drawn one by one");
    assert!(dom.contains("<title>#"), "marks carry their trace row for hovering");
}

/// Issue 18 item 11: a hang shaded on its own session's lane, the violating write marked on
/// its lane, sessions named alike in the banner and on the lanes, round axis ticks, and a
/// page no wider than the window.
#[test]
fn the_timeline_puts_hangs_and_the_violating_write_on_their_lanes_and_fits_the_window() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let o = rehearsal(&["run", root().join("scenarios/faults/zombie.toml").to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let dom = render(&out.join("timeline.html"), &tmp.path().join("profile"));
    // Session lanes are 22 units high: the hang covers one lane, not the whole drawing.
    let heights = attribute_of(&dom, "fault hang", "height");
    assert!(!heights.is_empty() && heights.iter().all(|h| h == "22.0"), "{heights:?}");
    assert_eq!(dom.matches("id=\"violating-write\"").count(), 1, "the violating write is marked once");
    // Every session the banner names (`S1 (ad660549…)`) is a lane of that name.
    let banner = dom.split("id=\"violation\"").nth(1).unwrap().split("</div>").next().unwrap();
    let named: Vec<&str> = banner
        .match_indices("session S")
        .map(|(i, _)| &banner[i + 8..])
        .map(|rest| &rest[..rest.find('…').unwrap() + '…'.len_utf8() + 1])
        .collect();
    assert!(!named.is_empty(), "{banner}");
    for name in named {
        assert!(dom.contains(&format!(">{name}</text>")), "the banner's {name} is no lane label");
    }
    // Ticks at round times: one step from a fixed list, every tick a multiple of it.
    let ticks: Vec<i64> = attribute_of(&dom, "tick", "data-t").iter().map(|t| t.parse().unwrap()).collect();
    assert!(ticks.len() >= 3, "{ticks:?}");
    let step = ticks[1] - ticks[0];
    let round = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];
    assert!(round.iter().any(|s| s * 1000 == step) && ticks.iter().all(|t| t % step == 0), "{ticks:?}");
    // Labelled as round times read: `15 min`, `1 h 30 min`, never `0h13m34s`.
    let labels: Vec<&str> =
        dom.split("class=\"tick\"").skip(1).map(|rest| rest.split('>').nth(1).unwrap().split('<').next().unwrap()).collect();
    for (t, label) in ticks.iter().zip(&labels) {
        let (h, m, s) = (t / 3_600_000, t / 60_000 % 60, t / 1000 % 60);
        let parts: Vec<String> = [(h, "h"), (m, "min"), (s, "s")].iter().filter(|(n, _)| *n > 0).map(|(n, u)| format!("{n} {u}")).collect();
        let expected = if parts.is_empty() { "0".to_string() } else { parts.join(" ") };
        assert_eq!(*label, expected, "tick at t={t}");
    }
    assert!(dom.contains("data-overflow-px=\"0\""), "the page is no wider than the window");
}

/// Issue 17: a day of 32 musicians gives a page under 5 MB that opens, its heartbeats and polls
/// as density bands until zoomed in, its first violation marked.
#[test]
fn a_fleet_days_timeline_is_small_and_opens_with_density_bands() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    // A quarter of the day keeps the test short; the bands start well below that.
    let text = std::fs::read_to_string(root().join("scenarios/bench/fleet-day.toml"))
        .unwrap()
        .replace("sim_time_max_ms = 86_400_000", "sim_time_max_ms = 21_600_000");
    let scenario = tmp.path().join("fleet-quarter.toml");
    std::fs::write(&scenario, text).unwrap();
    let o = rehearsal(&["run", scenario.to_str().unwrap(), "--seed", "1", "--out", out.to_str().unwrap()]);
    assert!(o.status.code() == Some(0) || o.status.code() == Some(1), "{}", stdout(&o));
    let bytes = std::fs::metadata(out.join("timeline.html")).unwrap().len();
    assert!(bytes < 5_000_000 / 4, "{bytes} bytes for a quarter of the day");
    let dom = render(&out.join("timeline.html"), &tmp.path().join("profile"));
    assert!(dom.contains("data-detail=\"bands\"") && dom.contains("class=\"band poll\""), "too many polls to draw one by one");
    assert!(!dom.contains("class=\"mark poll\""));
    assert!(dom.contains("id=\"first-violation\""), "the first violation is marked");
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
    assert!(!out.join("plots/heartbeat-age.svg").with_extension("png").exists());
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

/// The rows (y, in pixels) where Chromium painted the heartbeat plot's threshold colour
/// (#d0021b) across most of the plot: the SVG drawn on a canvas and its pixels read.
fn red_rows(svg: &Path, dir: &Path) -> Vec<u32> {
    use std::io::Write as _;
    let text = std::fs::read_to_string(svg).unwrap();
    let encoded: String = text.bytes().map(|b| format!("%{b:02X}")).collect();
    let page = dir.join("pixels.html");
    let mut f = std::fs::File::create(&page).unwrap();
    write!(
        f,
        "<!doctype html><body><pre id=\"rows\">waiting</pre><script>\
        var img = new Image(); img.onload = function () {{\
          var c = document.createElement('canvas'); c.width = 720; c.height = 360;\
          var g = c.getContext('2d'); g.fillStyle = '#fff'; g.fillRect(0, 0, 720, 360); g.drawImage(img, 0, 0);\
          var d = g.getImageData(0, 0, 720, 360).data, rows = [];\
          for (var y = 0; y < 360; y++) {{ var n = 0; for (var x = 0; x < 720; x++) {{ var i = (y * 720 + x) * 4;\
            if (Math.abs(d[i] - 208) < 40 && d[i + 1] < 70 && d[i + 2] < 90) n++; }} if (n > 200) rows.push(y); }}\
          document.getElementById('rows').textContent = 'rows:' + rows.join(','); }};\
        img.src = 'data:image/svg+xml,{encoded}';</script></body>"
    )
    .unwrap();
    drop(f);
    let o = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&o.stdout).into_owned();
    let rows = dom.split("rows:").nth(1).unwrap_or_else(|| panic!("no pixels read: {dom}")).split('<').next().unwrap();
    rows.split(',').filter(|r| !r.is_empty()).map(|r| r.parse().unwrap()).collect()
}

/// Issue 18 item 1: a 300/360 s scenario's heartbeat plot draws its lines at 300 and 360 s
/// (read off Chromium's pixels against the plot's own y axis), and no task after it completes.
#[test]
fn the_heartbeat_plots_threshold_lines_follow_the_scenario_on_screen() {
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("scenarios/quickstart.toml"))
        .unwrap()
        .replace("heartbeat_refresh_s = 480", "heartbeat_refresh_s = 300")
        .replace("[conductor]\n", "[conductor]\nstaleness_s = 360\n");
    assert!(text.contains("staleness_s = 360") && text.contains("heartbeat_refresh_s = 300"));
    let scenario = tmp.path().join("fast-heartbeat.toml");
    std::fs::write(&scenario, text).unwrap();
    let out = tmp.path().join("run");
    let o = rehearsal(&["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let svg_path = out.join("plots/heartbeat-age.svg");
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    assert!(svg.contains(">refresh 300 s</text>") && svg.contains(">stale 360 s</text>"), "{svg}");
    assert!(!svg.contains("480 s") && !svg.contains("540 s"), "{svg}");
    // The y axis: its top tick (at y=30) is the scale's maximum; 0 is at y=320.
    let top: f64 = svg.split("text-anchor=\"end\">").last().unwrap().split('<').next().unwrap().parse().unwrap();
    assert!(top < 1000.0, "the axis ends near the thresholds, not at a completed task's age: {top}");
    let py = |v: f64| 320.0 - v / top * 290.0;
    let rows = red_rows(&svg_path, tmp.path());
    for (value, y) in [(300.0, py(300.0)), (360.0, py(360.0))] {
        assert!(rows.iter().any(|r| (f64::from(*r) - y).abs() <= 2.0), "no line drawn at {value} s (y≈{y:.0}): red rows {rows:?}");
    }
    assert!(rows.iter().all(|r| (f64::from(*r) - py(300.0)).abs() <= 2.0 || (f64::from(*r) - py(360.0)).abs() <= 2.0), "{rows:?}");
}

/// scenarios/regression/zombie-owner-writes.toml: its crash is detected late because the
/// conductor was reviewing when the heartbeat went stale. latency.csv splits every
/// measurement into causes that sum to it; summary.md, the budget violation and the timeline
/// name the review as the breach's cause.
#[test]
fn a_budget_breach_is_explained_by_its_causes_in_every_report() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    // zombie-owner-writes' crash, detected after a review, is within its derived budget (issue
    // 28): the copy sets the budget the seeds' numbers alone gave (582 s) to breach it.
    let text = std::fs::read_to_string(root().join("scenarios/regression/zombie-owner-writes.toml")).unwrap();
    let text = text.replace("violations = [\"liveness\",", "violations = [\"budget\", \"liveness\",");
    let copy = tmp.path().join("zombie-owner-writes.toml");
    std::fs::write(&copy, format!("{text}\n[budgets]\ncrash_detect_ms_max = 582000\n")).unwrap();
    let o = rehearsal(&["run", copy.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let mut csv = csv::Reader::from_path(out.join("latency.csv")).unwrap();
    let header = csv.headers().unwrap().clone();
    let column = |name: &str| header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"));
    let components: Vec<usize> = header
        .iter()
        .enumerate()
        .filter(|(_, h)| {
            h.ends_with("_ms") && !h.starts_with("start") && !h.starts_with("end") && !h.starts_with("total") && !h.starts_with("excluded")
        })
        .map(|(i, _)| i)
        .collect();
    assert_eq!(components.len(), 13, "{header:?}");
    let mut crash_rows = 0;
    for row in csv.records() {
        let row = row.unwrap();
        let sum: i64 = components.iter().map(|i| row[*i].parse::<i64>().unwrap()).sum();
        assert_eq!(sum, row[column("total_ms")].parse::<i64>().unwrap(), "{row:?}");
        if &row[column("measurement")] == "crash_detect_ms" {
            crash_rows += 1;
            assert_eq!((&row[column("dominant")], &row[column("reviews")]), ("conductor_review", "task-01:114000"), "{row:?}");
        }
    }
    assert_eq!(crash_rows, 1);
    let violations = std::fs::read_to_string(out.join("violations.csv")).unwrap();
    assert!(
        violations
            .contains("dominant cause (beyond the heartbeat threshold): conductor in a review 114.0 s (17 %) [reviews of task-01 114.0 s]"),
        "{violations}"
    );
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("### Budget breaches and their causes"), "{summary}");
    assert!(
        summary.contains("| crash_detect_ms | 686676 | 582000 | task-01 | 900000..1586676 | conductor_poll | conductor in a review |"),
        "{summary}"
    );
    let timeline = std::fs::read_to_string(out.join("timeline.html")).unwrap();
    assert!(
        timeline.contains("<rect class=\"breach\"")
            && timeline.contains("crash_detect_ms 686676 over its budget 582000 (task-01, t=900000..1586676 ms)")
    );
}

/// `REHEARSAL_TIMINGS=1` (sim/run/timings.rs) prints a line per phase of `run` and changes no
/// output file; `run`'s reports come from the model streamed during the run, not from reading
/// trace.csv back (no "reports: model" phase: that is the fallback, issue 47 item 3).
#[test]
fn timings_print_each_phase_change_no_file_and_show_the_streamed_model_was_used() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = root().join("scenarios/quickstart.toml");
    let run = |name: &str, timings: &str| {
        let out = tmp.path().join(name);
        let started = std::time::Instant::now();
        let o = Command::new(env!("CARGO_BIN_EXE_rehearsal"))
            .args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap()])
            .current_dir(root())
            .env_remove("REHEARSAL_SEED")
            .env("REHEARSAL_TIMINGS", timings)
            .output()
            .unwrap();
        (out, o, started.elapsed().as_secs_f64() * 1000.0)
    };
    let (timed, o, process_ms) = run("timed", "1");
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let phases: Vec<&str> = err.lines().filter_map(|l| l.strip_prefix("rehearsal: timing ")).collect();
    for phase in [
        "load, plan, claim",
        "run: simulation",
        "run: verdict",
        "reports: streamed model",
        "reports: timeline build",
        "reports: plots",
        "whole command",
    ] {
        assert!(phases.iter().any(|p| p.starts_with(phase) && p.contains(" ms (")), "no {phase:?} line in {err}");
    }
    assert!(!phases.iter().any(|p| p.starts_with("reports: model ")), "the reports read trace.csv back: {err}");
    // The figures are milliseconds of this process: the whole command within the process's
    // life as the test saw it, and the simulation within the whole command.
    let ms_of = |phase: &str| -> f64 {
        let line = phases.iter().find(|p| p.starts_with(phase)).unwrap();
        line[phase.len()..].split_whitespace().next().unwrap().parse().unwrap()
    };
    let (whole_ms, simulation_ms) = (ms_of("whole command"), ms_of("run: simulation"));
    assert!(whole_ms <= process_ms, "whole command {whole_ms} ms, the process lived {process_ms} ms");
    assert!(simulation_ms > 0.0 && simulation_ms <= whole_ms, "simulation {simulation_ms} ms of {whole_ms} ms");
    let (plain, o, _) = run("plain", "0");
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("rehearsal: timing"), "REHEARSAL_TIMINGS=0 prints nothing");
    for file in ["trace.csv", "comms.db", "violations.csv"] {
        assert_eq!(std::fs::read(timed.join(file)).unwrap(), std::fs::read(plain.join(file)).unwrap(), "{file} differs");
    }
    for file in ["timeline.html", "summary.md"] {
        let text = |dir: &Path| std::fs::read_to_string(dir.join(file)).unwrap().replace(dir.to_str().unwrap(), "OUT");
        assert_eq!(text(&timed), text(&plain), "{file} differs beyond its folder's path");
    }
}
