//! The approvals inbox: one persistent table of calls that wait for a person (Hermes
//! dangerous-command approvals, skill changes, gated admin and MCP calls, …). A row moves
//! `pending` → `approved`/`denied` exactly once (an atomic claim), then `executed` or
//! `failed` with its result; `withdrawn` when it no longer applies.

pub mod decide;

pub use decide::{Decided, Decider};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::store::{Store, now};
use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use serde_json::Value;

/// Carries out an approved row of one kind with exactly its stored arguments.
pub type Executor = fn(&Store, &Config, &Approval) -> Result<Value>;

/// The executor for a row kind (skills and memory register theirs here).
pub fn executor(kind: &ApprovalKind) -> Option<Executor> {
    use ApprovalKind as K;
    match kind {
        K::SkillPut | K::SkillDelete => Some(crate::bridge::skills::execute_approved),
        K::MemoryDelete | K::MemoryCurate | K::DirectiveDelete => Some(crate::memory::gate::execute_approved_row),
        _ => None,
    }
}

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
            *v = Value::String(format!("{} ({len} bytes)", crate::redact::MASK));
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
        crate::redact::redact_json(&mut self.arguments);
        // The preview quotes the arguments: what was masked there is masked here too.
        for v in masked.iter().filter(|v| v.len() >= 4) {
            for form in [v.clone(), Value::String(v.clone()).to_string().trim_matches('"').to_string()] {
                self.preview = self.preview.replace(&form, crate::redact::MASK);
            }
        }
        self.preview = crate::redact::redact(&self.preview).into_owned();
        if let Some(k) = setting {
            if let Some(v) = self.arguments.pointer_mut("/args/key") {
                *v = Value::String(k.clone());
            }
            let hidden = format!("\"key\":\"{}\"", crate::redact::MASK);
            self.preview = self.preview.replace(&hidden, &format!("\"key\":\"{k}\""));
        }
        self.reason = self.reason.map(|r| crate::redact::redact(&r).into_owned());
        if let Some(r) = self.result.as_mut() {
            crate::redact::redact_json(r);
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
                            *x = Value::String(crate::redact::MASK.to_string());
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

const COLS: &str =
    "id, kind, client, tool, arguments, preview, created_at, status, decided_at, decided_by, reason, result, run_id";

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
    })
}

fn new_id() -> Result<String> {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).map_err(|e| Error::internal(format!("no randomness: {e}")))?;
    Ok(format!("ap_{}", hex::encode(b)))
}

pub fn create(store: &Store, n: NewApproval<'_>) -> Result<Approval> {
    let id = new_id()?;
    store.with(|c| {
        c.execute(
            "INSERT INTO approvals (id, kind, client, tool, arguments, preview, created_at, status, run_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'pending', ?8)",
            params![id, n.kind, n.client, n.tool, n.arguments.to_string(), n.preview, now(), n.run_id],
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
    let changed = store.with(|c| {
        Ok(c.execute(
            "UPDATE approvals SET status = ?1, decided_at = ?2, decided_by = ?3, reason = ?4 WHERE id = ?5 AND status = 'pending'",
            params![to, now(), by, reason, id],
        )?)
    })?;
    let row = get(store, id)?;
    if changed == 0 {
        return Err(Error::conflict(
            "approvals.not_pending",
            format!("approval `{id}` is already {}; nothing was done", row.status),
        ));
    }
    Ok(row)
}

/// Record the outcome of an approved (or denied) row.
pub fn finish(store: &Store, id: &str, status: Status, result: &Value) -> Result<()> {
    store.with(|c| {
        c.execute(
            "UPDATE approvals SET status = ?1, result = ?2 WHERE id = ?3",
            params![status, result.to_string(), id],
        )?;
        Ok(())
    })
}

/// Withdraw a pending row that no longer applies.
pub fn withdraw(store: &Store, id: &str, why: &str) -> Result<bool> {
    let n = store.with(|c| {
        Ok(c.execute(
            "UPDATE approvals SET status = 'withdrawn', decided_at = ?1, reason = ?2 WHERE id = ?3 AND status = 'pending'",
            params![now(), why, id],
        )?)
    })?;
    Ok(n == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

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
