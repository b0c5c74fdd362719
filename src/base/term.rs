//! What hal0 prints for people and pastes: text that came from outside (agents, upstream MCP
//! servers, catalogues, records, the store) shown with control and invisible characters
//! escaped, so it cannot move the cursor, erase a line or reorder what the operator reads
//! ([`safe`], [`safe_line`]); JSON for scripts with the same characters as `\u` escapes
//! ([`json_safe`]); and one shell quoting for every command line printed to paste
//! ([`shell_quote`]).
//!
//! The set of escaped characters is the skill card's and the inbox card's ([`hidden_char`]: format, private-use,
//! unassigned, line and paragraph separators, default-ignorable, variation selectors) plus
//! every control character (C0, DEL, C1) but line feed and tab.

use regex::Regex;
use std::borrow::Cow;
use std::fmt::Write as _;
use std::sync::LazyLock;

/// The characters the inbox card would not show: Cc (except tab, LF, CR), Cf, Co, Cn
/// (unassigned code points and noncharacters, per the Unicode 16.0 tables of the `regex`
/// crate), Zl/Zp (U+2028, U+2029), Default_Ignorable_Code_Point (zero-width characters,
/// joiners, bidi marks, tags, variation selectors, U+034F, Hangul fillers, Mongolian free
/// variation selectors, …), and the variation selectors U+FE00–U+FE0F and U+E0100–U+E01EF.
/// Surrogates cannot occur in a Rust string.
pub(crate) static HIDDEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"[[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\x{034F}\x{FE00}-\x{FE0F}\x{E0100}-\x{E01EF}]--[\t\n\r]]",
    )
    .expect("term: hidden-character regex")
});

static CLASS_CONTROL: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\p{Cc}$").expect("regex"));
static CLASS_FORMAT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\p{Cf}$").expect("regex"));
static CLASS_PRIVATE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\p{Co}$").expect("regex"));
static CLASS_UNASSIGNED: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\p{Cn}$").expect("regex"));

/// What sort of hidden character `c` is, or `None` when the card shows it (tab, LF and CR
/// are shown).
pub fn hidden_char(c: char) -> Option<&'static str> {
    let mut buf = [0u8; 4];
    let s: &str = c.encode_utf8(&mut buf);
    if !HIDDEN.is_match(s) {
        return None;
    }
    let class = if CLASS_CONTROL.is_match(s) {
        "a control character"
    } else if matches!(c, '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}' | '\u{180B}'..='\u{180D}' | '\u{180F}') {
        "a variation selector"
    } else if CLASS_FORMAT.is_match(s) {
        "a format character"
    } else if CLASS_PRIVATE.is_match(s) {
        "a private-use character"
    } else if CLASS_UNASSIGNED.is_match(s) {
        "an unassigned code point or noncharacter"
    } else if matches!(c, '\u{2028}' | '\u{2029}') {
        "a line or paragraph separator"
    } else {
        "an invisible character"
    };
    Some(class)
}

/// Is `c` printed escaped (line feed and tab are not)?
pub fn escaped(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || hidden_char(c).is_some()
}

/// Append the visible form of `c`: `\u{001B}` (at least four hex digits, upper case).
pub fn push_escape(out: &mut String, c: char) {
    let _ = write!(out, "\\u{{{:04X}}}", u32::from(c));
}

fn escape_where(s: &str, bad: impl Fn(char) -> bool) -> Cow<'_, str> {
    let Some(first) = s.find(&bad) else { return Cow::Borrowed(s) };
    let mut out = String::with_capacity(s.len() + 16);
    out.push_str(&s[..first]);
    for c in s[first..].chars() {
        if bad(c) {
            push_escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `s` as it may reach a terminal: every [`escaped`] character as `\u{…}`; line feeds and
/// tabs stay.
pub fn safe(s: &str) -> Cow<'_, str> {
    escape_where(s, escaped)
}

/// `s` for a one-line field: as [`safe`], and line feeds and tabs escaped too, so a value
/// cannot start a line of its own.
pub fn safe_line(s: &str) -> Cow<'_, str> {
    escape_where(s, |c| c == '\n' || c == '\t' || escaped(c))
}

/// Serialized JSON (serde_json's output) with every [`escaped`] character serde_json leaves
/// raw (DEL, C1 controls, format and invisible characters) written as a `\uXXXX` escape
/// (a surrogate pair above U+FFFF). Outside strings serde_json writes only ASCII
/// punctuation, digits, letters, spaces and line feeds, so the value is the same.
pub fn json_safe(json: &str) -> Cow<'_, str> {
    let Some(first) = json.find(escaped) else { return Cow::Borrowed(json) };
    let mut out = String::with_capacity(json.len() + 16);
    out.push_str(&json[..first]);
    for c in json[first..].chars() {
        if escaped(c) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{u:04x}");
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `s` as one word for a POSIX shell (sh, bash, zsh): as it is when it is non-empty and
/// only letters, digits and `_ @ % + : , . / -`; otherwise in single quotes, each `'`
/// written `'\''`.
pub fn shell_quote(s: &str) -> Cow<'_, str> {
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '@' | '%' | '+' | ':' | ',' | '.' | '/' | '-');
    if !s.is_empty() && s.chars().all(plain) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(format!("'{}'", s.replace('\'', r"'\''")))
}

/// `n` bytes for people: `1.5 MiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let (mut v, mut u) = (n as f64, 0);
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 { format!("{n} B") } else { format!("{v:.1} {}", UNITS[u]) }
}

/// Levenshtein distance (for "did you mean").
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_escapes_controls_and_invisible_characters() {
        let attack = "rm -rf ~\r\u{1b}[2K\u{1b}[1Als";
        assert_eq!(safe(attack), "rm -rf ~\\u{000D}\\u{001B}[2K\\u{001B}[1Als");
        for (c, shown) in [
            ('\u{0}', "\\u{0000}"),
            ('\u{7}', "\\u{0007}"),
            ('\u{7f}', "\\u{007F}"),
            ('\u{9b}', "\\u{009B}"),
            ('\u{200b}', "\\u{200B}"),
            ('\u{202e}', "\\u{202E}"),
            ('\u{2066}', "\\u{2066}"),
            ('\u{feff}', "\\u{FEFF}"),
            ('\u{2028}', "\\u{2028}"),
            ('\u{e000}', "\\u{E000}"),
            ('\u{e0041}', "\\u{E0041}"),
            ('\u{fe0f}', "\\u{FE0F}"),
        ] {
            assert_eq!(safe(&format!("a{c}b")), format!("a{shown}b"), "{:04X}", u32::from(c));
        }
        assert!(matches!(safe("plain text, é, 日本語, 🚀\n\tnext"), Cow::Borrowed(_)));
        assert_eq!(safe_line("a\nb\tc"), "a\\u{000A}b\\u{0009}c");
        assert_eq!(safe(""), "");
    }

    #[test]
    fn json_safe_keeps_the_value() {
        let v = serde_json::json!({
            "cmd": "ls\r\u{1b}[2K\u{7f}\u{9b}31m\u{202e}txt.exe\u{e0041}",
            "ok": "é 日本 🚀", "n": [1, 2.5, null, true],
        });
        for text in [serde_json::to_string(&v).unwrap(), serde_json::to_string_pretty(&v).unwrap()] {
            let out = json_safe(&text);
            assert!(!out.chars().any(escaped), "{out}");
            assert!(out.contains("\\u007f") && out.contains("\\u009b") && out.contains("\\u202e"), "{out}");
            assert!(out.contains("\\udb40\\udc41"), "a surrogate pair above U+FFFF: {out}");
            let back: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert_eq!(back, v);
        }
        assert!(matches!(json_safe("{\"a\":\"é\"}"), Cow::Borrowed(_)));
    }

    #[test]
    fn shell_quote_makes_one_inert_word() {
        for (s, want) in [
            ("https://hal0.example.com:8443/mcp/agents/mcp", "https://hal0.example.com:8443/mcp/agents/mcp"),
            ("hal0-agents", "hal0-agents"),
            ("Authorization: Bearer hal0bk_x", "'Authorization: Bearer hal0bk_x'"),
            ("a'b", r"'a'\''b'"),
            ("$(id)", "'$(id)'"),
            ("`id`;x&y|z>w<v", "'`id`;x&y|z>w<v'"),
            ("~root", "'~root'"),
            ("=ls", "'=ls'"),
            ("*", "'*'"),
            ("", "''"),
        ] {
            assert_eq!(shell_quote(s), want, "{s}");
        }
        // What sh reads back is the word itself.
        for s in ["a'b \"c\" $(id) `id` \\ ; & | < > * ? ~ ! # {a,b}", "plain", "it's", "\n", ""] {
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("printf %s {}", shell_quote(s)))
                .output()
                .unwrap();
            assert_eq!(String::from_utf8(out.stdout).unwrap(), s);
        }
    }
}
