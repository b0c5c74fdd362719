//! Path arguments of admin tools: checked before a gated call is queued, before an
//! autonomous call runs, and again when an approved call executes. A value is a string or
//! an integer below 2^53; each is percent-encoded as one URL segment (`{*name}` arguments
//! segment by segment).

use crate::base::error::{Error, Result};
use crate::base::term::hidden_char;
use serde_json::Value;

fn invalid(name: &str, why: &str) -> Error {
    Error::invalid("mcp.invalid_arg", format!("path argument `{name}` {why}"))
}

/// Characters a card would not show as they are: every control character (tab and line
/// breaks too) and the skill card's hidden set ([`hidden_char`]: format, private-use,
/// unassigned, separators, default-ignorable, variation selectors).
fn invisible(c: char) -> bool {
    c.is_control() || hidden_char(c).is_some()
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

/// Check `template`'s path arguments in `args` (as [`fill_path`] does) and give each as the
/// text the route receives (an integer becomes its decimal string).
pub fn check_path_args(
    template: &str,
    mut args: serde_json::Map<String, Value>,
) -> Result<serde_json::Map<String, Value>> {
    fill_path(template, &args)?;
    for (name, _) in crate::ops::routes::path_args(template) {
        if let Some(v) = args.get_mut(name) {
            *v = Value::String(text_of(name, v)?);
        }
    }
    Ok(args)
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
        // Format characters, named one by one (the list the card rules cover) ...
        let named = [
            0x00AD, 0x061C, 0x180E, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E,
            0x2060, 0x2066, 0x2067, 0x2068, 0x2069, 0xFEFF, 0xFFF9,
            // ... and the ones a hand-written list missed (Arabic number signs, the Syriac
            // abbreviation mark, Kaithi and Egyptian hieroglyph format controls, shorthand
            // format controls, musical symbol beams and slurs), private use, unassigned.
            0x0600, 0x0605, 0x06DD, 0x070F, 0x0890, 0x08E2, 0x110BD, 0x110CD, 0x13430, 0x13438, 0x1BCA0, 0x1BCA3,
            0x1D173, 0x1D17A, 0xE000, 0xF0000, 0x0378, 0xFFFF,
        ];
        for cp in named {
            let c = char::from_u32(cp).unwrap();
            let v = format!("a{c}b");
            let e = fill(t, json!({"name": v})).unwrap_err();
            assert_eq!(e.code, "mcp.invalid_arg", "U+{cp:04X}");
            assert!(e.message.contains("invisible formatting character"), "U+{cp:04X}: {}", e.message);
            assert_eq!(fill("/api/f/{*p}", json!({"p": format!("ok/{v}")})).unwrap_err().code, "mcp.invalid_arg");
        }
        // Every Cf character of the planes that hold them is refused.
        let cf = regex::Regex::new(r"^\p{Cf}$").unwrap();
        let planes = (0..0x2_0000u32).chain(0xE_0000..0xE_1000);
        let mut n = 0;
        for c in planes.filter_map(char::from_u32) {
            let mut b = [0u8; 4];
            if cf.is_match(c.encode_utf8(&mut b)) {
                n += 1;
                assert!(check_segment("name", &format!("x{c}")).is_err(), "U+{:04X} accepted", u32::from(c));
            }
        }
        assert!(n > 150, "only {n} format characters found");
        for bad in ["/lead", "trail/", "dou//ble", "a/../b", "./a", "a/\u{200B}"] {
            assert_eq!(fill("/api/f/{*p}", json!({"p": bad})).unwrap_err().code, "mcp.invalid_arg", "{bad}");
        }
    }

    /// `%XX` back to bytes.
    fn decode(seg: &str) -> Vec<u8> {
        let b = seg.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'%' {
                out.push(u8::from_str_radix(&seg[i + 1..i + 3], 16).unwrap());
                i += 3;
            } else {
                out.push(b[i]);
                i += 1;
            }
        }
        out
    }

    fn text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            any::<String>(),
            "[a-zA-Z0-9 ./%?#_~-]{0,24}",
            "(\\.{1,3}|[a-z]{1,4})(/(\\.{1,3}|[a-z]{0,4})){0,4}",
            "[a-z]{0,4}[\u{0}-\u{1f}\u{7f}-\u{9f}\u{200b}-\u{200f}\u{202a}-\u{202e}\u{2066}-\u{2069}\u{feff}\u{ad}\u{61c}\u{1d173}][a-z]{0,4}",
        ]
    }

    proptest::proptest! {
        #![proptest_config(crate::base::prop::config(2048))]

        /// A path argument never panics; what it fills in is only unreserved characters and
        /// `%XX`, decodes back to the value, and never holds a hidden character, an empty,
        /// `.` or `..` segment, or (for a single segment) a `/`.
        #[test]
        fn fill_path_encodes_or_refuses(v in text(), multi in proptest::bool::ANY) {
            let t = if multi { "/api/f/{*p}/end" } else { "/api/x/{p}/end" };
            let r = fill(t, json!({"p": v}));
            let hidden = v.chars().any(invisible);
            let parts: Vec<&str> = if multi { v.split('/').collect() } else { vec![v.as_str()] };
            let bad_part = parts.iter().any(|p| p.is_empty() || *p == "." || *p == ".." || (!multi && p.contains('/')));
            match r {
                Ok(path) => {
                    proptest::prop_assert!(!hidden && !bad_part, "{v:?} accepted as {path}");
                    let inner = path.strip_prefix(if multi { "/api/f/" } else { "/api/x/" }).unwrap();
                    let inner = inner.strip_suffix("/end").unwrap();
                    proptest::prop_assert!(inner.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~%/".contains(&b)));
                    let segs: Vec<&str> = inner.split('/').collect();
                    proptest::prop_assert_eq!(segs.len(), parts.len());
                    for (seg, part) in segs.iter().zip(&parts) {
                        proptest::prop_assert_eq!(decode(seg), part.as_bytes().to_vec());
                    }
                }
                Err(e) => {
                    proptest::prop_assert_eq!(e.code, "mcp.invalid_arg");
                    proptest::prop_assert!(hidden || bad_part, "{v:?} refused: {}", e.message);
                }
            }
        }
    }
}
