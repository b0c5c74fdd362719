//! Comment-preserving edits of Hermes `config.yaml` files.
//!
//! Rust has no round-trip YAML library, so this is a small line-based editor for the block
//! YAML Hermes writes: it finds a top-level mapping (`mcp_servers:`) and the entries in it,
//! and splices whole entries in or out. Every byte outside the spliced lines is kept:
//! comments, blank lines, key order, quoting, CRLF line ends, a missing final newline.
//!
//! It trusts nothing it worked out from the text alone: the keys it found are checked
//! against serde_yaml_ng's parse before an edit, and after the edit the whole result is
//! parsed again and must hold the requested entry (or no longer hold it) with every other
//! top-level key and every other entry of the section unchanged. Anything it cannot edit
//! safely is refused with `hermes.config_unsupported`; text that is not YAML with
//! `hermes.config_unparsable`; an edit whose result fails the check with
//! `hermes.config_edit_refused`. A refused edit leaves the text as it was.

use crate::base::error::{Error, Kind, Result};
use serde_json::Value as Json;
use serde_yaml_ng::Value as Yaml;
use std::path::Path;

const UNPARSABLE: &str = "hermes.config_unparsable";
const UNSUPPORTED: &str = "hermes.config_unsupported";
const REFUSED: &str = "hermes.config_edit_refused";

fn unparsable(message: String) -> Error {
    Error::new(UNPARSABLE, Kind::Unprocessable, message)
}
fn unsupported(message: String) -> Error {
    Error::new(UNSUPPORTED, Kind::Unprocessable, message)
}
fn refused(message: String) -> Error {
    Error::new(REFUSED, Kind::Unprocessable, message)
}

/// Parse-check and edit a YAML document as text.
#[derive(Debug, Clone)]
pub struct YamlDoc {
    text: String,
    parsed: Yaml,
    /// Top-level sections an edit was asked for; `edit_file` lets only these change.
    touched: Vec<String>,
}

impl YamlDoc {
    /// Refuses text serde_yaml_ng cannot parse (the error names the line), stray carriage
    /// returns, and tabs used as indentation.
    pub fn parse(text: &str) -> Result<YamlDoc> {
        let parsed = parse_yaml(text)?;
        let lines = split_lines(text)?;
        lex_all(&lines)?;
        Ok(YamlDoc { text: text.to_owned(), parsed, touched: Vec::new() })
    }

    #[cfg(test)]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Set top-level `section`.`name` to `value` (a JSON object/scalar rendered as block YAML
    /// with 2-space indentation and safe quoting), replacing an existing entry of that name
    /// in place (same position) or appending it at the end of the `section` mapping; creates
    /// `section:` at the end of the document when missing. A flow-style (`mcp_servers: {}`)
    /// or empty/null section is converted to block style.
    pub fn set_entry(&mut self, section: &str, name: &str, value: &Json) -> Result<()> {
        self.touch(section);
        let current = section_mapping(&self.parsed, section)?;
        if let Some(cur) = current.and_then(|m| m.get(name))
            && to_json(cur).as_ref() == Some(value)
        {
            return Ok(());
        }
        let mut lines = split_lines(&self.text)?;
        let lex = lex_all(&lines)?;
        let top = scan_top(&lines, &lex, &self.parsed)?;
        let eol = doc_eol(&lines);
        let skey = Yaml::String(section.to_owned());
        let Some(idx) = top.keys.iter().position(|k| k.key == skey) else {
            let mut new = vec![format!("{}:", render_scalar(section))];
            new.extend(render_entry(&render_scalar(name), value, 2));
            insert_lines(&mut lines, top.end, new, eol);
            return self.apply(lines, section, name, Some(value));
        };
        let sec = analyze_section(&lines, &lex, &top, idx, current)?;
        match sec.form {
            Form::Block => {
                if let Some(sp) = sec.entries.iter().find(|s| s.key.as_str() == Some(name)) {
                    // Keep the operator's spelling of the key (quotes and all).
                    let raw = lines[sp.start].text[sp.key_start..sp.key_end].to_owned();
                    let new = render_entry(&raw, value, sec.indent);
                    replace_lines(&mut lines, sp.start, sp.end, new, eol);
                } else {
                    let new = render_entry(&render_scalar(name), value, sec.indent);
                    insert_lines(&mut lines, sec.append_at, new, eol);
                }
            }
            Form::Null => {
                lines[sec.header].text = sec.block_header();
                let new = render_entry(&render_scalar(name), value, sec.indent);
                insert_lines(&mut lines, sec.append_at, new, eol);
            }
            Form::Flow { last } => {
                let mut new = vec![sec.block_header()];
                let mut replaced = false;
                for (k, v) in current.into_iter().flatten() {
                    let Some(k) = k.as_str() else {
                        return Err(unsupported(format!("`{section}` has a key that is not a string")));
                    };
                    if k == name {
                        new.extend(render_entry(&render_scalar(k), value, 2));
                        replaced = true;
                    } else {
                        let v = to_json(v).ok_or_else(|| {
                            unsupported(format!("`{section}.{k}` holds YAML that cannot be rewritten in block style"))
                        })?;
                        new.extend(render_entry(&render_scalar(k), &v, 2));
                    }
                }
                if !replaced {
                    new.extend(render_entry(&render_scalar(name), value, 2));
                }
                replace_lines(&mut lines, sec.header, last, new, eol);
            }
        }
        self.apply(lines, section, name, Some(value))
    }

    /// Remove `section`.`name` (its whole block, including comment lines directly attached
    /// inside it, but not comments that precede the next sibling); `Ok(false)` when absent.
    /// Leaves `section:` in place (as an empty mapping `{}` when it becomes empty).
    pub fn remove_entry(&mut self, section: &str, name: &str) -> Result<bool> {
        self.touch(section);
        let current = section_mapping(&self.parsed, section)?;
        let Some(map) = current.filter(|m| m.contains_key(name)) else {
            return Ok(false);
        };
        let mut lines = split_lines(&self.text)?;
        let lex = lex_all(&lines)?;
        let top = scan_top(&lines, &lex, &self.parsed)?;
        let eol = doc_eol(&lines);
        let skey = Yaml::String(section.to_owned());
        let idx = top
            .keys
            .iter()
            .position(|k| k.key == skey)
            .ok_or_else(|| unsupported(format!("cannot find the `{section}:` line")))?;
        let sec = analyze_section(&lines, &lex, &top, idx, current)?;
        match sec.form {
            Form::Block => {
                let sp = sec
                    .entries
                    .iter()
                    .find(|s| s.key.as_str() == Some(name))
                    .ok_or_else(|| unsupported(format!("cannot find the `{section}.{name}` entry")))?;
                if sec.entries.len() == 1 {
                    lines[sec.header].text = sec.empty_header();
                }
                remove_lines(&mut lines, sp.start, sp.end);
            }
            Form::Flow { last } => {
                let rest: Vec<_> = map.iter().filter(|(k, _)| k.as_str() != Some(name)).collect();
                let mut new = Vec::new();
                if rest.is_empty() {
                    new.push(sec.empty_header());
                } else {
                    new.push(sec.block_header());
                    for (k, v) in rest {
                        let (Some(k), Some(v)) = (k.as_str(), to_json(v)) else {
                            return Err(unsupported(format!("`{section}` cannot be rewritten in block style")));
                        };
                        new.extend(render_entry(&render_scalar(k), &v, 2));
                    }
                }
                replace_lines(&mut lines, sec.header, last, new, eol);
            }
            Form::Null => return Ok(false),
        }
        self.apply(lines, section, name, None)?;
        Ok(true)
    }

    /// The names under top-level `section` (parsed view).
    pub fn entry_names(&self, section: &str) -> Vec<String> {
        match self.parsed.get(section) {
            Some(Yaml::Mapping(m)) => m
                .keys()
                .filter_map(|k| match k {
                    Yaml::String(s) => Some(s.clone()),
                    Yaml::Number(n) => Some(n.to_string()),
                    Yaml::Bool(b) => Some(b.to_string()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Read a value by path via the parsed view (for checks), as JSON. A path segment
    /// indexes a sequence when it is a number.
    #[cfg(test)]
    pub fn get(&self, path: &[&str]) -> Option<Json> {
        let mut cur = &self.parsed;
        for seg in path {
            cur = match cur {
                Yaml::Mapping(m) => m.get(*seg)?,
                Yaml::Sequence(s) => s.get(seg.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        to_json(cur)
    }

    fn touch(&mut self, section: &str) {
        if !self.touched.iter().any(|s| s == section) {
            self.touched.push(section.to_owned());
        }
    }

    /// Take `lines` as the new text if the result passes the post-edit check.
    fn apply(&mut self, lines: Vec<Line>, section: &str, name: &str, expected: Option<&Json>) -> Result<()> {
        let text = join(&lines);
        let parsed = verify(&self.parsed, &text, section, name, expected)?;
        self.text = text;
        self.parsed = parsed;
        Ok(())
    }
}

/// Edit a file in place: read, apply `f`, verify the result still parses and that every
/// top-level key other than the sections `f` edited is unchanged in the parsed view, then
/// write atomically keeping the file's mode and owner (0600 if new). A symlink is followed.
/// Returns whether the file changed; an unchanged file is not rewritten. The whole edit holds
/// the file's lock ([`crate::base::paths::with_lock`]), so concurrent edits never lose one.
pub fn edit_file(path: &Path, f: impl FnOnce(&mut YamlDoc) -> Result<()>) -> Result<bool> {
    let target = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
        _ => path.to_path_buf(),
    };
    crate::base::paths::with_lock(&target, || edit_locked(&target, f))
}

fn edit_locked(target: &Path, f: impl FnOnce(&mut YamlDoc) -> Result<()>) -> Result<bool> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let target = target.to_path_buf();
    let meta = std::fs::metadata(&target).ok();
    let original = crate::base::paths::read_optional_following(&target)?.unwrap_or_default();
    let in_file = |e: Error| -> Error {
        if e.code.starts_with("hermes.config_") {
            Error::new(e.code, e.kind, format!("{}: {}", target.display(), e.message))
        } else {
            e
        }
    };
    let mut doc = YamlDoc::parse(&original).map_err(in_file)?;
    let before = doc.parsed.clone();
    f(&mut doc).map_err(in_file)?;
    if doc.text == original {
        return Ok(false);
    }
    let after = parse_yaml(&doc.text).map_err(|e| in_file(refused(format!("the edited text does not parse: {e}"))))?;
    check_untouched(&before, &after, &doc.touched).map_err(in_file)?;
    crate::base::paths::write_atomic(&target, doc.text.as_bytes())?;
    if let Some(m) = meta {
        // Through a descriptor opened without following a symlink: a link the directory's
        // owner swapped in after the rename is refused, never chmodded or chowned through.
        use std::os::unix::fs::OpenOptionsExt;
        let written = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags((rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32)
            .open(&target)
            .map_err(|e| match std::fs::symlink_metadata(&target) {
                Ok(l) if l.file_type().is_symlink() => crate::base::paths::symlink_refused(&target),
                _ => Error::io("fs.write_failed", "open", &target, e),
            })?;
        crate::base::paths::check_own(&written, &target)?;
        written
            .set_permissions(std::fs::Permissions::from_mode(m.mode() & 0o7777))
            .map_err(|e| Error::io("fs.write_failed", "set mode on", &target, e))?;
        let now = written.metadata().map_err(|e| Error::io("fs.write_failed", "stat", &target, e))?;
        if (now.uid(), now.gid()) != (m.uid(), m.gid())
            && let Err(e) = std::os::unix::fs::fchown(&written, Some(m.uid()), Some(m.gid()))
        {
            tracing::warn!(path = %target.display(), error = %e, "could not restore the owner of an edited config.yaml");
        }
    }
    Ok(true)
}

// ---------------------------------------------------------------------------------------
// Parsed view

fn parse_yaml(text: &str) -> Result<Yaml> {
    serde_yaml_ng::from_str::<Yaml>(text).map_err(|e| {
        let at = e.location().map(|l| format!(" at line {}, column {}", l.line(), l.column())).unwrap_or_default();
        unparsable(format!("not valid YAML{at}: {e}"))
    })
}

fn to_json(v: &Yaml) -> Option<Json> {
    serde_json::to_value(v).ok()
}

/// The parsed `section` mapping: `None` when the section is absent, null or the document
/// is empty; an error when the document or the section is not a mapping.
fn section_mapping<'a>(root: &'a Yaml, section: &str) -> Result<Option<&'a serde_yaml_ng::Mapping>> {
    match root {
        Yaml::Null => Ok(None),
        Yaml::Mapping(m) => match m.get(section) {
            None | Some(Yaml::Null) => Ok(None),
            Some(Yaml::Mapping(s)) => Ok(Some(s)),
            Some(_) => Err(unsupported(format!("`{section}` is not a mapping"))),
        },
        _ => Err(unsupported("the top level of the document is not a mapping".into())),
    }
}

fn top_pairs(v: &Yaml) -> Vec<(&Yaml, &Yaml)> {
    match v {
        Yaml::Mapping(m) => m.iter().collect(),
        _ => Vec::new(),
    }
}

/// Parse `text` and check that `section`.`name` is now `expected` (or gone) while every
/// other top-level key and every other entry of `section` is what it was in `before`.
fn verify(before: &Yaml, text: &str, section: &str, name: &str, expected: Option<&Json>) -> Result<Yaml> {
    let after = parse_yaml(text).map_err(|e| refused(format!("the edited text would not parse ({e})")))?;
    if !matches!(after, Yaml::Mapping(_)) {
        return Err(refused("the edited document would not be a mapping".into()));
    }
    let others = |v: &'_ Yaml| -> Vec<(Yaml, Yaml)> {
        top_pairs(v)
            .into_iter()
            .filter(|(k, _)| k.as_str() != Some(section))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    if others(before) != others(&after) {
        return Err(refused(format!("editing `{section}.{name}` would change other top-level keys")));
    }
    let entries = |v: &'_ Yaml| -> Vec<(Yaml, Yaml)> {
        match v.get(section) {
            Some(Yaml::Mapping(m)) => {
                m.iter().filter(|(k, _)| k.as_str() != Some(name)).map(|(k, v)| (k.clone(), v.clone())).collect()
            }
            _ => Vec::new(),
        }
    };
    if entries(before) != entries(&after) {
        return Err(refused(format!("editing `{section}.{name}` would change other `{section}` entries")));
    }
    let Some(Yaml::Mapping(sec)) = after.get(section) else {
        return Err(refused(format!("`{section}` would not be a mapping after the edit")));
    };
    let got = sec.get(name);
    let ok = match expected {
        Some(v) => got.and_then(to_json).as_ref() == Some(v),
        None => got.is_none(),
    };
    if !ok {
        return Err(refused(format!("`{section}.{name}` would not read back as written")));
    }
    Ok(after)
}

/// Every top-level key outside `touched` is present, equal and in the same order.
fn check_untouched(before: &Yaml, after: &Yaml, touched: &[String]) -> Result<()> {
    let keep = |v: &'_ Yaml| -> Vec<(Yaml, Yaml)> {
        top_pairs(v)
            .into_iter()
            .filter(|(k, _)| !k.as_str().is_some_and(|k| touched.iter().any(|t| t == k)))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    if keep(before) != keep(after) {
        return Err(refused("the edit would change top-level keys it was not asked to change".into()));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Lines

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Eol {
    None,
    Lf,
    CrLf,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Line {
    text: String,
    eol: Eol,
}

fn split_lines(text: &str) -> Result<Vec<Line>> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let (body, eol, next) = match rest.find('\n') {
            Some(p) => match rest[..p].strip_suffix('\r') {
                Some(b) => (b, Eol::CrLf, &rest[p + 1..]),
                None => (&rest[..p], Eol::Lf, &rest[p + 1..]),
            },
            None => (rest, Eol::None, ""),
        };
        if body.contains('\r') {
            return Err(unparsable(format!(
                "line {}: a carriage return that does not end a line (only LF and CRLF line ends are supported)",
                out.len() + 1
            )));
        }
        out.push(Line { text: body.to_owned(), eol });
        rest = next;
    }
    Ok(out)
}

fn join(lines: &[Line]) -> String {
    let mut s = String::new();
    for l in lines {
        s.push_str(&l.text);
        s.push_str(match l.eol {
            Eol::None => "",
            Eol::Lf => "\n",
            Eol::CrLf => "\r\n",
        });
    }
    s
}

/// The document's line end: that of its first line, LF when it has none.
fn doc_eol(lines: &[Line]) -> Eol {
    match lines.first().map(|l| l.eol) {
        Some(Eol::CrLf) => Eol::CrLf,
        _ => Eol::Lf,
    }
}

/// Insert `new` before line `at`. Appending to a text without a final newline keeps it
/// without one.
fn insert_lines(lines: &mut Vec<Line>, at: usize, new: Vec<String>, eol: Eol) {
    let n = new.len();
    let mut new: Vec<Line> = new.into_iter().map(|text| Line { text, eol }).collect();
    if at == lines.len()
        && let Some(last) = lines.last_mut()
        && last.eol == Eol::None
    {
        last.eol = eol;
        if let Some(l) = new.last_mut() {
            l.eol = Eol::None;
        }
    }
    lines.splice(at..at, new);
    debug_assert!(n > 0);
}

/// Replace lines `a..=b` by `new`; the last new line keeps line `b`'s line end.
fn replace_lines(lines: &mut Vec<Line>, a: usize, b: usize, new: Vec<String>, eol: Eol) {
    let last_eol = lines[b].eol;
    let count = new.len();
    let mut new: Vec<Line> = new.into_iter().map(|text| Line { text, eol }).collect();
    if let Some(l) = new.last_mut() {
        l.eol = last_eol;
    }
    lines.splice(a..=b, new);
    debug_assert!(count > 0);
}

/// Remove lines `a..=b`. Removing the last lines of a text without a final newline leaves
/// the text without one.
fn remove_lines(lines: &mut Vec<Line>, a: usize, b: usize) {
    if b + 1 == lines.len() && lines[b].eol == Eol::None && a > 0 {
        lines[a - 1].eol = Eol::None;
    }
    lines.drain(a..=b);
}

// ---------------------------------------------------------------------------------------
// Lexing: what each line is, as far as block structure goes

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LineKind {
    Blank,
    Comment,
    Content,
}

#[derive(Clone, Debug)]
struct Lexed {
    kind: LineKind,
    /// The line starts outside any multi-line scalar or flow collection, so its
    /// indentation is block structure.
    structural: bool,
    /// Leading spaces (after a byte-order mark on the first line).
    indent: usize,
    /// A simple key that starts the line: token byte range and the byte after its `:`.
    key: Option<(usize, usize, usize)>,
    /// The line starts with a block sequence entry (`- `).
    seq_item: bool,
    doc_start: bool,
    doc_end: bool,
    directive: bool,
    /// Something other than a comment follows a `---` / `...` marker.
    marker_content: bool,
    /// Byte offset of a comment's `#`.
    comment: Option<usize>,
    tab_indent: bool,
}

#[derive(Default)]
struct LexState {
    /// Inside a quoted scalar that continues on the next line.
    quote: Option<u8>,
    /// Open flow collections.
    depth: usize,
    /// Inside a block scalar whose header was on a line with this indentation.
    block: Option<usize>,
}

fn is_ws(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

fn is_flow_indicator(c: u8) -> bool {
    matches!(c, b',' | b'[' | b']' | b'{' | b'}')
}

/// The end (one past the closing quote) of a quoted scalar whose body starts at `i`.
fn quote_end(b: &[u8], mut i: usize, q: u8) -> Option<usize> {
    while i < b.len() {
        if q == b'"' && b[i] == b'\\' {
            i += 2;
        } else if b[i] == q {
            if q == b'\'' && b.get(i + 1) == Some(&b'\'') {
                i += 2;
            } else {
                return Some(i + 1);
            }
        } else {
            i += 1;
        }
    }
    None
}

fn lex_line(text: &str, st: &mut LexState, first: bool) -> Lexed {
    let start = if first && text.starts_with('\u{feff}') { 3 } else { 0 };
    let b = text.as_bytes();
    let n = b.len();
    let indent = b[start..].iter().take_while(|&&c| c == b' ').count();
    let blank = b[start..].iter().all(|&c| is_ws(c));
    let mut lx = Lexed {
        kind: LineKind::Content,
        structural: false,
        indent,
        key: None,
        seq_item: false,
        doc_start: false,
        doc_end: false,
        directive: false,
        marker_content: false,
        comment: None,
        tab_indent: false,
    };
    if let Some(parent) = st.block {
        if blank {
            lx.kind = LineKind::Blank;
            return lx;
        }
        if indent > parent {
            return lx;
        }
        st.block = None;
    }
    lx.structural = st.quote.is_none() && st.depth == 0;
    if blank {
        lx.kind = LineKind::Blank;
        return lx;
    }
    let mut i = start + indent;
    let tab = b[i] == b'\t';
    while i < n && is_ws(b[i]) {
        i += 1;
    }
    if lx.structural && b[i] == b'#' {
        lx.kind = LineKind::Comment;
        lx.comment = Some(i);
        return lx;
    }
    lx.tab_indent = lx.structural && tab;
    if lx.structural && i == start {
        let marker = |m: &[u8]| b[i..].starts_with(m) && (n == i + 3 || is_ws(b[i + 3]));
        if marker(b"---") || marker(b"...") {
            lx.doc_start = b[i] == b'-';
            lx.doc_end = b[i] == b'.';
            let mut j = i + 3;
            while j < n && is_ws(b[j]) {
                j += 1;
            }
            if j < n && b[j] == b'#' {
                lx.comment = Some(j);
            } else if j < n {
                lx.marker_content = true;
            }
            return lx;
        }
        if b[i] == b'%' {
            lx.directive = true;
            return lx;
        }
    }
    if let Some(q) = st.quote {
        match quote_end(b, i, q) {
            Some(e) => {
                st.quote = None;
                i = e;
            }
            None => return lx,
        }
    }
    let head = lx.structural;
    // The first scalar on a line that starts in block context, while nothing followed it.
    let mut cand: Option<(usize, usize)> = None;
    let mut first_token = true;
    let next_ends = |j: usize, depth: usize| j >= n || is_ws(b[j]) || (depth > 0 && is_flow_indicator(b[j]));
    loop {
        while i < n && is_ws(b[i]) {
            i += 1;
        }
        if i >= n {
            break;
        }
        let c = b[i];
        match c {
            b'#' if i == 0 || is_ws(b[i - 1]) => {
                lx.comment = Some(i);
                break;
            }
            b'"' | b'\'' => match quote_end(b, i + 1, c) {
                Some(e) => {
                    cand = (first_token && head && st.depth == 0).then_some((i, e));
                    first_token = false;
                    i = e;
                }
                None => {
                    st.quote = Some(c);
                    break;
                }
            },
            b'[' | b'{' => {
                st.depth += 1;
                cand = None;
                first_token = false;
                i += 1;
            }
            b']' | b'}' => {
                st.depth = st.depth.saturating_sub(1);
                cand = None;
                first_token = false;
                i += 1;
            }
            b',' if st.depth > 0 => {
                cand = None;
                i += 1;
            }
            b':' if next_ends(i + 1, st.depth) => {
                if st.depth == 0
                    && lx.key.is_none()
                    && let Some((s, e)) = cand
                {
                    lx.key = Some((s, e, i + 1));
                }
                cand = None;
                first_token = false;
                i += 1;
            }
            b'-' | b'?' if i + 1 >= n || is_ws(b[i + 1]) => {
                if c == b'-' && first_token && head {
                    lx.seq_item = true;
                }
                cand = None;
                first_token = false;
                i += 1;
            }
            b'&' | b'*' | b'!' => {
                while i < n && !is_ws(b[i]) && !(st.depth > 0 && is_flow_indicator(b[i])) {
                    i += 1;
                }
                cand = None;
                first_token = false;
            }
            b'|' | b'>' if st.depth == 0 => {
                st.block = Some(indent);
                while i < n && !is_ws(b[i]) {
                    i += 1;
                }
                while i < n && is_ws(b[i]) {
                    i += 1;
                }
                if i < n && b[i] == b'#' {
                    lx.comment = Some(i);
                }
                break;
            }
            _ => {
                let s = i;
                while i < n {
                    let c = b[i];
                    if c == b':' && next_ends(i + 1, st.depth) && i > s {
                        break;
                    }
                    if c == b'#' && i > s && is_ws(b[i - 1]) {
                        break;
                    }
                    if st.depth > 0 && is_flow_indicator(c) {
                        break;
                    }
                    i += 1;
                }
                let mut e = i;
                while e > s && is_ws(b[e - 1]) {
                    e -= 1;
                }
                cand = (first_token && head && st.depth == 0).then_some((s, e));
                first_token = false;
            }
        }
    }
    lx
}

/// Lex every line; refuse tabs used as indentation.
fn lex_all(lines: &[Line]) -> Result<Vec<Lexed>> {
    let mut st = LexState::default();
    let mut out = Vec::with_capacity(lines.len());
    for (i, l) in lines.iter().enumerate() {
        let lx = lex_line(&l.text, &mut st, i == 0);
        if lx.tab_indent {
            return Err(unparsable(format!("line {}: tabs cannot indent YAML; use spaces", i + 1)));
        }
        out.push(lx);
    }
    Ok(out)
}

fn decode_key(raw: &str, line: usize) -> Result<Yaml> {
    match serde_yaml_ng::from_str::<Yaml>(raw) {
        Ok(v @ (Yaml::String(_) | Yaml::Number(_) | Yaml::Bool(_) | Yaml::Null)) => Ok(v),
        _ => Err(unsupported(format!("line {line}: a key this editor cannot read"))),
    }
}

// ---------------------------------------------------------------------------------------
// Block structure

struct TopKey {
    key: Yaml,
    line: usize,
}

struct TopScan {
    keys: Vec<TopKey>,
    /// Where the document's content ends: a `...` line, or the line count.
    end: usize,
}

/// Find the top-level keys and check them against the parsed view.
fn scan_top(lines: &[Line], lex: &[Lexed], parsed: &Yaml) -> Result<TopScan> {
    let mut keys: Vec<TopKey> = Vec::new();
    let mut end = lines.len();
    let mut started = false;
    for (i, lx) in lex.iter().enumerate() {
        if !lx.structural || lx.kind != LineKind::Content || lx.indent != 0 {
            continue;
        }
        let at = i + 1;
        if lx.doc_end {
            end = i;
            break;
        }
        if lx.doc_start {
            if started || !keys.is_empty() || lx.marker_content {
                return Err(unsupported(format!("line {at}: content on or after a `---` line is not supported")));
            }
            started = true;
            continue;
        }
        if lx.directive && keys.is_empty() && !started {
            continue;
        }
        if let Some((s, e, _)) = lx.key {
            keys.push(TopKey { key: decode_key(&lines[i].text[s..e], at)?, line: i });
            continue;
        }
        if lx.seq_item && !keys.is_empty() {
            continue;
        }
        return Err(unsupported(format!("line {at}: a top-level construct this editor does not handle")));
    }
    let found: Vec<&Yaml> = keys.iter().map(|k| &k.key).collect();
    let want: Vec<&Yaml> = top_pairs(parsed).into_iter().map(|(k, _)| k).collect();
    if found != want {
        return Err(unsupported("the top-level keys found in the text do not match the parsed document".into()));
    }
    Ok(TopScan { keys, end })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// `section:` followed by indented entries, or by nothing (an empty block).
    Block,
    /// `section: null` or `section: ~`.
    Null,
    /// `section: {…}`, ending on line `last`.
    Flow { last: usize },
}

struct Span {
    key: Yaml,
    start: usize,
    end: usize,
    key_start: usize,
    key_end: usize,
}

struct Section {
    header: usize,
    form: Form,
    /// The header line's text up to and including the `:`.
    prefix: String,
    /// The header's trailing comment, with the whitespace before it.
    comment: Option<(String, String)>,
    indent: usize,
    entries: Vec<Span>,
    append_at: usize,
}

impl Section {
    /// `section:` with the header's comment kept.
    fn block_header(&self) -> String {
        match &self.comment {
            Some((gap, c)) => format!("{}{gap}{c}", self.prefix),
            None => self.prefix.clone(),
        }
    }
    /// `section: {}` with the header's comment kept.
    fn empty_header(&self) -> String {
        match &self.comment {
            Some((gap, c)) => format!("{} {{}}{gap}{c}", self.prefix),
            None => format!("{} {{}}", self.prefix),
        }
    }
}

/// The last line that belongs to a block starting at `start` and bounded by `boundary`:
/// its content lines and the comments indented deeper than `indent` that follow them,
/// but not blank lines or comments at `indent` or less that lead up to the next sibling.
fn extent(lex: &[Lexed], start: usize, boundary: usize, indent: usize) -> usize {
    let mut last = start;
    let mut shallow = false;
    for (j, lx) in lex.iter().enumerate().take(boundary).skip(start + 1) {
        match lx.kind {
            LineKind::Blank => {}
            LineKind::Comment if lx.indent > indent && !shallow => last = j,
            LineKind::Comment => shallow |= lx.indent <= indent,
            LineKind::Content => {
                last = j;
                shallow = false;
            }
        }
    }
    last
}

fn analyze_section(
    lines: &[Line],
    lex: &[Lexed],
    top: &TopScan,
    idx: usize,
    parsed: Option<&serde_yaml_ng::Mapping>,
) -> Result<Section> {
    let h = top.keys[idx].line;
    let region_end = top.keys.get(idx + 1).map(|k| k.line).unwrap_or(top.end);
    let name = match &top.keys[idx].key {
        Yaml::String(s) => s.clone(),
        _ => String::new(),
    };
    let text = &lines[h].text;
    let (_, _, colon) = lex[h].key.expect("a top-level key line");
    let body_end = lex[h].comment.unwrap_or(text.len());
    let value = text[colon..body_end].trim_matches([' ', '\t']);
    let comment = lex[h].comment.map(|p| {
        let before = text[..p].trim_end_matches([' ', '\t']).len();
        let gap = if before == p { " ".to_owned() } else { text[before..p].to_owned() };
        (gap, text[p..].to_owned())
    });
    let mut last_header = h;
    let form = if value.is_empty() {
        Form::Block
    } else if value.starts_with('{') {
        while last_header + 1 < region_end && !lex[last_header + 1].structural {
            last_header += 1;
        }
        if last_header > h && (h..=last_header).any(|j| lex[j].comment.is_some()) {
            return Err(unsupported(format!("`{name}` is a multi-line flow mapping with comments")));
        }
        Form::Flow { last: last_header }
    } else if matches!(value, "null" | "Null" | "NULL" | "~") {
        Form::Null
    } else {
        return Err(unsupported(format!("line {}: `{name}` has a value this editor does not edit", h + 1)));
    };
    let mut indent: Option<usize> = None;
    let mut starts: Vec<(Yaml, usize, usize, usize)> = Vec::new();
    for (j, lx) in lex.iter().enumerate().take(region_end).skip(last_header + 1) {
        if !lx.structural || lx.kind != LineKind::Content {
            continue;
        }
        let at = j + 1;
        if form != Form::Block || lx.indent == 0 {
            return Err(unsupported(format!("line {at}: unexpected content in `{name}`")));
        }
        let ei = *indent.get_or_insert(lx.indent);
        if lx.indent > ei {
            continue;
        }
        if lx.indent < ei {
            return Err(unsupported(format!("line {at}: inconsistent indentation in `{name}`")));
        }
        if let Some((s, e, _)) = lx.key {
            starts.push((decode_key(&lines[j].text[s..e], at)?, j, s, e));
        } else if !lx.seq_item || starts.is_empty() {
            return Err(unsupported(format!("line {at}: `{name}` holds something other than named entries")));
        }
    }
    let found: Vec<&Yaml> = starts.iter().map(|s| &s.0).collect();
    let want: Vec<&Yaml> = parsed.into_iter().flat_map(|m| m.keys()).collect();
    if form == Form::Block && found != want {
        return Err(unsupported(format!("the entries of `{name}` found in the text do not match the parsed document")));
    }
    let indent = indent.unwrap_or(2);
    let mut entries = Vec::with_capacity(starts.len());
    for (n, (key, start, key_start, key_end)) in starts.iter().enumerate() {
        let boundary = starts.get(n + 1).map(|s| s.1).unwrap_or(region_end);
        let end = extent(lex, *start, boundary, indent);
        entries.push(Span { key: key.clone(), start: *start, end, key_start: *key_start, key_end: *key_end });
    }
    let append_at = match entries.last() {
        Some(sp) => sp.end + 1,
        None => extent(lex, last_header, region_end, 0) + 1,
    };
    Ok(Section { header: h, form, prefix: text[..colon].to_owned(), comment, indent, entries, append_at })
}

// ---------------------------------------------------------------------------------------
// Rendering

/// `key: value` at `indent`, a nested mapping or sequence as indented block lines.
fn render_entry(key: &str, value: &Json, indent: usize) -> Vec<String> {
    let pad = " ".repeat(indent);
    match value {
        Json::Object(m) if !m.is_empty() => {
            let mut out = vec![format!("{pad}{key}:")];
            for (k, v) in m {
                out.extend(render_entry(&render_scalar(k), v, indent + 2));
            }
            out
        }
        Json::Array(a) if !a.is_empty() => {
            let mut out = vec![format!("{pad}{key}:")];
            out.extend(render_items(a, indent + 2));
            out
        }
        _ => vec![format!("{pad}{key}: {}", render_inline(value))],
    }
}

fn render_items(items: &[Json], indent: usize) -> Vec<String> {
    let pad = " ".repeat(indent);
    let mut out = Vec::new();
    for item in items {
        let mut nested = match item {
            Json::Object(m) if !m.is_empty() => {
                m.iter().flat_map(|(k, v)| render_entry(&render_scalar(k), v, indent + 2)).collect()
            }
            Json::Array(a) if !a.is_empty() => render_items(a, indent + 2),
            _ => {
                out.push(format!("{pad}- {}", render_inline(item)));
                continue;
            }
        };
        nested[0] = format!("{pad}- {}", &nested[0][indent + 2..]);
        out.extend(nested);
    }
    out
}

fn render_inline(v: &Json) -> String {
    match v {
        Json::Null => "null".into(),
        Json::Bool(b) => b.to_string(),
        Json::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.to_string(),
            (_, Some(u), _) => u.to_string(),
            // Display never uses an exponent; a `.` makes YAML 1.1 readers see a float.
            (_, _, Some(f)) => {
                let s = f.to_string();
                if s.contains('.') { s } else { format!("{s}.0") }
            }
            _ => n.to_string(),
        },
        Json::String(s) => render_scalar(s),
        Json::Object(m) if m.is_empty() => "{}".into(),
        Json::Array(a) if a.is_empty() => "[]".into(),
        other => other.to_string(),
    }
}

/// A string as a YAML scalar: plain when that reads back as the same string in YAML 1.1
/// and 1.2 readers (PyYAML included), double-quoted otherwise.
fn render_scalar(s: &str) -> String {
    if plain_ok(s) { s.to_owned() } else { double_quoted(s) }
}

fn plain_ok(s: &str) -> bool {
    let Some(first) = s.chars().next() else { return false };
    if first.is_whitespace() || s.ends_with(char::is_whitespace) {
        return false;
    }
    if "-?:,[]{}#&*!|>'\"%@`<=~+.".contains(first) || first.is_ascii_digit() {
        return false;
    }
    if s.chars().any(|c| ":#{}[],&*!|>'\"`\\$".contains(c) || needs_escape(c)) {
        return false;
    }
    const WORDS: &[&str] = &["y", "n", "yes", "no", "on", "off", "true", "false", "null"];
    !WORDS.contains(&s.to_ascii_lowercase().as_str())
}

fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}')
}

fn double_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{85}' => out.push_str("\\N"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            c if needs_escape(c) => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const S: &str = "mcp_servers";

    const HERMES: &str = r#"# Hermes Agent configuration
# ─────────────────────────────────────────────────────────────────────────
# This file is read once at gateway start. Keys you do not set fall back to
# the defaults in hermes_cli/config.py. After `hermes update` the migration
# may add keys here; your own values and comments are kept.
#
#   model:        the LLM endpoint Hermes calls
#   platforms:    which gateways listen (api_server needs `extra`)
#   mcp_servers:  tool servers discovered at start
# ─────────────────────────────────────────────────────────────────────────
_config_version: 33
model:
  provider: custom          # any OpenAI-compatible endpoint
  default: fake-model
  base_url: http://127.0.0.1:18080/v1
  api_key: anything

platforms:
  api_server:
    enabled: true
    extra:                  # host/port/key MUST be under `extra`
      host: 127.0.0.1
      port: 18642
      key: worker1-key-0123456789abcdef
      # cors_origins: "http://localhost:3000"
approvals:
  mode: manual   # manual | smart | off
  timeout: 60

# Tool servers (tools/mcp_tool.py). Mine first, hal0 may add its own below.
mcp_servers:
  # my GitHub server, do not touch
  github:
    url: https://api.githubcopilot.com/mcp/
    headers:
      Authorization: "Bearer ${GITHUB_PAT}"   # token lives in .env
    timeout: 120
    # connect_timeout: 10
  local-stdio:
    command: npx
    args:
    - -y
    - '@modelcontextprotocol/server-filesystem'
    - /tmp
    env: {}

platform_toolsets:
  api_server: [terminal, file, web]
display:
  skin: default   # one of: default, mono
  # Long notes Hermes keeps:
  #   personality: concise
  #   show_reasoning: false
"#;

    fn admin() -> Json {
        json!({
            "url": "http://127.0.0.1:8080/mcp/admin/mcp",
            "timeout": 60,
            "headers": {"X-hal0-Agent": "hermes/worker1", "Authorization": "Bearer ${HAL0_MCP_ADMIN_KEY}"}
        })
    }

    fn memory() -> Json {
        json!({
            "url": "http://127.0.0.1:8080/mcp/memory/mcp",
            "timeout": 30,
            "headers": {"X-hal0-Agent": "hermes/worker1", "X-hal0-Private": "1"}
        })
    }

    fn doc(t: &str) -> YamlDoc {
        YamlDoc::parse(t).unwrap()
    }

    /// Every line of `orig` is still in `now`, in order.
    fn keeps_lines(orig: &str, now: &str) {
        let mut it = now.lines();
        for l in orig.lines() {
            assert!(it.any(|n| n == l), "lost line {l:?} in\n{now}");
        }
    }

    #[test]
    fn hermes_round_trip_set_replace_remove() {
        let mut d = doc(HERMES);
        d.set_entry(S, "hal0-admin", &admin()).unwrap();
        keeps_lines(HERMES, d.text());
        assert_eq!(d.get(&[S, "hal0-admin"]), Some(admin()));
        assert_eq!(d.entry_names(S), ["github", "local-stdio", "hal0-admin"]);
        // Appended after the last entry, before the blank line that leads to the next key.
        assert!(d.text().contains(
            "    env: {}\n  hal0-admin:\n    headers:\n      Authorization: \"Bearer ${HAL0_MCP_ADMIN_KEY}\"\n"
        ));
        assert!(d.text().contains("    url: \"http://127.0.0.1:8080/mcp/admin/mcp\"\n\nplatform_toolsets:"));

        let mut other = admin();
        other["timeout"] = json!(90);
        other["headers"]["X-hal0-Agent"] = json!("hermes");
        d.set_entry(S, "hal0-admin", &other).unwrap();
        keeps_lines(HERMES, d.text());
        assert_eq!(d.get(&[S, "hal0-admin"]), Some(other));
        assert_eq!(d.entry_names(S), ["github", "local-stdio", "hal0-admin"]);

        assert!(d.remove_entry(S, "hal0-admin").unwrap());
        assert_eq!(d.text(), HERMES);
        assert!(!d.remove_entry(S, "hal0-admin").unwrap());
        assert_eq!(d.text(), HERMES);
    }

    #[test]
    fn replace_keeps_position_and_setting_same_value_is_a_no_op() {
        let mut d = doc(HERMES);
        d.set_entry(S, "hal0-admin", &admin()).unwrap();
        d.set_entry(S, "hal0-memory", &memory()).unwrap();
        let before = d.text().to_owned();
        d.set_entry(S, "hal0-admin", &admin()).unwrap();
        assert_eq!(d.text(), before);
        d.set_entry(S, "hal0-admin", &json!({"url": "http://h/mcp", "enabled": false})).unwrap();
        assert_eq!(d.entry_names(S), ["github", "local-stdio", "hal0-admin", "hal0-memory"]);
        assert_eq!(d.get(&[S, "hal0-memory"]), Some(memory()));
        d.remove_entry(S, "hal0-memory").unwrap();
        d.remove_entry(S, "hal0-admin").unwrap();
        assert_eq!(d.text(), HERMES);
    }

    #[test]
    fn remove_an_operator_entry_keeps_the_comments_around_it() {
        let mut d = doc(HERMES);
        assert!(d.remove_entry(S, "local-stdio").unwrap());
        assert!(d.text().contains("    # connect_timeout: 10\n\nplatform_toolsets:"));
        assert!(!d.text().contains("npx"));
        assert!(d.remove_entry(S, "github").unwrap());
        // The comment before `github` sits at the entries' column, so it stays.
        assert!(d.text().contains("mcp_servers: {}\n  # my GitHub server, do not touch\n\nplatform_toolsets:"));
        assert_eq!(d.get(&[S]), Some(json!({})));
        assert_eq!(d.get(&["display", "skin"]), Some(json!("default")));
    }

    #[test]
    fn section_missing_is_created_at_the_end() {
        let mut d = doc("model:\n  default: m\n");
        d.set_entry(S, "hal0", &json!({"url": "http://x/mcp", "enabled": true})).unwrap();
        assert_eq!(
            d.text(),
            "model:\n  default: m\nmcp_servers:\n  hal0:\n    enabled: true\n    url: \"http://x/mcp\"\n"
        );
        assert!(d.remove_entry(S, "hal0").unwrap());
        assert_eq!(d.text(), "model:\n  default: m\nmcp_servers: {}\n");

        let mut d = doc("");
        d.set_entry(S, "a", &json!({"timeout": 5})).unwrap();
        assert_eq!(d.text(), "mcp_servers:\n  a:\n    timeout: 5\n");

        let mut d = doc("# only a comment\n");
        d.set_entry(S, "a", &json!(1)).unwrap();
        assert_eq!(d.text(), "# only a comment\nmcp_servers:\n  a: 1\n");
    }

    #[test]
    fn document_markers() {
        let mut d = doc("---\n# c\nmodel: x\n");
        d.set_entry(S, "a", &json!({"b": 1})).unwrap();
        assert_eq!(d.text(), "---\n# c\nmodel: x\nmcp_servers:\n  a:\n    b: 1\n");
        let mut d = doc("---\nmodel: x\n...\n");
        d.set_entry(S, "a", &json!({"b": 1})).unwrap();
        assert_eq!(d.text(), "---\nmodel: x\nmcp_servers:\n  a:\n    b: 1\n...\n");
    }

    #[test]
    fn flow_style_section() {
        let orig = "model: x\nmcp_servers: {}\nother: 1\n";
        let mut d = doc(orig);
        d.set_entry(S, "hal0-admin", &admin()).unwrap();
        assert!(d.text().starts_with("model: x\nmcp_servers:\n  hal0-admin:\n    headers:\n"));
        assert!(d.text().ends_with("\nother: 1\n"));
        assert_eq!(d.get(&[S, "hal0-admin"]), Some(admin()));
        assert!(d.remove_entry(S, "hal0-admin").unwrap());
        assert_eq!(d.text(), orig);

        let orig = "mcp_servers: {}   # hal0 writes here\nother: 1";
        let mut d = doc(orig);
        d.set_entry(S, "a", &json!({"url": "u"})).unwrap();
        assert_eq!(d.text(), "mcp_servers:   # hal0 writes here\n  a:\n    url: u\nother: 1");
        d.remove_entry(S, "a").unwrap();
        assert_eq!(d.text(), orig);

        // A non-empty flow mapping is rewritten in block style from the parsed view.
        let mut d = doc("mcp_servers: {github: {url: 'https://g/mcp', timeout: 5}}\nz: 2\n");
        d.set_entry(S, "hal0", &json!({"url": "u"})).unwrap();
        assert_eq!(d.entry_names(S), ["github", "hal0"]);
        assert_eq!(d.get(&[S, "github"]), Some(json!({"url": "https://g/mcp", "timeout": 5})));
        d.remove_entry(S, "github").unwrap();
        assert_eq!(d.text(), "mcp_servers:\n  hal0:\n    url: u\nz: 2\n");

        let mut d = doc("mcp_servers: {a: 1,\n  b: 2}\nz: 2\n");
        d.remove_entry(S, "a").unwrap();
        assert_eq!(d.text(), "mcp_servers:\n  b: 2\nz: 2\n");
    }

    #[test]
    fn empty_and_null_sections() {
        let mut d = doc("mcp_servers:\nother: 1\n");
        d.set_entry(S, "a", &json!({"url": "u"})).unwrap();
        assert_eq!(d.text(), "mcp_servers:\n  a:\n    url: u\nother: 1\n");
        d.remove_entry(S, "a").unwrap();
        assert_eq!(d.text(), "mcp_servers: {}\nother: 1\n");

        let mut d = doc("mcp_servers: null  # none yet\n");
        d.set_entry(S, "a", &json!(true)).unwrap();
        assert_eq!(d.text(), "mcp_servers:  # none yet\n  a: true\n");

        let mut d = doc("mcp_servers: ~\n");
        d.set_entry(S, "a", &json!(true)).unwrap();
        assert_eq!(d.text(), "mcp_servers:\n  a: true\n");

        let mut d = doc("mcp_servers:\n  # add servers here\n\n# next\nother: 1\n");
        d.set_entry(S, "a", &json!({"b": 1})).unwrap();
        assert_eq!(d.text(), "mcp_servers:\n  # add servers here\n  a:\n    b: 1\n\n# next\nother: 1\n");
    }

    #[test]
    fn four_space_operator_entries() {
        let orig = "mcp_servers:\n    github:\n        url: https://g\n        timeout: 5\n\nother: 1\n";
        let mut d = doc(orig);
        d.set_entry(S, "hal0", &json!({"url": "u", "headers": {"A": "b"}})).unwrap();
        assert_eq!(
            d.text(),
            "mcp_servers:\n    github:\n        url: https://g\n        timeout: 5\n    hal0:\n      headers:\n        A: b\n      url: u\n\nother: 1\n"
        );
        d.set_entry(S, "hal0", &json!({"url": "v"})).unwrap();
        assert_eq!(d.get(&[S, "hal0"]), Some(json!({"url": "v"})));
        d.remove_entry(S, "hal0").unwrap();
        assert_eq!(d.text(), orig);
    }

    #[test]
    fn crlf_is_kept() {
        let orig = HERMES.replace('\n', "\r\n");
        let mut d = doc(&orig);
        d.set_entry(S, "hal0-admin", &admin()).unwrap();
        assert!(!d.text().replace("\r\n", "").contains('\n'), "a bare LF was written");
        assert!(d.text().contains("\r\n  hal0-admin:\r\n    headers:\r\n"));
        assert_eq!(d.get(&[S, "hal0-admin"]), Some(admin()));
        d.remove_entry(S, "hal0-admin").unwrap();
        assert_eq!(d.text(), orig);
    }

    #[test]
    fn no_trailing_newline_is_kept() {
        let orig = "model: x\nmcp_servers:\n  github:\n    url: g";
        let mut d = doc(orig);
        d.set_entry(S, "hal0", &json!({"url": "u"})).unwrap();
        assert_eq!(d.text(), "model: x\nmcp_servers:\n  github:\n    url: g\n  hal0:\n    url: u");
        d.set_entry(S, "hal0", &json!({"url": "v", "timeout": 3})).unwrap();
        assert_eq!(d.text(), "model: x\nmcp_servers:\n  github:\n    url: g\n  hal0:\n    timeout: 3\n    url: v");
        d.remove_entry(S, "hal0").unwrap();
        assert_eq!(d.text(), orig);
        d.remove_entry(S, "github").unwrap();
        assert_eq!(d.text(), "model: x\nmcp_servers: {}");

        let mut d = doc("model: x");
        d.set_entry(S, "a", &json!(1)).unwrap();
        assert_eq!(d.text(), "model: x\nmcp_servers:\n  a: 1");
    }

    #[test]
    fn values_that_need_quotes() {
        let mut d = doc("mcp_servers: {}\n");
        d.set_entry(S, "x", &json!({"headers": {"Authorization": "Bearer ${HAL0_MCP_X_KEY}"}})).unwrap();
        assert!(d.text().contains("      Authorization: \"Bearer ${HAL0_MCP_X_KEY}\"\n"), "{}", d.text());
        assert_eq!(d.get(&[S, "x", "headers", "Authorization"]), Some(json!("Bearer ${HAL0_MCP_X_KEY}")));

        let tricky = [
            "",
            " lead",
            "trail ",
            "a: b",
            "a:b",
            "#x",
            "a #b",
            "*x",
            "&x",
            "!x",
            "{x",
            "[x",
            "x]",
            "yes",
            "No",
            "ON",
            "off",
            "y",
            "n",
            "true",
            "False",
            "null",
            "~",
            "123",
            "1.5",
            "-1",
            "+1",
            ".5",
            "0x1f",
            "1e3",
            ".inf",
            "2001-12-14",
            "- a",
            "? a",
            "|",
            ">",
            "'q'",
            "\"q\"",
            "%x",
            "@x",
            "`x",
            "<<",
            "=",
            "line\nbreak",
            "tab\there",
            "back\\slash",
            "nel\u{85}x",
            "ls\u{2028}x",
            "bom\u{feff}x",
            "bell\u{7}",
            "ünïcødé ✓",
            "---",
            "...",
            "a,b",
            "pipe|x",
        ];
        for s in tricky {
            let v = json!({"s": s});
            d.set_entry(S, "x", &v).unwrap();
            assert_eq!(d.get(&[S, "x"]), Some(v), "{s:?} in\n{}", d.text());
        }
        for s in ["plain", "hermes/worker1", "a b c", "ünïcødé ✓"] {
            assert_eq!(render_scalar(s), s);
        }
        for s in ["yes", "123", "a: b", "${X}", "Bearer ${X}"] {
            assert!(render_scalar(s).starts_with('"'), "{s}");
        }
    }

    #[test]
    fn value_shapes() {
        let v = json!({
            "i": -5, "u": 18446744073709551615u64, "f": 1.0, "g": 2.5e-3, "big": 1e21, "t": true, "n": null,
            "args": ["-y", "@scope/pkg", "/tmp", 3, false],
            "objs": [{"a": 1, "b": {"c": [1, 2]}}, {}],
            "nested": [[1, 2], ["x"], []],
            "empty_obj": {}, "empty_arr": [],
            "deep": {"a": {"b": {"c": "d"}}}
        });
        let mut d = doc("mcp_servers:\n  a: 1\n");
        d.set_entry(S, "v", &v).unwrap();
        assert_eq!(d.get(&[S, "v"]), Some(v));
        assert!(d.text().contains("    args:\n      - \"-y\"\n      - \"@scope/pkg\"\n      - /tmp\n"));
        assert!(d.text().contains("    f: 1.0\n"));
        d.set_entry(S, "scalar", &json!("text")).unwrap();
        assert!(d.text().ends_with("  scalar: text\n"));
        d.set_entry(S, "empty", &json!({})).unwrap();
        assert!(d.text().ends_with("  empty: {}\n"));
    }

    #[test]
    fn dotted_and_quoted_keys() {
        let orig = "mcp_servers:\n  \"my.server\":\n    url: a   # keep\n  'it''s': {url: b}\n  plain.dot: 1\n";
        let mut d = doc(orig);
        assert_eq!(d.entry_names(S), ["my.server", "it's", "plain.dot"]);
        d.set_entry(S, "my.server", &json!({"url": "c"})).unwrap();
        assert_eq!(
            d.text(),
            "mcp_servers:\n  \"my.server\":\n    url: c\n  'it''s': {url: b}\n  plain.dot: 1\n",
            "replaced in place with the operator's key spelling"
        );
        d.set_entry(S, "a.b:c", &json!(1)).unwrap();
        assert!(d.text().ends_with("  plain.dot: 1\n  \"a.b:c\": 1\n"));
        assert!(d.remove_entry(S, "it's").unwrap());
        assert!(d.remove_entry(S, "a.b:c").unwrap());
        assert_eq!(d.entry_names(S), ["my.server", "plain.dot"]);
        assert_eq!(d.get(&[S, "my.server", "url"]), Some(json!("c")));
    }

    #[test]
    fn operator_blocks_with_scalars_that_look_like_structure() {
        let orig = "mcp_servers:\n  notes:\n    description: |\n      # not a comment\n\n      hal0:\n    prompt: \"two\n  lines: here\"\n  # note about next\n  next:\n    url: n\nother: >-\n  folded\n  text\n";
        let mut d = doc(orig);
        assert_eq!(d.entry_names(S), ["notes", "next"]);
        d.set_entry(S, "hal0", &json!({"url": "u"})).unwrap();
        assert!(d.text().contains("    url: n\n  hal0:\n    url: u\nother:"));
        d.remove_entry(S, "hal0").unwrap();
        assert_eq!(d.text(), orig);
        d.remove_entry(S, "notes").unwrap();
        assert_eq!(d.text(), "mcp_servers:\n  # note about next\n  next:\n    url: n\nother: >-\n  folded\n  text\n");
    }

    #[test]
    fn same_indent_sequences_and_a_section_in_the_middle() {
        let orig = "a:\n- 1\n- 2\nmcp_servers:\n  x:\n    args:\n    - p\n  y:\n  - 1\nz: 3\n";
        let mut d = doc(orig);
        assert_eq!(d.entry_names(S), ["x", "y"]);
        d.set_entry(S, "h", &json!({"args": ["q"]})).unwrap();
        assert!(d.text().contains("  - 1\n  h:\n    args:\n      - q\nz: 3\n"));
        d.remove_entry(S, "h").unwrap();
        assert_eq!(d.text(), orig);
        d.remove_entry(S, "y").unwrap();
        assert_eq!(d.text(), "a:\n- 1\n- 2\nmcp_servers:\n  x:\n    args:\n    - p\nz: 3\n");
    }

    #[test]
    fn unparsable_input_is_refused() {
        for bad in ["a: [\n", "a: 1\na: 2\n", "a:\n\tb: 1\n", "a: 1\n---\nb: 2\n", "a: 1\rb: 2\n", "a: 'x\n"] {
            let e = YamlDoc::parse(bad).unwrap_err();
            assert_eq!(e.code, UNPARSABLE, "{bad:?}: {e}");
        }
        let e = YamlDoc::parse("a:\n  b: [1,\n").unwrap_err();
        assert!(e.message.contains("line"), "{e}");
        let e = YamlDoc::parse("x: 1\ny:\n\tz: 2\n").unwrap_err();
        assert!(e.message.contains("line 3"), "{e}");
    }

    #[test]
    fn unsupported_shapes_are_refused_untouched() {
        let cases = [
            ("mcp_servers: [a]\n", "not a mapping"),
            ("- a\n- b\n", "top level"),
            ("mcp_servers: &m\n  a: 1\nother: *m\n", ""),
            ("? complex\n: 1\nmcp_servers: {}\n", ""),
            ("mcp_servers: {a: 1, # c\n  b: 2}\n", "comments"),
        ];
        for (t, msg) in cases {
            let mut d = doc(t);
            let e = d.set_entry(S, "x", &json!(1)).unwrap_err();
            assert!(e.code == UNSUPPORTED || e.code == REFUSED, "{t:?}: {e}");
            assert!(e.message.contains(msg), "{t:?}: {e}");
            assert_eq!(d.text(), t);
        }
    }

    #[test]
    fn an_edit_that_would_change_something_else_is_refused() {
        // Removing an operator entry that holds an anchor another key uses would break it.
        let orig = "mcp_servers:\n  github: &gh\n    url: g\n  hal0:\n    url: h\ncopy: *gh\n";
        let mut d = doc(orig);
        let e = d.remove_entry(S, "github").unwrap_err();
        assert_eq!(e.code, REFUSED, "{e}");
        assert_eq!(d.text(), orig);
        assert!(d.remove_entry(S, "hal0").unwrap());

        // A splice that alters another top-level key (built by hand) is refused.
        let mut d = doc(HERMES);
        let mut lines = split_lines(HERMES).unwrap();
        let at = lines.iter().position(|l| l.text == "  timeout: 60").unwrap();
        lines[at].text = "  timeout: 61".into();
        let e = d.apply(lines, S, "hal0", None).unwrap_err();
        assert_eq!(e.code, REFUSED);
        assert!(e.message.contains("other top-level keys"), "{e}");
        assert_eq!(d.text(), HERMES);

        // One that alters another entry of the section is refused too.
        let mut lines = split_lines(HERMES).unwrap();
        let at = lines.iter().position(|l| l.text == "    timeout: 120").unwrap();
        lines[at].text = "    timeout: 121".into();
        let e = d.apply(lines, S, "hal0", None).unwrap_err();
        assert!(e.message.contains("other `mcp_servers` entries"), "{e}");

        // And one that does not write the requested value.
        let lines = split_lines(HERMES).unwrap();
        let e = d.apply(lines, S, "hal0", Some(&json!(1))).unwrap_err();
        assert!(e.message.contains("read back"), "{e}");
        assert_eq!(d.text(), HERMES);

        assert!(check_untouched(&d.parsed, &parse_yaml("model: 1\n").unwrap(), &["mcp_servers".into()]).is_err());
    }

    #[test]
    fn edit_file_writes_atomically_and_keeps_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("profiles/w1/config.yaml");
        let changed = edit_file(&p, |d| d.set_entry(S, "hal0-admin", &admin())).unwrap();
        assert!(changed);
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(
            YamlDoc::parse(&std::fs::read_to_string(&p).unwrap()).unwrap().get(&[S, "hal0-admin"]),
            Some(admin())
        );

        let q = dir.path().join("config.yaml");
        std::fs::write(&q, HERMES).unwrap();
        std::fs::set_permissions(&q, std::fs::Permissions::from_mode(0o640)).unwrap();
        assert!(edit_file(&q, |d| d.set_entry(S, "hal0-admin", &admin())).unwrap());
        assert_eq!(std::fs::metadata(&q).unwrap().permissions().mode() & 0o777, 0o640);
        assert!(!edit_file(&q, |d| d.set_entry(S, "hal0-admin", &admin())).unwrap());
        assert!(edit_file(&q, |d| d.remove_entry(S, "hal0-admin").map(|_| ())).unwrap());
        assert_eq!(std::fs::read_to_string(&q).unwrap(), HERMES);
        assert!(!edit_file(&q, |d| d.remove_entry(S, "hal0-admin").map(|_| ())).unwrap());

        // A failing callback or an unparsable file leaves the file as it was.
        let e = edit_file(&q, |d| {
            d.set_entry(S, "x", &json!(1))?;
            Err(Error::internal("stop"))
        })
        .unwrap_err();
        assert_eq!(e.code, "internal");
        assert_eq!(std::fs::read_to_string(&q).unwrap(), HERMES);
        let bad = dir.path().join("bad.yaml");
        std::fs::write(&bad, "a: [\n").unwrap();
        let e = edit_file(&bad, |d| d.set_entry(S, "x", &json!(1))).unwrap_err();
        assert_eq!(e.code, UNPARSABLE);
        assert!(e.message.contains("bad.yaml"), "{e}");
        assert_eq!(std::fs::read_to_string(&bad).unwrap(), "a: [\n");

        // A symlinked config is edited through the link.
        let real = dir.path().join("real.yaml");
        let link = dir.path().join("link.yaml");
        std::fs::write(&real, "model: x\n").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(edit_file(&link, |d| d.set_entry(S, "a", &json!(1))).unwrap());
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "model: x\nmcp_servers:\n  a: 1\n");
    }
}
