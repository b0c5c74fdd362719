//! Path arguments of admin tools: checked before a gated call is queued, before an
//! autonomous call runs, and again when an approved call executes. A value is a string or
//! an integer below 2^53; each is percent-encoded as one URL segment (`{*name}` arguments
//! segment by segment).

use crate::error::{Error, Result};
use serde_json::Value;

fn invalid(name: &str, why: &str) -> Error {
    Error::invalid("mcp.invalid_arg", format!("path argument `{name}` {why}"))
}

/// Characters a card would not show as they are: controls and invisible formatting.
fn invisible(c: char) -> bool {
    c.is_control()
        || matches!(c as u32,
            0x00AD | 0x034F | 0x061C | 0x115F | 0x1160 | 0x17B4 | 0x17B5 | 0x180B..=0x180F | 0x200B..=0x200F
            | 0x2028..=0x202E | 0x2060..=0x206F | 0x3164 | 0xFE00..=0xFE0F | 0xFEFF | 0xFFA0 | 0xFFF0..=0xFFFB
            | 0xE0000..=0xE007F | 0xE0100..=0xE01EF)
}

/// One segment's text: refused when empty, `.`, `..`, holding `/`, or invisible characters.
fn check_segment(name: &str, s: &str) -> Result<()> {
    if s.is_empty() {
        return Err(invalid(name, "is empty"));
    }
    if s == "." || s == ".." {
        return Err(invalid(name, "may not be `.` or `..`"));
    }
    if s.contains('/') {
        return Err(invalid(name, "may not contain `/`"));
    }
    if s.chars().any(invisible) {
        return Err(invalid(name, "contains a control or invisible formatting character"));
    }
    Ok(())
}

/// The text of a path argument value (string, or integer below 2^53).
fn text_of(name: &str, v: &Value) -> Result<String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => {
            if let Some(i) = n.as_i64().filter(|i| i.unsigned_abs() < (1u64 << 53)) {
                Ok(i.to_string())
            } else if let Some(u) = n.as_u64().filter(|u| *u < (1u64 << 53)) {
                Ok(u.to_string())
            } else {
                Err(invalid(name, "must be a string or an integer below 2^53 (got a float or a larger number)"))
            }
        }
        Value::Null => Err(invalid(name, "must be a string or an integer (got null)")),
        Value::Bool(_) => Err(invalid(name, "must be a string or an integer (got a boolean)")),
        Value::Array(_) => Err(invalid(name, "must be a string or an integer (got a list)")),
        Value::Object(_) => Err(invalid(name, "must be a string or an integer (got an object)")),
    }
}

/// Percent-encode one segment: unreserved characters stay, everything else is `%XX`.
pub fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Fill `template`'s path arguments from `args`; every value checked and encoded.
pub fn fill_path(template: &str, args: &serde_json::Map<String, Value>) -> Result<String> {
    let mut out = String::new();
    for seg in template.split('/').skip(1) {
        out.push('/');
        let Some(inner) = seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) else {
            out.push_str(seg);
            continue;
        };
        let (name, multi) = match inner.strip_prefix('*') {
            Some(n) => (n, true),
            None => (inner, false),
        };
        let v = args
            .get(name)
            .ok_or_else(|| Error::invalid("mcp.missing_arg", format!("path argument `{name}` is required")))?;
        let text = text_of(name, v)?;
        if multi {
            if text.is_empty() {
                return Err(invalid(name, "is empty"));
            }
            let parts: Vec<&str> = text.split('/').collect();
            for p in &parts {
                check_segment(name, p).map_err(|_| {
                    invalid(name, "has an empty, `.`, `..` or invisible segment (no leading, trailing or doubled `/`)")
                })?;
            }
            out.push_str(&parts.iter().map(|p| encode_segment(p)).collect::<Vec<_>>().join("/"));
        } else {
            check_segment(name, &text)?;
            out.push_str(&encode_segment(&text));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fill(t: &str, v: Value) -> Result<String> {
        fill_path(t, v.as_object().unwrap())
    }

    #[test]
    fn accepted_shapes() {
        let t = "/api/x/{name}/y";
        for (v, want) in [
            (json!("abc"), "/api/x/abc/y"),
            (json!(42), "/api/x/42/y"),
            (json!(-7), "/api/x/-7/y"),
            (json!(9007199254740991u64), "/api/x/9007199254740991/y"),
            (json!("a b?c#d%e:f"), "/api/x/a%20b%3Fc%23d%25e%3Af/y"),
            (json!("é"), "/api/x/%C3%A9/y"),
            (json!("..."), "/api/x/.../y"),
            (json!(".hidden"), "/api/x/.hidden/y"),
        ] {
            assert_eq!(fill(t, json!({"name": v})).unwrap(), want, "{v}");
        }
        assert_eq!(fill("/api/f/{*relpath}", json!({"relpath": "styles/a b.txt"})).unwrap(), "/api/f/styles/a%20b.txt");
    }

    #[test]
    fn refused_shapes() {
        let t = "/api/x/{name}";
        for v in [
            json!(null),
            json!(true),
            json!(1.5),
            json!(9007199254740992u64),
            json!([1]),
            json!({"a": 1}),
            json!(""),
            json!("."),
            json!(".."),
            json!("a/b"),
            json!("a\u{0}b"),
            json!("tab\there"),
            json!("zero\u{200B}width"),
            json!("bidi\u{202E}override"),
            json!("\u{FEFF}bom"),
            json!("line\u{2028}sep"),
        ] {
            assert_eq!(fill(t, json!({"name": v.clone()})).unwrap_err().code, "mcp.invalid_arg", "{v}");
        }
        assert_eq!(fill(t, json!({})).unwrap_err().code, "mcp.missing_arg");
        for bad in ["/lead", "trail/", "dou//ble", "a/../b", "./a", "a/\u{200B}"] {
            assert_eq!(fill("/api/f/{*p}", json!({"p": bad})).unwrap_err().code, "mcp.invalid_arg", "{bad}");
        }
    }
}
