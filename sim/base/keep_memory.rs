//! Memory the program frees stays with the process, for the next run to reuse, instead of
//! going back to the kernel and being faulted in again, zeroed, page by page.
//!
//! A sweep makes thousands of short runs one after the other on each worker; each builds and
//! drops the same few megabytes (SQLite's page cache and its in-memory WAL, the trace's
//! buffers, the actors). Both allocators hand freed memory back to the kernel after a while
//! (mimalloc purges pages it has not reused within `purge_delay`; glibc's `malloc`, which
//! SQLite allocates from, trims its heap's top above `M_TRIM_THRESHOLD`), so each run paid for
//! page faults and zeroed pages again: a `perf` profile of 100 ci-smoke seeds counted 16,200
//! page faults and ~4.5 % of the samples under them; with both kept, 740 (issue 32,
//! docs/performance.md). A process's peak memory is what it was; it is only not returned
//! before the process ends. Nothing the program writes depends on where memory comes from.

use std::ffi::{c_int, c_long};

// Links mimalloc's static library wherever this module is (the tests, which keep the system
// allocator, too): the functions below are declared here, not by the crate.
use mimalloc as _;

/// `mi_option_purge_delay` in mimalloc's `mi_option_t` (`include/mimalloc.h` of both the v2
/// and v3 sources that `libmimalloc-sys` 0.1.49 bundles, the version Cargo.lock holds): the
/// 16th option, after `mi_option_deprecated_eager_commit_delay`.
const MI_OPTION_PURGE_DELAY: c_int = 15;

/// mimalloc's "never purge" value of `purge_delay`.
const NEVER: c_long = -1;

extern "C" {
    // The static mimalloc library `mimalloc` links in exports these (`mi_decl_export`).
    fn mi_option_set(option: c_int, value: c_long);
    fn mi_option_get(option: c_int) -> c_long;
}

/// glibc trims its heap only when more than this is free at its top: larger than any run
/// of the shipped workloads frees at once.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_THRESHOLD_BYTES: c_int = 256 << 20;

/// What glibc asks of the kernel beyond a request when its heap grows, so a growing run
/// does not extend the heap a page at a time.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TOP_PAD_BYTES: c_int = 64 << 20;

/// Keeps freed memory in the process from now on (called once, first thing in `main`).
pub fn keep_freed_memory() {
    // SAFETY: plain setters of the allocators' options, safe to call at any time.
    unsafe {
        mi_option_set(MI_OPTION_PURGE_DELAY, NEVER);
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: as above; mallopt returns 0 on a value it refuses, which leaves glibc's default.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES);
        libc::mallopt(libc::M_TOP_PAD, TOP_PAD_BYTES);
    }
}

/// Whether mimalloc keeps freed pages (its `purge_delay` is "never").
pub fn mimalloc_keeps_freed_pages() -> bool {
    // SAFETY: a plain getter.
    unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) == NEVER }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn purge_delay_is_set_to_never() {
        // Before: mimalloc v3's default purge delay (`options.c`: 1000 ms), which no option
        // near it in the enum has, so the index is the purge delay's; after: "never".
        // SAFETY: a plain getter.
        assert_eq!(unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) }, 1000, "option {MI_OPTION_PURGE_DELAY} is not the purge delay");
        keep_freed_memory();
        assert!(mimalloc_keeps_freed_pages());
    }
}
