//! Escaping for text placed in HTML and SVG (element content and double-quoted attributes).

/// `&`, `<`, `>` and `"` as entities; everything else as it is.
pub fn esc(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::esc;

    #[test]
    fn markup_characters_become_entities_and_the_rest_stays() {
        assert_eq!(esc("a < b && c > \"d\""), "a &lt; b &amp;&amp; c &gt; &quot;d&quot;");
        assert_eq!(esc("task-01.S1 — 41 % ✓"), "task-01.S1 — 41 % ✓");
        // Ampersands go first, so an entity in the input is escaped once, not twice.
        assert_eq!(esc("&lt;"), "&amp;lt;");
        assert_eq!(esc("'single'"), "'single'");
    }
}
