//! Checking and normalising what callers send the memory engine: note text, tags, ids,
//! timestamps, metadata. Every refusal is `mcp.memory_schema` with a message that says
//! what to send instead.

use super::schema_error;
use crate::base::error::{Error, Result};
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// A note's or directive's text is at most this many bytes.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;
pub const MAX_TAGS: usize = 64;
pub const MAX_TAG_CHARS: usize = 100;
pub const MAX_ENTITIES: usize = 100;
pub const MAX_METADATA_BYTES: usize = 16 * 1024;
pub const MAX_IDS: usize = 1000;
/// The fact types a note may carry (`world` unless curated).
pub const FACT_TYPES: &[&str] = &["world", "experience", "opinion", "observation"];
pub const STATES: &[&str] = &["active", "invalidated"];

/// Trimmed, non-empty, at most [`MAX_TEXT_BYTES`], no NUL.
pub fn text(s: &str, what: &str) -> Result<String> {
    let t = s.trim();
    if t.is_empty() {
        return Err(schema_error(format!("`{what}` must not be empty")));
    }
    if t.len() > MAX_TEXT_BYTES {
        return Err(schema_error(format!(
            "`{what}` is {} bytes; at most {MAX_TEXT_BYTES} bytes are accepted (split it into several notes)",
            t.len()
        )));
    }
    if t.contains('\0') {
        return Err(schema_error(format!("`{what}` must not contain a NUL character")));
    }
    Ok(t.to_string())
}

/// A comma-separated tag string as a list.
pub fn split_tags(s: &str) -> Vec<String> {
    s.split(',').map(str::to_string).collect()
}

/// Tags trimmed, lower-cased, inner whitespace collapsed to one space, empties dropped,
/// duplicates removed (first kept).
pub fn tags(raw: &[String]) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for t in raw {
        let t = t.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
        if t.is_empty() {
            continue;
        }
        if t.chars().count() > MAX_TAG_CHARS {
            return Err(schema_error(format!("a tag is limited to {MAX_TAG_CHARS} characters")));
        }
        if t.chars().any(char::is_control) {
            return Err(schema_error("a tag must not contain control characters"));
        }
        if !out.contains(&t) {
            out.push(t);
        }
    }
    if out.len() > MAX_TAGS {
        return Err(schema_error(format!("at most {MAX_TAGS} tags per note")));
    }
    Ok(out)
}

/// Entities: trimmed, non-empty, deduplicated (case kept).
pub fn entities(raw: &[String]) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for e in raw {
        let e = e.trim();
        if e.is_empty() || out.iter().any(|o| o == e) {
            continue;
        }
        if e.chars().count() > 200 || e.chars().any(char::is_control) {
            return Err(schema_error("an entity is at most 200 characters without control characters"));
        }
        out.push(e.to_string());
    }
    if out.len() > MAX_ENTITIES {
        return Err(schema_error(format!("at most {MAX_ENTITIES} entities per note")));
    }
    Ok(out)
}

/// RFC 3339 (any offset) or a bare `YYYY-MM-DD`, normalised to UTC `…Z` with second
/// precision so that stored timestamps compare as strings.
pub fn time(s: &str, field: &str) -> Result<String> {
    let s = s.trim();
    let bad =
        || schema_error(format!("`{field}` must be an RFC 3339 timestamp such as 2025-01-31T12:00:00Z, or a date"));
    let t = match OffsetDateTime::parse(s, &Rfc3339) {
        Ok(t) => t,
        // A bare date is midnight UTC of that day.
        Err(_) if s.len() == 10 => OffsetDateTime::parse(&format!("{s}T00:00:00Z"), &Rfc3339).map_err(|_| bad())?,
        Err(_) => return Err(bad()),
    };
    let t = t.to_offset(time::UtcOffset::UTC).replace_nanosecond(0).map_err(|_| bad())?;
    t.format(&Rfc3339).map_err(|_| bad())
}

/// A JSON object of at most [`MAX_METADATA_BYTES`]; absent is `{}`.
pub fn metadata(v: Option<Value>) -> Result<Value> {
    let v = v.unwrap_or_else(|| Value::Object(Default::default()));
    if !v.is_object() {
        return Err(schema_error("`metadata` must be a JSON object"));
    }
    if v.to_string().len() > MAX_METADATA_BYTES {
        return Err(schema_error(format!("`metadata` is limited to {MAX_METADATA_BYTES} bytes of JSON")));
    }
    Ok(v)
}

/// `^[a-zA-Z0-9_-]{1,64}$`.
pub fn document_id(s: &str) -> Result<String> {
    if super::namespace::valid_name(s) {
        Ok(s.to_string())
    } else {
        Err(schema_error("`document_id` must be 1 to 64 letters, digits, `_` or `-`"))
    }
}

/// An id hal0 handed out (`mem_…`, `dir_…`, `op_…`): same character rule as names.
pub fn id(s: &str, field: &str) -> Result<String> {
    let s = s.trim();
    if super::namespace::valid_name(s) {
        Ok(s.to_string())
    } else {
        Err(schema_error(format!("`{field}` is not a memory id (1 to 64 letters, digits, `_` or `-`)")))
    }
}

/// A non-empty list of note ids, deduplicated, at most [`MAX_IDS`].
pub fn ids(raw: &[String]) -> Result<Vec<String>> {
    if raw.is_empty() {
        return Err(schema_error("`ids` must be a non-empty list of memory ids"));
    }
    if raw.len() > MAX_IDS {
        return Err(schema_error(format!("at most {MAX_IDS} ids per call")));
    }
    let mut out: Vec<String> = Vec::with_capacity(raw.len());
    for r in raw {
        let i = id(r, "ids")?;
        if !out.contains(&i) {
            out.push(i);
        }
    }
    Ok(out)
}

pub fn one_of(s: &str, allowed: &[&str], field: &str) -> Result<String> {
    let s = s.trim();
    if allowed.contains(&s) {
        Ok(s.to_string())
    } else {
        Err(schema_error(format!("`{field}` must be one of {} (got `{s}`)", allowed.join(", "))))
    }
}

/// `n` within `lo..=hi`, else the default when absent.
pub fn range(n: Option<i64>, lo: i64, hi: i64, default: i64, field: &str) -> Result<i64> {
    match n {
        None => Ok(default),
        Some(n) if (lo..=hi).contains(&n) => Ok(n),
        Some(n) => Err(schema_error(format!("`{field}` must be between {lo} and {hi} (got {n})"))),
    }
}

/// A fresh id `<prefix>_<16 hex>`.
pub fn new_id(prefix: &str) -> Result<String> {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).map_err(|e| Error::internal(format!("no randomness: {e}")))?;
    Ok(format!("{prefix}_{}", hex::encode(b)))
}

/// A fresh id `<prefix>_<16 hex>` whose first 8 hex digits are the time in seconds, so
/// that ids made together sit together in the store's id index (a bulk add then touches a
/// few index pages, not one per note). The other 32 bits are random: the rare id taken
/// twice in one second is refused by the store and made again.
pub fn new_sorted_id(prefix: &str) -> Result<String> {
    let mut b = [0u8; 4];
    getrandom::fill(&mut b).map_err(|e| Error::internal(format!("no randomness: {e}")))?;
    let secs = OffsetDateTime::now_utc().unix_timestamp() as u32;
    Ok(format!("{prefix}_{secs:08x}{}", hex::encode(b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn tags_are_normalised_and_deduplicated() {
        assert_eq!(tags(&v(&[" Rust ", "rust", "", "  Two   words ", "RUST"])).unwrap(), v(&["rust", "two words"]));
        assert_eq!(tags(&split_tags("a, b ,,A")).unwrap(), v(&["a", "b"]));
        assert!(tags(&v(&[&"x".repeat(101)])).is_err());
        assert!(tags(&v(&["a\u{7}"])).is_err());
    }

    #[test]
    fn times_normalise_to_utc_seconds() {
        assert_eq!(time("2025-01-31T12:00:00.75+02:00", "after").unwrap(), "2025-01-31T10:00:00Z");
        assert_eq!(time("2025-01-31", "after").unwrap(), "2025-01-31T00:00:00Z");
        assert_eq!(time("yesterday", "before").unwrap_err().code, "mcp.memory_schema");
    }

    #[test]
    fn text_ids_and_ranges() {
        assert_eq!(text("  hi ", "text").unwrap(), "hi");
        assert!(text(" \n", "text").is_err());
        assert!(text(&"x".repeat(MAX_TEXT_BYTES + 1), "text").is_err());
        assert!(document_id("doc-1_A").is_ok() && document_id("a/b").is_err() && document_id("").is_err());
        assert_eq!(ids(&v(&["mem_1", "mem_1", "mem_2"])).unwrap(), v(&["mem_1", "mem_2"]));
        assert!(ids(&[]).is_err());
        assert_eq!(range(None, 1, 200, 10, "limit").unwrap(), 10);
        assert!(range(Some(0), 1, 200, 10, "limit").is_err());
        assert!(range(Some(201), 1, 200, 10, "limit").is_err());
        assert!(metadata(Some(serde_json::json!([1]))).is_err());
        assert!(new_id("mem").unwrap().len() == 20);
        let (a, b) = (new_sorted_id("mem").unwrap(), new_sorted_id("mem").unwrap());
        assert!(a.len() == 20 && a.starts_with("mem_") && a != b);
    }
}
