//! Upstream OAuth secrets at rest: JSON documents sealed with ChaCha20-Poly1305 under a
//! 256-bit key the daemon holds in `<state>/upstream-oauth.key` (0600, made on first use).
//! The key lives in the state dir and `hal0 backup` carries the config dir and `hal0.db`
//! only, so neither the store nor a backup holds a token in clear; accounts restored onto
//! another box without the key read as `reauth_required` (connect them again).
//!
//! A sealed file is `H0V1`, a random 96-bit nonce, then the ciphertext and its tag; the
//! document's name is the associated data, so a file moved to another name does not open.

use crate::base::error::{Error, Result};
use crate::base::paths::{Paths, read_optional_bytes, write_atomic};
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use std::path::PathBuf;

const MAGIC: &[u8; 4] = b"H0V1";
const KEY_FILE: &str = "upstream-oauth.key";

/// The dir of sealed documents: `<state>/upstream-oauth`.
pub fn dir(paths: &Paths) -> PathBuf {
    paths.state_dir.join("upstream-oauth")
}

fn unreadable(what: impl std::fmt::Display) -> Error {
    Error::new("mcp.oauth_vault_unreadable", crate::base::error::Kind::Internal, what.to_string())
}

/// The key, made (32 random bytes, 0600) when there is none yet and `create`.
fn key(paths: &Paths, create: bool) -> Result<Option<LessSafeKey>> {
    let path = paths.state_dir.join(KEY_FILE);
    let bytes = match read_optional_bytes(&path)? {
        Some(b) => b,
        None if !create => return Ok(None),
        None => {
            let mut k = [0u8; 32];
            getrandom::fill(&mut k).map_err(|e| Error::internal(format!("no randomness: {e}")))?;
            // Two processes making it at once: the second rename wins, and a document the
            // first sealed would not open. Make it with create_new instead.
            use std::io::Write;
            use std::os::unix::fs::OpenOptionsExt;
            crate::base::paths::ensure_dir(&paths.state_dir)?;
            match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path) {
                Ok(mut f) => {
                    f.write_all(&k)
                        .and_then(|_| f.sync_all())
                        .map_err(|e| Error::io("fs.write_failed", "write", &path, e))?;
                    k.to_vec()
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    read_optional_bytes(&path)?.ok_or_else(|| unreadable("the vault key vanished while being made"))?
                }
                Err(e) => return Err(Error::io("fs.write_failed", "create", &path, e)),
            }
        }
    };
    if bytes.len() != 32 {
        return Err(unreadable(format!(
            "{} is not a 32-byte key; remove it and connect the upstream accounts again",
            path.display()
        )));
    }
    let k = UnboundKey::new(&CHACHA20_POLY1305, &bytes).map_err(|_| unreadable("the vault key is unusable"))?;
    Ok(Some(LessSafeKey::new(k)))
}

/// Seal `plain` as document `name`.
pub fn seal(paths: &Paths, name: &str, plain: &[u8]) -> Result<Vec<u8>> {
    let k = key(paths, true)?.ok_or_else(|| unreadable("no vault key"))?;
    let mut nonce = [0u8; NONCE_LEN];
    getrandom::fill(&mut nonce).map_err(|e| Error::internal(format!("no randomness: {e}")))?;
    let mut buf = plain.to_vec();
    k.seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::from(name.as_bytes()), &mut buf)
        .map_err(|_| unreadable("sealing failed"))?;
    let mut out = Vec::with_capacity(4 + NONCE_LEN + buf.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&buf);
    Ok(out)
}

/// Open a sealed document `name`: `Err(mcp.oauth_vault_unreadable)` when the key is
/// missing or another, or the bytes were changed.
pub fn open(paths: &Paths, name: &str, sealed: &[u8]) -> Result<Vec<u8>> {
    let Some(k) = key(paths, false)? else {
        return Err(unreadable("the vault key is missing (a restored box?): connect the account again"));
    };
    if sealed.len() < 4 + NONCE_LEN + 16 || &sealed[..4] != MAGIC {
        return Err(unreadable(format!("`{name}` is not a sealed hal0 document")));
    }
    let nonce = Nonce::try_assume_unique_for_key(&sealed[4..4 + NONCE_LEN]).map_err(|_| unreadable("bad nonce"))?;
    let mut buf = sealed[4 + NONCE_LEN..].to_vec();
    let plain = k.open_in_place(nonce, Aad::from(name.as_bytes()), &mut buf).map_err(|_| {
        unreadable(format!("`{name}` does not open with this box's vault key: connect the account again"))
    })?;
    Ok(plain.to_vec())
}

/// `v` sealed under `purpose` (the associated data) as one URL-safe token: a link that
/// carries its own state (a start link), opened by [`open_token`] with the same purpose.
pub fn seal_token<T: serde::Serialize>(paths: &Paths, purpose: &str, v: &T) -> Result<String> {
    use base64::Engine;
    let plain = serde_json::to_vec(v).map_err(|e| Error::internal(e.to_string()))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(seal(paths, purpose, &plain)?))
}

/// The value of a [`seal_token`] token of `purpose`: `None` when it is not one (another
/// box's, another purpose's, changed, or not a token at all).
pub fn open_token<T: serde::de::DeserializeOwned>(paths: &Paths, purpose: &str, token: &str) -> Option<T> {
    use base64::Engine;
    if token.len() > 2048 {
        return None;
    }
    let sealed = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(token).ok()?;
    let plain = open(paths, purpose, &sealed).ok()?;
    serde_json::from_slice(&plain).ok()
}

/// Write document `name` (JSON of `v`) sealed, atomically, 0600.
pub fn put<T: serde::Serialize>(paths: &Paths, name: &str, v: &T) -> Result<()> {
    let plain = serde_json::to_vec(v).map_err(|e| Error::internal(e.to_string()))?;
    write_atomic(&dir(paths).join(name), &seal(paths, name, &plain)?)
}

/// Read document `name`: `Ok(None)` when there is none.
pub fn get<T: serde::de::DeserializeOwned>(paths: &Paths, name: &str) -> Result<Option<T>> {
    let Some(sealed) = read_optional_bytes(&dir(paths).join(name))? else { return Ok(None) };
    let plain = open(paths, name, &sealed)?;
    serde_json::from_slice(&plain).map(Some).map_err(|e| unreadable(format!("`{name}`: {e}")))
}

/// Remove document `name` (`true` when there was one).
pub fn remove(paths: &Paths, name: &str) -> Result<bool> {
    let p = dir(paths).join(name);
    match std::fs::remove_file(&p) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io("fs.write_failed", "remove", &p, e)),
    }
}

/// The names of the documents whose names end with `suffix`.
pub fn names(paths: &Paths, suffix: &str) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir(paths)) else { return vec![] };
    let mut out: Vec<String> = rd
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| n.ends_with(suffix) && !n.starts_with('.'))
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(d: &std::path::Path) -> Paths {
        Paths {
            config_dir: d.join("etc"),
            state_dir: d.join("state"),
            config_source: "test".into(),
            state_source: "test".into(),
        }
    }

    #[test]
    fn sealed_documents_open_only_under_their_name_and_key() {
        let d = tempfile::tempdir().unwrap();
        let p = paths(d.path());
        put(&p, "a.acct", &serde_json::json!({"access": "tok-123456789"})).unwrap();
        let raw = std::fs::read(dir(&p).join("a.acct")).unwrap();
        assert!(!String::from_utf8_lossy(&raw).contains("tok-123456789"), "no token in clear");
        use std::os::unix::fs::PermissionsExt;
        for f in [dir(&p).join("a.acct"), p.state_dir.join(KEY_FILE)] {
            assert_eq!(std::fs::metadata(&f).unwrap().permissions().mode() & 0o777, 0o600, "{f:?}");
        }
        let v: serde_json::Value = get(&p, "a.acct").unwrap().unwrap();
        assert_eq!(v["access"], "tok-123456789");
        // Another name: the associated data differs.
        std::fs::copy(dir(&p).join("a.acct"), dir(&p).join("b.acct")).unwrap();
        assert_eq!(get::<serde_json::Value>(&p, "b.acct").unwrap_err().code, "mcp.oauth_vault_unreadable");
        // A flipped byte.
        let mut bad = raw.clone();
        let n = bad.len() - 1;
        bad[n] ^= 1;
        std::fs::write(dir(&p).join("a.acct"), &bad).unwrap();
        assert_eq!(get::<serde_json::Value>(&p, "a.acct").unwrap_err().code, "mcp.oauth_vault_unreadable");
        // The key gone (a restore elsewhere): unreadable, with the fix in words.
        std::fs::write(dir(&p).join("a.acct"), &raw).unwrap();
        std::fs::remove_file(p.state_dir.join(KEY_FILE)).unwrap();
        let e = get::<serde_json::Value>(&p, "a.acct").unwrap_err();
        assert!(e.message.contains("connect the account again"), "{}", e.message);
        assert_eq!(get::<serde_json::Value>(&p, "none.acct").unwrap(), None);
        assert_eq!(names(&p, ".acct"), vec!["a.acct".to_string(), "b.acct".to_string()]);
    }

    #[test]
    fn a_token_opens_only_for_its_purpose_and_unchanged() {
        let d = tempfile::tempdir().unwrap();
        let p = paths(d.path());
        let t = seal_token(&p, "start", &serde_json::json!({"s": "notes", "h": "alice"})).unwrap();
        assert!(t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'), "{t}");
        let v: serde_json::Value = open_token(&p, "start", &t).unwrap();
        assert_eq!(v["h"], "alice");
        assert!(open_token::<serde_json::Value>(&p, "other", &t).is_none());
        let mut bad = t.clone().into_bytes();
        bad[10] = if bad[10] == b'A' { b'B' } else { b'A' };
        assert!(open_token::<serde_json::Value>(&p, "start", &String::from_utf8(bad).unwrap()).is_none());
        assert!(open_token::<serde_json::Value>(&p, "start", "not a token!").is_none());
        assert!(open_token::<serde_json::Value>(&p, "start", "").is_none());
    }
}
