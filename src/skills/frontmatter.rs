//! The frontmatter of a `SKILL.md`: the leading `---` block, read as YAML.
//!
//! The block starts on the very first line (`---`, optional trailing spaces or tabs, then a
//! line break) and ends at the next line that is `---` (again with optional trailing spaces
//! or tabs, then a line break or the end of the text). Both `\n` and `\r\n` line breaks are
//! accepted. Nothing may precede the opening line, not even a BOM (the push check refuses a
//! BOM anyway).

use serde_yaml_ng::{Mapping, Value};

/// Why a `SKILL.md` has no readable frontmatter.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Problem {
    /// No `---` block at the start (or no closing `---` line).
    Missing,
    /// The block is not valid YAML; the parser's message.
    Yaml(String),
    /// The block is valid YAML but not a mapping (empty, a list, a scalar).
    NotMapping,
}

/// Is `line` (without its line break) a `---` delimiter?
fn is_delimiter(line: &str) -> bool {
    line.strip_suffix('\r').unwrap_or(line).trim_end_matches([' ', '\t']) == "---"
}

/// The YAML text of the frontmatter block (between the delimiter lines), or `None`.
pub(crate) fn block(skill_md: &str) -> Option<&str> {
    let first_end = skill_md.find('\n')?;
    if !is_delimiter(&skill_md[..first_end]) {
        return None;
    }
    let start = first_end + 1;
    let mut pos = start;
    loop {
        let end = skill_md[pos..].find('\n').map_or(skill_md.len(), |i| pos + i);
        if is_delimiter(&skill_md[pos..end]) {
            return Some(&skill_md[start..pos]);
        }
        if end == skill_md.len() {
            return None;
        }
        pos = end + 1;
    }
}

/// The frontmatter as a YAML mapping.
pub(crate) fn parse(skill_md: &str) -> Result<Mapping, Problem> {
    let yaml = block(skill_md).ok_or(Problem::Missing)?;
    match serde_yaml_ng::from_str::<Value>(yaml) {
        Ok(Value::Mapping(m)) => Ok(m),
        Ok(Value::Tagged(t)) => match t.value {
            Value::Mapping(m) => Ok(m),
            _ => Err(Problem::NotMapping),
        },
        Ok(_) => Err(Problem::NotMapping),
        Err(e) => Err(Problem::Yaml(e.to_string())),
    }
}

/// The string value of `key` in `map` (`None` when absent or not a string).
pub(crate) fn text<'a>(map: &'a Mapping, key: &str) -> Option<&'a str> {
    match map.get(key)? {
        Value::String(s) => Some(s),
        _ => None,
    }
}

/// `category`, else `metadata.category`; a string, else `None`.
pub(crate) fn category(map: &Mapping) -> Option<String> {
    if let Some(c) = text(map, "category") {
        return Some(c.to_owned());
    }
    match map.get("metadata")? {
        Value::Mapping(meta) => text(meta, "category").map(str::to_owned),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_table() {
        let rows: &[(&str, Option<&str>)] = &[
            ("---\nname: a\n---\nbody", Some("name: a\n")),
            ("---\r\nname: a\r\n---\r\nbody", Some("name: a\r\n")),
            ("---  \nname: a\n--- \t\n", Some("name: a\n")),
            ("---\nname: a\n---", Some("name: a\n")),
            ("---\n---\n", Some("")),
            ("---\nname: a\n", None),
            ("\n---\nname: a\n---\n", None),
            (" ---\nname: a\n---\n", None),
            ("----\nname: a\n---\n", None),
            ("---\nname: a\n----\n", None),
            ("", None),
            ("---", None),
        ];
        for (input, want) in rows {
            assert_eq!(block(input), *want, "{input:?}");
        }
    }

    #[test]
    fn parse_and_fields() {
        let m = parse("---\nname: a\ndescription: d\nmetadata:\n  category: tools\n---\n").unwrap();
        assert_eq!(text(&m, "name"), Some("a"));
        assert_eq!(category(&m).as_deref(), Some("tools"));
        let m = parse("---\nname: a\ncategory: top\nmetadata:\n  category: tools\n---\n").unwrap();
        assert_eq!(category(&m).as_deref(), Some("top"));
        let m = parse("---\nname: a\ncategory: 3\n---\n").unwrap();
        assert_eq!(category(&m), None);
        assert_eq!(parse("---\n---\n"), Err(Problem::NotMapping));
        assert_eq!(parse("---\n- a\n---\n"), Err(Problem::NotMapping));
        assert!(matches!(parse("---\nname: [a\n---\n"), Err(Problem::Yaml(_))));
        assert_eq!(parse("# no frontmatter\n"), Err(Problem::Missing));
    }
}
