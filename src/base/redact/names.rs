//! Names and values in words: which `NAME` holds a secret (rule 2's name test, also used for
//! JSON keys and flags), which keyed value is worth masking elsewhere too (rule 7's filter),
//! and when a bare `Bearer <v>` is a credential (rule 1).

/// Characters of a value masked elsewhere too (rule 7).
pub(crate) const CROSS_MIN: usize = 8;

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
/// Words before `key` that make it an identifier, not a credential (`pattern_key` on a
/// Hermes approval, `sort_key`, `public_key`).
/// (`primary_key` stays secret: services name their API keys primary and secondary.)
const BENIGN_BEFORE_KEY: [&str; 15] = [
    "pattern",
    "sort",
    "partition",
    "foreign",
    "cache",
    "lookup",
    "group",
    "dedup",
    "routing",
    "composite",
    "unique",
    "public",
    "object",
    "shard",
    "idempotency",
];
/// Words before `token` that make it a count (`max_token`).
const BENIGN_BEFORE_TOKEN: [&str; 4] = ["max", "min", "num", "total"];

/// Rule 2's name test: does a value stored under `name` hold a secret?
///
/// `name` is split into lower-case words at `_`, `-`, `.`, other non-alphanumerics and
/// camelCase humps (`accessToken` → `access_token`). Names ending in `_env`, `_file`, `_path`
/// or `_dir` are not secret (they name where a secret is). Otherwise a name is secret when it
/// is `key`, ends in `_key` (not `pattern_key`, `sort_key`, `public_key`, …), contains `apikey`/`accesskey`/`privatekey`/`encryptionkey`
/// (separators ignored), or has a word containing `secret`, `salt` (not `basalt`), `pass`
/// (not `passed`, `passage`, `bypass`, … nor `pass_rate`) or `token` (not `tokens`,
/// `tokenizer`, `tokenize…`, `token_count`, `token_type`, `max_token`, …).
pub fn is_secret_name(name: &str) -> bool {
    let norm = normalize_name(name);
    // `…_per_key` counts something per key (`max_sessions_per_key`); it holds no key.
    if norm.is_empty() || ["_env", "_file", "_path", "_dir", "_per_key"].iter().any(|s| norm.ends_with(s)) {
        return false;
    }
    if norm == "key" {
        return true;
    }
    if let Some(before) = norm.strip_suffix("_key") {
        // `pattern_key`, `sort_key`, `public_key`: a key that identifies, not one that opens.
        let word = before.rsplit('_').next().unwrap_or(before);
        return !BENIGN_BEFORE_KEY.contains(&word);
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
