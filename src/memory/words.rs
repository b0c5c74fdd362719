//! Words, the one rule shared by the index and the queries: text is cut into runs of
//! letters and digits, lower-cased, Latin diacritics dropped (`café` is `cafe`), and each
//! word stemmed (Snowball English, so `foxes` is `fox`). A caller's search text is only
//! ever words: operators, quotes and punctuation are separators, never syntax.

use rust_stemmers::{Algorithm, Stemmer};
use std::borrow::Cow;

/// At most this many words of a query are used; the rest of a long query is ignored.
pub const MAX_TERMS: usize = 32;
/// A single word longer than this is cut (no real word is; it bounds the work).
pub const MAX_TERM_CHARS: usize = 64;

/// The raw words of `text` (cut to [`MAX_TERM_CHARS`]), in order.
pub fn raw(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(|w| {
        match w.char_indices().nth(MAX_TERM_CHARS) {
            Some((i, _)) => &w[..i],
            None => w,
        }
    })
}

/// `w` lower-cased with Latin diacritics dropped.
pub fn fold(w: &str) -> Cow<'_, str> {
    if w.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()) {
        return Cow::Borrowed(w);
    }
    let mut out = String::with_capacity(w.len());
    for c in w.chars().flat_map(char::to_lowercase).filter(|c| c.is_alphanumeric()) {
        out.push(base_letter(c));
    }
    Cow::Owned(out)
}

/// The letter without its accent, for the accented lower-case Latin letters in common use.
fn base_letter(c: char) -> char {
    match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' | 'ă' | 'ą' => 'a',
        'ç' | 'ć' | 'ĉ' | 'ċ' | 'č' => 'c',
        'ď' | 'đ' => 'd',
        'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ĕ' | 'ė' | 'ę' | 'ě' => 'e',
        'ĝ' | 'ğ' | 'ġ' | 'ģ' => 'g',
        'ĥ' | 'ħ' => 'h',
        'ì' | 'í' | 'î' | 'ï' | 'ĩ' | 'ī' | 'ĭ' | 'į' | 'ı' => 'i',
        'ĵ' => 'j',
        'ķ' => 'k',
        'ĺ' | 'ļ' | 'ľ' | 'ŀ' | 'ł' => 'l',
        'ñ' | 'ń' | 'ņ' | 'ň' => 'n',
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' | 'ŏ' | 'ő' => 'o',
        'ŕ' | 'ŗ' | 'ř' => 'r',
        'ś' | 'ŝ' | 'ş' | 'š' => 's',
        'ţ' | 'ť' | 'ŧ' => 't',
        'ù' | 'ú' | 'û' | 'ü' | 'ũ' | 'ū' | 'ŭ' | 'ů' | 'ű' | 'ų' => 'u',
        'ŵ' => 'w',
        'ý' | 'ÿ' | 'ŷ' => 'y',
        'ź' | 'ż' | 'ž' => 'z',
        c => c,
    }
}

/// The index term of a raw word: folded and stemmed.
pub fn term(w: &str) -> String {
    let f = fold(w);
    Stemmer::create(Algorithm::English).stem(&f).into_owned()
}

/// English function words dropped from a query that has other words: they match nearly
/// every note and carry almost no weight.
const STOPWORDS: &[&str] = &[
    "a", "about", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been", "being", "but", "by", "can",
    "could", "did", "do", "does", "for", "from", "had", "has", "have", "he", "her", "his", "how", "i", "if", "in",
    "into", "is", "it", "its", "just", "me", "my", "of", "on", "or", "our", "she", "should", "so", "than", "that",
    "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "us", "was", "we", "were", "what",
    "when", "where", "which", "who", "whom", "why", "will", "with", "would", "you", "your",
];

fn is_stopword(w: &str) -> bool {
    STOPWORDS.contains(&fold(w).as_ref())
}

/// The words of `query`, in order, deduplicated case-insensitively, at most [`MAX_TERMS`].
pub fn query_words(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in raw(query) {
        if out.iter().any(|o| o.to_lowercase() == w.to_lowercase()) {
            continue;
        }
        out.push(w.to_string());
        if out.len() == MAX_TERMS {
            break;
        }
    }
    out
}

/// The index terms `query` looks for (stemmed, distinct), or none when it holds no word.
/// Stopwords are left out unless the query is nothing but stopwords.
pub fn query_terms(query: &str) -> Vec<String> {
    let mut w = query_words(query);
    if w.iter().any(|w| !is_stopword(w)) {
        w.retain(|w| !is_stopword(w));
    }
    let mut out: Vec<String> = Vec::new();
    for t in w.iter().map(|w| term(w)) {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_only() {
        assert_eq!(query_words("the quick-brown fox"), vec!["the", "quick", "brown", "fox"]);
        assert_eq!(query_words("a:b -x NEAR(y, z) \"q\" w*"), vec!["a", "b", "x", "NEAR", "y", "z", "q", "w"]);
        assert_eq!(query_words("Fox fox FOX"), vec!["Fox"]);
        assert_eq!(query_words("café naïve 東京"), vec!["café", "naïve", "東京"]);
        assert!(query_words("\"*-:()^ \u{200b}").is_empty());
        assert_eq!(query_words(&"w ".repeat(100)).len(), 1);
        let many: String = (0..100).map(|i| format!("w{i} ")).collect();
        assert_eq!(query_words(&many).len(), MAX_TERMS);
        assert_eq!(query_words(&"x".repeat(500))[0].len(), MAX_TERM_CHARS);
        assert_eq!(raw(&"é".repeat(100)).next().unwrap().chars().count(), MAX_TERM_CHARS);
    }

    #[test]
    fn terms_are_folded_stemmed_and_stopwords_dropped() {
        assert_eq!(query_terms("NEAR(x y)"), vec!["near", "x", "y"]);
        assert!(query_terms("()\"*").is_empty());
        assert_eq!(query_terms("What is the deploy schedule?"), vec!["deploy", "schedul"]);
        assert_eq!(query_terms("to be or not"), vec!["not"]);
        assert_eq!(query_terms("The"), vec!["the"], "only stopwords: kept");
        assert_eq!(query_terms("foxes fox Fox"), vec!["fox"]);
        assert_eq!(query_terms("Café CAFÉ"), vec!["cafe"]);
        assert_eq!(term("jumped"), term("jumping"));
    }

    /// Hostile text is only ever words.
    #[test]
    fn hostile_queries_are_plain_words() {
        for q in [
            "\"",
            "*",
            "NEAR(a b, 2)",
            "body:fox",
            "((fox",
            "NOT fox",
            "'; DROP TABLE t; --",
            "\u{0}",
            "ﬁx \u{301}e",
            "\u{345} \u{2160}",
        ] {
            for t in query_terms(q) {
                assert!(!t.is_empty() && t.chars().all(char::is_alphanumeric), "{q:?} gave {t:?}");
            }
        }
    }
}
