//! Standing approvals a person chose while deciding a proxied call, instead of "once":
//! "allow this tool for this caller for N minutes" and "always allow these exact arguments"
//! (for this caller). Each is a row a person can see (`hal0 mcp rules list`, `hal0 mcp
//! status`, the dashboard) and remove; a gated call that matches a live rule runs as if
//! allowed, its audit row naming the rule. Rules never widen beyond the one server, tool
//! and caller of the card they came from; an edit of the server's policy leaves them (a
//! tool that becomes blocked stays blocked: only gated calls consult rules).

use crate::base::error::{Error, Result};
use crate::store::{Store, now};
use rusqlite::{OptionalExtension, params};
use serde::Serialize;

/// The longest a time-bound rule may last.
pub const MAX_MINUTES: u32 = 24 * 60;

/// One rule.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct Rule {
    pub id: String,
    pub server: String,
    pub tool: String,
    /// The caller it allows (an approval row's `client`).
    pub client: String,
    /// Only these arguments (the SHA-256 of their canonical JSON); `None`: any.
    pub args_sha256: Option<String>,
    /// Until then; `None`: until removed.
    pub expires_at: Option<String>,
    pub created_at: String,
    pub created_by: String,
    /// The card it came from.
    pub approval_id: Option<String>,
}

const COLS: &str = "id, server, tool, client, args_sha256, expires_at, created_at, created_by, approval_id";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Rule> {
    Ok(Rule {
        id: r.get(0)?,
        server: r.get(1)?,
        tool: r.get(2)?,
        client: r.get(3)?,
        args_sha256: r.get(4)?,
        expires_at: r.get(5)?,
        created_at: r.get(6)?,
        created_by: r.get(7)?,
        approval_id: r.get(8)?,
    })
}

/// What a person chose beyond "once" for a proxied call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Standing {
    /// Allow the tool for the caller for this many minutes.
    pub minutes: Option<u32>,
    /// Always allow these exact arguments for the caller.
    pub these_arguments: bool,
}

impl Standing {
    pub fn is_some(&self) -> bool {
        self.minutes.is_some() || self.these_arguments
    }

    /// Check the choice itself (1..=[`MAX_MINUTES`], not both at once).
    pub fn validate(&self) -> Result<()> {
        if self.minutes.is_some() && self.these_arguments {
            return Err(Error::invalid(
                "approvals.invalid_choice",
                "choose one: allow the tool for some minutes, or always these exact arguments",
            ));
        }
        if let Some(m) = self.minutes
            && !(1..=MAX_MINUTES).contains(&m)
        {
            return Err(Error::invalid(
                "approvals.invalid_choice",
                format!("allow for {m} minutes: give 1 to {MAX_MINUTES} (a day at most)"),
            ));
        }
        Ok(())
    }
}

/// Record the rule `s` for the call of card `a` (an `mcp_call` row), decided by `by`.
pub fn create(store: &Store, a: &super::Approval, s: &Standing, by: &str) -> Result<Rule> {
    s.validate()?;
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).map_err(|e| Error::internal(format!("no randomness: {e}")))?;
    let id = format!("ar_{}", hex::encode(b));
    let server = a.arguments["server"].as_str().unwrap_or_default().to_string();
    let digest = s.these_arguments.then(|| super::digest(&a.arguments["arguments"]));
    let expires = s.minutes.map(|m| crate::store::stamp_after(i64::from(m) * 60));
    store.with(|c| {
        c.execute(
            "INSERT INTO approval_rules (id, server, tool, client, args_sha256, expires_at, created_at, created_by, approval_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![id, server, a.tool, a.client, digest, expires, now(), by, a.id],
        )?;
        Ok(c.query_row(&format!("SELECT {COLS} FROM approval_rules WHERE id = ?1"), [&id], row)?)
    })
}

/// The live rule that allows `client` to call `tool` on `server` with arguments whose
/// digest is `args_sha256`, if any (the newest).
pub fn matching(store: &Store, server: &str, tool: &str, client: &str, args_sha256: &str) -> Result<Option<Rule>> {
    store.with(|c| {
        Ok(c.query_row(
            &format!(
                "SELECT {COLS} FROM approval_rules
                  WHERE server = ?1 AND tool = ?2 AND client = ?3
                    AND (args_sha256 IS NULL OR args_sha256 = ?4)
                    AND (expires_at IS NULL OR expires_at > ?5)
                  ORDER BY created_at DESC LIMIT 1"
            ),
            params![server, tool, client, args_sha256, now()],
            row,
        )
        .optional()?)
    })
}

/// The live rules (of `server`, when given), newest first; expired ones are deleted.
pub fn list(store: &Store, server: Option<&str>) -> Result<Vec<Rule>> {
    store.with(|c| {
        c.execute("DELETE FROM approval_rules WHERE expires_at IS NOT NULL AND expires_at <= ?1", [now()])?;
        let mut st = c.prepare(&format!(
            "SELECT {COLS} FROM approval_rules WHERE (?1 IS NULL OR server = ?1) ORDER BY created_at DESC, id"
        ))?;
        Ok(st.query_map([server], row)?.collect::<rusqlite::Result<Vec<_>>>()?)
    })
}

/// Remove rule `id`.
pub fn remove(store: &Store, id: &str) -> Result<Rule> {
    store.with(|c| {
        let r = c.query_row(&format!("SELECT {COLS} FROM approval_rules WHERE id = ?1"), [id], row).optional()?;
        let Some(r) = r else {
            return Err(Error::not_found(
                "approvals.rule_not_found",
                format!("no rule `{id}` (hal0 mcp rules list shows them)"),
            ));
        };
        c.execute("DELETE FROM approval_rules WHERE id = ?1", [id])?;
        Ok(r)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approvals::{ApprovalKind, NewApproval, create_bound};

    #[test]
    fn a_rule_allows_only_its_caller_tool_and_arguments_until_it_ends() {
        let (_d, s) = crate::store::scratch();
        let card = create_bound(
            &s,
            NewApproval {
                kind: ApprovalKind::McpCall,
                client: "ci",
                tool: "write",
                arguments: serde_json::json!({"server": "files", "tool": "write", "arguments": {"p": "/tmp/a"}}),
                preview: String::new(),
                run_id: None,
            },
            Some("v"),
            Some(60),
        )
        .unwrap();
        let same = crate::approvals::digest(&serde_json::json!({"p": "/tmp/a"}));
        let other = crate::approvals::digest(&serde_json::json!({"p": "/etc/passwd"}));
        let exact = create(&s, &card, &Standing { these_arguments: true, ..Default::default() }, "cli:root").unwrap();
        assert!(matching(&s, "files", "write", "ci", &same).unwrap().is_some());
        assert!(matching(&s, "files", "write", "ci", &other).unwrap().is_none(), "other arguments wait");
        assert!(matching(&s, "files", "write", "bot", &same).unwrap().is_none(), "another caller waits");
        assert!(matching(&s, "files", "read", "ci", &same).unwrap().is_none(), "another tool waits");
        remove(&s, &exact.id).unwrap();
        assert!(matching(&s, "files", "write", "ci", &same).unwrap().is_none());
        assert_eq!(remove(&s, &exact.id).unwrap_err().code, "approvals.rule_not_found");
        let timed = create(&s, &card, &Standing { minutes: Some(15), ..Default::default() }, "cli:root").unwrap();
        assert!(matching(&s, "files", "write", "ci", &other).unwrap().is_some(), "any arguments for 15 minutes");
        s.with(|c| {
            c.execute("UPDATE approval_rules SET expires_at = '2000-01-01T00:00:00Z' WHERE id = ?1", [&timed.id])?;
            Ok(())
        })
        .unwrap();
        assert!(matching(&s, "files", "write", "ci", &other).unwrap().is_none(), "ended");
        assert!(list(&s, None).unwrap().is_empty(), "an ended rule is gone from the list");
        for bad in
            [Standing { minutes: Some(0), ..Default::default() }, Standing { minutes: Some(5), these_arguments: true }]
        {
            assert_eq!(bad.validate().unwrap_err().code, "approvals.invalid_choice");
        }
    }
}
