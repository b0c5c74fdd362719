//! Consumer keys for hal0's MCP proxy: one key per (installed server, consumer), minted by
//! hal0 (`hal0pk_` + 43 base62 characters), only its sha256 stored. A consumer presents it
//! at `/mcp/proxy/<server>/mcp`; it opens nothing else. Exposure to a Hermes profile mints
//! the profile's key; operators mint keys for other consumers with `hal0 mcp keys add`.

use crate::base::error::{Error, Result};
use crate::base::token::{random_base62, sha256_hex};
use crate::store::{Store, now};
use rusqlite::{OptionalExtension, params};
use serde::Serialize;

pub const KEY_PREFIX: &str = "hal0pk_";

/// One consumer of one proxied server.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Consumer {
    pub server: String,
    pub name: String,
    pub note: String,
    pub created_at: String,
    pub rotated_at: Option<String>,
    pub last_used_at: Option<String>,
    pub revoked_at: Option<String>,
    pub revoked: bool,
}

/// Consumer names follow the bridge client rule: 1–64 of `a-z A-Z 0-9 _ -`.
pub fn validate_name(name: &str) -> Result<()> {
    if crate::auth::principal::valid_agent(name) {
        return Ok(());
    }
    Err(Error::invalid(
        "mcp.invalid_consumer",
        format!("`{name}` is not a valid consumer name: use 1-64 letters, digits, `_` or `-`"),
    ))
}

const COLS: &str = "server, name, note, created_at, rotated_at, last_used_at, revoked_at";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Consumer> {
    let revoked_at: Option<String> = r.get(6)?;
    Ok(Consumer {
        server: r.get(0)?,
        name: r.get(1)?,
        note: r.get(2)?,
        created_at: r.get(3)?,
        rotated_at: r.get(4)?,
        last_used_at: r.get(5)?,
        revoked: revoked_at.is_some(),
        revoked_at,
    })
}

fn new_key() -> Result<String> {
    Ok(format!("{KEY_PREFIX}{}", random_base62(43)?))
}

/// Mint a key for `name` on `server`: a new consumer, or a new key replacing the old one
/// (which stops working at once), or a revoked consumer brought back. Returns the key once.
pub fn mint(store: &Store, server: &str, name: &str, note: &str) -> Result<(Consumer, String)> {
    validate_name(name)?;
    let key = new_key()?;
    let hash = sha256_hex(&key);
    store.with(|c| {
        let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let t = now();
        let n = tx.execute(
            "UPDATE mcp_consumers SET key_hash = ?1, rotated_at = ?2, revoked_at = NULL,
                 note = CASE WHEN ?3 = '' THEN note ELSE ?3 END
             WHERE server = ?4 AND name = ?5",
            params![hash, t, note, server, name],
        )?;
        if n == 0 {
            tx.execute(
                "INSERT INTO mcp_consumers (server, name, note, key_hash, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![server, name, note, hash, t],
            )?;
        }
        tx.commit()?;
        Ok(())
    })?;
    crate::auth::keycache::bump(store);
    Ok((get(store, server, name)?, key))
}

/// One consumer row (live or revoked).
pub fn get(store: &Store, server: &str, name: &str) -> Result<Consumer> {
    store
        .with(|c| {
            Ok(c.query_row(
                &format!("SELECT {COLS} FROM mcp_consumers WHERE server = ?1 AND name = ?2"),
                params![server, name],
                row,
            )
            .optional()?)
        })?
        .ok_or_else(|| {
            Error::not_found(
                "mcp.consumer_not_found",
                format!("`{server}` has no consumer `{name}` (see `hal0 mcp keys list {server}`)"),
            )
        })
}

/// The live consumer holding `key`, if any.
pub fn lookup(store: &Store, key: &str) -> Result<Option<Consumer>> {
    if !key.starts_with(KEY_PREFIX) {
        return Ok(None);
    }
    let hash = sha256_hex(key);
    store.with(|c| {
        let mut st =
            c.prepare_cached(&format!("SELECT {COLS} FROM mcp_consumers WHERE key_hash = ?1 AND revoked_at IS NULL"))?;
        Ok(st.query_row([hash], row).optional()?)
    })
}

/// Whether `key` is the live key of `name` on `server` (a profile's `.env` check).
pub fn holds(store: &Store, server: &str, name: &str, key: &str) -> Result<bool> {
    Ok(lookup(store, key)?.is_some_and(|c| c.server == server && c.name == name))
}

/// Consumers, by server then name; `server` filters.
pub fn list(store: &Store, server: Option<&str>) -> Result<Vec<Consumer>> {
    store.with(|c| {
        let mut st = c.prepare(&format!(
            "SELECT {COLS} FROM mcp_consumers WHERE (?1 IS NULL OR server = ?1) ORDER BY server, name"
        ))?;
        let rows = st.query_map([server], row)?.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    })
}

/// Revoke `name`'s key on `server`; false when it was not live.
pub fn revoke(store: &Store, server: &str, name: &str) -> Result<bool> {
    let n = store.with(|c| {
        Ok(c.execute(
            "UPDATE mcp_consumers SET key_hash = NULL, revoked_at = ?1
             WHERE server = ?2 AND name = ?3 AND revoked_at IS NULL",
            params![now(), server, name],
        )?)
    })?;
    crate::auth::keycache::bump(store);
    Ok(n == 1)
}

/// Revoke every key of `server` (uninstall); returns how many were live.
pub fn revoke_server(store: &Store, server: &str) -> Result<usize> {
    let n = store.with(|c| {
        Ok(c.execute(
            "UPDATE mcp_consumers SET key_hash = NULL, revoked_at = ?1 WHERE server = ?2 AND revoked_at IS NULL",
            params![now(), server],
        )?)
    })?;
    crate::auth::keycache::bump(store);
    Ok(n)
}

/// Record that `name` used its key (throttled by the caller).
pub fn touch(store: &Store, server: &str, name: &str) -> Result<()> {
    store.with(|c| {
        c.execute(
            "UPDATE mcp_consumers SET last_used_at = ?1 WHERE server = ?2 AND name = ?3",
            params![now(), server, name],
        )?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mint_lookup_rotate_revoke() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::open(&d.path().join("h.db")).unwrap();
        let (c, k1) = mint(&s, "files", "hermes", "Hermes default profile").unwrap();
        assert!(k1.starts_with(KEY_PREFIX) && k1.len() == KEY_PREFIX.len() + 43);
        assert_eq!(c.server, "files");
        assert!(holds(&s, "files", "hermes", &k1).unwrap());
        assert!(!holds(&s, "other", "hermes", &k1).unwrap(), "a key opens only its own server");
        assert_eq!(lookup(&s, "hal0pk_nope").unwrap(), None);
        assert_eq!(lookup(&s, "not-a-key").unwrap(), None);
        // Re-minting replaces the key: the old one stops working.
        let (c2, k2) = mint(&s, "files", "hermes", "").unwrap();
        assert_ne!(k1, k2);
        assert_eq!(c2.note, "Hermes default profile", "an empty note keeps the old one");
        assert!(c2.rotated_at.is_some());
        assert_eq!(lookup(&s, &k1).unwrap(), None);
        assert!(revoke(&s, "files", "hermes").unwrap());
        assert!(!revoke(&s, "files", "hermes").unwrap());
        assert_eq!(lookup(&s, &k2).unwrap(), None);
        assert!(get(&s, "files", "hermes").unwrap().revoked);
        // Revoked and minted again.
        let (c3, k3) = mint(&s, "files", "hermes", "").unwrap();
        assert!(!c3.revoked);
        assert!(holds(&s, "files", "hermes", &k3).unwrap());
        mint(&s, "files", "ci", "").unwrap();
        mint(&s, "web", "ci", "").unwrap();
        assert_eq!(list(&s, Some("files")).unwrap().len(), 2);
        assert_eq!(list(&s, None).unwrap().len(), 3);
        assert_eq!(revoke_server(&s, "files").unwrap(), 2);
        assert_eq!(lookup(&s, &k3).unwrap(), None);
        assert_eq!(mint(&s, "files", "bad name", "").unwrap_err().code, "mcp.invalid_consumer");
        assert_eq!(get(&s, "files", "nobody").unwrap_err().code, "mcp.consumer_not_found");
    }
}
