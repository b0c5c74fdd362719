//! Test corpus of secret shapes (tests only): one sample per shape the redactor must mask,
//! each with the distinctive part that must not survive, and ordinary texts it must leave
//! alone. Shared by the redactor's tests and the skill validator's (a skill holding any of
//! these is refused). Every value is made up here; none is a real credential.

use super::tokens::{Body, TOKENS};

/// One secret shape in a text.
#[derive(Debug, Clone)]
pub(crate) struct Sample {
    /// What the shape is.
    pub name: String,
    /// A text holding the secret.
    pub text: String,
    /// The part that must be gone after redaction.
    pub secret: String,
}

/// `n` made-up body characters of class `class`, varied by `seed`.
pub(crate) fn body(class: Body, n: usize, seed: usize) -> String {
    let alphabet: &[u8] = match class {
        Body::Word | Body::Dotted => b"Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv_Wx-Yz",
        Body::Alnum => b"Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0UvWxYz",
        Body::Upper => b"QZ2XW3VU4TS5RP6NM7LK",
        Body::Hex => b"0a1b2c3d4e5f6789",
        Body::Base64 => b"Ab1+Cd2/Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv",
        Body::Path => b"T0Ab1/B2Cd3/Ef4Gh5Ij6Kl7Mn8Op9",
    };
    (0..n).map(|i| alphabet[(i * 7 + seed * 3 + i / alphabet.len()) % alphabet.len()] as char).collect()
}

/// A made-up base64 line of `n` characters.
fn b64_line(n: usize, seed: usize) -> String {
    body(Body::Alnum, n, seed)
}

/// A made-up PEM block with `label` (`RSA PRIVATE KEY`, …), `lines` body lines joined by `nl`.
pub(crate) fn pem(label: &str, lines: usize, nl: &str) -> (String, String) {
    let body: Vec<String> = (0..lines).map(|i| b64_line(64, i + 11)).collect();
    let text = format!("-----BEGIN {label}-----{nl}{}{nl}-----END {label}-----", body.join(nl));
    (text, body[0].clone())
}

fn sample(name: impl Into<String>, text: impl Into<String>, secret: impl Into<String>) -> Sample {
    Sample { name: name.into(), text: text.into(), secret: secret.into() }
}

/// Every secret shape: each token of the table, then PEM blocks, webhooks, encodings, word
/// boundaries and the keyed rules.
pub(crate) fn samples() -> Vec<Sample> {
    let mut out = Vec::new();
    for (i, t) in TOKENS.iter().enumerate() {
        let b = body(t.body, t.min + 12, i);
        out.push(sample(format!("token {} ({})", t.id, t.prefix), format!("the value is {}{b} here", t.prefix), b));
    }
    for (label, nl) in [
        ("RSA PRIVATE KEY", "\n"),
        ("OPENSSH PRIVATE KEY", "\n"),
        ("EC PRIVATE KEY", "\r\n"),
        ("PRIVATE KEY", "\n"),
        ("ENCRYPTED PRIVATE KEY", "\n"),
        ("DSA PRIVATE KEY", "\n"),
        ("PGP PRIVATE KEY BLOCK", "\n\n"),
        ("RSA PRIVATE KEY", "\\n"),
        ("OPENSSH PRIVATE KEY", " "),
    ] {
        let (block, line) = pem(label, 3, nl);
        out.push(sample(format!("PEM {label} joined by {nl:?}"), format!("key:\n{block}\nafter"), line));
    }
    let (block, line) = pem("RSA PRIVATE KEY", 3, "\n");
    let json = serde_json::to_string(&block).expect("string");
    out.push(sample("PEM in a JSON string", format!("{{\"key\": {json}}}"), line.clone()));
    out.push(sample("PEM indented in YAML", format!("ssh:\n  key: |\n    {}", block.replace('\n', "\n    ")), line));
    let head = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B2C3D\n\n";
    let l = b64_line(64, 3);
    out.push(sample(
        "PEM with encryption headers",
        format!("{head}{l}\n{l}\n-----END RSA PRIVATE KEY-----"),
        l.clone(),
    ));
    out.push(sample("PEM cut off before its end", format!("here: -----BEGIN OPENSSH PRIVATE KEY-----\n{l}\n{l}"), l));
    let p = body(Body::Alnum, 24, 5);
    let slack = format!("https://hooks.slack.com/services/T0{p}/B0{p}/{p}");
    out.push(sample("Slack webhook URL", format!("post to {slack} now"), format!("/B0{p}/{p}")));
    out.push(sample("Slack workflow webhook", format!("url=https://hooks.slack.com/workflows/T0{p}/A0{p}"), p.clone()));
    let discord = format!("https://discord.com/api/webhooks/123456789012345678/{p}{p}");
    out.push(sample("Discord webhook URL", format!("webhook: {discord}"), format!("{p}{p}")));
    let teams = format!("https://acme.webhook.office.com/webhookb2/{p}@{p}/IncomingWebhook/{p}/{p}");
    out.push(sample("Teams webhook URL", teams, format!("IncomingWebhook/{p}")));
    let tok = format!("Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8{p}");
    out.push(sample("percent-encoded Bearer", format!("GET /cb?auth=Bearer%20{tok}&x=1"), tok.clone()));
    out.push(sample("percent-encoded Authorization", format!("h=Authorization%3A%20Bearer%20{tok}"), tok.clone()));
    out.push(sample("form-encoded Bearer", format!("header=Authorization%3A+Bearer+{tok}"), tok.clone()));
    out.push(sample("percent-encoded key=value", format!("/x?q=1&next=%2Fy%3Fapi_key%3D{p}%26z%3D1"), p.clone()));
    out.push(sample("percent-encoded JSON", format!("d=%7B%22password%22%3A%22{p}%22%7D"), p.clone()));
    out.push(sample(
        "percent-encoded webhook",
        format!("u=https%3A%2F%2Fhooks.slack.com%2Fservices%2FT0{p}%2FB0{p}%2F{p}"),
        p.clone(),
    ));
    let gh = body(Body::Alnum, 36, 9);
    out.push(sample("JSON-escaped quotes", format!("{{\\\"token\\\":\\\"ghp_{gh}\\\"}}"), gh.clone()));
    out.push(sample("\\u0022-quoted token", format!("s=\\u0022ghp_{gh}\\u0022"), gh.clone()));
    out.push(sample("\\u-escaped prefix", format!("s=\\u0067hp_{gh}"), gh.clone()));
    out.push(sample("token glued to digits", format!("id 123ghp_{gh}"), gh.clone()));
    out.push(sample("token after an escaped newline", format!("line\\nghp_{gh}"), gh.clone()));
    out.push(sample("token after %0A", format!("line%0Aghp_{gh}"), gh.clone()));
    out.push(sample("token after %3A", format!("key%3Aghp_{gh}"), gh.clone()));
    let k = body(Body::Alnum, 43, 2);
    out.push(sample("hal0 admin key in an error", format!("error: key hal0ak_{k} was revoked"), k.clone()));
    out.push(sample("hal0 client key in JSON", format!("{{\"error\":\"bad hal0ck_{k}\"}}"), k.clone()));
    out.push(sample("JWT", format!("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIx{p}.{p}sig"), format!("eyJzdWIiOiIx{p}")));
    out.push(sample("Authorization Basic", format!("Authorization: Basic {p}=="), p.clone()));
    out.push(sample("URL password", format!("postgres://app:{p}@db:5432/app"), p.clone()));
    out.push(sample("--api-key flag", format!("hal0 x --api-key {p} --v"), p.clone()));
    out.push(sample("env line", format!("export OPENAI_API_KEY={p}"), p.clone()));
    out.push(sample("AWS secret access key", format!("aws_secret_access_key = {p}/{p}"), p.clone()));
    out.push(sample("x-api-key header", format!("x-api-key: {p}"), p.clone()));
    out.push(sample("JSON password", format!("{{\"password\": \"{p} {p}\"}}"), p.clone()));
    out
}

/// Ordinary texts the redactor leaves alone (name, text).
pub(crate) fn negatives() -> Vec<(&'static str, String)> {
    let p = body(Body::Alnum, 36, 1);
    vec![
        ("git SHA in prose", "fixed in commit 3f786850e387550fdab836ed7e6dc881de23001b (see log)".into()),
        ("UUID", "run 123e4567-e89b-12d3-a456-426614174000 finished".into()),
        ("sha256 digest", "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855".into()),
        ("word before a prefix", format!("task-{p} desk-{p} risk-free")),
        ("letter glued to a token", format!("xghp_{p} myAKIAQZ2XW3VU4TS5RP6N")),
        ("prose about PEM", "files start with -----BEGIN OPENSSH PRIVATE KEY----- and end with -----END".into()),
        ("PEM placeholder", "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----".into()),
        ("webhook docs", "post JSON to https://hooks.slack.com/services/ with your webhook".into()),
        ("ASIA the word", "ASIA PACIFIC and ASIAN markets".into()),
        ("short prefixes", "hf_x sk-abc npm_install glpat- sk_live_ xoxe- AIza".into()),
        ("npm config", "npm_config_cache=/tmp/npm".into()),
        ("percent-encoded prose", "https://example.com/search?q=hello%20world&max_tokens%3D512".into()),
        ("escaped JSON prose", "{\"text\": \"caf\\u00e9 \\u0022ok\\u0022\", \"n\": 1}".into()),
        ("base64 image", "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==".into()),
        ("Bearer prose", "Bearer tokens are short-lived; see Bearer Authentication.".into()),
        ("ordinary URL", "https://docs.example.com/a/b?page=2#top".into()),
        ("unicode prose", "café naïve 日本語 🎉 résumé".into()),
    ]
}
