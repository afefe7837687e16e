//! The URL hashes a batch run shares between its processes: 8 bytes of keyed BLAKE2b per URL,
//! the same in every process that holds the run's key (unlike the seen-set's hash, keyed per
//! set), and not something a site can make collide without the key.
#![forbid(unsafe_code)]

use blake2::digest::consts::U8;
use blake2::digest::{FixedOutput, KeyInit, Update};
use blake2::Blake2bMac;

/// Why a key cannot be used.
#[derive(Debug, PartialEq, Eq)]
pub struct BadKey;

/// 8 bytes per text, in order: what Python's `hashlib.blake2b(text, digest_size=8, key=key)`
/// gives. The key is 1 to 64 bytes.
pub fn url_hashes<'a>(
    texts: impl IntoIterator<Item = &'a [u8]>,
    key: &[u8],
) -> Result<Vec<u8>, BadKey> {
    if key.is_empty() {
        return Err(BadKey); // hashlib reads an empty key as no key at all
    }
    let keyed = Blake2bMac::<U8>::new_from_slice(key).map_err(|_| BadKey)?;
    let texts = texts.into_iter();
    let mut out = Vec::with_capacity(texts.size_hint().0 * 8);
    for text in texts {
        let mut mac = keyed.clone();
        mac.update(text);
        out.extend_from_slice(&mac.finalize_fixed());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_answers_from_hashlib() {
        // hashlib.blake2b(b"https://x.com/a", digest_size=8, key=b"k" * 16).hexdigest(), and b"".
        let key = [b'k'; 16];
        let got = url_hashes([&b"https://x.com/a"[..], &b""[..]], &key).unwrap();
        let hex: String = got.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, KNOWN);
    }

    const KNOWN: &str = "6b5cfc17b9146ec598d0b43e8285379c";

    #[test]
    fn keys_hashlib_refuses_are_refused() {
        assert_eq!(url_hashes([&b"a"[..]], b""), Err(BadKey));
        assert_eq!(url_hashes([&b"a"[..]], &[0; 65]), Err(BadKey));
        assert!(url_hashes([&b"a"[..]], &[0; 64]).is_ok());
    }
}
