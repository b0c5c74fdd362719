//! Throughput of the log redactor (`hal0::base::redact`) over a deterministic 10 MB mixed text:
//! prose (some of it non-ASCII), code, JSON (some of it JSON-escaped), env lines, headers,
//! CLI lines, percent-encoded URLs, and secrets at intervals (tokens of many shapes, hal0's
//! own keys, JWTs, Slack webhooks, PEM private keys). Times `redact`, `redact_live` and `redact_segments` on 4 KiB
//! segments (pages of 16 segments, and one segment per call, each with 8192 characters of
//! context on both sides), best of 5, and prints MB/s (1 MB = 10^6 bytes).
//!
//! Run: `cargo run --release --example bench_redact`

use hal0::base::redact::{self, MASK};
use std::time::{Duration, Instant};

const SIZE: usize = 10 * 1024 * 1024;
const SEGMENT: usize = 4096;
const PAGE: usize = 16;
const RUNS: usize = 5;

/// A 64-bit linear congruential generator (Knuth's MMIX constants); no randomness crate.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
    fn chars(&mut self, alphabet: &[u8], n: usize) -> String {
        (0..n).map(|_| alphabet[self.below(alphabet.len())] as char).collect()
    }
}

const TOKEN_CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
const B64URL: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
const UPPER_DIGITS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

const WORDS: &[&str] = &[
    "the",
    "model",
    "returned",
    "a",
    "summary",
    "of",
    "files",
    "token",
    "tokens",
    "key",
    "password",
    "run",
    "agent",
    "output",
    "error",
    "pending",
    "bridge",
    "session",
    "café",
    "naïve",
    "日本語",
    "テスト",
    "🎉",
    "résumé",
    "and",
    "with",
    "for",
    "is",
    "was",
    "keyboard",
    "monkey",
    "passage",
    "passed",
    "secretary",
    "bypass",
    "Bearer",
    "tokens",
];

/// A pool of fake secrets (so values repeat, as real ones do, for the cross-occurrence rule):
/// every 10th is a plain value, the rest cover the token shapes, PEM keys and webhooks.
fn secrets(rng: &mut Lcg) -> Vec<String> {
    let mut out = Vec::new();
    for i in 0..120 {
        let s = match i % 20 {
            0 => format!("hf_{}", rng.chars(ALNUM, 34)),
            1 => format!("sk-proj-{}", rng.chars(TOKEN_CHARS, 48)),
            2 => format!("ghp_{}", rng.chars(ALNUM, 36)),
            3 => format!("github_pat_{}", rng.chars(TOKEN_CHARS, 60)),
            4 => format!("xoxb-{}-{}", rng.chars(b"0123456789", 12), rng.chars(ALNUM, 24)),
            5 => format!("AKIA{}", rng.chars(UPPER_DIGITS, 16)),
            6 => format!("hal0bk_{}", rng.chars(TOKEN_CHARS, 40)),
            7 => format!("eyJ{}.eyJ{}.{}", rng.chars(B64URL, 30), rng.chars(B64URL, 60), rng.chars(B64URL, 43)),
            8 | 18 => rng.chars(ALNUM, 20),
            9 => format!("hal0ak_{}", rng.chars(ALNUM, 43)),
            10 => format!("ASIA{}", rng.chars(UPPER_DIGITS, 16)),
            11 => format!(
                "xapp-1-A0{}-{}-{}",
                rng.chars(UPPER_DIGITS, 9),
                rng.chars(b"0123456789", 13),
                rng.chars(ALNUM, 40)
            ),
            12 => format!("glpat-{}", rng.chars(TOKEN_CHARS, 20)),
            13 => format!("npm_{}", rng.chars(ALNUM, 36)),
            14 => format!("sk_live_{}", rng.chars(ALNUM, 99)),
            15 => format!("AIza{}", rng.chars(TOKEN_CHARS, 35)),
            16 => format!(
                "https://hooks.slack.com/services/T{}/B{}/{}",
                rng.chars(UPPER_DIGITS, 10),
                rng.chars(UPPER_DIGITS, 10),
                rng.chars(ALNUM, 24)
            ),
            17 => {
                let lines: Vec<String> = (0..6).map(|_| rng.chars(ALNUM, 64)).collect();
                format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----", lines.join("\n"))
            }
            _ => format!("xoxe-1-{}", rng.chars(ALNUM, 146)),
        };
        out.push(s);
    }
    out
}

fn line(rng: &mut Lcg, pool: &[String], out: &mut String) {
    let secret = &pool[rng.below(pool.len())];
    let plain = &pool[8 + 10 * rng.below(12)];
    match rng.below(100) {
        0..=54 => {
            let n = 6 + rng.below(14);
            for i in 0..n {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(rng.pick(WORDS));
            }
            out.push_str(".\n");
        }
        55..=69 => {
            let code = [
                "fn handle(req: Request) -> Result<Response, Error> {",
                "    let max_tokens = cfg.max_tokens.unwrap_or(512);",
                "    let tokenizer = Tokenizer::from_file(&path)?;",
                "    if token == expected { return Ok(()); }",
                "    for (i, item) in items.iter().enumerate() { total += item.len(); }",
                "}",
                "def main(argv: list[str]) -> int:",
                "    api_key = os.environ[\"OPENAI_API_KEY\"]",
                "    return 0  # passed",
            ];
            out.push_str(rng.pick(&code));
            out.push('\n');
        }
        70..=79 => {
            let id = rng.below(100_000);
            out.push_str(&format!(
                "{{\"id\": {id}, \"model\": \"llama-3\", \"usage\": {{\"input_tokens\": {}, \"output_tokens\": {}}}, \"text\": \"ok é ✓\"",
                rng.below(4000),
                rng.below(4000)
            ));
            if rng.below(3) == 0 {
                out.push_str(&format!(", \"api_key\": \"{secret}\""));
            }
            out.push_str("}\n");
        }
        80..=86 => {
            let env = match rng.below(6) {
                0 => format!("HF_TOKEN={secret}"),
                1 => format!("export OPENAI_API_KEY={secret}"),
                2 => format!("DATABASE_URL=postgres://app:{plain}@db:5432/app"),
                3 => "max_tokens=512 TOKENIZER=bpe HF_TOKEN_PATH=/etc/hf/token".to_string(),
                4 => format!("DB_PASSWORD=\"{plain} with spaces\""),
                _ => "HF_TOKEN=... # placeholder".to_string(),
            };
            out.push_str(&env);
            out.push('\n');
        }
        87..=91 => out.push_str(&format!("curl -H 'Authorization: Bearer {secret}' https://api.example.com/v1\n")),
        92..=93 => out.push_str(&format!("hal0 connect --api-key {secret} --max-tokens 256\n")),
        94 => out.push_str(&format!(
            "GET /cb?state=ok&auth=Bearer%20{}&next=%2Fhome%3Fq%3Done\n",
            &secret[..20.min(secret.len())]
        )),
        95 => out.push_str(&format!("{{\\\"error\\\":\\\"bad key\\\", \\\"key\\\": \\\"{secret}\\\"}}\n")),
        _ => out.push_str(&format!("found {secret} in the log; later {plain} again\n")),
    }
}

fn build() -> String {
    let mut rng = Lcg(0x5EED_0F4A_1000);
    let pool = secrets(&mut rng);
    let mut text = String::with_capacity(SIZE + 512);
    while text.len() < SIZE {
        line(&mut rng, &pool, &mut text);
    }
    let (cut, _) = redact::cut(&text, SIZE);
    cut.to_string()
}

fn best<T>(mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..RUNS {
        let t = Instant::now();
        let out = f();
        best = best.min(t.elapsed());
        last = Some(out);
    }
    (best, last.expect("RUNS > 0"))
}

fn mbs(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / 1e6 / d.as_secs_f64()
}

/// 4 KiB segments of `text`, cut on char boundaries, as (start, end) byte offsets.
fn segments(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let (seg, _) = redact::cut(&text[start..], SEGMENT);
        out.push((start, start + seg.len()));
        start += seg.len();
    }
    out
}

fn main() {
    let t = Instant::now();
    let text = build();
    println!("text: {} bytes, {} lines, built in {:.2?}", text.len(), text.lines().count(), t.elapsed());

    let (d, out) = best(|| redact::redact(&text).into_owned());
    println!("redact:       {:>8.1} MB/s  ({:.1?}, {} masks)", mbs(text.len(), d), d, out.matches(MASK).count());

    let (d, out) = best(|| redact::redact_live(&text));
    println!("redact_live:  {:>8.1} MB/s  ({:.1?}, {} masks)", mbs(text.len(), d), d, out.matches(MASK).count());

    let segs = segments(&text);
    let pages: Vec<&[(usize, usize)]> = segs.chunks(PAGE).collect();
    let (d, masks) = best(|| {
        let mut masks = 0;
        for page in &pages {
            let (start, end) = (page[0].0, page[page.len() - 1].1);
            let parts: Vec<&str> = page.iter().map(|&(a, b)| &text[a..b]).collect();
            let before = redact::context_before(&text[..start]);
            let after = redact::context_after(&text[end..]);
            for s in redact::redact_segments(before, &parts, after, false) {
                masks += s.matches(MASK).count();
            }
        }
        masks
    });
    println!(
        "redact_segments, {} pages of {PAGE} x 4 KiB, 8192-char context: {:>8.1} MB/s of segments ({:.1?}, {masks} masks)",
        pages.len(),
        mbs(text.len(), d),
        d
    );

    let (d, masks) = best(|| {
        let mut masks = 0;
        for &(start, end) in &segs {
            let before = redact::context_before(&text[..start]);
            let after = redact::context_after(&text[end..]);
            for s in redact::redact_segments(before, &[&text[start..end]], after, false) {
                masks += s.matches(MASK).count();
            }
        }
        masks
    });
    println!(
        "redact_segments, {} calls of 1 x 4 KiB, 8192-char context: {:>8.1} MB/s of segments ({:.1?}, {masks} masks)",
        segs.len(),
        mbs(text.len(), d),
        d
    );
}
