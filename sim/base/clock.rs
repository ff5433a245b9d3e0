//! The simulated clock, and the SQLite VFS that makes SQL read it.
//!
//! Every time reading in the protocol is SQLite's own (`datetime('now')`, `julianday('now')`,
//! `CURRENT_TIMESTAMP`, seed 004 "Database"). A VFS that copies the default `unix` VFS and
//! replaces only `xCurrentTime` / `xCurrentTimeInt64` makes all of them follow the simulated
//! clock (ARCHITECTURE.md, invariant "SQLite reads the simulated clock"). Each run registers its own VFS instance under a unique name
//! and owns its own clock cell, so runs on parallel threads never share a clock.
//!
//! The same VFS keeps each database's write-ahead log in memory (sim/base/wal_memory.rs): its
//! `xOpen`, `xDelete` and `xAccess` serve WAL files from memory and pass every other file to
//! the `unix` VFS unchanged.

use std::ffi::{c_char, c_int, CString};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

use rusqlite::ffi;

use crate::base::wal_memory::{self, MemoryWals};

/// Milliseconds between the Julian day epoch and the Unix epoch, as SQLite counts them
/// (`xCurrentTimeInt64` returns "Julian day number times 86400000").
const JULIAN_UNIX_EPOCH_MS: i64 = 210_866_760_000_000;

/// Simulated time: integer milliseconds since the Unix epoch. Cheap to clone; every clone
/// reads the same instant. Only the engine advances it.
#[derive(Clone, Debug)]
pub struct SimClock {
    unix_ms: Arc<AtomicI64>,
}

impl SimClock {
    pub fn new(epoch_unix_ms: i64) -> SimClock {
        assert!(epoch_unix_ms >= 0, "epoch before 1970 is not supported");
        SimClock { unix_ms: Arc::new(AtomicI64::new(epoch_unix_ms)) }
    }

    pub fn now_unix_ms(&self) -> i64 {
        self.unix_ms.load(Ordering::Relaxed)
    }

    /// Sets the clock to a new run's epoch: a connection kept for the next run
    /// (sim/world/db_pool.rs) keeps its VFS, and so the clock the VFS reads.
    pub fn restart(&self, epoch_unix_ms: i64) {
        assert!(epoch_unix_ms >= 0, "epoch before 1970 is not supported");
        self.unix_ms.store(epoch_unix_ms, Ordering::Relaxed);
    }

    /// Moves the clock forward. Time never goes backwards in a simulation.
    pub fn advance_to(&self, unix_ms: i64) {
        let before = self.now_unix_ms();
        assert!(unix_ms >= before, "clock went backwards: {before} -> {unix_ms}");
        self.unix_ms.store(unix_ms, Ordering::Relaxed);
    }
}

/// The VFS object handed to SQLite. `#[repr(C)]` with the `sqlite3_vfs` first, so SQLite's
/// `sqlite3_vfs*` can be cast back to the whole struct to find this run's clock and WALs.
#[repr(C)]
struct ClockVfsRaw {
    base: ffi::sqlite3_vfs,
    clock: SimClock,
    wals: MemoryWals,
}

/// A registered VFS whose time functions read one `SimClock`. Unregistered on drop; the
/// owner must drop every connection opened through it first (`CommsDb` does). A connection
/// whose close failed is still open and still points at this VFS: while one of its WALs is
/// open, dropping the VFS leaves it registered and its memory leaked rather than freed
/// under the connection (issue 30).
pub struct ClockVfs {
    raw: std::mem::ManuallyDrop<Box<ClockVfsRaw>>,
    name: std::mem::ManuallyDrop<CString>,
}

// SAFETY: the raw VFS is immutable after registration apart from the atomic clock and the
// WAL registry behind its mutex; the memory files it points to belong to the connections
// opened through it, which the owner closes before dropping it.
unsafe impl Send for ClockVfs {}

static VFS_COUNTER: AtomicU64 = AtomicU64::new(0);

impl ClockVfs {
    pub fn register(clock: SimClock) -> Result<ClockVfs, String> {
        // The name only has to be unique in this process; it never reaches output.
        let serial = VFS_COUNTER.fetch_add(1, Ordering::Relaxed);
        let name = CString::new(format!("rehearsal-clock-{serial}")).expect("no NUL in name");
        // SAFETY: sqlite3_vfs_find(NULL) returns the default VFS, a static that lives for the
        // whole process; we copy it by value and replace the name, the two clocks and the three
        // file functions that serve the WAL from memory (whose files may need more room).
        unsafe {
            let rc = ffi::sqlite3_initialize();
            if rc != ffi::SQLITE_OK {
                return Err(format!("sqlite3_initialize failed with code {rc}"));
            }
            let parent = ffi::sqlite3_vfs_find(std::ptr::null());
            if parent.is_null() {
                return Err("SQLite has no default VFS".to_string());
            }
            let mut base: ffi::sqlite3_vfs = *parent;
            base.pNext = std::ptr::null_mut();
            base.zName = name.as_ptr();
            base.xCurrentTime = Some(x_current_time);
            if base.iVersion >= 2 {
                base.xCurrentTimeInt64 = Some(x_current_time_int64);
            }
            let wals = MemoryWals::new(&*parent)?;
            base.xOpen = Some(x_open);
            base.xDelete = Some(x_delete);
            base.xAccess = Some(x_access);
            base.szOsFile = base.szOsFile.max(wal_memory::FILE_SIZE_BYTES as c_int);
            let mut raw = Box::new(ClockVfsRaw { base, clock, wals });
            let rc = ffi::sqlite3_vfs_register(&mut raw.base, 0);
            if rc != ffi::SQLITE_OK {
                return Err(format!("sqlite3_vfs_register failed with code {rc}"));
            }
            Ok(ClockVfs { raw: std::mem::ManuallyDrop::new(raw), name: std::mem::ManuallyDrop::new(name) })
        }
    }

    pub fn name(&self) -> &str {
        self.name.to_str().expect("ascii name")
    }

    pub fn clock(&self) -> &SimClock {
        &self.raw.clock
    }
}

impl Drop for ClockVfs {
    fn drop(&mut self) {
        if self.raw.wals.any_open() {
            // A connection still has its log open (its close failed): SQLite may still call
            // this VFS, so it stays registered and its memory is never freed.
            return;
        }
        // SAFETY: registered in `register`; no connection has a file of it open, and the
        // fields are dropped once, here, after SQLite has forgotten the VFS.
        unsafe {
            ffi::sqlite3_vfs_unregister(&mut self.raw.base);
            std::mem::ManuallyDrop::drop(&mut self.raw);
            std::mem::ManuallyDrop::drop(&mut self.name);
        }
    }
}

unsafe fn clock_of<'a>(vfs: *mut ffi::sqlite3_vfs) -> &'a SimClock {
    // SAFETY: SQLite passes back the pointer we registered, which is the first field of a
    // live ClockVfsRaw.
    unsafe { &(*(vfs as *const ClockVfsRaw)).clock }
}

unsafe fn wals_of<'a>(vfs: *mut ffi::sqlite3_vfs) -> &'a MemoryWals {
    // SAFETY: as in `clock_of`.
    unsafe { &(*(vfs as *const ClockVfsRaw)).wals }
}

unsafe extern "C" fn x_open(
    vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    // SAFETY: SQLite's arguments to xOpen; `file` has `szOsFile` bytes, which `register` made
    // room for a memory file; the VFS (and so its registry) outlives its files.
    unsafe { wals_of(vfs).open(vfs, name, file, flags, out_flags) }
}

unsafe extern "C" fn x_delete(vfs: *mut ffi::sqlite3_vfs, name: *const c_char, sync_dir: c_int) -> c_int {
    // SAFETY: SQLite's arguments to xDelete.
    unsafe { wals_of(vfs).delete(vfs, name, sync_dir) }
}

unsafe extern "C" fn x_access(vfs: *mut ffi::sqlite3_vfs, name: *const c_char, flags: c_int, out: *mut c_int) -> c_int {
    // SAFETY: SQLite's arguments to xAccess.
    unsafe { wals_of(vfs).access(vfs, name, flags, out) }
}

unsafe extern "C" fn x_current_time_int64(vfs: *mut ffi::sqlite3_vfs, out: *mut ffi::sqlite3_int64) -> c_int {
    let unix_ms = unsafe { clock_of(vfs) }.now_unix_ms();
    unsafe { *out = unix_ms + JULIAN_UNIX_EPOCH_MS };
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_current_time(vfs: *mut ffi::sqlite3_vfs, out: *mut f64) -> c_int {
    let unix_ms = unsafe { clock_of(vfs) }.now_unix_ms();
    unsafe { *out = (unix_ms + JULIAN_UNIX_EPOCH_MS) as f64 / 86_400_000.0 };
    ffi::SQLITE_OK
}

/// Parses `YYYY-MM-DD HH:MM:SS` (or with `T`, optional trailing `Z`) as UTC into Unix ms.
pub fn parse_utc(text: &str) -> Option<i64> {
    let t = text.trim().trim_end_matches('Z');
    if t.len() != 19 {
        return None;
    }
    let b = t.as_bytes();
    let sep_ok = b[4] == b'-' && b[7] == b'-' && (b[10] == b' ' || b[10] == b'T') && b[13] == b':' && b[16] == b':';
    if !sep_ok {
        return None;
    }
    let num = |r: std::ops::Range<usize>| t.get(r)?.parse::<i64>().ok();
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let month_ok = (1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month);
    if !month_ok || hour > 23 || minute > 59 || second > 59 || year < 1970 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some(((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000)
}

/// Formats Unix ms as `YYYY-MM-DD HH:MM:SS.mmm` UTC, the way the trace shows time.
pub fn format_utc_ms(unix_ms: i64) -> String {
    assert!(unix_ms >= 0);
    let days = unix_ms.div_euclid(86_400_000);
    let ms_of_day = unix_ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let (h, min, s, ms) = (ms_of_day / 3_600_000, ms_of_day / 60_000 % 60, ms_of_day / 1000 % 60, ms_of_day % 1000);
    if y > 9999 {
        return format!("{y:04}-{m:02}-{d:02} {h:02}:{min:02}:{s:02}.{ms:03}");
    }
    // Digits pushed by hand: the trace formats a time for every new second of a run.
    let mut text = String::with_capacity(23);
    let mut digits = |n: i64, width: u32, after: Option<char>| {
        for place in (0..width).rev() {
            text.push(char::from(b'0' + (n / 10_i64.pow(place) % 10) as u8));
        }
        if let Some(c) = after {
            text.push(c);
        }
    };
    digits(y, 4, Some('-'));
    digits(m, 2, Some('-'));
    digits(d, 2, Some(' '));
    digits(h, 2, Some(':'));
    digits(min, 2, Some(':'));
    digits(s, 2, Some('.'));
    digits(ms, 3, None);
    text
}

fn days_in_month(year: i64, month: i64) -> i64 {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

// Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { yoe + era * 400 + 1 } else { yoe + era * 400 }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_round_trips_through_parse_and_format() {
        let cases = [("1970-01-01 00:00:00", 0), ("2026-03-02 09:00:00", 1_772_442_000_000), ("2024-02-29T23:59:59Z", 1_709_251_199_000)];
        for (text, unix_ms) in cases {
            assert_eq!(parse_utc(text), Some(unix_ms), "{text}");
            assert_eq!(format_utc_ms(unix_ms)[..19], text.replace('T', " ").replace('Z', ""));
        }
        for bad in ["2026-02-30 00:00:00", "2026-13-01 00:00:00", "yesterday", "2026-01-01 24:00:00"] {
            assert_eq!(parse_utc(bad), None, "{bad}");
        }
    }

    #[test]
    fn formatting_by_hand_matches_format() {
        let by_format = |unix_ms: i64| {
            let days = unix_ms.div_euclid(86_400_000);
            let ms_of_day = unix_ms.rem_euclid(86_400_000);
            let (y, m, d) = civil_from_days(days);
            let (h, min, s, ms) = (ms_of_day / 3_600_000, ms_of_day / 60_000 % 60, ms_of_day / 1000 % 60, ms_of_day % 1000);
            format!("{y:04}-{m:02}-{d:02} {h:02}:{min:02}:{s:02}.{ms:03}")
        };
        for unix_ms in [
            0,
            1,
            999,
            1_000,
            59_999,
            3_599_999,
            86_399_999,
            1_767_225_600_007,
            1_709_251_199_123,
            253_402_300_799_999,
            253_402_300_800_000,
        ] {
            assert_eq!(format_utc_ms(unix_ms), by_format(unix_ms), "{unix_ms}");
        }
    }
}
