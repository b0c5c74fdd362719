//! Secrets found by what stands before them: `Authorization:` and `Bearer` (rule 1),
//! `NAME=value` (rule 2), URL userinfo (rule 3), CLI flags (rule 4), and every other
//! occurrence of a value found so (rule 7). Each rule starts at a trigger of
//! [`super::scan`] and reads the text around it.

use super::names::{CROSS_MIN, is_secret_name, plausible_secret, token_like};
use super::values::{bare_end, glued, is_name_byte, is_token_byte, run_end, value_at};
use super::{Found, MASK};
use memchr::memmem::Finder;
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;

/// Characters of a userinfo token without a password (rule 3).
const URL_TOKEN_MIN: usize = 16;
/// Up to this many distinct values, rule 7 runs one substring search per value; above, one
/// indexed pass over the text for all of them ([`Quads`]).
const CROSS_NAIVE_MAX: usize = 2;
/// Bytes of a known value's start that, ending a text that may still grow, are masked (rule 7
/// at the live edge).
const CROSS_EDGE_MIN: usize = 4;

fn blank(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

fn skip_blank(b: &[u8], i: usize) -> usize {
    run_end(b, i, blank)
}

/// Past an optional quote, JSON-escaped or not (`(?:\\?["'])?`).
fn skip_quote(b: &[u8], i: usize) -> usize {
    match (b.get(i), b.get(i + 1)) {
        (Some(b'\\'), Some(b'"' | b'\'')) => i + 2,
        (Some(b'"' | b'\''), _) => i + 1,
        _ => i,
    }
}

pub(crate) fn starts_with_ci(b: &[u8], word: &str) -> bool {
    b.len() >= word.len() && b[..word.len()].eq_ignore_ascii_case(word.as_bytes())
}

/// Where a quote (`"`, `'`, JSON-escaped `\"`/`\'`) ends just before `j`: its position.
fn quote_before(b: &[u8], j: usize) -> Option<usize> {
    (j > 0 && matches!(b[j - 1], b'"' | b'\'')).then(|| j - 1)
}

/// Rules 1 (header form) and 2, at a separator `:` or `=` (position `i`): what stands before
/// it decides.
pub(crate) fn separator<'t>(text: &'t str, i: usize, memo: &mut Memo<'t>, f: &mut Found) {
    let b = text.as_bytes();
    let mut j = i;
    while j > 0 && blank(b[j - 1]) {
        j -= 1;
    }
    let quote = quote_before(b, j);
    // `\"`: the backslash belongs to the quote.
    let name_end = match quote {
        Some(q) if q > 0 && b[q - 1] == b'\\' => q - 1,
        Some(q) => q,
        None => j,
    };
    auth(text, name_end, i, f);
    named(text, name_end, quote, i, memo, f);
}

/// Rule 1, header form: `authorization["']? *[:=] *["']?(bearer|basic|token) +` (any case)
/// masks the value that follows. `name_end` is where `authorization` would end, `i` the
/// separator.
fn auth(text: &str, name_end: usize, i: usize, f: &mut Found) {
    let b = text.as_bytes();
    const WORD: &str = "authorization";
    if name_end < WORD.len() || !b[name_end - WORD.len()..name_end].eq_ignore_ascii_case(WORD.as_bytes()) {
        return;
    }
    let i = skip_quote(b, skip_blank(b, i + 1));
    let Some(scheme) = ["bearer", "basic", "token"].into_iter().find(|w| starts_with_ci(&b[i..], w)) else {
        return;
    };
    let i = i + scheme.len();
    let v = skip_blank(b, i);
    if v == i {
        return;
    }
    let end = bare_end(text, v);
    if end > v {
        f.keyed(v..end);
    }
}

/// Rule 1, bare form, at `bearer`: `Bearer <v>` masks `<v>` when it looks like a credential,
/// or (live) when it reaches the end of the text.
pub(crate) fn bearer(text: &str, p: usize, live: bool, f: &mut Found) {
    let b = text.as_bytes();
    let after = p + "bearer".len();
    let v0 = skip_blank(b, after);
    if v0 == after || glued(text, p, |c| c.is_ascii_alphanumeric() || c == b'_') {
        return;
    }
    let raw_end = bare_end(text, v0);
    let v = text[v0..raw_end].trim_end_matches(['.', ':', '!', '?']);
    let edge = live && raw_end == text.len();
    if !v.is_empty() && (token_like(v) || edge) {
        let end = if edge { raw_end } else { v0 + v.len() };
        f.keyed(v0..end);
    }
}

/// Does `name` hold a key word (`secret`, `token`, `pass`, `salt`, `key`, any case)?
fn has_key_word(name: &[u8]) -> bool {
    const WORDS: [&[u8]; 5] = [b"secret", b"token", b"pass", b"salt", b"key"];
    name.iter().enumerate().any(|(p, &c)| {
        matches!(c | 0x20, b's' | b't' | b'p' | b'k')
            && WORDS.iter().any(|w| name.len() - p >= w.len() && name[p..p + w.len()].eq_ignore_ascii_case(w))
    })
}

/// Rule 2: a name (`[A-Za-z0-9_.-]`, ending at `name_end`) holding a key word, an optional
/// closing quote matching one before the name, blanks, then the separator at `i`, `=` or `:`
/// (not `::`, `://`, `==`, `=>`, `=~`); the value is masked when [`is_secret_name`] accepts
/// the name. `memo` remembers the verdict on names already seen in this text.
fn named<'t>(text: &'t str, name_end: usize, quote: Option<usize>, i: usize, memo: &mut Memo<'t>, f: &mut Found) {
    let b = text.as_bytes();
    let mut s = name_end;
    while s > 0 && is_name_byte(b[s - 1]) {
        s -= 1;
    }
    if s == name_end || !has_key_word(&b[s..name_end]) || glued(text, s, |_| false) {
        return;
    }
    if let Some(q) = quote
        && (s == 0 || b[s - 1] != b[q])
    {
        return;
    }
    let e = i + 1;
    let after = &text[e..];
    let bad_sep = if b[i] == b':' {
        after.starts_with(':') || after.starts_with("//")
    } else {
        after.starts_with(['=', '>', '~'])
    };
    if bad_sep || !memo.is_secret_name(&text[s..name_end]) {
        return;
    }
    if let Some(r) = value_at(text, e) {
        f.keyed(r);
    }
}

/// Verdicts of [`is_secret_name`] on the names of one text (names repeat: `HF_TOKEN`,
/// `api_key`, …); a few dozen are kept, looked up in order.
#[derive(Default)]
pub(crate) struct Memo<'t>(Vec<(&'t str, bool)>);

impl<'t> Memo<'t> {
    const MAX: usize = 32;

    fn is_secret_name(&mut self, name: &'t str) -> bool {
        if let Some(&(_, v)) = self.0.iter().find(|(n, _)| *n == name) {
            return v;
        }
        let v = is_secret_name(name);
        if self.0.len() < Self::MAX {
            self.0.push((name, v));
        }
        v
    }
}

fn scheme_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'+' | b'.' | b'-')
}

/// Rule 3, at `://`: a scheme (`[A-Za-z][A-Za-z0-9+.-]*`), then the authority up to its last
/// `@` (no whitespace, `/`, `?`, `#`, quotes or `<>`); masks the password of `user:<pw>@`, or
/// the whole userinfo when it has no `:` and [`URL_TOKEN_MIN`] or more characters. Live, an
/// authority that runs to the end of the text with no `@` yet is masked after its first `:`
/// (a password still arriving), unless what follows is only digits (a port).
pub(crate) fn url(text: &str, h: usize, live: bool, resume: &mut usize, f: &mut Found) {
    let b = text.as_bytes();
    let mut r = h;
    while r > *resume && scheme_byte(b[r - 1]) {
        r -= 1;
    }
    if !(r..h).any(|i| b[i].is_ascii_alphabetic()) {
        return;
    }
    let from = h + 3;
    let (mut i, mut last_at) = (from, None);
    while i < b.len() {
        let c = b[i];
        if c < 0x80 {
            if (c as char).is_whitespace() || matches!(c, b'/' | b'?' | b'#' | b'"' | b'\'' | b'<' | b'>') {
                break;
            }
            if c == b'@' && i > from {
                last_at = Some(i);
            }
            i += 1;
        } else {
            let ch = text[i..].chars().next().expect("char boundary");
            if ch.is_whitespace() {
                break;
            }
            i += ch.len_utf8();
        }
    }
    let Some(e) = last_at else {
        if live && i == b.len() && !text[from..].contains(MASK) {
            let authority = &text[from..];
            if let Some(c) = authority.find(':').filter(|&c| !authority[c + 1..].bytes().all(|d| d.is_ascii_digit())) {
                f.ranges.push(from + c + 1..b.len());
            }
        }
        return;
    };
    *resume = e + 1;
    let userinfo = &text[from..e];
    if userinfo.contains(MASK) {
        // Redacted already; a mask may hide what ended the authority in the first pass.
        return;
    }
    match userinfo.find(':') {
        Some(c) if c + 1 < userinfo.len() => f.keyed(from + c + 1..e),
        Some(_) => {}
        None if userinfo.chars().count() >= URL_TOKEN_MIN => f.keyed(from..e),
        None => {}
    }
}

/// Rule 4's flag test (`flag` without the leading `--`).
fn is_secret_flag(flag: &str) -> bool {
    let l = flag.to_ascii_lowercase().replace('_', "-");
    matches!(l.as_str(), "api-key" | "apikey" | "token" | "password" | "passwd")
        || l.starts_with("secret")
        || l.starts_with("private-key")
        || is_secret_name(flag)
}

/// Rule 4, at `--`: `--name=v` or `--name v` (`[A-Za-z0-9][A-Za-z0-9_-]*`) masks `v` when the
/// flag names a secret; `--token --verbose` masks nothing.
pub(crate) fn flag(text: &str, p: usize, resume: &mut usize, f: &mut Found) {
    if p < *resume {
        return;
    }
    let b = text.as_bytes();
    if !b.get(p + 2).is_some_and(u8::is_ascii_alphanumeric) {
        return;
    }
    let name_end = run_end(b, p + 2, is_token_byte);
    let end = match b.get(name_end) {
        Some(b'=') => name_end + 1,
        Some(b' ' | b'\t') => skip_blank(b, name_end),
        _ => return,
    };
    *resume = end;
    if glued(text, p, |c| c.is_ascii_alphanumeric() || c == b'-') {
        return;
    }
    if !is_secret_flag(&text[p + 2..name_end]) || (b[name_end] != b'=' && b.get(end) == Some(&b'-')) {
        return;
    }
    if let Some(r) = value_at(text, end) {
        f.keyed(r);
    }
}

/// Rule 7: mask every other occurrence of the plausible `values` in `text`, and (live) a start
/// of one of [`CROSS_EDGE_MIN`] or more bytes that ends the text.
pub(crate) fn cross(text: &str, values: Vec<&str>, live: bool, out: &mut Vec<Range<usize>>) {
    let mut seen: HashSet<&str, BuildHasherDefault<WordHasher>> = HashSet::default();
    let mut values: Vec<&str> = values.into_iter().filter(|v| seen.insert(*v) && plausible_secret(v)).collect();
    values.sort_unstable_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    if values.is_empty() {
        return;
    }
    if live {
        for v in &values {
            let longest = (CROSS_EDGE_MIN..v.len()).rev().find(|&k| v.is_char_boundary(k) && text.ends_with(&v[..k]));
            if let Some(k) = longest {
                out.push(text.len() - k..text.len());
            }
        }
    }
    let bytes = text.as_bytes();
    if values.len() <= CROSS_NAIVE_MAX {
        for v in values {
            let step = v.chars().next().map_or(1, char::len_utf8);
            let finder = Finder::new(v);
            let mut pos = 0;
            while let Some(i) = finder.find(&bytes[pos..]) {
                out.push(pos + i..pos + i + v.len());
                pos += i + step;
            }
        }
        return;
    }
    Quads::new(&values).find_all(bytes, out);
}

/// A fast, non-keyed hash for deduplicating values of one text (no untrusted table lives on).
#[derive(Default)]
struct WordHasher(u64);

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

fn quad(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// Every occurrence of many values of [`CROSS_MIN`] bytes or more, overlapping ones
/// included. With `n` the length of the shortest value, an occurrence starting at `s` covers
/// exactly one position `q` in `s..s + n - 3` with `q` a multiple of `n - 3`, and the 4 bytes
/// at `q` lie inside the value. So the 4-byte windows of each value at offsets `0..n - 3` are
/// indexed and the text is read at every `(n - 3)`th position only: a bit table filters, a
/// sorted index names the candidates, a comparison confirms them.
struct Quads<'v> {
    values: &'v [&'v str],
    /// Distance between the positions read.
    stride: usize,
    /// (window, value, offset), sorted by window.
    index: Vec<(u32, u32, u32)>,
    /// One bit per hash of an indexed window.
    bits: Vec<u64>,
}

const QUAD_BITS: u32 = 16;
/// Longest stride (bounds the index, and so the bit table's fill, for long values).
const STRIDE_MAX: usize = 32;

fn quad_hash(w: u32) -> usize {
    (w.wrapping_mul(0x9E37_79B1) >> (32 - QUAD_BITS)) as usize
}

impl<'v> Quads<'v> {
    fn new(values: &'v [&'v str]) -> Quads<'v> {
        let shortest = values.iter().map(|v| v.len()).min().unwrap_or(CROSS_MIN);
        debug_assert!(shortest >= CROSS_MIN);
        let stride = (shortest - 3).min(STRIDE_MAX);
        let mut index = Vec::with_capacity(values.len() * stride);
        let mut bits = vec![0u64; 1 << (QUAD_BITS - 6)];
        for (i, v) in values.iter().enumerate() {
            for k in 0..stride {
                let w = quad(v.as_bytes(), k);
                index.push((w, i as u32, k as u32));
                let h = quad_hash(w);
                bits[h >> 6] |= 1 << (h & 63);
            }
        }
        index.sort_unstable();
        Quads { values, stride, index, bits }
    }

    fn find_all(&self, text: &[u8], out: &mut Vec<Range<usize>>) {
        let mut q = 0;
        while q + 4 <= text.len() {
            let w = quad(text, q);
            let h = quad_hash(w);
            if self.bits[h >> 6] & (1 << (h & 63)) != 0 {
                let from = self.index.partition_point(|e| e.0 < w);
                for &(_, i, k) in self.index[from..].iter().take_while(|e| e.0 == w) {
                    let v = self.values[i as usize].as_bytes();
                    let Some(s) = q.checked_sub(k as usize) else { continue };
                    if text[s..].starts_with(v) {
                        // A match of valid UTF-8 in valid UTF-8 starts and ends on char boundaries.
                        out.push(s..s + v.len());
                    }
                }
            }
            q += self.stride;
        }
    }
}
