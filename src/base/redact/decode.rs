//! Escaped lines: a line holding percent-encoding (`%3A`, with `+` for a space) or a `\uXXXX`
//! / `\xXX` escape is decoded into a shadow text and scanned as well, so `Bearer%20…`,
//! `Authorization%3A%20Bearer%20…`, `api_key%3D…`, `%22password%22%3A%22…%22`,
//! `hooks.slack.com%2Fservices%2F…` and `\u0068f_…` are masked like their plain forms. Only
//! escapes of ASCII characters are decoded (so the shadow is valid UTF-8 and every byte of it
//! maps back to whole source characters), one level deep.

use memchr::{memchr, memchr_iter, memchr2_iter, memrchr};
use std::ops::Range;

/// A decoded line and where each of its bytes came from.
pub(crate) struct Decoded {
    pub text: String,
    /// Source offset of each byte of `text`, then the source end of the line.
    map: Vec<usize>,
    /// Does the line end where the source text ends?
    pub at_end: bool,
}

impl Decoded {
    /// The source range of a range of `text` (whole escapes).
    pub fn source(&self, r: &Range<usize>) -> Range<usize> {
        self.map[r.start]..self.map[r.end]
    }
}

/// The value of the `n` hex digits at `from`.
fn hex_at(b: &[u8], from: usize, n: usize) -> Option<u32> {
    b.get(from..from + n)?.iter().try_fold(0u32, |acc, &c| Some(acc * 16 + (c as char).to_digit(16)?))
}

/// The ASCII character an escape at `i` stands for, and its length in the source.
fn escape_at(b: &[u8], i: usize) -> Option<(u8, usize)> {
    let (v, len) = match (b[i], b.get(i + 1)) {
        (b'%', _) => (hex_at(b, i + 1, 2)?, 3),
        (b'\\', Some(b'u')) => (hex_at(b, i + 2, 4)?, 6),
        (b'\\', Some(b'x')) => (hex_at(b, i + 2, 2)?, 4),
        _ => return None,
    };
    u8::try_from(v).ok().filter(u8::is_ascii).map(|v| (v, len))
}

/// Decode the line `start..end` of `text`.
fn decode(text: &str, start: usize, end: usize) -> Decoded {
    let b = text.as_bytes();
    let percent = memchr_iter(b'%', &b[start..end]).any(|i| escape_at(b, start + i).is_some());
    let mut out = Vec::with_capacity(end - start);
    let mut map = Vec::with_capacity(end - start + 1);
    let mut i = start;
    while i < end {
        match escape_at(b, i).filter(|&(_, len)| i + len <= end) {
            Some((v, len)) => {
                out.push(v);
                map.push(i);
                i += len;
            }
            None => {
                out.push(if percent && b[i] == b'+' { b' ' } else { b[i] });
                map.push(i);
                i += 1;
            }
        }
    }
    map.push(end);
    // Only ASCII bytes were produced from escapes, and other bytes were copied whole.
    let text = String::from_utf8(out).expect("decoded line is UTF-8");
    Decoded { text, map, at_end: end == b.len() }
}

/// Every line of `text` that holds an escape, decoded.
pub(crate) fn escaped_lines(text: &str) -> Vec<Decoded> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut next = 0;
    for i in memchr2_iter(b'%', b'\\', b) {
        if i < next || escape_at(b, i).is_none() {
            continue;
        }
        let start = memrchr(b'\n', &b[..i]).map_or(0, |n| n + 1);
        let end = memchr(b'\n', &b[i..]).map_or(b.len(), |n| i + n);
        out.push(decode(text, start, end));
        next = end + 1;
    }
    out
}

/// Bytes at the end of `text` that begin an escape not complete yet (`%`, `%3`, `\`, `\u00`,
/// `\x4`, …): where a growing or cut text stops inside an escape, what is before it is the
/// live edge.
pub(crate) fn partial_escape(text: &str) -> usize {
    let b = text.as_bytes();
    let hex_tail = |from: usize| b[from..].iter().all(u8::is_ascii_hexdigit);
    (1..=5)
        .find(|&n| {
            n <= b.len() && {
                let s = b.len() - n;
                match (b[s], b.get(s + 1)) {
                    (b'%', _) => n <= 2 && hex_tail(s + 1),
                    (b'\\', None) => true,
                    (b'\\', Some(b'u')) => n <= 5 && hex_tail(s + 2),
                    (b'\\', Some(b'x')) => n <= 3 && hex_tail(s + 2),
                    _ => false,
                }
            }
        })
        .unwrap_or(0)
}

/// `text` with its ASCII escapes decoded (as the shadow scan reads it).
pub(crate) fn unescape(text: &str) -> std::borrow::Cow<'_, str> {
    if escaped_lines(text).is_empty() { text.into() } else { decode(text, 0, text.len()).text.into() }
}

/// Decode standard or URL-safe base64 (padding optional).
pub fn base64(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=');
    if s.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}
