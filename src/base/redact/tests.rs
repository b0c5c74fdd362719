use super::*;
use serde_json::json;

/// A fake token body of `n` characters (never a real credential).
fn body(n: usize) -> String {
    "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv".chars().cycle().take(n).collect()
}

fn red(s: &str) -> String {
    redact(s).into_owned()
}

/// (input, expected `redact` output) for every rule; unchanged rows expect the input.
fn table() -> Vec<(String, String)> {
    let m = MASK;
    let t = body(36);
    let mut rows: Vec<(String, String)> = vec![
        // Rule 1: Authorization header and bare Bearer.
        ("Authorization: Bearer abc.def-123".into(), format!("Authorization: Bearer {m}")),
        ("authorization: basic dXNlcjpwYXNz".into(), format!("authorization: basic {m}")),
        ("Authorization: Token plainword".into(), format!("Authorization: Token {m}")),
        (r#"{"Authorization": "Bearer xyz123"}"#.into(), format!(r#"{{"Authorization": "Bearer {m}"}}"#)),
        ("curl -H 'Authorization: Bearer abcDEF' x".into(), format!("curl -H 'Authorization: Bearer {m}' x")),
        ("use Bearer abcDEF123 here".into(), format!("use Bearer {m} here")),
        ("BEARER some_token.".into(), format!("BEARER {m}.")),
        ("Bearer tokens are short-lived.".into(), "Bearer tokens are short-lived.".into()),
        ("bearer authentication, Bearer Token:".into(), "bearer authentication, Bearer Token:".into()),
        ("Bearer ${TOKEN}".into(), format!("Bearer {m}")),
        // Rule 2: NAME=value / NAME: value.
        ("HF_TOKEN=...".into(), format!("HF_TOKEN={m}")),
        ("export OPENAI_API_KEY=abc123".into(), format!("export OPENAI_API_KEY={m}")),
        ("password: hunter2".into(), format!("password: {m}")),
        (r#"PASSWORD="correct horse battery""#.into(), format!(r#"PASSWORD="{m}""#)),
        (r#"{"api_key": "k-123", "n": 1}"#.into(), format!(r#"{{"api_key": "{m}", "n": 1}}"#)),
        ("client_secret='s3 cr3t'".into(), format!("client_secret='{m}'")),
        ("X-Api-Key: abc123\r\n".into(), format!("X-Api-Key: {m}\r\n")),
        ("db.password = hunter2 # prod".into(), format!("db.password = {m} # prod")),
        ("KEY=abc".into(), format!("KEY={m}")),
        ("aws_secret_access_key = wJalrXUtn".into(), format!("aws_secret_access_key = {m}")),
        ("SALT=pepper".into(), format!("SALT={m}")),
        ("ENCRYPTION_KEY=zzz".into(), format!("ENCRYPTION_KEY={m}")),
        ("PGPASSWORD=pw psql".into(), format!("PGPASSWORD={m} psql")),
        ("accessToken: abc".into(), format!("accessToken: {m}")),
        ("password_hint: my dog".into(), format!("password_hint: {m} dog")),
        ("GET /x?api_key=abc&page=2".into(), format!("GET /x?api_key={m}&page=2")),
        ("f(token=abc)".into(), format!("f(token={m})")),
        (r#"{"token":123}"#.into(), format!(r#"{{"token":{m}}}"#)),
        ("TOKEN=${HF_TOKEN} run".into(), format!("TOKEN={m} run")),
        (r#"{\"api_key\": \"abc\"}"#.into(), format!(r#"{{\"api_key\": \"{m}\"}}"#)),
        ("TOKEN=\"abc\nnext".into(), format!("TOKEN=\"{m}\nnext")),
        ("token: `abc def`".into(), format!("token: `{m}`")),
        ("secret: a\\nb".into(), format!("secret: {m}\\nb")),
        // Rule 2: benign names, excluded suffixes and non-assignments stay.
        ("max_tokens=512".into(), "max_tokens=512".into()),
        ("TOKENIZER=foo".into(), "TOKENIZER=foo".into()),
        ("HF_TOKEN_PATH=/x".into(), "HF_TOKEN_PATH=/x".into()),
        ("token_count: 12, tokens: 5".into(), "token_count: 12, tokens: 5".into()),
        ("passed: 3, passage: text".into(), "passed: 3, passage: text".into()),
        ("KEY_FILE=/etc/k SECRET_DIR=/s API_KEY_ENV=X".into(), "KEY_FILE=/etc/k SECRET_DIR=/s API_KEY_ENV=X".into()),
        ("if token == other".into(), "if token == other".into()),
        ("let t = token::Token::new();".into(), "let t = token::Token::new();".into()),
        ("Token => 1".into(), "Token => 1".into()),
        ("keyboard: us, monkey=1".into(), "keyboard: us, monkey=1".into()),
        ("TOKEN= \nTOKEN=\"\"".into(), "TOKEN= \nTOKEN=\"\"".into()),
        (
            r#"{"usage": {"input_tokens": 5, "token_type": "x"}}"#.into(),
            r#"{"usage": {"input_tokens": 5, "token_type": "x"}}"#.into(),
        ),
        // Rule 3: URL userinfo.
        ("postgres://user:pa55word@db:5432/app".into(), format!("postgres://user:{m}@db:5432/app")),
        ("git clone https://0123456789abcdefXYZ@host/x".into(), format!("git clone https://{m}@host/x")),
        ("redis://:p@ss@cache:6379".into(), format!("redis://:{m}@cache:6379")),
        (
            "ssh://git@github.com/x https://example.com/a@b".into(),
            "ssh://git@github.com/x https://example.com/a@b".into(),
        ),
        // Rule 4: CLI flags.
        ("hal0 --api-key abc123 list".into(), format!("hal0 --api-key {m} list")),
        ("run --token=abc".into(), format!("run --token={m}")),
        ("login --password 'p w' -v".into(), format!("login --password '{m}' -v")),
        ("aws --secret-access-key ABC".into(), format!("aws --secret-access-key {m}")),
        ("ssh --private-key-pem xyz".into(), format!("ssh --private-key-pem {m}")),
        ("dl --hf-token abc".into(), format!("dl --hf-token {m}")),
        ("gen --max-tokens 512 --token --verbose".into(), "gen --max-tokens 512 --token --verbose".into()),
        // Rule 5: JWT.
        (
            "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U ok".into(),
            format!("jwt {m} ok"),
        ),
        ("eyJshort.abcdefghijkl.abcdefghijkl".into(), "eyJshort.abcdefghijkl.abcdefghijkl".into()),
        // Rule 6: token shapes (short ones and glued ones stay).
        ("hf_short sk-abc AKIA1234 ghp_x".into(), "hf_short sk-abc AKIA1234 ghp_x".into()),
        (format!("task-{t}"), format!("task-{t}")),
        ("AKIAIOSFODNN7EXAMPLE".into(), m.into()),
        // Placeholder and already-masked text stays.
        (format!("HF_TOKEN={m}"), format!("HF_TOKEN={m}")),
        (format!("Authorization: Bearer {m} x {m}{m}"), format!("Authorization: Bearer {m} x {m}{m}")),
        ("plain prose, nothing to see: é, 🎉, 日本語".into(), "plain prose, nothing to see: é, 🎉, 日本語".into()),
    ];
    for p in ["hal0bk_", "hf_", "sk-", "sk-proj-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"] {
        rows.push((format!("key {p}{t}."), format!("key {m}.")));
    }
    for p in ["xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-"] {
        rows.push((format!("({p}1234-5678-{t})"), format!("({m})")));
    }
    rows.push((format!("MY_hf_{t}"), format!("MY_{m}")));
    rows
}

#[test]
fn table_rules_and_idempotence() {
    for (input, want) in table() {
        let got = red(&input);
        assert_eq!(got, want, "input: {input:?}");
        assert_eq!(red(&got), got, "not idempotent: {input:?}");
        assert_eq!(redact_live(&got), redact_live(&redact_live(&got)), "live not idempotent: {input:?}");
        assert_eq!(is_secret_shaped(&input), input != want, "is_secret_shaped: {input:?}");
        assert!(!is_secret_shaped(&got), "redacted output still secret-shaped: {got:?}");
        if input == want {
            assert!(matches!(redact(&input), Cow::Borrowed(_)), "not borrowed: {input:?}");
        }
    }
}

#[test]
fn names() {
    for n in [
        "HF_TOKEN",
        "token",
        "accessToken",
        "API-KEY",
        "apiKey",
        "x-api-key",
        "AWS_SECRET_ACCESS_KEY",
        "PRIVATE_KEY_PEM",
        "password_hint",
        "PGPASSWORD",
        "db_pass",
        "key",
        "Key",
        "primary_key",
        "SALT",
        "ENCRYPTION_KEY_V2",
        "--token",
        "client.secret",
    ] {
        assert!(is_secret_name(n), "{n} should be secret");
    }
    for n in [
        "tokens",
        "tokenizer",
        "token_count",
        "tokenCount",
        "max_tokens",
        "MAX_TOKEN",
        "input_tokens",
        "passed",
        "passage",
        "bypass",
        "pass_rate",
        "HF_TOKEN_PATH",
        "KEY_FILE",
        "SECRET_DIR",
        "API_KEY_ENV",
        "max_sessions_per_key",
        "MAX_SESSIONS_PER_KEY",
        "pattern_key",
        "sort_key",
        "publicKey",
        "keys",
        "keyboard",
        "monkey",
        "basalt",
        "name",
        "",
    ] {
        assert!(!is_secret_name(n), "{n:?} should not be secret");
    }
}

#[test]
fn placeholders_are_not_cross_masked() {
    let m = MASK;
    for v in [
        "...",
        "xxxxxxxxxx",
        "<YOUR_TOKEN>",
        "$ENV_VAR_NAME",
        "${ENV_VAR}",
        "YOUR_KEY_HERE",
        "TODO_fill_me",
        "CHANGEME123",
    ] {
        let text = format!("API_TOKEN={v} and later {v}");
        assert_eq!(red(&text), format!("API_TOKEN={m} and later {v}"), "{v}");
    }
    for v in ["12345678901", "HF_TOKEN_VALUE", "true", "short"] {
        let text = format!("API_TOKEN={v} and later {v}");
        assert_eq!(red(&text), format!("API_TOKEN={m} and later {v}"), "{v}");
    }
    assert!(!plausible_secret(MASK));
    assert!(plausible_secret("s3cretPassw0rd"));
}

#[test]
fn cross_occurrence() {
    let m = MASK;
    assert_eq!(
        red("PASSWORD=s3cretPassw0rd\necho s3cretPassw0rd; x=s3cretPassw0rd!"),
        format!("PASSWORD={m}\necho {m}; x={m}!")
    );
    // Longest first: the longer value is masked whole, not as the shorter one plus a tail.
    assert_eq!(
        red("A_TOKEN=abcdefgh1 B_TOKEN=abcdefgh12 text abcdefgh12 and abcdefgh1x"),
        format!("A_TOKEN={m} B_TOKEN={m} text {m} and {m}x")
    );
    // The same with enough values for the one-pass search, multi-byte ones included.
    assert_eq!(
        red("A_TOKEN=abcdefgh1 B_TOKEN=abcdefgh12 C_TOKEN=pässwört99 text abcdefgh12 abcdefgh1x pässwört99é"),
        format!("A_TOKEN={m} B_TOKEN={m} C_TOKEN={m} text {m} {m}x {m}é")
    );
    // Values from flags, URLs and Authorization headers count too.
    assert_eq!(red("--password hunter2hunter2 then hunter2hunter2"), format!("--password {m} then {m}"));
    // A value defined in context masks its occurrence in a segment.
    let out = redact_segments("DB_PASSWORD=Sup3rS3cretValue\n", &["connecting with Sup3rS3cretValue"], "", false);
    assert_eq!(out, vec![format!("connecting with {m}")]);
}

#[test]
fn cross_occurrence_many_values() {
    let mut text = String::new();
    for i in 0..300 {
        text.push_str(&format!("K{i}_TOKEN=val{i:04}Secret\n"));
    }
    let filler = "lorem ipsum ".repeat(2000);
    text.push_str(&filler);
    text.push_str("val0042Secret val0299Secret val9999Secret");
    let out = red(&text);
    assert!(out.ends_with(&format!("{MASK} {MASK} val9999Secret")), "{}", &out[out.len() - 80..]);
    assert!(!out.contains("val0000Secret"));
}

#[test]
fn live_edge() {
    let m = MASK;
    assert_eq!(redact_live("here is hf_abc"), format!("here is {m}"));
    assert_eq!(red("here is hf_abc"), "here is hf_abc");
    assert_eq!(redact_live("here is hf_"), format!("here is {m}"));
    assert_eq!(redact_live("key: AKIAABC"), format!("key: {m}"));
    assert_eq!(redact_live("AKIAabc"), "AKIAabc");
    for (i, t) in TOKENS.iter().enumerate() {
        let p = t.prefix;
        let b = corpus::body(t.body, 3, i);
        assert_eq!(redact_live(&format!("x {p}{b}")), format!("x {m}"), "{p}");
        assert_eq!(red(&format!("x {p}{b}")), format!("x {p}{b}"), "{p}");
        let bare = if t.bare_prefix_is_secret() { format!("x {m}") } else { format!("x {p}") };
        assert_eq!(redact_live(&format!("x {p}")), bare, "{p}");
    }
    // Not at the end, or glued to a word, or only part of a prefix: unchanged.
    assert_eq!(redact_live("hf_abc done"), "hf_abc done");
    assert_eq!(redact_live("hf_abc\n"), "hf_abc\n");
    assert_eq!(redact_live("task-abc"), "task-abc");
    assert_eq!(redact_live("the gh"), "the gh");
    assert_eq!(redact_live("my_hf_ab"), format!("my_{m}"));
    // A bare Bearer value reaching the end is masked even if it looks like a word.
    assert_eq!(redact_live("Bearer ab"), format!("Bearer {m}"));
    assert_eq!(red("Bearer ab"), "Bearer ab");
    assert_eq!(redact_live(""), "");
}

#[test]
fn segments_split_secret() {
    let m = MASK;
    let t = body(30);
    let tok = format!("hf_{t}");
    // Two segments.
    let (a, b) = tok.split_at(10);
    let out = redact_segments("", &[&format!("say {a}"), &format!("{b} end")], "", false);
    assert_eq!(out, vec![format!("say {m}"), format!("{m} end")]);
    // Three segments, the middle one entirely inside the token.
    let (a, rest) = tok.split_at(5);
    let (b, c) = rest.split_at(10);
    let out = redact_segments("", &[&format!("x {a}"), b, &format!("{c} y")], "", false);
    assert_eq!(out, vec![format!("x {m}"), m.to_string(), format!("{m} y")]);
    // Name in one segment, value in the next.
    let out = redact_segments("", &["export HF_TO", "KEN=abc", "def rest"], "", false);
    assert_eq!(out, vec!["export HF_TO".to_string(), format!("KEN={m}"), format!("{m} rest")]);
    // Empty segments stay empty.
    let out = redact_segments("", &["a ", "", "b"], "", false);
    assert_eq!(out, vec!["a ", "", "b"]);
}

#[test]
fn segments_context() {
    let m = MASK;
    let t = body(30);
    // A token starting in the before-context is masked in the segment; the context is not returned.
    let tok = format!("ghp_{t}");
    let (a, b) = tok.split_at(12);
    let out = redact_segments(&format!("ctx {a}"), &[&format!("{b} tail")], "", false);
    assert_eq!(out, vec![format!("{m} tail")]);
    // A token ending in the after-context.
    let (a, b) = tok.split_at(20);
    let out = redact_segments("", &[&format!("head {a}")], &format!("{b} more"), false);
    assert_eq!(out, vec![format!("head {m}")]);
    // Secrets only in context never appear in the output, and nothing else is changed.
    let out = redact_segments(&format!("HF_TOKEN=hf_{t} "), &["plain text"], &format!(" sk-{t}"), true);
    assert_eq!(out, vec!["plain text"]);
    // Live edge applies only at the very end of the concatenation.
    let out = redact_segments("", &["see hf_ab"], "", true);
    assert_eq!(out, vec![format!("see {m}")]);
    let out = redact_segments("", &["see hf_ab"], " after", true);
    assert_eq!(out, vec!["see hf_ab"]);
    let out = redact_segments("", &["see hf_ab"], "", false);
    assert_eq!(out, vec!["see hf_ab"]);
}

#[test]
fn utf8_around_secrets() {
    let m = MASK;
    let t = body(24);
    let text = format!("é🎉日本 hf_{t}日本 café TOKEN=señor🔑 ok ＝ Bearer ü{t}");
    let ranges = secret_ranges(&text, false);
    assert_eq!(ranges.len(), 3, "{ranges:?}");
    for r in &ranges {
        assert!(text.is_char_boundary(r.start) && text.is_char_boundary(r.end));
    }
    assert_eq!(red(&text), format!("é🎉日本 {m}日本 café TOKEN={m} ok ＝ Bearer {m}"));
    // Quoted values with multi-byte content.
    assert_eq!(red("password: \"пароль 密码\" ✓"), format!("password: \"{m}\" ✓"));
    // Segments split inside the text around a secret stay on char boundaries.
    let out = redact_segments("", &["日本 TOKEN=sé", "ñor 🎉"], "", false);
    assert_eq!(out, vec![format!("日本 TOKEN={m}"), format!("{m} 🎉")]);
}

#[test]
fn json_nested() {
    let t = body(30);
    let mut v = json!({
        "api_key": "x",
        "model": "m",
        "max_tokens": 512,
        "password": 123456,
        "token": {"value": "abc", "ttl": 30, "ok": true},
        "secrets": ["a", "", null],
        "messages": [{"role": "user", "content": format!("use hf_{t} please")}],
        "env": {"HF_TOKEN": "hf_x", "PATH": "/bin"},
        "nested": {"deeper": ["Authorization: Bearer abc123", {"client_secret": "s"}]},
        "usage": {"input_tokens": 5, "tokens": 9},
    });
    redact_json(&mut v);
    assert_eq!(
        v,
        json!({
            "api_key": MASK,
            "model": "m",
            "max_tokens": 512,
            "password": MASK,
            "token": {"value": MASK, "ttl": MASK, "ok": true},
            "secrets": [MASK, "", null],
            "messages": [{"role": "user", "content": format!("use {MASK} please")}],
            "env": {"HF_TOKEN": MASK, "PATH": "/bin"},
            "nested": {"deeper": [format!("Authorization: Bearer {MASK}"), {"client_secret": MASK}]},
            "usage": {"input_tokens": 5, "tokens": 9},
        })
    );
    let once = v.clone();
    redact_json(&mut v);
    assert_eq!(v, once);
}

/// Names are never masked, secret values always: a setting or variable written as a
/// `{key|name, value}` pair is judged by the pair's name (`config_write`'s audit row showed
/// `"key": MASK` and the value in clear), and a `"key"` holding a dotted setting name is a name.
#[test]
fn json_pairs_mask_values_by_their_name() {
    let t = body(30);
    let mut v = json!([
        {"key": "hermes.restart_command", "value": "systemctl restart hermes"},
        {"key": "relay.langfuse.secret_key", "value": format!("sk-lf-{t}")},
        {"name": "HF_TOKEN", "value": "hf_abcdefgh"},
        {"name": "PATH", "value": "/usr/bin"},
        {"key": "telemetry.service_name"},
        {"key": format!("sk-{t}")},
        {"pattern_key": "rm -rf", "description": "recursive delete"},
    ]);
    redact_json(&mut v);
    assert_eq!(
        v,
        json!([
            {"key": "hermes.restart_command", "value": "systemctl restart hermes"},
            {"key": "relay.langfuse.secret_key", "value": MASK},
            {"name": "HF_TOKEN", "value": MASK},
            {"name": "PATH", "value": "/usr/bin"},
            {"key": "telemetry.service_name"},
            {"key": MASK},
            {"pattern_key": "rm -rf", "description": "recursive delete"},
        ])
    );
}

#[test]
fn cut_multibyte() {
    assert_eq!(cut("hello", 10), ("hello", false));
    assert_eq!(cut("hello", 5), ("hello", false));
    assert_eq!(cut("hello", 3), ("hel", true));
    assert_eq!(cut("é", 1), ("", true));
    assert_eq!(cut("aé", 2), ("a", true));
    assert_eq!(cut("日本語", 7), ("日本", true));
    assert_eq!(cut("🎉🎉", 5), ("🎉", true));
    assert_eq!(cut("🎉🎉", 0), ("", true));
    assert_eq!(cut("", 0), ("", false));
}

#[test]
fn context_windows() {
    let long: String = "é".repeat(CONTEXT_CHARS + 10);
    assert_eq!(context_before(&long).chars().count(), CONTEXT_CHARS);
    assert_eq!(context_after(&long).chars().count(), CONTEXT_CHARS);
    assert_eq!(context_before("abc"), "abc");
    assert_eq!(context_after("abc"), "abc");
}

#[test]
fn ranges_sorted_merged() {
    let t = body(24);
    let text = format!("hf_{t} sk-{t}TOKEN=x");
    let r = secret_ranges(&text, false);
    assert_eq!(r, vec![0..27, 28..text.len() - 2, text.len() - 1..text.len()]);
    // Touching ranges merge into one mask.
    let text = format!("--token=hf_{t}");
    assert_eq!(secret_ranges(&text, false), vec![8..text.len()]);
}

/// Deterministic mixes of fragments: redaction is idempotent and never mangles a mask.
#[test]
fn idempotent_on_generated_mixes() {
    let t = body(26);
    let frags = [
        "TOKEN=".to_string(),
        "api_key: ".into(),
        "\"".into(),
        "'".into(),
        " ".into(),
        "\n".into(),
        ",".into(),
        "=".into(),
        ":".into(),
        "hf_".into(),
        "sk-".into(),
        "AKIA".into(),
        t.clone(),
        "abcdefgh12".into(),
        "Bearer ".into(),
        "Authorization: Basic ".into(),
        "https://u:".into(),
        "@h/".into(),
        "--password ".into(),
        "eyJ".into(),
        ".".into(),
        MASK.into(),
        "*".into(),
        "é".into(),
        "🎉".into(),
        "{".into(),
        "}".into(),
        "\\".into(),
        "max_tokens=".into(),
        "x".into(),
        "\\\"".into(),
        "`".into(),
        "(".into(),
        ")".into(),
        "&".into(),
        "-".into(),
        "_".into(),
        "KEY".into(),
        "ghp_".into(),
        "xoxb-".into(),
        "AKIAABCDEFGHIJKLMNOP".into(),
        "PASSWORD=s3cretPassw0rd".into(),
        "s3cretPassw0rd".into(),
        "\"secret\": \"".into(),
        "postgres://".into(),
        "--token=".into(),
        "Authorization: Bearer ".into(),
        "::".into(),
        "日本".into(),
    ];
    let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
    for _ in 0..5000 {
        let mut s = String::new();
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let n = 1 + (seed >> 59) as usize;
        for _ in 0..n {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            s.push_str(&frags[(seed >> 33) as usize % frags.len()]);
        }
        let once = red(&s);
        assert_eq!(red(&once), once, "not idempotent for {s:?}");
        let live = redact_live(&s);
        assert_eq!(redact_live(&live), live, "live not idempotent for {s:?}");
        for r in secret_ranges(&s, true) {
            assert!(s.is_char_boundary(r.start) && s.is_char_boundary(r.end));
        }
        if !s.replace(MASK, "").contains('*') {
            assert!(!once.replace(MASK, "").contains('*'), "mask mangled: {s:?} -> {once:?}");
        }
    }
}

/// Every shape of the corpus (each token of the table, PEM blocks, webhooks, encodings, word
/// boundaries, keyed rules) is masked, whole and idempotently; the ordinary texts stay.
#[test]
fn shape_corpus() {
    let samples = corpus::samples();
    assert!(samples.len() >= 60, "{} shapes", samples.len());
    for s in &samples {
        let out = red(&s.text);
        assert!(!out.contains(&s.secret), "{}: {:?} survives in {out:?}", s.name, s.secret);
        assert!(out.contains(MASK), "{}: {out:?}", s.name);
        assert_eq!(red(&out), out, "{}: not idempotent", s.name);
        assert!(is_secret_shaped(&s.text), "{}", s.name);
        assert!(!is_secret_shaped(&out), "{}: {out:?}", s.name);
        let live = redact_live(&s.text);
        assert!(!live.contains(&s.secret), "{}: live {live:?}", s.name);
        // In a JSON value too.
        let mut v = json!({"log": [s.text.clone()]});
        redact_json(&mut v);
        assert!(!v.to_string().contains(&s.secret), "{}: JSON {v}", s.name);
    }
    for (name, text) in corpus::negatives() {
        assert!(matches!(redact(&text), Cow::Borrowed(_)), "{name}: {:?}", red(&text));
        assert_eq!(redact_live(&format!("{text} end")), format!("{text} end"), "{name}");
    }
}

/// Each token is masked whole at its exact minimum, and one character short it is not; the
/// prefix is case-sensitive.
#[test]
fn token_minimums_and_case() {
    for (i, t) in TOKENS.iter().enumerate() {
        let b = corpus::body(t.body, t.min, i);
        assert_eq!(red(&format!("= {}{b};", t.prefix)), format!("= {MASK};"), "{}", t.id);
        let short = &b[..t.min - 1];
        let text = format!("= {}{short};", t.prefix);
        assert_eq!(red(&text), text, "{}", t.id);
        let other_case: String = t
            .prefix
            .chars()
            .map(|c| if c.is_ascii_lowercase() { c.to_ascii_uppercase() } else { c.to_ascii_lowercase() })
            .collect();
        if other_case != t.prefix {
            let text = format!("= {other_case}{b};");
            assert!(red(&text).contains(&b), "{}: {text}", t.id);
        }
    }
}

/// The table is well-formed: ids unique, no prefix starts with another, case-sensitively as
/// they match (a match is never two
/// shapes), and a prefix holding `_`, `-` or `.` has two bytes before the first one (the
/// trigger pass finds it from there).
#[test]
fn token_table() {
    let mut ids: Vec<&str> = TOKENS.iter().map(|t| t.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), TOKENS.len());
    for a in TOKENS {
        assert!(a.min > 0 && !a.what.is_empty() && !a.source.is_empty(), "{}", a.id);
        let anchor = a.prefix.bytes().position(|c| matches!(c, b'_' | b'-' | b'.'));
        assert!(anchor.is_none_or(|o| o >= 2), "{}", a.prefix);
        for b in TOKENS {
            if a.id != b.id {
                // Prefixes match case-sensitively (`SK` of Twilio is not `sk-`). One may hold
                // another past its start (`ABSK`, `SK`): both matches are masked as one range.
                assert!(!a.prefix.starts_with(b.prefix), "{} starts with {}", a.prefix, b.prefix);
            }
        }
    }
    assert_eq!(token_rule("ghp_abc").map(|t| t.id), Some("github-pat"));
    assert_eq!(token_rule("AKIAXYZ").map(|t| t.noun()), Some("an `AKIA…` access key".to_string()));
    assert!(token_rule("plain").is_none());
}

/// Every key hal0 mints is masked: box keys, bridge client keys, proxy consumer keys.
#[test]
fn hal0_keys_are_masked() {
    use crate::auth::boxkeys::{self, ADMIN_KEY_PREFIX, BoxKey, CLIENT_KEY_PREFIX};
    for p in [ADMIN_KEY_PREFIX, CLIENT_KEY_PREFIX, crate::auth::bridge::KEY_PREFIX, crate::auth::consumers::KEY_PREFIX]
    {
        assert!(TOKENS.iter().any(|t| t.prefix == p), "{p} is not in the table");
    }
    let d = tempfile::tempdir().unwrap();
    let env = d.path().join("api.env");
    let store = crate::store::Store::open(&d.path().join("h.db")).unwrap();
    let scopes = crate::auth::bridge::parse_scopes(&["agents"]).unwrap();
    let keys = [
        boxkeys::rotate(&env, BoxKey::Admin).unwrap(),
        boxkeys::rotate(&env, BoxKey::Client).unwrap(),
        crate::auth::bridge::add(&store, "laptop", "", scopes).unwrap().1,
        crate::auth::consumers::mint(&store, "files", "ci", "").unwrap().1,
    ];
    for k in keys {
        let text = format!("error: the key {k} was refused; retry with {k}.");
        assert_eq!(red(&text), format!("error: the key {MASK} was refused; retry with {MASK}."));
        // Cut anywhere inside, at the live edge, nothing after the prefix shows.
        for n in 8..k.len() {
            let out = redact_live(&format!("key {}", &k[..n]));
            assert_eq!(out, format!("key {MASK}"), "{n}");
        }
    }
}

#[test]
fn word_boundaries() {
    let m = MASK;
    let t = corpus::body(Body::Alnum, 36, 4);
    // Letters glue; digits, `_`, punctuation and escape letters do not.
    assert_eq!(red(&format!("task-{t}")), format!("task-{t}"));
    assert_eq!(red(&format!("0ghp_{t}")), format!("0{m}"));
    assert_eq!(red(&format!("a\\nghp_{t}")), format!("a\\n{m}"));
    assert_eq!(red(&format!("%3Aghp_{t}")), format!("%3A{m}"));
    assert_eq!(red(&format!("\\u003Aghp_{t}")), format!("\\u003A{m}"));
    assert_eq!(red(&format!("xghp_{t}")), format!("xghp_{t}"));
    // A glued token next to a masked value is part of it; a mask before a token does not hide it.
    assert_eq!(red(&format!("PASSWORD=s3cretPassw0rd later s3cretPassw0rdghp_{t}")), format!("PASSWORD={m} later {m}"));
    assert_eq!(red(&format!("{m}ghp_{t}")), format!("{m}{m}"));
    assert_eq!(red(&format!("{m}eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w")), format!("{m}{m}"));
}

#[test]
fn pem_blocks() {
    let m = MASK;
    let (block, _) = corpus::pem("OPENSSH PRIVATE KEY", 4, "\n");
    assert_eq!(red(&format!("key:\n{block}\nnext line")), format!("key:\n{m}\nnext line"));
    // Cut before its end: the lines of the body, no further.
    let cut_block = &block[..block.len() - 40];
    assert_eq!(red(&format!("{cut_block}\n\nThe rest (of prose).")), format!("{m}\n\nThe rest (of prose)."));
    // Live: even a short start is masked.
    assert_eq!(redact_live("x -----BEGIN RSA PRIVATE KEY-----\nMIIE"), format!("x {m}"));
    assert_eq!(red("x -----BEGIN RSA PRIVATE KEY-----\nMIIE"), "x -----BEGIN RSA PRIVATE KEY-----\nMIIE");
    // Public keys and certificates are not secrets.
    let public = format!("-----BEGIN PUBLIC KEY-----\n{}\n-----END PUBLIC KEY-----", corpus::body(Body::Alnum, 64, 1));
    assert_eq!(red(&public), public);
}

#[test]
fn escaped_lines() {
    let m = MASK;
    let t = corpus::body(Body::Alnum, 30, 2);
    assert_eq!(red(&format!("a=Bearer%20{t}&b=1")), format!("a=Bearer%20{m}&b=1"));
    assert_eq!(red(&format!("h=Authorization%3A%20Basic%20{t}%3D%3D")), format!("h=Authorization%3A%20Basic%20{m}"));
    assert_eq!(red(&format!("q=api_key%3D{t}%26n%3D1")), format!("q=api_key%3D{m}%26n%3D1"));
    assert_eq!(red(&format!("s=\\u0068f_{t} ok")), format!("s={m} ok"));
    // Only ASCII escapes are decoded; a non-ASCII one stays as it is.
    assert_eq!(red("caf%C3%A9 token%3A"), "caf%C3%A9 token%3A");
    // Lines without escapes are not decoded; `+` is a space only on percent-encoded lines.
    assert_eq!(red(&format!("a+Bearer+{t}")), format!("a+Bearer+{t}"));
    assert_eq!(red(&format!("a%3D1&h=Bearer+{t}")), format!("a%3D1&h=Bearer+{m}"));
}

#[test]
fn live_edge_of_keyed_values() {
    let m = MASK;
    // A known value's start ending a growing text.
    assert_eq!(redact_live("PASSWORD=s3cretPassw0rd and again s3cre"), format!("PASSWORD={m} and again {m}"));
    assert_eq!(red("PASSWORD=s3cretPassw0rd and again s3cre"), format!("PASSWORD={m} and again s3cre"));
    // A URL password still arriving; a port is not one.
    assert_eq!(redact_live("postgres://app:s3cr"), format!("postgres://app:{m}"));
    assert_eq!(redact_live("see http://localhost:8080"), "see http://localhost:8080");
    // A JWT still arriving.
    assert_eq!(redact_live("jwt eyJhbGciOiJIUzI1NiJ9.eyJz"), format!("jwt {m}"));
}

#[test]
fn head_of_a_longer_text() {
    let m = MASK;
    let tok = format!("hal0ak_{}", corpus::body(Body::Alnum, 43, 1));
    let text = format!("start {tok} end");
    for n in 6..text.len() {
        let (head, cut) = redact_head(&text, n, false);
        assert_eq!(cut, n < text.len());
        assert!(!head.contains(&tok[7..10]), "{n}: {head:?}");
    }
    assert_eq!(redact_head(&text, 12, false), (format!("start {m}"), true));
    // A text that may still grow: its end is a live edge.
    assert_eq!(redact_head("see hf_ab", 100, true), (format!("see {m}"), false));
    assert_eq!(redact_head("see hf_ab", 100, false), ("see hf_ab".to_string(), false));
    // Context cut short of the end of the text: the end of the context is a live edge.
    let pem = "x -----BEGIN RSA PRIVATE KEY-----\nMIIE";
    let long = format!("{pem}{}\n.", " ".repeat(CONTEXT_CHARS + 10));
    assert_eq!(redact_head(&long, pem.len() - 2, false), (format!("x {m}"), true));
    let short = format!("{pem}{}\n.", " ".repeat(10));
    assert_eq!(redact_head(&short, pem.len() - 2, false), (pem[..pem.len() - 2].to_string(), true));
    assert_eq!(redact_head("short", 100, false), ("short".to_string(), false));
}
