//! The log redactor: the one place that decides which bytes of an outward text are secrets.
//!
//! Every text hal0 shows a remote caller (a run's `output`, `error`, `input_preview`,
//! `pending`, `events_tail`, event payloads) passes through this module first. It owns the
//! secret-detection rules, the mask token [`MASK`], the live-edge rule for text that may
//! still grow, masking of consecutive segments as one text ([`redact_segments`]), JSON
//! redaction ([`redact_json`]) and the byte-safe cut ([`cut`]).
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
//! 6. Token shapes `hal0bk_`, `hf_`, `sk-`, `gh[pousr]_`, `github_pat_`, `xox[baprs]-` followed
//!    by at least 20 of `[A-Za-z0-9_-]`, and `AKIA[0-9A-Z]{16,}`, masked whole. A token must
//!    not follow an ASCII letter or digit (`task-…` is not an `sk-` token).
//! 7. Every plausible value found by rules 1–4 (see [`plausible_secret`]) is also masked
//!    wherever else it occurs in the same text.
//! 8. Idempotent: a range that is only [`MASK`] text is never reported, and a range touching
//!    a `MASK` grows to cover all of it, so `***REDACTED***` is never re-masked or mangled.
//!    A mask stands for masked word characters: a match right after one is treated as glued
//!    to a word, a value that starts with one is that mask only, and a URL userinfo holding
//!    one is left alone, so a second pass finds nothing the first one did not.
//!
//! With `live`, a known token prefix whose characters run to the very end of the text is
//! masked through the end, and so is a bare `Bearer <v>` whose value reaches the end.
//!
//! The mask replaces exactly the secret's bytes, with no padding: `HF_TOKEN=...` becomes
//! `HF_TOKEN=***REDACTED***`, `"pw": "a b"` becomes `"pw": "***REDACTED***"`, and adjacent
//! or overlapping secrets become one mask. Rule 2 masks placeholders in place too (the value
//! is whatever follows a secret name); only rule 7 skips them.
//!
//! Callers that page through consecutive `message.text` events pass up to [`CONTEXT_CHARS`]
//! characters of the stored run on each side ([`context_before`], [`context_after`]) to
//! [`redact_segments`].

use regex::Regex;
use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::LazyLock;

/// What every secret is replaced with.
pub const MASK: &str = "***REDACTED***";

/// How much of the stored `message.text` run on each side of a window callers pass as
/// context to [`redact_segments`] (characters).
pub const CONTEXT_CHARS: usize = 8192;

/// Prefixes of token shapes whose characters are `[A-Za-z0-9_-]` (rule 6, live edge).
pub const TOKEN_PREFIXES: [&str; 15] = [
    "hal0bk_",
    "hal0pk_",
    "hf_",
    "sk-",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "xoxb-",
    "xoxa-",
    "xoxp-",
    "xoxr-",
    "xoxs-",
];

/// Characters a token needs after its prefix (rule 6).
const TOKEN_MIN: usize = 20;
/// Characters after `AKIA` (rule 6).
const AKIA_MIN: usize = 16;
/// Characters of each JWT part (rule 5).
const JWT_PART_MIN: usize = 10;
/// Characters of a userinfo token without a password (rule 3).
const URL_TOKEN_MIN: usize = 16;
/// Characters of a value masked elsewhere too (rule 7).
const CROSS_MIN: usize = 8;
/// Up to this many distinct values, rule 7 runs one substring search per value; above, one
/// pass over the text for all of them.
const CROSS_NAIVE_MAX: usize = 2;

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("redact: built-in regex")
}

/// Rule 1, header form: everything up to the value.
static AUTH: LazyLock<Regex> =
    LazyLock::new(|| re(r#"(?i)authorization(?:\\?["'])?[ \t]*[:=][ \t]*(?:\\?["'])?(?:bearer|basic|token)[ \t]+"#));
/// Rule 1, bare form: everything up to the value.
static BEARER: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)bearer[ \t]+"));
/// Rule 2: a name holding a secret keyword, an optional closing quote, then `=` or `:`.
static NAMED: LazyLock<Regex> =
    LazyLock::new(|| re(r#"(?i)[A-Za-z0-9_.-]*(?:secret|token|pass|salt|key)[A-Za-z0-9_.-]*(?:\\?["'])?[ \t]*[:=]"#));
/// Rule 3: scheme and userinfo up to the last `@` of the authority.
static URL: LazyLock<Regex> = LazyLock::new(|| re(r#"[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#"'<>]+@"#));
/// Rule 4: a long flag and its separator.
static FLAG: LazyLock<Regex> = LazyLock::new(|| re(r"--[A-Za-z0-9][A-Za-z0-9_-]*(?:=|[ \t]+)"));
/// Rule 5: where a JWT may start.
static JWT_START: LazyLock<Regex> = LazyLock::new(|| re("eyJ"));
/// Rule 6: where a token may start.
static TOKEN_START: LazyLock<Regex> = LazyLock::new(|| re(r"hal0bk_|hf_|sk-|gh[pousr]_|github_pat_|xox[baprs]-|AKIA"));
/// Rule 8: masks already in the text.
static MASK_RE: LazyLock<Regex> = LazyLock::new(|| re(&regex::escape(MASK)));

/// Words that contain `pass` without being about a password.
const BENIGN_PASS: [&str; 21] = [
    "passed",
    "passes",
    "passing",
    "passage",
    "passages",
    "passthrough",
    "passthru",
    "passive",
    "passenger",
    "passengers",
    "passport",
    "bypass",
    "bypassed",
    "bypasses",
    "compass",
    "encompass",
    "surpass",
    "trespass",
    "overpass",
    "underpass",
    "passover",
];
/// Words after `pass` that make it a count, not a password (`pass_rate`).
const BENIGN_AFTER_PASS: [&str; 4] = ["rate", "count", "ratio", "fail"];
/// Words after `token` that make it a count, not a credential (`token_count`).
const BENIGN_AFTER_TOKEN: [&str; 11] =
    ["count", "counts", "limit", "limits", "usage", "type", "budget", "len", "length", "details", "estimate"];
/// Words before `token` that make it a count (`max_token`).
const BENIGN_BEFORE_TOKEN: [&str; 4] = ["max", "min", "num", "total"];

/// Rule 2's name test: does a value stored under `name` hold a secret?
///
/// `name` is split into lower-case words at `_`, `-`, `.`, other non-alphanumerics and
/// camelCase humps (`accessToken` → `access_token`). Names ending in `_env`, `_file`, `_path`
/// or `_dir` are not secret (they name where a secret is). Otherwise a name is secret when it
/// is `key`, ends in `_key`, contains `apikey`/`accesskey`/`privatekey`/`encryptionkey`
/// (separators ignored), or has a word containing `secret`, `salt` (not `basalt`), `pass`
/// (not `passed`, `passage`, `bypass`, … nor `pass_rate`) or `token` (not `tokens`,
/// `tokenizer`, `tokenize…`, `token_count`, `token_type`, `max_token`, …).
pub fn is_secret_name(name: &str) -> bool {
    let norm = normalize_name(name);
    if norm.is_empty() || ["_env", "_file", "_path", "_dir"].iter().any(|s| norm.ends_with(s)) {
        return false;
    }
    if norm == "key" || norm.ends_with("_key") {
        return true;
    }
    let words: Vec<&str> = norm.split('_').collect();
    let compact = words.concat();
    if ["apikey", "accesskey", "privatekey", "encryptionkey"].iter().any(|k| compact.contains(k)) {
        return true;
    }
    for (i, w) in words.iter().enumerate() {
        let next = words.get(i + 1).copied().unwrap_or("");
        if w.contains("secret") || (w.contains("salt") && *w != "basalt") {
            return true;
        }
        if w.contains("pass") && !BENIGN_PASS.contains(w) && !(*w == "pass" && BENIGN_AFTER_PASS.contains(&next)) {
            return true;
        }
        let mut from = 0;
        while let Some(k) = w[from..].find("token") {
            let at = from + k;
            let rest = &w[at + 5..];
            let benign = rest.starts_with('s')
                || rest.starts_with("iz")
                || rest.starts_with("is")
                || (rest.is_empty() && BENIGN_AFTER_TOKEN.contains(&next))
                || (at == 0 && i > 0 && BENIGN_BEFORE_TOKEN.contains(&words[i - 1]));
            if !benign {
                return true;
            }
            from = at + 5;
        }
    }
    false
}

/// Lower-case `name` with one `_` between words (see [`is_secret_name`]).
fn normalize_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut hump = false;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase() && hump && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            hump = c.is_ascii_lowercase() || c.is_ascii_digit();
        } else {
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            hump = false;
        }
    }
    while out.ends_with('_') {
        out.pop();
    }
    out
}

/// Rule 7's filter: is `v` worth masking wherever else it occurs? At least 8 characters, not
/// all digits, not an ENV_VAR-shaped name, not a boolean/null word, not a placeholder.
pub fn plausible_secret(v: &str) -> bool {
    v.chars().count() >= CROSS_MIN
        && !v.bytes().all(|b| b.is_ascii_digit())
        && !is_env_name(v)
        && !["true", "false", "none", "null", "unset", "yes", "no"].iter().any(|w| v.eq_ignore_ascii_case(w))
        && !is_placeholder(v)
}

/// `HF_TOKEN`-shaped: an upper-case letter, then upper-case letters, digits and `_`.
fn is_env_name(v: &str) -> bool {
    v.as_bytes().first().is_some_and(|b| b.is_ascii_uppercase())
        && v.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// An obvious stand-in for a secret: `...`, `xxx`, `***`, `<YOUR_TOKEN>`, `$VAR`, `${VAR}`,
/// `%VAR%`, `{{var}}`, or text mentioning `your`, `todo`, `changeme`, `placeholder`, `redacted`.
fn is_placeholder(v: &str) -> bool {
    let l = v.to_ascii_lowercase();
    v.starts_with('$')
        || v.starts_with('%')
        || v.starts_with("{{")
        || (v.starts_with('<') && v.ends_with('>'))
        || v.contains("...")
        || v.contains('…')
        || v.contains("***")
        || ["xxx", "your", "todo", "changeme", "change_me", "change-me", "placeholder", "redacted"]
            .iter()
            .any(|w| l.contains(w))
}

/// Rule 1's test for a bare `Bearer <v>`: a credential rather than an English word. True when
/// `v` has 20 or more characters, any character that is not an ASCII letter, or an upper-case
/// letter after the first (`Bearer tokens` and `Bearer Authentication` stay).
pub fn token_like(v: &str) -> bool {
    v.len() >= 20 || v.bytes().any(|b| !b.is_ascii_alphabetic()) || v.bytes().skip(1).any(|b| b.is_ascii_uppercase())
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Does the match at `s` continue a word: is it preceded by a byte for which `word` holds, or
/// by a [`MASK`]? (A mask stands for masked word characters, so text right after one is
/// treated the same before and after redaction; that keeps redaction idempotent.)
fn glued(text: &str, s: usize, word: impl Fn(u8) -> bool) -> bool {
    s > 0 && (word(text.as_bytes()[s - 1]) || text[..s].ends_with(MASK))
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-'
}

/// End of the run of bytes from `start` that satisfy `ok`.
fn run_end(b: &[u8], start: usize, ok: impl Fn(u8) -> bool) -> usize {
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
fn value_at(text: &str, start: usize) -> Option<Range<usize>> {
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
fn quoted(b: &[u8], from: usize, q: u8, escaped: bool) -> Range<usize> {
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
fn bare_end(text: &str, from: usize) -> usize {
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

/// Secret ranges found so far, and which of them are keyed values (for rule 7).
struct Found {
    ranges: Vec<Range<usize>>,
    keyed: Vec<Range<usize>>,
}

impl Found {
    fn keyed(&mut self, r: Range<usize>) {
        self.ranges.push(r.clone());
        self.keyed.push(r);
    }
}

/// Rule 1.
fn scan_auth(text: &str, live: bool, f: &mut Found) {
    for m in AUTH.find_iter(text) {
        let end = bare_end(text, m.end());
        if end > m.end() {
            f.keyed(m.end()..end);
        }
    }
    for m in BEARER.find_iter(text) {
        if glued(text, m.start(), |c| c.is_ascii_alphanumeric() || c == b'_') {
            continue;
        }
        let raw_end = bare_end(text, m.end());
        let v = text[m.end()..raw_end].trim_end_matches(['.', ':', '!', '?']);
        if !v.is_empty() && (token_like(v) || (live && raw_end == text.len())) {
            let end = if live && raw_end == text.len() { raw_end } else { m.end() + v.len() };
            f.keyed(m.end()..end);
        }
    }
}

/// Rule 2.
fn scan_named(text: &str, f: &mut Found) {
    let b = text.as_bytes();
    for m in NAMED.find_iter(text) {
        let (s, e) = (m.start(), m.end());
        if glued(text, s, |_| false) {
            continue;
        }
        let name_end = run_end(&b[..e - 1], s, is_name_byte);
        let mut k = name_end;
        if b[k] == b'\\' {
            k += 1;
        }
        if matches!(b[k], b'"' | b'\'') && (s == 0 || b[s - 1] != b[k]) {
            continue;
        }
        let after = &text[e..];
        let bad_sep = if b[e - 1] == b':' {
            after.starts_with(':') || after.starts_with("//")
        } else {
            after.starts_with(['=', '>', '~'])
        };
        if bad_sep || !is_secret_name(&text[s..name_end]) {
            continue;
        }
        if let Some(r) = value_at(text, e) {
            f.keyed(r);
        }
    }
}

/// Rule 3.
fn scan_urls(text: &str, f: &mut Found) {
    for m in URL.find_iter(text) {
        let s = m.start() + m.as_str().find("://").expect("URL regex has ://") + 3;
        let e = m.end() - 1;
        let userinfo = &text[s..e];
        if userinfo.contains(MASK) {
            // Redacted already; a mask may hide what ended the authority in the first pass.
            continue;
        }
        match userinfo.find(':') {
            Some(c) if c + 1 < userinfo.len() => f.keyed(s + c + 1..e),
            Some(_) => {}
            None if userinfo.chars().count() >= URL_TOKEN_MIN => f.keyed(s..e),
            None => {}
        }
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

/// Rule 4.
fn scan_flags(text: &str, f: &mut Found) {
    let b = text.as_bytes();
    for m in FLAG.find_iter(text) {
        let s = m.start();
        if glued(text, s, |c| c.is_ascii_alphanumeric() || c == b'-') {
            continue;
        }
        let name_end = run_end(b, s + 2, is_token_byte);
        if !is_secret_flag(&text[s + 2..name_end]) || (b[name_end] != b'=' && b.get(m.end()) == Some(&b'-')) {
            continue;
        }
        if let Some(r) = value_at(text, m.end()) {
            f.keyed(r);
        }
    }
}

/// Rule 5.
fn scan_jwts(text: &str, f: &mut Found) {
    let b = text.as_bytes();
    let mut pos = 0;
    while let Some(m) = JWT_START.find_at(text, pos) {
        let s = m.start();
        pos = m.end();
        if glued(text, s, is_token_byte) {
            continue;
        }
        let mut end = run_end(b, s, is_token_byte);
        if end - s < JWT_PART_MIN {
            continue;
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
            f.ranges.push(s..end);
            pos = end;
        }
    }
}

/// Rule 6.
fn scan_tokens(text: &str, f: &mut Found) {
    let b = text.as_bytes();
    let mut pos = 0;
    while let Some(m) = TOKEN_START.find_at(text, pos) {
        let s = m.start();
        pos = m.end();
        if glued(text, s, |c| c.is_ascii_alphanumeric()) {
            continue;
        }
        let (end, min) = if m.as_str() == "AKIA" {
            (run_end(b, m.end(), |c| c.is_ascii_uppercase() || c.is_ascii_digit()), AKIA_MIN)
        } else {
            (run_end(b, m.end(), is_token_byte), TOKEN_MIN)
        };
        if end - m.end() >= min {
            f.ranges.push(s..end);
            pos = end;
        }
    }
}

/// The live-edge rule: where a known token prefix starts whose characters run to the end.
fn live_edge(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let run = (0..b.len()).rev().take_while(|&i| is_token_byte(b[i])).last()?;
    (run..b.len()).find(|&p| {
        if glued(text, p, |c| c.is_ascii_alphanumeric()) {
            return false;
        }
        let rest = &text[p..];
        TOKEN_PREFIXES.iter().any(|pre| rest.starts_with(pre))
            || rest
                .strip_prefix("AKIA")
                .is_some_and(|t| t.bytes().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()))
    })
}

/// Rule 7: mask every other occurrence of the plausible keyed values, longest first.
fn scan_cross(text: &str, f: &mut Found) {
    let mut values: Vec<&str> = f.keyed.iter().map(|r| &text[r.clone()]).collect();
    values.sort_unstable_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    values.dedup();
    values.retain(|v| plausible_secret(v));
    if values.len() <= CROSS_NAIVE_MAX {
        for v in values {
            let step = v.chars().next().map_or(1, char::len_utf8);
            let mut pos = 0;
            while let Some(i) = text[pos..].find(v) {
                f.ranges.push(pos + i..pos + i + v.len());
                pos += i + step;
            }
        }
        return;
    }
    // One pass for many values: a bit per leading byte pair, then the values sharing the
    // first 8 bytes (every value has at least 8), longest first.
    let mut pairs = vec![0u64; 1 << 10];
    let mut by_head: HashMap<[u8; 8], Vec<&[u8]>> = HashMap::new();
    for v in &values {
        let b = v.as_bytes();
        let pair = usize::from(u16::from_le_bytes([b[0], b[1]]));
        pairs[pair >> 6] |= 1 << (pair & 63);
        by_head.entry(b[..8].try_into().expect("8 bytes")).or_default().push(b);
    }
    let bytes = text.as_bytes();
    for (i, w) in bytes.windows(8).enumerate() {
        let pair = usize::from(u16::from_le_bytes([w[0], w[1]]));
        if pairs[pair >> 6] & (1 << (pair & 63)) == 0 {
            continue;
        }
        let head: [u8; 8] = w.try_into().expect("8 bytes");
        if let Some(v) = by_head.get(&head).and_then(|vs| vs.iter().find(|v| bytes[i..].starts_with(v))) {
            // A match of valid UTF-8 in valid UTF-8 starts and ends on char boundaries.
            f.ranges.push(i..i + v.len());
        }
    }
}

/// Sort and merge overlapping or touching ranges.
fn merge(mut ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
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
fn protect_masks(text: &str, ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
    let masks: Vec<Range<usize>> = MASK_RE.find_iter(text).map(|m| m.range()).collect();
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

/// Byte ranges (sorted, merged, on char boundaries) of secret values in `text`. `live` adds
/// the live-edge rule (the end of `text` may still grow).
pub fn secret_ranges(text: &str, live: bool) -> Vec<Range<usize>> {
    let mut f = Found { ranges: Vec::new(), keyed: Vec::new() };
    scan_auth(text, live, &mut f);
    scan_named(text, &mut f);
    scan_urls(text, &mut f);
    scan_flags(text, &mut f);
    scan_jwts(text, &mut f);
    scan_tokens(text, &mut f);
    if live && let Some(p) = live_edge(text) {
        f.ranges.push(p..text.len());
    }
    scan_cross(text, &mut f);
    if f.ranges.is_empty() {
        return Vec::new();
    }
    protect_masks(text, merge(f.ranges))
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
            for (k, item) in map.iter_mut() {
                if is_secret_name(k) { mask_json(item) } else { redact_json(item) }
            }
        }
        Value::Bool(_) | Value::Null | Value::Number(_) => {}
    }
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

/// Does the redactor change this string? (Used to drop, rather than mask, strings.)
pub fn is_secret_shaped(text: &str) -> bool {
    !secret_ranges(text, false).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A fake token body of `n` characters (never a real credential).
    fn body(n: usize) -> String {
        "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv".chars().cycle().take(n).collect()
    }

    fn red(s: &str) -> String {
        redact(s).into_owned()
    }

    /// (input, expected `redact` output) for every rule; unchanged rows expect the input.
    fn table() -> Vec<(String, String)> {
        let m = MASK;
        let t = body(36);
        let mut rows: Vec<(String, String)> = vec![
            // Rule 1: Authorization header and bare Bearer.
            ("Authorization: Bearer abc.def-123".into(), format!("Authorization: Bearer {m}")),
            ("authorization: basic dXNlcjpwYXNz".into(), format!("authorization: basic {m}")),
            ("Authorization: Token plainword".into(), format!("Authorization: Token {m}")),
            (r#"{"Authorization": "Bearer xyz123"}"#.into(), format!(r#"{{"Authorization": "Bearer {m}"}}"#)),
            ("curl -H 'Authorization: Bearer abcDEF' x".into(), format!("curl -H 'Authorization: Bearer {m}' x")),
            ("use Bearer abcDEF123 here".into(), format!("use Bearer {m} here")),
            ("BEARER some_token.".into(), format!("BEARER {m}.")),
            ("Bearer tokens are short-lived.".into(), "Bearer tokens are short-lived.".into()),
            ("bearer authentication, Bearer Token:".into(), "bearer authentication, Bearer Token:".into()),
            ("Bearer ${TOKEN}".into(), format!("Bearer {m}")),
            // Rule 2: NAME=value / NAME: value.
            ("HF_TOKEN=...".into(), format!("HF_TOKEN={m}")),
            ("export OPENAI_API_KEY=abc123".into(), format!("export OPENAI_API_KEY={m}")),
            ("password: hunter2".into(), format!("password: {m}")),
            (r#"PASSWORD="correct horse battery""#.into(), format!(r#"PASSWORD="{m}""#)),
            (r#"{"api_key": "k-123", "n": 1}"#.into(), format!(r#"{{"api_key": "{m}", "n": 1}}"#)),
            ("client_secret='s3 cr3t'".into(), format!("client_secret='{m}'")),
            ("X-Api-Key: abc123\r\n".into(), format!("X-Api-Key: {m}\r\n")),
            ("db.password = hunter2 # prod".into(), format!("db.password = {m} # prod")),
            ("KEY=abc".into(), format!("KEY={m}")),
            ("aws_secret_access_key = wJalrXUtn".into(), format!("aws_secret_access_key = {m}")),
            ("SALT=pepper".into(), format!("SALT={m}")),
            ("ENCRYPTION_KEY=zzz".into(), format!("ENCRYPTION_KEY={m}")),
            ("PGPASSWORD=pw psql".into(), format!("PGPASSWORD={m} psql")),
            ("accessToken: abc".into(), format!("accessToken: {m}")),
            ("password_hint: my dog".into(), format!("password_hint: {m} dog")),
            ("GET /x?api_key=abc&page=2".into(), format!("GET /x?api_key={m}&page=2")),
            ("f(token=abc)".into(), format!("f(token={m})")),
            (r#"{"token":123}"#.into(), format!(r#"{{"token":{m}}}"#)),
            ("TOKEN=${HF_TOKEN} run".into(), format!("TOKEN={m} run")),
            (r#"{\"api_key\": \"abc\"}"#.into(), format!(r#"{{\"api_key\": \"{m}\"}}"#)),
            ("TOKEN=\"abc\nnext".into(), format!("TOKEN=\"{m}\nnext")),
            ("token: `abc def`".into(), format!("token: `{m}`")),
            ("secret: a\\nb".into(), format!("secret: {m}\\nb")),
            // Rule 2: benign names, excluded suffixes and non-assignments stay.
            ("max_tokens=512".into(), "max_tokens=512".into()),
            ("TOKENIZER=foo".into(), "TOKENIZER=foo".into()),
            ("HF_TOKEN_PATH=/x".into(), "HF_TOKEN_PATH=/x".into()),
            ("token_count: 12, tokens: 5".into(), "token_count: 12, tokens: 5".into()),
            ("passed: 3, passage: text".into(), "passed: 3, passage: text".into()),
            (
                "KEY_FILE=/etc/k SECRET_DIR=/s API_KEY_ENV=X".into(),
                "KEY_FILE=/etc/k SECRET_DIR=/s API_KEY_ENV=X".into(),
            ),
            ("if token == other".into(), "if token == other".into()),
            ("let t = token::Token::new();".into(), "let t = token::Token::new();".into()),
            ("Token => 1".into(), "Token => 1".into()),
            ("keyboard: us, monkey=1".into(), "keyboard: us, monkey=1".into()),
            ("TOKEN= \nTOKEN=\"\"".into(), "TOKEN= \nTOKEN=\"\"".into()),
            (
                r#"{"usage": {"input_tokens": 5, "token_type": "x"}}"#.into(),
                r#"{"usage": {"input_tokens": 5, "token_type": "x"}}"#.into(),
            ),
            // Rule 3: URL userinfo.
            ("postgres://user:pa55word@db:5432/app".into(), format!("postgres://user:{m}@db:5432/app")),
            ("git clone https://0123456789abcdefXYZ@host/x".into(), format!("git clone https://{m}@host/x")),
            ("redis://:p@ss@cache:6379".into(), format!("redis://:{m}@cache:6379")),
            (
                "ssh://git@github.com/x https://example.com/a@b".into(),
                "ssh://git@github.com/x https://example.com/a@b".into(),
            ),
            // Rule 4: CLI flags.
            ("hal0 --api-key abc123 list".into(), format!("hal0 --api-key {m} list")),
            ("run --token=abc".into(), format!("run --token={m}")),
            ("login --password 'p w' -v".into(), format!("login --password '{m}' -v")),
            ("aws --secret-access-key ABC".into(), format!("aws --secret-access-key {m}")),
            ("ssh --private-key-pem xyz".into(), format!("ssh --private-key-pem {m}")),
            ("dl --hf-token abc".into(), format!("dl --hf-token {m}")),
            ("gen --max-tokens 512 --token --verbose".into(), "gen --max-tokens 512 --token --verbose".into()),
            // Rule 5: JWT.
            (
                "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U ok".into(),
                format!("jwt {m} ok"),
            ),
            ("eyJshort.abcdefghijkl.abcdefghijkl".into(), "eyJshort.abcdefghijkl.abcdefghijkl".into()),
            // Rule 6: token shapes (short ones and glued ones stay).
            ("hf_short sk-abc AKIA1234 ghp_x".into(), "hf_short sk-abc AKIA1234 ghp_x".into()),
            (format!("task-{t}"), format!("task-{t}")),
            ("AKIAIOSFODNN7EXAMPLE".into(), m.into()),
            // Placeholder and already-masked text stays.
            (format!("HF_TOKEN={m}"), format!("HF_TOKEN={m}")),
            (format!("Authorization: Bearer {m} x {m}{m}"), format!("Authorization: Bearer {m} x {m}{m}")),
            ("plain prose, nothing to see: é, 🎉, 日本語".into(), "plain prose, nothing to see: é, 🎉, 日本語".into()),
        ];
        for p in ["hal0bk_", "hf_", "sk-", "sk-proj-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"] {
            rows.push((format!("key {p}{t}."), format!("key {m}.")));
        }
        for p in ["xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-"] {
            rows.push((format!("({p}1234-5678-{t})"), format!("({m})")));
        }
        rows.push((format!("MY_hf_{t}"), format!("MY_{m}")));
        rows
    }

    #[test]
    fn table_rules_and_idempotence() {
        for (input, want) in table() {
            let got = red(&input);
            assert_eq!(got, want, "input: {input:?}");
            assert_eq!(red(&got), got, "not idempotent: {input:?}");
            assert_eq!(redact_live(&got), redact_live(&redact_live(&got)), "live not idempotent: {input:?}");
            assert_eq!(is_secret_shaped(&input), input != want, "is_secret_shaped: {input:?}");
            assert!(!is_secret_shaped(&got), "redacted output still secret-shaped: {got:?}");
            if input == want {
                assert!(matches!(redact(&input), Cow::Borrowed(_)), "not borrowed: {input:?}");
            }
        }
    }

    #[test]
    fn names() {
        for n in [
            "HF_TOKEN",
            "token",
            "accessToken",
            "API-KEY",
            "apiKey",
            "x-api-key",
            "AWS_SECRET_ACCESS_KEY",
            "PRIVATE_KEY_PEM",
            "password_hint",
            "PGPASSWORD",
            "db_pass",
            "key",
            "Key",
            "primary_key",
            "SALT",
            "ENCRYPTION_KEY_V2",
            "--token",
            "client.secret",
        ] {
            assert!(is_secret_name(n), "{n} should be secret");
        }
        for n in [
            "tokens",
            "tokenizer",
            "token_count",
            "tokenCount",
            "max_tokens",
            "MAX_TOKEN",
            "input_tokens",
            "passed",
            "passage",
            "bypass",
            "pass_rate",
            "HF_TOKEN_PATH",
            "KEY_FILE",
            "SECRET_DIR",
            "API_KEY_ENV",
            "keys",
            "keyboard",
            "monkey",
            "basalt",
            "name",
            "",
        ] {
            assert!(!is_secret_name(n), "{n:?} should not be secret");
        }
    }

    #[test]
    fn placeholders_are_not_cross_masked() {
        let m = MASK;
        for v in [
            "...",
            "xxxxxxxxxx",
            "<YOUR_TOKEN>",
            "$ENV_VAR_NAME",
            "${ENV_VAR}",
            "YOUR_KEY_HERE",
            "TODO_fill_me",
            "CHANGEME123",
        ] {
            let text = format!("API_TOKEN={v} and later {v}");
            assert_eq!(red(&text), format!("API_TOKEN={m} and later {v}"), "{v}");
        }
        for v in ["12345678901", "HF_TOKEN_VALUE", "true", "short"] {
            let text = format!("API_TOKEN={v} and later {v}");
            assert_eq!(red(&text), format!("API_TOKEN={m} and later {v}"), "{v}");
        }
        assert!(!plausible_secret(MASK));
        assert!(plausible_secret("s3cretPassw0rd"));
    }

    #[test]
    fn cross_occurrence() {
        let m = MASK;
        assert_eq!(
            red("PASSWORD=s3cretPassw0rd\necho s3cretPassw0rd; x=s3cretPassw0rd!"),
            format!("PASSWORD={m}\necho {m}; x={m}!")
        );
        // Longest first: the longer value is masked whole, not as the shorter one plus a tail.
        assert_eq!(
            red("A_TOKEN=abcdefgh1 B_TOKEN=abcdefgh12 text abcdefgh12 and abcdefgh1x"),
            format!("A_TOKEN={m} B_TOKEN={m} text {m} and {m}x")
        );
        // The same with enough values for the one-pass search, multi-byte ones included.
        assert_eq!(
            red("A_TOKEN=abcdefgh1 B_TOKEN=abcdefgh12 C_TOKEN=pässwört99 text abcdefgh12 abcdefgh1x pässwört99é"),
            format!("A_TOKEN={m} B_TOKEN={m} C_TOKEN={m} text {m} {m}x {m}é")
        );
        // Values from flags, URLs and Authorization headers count too.
        assert_eq!(red("--password hunter2hunter2 then hunter2hunter2"), format!("--password {m} then {m}"));
        // A value defined in context masks its occurrence in a segment.
        let out = redact_segments("DB_PASSWORD=Sup3rS3cretValue\n", &["connecting with Sup3rS3cretValue"], "", false);
        assert_eq!(out, vec![format!("connecting with {m}")]);
    }

    #[test]
    fn cross_occurrence_many_values() {
        let mut text = String::new();
        for i in 0..300 {
            text.push_str(&format!("K{i}_TOKEN=val{i:04}Secret\n"));
        }
        let filler = "lorem ipsum ".repeat(2000);
        text.push_str(&filler);
        text.push_str("val0042Secret val0299Secret val9999Secret");
        let out = red(&text);
        assert!(out.ends_with(&format!("{MASK} {MASK} val9999Secret")), "{}", &out[out.len() - 80..]);
        assert!(!out.contains("val0000Secret"));
    }

    #[test]
    fn live_edge() {
        let m = MASK;
        assert_eq!(redact_live("here is hf_abc"), format!("here is {m}"));
        assert_eq!(red("here is hf_abc"), "here is hf_abc");
        assert_eq!(redact_live("here is hf_"), format!("here is {m}"));
        assert_eq!(redact_live("key: AKIAABC"), format!("key: {m}"));
        assert_eq!(redact_live("AKIAabc"), "AKIAabc");
        for p in TOKEN_PREFIXES {
            assert_eq!(redact_live(&format!("x {p}Ab-1")), format!("x {m}"), "{p}");
        }
        // Not at the end, or glued to a word, or only part of a prefix: unchanged.
        assert_eq!(redact_live("hf_abc done"), "hf_abc done");
        assert_eq!(redact_live("hf_abc\n"), "hf_abc\n");
        assert_eq!(redact_live("task-abc"), "task-abc");
        assert_eq!(redact_live("the gh"), "the gh");
        assert_eq!(redact_live("my_hf_ab"), format!("my_{m}"));
        // A bare Bearer value reaching the end is masked even if it looks like a word.
        assert_eq!(redact_live("Bearer ab"), format!("Bearer {m}"));
        assert_eq!(red("Bearer ab"), "Bearer ab");
        assert_eq!(redact_live(""), "");
    }

    #[test]
    fn segments_split_secret() {
        let m = MASK;
        let t = body(30);
        let tok = format!("hf_{t}");
        // Two segments.
        let (a, b) = tok.split_at(10);
        let out = redact_segments("", &[&format!("say {a}"), &format!("{b} end")], "", false);
        assert_eq!(out, vec![format!("say {m}"), format!("{m} end")]);
        // Three segments, the middle one entirely inside the token.
        let (a, rest) = tok.split_at(5);
        let (b, c) = rest.split_at(10);
        let out = redact_segments("", &[&format!("x {a}"), b, &format!("{c} y")], "", false);
        assert_eq!(out, vec![format!("x {m}"), m.to_string(), format!("{m} y")]);
        // Name in one segment, value in the next.
        let out = redact_segments("", &["export HF_TO", "KEN=abc", "def rest"], "", false);
        assert_eq!(out, vec!["export HF_TO".to_string(), format!("KEN={m}"), format!("{m} rest")]);
        // Empty segments stay empty.
        let out = redact_segments("", &["a ", "", "b"], "", false);
        assert_eq!(out, vec!["a ", "", "b"]);
    }

    #[test]
    fn segments_context() {
        let m = MASK;
        let t = body(30);
        // A token starting in the before-context is masked in the segment; the context is not returned.
        let tok = format!("ghp_{t}");
        let (a, b) = tok.split_at(12);
        let out = redact_segments(&format!("ctx {a}"), &[&format!("{b} tail")], "", false);
        assert_eq!(out, vec![format!("{m} tail")]);
        // A token ending in the after-context.
        let (a, b) = tok.split_at(20);
        let out = redact_segments("", &[&format!("head {a}")], &format!("{b} more"), false);
        assert_eq!(out, vec![format!("head {m}")]);
        // Secrets only in context never appear in the output, and nothing else is changed.
        let out = redact_segments(&format!("HF_TOKEN=hf_{t} "), &["plain text"], &format!(" sk-{t}"), true);
        assert_eq!(out, vec!["plain text"]);
        // Live edge applies only at the very end of the concatenation.
        let out = redact_segments("", &["see hf_ab"], "", true);
        assert_eq!(out, vec![format!("see {m}")]);
        let out = redact_segments("", &["see hf_ab"], " after", true);
        assert_eq!(out, vec!["see hf_ab"]);
        let out = redact_segments("", &["see hf_ab"], "", false);
        assert_eq!(out, vec!["see hf_ab"]);
    }

    #[test]
    fn utf8_around_secrets() {
        let m = MASK;
        let t = body(24);
        let text = format!("é🎉日本 hf_{t}日本 café TOKEN=señor🔑 ok ＝ Bearer ü{t}");
        let ranges = secret_ranges(&text, false);
        assert_eq!(ranges.len(), 3, "{ranges:?}");
        for r in &ranges {
            assert!(text.is_char_boundary(r.start) && text.is_char_boundary(r.end));
        }
        assert_eq!(red(&text), format!("é🎉日本 {m}日本 café TOKEN={m} ok ＝ Bearer {m}"));
        // Quoted values with multi-byte content.
        assert_eq!(red("password: \"пароль 密码\" ✓"), format!("password: \"{m}\" ✓"));
        // Segments split inside the text around a secret stay on char boundaries.
        let out = redact_segments("", &["日本 TOKEN=sé", "ñor 🎉"], "", false);
        assert_eq!(out, vec![format!("日本 TOKEN={m}"), format!("{m} 🎉")]);
    }

    #[test]
    fn json_nested() {
        let t = body(30);
        let mut v = json!({
            "api_key": "x",
            "model": "m",
            "max_tokens": 512,
            "password": 123456,
            "token": {"value": "abc", "ttl": 30, "ok": true},
            "secrets": ["a", "", null],
            "messages": [{"role": "user", "content": format!("use hf_{t} please")}],
            "env": {"HF_TOKEN": "hf_x", "PATH": "/bin"},
            "nested": {"deeper": ["Authorization: Bearer abc123", {"client_secret": "s"}]},
            "usage": {"input_tokens": 5, "tokens": 9},
        });
        redact_json(&mut v);
        assert_eq!(
            v,
            json!({
                "api_key": MASK,
                "model": "m",
                "max_tokens": 512,
                "password": MASK,
                "token": {"value": MASK, "ttl": MASK, "ok": true},
                "secrets": [MASK, "", null],
                "messages": [{"role": "user", "content": format!("use {MASK} please")}],
                "env": {"HF_TOKEN": MASK, "PATH": "/bin"},
                "nested": {"deeper": [format!("Authorization: Bearer {MASK}"), {"client_secret": MASK}]},
                "usage": {"input_tokens": 5, "tokens": 9},
            })
        );
        let once = v.clone();
        redact_json(&mut v);
        assert_eq!(v, once);
    }

    #[test]
    fn cut_multibyte() {
        assert_eq!(cut("hello", 10), ("hello", false));
        assert_eq!(cut("hello", 5), ("hello", false));
        assert_eq!(cut("hello", 3), ("hel", true));
        assert_eq!(cut("é", 1), ("", true));
        assert_eq!(cut("aé", 2), ("a", true));
        assert_eq!(cut("日本語", 7), ("日本", true));
        assert_eq!(cut("🎉🎉", 5), ("🎉", true));
        assert_eq!(cut("🎉🎉", 0), ("", true));
        assert_eq!(cut("", 0), ("", false));
    }

    #[test]
    fn context_windows() {
        let long: String = "é".repeat(CONTEXT_CHARS + 10);
        assert_eq!(context_before(&long).chars().count(), CONTEXT_CHARS);
        assert_eq!(context_after(&long).chars().count(), CONTEXT_CHARS);
        assert_eq!(context_before("abc"), "abc");
        assert_eq!(context_after("abc"), "abc");
    }

    #[test]
    fn ranges_sorted_merged() {
        let t = body(24);
        let text = format!("hf_{t} sk-{t}TOKEN=x");
        let r = secret_ranges(&text, false);
        assert_eq!(r, vec![0..27, 28..text.len() - 2, text.len() - 1..text.len()]);
        // Touching ranges merge into one mask.
        let text = format!("--token=hf_{t}");
        assert_eq!(secret_ranges(&text, false), vec![8..text.len()]);
    }

    /// Deterministic mixes of fragments: redaction is idempotent and never mangles a mask.
    #[test]
    fn idempotent_on_generated_mixes() {
        let t = body(26);
        let frags = [
            "TOKEN=".to_string(),
            "api_key: ".into(),
            "\"".into(),
            "'".into(),
            " ".into(),
            "\n".into(),
            ",".into(),
            "=".into(),
            ":".into(),
            "hf_".into(),
            "sk-".into(),
            "AKIA".into(),
            t.clone(),
            "abcdefgh12".into(),
            "Bearer ".into(),
            "Authorization: Basic ".into(),
            "https://u:".into(),
            "@h/".into(),
            "--password ".into(),
            "eyJ".into(),
            ".".into(),
            MASK.into(),
            "*".into(),
            "é".into(),
            "🎉".into(),
            "{".into(),
            "}".into(),
            "\\".into(),
            "max_tokens=".into(),
            "x".into(),
            "\\\"".into(),
            "`".into(),
            "(".into(),
            ")".into(),
            "&".into(),
            "-".into(),
            "_".into(),
            "KEY".into(),
            "ghp_".into(),
            "xoxb-".into(),
            "AKIAABCDEFGHIJKLMNOP".into(),
            "PASSWORD=s3cretPassw0rd".into(),
            "s3cretPassw0rd".into(),
            "\"secret\": \"".into(),
            "postgres://".into(),
            "--token=".into(),
            "Authorization: Bearer ".into(),
            "::".into(),
            "日本".into(),
        ];
        let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
        for _ in 0..5000 {
            let mut s = String::new();
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let n = 1 + (seed >> 59) as usize;
            for _ in 0..n {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                s.push_str(&frags[(seed >> 33) as usize % frags.len()]);
            }
            let once = red(&s);
            assert_eq!(red(&once), once, "not idempotent for {s:?}");
            let live = redact_live(&s);
            assert_eq!(redact_live(&live), live, "live not idempotent for {s:?}");
            for r in secret_ranges(&s, true) {
                assert!(s.is_char_boundary(r.start) && s.is_char_boundary(r.end));
            }
            if !s.replace(MASK, "").contains('*') {
                assert!(!once.replace(MASK, "").contains('*'), "mask mangled: {s:?} -> {once:?}");
            }
        }
    }
}
