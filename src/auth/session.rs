//! Dashboard sessions. `hal0 ui login` (on the box) makes a one-time link valid for a few
//! minutes; opening it answers a page whose own request spends the link and makes a
//! session: a random token in an HttpOnly, SameSite=Strict cookie, and a CSRF token every
//! state-changing request must echo. Links and sessions are
//! stored as sha256 digests only; sessions expire, and can be listed and ended from the
//! shell. Logins and logouts are audit entries under the session's id (`ui:<id>`).

use crate::audit::{self, Entry, Verdict};
use crate::base::actor::Actor;
use crate::base::error::{Error, Result};
use crate::base::token::{random_base62, sha256_hex};
use crate::store::Store;
use rusqlite::OptionalExtension;
use serde::Serialize;
use time::OffsetDateTime;

/// The cookie that carries a session token (over plain http).
pub const COOKIE: &str = "hal0_session";
/// The cookie's name when hal0 serves https itself: a browser takes a `__Host-` cookie only
/// from a secure origin, for `Path=/`, without `Domain`, so no http page of this host and
/// no other host (a subdomain) can set one in its place.
pub const HOST_COOKIE: &str = "__Host-hal0_session";
/// The header a state-changing request carries its session's CSRF token in.
pub const CSRF_HEADER: &str = "x-csrf-token";
const LINK_PREFIX: &str = "hal0ul_";
const SESSION_PREFIX: &str = "hal0us_";
/// How long a login link may wait to be opened, by default.
pub const LINK_MINUTES: i64 = 5;
/// How long a session lasts after it was opened.
pub const SESSION_HOURS: i64 = 12;

fn stamp(t: OffsetDateTime) -> String {
    t.replace_nanosecond(0).unwrap_or(t).format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

/// A session as listed (never its token).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Session {
    pub id: String,
    pub created_at: String,
    pub expires_at: String,
    pub last_seen: String,
    pub ended_at: Option<String>,
    pub user_agent: String,
    /// The person it belongs to (`None`: a session opened before people had names).
    pub person: Option<String>,
    /// How it was opened: `link from cli:<user>`, `password` or `passkey`.
    pub via: Option<String>,
    /// Echoed by the page in [`CSRF_HEADER`]; not shown in listings.
    #[serde(skip)]
    pub csrf: String,
}

impl Session {
    /// The audit identity and decider name of this session's person: `person:NAME`
    /// (`ui:<session>` for a session from before people had names).
    pub fn identity(&self) -> String {
        match &self.person {
            Some(p) => Actor::Person(p.clone()).to_string(),
            None => Actor::UiSession(self.id.clone()).to_string(),
        }
    }
    /// Whether it was opened with a passkey.
    pub fn by_passkey(&self) -> bool {
        self.via.as_deref() == Some("passkey")
    }
    pub fn live(&self, now: &str) -> bool {
        self.ended_at.is_none() && self.expires_at.as_str() > now
    }
}

/// A new one-time login link token, valid for `minutes`, made by `by` (`cli:<user>`), that
/// opens a session for `person`.
pub fn new_link(store: &Store, minutes: i64, by: &str, person: &str) -> Result<String> {
    crate::auth::people::check_name(person)?;
    if !(1..=60).contains(&minutes) {
        return Err(Error::invalid("ui.invalid_ttl", "a login link lives 1 to 60 minutes (--minutes)"));
    }
    let token = format!("{LINK_PREFIX}{}", random_base62(43)?);
    let now = OffsetDateTime::now_utc();
    store.with(|c| {
        c.execute(
            "INSERT INTO ui_links (token_sha256, created_at, expires_at, created_by, person) VALUES (?1, ?2, ?3, ?4, ?5)",
            rusqlite::params![sha256_hex(&token), stamp(now), stamp(now + time::Duration::minutes(minutes)), by, person],
        )?;
        Ok(())
    })?;
    Ok(token)
}

/// Who a new session is for and how they proved it.
pub struct Opening<'a> {
    pub person: Option<&'a str>,
    pub via: &'a str,
    pub user_agent: &'a str,
}

/// A new session row (inside the caller's transaction) and its cookie token.
fn open(c: &rusqlite::Connection, o: &Opening<'_>, now: OffsetDateTime) -> Result<(Session, String)> {
    let token = format!("{SESSION_PREFIX}{}", random_base62(43)?);
    let s = Session {
        id: format!("us_{}", random_base62(10)?),
        created_at: stamp(now),
        expires_at: stamp(now + time::Duration::hours(SESSION_HOURS)),
        last_seen: stamp(now),
        ended_at: None,
        user_agent: o.user_agent.chars().take(200).collect(),
        person: o.person.map(str::to_string),
        via: Some(o.via.to_string()),
        csrf: random_base62(32)?,
    };
    c.execute(
        "INSERT INTO ui_sessions (id, token_sha256, csrf, created_at, expires_at, last_seen, user_agent, person, via)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        rusqlite::params![
            s.id,
            sha256_hex(&token),
            s.csrf,
            s.created_at,
            s.expires_at,
            s.last_seen,
            s.user_agent,
            s.person,
            s.via
        ],
    )?;
    Ok((s, token))
}

/// The audit entry of a sign-in (`via` a link, a password or a passkey), opened or
/// refused; a refused one names the person it claimed to be, when it named one.
fn audited<T>(store: &Store, outcome: Result<(Session, T)>, o: &Opening<'_>) -> Result<(Session, T)> {
    let (identity, verdict, code) = match &outcome {
        Ok((s, _)) => (s.identity(), Verdict::Ok, None),
        Err(e) => ("ui:anonymous".to_string(), Verdict::Refused, Some(e.code)),
    };
    let (user_agent, via) = (o.user_agent, o.via);
    // A sign-in the log cannot hold still goes on (the session is made); say why.
    if let Err(e) = audit::record(
        store,
        &Entry {
            surface: "ui",
            tool: "ui_login",
            identity: &identity,
            arguments: &serde_json::json!({"via": via, "person": o.person, "user_agent": user_agent}),
            verdict,
            result_code: code,
            approval_id: None,
            detail: None,
        },
    ) {
        tracing::warn!(code = e.code, "cannot record the sign-in: {}", e.message);
    }
    outcome
}

const AGAIN: &str = "run `hal0 ui login` on the box for a new link";

/// An unused link: when it expires, who it is for, who made it.
#[derive(Debug)]
pub struct Link {
    pub expires_at: String,
    pub person: Option<String>,
    pub created_by: String,
}

/// Unused link `link`; `ui.link_unknown` or `ui.link_used` otherwise.
fn unused_link(c: &rusqlite::Connection, link: &str) -> Result<Link> {
    let row: Option<(Link, Option<String>)> = c
        .query_row(
            "SELECT expires_at, person, created_by, used_at FROM ui_links WHERE token_sha256 = ?1",
            [sha256_hex(link)],
            |r| Ok((Link { expires_at: r.get(0)?, person: r.get(1)?, created_by: r.get(2)? }, r.get(3)?)),
        )
        .optional()?;
    let Some((found, used)) = row else {
        return Err(Error::forbidden_code("ui.link_unknown", format!("this login link is not known here: {AGAIN}")));
    };
    if used.is_some() {
        return Err(Error::forbidden_code("ui.link_used", format!("this login link was used already: {AGAIN}")));
    }
    Ok(found)
}

fn link_expired() -> Error {
    Error::forbidden_code("ui.link_expired", format!("this login link expired: {AGAIN}"))
}

/// The link `link` is, if it would open a session now (known, unused, not expired),
/// without using it up: opening the link answers its page, and only the page's own
/// same-origin request ([`redeem`]) spends it.
pub fn check_link(store: &Store, link: &str) -> Result<Link> {
    let now = stamp(OffsetDateTime::now_utc());
    let found = store.with(|c| unused_link(c, link))?;
    if found.expires_at.as_str() <= now.as_str() {
        return Err(link_expired());
    }
    Ok(found)
}

/// The session a link opens (for the person it was made for), with its cookie token. The
/// link is used up, whatever the outcome after that; an unknown, used or expired link is
/// refused with what to do.
pub fn redeem(store: &Store, link: &str, user_agent: &str) -> Result<(Session, String)> {
    let now = OffsetDateTime::now_utc();
    let now_s = stamp(now);
    let mut via = "link".to_string();
    let session = store.with(|c| {
        let tx = c.transaction()?;
        let found = unused_link(&tx, link)?;
        tx.execute(
            "UPDATE ui_links SET used_at = ?1 WHERE token_sha256 = ?2",
            rusqlite::params![now_s, sha256_hex(link)],
        )?;
        if found.expires_at.as_str() <= now_s.as_str() {
            tx.commit()?;
            return Err(link_expired());
        }
        via = format!("link from {}", found.created_by);
        let o = Opening { person: found.person.as_deref(), via: &via, user_agent };
        let opened = open(&tx, &o, now)?;
        tx.commit()?;
        Ok(opened)
    });
    let person = session.as_ref().ok().and_then(|(s, _)| s.person.clone());
    audited(store, session, &Opening { person: person.as_deref(), via: &via, user_agent })
}

/// A session for a person who proved who they are (a password or a passkey, checked by
/// the caller), or the refusal `refused` recorded as a failed sign-in.
pub fn proven(store: &Store, o: &Opening<'_>, refused: Option<Error>) -> Result<(Session, String)> {
    let outcome = match refused {
        Some(e) => Err(e),
        None => store.with(|c| open(c, o, OffsetDateTime::now_utc())),
    };
    audited(store, outcome, o)
}

const COLS: &str = "id, created_at, expires_at, last_seen, ended_at, user_agent, csrf, person, via";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Session> {
    Ok(Session {
        id: r.get(0)?,
        created_at: r.get(1)?,
        expires_at: r.get(2)?,
        last_seen: r.get(3)?,
        ended_at: r.get(4)?,
        user_agent: r.get(5)?,
        csrf: r.get(6)?,
        person: r.get(7)?,
        via: r.get(8)?,
    })
}

/// The live session a cookie token opens, if any (its `last_seen` moves at most once a
/// minute).
pub fn resolve(store: &Store, token: &str) -> Result<Option<Session>> {
    if !token.starts_with(SESSION_PREFIX) {
        return Ok(None);
    }
    let now = stamp(OffsetDateTime::now_utc());
    store.with(|c| {
        let s = c
            .query_row(&format!("SELECT {COLS} FROM ui_sessions WHERE token_sha256 = ?1"), [sha256_hex(token)], row)
            .optional()?;
        let Some(s) = s.filter(|s| s.live(&now)) else { return Ok(None) };
        // At most once a minute; a store that cannot take the write (full) still lets the
        // person read.
        if s.last_seen.get(..16) != now.get(..16)
            && let Err(e) =
                c.execute("UPDATE ui_sessions SET last_seen = ?1 WHERE id = ?2", rusqlite::params![now, s.id])
        {
            tracing::warn!("cannot record a dashboard session's last use: {e}");
        }
        Ok(Some(s))
    })
}

/// Sessions, newest first; ended and expired ones only with `all`.
pub fn list(store: &Store, all: bool) -> Result<Vec<Session>> {
    let now = stamp(OffsetDateTime::now_utc());
    store.with(|c| {
        let mut st = c.prepare(&format!(
            "SELECT {COLS} FROM ui_sessions WHERE ?1 OR (ended_at IS NULL AND expires_at > ?2)
             ORDER BY created_at DESC, id"
        ))?;
        Ok(st.query_map(rusqlite::params![all, now], row)?.collect::<rusqlite::Result<Vec<_>>>()?)
    })
}

/// End session `id` (or every live one with `None`); how many ended. `by` is recorded.
pub fn end(store: &Store, id: Option<&str>, by: &str) -> Result<usize> {
    let now = stamp(OffsetDateTime::now_utc());
    let n = store.with(|c| {
        Ok(match id {
            Some(id) => c.execute(
                "UPDATE ui_sessions SET ended_at = ?1 WHERE id = ?2 AND ended_at IS NULL",
                rusqlite::params![now, id],
            )?,
            None => c.execute(
                "UPDATE ui_sessions SET ended_at = ?1 WHERE ended_at IS NULL AND expires_at > ?1",
                rusqlite::params![now],
            )?,
        })
    })?;
    if let Some(id) = id
        && n == 0
    {
        return Err(Error::not_found("ui.no_such_session", format!("no live session `{id}` (see hal0 ui sessions)")));
    }
    audit::record(
        store,
        &Entry {
            surface: if matches!(Actor::parse(by), Actor::Cli(_)) { "cli" } else { "ui" },
            tool: "ui_logout",
            identity: by,
            arguments: &serde_json::json!({"session": id.unwrap_or("all"), "ended": n}),
            verdict: Verdict::Ok,
            result_code: None,
            approval_id: None,
            detail: None,
        },
    )?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::store::scratch as store;

    #[test]
    fn a_link_opens_one_session_once_and_only_until_it_expires() {
        let (_d, s) = store();
        let link = new_link(&s, 5, "cli:root", "root").unwrap();
        assert_eq!(check_link(&s, &link).unwrap().person.as_deref(), Some("root"));
        // Checking a link does not use it up.
        check_link(&s, &link).unwrap();
        check_link(&s, &link).unwrap();
        let (session, token) = redeem(&s, &link, "test").unwrap();
        assert_eq!(check_link(&s, &link).unwrap_err().code, "ui.link_used");
        assert_eq!(resolve(&s, &token).unwrap().unwrap().id, session.id);
        assert_eq!(redeem(&s, &link, "test").unwrap_err().code, "ui.link_used");
        assert_eq!(redeem(&s, "hal0ul_nope", "test").unwrap_err().code, "ui.link_unknown");
        assert_eq!((session.identity().as_str(), session.via.as_deref()), ("person:root", Some("link from cli:root")));
        let old = new_link(&s, 5, "cli:root", "root").unwrap();
        s.with(|c| Ok(c.execute("UPDATE ui_links SET expires_at = '2020-01-01T00:00:00Z' WHERE used_at IS NULL", [])?))
            .unwrap();
        assert_eq!(check_link(&s, &old).unwrap_err().code, "ui.link_expired");
        assert_eq!(redeem(&s, &old, "test").unwrap_err().code, "ui.link_expired");
        // Only digests are stored.
        let stored: String = s
            .with(|c| Ok(c.query_row("SELECT group_concat(token_sha256) FROM ui_sessions", [], |r| r.get(0))?))
            .unwrap();
        assert!(!stored.contains(&token));
        assert_eq!(new_link(&s, 0, "x", "root").unwrap_err().code, "ui.invalid_ttl");
        assert_eq!(new_link(&s, 5, "x", "Not A Name").unwrap_err().code, "ui.invalid_name");

        // Ending it: the token opens nothing any more.
        assert_eq!(end(&s, Some(&session.id), "cli:root").unwrap(), 1);
        assert!(resolve(&s, &token).unwrap().is_none());
        assert_eq!(end(&s, Some(&session.id), "cli:root").unwrap_err().code, "ui.no_such_session");
        assert_eq!(list(&s, false).unwrap().len(), 0);
        assert_eq!(list(&s, true).unwrap().len(), 1);
    }
}
