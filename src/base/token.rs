//! Random tokens and fingerprints: base62 keys from the OS RNG, sha256 digests, and a
//! constant-time comparison.

use crate::base::error::{Error, Result};
use sha2::{Digest, Sha256};

const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// `n` base62 characters drawn without modulo bias (43 characters carry 256 bits).
pub fn random_base62(n: usize) -> Result<String> {
    let mut out = String::with_capacity(n);
    let mut buf = [0u8; 64];
    while out.len() < n {
        getrandom::fill(&mut buf).map_err(|e| Error::internal(format!("no randomness: {e}")))?;
        for b in buf {
            // 248 = 62 * 4: reject the tail so every symbol is equally likely.
            if b < 248 && out.len() < n {
                out.push(ALPHABET[(b % 62) as usize] as char);
            }
        }
    }
    Ok(out)
}

pub fn sha256_hex(s: &str) -> String {
    hex::encode(Sha256::digest(s.as_bytes()))
}

/// A short public fingerprint of a key: `sha256:` and the first 12 hex digits.
pub fn fingerprint(key: &str) -> String {
    format!("sha256:{}", &sha256_hex(key)[..12])
}

/// Compare two secrets without an early exit on the first differing byte.
pub fn ct_eq(a: &str, b: &str) -> bool {
    let (a, b) = (Sha256::digest(a.as_bytes()), Sha256::digest(b.as_bytes()));
    a.iter().zip(b.iter()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A random UUID v4 in its usual text form.
pub fn uuid4() -> Result<String> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|e| Error::internal(format!("no randomness: {e}")))?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex::encode(b);
    Ok(format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_base62_and_distinct() {
        let a = random_base62(43).unwrap();
        let b = random_base62(43).unwrap();
        assert_eq!(a.len(), 43);
        assert_ne!(a, b);
        assert!(a.bytes().all(|c| c.is_ascii_alphanumeric()));
    }

    #[test]
    fn ct_eq_works() {
        assert!(ct_eq("abc", "abc"));
        assert!(!ct_eq("abc", "abd"));
        assert!(!ct_eq("abc", "abcd"));
    }
}
