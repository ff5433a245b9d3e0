//! The trace's file written on a thread of its own. Hashing and writing `trace.csv` was
//! ~8 % of a fleet-day run on the simulation's thread (SHA-256 and `write()` of 64 MB, issue
//! 17); a second thread takes each 64 KiB chunk as it fills, hashes it, writes it, and hands
//! the emptied buffer back. The bytes and their order are the same (one channel, one reader),
//! so the file and its hash are what `Hashed` on the caller's thread gives (a test below).
//! The channel is bounded: a slow disk holds the simulation back instead of the run's whole
//! trace piling up in memory.
//!
//! A copy of each chunk, once written, can go to one more reader (`Spool::start_copied`):
//! `rehearsal run` builds its reports' model from the trace's bytes as they are written
//! (sim/report/streamed.rs) instead of reading trace.csv back after the run (issue 47 item 3).

use std::fs::File;
use std::io;
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::thread::JoinHandle;

use crate::base::trace_rows::{Chunks, Hashed};

/// Chunks in flight at most (64 KiB each): what the simulation may run ahead of the disk.
const CHUNKS_IN_FLIGHT: usize = 16;

/// What the writer thread is handed: a chunk to hash and write, or a question: the hash of
/// every byte so far (`Chunks::hash_so_far`), answered once the chunks before it are hashed.
enum ToWriter {
    Chunk(Vec<u8>),
    HashSoFar(Sender<String>),
}

/// A file written, and its bytes hashed, on a thread of its own.
pub struct Spool {
    to_writer: Option<SyncSender<ToWriter>>,
    /// Buffers the writer has emptied, to be filled again.
    emptied: Receiver<Vec<u8>>,
    writer: Option<JoinHandle<io::Result<String>>>,
}

impl Spool {
    /// Starts the thread that writes `file`.
    pub fn start(file: File) -> io::Result<Spool> {
        Spool::start_copied(file, None)
    }

    /// Starts the thread that writes `file` and sends a copy of each chunk to `copy` once it
    /// is handed to the file, in order: the reader of `copy` gets the file's bytes, and the
    /// end of them when the spool finishes (its sender dropped). A reader that hung up gets
    /// no more and holds nothing back.
    pub fn start_copied(file: File, copy: Option<SyncSender<Vec<u8>>>) -> io::Result<Spool> {
        let (to_writer, chunks) = sync_channel::<ToWriter>(CHUNKS_IN_FLIGHT);
        let (give_back, emptied) = channel();
        let writer = std::thread::Builder::new().name("trace-writer".to_string()).spawn(move || {
            let mut hashed = Hashed::new(file);
            let mut copy = copy;
            for message in chunks {
                match message {
                    ToWriter::Chunk(mut chunk) => {
                        let copied = copy.as_ref().map(|_| chunk.clone());
                        hashed.take(&mut chunk);
                        if let (Some(to), Some(copied)) = (&copy, copied) {
                            if to.send(copied).is_err() {
                                copy = None;
                            }
                        }
                        // The simulation may have finished and stopped taking buffers back.
                        let _ = give_back.send(chunk);
                    }
                    ToWriter::HashSoFar(answer) => {
                        let _ = answer.send(hashed.digest_so_far());
                    }
                }
            }
            let (file, hash) = hashed.finish_with_sink()?;
            file.sync_all()?;
            Ok(hash)
        })?;
        Ok(Spool { to_writer: Some(to_writer), emptied, writer: Some(writer) })
    }

    /// Ends the channel and waits for the writer.
    fn stop(&mut self) -> io::Result<String> {
        drop(self.to_writer.take());
        match self.writer.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(io::Error::other("the trace writer thread panicked")),
            None => Err(io::Error::other("the trace writer was already stopped")),
        }
    }
}

impl Chunks for Spool {
    fn take(&mut self, pending: &mut Vec<u8>) {
        let empty = self.emptied.try_recv().unwrap_or_else(|_| Vec::with_capacity(pending.capacity()));
        let full = std::mem::replace(pending, empty);
        if let Some(to_writer) = &self.to_writer {
            // Only a writer that panicked has hung up; `finish` reports it.
            let _ = to_writer.send(ToWriter::Chunk(full));
        }
    }

    fn hash_so_far(&mut self) -> String {
        let (answer, answered) = channel();
        if let Some(to_writer) = &self.to_writer {
            let _ = to_writer.send(ToWriter::HashSoFar(answer));
        }
        // A writer that panicked answers nothing: the seal is then empty, and `finish`
        // reports the panic before the trace takes its name.
        answered.recv().unwrap_or_default()
    }

    fn finish(mut self) -> io::Result<String> {
        self.stop()
    }
}

impl Drop for Spool {
    /// A run that ends early (an error, a panic) still lets the writer finish and exit.
    fn drop(&mut self) {
        if self.writer.is_some() {
            let _ = self.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::trace_rows::CHUNK_BYTES;

    fn chunks_of(seed: u8) -> Vec<Vec<u8>> {
        // Sizes around and past a chunk, so buffers of every capacity are recycled.
        (0..40)
            .map(|i| (0..(i * 7919 + 13) % (2 * CHUNK_BYTES)).map(|b| (b as u8).wrapping_mul(seed).wrapping_add(i as u8)).collect())
            .collect()
    }

    #[test]
    fn the_spooled_file_and_hash_are_those_written_on_the_callers_thread() {
        let dir = tempfile::tempdir().expect("temp");
        let path = dir.path().join("spooled");
        let mut spool = Spool::start(File::create(&path).expect("created")).expect("started");
        let mut inline = Hashed::new(Vec::new());
        for chunk in chunks_of(31) {
            let mut a = chunk.clone();
            spool.take(&mut a);
            assert!(a.is_empty(), "take leaves the buffer empty");
            let mut b = chunk;
            inline.take(&mut b);
        }
        let spooled_hash = spool.finish().expect("written");
        let (bytes, inline_hash) = inline.finish_with_sink().expect("in memory");
        assert_eq!(spooled_hash, inline_hash);
        assert_eq!(std::fs::read(&path).expect("read back"), bytes);
    }

    /// The copy's reader gets the file's bytes, in order, and their end when the spool finishes.
    #[test]
    fn the_copy_gets_the_files_bytes_and_their_end() {
        let dir = tempfile::tempdir().expect("temp");
        let path = dir.path().join("copied");
        let (copy, copies) = sync_channel(2);
        let reader = std::thread::spawn(move || copies.into_iter().flatten().collect::<Vec<u8>>());
        let mut spool = Spool::start_copied(File::create(&path).expect("created"), Some(copy)).expect("started");
        for chunk in chunks_of(17) {
            let mut chunk = chunk;
            spool.take(&mut chunk);
        }
        spool.finish().expect("written");
        let copied = reader.join().expect("the reader ends when the spool does");
        assert_eq!(copied, std::fs::read(&path).expect("read back"));
        assert!(!copied.is_empty());
    }

    #[test]
    fn a_write_error_is_reported_at_finish() {
        // /dev/full (Linux, where the tests run) takes the open and refuses every write.
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full");
        let mut spool = Spool::start(full).expect("started");
        let mut chunk = vec![1_u8; 100];
        spool.take(&mut chunk);
        let err = spool.finish().expect_err("no space");
        assert_eq!(err.raw_os_error(), Some(28), "ENOSPC: {err}");
    }

    #[test]
    fn a_spool_dropped_unfinished_stops_its_writer() {
        let dir = tempfile::tempdir().expect("temp");
        let path = dir.path().join("dropped");
        let mut spool = Spool::start(File::create(&path).expect("created")).expect("started");
        let mut chunk = vec![7_u8; 1000];
        spool.take(&mut chunk);
        drop(spool);
        assert_eq!(std::fs::read(&path).expect("read back"), vec![7_u8; 1000], "what was taken is written");
    }
}
