//! The approvals inbox: list and read rows (redacted), and a person's decision, which
//! carries out exactly the stored call (see [`crate::approvals::Decider`]).

use super::Ctx;
use crate::approvals::{self, Approval, Decider};
use crate::error::Result;
use serde::Serialize;
use serde_json::{Value, json};

#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct ListArgs {
    /// Only rows in this status: pending, approved, denied, withdrawn, executed or failed.
    #[serde(default)]
    pub status: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Rows {
    pub count: usize,
    pub approvals: Vec<Approval>,
}

/// `approval_list`: the inbox, every card redacted.
pub async fn list(ctx: &Ctx, a: ListArgs) -> Result<Rows> {
    let rows = ctx.store.call(move |s| approvals::list(s, a.status.as_deref())).await?;
    let rows: Vec<Approval> = rows.into_iter().map(Approval::redacted).collect();
    Ok(Rows { count: rows.len(), approvals: rows })
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct IdArgs {
    /// The row's id (`ap_…`).
    pub id: String,
}

/// The longest `approval_get` wait: common MCP clients end a request that sends nothing
/// for 60 s, so a waiting caller gets its answer (still pending, at worst) before that.
pub const WAIT_MAX_S: u64 = 50;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct GetArgs {
    /// The row's id (`ap_…`).
    pub id: String,
    /// Wait up to this many seconds (at most 50; default 0) while the row is pending or its
    /// approved call is running: the answer is the outcome once there is one.
    #[serde(default, deserialize_with = "super::de::opt_int")]
    pub wait_s: Option<i64>,
}

/// `approval_get`: one row, the whole card, redacted; with `wait_s`, once it is decided and
/// its call has run (or when the wait ends).
pub async fn get(ctx: &Ctx, a: GetArgs) -> Result<Approval> {
    let wait = a.wait_s.unwrap_or(0);
    if !(0..=WAIT_MAX_S as i64).contains(&wait) {
        return Err(crate::error::Error::invalid(
            "approvals.invalid_request",
            format!("wait_s must be 0 to {WAIT_MAX_S} seconds (got {wait}); call again to wait longer"),
        ));
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(wait as u64);
    loop {
        let id = a.id.clone();
        let row = ctx.store.call(move |s| approvals::get(s, &id)).await?;
        let open = matches!(row.status, approvals::Status::Pending | approvals::Status::Approved);
        if !open || std::time::Instant::now() >= deadline {
            return Ok(row.redacted());
        }
        // A decision may come from another process (the shell): read the row again.
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
}

#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct DenyArgs {
    /// The row's id (`ap_…`).
    pub id: String,
    /// Why, for the record and the caller waiting on it.
    #[serde(default)]
    pub reason: Option<String>,
}

/// The decided row (redacted) with, for an admin call, its live answer shown once.
async fn decide(ctx: &Ctx, id: &str, approve: bool, reason: Option<&str>) -> Result<Value> {
    let d = Decider { svc: &ctx.svc }.decide(id, approve, &ctx.identity, reason).await?;
    let mut v = json!(d.row.redacted());
    if let Some(mut out) = d.output {
        crate::redact::redact_json(&mut out);
        v["output"] = out;
    }
    Ok(v)
}

/// Approve row `id` as the caller: the stored call runs once.
pub async fn approve(ctx: &Ctx, a: IdArgs) -> Result<Value> {
    decide(ctx, &a.id, true, None).await
}

/// Deny row `id` as the caller, with an optional reason.
pub async fn deny(ctx: &Ctx, a: DenyArgs) -> Result<Value> {
    decide(ctx, &a.id, false, a.reason.as_deref()).await
}
