//! A closed set of words (task states, outcomes, rule ids, message kinds, severities): each
//! type lists its values once, and text becomes one of them here, at the edge, or is refused
//! with the list of what it could have been.

use std::fmt;

use super::suggest::did_you_mean;

pub trait Word: Copy + Eq + 'static {
    /// What the words are, for an error: "task state".
    const WHAT: &'static str;
    /// Every value, in the order listings print them.
    fn all() -> &'static [Self];
    /// The exact text of the value where the program meets text (SQL, trace, CSV, TOML).
    fn text(self) -> &'static str;

    /// The value whose text is `text`; `None` for anything else.
    fn from_text(text: &str) -> Option<Self> {
        Self::all().iter().copied().find(|w| w.text() == text)
    }

    /// The value whose text is `text`, or an error that names the known words.
    fn read(text: &str) -> Result<Self, UnknownWord> {
        Self::from_text(text).ok_or_else(|| UnknownWord {
            what: Self::WHAT,
            text: text.to_string(),
            known: Self::all().iter().map(|w| w.text()).collect(),
        })
    }
}

/// Text that is none of a type's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownWord {
    pub what: &'static str,
    pub text: String,
    pub known: Vec<&'static str>,
}

impl fmt::Display for UnknownWord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hint = did_you_mean(&self.text, self.known.iter().copied());
        write!(f, "unknown {} `{}` (one of: {}){hint}", self.what, self.text, self.known.join(", "))
    }
}

impl std::error::Error for UnknownWord {}

/// `Word` for a type with `ALL` and `as_str`, and `Display`, `FromStr` and serde, all
/// through its one text.
macro_rules! word_traits {
    ($t:ty, $what:literal) => {
        impl $crate::vocab::Word for $t {
            const WHAT: &'static str = $what;
            fn all() -> &'static [$t] {
                &<$t>::ALL
            }
            fn text(self) -> &'static str {
                self.as_str()
            }
        }

        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str($crate::vocab::Word::text(*self))
            }
        }

        impl std::str::FromStr for $t {
            type Err = $crate::vocab::UnknownWord;
            fn from_str(text: &str) -> std::result::Result<Self, Self::Err> {
                <$t as $crate::vocab::Word>::read(text)
            }
        }

        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
                serializer.serialize_str($crate::vocab::Word::text(*self))
            }
        }

        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
                let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
                <$t as $crate::vocab::Word>::read(&text).map_err(serde::de::Error::custom)
            }
        }
    };
}
pub(crate) use word_traits;

#[cfg(test)]
pub mod check {
    use super::Word;

    /// Every value's text reads back as it, through `FromStr` and serde too, and `stranger`
    /// is refused with an error naming the type and every known word.
    pub fn round_trips<W>(stranger: &str)
    where
        W: Word
            + std::fmt::Debug
            + std::fmt::Display
            + std::str::FromStr<Err = super::UnknownWord>
            + serde::Serialize
            + serde::de::DeserializeOwned,
    {
        for &word in W::all() {
            assert_eq!(word.to_string(), word.text());
            assert_eq!(word.text().parse::<W>(), Ok(word));
            let json = serde_json::to_string(&word).unwrap();
            assert_eq!(json, format!("\"{}\"", word.text()));
            assert_eq!(serde_json::from_str::<W>(&json).unwrap(), word);
        }
        let error = stranger.parse::<W>().unwrap_err();
        let message = error.to_string();
        assert!(message.starts_with(&format!("unknown {} `{stranger}`", W::WHAT)), "{message}");
        assert!(W::all().iter().all(|w| message.contains(w.text())), "{message}");
        assert!(serde_json::from_str::<W>(&format!("\"{stranger}\"")).is_err());
    }
}
