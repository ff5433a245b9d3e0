//! A statement's result rows, read into one table (issue 47 item 2): every cell in one vector,
//! row after row, every text in one string and every blob in one byte buffer. A result costs
//! at most two allocations whatever its size (three with a blob), none without a row, where a vector of rows of `Value`s took
//! one a row and one a text column: `read_task_state`, 40 % of a fleet-day run's statements,
//! returned four allocations a row.

use rusqlite::types::{Value, ValueRef};

/// The room the first text of a result takes (`push_text`).
const TEXT_ROOM_BYTES: usize = 64;

/// One cell: its value, or where its text or bytes sit in their buffer.
#[derive(Clone, Copy, Debug)]
enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text { start: usize, end: usize },
    Blob { start: usize, end: usize },
}

/// The rows of one result, `width` cells a row.
#[derive(Clone, Debug, Default)]
pub struct ResultRows {
    width: usize,
    cells: Vec<Cell>,
    /// Every text cell's text, one after the other: UTF-8 checked once, when it is read in.
    text: String,
    blobs: Vec<u8>,
}

impl ResultRows {
    /// No row yet, `width` columns a row.
    pub fn with_width(width: usize) -> ResultRows {
        ResultRows { width, ..ResultRows::default() }
    }

    /// Rows given as values (tests, and the answers the simulator makes up itself).
    pub fn from_values(rows: Vec<Vec<Value>>) -> ResultRows {
        let mut out = ResultRows::with_width(rows.first().map_or(0, Vec::len));
        assert!(rows.is_empty() || out.width > 0, "a row has a column");
        for row in &rows {
            assert_eq!(row.len(), out.width, "every row has the first row's width");
            for value in row {
                out.push(ValueRef::from(value));
            }
        }
        out
    }

    /// Appends `row`'s first `width` columns; text that is not UTF-8 is the error reading it
    /// as a `Value` gives, as before the rows were one table.
    pub fn push_row(&mut self, row: &rusqlite::Row<'_>) -> rusqlite::Result<()> {
        // Room for the whole row at once: no growth check per cell, no growth inside a row.
        self.cells.reserve(self.width);
        for col in 0..self.width {
            match row.get_ref(col)? {
                ValueRef::Text(text) => match std::str::from_utf8(text) {
                    Ok(text) => self.push_text(text),
                    Err(_) => return row.get::<_, Value>(col).map(|_| ()),
                },
                value => self.push(value),
            }
        }
        Ok(())
    }

    fn push_text(&mut self, text: &str) {
        if self.text.capacity() == 0 {
            // The first text takes room for the texts of a typical row (a state and a
            // timestamp: `read_task_state`, 40 % of fleet-day's statements), so a short first
            // text is not followed by a second allocation for the next one.
            self.text.reserve(text.len().max(TEXT_ROOM_BYTES));
        }
        let start = self.text.len();
        self.text.push_str(text);
        self.cells.push(Cell::Text { start, end: self.text.len() });
    }

    /// Any value; text must be UTF-8 (`push_row` checks it first).
    fn push(&mut self, value: ValueRef<'_>) {
        let cell = match value {
            ValueRef::Null => Cell::Null,
            ValueRef::Integer(n) => Cell::Int(n),
            ValueRef::Real(r) => Cell::Real(r),
            ValueRef::Text(text) => return self.push_text(std::str::from_utf8(text).expect("text is UTF-8")),
            ValueRef::Blob(blob) => {
                let start = self.blobs.len();
                self.blobs.extend_from_slice(blob);
                Cell::Blob { start, end: self.blobs.len() }
            }
        };
        self.cells.push(cell);
    }

    /// How many rows.
    pub fn len(&self) -> usize {
        self.cells.len().checked_div(self.width).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    fn cell(&self, row: usize, col: usize) -> Option<Cell> {
        if col >= self.width {
            return None;
        }
        self.cells.get(row * self.width + col).copied()
    }

    /// Row `row`'s column `col` as SQLite returned it; `None` past the result.
    pub fn value(&self, row: usize, col: usize) -> Option<ValueRef<'_>> {
        Some(match self.cell(row, col)? {
            Cell::Null => ValueRef::Null,
            Cell::Int(n) => ValueRef::Integer(n),
            Cell::Real(r) => ValueRef::Real(r),
            Cell::Text { start, end } => ValueRef::Text(&self.text.as_bytes()[start..end]),
            Cell::Blob { start, end } => ValueRef::Blob(&self.blobs[start..end]),
        })
    }

    /// A text column; `None` for any other type.
    pub fn text(&self, row: usize, col: usize) -> Option<&str> {
        match self.cell(row, col)? {
            Cell::Text { start, end } => Some(&self.text[start..end]),
            _ => None,
        }
    }
}

/// Equal when they hold the same rows of the same values (as `Vec<Vec<Value>>` compared):
/// where the bytes sit, and the width of a result without rows, do not count.
impl PartialEq for ResultRows {
    fn eq(&self, other: &ResultRows) -> bool {
        if self.is_empty() && other.is_empty() {
            return true;
        }
        let same_row = |r| (0..self.width).all(|c| self.value(r, c) == other.value(r, c));
        self.width == other.width && self.len() == other.len() && (0..self.len()).all(same_row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_read_back_as_the_values_they_were() {
        let rows = ResultRows::from_values(vec![
            vec![Value::Text("working".into()), Value::Integer(2), Value::Real(1.5), Value::Null],
            vec![Value::Text("é\n".into()), Value::Integer(-3), Value::Real(0.0), Value::Blob(vec![1, 2])],
        ]);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows.text(0, 0), Some("working"));
        assert_eq!(rows.text(1, 0), Some("é\n"));
        assert_eq!(rows.value(0, 1), Some(ValueRef::Integer(2)));
        assert_eq!(rows.value(1, 2), Some(ValueRef::Real(0.0)));
        assert_eq!(rows.value(0, 3), Some(ValueRef::Null));
        assert_eq!(rows.value(1, 3), Some(ValueRef::Blob(&[1, 2])));
        assert_eq!(rows.text(0, 1), None);
        assert_eq!(rows.value(0, 4), None);
        assert_eq!(rows.value(2, 0), None);
    }

    #[test]
    fn equal_rows_are_equal_wherever_their_bytes_sit() {
        let a = ResultRows::from_values(vec![vec![Value::Text("ab".into()), Value::Text("c".into())]]);
        let b = ResultRows::from_values(vec![vec![Value::Text("a".into()), Value::Text("bc".into())]]);
        assert_ne!(a, b);
        assert_eq!(a, a.clone());
        assert_eq!(ResultRows::with_width(4), ResultRows::default());
        assert_ne!(a, ResultRows::default());
        let int = ResultRows::from_values(vec![vec![Value::Integer(1)]]);
        assert_ne!(int, ResultRows::from_values(vec![vec![Value::Integer(2)]]));
        assert_ne!(int, ResultRows::from_values(vec![vec![Value::Integer(1)], vec![Value::Integer(1)]]));
    }

    #[test]
    fn a_row_read_from_sqlite_keeps_its_types() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let mut stmt = conn.prepare("SELECT 'x', 7, 2.5, NULL UNION ALL SELECT 'yz', 8, 3.0, x'00'").unwrap();
        let mut rows = ResultRows::with_width(stmt.column_count());
        let mut query = stmt.raw_query();
        while let Some(row) = query.next().unwrap() {
            rows.push_row(row).unwrap();
        }
        let expected = ResultRows::from_values(vec![
            vec![Value::Text("x".into()), Value::Integer(7), Value::Real(2.5), Value::Null],
            vec![Value::Text("yz".into()), Value::Integer(8), Value::Real(3.0), Value::Blob(vec![0])],
        ]);
        assert_eq!(rows, expected);
    }
}
