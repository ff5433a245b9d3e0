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
}
