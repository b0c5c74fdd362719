//! Deciding a row of the inbox: claim it exactly once, then carry out exactly the stored
//! arguments for its kind and record the outcome on the row. The CLI and the REST routes
//! both come here; no MCP tool does.

use super::{Approval, ApprovalKind, Status, claim, finish, get};
use crate::audit::Verdict;
use crate::error::{Error, Kind, Result};
use crate::store::Store;
use serde_json::json;

/// A decided row and, for calls that produce one, the live result (unredacted, shown once
/// to the person who approved; the row keeps a redacted copy).
pub struct Decided {
    pub row: Approval,
    pub output: Option<serde_json::Value>,
}

/// What deciding needs: the services holding the row and carrying out each kind (an
/// approved admin call runs its operation directly; `paths` finds an MCP server's record).
#[derive(Clone, Copy)]
pub struct Decider<'a> {
    pub svc: &'a std::sync::Arc<crate::ops::Services>,
}

impl Decider<'_> {
    /// Approve or deny row `id` as `by` (e.g. `cli:root`, `api:ops`), and record the decision
    /// and its outcome in the audit log.
    pub async fn decide(&self, id: &str, approve: bool, by: &str, reason: Option<&str>) -> Result<Decided> {
        let out = self.decide_inner(id, approve, by, reason).await;
        if let Ok(d) = &out {
            audit_decision(&self.svc.store, d, approve, by);
        }
        out
    }

    /// Approve or deny row `id` as `by`: claim it, carry it out, record the outcome on the row.
    async fn decide_inner(&self, id: &str, approve: bool, by: &str, reason: Option<&str>) -> Result<Decided> {
        let svc = self.svc;
        let (paths, store, config) = (&svc.paths, &svc.store, &svc.config);
        let row = get(store, id)?;
        if row.kind == ApprovalKind::HermesCommand {
            let row = crate::bridge::decide_hermes_approval(store, config, id, approve, by, reason).await?;
            return Ok(Decided { row, output: None });
        }
        let builtin = [ApprovalKind::AdminCall, ApprovalKind::McpCall];
        if !builtin.contains(&row.kind) && super::executor(&row.kind).is_none() {
            return Err(Error::new(
                "approvals.unsupported_kind",
                Kind::Unsupported,
                format!("rows of kind `{}` cannot be decided by this hal0", row.kind),
            ));
        }
        let row = claim(store, id, approve, by, reason)?;
        if !approve {
            finish(store, id, Status::Denied, &json!({"ok": true, "executed": false}))?;
            return Ok(Decided { row: get(store, id)?, output: None });
        }
        let out = match (&row.kind, super::executor(&row.kind)) {
            (ApprovalKind::AdminCall, _) => crate::admin::execute_approved(svc, &row).await,
            (ApprovalKind::McpCall, _) => crate::registry::proxy::execute_approved(paths, config, &row).await,
            (_, Some(exec)) => exec(store, config, &row),
            _ => Err(Error::internal("no executor")),
        };
        let (status, mut stored, live) = match out {
            Ok(v) => (Status::Executed, json!({"ok": true, "result": v.clone()}), Some(v)),
            Err(e) => (Status::Failed, json!({"ok": false, "error": {"code": e.code, "message": e.message}}), None),
        };
        // The row keeps a redacted copy; the person deciding sees the live result once.
        crate::redact::redact_json(&mut stored);
        finish(store, id, status, &stored)?;
        // Only an admin call's answer is shown to the approver (e.g. a new key); other kinds
        // are fully described by the row.
        let output = if row.kind == ApprovalKind::AdminCall { live } else { None };
        Ok(Decided { row: get(store, id)?, output })
    }
}

/// The audit entry of a decision and its outcome.
fn audit_decision(store: &Store, d: &Decided, approve: bool, by: &str) {
    let surface = if by.starts_with("api:") { "api" } else { "cli" };
    let verdict = match d.row.status {
        Status::Executed => Verdict::Executed,
        Status::Failed => Verdict::Failed,
        Status::Denied => Verdict::Denied,
        _ => {
            if approve {
                Verdict::Approved
            } else {
                Verdict::Denied
            }
        }
    };
    let code = d.row.result.as_ref().and_then(|r| r["error"]["code"].as_str().map(str::to_string));
    let entry = crate::audit::Entry {
        surface,
        tool: &d.row.tool,
        identity: by,
        arguments: &d.row.arguments,
        verdict,
        result_code: code.as_deref(),
        approval_id: Some(&d.row.id),
        detail: Some(d.row.kind.as_str()),
    };
    if let Err(e) = crate::audit::record(store, &entry) {
        tracing::warn!("cannot record the decision in the audit log: {}", e.message);
    }
}
