//! Protocol coverage: what runs exercised — every task-row transition by writer, in each
//! fault context, and every write that changed no row (sim/judging/coverage/item.rs says what each
//! item means and how it is written). Each run counts its own (`CoverageObserver`, an observer
//! of the event stream); sweeps, merges and explorations add runs' counts up and write
//! `coverage.csv`; `--require-coverage FILE` (`Required`) names what must have been reached.

mod item;
mod observer;
mod required;
mod table;

use std::collections::BTreeMap;
use std::path::Path;

pub use item::{Context, Item, Writer};
pub use observer::CoverageObserver;
pub use required::Required;
pub use table::markdown;

use crate::base::error::{Error, Result};
use crate::judging::oracle::rules::allowed_transitions::{IMPLIED_D10, TABLE_002};

/// How many times each item was reached (items never reached are absent, or 0 when read
/// back from a file that lists them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    counts: BTreeMap<Item, u64>,
}

/// The musician transitions of 002's table and those the text implies, in any context: the
/// items coverage.csv lists even when no run reached them.
fn listed_always() -> impl Iterator<Item = Item> {
    TABLE_002.into_iter().chain(IMPLIED_D10).map(|(from, to)| Item::Transition { writer: Writer::Musician, from, to, context: None })
}

impl Coverage {
    pub fn add(&mut self, item: Item) {
        *self.counts.entry(item).or_insert(0) += 1;
    }

    /// Adds another run's (or sweep's) counts to these.
    pub fn merge(&mut self, other: &Coverage) {
        for (item, n) in &other.counts {
            *self.counts.entry(*item).or_insert(0) += n;
        }
    }

    pub fn count(&self, item: &Item) -> u64 {
        self.counts.get(item).copied().unwrap_or(0)
    }

    /// Every item reached at least once, in order.
    pub fn reached(&self) -> impl Iterator<Item = (&Item, u64)> {
        self.counts.iter().filter(|(_, n)| **n > 0).map(|(item, n)| (item, *n))
    }

    /// coverage.csv: `item,count`, 002's transitions always listed (0 when never reached).
    pub fn csv_bytes(&self) -> Vec<u8> {
        let mut all = self.counts.clone();
        for item in listed_always() {
            all.entry(item).or_insert(0);
        }
        let mut text = String::from("item,count\n");
        for (item, n) in all {
            text.push_str(&format!("{item},{n}\n"));
        }
        text.into_bytes()
    }

    pub fn write(&self, path: &Path) -> Result<()> {
        crate::base::atomic::write_atomically(path, &self.csv_bytes())
    }

    /// Reads a coverage.csv back (bad input names the file and line).
    pub fn read(path: &Path) -> Result<Coverage> {
        let text = crate::base::input_file::read_text_at_most(path, "coverage", crate::base::input_file::MAX_WRITTEN_BYTES)?;
        let mut lines = text.lines().enumerate();
        if lines.next().map(|(_, header)| header) != Some("item,count") {
            return Err(Error::input(format!("{}:1: not a coverage.csv (its header is `item,count`)", path.display())));
        }
        let mut coverage = Coverage::default();
        for (index, line) in lines {
            let bad = |why: String| Error::input(format!("{}:{}: {why}", path.display(), index + 1));
            let (item, count) = line.rsplit_once(',').ok_or_else(|| bad(format!("`{line}`: expected ITEM,COUNT")))?;
            let item = Item::parse(item).map_err(bad)?;
            let count: u64 = count.parse().map_err(|_| bad(format!("`{count}` is no count")))?;
            *coverage.counts.entry(item).or_insert(0) += count;
        }
        Ok(coverage)
    }
}

#[cfg(test)]
mod tests;
