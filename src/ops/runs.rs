//! The agent bridge's runs of every client, as an operator lists them.

use super::Ctx;
use crate::error::{Error, Result};

#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct ListArgs {
    /// Only this client's runs.
    #[serde(default)]
    pub client: Option<String>,
    /// Only runs with this status.
    #[serde(default)]
    pub status: Option<String>,
    /// At most this many (default 50, at most 1000).
    #[serde(default, deserialize_with = "super::de::opt_int")]
    pub limit: Option<i64>,
}

/// `run_list`: newest first, the list view (redacted).
pub async fn list(ctx: &Ctx, a: ListArgs) -> Result<Vec<serde_json::Value>> {
    let limit = a.limit.unwrap_or(50);
    if !(1..=1000).contains(&limit) {
        return Err(Error::invalid("runs.invalid_limit", "limit must be 1 to 1000"));
    }
    ctx.store
        .call(move |s| {
            let runs = crate::bridge::ledger::list(s, a.client.as_deref(), a.status.as_deref(), limit)?;
            Ok(runs.iter().map(crate::bridge::view::list_view).collect())
        })
        .await
}
