//! Property tests of the YAML editor ([`crate::base::yamledit::YamlDoc`]) on generated Hermes-like
//! `config.yaml` files (other top-level keys, comments, blank lines, an `mcp_servers:`
//! section with entries, LF or CRLF, with or without a final newline): an edit changes only
//! the lines of the entry it is about, the result parses with every other key unchanged, a
//! set-then-remove gives back the original bytes, and arbitrary text never panics.

use crate::base::yamledit::YamlDoc;
use proptest::prelude::*;
use serde_json::{Value as Json, json};
use serde_yaml_ng::Value as Yaml;

const S: &str = "mcp_servers";

/// One top-level block of the document, as text lines (no line ends).
#[derive(Debug, Clone)]
enum Block {
    Comment(String),
    Blank,
    Scalar(String, String),
    Nested(String, Vec<(String, String)>),
}

/// An entry of `mcp_servers`: its name and its lines (indented by 2).
#[derive(Debug, Clone)]
struct Entry {
    name: String,
    lines: Vec<String>,
}

#[derive(Debug, Clone)]
struct Doc {
    before: Vec<Block>,
    /// `None`: no `mcp_servers:` section.
    section: Option<Vec<Entry>>,
    after: Vec<Block>,
    crlf: bool,
    final_eol: bool,
}

fn scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z][a-z0-9_]{0,10}",
        "[0-9]{1,4}",
        Just("true".to_string()),
        Just("\"quoted: # not a comment\"".to_string()),
        Just("'single'".to_string()),
        Just("[a, b]".to_string()),
        Just("{}".to_string()),
        "[a-z]{1,6} # trailing comment",
    ]
}

fn block(i: usize) -> impl Strategy<Value = Block> {
    prop_oneof![
        "[ a-z]{0,20}".prop_map(|c| Block::Comment(format!("#{c}"))),
        Just(Block::Blank),
        scalar().prop_map(move |v| Block::Scalar(format!("key{i}"), v)),
        proptest::collection::vec(("[a-z]{1,6}", scalar()), 1..4)
            .prop_map(move |kv| Block::Nested(format!("map{i}"), kv)),
    ]
}

fn blocks(base: usize) -> impl Strategy<Value = Vec<Block>> {
    proptest::collection::vec(0..4usize, 0..5)
        .prop_flat_map(move |kinds| kinds.iter().enumerate().map(|(i, _)| block(base + i)).collect::<Vec<_>>())
}

fn entry(j: usize) -> impl Strategy<Value = Entry> {
    (scalar(), proptest::bool::ANY, proptest::bool::ANY, 0u8..3).prop_map(move |(v, comment, headers, style)| {
        let name = match style {
            0 => format!("server{j}"),
            1 => format!("\"srv-{j}\""),
            _ => format!("s{j}"),
        };
        let mut lines = vec![format!("  {name}:"), format!("    url: http://127.0.0.1:{}/mcp", 9000 + j)];
        if comment {
            lines.push("    # the operator's note".into());
        }
        lines.push(format!("    extra: {v}"));
        if headers {
            lines.push("    headers:".into());
            lines.push("      Authorization: \"Bearer ${TOKEN}\"".into());
        }
        Entry { name: name.trim_matches('"').to_string(), lines }
    })
}

fn doc() -> impl Strategy<Value = Doc> {
    let section = proptest::option::weighted(
        0.85,
        proptest::collection::vec(0..1usize, 1..5)
            .prop_flat_map(|n| n.iter().enumerate().map(|(j, _)| entry(j)).collect::<Vec<_>>()),
    );
    (blocks(0), section, blocks(100), proptest::bool::ANY, proptest::bool::ANY)
        .prop_map(|(before, section, after, crlf, final_eol)| Doc { before, section, after, crlf, final_eol })
}

fn block_lines(b: &Block) -> Vec<String> {
    match b {
        Block::Comment(c) => vec![c.clone()],
        Block::Blank => vec![String::new()],
        Block::Scalar(k, v) => vec![format!("{k}: {v}")],
        Block::Nested(k, kv) => {
            let mut out = vec![format!("{k}:")];
            let mut seen = std::collections::BTreeSet::new();
            for (sk, v) in kv {
                if seen.insert(sk.clone()) {
                    out.push(format!("  {sk}: {v}"));
                }
            }
            out
        }
    }
}

impl Doc {
    fn lines(&self, section: Option<&[Entry]>) -> Vec<String> {
        let mut out: Vec<String> = self.before.iter().flat_map(block_lines).collect();
        if let Some(entries) = section {
            out.push(format!("{S}:"));
            for e in entries {
                out.extend(e.lines.iter().cloned());
            }
        }
        out.extend(self.after.iter().flat_map(block_lines));
        out
    }

    fn join(&self, lines: &[String]) -> String {
        let eol = if self.crlf { "\r\n" } else { "\n" };
        let mut s = lines.join(eol);
        if self.final_eol && !lines.is_empty() {
            s.push_str(eol);
        }
        s
    }

    fn text(&self) -> String {
        self.join(&self.lines(self.section.as_deref()))
    }
}

fn value() -> impl Strategy<Value = Json> {
    let text = prop_oneof![
        "[a-zA-Z0-9 :#'\"{}\\[\\],&*!|>%@`-]{0,24}",
        Just("Bearer ${HAL0_KEY}".to_string()),
        Just("yes".to_string()),
        Just("null".to_string()),
        Just(" leading space".to_string()),
        Just("- item".to_string()),
        any::<String>(),
    ];
    (text.clone(), 0u32..10_000, proptest::option::of(text)).prop_map(|(url, timeout, header)| {
        let mut v = json!({"url": url, "timeout": timeout});
        if let Some(h) = header {
            v["headers"] = json!({"Authorization": h});
        }
        v
    })
}

/// `new` is `old` with bytes inserted at one place.
fn one_insertion(old: &str, new: &str) -> bool {
    let p = old.bytes().zip(new.bytes()).take_while(|(a, b)| a == b).count();
    let (o, n) = (&old.as_bytes()[p..], &new.as_bytes()[p..]);
    let s = o.iter().rev().zip(n.iter().rev()).take_while(|(a, b)| a == b).count();
    p + s >= old.len() && new.len() >= old.len()
}

/// Every top-level key but `mcp_servers` holds the same value in both texts.
fn others_unchanged(old: &str, new: &str) -> bool {
    let (a, b): (Yaml, Yaml) = (serde_yaml_ng::from_str(old).unwrap(), serde_yaml_ng::from_str(new).unwrap());
    let strip = |v: Yaml| match v {
        Yaml::Mapping(mut m) => {
            m.remove(S);
            m
        }
        _ => serde_yaml_ng::Mapping::new(),
    };
    strip(a) == strip(b)
}

fn no_bare_lf(s: &str) -> bool {
    s.matches('\n').count() == s.matches("\r\n").count()
}

proptest! {
    #![proptest_config(crate::base::prop::config(384))]

    /// Setting a new entry inserts its lines at one place and nothing else changes;
    /// removing it again gives back the original bytes.
    #[test]
    fn set_new_entry_is_one_insertion_and_remove_restores(d in doc(), v in value()) {
        let text = d.text();
        let mut y = YamlDoc::parse(&text).unwrap();
        y.set_entry(S, "hal0-new", &v).unwrap();
        prop_assert_eq!(y.get(&[S, "hal0-new"]), Some(v.clone()));
        prop_assert!(others_unchanged(&text, y.text()), "{}\n---\n{}", text, y.text());
        if text.contains("\r\n") {
            prop_assert!(no_bare_lf(y.text()), "{:?}", y.text());
        }
        if d.section.is_some() {
            prop_assert!(one_insertion(&text, y.text()), "{:?}\n---\n{:?}", text, y.text());
            prop_assert!(y.remove_entry(S, "hal0-new").unwrap());
            prop_assert_eq!(y.text(), text.as_str());
        } else {
            // The section is created at the end of the document.
            prop_assert!(y.text().starts_with(text.as_str()) || !d.final_eol, "{:?}\n---\n{:?}", text, y.text());
        }
        YamlDoc::parse(y.text()).unwrap();
    }

    /// Replacing or removing an existing entry changes only that entry's lines (and, when the
    /// last one goes, the section header becomes `mcp_servers: {}`).
    #[test]
    fn replace_and_remove_touch_only_that_entry(d in doc(), v in value(), pick in any::<prop::sample::Index>()) {
        let Some(entries) = d.section.clone() else { return Ok(()) };
        let i = pick.index(entries.len());
        let name = entries[i].name.clone();
        let text = d.text();

        let mut y = YamlDoc::parse(&text).unwrap();
        y.set_entry(S, &name, &v).unwrap();
        prop_assert_eq!(y.get(&[S, &name]), Some(v.clone()));
        prop_assert!(others_unchanged(&text, y.text()));
        // The lines before and after the entry are kept byte for byte.
        let eol = if d.crlf { "\r\n" } else { "\n" };
        let head: String = d.before.iter().flat_map(block_lines)
            .chain(std::iter::once(format!("{S}:")))
            .chain(entries[..i].iter().flat_map(|e| e.lines.clone()))
            .map(|l| format!("{l}{eol}"))
            .collect();
        prop_assert!(y.text().starts_with(&head), "{:?}\n---\n{:?}", text, y.text());
        let tail: Vec<String> = entries[i + 1..].iter().flat_map(|e| e.lines.clone())
            .chain(d.after.iter().flat_map(block_lines)).collect();
        let tail = d.join(&tail);
        prop_assert!(y.text().ends_with(&tail), "{:?}\n---\n{:?}", text, y.text());

        let mut y = YamlDoc::parse(&text).unwrap();
        prop_assert!(y.remove_entry(S, &name).unwrap());
        let mut rest = entries.clone();
        rest.remove(i);
        let mut want = d.lines(Some(&rest));
        if rest.is_empty() {
            let h = want.iter().position(|l| l == &format!("{S}:")).unwrap();
            want[h] = format!("{S}: {{}}");
        }
        let want = d.join(&want);
        prop_assert_eq!(y.text(), want.as_str());
        prop_assert!(others_unchanged(&text, y.text()));
        prop_assert_eq!(y.get(&[S, &name]), None);
    }

    /// Any text: parsing and editing never panic.
    #[test]
    fn arbitrary_text_never_panics(
        text in prop_oneof![
            any::<String>(),
            "(mcp_servers:|  [a-z]{1,3}:|    url: [a-z]{1,3}|#[a-z ]{0,5}|[a-z]{1,3}: [\\[\\]{}'\",a-z ]{0,6}| {0,6}- [a-z]{0,3}|\t|---|\\.\\.\\.|\r|)(\r?\n(mcp_servers:|  [a-z]{1,3}:|    url: [a-z]{1,3}|#[a-z ]{0,5}|[a-z]{1,3}: [\\[\\]{}'\",a-z ]{0,6}| {0,6}- [a-z]{0,3}|---|)){0,12}",
        ],
        v in value(),
    ) {
        if let Ok(mut y) = YamlDoc::parse(&text) {
            let _ = y.set_entry(S, "hal0-x", &v);
            let _ = y.remove_entry(S, "hal0-x");
            let _ = y.remove_entry(S, "a");
        }
    }
}
