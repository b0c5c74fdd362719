//! The audit log as an operator reads it: a filtered page, newest first, or every matching
//! entry oldest first; and its hash chain walked ([`verify`]).

use super::Ctx;
use crate::audit::{self, Filter};
use crate::base::error::Result;

/// What a walk of the hash chain found.
pub use crate::audit::chain::Report;

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

impl ExportArgs {
    /// `since` and `until` read as times (a malformed one is `audit.invalid_since`).
    pub fn check(&self) -> Result<()> {
        for s in self.since.iter().chain(self.until.iter()) {
            audit::parse_since(s)?;
        }
        Ok(())
    }
}

#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct ListArgs {
    #[serde(flatten)]
    pub filter: ExportArgs,
    /// At most this many (default 100, at most 10000).
    #[serde(default, deserialize_with = "super::de::opt_int")]
    pub limit: Option<i64>,
}

/// Rows `activity_list` shows by default, and at most.
pub const LIST_DEFAULT: i64 = 100;
pub const LIST_MAX: i64 = 10_000;

/// `activity_list`: newest first, at most [`LIST_MAX`] (`activity_export` has them all).
pub async fn list(ctx: &Ctx, a: ListArgs) -> Result<Vec<audit::Row>> {
    a.filter.check()?;
    let ExportArgs { since, until, client, tool } = a.filter;
    let limit = a.limit.unwrap_or(LIST_DEFAULT);
    if !(1..=LIST_MAX).contains(&limit) {
        return Err(crate::base::error::Error::invalid(
            "activity.invalid_filter",
            format!("limit {limit} must be from 1 to {LIST_MAX}; every row is activity_export's"),
        ));
    }
    let f = Filter { since, until, client, tool, limit };
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

/// `hal0 activity export`: every matching entry, oldest first, written to `out` as JSON
/// lines while it is read (the API's [`export`] answers them whole). A malformed `since` or
/// `until` is refused before the store is read.
pub fn export_to(ctx: &Ctx, a: ExportArgs, out: &mut impl std::io::Write) -> Result<u64> {
    a.check()?;
    let f = Filter { since: a.since, until: a.until, client: a.client, tool: a.tool, limit: 0 };
    audit::export(&ctx.store, &f, out)
}

/// A copy written by `hal0 activity export`, checked against its own hash chain
/// (`complete`: an export without a filter, so a missing link is a removed row).
pub fn verify_copy(copy: impl std::io::BufRead, complete: bool) -> Result<Report> {
    audit::chain::verify_lines(copy, complete)
}

/// `activity_verify`: walk the audit log's hash chain and name the first row that does
/// not match (`crate::audit::chain`). A broken chain is a finding, not an error of the call.
pub async fn verify(ctx: &Ctx, _: super::NoArgs) -> Result<audit::chain::Report> {
    audit::flush(&ctx.store).await;
    ctx.store.call(|s| s.with(audit::chain::verify)).await
}
