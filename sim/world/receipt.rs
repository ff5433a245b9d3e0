//! What a receipt acknowledges (variant `durable-cursor`, issue 28). `send_receipt` inserts
//! the session's receipt and returns, in the same statement, the conductor messages it covers
//! (scenarios/protocol.sql). Reading and acknowledging are one atomic write, so the messages
//! count as handled by the session at that statement's commit: the world observes the
//! `MessageHandled` facts there, and a crash right after the statement cannot lose them (000
//! "Message Deduplication": each message handled once; the cursor is what makes it durable).

use crate::world::db::SqlOutcome;

/// One message a receipt returned: its id, text and `timestamp`.
pub type Received = (i64, String, String);

/// The messages a receipt's result returns: one row, one JSON array of `[id, message,
/// timestamp]`. No row (a fenced-out receipt) is no message; a designer's `send_receipt` that
/// returns something else is an error the caller reports.
pub fn received(outcome: &SqlOutcome) -> Result<Vec<Received>, serde_json::Error> {
    match outcome.rows.is_empty() {
        true => Ok(Vec::new()),
        false => serde_json::from_str(outcome.text(0, 0).unwrap_or("[]")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::types::Value;

    fn outcome(rows: Vec<Vec<Value>>) -> SqlOutcome {
        SqlOutcome { rows_affected: rows.len(), rows: crate::world::db::ResultRows::from_values(rows), readonly: false }
    }

    #[test]
    fn a_receipt_returns_its_messages_in_order_and_a_fenced_one_none() {
        let json = r#"[[7,"approved","2026-01-01 00:00:01"],[9,"fix it","2026-01-01 00:00:02"]]"#;
        let read = received(&outcome(vec![vec![Value::Text(json.into())]])).unwrap();
        assert_eq!(read.iter().map(|(id, _, _)| *id).collect::<Vec<_>>(), vec![7, 9]);
        assert_eq!(read[1].1, "fix it");
        assert!(received(&outcome(vec![])).unwrap().is_empty());
        assert!(received(&outcome(vec![vec![Value::Text("[]".into())]])).unwrap().is_empty());
        assert!(received(&outcome(vec![vec![Value::Text("not json".into())]])).is_err());
    }
}
