//! The audit log as an operator reads it: a filtered page, newest first, or every matching
//! entry oldest first.

use super::Ctx;
use crate::audit::{self, Filter};
use crate::error::Result;

/// Which entries: every set field must match.
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct ExportArgs {
    /// RFC 3339 time or a duration back from now (30m, 1h, 7d).
    #[serde(default)]
    pub since: Option<String>,
    /// Only entries before this (same forms as since).
    #[serde(default)]
    pub until: Option<String>,
    /// An identity, e.g. bridge:ci or ci.
    #[serde(default)]
    pub client: Option<String>,
    /// A tool name.
    #[serde(default)]
    pub tool: Option<String>,
}

#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct ListArgs {
    #[serde(flatten)]
    pub filter: ExportArgs,
    /// At most this many (default 100).
    #[serde(default, deserialize_with = "super::de::opt_int")]
    pub limit: Option<i64>,
}

/// `activity_list`: newest first.
pub async fn list(ctx: &Ctx, a: ListArgs) -> Result<Vec<audit::Row>> {
    let ExportArgs { since, until, client, tool } = a.filter;
    let f = Filter { since, until, client, tool, limit: a.limit.unwrap_or(100) };
    audit::flush(&ctx.store).await;
    ctx.store.call(move |s| audit::list(s, &f)).await
}

/// `activity_export`: every matching entry, oldest first.
pub async fn export(ctx: &Ctx, a: ExportArgs) -> Result<Vec<serde_json::Value>> {
    let f = Filter { since: a.since, until: a.until, client: a.client, tool: a.tool, limit: 0 };
    audit::flush(&ctx.store).await;
    ctx.store
        .call(move |s| {
            let mut buf = Vec::new();
            audit::export(s, &f, &mut buf)?;
            Ok(String::from_utf8_lossy(&buf).lines().filter_map(|l| serde_json::from_str(l).ok()).collect())
        })
        .await
}
