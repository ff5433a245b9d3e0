//! No function in sim/ is longer than 100 lines, from its `fn` line to its closing brace
//! (issue 29: short functions). A source scan, so the rule cannot drift: a function that grows
//! past the limit fails here with its file, line and length.

use std::path::Path;

use crate::support::files_ending;

const MAX_LINES: usize = 100;

/// The source with comments, string and char literals blanked (newlines kept), so the braces
/// left are the code's.
pub(crate) fn code_only(src: &str) -> String {
    let bytes = src.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, part: &[u8]| out.extend(part.iter().map(|&b| if b == b'\n' { b'\n' } else { b' ' }));
    while i < bytes.len() {
        let rest = &bytes[i..];
        let end = if rest.starts_with(b"//") {
            rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len())
        } else if rest.starts_with(b"/*") {
            block_comment_len(rest)
        } else if let Some(len) = raw_string_len(bytes, i) {
            len
        } else if rest[0] == b'"' {
            string_len(rest)
        } else if rest[0] == b'\'' {
            char_literal_len(rest).unwrap_or(0)
        } else {
            0
        };
        if end == 0 {
            out.push(bytes[i]);
            i += 1;
        } else {
            blank(&mut out, &rest[..end]);
            i += end;
        }
    }
    String::from_utf8(out).expect("blanking keeps UTF-8 outside literals and comments")
}

fn block_comment_len(rest: &[u8]) -> usize {
    let mut depth = 0;
    let mut j = 0;
    while j < rest.len() {
        if rest[j..].starts_with(b"/*") {
            depth += 1;
            j += 2;
        } else if rest[j..].starts_with(b"*/") {
            depth -= 1;
            j += 2;
            if depth == 0 {
                return j;
            }
        } else {
            j += 1;
        }
    }
    rest.len()
}

/// `r"…"`, `r#"…"#`, `br"…"` starting at `i` (not inside an identifier).
fn raw_string_len(bytes: &[u8], i: usize) -> Option<usize> {
    if i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_') {
        return None;
    }
    let rest = &bytes[i..];
    let start = if rest.starts_with(b"br") {
        2
    } else if rest.starts_with(b"r") {
        1
    } else {
        return None;
    };
    let hashes = rest[start..].iter().take_while(|&&b| b == b'#').count();
    if rest.get(start + hashes) != Some(&b'"') {
        return None;
    }
    let mut close = vec![b'"'];
    close.extend(std::iter::repeat_n(b'#', hashes));
    let body = start + hashes + 1;
    let found = rest[body..].windows(close.len()).position(|w| w == close.as_slice());
    Some(found.map_or(rest.len(), |p| body + p + close.len()))
}

fn string_len(rest: &[u8]) -> usize {
    let mut j = 1;
    while j < rest.len() && rest[j] != b'"' {
        j += if rest[j] == b'\\' { 2 } else { 1 };
    }
    (j + 1).min(rest.len())
}

/// `'x'`, `'\n'`, `'\u{..}'`, `'{'`; a lifetime (`'a`) is not a literal.
fn char_literal_len(rest: &[u8]) -> Option<usize> {
    if rest.get(1) == Some(&b'\\') {
        let close = rest.iter().skip(2).position(|&b| b == b'\'')?;
        return Some(close + 3);
    }
    let width = match *rest.get(1)? {
        0..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    };
    (rest.get(1 + width) == Some(&b'\'')).then_some(width + 2)
}

/// Every function with a body in `code` (comments and literals blanked): (name, first line,
/// lines from its `fn` line to its closing brace).
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(at) = code[i..].find("fn ").map(|p| p + i) {
        i = at + 3;
        if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
            continue;
        }
        let name: String = code[i..].trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if name.is_empty() {
            continue;
        }
        let Some(open) = code[i..].find(['{', ';']).map(|p| p + i).filter(|&p| bytes[p] == b'{') else { continue };
        let mut depth = 0usize;
        let mut close = open;
        for (j, &b) in bytes.iter().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = j;
                        break;
                    }
                }
                _ => {}
            }
        }
        let line_of = |p: usize| code[..p].matches('\n').count() + 1;
        found.push((name, line_of(at), line_of(close) - line_of(at) + 1));
    }
    found
}

#[test]
fn no_function_in_sim_is_longer_than_100_lines() {
    let files = files_ending(&Path::new(env!("CARGO_MANIFEST_DIR")).join("sim"), "rs");
    let mut long = Vec::new();
    for file in &files {
        let code = code_only(&std::fs::read_to_string(file).unwrap());
        for (name, line, lines) in functions(&code) {
            if lines > MAX_LINES {
                long.push(format!("{}:{line} fn {name}: {lines} lines", file.display()));
            }
        }
    }
    assert!(files.len() > 50, "the scan found sim/'s files");
    assert!(long.is_empty(), "functions over {MAX_LINES} lines (split them):\n{}", long.join("\n"));
}

#[test]
fn the_scan_measures_functions_by_their_braces_not_by_braces_in_text() {
    let src = "fn a() {\n    let s = \"}}}\";\n    let c = '}';\n    // }\n    x(|| { 1 });\n}\nfn b<'a>(x: &'a str) -> &'a str { x }\nfn decl();\n";
    let code = code_only(src);
    assert_eq!(functions(&code), [("a".to_string(), 1, 6), ("b".to_string(), 7, 1)]);
    let long = format!("fn big() {{\n{}}}\n", "    step();\n".repeat(MAX_LINES));
    assert!(functions(&code_only(&long))[0].2 > MAX_LINES, "a function of {MAX_LINES} statements is over the limit");
}
