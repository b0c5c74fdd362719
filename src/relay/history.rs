//! The relay's durable side in SQLite: exchanges (written when an ask starts and again when
//! it ends, refusals included), the conversations each pair of bots opened, and which bots
//! are connected now (presence, for other processes such as the CLI).

use crate::base::error::{Error, Result};
use crate::store::{Store, now};
use rusqlite::{OptionalExtension, params};
use serde::Serialize;

/// One exchange as stored and listed.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Exchange {
    pub request_id: String,
    pub conversation_id: String,
    pub from: String,
    pub to: String,
    pub message: String,
    /// `pending` while the ask waits, then `ok` or the failure (`timeout`, …).
    pub status: String,
    pub answer: Option<String>,
    pub error: Option<String>,
    pub started_at: String,
    pub ended_at: Option<String>,
}

/// One change to the history, queued for the store's group-commit writer
/// (`audit::writer`): the writes of concurrent asks share a transaction, and an ask never
/// waits for a commit. Readers in the daemon pass the writer's barrier first.
#[derive(Debug, Clone)]
pub enum Write {
    /// An ask started (status `pending`) or was refused (its status and end already set);
    /// with the pair when it opened a new conversation.
    Start(Box<Exchange>, Option<(String, String)>),
    /// How an ask ended: `Ok(answer)` or the failure's name, and when.
    End { request_id: String, outcome: std::result::Result<String, String>, at: String },
}

impl Write {
    /// The pair of a conversation this start opened, in stored order (`a <= b`).
    pub fn pair(&self) -> Option<(&String, &String)> {
        match self {
            Write::Start(_, Some((x, y))) => Some(if x <= y { (x, y) } else { (y, x) }),
            _ => None,
        }
    }

    /// An end's stored columns: status (`ok` or the failure), answer, error.
    pub fn end_columns(&self) -> Option<(&str, Option<&str>, Option<&str>)> {
        match self {
            Write::End { outcome: Ok(a), .. } => Some(("ok", Some(a.as_str()), None)),
            Write::End { outcome: Err(e), .. } => Some((e.as_str(), None, Some(e.as_str()))),
            Write::Start(..) => None,
        }
    }

    /// Apply the change on `c` (inside the writer's transaction).
    pub fn apply(&self, c: &rusqlite::Connection) -> Result<()> {
        match self {
            Write::Start(e, _) => {
                let e = &**e;
                if let Some((a, b)) = self.pair() {
                    c.prepare_cached(
                        "INSERT OR IGNORE INTO relay_conversations (id, a, b, created_at) VALUES (?1, ?2, ?3, ?4)",
                    )?
                    .execute(params![e.conversation_id, a, b, e.started_at])?;
                }
                c.prepare_cached(
                    "INSERT INTO relay_exchanges (request_id, conversation_id, from_agent, to_agent, message, status,
                                                  answer, error, started_at, ended_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                )?
                .execute(params![
                    e.request_id,
                    e.conversation_id,
                    e.from,
                    e.to,
                    e.message,
                    e.status,
                    e.answer,
                    e.error,
                    e.started_at,
                    e.ended_at
                ])?;
            }
            Write::End { request_id, at, .. } => {
                let (status, answer, error) = self.end_columns().unwrap_or_default();
                c.prepare_cached(
                    "UPDATE relay_exchanges SET status = ?2, answer = ?3, error = ?4, ended_at = ?5
                     WHERE request_id = ?1",
                )?
                .execute(params![request_id, status, answer, error, at])?;
            }
        }
        Ok(())
    }

    /// Queue the change for `store`'s writer (committed within a few milliseconds).
    pub fn queue(self, store: &Store) -> Result<()> {
        crate::audit::writer::submit_change(store, Box::new(self))
    }
}

impl crate::audit::writer::Change for Write {
    fn apply(&self, c: &rusqlite::Connection) -> Result<()> {
        Write::apply(self, c)
    }
    fn what(&self) -> &'static str {
        "a relay exchange"
    }
}

/// End every exchange still `pending` (a daemon that stopped without ending them).
pub fn end_stale(store: &Store, why: &str) -> Result<usize> {
    store.with(|c| {
        Ok(c.execute(
            "UPDATE relay_exchanges SET status = ?1, error = ?1, ended_at = ?2 WHERE status = 'pending'",
            params![why, now()],
        )?)
    })
}

/// The pair a conversation belongs to, if it exists.
pub fn conversation(store: &Store, id: &str) -> Result<Option<(String, String)>> {
    store.with(|c| {
        Ok(c.prepare_cached("SELECT a, b FROM relay_conversations WHERE id = ?1")?
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?)
    })
}

/// What to list.
#[derive(Debug, Default, Clone)]
pub struct Filter {
    /// Exchanges this bot asked or was asked.
    pub agent: Option<String>,
    /// Started at or after (RFC 3339 UTC).
    pub since: Option<String>,
    pub limit: i64,
    /// Only this exchange.
    pub request_id: Option<String>,
    /// Cut each message and answer to this many bytes ([`cut_text`]); whole when `None`.
    pub text_max: Option<usize>,
}

/// Cut `text` to `max` bytes (on a char boundary) followed by a marker with its whole
/// length, when it is longer: a listing of many exchanges carries heads, and one exchange
/// (`request_id`) is read whole.
pub fn cut_text(text: &mut String, max: usize, whole: usize) {
    if whole <= max {
        return;
    }
    let end = crate::base::redact::cut(text, max).0.len();
    text.truncate(end);
    text.push_str(&format!("… [cut: {whole} bytes in all]"));
}

impl Exchange {
    /// [`cut_text`] on the message and answer, when `max` is given.
    pub fn cut(mut self, max: Option<usize>) -> Exchange {
        if let Some(max) = max {
            let n = self.message.len();
            cut_text(&mut self.message, max, n);
            if let Some(a) = &mut self.answer {
                let n = a.len();
                cut_text(a, max, n);
            }
        }
        self
    }
}

/// Refuse a listing limit outside 1..=10000.
pub fn check_limit(limit: i64) -> Result<()> {
    if !(1..=10_000).contains(&limit) {
        return Err(Error::invalid("relay.invalid_limit", format!("limit {limit} must be from 1 to 10000")));
    }
    Ok(())
}

/// Exchanges, newest first.
pub fn list(store: &Store, f: &Filter) -> Result<Vec<Exchange>> {
    check_limit(f.limit)?;
    store.with(|c| {
        // Heads are cut in SQL (a page of long asks never reads them whole); `substr` counts
        // characters, so the head is cut again to bytes with the stored byte length.
        let max = f.text_max.map(|m| m as i64);
        let mut st = c.prepare_cached(
            "SELECT request_id, conversation_id, from_agent, to_agent,
                    CASE WHEN ?5 IS NULL THEN message ELSE substr(message, 1, ?5 + 1) END, length(CAST(message AS BLOB)),
                    status,
                    CASE WHEN ?5 IS NULL THEN answer ELSE substr(answer, 1, ?5 + 1) END, length(CAST(answer AS BLOB)),
                    error, started_at, ended_at
             FROM relay_exchanges
             WHERE (?1 IS NULL OR from_agent = ?1 OR to_agent = ?1) AND (?2 IS NULL OR started_at >= ?2)
               AND (?4 IS NULL OR request_id = ?4)
             ORDER BY started_at DESC, rowid DESC LIMIT ?3",
        )?;
        let rows = st.query_map(params![f.agent, f.since, f.limit, f.request_id, max], |r| {
            let (mut message, message_len): (String, i64) = (r.get(4)?, r.get(5)?);
            let (mut answer, answer_len): (Option<String>, Option<i64>) = (r.get(7)?, r.get(8)?);
            if let Some(m) = f.text_max {
                cut_text(&mut message, m, message_len as usize);
                if let Some(a) = &mut answer {
                    cut_text(a, m, answer_len.unwrap_or(0) as usize);
                }
            }
            Ok(Exchange {
                request_id: r.get(0)?,
                conversation_id: r.get(1)?,
                from: r.get(2)?,
                to: r.get(3)?,
                message,
                status: r.get(6)?,
                answer,
                error: r.get(9)?,
                started_at: r.get(10)?,
                ended_at: r.get(11)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    })
}

/// Mark `name` connected under `generation`.
pub fn connected(store: &Store, name: &str, generation: u64) -> Result<()> {
    store.with(|c| {
        c.execute(
            "INSERT INTO relay_presence (name, generation, connected_at) VALUES (?1, ?2, ?3)
             ON CONFLICT(name) DO UPDATE SET generation = excluded.generation, connected_at = excluded.connected_at",
            params![name, generation as i64, now()],
        )?;
        Ok(())
    })
}

/// Mark `name` gone, unless a newer connection (another generation) holds it.
pub fn disconnected(store: &Store, name: &str, generation: u64) -> Result<()> {
    store.with(|c| {
        c.execute("DELETE FROM relay_presence WHERE name = ?1 AND generation = ?2", params![name, generation as i64])?;
        Ok(())
    })
}

/// Forget every connection (the daemon starts with none).
pub fn clear_presence(store: &Store) -> Result<()> {
    store.with(|c| {
        c.execute("DELETE FROM relay_presence", [])?;
        Ok(())
    })
}

/// The bots connected now, with when they connected.
pub fn present(store: &Store) -> Result<Vec<(String, String)>> {
    store.with(|c| {
        let mut st = c.prepare_cached("SELECT name, connected_at FROM relay_presence ORDER BY name")?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listing with `text_max` carries heads cut to bytes (multi-byte text too) marked with
    /// the whole length; `request_id` reads one exchange whole.
    #[test]
    fn a_listing_carries_heads_and_one_exchange_is_read_whole() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::open(&d.path().join("h.db")).unwrap();
        let message = "é".repeat(5000);
        let e = Exchange {
            request_id: "r1".into(),
            conversation_id: "c1".into(),
            from: "a".into(),
            to: "b".into(),
            message: message.clone(),
            status: "ok".into(),
            answer: Some("short".into()),
            error: None,
            started_at: "2026-12-06T00:00:00Z".into(),
            ended_at: None,
        };
        s.with(|c| Write::Start(Box::new(e), Some(("a".into(), "b".into()))).apply(c)).unwrap();
        let f = |request_id: Option<&str>, text_max| Filter {
            limit: 10,
            request_id: request_id.map(str::to_string),
            text_max,
            ..Default::default()
        };
        let heads = list(&s, &f(None, Some(101))).unwrap();
        let m = &heads[0].message;
        assert!(m.starts_with(&"é".repeat(50)) && m.ends_with("… [cut: 10000 bytes in all]"), "{m}");
        assert!(m.len() < 200, "{}", m.len());
        assert_eq!(heads[0].answer.as_deref(), Some("short"));
        assert_eq!(list(&s, &f(Some("r1"), None)).unwrap()[0].message, message);
        assert!(list(&s, &f(Some("r9"), None)).unwrap().is_empty());
    }
}
