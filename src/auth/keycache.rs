//! The daemon's cache of stored-key lookups (bridge and consumer keys): the SHA-256 of a
//! presented key → the principal it resolved to, so a request does not cost a store query
//! and a thread hop. Every change of a stored key (add, scopes, rotate, revoke, consumer
//! mint and revoke) ends with [`bump`], which replaces the stamp file beside the store; an
//! entry is used only while that file is the one it was resolved under, and for at most
//! [`TTL`] (the bound on a change made to the database by other means). Unknown and
//! revoked keys are never cached.

use super::Credential;
use crate::store::Store;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The longest an entry is trusted without a look at the store.
pub const TTL: Duration = Duration::from_secs(1);
/// Entries kept at most; the cache starts over when full.
const MAX_ENTRIES: usize = 4096;

use crate::base::filewatch::{Version, version};

fn stamp_path(store: &Store) -> PathBuf {
    store.path().with_file_name("keys.stamp")
}

/// Record that stored keys changed: the stamp file is replaced (a new inode every time, so
/// two changes within one clock tick still differ). Called after the change committed.
pub fn bump(store: &Store) {
    let path = stamp_path(store);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
    // A temp file of a random name, created exclusively (a guessable name could be a link
    // the state dir's owner planted), adopted and renamed into place.
    if let Err(e) = crate::base::paths::write_atomic(&path, format!("{nanos}\n").as_bytes()) {
        // Entries then live out their TTL; say so rather than fail the change itself.
        tracing::warn!("{e}; cached keys may be used for up to {TTL:?}");
    }
}

/// A cached principal: the stamp it was resolved under, when, and when it ends (an OAuth
/// access token's expiry).
type Entry = (Credential, Version, Instant, Option<Instant>);

/// The cache of one daemon.
pub struct KeyCache {
    path: PathBuf,
    /// Each principal, the stamp it was resolved under, when, and (an OAuth access token)
    /// when it expires.
    entries: Mutex<HashMap<[u8; 32], Entry>>,
}

fn digest(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

impl KeyCache {
    pub fn new(store: &Store) -> KeyCache {
        let path = stamp_path(store);
        crate::base::filewatch::watch(&path);
        KeyCache { path, entries: Mutex::new(HashMap::new()) }
    }

    /// The stamp to resolve under: read it BEFORE the store is asked, so a change that
    /// commits after the read makes the entry stale at once.
    pub fn stamp(&self) -> Option<Version> {
        version(&self.path)
    }

    /// The principal `key` resolved to, while still valid.
    pub fn get(&self, key: &str) -> Option<Credential> {
        let now = version(&self.path)?;
        let d = digest(key);
        let mut m = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        match m.get(&d) {
            Some((c, s, at, until)) if *s == now && at.elapsed() < TTL && until.is_none_or(|u| Instant::now() < u) => {
                Some(c.clone())
            }
            Some(_) => {
                m.remove(&d);
                None
            }
            None => None,
        }
    }

    /// Keep a bridge, consumer or OAuth-token principal resolved under `stamp` (a token's
    /// entry ends when the token expires; ending its grant changes the stamp).
    pub fn put(&self, key: &str, cred: &Credential, stamp: Option<Version>) {
        let (Some(stamp), Credential::Bridge(_) | Credential::Consumer(_) | Credential::Grant(_)) = (stamp, cred)
        else {
            return;
        };
        let until = match cred {
            Credential::Grant(g) => {
                let Ok(end) =
                    time::OffsetDateTime::parse(&g.expires_at, &time::format_description::well_known::Rfc3339)
                else {
                    return;
                };
                let left = (end - time::OffsetDateTime::now_utc()).whole_milliseconds();
                if left <= 0 {
                    return;
                }
                Some(Instant::now() + std::time::Duration::from_millis(left as u64))
            }
            _ => None,
        };
        let mut m = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if m.len() >= MAX_ENTRIES {
            m.clear();
        }
        m.insert(digest(key), (cred.clone(), stamp, Instant::now(), until));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::bridge;

    /// An OAuth token is kept only until it expires: an expired one is never cached.
    #[test]
    fn a_token_entry_ends_when_the_token_expires() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(&d.path().join("hal0.db")).unwrap();
        let cache = KeyCache::new(&store);
        let (c, _) = bridge::add(&store, "ci", "", bridge::parse_scopes(&["memory"]).unwrap()).unwrap();
        let grant = |expires_at: &str| {
            Credential::Grant(crate::auth::oauth::grants::Grant {
                id: "og_1".into(),
                client_id: "oc_1".into(),
                mount: "memory".into(),
                scopes: c.scopes.clone(),
                bridge: c.clone(),
                expires_at: expires_at.into(),
            })
        };
        cache.put("hal0at_old", &grant("2000-01-01T00:00:00Z"), cache.stamp());
        assert_eq!(cache.get("hal0at_old"), None, "an expired token is not kept");
        cache.put("hal0at_live", &grant("2999-01-01T00:00:00Z"), cache.stamp());
        assert!(cache.get("hal0at_live").is_some());
        bump(&store);
        assert_eq!(cache.get("hal0at_live"), None, "a change (a grant ended) ends the entry");
    }

    #[test]
    fn a_key_change_ends_its_entry_at_once() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(&d.path().join("hal0.db")).unwrap();
        let cache = KeyCache::new(&store);
        let (c, key) = bridge::add(&store, "ci", "", bridge::parse_scopes(&["memory"]).unwrap()).unwrap();
        let s0 = cache.stamp();
        cache.put(&key, &Credential::Bridge(c.clone()), s0);
        assert_eq!(cache.get(&key), Some(Credential::Bridge(c)));
        assert_eq!(cache.get("hal0bk_other"), None);
        // Every kind of change, twice in a row (within one clock tick), ends the entry.
        for change in 0..4 {
            let s = cache.stamp();
            let c = bridge::get(&store, "ci").unwrap();
            cache.put(&key, &Credential::Bridge(c), s);
            assert!(cache.get(&key).is_some());
            match change {
                0 => drop(bridge::set_scopes(&store, "ci", bridge::parse_scopes(&["admin"]).unwrap()).unwrap()),
                1 => drop(bridge::set_scopes(&store, "ci", bridge::parse_scopes(&["memory"]).unwrap()).unwrap()),
                2 => drop(bridge::rotate(&store, "ci").unwrap()),
                _ => drop(bridge::revoke(&store, "ci").unwrap()),
            }
            assert_eq!(cache.get(&key), None, "change {change}");
        }
    }

    #[test]
    fn entries_expire_and_misses_are_not_kept() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(&d.path().join("hal0.db")).unwrap();
        let cache = KeyCache::new(&store);
        cache.put("k", &Credential::Invalid, cache.stamp());
        cache.put("k2", &Credential::Admin, cache.stamp());
        assert_eq!(cache.get("k"), None);
        assert_eq!(cache.get("k2"), None);
        let (c, key) = bridge::add(&store, "ci", "", bridge::parse_scopes(&["memory"]).unwrap()).unwrap();
        let old = Instant::now() - TTL;
        cache.entries.lock().unwrap().insert(digest(&key), (Credential::Bridge(c), cache.stamp().unwrap(), old, None));
        assert_eq!(cache.get(&key), None, "older than the TTL");
    }
}
