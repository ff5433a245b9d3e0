//! The 80 % context ceiling (000 "Context Monitoring & Break Point Logic"; the Context-Tight
//! Break Point example's "80% context ceiling"; `CEILING=80` of check-context-headroom.sh)
//! under the variant `ceiling-before-work` (docs/protocol.md C32) is never crossed: the
//! musician checks before every agent launch and every step, with its predicted cost, and hands
//! off while it still can. Only an injected context spike (a fault the musician cannot predict)
//! may push a session past it. By default (000) the ceiling is met after an agent, so a large
//! return can end above it (tests/it/context_control.rs).

use std::path::Path;

use rehearsal::input::scenario::{Odds, Scenario};

use crate::support::{ctx_of, on_two_threads, rehearsal, root, shipped_scenarios, stderr, stdout};

/// Every `[ctx: NN%]` of every `temp/*-status` file of a run folder, with its file and line.
fn status_contexts(dir: &Path) -> Vec<(String, String, i64)> {
    let temp = dir.join("temp");
    let Ok(entries) = std::fs::read_dir(&temp) else { return Vec::new() };
    let mut files: Vec<_> = entries.map(|e| e.unwrap().path()).filter(|p| p.to_string_lossy().ends_with("-status")).collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        for line in std::fs::read_to_string(&file).unwrap().lines() {
            out.push((name.clone(), line.to_string(), ctx_of(line)));
        }
    }
    out
}

#[test]
fn no_status_line_crosses_the_context_ceiling_in_any_shipped_run_without_spikes() {
    let scenarios: Vec<(String, i64)> = shipped_scenarios()
        .into_iter()
        .filter_map(|path| {
            let loaded = Scenario::load(&root().join(&path)).unwrap();
            let scenario = rehearsal::input::variant::with_variants(&loaded, &[]).unwrap();
            // Spikes are faults the musician cannot predict; runs without them must stay under.
            let spikes = scenario.faults.context_spike_probability;
            (spikes == Odds::Unset || spikes == Odds::Fixed(0.0)).then_some((path, scenario.context.ceiling_pct))
        })
        .collect();
    assert!(scenarios.len() >= 20, "the shipped scenarios without spikes: {scenarios:?}");
    let tmp = tempfile::tempdir().unwrap();
    let over: Vec<String> = on_two_threads(scenarios.len(), |i| {
        let (path, ceiling) = &scenarios[i];
        let out = tmp.path().join(format!("r{i}"));
        let o = rehearsal(&["run", path, "--out", out.to_str().unwrap(), "--variant", "ceiling-before-work"]);
        assert!(matches!(o.status.code(), Some(0 | 1)), "{path}: {}\n{}", stdout(&o), stderr(&o));
        let contexts = status_contexts(&out);
        assert!(!contexts.is_empty() || path.ends_with("guard-block.toml"), "{path}: no status lines");
        contexts
            .into_iter()
            .filter(|(_, _, ctx)| ctx > ceiling)
            .map(|(file, line, _)| format!("{path}: {file}: `{line}` is above the {ceiling}% ceiling"))
            .collect::<Vec<_>>()
    })
    .into_iter()
    .flatten()
    .collect();
    assert!(over.is_empty(), "{}", over.join("\n"));
}
