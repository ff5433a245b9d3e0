//! `rehearsal corpus DIR`: runs a regression corpus (sim/campaign/corpus.rs) and says, entry by
//! entry, whether it still fails with its recorded fingerprint.

use std::path::PathBuf;

use clap::Args;

use super::Outcome;
use crate::base::error::Error;
use crate::campaign::corpus::{describe, Status};

#[derive(Args)]
pub struct CorpusArgs {
    /// The corpus folder: minimized scenarios written by `shrink --into DIR`.
    pub dir: PathBuf,
    /// A file recording how many corpus runs in a row each entry has passed (created when
    /// missing, rewritten whole); without it each run counts alone.
    #[arg(long, value_name = "FILE")]
    pub streaks: Option<PathBuf>,
    /// An entry that passed this many corpus runs in a row is reported for removal.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..))]
    pub remove_after: u64,
}

/// Exit 0 when every entry reproduces its fingerprint or passes; 1 when one fails another way.
pub fn corpus(args: CorpusArgs) -> Result<Outcome, Error> {
    let mut streaks = match &args.streaks {
        Some(path) => crate::campaign::corpus::read_streaks(path)?,
        None => Default::default(),
    };
    let runs = crate::campaign::corpus::run_corpus(&args.dir, &mut streaks)?;
    let mut changed = 0;
    for run in &runs {
        match &run.status {
            Status::Reproduces => println!("reproduces   {}  {}", run.name, describe(&run.recorded)),
            Status::Passes { in_a_row } => {
                println!("passes       {}  ({in_a_row} corpus run(s) in a row; it failed {})", run.name, describe(&run.recorded));
                if run.due_for_removal(args.remove_after) {
                    println!("remove       {}  passed {in_a_row} runs in a row: the flaw no longer shows; delete the entry", run.name);
                }
            }
            Status::Changed { now } => {
                changed += 1;
                println!("changed      {}  recorded {}, now fails {now}", run.name, describe(&run.recorded));
            }
        }
    }
    if let Some(path) = &args.streaks {
        crate::campaign::corpus::write_streaks(path, &streaks)?;
    }
    let reproduces = runs.iter().filter(|r| r.status == Status::Reproduces).count();
    println!(
        "corpus       {} entries: {reproduces} reproduce, {} pass, {changed} fail another way",
        runs.len(),
        runs.len() - reproduces - changed
    );
    Ok(if changed > 0 { Outcome::FAIL } else { Outcome::PASS })
}
