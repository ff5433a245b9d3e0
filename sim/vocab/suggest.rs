//! "Did you mean": the known word closest to a misspelt one (strsim's Jaro-Winkler, as clap
//! uses for its own flags), offered only when it is close enough to be a likely typo.

/// How alike two words must be (Jaro-Winkler, 0..1) for the known one to be suggested; clap's
/// own threshold for mistyped subcommands.
const LIKELY_TYPO: f64 = 0.8;

/// The candidate most like `word`, if it is likely what was meant.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(word, c), c))
        .filter(|(score, _)| *score >= LIKELY_TYPO)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// `; did you mean `x`?` for the closest candidate, or nothing: to append to a refusal.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, candidates).map_or(String::new(), |c| format!("; did you mean `{c}`?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_likely_typo_gets_its_word_and_a_stranger_gets_none() {
        let words = ["no-false-stale", "liveness", "budget"];
        assert_eq!(closest("no-false-stales", words), Some("no-false-stale"));
        assert_eq!(closest("livenes", words), Some("liveness"));
        assert_eq!(closest("zzz", words), None);
        assert_eq!(did_you_mean("budgte", words), "; did you mean `budget`?");
        assert_eq!(did_you_mean("qqqq", words), "");
    }
}
