//! SQLite's own clock follows the simulated clock: `datetime('now')`, `julianday('now')`,
//! `CURRENT_TIMESTAMP` defaults and `unixepoch()` (ARCHITECTURE.md, invariant "SQLite reads the simulated clock").

use rehearsal::base::clock::{parse_utc, SimClock};
use rehearsal::input::sql_catalog::Catalog;
use rehearsal::world::db::CommsDb;

#[test]
fn every_sql_time_function_reads_the_simulated_clock() {
    let tmp = tempfile::tempdir().unwrap();
    let epoch = parse_utc("2030-06-01 12:00:00").unwrap();
    let clock = SimClock::new(epoch);
    let db = CommsDb::create(&tmp.path().join("comms.db"), clock.clone(), 1, Catalog::default_protocol()).unwrap();
    let conn = db.connection();
    let read =
        |sql: &str| -> String { conn.query_row(sql, [], |r| r.get::<_, rusqlite::types::Value>(0)).map(|v| format!("{v:?}")).unwrap() };
    assert_eq!(read("SELECT datetime('now')"), "Text(\"2030-06-01 12:00:00\")");
    clock.advance_to(epoch + 90 * 60_000 + 1500);
    assert_eq!(read("SELECT datetime('now')"), "Text(\"2030-06-01 13:30:01\")");
    assert_eq!(read("SELECT strftime('%Y-%m-%d %H:%M:%f', 'now')"), "Text(\"2030-06-01 13:30:01.500\")");
    assert_eq!(read("SELECT unixepoch('now')"), format!("Integer({})", (epoch + 90 * 60_000 + 1500) / 1000));
    assert_eq!(read("SELECT round((julianday('now') - julianday('2030-06-01 12:00:00')) * 86400, 1)"), "Real(5401.5)");
    conn.execute(
        "INSERT INTO orchestration_messages (task_id, from_session, message, message_type) VALUES ('t', 's', 'm', 'instruction')",
        [],
    )
    .unwrap();
    assert_eq!(read("SELECT timestamp FROM orchestration_messages"), "Text(\"2030-06-01 13:30:01\")");
}

#[test]
fn two_databases_on_two_clocks_do_not_share_time() {
    let tmp = tempfile::tempdir().unwrap();
    let (c1, c2) = (SimClock::new(0), SimClock::new(86_400_000));
    let d1 = CommsDb::create(&tmp.path().join("1.db"), c1, 1, Catalog::default_protocol()).unwrap();
    let d2 = CommsDb::create(&tmp.path().join("2.db"), c2, 1, Catalog::default_protocol()).unwrap();
    let now = |db: &CommsDb| -> String { db.connection().query_row("SELECT datetime('now')", [], |r| r.get(0)).unwrap() };
    assert_eq!(now(&d1), "1970-01-01 00:00:00");
    assert_eq!(now(&d2), "1970-01-02 00:00:00");
}
