//! The protocol's SQL as data: named statements parsed from `.sql` files.
//!
//! A file is a sequence of entries, each introduced by `-- name: NAME`. The engine supplies
//! a fixed set of named parameters to each statement (`required()`); a statement may use any
//! subset of them, and nothing else. Every statement is prepared against the real schema
//! when the run starts, so a broken one is named before anything runs (ARCHITECTURE.md, invariant "the protocol's SQL is data").

use std::collections::BTreeMap;
use std::path::Path;

use crate::base::error::{Error, Result};
use crate::vocab::Stmt;

/// The default protocol, compiled in so the binary works from any folder.
pub const DEFAULT_PROTOCOL_SQL: &str = include_str!("../../scenarios/protocol.sql");
pub const DEFAULT_PROTOCOL_FILE: &str = "scenarios/protocol.sql";

/// Every statement the engine executes, with the parameters it binds to it (derived from the
/// vocabulary's `Stmt`, the one list of statement names).
pub fn required() -> impl Iterator<Item = (&'static str, &'static [&'static str])> {
    Stmt::ALL.into_iter().map(|s| (s.name(), s.supplied()))
}

#[derive(Clone, Debug)]
pub struct Statement {
    pub name: String,
    pub sql: String,
    /// Where the entry came from, for error messages: `file:line`.
    pub origin: String,
    /// Named parameters the statement actually uses, in order of first use.
    pub params: Vec<String>,
}

/// The named statements of one run: the default file with any overrides applied.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    statements: BTreeMap<String, Statement>,
    /// The files its entries came from, in the order they were applied.
    sources: Vec<String>,
}

/// Which SQL a run ran: the files, in order, and the SHA-256 of the statements that resulted
/// (name and SQL of each, by name), so two runs with the same hash ran the same statements
/// whatever the files were called.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct SqlIdentity {
    pub files: Vec<String>,
    pub sha256: String,
}

impl SqlIdentity {
    /// Whether only the seeds' own statements ran (the built-in file, nothing replaced).
    pub fn is_seeds_own(&self) -> bool {
        self.files.len() == 1
    }
}

impl std::fmt::Display for SqlIdentity {
    /// `scenarios/protocol.sql (built in) + my.sql, sha256 0123456789abcdef` (16 hex digits).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let files: Vec<String> =
            self.files.iter().map(|file| if file == DEFAULT_PROTOCOL_FILE { format!("{file} (built in)") } else { file.clone() }).collect();
        write!(f, "{}, sha256 {}", files.join(" + "), &self.sha256[..16.min(self.sha256.len())])
    }
}

impl Catalog {
    pub fn default_protocol() -> Catalog {
        let entries = parse(DEFAULT_PROTOCOL_SQL, DEFAULT_PROTOCOL_FILE).expect("the built-in protocol.sql parses");
        let mut catalog = Catalog { sources: vec![DEFAULT_PROTOCOL_FILE.to_string()], ..Catalog::default() };
        for entry in entries {
            catalog.statements.insert(entry.name.clone(), entry);
        }
        catalog
    }

    /// The files applied and the SHA-256 of the resulting statements.
    pub fn identity(&self) -> SqlIdentity {
        use sha2::{Digest, Sha256};
        let mut hasher = Sha256::new();
        for statement in self.statements.values() {
            hasher.update(statement.name.as_bytes());
            hasher.update([0]);
            hasher.update(statement.sql.as_bytes());
            hasher.update([0]);
        }
        let sha256 = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
        SqlIdentity { files: self.sources.clone(), sha256 }
    }

    /// Replaces the named entries of `text` (a variant or a scenario's own SQL file).
    pub fn override_with(&mut self, text: &str, file: &str) -> Result<()> {
        self.sources.push(file.to_string());
        for entry in parse(text, file)? {
            self.statements.insert(entry.name.clone(), entry);
        }
        Ok(())
    }

    /// Replaces the named entries of the SQL file at `path`, which must be text with at least
    /// one `-- name:` entry, each of a statement the engine runs: anything else (an empty
    /// file, a binary one, plain SQL, a `.toml`) would leave the protocol as it was and the
    /// run would report on SQL nobody meant, so it is refused naming the file (and line).
    pub fn override_from_file(&mut self, path: &Path) -> Result<()> {
        let text = read_sql_file(path)?;
        let file = path.display().to_string();
        let entries = parse(&text, &file)?;
        if entries.is_empty() {
            return Err(Error::input(format!(
                "{file}: no `-- name:` entry: a protocol SQL file is a list of statements, each after a line `-- name: NAME` naming the statement it replaces (known names: {})",
                known_names().join(", ")
            )));
        }
        for entry in &entries {
            if Stmt::parse(&entry.name).is_none() {
                return Err(unknown_statement(entry));
            }
        }
        self.sources.push(file);
        for entry in entries {
            self.statements.insert(entry.name.clone(), entry);
        }
        Ok(())
    }

    /// The entry named `name`, if the catalog has one.
    pub fn find(&self, name: &str) -> Option<&Statement> {
        self.statements.get(name)
    }

    pub fn get(&self, name: &str) -> &Statement {
        self.statements.get(name).unwrap_or_else(|| panic!("statement {name} was validated at load"))
    }

    pub fn names(&self) -> Vec<String> {
        self.statements.keys().cloned().collect()
    }

    pub fn len(&self) -> usize {
        self.statements.len()
    }

    pub fn is_empty(&self) -> bool {
        self.statements.is_empty()
    }

    /// Checks names, then hands each statement with its `Stmt` to `prepare`, in the order of
    /// the names; the first problem is returned, naming the statement. `prepare` prepares it
    /// on a connection that already holds the schema and checks it (`Statement::prepared`),
    /// and may keep the handle: the run prepares each statement once (sim/world/db/prepared.rs).
    pub fn validate_each(&self, mut prepare: impl FnMut(Stmt, &Statement) -> Result<()>) -> Result<()> {
        for (name, _) in required() {
            if !self.statements.contains_key(name) {
                return Err(Error::input(format!("statement `{name}` is missing from the protocol SQL")));
            }
        }
        for statement in self.statements.values() {
            let Some(stmt) = Stmt::parse(&statement.name) else {
                return Err(unknown_statement(statement));
            };
            prepare(stmt, statement)?;
        }
        Ok(())
    }
}

impl Statement {
    /// Whether the entry is the built-in protocol's (`scenarios/protocol.sql`), not a file's.
    pub fn is_built_in(&self) -> bool {
        self.origin.strip_prefix(DEFAULT_PROTOCOL_FILE).is_some_and(|line| line.starts_with(':'))
    }

    /// The outcome of preparing this statement (the catalog's entry for `stmt`), checked: an
    /// error that names it if it did not prepare, or if it uses a parameter the engine does
    /// not supply to `stmt`.
    pub fn prepared<'conn>(
        &self,
        stmt: Stmt,
        prepared: rusqlite::Result<rusqlite::Statement<'conn>>,
    ) -> Result<rusqlite::Statement<'conn>> {
        let prepared = prepared.map_err(|e| Error::input(format!("statement `{}` ({}) does not prepare: {e}", self.name, self.origin)))?;
        let supplied = stmt.supplied();
        for index in 1..=prepared.parameter_count() {
            let param = prepared.parameter_name(index).unwrap_or("?");
            if !supplied.contains(&param) {
                return Err(Error::input(format!(
                    "statement `{}` ({}) uses parameter {param}, which the engine does not supply{}; it supplies: {}",
                    self.name,
                    self.origin,
                    crate::vocab::suggest::did_you_mean(param, supplied.iter().copied()),
                    if supplied.is_empty() { "nothing".to_string() } else { supplied.join(", ") }
                )));
            }
        }
        self.check_columns(stmt, &prepared)?;
        Ok(prepared)
    }

    /// Refuses an entry whose result columns are not the ones the engine reads by position
    /// (`Stmt::columns`, then any of `Stmt::optional_columns` in order): the same columns in
    /// another order would be misread silently, a missing one read as NULL.
    fn check_columns(&self, stmt: Stmt, prepared: &rusqlite::Statement<'_>) -> Result<()> {
        if prepared.readonly() == stmt.writes() {
            // A write turned read (or the reverse) is named as such after the prepare
            // (sim/world/db.rs), whatever its columns.
            return Ok(());
        }
        let names: Vec<&str> = prepared.column_names().collect();
        let (required, optional) = (stmt.columns(), stmt.optional_columns());
        let extra = names.len().checked_sub(required.len()).filter(|n| *n <= optional.len());
        let expected = required.iter().chain(optional.iter().take(extra.unwrap_or(0)));
        if extra.is_some() && names.iter().zip(expected).all(|(name, column)| column.named(name)) {
            return Ok(());
        }
        let returned = if names.is_empty() { "no column".to_string() } else { format!("columns ({})", names.join(", ")) };
        Err(Error::input(format!(
            "statement `{}` ({}) returns {returned}; the engine reads `{}` by position and expects {}",
            self.name,
            self.origin,
            self.name,
            stmt.shape()
        )))
    }
}

fn known_names() -> Vec<&'static str> {
    required().map(|(name, _)| name).collect()
}

/// An entry whose name is no statement the engine runs, with the one it most likely meant.
fn unknown_statement(entry: &Statement) -> Error {
    Error::input(format!(
        "statement `{}` ({}) is not one the engine runs{}; known names: {}",
        entry.name,
        entry.origin,
        crate::vocab::suggest::did_you_mean(&entry.name, known_names()),
        known_names().join(", ")
    ))
}

/// The text of a protocol SQL file: UTF-8, no NUL byte, not empty. Unreadable is an I/O
/// error's message but bad input (the path is the user's).
fn read_sql_file(path: &Path) -> Result<String> {
    let file = path.display();
    let bytes = crate::base::input_file::read(path, "SQL file")?;
    if let Some(at) = bytes.iter().position(|b| *b == 0) {
        return Err(Error::input(format!(
            "{file}: a NUL byte at byte {at}: a binary file, not a protocol SQL file (text with `-- name:` entries)"
        )));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        Error::input(format!(
            "{file}: not UTF-8 text (byte {}): not a protocol SQL file (text with `-- name:` entries)",
            e.utf8_error().valid_up_to()
        ))
    })?;
    if text.trim().is_empty() {
        return Err(Error::input(format!("{file}: empty: a protocol SQL file holds `-- name:` entries")));
    }
    Ok(text)
}

/// Splits a `.sql` file into named entries. Text before the first `-- name:` is a header.
pub fn parse(text: &str, file: &str) -> Result<Vec<Statement>> {
    let mut entries: Vec<Statement> = Vec::new();
    let mut current: Option<(String, usize, String)> = None;
    let finish = |current: Option<(String, usize, String)>, entries: &mut Vec<Statement>| -> Result<()> {
        if let Some((name, line, sql)) = current {
            let origin = format!("{file}:{line}");
            let body = strip_comments(&sql);
            if body.trim().is_empty() {
                return Err(Error::input(format!("statement `{name}` ({origin}) has no SQL")));
            }
            if entries.iter().any(|e| e.name == name) {
                return Err(Error::input(format!("statement `{name}` ({origin}) is defined twice in {file}")));
            }
            let params = named_params(&body);
            entries.push(Statement { name, sql: body.trim().to_string(), origin, params });
        }
        Ok(())
    };
    for (index, line) in text.lines().enumerate() {
        if let Some(rest) = line.trim_start().strip_prefix("-- name:") {
            finish(current.take(), &mut entries)?;
            let name = rest.trim();
            let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return Err(Error::input(format!("{file}:{}: bad statement name `{name}`", index + 1)));
            }
            current = Some((name.to_string(), index + 1, String::new()));
        } else if let Some((_, _, sql)) = current.as_mut() {
            sql.push_str(line);
            sql.push('\n');
        }
    }
    finish(current, &mut entries)?;
    Ok(entries)
}

/// Drops whole-line `--` comments so the stored SQL is what runs (string literals in the
/// protocol never start a line with `--`).
fn strip_comments(sql: &str) -> String {
    sql.lines().filter(|l| !l.trim_start().starts_with("--")).collect::<Vec<_>>().join("\n")
}

/// `:name` parameters in order of first appearance, ignoring string literals.
fn named_params(sql: &str) -> Vec<String> {
    let mut params: Vec<String> = Vec::new();
    let bytes = sql.as_bytes();
    let mut in_string = false;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'\'' {
            in_string = !in_string;
        } else if c == b':' && !in_string {
            let start = i;
            i += 1;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let name = &sql[start..i];
            if name.len() > 1 && !params.iter().any(|p| p == name) {
                params.push(name.to_string());
            }
            continue;
        }
        i += 1;
    }
    params
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_names_entries_and_their_parameters() {
        let entries = parse("-- header\n-- name: a\n-- why\nSELECT :x, ':y' WHERE z = :x;\n\n-- name: b\nSELECT 1;\n", "f.sql").unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!((entries[0].name.as_str(), entries[0].origin.as_str()), ("a", "f.sql:2"));
        assert_eq!(entries[0].params, vec![":x".to_string()]);
        assert_eq!(entries[0].sql, "SELECT :x, ':y' WHERE z = :x;");
        assert!(parse("-- name: a\nSELECT 1;\n-- name: a\nSELECT 2;\n", "f.sql").is_err());
        assert!(parse("-- name: a\n-- only a comment\n", "f.sql").is_err());
    }

    #[test]
    fn every_required_statement_is_in_the_default_protocol() {
        let catalog = Catalog::default_protocol();
        assert_eq!(catalog.len(), Stmt::ALL.len());
        for (name, supplied) in required() {
            for param in &catalog.get(name).params {
                assert!(supplied.contains(&param.as_str()), "{name} uses {param}");
            }
        }
    }
}
