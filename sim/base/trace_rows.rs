//! The bytes of `trace.csv`: CSV rows built by hand into one buffer, hashed and written in
//! large chunks. Formatting a row through `format!` and the `csv` crate, and hashing each
//! small write, was a third of a run's cost (issue 17). The bytes are those the `csv` crate
//! wrote with its defaults (`QuoteStyle::Necessary`, `\n` line ends, quotes doubled), which
//! the tests beside this file and the golden hashes hold it to.

use std::io::Write;

use sha2::{Digest, Sha256};

use crate::base::clock::format_utc_ms;

/// Rows are handed on to be hashed and written once this many bytes are pending.
pub const CHUNK_BYTES: usize = 1 << 16;

/// Room for an integer's decimal digits and sign.
pub fn itoa_buf() -> [u8; 20] {
    [0; 20]
}

/// `n` in decimal, written into `buf`.
pub fn format_count(buf: &mut [u8; 20], n: u64) -> &str {
    std::str::from_utf8(count_digits(buf, n)).expect("ascii digits")
}

/// `n`'s decimal digits, written at the end of `buf` (bytes: no UTF-8 check for the row
/// buffer, which takes bytes).
fn count_digits(buf: &mut [u8; 20], mut n: u64) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[i..]
}

/// `n` in decimal with its sign, as `i64::to_string` writes it.
pub fn format_signed(buf: &mut [u8; 20], n: i64) -> &str {
    if n >= 0 {
        return format_count(buf, n as u64);
    }
    // |i64::MIN| has 19 digits, so the sign still fits before them.
    let start = buf.len() - format_count(buf, n.unsigned_abs()).len() - 1;
    buf[start] = b'-';
    std::str::from_utf8(&buf[start..]).expect("ascii digits")
}

/// A field must be quoted when it holds a comma, a quote or a line end.
fn needs_quotes(field: &str) -> bool {
    // Eight bytes at a time: every field of every row is scanned, and the `observed` column
    // is long (issue 17). The tail is checked byte by byte.
    let mut chunks = field.as_bytes().chunks_exact(8);
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        if zero_bytes(word ^ COMMAS) | zero_bytes(word ^ QUOTES) | zero_bytes(word ^ LINE_FEEDS) | zero_bytes(word ^ RETURNS) != 0 {
            return true;
        }
    }
    chunks.remainder().iter().any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r'))
}

const LOW_BITS: u64 = 0x0101_0101_0101_0101;
const COMMAS: u64 = LOW_BITS * b',' as u64;
const QUOTES: u64 = LOW_BITS * b'"' as u64;
const LINE_FEEDS: u64 = LOW_BITS * b'\n' as u64;
const RETURNS: u64 = LOW_BITS * b'\r' as u64;

/// Non-zero exactly when some byte of `word` is zero (the classic test: which byte it flags
/// can be wrong above a real zero byte, but whether one is flagged cannot).
fn zero_bytes(word: u64) -> u64 {
    word.wrapping_sub(LOW_BITS) & !word & (LOW_BITS << 7)
}

/// Appends one CSV field, quoted (inner quotes doubled) only when it must be.
fn push_field(out: &mut Vec<u8>, field: &str) {
    if !needs_quotes(field) {
        out.extend_from_slice(field.as_bytes());
        return;
    }
    out.push(b'"');
    for (i, part) in field.split('"').enumerate() {
        if i > 0 {
            out.extend_from_slice(b"\"\"");
        }
        out.extend_from_slice(part.as_bytes());
    }
    out.push(b'"');
}

/// One trace row's columns after `t_ms` and `time`, and before `seq` and `observed`.
pub struct RowText<'a> {
    pub actor: &'a str,
    pub session: &'a str,
    pub event: &'a str,
    pub statement: &'a str,
    pub rows: &'a str,
    pub state_after: &'a str,
    pub detail: &'a str,
    pub observed: &'a str,
}

/// Where a `RowWriter`'s chunks go. Every sink hashes every byte it takes, in order, and
/// writes them somewhere (or nowhere): on the caller's thread (`Hashed`) or on another
/// (`trace_spool::Spool`).
pub trait Chunks {
    /// Takes the bytes of `pending`, leaving it empty (its capacity may be another buffer's).
    fn take(&mut self, pending: &mut Vec<u8>);
    /// The hex SHA-256 of every byte taken so far, once all of them are hashed: the trace's
    /// seal, which its `run_end` row carries (docs/protocol.md C120).
    fn hash_so_far(&mut self) -> String;
    /// After the last chunk: the hex SHA-256 of every byte taken, once all are written (and
    /// synced, for a file), or the first write error.
    fn finish(self) -> std::io::Result<String>;
}

/// Hashes and writes each chunk on the caller's thread.
pub struct Hashed<W: Write> {
    sink: W,
    hasher: Sha256,
    /// The first write error, kept for `finish`: the hash must cover what is on disk.
    write_error: Option<std::io::Error>,
}

impl<W: Write> Hashed<W> {
    pub fn new(sink: W) -> Hashed<W> {
        Hashed { sink, hasher: Sha256::new(), write_error: None }
    }

    /// The hex SHA-256 of every byte taken so far; more may follow.
    pub fn digest_so_far(&self) -> String {
        hex(&self.hasher.clone().finalize())
    }

    /// The sink, flushed, and the hex SHA-256 of every byte taken.
    pub fn finish_with_sink(mut self) -> std::io::Result<(W, String)> {
        if let Some(e) = self.write_error.take() {
            return Err(e);
        }
        self.sink.flush()?;
        Ok((self.sink, hex(&self.hasher.finalize())))
    }
}

/// A copy that goes on from the same bytes (its hash so far), into a copy of its sink; a
/// write error met is carried over as its kind and message.
impl<W: Write + Clone> Clone for Hashed<W> {
    fn clone(&self) -> Hashed<W> {
        let write_error = self.write_error.as_ref().map(|e| std::io::Error::new(e.kind(), e.to_string()));
        Hashed { sink: self.sink.clone(), hasher: self.hasher.clone(), write_error }
    }
}

impl<W: Write> Chunks for Hashed<W> {
    fn take(&mut self, pending: &mut Vec<u8>) {
        self.hasher.update(&pending[..]);
        if self.write_error.is_none() {
            if let Err(e) = self.sink.write_all(pending) {
                self.write_error = Some(e);
            }
        }
        pending.clear();
    }

    fn hash_so_far(&mut self) -> String {
        self.digest_so_far()
    }

    fn finish(self) -> std::io::Result<String> {
        Ok(self.finish_with_sink()?.1)
    }
}

/// Lower-case hex of a digest.
fn hex(digest: &[u8]) -> String {
    let mut hex = String::with_capacity(2 * digest.len());
    for b in digest {
        hex.push(char::from_digit(u32::from(b >> 4), 16).expect("a nibble"));
        hex.push(char::from_digit(u32::from(b & 15), 16).expect("a nibble"));
    }
    hex
}

/// Rows on their way to a sink that hashes and writes them, in chunks of `CHUNK_BYTES`.
pub struct RowWriter<C: Chunks> {
    pending: Vec<u8>,
    chunks: C,
    epoch_unix_ms: i64,
    rows_written: u64,
    /// `YYYY-MM-DD HH:MM:SS` of the last row's second, reused by rows in the same second.
    second_cache: (i64, String),
}

impl<C: Chunks> RowWriter<C> {
    /// Where the rows go.
    pub fn sink(&self) -> &C {
        &self.chunks
    }

    /// A writer whose first row is the header `columns`.
    pub fn new(chunks: C, epoch_unix_ms: i64, columns: &[&str]) -> RowWriter<C> {
        let mut writer = RowWriter {
            pending: Vec::with_capacity(CHUNK_BYTES * 2),
            chunks,
            epoch_unix_ms,
            rows_written: 0,
            second_cache: (i64::MIN, String::new()),
        };
        for (i, column) in columns.iter().enumerate() {
            if i > 0 {
                writer.pending.push(b',');
            }
            push_field(&mut writer.pending, column);
        }
        writer.pending.push(b'\n');
        writer
    }

    /// A writer that goes on from this one's rows into `chunks` (a copy of this one's sink,
    /// which has taken the same bytes): the rows pending, the count and the cached second.
    /// Its rows are made in `buffer` (emptied first): a forked run's own, which it has not
    /// used yet, rather than a new one per run; a copy kept only to be forked again can be
    /// given an empty one (no room held while it waits).
    pub fn fork_into<D: Chunks>(&self, chunks: D, buffer: Vec<u8>) -> RowWriter<D> {
        let mut pending = buffer;
        pending.clear();
        pending.extend_from_slice(&self.pending);
        RowWriter {
            pending,
            chunks,
            epoch_unix_ms: self.epoch_unix_ms,
            rows_written: self.rows_written,
            second_cache: self.second_cache.clone(),
        }
    }

    /// The buffer rows are made in, emptied, leaving this writer none: for a writer forked
    /// from another to make its rows in (`fork_into`).
    pub fn take_buffer(&mut self) -> Vec<u8> {
        let mut buffer = std::mem::take(&mut self.pending);
        buffer.clear();
        buffer
    }

    /// Rows written, the header aside: the last row's `seq`.
    pub fn rows_written(&self) -> u64 {
        self.rows_written
    }

    /// Appends the row `t_ms,time,<text>,seq,observed`.
    pub fn row(&mut self, t_ms: i64, text: &RowText) {
        self.rows_written += 1;
        let unix_ms = self.epoch_unix_ms + t_ms;
        self.set_second(unix_ms.div_euclid(1000));
        let millis = unix_ms.rem_euclid(1000) as u32;
        let time = [b'.', b'0' + (millis / 100) as u8, b'0' + (millis / 10 % 10) as u8, b'0' + (millis % 10) as u8];
        let (mut t_buf, mut seq_buf) = (itoa_buf(), itoa_buf());
        let out = &mut self.pending;
        // Numbers never need quotes.
        if t_ms < 0 {
            out.push(b'-');
        }
        out.extend_from_slice(count_digits(&mut t_buf, t_ms.unsigned_abs()));
        out.push(b',');
        // A date and time never needs quotes.
        out.extend_from_slice(self.second_cache.1.as_bytes());
        out.extend_from_slice(&time);
        let RowText { actor, session, event, statement, rows, state_after, detail, observed } = *text;
        for field in [actor, session, event, statement, rows, state_after, detail] {
            out.push(b',');
            push_field(out, field);
        }
        out.push(b',');
        out.extend_from_slice(count_digits(&mut seq_buf, self.rows_written));
        out.push(b',');
        push_field(out, observed);
        out.push(b'\n');
        if self.pending.len() >= CHUNK_BYTES {
            self.drain();
        }
    }

    /// Makes `second_cache` the text of `unix_s`. A run's rows move a few seconds at a time,
    /// so within the same minute only the two digits of the seconds change: they are patched
    /// rather than the whole date formatted again.
    fn set_second(&mut self, unix_s: i64) {
        let (cached_s, text) = &mut self.second_cache;
        if *cached_s == unix_s {
            return;
        }
        if *cached_s != i64::MIN && cached_s.div_euclid(60) == unix_s.div_euclid(60) {
            let s = unix_s.rem_euclid(60) as u8;
            let len = text.len();
            text.replace_range(len - 2.., std::str::from_utf8(&[b'0' + s / 10, b'0' + s % 10]).expect("ascii digits"));
        } else {
            let full = format_utc_ms(unix_s * 1000);
            text.clear();
            text.push_str(&full[..full.len() - 4]);
        }
        *cached_s = unix_s;
    }

    /// The seal of the rows written so far: their count (the header aside) and the hex SHA-256
    /// of every byte written so far, the header's included (docs/protocol.md C120).
    pub fn seal(&mut self) -> (u64, String) {
        self.drain();
        (self.rows_written, self.chunks.hash_so_far())
    }

    /// Hands what is pending on now.
    pub fn flush(&mut self) {
        self.drain();
    }

    /// Hands what is pending on.
    fn drain(&mut self) {
        self.chunks.take(&mut self.pending);
    }

    /// Hands on what is pending and returns the sink, to be finished.
    pub fn into_chunks(mut self) -> C {
        self.drain();
        self.chunks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EPOCH_MS: i64 = 1_767_225_600_000; // 2026-01-01 00:00:00 UTC

    /// What the `csv` crate writes for the same rows, with the same defaults.
    fn with_csv_crate(rows: &[[&str; 11]]) -> Vec<u8> {
        let mut writer = csv::Writer::from_writer(Vec::new());
        for row in rows {
            writer.write_record(row).expect("in memory");
        }
        writer.into_inner().expect("in memory")
    }

    #[test]
    fn rows_are_the_bytes_the_csv_crate_writes() {
        let header = ["t_ms", "time", "actor", "session", "event", "statement", "rows", "state_after", "detail", "seq", "observed"];
        let awkward = ["", "a,b", "say \"hi\"", "two\nlines", "cr\rhere", "\"", ",", "plain", "ünïcode, too", "%2C", " "];
        let mut writer = RowWriter::new(Hashed::new(Vec::new()), EPOCH_MS, &header);
        let mut expected = vec![header];
        let mut times = Vec::new();
        for (i, t_ms) in [0_i64, 999, 1_000, 61_001, 86_399_999, 90_000_007, -1, -1_001].into_iter().enumerate() {
            let field = |k: usize| awkward[(i + k) % awkward.len()];
            let text = RowText {
                actor: field(0),
                session: field(1),
                event: field(2),
                statement: field(3),
                rows: field(4),
                state_after: field(5),
                detail: field(6),
                observed: field(7),
            };
            writer.row(t_ms, &text);
            times.push((t_ms.to_string(), format_utc_ms(EPOCH_MS + t_ms), (i + 1).to_string()));
        }
        for (i, (t, time, seq)) in times.iter().enumerate() {
            let field = |k: usize| awkward[(i + k) % awkward.len()];
            expected.push([t, time, field(0), field(1), field(2), field(3), field(4), field(5), field(6), seq, field(7)]);
        }
        let (bytes, hash) = writer.into_chunks().finish_with_sink().expect("in memory");
        let want = with_csv_crate(&expected);
        assert_eq!(String::from_utf8_lossy(&bytes), String::from_utf8_lossy(&want));
        let digest = Sha256::digest(&want);
        let want_hash: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hash, want_hash);
    }

    #[test]
    fn chunks_hash_as_one() {
        let mut writer = RowWriter::new(Hashed::new(Vec::new()), EPOCH_MS, &["a"]);
        let text = RowText { actor: "x", session: "", event: "e", statement: "", rows: "1", state_after: "", detail: "d", observed: "" };
        for t in 0..10_000 {
            writer.row(t, &text);
        }
        let (bytes, hash) = writer.into_chunks().finish_with_sink().expect("in memory");
        assert!(bytes.len() > 2 * CHUNK_BYTES);
        let want: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hash, want);
    }

    #[test]
    fn quotes_are_needed_exactly_where_a_special_byte_is() {
        let naive = |field: &str| field.bytes().any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r'));
        // Every length around the eight-byte words, every position, every special byte and
        // its neighbours (0x2B, 0x2D, 0x0C, 0x01: bytes a wrong word test would mistake).
        for len in 0..24 {
            for at in 0..len {
                for odd in [',', '"', '\n', '\r', '+', '-', '\x0c', '\x01', 'é'] {
                    let field: String = (0..len).map(|i| if i == at { odd } else { 'a' }).collect();
                    assert_eq!(needs_quotes(&field), naive(&field), "{field:?}");
                }
            }
        }
    }

    #[test]
    fn every_second_reads_as_the_clock_formats_it() {
        let mut writer = RowWriter::new(Hashed::new(Vec::new()), EPOCH_MS - 3_000, &["a"]);
        // Steps of 1.7 s cross seconds, minutes, hours and a day, sometimes several seconds apart.
        for unix_ms in (EPOCH_MS - 3_000..EPOCH_MS + 7_300_000).step_by(1_700).chain([EPOCH_MS + 86_400_000, EPOCH_MS + 86_401_000]) {
            writer.set_second(unix_ms.div_euclid(1000));
            let full = format_utc_ms(unix_ms);
            assert_eq!(writer.second_cache.1, full[..full.len() - 4], "{unix_ms}");
        }
    }

    #[test]
    fn integers_read_as_to_string_writes_them() {
        for n in [0_i64, 7, 10, 999, 1_000_000, i64::MAX, -1, -10, i64::MIN] {
            assert_eq!(format_signed(&mut itoa_buf(), n), n.to_string());
        }
    }
}
