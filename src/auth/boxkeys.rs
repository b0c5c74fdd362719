//! The box keys `HAL0_ADMIN_KEY` and `HAL0_CLIENT_KEY` in `<config>/api.env` (mode 0600):
//! reading, rotating (other lines of the file are kept), and a cache for the daemon that
//! re-reads the file whenever it changes on disk.

use crate::base::error::{Error, Result};
use crate::base::filememo::FileMemo;
use crate::base::paths::read_optional;
use crate::base::token::{fingerprint, random_base62};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const ADMIN_VAR: &str = "HAL0_ADMIN_KEY";
pub const CLIENT_VAR: &str = "HAL0_CLIENT_KEY";
/// Prefix of a minted admin key (the redactor masks every hal0 key prefix).
pub const ADMIN_KEY_PREFIX: &str = "hal0ak_";
/// Prefix of a minted client key.
pub const CLIENT_KEY_PREFIX: &str = "hal0ck_";

/// Which box key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BoxKey {
    Admin,
    Client,
}

impl BoxKey {
    pub fn var(self) -> &'static str {
        match self {
            BoxKey::Admin => ADMIN_VAR,
            BoxKey::Client => CLIENT_VAR,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            BoxKey::Admin => "admin",
            BoxKey::Client => "client",
        }
    }
}

/// The two keys as found in `api.env`; an empty value counts as not configured.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BoxKeys {
    pub admin: Option<String>,
    pub client: Option<String>,
}

impl BoxKeys {
    pub fn load(path: &Path) -> Result<BoxKeys> {
        let text = read_optional(path)?.unwrap_or_default();
        Ok(BoxKeys::parse(&text))
    }

    pub fn parse(text: &str) -> BoxKeys {
        let mut keys = BoxKeys::default();
        for (k, v) in crate::base::envfile::env_lines(text) {
            let v = (!v.is_empty()).then_some(v);
            match k.as_str() {
                ADMIN_VAR => keys.admin = v,
                CLIENT_VAR => keys.client = v,
                _ => {}
            }
        }
        keys
    }

    /// Auth is armed once any box key exists.
    pub fn armed(&self) -> bool {
        self.admin.is_some() || self.client.is_some()
    }

    pub fn get(&self, tier: BoxKey) -> Option<&str> {
        match tier {
            BoxKey::Admin => self.admin.as_deref(),
            BoxKey::Client => self.client.as_deref(),
        }
    }
}

/// Mint a new key for `tier`, write it into `api.env` (replacing the old line, keeping
/// every other line), and return it. The old key stops working at once.
pub fn rotate(path: &Path, tier: BoxKey) -> Result<String> {
    let prefix = if tier == BoxKey::Admin { ADMIN_KEY_PREFIX } else { CLIENT_KEY_PREFIX };
    let key = format!("{prefix}{}", random_base62(43)?);
    crate::base::envfile::set_vars(path, &[(tier.var(), &key)])?;
    Ok(key)
}

/// The JSON view `hal0 auth status` prints: configured or not, and a fingerprint.
pub fn status_json(keys: &BoxKeys) -> serde_json::Value {
    let one = |k: Option<&str>| serde_json::json!({"configured": k.is_some(), "fingerprint": k.map(fingerprint)});
    serde_json::json!({
        "armed": keys.armed(),
        "admin": one(keys.admin.as_deref()),
        "client": one(keys.client.as_deref()),
    })
}

/// Daemon-side cache of `api.env`, re-read whenever the file's identity or size or mtime
/// changes, so a rotation at the shell applies to the very next request.
pub struct BoxKeyCache {
    path: PathBuf,
    memo: FileMemo<BoxKeys>,
}

impl BoxKeyCache {
    pub fn new(path: PathBuf) -> BoxKeyCache {
        BoxKeyCache { memo: FileMemo::new(path.clone(), Duration::MAX), path }
    }

    /// The current keys; re-reads the file when it changed (a file that cannot be looked at
    /// is read, and its failure reported, on every call).
    pub fn get(&self) -> Result<std::sync::Arc<BoxKeys>> {
        self.memo.get(|| {
            BoxKeys::load(&self.path).map_err(|e| Error::unavailable("auth.keys_unreadable", e.message.to_string()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_rotate_keep_other_lines() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("api.env");
        std::fs::write(&p, "# box keys\nHF_TOKEN=abc\nexport HAL0_ADMIN_KEY=\"old\"\n").unwrap();
        let k = BoxKeys::load(&p).unwrap();
        assert_eq!(k.admin.as_deref(), Some("old"));
        assert!(k.armed());
        let new = rotate(&p, BoxKey::Admin).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.starts_with("# box keys\nHF_TOKEN=abc\n"), "{text}");
        assert_eq!(BoxKeys::load(&p).unwrap().admin.as_deref(), Some(new.as_str()));
        assert!(!text.contains("old"));
        let c = rotate(&p, BoxKey::Client).unwrap();
        assert_eq!(BoxKeys::load(&p).unwrap().client.as_deref(), Some(c.as_str()));
    }

    #[test]
    fn empty_value_is_not_configured() {
        let k = BoxKeys::parse("HAL0_ADMIN_KEY=\nHAL0_CLIENT_KEY=''\n");
        assert!(!k.armed());
    }

    #[test]
    fn cache_sees_rotation() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("api.env");
        let cache = BoxKeyCache::new(p.clone());
        assert!(!cache.get().unwrap().armed());
        let k = rotate(&p, BoxKey::Admin).unwrap();
        assert_eq!(cache.get().unwrap().admin.as_deref(), Some(k.as_str()));
        let k2 = rotate(&p, BoxKey::Admin).unwrap();
        assert_eq!(cache.get().unwrap().admin.as_deref(), Some(k2.as_str()));
    }
}
