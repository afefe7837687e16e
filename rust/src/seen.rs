//! A compact seen-set: one 64-bit keyed hash per URL in an open-addressing table.
//!
//! A set of URL strings costs ~150 bytes per URL in Python; this costs 12-24 (load factor 1/3
//! to 2/3) and no allocation per URL. The hash is SipHash with a random key per set, so a
//! hostile site cannot pick URLs that collide and turn the probing quadratic. Two distinct URLs
//! sharing all 64 bits make the second look seen: at 10M URLs about 1 in 300,000 walks.
#![forbid(unsafe_code)]

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

pub struct SeenSet {
    table: Vec<u64>,
    mask: usize,
    limit: usize,
    count: usize,
    keys: RandomState,
}

impl SeenSet {
    pub fn with_capacity(capacity: usize) -> Self {
        let mut size = 16usize;
        while size * 2 < capacity.saturating_mul(3) {
            size <<= 1;
        }
        SeenSet {
            table: vec![0; size],
            mask: size - 1,
            limit: size * 2 / 3,
            count: 0,
            keys: RandomState::new(),
        }
    }

    pub fn hash(&self, key: &str) -> u64 {
        // 0 marks an empty slot.
        self.keys.hash_one(key).max(1)
    }

    /// Insert `key`; true when it was not there before.
    pub fn add(&mut self, key: &str) -> bool {
        self.add_hash(self.hash(key))
    }

    /// Insert a 64-bit hash computed elsewhere (a keyed hash that is the same in every process,
    /// for de-duplicating across the parts of one site); true when it was not there before.
    pub fn add_hash(&mut self, hash: u64) -> bool {
        let h = hash.max(1);
        let mut i = (h as usize) & self.mask;
        loop {
            let v = self.table[i];
            if v == 0 {
                self.table[i] = h;
                self.count += 1;
                if self.count > self.limit {
                    self.grow();
                }
                return true;
            }
            if v == h {
                return false;
            }
            i = (i + 1) & self.mask;
        }
    }

    pub fn contains(&self, key: &str) -> bool {
        let h = self.hash(key);
        let mut i = (h as usize) & self.mask;
        loop {
            match self.table[i] {
                0 => return false,
                v if v == h => return true,
                _ => i = (i + 1) & self.mask,
            }
        }
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn nbytes(&self) -> usize {
        self.table.len() * 8
    }

    fn grow(&mut self) {
        let size = self.table.len() * 2;
        let mask = size - 1;
        let mut table = vec![0u64; size];
        for &h in self.table.iter().filter(|&&h| h != 0) {
            let mut i = (h as usize) & mask;
            while table[i] != 0 {
                i = (i + 1) & mask;
            }
            table[i] = h;
        }
        self.table = table;
        self.mask = mask;
        self.limit = size * 2 / 3;
    }
}

impl Default for SeenSet {
    fn default() -> Self {
        Self::with_capacity(1 << 14)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_hashes_once() {
        let mut seen = SeenSet::with_capacity(4);
        for h in 0..10_000u64 {
            assert!(seen.add_hash((h + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) << 1));
        }
        for h in 0..10_000u64 {
            assert!(!seen.add_hash((h + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) << 1));
        }
        // 0 marks an empty slot: it is stored as 1.
        assert!(seen.add_hash(0));
        assert!(!seen.add_hash(1));
        assert_eq!(seen.len(), 10_001);
    }

    #[test]
    fn adds_once_and_grows() {
        let mut seen = SeenSet::with_capacity(4);
        for i in 0..10_000 {
            assert!(seen.add(&format!("https://example.com/{i}")));
        }
        for i in 0..10_000 {
            let url = format!("https://example.com/{i}");
            assert!(!seen.add(&url));
            assert!(seen.contains(&url));
        }
        assert!(!seen.contains("https://example.com/x"));
        assert_eq!(seen.len(), 10_000);
        assert!(seen.nbytes() <= 10_000 * 24 + 1024);
    }
}
