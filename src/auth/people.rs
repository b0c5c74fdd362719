//! The dashboard's named people (`hal0 ui user`): a name, an optional password (argon2id,
//! PHC string) and any number of passkeys. A session belongs to one person, and each
//! decision made in it is audited as `person:NAME`. Removing a person ends their sessions
//! and removes their passkeys.

use crate::auth::passkey::NewCredential;
use crate::base::error::{Error, Result};
use crate::store::Store;
use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use rusqlite::OptionalExtension;
use serde::Serialize;

/// The shortest password accepted.
pub const MIN_PASSWORD: usize = 12;
/// The person a sign-in with the box-wide password (`hal0 ui passwd`) is.
pub const OWNER: &str = "owner";

fn now() -> String {
    let t = time::OffsetDateTime::now_utc();
    t.replace_nanosecond(0).unwrap_or(t).format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

/// A person as listed (never a password hash or a key).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Person {
    pub name: String,
    pub created_at: String,
    pub created_by: String,
    pub password: bool,
    pub passkeys: u32,
    /// The WebAuthn user handle (random, base64url): not shown in listings.
    #[serde(skip)]
    pub handle: String,
}

/// A passkey as listed.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Passkey {
    pub id: String,
    pub person: String,
    pub label: String,
    pub algorithm: &'static str,
    pub created_at: String,
    pub last_used: Option<String>,
}

/// A name people are known by: a lower-case letter, then up to 31 of `a-z 0-9 . _ -`.
pub fn check_name(name: &str) -> Result<()> {
    let ok = name.len() <= 32
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'));
    if ok {
        return Ok(());
    }
    Err(Error::invalid(
        "ui.invalid_name",
        format!("`{name}` is not a person's name: start with a-z, then up to 31 of a-z, 0-9, `.`, `_`, `-`"),
    ))
}

fn no_such(name: &str) -> Error {
    Error::not_found("ui.no_such_person", format!("no person `{name}` on this box (see `hal0 ui user list`)"))
}

/// The argon2id PHC string of `password` (at least [`MIN_PASSWORD`] characters).
pub fn hash_password(password: &str) -> Result<String> {
    if password.chars().count() < MIN_PASSWORD {
        return Err(Error::invalid(
            "ui.password_too_short",
            format!("a dashboard password has at least {MIN_PASSWORD} characters"),
        ));
    }
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|e| Error::internal(format!("no randomness: {e}")))?;
    let salt = SaltString::encode_b64(&salt).map_err(|e| Error::internal(format!("salt: {e}")))?;
    let hash = Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map_err(|e| Error::internal(format!("cannot hash the password: {e}")))?;
    Ok(hash.to_string())
}

/// Whether `password` hashes to `phc` (constant time).
pub fn password_matches(phc: &str, password: &str) -> Result<bool> {
    let hash = PasswordHash::new(phc.trim()).map_err(|e| Error::internal(format!("not a password hash: {e}")))?;
    Ok(Argon2::default().verify_password(password.as_bytes(), &hash).is_ok())
}

const COLS: &str = "p.name, p.created_at, p.created_by, p.password_hash IS NOT NULL, \
     (SELECT count(*) FROM ui_passkeys k WHERE k.person = p.name), p.handle";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Person> {
    Ok(Person {
        name: r.get(0)?,
        created_at: r.get(1)?,
        created_by: r.get(2)?,
        password: r.get(3)?,
        passkeys: r.get(4)?,
        handle: r.get(5)?,
    })
}

/// Add person `name`, with `password` when given; `by` is who added them.
pub fn add(store: &Store, name: &str, password: Option<&str>, by: &str) -> Result<Person> {
    check_name(name)?;
    let hash = password.map(hash_password).transpose()?;
    let mut handle = [0u8; 16];
    getrandom::fill(&mut handle).map_err(|e| Error::internal(format!("no randomness: {e}")))?;
    let handle = crate::auth::passkey::b64_encode(&handle);
    store.with(|c| {
        let added = c.execute(
            "INSERT INTO ui_people (name, handle, password_hash, created_at, created_by) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT(name) DO NOTHING",
            rusqlite::params![name, handle, hash, now(), by],
        )?;
        if added == 0 {
            return Err(Error::conflict("ui.person_exists", format!("`{name}` is a person here already")));
        }
        Ok(())
    })?;
    get(store, name)?.ok_or_else(|| no_such(name))
}

/// Person `name`, if there is one.
pub fn get(store: &Store, name: &str) -> Result<Option<Person>> {
    store.with(|c| {
        Ok(c.query_row(&format!("SELECT {COLS} FROM ui_people p WHERE p.name = ?1"), [name], row).optional()?)
    })
}

/// Everyone, by name.
pub fn list(store: &Store) -> Result<Vec<Person>> {
    store.with(|c| {
        let mut st = c.prepare(&format!("SELECT {COLS} FROM ui_people p ORDER BY p.name"))?;
        Ok(st.query_map([], row)?.collect::<rusqlite::Result<Vec<_>>>()?)
    })
}

/// Remove person `name`: their passkeys go and their live sessions end (one transaction).
pub fn remove(store: &Store, name: &str) -> Result<()> {
    store.with(|c| {
        let tx = c.transaction()?;
        tx.execute("DELETE FROM ui_passkeys WHERE person = ?1", [name])?;
        if tx.execute("DELETE FROM ui_people WHERE name = ?1", [name])? == 0 {
            return Err(no_such(name));
        }
        tx.execute(
            "UPDATE ui_sessions SET ended_at = ?1 WHERE person = ?2 AND ended_at IS NULL",
            [now(), name.into()],
        )?;
        tx.commit()?;
        Ok(())
    })
}

/// Whether anyone can sign in without a link: a person with a password or a passkey.
pub fn anyone_signs_in(store: &Store) -> Result<bool> {
    store.with(|c| {
        Ok(c.query_row(
            "SELECT EXISTS (SELECT 1 FROM ui_people WHERE password_hash IS NOT NULL) OR EXISTS (SELECT 1 FROM ui_passkeys)",
            [],
            |r| r.get(0),
        )?)
    })
}

/// Set (or with `None` remove) person `name`'s password.
pub fn set_password(store: &Store, name: &str, password: Option<&str>) -> Result<()> {
    let hash = password.map(hash_password).transpose()?;
    let n = store.with(|c| {
        Ok(c.execute("UPDATE ui_people SET password_hash = ?1 WHERE name = ?2", rusqlite::params![hash, name])?)
    })?;
    if n == 0 { Err(no_such(name)) } else { Ok(()) }
}

/// Person `name`'s stored password hash: `ui.wrong_password` when there is no such person
/// or they have no password (a caller cannot tell which names exist).
pub fn password_hash(store: &Store, name: &str) -> Result<String> {
    let hash: Option<Option<String>> = store.with(|c| {
        Ok(c.query_row("SELECT password_hash FROM ui_people WHERE name = ?1", [name], |r| r.get(0)).optional()?)
    })?;
    hash.flatten().ok_or_else(|| Error::unauthorized("ui.wrong_password", "that name and password do not match"))
}

fn algorithm(alg: i64) -> &'static str {
    match alg {
        crate::auth::passkey::ES256 => "ES256",
        crate::auth::passkey::EDDSA => "EdDSA",
        crate::auth::passkey::RS256 => "RS256",
        _ => "unknown",
    }
}

/// Store a passkey `person` registered.
pub fn add_passkey(store: &Store, person: &str, cred: &NewCredential, label: &str) -> Result<Passkey> {
    let label: String = label.trim().chars().filter(|c| !c.is_control()).take(64).collect();
    let label = if label.is_empty() { "passkey".to_string() } else { label };
    store.with(|c| {
        let added = c.execute(
            "INSERT INTO ui_passkeys (id, person, label, alg, cose_key, sign_count, created_at)
             SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 WHERE EXISTS (SELECT 1 FROM ui_people WHERE name = ?2)
             ON CONFLICT(id) DO NOTHING",
            rusqlite::params![cred.id, person, label, cred.alg, cred.cose_key, cred.sign_count, now()],
        )?;
        if added == 0 {
            return Err(Error::conflict(
                "ui.passkey_exists",
                "this passkey is registered already (or its person is gone)",
            ));
        }
        Ok(())
    })?;
    passkeys(store, Some(person))?.into_iter().find(|k| k.id == cred.id).ok_or_else(|| no_such(person))
}

/// Passkeys (of `person`, when given), newest first.
pub fn passkeys(store: &Store, person: Option<&str>) -> Result<Vec<Passkey>> {
    store.with(|c| {
        let mut st = c.prepare(
            "SELECT id, person, label, alg, created_at, last_used FROM ui_passkeys
             WHERE ?1 IS NULL OR person = ?1 ORDER BY created_at DESC, id",
        )?;
        let rows = st.query_map([person], |r| {
            Ok(Passkey {
                id: r.get(0)?,
                person: r.get(1)?,
                label: r.get(2)?,
                algorithm: algorithm(r.get(3)?),
                created_at: r.get(4)?,
                last_used: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    })
}

/// Remove passkey `id` (of `person`, when given).
pub fn remove_passkey(store: &Store, id: &str, person: Option<&str>) -> Result<()> {
    let n = store.with(|c| {
        Ok(c.execute(
            "DELETE FROM ui_passkeys WHERE id = ?1 AND (?2 IS NULL OR person = ?2)",
            rusqlite::params![id, person],
        )?)
    })?;
    if n == 0 {
        return Err(Error::not_found("ui.no_such_passkey", format!("no passkey `{id}` (see `hal0 ui user passkeys`)")));
    }
    Ok(())
}

/// A stored passkey for a sign-in: its person, COSE key, counter.
pub struct Stored {
    pub person: String,
    pub handle: String,
    pub cose_key: Vec<u8>,
    pub sign_count: u32,
}

/// Passkey `id`, or `ui.passkey_unknown`.
pub fn passkey(store: &Store, id: &str) -> Result<Stored> {
    let found = store.with(|c| {
        Ok(c.query_row(
            "SELECT k.person, p.handle, k.cose_key, k.sign_count FROM ui_passkeys k JOIN ui_people p ON p.name = k.person
             WHERE k.id = ?1",
            [id],
            |r| Ok(Stored { person: r.get(0)?, handle: r.get(1)?, cose_key: r.get(2)?, sign_count: r.get(3)? }),
        )
        .optional()?)
    })?;
    found.ok_or_else(|| {
        Error::unauthorized("ui.passkey_unknown", "this passkey is not registered here: sign in another way and add it")
    })
}

/// Record a proven sign-in with passkey `id`: its new counter, only forward (so two
/// sign-ins racing with one counter value cannot both pass).
pub fn passkey_used(store: &Store, id: &str, was: u32, count: u32) -> Result<()> {
    let n = store.with(|c| {
        Ok(c.execute(
            "UPDATE ui_passkeys SET sign_count = ?1, last_used = ?2 WHERE id = ?3 AND sign_count = ?4",
            rusqlite::params![count, now(), id, was],
        )?)
    })?;
    if n == 0 {
        return Err(Error::unauthorized("ui.passkey_cloned", "this passkey was used at the same moment elsewhere"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::scratch as store;

    #[test]
    fn people_are_added_listed_and_removed_with_their_passkeys() {
        let (_d, s) = store();
        for bad in ["", "Alice", "1x", "a b", &"a".repeat(33), "a/b"] {
            assert_eq!(add(&s, bad, None, "cli:root").unwrap_err().code, "ui.invalid_name", "{bad}");
        }
        assert_eq!(add(&s, "alice", Some("short"), "cli:root").unwrap_err().code, "ui.password_too_short");
        let alice = add(&s, "alice", Some("correct horse battery"), "cli:root").unwrap();
        assert!(alice.password && alice.passkeys == 0 && alice.created_by == "cli:root");
        assert_eq!(add(&s, "alice", None, "cli:root").unwrap_err().code, "ui.person_exists");
        let hash = password_hash(&s, "alice").unwrap();
        assert!(hash.starts_with("$argon2id$") && !hash.contains("horse"));
        assert!(password_matches(&hash, "correct horse battery").unwrap());
        assert!(!password_matches(&hash, "correct horse battery!").unwrap());
        add(&s, "bob", None, "cli:root").unwrap();
        assert_eq!(password_hash(&s, "bob").unwrap_err().code, "ui.wrong_password");
        assert_eq!(password_hash(&s, "carol").unwrap_err().code, "ui.wrong_password");

        let cred = NewCredential { id: "AAAA".into(), alg: -7, cose_key: vec![1, 2], sign_count: 0 };
        let k = add_passkey(&s, "alice", &cred, " laptop\n").unwrap();
        assert_eq!((k.label.as_str(), k.algorithm), ("laptop", "ES256"));
        assert_eq!(add_passkey(&s, "bob", &cred, "x").unwrap_err().code, "ui.passkey_exists");
        assert_eq!(
            add_passkey(&s, "carol", &NewCredential { id: "B".into(), ..cred.clone() }, "x").unwrap_err().code,
            "ui.passkey_exists"
        );
        assert_eq!(passkey(&s, "AAAA").unwrap().person, "alice");
        passkey_used(&s, "AAAA", 0, 3).unwrap();
        assert_eq!(passkey_used(&s, "AAAA", 0, 4).unwrap_err().code, "ui.passkey_cloned");
        assert_eq!(remove_passkey(&s, "AAAA", Some("bob")).unwrap_err().code, "ui.no_such_passkey");
        assert_eq!(
            list(&s).unwrap().iter().map(|p| (p.name.as_str(), p.passkeys)).collect::<Vec<_>>(),
            [("alice", 1), ("bob", 0)]
        );

        remove(&s, "alice").unwrap();
        assert_eq!(passkey(&s, "AAAA").err().unwrap().code, "ui.passkey_unknown");
        assert_eq!(remove(&s, "alice").unwrap_err().code, "ui.no_such_person");
        assert_eq!(set_password(&s, "alice", None).unwrap_err().code, "ui.no_such_person");
        set_password(&s, "bob", Some("another long password")).unwrap();
        assert!(get(&s, "bob").unwrap().unwrap().password);
    }
}
