//! docs/protocol.md §5, the fidelity table: every row names a seed, a shipped scenario that
//! runs the behaviour, and a status that is "faithful" or names the choice or variant that
//! differs (issue 27: "every row of the fidelity table points at a scenario that runs it").

use crate::support::root;

/// The table's rows, as (behaviour, seed, scenario, status) cells.
fn rows() -> Vec<[String; 4]> {
    let doc = std::fs::read_to_string(root().join("docs/protocol.md")).unwrap();
    let start = doc.find("\n## 5. Fidelity table\n").expect("docs/protocol.md has `## 5. Fidelity table`");
    let section = &doc[start + 1..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |end| end + 3)];
    let mut lines = section.lines().filter(|l| l.starts_with('|'));
    assert_eq!(lines.next(), Some("| behaviour | seed | scenario | status |"), "the table's header");
    // The conductor's rows, then the musician's under their own header.
    lines
        .filter(|line| *line != "| behaviour | seed | scenario | status |" && !line.starts_with("| ---"))
        .map(|line| {
            let cells: Vec<String> = line.trim_matches('|').split(" | ").map(|c| c.trim().to_string()).collect();
            assert_eq!(cells.len(), 4, "four cells: {line}");
            [cells[0].clone(), cells[1].clone(), cells[2].clone(), cells[3].clone()]
        })
        .collect()
}

/// Seed behaviours no shipped scenario runs yet (issue 27 item 5 is open for these): their
/// rows say so ("not exercised", "not modelled"). A row missing its scenario that is not
/// listed here fails, and so does a listed one that has gained a scenario (clear it here).
const KNOWN_GAPS: &[&str] = &[];

/// A scenario cell's `.toml` paths, from the repository root or from `scenarios/`.
fn scenario_files(cell: &str) -> Vec<std::path::PathBuf> {
    let paths = cell.split('`').skip(1).step_by(2).filter(|p| p.ends_with(".toml"));
    paths.map(|p| if root().join(p).is_file() { root().join(p) } else { root().join("scenarios").join(p) }).collect()
}

#[test]
fn every_row_names_its_seed_a_shipped_scenario_and_a_status() {
    let rows = rows();
    assert!(rows.len() >= 15, "{} rows", rows.len());
    let variants = rehearsal::vocab::VARIANT_NAMES;
    for [behaviour, seed, scenario, status] in &rows {
        assert!(["000", "002", "003", "004"].iter().any(|s| seed.contains(s)), "{behaviour}: no seed named in `{seed}`");
        let files = scenario_files(scenario);
        let gap = KNOWN_GAPS.contains(&behaviour.as_str());
        assert_eq!(files.is_empty(), gap, "{behaviour}: scenario cell `{scenario}` (listed as a known gap: {gap})");
        if gap {
            assert!(status.contains("not exercised") || status.contains("not modelled"), "{behaviour}: a gap's status says so: `{status}`");
            continue;
        }
        for path in &files {
            assert!(path.is_file(), "{behaviour}: {} is not a shipped scenario", path.display());
        }
        // "faithful", or a choice (C-number) or variant that differs.
        let names_choice = status.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| {
            w.strip_prefix('C').is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                || w.strip_prefix('D').is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        });
        let names_variant = variants.iter().any(|v| status.contains(&format!("`{v}`")));
        assert!(status.starts_with("faithful") || names_choice || names_variant, "{behaviour}: status `{status}`");
    }
}

#[test]
fn every_conductor_choice_cited_in_the_table_has_its_section() {
    let doc = std::fs::read_to_string(root().join("docs/protocol.md")).unwrap();
    for [behaviour, _, _, status] in rows() {
        for word in status.split(|c: char| !c.is_ascii_alphanumeric()) {
            if let Some(n) = word.strip_prefix('C').filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) {
                assert!(doc.contains(&format!("\n### C{n}. ")), "{behaviour}: C{n} has no section");
            }
        }
    }
}

/// One run a row cites: "`path.toml` seed N (shows `a` → `b`; `c`)".
#[derive(Debug, Clone, PartialEq)]
struct Citation {
    scenario: String,
    seed: u64,
    /// Chains of strings the run's trace holds in order (one record at or after the other).
    chains: Vec<Vec<String>>,
}

/// The citations of a scenario cell: each `.toml` path followed by " seed N (shows …)".
fn citations(cell: &str) -> Vec<Citation> {
    let mut out = Vec::new();
    let mut rest = cell;
    while let Some(open) = rest.find('`') {
        let Some(close) = rest[open + 1..].find('`').map(|c| open + 1 + c) else { break };
        let path = &rest[open + 1..close];
        rest = &rest[close + 1..];
        let Some(after) = rest.strip_prefix(" seed ").filter(|_| path.ends_with(".toml")) else { continue };
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        let Ok(seed) = digits.parse() else { continue };
        rest = &after[digits.len()..];
        let mut chains = Vec::new();
        if let Some(shows) = rest.strip_prefix(" (shows ") {
            let end = shows.find("`)").map(|e| e + 1).expect("a shows list ends with `)");
            chains = shows[..end].split("; ").map(|chain| chain.split(" → ").map(|t| t.trim_matches('`').to_string()).collect()).collect();
            rest = &shows[end + 1..];
        }
        let scenario = if root().join(path).is_file() { path.to_string() } else { format!("scenarios/{path}") };
        out.push(Citation { scenario, seed, chains });
    }
    out
}

/// The records of a trace.csv (a quoted field may hold line breaks), header left out.
fn trace_records(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut quoted) = (0, false);
    for (i, b) in text.bytes().enumerate() {
        match b {
            b'"' => quoted = !quoted,
            b'\n' if !quoted => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.into_iter().skip(1).collect()
}

/// The first element of `chain` missing from `records` in order (each at or after the last).
fn missing_in_order<'a>(records: &[&str], chain: &'a [String]) -> Option<&'a str> {
    let mut at = 0;
    for want in chain {
        match records[at..].iter().position(|r| r.contains(want.as_str())) {
            Some(found) => at += found,
            None => return Some(want),
        }
    }
    None
}

#[test]
fn a_citation_is_read_from_its_cell_and_a_chain_checked_in_order() {
    let cell = "`scenarios/quickstart.toml` seed 42 (shows `a,b` → `c`; `d`) (`complete`), `faults/x.toml` (no seed)";
    let cited = citations(cell);
    assert_eq!(cited.len(), 1, "{cited:?}");
    assert_eq!(cited[0].scenario, "scenarios/quickstart.toml");
    assert_eq!(cited[0].seed, 42);
    assert_eq!(cited[0].chains, vec![vec!["a,b".to_string(), "c".to_string()], vec!["d".to_string()]]);
    let text = "header\n1,a,b\n2,\"x\nc\"\n3,d\n";
    let records = trace_records(text);
    assert_eq!(records.len(), 3);
    assert_eq!(missing_in_order(&records, &["a,b".into(), "c".into()]), None);
    assert_eq!(missing_in_order(&records, &["c".into(), "a,b".into()]), Some("a,b"), "out of order");
    assert_eq!(missing_in_order(&records, &["zz".into()]), Some("zz"));
}

/// Issue 42 item 7: every "faithful" row cites a run (scenario, seed) and what its trace
/// shows; each cited run passes and its trace holds every chain in order.
#[test]
fn every_faithful_row_cites_a_run_that_shows_it() {
    let mut runs: Vec<(String, u64)> = Vec::new();
    let mut claims: Vec<(String, Citation)> = Vec::new();
    for [behaviour, _, scenario, status] in rows() {
        if !status.starts_with("faithful") {
            continue;
        }
        let cited: Vec<Citation> = citations(&scenario).into_iter().filter(|c| !c.chains.is_empty()).collect();
        assert!(!cited.is_empty(), "{behaviour}: a faithful row cites a scenario, a seed and what its run shows: `{scenario}`");
        for c in cited {
            if !runs.contains(&(c.scenario.clone(), c.seed)) {
                runs.push((c.scenario.clone(), c.seed));
            }
            claims.push((behaviour.clone(), c));
        }
    }
    assert!(claims.len() >= 40, "{} claims", claims.len());
    let tmp = tempfile::tempdir().unwrap();
    let traces: Vec<String> = crate::support::on_two_threads(runs.len(), |i| {
        let (path, seed) = &runs[i];
        let out = tmp.path().join(format!("r{i}"));
        let o = crate::support::rehearsal(&["run", path, "--seed", &seed.to_string(), "--out", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{path} seed {seed} does not pass: {}", crate::support::stdout(&o));
        std::fs::read_to_string(out.join("trace.csv")).unwrap()
    });
    let mut wrong = Vec::new();
    for (behaviour, c) in &claims {
        let i = runs.iter().position(|r| *r == (c.scenario.clone(), c.seed)).expect("run");
        let records = trace_records(&traces[i]);
        for chain in &c.chains {
            if let Some(missing) = missing_in_order(&records, chain) {
                wrong.push(format!("{behaviour}: {} seed {}: `{missing}` not shown (chain {chain:?})", c.scenario, c.seed));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
