//! A campaign's runs on the worker pool, and the rows of those that finished, as they
//! finish. Each row is appended to the campaign's journal before it is counted (a killed
//! command keeps every run it finished: sim/base/results_journal.rs), the CSV is checkpointed
//! (whole, in job order) after the first `CHECKPOINT_EVERY` rows and then each time a quarter
//! more have finished (`next_checkpoint`), and the progress line moves. When
//! the campaign ends its files are written whole and the journal goes (`Campaign::finish`);
//! `read_rows` reads a folder a kill left: the CSV with the rows only the journal holds.

use std::path::Path;
use std::sync::Mutex;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::base::error::Result;
use crate::base::results_journal::Journal;
use crate::campaign::pool::{Caught, Hooks};
use crate::campaign::progress::Progress;

/// Finished runs between two checkpoints of a campaign's CSV, at least.
pub const CHECKPOINT_EVERY: usize = 25;

/// The count of finished rows at which the CSV is checkpointed next, after one at `count`.
/// Each checkpoint writes every row so far (synced), under the lock the workers record their
/// rows by: at a fixed step a long campaign's checkpoints cost the square of its rows (5,388
/// runs of an exploration rewrote explore.csv 215 times). Growing the step with the rows
/// keeps their cost a few times that of writing the CSV once; the journal holds every
/// finished row between two checkpoints, so a kill loses none (`read_rows`).
fn next_checkpoint(count: usize) -> usize {
    count + CHECKPOINT_EVERY.max(count / 4)
}

/// Runs `work` on every job with `jobs` threads, results in the jobs' order whatever
/// `jobs`: a job's panic becomes `panicked(job, message)`, a job Ctrl-C (or `stop`) kept
/// from starting is `None`. `done` sees each finished job's index and result on the worker
/// that ran it, as it finishes.
pub fn map<J, R>(
    jobs: usize,
    items: &[J],
    work: impl Fn(&J) -> R + Sync,
    panicked: impl Fn(&J, &str) -> R + Sync,
    stop: impl Fn() -> bool + Sync,
    done: impl Fn(usize, &R) + Sync,
) -> Vec<Option<R>>
where
    J: Sync,
    R: Send,
{
    let on_done = |index: usize, caught: &Caught<R>| match caught {
        Ok(result) => done(index, result),
        Err(panic) => done(index, &panicked(&items[index], panic)),
    };
    let results = crate::campaign::pool::map_with(jobs, items, work, Hooks { should_stop: stop, on_done });
    results.into_iter().zip(items).map(|(caught, item)| caught.map(|c| c.unwrap_or_else(|panic| panicked(item, &panic)))).collect()
}

/// A journal line: the row and its job's index (0 in a journal written without one).
#[derive(Serialize, Deserialize)]
pub(crate) struct Entry<Row> {
    #[serde(default)]
    pub(crate) index: usize,
    #[serde(flatten)]
    pub(crate) row: Row,
}

/// Writes a campaign's CSV (and its marker) from the rows finished so far, in job order.
type Checkpoint<'a, Row> = Box<dyn Fn(&[Row]) -> Result<()> + Sync + 'a>;

/// The rows finished so far, with their jobs' indexes.
pub struct Ledger<'a, Row> {
    /// The rows so far, and the count at which the next checkpoint is due.
    finished: Mutex<(Vec<(usize, Row)>, usize)>,
    journal: Option<Journal>,
    planned: usize,
    progress: Progress,
    checkpoint: Checkpoint<'a, Row>,
}

impl<'a, Row: Clone + Serialize> Ledger<'a, Row> {
    /// A ledger of `planned` runs, journaled in `journal` (created empty) when there is one;
    /// `checkpoint` writes the CSV (and the marker) from the rows so far, in job order.
    pub fn new(
        journal: Option<&Path>,
        planned: usize,
        progress: Progress,
        checkpoint: impl Fn(&[Row]) -> Result<()> + Sync + 'a,
    ) -> Result<Self> {
        let journal = journal.map(Journal::create).transpose()?;
        Ok(Ledger { finished: Mutex::new((Vec::new(), CHECKPOINT_EVERY)), journal, planned, progress, checkpoint: Box::new(checkpoint) })
    }

    /// Job `index` finished with `row`: journaled, then counted (and checkpointed every so
    /// many), then shown.
    pub fn record(&self, index: usize, row: Row) {
        let count = {
            let mut guard = self.finished.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let (finished, due) = &mut *guard;
            // On disk before it is counted or reported: a kill from here on loses no finished run.
            if let Some(journal) = &self.journal {
                if let Err(e) = journal.append(&Entry { index, row: &row }) {
                    eprintln!("rehearsal: {e}");
                }
            }
            finished.push((index, row));
            let count = finished.len();
            if count >= *due && count < self.planned {
                *due = next_checkpoint(count);
                if let Err(e) = (self.checkpoint)(&in_job_order(finished)) {
                    eprintln!("rehearsal: checkpoint: {e}");
                }
            }
            count
        };
        self.progress.done(count);
    }

    /// How many runs have finished.
    pub fn count(&self) -> usize {
        self.finished.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).0.len()
    }
}

fn in_job_order<Row: Clone>(finished: &[(usize, Row)]) -> Vec<Row> {
    let mut rows = finished.to_vec();
    rows.sort_by_key(|(index, _)| *index);
    rows.into_iter().map(|(_, row)| row).collect()
}

/// The rows of a campaign's CSV at `csv` and of its journal: a folder a killed campaign left
/// holds its last checkpoint and, in the journal, every run finished since it started. The
/// journal's rows come in job order, then any row of the CSV the journal lacks (one whose
/// append failed); without a journal, the CSV's rows.
pub fn read_rows<Row: DeserializeOwned + PartialEq>(csv: &Path, journal: &Path) -> Result<Vec<Row>> {
    let mut journaled: Vec<Entry<Row>> = crate::base::results_journal::read(journal)?;
    let in_csv: Vec<Row> = if csv.exists() || journaled.is_empty() { crate::base::csv_rows::read_rows(csv)? } else { Vec::new() };
    if journaled.is_empty() {
        return Ok(in_csv);
    }
    journaled.sort_by_key(|entry| entry.index);
    let mut rows: Vec<Row> = journaled.into_iter().map(|entry| entry.row).collect();
    let lacking: Vec<Row> = in_csv.into_iter().filter(|row| !rows.contains(row)).collect();
    rows.extend(lacking);
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    struct Row {
        run: usize,
        outcome: String,
    }

    fn row(run: usize) -> Row {
        Row { run, outcome: if run == 3 { "error".into() } else { "pass".into() } }
    }

    #[test]
    fn results_come_back_in_job_order_with_a_panic_as_its_jobs_row() {
        let items: Vec<usize> = (0..30).collect();
        let seen = Mutex::new(Vec::new());
        let work = |&run: &usize| if run == 3 { panic!("run {run} broke") } else { row(run) };
        let panicked = |&run: &usize, message: &str| {
            assert_eq!(message, "run 3 broke");
            row(run)
        };
        let results = map(3, &items, work, panicked, || false, |index, r: &Row| seen.lock().unwrap().push((index, r.clone())));
        assert_eq!(results, items.iter().map(|&run| Some(row(run))).collect::<Vec<_>>());
        let mut seen = seen.into_inner().unwrap();
        seen.sort_by_key(|(index, _)| *index);
        assert_eq!(seen, items.iter().map(|&run| (run, row(run))).collect::<Vec<_>>(), "done saw every job once, the panic as its row");
    }

    /// A long campaign is checkpointed a few dozen times, not once every 25 rows, and never
    /// more than a quarter of its rows (past the first 25) apart from the journal alone.
    #[test]
    fn checkpoints_come_every_25_rows_at_first_and_then_a_quarter_more_rows_apart() {
        let mut at = vec![CHECKPOINT_EVERY];
        while *at.last().unwrap() < 5_388 {
            at.push(next_checkpoint(*at.last().unwrap()));
        }
        assert_eq!(at[..4], [25, 50, 75, 100]);
        assert!(at.len() < 30, "{} checkpoints: {at:?}", at.len());
        assert!(at.windows(2).all(|w| w[1] - w[0] <= CHECKPOINT_EVERY.max(w[0] / 4)), "{at:?}");
    }

    /// What a kill leaves: the checkpoint of the first 25 rows and, in the journal, all 28.
    #[test]
    fn every_finished_row_is_journaled_and_a_killed_campaigns_rows_are_read_back_in_job_order() {
        let dir = tempfile::tempdir().unwrap();
        let (csv, journal) = (dir.path().join("runs.csv"), dir.path().join("runs.journal.jsonl"));
        let checkpoints = Mutex::new(0);
        let checkpoint = |rows: &[Row]| {
            *checkpoints.lock().unwrap() += 1;
            crate::base::csv_rows::write_rows(&csv, rows)
        };
        let ledger = Ledger::new(Some(&journal), 40, Progress::new(40, 0, "runs"), checkpoint).unwrap();
        // Finished out of order, as workers finish them.
        let order: Vec<usize> = (0..28).rev().collect();
        for &index in &order {
            ledger.record(index, row(index));
        }
        assert_eq!((ledger.count(), *checkpoints.lock().unwrap()), (28, 1));
        let checkpointed: Vec<Row> = crate::base::csv_rows::read_rows(&csv).unwrap();
        assert_eq!(checkpointed, (3..28).map(row).collect::<Vec<_>>(), "the checkpoint: the first 25 finished, in job order");
        assert_eq!(read_rows::<Row>(&csv, &journal).unwrap(), (0..28).map(row).collect::<Vec<_>>());
        // Without its journal (the campaign ended), the CSV alone; a CSV row the journal
        // lacks is kept; no CSV yet, the journal alone.
        crate::base::results_journal::remove(&journal).unwrap();
        assert_eq!(read_rows::<Row>(&csv, &journal).unwrap(), checkpointed);
        let only = Journal::create(&journal).unwrap();
        only.append(&Entry { index: 1, row: &row(1) }).unwrap();
        assert_eq!(read_rows::<Row>(&csv, &journal).unwrap()[..2], [row(1), row(3)]);
        std::fs::remove_file(&csv).unwrap();
        assert_eq!(read_rows::<Row>(&csv, &journal).unwrap(), [row(1)]);
    }
}
