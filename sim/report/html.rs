//! Escaping for text placed in HTML, SVG and XML (element content and double-quoted
//! attributes): the one escaper of the crate, used by the reports, bench's heatmaps and the
//! sweep's JUnit file alike.

use std::borrow::Cow;

/// `&`, `<`, `>` and `"` as entities; everything else as it is. Text with none of them (most
/// of it) is borrowed, not copied.
pub fn esc(text: &str) -> Cow<'_, str> {
    if !text.bytes().any(|b| matches!(b, b'&' | b'<' | b'>' | b'"')) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    esc_into(&mut out, text);
    Cow::Owned(out)
}

/// `esc`, appended to `out` in one pass.
pub fn esc_into(out: &mut String, text: &str) {
    let mut rest = text;
    while let Some(i) = rest.find(['&', '<', '>', '"']) {
        out.push_str(&rest[..i]);
        out.push_str(match rest.as_bytes()[i] {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            _ => "&quot;",
        });
        rest = &rest[i + 1..];
    }
    out.push_str(rest);
}

#[cfg(test)]
mod tests {
    use super::{esc, esc_into};

    #[test]
    fn markup_characters_become_entities_and_the_rest_stays() {
        assert_eq!(esc("a < b && c > \"d\""), "a &lt; b &amp;&amp; c &gt; &quot;d&quot;");
        assert_eq!(esc("task-01.S1 — 41 % ✓"), "task-01.S1 — 41 % ✓");
        // Ampersands go first, so an entity in the input is escaped once, not twice.
        assert_eq!(esc("&lt;"), "&amp;lt;");
        assert_eq!(esc("'single'"), "'single'");
        let mut out = String::from("x=");
        esc_into(&mut out, "<é>");
        assert_eq!(out, "x=&lt;é&gt;");
    }

    /// Issue 18 item 12: one escaper. Any other source file that writes the entity for `&`
    /// as a replacement is a second escaper.
    #[test]
    fn no_other_file_escapes_markup_by_itself() {
        fn walk(dir: &std::path::Path, found: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).expect("sim/ is readable") {
                let path = entry.expect("an entry").path();
                if path.is_dir() {
                    walk(&path, found);
                } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("report/html.rs") {
                    let text = std::fs::read_to_string(&path).expect("a source file");
                    if text.contains(concat!("\"&", "amp;\"")) {
                        found.push(path.display().to_string());
                    }
                }
            }
        }
        let mut found = Vec::new();
        walk(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sim"), &mut found);
        assert!(found.is_empty(), "escape with report::esc, not by hand: {found:?}");
    }
}
