//! The run's write-ahead log, kept in memory instead of in a `-wal` file.
//!
//! The clock VFS (sim/base/clock.rs) hands SQLite one of these files whenever it opens a WAL
//! (`SQLITE_OPEN_WAL`); the main database and any rollback journal still go to the parent
//! `unix` VFS. A commit then costs a `memcpy` per frame instead of two `pwrite()` calls, and a
//! checkpoint reads its frames back from memory. Checkpoints still write every page into the
//! main file, so the database's bytes are what the `unix` VFS would have written (the tests
//! below compare them): only the log's own bytes never reach the disk.
//!
//! Why this is safe here: the run opens `comms.db` with `locking_mode = EXCLUSIVE` before WAL,
//! so its WAL index is in heap memory and no other connection or process can read the
//! database while the run lasts; `CommsDb::close` checkpoints (`TRUNCATE`) before it closes,
//! so the final `comms.db` holds every commit.
//!
//! The trade-off: if the process dies mid-run (SIGKILL, power loss, or Ctrl-C on `rehearsal
//! run`, `replay` or `compare`, which install no handler and so die at once), the commits
//! since the last checkpoint (at most ~1000 pages, SQLite's auto-checkpoint) are not on disk,
//! and one killed during a checkpoint leaves the file half-written, with no log to repair it.
//! That file is `comms.db.tmp`: a run renames it to `comms.db` only when it has ended
//! (sim/world/run_folder.rs), so a killed run leaves no `comms.db` at all, never a half one
//! (issue 30; a rerun clears the temporary).

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::ptr::NonNull;
use std::sync::Mutex;

use rusqlite::ffi;

/// SQLite's default sector size, what the `unix` VFS reports for a file on an ordinary file
/// system. It only matters to WAL padding under `synchronous = FULL`; reporting the parent's
/// value keeps the log's layout the same as on disk.
const SECTOR_SIZE_BYTES: c_int = 4096;

/// An open in-memory WAL. `#[repr(C)]` with the `sqlite3_file` first: SQLite passes the
/// methods a `sqlite3_file*`, which is then a pointer to the whole struct.
#[repr(C)]
struct MemoryFile {
    base: ffi::sqlite3_file,
    bytes: Vec<u8>,
    /// The registry that lists this file as open, told at close (it outlives the file: the VFS
    /// is unregistered only after its connections have closed).
    wals: *const MemoryWals,
}

/// Bytes SQLite must allocate for one memory file (the VFS's `szOsFile` is at least this).
pub const FILE_SIZE_BYTES: usize = std::mem::size_of::<MemoryFile>();

/// One WAL name this VFS has served from memory, and its file while it is open.
struct Served {
    name: CString,
    open: Option<NonNull<MemoryFile>>,
}

/// The parent VFS's file functions, and the WAL names served from memory. One per VFS
/// instance (one run), so runs on parallel threads share nothing.
pub struct MemoryWals {
    parent_open: unsafe extern "C" fn(*mut ffi::sqlite3_vfs, ffi::sqlite3_filename, *mut ffi::sqlite3_file, c_int, *mut c_int) -> c_int,
    parent_delete: unsafe extern "C" fn(*mut ffi::sqlite3_vfs, *const c_char, c_int) -> c_int,
    parent_access: unsafe extern "C" fn(*mut ffi::sqlite3_vfs, *const c_char, c_int, *mut c_int) -> c_int,
    /// A mutex only for interior mutability from SQLite's callbacks; a run's connection is
    /// used by one thread at a time, so it is never contended.
    served: Mutex<Vec<Served>>,
}

impl MemoryWals {
    /// Wraps `parent`'s open, delete and access functions.
    pub fn new(parent: &ffi::sqlite3_vfs) -> Result<MemoryWals, String> {
        let missing = |what: &str| format!("the default VFS has no {what}");
        Ok(MemoryWals {
            parent_open: parent.xOpen.ok_or_else(|| missing("xOpen"))?,
            parent_delete: parent.xDelete.ok_or_else(|| missing("xDelete"))?,
            parent_access: parent.xAccess.ok_or_else(|| missing("xAccess"))?,
            served: Mutex::new(Vec::new()),
        })
    }

    fn served(&self) -> std::sync::MutexGuard<'_, Vec<Served>> {
        // A panic never happens while the lock is held (no callback code can panic there),
        // but a poisoned list is still a valid list.
        self.served.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// `xOpen`: a WAL opens in memory, anything else through the parent.
    ///
    /// # Safety
    /// The arguments SQLite passes to `xOpen`; `file` points to at least `FILE_SIZE_BYTES`
    /// writable bytes aligned for a pointer (the VFS's `szOsFile`, from SQLite's allocator),
    /// and `self` outlives the file.
    pub unsafe fn open(
        &self,
        vfs: *mut ffi::sqlite3_vfs,
        name: ffi::sqlite3_filename,
        file: *mut ffi::sqlite3_file,
        flags: c_int,
        out_flags: *mut c_int,
    ) -> c_int {
        if flags & ffi::SQLITE_OPEN_WAL == 0 || name.is_null() {
            // Through the registry of what a Ctrl-C removes (sim/base/live_files.rs): a run's
            // `comms.db.tmp` (or a journal) is never made after the interrupt's removal.
            // SAFETY: the caller's arguments, passed on unchanged to the function they were for.
            let opened =
                crate::base::live_files::make(|| Ok::<_, std::io::Error>(unsafe { (self.parent_open)(vfs, name, file, flags, out_flags) }));
            return opened.unwrap_or_else(|_| {
                // SAFETY: SQLite calls no method of a file whose open failed with `pMethods` NULL.
                unsafe { (*file).pMethods = std::ptr::null() };
                ffi::SQLITE_CANTOPEN
            });
        }
        // SAFETY: SQLite's WAL name is a NUL-terminated string that lives while we copy it.
        let name_text = unsafe { CStr::from_ptr(name) };
        let mut served = self.served();
        let entry = served.iter().position(|s| s.name.as_c_str() == name_text);
        // Two connections through one VFS would each get a log of their own, and a log already
        // on disk holds commits a memory file would not show: both are refused, loudly, rather
        // than served wrong. Neither happens in a run (one connection; `CommsDb::create`
        // removes any old `-wal`), so this only guards the assumptions above.
        // SAFETY: the caller's arguments; `name` is a WAL name, checked on disk by the parent.
        let refused = match entry {
            Some(i) => served[i].open.is_some(),
            None => unsafe { self.non_empty_on_disk(vfs, name) },
        };
        if refused {
            // SAFETY: SQLite calls no method of a file whose open failed with `pMethods` NULL.
            unsafe { (*file).pMethods = std::ptr::null() };
            return ffi::SQLITE_CANTOPEN;
        }
        let memory = file.cast::<MemoryFile>();
        // SAFETY: `file` has room and alignment for a MemoryFile (the caller's contract); it
        // is uninitialised, so it is written without reading or dropping what was there.
        unsafe {
            memory.write(MemoryFile { base: ffi::sqlite3_file { pMethods: &METHODS }, bytes: spare_bytes(), wals: self });
        }
        // `memory` is non-null: it is `file`, which SQLite allocated.
        let open = NonNull::new(memory);
        match entry {
            Some(i) => served[i].open = open,
            None => served.push(Served { name: name_text.to_owned(), open }),
        }
        if !out_flags.is_null() {
            // SAFETY: non-null out pointer from SQLite.
            unsafe { *out_flags = flags };
        }
        ffi::SQLITE_OK
    }

    /// `xDelete`: a WAL this VFS served from memory has nothing on disk to delete (its bytes
    /// were freed at close, which SQLite does before it deletes a WAL); other names, the
    /// parent's. A stray `-wal` file on disk under a served name is left alone: this VFS never
    /// wrote it.
    ///
    /// # Safety
    /// The arguments SQLite passes to `xDelete`.
    pub unsafe fn delete(&self, vfs: *mut ffi::sqlite3_vfs, name: *const c_char, sync_dir: c_int) -> c_int {
        // SAFETY: SQLite's name is a NUL-terminated string.
        if !name.is_null() && self.is_served(unsafe { CStr::from_ptr(name) }) {
            return ffi::SQLITE_OK;
        }
        // SAFETY: the caller's arguments, passed on unchanged.
        unsafe { (self.parent_delete)(vfs, name, sync_dir) }
    }

    /// `xAccess`: a served WAL exists while it is open and not empty (the `unix` VFS also
    /// calls an empty file absent), so what SQLite learns matches what it would on disk.
    /// SQLite asks about its WAL only while no WAL is open (`pagerOpenWalIfPresent`, the hot
    /// WAL check at the first read, and `sqlite3PagerCloseWal`): before the first open that is
    /// the parent's answer (`CommsDb::create` removed any old `-wal`), and after a close it is
    /// "absent", which is true: the checkpointed log is gone with its memory.
    ///
    /// # Safety
    /// The arguments SQLite passes to `xAccess`.
    pub unsafe fn access(&self, vfs: *mut ffi::sqlite3_vfs, name: *const c_char, flags: c_int, out: *mut c_int) -> c_int {
        if !name.is_null() {
            // SAFETY: SQLite's name is a NUL-terminated string.
            let name = unsafe { CStr::from_ptr(name) };
            let served = self.served();
            if let Some(entry) = served.iter().find(|s| s.name.as_c_str() == name) {
                // SAFETY: `open` is set at open and cleared at close, under this lock, so the
                // file it points to is live; only its length is read.
                let exists = entry.open.is_some_and(|file| unsafe { !file.as_ref().bytes.is_empty() });
                // SAFETY: SQLite's out pointer.
                unsafe { *out = c_int::from(exists) };
                return ffi::SQLITE_OK;
            }
        }
        // SAFETY: the caller's arguments, passed on unchanged.
        unsafe { (self.parent_access)(vfs, name, flags, out) }
    }

    /// Whether the parent finds a non-empty file under `name` (`unix` calls an empty one absent).
    ///
    /// # Safety
    /// `name` is a NUL-terminated string; `vfs` is what SQLite passed (the parent ignores it).
    unsafe fn non_empty_on_disk(&self, vfs: *mut ffi::sqlite3_vfs, name: *const c_char) -> bool {
        let mut exists = 0;
        // SAFETY: the caller's contract; `exists` is a live out pointer.
        let rc = unsafe { (self.parent_access)(vfs, name, ffi::SQLITE_ACCESS_EXISTS, &mut exists) };
        rc != ffi::SQLITE_OK || exists != 0
    }

    /// Whether a log served here is still open: a connection using the VFS is still open.
    pub fn any_open(&self) -> bool {
        self.served().iter().any(|s| s.open.is_some())
    }

    fn is_served(&self, name: &CStr) -> bool {
        self.served().iter().any(|s| s.name.as_c_str() == name)
    }

    /// Forgets that `file` is open (its name stays served: it must not be looked for on disk).
    fn closed(&self, file: *mut MemoryFile) {
        for entry in self.served().iter_mut() {
            if entry.open.is_some_and(|open| open.as_ptr() == file) {
                entry.open = None;
            }
        }
    }
}

/// The memory file's methods: version 1, no shared memory (the exclusive-mode WAL index is on
/// the heap) and no memory mapping (SQLite maps only the main database).
static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 1,
    xClose: Some(x_close),
    xRead: Some(x_read),
    xWrite: Some(x_write),
    xTruncate: Some(x_truncate),
    xSync: Some(x_sync),
    xFileSize: Some(x_file_size),
    xLock: Some(x_lock),
    xUnlock: Some(x_lock),
    xCheckReservedLock: Some(x_check_reserved_lock),
    xFileControl: Some(x_file_control),
    xSectorSize: Some(x_sector_size),
    xDeviceCharacteristics: Some(x_device_characteristics),
    xShmMap: None,
    xShmLock: None,
    xShmBarrier: None,
    xShmUnmap: None,
    xFetch: None,
    xUnfetch: None,
};

/// The memory file behind a `sqlite3_file*` SQLite passes to one of `METHODS`.
///
/// # Safety
/// `file` must have been opened by `MemoryWals::open` and not closed; SQLite calls a file's
/// methods one at a time, so the borrow is unique while the method runs.
unsafe fn memory<'a>(file: *mut ffi::sqlite3_file) -> &'a mut MemoryFile {
    // SAFETY: the caller's contract; `base` is the first field of a `#[repr(C)]` MemoryFile.
    unsafe { &mut *file.cast::<MemoryFile>() }
}

unsafe extern "C" fn x_close(file: *mut ffi::sqlite3_file) -> c_int {
    let memory = file.cast::<MemoryFile>();
    // SAFETY: SQLite closes an open file once (it clears `pMethods` after), so the struct is
    // live and is read out exactly once; dropping it frees the log's bytes. The registry
    // outlives its files (see `MemoryFile::wals`).
    unsafe {
        let MemoryFile { wals, bytes, .. } = memory.read();
        keep_spare(bytes);
        (*wals).closed(memory);
    }
    ffi::SQLITE_OK
}

thread_local! {
    /// The buffer of the last log closed on this thread, emptied, for the next log opened on
    /// it. A sweep's worker makes one run after another, each growing its log from nothing to
    /// a few MiB (SQLite's auto-checkpoint), with a copy of the whole at every doubling;
    /// reusing the buffer leaves only the first run to grow it. Only its capacity is reused:
    /// a log opens empty (`len` 0), so no byte of an earlier run can be read.
    static SPARE: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// A spare buffer kept for reuse is at most this large, so a run of a thousand musicians does
/// not leave its log's memory held for the rest of the process.
const SPARE_BYTES_MAX: usize = 64 << 20;

/// An empty buffer for a log being opened: the thread's spare, or a new one.
fn spare_bytes() -> Vec<u8> {
    // A log opened while the thread ends (its locals being destroyed) starts from nothing.
    let mut bytes = SPARE.try_with(std::cell::Cell::take).unwrap_or_default();
    bytes.clear();
    bytes
}

/// Keeps `bytes`, emptied, as the thread's spare when it is the larger (and not too large).
fn keep_spare(mut bytes: Vec<u8>) {
    if bytes.capacity() > SPARE_BYTES_MAX {
        return;
    }
    bytes.clear();
    // A log closed as its thread ends (a connection kept between runs, sim/world/db_pool.rs,
    // dropped with the thread's other locals, this one perhaps already gone) is just freed.
    let _ = SPARE.try_with(|spare| {
        let kept = spare.take();
        spare.set(if kept.capacity() >= bytes.capacity() { kept } else { bytes });
    });
}

/// The largest log this file holds: SQLite asks for nothing near it (a WAL grows by pages
/// until a checkpoint resets it), so an offset or size beyond it is a caller's bug, refused.
const WAL_BYTES_MAX: u64 = 1 << 40;

/// `offset` and `amount` as a byte range, when both are non-negative and the range ends
/// within `WAL_BYTES_MAX`: SQLite's contract, checked so a broken call is an I/O error, not
/// undefined behaviour (a negative amount would be a slice of `usize::MAX` bytes).
fn checked_range(offset: ffi::sqlite3_int64, amount: c_int) -> Option<(usize, usize)> {
    let (offset, amount) = (u64::try_from(offset).ok()?, u64::try_from(amount).ok()?);
    let end = offset.checked_add(amount).filter(|end| *end <= WAL_BYTES_MAX)?;
    Some((usize::try_from(offset).ok()?, usize::try_from(end - offset).ok()?))
}

unsafe extern "C" fn x_read(file: *mut ffi::sqlite3_file, out: *mut c_void, amount: c_int, offset: ffi::sqlite3_int64) -> c_int {
    let Some((start, amount)) = checked_range(offset, amount) else { return ffi::SQLITE_IOERR_READ };
    if amount > 0 && out.is_null() {
        return ffi::SQLITE_IOERR_READ;
    }
    // SAFETY: an open memory file (SQLite calls methods only on open files).
    let bytes = unsafe { &memory(file).bytes };
    if amount == 0 {
        return ffi::SQLITE_OK;
    }
    // SAFETY: SQLite's buffer holds `amount` writable bytes (checked non-negative above).
    let out = unsafe { std::slice::from_raw_parts_mut(out.cast::<u8>(), amount) };
    let available = bytes.len().saturating_sub(start).min(amount);
    if available > 0 {
        out[..available].copy_from_slice(&bytes[start..start + available]);
    }
    if available < amount {
        // SQLite requires the unread rest zeroed on a short read (it may use the buffer).
        out[available..].fill(0);
        return ffi::SQLITE_IOERR_SHORT_READ;
    }
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_write(file: *mut ffi::sqlite3_file, data: *const c_void, amount: c_int, offset: ffi::sqlite3_int64) -> c_int {
    let Some((start, amount)) = checked_range(offset, amount) else { return ffi::SQLITE_IOERR_WRITE };
    if amount > 0 && data.is_null() {
        return ffi::SQLITE_IOERR_WRITE;
    }
    // SAFETY: an open memory file.
    let bytes = unsafe { &mut memory(file).bytes };
    if amount == 0 {
        return ffi::SQLITE_OK;
    }
    // SAFETY: SQLite's buffer holds `amount` readable bytes (checked non-negative above).
    let data = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), amount) };
    // Memory that cannot be had is SQLite's out-of-memory error, not an abort of the process.
    let end = start + amount;
    if bytes.try_reserve(end.saturating_sub(bytes.len())).is_err() {
        return ffi::SQLITE_IOERR_NOMEM;
    }
    if start > bytes.len() {
        // A write past the end leaves a gap that reads as zeros, as in a sparse file.
        bytes.resize(start, 0);
    }
    // The part over existing bytes is overwritten, the rest appended: a WAL mostly appends,
    // and appending copies once where zero-filling first would write every byte twice.
    let overlap = (bytes.len() - start).min(data.len());
    bytes[start..start + overlap].copy_from_slice(&data[..overlap]);
    bytes.extend_from_slice(&data[overlap..]);
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_truncate(file: *mut ffi::sqlite3_file, size: ffi::sqlite3_int64) -> c_int {
    let Some((size, _)) = checked_range(size, 0) else { return ffi::SQLITE_IOERR_TRUNCATE };
    // SAFETY: an open memory file.
    let bytes = unsafe { &mut memory(file).bytes };
    if bytes.try_reserve(size.saturating_sub(bytes.len())).is_err() {
        return ffi::SQLITE_IOERR_NOMEM;
    }
    // Like ftruncate(), a larger size extends with zeros.
    bytes.resize(size, 0);
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_sync(_file: *mut ffi::sqlite3_file, _flags: c_int) -> c_int {
    // Nothing to make durable: the log is memory by design (see the module doc's trade-off).
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_file_size(file: *mut ffi::sqlite3_file, size: *mut ffi::sqlite3_int64) -> c_int {
    // SAFETY: an open memory file; SQLite's out pointer.
    unsafe { *size = memory(file).bytes.len() as ffi::sqlite3_int64 };
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_lock(_file: *mut ffi::sqlite3_file, _level: c_int) -> c_int {
    // No other connection can see this file: locks have nothing to exclude.
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_check_reserved_lock(_file: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    // SAFETY: SQLite's out pointer.
    unsafe { *out = 0 };
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_file_control(_file: *mut ffi::sqlite3_file, _op: c_int, _arg: *mut c_void) -> c_int {
    ffi::SQLITE_NOTFOUND
}

unsafe extern "C" fn x_sector_size(_file: *mut ffi::sqlite3_file) -> c_int {
    SECTOR_SIZE_BYTES
}

unsafe extern "C" fn x_device_characteristics(_file: *mut ffi::sqlite3_file) -> c_int {
    // What the `unix` VFS reports for an ordinary file (powersafe overwrite is its default).
    ffi::SQLITE_IOCAP_POWERSAFE_OVERWRITE
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::clock::{ClockVfs, SimClock};
    use rusqlite::{Connection, OpenFlags};
    use std::path::Path;

    /// A memory file opened through `wals`'s `open`, in a buffer the size SQLite would give.
    struct TestFile {
        buffer: Vec<u64>,
    }

    impl TestFile {
        fn open(wals: &MemoryWals, name: &CStr) -> TestFile {
            let (rc, file) = TestFile::try_open(wals, name);
            assert_eq!(rc, ffi::SQLITE_OK);
            file.expect("opened")
        }

        fn try_open(wals: &MemoryWals, name: &CStr) -> (c_int, Option<TestFile>) {
            let mut buffer = vec![0_u64; FILE_SIZE_BYTES.div_ceil(8)];
            let file = buffer.as_mut_ptr().cast::<ffi::sqlite3_file>();
            let mut out_flags = 0;
            let flags = ffi::SQLITE_OPEN_READWRITE | ffi::SQLITE_OPEN_CREATE | ffi::SQLITE_OPEN_WAL;
            // SAFETY: a buffer of FILE_SIZE_BYTES, 8-aligned; the parent's access ignores the
            // null VFS, and a WAL open never calls the parent's open.
            let rc = unsafe { wals.open(std::ptr::null_mut(), name.as_ptr(), file, flags, &mut out_flags) };
            if rc != ffi::SQLITE_OK {
                // SAFETY: the buffer `open` was given.
                assert!(unsafe { (*file).pMethods.is_null() }, "a refused open leaves no methods to call");
                return (rc, None);
            }
            assert_eq!(out_flags, flags);
            (rc, Some(TestFile { buffer }))
        }

        fn file(&mut self) -> *mut ffi::sqlite3_file {
            self.buffer.as_mut_ptr().cast()
        }

        fn methods(&mut self) -> &'static ffi::sqlite3_io_methods {
            // SAFETY: set by `open` to the static METHODS.
            unsafe { &*(*self.file()).pMethods }
        }

        fn write(&mut self, offset: i64, data: &[u8]) {
            let rc = unsafe { (self.methods().xWrite.unwrap())(self.file(), data.as_ptr().cast(), data.len() as c_int, offset) };
            assert_eq!(rc, ffi::SQLITE_OK);
        }

        fn read(&mut self, offset: i64, amount: usize) -> (c_int, Vec<u8>) {
            // Filled with junk first: a short read must zero what it did not read.
            let mut out = vec![0xAA_u8; amount];
            let rc = unsafe { (self.methods().xRead.unwrap())(self.file(), out.as_mut_ptr().cast(), amount as c_int, offset) };
            (rc, out)
        }

        fn size(&mut self) -> i64 {
            let mut size = -1;
            assert_eq!(unsafe { (self.methods().xFileSize.unwrap())(self.file(), &mut size) }, ffi::SQLITE_OK);
            size
        }

        fn truncate(&mut self, size: i64) {
            assert_eq!(unsafe { (self.methods().xTruncate.unwrap())(self.file(), size) }, ffi::SQLITE_OK);
        }

        fn close(mut self) {
            assert_eq!(unsafe { (self.methods().xClose.unwrap())(self.file()) }, ffi::SQLITE_OK);
        }
    }

    fn test_wals() -> MemoryWals {
        // SAFETY: the default VFS is a static of SQLite's; only its function pointers are copied.
        let parent = unsafe {
            ffi::sqlite3_initialize();
            &*ffi::sqlite3_vfs_find(std::ptr::null())
        };
        MemoryWals::new(parent).unwrap()
    }

    fn exists(wals: &MemoryWals, name: &CStr) -> bool {
        let mut out = -1;
        let rc = unsafe { wals.access(std::ptr::null_mut(), name.as_ptr(), ffi::SQLITE_ACCESS_EXISTS, &mut out) };
        assert_eq!(rc, ffi::SQLITE_OK);
        out == 1
    }

    #[test]
    fn a_short_read_returns_what_there_is_and_zeroes_the_rest() {
        let wals = test_wals();
        let mut file = TestFile::open(&wals, c"/nowhere/a.db-wal");
        file.write(0, b"abcdef");
        assert_eq!(file.read(2, 3), (ffi::SQLITE_OK, b"cde".to_vec()));
        assert_eq!(file.read(4, 4), (ffi::SQLITE_IOERR_SHORT_READ, b"ef\0\0".to_vec()));
        assert_eq!(file.read(100, 2), (ffi::SQLITE_IOERR_SHORT_READ, vec![0, 0]));
        // A write past the end leaves a gap of zeros.
        file.write(8, b"gh");
        assert_eq!(file.read(0, 10), (ffi::SQLITE_OK, b"abcdef\0\0gh".to_vec()));
        // A write over the end overwrites what is there and appends the rest.
        file.write(9, b"ijk");
        assert_eq!(file.read(0, 12), (ffi::SQLITE_OK, b"abcdef\0\0gijk".to_vec()));
        file.close();
    }

    /// Issue 30: arguments outside SQLite's contract (a negative amount or offset, a range past
    /// any log's size) are I/O errors that leave the file as it was, not undefined behaviour.
    #[test]
    fn negative_or_out_of_range_arguments_are_errors_and_change_nothing() {
        let wals = test_wals();
        let mut file = TestFile::open(&wals, c"/nowhere/range.db-wal");
        file.write(0, b"abcdef");
        let methods = file.methods();
        let (read, write, truncate) = (methods.xRead.unwrap(), methods.xWrite.unwrap(), methods.xTruncate.unwrap());
        let mut buffer = [0xAA_u8; 8];
        let data = [1_u8; 8];
        let huge = WAL_BYTES_MAX as i64;
        for (amount, offset) in [(-1, 0), (4, -1), (i32::MIN, 2), (4, huge), (1, i64::MAX), (8, huge - 4)] {
            let rc = unsafe { read(file.file(), buffer.as_mut_ptr().cast(), amount, offset) };
            assert_eq!(rc, ffi::SQLITE_IOERR_READ, "read of {amount} at {offset}");
            let rc = unsafe { write(file.file(), data.as_ptr().cast(), amount, offset) };
            assert_eq!(rc, ffi::SQLITE_IOERR_WRITE, "write of {amount} at {offset}");
        }
        assert_eq!(buffer, [0xAA; 8], "a refused read writes nothing");
        for size in [-1, huge + 1, i64::MAX] {
            assert_eq!(unsafe { truncate(file.file(), size) }, ffi::SQLITE_IOERR_TRUNCATE, "truncate to {size}");
        }
        assert_eq!(file.size(), 6);
        assert_eq!(file.read(0, 6), (ffi::SQLITE_OK, b"abcdef".to_vec()));
        // Zero bytes at any offset within range are nothing to do.
        let rc = unsafe { read(file.file(), std::ptr::null_mut(), 0, 100) };
        assert_eq!(rc, ffi::SQLITE_OK);
        file.close();
    }

    /// Issue 32: a log opened after another closed on the same thread reuses its buffer's
    /// capacity (a sweep's runs do not grow a log from nothing each), never its bytes.
    #[test]
    fn a_log_reuses_the_last_closed_ones_buffer_but_opens_empty() {
        let wals = test_wals();
        let mut first = TestFile::open(&wals, c"/nowhere/first.db-wal");
        first.write(0, &[7; 4096]);
        first.close();
        let mut second = TestFile::open(&wals, c"/nowhere/second.db-wal");
        // SAFETY: an open memory file; only its buffer's capacity is read.
        let capacity = unsafe { memory(second.file()).bytes.capacity() };
        assert!(capacity >= 4096, "the closed log's buffer was not reused (capacity {capacity})");
        assert_eq!(second.size(), 0);
        assert_eq!(second.read(0, 4), (ffi::SQLITE_IOERR_SHORT_READ, vec![0; 4]));
        second.truncate(8);
        assert_eq!(second.read(0, 8), (ffi::SQLITE_OK, vec![0; 8]), "an extension reads as zeros, not the last log's bytes");
        second.close();
    }

    #[test]
    fn truncate_shrinks_and_extends_with_zeros() {
        let wals = test_wals();
        let mut file = TestFile::open(&wals, c"/nowhere/b.db-wal");
        file.write(0, &[7; 100]);
        assert_eq!(file.size(), 100);
        file.truncate(10);
        assert_eq!(file.size(), 10);
        assert_eq!(file.read(8, 4), (ffi::SQLITE_IOERR_SHORT_READ, vec![7, 7, 0, 0]));
        file.truncate(12);
        assert_eq!(file.read(8, 4), (ffi::SQLITE_OK, vec![7, 7, 0, 0]));
        file.truncate(0);
        assert_eq!(file.size(), 0);
        file.close();
    }

    #[test]
    fn a_served_wal_exists_while_open_and_not_empty_and_is_never_looked_for_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let wal_path = dir.path().join("c.db-wal");
        let name = CString::new(wal_path.to_str().unwrap()).unwrap();
        let wals = test_wals();
        let mut file = TestFile::open(&wals, &name);
        // A stray file on disk under the name, made while it is served: the parent would call
        // it present.
        std::fs::write(&wal_path, b"stray").unwrap();
        assert!(!exists(&wals, &name), "open but empty: absent, as unix says of an empty file");
        file.write(0, b"x");
        assert!(exists(&wals, &name));
        file.close();
        assert!(!exists(&wals, &name), "closed: the memory is gone");
        let rc = unsafe { wals.delete(std::ptr::null_mut(), name.as_ptr(), 0) };
        assert_eq!(rc, ffi::SQLITE_OK);
        assert_eq!(std::fs::read(&wal_path).unwrap(), b"stray", "delete of a served WAL leaves the disk alone");
        // Opened again, the same name reads empty: no bytes survive a close.
        let mut again = TestFile::open(&wals, &name);
        assert_eq!(again.size(), 0);
        // A second open while it is open would be a second, private log: refused.
        assert_eq!(TestFile::try_open(&wals, &name).0, ffi::SQLITE_CANTOPEN);
        again.close();
    }

    #[test]
    fn a_wal_already_on_disk_is_refused_rather_than_served_empty() {
        let dir = tempfile::tempdir().unwrap();
        let wal_path = dir.path().join("old.db-wal");
        let name = CString::new(wal_path.to_str().unwrap()).unwrap();
        let wals = test_wals();
        std::fs::write(&wal_path, b"").unwrap();
        TestFile::open(&wals, &name).close(); // an empty file is no log: served
        let other = CString::new(dir.path().join("other.db-wal").to_str().unwrap()).unwrap();
        std::fs::write(dir.path().join("other.db-wal"), b"frames of an earlier run").unwrap();
        assert_eq!(TestFile::try_open(&wals, &other).0, ffi::SQLITE_CANTOPEN, "its commits would be ignored");
    }

    /// The run's settings (sim/world/db.rs) on a connection through `vfs`.
    fn open_like_a_run(path: &Path, vfs: &str) -> Connection {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
        let conn = Connection::open_with_flags_and_vfs(path, flags, vfs).unwrap();
        conn.query_row("PRAGMA locking_mode = EXCLUSIVE", [], |r| r.get::<_, String>(0)).unwrap();
        assert_eq!(conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0)).unwrap(), "wal");
        conn.execute_batch("PRAGMA synchronous = NORMAL;").unwrap();
        conn
    }

    /// Bytes of the WAL SQLite has open on `conn`, through its file handle.
    fn wal_size_bytes(conn: &Connection) -> i64 {
        let mut file: *mut ffi::sqlite3_file = std::ptr::null_mut();
        // SAFETY: JOURNAL_POINTER writes the main database's journal (here the WAL) handle.
        let rc = unsafe {
            ffi::sqlite3_file_control(conn.handle(), c"main".as_ptr(), ffi::SQLITE_FCNTL_JOURNAL_POINTER, (&raw mut file).cast())
        };
        assert_eq!(rc, ffi::SQLITE_OK);
        let mut size = -1;
        // SAFETY: an open file handle of the connection, used on its thread.
        unsafe { ((*(*file).pMethods).xFileSize.unwrap())(file, &mut size) };
        size
    }

    /// Writes several thousand pages in many transactions (auto-checkpoints run every 1000
    /// WAL pages), with updates and deletes so checkpoints overwrite and free pages; returns
    /// the WAL's size before the final checkpoint and after it.
    fn workload(conn: &Connection) -> (i64, i64) {
        conn.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT, n INTEGER); CREATE INDEX t_n ON t (n);").unwrap();
        for batch in 0..80_i64 {
            let tx = conn.unchecked_transaction().unwrap();
            for i in 0..200_i64 {
                let id = batch * 200 + i;
                tx.execute("INSERT INTO t (id, body, n) VALUES (?1, ?2, ?3)", (id, format!("{id:>400}"), id % 97)).unwrap();
            }
            tx.execute("UPDATE t SET body = body || 'u' WHERE n = ?1", [batch % 97]).unwrap();
            tx.execute("DELETE FROM t WHERE id % 13 = ?1 AND id < ?2", (batch % 13, batch * 20)).unwrap();
            tx.commit().unwrap();
        }
        let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0)).unwrap();
        assert!(pages > 1000, "the workload spans more than one auto-checkpoint ({pages} pages)");
        let before = wal_size_bytes(conn);
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);").unwrap();
        (before, wal_size_bytes(conn))
    }

    #[test]
    fn a_database_with_its_wal_in_memory_is_byte_for_byte_the_one_unix_writes() {
        let dir = tempfile::tempdir().unwrap();
        let (on_disk, in_memory) = (dir.path().join("unix.db"), dir.path().join("memory.db"));
        let unix = open_like_a_run(&on_disk, "unix");
        let (unix_before, unix_after) = workload(&unix);
        assert!(Path::new(&format!("{}-wal", on_disk.display())).exists(), "unix keeps its WAL on disk");
        unix.close().unwrap();

        let vfs = ClockVfs::register(SimClock::new(0)).unwrap();
        let memory = open_like_a_run(&in_memory, vfs.name());
        let (memory_before, memory_after) = workload(&memory);
        assert!(!Path::new(&format!("{}-wal", in_memory.display())).exists(), "the WAL never reaches the disk");
        assert_eq!((memory_before, memory_after), (unix_before, unix_after), "the same log, and truncated to 0 alike");
        assert!(memory_before > 0 && memory_after == 0);
        memory.close().unwrap();
        drop(vfs);

        assert!(std::fs::read(&in_memory).unwrap() == std::fs::read(&on_disk).unwrap(), "same database bytes");
        assert!(!Path::new(&format!("{}-wal", on_disk.display())).exists(), "unix deleted its WAL at close");
    }
}
