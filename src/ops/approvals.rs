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

/// `approval_get`: one row, the whole card, redacted.
pub async fn get(ctx: &Ctx, a: IdArgs) -> Result<Approval> {
    Ok(ctx.store.call(move |s| approvals::get(s, &a.id)).await?.redacted())
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
