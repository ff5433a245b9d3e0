//! What names a scenario where a run must not depend on where it ran: its file name, which
//! the trace's first row holds (so the trace hash is the same from any folder, however the
//! path was typed, from any checkout), and the SHA-256 of its text, which replay files check
//! (so a failure replayed against a changed scenario says so instead of diverging).

use std::path::Path;

use sha2::{Digest, Sha256};

/// The SHA-256 (64 hex digits) of a scenario's text, its line ends read as `\n`: a checkout
/// that writes `\r\n` (git's autocrlf) holds the same scenario.
pub fn content_sha256(text: &str) -> String {
    let mut hasher = Sha256::new();
    for (i, piece) in text.split("\r\n").enumerate() {
        if i > 0 {
            hasher.update(b"\n");
        }
        hasher.update(piece.as_bytes());
    }
    hasher.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The scenario's file name (`scenarios/faults/zombie.toml` → `zombie.toml`): the one part of
/// its path that does not depend on the folder a command ran in or on the checkout.
pub fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |name| name.to_string_lossy().into_owned())
}

/// The first 16 hex digits, as messages show a hash.
pub fn short(sha256: &str) -> &str {
    &sha256[..16.min(sha256.len())]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_of_the_text_with_line_ends_read_as_newlines() {
        assert_eq!(content_sha256("a\r\nb\r\n"), content_sha256("a\nb\n"));
        assert_ne!(content_sha256("a\nb\n"), content_sha256("a\nb"));
        assert_eq!(content_sha256(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }

    #[test]
    fn the_name_is_the_file_name_alone() {
        for typed in ["scenarios/faults/zombie.toml", "./zombie.toml", "/abs/checkout/scenarios/faults/zombie.toml", "../x/zombie.toml"] {
            assert_eq!(file_name(Path::new(typed)), "zombie.toml", "{typed}");
        }
    }
}
