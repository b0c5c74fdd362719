//! Property tests of the redactor: a secret of any shape, put in random text and then
//! encoded (plain, inside a JSON string, percent-encoded, with `\u0022` quotes), never
//! survives redaction, live or not, nor when the text is cut right inside it; and redaction
//! is idempotent on arbitrary mixes of rule fragments. Cases: `PROPTEST_CASES` (default 256).

use super::corpus::body;
use super::tokens::{Body, TOKENS};
use super::*;
use proptest::prelude::*;

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256);
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

/// A secret: (text to embed, distinctive part that must not survive, whether it is a shape
/// that a digit before it does not glue to a word).
fn secret() -> impl Strategy<Value = (String, String, bool)> {
    let token = (0..TOKENS.len(), 0usize..40, 0usize..1000).prop_map(|(i, extra, seed)| {
        let t = &TOKENS[i];
        let b = body(t.body, t.min + extra, seed);
        (format!("{}{b}", t.prefix), b, true)
    });
    let value = "[A-Za-z0-9]{12,30}";
    let keyed = (value, 0usize..8).prop_map(|(v, form)| {
        let text = match form {
            0 => format!("API_KEY={v}"),
            1 => format!("\"password\": \"{v}\""),
            2 => format!("Authorization: Bearer {v}"),
            3 => format!("postgres://app:{v}@db/app"),
            4 => format!("--token {v}"),
            5 => format!("client_secret: '{v}'"),
            6 => format!("Bearer {v}9x"),
            _ => format!("x-api-key: {v}"),
        };
        (text, v, false)
    });
    let pem = (0usize..4, 0usize..100).prop_map(|(k, seed)| {
        let label = ["RSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY"][k];
        let line = body(Body::Alnum, 64, seed);
        (format!("-----BEGIN {label}-----\n{line}\n{line}\n-----END {label}-----"), line, true)
    });
    let jwt =
        "[A-Za-z0-9_-]{12,40}".prop_map(|p| (format!("eyJhbGciOiJIUzI1NiJ9.eyJ{p}.{p}"), format!("eyJ{p}"), true));
    prop_oneof![4 => token, 2 => keyed, 1 => pem, 1 => jwt]
}

/// Random surrounding text: words, punctuation, JSON-ish bits, non-ASCII.
fn filler() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            "[a-z]{1,8}",
            Just(" ".to_string()),
            Just("\n".to_string()),
            Just(", ".to_string()),
            Just("{\"a\": 1}".to_string()),
            Just("é日本🎉".to_string()),
            Just("max_tokens=5".to_string()),
            Just("https://example.com/x".to_string()),
        ],
        0..6,
    )
    .prop_map(|v| v.concat())
}

/// What may stand right before a secret without gluing it to a word (a digit only before a
/// shape).
fn separator() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![" ", "\n", "\"", "(", "= ", ": ", "0", "\t", "'", "`", "[", ","])
}

fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.' | b'~') {
                (c as char).to_string()
            } else {
                format!("%{c:02X}")
            }
        })
        .collect()
}

/// The text encoded as form `how`, and a function that encodes the secret's part the same way.
fn encode(how: usize, s: &str) -> String {
    match how {
        0 => s.to_string(),
        1 => serde_json::to_string(s).expect("string"),
        2 => percent_encode(s),
        _ => s.replace('"', "\\u0022"),
    }
}

/// Does any 10-byte window of `part` (or all of it, when shorter) appear in `out`?
fn survives(out: &str, part: &str) -> bool {
    let b = part.as_bytes();
    if b.len() <= 10 {
        return out.contains(part);
    }
    b.windows(10).any(|w| std::str::from_utf8(w).is_ok_and(|w| out.contains(w)))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn no_secret_survives(
        (secret, part, shape) in secret(),
        before in filler(),
        sep in separator(),
        after in filler(),
        how in 0usize..4,
    ) {
        let sep = if sep == "0" && !shape { " " } else { sep };
        let plain = format!("{before}{sep}{secret} {after}");
        let text = encode(how, &plain);
        let part = encode(how, &part);
        let part = part.trim_matches('"');
        let out = redact(&text).into_owned();
        prop_assert!(!survives(&out, part), "{part:?} survives in {out:?} (from {text:?})");
        prop_assert_eq!(redact(&out).into_owned(), out.clone(), "not idempotent");
        let live = redact_live(&text);
        prop_assert!(!survives(&live, part), "{part:?} survives live in {live:?}");
        // The text cut right inside the secret: as a growing text, and as a head of the whole.
        let at = text.find(part).map_or(text.len() / 2, |i| i + part.len() / 2);
        let (head, _) = cut(&text, at);
        let start = &part[..part.len() / 2];
        let shown = redact_live(head);
        prop_assert!(!head.ends_with(start) || !survives(&shown, start), "{start:?} shows at the live edge: {shown:?}");
        let (window, _) = redact_head(&text, at, false);
        prop_assert!(!survives(&window, part));
    }

    #[test]
    fn idempotent_on_fragments(parts in proptest::collection::vec(prop::sample::select(FRAGMENTS.to_vec()), 1..14)) {
        let s = parts.concat();
        let once = redact(&s).into_owned();
        prop_assert_eq!(redact(&once).into_owned(), once.clone(), "not idempotent for {:?}", s);
        let live = redact_live(&s);
        prop_assert_eq!(redact_live(&live), live.clone(), "live not idempotent for {:?}", s);
        prop_assert!(!is_secret_shaped(&once));
        for r in secret_ranges(&s, true) {
            prop_assert!(s.is_char_boundary(r.start) && s.is_char_boundary(r.end));
        }
    }
}

/// Pieces of every rule, to be mixed.
const FRAGMENTS: &[&str] = &[
    "TOKEN=",
    "api_key: ",
    "\"",
    "'",
    " ",
    "\n",
    "=",
    ":",
    "hf_",
    "sk-",
    "AKIA",
    "ASIA",
    "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv",
    "QZ2XW3VU4TS5RP6NM7LK",
    "Bearer ",
    "Authorization: Basic ",
    "https://u:",
    "@h/",
    "--password ",
    "eyJ",
    ".",
    MASK,
    "*",
    "é",
    "{",
    "}",
    "\\",
    "\\n",
    "\\u0022",
    "\\u0067",
    "%20",
    "%3A",
    "%2F",
    "%3D",
    "+",
    "-",
    "_",
    "0",
    "x",
    "ghp_",
    "hal0ak_",
    "xapp-",
    "glpat-",
    "npm_",
    "sk_live_",
    "AIza",
    "hooks.slack.com",
    "/services/",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "-----BEGIN ",
    "PRIVATE KEY-----",
    "PASSWORD=s3cretPassw0rd",
    "s3cretPassw0rd",
    "s3cr",
    "Authorization%3A%20Bearer%20",
    "Bearer%20",
];
