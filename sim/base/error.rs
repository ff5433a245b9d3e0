//! Errors and the exit codes they map to (README.md "Exit codes").
//!
//! 0 pass; 1 the protocol failed; 2 usage error or invalid input; 3 the harness failed.
//! A protocol failure is not an error: it is a verdict (`report::Verdict`).

use std::fmt;

#[derive(Debug)]
pub enum Error {
    /// Bad scenario, SQL or command-line input: the user can fix it. Exit 2.
    Input(String),
    /// The harness itself failed (I/O, SQLite, an event cap): a bug or the environment. Exit 3.
    Harness(String),
}

impl Error {
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Input(_) => 2,
            Error::Harness(_) => 3,
        }
    }

    pub fn input(message: impl Into<String>) -> Error {
        Error::Input(message.into())
    }

    pub fn harness(message: impl Into<String>) -> Error {
        Error::Harness(message.into())
    }

    /// The same error, its message followed by a line saying how to reproduce it.
    pub fn with_replay(self, replay: &str) -> Error {
        // Named as the exit-1 lines name it: this program's path unless `rehearsal` on PATH
        // is this program, so it pastes (issue 41).
        let note = format!("\nrehearsal: reproduce with: {}", crate::base::shell::for_terminal(replay));
        match self {
            Error::Input(m) => Error::Input(m + &note),
            Error::Harness(m) => Error::Harness(m + &note),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Input(m) => write!(f, "invalid input: {m}"),
            Error::Harness(m) => write!(f, "harness error: {m}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Error {
        Error::Harness(format!("sqlite: {e}"))
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::Harness(format!("i/o: {e}"))
    }
}

pub type Result<T> = std::result::Result<T, Error>;
