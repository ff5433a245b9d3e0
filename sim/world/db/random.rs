//! `random()` and `randomblob(N)` for the protocol's SQL, drawn from the run's own seeded
//! stream instead of SQLite's PRNG.
//!
//! SQLite's PRNG is one per process: each run reseeds it (`seed_sqlite_prng`), so runs on
//! parallel workers (`--jobs 2`) interleave their draws and a statement that calls `random()`
//! gave a result that depended on the other runs (issue 25, item 5). SQLite lets a connection
//! override a built-in function (`sqlite3_create_function` with its name and arity), so each
//! run's connection gets these two, backed by a ChaCha8 stream derived from the run's seed
//! (`rng::stream`): the same draws in the same order on any worker, with no lock shared
//! between runs. A run is one thread, so the mutex is never contended; it is there because
//! SQLite's function callbacks must be `Send`.

use std::sync::{Arc, Mutex};

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::ValueRef;
use rusqlite::Connection;

/// The name of the stream, apart from every actor's (sim/base/rng.rs).
const STREAM: &str = "sqlite:random()";

/// SQLite's own ceiling on a blob (SQLITE_MAX_LENGTH): a larger `randomblob(N)` is refused
/// as SQLite refuses it, rather than allocated.
const BLOB_MAX_BYTES: i64 = 1_000_000_000;

/// The stream behind a connection's `random()` and `randomblob(N)`.
pub struct Stream(Arc<Mutex<ChaCha8Rng>>);

impl Stream {
    /// Draws from the stream of `seed` from now on, as a connection registered with `seed`
    /// does: for a connection kept for the next run (sim/world/db_pool.rs). Registering the
    /// functions again would expire every prepared statement (SQLite re-prepares them all).
    pub fn reseed(&self, seed: u64) {
        *self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = crate::base::rng::stream(seed, STREAM);
    }
}

/// Overrides `random()` and `randomblob(N)` on `conn` with draws from the stream of `seed`.
/// Neither is marked deterministic, so SQLite calls them once per row, as its own.
pub fn register(conn: &Connection, seed: u64) -> rusqlite::Result<Stream> {
    let stream = Arc::new(Mutex::new(crate::base::rng::stream(seed, STREAM)));
    let handle = Stream(stream.clone());
    let flags = FunctionFlags::SQLITE_UTF8;
    let for_random = stream.clone();
    conn.create_scalar_function("random", 0, flags, move |_| Ok(draw(&for_random, |rng| rng.next_u64() as i64)))?;
    conn.create_scalar_function("randomblob", 1, flags, move |ctx| {
        let bytes = blob_length(ctx)?;
        Ok(draw(&stream, |rng| {
            let mut blob = vec![0u8; bytes];
            rng.fill_bytes(&mut blob);
            blob
        }))
    })?;
    Ok(handle)
}

fn draw<T>(stream: &Mutex<ChaCha8Rng>, with: impl FnOnce(&mut ChaCha8Rng) -> T) -> T {
    let mut rng = stream.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    with(&mut rng)
}

/// `N` read as SQLite's `randomblob` reads it: as an integer (text and reals converted, NULL
/// and blobs 0), and at least 1 byte.
fn blob_length(ctx: &Context<'_>) -> rusqlite::Result<usize> {
    let n = match ctx.get_raw(0) {
        ValueRef::Integer(i) => i,
        ValueRef::Real(r) => r as i64,
        ValueRef::Text(t) => std::str::from_utf8(t).ok().and_then(leading_integer).unwrap_or(0),
        ValueRef::Null | ValueRef::Blob(_) => 0,
    };
    if n > BLOB_MAX_BYTES {
        return Err(rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_TOOBIG), None));
    }
    Ok(n.max(1) as usize)
}

/// The integer a text starts with, as SQLite converts `'12abc'` to 12.
fn leading_integer(text: &str) -> Option<i64> {
    let text = text.trim_start();
    let end =
        text.char_indices().find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && (c == '-' || c == '+')))).map_or(text.len(), |(i, _)| i);
    text[..end].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connection(seed: u64) -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        register(&conn, seed).unwrap();
        conn
    }

    fn draws(conn: &Connection) -> (Vec<i64>, Vec<u8>) {
        let ints = conn
            .prepare("SELECT random() FROM (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3)")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<Vec<i64>>>()
            .unwrap();
        let blob = conn.query_row("SELECT randomblob(16)", [], |r| r.get(0)).unwrap();
        (ints, blob)
    }

    #[test]
    fn the_draws_depend_on_the_seed_alone_whatever_else_uses_sqlites_prng() {
        let (a, b) = (connection(7), connection(7));
        let first = draws(&a);
        // SQLite's own PRNG, reseeded and drawn from between the two, must not matter.
        let _: Vec<u8> = Connection::open_in_memory().unwrap().query_row("SELECT randomblob(64)", [], |r| r.get(0)).unwrap();
        assert_eq!(draws(&b), first);
        assert_ne!(draws(&connection(8)), first, "another seed, other draws");
        assert_eq!(first.0.iter().collect::<std::collections::BTreeSet<_>>().len(), 3, "one draw per row: {:?}", first.0);
    }

    #[test]
    fn randomblob_reads_its_length_as_sqlite_does() {
        let conn = connection(1);
        let length = |arg: &str| conn.query_row(&format!("SELECT length(randomblob({arg}))"), [], |r| r.get::<_, i64>(0)).unwrap();
        assert_eq!([length("16"), length("0"), length("-3"), length("NULL"), length("'5x'"), length("2.9")], [16, 1, 1, 1, 5, 2]);
        assert!(conn.query_row("SELECT randomblob(2000000000)", [], |r| r.get::<_, Vec<u8>>(0)).is_err());
    }
}
