//! Where a problem is in the scenario's text: every error names the file, the line, the column
//! and the dotted key. TOML and serde errors come with a byte span (`toml_error`); the checks of
//! `validate.rs` name a key (`Problem`), which `locate` finds in the text.

use crate::base::error::Error;

/// A value the checks refuse, named by its place in the document: the key `key` of
/// `[section]`, or of the `index`-th `[[section]]` (from 0) for arrays of tables.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Problem {
    pub section: &'static str,
    pub index: Option<usize>,
    pub key: &'static str,
    pub message: String,
}

impl Problem {
    /// A key of a table.
    pub fn at(section: &'static str, key: &'static str, message: String) -> Problem {
        Problem { section, index: None, key, message }
    }

    /// A key of one entry of an array of tables.
    pub fn in_entry(section: &'static str, index: usize, key: &'static str, message: String) -> Problem {
        Problem { section, index: Some(index), key, message }
    }

    /// `file:line:col: key `section.key`: message`, the line and column of the key in `text`.
    pub fn into_error(self, file: &str, text: &str) -> Error {
        let (line, col) = locate(text, self.section, self.index, self.key);
        let full = if self.section.is_empty() { self.key.to_string() } else { format!("{}.{}", self.section, self.key) };
        Error::input(format!("{file}:{line}:{col}: key `{full}`: {}", self.message))
    }
}

/// Turns a TOML or serde error into `file:line:col: key `k`: message`.
pub(super) fn toml_error(file: &str, text: &str, e: &toml::de::Error) -> Error {
    let message = in_user_terms(e.message().trim());
    let Some(span) = e.span() else {
        // toml's recursion limit comes with no place (issue 41: a header nested 20,000 deep):
        // the deepest nesting of the text is where it was hit.
        if message.contains("recursion limit") {
            let (line, col, depth) = deepest(text);
            return Error::input(format!("{file}:{line}:{col}: {message}: a table or array nested {depth} deep; keep nesting shallow"));
        }
        return Error::input(format!("{file}: {message}"));
    };
    let (line, col) = line_col(text, span.start);
    let key = match missing_field(&message) {
        // A missing key is reported on its table; the whole document for top-level keys.
        // toml reports a missing top-level key with an empty span at offset 0, a missing key
        // of a table with the span of its header.
        Some(field) if span.is_empty() => Some(field.to_string()),
        Some(field) => Some(key_at(text, span.start, span.end).map_or(field.to_string(), |table| format!("{table}.{field}"))),
        None => key_at(text, span.start, span.end),
    };
    match key {
        Some(key) => Error::input(format!("{file}:{line}:{col}: key `{key}`: {message}")),
        None => Error::input(format!("{file}:{line}:{col}: {message}")),
    }
}

/// The first place where the text nests deepest, as 1-based line and column and that depth:
/// a table header counts its dotted keys, a value its open brackets and braces (outside
/// strings).
fn deepest(text: &str) -> (usize, usize, usize) {
    let mut best = (1, 1, 0);
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if trimmed.starts_with('[') && !line.contains('=') {
            let depth = trimmed.split('#').next().unwrap_or("").matches('.').count() + 1;
            if depth > best.2 {
                best = (i + 1, indent + 1, depth);
            }
            continue;
        }
        let (mut depth, mut quote) = (0usize, None);
        for (col, c) in line.char_indices() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '"' | '\'') => quote = Some(c),
                (None, '#') => break,
                (None, '[' | '{') => {
                    depth += 1;
                    if depth > best.2 {
                        best = (i + 1, col + 1, depth);
                    }
                }
                (None, ']' | '}') => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
    }
    best
}

/// serde's message as a scenario's author reads it: the expected type in TOML's words ("an
/// integer", not "i64"), and for an unknown key the known one it most likely meant.
fn in_user_terms(message: &str) -> String {
    let mut out = message.to_string();
    if let Some((head, expected)) = message.rsplit_once(", expected ") {
        out = format!("{head}, expected {}", type_in_user_terms(expected));
    }
    let unknown = message.strip_prefix("unknown field `").or_else(|| message.strip_prefix("unknown variant `"));
    if let Some(unknown) = unknown.and_then(|rest| rest.split('`').next()) {
        let known: Vec<&str> = message.split_once("expected").map_or(Vec::new(), |(_, list)| list.split('`').skip(1).step_by(2).collect());
        out.push_str(&crate::vocab::suggest::did_you_mean(unknown, known));
    }
    out
}

fn type_in_user_terms(expected: &str) -> String {
    let word = match expected {
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "an integer",
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a whole number (0 or more)",
        "f32" | "f64" => "a number",
        "a sequence" => "an array",
        "a map" => "a table",
        other if other.starts_with("struct ") => "a table",
        other => other,
    };
    word.to_string()
}

fn missing_field(message: &str) -> Option<&str> {
    message.strip_prefix("missing field `")?.split('`').next()
}

pub(super) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map(|s| s.chars().count()).unwrap_or(0) + 1;
    (line, col)
}

fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.'
}

/// Reconstructs the dotted key an error span belongs to: the enclosing `[table]`, the line's
/// key, and for inline tables the inner key.
fn key_at(text: &str, start: usize, end: usize) -> Option<String> {
    let start = start.min(text.len());
    let line_start = text[..start].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let line_end = text[start..].find('\n').map(|i| start + i).unwrap_or(text.len());
    let line = &text[line_start..line_end];
    let col = start - line_start;
    let mut header = String::new();
    for previous in text[..line_start].lines().rev() {
        let p = previous.trim();
        if p.starts_with('[') {
            header = p.trim_matches(|c| c == '[' || c == ']').trim().to_string();
            break;
        }
    }
    if line.trim_start().starts_with('[') {
        return Some(line.trim().trim_matches(|c| c == '[' || c == ']').trim().to_string());
    }
    let spanned = text.get(start..end.min(line_end)).unwrap_or("").trim();
    let after = line[(end.min(line_end) - line_start).min(line.len())..].trim_start();
    let mut parts: Vec<String> = Vec::new();
    if !header.is_empty() {
        parts.push(header);
    }
    let first_key: String = line.trim_start().chars().take_while(|c| is_key_char(*c)).collect();
    // The span is a key itself (unknown field, duplicate key): name it.
    if !spanned.is_empty() && spanned.chars().all(is_key_char) && after.starts_with('=') {
        if first_key != spanned && !first_key.is_empty() {
            parts.push(first_key);
        }
        parts.push(spanned.to_string());
        return Some(parts.join("."));
    }
    if !first_key.is_empty() {
        parts.push(first_key.clone());
    }
    // An inline table: the nearest `key =` left of the span is the inner key.
    if let Some(eq) = line[..col].rfind('=') {
        let inner: String =
            line[..eq].trim_end().chars().rev().take_while(|c| is_key_char(*c)).collect::<Vec<_>>().into_iter().rev().collect();
        if !inner.is_empty() && inner != first_key {
            parts.push(inner);
        }
    }
    if parts.is_empty() {
        None
    } else {
        Some(parts.join("."))
    }
}

/// Finds `key = …` inside `[section]` (the `index`-th `[[section]]` for arrays of tables) and
/// returns its 1-based line and column; falls back to the section header, then line 1.
fn locate(text: &str, section: &str, index: Option<usize>, key: &str) -> (usize, usize) {
    let mut current = String::new();
    let mut occurrence: usize = 0;
    let mut header_pos: Option<(usize, usize)> = None;
    for (n, raw_line) in text.lines().enumerate() {
        let line = raw_line.trim_start();
        if line.starts_with('[') {
            let name = line.trim_end().trim_matches(|c| c == '[' || c == ']').trim().to_string();
            if name == section && line.starts_with("[[") {
                occurrence += 1;
            }
            current = name;
            if current == section && (index.is_none() || Some(occurrence - 1) == index) {
                header_pos.get_or_insert((n + 1, 1));
            }
            continue;
        }
        let in_section = current == section && (index.is_none() || occurrence.checked_sub(1) == index);
        if in_section && line.starts_with(key) && line[key.len()..].trim_start().starts_with('=') {
            return (n + 1, raw_line.len() - line.len() + 1);
        }
    }
    header_pos.unwrap_or((1, 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NESTED: &str = "[run]\nseed = 1\n[tasks]\ncount = 2\n[tasks.sub]\n  count = 3\n";
    const ENTRIES: &str = "[tasks]\ncount = 3\n[[tasks.custom]]\ntask = 1\n[[tasks.custom]]\nsteps = 2\ntask = 2\n";

    #[test]
    fn line_and_column_count_lines_and_characters_from_one() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
        assert_eq!(line_col("é = 1\nx", 3), (1, 3), "columns count characters, not bytes");
        assert_eq!(line_col("ab", 99), (1, 3), "an offset past the end is the end");
    }

    #[test]
    fn a_key_of_a_nested_table_is_found_in_that_table_only() {
        assert_eq!(locate(NESTED, "tasks.sub", None, "count"), (6, 3));
        assert_eq!(locate(NESTED, "tasks", None, "count"), (4, 1));
        assert_eq!(locate(NESTED, "run", None, "seed"), (2, 1));
    }

    #[test]
    fn a_key_of_an_array_of_tables_is_found_in_its_own_entry() {
        assert_eq!(locate(ENTRIES, "tasks.custom", Some(0), "task"), (4, 1));
        assert_eq!(locate(ENTRIES, "tasks.custom", Some(1), "task"), (7, 1));
        assert_eq!(locate(ENTRIES, "tasks.custom", Some(1), "steps"), (6, 1));
    }

    #[test]
    fn a_key_not_written_falls_back_to_its_header_then_to_the_first_line() {
        assert_eq!(locate(ENTRIES, "tasks.custom", Some(1), "checkpoints"), (5, 1));
        assert_eq!(locate(ENTRIES, "tasks", None, "steps"), (1, 1));
        assert_eq!(locate(ENTRIES, "faults", None, "at"), (1, 1));
    }

    #[test]
    fn a_problem_becomes_an_error_with_file_line_column_and_dotted_key() {
        let problem = Problem::in_entry("tasks.custom", 1, "task", "task 2 is customised twice".to_string());
        assert_eq!(
            problem.into_error("s.toml", ENTRIES).to_string(),
            "invalid input: s.toml:7:1: key `tasks.custom.task`: task 2 is customised twice"
        );
    }

    #[test]
    fn the_key_of_a_span_is_its_table_and_line_key_and_inline_key() {
        let text = "[timing]\nsubagent_ms = { kind = \"x\" }\nbogus = 1\n";
        let value = text.find("\"x\"").unwrap();
        assert_eq!(key_at(text, value, value + 3).as_deref(), Some("timing.subagent_ms.kind"));
        let bogus = text.find("bogus").unwrap();
        assert_eq!(key_at(text, bogus, bogus + 5).as_deref(), Some("timing.bogus"));
        assert_eq!(key_at(text, 1, 7).as_deref(), Some("timing"), "a header names its table");
        assert_eq!(key_at("= 1", 0, 1), None);
    }

    #[test]
    fn toml_errors_name_the_key_or_the_missing_field() {
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Inner {
            count: u64,
        }
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Doc {
            tasks: Inner,
        }
        let error = |text: &str| toml_error("s.toml", text, &toml::from_str::<Doc>(text).unwrap_err()).to_string();
        let unknown = error("[tasks]\ncount = 2\nbogus = 1\n");
        assert!(unknown.starts_with("invalid input: s.toml:3:1: key `tasks.bogus`: unknown field `bogus`"), "{unknown}");
        assert!(error("[tasks]\nsteps = 1\n").starts_with("invalid input: s.toml:2:1: key `tasks.steps`: unknown field `steps`"));
        assert!(error("[tasks]\n").contains("key `tasks.count`: missing field `count`"), "{}", error("[tasks]\n"));
        assert_eq!(error("x = 1\n"), "invalid input: s.toml:1:1: key `x`: unknown field `x`, expected `tasks`");
        assert!(error("").starts_with("invalid input: s.toml:1:1: key `tasks`: missing field `tasks`"));
        let typo = error("[tasks]\ncont = 2\n");
        assert!(typo.ends_with("unknown field `cont`, expected `count`; did you mean `count`?"), "{typo}");
        let typed = error("[tasks]\ncount = \"two\"\n");
        assert!(typed.ends_with("expected a whole number (0 or more)") && !typed.contains("u64"), "{typed}");
    }

    #[test]
    fn serde_types_are_named_in_tomls_words() {
        assert_eq!(in_user_terms("invalid type: string \"x\", expected i64"), "invalid type: string \"x\", expected an integer");
        assert_eq!(in_user_terms("invalid type: integer `1`, expected struct Timing"), "invalid type: integer `1`, expected a table");
        assert_eq!(in_user_terms("invalid type: string \"y\", expected f64"), "invalid type: string \"y\", expected a number");
        assert_eq!(in_user_terms("invalid type: integer `3`, expected a sequence"), "invalid type: integer `3`, expected an array");
    }
}
