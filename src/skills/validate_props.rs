//! Property tests of the push check ([`super::validate::validate_push`]): it never panics
//! whatever it is given, refuses only with `bridge.skill_invalid` and a message that shows no
//! hidden character, and a valid skill stays valid under changes no rule is about.

use super::validate::{CODE_INVALID, MAX_FILES, validate_push};
use proptest::prelude::*;
use std::collections::BTreeMap;

const WORDS: &[&str] = &[
    "the",
    "skill",
    "lists",
    "items",
    "run",
    "example",
    "command",
    "and",
    "read",
    "output",
    "files",
    "with",
    "json",
    "a",
    "to",
    "of",
    "for",
    "notes",
    "use",
    "check",
    "café",
    "日本語",
    "🚀",
    "✅",
    "step",
    "then",
    "report",
];

fn words(max: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(WORDS), 1..max).prop_map(|w| w.join(" "))
}

fn paragraphs() -> impl Strategy<Value = String> {
    proptest::collection::vec(words(16), 0..6).prop_map(|p| p.join("\n\n"))
}

/// A skill every rule accepts: (name, SKILL.md, files).
fn valid_skill() -> impl Strategy<Value = (String, String, BTreeMap<String, String>)> {
    // A name the redactor would mask (`sk-…`) is refused on purpose: not a valid skill.
    let name = "[a-z0-9][a-z0-9-]{0,30}".prop_filter("not token-shaped", |n| crate::base::redact::redact(n) == *n);
    let files = proptest::collection::btree_map("[a-z][a-z0-9_-]{0,12}\\.(md|txt)", paragraphs(), 0..4);
    (name, words(12), paragraphs(), files).prop_map(|(name, desc, body, files)| {
        let md = format!("---\nname: \"{name}\"\ndescription: {desc}\n---\n# {name}\n\n{body}\n");
        (name, md, files)
    })
}

/// Text of any shape: arbitrary strings, and SKILL.md-like text with arbitrary pieces.
fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        (any::<String>(), any::<String>(), any::<String>())
            .prop_map(|(n, d, b)| format!("---\nname: {n}\ndescription: {d}\n---\n{b}")),
        ("[ -~\n\t\r]{0,200}").prop_map(|s| format!("---\n{s}")),
        Just(String::new()),
    ]
}

proptest! {
    #![proptest_config(crate::base::prop::config(512))]

    /// Anything in: no panic, and a refusal is `bridge.skill_invalid` (422) whose message
    /// shows no control or invisible character.
    #[test]
    fn never_panics_and_refuses_cleanly(
        name in prop_oneof!["[a-z0-9-]{0,70}", any::<String>()],
        md in any_text(),
        files in proptest::collection::btree_map(any::<String>(), any_text(), 0..4),
    ) {
        if let Err(e) = validate_push(&name, &md, &files) {
            prop_assert_eq!(e.code, CODE_INVALID);
            prop_assert_eq!(e.status(), 422);
            prop_assert!(!e.message.chars().any(crate::base::term::escaped), "{:?}", e.message);
        }
    }

    /// A valid skill stays valid when a paragraph is appended, a blank line or a heading is
    /// added, or a plain file is added.
    #[test]
    fn valid_stays_valid_under_irrelevant_changes(
        (name, md, files) in valid_skill(),
        extra in words(20),
        new_file in ("[a-z][a-z0-9]{0,8}\\.md", paragraphs()),
    ) {
        prop_assert!(validate_push(&name, &md, &files).is_ok(), "{:?}", validate_push(&name, &md, &files));
        let longer = format!("{md}\n{extra}\n");
        prop_assert!(validate_push(&name, &longer, &files).is_ok(), "{:?}", validate_push(&name, &longer, &files));
        let spaced = md.replace("\n\n", "\n\n\n");
        prop_assert!(validate_push(&name, &spaced, &files).is_ok());
        let headed = format!("{md}\n## {extra}\n");
        prop_assert!(validate_push(&name, &headed, &files).is_ok());
        if files.len() < MAX_FILES {
            let mut more = files.clone();
            more.insert(new_file.0, new_file.1);
            prop_assert!(validate_push(&name, &md, &more).is_ok(), "{:?}", validate_push(&name, &md, &more));
        }
    }
}
