//! Reading a value out of text: the run of bytes a rule stops at, the value after a
//! separator (quoted, JSON-escaped or bare), and the glue test that keeps a match from
//! starting inside a word.

use super::MASK;
use std::ops::Range;

pub(crate) fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Does the match at `s` continue a word: is it preceded by a byte for which `word` holds, or
/// by a [`MASK`]? (A mask stands for masked word characters, so text right after one is
/// treated the same before and after redaction; that keeps redaction idempotent.)
pub(crate) fn glued(text: &str, s: usize, word: impl Fn(u8) -> bool) -> bool {
    s > 0 && ((word(text.as_bytes()[s - 1]) && !escape_before(text.as_bytes(), s)) || text[..s].ends_with(MASK))
}

/// Is the byte before `s` the last of an escape that stands for another character: `\n`,
/// `\r`, `\t`, `\b`, `\f`, `%XX`, `\xXX` or `\uXXXX`? (Its letters are not a word.)
pub(crate) fn escape_before(b: &[u8], s: usize) -> bool {
    let hex = |r: Range<usize>| b[r].iter().all(u8::is_ascii_hexdigit);
    (s >= 2 && b[s - 2] == b'\\' && matches!(b[s - 1], b'n' | b'r' | b't' | b'b' | b'f'))
        || (s >= 3 && b[s - 3] == b'%' && hex(s - 2..s))
        || (s >= 4 && b[s - 4] == b'\\' && b[s - 3] == b'x' && hex(s - 2..s))
        || (s >= 6 && b[s - 6] == b'\\' && b[s - 5] == b'u' && hex(s - 4..s))
}

pub(crate) fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-'
}

/// End of the run of bytes from `start` that satisfy `ok`.
pub(crate) fn run_end(b: &[u8], start: usize, ok: impl Fn(u8) -> bool) -> usize {
    let mut i = start;
    while i < b.len() && ok(b[i]) {
        i += 1;
    }
    i
}

/// The value starting at `start` (after optional spaces/tabs): inside quotes (`"`, `'`, `` ` ``,
/// or JSON-escaped `\"`/`\'`; an unclosed quote runs to the end of the line), or a bare run.
/// `None` when empty, when the value is a structure (`{`, `[`), or when it starts with
/// [`MASK`]: it was redacted already, and a second pass must not grow it over text that
/// follows (a mask may have replaced the closing quote).
pub(crate) fn value_at(text: &str, start: usize) -> Option<Range<usize>> {
    let b = text.as_bytes();
    let i = run_end(b, start, |c| c == b' ' || c == b'\t');
    let (open, r) = match *b.get(i)? {
        q @ (b'"' | b'\'' | b'`') => (i + 1, quoted(b, i + 1, q, false)),
        b'\\' if matches!(b.get(i + 1), Some(b'"' | b'\'')) => (i + 2, quoted(b, i + 2, b[i + 1], true)),
        b'{' | b'[' => return None,
        _ => (i, i..bare_end(text, i)),
    };
    (!r.is_empty() && !text[open..].starts_with(MASK)).then_some(r)
}

/// Content of a quoted value from `from` to the closing quote `q` (`\q` when `escaped`).
pub(crate) fn quoted(b: &[u8], from: usize, q: u8, escaped: bool) -> Range<usize> {
    let mut j = from;
    while j < b.len() {
        match b[j] {
            b'\n' | b'\r' => break,
            b'\\' if escaped && b.get(j + 1) == Some(&q) => break,
            b'\\' => j += 2,
            c if c == q && !escaped => break,
            _ => j += 1,
        }
    }
    from..j.min(b.len())
}

/// End of a bare value starting at `from`. A value that starts with [`MASK`] is that mask
/// (and any masks right after it) only: it was redacted already, so a second pass must not
/// grow it over the text that follows.
pub(crate) fn bare_end(text: &str, from: usize) -> usize {
    let mut rest = &text[from..];
    while let Some(r) = rest.strip_prefix(MASK) {
        rest = r;
    }
    if rest.len() < text.len() - from {
        return text.len() - rest.len();
    }
    let mut depth = 0usize;
    for (k, c) in text[from..].char_indices() {
        match c {
            '"' | '\'' | '`' | ',' | ';' | '&' | '\\' => return from + k,
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth == 0 => return from + k,
            ')' | ']' | '}' => depth -= 1,
            c if c.is_whitespace() => return from + k,
            _ => {}
        }
    }
    text.len()
}
