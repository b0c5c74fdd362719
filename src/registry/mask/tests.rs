//! Tests of the proxy's masking rule: unit cases for each encoding and part, and property
//! tests (random secrets, every JSON escaping of every character, every split across
//! content blocks) of the wire path's [`mask_json`] and of rmcp's path ([`super::super::proxy::mask_in`]).

use super::*;
use proptest::prelude::*;
use serde_json::json;

fn n(values: &[&str]) -> Vec<String> {
    needles(values.iter().copied())
}

/// The text a consumer reads from a masked message: every string, the blocks' text joined.
fn decoded(out: &str) -> String {
    let v: Value = serde_json::from_str(out).unwrap();
    let mut all = String::new();
    collect(&v, &mut all);
    all
}

fn collect(v: &Value, all: &mut String) {
    match v {
        Value::String(s) => {
            all.push_str(s);
            all.push('\u{1f}');
        }
        Value::Array(a) => {
            // Joined, as a consumer reading the blocks one after another sees them.
            let texts: String = a.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect();
            all.push_str(&texts);
            all.push('\u{1f}');
            a.iter().for_each(|x| collect(x, all));
        }
        Value::Object(m) => m.iter().for_each(|(k, x)| {
            all.push_str(k);
            all.push('\u{1f}');
            collect(x, all)
        }),
        other => all.push_str(&other.to_string()),
    }
}

#[test]
fn the_token_of_a_scheme_and_the_parts_of_basic_are_needles() {
    assert_eq!(n(&["Bearer abc123xyz"]), ["Bearer abc123xyz", "abc123xyz"]);
    // `Basic base64("me:hunter2!")`
    let got = n(&["Basic bWU6aHVudGVyMiE="]);
    for want in ["Basic bWU6aHVudGVyMiE=", "bWU6aHVudGVyMiE=", "me:hunter2!", "hunter2!"] {
        assert!(got.iter().any(|g| g == want), "{want} in {got:?}");
    }
    let got = n(&["session=0123456789abcdef; theme=dark"]);
    assert!(got.iter().any(|g| g == "0123456789abcdef"), "{got:?}");
    assert!(!got.iter().any(|g| g == "dark"), "short list values are not needles: {got:?}");
    assert!(n(&["abc"]).is_empty(), "very short values would mask ordinary text");
}

#[test]
fn a_secret_with_quotes_and_backslashes_is_masked_as_json_carries_it() {
    let secret = r#"pa"ss\word-42"#;
    let msg = json!({"content": [{"type": "text", "text": format!("key: {secret}")}]}).to_string();
    assert!(msg.contains(r#"pa\"ss\\word-42"#), "{msg}");
    let out = mask_json(&msg, &n(&[secret])).unwrap();
    assert!(!decoded(&out).contains(secret), "{out}");
    assert!(out.contains(MASK), "{out}");
}

#[test]
fn u_escapes_of_any_character_are_decoded_first() {
    // Go writes `&` as `\u0026`; any character may be written so, a non-BMP one as a pair.
    let secret = "tok&en😀-9f8e7d";
    let msg = r#"{"result":{"content":[{"type":"text","text":"a tok\u0026\u0065n\ud83d\ude00-9f8e7d b"}]}}"#;
    let out = mask_json(msg, &n(&[secret])).unwrap();
    assert!(!decoded(&out).contains(secret), "{out}");
    assert_eq!(decoded(&out).matches(MASK).count(), 2, "{out}");
    let msg = r#"{"params":{"message":"x\/y tok\u0026en\uD83D\uDE00-9f8e7d"}}"#;
    assert!(!decoded(&mask_json(msg, &n(&[secret])).unwrap()).contains(secret));
}

#[test]
fn text_that_is_json_itself_is_read_through_its_escapes() {
    // A tool that answers JSON text (like the test upstream's `whoami`) escapes the secret a
    // second time: the consumer reads `\"` inside the text as a quote.
    let secret = r#"up-"q\uo&te-8f3a2b"#;
    let inner = json!({"authorization": format!("Bearer {secret}")}).to_string();
    let msg = json!({"content": [{"type": "text", "text": inner}]}).to_string();
    let out = mask_json(&msg, &n(&[&format!("Bearer {secret}")])).unwrap();
    let text = decoded(&out);
    assert!(!text.contains(r#"up-\"q\\uo&te-8f3a2b"#) && !text.contains(secret), "{out}");
    assert!(text.contains(MASK), "{out}");
    // Percent-encoded and HTML forms too.
    for form in ["up-%22q%5Cuo%26te-8f3a2b", "up-&quot;q\\uo&amp;te-8f3a2b", "up-&#34;q&#x5c;uo&te-8f3a2b"] {
        let msg = json!({"content": [{"type": "text", "text": format!("see {form}")}]}).to_string();
        let out = mask_json(&msg, &n(&[secret])).unwrap();
        assert!(!decoded(&out).contains(form) && out.contains(MASK), "{form}: {out}");
    }
}

#[test]
fn the_token_alone_is_masked_when_the_header_value_is_bearer_token() {
    let msg = json!({"content": [{"type": "text", "text": "token is ghx-0123456789abcdef"}]}).to_string();
    let out = mask_json(&msg, &n(&["Bearer ghx-0123456789abcdef"])).unwrap();
    assert!(!out.contains("ghx-0123456789abcdef"), "{out}");
}

#[test]
fn a_secret_split_across_content_blocks_is_masked_in_each_part() {
    let secret = "split-secret-77aa";
    for cut in 1..secret.len() {
        let (a, b) = secret.split_at(cut);
        let msg = json!({"content": [
            {"type": "text", "text": format!("one {a}")},
            {"type": "text", "text": format!("{b} two")},
        ]})
        .to_string();
        let out = mask_json(&msg, &n(&[secret])).unwrap();
        let v: Value = serde_json::from_str(&out).unwrap();
        let joined =
            format!("{}{}", v["content"][0]["text"].as_str().unwrap(), v["content"][1]["text"].as_str().unwrap());
        assert!(!joined.contains(secret) && joined.starts_with("one ") && joined.ends_with(" two"), "{cut}: {joined}");
    }
}

#[test]
fn keys_and_numbers_holding_a_secret_are_masked() {
    let msg = r#"{"s3cr3t-key-1":1,"pin":987654321}"#;
    let out = mask_json(msg, &n(&["s3cr3t-key-1", "87654321"])).unwrap();
    assert!(!out.contains("s3cr3t-key-1") && !out.contains("87654321"), "{out}");
}

#[test]
fn a_message_without_a_secret_is_passed_as_it_is() {
    let needles = n(&["Bearer s3cr3t-value"]);
    for msg in [
        r#"{"content":[{"type":"text","text":"line\nline \"q\" \\ 50% done"}]}"#,
        r#"{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}"#,
        r#"{"content":[{"type":"text","text":"\u0041 &amp; %41 + x"}]}"#,
    ] {
        assert!(matches!(mask_json(msg, &needles), Some(Cow::Borrowed(_))), "{msg}");
    }
    // Not read at all when nothing could hold the secret (so not even JSON is required).
    assert!(matches!(mask_json("not json, line\\n", &needles), Some(Cow::Borrowed(_))));
    assert!(mask_json("not json s3cr3t-value", &needles).is_none());
}

// ---- properties ----

/// A character of a secret: mostly ASCII, with the ones JSON, URLs and HTML encode, control
/// characters, and non-ASCII ones (some outside the BMP).
fn secret_char() -> impl Strategy<Value = char> {
    prop_oneof![
        6 => proptest::char::range('!', '~'),
        2 => prop::sample::select(vec!['"', '\\', '/', '&', '<', '>', '%', '+', '\'', '=', ':']),
        1 => prop::sample::select(vec!['\n', '\t', '\u{1}', '\u{7f}', '\u{2028}']),
        1 => prop::sample::select(vec!['é', 'ß', '中', '😀', '𝄞', '\u{ffff}']),
    ]
}

fn secret() -> impl Strategy<Value = String> {
    prop::collection::vec(secret_char(), 4..24).prop_map(|v| v.into_iter().collect())
}

/// How an operator stored the secret (the value itself, `Bearer <it>`, `Basic
/// base64(user:<it>)`), given the secret that then shows in output.
fn stored(secret: &str, form: u8) -> String {
    match form % 3 {
        0 => secret.to_string(),
        1 => format!("Bearer {secret}"),
        _ => format!("Basic {}", b64(format!("user:{secret}").as_bytes())),
    }
}

fn b64(b: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in b.chunks(3) {
        let n =
            (u32::from(c[0]) << 16) | (u32::from(*c.get(1).unwrap_or(&0)) << 8) | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `s` as a JSON string literal, each character written as `how` picks (cycled): raw when
/// JSON allows it, its short escape, `\uXXXX` (either hex case; a surrogate pair outside
/// the BMP), `\/` for a slash.
fn encode(s: &str, how: &[u8]) -> String {
    let mut out = String::from("\"");
    for (i, c) in s.chars().enumerate() {
        let h = how[i % how.len()];
        let short = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '/' => Some("\\/"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            '\n' => Some("\\n"),
            '\r' => Some("\\r"),
            '\t' => Some("\\t"),
            _ => None,
        };
        let must = c == '"' || c == '\\' || (c as u32) < 0x20;
        match h % 3 {
            0 if !must => out.push(c),
            1 if short.is_some() => out.push_str(short.unwrap()),
            _ => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    if h.is_multiple_of(2) {
                        out.push_str(&format!("\\u{u:04x}"))
                    } else {
                        out.push_str(&format!("\\u{u:04X}"))
                    }
                }
            }
        }
    }
    out.push('"');
    out
}

proptest! {
    #![proptest_config(crate::base::prop::config(256))]

    /// The wire path: a secret in a result split across blocks at any points, or in a
    /// progress message or an error, each string written with any JSON escaping, never
    /// reaches the consumer's decoded text.
    #[test]
    fn no_json_escaping_or_split_lets_a_secret_through(
        secret in secret(),
        form in 0u8..3,
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..4),
        how in prop::collection::vec(any::<u8>(), 1..16),
        shape in 0u8..3,
        before in "[a-z ]{0,8}",
        after in "[a-z ]{0,8}",
    ) {
        let text = format!("{before}{secret}{after}");
        let chars: Vec<char> = text.chars().collect();
        let mut at: Vec<usize> = cuts.iter().map(|i| i.index(chars.len() + 1)).collect();
        at.sort_unstable();
        let msg = match shape {
            0 => {
                let mut parts = Vec::new();
                let mut from = 0;
                for &c in at.iter().chain(std::iter::once(&chars.len())) {
                    let part: String = chars[from..c].iter().collect();
                    parts.push(format!(r#"{{"type":"text","text":{}}}"#, encode(&part, &how)));
                    from = c;
                }
                format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{}]}}}}"#, parts.join(","))
            }
            1 => format!(r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":"t","progress":1,"message":{}}}}}"#, encode(&text, &how)),
            _ => format!(r#"{{"code":-32603,"message":{},"data":{{"k":[{}]}}}}"#, encode(&text, &how), encode(&secret, &how)),
        };
        let needles = needles([stored(&secret, form).as_str()]);
        let out = mask_json(&msg, &needles).expect("valid JSON is masked, not withheld");
        let seen = decoded(&out);
        prop_assert!(!seen.contains(&secret), "{secret:?} in {seen:?} from {msg}");
        prop_assert!(seen.contains(MASK));
    }

    /// rmcp's path masks by the same rule: the decoded blocks of a `CallToolResult`.
    #[test]
    fn rmcps_path_masks_splits_and_parts_the_same_way(
        secret in secret(),
        form in 0u8..3,
        cut in any::<prop::sample::Index>(),
    ) {
        use rmcp::model::{CallToolResult, ContentBlock};
        let chars: Vec<char> = secret.chars().collect();
        let c = cut.index(chars.len() + 1);
        let (a, b): (String, String) = (chars[..c].iter().collect(), chars[c..].iter().collect());
        let r = CallToolResult::success(vec![ContentBlock::text(format!("x {a}")), ContentBlock::text(format!("{b} y"))]);
        let needles = needles([stored(&secret, form).as_str()]);
        let out = crate::proxy::mask_in(r, &needles).expect("masked, not withheld");
        let seen = decoded(&serde_json::to_string(&out).unwrap());
        prop_assert!(!seen.contains(&secret), "{secret:?} in {seen:?}");
    }

    /// A message without the secret keeps its meaning (whether or not it had to be read).
    #[test]
    fn text_without_the_secret_is_unchanged(
        secret in secret(),
        text in "[ -~\n]{0,40}",
        how in prop::collection::vec(any::<u8>(), 1..16),
    ) {
        prop_assume!(!needles([secret.as_str()]).iter().any(|n| !find(&text, std::slice::from_ref(n)).is_empty()));
        let msg = format!(r#"{{"content":[{{"type":"text","text":{}}}]}}"#, encode(&text, &how));
        let out = mask_json(&msg, &needles([secret.as_str()])).unwrap();
        let (a, b): (Value, Value) = (serde_json::from_str(&msg).unwrap(), serde_json::from_str(&out).unwrap());
        prop_assert_eq!(a, b);
    }
}
