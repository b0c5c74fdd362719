//! Deciding a row of the inbox: claim it exactly once, then carry out exactly the stored
//! arguments for its kind and record the outcome on the row. The CLI and the REST routes
//! both come here; no MCP tool does.

use super::{Approval, claim, finish, get};
use crate::config::Config;
use crate::error::{Error, Kind, Result};
use crate::store::Store;
use serde_json::json;

/// Approve or deny row `id` as `by` (e.g. `cli:root`, `api:ops`).
pub async fn decide(
    store: &Store,
    config: &Config,
    id: &str,
    approve: bool,
    by: &str,
    reason: Option<&str>,
) -> Result<Approval> {
    let row = get(store, id)?;
    match row.kind.as_str() {
        "hermes_command" => crate::bridge::decide_hermes_approval(store, config, id, approve, by, reason).await,
        kind if super::executor(kind).is_some() => {
            let exec = super::executor(kind).expect("checked");
            let row = claim(store, id, approve, by, reason)?;
            if !approve {
                finish(store, id, "denied", &json!({"ok": true, "executed": false}))?;
                return get(store, id);
            }
            let (status, result) = match exec(store, config, &row) {
                Ok(v) => ("executed", json!({"ok": true, "result": v})),
                Err(e) => ("failed", json!({"ok": false, "error": {"code": e.code, "message": e.message}})),
            };
            finish(store, id, status, &result)?;
            get(store, id)
        }
        other => Err(Error::new(
            "approvals.unsupported_kind",
            Kind::Unsupported,
            format!("rows of kind `{other}` cannot be decided by this hal0"),
        )),
    }
}
