//! The log redactor: the one place that decides which bytes of an outward text are secrets.
//!
//! Every text hal0 shows a remote caller (a run's `output`, `error`, `input_preview`,
//! `pending`, `events_tail`, event payloads) passes through this module first. It owns the
//! secret-detection rules, the mask token [`MASK`], the live-edge rule for text that may
//! still grow, masking of consecutive segments as one text ([`redact_segments`]), masking a
//! window cut out of a longer text ([`redact_head`]), JSON redaction ([`redact_json`]) and the
//! byte-safe cut ([`cut`]).
//!
//! # Rules
//! 1. `Authorization: Bearer|Basic|Token <v>` (any case, also quoted/JSON-shaped) masks `<v>`;
//!    a bare `Bearer <v>` masks `<v>` when it looks like a credential (see [`token_like`]).
//! 2. `NAME=value` / `NAME: value` (NAME optionally quoted, spaces allowed around the
//!    separator) masks the value when [`is_secret_name`] accepts NAME. Quoted values are masked
//!    inside the quotes; bare values run to whitespace, a quote, `` ` ``, `,`, `;`, `&`, `\` or
//!    an unbalanced `)`/`]`/`}`.
//! 3. URL userinfo: the password of `scheme://user:<pw>@`, and `scheme://<token>@` when the
//!    userinfo has 16 or more characters.
//! 4. CLI flags `--api-key`, `--token`, `--password`, `--secret…`, `--private-key…` and any
//!    other flag whose name passes [`is_secret_name`] mask their value (`=v` or ` v`).
//! 5. JWT-shaped `eyJ…`.`…`.`…` (parts of at least 10 base64url characters) is masked whole.
//! 6. Token shapes: every entry of [`TOKENS`] (hal0's own `hal0bk_`/`hal0pk_`/`hal0ak_`/
//!    `hal0ck_` keys, `hf_`, `sk-`, `ghp_`, `glpat-`, `xoxb-`, `xapp-`, `AKIA`/`ASIA`, `AIza`,
//!    `sk_live_`, `npm_`, Slack/Discord/Teams webhook URLs, …: a prefix, then at least `min`
//!    characters of its body class) is masked whole. Word boundary (rules 5 and 6): a shape
//!    right after an ASCII letter continues a word (`task-…` is not an `sk-` token) and is
//!    masked only when that letter is masked too; digits, `_`, punctuation and the letters of
//!    an escape (`\n`, `%3A`, `\u0022`) do not glue, so `0ghp_…` and `\"ghp_…\"` are masked.
//! 7. Every plausible value found by rules 1–4 (see [`plausible_secret`]) is also masked
//!    wherever else it occurs in the same text.
//! 8. Idempotent: a range that is only [`MASK`] text is never reported, and a range touching
//!    a `MASK` grows to cover all of it, so `***REDACTED***` is never re-masked or mangled.
//!    For rules 1–4 a mask stands for masked word characters: a match right after one is
//!    treated as glued to a word, a value that starts with one is that mask only, and a URL
//!    userinfo holding one is left alone, so a second pass finds nothing the first one did not.
//!    A token or JWT right after a mask is masked (the mask is a masked neighbour).
//! 9. PEM private keys: `-----BEGIN … PRIVATE KEY-----` (RSA, EC, DSA, OpenSSH, PKCS#8,
//!    encrypted, PGP `… PRIVATE KEY BLOCK`) through its `-----END …-----` line is masked whole,
//!    also when its line breaks are JSON-escaped `\n`; a block whose body has fewer than 32
//!    base64 characters is prose about keys and stays.
//! 10. Escaped lines: a line holding percent-encoding or `\uXXXX`/`\xXX` escapes is also
//!     scanned decoded (`Bearer%20…`, `api_key%3D…`, `\u0068f_…`), see `decode.rs`.
//!
//! Not secrets: text with no key word and no known prefix stays, however random it looks.
//! Git commit SHAs, UUIDs, hex digests and base64 blobs are ordinary content of agent output
//! (there is no entropy rule); a bare secret without a known shape is masked only through its
//! key (rules 1–4) or an earlier keyed occurrence (rule 7).
//!
//! With `live`, the end of the text may still grow (or is where a longer text was cut): a
//! token whose body runs to the very end is masked through the end whatever its length (its
//! prefix alone too when the prefix holds a character other than a letter or digit, like
//! `hf_`), and so are a bare `Bearer <v>` whose value reaches the end, a PEM block without
//! its end, and the start (4 bytes or more) of a keyed value of rule 7 that ends the text.
//!
//! The mask replaces exactly the secret's bytes, with no padding: `HF_TOKEN=...` becomes
//! `HF_TOKEN=***REDACTED***`, `"pw": "a b"` becomes `"pw": "***REDACTED***"`, and adjacent
//! or overlapping secrets become one mask. Rule 2 masks placeholders in place too (the value
//! is whatever follows a secret name); only rule 7 skips them.
//!
//! Callers that page through consecutive `message.text` events pass up to [`CONTEXT_CHARS`]
//! characters of the stored run on each side ([`context_before`], [`context_after`]) to
//! [`redact_segments`]; where that context was cut short of the stored end, the cut is a live
//! edge. [`redact_head`] does the same for the start of one text.
//!
//! One trigger pass (`scan.rs`: SIMD byte and substring searches for the separators `:`/`=`,
//! `Bearer`, `-`/`_`/`.`, `eyJ` and the token prefixes) finds where rules may apply; text
//! without a trigger and without an escape is returned untouched, borrowed.

mod decode;
mod keyed;
mod names;
mod scan;
mod shapes;
mod tokens;
mod values;

#[cfg(test)]
pub(crate) mod corpus;
#[cfg(test)]
mod props;
#[cfg(test)]
mod tests;

pub use decode::base64;
pub(crate) use decode::unescape;
pub use names::{is_secret_name, plausible_secret, token_like};
pub use tokens::{Body, TOKENS, Token, token_rule};

use std::borrow::Cow;
use std::ops::Range;

/// What every secret is replaced with.
pub const MASK: &str = "***REDACTED***";

/// How much of the stored `message.text` run on each side of a window callers pass as
/// context to [`redact_segments`] (characters).
pub const CONTEXT_CHARS: usize = 8192;

/// Secret ranges found in one text.
#[derive(Default)]
pub(crate) struct Found {
    /// Everything to mask.
    ranges: Vec<Range<usize>>,
    /// The keyed values among them (rules 1–4), for rule 7.
    keyed: Vec<Range<usize>>,
    /// Token and JWT shapes glued to a letter: masked only when that letter is.
    glued: Vec<Range<usize>>,
    /// Masks already in the text (rule 8).
    masks: Vec<Range<usize>>,
}

impl Found {
    fn keyed(&mut self, r: Range<usize>) {
        self.ranges.push(r.clone());
        self.keyed.push(r);
    }
}

/// Sort and merge overlapping or touching ranges.
pub(crate) fn merge(mut ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
    ranges.sort_unstable_by_key(|r| (r.start, r.end));
    let mut out: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// Is `s` one or more copies of [`MASK`] and nothing else?
fn is_only_masks(s: &str) -> bool {
    !s.is_empty() && s.len().is_multiple_of(MASK.len()) && s.as_bytes().chunks(MASK.len()).all(|c| c == MASK.as_bytes())
}

/// Rule 8: grow ranges that touch a mask already in the text to cover all of it, and drop
/// ranges that are only masks.
fn protect_masks(text: &str, masks: &[Range<usize>], ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
    if masks.is_empty() {
        return ranges;
    }
    let mut grown = Vec::with_capacity(ranges.len());
    let mut i = 0;
    for mut r in ranges {
        while i < masks.len() && masks[i].end <= r.start {
            i += 1;
        }
        let mut j = i;
        while j < masks.len() && masks[j].start < r.end {
            r.start = r.start.min(masks[j].start);
            r.end = r.end.max(masks[j].end);
            j += 1;
        }
        grown.push(r);
    }
    let mut out = merge(grown);
    out.retain(|r| !is_only_masks(&text[r.clone()]));
    out
}

/// Does one of `ranges` (sorted, disjoint) hold byte `p`?
fn covers(ranges: &[Range<usize>], p: usize) -> bool {
    let i = ranges.partition_point(|r| r.end <= p);
    ranges.get(i).is_some_and(|r| r.start <= p)
}

/// Add the glued shapes whose letter before is masked (a masked shape may make another one's
/// letter masked, so until nothing changes), then apply rule 8.
fn finish(text: &str, f: Found) -> Vec<Range<usize>> {
    let mut ranges = merge(f.ranges);
    let mut glued = f.glued;
    loop {
        let before = glued.len();
        let mut added = Vec::new();
        glued.retain(|g| {
            let next = covers(&ranges, g.start - 1) || covers(&f.masks, g.start - 1);
            if next {
                added.push(g.clone());
            }
            !next
        });
        if glued.len() == before {
            break;
        }
        ranges.extend(added);
        ranges = merge(ranges);
    }
    protect_masks(text, &f.masks, ranges)
}

/// Byte ranges (sorted, merged, on char boundaries) of secret values in `text`. `live` adds
/// the live-edge rule (the end of `text` may still grow).
pub fn secret_ranges(text: &str, live: bool) -> Vec<Range<usize>> {
    // Live, an escape cut short at the end belongs to the edge: scan what is before it, and
    // let what reaches that edge reach the end.
    let edge = if live { text.len() - decode::partial_escape(text) } else { text.len() };
    let whole = text;
    let text = &whole[..edge];
    let mut f = Found::default();
    scan::scan(text, live, &mut f);
    let lines = decode::escaped_lines(text);
    let mut values: Vec<&str> = f.keyed.iter().map(|r| &text[r.clone()]).collect();
    for d in &lines {
        let mut g = Found::default();
        scan::scan(&d.text, live && d.at_end, &mut g);
        f.ranges.extend(g.ranges.iter().map(|r| d.source(r)));
        f.glued.extend(g.glued.iter().map(|r| d.source(r)));
        values.extend(g.keyed.iter().map(|r| &d.text[r.clone()]));
    }
    keyed::cross(text, values, live, &mut f.ranges);
    if f.ranges.is_empty() && f.glued.is_empty() {
        return Vec::new();
    }
    let mut ranges = finish(text, f);
    if let Some(last) = ranges.last_mut().filter(|r| r.end == edge) {
        last.end = whole.len();
    }
    ranges
}

/// `text` with each of `ranges` (sorted, disjoint) replaced by [`MASK`].
fn apply(text: &str, ranges: &[Range<usize>]) -> String {
    let mut out = String::with_capacity(text.len() + ranges.len() * MASK.len());
    let mut last = 0;
    for r in ranges {
        out.push_str(&text[last..r.start]);
        out.push_str(MASK);
        last = r.end;
    }
    out.push_str(&text[last..]);
    out
}

/// `text` with every secret range replaced by [`MASK`] (`Cow::Borrowed` when nothing matched).
pub fn redact(text: &str) -> Cow<'_, str> {
    let ranges = secret_ranges(text, false);
    if ranges.is_empty() { Cow::Borrowed(text) } else { Cow::Owned(apply(text, &ranges)) }
}

/// [`redact`] for text whose end may still grow: the live-edge rule applies at its end.
pub fn redact_live(text: &str) -> String {
    apply(text, &secret_ranges(text, true))
}

/// Redact every string in a JSON value in place; also masks the whole value of object keys
/// whose name is secret-shaped ([`is_secret_name`], e.g. `{"api_key": "x"}`), keeping keys and
/// shape: under such a key every non-empty string and every number becomes [`MASK`] (a string),
/// arrays and objects keep their structure, booleans and nulls stay.
pub fn redact_json(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::String(s) => {
            if let Cow::Owned(r) = redact(s) {
                *s = r;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_json),
        Value::Object(map) => {
            // A named pair (`{"key": "telemetry.otlp_headers", "value": …}`, a setting or an
            // environment variable): the pair's name decides whether its value is a secret.
            let pair = ["key", "name"]
                .iter()
                .find_map(|n| map.get(*n).and_then(Value::as_str).filter(|_| map.contains_key("value")))
                .map(is_secret_name);
            for (k, item) in map.iter_mut() {
                let secret = match (k.as_str(), pair) {
                    ("value", Some(named)) => named,
                    ("key" | "name", Some(_)) => false,
                    ("key", None) => !item.as_str().is_some_and(is_dotted_name),
                    _ => is_secret_name(k),
                };
                if secret { mask_json(item) } else { redact_json(item) }
            }
        }
        Value::Bool(_) | Value::Null | Value::Number(_) => {}
    }
}

/// A dotted setting name (`hermes.restart_command`, `network.public_url`): lower-case words
/// of letters, digits and `_` joined by dots. Held under a JSON `"key"` it names a setting
/// and is no secret (a credential is not lower-case words with dots).
fn is_dotted_name(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() >= 2
        && s.len() <= 128
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.len() <= 40
                && p.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        })
}

/// Mask every leaf string and number of `v` (the value of a secret-named key).
fn mask_json(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::String(s) if !s.is_empty() => MASK.clone_into(s),
        Value::Number(_) => *v = Value::String(MASK.to_owned()),
        Value::Array(items) => items.iter_mut().for_each(mask_json),
        Value::Object(map) => map.values_mut().for_each(mask_json),
        _ => {}
    }
}

/// Mask `segments` as ONE text: the concatenation `before_ctx + segments… + after_ctx` is
/// scanned (the live edge applies at the very end only when `live`), and each segment is
/// returned with the parts that fall inside a secret range replaced by [`MASK`] (a secret
/// spanning a boundary is masked in every segment it touches). Context strings are not
/// returned.
pub fn redact_segments(before_ctx: &str, segments: &[&str], after_ctx: &str, live: bool) -> Vec<String> {
    let total = before_ctx.len() + segments.iter().map(|s| s.len()).sum::<usize>() + after_ctx.len();
    let mut all = String::with_capacity(total);
    all.push_str(before_ctx);
    segments.iter().for_each(|s| all.push_str(s));
    all.push_str(after_ctx);
    let ranges = secret_ranges(&all, live);
    let mut out = Vec::with_capacity(segments.len());
    let mut off = before_ctx.len();
    let mut first = 0;
    for seg in segments {
        let end = off + seg.len();
        while first < ranges.len() && ranges[first].end <= off {
            first += 1;
        }
        let mut s = String::with_capacity(seg.len());
        let mut last = off;
        for r in ranges[first..].iter().take_while(|r| r.start < end) {
            let (a, z) = (r.start.max(off), r.end.min(end));
            if a < z {
                s.push_str(&all[last..a]);
                s.push_str(MASK);
                last = z;
            }
        }
        s.push_str(&all[last..end]);
        out.push(s);
        off = end;
    }
    out
}

/// The last [`CONTEXT_CHARS`] characters of `stored` (context before a window).
pub fn context_before(stored: &str) -> &str {
    match stored.char_indices().rev().nth(CONTEXT_CHARS - 1) {
        Some((i, _)) => &stored[i..],
        None => stored,
    }
}

/// The first [`CONTEXT_CHARS`] characters of `stored` (context after a window).
pub fn context_after(stored: &str) -> &str {
    match stored.char_indices().nth(CONTEXT_CHARS) {
        Some((i, _)) => &stored[..i],
        None => stored,
    }
}

/// Cut `text` to at most `max_bytes` bytes on a char boundary; the bool says whether it was cut.
pub fn cut(text: &str, max_bytes: usize) -> (&str, bool) {
    if text.len() <= max_bytes {
        return (text, false);
    }
    let mut i = max_bytes;
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    (&text[..i], true)
}

/// The first `max_bytes` bytes of `text` (cut on a char boundary), redacted as part of the
/// whole: up to [`CONTEXT_CHARS`] characters after the cut are scanned as context, and the
/// end of that context is a live edge when it falls short of the end of `text` or when
/// `growing` says the text may still grow. So a secret the cut splits is masked, never shown
/// by its start. The result can be longer than `max_bytes` by what masks add; the bool says
/// whether `text` was cut.
pub fn redact_head(text: &str, max_bytes: usize, growing: bool) -> (String, bool) {
    let (head, was_cut) = cut(text, max_bytes);
    let after = context_after(&text[head.len()..]);
    let live = growing || head.len() + after.len() < text.len();
    (redact_segments("", &[head], after, live).pop().unwrap_or_default(), was_cut)
}

/// Does the redactor change this string? (Used to drop, rather than mask, strings.)
pub fn is_secret_shaped(text: &str) -> bool {
    !secret_ranges(text, false).is_empty()
}
