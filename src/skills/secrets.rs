//! The push check's secret rule: where the log redactor would mask a value, the value must
//! name a secret rather than be one.
//!
//! The redactor ([`crate::base::redact::secret_ranges`]) decides *where* a secret-shaped value is;
//! this module decides whether that value is an acceptable placeholder, and adds checks for
//! secrets the redactor would not see as pushed.
//!
//! A value is a placeholder when it holds no secret shape of its own (the redactor finds
//! nothing in it, so `$hf_…` and `<hf_…>` are refused) and it is one of:
//! - `<…>` with a letter, no `$(`, no backtick and no random-looking word (12+ characters
//!   mixing letters and digits), e.g. `<YOUR_TOKEN>`;
//! - `$NAME`, `${NAME}` or `%NAME%` that is the whole value, NAME in one case (`$API_KEY`,
//!   `$api_key`; not `$Api_Key`);
//! - filler: `...`, `…`, `xxx`, `XXX`, `***` (3 or more), optionally after one or two short
//!   prefixes (`sk-...`, `ghp_xxxx`, `xxxx-xxxx`); text that is already the redactor's mask;
//! - an upper-case word: `YOUR_…`/`YOUR-…`, `TODO`, `FIXME`, `TBD`, `CHANGEME`, `CHANGE_ME`,
//!   `REPLACE_ME`, `PLACEHOLDER`, `REDACTED`;
//! - a one-case identifier that names a secret (`HF_TOKEN`, `api_key`, `token`), not one
//!   starting with `your` (`your_key` is refused: `YOUR_KEY` is upper case);
//! - a quoted phrase with spaces, letters only, holding a word such as `your`, `api`, `key`,
//!   `token`, `password`, `here` (`"your api key"`; `"correct horse battery staple"` is not);
//! - code that names where the secret is: `{{ name }}`, `${{ secrets.NAME }}`, `{name}`
//!   (one case), a dotted path or call (`args.api_key`, `get_token()`), or an environment read
//!   (`os.environ["X"]`, `os.getenv("X")`, `process.env.X`, `std::env::var("X")`, …);
//! - a shell redirection after a flag (`--password-stdin < file`), or an English function or
//!   setting word (`the token: it is …`, `api_key: required`).
//!
//! The checks:
//!
//! 1. **Direct.** Every range the redactor reports must be a placeholder ([`placeholder`]).
//!    Text that is already [`MASK`] counts as a placeholder (a client may push back what
//!    `agent_skill_get` returned); it is replaced by `*` of the same length before scanning so
//!    it hides nothing glued to it.
//! 2. **Split across lines.** Lines are joined where a line break (with optional trailing `\`,
//!    spaces or tabs) sits between two token characters; a token or JWT shape that appears
//!    only across such a join is refused.
//! 3. **Split by spaces inside quotes.** A `"…"`, `'…'` or single-backtick value of at most
//!    [`QUOTED_MAX`] bytes whose whitespace-separated chunks mostly look random (not
//!    lower-case words) is compacted; a token or JWT shape that appears only then is refused.
//! 4. **Blocks after secret-named keys.** `api_key:` (or `api_key: |`, `>-`, …) with the value
//!    on the following, more indented lines — which the redactor does not follow — is refused
//!    when those lines are a single-word scalar (or any of them is a base64/hex-looking blob)
//!    that is not a placeholder.
//! 5. **Encoded.** A base64 (standard or URL-safe) or hex run that decodes to printable text
//!    is scanned like the text itself.
//! 6. **Structured.** The frontmatter of `SKILL.md` and `.json`/`.yaml`/`.yml` files are
//!    parsed; every string (escapes resolved, so `\u0068f_…` is `hf_…`) is scanned, and a
//!    non-empty string under a secret-named key must be a placeholder.
//!
//! Limits: one level of encoding; no Unicode normalisation (full-width look-alikes of a token
//! prefix are not tokens to the redactor either); string concatenation (`"hf_a" + "bc"`) is
//! not followed; a prose phrase in quotes that compacts into a token shape (`"sk- keys are
//! …"`) is avoided only by the "mostly random chunks" test.

use crate::base::redact::{MASK, is_secret_name, secret_ranges};
use regex::Regex;
use std::borrow::Cow;
use std::ops::Range;
use std::sync::LazyLock;

/// Longest quoted value (bytes between the quotes) that check 3 compacts.
pub const QUOTED_MAX: usize = 512;

/// How a text is laid out, for check 6.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// `SKILL.md`: Markdown with a YAML frontmatter block.
    SkillMd,
    /// A `.json` file.
    Json,
    /// A `.yaml` or `.yml` file.
    Yaml,
    /// Anything else.
    Plain,
}

impl Format {
    /// The format of a supporting file, from its name.
    pub(crate) fn of_file(name: &str) -> Format {
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".json") {
            Format::Json
        } else if lower.ends_with(".yaml") || lower.ends_with(".yml") {
            Format::Yaml
        } else {
            Format::Plain
        }
    }
}

/// What the rule found. Never holds the value itself.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Finding {
    /// 1-based line in the scanned text, when known.
    pub line: Option<usize>,
    /// What was found, e.g. "the value of `HF_TOKEN`".
    pub what: String,
    /// Why a near-miss placeholder is not one.
    pub hint: Option<&'static str>,
}

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("skills: built-in regex")
}

static FILLER: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^(?:[A-Za-z][A-Za-z0-9]{0,11}[_-]){0,2}(?:\.{3,}|…+|\*{3,}|x{3,}|X{3,})(?:[-_](?:x{3,}|X{3,}|\*{3,}))*$")
});
static WORDS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:YOUR[_-][A-Z0-9][A-Z0-9_-]*|TODO|FIXME|TBD|CHANGEME|CHANGE_ME|CHANGE-ME|REPLACE_ME|REPLACEME|PLACEHOLDER|REDACTED)$",
    )
});
static ENV_REF: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)|%([A-Za-z_][A-Za-z0-9_]*)%)$"));
static BRACE: LazyLock<Regex> = LazyLock::new(|| re(r"^\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\}$"));
static CODE_PATH: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^(?:[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:\(\)?)?|[A-Za-z_][A-Za-z0-9_]*\(\)?)$")
});
/// Code that reads a named secret from the environment (matched where the value starts).
static ENV_READ: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"^(?:os\.environ\[["'][A-Za-z_][A-Za-z0-9_]*["']\]|(?:os\.environ\.get|os\.getenv|getenv|System\.getenv|std::env::var|env::var|Deno\.env\.get)\(\s*["'][A-Za-z_][A-Za-z0-9_]*["']\s*(?:,[^()\n]*)?\)|process\.env(?:\.[A-Za-z_][A-Za-z0-9_]*|\[["'][A-Za-z_][A-Za-z0-9_]*["']\])|ENV\[["'][A-Za-z_][A-Za-z0-9_]*["']\])"#,
    )
});
static ANGLE: LazyLock<Regex> = LazyLock::new(|| re(r"^<([^<>]+)>$"));
static IDENT: LazyLock<Regex> = LazyLock::new(|| re(r"^[A-Za-z_][A-Za-z0-9_]*$"));
static PHRASE: LazyLock<Regex> = LazyLock::new(|| re(r"^[A-Za-z][A-Za-z '_-]*[A-Za-z]$"));
static TEMPLATE: LazyLock<Regex> = LazyLock::new(|| re(r"^\$?\{\{[ \t]*[A-Za-z_][A-Za-z0-9_.-]*[ \t]*\}\}"));
static BLOCK_INDICATOR: LazyLock<Regex> = LazyLock::new(|| re(r"^[|>](?:[-+]?[1-9]?|[1-9][-+])$"));
/// A line that ends with a key and a separator (and maybe a YAML block indicator).
static KEY_LINE: LazyLock<Regex> = LazyLock::new(|| {
    re(r#"^([ \t]*)(?:[-*][ \t]+)?["']?([A-Za-z0-9_.-]+)["']?[ \t]*[:=][ \t]*(?:[|>][-+0-9]{0,2})?[ \t]*(?:#.*)?$"#)
});
static NESTED: LazyLock<Regex> =
    LazyLock::new(|| re(r#"^(?:-(?:[ \t]|$)|["']?[A-Za-z0-9_.-]+["']?[ \t]*:(?:[ \t]|$))"#));
static BLOB: LazyLock<Regex> = LazyLock::new(|| re(r"[A-Za-z0-9+/_-]{24,}={0,2}"));
static KEY_BEFORE: LazyLock<Regex> =
    LazyLock::new(|| re(r#"(--[A-Za-z0-9][A-Za-z0-9_-]*|[A-Za-z0-9_.-]+)\\?["']?[ \t]*[:=]?[ \t]*\\?["'`]?$"#));
static SCHEME_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i)(?:authorization\\?["']?[ \t]*[:=][ \t]*\\?["']?(bearer|basic|token)|(?:^|[^A-Za-z0-9_])(bearer))[ \t]+$"#,
    )
});

/// Words that make a quoted phrase with spaces a placeholder (`"your api key"`).
const PHRASE_WORDS: [&str; 14] = [
    "your",
    "my",
    "api",
    "key",
    "token",
    "secret",
    "password",
    "passphrase",
    "pass",
    "here",
    "placeholder",
    "credential",
    "credentials",
    "pat",
];

/// English function words and config words that, as a value, are plainly prose or a setting
/// and never a secret (`the token: it is stored in …`, `api_key: required`).
const NOT_SECRETS: [&str; 52] = [
    "a", "an", "the", "it", "its", "is", "are", "be", "to", "of", "in", "on", "at", "by", "for", "from", "with", "and",
    "or", "not", "no", "if", "then", "this", "that", "these", "those", "must", "should", "will", "can", "may", "you",
    "we", "they", "as", "was", "has", "have", "do", "does", "here", "there", "see", "below", "above", "required",
    "optional", "none", "null", "true", "false",
];

/// Does `w` look like random characters rather than a word? (12 or more characters mixing
/// letters and digits, or 12 or more digits.)
fn random_word(w: &str) -> bool {
    let n = w.chars().count();
    let digits = w.chars().filter(char::is_ascii_digit).count();
    let letters = w.chars().filter(char::is_ascii_alphabetic).count();
    n >= 12 && digits >= 1 && (letters >= 1 || digits == n)
}

fn any_random_word(s: &str) -> bool {
    s.split(|c: char| !c.is_ascii_alphanumeric()).any(random_word)
}

/// An environment-variable name in one case (`API_KEY` or `api_key`), with a letter, and no
/// random-looking part.
fn one_case_name(name: &str) -> bool {
    let upper = name.bytes().any(|b| b.is_ascii_uppercase());
    let lower = name.bytes().any(|b| b.is_ascii_lowercase());
    (upper || lower) && !(upper && lower) && !any_random_word(name)
}

/// Is `v` (a whole value, already free of secret shapes) a placeholder? `quoted` says whether
/// it stood between quotes (a phrase with spaces needs them).
pub(crate) fn placeholder_value(v: &str, quoted: bool) -> bool {
    if FILLER.is_match(v) || WORDS.is_match(v) || NOT_SECRETS.iter().any(|w| v.eq_ignore_ascii_case(w)) {
        return true;
    }
    if let Some(c) = ENV_REF.captures(v) {
        let name = c.get(1).or(c.get(2)).or(c.get(3)).map_or("", |m| m.as_str());
        return one_case_name(name);
    }
    if let Some(c) = BRACE.captures(v) {
        return one_case_name(&c[1]);
    }
    if CODE_PATH.is_match(v) {
        return !any_random_word(v);
    }
    if let Some(c) = ANGLE.captures(v) {
        let inner = c[1].trim();
        return !inner.is_empty()
            && !inner.contains("$(")
            && !inner.contains('`')
            && inner.bytes().any(|b| b.is_ascii_alphabetic())
            && !any_random_word(inner);
    }
    if IDENT.is_match(v) {
        // A variable or environment name that names a secret (`HF_TOKEN`, `api_key`,
        // `token`); `your_key` is not one (YOUR_KEY is upper case), nor is `passw0rd`.
        let plain = v.contains('_') || ["token", "key", "password", "passwd", "secret", "apikey"].contains(&v);
        return plain && is_secret_name(v) && one_case_name(v) && !v.to_ascii_lowercase().starts_with("your");
    }
    if quoted && v.contains(' ') && PHRASE.is_match(v) {
        return v.split([' ', '_', '-', '\'']).any(|w| PHRASE_WORDS.iter().any(|p| w.eq_ignore_ascii_case(p)));
    }
    false
}

/// Why a near-miss is not a placeholder.
fn hint(v: &str) -> Option<&'static str> {
    if v.starts_with("$(") {
        Some("a command substitution is not a placeholder")
    } else if v.starts_with('<') && (v.contains("$(") || v.contains('`')) {
        Some("a <…> placeholder holds no $(, backtick, token or random-looking text")
    } else if v.starts_with('<') && !v.ends_with('>') {
        Some("a placeholder with spaces needs quotes, as in HF_TOKEN=\"<your token>\"")
    } else if v.starts_with('$') || v.starts_with('%') {
        Some("a $ENV_VAR name is in one case, ends the value and holds no token")
    } else if v.starts_with('<') {
        Some("a <…> placeholder holds no $(, backtick, token or random-looking text")
    } else if v.to_ascii_lowercase().starts_with("your") {
        Some("YOUR_KEY-style placeholders are upper case, and a placeholder with spaces needs quotes")
    } else {
        None
    }
}

/// Is the redactor's range `r` of `t` an acceptable placeholder?
fn placeholder(t: &str, r: &Range<usize>) -> bool {
    let from = &t[r.start..];
    if [&TEMPLATE, &ENV_READ].iter().any(|x| x.find(from).is_some_and(|m| m.end() >= r.len())) {
        return true;
    }
    let v = &t[r.clone()];
    if v.bytes().all(|b| matches!(b, b'<' | b'>' | b'|' | b'&')) && t[r.end..].starts_with([' ', '\t']) {
        // A shell redirection or pipe after a flag (`--password-stdin < file`): no value.
        return true;
    }
    if !secret_ranges(v, false).is_empty() {
        return false;
    }
    let b = t.as_bytes();
    let quoted =
        r.start > 0 && r.end < b.len() && matches!(b[r.start - 1], b'"' | b'\'' | b'`') && b[r.end] == b[r.start - 1];
    placeholder_value(v, quoted)
}

/// A YAML block indicator (`|`, `>-`, …) ending its line: check 4 looks at the block.
fn block_indicator(t: &str, r: &Range<usize>) -> bool {
    if !BLOCK_INDICATOR.is_match(&t[r.clone()]) {
        return false;
    }
    let rest = &t[r.end..];
    let line = &rest[..rest.find('\n').unwrap_or(rest.len())];
    let line = line.trim();
    line.is_empty() || line.starts_with('#')
}

/// 1-based line of byte `at`.
fn line_of(t: &str, at: usize) -> usize {
    t.as_bytes()[..at.min(t.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

/// What the range `r` of `t` is, without its value.
fn describe(t: &str, r: &Range<usize>) -> String {
    let v = crate::base::redact::unescape(&t[r.clone()]);
    let v = v.as_ref();
    if let Some(token) = crate::base::redact::token_rule(v) {
        return token.noun();
    }
    if v.starts_with("eyJ") {
        return "a JWT".into();
    }
    if v.starts_with("-----BEGIN") {
        return "a private key block".into();
    }
    let line_start = t[..r.start].rfind('\n').map_or(0, |i| i + 1);
    let mut from = r.start.saturating_sub(120).max(line_start);
    while !t.is_char_boundary(from) {
        from += 1;
    }
    let before = &t[from..r.start];
    if let Some(c) = SCHEME_BEFORE.captures(before) {
        let scheme = c.get(1).or(c.get(2)).map_or("bearer", |m| m.as_str()).to_ascii_lowercase();
        let mut s = scheme[..1].to_ascii_uppercase();
        s.push_str(&scheme[1..]);
        return format!("a `{s}` credential");
    }
    if before.contains("://") && t[r.end..].starts_with('@') {
        return "a credential in a URL".into();
    }
    if let Some(c) = KEY_BEFORE.captures(before) {
        let name = &c[1];
        if name.len() <= 64 && secret_ranges(name, false).is_empty() && (is_secret_name(name) || name.starts_with("--"))
        {
            return format!("the value of `{name}`");
        }
    }
    "a secret-shaped value".into()
}

/// Check 1 on `t` (already neutral).
fn direct(t: &str) -> Option<Finding> {
    for r in secret_ranges(t, false) {
        if block_indicator(t, &r) || placeholder(t, &r) {
            continue;
        }
        let what = format!("{}, which is not a placeholder", describe(t, &r));
        return Some(Finding { line: Some(line_of(t, r.start)), what, hint: hint(&t[r]) });
    }
    None
}

/// A text derived from another by removing bytes at `cuts`.
struct Derived {
    text: String,
    /// (position in `text` where bytes were removed, bytes removed up to and including there).
    cuts: Vec<(usize, usize)>,
}

impl Derived {
    /// Position in the source of position `p` of the derived text.
    fn source(&self, p: usize) -> usize {
        let i = self.cuts.partition_point(|c| c.0 <= p);
        if i == 0 { p } else { p + self.cuts[i - 1].1 }
    }

    /// Is a cut strictly inside `r`?
    fn spans_cut(&self, r: &Range<usize>) -> bool {
        let i = self.cuts.partition_point(|c| c.0 <= r.start);
        self.cuts.get(i).is_some_and(|c| c.0 < r.end)
    }

    /// The first token or JWT shape that exists only because of a cut: the redactor is run
    /// on each run of token characters that holds a cut (no key context, so only whole-token
    /// shapes can match).
    fn split_token(&self) -> Option<Range<usize>> {
        let b = self.text.as_bytes();
        let mut done = 0;
        for &(c, _) in &self.cuts {
            if c < done || c == 0 || c >= b.len() {
                continue;
            }
            let mut s = c;
            while s > 0 && token_char(b[s - 1]) {
                s -= 1;
            }
            let mut e = c;
            while e < b.len() && token_char(b[e]) {
                e += 1;
            }
            done = e;
            if s == c || e == c {
                continue;
            }
            let run = &self.text[s..e];
            for r in secret_ranges(run, false) {
                let abs = s + r.start..s + r.end;
                if self.spans_cut(&abs) {
                    return Some(abs);
                }
            }
        }
        None
    }
}

/// Characters of tokens and JWTs (and of base64 pieces), for joins.
fn token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'+' | b'/')
}

/// Check 2.
fn joined_lines(t: &str) -> Option<Finding> {
    let b = t.as_bytes();
    let mut d = Derived { text: String::with_capacity(t.len()), cuts: Vec::new() };
    let (mut last, mut removed) = (0, 0);
    for (nl, _) in t.match_indices('\n') {
        if nl < last {
            continue;
        }
        let mut a = nl;
        while a > last && matches!(b[a - 1], b' ' | b'\t' | b'\r' | b'\\') {
            a -= 1;
        }
        let mut z = nl + 1;
        while z < b.len() && matches!(b[z], b' ' | b'\t') {
            z += 1;
        }
        if a > last && z < b.len() && token_char(b[a - 1]) && token_char(b[z]) {
            d.text.push_str(&t[last..a]);
            removed += z - a;
            d.cuts.push((d.text.len(), removed));
            last = z;
        }
    }
    if d.cuts.is_empty() {
        return None;
    }
    d.text.push_str(&t[last..]);
    let r = d.split_token()?;
    let what = format!("{} split across lines", describe(&d.text, &r));
    Some(Finding { line: Some(line_of(t, d.source(r.start))), what, hint: None })
}

/// Quoted values of `t`: `"…"`, `'…'` (an apostrophe inside a word is not a quote) and
/// single backticks (not fences), at most [`QUOTED_MAX`] bytes between the quotes.
fn quoted_values(t: &str) -> Vec<Range<usize>> {
    let b = t.as_bytes();
    let mut out = Vec::new();
    for q in [b'"', b'\'', b'`'] {
        let at: Vec<usize> = b.iter().enumerate().filter(|(_, c)| **c == q).map(|(i, _)| i).collect();
        let lone = |p: usize| (p == 0 || b[p - 1] != q) && b.get(p + 1) != Some(&q);
        let opens = |p: usize| match q {
            b'\'' => p == 0 || !b[p - 1].is_ascii_alphanumeric(),
            b'`' => lone(p),
            _ => true,
        };
        let closes = |p: usize| match q {
            b'\'' => b.get(p + 1).is_none_or(|c| !c.is_ascii_alphanumeric()),
            b'`' => lone(p),
            _ => true,
        };
        let mut k = 0;
        while k < at.len() {
            if !opens(at[k]) {
                k += 1;
                continue;
            }
            let Some(m) = (k + 1..at.len()).find(|&m| closes(at[m])) else { break };
            let (o, c) = (at[k], at[m]);
            if c - o - 1 <= QUOTED_MAX {
                out.push(o + 1..c);
                k = m + 1;
            } else {
                k = m;
            }
        }
    }
    out
}

/// Is `chunk` a lower-case word (maybe capitalised) rather than random characters?
fn wordy(chunk: &str) -> bool {
    let n = chunk.chars().count();
    n <= 15
        && chunk.chars().all(|c| c.is_ascii_alphabetic() || matches!(c, ',' | '.' | '!' | '?' | ';' | ':'))
        && !chunk.chars().skip(1).any(|c| c.is_ascii_uppercase())
}

/// Check 3.
fn quoted_spaces(t: &str) -> Option<Finding> {
    for seg in quoted_values(t) {
        let inner = &t[seg.clone()];
        if !inner.contains(|c: char| c.is_ascii_whitespace()) {
            continue;
        }
        let chunks: Vec<&str> = inner.split_ascii_whitespace().collect();
        if chunks.len() < 2 {
            continue;
        }
        let random = chunks[1..].iter().filter(|c| !wordy(c)).count();
        if random * 2 < chunks.len() - 1 {
            continue;
        }
        let mut d = Derived { text: String::with_capacity(inner.len()), cuts: Vec::new() };
        let mut removed = 0;
        let mut pending = false;
        for c in inner.chars() {
            if c.is_ascii_whitespace() {
                removed += 1;
                pending = true;
                continue;
            }
            if pending && !d.text.is_empty() {
                d.cuts.push((d.text.len(), removed));
            }
            pending = false;
            d.text.push(c);
        }
        if let Some(r) = d.split_token() {
            let what = format!("{} split by spaces inside quotes", describe(&d.text, &r));
            return Some(Finding { line: Some(line_of(t, seg.start + d.source(r.start))), what, hint: None });
        }
    }
    None
}

/// Leading spaces and tabs of `line`.
fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches([' ', '\t']).len()
}

/// Check 4.
fn blocks_after_keys(t: &str) -> Option<Finding> {
    let lines: Vec<(usize, &str)> = {
        let mut v = Vec::new();
        let mut pos = 0;
        for l in t.split('\n') {
            v.push((pos, l.strip_suffix('\r').unwrap_or(l)));
            pos += l.len() + 1;
        }
        v
    };
    for (i, &(_, line)) in lines.iter().enumerate() {
        let Some(c) = KEY_LINE.captures(line) else { continue };
        let name = &c[2];
        if !is_secret_name(name) {
            continue;
        }
        let key_indent = c[1].len();
        let mut body: Vec<(usize, &str)> = Vec::new();
        for &(start, l) in &lines[i + 1..] {
            let trimmed = l.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            if indent(l) <= key_indent {
                break;
            }
            body.push((start, trimmed));
        }
        let Some(&(first_at, first)) = body.first() else { continue };
        if NESTED.is_match(first) {
            continue;
        }
        let single_words = body.iter().all(|(_, l)| !l.contains([' ', '\t']));
        let blob = |l: &str| l.len() >= 16 && l.bytes().all(|b| token_char(b) || b == b'=');
        let joined: String = body.iter().map(|(_, l)| *l).collect();
        let bad = if single_words {
            (!secret_ranges(&joined, false).is_empty() || !placeholder_value(&joined, false)).then_some(first_at)
        } else {
            body.iter().find(|(_, l)| blob(l) && !placeholder_value(l, false)).map(|(at, _)| *at)
        };
        if let Some(at) = bad {
            let what = format!("a value on the lines after `{name}`, which is not a placeholder");
            return Some(Finding { line: Some(line_of(t, at)), what, hint: None });
        }
    }
    None
}

/// Printable text of at least 12 bytes, or `None`.
fn printable(bytes: Vec<u8>) -> Option<String> {
    let s = String::from_utf8(bytes).ok()?;
    (s.len() >= 12 && s.chars().all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'))).then_some(s)
}

/// Check 5.
fn encoded(t: &str) -> Option<Finding> {
    for m in BLOB.find_iter(t) {
        let s = m.as_str();
        let decoded = if s.len() % 2 == 0 && s.bytes().all(|b| b.is_ascii_hexdigit()) {
            hex::decode(s).ok()
        } else {
            crate::base::redact::base64(s)
        };
        let Some(text) = decoded.and_then(printable) else { continue };
        if secret_ranges(&text, false).iter().any(|r| !block_indicator(&text, r) && !placeholder(&text, r)) {
            let what = "a base64- or hex-encoded secret-shaped value".to_string();
            return Some(Finding { line: Some(line_of(t, m.start())), what, hint: None });
        }
    }
    None
}

/// A string found by check 6 under `path`, judged.
fn judge_string(s: &str, key: Option<&str>, path: &str) -> Option<Finding> {
    let s = neutral(s);
    let trimmed = s.trim();
    let start = s.len() - s.trim_start().len();
    let whole = start..start + trimmed.len();
    if key.is_some_and(is_secret_name) && !trimmed.is_empty() && !placeholder(&s, &whole) {
        let what = format!("the value under `{path}`, which is not a placeholder");
        return Some(Finding { line: None, what, hint: hint(trimmed) });
    }
    for r in secret_ranges(&s, false) {
        if !block_indicator(&s, &r) && !placeholder(&s, &r) {
            let what = format!("{} in the string under `{path}`, which is not a placeholder", describe(&s, &r));
            return Some(Finding { line: None, what, hint: hint(&s[r]) });
        }
    }
    None
}

/// A key as shown in a path: redacted when secret-shaped, cut when long.
fn path_part(key: &str) -> String {
    let k = crate::base::redact::redact(key);
    let (cut, more) = crate::base::redact::cut(&k, 48);
    if more { format!("{cut}…") } else { cut.to_owned() }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() { path_part(key) } else { format!("{path}.{}", path_part(key)) }
}

fn walk_yaml(v: &serde_yaml_ng::Value, key: Option<&str>, path: &str) -> Option<Finding> {
    use serde_yaml_ng::Value;
    match v {
        Value::String(s) => judge_string(s, key, path),
        Value::Sequence(items) => items.iter().find_map(|i| walk_yaml(i, None, path)),
        Value::Mapping(m) => m.iter().find_map(|(k, v)| {
            let k = match k {
                Value::String(s) => s.clone(),
                other => serde_yaml_ng::to_string(other).unwrap_or_default().trim().to_owned(),
            };
            if !secret_ranges(&k, false).is_empty() {
                let what = format!("a secret-shaped key under `{}`", if path.is_empty() { "(top)" } else { path });
                return Some(Finding { line: None, what, hint: None });
            }
            walk_yaml(v, Some(&k), &join(path, &k))
        }),
        Value::Tagged(t) => walk_yaml(&t.value, key, path),
        Value::Null | Value::Bool(_) | Value::Number(_) => None,
    }
}

fn walk_json(v: &serde_json::Value, key: Option<&str>, path: &str) -> Option<Finding> {
    use serde_json::Value;
    match v {
        Value::String(s) => judge_string(s, key, path),
        Value::Array(items) => items.iter().find_map(|i| walk_json(i, None, path)),
        Value::Object(m) => m.iter().find_map(|(k, v)| {
            if !secret_ranges(k, false).is_empty() {
                let what = format!("a secret-shaped key under `{}`", if path.is_empty() { "(top)" } else { path });
                return Some(Finding { line: None, what, hint: None });
            }
            walk_json(v, Some(k), &join(path, k))
        }),
        Value::Null | Value::Bool(_) | Value::Number(_) => None,
    }
}

/// Check 6.
fn structured(t: &str, format: Format) -> Option<Finding> {
    match format {
        Format::SkillMd => {
            let yaml = super::frontmatter::block(t)?;
            let v: serde_yaml_ng::Value = serde_yaml_ng::from_str(yaml).ok()?;
            walk_yaml(&v, None, "").map(|f| Finding { what: format!("{} (frontmatter)", f.what), ..f })
        }
        Format::Yaml => walk_yaml(&serde_yaml_ng::from_str(t).ok()?, None, ""),
        Format::Json => walk_json(&serde_json::from_str(t).ok()?, None, ""),
        Format::Plain => None,
    }
}

/// `text` with every [`MASK`] replaced by as many `*` (same length, so offsets hold).
fn neutral(text: &str) -> Cow<'_, str> {
    if text.contains(MASK) { Cow::Owned(text.replace(MASK, &"*".repeat(MASK.len()))) } else { Cow::Borrowed(text) }
}

/// The first secret-shaped value of `text` that is not a placeholder (checks 1–6).
pub(crate) fn scan(text: &str, format: Format) -> Option<Finding> {
    let t = neutral(text);
    let t = t.as_ref();
    direct(t)
        .or_else(|| joined_lines(t))
        .or_else(|| quoted_spaces(t))
        .or_else(|| blocks_after_keys(t))
        .or_else(|| encoded(t))
        .or_else(|| structured(t, format))
}

/// Is `name` (a file or skill name) secret-shaped?
pub(crate) fn name_is_secret(name: &str) -> bool {
    !secret_ranges(name, false).is_empty()
}

#[cfg(test)]
mod tests {
    use super::super::validate::validate_push;
    use std::collections::BTreeMap;

    /// A skill as `agent_skill_put` sends it, with `extra` in the body of its SKILL.md.
    fn skill_md(extra: &str) -> String {
        format!("---\nname: demo\ndescription: Calls the example API.\n---\n# Example\n\n{extra}\n")
    }

    /// Every secret shape the redactor masks (its whole test corpus: each token of the table,
    /// PEM keys, webhooks, encoded and escaped forms) is refused in SKILL.md and in a
    /// supporting file, and the refusal never repeats the secret.
    #[test]
    fn every_redactor_shape_is_refused() {
        for s in crate::base::redact::corpus::samples() {
            let none = BTreeMap::new();
            let in_md = validate_push("demo", &skill_md(&s.text), &none);
            let files = BTreeMap::from([("notes.md".to_string(), s.text.clone())]);
            let in_file = validate_push("demo", &skill_md("See notes.md."), &files);
            for (where_, got) in [("SKILL.md", in_md), ("notes.md", in_file)] {
                let e = got.expect_err(&format!("{} accepted in {where_}: {:?}", s.name, s.text));
                assert_eq!(e.code, "bridge.skill_invalid", "{}: {e}", s.name);
                assert!(e.message.contains(where_), "{}: {}", s.name, e.message);
                assert!(!e.message.contains(&s.secret), "{}: {}", s.name, e.message);
            }
        }
    }

    /// The findings name the new shapes by what they are.
    #[test]
    fn findings_name_the_shape() {
        let k = "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0UvWxYz12345";
        for (text, what) in [
            (format!("key hal0ak_{k}"), "a `hal0ak_…` token"),
            (format!("key ASIA{}", "QZ2XW3VU4TS5RP6NM7LK"), "an `ASIA…` access key"),
            (format!("post https://hooks.slack.com/services/T0{k}/B0{k}/{k}"), "a `hooks.slack.com…` webhook URL"),
            (
                format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{k}{k}\n-----END OPENSSH PRIVATE KEY-----"),
                "a private key block",
            ),
        ] {
            let e = validate_push("demo", &skill_md(&text), &BTreeMap::new()).unwrap_err();
            assert!(e.message.contains(what), "{what}: {}", e.message);
        }
    }
}
