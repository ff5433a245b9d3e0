//! pairs.jsonl: what summary.md and junit.xml need of each pair beyond its results.csv row
//! (the rules its verdict showed, its latency measurements, its wall time), one JSON object
//! a line in results.csv's order. A sweep writes it so `rehearsal merge` can write the
//! summary.md an unsharded sweep writes, byte for byte, from shards (sim/campaign/merge.rs).

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::base::atomic::write_atomically;
use crate::base::error::{Error, Result};
use crate::judging::oracle::Measurements;

pub const PAIR_DETAILS_FILE: &str = "pairs.jsonl";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairDetails {
    pub scenario: String,
    pub variant: String,
    pub seed: u64,
    /// Every rule its verdict showed, allowed ones included (summary.md counts them).
    pub rules: Vec<String>,
    pub measured: Measurements,
    /// Wall-clock time of the pair (junit.xml only; differs from run to run).
    pub wall_ms: u64,
}

impl PairDetails {
    pub fn key(&self) -> (String, String, u64) {
        (self.scenario.clone(), self.variant.clone(), self.seed)
    }
}

pub fn write(dir: &Path, pairs: &[PairDetails]) -> Result<()> {
    let mut text = String::new();
    for pair in pairs {
        let line = serde_json::to_string(pair).map_err(|e| Error::harness(format!("{PAIR_DETAILS_FILE}: {e}")))?;
        let _ = writeln!(text, "{line}");
    }
    write_atomically(&dir.join(PAIR_DETAILS_FILE), text.as_bytes())
}

/// Reads pairs.jsonl back; a bad line is bad input naming the file and line.
pub fn read(dir: &Path) -> Result<Vec<PairDetails>> {
    let path = dir.join(PAIR_DETAILS_FILE);
    let text = crate::base::input_file::read_text_at_most(&path, "pair details", crate::base::input_file::MAX_WRITTEN_BYTES)?;
    text.lines()
        .enumerate()
        .map(|(index, line)| serde_json::from_str(line).map_err(|e| Error::input(format!("{}:{}: {e}", path.display(), index + 1))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_read_back_as_written_and_a_bad_line_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let measured = Measurements { message_notice_ms: vec![3, 1, 2], stale_declared: 4, ..Measurements::default() };
        let pair = PairDetails {
            scenario: "a.toml".into(),
            variant: "default".into(),
            seed: 5,
            rules: vec!["budget".into()],
            measured,
            wall_ms: 12,
        };
        write(dir.path(), &[pair.clone(), PairDetails { seed: 6, ..pair.clone() }]).unwrap();
        let back = read(dir.path()).unwrap();
        assert_eq!(back, [pair.clone(), PairDetails { seed: 6, ..pair }]);
        std::fs::write(dir.path().join(PAIR_DETAILS_FILE), "{}\n").unwrap();
        let e = read(dir.path()).unwrap_err().to_string();
        assert!(e.contains("pairs.jsonl:1:"), "{e}");
    }
}
