//! A hasher for the run's own names (actor names, session ids) as map keys: the event
//! consumers look one up at every event, and SipHash cost more than the rest of the lookup
//! (issue 17). The keys come from the simulator, not from an adversary, so no flooding
//! defence is needed.

use std::hash::{BuildHasherDefault, Hasher};

/// The `S` of a `HashMap` keyed by the run's names.
pub type NameHash = BuildHasherDefault<WordHasher>;

/// A multiply-and-rotate hash of a few words (the FxHash recipe).
#[derive(Default)]
pub struct WordHasher(u64);

impl WordHasher {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            self.add(u64::from_le_bytes(word.try_into().expect("eight bytes")));
        }
        // The last bytes as one word, shifted in (a copy into an array called memcpy).
        let rest = words.remainder();
        if !rest.is_empty() {
            self.add(rest.iter().enumerate().fold(0, |word, (i, b)| word | u64::from(*b) << (8 * i)));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn write_isize(&mut self, n: isize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn names_that_differ_anywhere_hash_apart() {
        let hash = |text: &str| NameHash::default().hash_one(text);
        let base = "3f2a81c0-0000-4000-8000-000000000000";
        let mut seen = std::collections::BTreeSet::new();
        for at in 0..base.len() {
            let mut changed = base.as_bytes().to_vec();
            changed[at] = b'x';
            assert!(seen.insert(hash(std::str::from_utf8(&changed).expect("ascii"))), "byte {at}");
        }
        assert_eq!(hash(base), hash(base));
        assert!(seen.insert(hash(base)) && seen.insert(hash("")) && seen.insert(hash("a")));
    }
}
