//! The inbox card of a proposed skill and its content digest.
//!
//! The card shows the operator exactly what approval writes: the whole `SKILL.md` (never
//! cut, so `preview_truncated` is always `false`) and every file's content with its size and
//! SHA-256, beside the total bytes and a digest of the whole push. The push check
//! ([`super::validate_push`]) has already refused anything too big, secret-shaped or
//! invisible, so the card needs no cutting or masking of its own.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// Domain tag of the digest's canonical encoding (bump the version if the encoding changes).
const DIGEST_TAG: &[u8] = b"hal0-skill-push-v1\0";

fn field(h: &mut Sha256, bytes: &[u8]) {
    h.update((bytes.len() as u64).to_be_bytes());
    h.update(bytes);
}

/// SHA-256 (lower-case hex) over a canonical encoding of the push: the tag
/// `hal0-skill-push-v1\0`, then the name and `SKILL.md`, the number of files, and each file's
/// name and content in name order, every field preceded by its length in bytes (u64, big
/// endian). Equal digests mean the same name, `SKILL.md` and files; the pushing client is not
/// part of it (the inbox keys rows on client and digest).
pub fn digest(name: &str, skill_md: &str, files: &BTreeMap<String, String>) -> String {
    let mut h = Sha256::new();
    h.update(DIGEST_TAG);
    field(&mut h, name.as_bytes());
    field(&mut h, skill_md.as_bytes());
    h.update((files.len() as u64).to_be_bytes());
    for (file, content) in files {
        field(&mut h, file.as_bytes());
        field(&mut h, content.as_bytes());
    }
    hex::encode(h.finalize())
}

/// Total bytes of a push: `SKILL.md` plus every file's content.
pub fn push_bytes(skill_md: &str, files: &BTreeMap<String, String>) -> usize {
    skill_md.len() + files.values().map(String::len).sum::<usize>()
}

/// The inbox card: `{client, name, preview, preview_truncated: false, files: {name: {size,
/// sha256, content}}, bytes, digest}`.
pub fn card(client: &str, name: &str, skill_md: &str, files: &BTreeMap<String, String>) -> Value {
    let mut shown = Map::new();
    for (file, content) in files {
        shown.insert(
            file.clone(),
            json!({
                "size": content.len(),
                "sha256": hex::encode(Sha256::digest(content.as_bytes())),
                "content": content,
            }),
        );
    }
    json!({
        "client": client,
        "name": name,
        "preview": skill_md,
        "preview_truncated": false,
        "files": shown,
        "bytes": push_bytes(skill_md, files),
        "digest": digest(name, skill_md, files),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn card_shows_everything() {
        let md = "---\nname: a\ndescription: d\n---\nbody\n";
        let f = files(&[("notes.md", "hello"), ("b.txt", "")]);
        let c = card("alice", "a", md, &f);
        assert_eq!(c["client"], "alice");
        assert_eq!(c["name"], "a");
        assert_eq!(c["preview"], md);
        assert_eq!(c["preview_truncated"], false);
        assert_eq!(c["bytes"], md.len() + 5);
        assert_eq!(c["files"]["notes.md"]["size"], 5);
        assert_eq!(c["files"]["notes.md"]["content"], "hello");
        assert_eq!(
            c["files"]["notes.md"]["sha256"],
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        assert_eq!(c["files"]["b.txt"]["size"], 0);
        assert_eq!(c["digest"], digest("a", md, &f));
        assert_eq!(c["digest"].as_str().unwrap().len(), 64);
    }

    #[test]
    fn digest_is_canonical() {
        let md = "---\nname: a\ndescription: d\n---\n";
        let base = digest("a", md, &files(&[("x", "1"), ("y", "2")]));
        // Same content, built in another order: same digest.
        let mut other = BTreeMap::new();
        other.insert("y".to_string(), "2".to_string());
        other.insert("x".to_string(), "1".to_string());
        assert_eq!(digest("a", md, &other), base);
        // Any change differs, including moving bytes between fields.
        let rows = [
            digest("b", md, &files(&[("x", "1"), ("y", "2")])),
            digest("a", "---\nname: a\ndescription: e\n---\n", &files(&[("x", "1"), ("y", "2")])),
            digest("a", md, &files(&[("x", "1")])),
            digest("a", md, &files(&[("x", "12"), ("y", "")])),
            digest("a", md, &files(&[("x1", ""), ("y", "2")])),
            digest("a", md, &files(&[("x", "1"), ("y", "2"), ("z", "")])),
            digest("a", md, &BTreeMap::new()),
        ];
        for (i, d) in rows.iter().enumerate() {
            assert_ne!(d, &base, "row {i}");
        }
        let mut all = rows.to_vec();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), rows.len());
    }
}
