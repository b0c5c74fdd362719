//! The approvals inbox: one persistent table of calls that wait for a person (Hermes
//! dangerous-command approvals, skill changes, gated admin and MCP calls, …). A row moves
//! `pending` → `approved`/`denied` exactly once (an atomic claim), then `executed` or
//! `failed` with its result; `withdrawn` when it no longer applies.

pub mod rules;

use crate::base::error::{Error, Result};
use crate::store::{Store, now};
use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use serde_json::Value;

crate::text_enum! {
    /// What a row would carry out when approved.
    pub enum ApprovalKind {
        /// A dangerous command a Hermes run wants to run.
        HermesCommand = "hermes_command",
        /// A gated `hal0-admin` tool call.
        AdminCall = "admin_call",
        /// A gated tool call through the MCP proxy.
        McpCall = "mcp_call",
        SkillPut = "skill_put",
        SkillDelete = "skill_delete",
        MemoryDelete = "memory_delete",
        MemoryCurate = "memory_curate",
        DirectiveDelete = "directive_delete",
        /// An OAuth client asks to connect; approving grants it the mount's own scope and
        /// the browser that asked gets its code.
        OauthConsent = "oauth_consent",
        /// A box-wide OAuth account at an installed server must be connected again;
        /// approving starts the connect and sends the deciding person's browser on.
        AccountReauth = "account_reauth",
        /// An installed server changed a tool's (resource's, prompt's) definition since it
        /// was pinned; approving pins the new one and lifts its quarantine.
        ToolDrift = "tool_drift",
    }
    // A kind this hal0 does not know (a row from a newer version): shown, never decided.
    other Other
}

crate::text_enum! {
    /// Where a row stands: `Pending` → `Approved`/`Denied` exactly once, then `Executed` or
    /// `Failed`; `Withdrawn` when it no longer applies.
    pub enum Status {
        Pending = "pending",
        Approved = "approved",
        Denied = "denied",
        Withdrawn = "withdrawn",
        /// Nobody decided it before its `expires_at`; it can no longer be approved.
        Expired = "expired",
        Executed = "executed",
        Failed = "failed",
    }
}

impl Status {
    /// Parse a status name (`approvals.invalid_status` names the choices).
    pub fn parse(s: &str) -> Result<Status> {
        Status::from_text(s).ok_or_else(|| {
            let all: Vec<&str> = Status::ALL.iter().map(|x| x.as_str()).collect();
            Error::invalid("approvals.invalid_status", format!("unknown status `{s}`: choose from {}", all.join(", ")))
        })
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Approval {
    pub id: String,
    pub kind: ApprovalKind,
    pub client: String,
    pub tool: String,
    pub arguments: Value,
    pub preview: String,
    pub created_at: String,
    pub status: Status,
    pub decided_at: Option<String>,
    pub decided_by: Option<String>,
    pub reason: Option<String>,
    pub result: Option<Value>,
    pub run_id: Option<String>,
    /// What the decision is bound to (gated calls).
    #[serde(flatten)]
    pub binding: Binding,
}

/// What an approval of a gated call is bound to: the SHA-256 of its canonical arguments
/// (checked before the call runs), the version of the policy that gated it (a policy edit
/// while it waits makes it stale), and when it expires undecided.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Binding {
    pub args_sha256: Option<String>,
    pub policy_version: Option<String>,
    pub expires_at: Option<String>,
}

/// `v` as canonical JSON: object keys sorted at every depth, no spaces.
pub fn canonical(v: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&m[k]))).collect())
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(v).to_string()
}

/// The hex SHA-256 of `v`'s canonical JSON.
pub fn digest(v: &Value) -> String {
    crate::base::token::sha256_hex(&canonical(v))
}

impl Approval {
    /// The card as a remote caller may see it (REST, `approval_list` / `approval_get`):
    /// arguments, preview, reason and result through the redactor, and every value of an
    /// `env` or `headers` map masked whole (environment values and headers are credentials
    /// more often than not, and the redactor cannot know which). Only the shell's
    /// `hal0 agent approvals show` shows the raw card, to the person deciding.
    /// The card as the shell shows it: whole, as approval will carry it out (the person
    /// deciding reads the exact command, skill text, …), except the value of a
    /// `secret_write`, which is never printed: its length stands in for it.
    pub fn for_shell(mut self) -> Approval {
        if self.kind == ApprovalKind::AdminCall
            && self.tool == "secret_write"
            && let Some(v) = self.arguments.pointer_mut("/args/secret")
        {
            let len = v.as_str().map_or(0, str::len);
            *v = Value::String(format!("{} ({len} bytes)", crate::base::redact::MASK));
        }
        self
    }

    pub fn redacted(mut self) -> Approval {
        // A settings write names its setting (`network.public_url`): a name, never a secret,
        // that the redactor's rule for fields called `key` would hide from the person
        // deciding.
        let setting = (self.kind == ApprovalKind::AdminCall && self.tool == "config_write")
            .then(|| self.arguments.pointer("/args/key").and_then(Value::as_str).filter(|k| setting_name(k)))
            .flatten()
            .map(str::to_owned);
        let mut masked = Vec::new();
        mask_maps(&mut self.arguments, &mut masked);
        crate::base::redact::redact_json(&mut self.arguments);
        // The preview quotes the arguments: what was masked there is masked here too.
        for v in masked.iter().filter(|v| v.len() >= 4) {
            for form in [v.clone(), Value::String(v.clone()).to_string().trim_matches('"').to_string()] {
                self.preview = self.preview.replace(&form, crate::base::redact::MASK);
            }
        }
        self.preview = crate::base::redact::redact(&self.preview).into_owned();
        if let Some(k) = setting {
            if let Some(v) = self.arguments.pointer_mut("/args/key") {
                *v = Value::String(k.clone());
            }
            let hidden = format!("\"key\":\"{}\"", crate::base::redact::MASK);
            self.preview = self.preview.replace(&hidden, &format!("\"key\":\"{k}\""));
        }
        self.reason = self.reason.map(|r| crate::base::redact::redact(&r).into_owned());
        if let Some(r) = self.result.as_mut() {
            crate::base::redact::redact_json(r);
        }
        self
    }
}

/// A hal0.toml setting's name: `section.key`, lower case, digits and underscores.
fn setting_name(k: &str) -> bool {
    let parts: Vec<&str> = k.split('.').collect();
    parts.len() == 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'))
}

/// Mask the values of every `env` / `headers` object inside `v`, collecting what was masked.
fn mask_maps(v: &mut Value, masked: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, item) in m.iter_mut() {
                if (k.eq_ignore_ascii_case("env") || k.eq_ignore_ascii_case("headers")) && item.is_object() {
                    for x in item.as_object_mut().into_iter().flat_map(|o| o.values_mut()) {
                        if !x.is_null() && x.as_str() != Some("") {
                            masked.push(x.as_str().map(str::to_string).unwrap_or_else(|| x.to_string()));
                            *x = Value::String(crate::base::redact::MASK.to_string());
                        }
                    }
                } else {
                    mask_maps(item, masked);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| mask_maps(x, masked)),
        _ => {}
    }
}

/// A row to queue.
pub struct NewApproval<'a> {
    pub kind: ApprovalKind,
    pub client: &'a str,
    pub tool: &'a str,
    pub arguments: Value,
    pub preview: String,
    pub run_id: Option<&'a str>,
}

/// The largest arguments a gated call (admin or MCP) may queue, as stored JSON: a person
/// reads them before deciding, and every inbox poll carries them.
pub const MAX_GATED_ARGUMENTS_BYTES: usize = 64 * 1024;

/// The most gated calls (admin or MCP) one client may have waiting for a person, as
/// skill changes are capped per client (`bridge::skills::MAX_PENDING`).
pub const MAX_PENDING_PER_CLIENT: i64 = 32;

/// Whether rows of `kind` are gated tool calls (capped in size and per client).
fn is_gated_call(kind: &ApprovalKind) -> bool {
    matches!(kind, ApprovalKind::AdminCall | ApprovalKind::McpCall)
}

const COLS: &str = "id, kind, client, tool, arguments, preview, created_at, status, decided_at, decided_by, reason, \
                    result, run_id, args_sha256, policy_version, expires_at";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Approval> {
    let args: String = r.get(4)?;
    let result: Option<String> = r.get(11)?;
    Ok(Approval {
        id: r.get(0)?,
        kind: r.get(1)?,
        client: r.get(2)?,
        tool: r.get(3)?,
        arguments: serde_json::from_str(&args).unwrap_or(Value::Null),
        preview: r.get(5)?,
        created_at: r.get(6)?,
        status: r.get(7)?,
        decided_at: r.get(8)?,
        decided_by: r.get(9)?,
        reason: r.get(10)?,
        result: result.and_then(|s| serde_json::from_str(&s).ok()),
        run_id: r.get(12)?,
        binding: Binding { args_sha256: r.get(13)?, policy_version: r.get(14)?, expires_at: r.get(15)? },
    })
}

fn new_id() -> Result<String> {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).map_err(|e| Error::internal(format!("no randomness: {e}")))?;
    Ok(format!("ap_{}", hex::encode(b)))
}

/// Queue a row. A gated call whose arguments are over [`MAX_GATED_ARGUMENTS_BYTES`] is
/// refused (`approvals.arguments_too_large`), and so is one from a client that already has
/// [`MAX_PENDING_PER_CLIENT`] gated calls waiting (`approvals.too_many_pending`).
pub fn create(store: &Store, n: NewApproval<'_>) -> Result<Approval> {
    create_bound(store, n, None, None)
}

/// [`create`], bound to `policy_version` (the policy that gated it) and expiring after
/// `expire_secs` undecided. Every row records its arguments' digest.
pub fn create_bound(
    store: &Store,
    n: NewApproval<'_>,
    policy_version: Option<&str>,
    expire_secs: Option<i64>,
) -> Result<Approval> {
    let id = new_id()?;
    let args_sha256 = digest(&n.arguments);
    let expires_at = expire_secs.map(crate::store::stamp_after);
    let arguments = n.arguments.to_string();
    let gated = is_gated_call(&n.kind);
    if gated && arguments.len() > MAX_GATED_ARGUMENTS_BYTES {
        return Err(Error::new(
            "approvals.arguments_too_large",
            crate::base::error::Kind::TooLarge,
            format!(
                "the arguments of `{}` are {} bytes as JSON; a gated call may queue at most {MAX_GATED_ARGUMENTS_BYTES} \
                 (64 KiB) for a person to read: pass a reference (a path, a URL) instead of the content",
                n.tool,
                arguments.len()
            ),
        ));
    }
    store.with(|c| {
        if gated {
            let held: i64 = c.query_row(
                "SELECT COUNT(*) FROM approvals WHERE status = 'pending' AND client = ?1 AND kind IN ('admin_call', 'mcp_call')",
                [n.client],
                |r| r.get(0),
            )?;
            if held >= MAX_PENDING_PER_CLIENT {
                return Err(Error::new(
                    "approvals.too_many_pending",
                    crate::base::error::Kind::TooMany,
                    format!(
                        "{} already has {MAX_PENDING_PER_CLIENT} gated calls waiting for a person; wait until they are \
                         decided (hal0 agent approvals list) before queueing more",
                        n.client
                    ),
                ));
            }
        }
        c.execute(
            "INSERT INTO approvals (id, kind, client, tool, arguments, preview, created_at, status, run_id,
                                    args_sha256, policy_version, expires_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'pending', ?8, ?9, ?10, ?11)",
            params![
                id,
                n.kind,
                n.client,
                n.tool,
                arguments,
                n.preview,
                now(),
                n.run_id,
                args_sha256,
                policy_version,
                expires_at
            ],
        )?;
        Ok(())
    })?;
    get(store, &id)
}

pub fn get(store: &Store, id: &str) -> Result<Approval> {
    store
        .with(|c| Ok(c.query_row(&format!("SELECT {COLS} FROM approvals WHERE id = ?1"), [id], row).optional()?))?
        .ok_or_else(|| {
            Error::not_found("approvals.not_found", format!("no approval `{id}` (see `hal0 agent approvals list`)"))
        })
}

/// How many rows wait for a person.
pub fn count_pending(store: &Store) -> Result<i64> {
    store.with(|c| Ok(c.query_row("SELECT COUNT(*) FROM approvals WHERE status = 'pending'", [], |r| r.get(0))?))
}

/// Rows, newest first; `status` filters.
pub fn list(store: &Store, status: Option<&str>) -> Result<Vec<Approval>> {
    let status = status.map(Status::parse).transpose()?;
    store.with(|c| {
        let mut st = c.prepare(&format!(
            "SELECT {COLS} FROM approvals WHERE (?1 IS NULL OR status = ?1) ORDER BY created_at DESC, rowid DESC"
        ))?;
        let rows = st.query_map([status], row)?.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    })
}

/// The most rows one page of the inbox holds.
pub const PAGE_MAX: i64 = 200;

/// Stored arguments longer than this (rows queued before the cap) are not read by a page:
/// the card says how long they are instead.
const PAGE_ARGUMENTS_READ: i64 = MAX_GATED_ARGUMENTS_BYTES as i64 * 4;

/// A page of the inbox: each row with its stored arguments' length, and the next cursor.
pub type Page = (Vec<(Approval, usize)>, Option<String>);

/// One page of rows, newest first: at most `limit` (1..=[`PAGE_MAX`]) in `status` when
/// given, older than the cursor `before` (from a previous page's `next_cursor`). Returns the
/// rows with their stored arguments' length, and the cursor of the next page when there
/// may be one. Arguments over [`PAGE_ARGUMENTS_READ`] are not read (`Value::Null`).
pub fn page(store: &Store, status: Option<&str>, limit: i64, before: Option<&str>) -> Result<Page> {
    let status = status.map(Status::parse).transpose()?;
    if !(1..=PAGE_MAX).contains(&limit) {
        return Err(Error::invalid(
            "approvals.invalid_request",
            format!("limit {limit} must be from 1 to {PAGE_MAX}; follow next_cursor for more"),
        ));
    }
    let cursor = before.map(parse_cursor).transpose()?;
    let (at, rowid) = cursor.unzip();
    store.with(|c| {
        let mut st = c.prepare_cached(&format!(
            "SELECT {}, length(arguments), rowid FROM approvals
             WHERE (?1 IS NULL OR status = ?1) AND (?2 IS NULL OR created_at < ?2 OR (created_at = ?2 AND rowid < ?3))
             ORDER BY created_at DESC, rowid DESC LIMIT ?4",
            COLS.replace(
                "arguments,",
                &format!("CASE WHEN length(arguments) <= {PAGE_ARGUMENTS_READ} THEN arguments ELSE 'null' END,")
            )
        ))?;
        let rows = st
            .query_map(params![status, at, rowid, limit + 1], |r| {
                Ok((row(r)?, r.get::<_, i64>(16)? as usize, r.get::<_, i64>(17)?))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let more = rows.len() as i64 > limit;
        let rows: Vec<_> = rows.into_iter().take(limit as usize).collect();
        let next = match (more, rows.last()) {
            (true, Some((a, _, rowid))) => Some(format!("{}~{rowid}", a.created_at)),
            _ => None,
        };
        Ok((rows.into_iter().map(|(a, n, _)| (a, n)).collect(), next))
    })
}

/// A page cursor: `<created_at>~<rowid>`.
fn parse_cursor(c: &str) -> Result<(String, i64)> {
    c.rsplit_once('~').and_then(|(at, id)| Some((at.to_string(), id.parse().ok()?))).ok_or_else(|| {
        Error::invalid(
            "approvals.invalid_cursor",
            format!("`{c}` is not a cursor of the inbox: pass next_cursor from the previous page, or none"),
        )
    })
}

/// The pending row for a run (Hermes approvals), if any.
pub fn pending_for_run(store: &Store, run_id: &str) -> Result<Option<Approval>> {
    store.with(|c| {
        Ok(c.query_row(
            &format!(
                "SELECT {COLS} FROM approvals WHERE run_id = ?1 AND status = 'pending' ORDER BY created_at DESC LIMIT 1"
            ),
            [run_id],
            row,
        )
        .optional()?)
    })
}

/// Decide a pending row: `pending` → `approved`/`denied`, exactly once. A second decision
/// (from another shell or the daemon) is refused with the row's current state.
pub fn claim(store: &Store, id: &str, approve: bool, by: &str, reason: Option<&str>) -> Result<Approval> {
    let to = if approve { Status::Approved } else { Status::Denied };
    // An expired card is not approved (nor denied: it is expired), even before the
    // daemon's sweep marks it.
    expire_due(store)?;
    let changed = store.with(|c| {
        let n = c.execute(
            "UPDATE approvals SET status = ?1, decided_at = ?2, decided_by = ?3, reason = ?4 WHERE id = ?5 AND status = 'pending'",
            params![to, now(), by, reason, id],
        )?;
        // A denied call never runs: its arguments are kept only as the redactor shows them.
        if n == 1 && !approve {
            scrub(c, id)?;
        }
        Ok(n)
    })?;
    let row = get(store, id)?;
    if changed == 0 {
        still_pending(&row)?;
    }
    Ok(row)
}

/// `Ok` while `row` waits for a decision; else why it cannot be decided
/// (`approvals.expired`, or `approvals.not_pending` with its state).
pub fn still_pending(row: &Approval) -> Result<()> {
    match row.status {
        Status::Pending => Ok(()),
        Status::Expired => Err(Error::conflict(
            "approvals.expired",
            format!(
                "approval `{}` expired undecided at {}; nothing was done (the caller asks again)",
                row.id,
                row.binding.expires_at.as_deref().unwrap_or("?")
            ),
        )),
        _ => Err(Error::conflict(
            "approvals.not_pending",
            format!("approval `{}` is already {}; nothing was done", row.id, row.status),
        )),
    }
}

/// Record the outcome of an approved (or denied) row.
pub fn finish(store: &Store, id: &str, status: Status, result: &Value) -> Result<()> {
    store.with(|c| {
        c.execute(
            "UPDATE approvals SET status = ?1, result = ?2 WHERE id = ?3",
            params![status, result.to_string(), id],
        )?;
        scrub(c, id)
    })
}

/// Replace a row's stored arguments by their redacted form once the call they describe can
/// no longer run (denied, withdrawn, executed, failed): the secrets a call carried are kept
/// only while a person may still approve it, not for the inbox's retention (nor in backups).
fn scrub(c: &rusqlite::Connection, id: &str) -> Result<()> {
    let stored: Option<String> =
        c.query_row("SELECT arguments FROM approvals WHERE id = ?1", [id], |r| r.get(0)).optional()?;
    let Some(stored) = stored else { return Ok(()) };
    let Ok(mut v) = serde_json::from_str::<Value>(&stored) else { return Ok(()) };
    crate::base::redact::redact_json(&mut v);
    let scrubbed = v.to_string();
    if scrubbed != stored {
        c.execute("UPDATE approvals SET arguments = ?1 WHERE id = ?2", params![scrubbed, id])?;
    }
    Ok(())
}

/// Mark every pending row past its `expires_at` as `expired` (its arguments scrubbed), and
/// answer them.
pub fn expire_due(store: &Store) -> Result<Vec<Approval>> {
    let t = now();
    store.with(|c| {
        let ids: Vec<String> = {
            let mut st = c.prepare(
                "SELECT id FROM approvals WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= ?1",
            )?;
            st.query_map([&t], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?
        };
        let mut out = Vec::new();
        for id in ids {
            let n = c.execute(
                "UPDATE approvals SET status = 'expired', decided_at = ?1, reason = 'expired undecided'
                  WHERE id = ?2 AND status = 'pending'",
                params![t, id],
            )?;
            if n == 1 {
                scrub(c, &id)?;
                out.push(c.query_row(&format!("SELECT {COLS} FROM approvals WHERE id = ?1"), [&id], row)?);
            }
        }
        Ok(out)
    })
}

/// Whether `row`'s stored arguments are still those it was queued with (its digest).
pub fn check_arguments(row: &Approval) -> Result<()> {
    match &row.binding.args_sha256 {
        Some(d) if *d != digest(&row.arguments) => Err(Error::conflict(
            "approvals.binding_mismatch",
            format!("approval `{}`'s stored arguments are not those it was queued with; nothing was run", row.id),
        )),
        _ => Ok(()),
    }
}

/// Withdraw a pending row that no longer applies.
pub fn withdraw(store: &Store, id: &str, why: &str) -> Result<bool> {
    let n = store.with(|c| {
        let n = c.execute(
            "UPDATE approvals SET status = 'withdrawn', decided_at = ?1, reason = ?2 WHERE id = ?3 AND status = 'pending'",
            params![now(), why, id],
        )?;
        if n == 1 {
            scrub(c, id)?;
        }
        Ok(n)
    })?;
    Ok(n == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_json_sorts_keys_at_every_depth() {
        let a = serde_json::json!({"b": 1, "a": {"y": [2, {"d": 0, "c": 1}], "x": null}});
        assert_eq!(canonical(&a), r#"{"a":{"x":null,"y":[2,{"c":1,"d":0}]},"b":1}"#);
        let b: Value = serde_json::from_str(r#"{"a":{"y":[2,{"c":1,"d":0}],"x":null},"b":1}"#).unwrap();
        assert_eq!(digest(&a), digest(&b));
        assert_ne!(digest(&a), digest(&serde_json::json!({"b": 2})));
    }

    #[test]
    fn a_card_bound_to_an_expiry_cannot_be_decided_after_it_and_its_arguments_are_checked() {
        let (_d, s) = crate::store::scratch();
        let n = |client: &'static str| NewApproval {
            kind: ApprovalKind::McpCall,
            client,
            tool: "write",
            arguments: serde_json::json!({"server": "s", "tool": "write", "arguments": {"p": "/tmp/x"}}),
            preview: "p".into(),
            run_id: None,
        };
        let past = create_bound(&s, n("a"), Some("v1"), Some(-5)).unwrap();
        assert_eq!(past.binding.policy_version.as_deref(), Some("v1"));
        let e = claim(&s, &past.id, true, "cli:root", None).unwrap_err();
        assert_eq!(e.code, "approvals.expired");
        assert_eq!(get(&s, &past.id).unwrap().status, Status::Expired);
        assert!(expire_due(&s).unwrap().is_empty(), "expired once");
        let live = create_bound(&s, n("b"), Some("v1"), Some(3600)).unwrap();
        assert!(check_arguments(&live).is_ok());
        let mut changed = live.clone();
        changed.arguments["arguments"]["p"] = serde_json::json!("/etc/shadow");
        assert_eq!(check_arguments(&changed).unwrap_err().code, "approvals.binding_mismatch");
        assert_eq!(claim(&s, &live.id, true, "cli:root", None).unwrap().status, Status::Approved);
    }

    #[test]
    fn a_settings_write_shows_its_setting_but_a_secret_value_stays_hidden() {
        let card = |key: &str, value: &str| {
            Approval {
                id: "ap_1".into(),
                kind: ApprovalKind::AdminCall,
                client: "hermes".into(),
                tool: "config_write".into(),
                arguments: serde_json::json!({"tool": "config_write", "args": {"key": key, "value": value}}),
                preview: format!("config_write: PUT /api/settings {}", serde_json::json!({"key": key, "value": value})),
                created_at: "t".into(),
                status: Status::Pending,
                decided_at: None,
                decided_by: None,
                reason: None,
                result: None,
                run_id: None,
                binding: Default::default(),
            }
            .redacted()
        };
        let c = card("network.public_url", "https://box.example");
        assert_eq!(c.arguments["args"]["key"], "network.public_url");
        assert!(c.preview.contains("\"key\":\"network.public_url\""), "{}", c.preview);
        // A value that looks like a key is still masked; so is a `key` that is no setting name.
        let token = format!("ghp_{}", "A1b2C3d4E5".repeat(4));
        let c = card("network.public_url", &token);
        assert!(!c.arguments.to_string().contains(&token) && !c.preview.contains(&token));
        let c = card(&token, "x");
        assert!(!c.arguments.to_string().contains(&token) && !c.preview.contains(&token));
    }

    #[test]
    fn gated_calls_are_capped_in_size_and_per_client_and_the_inbox_pages() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::open(&d.path().join("h.db")).unwrap();
        let gated = |client: &'static str, bytes: usize| NewApproval {
            kind: ApprovalKind::McpCall,
            client,
            tool: "write_file",
            arguments: serde_json::json!({"content": "x".repeat(bytes)}),
            preview: "write_file".into(),
            run_id: None,
        };
        let e = create(&s, gated("bot", 3 << 20)).unwrap_err();
        assert_eq!(e.code, "approvals.arguments_too_large");
        assert!(e.message.contains("65536"), "{}", e.message);
        assert_eq!(count_pending(&s).unwrap(), 0, "nothing stored");
        for _ in 0..MAX_PENDING_PER_CLIENT {
            create(&s, gated("bot", 1000)).unwrap();
        }
        assert_eq!(create(&s, gated("bot", 10)).unwrap_err().code, "approvals.too_many_pending");
        create(&s, gated("other", 10)).unwrap();
        // Pages of 10 walk every row once, newest first.
        let (mut seen, mut before) = (Vec::new(), None::<String>);
        loop {
            let (rows, next) = page(&s, Some("pending"), 10, before.as_deref()).unwrap();
            assert!(rows.len() <= 10);
            seen.extend(rows.into_iter().map(|(a, _)| a.id));
            match next {
                Some(c) => before = Some(c),
                None => break,
            }
        }
        let all: Vec<String> = list(&s, Some("pending")).unwrap().into_iter().map(|a| a.id).collect();
        assert_eq!(seen, all);
        assert_eq!(page(&s, None, 0, None).unwrap_err().code, "approvals.invalid_request");
        assert_eq!(page(&s, None, 10, Some("nope")).unwrap_err().code, "approvals.invalid_cursor");
    }

    /// A gated call's secrets stay in the store only while the call may still run: denied,
    /// withdrawn and finished rows keep their arguments as the redactor shows them. An
    /// approved row keeps them whole until it has run.
    #[test]
    fn secrets_leave_the_inbox_once_a_call_can_no_longer_run() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::open(&d.path().join("h.db")).unwrap();
        let token = format!("ghp_{}", "Q7w8E9r0T1".repeat(4));
        let queue = || {
            create(
                &s,
                NewApproval {
                    kind: ApprovalKind::McpCall,
                    client: "bot",
                    tool: "push",
                    arguments: serde_json::json!({"remote": "origin", "auth": format!("token {token}")}),
                    preview: "push".into(),
                    run_id: None,
                },
            )
            .unwrap()
            .id
        };
        let stored = |id: &str| -> String {
            s.with(|c| Ok(c.query_row("SELECT arguments FROM approvals WHERE id = ?1", [id], |r| r.get(0))?)).unwrap()
        };
        let (denied, withdrawn, run) = (queue(), queue(), queue());
        claim(&s, &denied, false, "root", None).unwrap();
        assert!(withdraw(&s, &withdrawn, "gone").unwrap());
        claim(&s, &run, true, "root", None).unwrap();
        assert!(stored(&run).contains(&token), "an approved call runs with its arguments whole");
        finish(&s, &run, Status::Executed, &serde_json::json!({"ok": true})).unwrap();
        for id in [&denied, &withdrawn, &run] {
            let a = stored(id);
            assert!(!a.contains(&token) && a.contains("origin") && a.contains(crate::base::redact::MASK), "{a}");
        }
    }

    #[test]
    fn claim_is_exactly_once() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::open(&d.path().join("h.db")).unwrap();
        let a = create(
            &s,
            NewApproval {
                kind: ApprovalKind::HermesCommand,
                client: "ws",
                tool: "approval",
                arguments: serde_json::json!({"command": "rm -r x"}),
                preview: "rm -r x".into(),
                run_id: Some("run_1"),
            },
        )
        .unwrap();
        assert_eq!(a.status, Status::Pending);
        assert_eq!(pending_for_run(&s, "run_1").unwrap().unwrap().id, a.id);
        let c = claim(&s, &a.id, true, "root", None).unwrap();
        assert_eq!(c.status, Status::Approved);
        assert_eq!(claim(&s, &a.id, false, "root", None).unwrap_err().code, "approvals.not_pending");
        finish(&s, &a.id, Status::Executed, &serde_json::json!({"ok": true})).unwrap();
        let g = get(&s, &a.id).unwrap();
        assert_eq!(g.status, Status::Executed);
        assert_eq!(g.result.unwrap()["ok"], true);
        assert_eq!(list(&s, Some("executed")).unwrap().len(), 1);
        assert_eq!(list(&s, Some("bogus")).unwrap_err().code, "approvals.invalid_status");
        assert_eq!(get(&s, "ap_nope").unwrap_err().code, "approvals.not_found");
        assert!(!withdraw(&s, &a.id, "x").unwrap());
    }
}
