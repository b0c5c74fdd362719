//! The approvals-inbox card that asks a person to connect a box-wide account again
//! (`account_reauth`): raised when the account falls to `reauth_required` (a refresh or the
//! token refused), one pending card per server; approving it starts a connect and sends the
//! deciding person's browser to the authorization server (the URL is shown to that person
//! once, never stored on the row); connecting the account, disconnecting it or uninstalling
//! the server withdraws the card. A consumer's delegated account gets no card: only that
//! consumer may connect it, from the link its calls' errors carry.

use crate::approvals::{self, ApprovalKind, NewApproval, Status};
use crate::base::error::Result;
use crate::store::Store;
use serde_json::json;

/// The card's kind.
pub const KIND: ApprovalKind = ApprovalKind::AccountReauth;
/// The tool name the card shows.
pub const TOOL: &str = "mcp_account_reconnect";

/// The pending cards of `server`.
fn pending(store: &Store, server: &str) -> Result<Vec<String>> {
    Ok(approvals::list(store, Some(Status::Pending.as_str()))?
        .into_iter()
        .filter(|a| a.kind == KIND && a.arguments["server"].as_str() == Some(server))
        .map(|a| a.id)
        .collect())
}

/// Raise the card for `server`'s box-wide account (`why`: redacted words), unless one
/// waits already or the account is a consumer's.
pub fn raise(store: &Store, server: &str, holder: Option<&str>, why: &str) {
    if holder.is_some() {
        return;
    }
    let out = (|| -> Result<()> {
        if !pending(store, server)?.is_empty() {
            return Ok(());
        }
        let why = crate::base::redact::redact(why);
        approvals::create(
            store,
            NewApproval {
                kind: KIND,
                client: "hal0",
                tool: TOOL,
                arguments: json!({"server": server}),
                preview: format!(
                    "`{server}`'s OAuth account must be connected again ({why}); its proxied calls fail until then. \
                     Approve to reconnect: your browser goes to the authorization server."
                ),
                run_id: None,
            },
        )
        .map(drop)
    })();
    if let Err(e) = out {
        tracing::warn!(code = e.code, "cannot raise the reconnect card of `{server}`: {}", e.message);
    }
}

/// Withdraw `server`'s pending cards (`why`: the account was connected, disconnected, or
/// the server uninstalled).
pub fn withdraw(store: &Store, server: &str, why: &str) {
    for id in pending(store, server).unwrap_or_default() {
        let _ = approvals::withdraw(store, &id, why);
    }
}
