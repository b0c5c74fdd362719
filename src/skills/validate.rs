//! The check `agent_skill_put` runs before anything is queued: [`validate_push`].
//!
//! Rules run in this order and the first failure is reported (`bridge.skill_invalid`, 422):
//!
//! 1. the skill name ([`valid_name`]);
//! 2. at most [`MAX_FILES`] files, each a plain name ([`check_file_name`]);
//! 3. reviewable text: no NUL character, `SKILL.md` ≤ [`SKILL_MD_MAX`] bytes, the whole push
//!    (`SKILL.md` and every file's content) ≤ [`PUSH_MAX`] bytes;
//! 4. no character the inbox card would not show ([`hidden_char`]) in `SKILL.md`, a file name
//!    or a file;
//! 5. the frontmatter (readable YAML, the same `name`, a non-blank `description`) and no
//!    `data:` URI longer than [`DATA_URI_MAX`] characters in `SKILL.md`;
//! 6. no secret-shaped value that is not a placeholder in the skill name, `SKILL.md`, a file
//!    name or a file (see the `secrets` module: the placeholder forms and the split, encoded
//!    and structured checks).
//!
//! Text arrives as `&str`, so it is valid UTF-8 by type: the transport must refuse bytes that
//! are not (serde_json does). Unassigned code points are judged by the Unicode 16.0 tables of
//! the `regex` crate; a character assigned in a later Unicode version is refused until the
//! crate's tables catch up.
//!
//! Messages name the file (`'notes.md' …`) and never repeat a secret: names shown in a
//! message pass through the redactor and have invisible characters escaped.

use super::frontmatter::{self, Problem};
use super::secrets::{self, Finding, Format};
use crate::base::error::{Error, Kind};
use crate::base::term::hidden_char;
use regex::Regex;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// The error code of every refusal here.
pub const CODE_INVALID: &str = "bridge.skill_invalid";
/// Longest skill name (bytes; names are ASCII).
pub const NAME_MAX: usize = 64;
/// Most supporting files in one push.
pub const MAX_FILES: usize = 16;
/// Longest file name, in bytes of UTF-8.
pub const FILE_NAME_MAX: usize = 200;
/// Largest `SKILL.md`, in bytes.
pub const SKILL_MD_MAX: usize = 16 * 1024;
/// Largest push (`SKILL.md` plus every file's content), in bytes.
pub const PUSH_MAX: usize = 48 * 1024;
/// Longest `data:` URI in `SKILL.md`, in characters (the scheme counts).
pub const DATA_URI_MAX: usize = 1024;
/// How every reviewable-text refusal starts.
pub const REVIEWABLE: &str = "bridge pushes are limited to reviewable text (SKILL.md ≤ 16 KiB, total ≤ 48 KiB)";
/// The file name `SKILL.md` (sent as `skill_md`, never in `files`).
pub const SKILL_MD: &str = "SKILL.md";

fn invalid(message: impl Into<String>) -> Error {
    Error::new(CODE_INVALID, Kind::Unprocessable, message)
}

/// Is `name` a valid skill name: 1 to 64 lowercase ASCII letters, digits and hyphens, not
/// starting with a hyphen?
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= NAME_MAX
        && !name.starts_with('-')
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// `s` quoted for a message: redacted, invisible and control characters escaped as
/// `\u{…}`, cut to 64 characters.
pub(crate) fn shown(s: &str) -> String {
    let red = crate::base::redact::redact(s);
    let mut out = String::from("'");
    for (i, c) in red.chars().enumerate() {
        if i == 64 {
            out.push('…');
            break;
        }
        if c.is_control() || hidden_char(c).is_some() {
            crate::base::term::push_escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// Why `name` is not a plain file name, if it is not one.
pub fn check_file_name(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("it is empty".into());
    }
    if name.contains('\0') {
        return Some("it holds a NUL character".into());
    }
    if name.contains('/') {
        return Some("it holds '/'".into());
    }
    if name.contains('\\') {
        return Some("it holds '\\'".into());
    }
    if name.contains("..") {
        return Some("it holds '..'".into());
    }
    if name.starts_with('.') {
        return Some("it starts with '.'".into());
    }
    if name == SKILL_MD {
        return Some("SKILL.md is sent as skill_md, not as a file".into());
    }
    if name.len() > FILE_NAME_MAX {
        return Some(format!("it is {} bytes of UTF-8 (at most {FILE_NAME_MAX})", name.len()));
    }
    None
}

/// The first hidden character of `text`: (byte offset, char, class).
fn first_hidden(text: &str) -> Option<(usize, char, &'static str)> {
    let m = crate::base::term::HIDDEN.find(text)?;
    let c = text[m.start()..].chars().next()?;
    Some((m.start(), c, hidden_char(c).unwrap_or("an invisible character")))
}

/// 1-based (line, column in characters) of byte `at` of `text`.
fn position(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at];
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

fn hidden_error(file: &str, at: &str, c: char, class: &str) -> Error {
    invalid(format!("{file} holds control, format or invisible characters ({class}, U+{:04X}{at})", u32::from(c)))
}

/// Rule 4 on one text.
fn check_visible(file: &str, text: &str) -> Result<(), Error> {
    match first_hidden(text) {
        Some((at, c, class)) => {
            let (line, col) = position(text, at);
            Err(hidden_error(file, &format!(" at line {line}, column {col}"), c, class))
        }
        None => Ok(()),
    }
}

/// Rule 4 on a name: no hidden character, and (stricter than for contents) no tab or line
/// break either, since a name is one line on the card.
fn check_visible_name(what: &str, name: &str) -> Result<(), Error> {
    match name.chars().find(|&c| c.is_control() || hidden_char(c).is_some()) {
        Some(c) => {
            let class = hidden_char(c).unwrap_or("a control character");
            Err(hidden_error(&format!("{what} {}", shown(name)), " in the name", c, class))
        }
        None => Ok(()),
    }
}

static DATA_URI: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?i)data:").expect("regex"));

/// Does `c` end a URI in running text?
fn ends_uri(c: char) -> bool {
    c.is_whitespace()
        || matches!(c, '"' | '\'' | '`' | '<' | '>' | '(' | ')' | '[' | ']' | '{' | '}' | '|' | '\\' | '^')
}

/// The longest `data:` URI of `text`: (byte offset, length in characters). A URI starts at
/// `data:` (any case) not preceded by a scheme character (so `metadata:` is no URI) and runs
/// to whitespace, a quote, a bracket, `<`, `>`, `|`, `\` or `^`. A `;base64,` payload that
/// continues on the next line (a line of base64 characters only, as MIME wraps it) counts
/// on; the line breaks and indentation do not.
fn longest_data_uri(text: &str) -> Option<(usize, usize)> {
    let mut best: Option<(usize, usize)> = None;
    for m in DATA_URI.find_iter(text) {
        let s = m.start();
        if text[..s].chars().next_back().is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) {
            continue;
        }
        let mut len = 0;
        let mut pos = s;
        loop {
            let run_end = text[pos..].find(ends_uri).map_or(text.len(), |i| pos + i);
            len += text[pos..run_end].chars().count();
            let rest = &text[run_end..];
            let Some(next) = rest.strip_prefix("\r\n").or_else(|| rest.strip_prefix('\n')) else { break };
            let payload = text[s..run_end].to_ascii_lowercase().contains(";base64,");
            let next_trimmed = next.trim_start_matches([' ', '\t']);
            let line = &next_trimmed[..next_trimmed.find(['\r', '\n']).unwrap_or(next_trimmed.len())];
            let b64 = |c: char| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '-' | '_');
            if !payload || line.is_empty() || !line.chars().all(b64) {
                break;
            }
            pos = text.len() - next_trimmed.len();
        }
        if best.is_none_or(|(_, l)| len > l) {
            best = Some((s, len));
        }
    }
    best
}

/// Rule 5.
fn check_skill_md(name: &str, skill_md: &str) -> Result<(), Error> {
    let map = match frontmatter::parse(skill_md) {
        Ok(m) => m,
        Err(Problem::Missing) => {
            return Err(invalid(
                "'SKILL.md' must start with a YAML frontmatter block: a '---' line, the fields (name, description), \
                 then a closing '---' line",
            ));
        }
        Err(Problem::Yaml(e)) => return Err(invalid(format!("'SKILL.md' frontmatter is not valid YAML: {e}"))),
        Err(Problem::NotMapping) => {
            return Err(invalid("'SKILL.md' frontmatter must be a YAML mapping holding name and description"));
        }
    };
    match frontmatter::text(&map, "name") {
        None if map.contains_key("name") => {
            return Err(invalid(format!(
                "'SKILL.md' frontmatter name must be the text '{name}' (quote it, as in name: \"{name}\", if YAML \
                 reads it as a number)"
            )));
        }
        None => return Err(invalid(format!("'SKILL.md' frontmatter must hold name: {name}"))),
        Some(n) if n != name => {
            return Err(invalid(format!("'SKILL.md' frontmatter name does not match the skill name '{name}'")));
        }
        Some(_) => {}
    }
    if frontmatter::text(&map, "description").is_none_or(|d| d.trim().is_empty()) {
        return Err(invalid("'SKILL.md' frontmatter must hold a non-blank description"));
    }
    if let Some((at, len)) = longest_data_uri(skill_md)
        && len > DATA_URI_MAX
    {
        let (line, _) = position(skill_md, at);
        return Err(invalid(format!(
            "'SKILL.md' holds a data: URI of {len} characters at line {line} (at most {DATA_URI_MAX}, the scheme \
             counts); Hermes reads SKILL.md on every load, so link to the image instead"
        )));
    }
    Ok(())
}

fn secret_error(file: &str, f: Finding) -> Error {
    let at = f.line.map(|l| format!("line {l} holds ")).unwrap_or_else(|| "it holds ".into());
    let hint = f.hint.map(|h| format!(" ({h})")).unwrap_or_default();
    invalid(format!(
        "{file} holds secret-shaped text the inbox card would mask; {at}{}{hint}; use a placeholder such as \
         <YOUR_TOKEN> or $ENV_VAR",
        f.what
    ))
}

/// Rule 6.
fn check_secrets(name: &str, skill_md: &str, files: &BTreeMap<String, String>) -> Result<(), Error> {
    if secrets::name_is_secret(name) {
        return Err(invalid(
            "the skill name holds secret-shaped text the inbox card would mask; choose a name that is not token-shaped",
        ));
    }
    if let Some(f) = secrets::scan(skill_md, Format::SkillMd) {
        return Err(secret_error("'SKILL.md'", f));
    }
    for (file, content) in files {
        if secrets::name_is_secret(file) {
            return Err(invalid(format!(
                "{} holds secret-shaped text the inbox card would mask; the file name itself is secret-shaped; \
                 rename the file",
                shown(file)
            )));
        }
        if let Some(f) = secrets::scan(content, Format::of_file(file)) {
            return Err(secret_error(&shown(file), f));
        }
    }
    Ok(())
}

/// Check a proposed skill (`name`, `SKILL.md` text, supporting files by name) before
/// anything is queued. `Ok(())` or `bridge.skill_invalid` (422) with a message naming the
/// file; see the module doc for the rules and their order.
pub fn validate_push(name: &str, skill_md: &str, files: &BTreeMap<String, String>) -> Result<(), Error> {
    // 1. The name.
    if !valid_name(name) {
        return Err(invalid(format!(
            "skill name {} is not valid: use 1 to {NAME_MAX} lowercase letters, digits and hyphens, not starting \
             with a hyphen",
            shown(name)
        )));
    }
    // 2. Files: how many, and plain names.
    if files.len() > MAX_FILES {
        return Err(invalid(format!("a push holds at most {MAX_FILES} files; this one holds {}", files.len())));
    }
    for file in files.keys() {
        if let Some(why) = check_file_name(file) {
            return Err(invalid(format!("file name {} is not a plain name: {why}", shown(file))));
        }
    }
    // 3. Reviewable text.
    for (file, text) in std::iter::once((SKILL_MD, skill_md)).chain(files.iter().map(|(k, v)| (k.as_str(), v.as_str())))
    {
        if let Some(at) = text.find('\0') {
            let (line, _) = position(text, at);
            return Err(invalid(format!("{REVIEWABLE}: {} holds a NUL character at line {line}", shown(file))));
        }
    }
    if skill_md.len() > SKILL_MD_MAX {
        return Err(invalid(format!(
            "{REVIEWABLE}: 'SKILL.md' is {} bytes; a bigger skill is the operator's to put in the drop-in directory \
             by hand",
            skill_md.len()
        )));
    }
    let total = skill_md.len() + files.values().map(String::len).sum::<usize>();
    if total > PUSH_MAX {
        return Err(invalid(format!(
            "{REVIEWABLE}: the push is {total} bytes (SKILL.md and every file together); a bigger skill is the \
             operator's to put in the drop-in directory by hand"
        )));
    }
    // 4. Visible characters only.
    check_visible("'SKILL.md'", skill_md)?;
    for (file, content) in files {
        check_visible_name("file name", file)?;
        check_visible(&shown(file), content)?;
    }
    // 5. Frontmatter and data: URIs.
    check_skill_md(name, skill_md)?;
    // 6. Secrets.
    check_secrets(name, skill_md, files)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake token body of `n` characters (never a real credential).
    fn body(n: usize) -> String {
        "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv".chars().cycle().take(n).collect()
    }

    /// A valid SKILL.md for `name` with `extra` appended to the body.
    fn md(name: &str, extra: &str) -> String {
        format!("---\nname: {name}\ndescription: Calls the example API.\n---\n# Example\n\n{extra}")
    }

    fn files(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    /// `None` = accepted; `Some(fragments)` = refused with `bridge.skill_invalid` (422) and a
    /// message holding every fragment.
    type Want = Option<Vec<String>>;

    fn ok() -> Want {
        None
    }

    fn refused(fragments: &[&str]) -> Want {
        Some(fragments.iter().map(|s| s.to_string()).collect())
    }

    fn expect(label: &str, got: Result<(), Error>, want: &Want) {
        match (got, want) {
            (Ok(()), None) => {}
            (Ok(()), Some(f)) => panic!("{label}: accepted, wanted refusal with {f:?}"),
            (Err(e), None) => panic!("{label}: refused: {e}"),
            (Err(e), Some(frags)) => {
                assert_eq!(e.code, "bridge.skill_invalid", "{label}: {e}");
                assert_eq!(e.status(), 422, "{label}");
                for f in frags {
                    assert!(e.message.contains(f.as_str()), "{label}: message {:?} lacks {f:?}", e.message);
                }
            }
        }
    }

    /// Run rows of (label, SKILL.md body extra, files, want) for the skill "demo".
    fn run_rows(rows: &[(String, String, BTreeMap<String, String>, Want)]) {
        for (label, extra, f, want) in rows {
            expect(label, validate_push("demo", &md("demo", extra), f), want);
        }
    }

    #[test]
    fn rule_name() {
        let rows: Vec<(String, Want)> = vec![
            ("a".into(), ok()),
            ("demo".into(), ok()),
            ("my-skill-2".into(), ok()),
            ("0".into(), ok()),
            ("9lives".into(), ok()),
            ("a-".into(), ok()),
            ("a--b".into(), ok()),
            ("a".repeat(64), ok()),
            ("".into(), refused(&["skill name '' is not valid", "1 to 64 lowercase letters"])),
            ("a".repeat(65), refused(&["is not valid"])),
            ("-a".into(), refused(&["not starting with a hyphen"])),
            ("-".into(), refused(&["is not valid"])),
            ("Demo".into(), refused(&["'Demo' is not valid"])),
            ("my_skill".into(), refused(&["is not valid"])),
            ("my.skill".into(), refused(&["is not valid"])),
            ("my skill".into(), refused(&["is not valid"])),
            ("a/b".into(), refused(&["is not valid"])),
            ("..".into(), refused(&["is not valid"])),
            ("é".into(), refused(&["is not valid"])),
            ("a\u{200B}".into(), refused(&["'a\\u{200B}' is not valid"])),
            ("a\n".into(), refused(&["is not valid"])),
        ];
        for (name, want) in &rows {
            // Quoted, so YAML reads "0" as text.
            let skill_md = format!("---\nname: \"{name}\"\ndescription: d\n---\n");
            expect(&format!("name {name:?}"), validate_push(name, &skill_md, &BTreeMap::new()), want);
        }
    }

    #[test]
    fn rule_frontmatter() {
        let rows: Vec<(&str, String, Want)> = vec![
            ("plain", "---\nname: demo\ndescription: d\n---\nbody\n".into(), ok()),
            ("crlf", "---\r\nname: demo\r\ndescription: d\r\n---\r\nbody\r\n".into(), ok()),
            ("no body", "---\nname: demo\ndescription: d\n---".into(), ok()),
            ("trailing spaces", "--- \nname: demo\ndescription: d\n---\t\n".into(), ok()),
            ("quoted", "---\nname: \"demo\"\ndescription: 'd'\n---\n".into(), ok()),
            (
                "extra fields",
                "---\nname: demo\ndescription: d\nversion: 1.0.0\nmetadata:\n  category: x\n---\n".into(),
                ok(),
            ),
            ("multi-line description", "---\nname: demo\ndescription: >\n  two\n  lines\n---\n".into(), ok()),
            ("none", "# demo\n".into(), refused(&["'SKILL.md' must start with a YAML frontmatter block"])),
            ("empty", "".into(), refused(&["must start with a YAML frontmatter block"])),
            ("blank first line", "\n---\nname: demo\ndescription: d\n---\n".into(), refused(&["must start with"])),
            ("unclosed", "---\nname: demo\ndescription: d\n".into(), refused(&["must start with"])),
            (
                "bad yaml",
                "---\nname: [demo\ndescription: d\n---\n".into(),
                refused(&["'SKILL.md' frontmatter is not valid YAML"]),
            ),
            (
                "duplicate key",
                "---\nname: demo\nname: demo\ndescription: d\n---\n".into(),
                refused(&["not valid YAML"]),
            ),
            ("empty block", "---\n---\nbody\n".into(), refused(&["must be a YAML mapping"])),
            ("list", "---\n- name: demo\n---\n".into(), refused(&["must be a YAML mapping"])),
            ("scalar", "---\ndemo\n---\n".into(), refused(&["must be a YAML mapping"])),
            ("no name", "---\ndescription: d\n---\n".into(), refused(&["'SKILL.md' frontmatter must hold name: demo"])),
            (
                "name not text",
                "---\nname: [demo]\ndescription: d\n---\n".into(),
                refused(&["frontmatter name must be the text 'demo'"]),
            ),
            (
                "other name",
                "---\nname: other\ndescription: d\n---\n".into(),
                refused(&["does not match the skill name 'demo'"]),
            ),
            ("name case", "---\nname: Demo\ndescription: d\n---\n".into(), refused(&["does not match"])),
            (
                "no description",
                "---\nname: demo\n---\n".into(),
                refused(&["'SKILL.md' frontmatter must hold a non-blank description"]),
            ),
            (
                "blank description",
                "---\nname: demo\ndescription: \"  \"\n---\n".into(),
                refused(&["non-blank description"]),
            ),
            ("null description", "---\nname: demo\ndescription:\n---\n".into(), refused(&["non-blank description"])),
            (
                "list description",
                "---\nname: demo\ndescription: [a]\n---\n".into(),
                refused(&["non-blank description"]),
            ),
        ];
        for (label, skill_md, want) in &rows {
            expect(label, validate_push("demo", skill_md, &BTreeMap::new()), want);
        }
        // A numeric name must be quoted.
        let unquoted = "---\nname: 2024\ndescription: d\n---\n";
        expect(
            "numeric name",
            validate_push("2024", unquoted, &BTreeMap::new()),
            &refused(&["quote it, as in name: \"2024\""]),
        );
        let quoted = "---\nname: \"2024\"\ndescription: d\n---\n";
        expect("quoted numeric name", validate_push("2024", quoted, &BTreeMap::new()), &ok());
    }

    #[test]
    fn rule_data_uri() {
        // "data:image/png;base64," is 22 characters; pad the payload to the wanted total.
        let uri = |total: usize| format!("data:image/png;base64,{}", "A".repeat(total - 22));
        let wrapped =
            format!("data:image/png;base64,{}\n  {}\n  {}", "B".repeat(500), "C".repeat(400), "D".repeat(200));
        let rows: Vec<(&str, String, BTreeMap<String, String>, Want)> = vec![
            ("1024 characters", format!("![x]({})\n", uri(1024)), files(&[]), ok()),
            (
                "1025 characters",
                format!("![x]({})\n", uri(1025)),
                files(&[]),
                refused(&["'SKILL.md' holds a data: URI of 1025 characters at line 7", "at most 1024"]),
            ),
            (
                "upper case scheme",
                format!("<img src=\"DATA:{}\">", "A".repeat(1030)),
                files(&[]),
                refused(&["data: URI of 1035 characters"]),
            ),
            ("metadata: is no URI", format!("metadata:{}\n", "x".repeat(2000)), files(&[]), ok()),
            ("short", "see data:text/plain,hi and data:,\n".into(), files(&[]), ok()),
            ("wrapped base64 counts on", wrapped.clone(), files(&[]), refused(&["data: URI of 1122 characters"])),
            ("prose after does not count", format!("{}\nand then some words\n", uri(1000)), files(&[]), ok()),
            ("supporting files are not checked", String::new(), files(&[("img.md", &uri(2000))]), ok()),
        ];
        run_rows(&rows.into_iter().map(|(l, e, f, w)| (l.to_string(), e, f, w)).collect::<Vec<_>>());
    }

    #[test]
    fn rule_files() {
        let many =
            |n: usize| -> BTreeMap<String, String> { (0..n).map(|i| (format!("f{i:02}.md"), "x".into())).collect() };
        let one = |name: &str| files(&[(name, "text")]);
        let rows: Vec<(String, BTreeMap<String, String>, Want)> = vec![
            ("no files".into(), many(0), ok()),
            ("16 files".into(), many(16), ok()),
            ("17 files".into(), many(17), refused(&["a push holds at most 16 files; this one holds 17"])),
            ("plain".into(), one("notes.md"), ok()),
            ("spaces".into(), one("my notes.txt"), ok()),
            ("lower skill.md".into(), one("skill.md"), ok()),
            ("dots inside".into(), one("a.b.c"), ok()),
            ("200 bytes".into(), one(&"n".repeat(200)), ok()),
            ("200 bytes multibyte".into(), one(&"é".repeat(100)), ok()),
            ("emoji name".into(), one("🚀.md"), ok()),
            ("empty".into(), one(""), refused(&["file name '' is not a plain name: it is empty"])),
            ("slash".into(), one("a/b.md"), refused(&["file name 'a/b.md' is not a plain name: it holds '/'"])),
            ("backslash".into(), one("a\\b.md"), refused(&["is not a plain name: it holds '\\'"])),
            ("dotdot".into(), one(".."), refused(&["is not a plain name"])),
            ("dotdot inside".into(), one("a..b"), refused(&["'a..b' is not a plain name: it holds '..'"])),
            ("nul".into(), one("a\0b"), refused(&["'a\\u{0000}b' is not a plain name: it holds a NUL character"])),
            ("hidden".into(), one(".env"), refused(&["'.env' is not a plain name: it starts with '.'"])),
            (
                "SKILL.md".into(),
                one("SKILL.md"),
                refused(&["'SKILL.md' is not a plain name: SKILL.md is sent as skill_md"]),
            ),
            (
                "201 bytes".into(),
                one(&"n".repeat(201)),
                refused(&["is not a plain name: it is 201 bytes of UTF-8 (at most 200)"]),
            ),
            ("201 bytes multibyte".into(), one(&format!("{}a", "é".repeat(100))), refused(&["it is 201 bytes"])),
            (
                "tab".into(),
                one("a\tb"),
                refused(&["file name 'a\\u{0009}b' holds control, format or invisible characters"]),
            ),
            ("newline".into(), one("a\nb"), refused(&["holds control, format or invisible characters"])),
            (
                "zwsp".into(),
                one("a\u{200B}.md"),
                refused(&[
                    "file name 'a\\u{200B}.md' holds control, format or invisible characters (a format character, U+200B in the name)",
                ]),
            ),
            ("rlo".into(), one("txt.\u{202E}dm"), refused(&["U+202E in the name"])),
        ];
        run_rows(&rows.into_iter().map(|(l, f, w)| (l, String::new(), f, w)).collect::<Vec<_>>());
    }

    #[test]
    fn rule_reviewable_sizes() {
        let base = md("demo", "");
        let pad = |target: usize| format!("{base}{}", "x".repeat(target - base.len()));
        let at_md = pad(SKILL_MD_MAX);
        let over_md = pad(SKILL_MD_MAX + 1);
        assert_eq!(at_md.len(), 16384);
        let fill = |n: usize| "y".repeat(n);
        let rest = PUSH_MAX - base.len();
        let rows: Vec<(&str, String, BTreeMap<String, String>, Want)> = vec![
            ("SKILL.md 16384 bytes", at_md.clone(), files(&[]), ok()),
            ("SKILL.md 16385 bytes", over_md, files(&[]), refused(&[REVIEWABLE, "'SKILL.md' is 16385 bytes"])),
            ("total 49152 bytes", base.clone(), files(&[("a.md", &fill(rest - 100)), ("b.md", &fill(100))]), ok()),
            (
                "total 49153 bytes",
                base.clone(),
                files(&[("a.md", &fill(rest - 100)), ("b.md", &fill(101))]),
                refused(&[REVIEWABLE, "the push is 49153 bytes"]),
            ),
            (
                "total over, SKILL.md at limit",
                at_md,
                files(&[("a.md", &fill(PUSH_MAX - SKILL_MD_MAX + 1))]),
                refused(&["the push is 49153 bytes"]),
            ),
            (
                "one big file",
                base.clone(),
                files(&[("a.md", &fill(PUSH_MAX))]),
                refused(&["bridge pushes are limited to reviewable text (SKILL.md ≤ 16 KiB, total ≤ 48 KiB)"]),
            ),
            (
                "NUL in SKILL.md",
                format!("{base}a\0b"),
                files(&[]),
                refused(&[REVIEWABLE, "'SKILL.md' holds a NUL character at line 7"]),
            ),
            (
                "NUL in a file",
                base.clone(),
                files(&[("notes.md", "line\nx\0")]),
                refused(&[REVIEWABLE, "'notes.md' holds a NUL character at line 2"]),
            ),
            (
                "multibyte counts bytes",
                format!("{base}{}", "é".repeat((SKILL_MD_MAX - base.len()) / 2 + 1)),
                files(&[]),
                refused(&["'SKILL.md' is 1638"]),
            ),
        ];
        for (label, skill_md, f, want) in &rows {
            expect(label, validate_push("demo", skill_md, f), want);
        }
        // Every refusal of this rule starts with the spec's sentence.
        let e = validate_push("demo", &pad(SKILL_MD_MAX + 1), &BTreeMap::new()).unwrap_err();
        assert!(e.message.starts_with(REVIEWABLE), "{}", e.message);
    }

    /// Every class of invisible character, one row each, in SKILL.md, in a file and in a
    /// file name.
    #[test]
    fn rule_invisible_characters() {
        let mut refused_chars: Vec<(String, char)> = Vec::new();
        for c in (0x01u8..0x20).filter(|b| ![9, 10, 13].contains(b)) {
            refused_chars.push((format!("C0 U+{c:04X}"), char::from(c)));
        }
        for (label, c) in [
            ("DEL", '\u{7F}'),
            ("C1 PAD", '\u{80}'),
            ("C1 NEL", '\u{85}'),
            ("C1 APC", '\u{9F}'),
            ("ZWSP", '\u{200B}'),
            ("ZWNJ", '\u{200C}'),
            ("ZWJ", '\u{200D}'),
            ("LRM", '\u{200E}'),
            ("RLM", '\u{200F}'),
            ("ALM", '\u{061C}'),
            ("LRE", '\u{202A}'),
            ("RLO", '\u{202E}'),
            ("LRI", '\u{2066}'),
            ("PDI", '\u{2069}'),
            ("word joiner", '\u{2060}'),
            ("invisible times", '\u{2062}'),
            ("invisible plus", '\u{2064}'),
            ("tag letter A", '\u{E0041}'),
            ("language tag", '\u{E0001}'),
            ("cancel tag", '\u{E007F}'),
            ("soft hyphen", '\u{AD}'),
            ("BOM", '\u{FEFF}'),
            ("Arabic number sign (Cf)", '\u{0600}'),
            ("interlinear annotation (Cf)", '\u{FFF9}'),
            ("private use BMP start", '\u{E000}'),
            ("private use BMP end", '\u{F8FF}'),
            ("private use plane 15", '\u{F0000}'),
            ("private use plane 16", '\u{10FFFD}'),
            ("noncharacter FDD0", '\u{FDD0}'),
            ("noncharacter FFFE", '\u{FFFE}'),
            ("noncharacter 1FFFF", '\u{1FFFF}'),
            ("noncharacter 10FFFF", '\u{10FFFF}'),
            ("unassigned U+0378", '\u{0378}'),
            ("unassigned U+2065", '\u{2065}'),
            ("unassigned plane 3 end", '\u{3FFFD}'),
            ("unassigned plane 14", '\u{E0200}'),
            ("line separator", '\u{2028}'),
            ("paragraph separator", '\u{2029}'),
            ("VS1", '\u{FE00}'),
            ("VS16", '\u{FE0F}'),
            ("VS17", '\u{E0100}'),
            ("VS256", '\u{E01EF}'),
            ("CGJ", '\u{034F}'),
            ("Hangul filler", '\u{3164}'),
            ("Mongolian FVS1", '\u{180B}'),
            ("Khmer inherent vowel", '\u{17B4}'),
        ] {
            refused_chars.push((label.into(), c));
        }
        for (label, c) in &refused_chars {
            let code = format!("U+{:04X}", u32::from(*c));
            let in_md = validate_push("demo", &md("demo", &format!("a{c}b\n")), &BTreeMap::new());
            expect(
                &format!("{label} in SKILL.md"),
                in_md,
                &refused(&["'SKILL.md' holds control, format or invisible characters", &code, "line 7, column 2"]),
            );
            let in_file = validate_push("demo", &md("demo", ""), &files(&[("notes.md", &format!("x\n{c}"))]));
            expect(
                &format!("{label} in a file"),
                in_file,
                &refused(&["'notes.md' holds control, format or invisible characters", &code, "line 2, column 1"]),
            );
            let in_name = validate_push("demo", &md("demo", ""), &files(&[(&format!("n{c}.md"), "x")]));
            expect(
                &format!("{label} in a file name"),
                in_name,
                &refused(&["holds control, format or invisible characters", &code]),
            );
        }
        // The class is named.
        let classes = [
            ('\u{1}', "a control character"),
            ('\u{200B}', "a format character"),
            ('\u{E000}', "a private-use character"),
            ('\u{FDD0}', "an unassigned code point or noncharacter"),
            ('\u{2028}', "a line or paragraph separator"),
            ('\u{FE0F}', "a variation selector"),
            ('\u{E0100}', "a variation selector"),
            ('\u{034F}', "an invisible character"),
            ('\u{3164}', "an invisible character"),
        ];
        for (c, class) in classes {
            assert_eq!(hidden_char(c), Some(class), "U+{:04X}", u32::from(c));
        }
    }

    #[test]
    fn rule_visible_characters_pass() {
        let rows: Vec<(&str, &str, Want)> = vec![
            ("tab", "a\tb", ok()),
            ("CRLF", "a\r\nb", ok()),
            ("lone CR", "a\rb", ok()),
            ("grinning face", "😀", ok()),
            ("rocket", "🚀", ok()),
            ("check mark without VS", "✅", ok()),
            ("skin tone modifier", "👍🏽", ok()),
            ("flag (regional indicators)", "🇫🇷", ok()),
            ("Unicode 16 emoji", "\u{1FAE9}", ok()),
            ("accents and CJK", "é ü 日本語 한국어", ok()),
            ("NBSP and ideographic space", "a\u{A0}b\u{3000}c", ok()),
            ("combining accent", "e\u{301}", ok()),
            ("red heart with VS16", "❤️", refused(&["U+FE0F"])),
            ("keycap", "1️⃣", refused(&["U+FE0F"])),
            ("family (ZWJ sequence)", "👨‍👩‍👧", refused(&["U+200D"])),
            ("tag sequence flag", "🏴\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}", refused(&["U+E0067"])),
        ];
        for (label, text, want) in &rows {
            expect(&format!("{label} in SKILL.md"), validate_push("demo", &md("demo", text), &BTreeMap::new()), want);
            let f = files(&[("notes.md", text)]);
            let want_file = want.as_ref().map(|w| {
                let mut w = w.clone();
                w.push("'notes.md'".into());
                w
            });
            expect(&format!("{label} in a file"), validate_push("demo", &md("demo", ""), &f), &want_file);
        }
    }

    /// (label, text, accepted?) rows for the secret rule; each is run in SKILL.md and in a
    /// supporting file.
    fn secret_rows() -> Vec<(String, String, bool)> {
        let t = body(36);
        let hf = format!("hf_{}", body(24));
        let b64 = |s: &str| {
            const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
            let mut out = String::new();
            for chunk in s.as_bytes().chunks(3) {
                let n = chunk.iter().fold(0u32, |acc, &b| (acc << 8) | u32::from(b)) << (8 * (3 - chunk.len()));
                for i in 0..=chunk.len() {
                    out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
                }
            }
            out
        };
        let rows: Vec<(&str, String, bool)> = vec![
            // Placeholders the spec names.
            ("angle placeholder", "HF_TOKEN=<YOUR_TOKEN>".into(), true),
            (
                "Authorization header with angle placeholder",
                "curl -H 'Authorization: Bearer <YOUR_TOKEN>' https://api.example".into(),
                true,
            ),
            ("$ENV_VAR", "curl -H \"Authorization: Bearer $HF_TOKEN\" https://api.example".into(), true),
            ("${ENV_VAR}", "export HF_TOKEN=${HF_TOKEN}".into(), true),
            ("$env_var lower case", "api_key: $api_key".into(), true),
            ("YOUR_KEY", "api_key: YOUR_KEY".into(), true),
            ("YOUR_API_KEY_HERE", "OPENAI_API_KEY=YOUR_API_KEY_HERE".into(), true),
            ("...", "HF_TOKEN=...".into(), true),
            ("xxx", "api_key: xxx".into(), true),
            ("***", "password: ***".into(), true),
            ("TODO", "token: TODO".into(), true),
            ("CHANGEME", "secret: CHANGEME".into(), true),
            ("quoted phrase", "api_key: \"your api key\"".into(), true),
            ("quoted phrase, single quotes", "HF_TOKEN='paste your token here'".into(), true),
            // The like.
            ("prefix and filler", "OPENAI_API_KEY=sk-...".into(), true),
            ("prefix and x", "GITHUB_TOKEN=ghp_xxxxxxxx".into(), true),
            ("%VAR%", "set API_KEY=%API_KEY%".into(), true),
            ("GitHub Actions expression", "HF_TOKEN: ${{ secrets.HF_TOKEN }}".into(), true),
            ("template", "Authorization: Bearer {{token}}".into(), true),
            ("f-string variable", "headers = {\"Authorization\": f\"Bearer {token}\"}".into(), true),
            ("env read in Python", "token = os.environ[\"HF_TOKEN\"]".into(), true),
            ("env read with default", "api_key = os.environ.get(\"OPENAI_API_KEY\", \"\")".into(), true),
            ("env read in JS", "const apiKey = process.env.OPENAI_API_KEY;".into(), true),
            ("attribute path", "api_key = args.api_key".into(), true),
            ("env name that names a secret", "api_key: OPENAI_API_KEY".into(), true),
            ("mask text pushed back", format!("HF_TOKEN={}", crate::base::redact::MASK), true),
            ("prose about bearer tokens", "Send Bearer tokens in the header.".into(), true),
            ("benign names", "max_tokens: 512\ntoken_count: 3\npassed: yes".into(), true),
            ("quoted prose with token prefix", "\"hf_ tokens are issued per user and per organisation\"".into(), true),
            ("value on next lines is a mapping", "api_key:\n  env: HF_TOKEN\n  required: true".into(), true),
            ("block with placeholder", "api_key: |\n  <YOUR_TOKEN>".into(), true),
            ("prose after a key line", "Token:\n  Use the one from the settings page.".into(), true),
            ("base64 of harmless text", b64("just some harmless text here"), true),
            ("redirect after a secret flag", "docker login -u me --password-stdin < ~/.docker-pass".into(), true),
            ("variable named like a secret", "client = Client(token=token)".into(), true),
            ("lower-case name with underscore", "password = db_password".into(), true),
            ("prose word after a key", "Paste it when asked for the token: it is stored locally.".into(), true),
            ("setting word after a key", "api_key: required".into(), true),
            ("URL with $ENV_VAR password", "psql \"postgresql://app:$DB_PASSWORD@localhost/app\"".into(), true),
            // Refused.
            ("bare bearer token", "Authorization: Bearer abc123def456ghi789jkl".into(), false),
            ("bearer without header", "use Bearer abc123def456ghi789jkl".into(), false),
            ("ghp_ token", format!("git clone https://github.com/x/y # ghp_{t}"), false),
            ("hf_ token as value", format!("HF_TOKEN={hf}"), false),
            ("$ placeholder holding a token", format!("HF_TOKEN=${}", "hf_abcdefghijklmnopqrstuvwxyz"), false),
            ("angle placeholder holding a token", format!("HF_TOKEN=<{hf}>"), false),
            ("angle placeholder with $(", "HF_TOKEN=<$(cat ~/.token)>".into(), false),
            ("angle placeholder with backtick", "HF_TOKEN=<`cat ~/.token`>".into(), false),
            ("angle placeholder with random text", "HF_TOKEN=<a8f5f167f44f4964e6c998de>".into(), false),
            ("mixed-case $ name", "api_key: $Api_Key".into(), false),
            ("mixed-case ${} name", "const h = `Bearer ${apiKey}`;".into(), false),
            ("unquoted angle placeholder with spaces", "export AWS_SECRET_ACCESS_KEY=<your secret key>".into(), false),
            ("$ name not ending the value", "api_key: $API_KEY/extra".into(), false),
            ("command substitution", "HF_TOKEN=$(cat ~/.token)".into(), false),
            ("lower-case your_key", "api_key: your_key".into(), false),
            ("password that contains a secret word", "PASSWORD=passw0rd".into(), false),
            ("secret-word password", "PASSWORD=supersecret".into(), false),
            ("unquoted phrase", "api_key: your api key".into(), false),
            ("quoted passphrase", "password: \"correct horse battery staple\"".into(), false),
            ("real value after filler", "PASSWORD=hunter2...".into(), false),
            ("plain password", "DB_PASSWORD=s3cretPassw0rd".into(), false),
            ("URL password", "postgres://app:s3cretPassw0rd@db/app".into(), false),
            ("JWT", format!("jwt eyJ{}.eyJ{}.{}", body(12), body(14), body(20)), false),
            ("AWS key", "AKIAABCDEFGHIJKLMNOP".into(), false),
            (
                "token split across a line break in a quoted value",
                format!("note: \"hf_{}\n  {}\"", body(10), &body(30)[10..]),
                false,
            ),
            ("token split across lines with backslash", format!("hf_{} \\\n    {}", body(12), &body(30)[12..]), false),
            ("token split by spaces in quotes", "id: \"hf_Ab1C d2Ef 3Gh4 Ij5K l6Mn 7Op8\"".into(), false),
            ("keyed value split across a line break", format!("token: \"{}\n  {}\"", body(8), body(8)), false),
            ("base64 blob on the line after a key", format!("api_key:\n  {}", b64(&hf)), false),
            (
                "PEM block after a key",
                format!("private_key: |\n  -----BEGIN PRIVATE KEY-----\n  {}\n  -----END PRIVATE KEY-----", body(64)),
                false,
            ),
            ("single word on the line after a key", "password:\n  hunter2".into(), false),
            ("base64-encoded token anywhere", format!("blob {}", b64(&format!("token={hf}"))), false),
            ("hex-encoded token", format!("blob {}", hex::encode(format!("HF_TOKEN={hf}"))), false),
            ("base64 in a data URI", format!("data:text/plain;base64,{}", b64(&hf)), false),
            ("token glued after mask text", format!("{}{hf}", crate::base::redact::MASK), false),
        ];
        rows.into_iter().map(|(l, s, a)| (l.to_string(), s, a)).collect()
    }

    #[test]
    fn rule_secrets() {
        for (label, text, accepted) in secret_rows() {
            let in_md = validate_push("demo", &md("demo", &format!("{text}\n")), &BTreeMap::new());
            let want = if accepted {
                ok()
            } else {
                refused(&[
                    "'SKILL.md' holds secret-shaped text the inbox card would mask; ",
                    "; use a placeholder such as <YOUR_TOKEN> or $ENV_VAR",
                ])
            };
            expect(&format!("{label} in SKILL.md"), in_md, &want);
            let in_file = validate_push("demo", &md("demo", ""), &files(&[("notes.md", &text)]));
            let want = if accepted {
                ok()
            } else {
                refused(&[
                    "'notes.md' holds secret-shaped text the inbox card would mask; ",
                    "use a placeholder such as",
                ])
            };
            expect(&format!("{label} in a file"), in_file, &want);
        }
    }

    /// A refusal never repeats the value it found.
    #[test]
    fn secret_messages_never_hold_the_value() {
        for (label, text, accepted) in secret_rows() {
            if accepted {
                continue;
            }
            let e = validate_push("demo", &md("demo", &format!("{text}\n")), &BTreeMap::new()).unwrap_err();
            for word in text.split(|c: char| c.is_whitespace() || "\"'=:<>()".contains(c)) {
                // Words of 12 or more characters, except key names (`AWS_SECRET_ACCESS_KEY`).
                if word.len() >= 12 && !word.bytes().all(|b| b.is_ascii_uppercase() || b == b'_') {
                    assert!(!e.message.contains(word), "{label}: {:?} repeats {word:?}", e.message);
                }
            }
        }
    }

    #[test]
    fn secret_messages_say_what_and_where() {
        let hf = format!("hf_{}", body(24));
        let rows: Vec<(String, &str)> = vec![
            (format!("x\nHF_TOKEN={hf}\n"), "line 8 holds a `hf_…` token, which is not a placeholder"),
            (
                "DB_PASSWORD=s3cretPassw0rd\n".into(),
                "line 7 holds the value of `DB_PASSWORD`, which is not a placeholder",
            ),
            ("curl -H 'Authorization: Bearer abc123def456ghi789jkl'\n".into(), "a `Bearer` credential"),
            ("postgres://app:s3cretPassw0rd@db/app\n".into(), "a credential in a URL"),
            ("api_key: $Api_Key\n".into(), "(a $ENV_VAR name is in one case, ends the value and holds no token)"),
            (
                "HF_TOKEN=<$(cat ~/.token)>\n".into(),
                "(a <…> placeholder holds no $(, backtick, token or random-looking text)",
            ),
            ("api_key: your_key\n".into(), "(YOUR_KEY-style placeholders are upper case"),
            ("HF_TOKEN=$(cat ~/.token)\n".into(), "(a command substitution is not a placeholder)"),
            ("API_KEY=<your secret key>\n".into(), "(a placeholder with spaces needs quotes"),
            ("AKIAABCDEFGHIJKLMNOP\n".into(), "an `AKIA…` access key"),
            (
                format!("note: \"hf_{}\n  {}\"\n", body(10), &body(30)[10..]),
                "line 7 holds a `hf_…` token split across lines",
            ),
            ("id: \"hf_Ab1C d2Ef 3Gh4 Ij5K l6Mn 7Op8\"\n".into(), "a `hf_…` token split by spaces inside quotes"),
            ("password:\n  hunter2\n".into(), "line 8 holds a value on the lines after `password`"),
        ];
        for (extra, fragment) in rows {
            let e = validate_push("demo", &md("demo", &extra), &BTreeMap::new()).unwrap_err();
            assert!(e.message.contains(fragment), "{extra:?}: {:?} lacks {fragment:?}", e.message);
        }
    }

    #[test]
    fn secrets_in_names_and_structured_text() {
        let hf = format!("hf_{}", body(24));
        let escaped: String = hf.chars().map(|c| format!("\\u{:04x}", u32::from(c))).collect();
        let sk_name = format!("sk-{}", "a1b2c3d4e5f6g7h8i9j0k1l2");
        let rows: Vec<(String, String, BTreeMap<String, String>, Want)> = vec![
            (
                "token in a file name".into(),
                String::new(),
                files(&[(&format!("{hf}.md"), "x")]),
                refused(&[
                    "'***REDACTED***.md' holds secret-shaped text the inbox card would mask; the file name itself is secret-shaped",
                ]),
            ),
            (
                "JSON escapes".into(),
                String::new(),
                files(&[("config.json", &format!("{{\"note\": \"{escaped}\"}}"))]),
                refused(&["'config.json' holds secret-shaped text", "line 1 holds a `hf_…` token"]),
            ),
            (
                "JSON secret key".into(),
                String::new(),
                files(&[("config.json", "{\"auth\": {\"api_key\": \"s3cretPassw0rd\"}}")]),
                refused(&["'config.json' holds", "the value of `api_key`"]),
            ),
            (
                "JSON placeholder".into(),
                String::new(),
                files(&[("config.json", "{\"auth\": {\"api_key\": \"<YOUR_KEY>\", \"max_tokens\": 5}}")]),
                ok(),
            ),
            (
                "YAML escapes".into(),
                String::new(),
                files(&[("config.yaml", &format!("note: \"{escaped}\"\n"))]),
                refused(&["'config.yaml' holds secret-shaped text", "line 1 holds a `hf_…` token"]),
            ),
            (
                "YAML block secret".into(),
                String::new(),
                files(&[("config.yml", "auth:\n  password: >-\n    correct horse\n")]),
                refused(&["'config.yml' holds secret-shaped text"]),
            ),
            (
                "YAML placeholder".into(),
                String::new(),
                files(&[("config.yml", "auth:\n  password: ${DB_PASSWORD}\n")]),
                ok(),
            ),
            ("frontmatter escapes".into(), String::new(), files(&[]), ok()),
        ];
        run_rows(&rows);
        // Escapes in the frontmatter.
        let skill_md = format!("---\nname: demo\ndescription: \"{escaped}\"\n---\n");
        expect(
            "frontmatter escapes",
            validate_push("demo", &skill_md, &BTreeMap::new()),
            &refused(&["'SKILL.md' holds secret-shaped text", "line 3 holds a `hf_…` token"]),
        );
        // A token-shaped skill name passes the name rule but not the secret rule.
        expect(
            "token-shaped skill name",
            validate_push(&sk_name, &md(&sk_name, ""), &BTreeMap::new()),
            &refused(&["the skill name holds secret-shaped text"]),
        );
    }

    /// Not a check: prints how long a 48 KiB push takes to validate.
    /// `cargo test --release --lib skills::validate::tests::validate_timing -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn validate_timing() {
        let para = "Use the `example` CLI to list items: run `example list --json` and read the `items` array. \
                    Authorization: Bearer $EXAMPLE_TOKEN is sent by the CLI. Emoji are fine 🚀 ✅.\n";
        let mut skill_md = md("demo", "");
        while skill_md.len() + para.len() <= SKILL_MD_MAX {
            skill_md.push_str(para);
        }
        let mut f = BTreeMap::new();
        let per_file = (PUSH_MAX - skill_md.len()) / 4;
        for i in 0..4 {
            let mut s = String::new();
            while s.len() + para.len() <= per_file {
                s.push_str(para);
            }
            f.insert(format!("notes-{i}.md"), s);
        }
        let total = skill_md.len() + f.values().map(String::len).sum::<usize>();
        validate_push("demo", &skill_md, &f).expect("the timing push is valid");
        let n = 50;
        let start = std::time::Instant::now();
        for _ in 0..n {
            validate_push("demo", &skill_md, &f).unwrap();
        }
        let per = start.elapsed() / n;
        println!("validate_push on a {total}-byte push (SKILL.md {} bytes, 4 files): {per:?} per call", skill_md.len());
        // Adversarial shapes, each filling the push to 48 KiB (SKILL.md 16 KiB + 2 files).
        let shapes: [(&str, &str); 6] = [
            ("joinable line breaks", "ab\n"),
            ("quoted random chunks", "\"A1b2 C3d4\" "),
            ("key lines", "token:\n  $T\n"),
            ("placeholders", "HF_TOKEN=...\n"),
            ("base64-looking runs", "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo= "),
            ("data: prefixes", "data:x "),
        ];
        for (label, unit) in shapes {
            let fill = |n: usize| unit.repeat(n / unit.len());
            let head = md("demo", "");
            let skill_md = format!("{head}{}", fill(SKILL_MD_MAX - head.len()));
            let f = files(&[("a.md", &fill(16 * 1024)), ("b.md", &fill(16 * 1024 - 64))]);
            let start = std::time::Instant::now();
            let r = validate_push("demo", &skill_md, &f);
            println!("  {label}: {:?} ({})", start.elapsed(), if r.is_ok() { "accepted" } else { "refused" });
        }
    }
}
