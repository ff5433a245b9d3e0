//! The protocol statements a run ran, for explanations that say what the SQL in force did
//! instead of what the seeds' SQL would have: a violation's "because" names the statement
//! (its entry's `file:line`, built in, a variant's or the user's) and quotes the clause that
//! let the write through.

use std::collections::BTreeMap;

use crate::input::sql_catalog::{Catalog, DEFAULT_PROTOCOL_FILE};
use crate::vocab::Stmt;

/// Each statement's origin (`file:line`) and SQL, as the run's catalog has them.
#[derive(Clone, Debug, Default)]
pub struct SqlInForce {
    statements: BTreeMap<Stmt, (String, String)>,
}

impl SqlInForce {
    pub fn of(catalog: &Catalog) -> SqlInForce {
        let statements =
            Stmt::ALL.into_iter().filter_map(|s| catalog.find(s.name()).map(|e| (s, (e.origin.clone(), e.sql.clone())))).collect();
        SqlInForce { statements }
    }

    /// "`heartbeat` (scenarios/protocol.sql:125, built in)", or with the variant's or the
    /// user's file.
    pub fn named(&self, stmt: Stmt) -> String {
        let Some((origin, _)) = self.statements.get(&stmt) else { return format!("`{stmt}`") };
        let whose = if origin.starts_with(&format!("{DEFAULT_PROTOCOL_FILE}:")) {
            ", built in".to_string()
        } else if let Some(variant) = origin.strip_prefix("scenarios/variants/").and_then(|r| r.split(".sql").next()) {
            format!(", variant `{variant}`")
        } else {
            String::new()
        };
        format!("`{stmt}` ({origin}{whose})")
    }

    /// The statement's last `WHERE` clause, on one line, without comments or `RETURNING`.
    pub fn where_clause(&self, stmt: Stmt) -> Option<String> {
        let (_, sql) = self.statements.get(&stmt)?;
        let text: Vec<&str> = sql.lines().map(|l| l.split("--").next().unwrap_or("")).collect();
        let text = text.join(" ").split_whitespace().collect::<Vec<_>>().join(" ");
        let lower = text.to_lowercase();
        let at = lower.rmatch_indices("where ").map(|(i, _)| i).find(|i| *i == 0 || !lower.as_bytes()[i - 1].is_ascii_alphanumeric())?;
        let clause = &text[at..];
        let end = clause.to_lowercase().find(" returning ").unwrap_or(clause.len());
        Some(clause[..end].trim_end_matches(';').trim().to_string())
    }

    /// Why a write of `stmt` could land on a row another session owned: the statement in
    /// force and its `WHERE`, which checks no session_id, or checks it and still let it through.
    pub fn owner_because(&self, stmt: Stmt) -> String {
        let named = self.named(stmt);
        match self.where_clause(stmt) {
            Some(clause) if clause.to_lowercase().contains("session_id") => {
                format!("{named} checks session_id, yet its `{clause}` let a session that did not own the row write it")
            }
            Some(clause) => format!("{named} checks no session_id: `{clause}`"),
            None => format!("{named} has no WHERE clause"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn in_force(user: Option<&str>) -> SqlInForce {
        let mut catalog = Catalog::default_protocol();
        if let Some(text) = user {
            catalog.override_with(text, "my.sql").unwrap();
        }
        SqlInForce::of(&catalog)
    }

    #[test]
    fn the_built_in_heartbeat_is_named_with_its_line_and_checks_no_session_id() {
        let because = in_force(None).owner_because(Stmt::Heartbeat);
        assert!(because.starts_with("`heartbeat` (scenarios/protocol.sql:"), "{because}");
        assert!(because.ends_with(", built in) checks no session_id: `WHERE task_id = :task_id`"), "{because}");
    }

    #[test]
    fn a_users_fenced_statement_is_named_by_its_own_file_and_line_and_its_clause_quoted() {
        let sql = "-- name: heartbeat\n-- a comment WHERE nothing\nUPDATE orchestration_tasks\nSET last_heartbeat = datetime('now')\nWHERE task_id = :task_id AND (session_id = :session_id OR state = 'working');\n";
        let because = in_force(Some(sql)).owner_because(Stmt::Heartbeat);
        assert_eq!(
            because,
            "`heartbeat` (my.sql:1) checks session_id, yet its `WHERE task_id = :task_id AND (session_id = :session_id OR state = 'working')` let a session that did not own the row write it"
        );
    }

    #[test]
    fn a_returning_clause_is_not_part_of_the_where() {
        let sql = "-- name: heartbeat\nUPDATE orchestration_tasks SET last_heartbeat = datetime('now') WHERE task_id = :task_id RETURNING task_id;\n";
        assert_eq!(in_force(Some(sql)).where_clause(Stmt::Heartbeat).as_deref(), Some("WHERE task_id = :task_id"));
    }
}
