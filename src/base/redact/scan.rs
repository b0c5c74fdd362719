//! The trigger pass: find every place a rule may start, with SIMD byte and substring searches
//! (`memchr`), and hand each to its rule, which reads the text around it. Text without any
//! trigger is done after these searches.
//!
//! - `:` and `=`: rule 1's header form and rule 2 look at the name before the separator
//!   (`Authorization:`, `api_key=`); `://` starts rule 3.
//! - `b`/`B`: a bare `Bearer` (rule 1).
//! - `-`, `_`, `.`: `--` starts rule 4, `-----BEGIN` a PEM block; a token prefix of [`TOKENS`]
//!   holding one of them is recognised from its first such byte and the two bytes before it.
//!   The other prefixes are found by their first byte, or as a whole.
//! - `eyJ` (rule 5) and masks already in the text ([`MASK`]) as substrings.

use super::tokens::TOKENS;
use super::{Found, MASK, keyed, shapes};
use memchr::memmem;
use std::sync::LazyLock;

/// Bytes from which a token prefix holding one is found.
const ANCHORS: [u8; 3] = [b'_', b'-', b'.'];

/// How token prefixes are found.
struct Prefixes {
    /// For a prefix holding an anchor: (anchor and the two bytes before it, offset of that
    /// anchor in the prefix, token), sorted.
    keyed: Vec<(u32, usize, usize)>,
    /// One bit per hash of a key of `keyed`.
    filter: Vec<u64>,
    /// For the others: (first byte, tokens starting with it), searched by that byte when
    /// several share it.
    heads: Vec<(u8, Vec<usize>)>,
    /// The others that are alone with their first byte, searched as a whole.
    whole: Vec<(memmem::Finder<'static>, usize)>,
}

const FILTER_BITS: u32 = 16;

fn key(anchor: u8, b1: u8, b2: u8) -> u32 {
    u32::from(anchor) << 16 | u32::from(b1) << 8 | u32::from(b2)
}

fn key_hash(k: u32) -> usize {
    (k.wrapping_mul(0x9E37_79B1) >> (32 - FILTER_BITS)) as usize
}

static PREFIXES: LazyLock<Prefixes> = LazyLock::new(|| {
    let mut p =
        Prefixes { keyed: Vec::new(), filter: vec![0; 1 << (FILTER_BITS - 6)], heads: Vec::new(), whole: Vec::new() };
    let mut heads: Vec<(u8, Vec<usize>)> = Vec::new();
    for (i, t) in TOKENS.iter().enumerate() {
        let b = t.prefix.as_bytes();
        match b.iter().position(|c| ANCHORS.contains(c)) {
            Some(o) => {
                assert!(o >= 2, "redact: {} has two bytes before its anchor", t.prefix);
                let k = key(b[o], b[o - 2], b[o - 1]);
                p.keyed.push((k, o, i));
                let h = key_hash(k);
                p.filter[h >> 6] |= 1 << (h & 63);
            }
            None => match heads.iter_mut().find(|(c, _)| *c == b[0]) {
                Some((_, v)) => v.push(i),
                None => heads.push((b[0], vec![i])),
            },
        }
    }
    p.keyed.sort_unstable();
    for (c, v) in heads {
        if let [i] = v[..] {
            p.whole.push((memmem::Finder::new(TOKENS[i].prefix.as_bytes()), i));
        } else {
            p.heads.push((c, v));
        }
    }
    p
});

impl Prefixes {
    /// Every (start, token) where a token prefix occurs in `b`, sorted; `dash` sees every `-`.
    fn find(&self, b: &[u8], mut dash: impl FnMut(usize)) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let at = |s: usize, i: usize| b[s..].starts_with(TOKENS[i].prefix.as_bytes());
        for a in memchr::memchr3_iter(ANCHORS[0], ANCHORS[1], ANCHORS[2], b) {
            if b[a] == b'-' {
                dash(a);
            }
            if a < 2 {
                continue;
            }
            let k = key(b[a], b[a - 2], b[a - 1]);
            let h = key_hash(k);
            if self.filter[h >> 6] & (1 << (h & 63)) == 0 {
                continue;
            }
            let from = self.keyed.partition_point(|e| e.0 < k);
            for &(_, o, i) in self.keyed[from..].iter().take_while(|e| e.0 == k) {
                if a >= o && at(a - o, i) {
                    out.push((a - o, i));
                }
            }
        }
        for (c, tokens) in &self.heads {
            for s in memchr::memchr_iter(*c, b) {
                let next = b.get(s + 1).copied();
                out.extend(
                    tokens
                        .iter()
                        .filter(|&&i| next == TOKENS[i].prefix.as_bytes().get(1).copied() && at(s, i))
                        .map(|&i| (s, i)),
                );
            }
        }
        for (finder, i) in &self.whole {
            out.extend(finder.find_iter(b).map(|s| (s, *i)));
        }
        out.sort_unstable();
        out
    }
}

static MASKS: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new(MASK.as_bytes()));
static JWTS: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new(b"eyJ"));

/// Where each rule may resume: a rule that read past a position (a URL authority, a flag, a
/// token body) does not start again inside what it read, as a regex search would not.
#[derive(Default)]
pub(crate) struct Resume {
    pub url: usize,
    pub flag: usize,
    pub jwt: usize,
    pub pem: usize,
    pub token: usize,
}

/// Run every rule that a trigger in `text` starts (rules 1–6, PEM blocks, the live edge of
/// tokens and bare `Bearer` values, masks already present) into `f`.
pub(crate) fn scan(text: &str, live: bool, f: &mut Found) {
    let b = text.as_bytes();
    let mut at = Resume::default();
    let mut memo = keyed::Memo::default();
    for i in memchr::memchr2_iter(b':', b'=', b) {
        keyed::separator(text, i, &mut memo, f);
        if b[i + 1..].starts_with(b"//") {
            keyed::url(text, i, live, &mut at.url, f);
        }
    }
    for p in memchr::memchr2_iter(b'b', b'B', b) {
        if keyed::starts_with_ci(&b[p..], "bearer") {
            keyed::bearer(text, p, live, f);
        }
    }
    let tokens = PREFIXES.find(b, |a| {
        if b[a + 1..].starts_with(b"-") {
            keyed::flag(text, a, &mut at.flag, f);
            if b[a..].starts_with(b"-----BEGIN") {
                shapes::pem(text, a, live, &mut at.pem, f);
            }
        }
    });
    for (s, i) in tokens {
        shapes::token(text, s, &TOKENS[i], live, &mut at.token, f);
    }
    for s in JWTS.find_iter(b) {
        shapes::jwt(text, s, live, &mut at.jwt, f);
    }
    let mut next = 0;
    for s in MASKS.find_iter(b) {
        if s >= next {
            next = s + MASK.len();
            f.masks.push(s..next);
        }
    }
}
