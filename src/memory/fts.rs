//! Turning a caller's search text into an FTS5 `MATCH` expression that can never be a
//! syntax error: the text is cut into plain words (letters and digits), each word becomes
//! a quoted FTS5 string, and the words are OR-ed so bm25 ranks notes holding more of them
//! first. Operators (`AND`, `NEAR`, `-`, `*`, `:`, parentheses, quotes) are only words or
//! separators here, never syntax.

/// At most this many words reach FTS5; the rest of a long query is ignored.
pub const MAX_TERMS: usize = 32;
/// A single word longer than this is cut (no real word is; it bounds the work).
pub const MAX_TERM_CHARS: usize = 64;

/// The words of `query`, in order, deduplicated case-insensitively.
pub fn terms(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in query.split(|c: char| !c.is_alphanumeric()) {
        if w.is_empty() {
            continue;
        }
        let w: String = w.chars().take(MAX_TERM_CHARS).collect();
        if out.iter().any(|o| o.to_lowercase() == w.to_lowercase()) {
            continue;
        }
        out.push(w);
        if out.len() == MAX_TERMS {
            break;
        }
    }
    out
}

/// English function words dropped from a query that has other words: they match nearly
/// every note, carry almost no bm25 weight, and would make bm25 score the whole bank.
const STOPWORDS: &[&str] = &[
    "a", "about", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been", "being", "but", "by", "can",
    "could", "did", "do", "does", "for", "from", "had", "has", "have", "he", "her", "his", "how", "i", "if", "in",
    "into", "is", "it", "its", "just", "me", "my", "of", "on", "or", "our", "she", "should", "so", "than", "that",
    "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "us", "was", "we", "were", "what",
    "when", "where", "which", "who", "whom", "why", "will", "with", "would", "you", "your",
];

fn is_stopword(w: &str) -> bool {
    STOPWORDS.contains(&w.to_lowercase().as_str())
}

/// The `MATCH` expression for `query`, or `None` when it holds no word at all (the search
/// then finds nothing rather than failing). Stopwords are left out unless the query is
/// nothing but stopwords.
pub fn match_expr(query: &str) -> Option<String> {
    let mut t = terms(query);
    if t.is_empty() {
        return None;
    }
    if t.iter().any(|w| !is_stopword(w)) {
        t.retain(|w| !is_stopword(w));
    }
    // A word holds no `"` (it is letters and digits only), so quoting needs no escaping;
    // doubling is kept as a second guard should the word rule ever change.
    Some(t.iter().map(|w| format!("\"{}\"", w.replace('"', "\"\""))).collect::<Vec<_>>().join(" OR "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;

    #[test]
    fn words_only() {
        assert_eq!(terms("the quick-brown fox"), vec!["the", "quick", "brown", "fox"]);
        assert_eq!(terms("a:b -x NEAR(y, z) \"q\" w*"), vec!["a", "b", "x", "NEAR", "y", "z", "q", "w"]);
        assert_eq!(terms("Fox fox FOX"), vec!["Fox"]);
        assert_eq!(terms("café naïve 東京"), vec!["café", "naïve", "東京"]);
        assert!(terms("\"*-:()^ \u{200b}").is_empty());
        assert_eq!(terms(&"w ".repeat(100)).len(), 1);
        let many: String = (0..100).map(|i| format!("w{i} ")).collect();
        assert_eq!(terms(&many).len(), MAX_TERMS);
        assert_eq!(terms(&"x".repeat(500))[0].len(), MAX_TERM_CHARS);
    }

    #[test]
    fn expression_is_quoted_and_or_ed() {
        assert_eq!(match_expr("NEAR(x y)").unwrap(), "\"NEAR\" OR \"x\" OR \"y\"");
        assert_eq!(match_expr("()\"*"), None);
        assert_eq!(match_expr("What is the deploy schedule?").unwrap(), "\"deploy\" OR \"schedule\"");
        assert_eq!(match_expr("to be or not").unwrap(), "\"not\"");
        assert_eq!(match_expr("The").unwrap(), "\"The\"", "only stopwords: kept");
    }

    /// Every hostile query runs against a real FTS5 table without an SQL error.
    #[test]
    fn hostile_queries_never_fail_in_sqlite() {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61');
             INSERT INTO t(body) VALUES ('the foxes jumped over a:b'), ('NEAR the river'), ('x-ray vision');",
        )
        .unwrap();
        let hostile = [
            "\"",
            "\"\"",
            "*",
            "a*",
            "NEAR(",
            "NEAR(a b, 2)",
            "a:b",
            "body:fox",
            "-x",
            "((fox",
            "fox)",
            "AND",
            "OR OR",
            "NOT fox",
            "fox AND",
            "^fox",
            "{body}: fox",
            "'; DROP TABLE t; --",
            "\u{0}",
            "ﬁx \u{301}e",
            "\u{345}",
            "\u{345} \u{2160}",
            "fox",
            "foxes jumping",
        ];
        for q in hostile {
            let Some(m) = match_expr(q) else { continue };
            let n: i64 = c
                .query_row("SELECT count(*) FROM t WHERE t MATCH ?1 ORDER BY bm25(t)", [&m], |r| r.get(0))
                .unwrap_or_else(|e| panic!("query {q:?} as {m:?} failed: {e}"));
            assert!(n >= 0);
        }
        let n: i64 = c
            .query_row("SELECT count(*) FROM t WHERE t MATCH ?1", [match_expr("jumping fox").unwrap()], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1, "porter stemming matches foxes/jumped");
    }
}
