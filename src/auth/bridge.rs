//! Bridge clients: per-client keys (`hal0bk_…`, only the sha256 stored), their scopes,
//! notes and last-seen times; add, list, change scopes, rotate and revoke.

use crate::base::error::{Error, Result};
use crate::base::token::{random_base62, sha256_hex};
use crate::store::{Store, now};
use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use std::collections::BTreeSet;

pub const KEY_PREFIX: &str = "hal0bk_";

/// What a bridge key may open. `agents` is always held but by a relay-only bot; `relay` makes the client a bot of
/// the agent relay (`/mcp/relay/mcp` and the `/bridge/connect` WebSocket).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Agents,
    Memory,
    Admin,
    Relay,
}

impl Scope {
    pub const ALL: [Scope; 4] = [Scope::Agents, Scope::Memory, Scope::Admin, Scope::Relay];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Agents => "agents",
            Scope::Memory => "memory",
            Scope::Admin => "admin",
            Scope::Relay => "relay",
        }
    }

    pub fn parse(s: &str) -> Result<Scope> {
        Scope::ALL.into_iter().find(|x| x.as_str() == s.trim().to_ascii_lowercase()).ok_or_else(|| {
            Error::invalid(
                "bridge.unknown_scope",
                format!("unknown scope `{s}`: choose from agents, memory, admin, relay"),
            )
        })
    }
}

/// Parse scope names into a set that always holds `agents`.
pub fn parse_scopes<S: AsRef<str>>(names: &[S]) -> Result<BTreeSet<Scope>> {
    let mut set = BTreeSet::new();
    for n in names {
        // Accept both repeated flags and comma/space separated lists.
        for part in n.as_ref().split([',', ' ']).filter(|p| !p.is_empty()) {
            set.insert(Scope::parse(part)?);
        }
    }
    // `agents` comes with every key but a relay bot's: a bot asks and answers other bots
    // and has no business starting runs.
    if set != BTreeSet::from([Scope::Relay]) {
        set.insert(Scope::Agents);
    }
    Ok(set)
}

fn scopes_to_db(s: &BTreeSet<Scope>) -> String {
    s.iter().map(|x| x.as_str()).collect::<Vec<_>>().join(" ")
}

fn scopes_from_db(s: &str) -> BTreeSet<Scope> {
    s.split_whitespace().filter_map(|p| Scope::parse(p).ok()).collect()
}

/// A bridge client as listed (never the key).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Client {
    pub name: String,
    pub scopes: BTreeSet<Scope>,
    pub note: String,
    pub created_at: String,
    pub rotated_at: Option<String>,
    pub last_seen: Option<String>,
    pub revoked_at: Option<String>,
    pub revoked: bool,
    /// Where the client came from: empty for one added with a key (`hal0 bridge add`),
    /// `oauth:<client_id>` for one a person approved for an OAuth client.
    pub origin: String,
}

/// Check a client name: lower-case letters, digits, `_`, `-`, 1 to 32 characters.
pub fn validate_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 32
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(
            "bridge.invalid_name",
            format!(
                "invalid client name `{name}`: use 1 to 32 lower-case letters, digits, `_` or `-` (e.g. workstation-claude)"
            ),
        ))
    }
}

const NOTE_MAX: usize = 200;

fn new_key() -> Result<String> {
    Ok(format!("{KEY_PREFIX}{}", random_base62(43)?))
}

fn row_to_client(r: &rusqlite::Row<'_>) -> rusqlite::Result<Client> {
    from_row_at(r, 0)
}

/// A client from the [`COLS`] of a row, starting at column `o`.
pub(crate) fn from_row_at(r: &rusqlite::Row<'_>, o: usize) -> rusqlite::Result<Client> {
    let revoked_at: Option<String> = r.get(o + 6)?;
    Ok(Client {
        name: r.get(o)?,
        scopes: scopes_from_db(&r.get::<_, String>(o + 1)?),
        note: r.get(o + 2)?,
        created_at: r.get(o + 3)?,
        rotated_at: r.get(o + 4)?,
        last_seen: r.get(o + 5)?,
        revoked: revoked_at.is_some(),
        revoked_at,
        origin: r.get(o + 7)?,
    })
}

pub(crate) const COLS: &str = "name, scopes, note, created_at, rotated_at, last_seen, revoked_at, origin";

fn check_note(note: &str) -> Result<()> {
    if note.chars().count() > NOTE_MAX || note.chars().any(char::is_control) {
        return Err(Error::invalid(
            "bridge.invalid_note",
            format!("the note must be at most {NOTE_MAX} characters with no control characters"),
        ));
    }
    Ok(())
}

/// Add a client; returns it and its key (shown once, never stored).
pub fn add(store: &Store, name: &str, note: &str, scopes: BTreeSet<Scope>) -> Result<(Client, String)> {
    validate_name(name)?;
    check_note(note)?;
    let key = new_key()?;
    let hash = sha256_hex(&key);
    let created = now();
    store.with(|c| {
        let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        match revoked_at(&tx, name)? {
            Some(Some(_)) => {
                return Err(Error::conflict(
                    "bridge.name_revoked",
                    format!("client `{name}` was revoked and its name stays reserved; choose another name"),
                ));
            }
            Some(None) => {
                return Err(Error::conflict(
                    "bridge.name_taken",
                    format!(
                        "client `{name}` already exists; use `hal0 bridge rotate {name}` for a new key or choose another name"
                    ),
                ));
            }
            None => {}
        }
        tx.execute(
            "INSERT INTO bridge_clients (name, key_sha256, scopes, note, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![name, hash, scopes_to_db(&scopes), note, created],
        )?;
        tx.commit()?;
        Ok(())
    })?;
    let client = get(store, name)?;
    Ok((client, key))
}

/// Add a client for an OAuth grant inside the caller's transaction: `origin` says which
/// OAuth client it serves; its key is minted and dropped (the client holds tokens, not a
/// key; `hal0 bridge rotate` gives it one). The name must be free.
pub(crate) fn insert_oauth(
    tx: &rusqlite::Connection,
    name: &str,
    note: &str,
    scopes: &BTreeSet<Scope>,
    origin: &str,
) -> Result<()> {
    validate_name(name)?;
    check_note(note)?;
    let hash = sha256_hex(&new_key()?);
    tx.execute(
        "INSERT INTO bridge_clients (name, key_sha256, scopes, note, created_at, origin) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![name, hash, scopes_to_db(scopes), note, now(), origin],
    )?;
    Ok(())
}

/// Store a scope set inside the caller's transaction.
pub(crate) fn set_scopes_in(tx: &rusqlite::Connection, name: &str, scopes: &BTreeSet<Scope>) -> Result<()> {
    tx.execute("UPDATE bridge_clients SET scopes = ?1 WHERE name = ?2", params![scopes_to_db(scopes), name])?;
    Ok(())
}

pub fn list(store: &Store) -> Result<Vec<Client>> {
    store.with(|c| {
        let mut st = c.prepare(&format!("SELECT {COLS} FROM bridge_clients ORDER BY name"))?;
        let rows = st.query_map([], row_to_client)?.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    })
}

/// Whether a bridge client (live or revoked) holds `name`; any string may be asked.
pub fn name_exists(store: &Store, name: &str) -> Result<bool> {
    if validate_name(name).is_err() {
        return Ok(false);
    }
    store.with(|c| {
        Ok(c.query_row("SELECT 1 FROM bridge_clients WHERE name = ?1", [name], |_| Ok(())).optional()?.is_some())
    })
}

pub fn get(store: &Store, name: &str) -> Result<Client> {
    validate_name(name)?;
    store
        .with(|c| {
            Ok(c.query_row(&format!("SELECT {COLS} FROM bridge_clients WHERE name = ?1"), [name], row_to_client)
                .optional()?)
        })?
        .ok_or_else(|| not_found(name))
}

fn not_found(name: &str) -> Error {
    Error::not_found("bridge.unknown_client", format!("no bridge client named `{name}` (see `hal0 bridge list`)"))
}

fn revoked(name: &str) -> Error {
    Error::conflict(
        "bridge.client_revoked",
        format!("client `{name}` is revoked; add a client under a new name instead"),
    )
}

/// Whether client `name` exists (`None`: no such client) and, if so, when it was revoked
/// (`Some(None)`: live), read inside the caller's transaction.
fn revoked_at(tx: &rusqlite::Connection, name: &str) -> Result<Option<Option<String>>> {
    Ok(tx.query_row("SELECT revoked_at FROM bridge_clients WHERE name = ?1", [name], |r| r.get(0)).optional()?)
}

/// Update one live (not revoked) client inside a transaction.
/// `ends_grants`: also end every OAuth grant of the client (and so its tokens), saying why.
fn update_live(
    store: &Store,
    name: &str,
    sql: &str,
    p: &[&dyn rusqlite::ToSql],
    ends_grants: Option<&str>,
) -> Result<()> {
    validate_name(name)?;
    store.with(|c| {
        let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        match revoked_at(&tx, name)? {
            None => return Err(not_found(name)),
            Some(Some(_)) => return Err(revoked(name)),
            Some(None) => {}
        }
        tx.execute(sql, p)?;
        if let Some(why) = ends_grants {
            super::oauth::grants::end_for_bridge_client(&tx, name, why)?;
        }
        tx.commit()?;
        Ok(())
    })
}

/// Replace the scope set (`agents` is kept).
pub fn set_scopes(store: &Store, name: &str, scopes: BTreeSet<Scope>) -> Result<Client> {
    let s = scopes_to_db(&scopes);
    update_live(store, name, "UPDATE bridge_clients SET scopes = ?1 WHERE name = ?2", &[&s, &name], None)?;
    super::keycache::bump(store);
    get(store, name)
}

/// A new key for `name`; the old one stops at once, and so does every OAuth token of it.
pub fn rotate(store: &Store, name: &str) -> Result<(Client, String)> {
    let key = new_key()?;
    let hash = sha256_hex(&key);
    let t = now();
    update_live(
        store,
        name,
        "UPDATE bridge_clients SET key_sha256 = ?1, rotated_at = ?2 WHERE name = ?3",
        &[&hash, &t, &name],
        Some("the bridge client was rotated"),
    )?;
    super::keycache::bump(store);
    Ok((get(store, name)?, key))
}

/// End the key and every OAuth token of the client; the name stays reserved.
pub fn revoke(store: &Store, name: &str) -> Result<Client> {
    let t = now();
    update_live(
        store,
        name,
        "UPDATE bridge_clients SET revoked_at = ?1 WHERE name = ?2",
        &[&t, &name],
        Some("the bridge client was revoked"),
    )?;
    super::keycache::bump(store);
    get(store, name)
}

/// What `hal0 bridge purge` removed with a revoked client's name.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Purged {
    pub name: String,
    /// Its runs (with their events), approvals and standing rules, memory operations and
    /// OAuth grants, deleted so a new client under the name sees none of them.
    pub runs: usize,
    pub approvals: usize,
    pub rules: usize,
    pub memory_operations: usize,
    pub oauth_grants: usize,
}

/// Free a revoked client's name: delete the client and everything held under its name (its
/// runs and their output, approvals, standing rules, memory operations, OAuth grants and
/// tokens, relay presence), in one transaction. The audit log keeps what happened. A live
/// client is refused (revoke it first), as is one with a run that has not ended.
pub fn purge(store: &Store, name: &str) -> Result<Purged> {
    validate_name(name)?;
    store.with(|c| {
        let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        match revoked_at(&tx, name)? {
            None => return Err(not_found(name)),
            Some(None) => {
                return Err(Error::conflict(
                    "bridge.client_live",
                    format!("client `{name}` is live: revoke it first (hal0 bridge revoke {name}), then purge"),
                ));
            }
            Some(Some(_)) => {}
        }
        let statuses: Vec<crate::bridge::ledger::RunStatus> = tx
            .prepare("SELECT status FROM runs WHERE client = ?1")?
            .query_map([name], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let open = statuses.iter().filter(|s| !s.is_terminal()).count();
        if open > 0 {
            return Err(Error::conflict(
                "bridge.client_busy",
                format!(
                    "client `{name}` has {open} run(s) that have not ended: stop them (hal0 runs list --client {name}) and purge again"
                ),
            ));
        }
        let grants = "SELECT id FROM oauth_grants WHERE bridge_client = ?1";
        tx.execute(&format!("DELETE FROM oauth_tokens WHERE grant_id IN ({grants})"), [name])?;
        let purged = Purged {
            name: name.to_string(),
            oauth_grants: tx.execute("DELETE FROM oauth_grants WHERE bridge_client = ?1", [name])?,
            runs: tx.execute("DELETE FROM runs WHERE client = ?1", [name])?,
            approvals: tx.execute("DELETE FROM approvals WHERE client = ?1", [name])?,
            rules: tx.execute("DELETE FROM approval_rules WHERE client = ?1", [name])?,
            memory_operations: tx.execute("DELETE FROM memory_operations WHERE client = ?1", [name])?,
        };
        tx.execute("DELETE FROM relay_presence WHERE name = ?1", [name])?;
        tx.execute("DELETE FROM bridge_clients WHERE name = ?1", [name])?;
        tx.commit()?;
        Ok(purged)
    })
}

/// The live client holding `key`, if any (revoked and unknown keys give `None`).
pub fn lookup(store: &Store, key: &str) -> Result<Option<Client>> {
    if !key.starts_with(KEY_PREFIX) {
        return Ok(None);
    }
    let hash = sha256_hex(key);
    store.with(|c| {
        let mut st = c.prepare_cached(&format!(
            "SELECT {COLS} FROM bridge_clients WHERE key_sha256 = ?1 AND revoked_at IS NULL"
        ))?;
        Ok(st.query_row([hash], row_to_client).optional()?)
    })
}

/// Record that `name` was seen now.
pub fn touch(store: &Store, name: &str) -> Result<()> {
    let t = now();
    store.with(|c| {
        c.execute("UPDATE bridge_clients SET last_seen = ?1 WHERE name = ?2", params![t, name])?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::store::scratch as store;

    #[test]
    fn a_relay_bot_holds_relay_alone() {
        assert_eq!(parse_scopes(&["relay"]).unwrap(), BTreeSet::from([Scope::Relay]));
        assert_eq!(
            parse_scopes(&["relay,memory"]).unwrap(),
            BTreeSet::from([Scope::Agents, Scope::Memory, Scope::Relay])
        );
        assert_eq!(parse_scopes::<&str>(&[]).unwrap(), BTreeSet::from([Scope::Agents]));
    }

    #[test]
    fn names() {
        for ok in ["a", "workstation-claude", "ci_1", &"x".repeat(32)] {
            validate_name(ok).unwrap();
        }
        for bad in ["", "A", "has space", "dot.name", &"x".repeat(33), "é", "a/b"] {
            assert_eq!(validate_name(bad).unwrap_err().code, "bridge.invalid_name", "{bad}");
        }
    }

    #[test]
    fn scopes_always_hold_agents() {
        let s = parse_scopes(&["memory"]).unwrap();
        assert_eq!(s, BTreeSet::from([Scope::Agents, Scope::Memory]));
        assert_eq!(parse_scopes(&["root"]).unwrap_err().code, "bridge.unknown_scope");
        assert_eq!(parse_scopes(&["memory,admin"]).unwrap().len(), 3);
    }

    #[test]
    fn lifecycle() {
        let (_d, s) = store();
        let (c, key) = add(&s, "ci", "CI job", parse_scopes(&["memory"]).unwrap()).unwrap();
        assert!(key.starts_with(KEY_PREFIX) && key.len() >= KEY_PREFIX.len() + 43);
        assert_eq!(lookup(&s, &key).unwrap().unwrap().name, "ci");
        assert_eq!(c.note, "CI job");
        assert_eq!(add(&s, "ci", "", BTreeSet::new()).unwrap_err().code, "bridge.name_taken");
        let (_, key2) = rotate(&s, "ci").unwrap();
        assert!(lookup(&s, &key).unwrap().is_none());
        assert!(lookup(&s, &key2).unwrap().is_some());
        let c = set_scopes(&s, "ci", parse_scopes::<&str>(&[]).unwrap()).unwrap();
        assert_eq!(c.scopes, BTreeSet::from([Scope::Agents]));
        revoke(&s, "ci").unwrap();
        assert!(lookup(&s, &key2).unwrap().is_none());
        assert_eq!(add(&s, "ci", "", BTreeSet::new()).unwrap_err().code, "bridge.name_revoked");
        assert_eq!(rotate(&s, "ci").unwrap_err().code, "bridge.client_revoked");
        assert_eq!(revoke(&s, "nope").unwrap_err().code, "bridge.unknown_client");
        // The stored row holds the hash, never the key.
        let raw: String =
            s.with(|c| Ok(c.query_row("SELECT key_sha256 FROM bridge_clients", [], |r| r.get(0))?)).unwrap();
        assert_eq!(raw, sha256_hex(&key2));
    }
}
