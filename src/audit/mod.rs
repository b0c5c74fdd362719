//! The audit log: an append-only SQLite table (`audit_log`) holding every MCP tool call and
//! every decision: when, on which surface, which tool, who asked, the arguments (redacted
//! before they are stored), the verdict, a result code and the approval it belongs to.
//!
//! Rows are never changed, except that a `started` entry (written before a call that may
//! change state runs, so no change ever goes unrecorded) takes its call's outcome once; rows
//! leave only by retention, oldest first (`crate::ops::retention`). Triggers enforce both.
//! Every write is linked into a hash chain ([`chain`]), so an edit behind hal0's back shows;
//! `hal0 activity list|export|verify` reads it.

pub mod chain;
pub(crate) mod forward;
pub(crate) mod writer;

use crate::base::error::{Error, Result};
use crate::store::{Store, now};
use rusqlite::types::Value as Sql;
use rusqlite::{OptionalExtension, params_from_iter};
use serde::Serialize;
use serde_json::Value;
use std::io::Write;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

crate::text_enum! {
    /// What became of the call an entry records (stored and sent as its text).
    pub enum Verdict {
        /// A proxied call the policy let through.
        Allow = "allow",
        /// Queued in the approvals inbox for a person.
        Gated = "gated",
        /// Refused by the tool policy.
        Blocked = "blocked",
        /// A person approved a queued call.
        Approved = "approved",
        /// A person denied a queued call.
        Denied = "denied",
        /// An approved call ran and succeeded.
        Executed = "executed",
        /// An approved call ran and failed.
        Failed = "failed",
        /// Refused before any policy applied (unknown server, consumer not allowed, …).
        Refused = "refused",
        /// The call ran and answered with an error.
        Error = "error",
        /// The call ran and succeeded.
        Ok = "ok",
        /// Written before a call that may change state ran; takes the call's outcome once
        /// it ends (left as is when the process died meanwhile).
        Started = "started",
        /// A proxied server's tool (resource, prompt) no longer matches its pinned
        /// definition: hidden and refused until a person accepts the change.
        Quarantined = "quarantined",
    }
}

/// The surfaces an entry may come from (`mcp:proxy/<id>` takes any registry id).
/// `service`: `hal0 serve`'s own background work (pruning); `ui`: the dashboard (sign-ins
/// and sign-outs; its decisions are `api` calls by the session's person).
pub const SURFACES: [&str; 10] =
    ["mcp:agents", "mcp:memory", "mcp:admin", "mcp:relay", "cli", "api", "service", "ui", "oauth", "a2a"];

/// Stored arguments larger than this (serialized, after redaction) have their long strings cut.
pub const ARGS_MAX: usize = 16 * 1024;
/// What a long string is cut to when the arguments are over [`ARGS_MAX`].
const STRING_CUT: usize = 512;
/// Marks a string cut by [`ARGS_MAX`].
const CUT_MARK: &str = "…[cut]";

/// One thing to record. `arguments` and `detail` pass through the redactor before storage.
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    /// `mcp:agents`, `mcp:memory`, `mcp:admin`, `mcp:proxy/<id>`, `cli` or `api`.
    pub surface: &'a str,
    pub tool: &'a str,
    /// Who asked: `bridge:<client>`, `admin`, `client`, `anonymous`, `cli:<user>`, …
    pub identity: &'a str,
    pub arguments: &'a Value,
    pub verdict: Verdict,
    pub result_code: Option<&'a str>,
    pub approval_id: Option<&'a str>,
    pub detail: Option<&'a str>,
}

/// One stored row.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Row {
    pub id: i64,
    /// RFC 3339 UTC, second precision.
    pub at: String,
    pub surface: String,
    pub tool: String,
    pub identity: String,
    pub arguments: Value,
    pub verdict: Verdict,
    pub result_code: Option<String>,
    pub approval_id: Option<String>,
    pub detail: Option<String>,
    /// The row's chain link (hex), on the rows sent to the system log only
    /// ([`forward`]): a copy of the chain outside `hal0.db`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chain: Option<String>,
    /// Its outcome's link (hex), likewise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome_chain: Option<String>,
}

/// Which rows to read. Every set field must match.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// RFC 3339 (any offset) or a duration back from now: `90s`, `30m`, `1h`, `7d`, `2w`, `1h30m`.
    pub since: Option<String>,
    /// Only rows before this (same forms as `since`).
    pub until: Option<String>,
    /// An identity (`bridge:ci`), or the part after its first `:` (`ci`), or a bare identity
    /// without a colon (`admin`).
    pub client: Option<String>,
    /// A tool name, exactly.
    pub tool: Option<String>,
    /// At most this many rows from [`list`]; `0` or less means no limit. [`export`] ignores it.
    pub limit: i64,
}

fn surface_ok(s: &str) -> bool {
    SURFACES.contains(&s)
        || s.strip_prefix("mcp:proxy/").is_some_and(|id| {
            !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        })
}

fn check(e: &Entry<'_>) -> Result<()> {
    if !surface_ok(e.surface) {
        return Err(Error::invalid(
            "audit.invalid_entry",
            format!("unknown audit surface `{}`: use {} or mcp:proxy/<id>", e.surface, SURFACES.join(", ")),
        ));
    }
    if e.tool.is_empty() || e.identity.is_empty() {
        return Err(Error::invalid("audit.invalid_entry", "an audit entry needs a tool and an identity"));
    }
    Ok(())
}

/// Cut every string longer than `STRING_CUT` bytes (on a character boundary).
fn cut_strings(v: &mut Value) {
    match v {
        Value::String(s) if s.len() > STRING_CUT => {
            let (head, _) = crate::base::redact::cut(s, STRING_CUT);
            *s = format!("{head}{CUT_MARK}");
        }
        Value::Array(items) => items.iter_mut().for_each(cut_strings),
        Value::Object(map) => map.values_mut().for_each(cut_strings),
        _ => {}
    }
}

/// The arguments as stored: redacted first, then (when still too big) cut. Cutting after
/// redaction means a cut never splits a secret out of the redactor's view.
fn stored_arguments(arguments: &Value) -> String {
    let mut v = arguments.clone();
    crate::base::redact::redact_json(&mut v);
    let text = v.to_string();
    if text.len() <= ARGS_MAX {
        return text;
    }
    cut_strings(&mut v);
    let text = v.to_string();
    if text.len() <= ARGS_MAX {
        return text;
    }
    serde_json::json!({"_truncated": true, "bytes": text.len()}).to_string()
}

/// An entry checked and redacted, ready for its INSERT.
pub(crate) struct Prepared {
    at: String,
    surface: String,
    tool: String,
    identity: String,
    arguments: String,
    verdict: Verdict,
    result_code: Option<String>,
    approval_id: Option<String>,
    detail: Option<String>,
}

/// Check and redact an entry (the part of recording that needs no store).
pub(crate) fn prepare(e: &Entry<'_>) -> Result<Prepared> {
    check(e)?;
    Ok(Prepared {
        at: now(),
        surface: e.surface.to_string(),
        tool: e.tool.to_string(),
        identity: e.identity.to_string(),
        arguments: stored_arguments(e.arguments),
        verdict: e.verdict,
        result_code: e.result_code.map(str::to_string),
        approval_id: e.approval_id.map(str::to_string),
        detail: e.detail.map(|d| crate::base::redact::redact(d).into_owned()),
    })
}

/// INSERT one prepared entry on `c` with its chain link (inside the caller's transaction,
/// which must hold the write lock: see [`chain`]).
pub(crate) fn insert(c: &rusqlite::Connection, p: &Prepared) -> Result<i64> {
    let (id, link) = chain::link_row(c, p)?;
    let mut st = c.prepare_cached(
        "INSERT INTO audit_log (id, at, surface, tool, identity, arguments, verdict, result_code, approval_id, detail, chain)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?;
    st.execute(rusqlite::params![
        id,
        p.at,
        p.surface,
        p.tool,
        p.identity,
        p.arguments,
        p.verdict,
        p.result_code,
        p.approval_id,
        p.detail,
        &link[..]
    ])?;
    Ok(id)
}

/// Append one entry; returns its id.
pub fn record(store: &Store, e: &Entry<'_>) -> Result<i64> {
    let p = prepare(e)?;
    store.with(|c| {
        let id = crate::store::immediate(c, |c| insert(c, &p))?;
        if let Some(f) = crate::audit::forward::of(store.path()) {
            finished_rows(c, &[id])?.iter().for_each(|r| f.send(r));
        }
        Ok(id)
    })
}

/// Append one entry from async code without waiting for its commit: it is stored within
/// [`crate::audit::writer::GATHER`] together with the entries of concurrent calls (for calls
/// to read-only tools, where the answer changes nothing). A malformed entry is refused here.
pub fn record_soon(store: &Store, e: &Entry<'_>) -> Result<()> {
    let p = prepare(e)?;
    crate::audit::writer::submit_soon(store, p)
}

/// The outcome of a call whose `started` entry is stored (see [`begin`]).
#[derive(Debug, Clone)]
pub struct Outcome {
    pub id: i64,
    pub verdict: Verdict,
    pub result_code: Option<String>,
    pub approval_id: Option<String>,
}

impl Outcome {
    /// Give the `started` row its outcome (once: a row that has one is left alone, and so
    /// is a row retention is taking, below the prune mark). Call inside a transaction: the
    /// outcome's chain link goes with it.
    pub(crate) fn apply(&self, c: &rusqlite::Connection) -> Result<()> {
        let (seq, prev) = chain::next_outcome(c)?;
        let changed = c
            .prepare_cached(
                "UPDATE audit_log SET verdict = ?2, result_code = ?3, approval_id = ?4, outcome_seq = ?5
                 WHERE id = ?1 AND verdict = 'started' AND id >= (SELECT below FROM audit_prune_mark)",
            )?
            .execute(rusqlite::params![self.id, self.verdict, self.result_code, self.approval_id, seq])?;
        if changed == 1 {
            chain::link_outcome(c, seq, &prev, self)?;
        }
        Ok(())
    }
}

/// Store the `started` entry of a call that may change state, before it runs; resolves
/// with its id once committed. When this fails (a full disk, a full store) the call must
/// be refused: a change is never made without its entry.
pub async fn begin(store: &Store, e: &Entry<'_>) -> Result<i64> {
    let p = prepare(&Entry { verdict: Verdict::Started, result_code: None, approval_id: None, ..*e })?;
    crate::audit::writer::submit(store, p).await.map_err(|e| {
        Error::unavailable(
            "audit.unavailable",
            format!(
                "the call was refused and changed nothing: its audit entry cannot be stored ({}); \
                 free space (hal0 store prune, or raise [store].max_size_mb) and call again",
                e.message
            ),
        )
    })
}

/// Record the outcome of the call [`begin`] started; stored within the writer's gather
/// window. A failure is logged: the `started` entry already records the call.
pub fn finish(store: &Store, o: Outcome) {
    if let Err(e) = crate::audit::writer::submit_finish(store, o) {
        tracing::warn!("cannot record the outcome of a call: {}", e.message);
    }
}

/// Every entry this process queued for `store` is stored when this resolves; call it
/// before reading the log from the daemon.
pub async fn flush(store: &Store) {
    crate::audit::writer::flush(store).await
}

/// Append one entry from async code: entries arriving together are committed in one
/// transaction by a writer thread per store (group commit); each caller still waits until
/// its own entry is stored.
pub async fn record_async(store: &Store, e: &Entry<'_>) -> Result<i64> {
    let p = prepare(e)?;
    crate::audit::writer::submit(store, p).await
}

fn bad_since(s: &str) -> Error {
    Error::invalid(
        "audit.invalid_since",
        format!(
            "`{s}` is neither an RFC 3339 time (2025-01-31T09:00:00Z) nor a duration such as 90s, 30m, 1h, 7d, 2w or 1h30m"
        ),
    )
}

/// A duration such as `30m`, `1h30m`, `7d` in seconds.
fn parse_duration(s: &str) -> Option<i64> {
    let mut total: i64 = 0;
    let mut num = String::new();
    let mut any = false;
    for c in s.chars() {
        if c.is_ascii_digit() {
            num.push(c);
            continue;
        }
        let unit: i64 = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            'w' => 604_800,
            _ => return None,
        };
        let n: i64 = num.parse().ok()?;
        total = total.checked_add(n.checked_mul(unit)?)?;
        num.clear();
        any = true;
    }
    (any && num.is_empty()).then_some(total)
}

fn format_utc(t: OffsetDateTime) -> Option<String> {
    let t = t.to_offset(time::UtcOffset::UTC);
    t.replace_nanosecond(0).ok()?.format(&Rfc3339).ok()
}

/// `--since` as the RFC 3339 UTC second-precision time stored rows are compared with.
pub fn parse_since(s: &str) -> Result<String> {
    let s = s.trim();
    if let Ok(t) = OffsetDateTime::parse(s, &Rfc3339) {
        return format_utc(t).ok_or_else(|| bad_since(s));
    }
    let secs = parse_duration(s).ok_or_else(|| bad_since(s))?;
    let back = time::Duration::seconds(secs);
    OffsetDateTime::now_utc().checked_sub(back).and_then(format_utc).ok_or_else(|| bad_since(s))
}

/// Rows of the log walked at most to bound `--since` by id (a few milliseconds).
const SINCE_PROBE: i64 = 100_000;

/// The conditions a [`Filter`] puts on `audit_log`, ready for SQL, worked out with the
/// help of the indexes so that one of them serves the query that follows:
///
/// - `client` becomes the exact list of identities it names in the log (see
///   [`client_identities`]), which `audit_log_identity (identity, id)` serves. The condition
///   it replaces, `identity = ?c OR substr(identity, instr(identity, ':') + 1) = ?c`, is the
///   same set of rows but no index holds that expression: each such list read the table
///   from its newest row until it had its rows, all of it for a rare or unknown client.
/// - `since`, when at most [`SINCE_PROBE`] rows are that recent, also bounds the id from
///   below by the smallest id among them (exact whatever the clock did: every row that
///   recent has an id at least that), so no query reads below it; with none, nothing matches.
#[derive(Default)]
struct Query {
    conds: Vec<String>,
    params: Vec<Sql>,
    /// The identities `client` names (`None`: no client filter).
    identities: Option<Vec<String>>,
}

impl Query {
    fn push(&mut self, cond: &str, param: Sql) {
        self.params.push(param);
        self.conds.push(cond.replace('?', &format!("?{}", self.params.len())));
    }

    /// `SELECT` of the matching rows of `identities` (all of the filter's when `None`),
    /// in id order `order`, at most `limit` (none when 0 or less).
    fn select(&self, identities: Option<&[String]>, order: &str, limit: i64) -> (String, Vec<Sql>) {
        let mut conds = self.conds.clone();
        let mut params = self.params.clone();
        if let Some(ids) = identities.or(self.identities.as_deref()) {
            let marks: Vec<String> = ids
                .iter()
                .map(|i| {
                    params.push(Sql::Text(i.clone()));
                    format!("?{}", params.len())
                })
                .collect();
            conds.push(format!("identity IN ({})", marks.join(", ")));
        }
        let mut sql = format!("SELECT {COLS} FROM audit_log");
        if !conds.is_empty() {
            sql.push_str(&format!(" WHERE {}", conds.join(" AND ")));
        }
        sql.push_str(&format!(" ORDER BY id {order}"));
        if limit > 0 {
            params.push(Sql::Integer(limit));
            sql.push_str(&format!(" LIMIT ?{}", params.len()));
        }
        (sql, params)
    }
}

/// The identities in the log that `client` names: `client` itself, and `<prefix>:client`
/// for every prefix (the part before the first `:`) an identity in the log has; exactly
/// the identities equal to `client` or whose part after the first `:` is `client`. Read
/// from `audit_log_identity` in two seeks per distinct prefix (and one per identity
/// without a colon): identities starting with `<prefix>:` sit together in the index, so
/// the walk jumps past them to `<prefix>;`.
fn client_identities(c: &rusqlite::Connection, client: &str) -> Result<Vec<String>> {
    let mut has = c.prepare_cached("SELECT 1 FROM audit_log WHERE identity = ?1 LIMIT 1")?;
    let mut after = c.prepare_cached("SELECT identity FROM audit_log WHERE identity > ?1 ORDER BY identity LIMIT 1")?;
    let mut from = c.prepare_cached("SELECT identity FROM audit_log WHERE identity >= ?1 ORDER BY identity LIMIT 1")?;
    let mut found = Vec::new();
    if has.exists([client])? {
        found.push(client.to_string());
    }
    let mut next: Option<String> = from.query_row([""], |r| r.get(0)).optional()?;
    while let Some(identity) = next {
        next = match identity.split_once(':') {
            Some((prefix, _)) => {
                let named = format!("{prefix}:{client}");
                if has.exists([&named])? {
                    found.push(named);
                }
                from.query_row([format!("{prefix};")], |r| r.get(0)).optional()?
            }
            None => after.query_row([&identity], |r| r.get(0)).optional()?,
        };
    }
    Ok(found)
}

/// The query of `f`, or `None` when no row can match it.
fn query(c: &rusqlite::Connection, f: &Filter) -> Result<Option<Query>> {
    let mut q = Query::default();
    if let Some(s) = &f.since {
        let since = parse_since(s)?;
        let (first, recent): (Option<i64>, i64) = c
            .prepare_cached("SELECT min(id), count(*) FROM (SELECT id FROM audit_log WHERE at >= ?1 LIMIT ?2)")?
            .query_row(rusqlite::params![since, SINCE_PROBE + 1], |r| Ok((r.get(0)?, r.get(1)?)))?;
        if recent == 0 {
            return Ok(None);
        }
        q.push("at >= ?", Sql::Text(since));
        if let Some(first) = first.filter(|_| recent <= SINCE_PROBE) {
            q.push("id >= ?", Sql::Integer(first));
        }
    }
    if let Some(u) = &f.until {
        q.push("at < ?", Sql::Text(parse_since(u)?));
    }
    if let Some(client) = &f.client {
        let ids = client_identities(c, client)?;
        if ids.is_empty() {
            return Ok(None);
        }
        q.identities = Some(ids);
    }
    if let Some(t) = &f.tool {
        q.push("tool = ?", Sql::Text(t.clone()));
    }
    Ok(Some(q))
}

const COLS: &str = "id, at, surface, tool, identity, arguments, verdict, result_code, approval_id, detail";

/// The rows with these ids that have their outcome (not `started`), in id order, with their
/// chain links (for the system log).
pub(crate) fn finished_rows(c: &rusqlite::Connection, ids: &[i64]) -> Result<Vec<Row>> {
    let mut st = c.prepare_cached(&format!(
        "SELECT {COLS}, lower(hex(chain)),
                (SELECT lower(hex(o.hash)) FROM audit_outcomes o WHERE o.seq = audit_log.outcome_seq)
         FROM audit_log WHERE id IN (SELECT value FROM json_each(?1)) AND verdict != 'started' ORDER BY id"
    ))?;
    let ids = serde_json::to_string(ids).unwrap_or_default();
    let rows = st
        .query_map([ids], |r| {
            let hex = |i: usize| -> rusqlite::Result<Option<String>> {
                Ok(r.get::<_, Option<String>>(i)?.filter(|h| !h.is_empty()))
            };
            Ok(Row { chain: hex(10)?, outcome_chain: hex(11)?, ..to_row(r)? })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

fn to_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    let args: String = r.get(5)?;
    Ok(Row {
        id: r.get(0)?,
        at: r.get(1)?,
        surface: r.get(2)?,
        tool: r.get(3)?,
        identity: r.get(4)?,
        arguments: serde_json::from_str(&args).unwrap_or(Value::String(args)),
        verdict: r.get(6)?,
        result_code: r.get(7)?,
        approval_id: r.get(8)?,
        detail: r.get(9)?,
        chain: None,
        outcome_chain: None,
    })
}

/// Matching rows, newest first.
pub fn list(store: &Store, f: &Filter) -> Result<Vec<Row>> {
    store.with(|c| {
        let Some(q) = query(c, f)? else { return Ok(Vec::new()) };
        // Several identities and a limit: the newest rows of each, then the newest of
        // those. One query over them all would sort every row they have.
        let groups: Vec<Option<&[String]>> = match &q.identities {
            Some(ids) if ids.len() > 1 && f.limit > 0 => ids.chunks(1).map(Some).collect(),
            _ => vec![None],
        };
        let mut rows = Vec::new();
        for ids in groups {
            let (sql, params) = q.select(ids, "DESC", f.limit);
            let mut st = c.prepare(&sql)?;
            rows.extend(st.query_map(params_from_iter(params), to_row)?.collect::<rusqlite::Result<Vec<_>>>()?);
        }
        rows.sort_by_key(|r| std::cmp::Reverse(r.id));
        if f.limit > 0 {
            rows.truncate(f.limit as usize);
        }
        Ok(rows)
    })
}

/// Rows of surfaces starting with `surface_prefix` (e.g. `mcp:` or `mcp:proxy/files`), with
/// an id above `after`: oldest first when `after` is given (a tail), else the newest `limit`.
pub fn by_surface(store: &Store, surface_prefix: &str, after: Option<i64>, limit: i64) -> Result<Vec<Row>> {
    let pattern = format!("{}%", surface_prefix.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_"));
    let order = if after.is_some() { "ASC" } else { "DESC" };
    let sql = format!(
        "SELECT {COLS} FROM audit_log WHERE surface LIKE ?1 ESCAPE '\\' AND id > ?2 ORDER BY id {order} LIMIT ?3"
    );
    store.with(|c| {
        let mut st = c.prepare(&sql)?;
        let rows = st
            .query_map(rusqlite::params![pattern, after.unwrap_or(0), limit], to_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    })
}

/// The newest row id (0 for an empty log).
pub fn last_id(store: &Store) -> Result<i64> {
    store.with(|c| Ok(c.query_row("SELECT COALESCE(MAX(id), 0) FROM audit_log", [], |r| r.get(0))?))
}

/// One MCP caller on one surface, as the log saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct CallerUse {
    pub identity: String,
    pub surface: String,
    pub first: String,
    pub last: String,
    pub calls: i64,
}

/// MCP callers seen in the log, per surface used.
pub fn mcp_callers(store: &Store) -> Result<Vec<CallerUse>> {
    store.with(|c| {
        let mut st = c.prepare(
            "SELECT identity, surface, MIN(at), MAX(at), COUNT(*) FROM audit_log
             WHERE surface LIKE 'mcp:%' GROUP BY identity, surface ORDER BY identity, surface",
        )?;
        let rows = st
            .query_map([], |r| {
                Ok(CallerUse {
                    identity: r.get(0)?,
                    surface: r.get(1)?,
                    first: r.get(2)?,
                    last: r.get(3)?,
                    calls: r.get(4)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    })
}

/// An MCP caller as operators see it: every surface it used, folded into one entry.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct McpClient {
    /// The audit identity (`bridge:ci`, `consumer:files/hermes`, `admin:deploy-bot`).
    pub id: String,
    pub name: String,
    /// The identity's prefix (`bridge`, `consumer`, `admin`, `client`), `box` without one.
    pub role: String,
    /// Not recorded yet; always null.
    pub host: Option<String>,
    pub since: String,
    pub last_seen: String,
    pub calls: i64,
    /// Servers called: `hal0-agents`/`hal0-memory`/`hal0-admin` or a proxied server's id.
    pub connected_to: Vec<String>,
}

/// MCP callers seen in the log, one entry per identity, ordered by identity.
pub fn mcp_clients(store: &Store) -> Result<Vec<McpClient>> {
    let mut by: std::collections::BTreeMap<String, McpClient> = Default::default();
    for CallerUse { identity, surface, first, last, calls } in mcp_callers(store)? {
        let (role, name) = identity.split_once(':').unwrap_or(("box", identity.as_str()));
        let e = by.entry(identity.clone()).or_insert_with(|| McpClient {
            id: identity.clone(),
            name: name.to_string(),
            role: role.to_string(),
            host: None,
            since: first.clone(),
            last_seen: last.clone(),
            calls: 0,
            connected_to: Vec::new(),
        });
        let server = surface.strip_prefix("mcp:").unwrap_or(&surface);
        e.connected_to.push(match crate::connect::Mount::named(server) {
            Some(m) => m.server.to_string(),
            None => server.strip_prefix("proxy/").unwrap_or(server).to_string(),
        });
        e.calls += calls;
        e.since = e.since.clone().min(first);
        e.last_seen = e.last_seen.clone().max(last);
    }
    Ok(by.into_values().collect())
}

/// Every matching row as one JSON object per line, oldest first, each with its chain links
/// (`chain`: seq, kind, prev, hash); returns how many.
pub fn export(store: &Store, f: &Filter, out: &mut impl Write) -> Result<u64> {
    let write_err = |e: std::io::Error| Error::unavailable("audit.export_failed", format!("cannot write: {e}"));
    store.with(|c| {
        let Some(q) = query(c, f)? else {
            out.flush().map_err(write_err)?;
            return Ok(0);
        };
        let (sql, params) = q.select(None, "ASC", 0);
        let mut st = c.prepare(&sql)?;
        let mut rows = st.query(params_from_iter(params))?;
        let mut n = 0u64;
        while let Some(r) = rows.next()? {
            let row = chain::exported(c, &to_row(r)?)?;
            let line = serde_json::to_string(&row).map_err(|e| Error::internal(e.to_string()))?;
            // The same value, with control and invisible characters as `\u` escapes.
            out.write_all(crate::base::term::json_safe(&line).as_bytes()).map_err(write_err)?;
            out.write_all(b"\n").map_err(write_err)?;
            n += 1;
        }
        out.flush().map_err(write_err)?;
        Ok(n)
    })
}

/// The `started` row of a call while it runs: dropped before [`Unanswered::answered`] (the
/// call's future was dropped: its client cancelled it or went away), it records the call as
/// `error` / `rpc.cancelled`. What the call had done by then stays done; the row says it
/// never answered. Every front that stores a `started` row holds one (MCP tools, A2A).
pub struct Unanswered<'a> {
    store: &'a Store,
    id: Option<i64>,
}

impl<'a> Unanswered<'a> {
    pub fn new(store: &'a Store, id: i64) -> Unanswered<'a> {
        Unanswered { store, id: Some(id) }
    }

    /// The call answered: its row's id, for the outcome the caller writes.
    pub fn answered(mut self) -> i64 {
        self.id.take().unwrap_or_default()
    }
}

impl Drop for Unanswered<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let outcome =
                Outcome { id, verdict: Verdict::Error, result_code: Some("rpc.cancelled".into()), approval_id: None };
            finish(self.store, outcome);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::store::scratch as store;

    fn entry<'a>(tool: &'a str, identity: &'a str, args: &'a Value) -> Entry<'a> {
        Entry {
            surface: "mcp:admin",
            tool,
            identity,
            arguments: args,
            verdict: Verdict::Allow,
            result_code: None,
            approval_id: None,
            detail: None,
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90s"), Some(90));
        assert_eq!(parse_duration("1h30m"), Some(5400));
        assert_eq!(parse_duration("7d"), Some(604_800));
        for bad in ["", "h", "1", "1x", "-1h", "1.5h", "1h 2m"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
        assert_eq!(parse_since("2025-01-31T10:00:00+01:00").unwrap(), "2025-01-31T09:00:00Z");
        assert_eq!(parse_since("yesterday").unwrap_err().code, "audit.invalid_since");
        assert!(parse_since("1h").unwrap() < now());
    }

    #[test]
    fn checks_entries() {
        let (_d, s) = store();
        let a = json!({});
        let mut e = entry("t", "admin", &a);
        e.surface = "mcp:proxy/../x";
        assert_eq!(record(&s, &e).unwrap_err().code, "audit.invalid_entry");
        e.surface = "mcp:proxy/github";
        assert!(record(&s, &e).unwrap() > 0);
    }

    #[test]
    fn big_arguments_are_cut_after_redaction() {
        let (_d, s) = store();
        let long = format!("{} Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789", "x".repeat(40_000));
        let a = json!({"text": long, "small": "ok"});
        record(&s, &entry("memory_retain", "bridge:ci", &a)).unwrap();
        let rows = list(&s, &Filter::default()).unwrap();
        let text = rows[0].arguments["text"].as_str().unwrap();
        assert!(text.ends_with(CUT_MARK) && text.len() < 1024, "{}", text.len());
        assert_eq!(rows[0].arguments["small"], "ok");
        let huge = json!((0..2000).map(|i| format!("item-{i:05}")).collect::<Vec<_>>());
        record(&s, &entry("x", "admin", &huge)).unwrap();
        assert_eq!(list(&s, &Filter { limit: 1, ..Filter::default() }).unwrap()[0].arguments["_truncated"], true);
    }

    #[test]
    fn filters_and_order() {
        let (_d, s) = store();
        let a = json!({"q": 1});
        record(&s, &entry("memory_recall", "bridge:ci", &a)).unwrap();
        record(&s, &entry("agent_run", "bridge:laptop", &a)).unwrap();
        record(&s, &entry("memory_recall", "admin", &a)).unwrap();
        let all = list(&s, &Filter::default()).unwrap();
        assert_eq!(all.iter().map(|r| r.id).collect::<Vec<_>>(), [3, 2, 1]);
        let f = |client: Option<&str>, tool: Option<&str>| Filter {
            client: client.map(str::to_string),
            tool: tool.map(str::to_string),
            ..Filter::default()
        };
        assert_eq!(list(&s, &f(Some("ci"), None)).unwrap().len(), 1);
        assert_eq!(list(&s, &f(Some("bridge:ci"), None)).unwrap().len(), 1);
        assert_eq!(list(&s, &f(Some("admin"), None)).unwrap().len(), 1);
        assert_eq!(list(&s, &f(None, Some("memory_recall"))).unwrap().len(), 2);
        assert_eq!(list(&s, &f(Some("laptop"), Some("memory_recall"))).unwrap().len(), 0);
        let mut out = Vec::new();
        assert_eq!(export(&s, &f(None, Some("memory_recall")), &mut out).unwrap(), 2);
        let ids: Vec<i64> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].as_i64().unwrap())
            .collect();
        assert_eq!(ids, [1, 3]);
    }

    #[test]
    fn client_filter_reads_the_rows_it_always_named() {
        let (_d, s) = store();
        let a = json!({});
        let identities = [
            "bridge:ci",
            "admin:ci",
            "ci",
            "x:y:ci",
            "cix",
            "bridge:cia",
            "admin",
            "admin:deploy",
            "p-x",
            "p:",
            "bridge:",
            ":ci",
            "bridge:bridge:ci",
            "consumer:files/ci",
            "cli:alice",
            "a;b",
            "a:ci",
            "é:ci",
        ];
        for (i, id) in identities.iter().enumerate() {
            for _ in 0..(i % 3 + 1) {
                record(&s, &entry("t", id, &a)).unwrap();
            }
        }
        // The condition the query had before it named identities.
        let named =
            |identity: &str, c: &str| identity == c || identity.split_once(':').map_or(identity, |(_, r)| r) == c;
        let all = list(&s, &Filter::default()).unwrap();
        for c in [
            "ci",
            "bridge:ci",
            "y:ci",
            "admin",
            "deploy",
            "",
            "nobody",
            "files/ci",
            "bridge:",
            ":ci",
            "cia",
            "x",
            "p-x",
            "b",
            "a;b",
        ] {
            let want: Vec<i64> = all.iter().filter(|r| named(&r.identity, c)).map(|r| r.id).collect();
            let f = Filter { client: Some(c.into()), ..Filter::default() };
            let ids = |f: &Filter| list(&s, f).unwrap().iter().map(|r| r.id).collect::<Vec<_>>();
            assert_eq!(ids(&f), want, "{c}");
            // A limit over several identities keeps the newest of them all.
            assert_eq!(ids(&Filter { limit: 2, ..f.clone() }), want.iter().take(2).copied().collect::<Vec<_>>(), "{c}");
            let mut out = Vec::new();
            assert_eq!(export(&s, &f, &mut out).unwrap(), want.len() as u64, "{c}");
        }
    }

    #[test]
    fn since_is_exact_when_the_clock_stepped_back() {
        let (_d, s) = store();
        // Ids 1..4; the third was written after the clock stepped back a day.
        let ats = ["2026-01-01T00:00:00Z", "2026-01-03T00:00:00Z", "2026-01-02T00:00:00Z", "2026-01-04T00:00:00Z"];
        s.with(|c| {
            for at in ats {
                c.execute(
                    "INSERT INTO audit_log (at, surface, tool, identity, arguments, verdict) VALUES (?1, 'cli', 't', 'admin', '{}', 'ok')",
                    [at],
                )?;
            }
            Ok(())
        })
        .unwrap();
        let ids = |since: &str, until: Option<&str>| {
            let f = Filter { since: Some(since.into()), until: until.map(str::to_string), ..Filter::default() };
            list(&s, &f).unwrap().iter().map(|r| r.id).collect::<Vec<_>>()
        };
        assert_eq!(ids("2026-01-02T00:00:00Z", None), [4, 3, 2]);
        assert_eq!(ids("2026-01-03T00:00:00Z", None), [4, 2]);
        assert_eq!(ids("2026-01-02T00:00:00Z", Some("2026-01-04T00:00:00Z")), [3, 2]);
        assert!(ids("2026-01-05T00:00:00Z", None).is_empty());
        let mut out = Vec::new();
        let f = Filter { since: Some("2026-01-05T00:00:00Z".into()), ..Filter::default() };
        assert_eq!(export(&s, &f, &mut out).unwrap(), 0);
    }
}
