//! A `--require-coverage` file: what a sweep (or a merge of shards) must have reached. One
//! item a line in coverage.csv's text form (sim/judging/coverage/item.rs), e.g.
//!
//! ```text
//! # 002's table, by the musician
//! musician watching->working
//! musician fix_proposed->working after-crash
//! conductor needs_review->fix_proposed during-hang
//! zero-rows heartbeat
//! ```
//!
//! `#` starts a comment; blank lines are ignored. It is read before any run starts: a line
//! that is no item is bad input naming the file and the line.

use std::path::{Path, PathBuf};

use super::{Coverage, Item};
use crate::base::error::{Error, Result};

#[derive(Clone, Debug)]
pub struct Required {
    pub path: PathBuf,
    /// With the line each came from.
    pub items: Vec<(usize, Item)>,
}

impl Required {
    pub fn load(path: &Path) -> Result<Required> {
        let text = crate::base::input_file::read_text(path, "the required coverage")?;
        Required::parse(&text, path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Required> {
        let mut items = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let item = Item::parse(line).map_err(|why| Error::input(format!("{}:{}: {why}", path.display(), index + 1)))?;
            items.push((index + 1, item));
        }
        if items.is_empty() {
            return Err(Error::input(format!("{}: lists no coverage item", path.display())));
        }
        Ok(Required { path: path.to_path_buf(), items })
    }

    /// The required items `coverage` never reached, in the file's order.
    pub fn missing(&self, coverage: &Coverage) -> Vec<Item> {
        self.items.iter().map(|(_, item)| *item).filter(|item| coverage.count(item) == 0).collect()
    }
}
