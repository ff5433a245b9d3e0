//! A running sweep's finished pairs, as they finish: each row journaled at once (a kill loses
//! no finished pair: sim/base/results_journal.rs), then handed to the folder's files
//! (sim/campaign/sweep/outputs.rs) in results.csv's order, those that finish ahead of a pair
//! still under way waiting for it; the `INCOMPLETE` marker says how many results.csv holds
//! each time a batch of them is synced, and the progress line moves.

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use super::outputs::Outputs;
use super::pair::PairOutcome;
use crate::base::error::Result;
use crate::base::results_journal::Journal;
use crate::campaign::progress::Progress;
use crate::campaign::Campaign;
use crate::judging::coverage::Coverage;

/// What the finished pairs left so far.
struct State {
    /// The position (in results.csv's order) of the next pair to hand on.
    next: usize,
    waiting: BTreeMap<usize, PairOutcome>,
    outputs: Outputs,
    coverage: Coverage,
    finished: usize,
}

pub(super) struct Feed<'a> {
    campaign: &'a Campaign,
    planned: usize,
    /// Pairs come in results.csv's order (`plan::in_results_order`): else they all wait, to
    /// be sorted at the end.
    ordered: bool,
    journal: Option<Journal>,
    progress: Progress,
    state: Mutex<State>,
    /// Told each time a pair is handed on: a pair waiting for room may start.
    handed_on: Condvar,
    /// How far past the next pair to hand on a pair may start (`wait_for_room`).
    lookahead: usize,
}

/// Pairs a job may run ahead of the oldest unfinished pair: those that finish ahead wait in
/// memory for it, so a slow pair among fast ones never makes the waiting list grow with the
/// sweep (issue 41: memory flat in the pairs).
pub(super) const LOOKAHEAD_PER_JOB: usize = 32;

impl<'a> Feed<'a> {
    /// Marks the folder (a sweep killed from here on is never taken for a whole one) and
    /// opens the journal and, when pairs come in order, results.csv and pairs.jsonl.
    pub(super) fn new(campaign: &'a Campaign, planned: usize, ordered: bool, progress: Progress, jobs: usize) -> Result<Feed<'a>> {
        let journal = super::results::JOURNAL;
        campaign.mark(&format!(
            "0 of {planned} pairs finished: the sweep is running, or was killed; the finished pairs are in results.csv and {journal}"
        ))?;
        let journal = campaign.journal().map(Journal::create).transpose()?;
        let outputs = if ordered { Outputs::appending(campaign.out())? } else { Outputs::whole(campaign.out())? };
        let state = State { next: 0, waiting: BTreeMap::new(), outputs, coverage: Coverage::default(), finished: 0 };
        let lookahead = LOOKAHEAD_PER_JOB * jobs.max(1);
        Ok(Feed { campaign, planned, ordered, journal, progress, state: Mutex::new(state), handed_on: Condvar::new(), lookahead })
    }

    /// Waits until the pair at `position` is at most `lookahead` pairs past the next one to
    /// hand on (at once when pairs come out of order: they all wait to be sorted). `false`
    /// when the sweep is stopping meanwhile (Ctrl-C, `--fail-fast`): the pair is not run.
    /// The pair at the head is always under way on another job, so the wait ends.
    pub(super) fn wait_for_room(&self, position: usize, stopping: &dyn Fn() -> bool) -> bool {
        if !self.ordered {
            return true;
        }
        let mut state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        while position >= state.next + self.lookahead {
            if stopping() || crate::base::interrupt::interrupted() {
                return false;
            }
            state = match self.handed_on.wait_timeout(state, Duration::from_millis(100)) {
                Ok((state, _)) => state,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        true
    }

    /// The pair at `position` finished.
    pub(super) fn done(&self, position: usize, pair: PairOutcome) {
        let finished = {
            let mut state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            // On disk before it is counted or reported: a kill from here on loses no finished pair.
            if let Some(journal) = &self.journal {
                if let Err(e) = journal.append(&crate::campaign::ledger::Entry { index: position, row: &pair.row }) {
                    eprintln!("rehearsal: {e}");
                }
            }
            state.waiting.insert(position, pair);
            state.finished += 1;
            if self.ordered {
                while let Some(pair) = {
                    let next = state.next;
                    state.waiting.remove(&next)
                } {
                    state.next += 1;
                    self.hand_on(&mut state, pair);
                }
                self.handed_on.notify_all();
            }
            state.finished
        };
        self.progress.done(finished);
    }

    /// One pair to the folder's files; each synced batch of results.csv marked.
    fn hand_on(&self, state: &mut State, pair: PairOutcome) {
        state.coverage.merge(&pair.coverage);
        match state.outputs.add(pair) {
            Ok(true) if state.outputs.count() < self.planned => {
                let why = format!("{} of {} pairs finished: the sweep is running, or was stopped", state.outputs.count(), self.planned);
                if let Err(e) = self.campaign.mark(&why) {
                    eprintln!("rehearsal: checkpoint: {e}");
                }
            }
            Ok(_) => {}
            Err(e) => eprintln!("rehearsal: checkpoint: {e}"),
        }
    }

    /// Every finished pair handed on (those that waited for a pair that never ran, after
    /// Ctrl-C or `--fail-fast`, in order; all of them sorted when they came out of order):
    /// the folder's files so far and the pairs' coverage added up.
    pub(super) fn finish(self) -> (Outputs, Coverage) {
        let mut state = self.state.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut waiting: Vec<PairOutcome> = std::mem::take(&mut state.waiting).into_values().collect();
        if !self.ordered {
            waiting.sort_by_key(|pair| pair.row.key());
        }
        for pair in waiting {
            state.coverage.merge(&pair.coverage);
            if let Err(e) = state.outputs.add(pair) {
                eprintln!("rehearsal: {e}");
            }
        }
        (state.outputs, state.coverage)
    }
}
