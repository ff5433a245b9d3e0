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
