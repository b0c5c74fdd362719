//! The proxy's one masking rule for a record's secrets, shared by rmcp's path
//! ([`crate::proxy::mask_in`], [`crate::proxy::inbound`]) and the wire path ([`crate::proxy::wire_path`]).
//!
//! What is masked is what the consumer would decode, whatever the encoding:
//! - A JSON message is read (serde_json decodes every escape: `\"`, `\\`, `\/`, `\uXXXX` for
//!   any character, surrogate pairs), every string value and object key is masked in its
//!   decoded form, and the message is written again. A number whose digits hold a secret
//!   becomes the mask (as a string).
//! - Inside a decoded string, a secret is also found through one more layer of encoding,
//!   character by character in any mix: JSON escapes (a tool's text is often JSON itself),
//!   percent-encoding of the character's UTF-8 bytes (`+` for a space) and HTML character
//!   references (`&amp;`, `&#38;`, `&#x26;`, …).
//! - The `text` of consecutive content blocks (objects with a string `text` in one array) is
//!   searched as one joined text, so a secret split across blocks is masked in each part.
//! - What is searched for ([`needles`]) is each secret value and the parts of it worth
//!   masking alone: the credential after an auth scheme (`Bearer X` → `X`; `Basic b64` →
//!   `b64`, the decoded `user:pass` and the password) and the values of a `k=v; k2=v2` list.
//!   Parts shorter than [`MIN_LEN`] are left alone: they would mask ordinary text.
//!
//! Cost: with no secrets nothing is done. Otherwise [`mask_json`] first looks at the raw
//! text with substring searches only; the message is parsed only when it could hold a
//! secret in some form (a secret's bytes, an escape that could stand for one of its
//! characters, or two text blocks that could split one). That pre-check is sound: without
//! such an escape every decoded string is a slice of the raw text.

use serde_json::{Map, Value};
use std::borrow::Cow;
use std::ops::Range;

use crate::base::redact::MASK;

/// The shortest secret (or part of one) that is masked.
pub const MIN_LEN: usize = 4;
/// The shortest value of a `k=v` list that is masked on its own (short values there are
/// flags like `true`).
const MIN_PAIR_LEN: usize = 8;

/// What to search for, given a record's secret values: each value and its parts worth
/// masking alone (see the module doc), longest first, without duplicates.
pub fn needles<'a>(values: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: &str, min: usize| {
        if s.chars().count() >= min && !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
    };
    for v in values {
        push(v, MIN_LEN);
        let t = v.trim();
        push(t, MIN_LEN);
        if let Some((scheme, rest)) = v.trim_start().split_once(|c: char| c.is_ascii_whitespace())
            && (1..=16).contains(&scheme.len())
            && scheme.bytes().all(|b| b.is_ascii_alphabetic())
        {
            push(rest, MIN_LEN);
            let rest = rest.trim();
            push(rest, MIN_LEN);
            if scheme.eq_ignore_ascii_case("basic")
                && let Some(plain) = crate::base::redact::base64(rest).and_then(|b| String::from_utf8(b).ok())
            {
                push(&plain, MIN_LEN);
                if let Some((_, pw)) = plain.split_once(':') {
                    push(pw, MIN_LEN);
                }
            }
        }
        for part in t.split([';', ',']) {
            if let Some((k, val)) = part.split_once('=')
                && !k.trim().is_empty()
                && k.trim().bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
            {
                push(val.trim().trim_matches('"'), MIN_PAIR_LEN);
            }
        }
    }
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out
}

/// `text` (one JSON message) with every needle masked in what a consumer decodes from it:
/// borrowed when there was nothing to mask, `None` when it had to be read and is not JSON
/// (the caller withholds it).
pub fn mask_json<'t>(text: &'t str, needles: &[String]) -> Option<Cow<'t, str>> {
    if needles.is_empty() || !may_hold(text, needles) {
        return Some(Cow::Borrowed(text));
    }
    let mut v: Value = serde_json::from_str(text).ok()?;
    if mask_value(&mut v, needles) { Some(Cow::Owned(v.to_string())) } else { Some(Cow::Borrowed(text)) }
}

/// Whether raw JSON `text` could hold one of `needles` in a decoded form. False only when
/// it cannot: no needle's bytes, no escape that could stand for a needle's character, and
/// at most one `"text"` key (no join of content blocks).
fn may_hold(text: &str, needles: &[String]) -> bool {
    use memchr::memmem;
    let b = text.as_bytes();
    if needles.iter().any(|n| memmem::find(b, n.as_bytes()).is_some()) {
        return true;
    }
    // `\u` stands for any character; a short escape only for its own.
    if memmem::find(b, br"\u").is_some() {
        return true;
    }
    let chars = || needles.iter().flat_map(|n| n.chars());
    for (c, esc) in [('"', br#"\""#), ('\\', br"\\"), ('/', br"\/"), ('\u{8}', br"\b"), ('\u{c}', br"\f")] {
        if chars().any(|x| x == c) && memmem::find(b, esc).is_some() {
            return true;
        }
    }
    for (c, esc) in [('\n', br"\n"), ('\r', br"\r"), ('\t', br"\t")] {
        if chars().any(|x| x == c) && memmem::find(b, esc).is_some() {
            return true;
        }
    }
    // Percent-encoding (any character), `+` for a space, HTML references.
    if memchr::memchr_iter(b'%', b).any(|i| b.get(i + 1..i + 3).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))) {
        return true;
    }
    if chars().any(|x| x == ' ') && memchr::memchr(b'+', b).is_some() {
        return true;
    }
    if memchr::memchr_iter(b'&', b).any(|i| b.get(i + 1..).is_some_and(|r| r.starts_with(b"#") || entity(r).is_some()))
    {
        return true;
    }
    memmem::find_iter(b, br#""text""#).nth(1).is_some()
}

/// Mask every needle in `v` (strings, keys, numbers; the text of consecutive content
/// blocks joined); whether anything changed.
pub fn mask_value(v: &mut Value, needles: &[String]) -> bool {
    match v {
        Value::String(s) => mask_string(s, needles),
        Value::Number(n) => {
            let digits = n.to_string();
            let hit = needles.iter().any(|x| digits.contains(x.as_str()));
            if hit {
                *v = Value::String(MASK.to_string());
            }
            hit
        }
        Value::Array(items) => {
            let mut changed = mask_blocks(items, needles);
            for item in items.iter_mut() {
                changed |= mask_value(item, needles);
            }
            changed
        }
        Value::Object(m) => {
            let mut changed = false;
            if m.keys().any(|k| !find(k, needles).is_empty()) {
                let old = std::mem::take(m);
                let mut new = Map::new();
                for (mut k, val) in old {
                    mask_string(&mut k, needles);
                    new.insert(k, val);
                }
                *m = new;
                changed = true;
            }
            for val in m.values_mut() {
                changed |= mask_value(val, needles);
            }
            changed
        }
        Value::Null | Value::Bool(_) => false,
    }
}

/// Mask every needle in `s`; whether anything changed.
fn mask_string(s: &mut String, needles: &[String]) -> bool {
    let ranges = find(s, needles);
    if ranges.is_empty() {
        return false;
    }
    *s = apply(s, &ranges);
    true
}

/// `s` with `ranges` (sorted, disjoint, on char boundaries) replaced by the mask.
fn apply(s: &str, ranges: &[Range<usize>]) -> String {
    let mut out = String::with_capacity(s.len());
    let mut at = 0;
    for r in ranges {
        out.push_str(&s[at..r.start]);
        out.push_str(MASK);
        at = r.end;
    }
    out.push_str(&s[at..]);
    out
}

/// The `text` of each run of consecutive content blocks of `items` searched as one text:
/// a needle that spans blocks is masked in each of its parts. Whether anything changed.
fn mask_blocks(items: &mut [Value], needles: &[String]) -> bool {
    let is_block = |v: &Value| v.get("text").is_some_and(Value::is_string);
    let mut changed = false;
    let mut i = 0;
    while i < items.len() {
        let start = i;
        while i < items.len() && is_block(&items[i]) {
            i += 1;
        }
        if i - start >= 2 {
            changed |= mask_run(&mut items[start..i], needles);
        }
        i = i.max(start + 1);
    }
    changed
}

/// Mask the needles that span the joined `text` of `run` (each element a block).
fn mask_run(run: &mut [Value], needles: &[String]) -> bool {
    let texts: Vec<&str> = run.iter().map(|b| b["text"].as_str().unwrap_or("")).collect();
    let joined = texts.concat();
    let found = find(&joined, needles);
    if found.is_empty() {
        return false;
    }
    let mut masked = Vec::with_capacity(run.len());
    let mut base = 0;
    for t in &texts {
        let end = base + t.len();
        let local: Vec<Range<usize>> = found
            .iter()
            .filter(|r| r.start < end && r.end > base)
            .map(|r| r.start.max(base) - base..r.end.min(end) - base)
            .collect();
        masked.push((!local.is_empty()).then(|| apply(t, &local)));
        base = end;
    }
    for (b, m) in run.iter_mut().zip(masked) {
        if let Some(m) = m {
            b["text"] = Value::String(m);
        }
    }
    true
}

/// Byte ranges (sorted, merged, on char boundaries) of `s` where a needle appears, as it is
/// or through one layer of JSON escapes, percent-encoding or HTML references.
pub fn find(s: &str, needles: &[String]) -> Vec<Range<usize>> {
    let b = s.as_bytes();
    let mut ranges = Vec::new();
    let encoded = memchr::memchr3(b'\\', b'%', b'&', b).is_some() || memchr::memchr(b'+', b).is_some();
    for n in needles {
        if !encoded {
            ranges.extend(memchr::memmem::find_iter(b, n.as_bytes()).map(|i| i..i + n.len()));
            continue;
        }
        let first = n.as_bytes()[0];
        let mut p = 0;
        while p < b.len() {
            let Some(off) = b[p..].iter().position(|&c| c == first || matches!(c, b'\\' | b'%' | b'&' | b'+')) else {
                break;
            };
            p += off;
            if let Some(end) = match_at(b, p, n) {
                ranges.push(p..end);
                p = end;
            } else {
                p += 1;
            }
        }
    }
    crate::base::redact::merge(ranges)
}

/// The end of the longest match of `needle` at `p` (each character raw or encoded).
/// The ways to read the text can branch (`\\` is one backslash or two), so this follows
/// every reachable position, at most a few at a time.
fn match_at(b: &[u8], p: usize, needle: &str) -> Option<usize> {
    let mut cur = vec![p];
    let mut next = Vec::new();
    for c in needle.chars() {
        next.clear();
        for &q in &cur {
            ends(b, q, c, &mut next);
        }
        if next.is_empty() {
            return None;
        }
        next.sort_unstable();
        next.dedup();
        std::mem::swap(&mut cur, &mut next);
    }
    cur.last().copied()
}

/// Push every position right after one reading of character `c` at `p`.
fn ends(b: &[u8], p: usize, c: char, out: &mut Vec<usize>) {
    let mut buf = [0u8; 4];
    let enc = c.encode_utf8(&mut buf).as_bytes();
    let rest = &b[p.min(b.len())..];
    if rest.starts_with(enc) {
        out.push(p + enc.len());
    }
    match rest.first() {
        Some(b'\\') => {
            if let Some((d, len)) = json_escape(rest)
                && d == c
            {
                out.push(p + len);
            }
        }
        Some(b'%') => {
            let mut q = 0;
            for &x in enc.iter() {
                match rest.get(q..q + 3) {
                    Some([b'%', h, l]) if hex(*h).zip(hex(*l)).is_some_and(|(h, l)| h * 16 + l == x) => q += 3,
                    _ => return,
                }
            }
            out.push(p + q);
        }
        Some(b'+') if c == ' ' => out.push(p + 1),
        Some(b'&') => {
            if let Some((d, len)) = entity(&rest[1..])
                && d == c
            {
                out.push(p + 1 + len);
            }
        }
        _ => {}
    }
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// The four hex digits of a `\uXXXX` at the start of `b` (which starts with `\u`).
fn u_escape(b: &[u8]) -> Option<u32> {
    let h = b.get(2..6)?;
    h.iter().try_fold(0u32, |acc, &x| Some(acc * 16 + u32::from(hex(x)?)))
}

/// The character one JSON escape at the start of `b` stands for, and its length.
fn json_escape(b: &[u8]) -> Option<(char, usize)> {
    let d = match b.get(1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let hi = u_escape(b)?;
            if (0xD800..0xDC00).contains(&hi) {
                let lo = b.get(6..).filter(|r| r.starts_with(br"\u")).and_then(u_escape)?;
                if !(0xDC00..0xE000).contains(&lo) {
                    return None;
                }
                return Some((char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))?, 12));
            }
            return Some((char::from_u32(hi)?, 6));
        }
        _ => return None,
    };
    Some((d, 2))
}

/// The character an HTML character reference after `&` (at the start of `b`) stands for,
/// and its length without the `&`.
fn entity(b: &[u8]) -> Option<(char, usize)> {
    const NAMED: [(&[u8], char); 6] =
        [(b"amp;", '&'), (b"lt;", '<'), (b"gt;", '>'), (b"quot;", '"'), (b"apos;", '\''), (b"nbsp;", '\u{a0}')];
    if let Some((name, c)) = NAMED.iter().find(|(n, _)| b.starts_with(n)) {
        return Some((*c, name.len()));
    }
    let r = b.strip_prefix(b"#")?;
    let (digits, radix, skip) = match r.first() {
        Some(b'x' | b'X') => (&r[1..], 16, 2),
        _ => (r, 10, 1),
    };
    let n = digits.iter().take_while(|d| (**d as char).is_digit(radix)).count();
    if n == 0 || n > 8 || digits.get(n) != Some(&b';') {
        return None;
    }
    let v = u32::from_str_radix(std::str::from_utf8(&digits[..n]).ok()?, radix).ok()?;
    Some((char::from_u32(v)?, skip + n + 1))
}

#[cfg(test)]
mod tests;
