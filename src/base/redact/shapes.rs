//! Secrets recognised by their own shape, wherever they stand: token prefixes of the table
//! in [`super::tokens`] (rule 6), JWTs (rule 5) and PEM private key blocks.
//!
//! The word boundary: a shape that follows an ASCII letter continues a word (`task-…` is not
//! an `sk-` token) and is only masked when the letter before it is itself masked (it is then
//! one secret with what precedes it; this keeps redaction idempotent). Digits, `_` and
//! punctuation do not glue (`0ghp_…`, `\u0022ghp_…`, `MY_hf_…` are tokens), nor do the letters
//! of an escape that stands for another character (`\nghp_…`, `%3Aghp_…`, `\u003Aghp_…`).

use super::Found;
use super::tokens::Token;
use super::values::{escape_before, is_token_byte, run_end};
use memchr::memmem;

/// Characters of each JWT part (rule 5).
const JWT_PART_MIN: usize = 10;
/// Base64 characters a PEM body needs (fewer is prose about keys, not a key).
const PEM_BODY_MIN: usize = 32;
/// How far after `-----BEGIN` the matching `-----END` is looked for.
const PEM_MAX: usize = 64 * 1024;

/// Does a shape starting at `s` continue a word (see the module doc)?
pub(crate) fn glued_to_letter(b: &[u8], s: usize) -> bool {
    s > 0 && b[s - 1].is_ascii_alphabetic() && !escape_before(b, s)
}

/// Record a shape match: masked now, or (glued to a letter) only next to another secret.
fn found(b: &[u8], r: std::ops::Range<usize>, f: &mut Found) {
    if glued_to_letter(b, r.start) { f.glued.push(r) } else { f.ranges.push(r) }
}

/// Rule 6, at a token prefix: the prefix and its body, when the body has `rule.min` characters or (live) runs to the end
/// of the text.
pub(crate) fn token(text: &str, s: usize, rule: &Token, live: bool, resume: &mut usize, f: &mut Found) {
    if s < *resume || !text[s..].starts_with(rule.prefix) {
        return;
    }
    let b = text.as_bytes();
    let from = s + rule.prefix.len();
    let end = rule.body.run_end(b, from);
    let n = end - from;
    let edge = live && end == b.len() && (n > 0 || rule.bare_prefix_is_secret());
    if n < rule.min && !edge {
        return;
    }
    *resume = end;
    found(b, s..end, f);
}

/// Rule 5, at `eyJ`: three or more `.`-separated parts of at least [`JWT_PART_MIN`]
/// base64url characters, masked whole; live, any `eyJ…` run of base64url characters and dots
/// that reaches the end of the text.
pub(crate) fn jwt(text: &str, s: usize, live: bool, resume: &mut usize, f: &mut Found) {
    let b = text.as_bytes();
    if s < *resume || !b[s..].starts_with(b"eyJ") {
        return;
    }
    if live && run_end(b, s, |c| is_token_byte(c) || c == b'.') == b.len() {
        *resume = b.len();
        found(b, s..b.len(), f);
        return;
    }
    let mut end = run_end(b, s, is_token_byte);
    if end - s < JWT_PART_MIN {
        return;
    }
    let mut parts = 1;
    while b.get(end) == Some(&b'.') {
        let next = run_end(b, end + 1, is_token_byte);
        if next - end - 1 < JWT_PART_MIN {
            break;
        }
        end = next;
        parts += 1;
    }
    if parts >= 3 {
        *resume = end;
        found(b, s..end, f);
    }
}

fn base64_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=')
}

/// What may stand between the lines of a PEM block: base64, white space, escaped line breaks
/// (`\n`), and the `Name: value, …` headers of an encrypted key.
fn pem_byte(c: u8) -> bool {
    base64_byte(c) || c.is_ascii_whitespace() || matches!(c, b'\\' | b':' | b',' | b'-' | b'.' | b'_')
}

/// After `-----END`: its label and closing dashes.
fn end_line(b: &[u8], q: usize) -> usize {
    let e = run_end(b, q + "-----END".len(), |c| c.is_ascii_alphanumeric() || c == b' ');
    if b[e..].starts_with(b"-----") { e + 5 } else { e }
}

/// The lines of a PEM body that has no well-formed end: base64 lines, header lines and empty
/// lines before the body, separated by real or escaped (`\n`, `\r\n`) line breaks, up to an
/// `-----END` line. Stops before a line holding anything else and at an empty line after the
/// body. Returns (end of the last line taken, base64 characters seen, whether the text ended
/// inside the block).
fn pem_lines(b: &[u8], from: usize) -> (usize, usize, bool) {
    let (mut i, mut body, mut last) = (from, 0, from);
    loop {
        i = run_end(b, i, |c| c == b' ' || c == b'\t');
        if b[i..].starts_with(b"-----END") {
            return (end_line(b, i), body, false);
        }
        let j = run_end(b, i, base64_byte);
        let name = run_end(b, i, |c| c.is_ascii_alphanumeric() || c == b'-');
        let header = name > i && b.get(name) == Some(&b':');
        let content = if header {
            run_end(b, name, |c| {
                c.is_ascii_alphanumeric() || matches!(c, b' ' | b',' | b':' | b'/' | b'.' | b'+' | b'=' | b'_' | b'-')
            })
        } else {
            j
        };
        let k = run_end(b, content, |c| c == b' ' || c == b'\t' || c == b'\r');
        let next = if k == b.len() {
            None
        } else if b[k] == b'\n' {
            Some(k + 1)
        } else if b[k..].starts_with(b"\\r\\n") {
            Some(k + 4)
        } else if b[k..].starts_with(b"\\n") {
            Some(k + 2)
        } else if b[k..].starts_with(b"-----END") && content > i {
            Some(k)
        } else {
            return (last, body, false);
        };
        if !header && j > i {
            body += j - i;
        } else if content == i && body > 0 {
            return (last, body, false);
        }
        if content > i {
            last = content;
        }
        match next {
            Some(n) => i = n,
            None => return (last, body, true),
        }
    }
}

/// At `-----BEGIN`: a `… PRIVATE KEY-----` or `… PRIVATE KEY BLOCK-----` header,
/// then the body up to and including the `-----END …-----` line, masked whole. A block with
/// fewer than [`PEM_BODY_MIN`] base64 characters is prose about keys and stays, unless (live)
/// the text ends inside it. Without a well-formed end, the body's lines are followed as
/// far as they go ([`pem_lines`]).
pub(crate) fn pem(text: &str, p: usize, live: bool, resume: &mut usize, f: &mut Found) {
    if p < *resume {
        return;
    }
    let b = text.as_bytes();
    let label_from = p + "-----BEGIN".len();
    if b.get(label_from) != Some(&b' ') {
        return;
    }
    let label_end = run_end(b, label_from, |c| c.is_ascii_alphanumeric() || c == b' ');
    let label = &text[label_from..label_end];
    let private = ["PRIVATE KEY", "PRIVATE KEY BLOCK"].iter().any(|l| {
        label.len() >= l.len() && label[label.len() - l.len()..].eq_ignore_ascii_case(l) && label_end - label_from <= 64
    });
    if !private || !b[label_end..].starts_with(b"-----") {
        return;
    }
    let header_end = label_end + 5;
    let window = &b[header_end..b.len().min(header_end + PEM_MAX)];
    let whole = memmem::find(window, b"-----END")
        .filter(|&q| window[..q].iter().all(|&c| pem_byte(c)))
        .map(|q| (end_line(b, header_end + q), window[..q].iter().filter(|&&c| base64_byte(c)).count(), false));
    let (end, body, open) = whole.unwrap_or_else(|| pem_lines(b, header_end));
    if body >= PEM_BODY_MIN || (live && open) {
        *resume = end;
        f.ranges.push(p..end);
    }
}
