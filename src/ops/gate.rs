//! A `hal0-admin` tool call from a remote caller, as an operation: the arguments checked,
//! then the operation run at once (autonomous access) or queued as an approvals card bound
//! to this very call (gated; an approved card runs the same operation with exactly the
//! stored arguments); on protocol 2026-07-28, a later round of the same call told what
//! became of its card. The tools' descriptions are the MCP front's (`mcp::admin`).

use super::{Access, Ctx, args, op_named};
use crate::base::error::{Error, Result};
use serde_json::{Map, Value, json};

/// The outcome of an admin tool call, before rendering.
pub enum Outcome {
    Done(Value),
    Pending { approval_id: String, detail: String },
}

use super::run_wrapped as run;

/// A later round of a gated call on protocol 2026-07-28: the card its `requestState`
/// named, and whether the caller's person declined to wait for a decision.
pub struct Retry<'a> {
    pub card: &'a str,
    pub declined: bool,
}

/// Run admin tool `name` as `ctx`'s caller: check the arguments, then run or queue it; or,
/// for a `retry`, what became of the card queued for the same call.
pub async fn call(
    ctx: Ctx,
    name: &str,
    arguments: Option<&Map<String, Value>>,
    retry: Option<Retry<'_>>,
) -> Result<Outcome> {
    let op = op_named(name).ok_or_else(|| Error::not_found("mcp.unknown_tool", format!("no admin tool `{name}`")))?;
    let args = match arguments.and_then(|a| a.get("args")) {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err(Error::invalid("mcp.invalid_arg", "`args` must be an object")),
    };
    if let Some(r) = retry {
        return resumed(&ctx, name, &args, r).await;
    }
    // Path arguments are checked before anything is queued or run.
    if op.access != Access::Gated {
        // Running the op parses its arguments; a refusal is the same as `check`'s.
        return run(op, ctx, args::check_path_args(op.path, args)?).await.map(Outcome::Done);
    }
    // A gated call is parsed in full before it is queued.
    (op.check)(&args::check_path_args(op.path, args.clone())?)?;
    let mut shown = Value::Object(args.clone());
    crate::base::redact::redact_json(&mut shown);
    let preview = format!("{name}: {} {} {}", op.method, op.path, shown);
    let (tool, client) = (name.to_string(), ctx.identity.to_string());
    let stored = json!({"tool": name, "args": args});
    let expire = i64::from(ctx.config().approvals.expire_hours) * 3600;
    let row = ctx
        .store
        .call(move |s| {
            crate::approvals::create_bound(
                s,
                crate::approvals::NewApproval {
                    kind: crate::approvals::ApprovalKind::AdminCall,
                    client: &client,
                    tool: &tool,
                    arguments: stored,
                    preview,
                    run_id: None,
                },
                None,
                Some(expire),
            )
        })
        .await?;
    Ok(Outcome::Pending {
        approval_id: row.id,
        detail: format!("{name} waits for a person: hal0 agent approvals approve ID"),
    })
}

/// What became of the card `r` names, queued for this very call (same caller, tool and
/// arguments; `mcp.request_state_invalid` otherwise): still pending (withdrawn first when
/// the caller's person declined), or the decided card (redacted), as `approval_get` shows it.
async fn resumed(ctx: &Ctx, name: &str, args: &Map<String, Value>, r: Retry<'_>) -> Result<Outcome> {
    let id = r.card.to_string();
    let card = {
        let id = id.clone();
        ctx.store.call(move |s| crate::approvals::get(s, &id)).await
    };
    let invalid = || {
        Error::invalid(
            "mcp.request_state_invalid",
            "this retry's requestState names an approval of another call; call the tool again without it",
        )
    };
    let card = card.map_err(|_| invalid())?;
    let digest = |v: &Value| crate::approvals::digest(v);
    let bound = card.kind == crate::approvals::ApprovalKind::AdminCall
        && card.client == *ctx.identity
        && card.arguments["tool"] == json!(name)
        && digest(&card.arguments["args"]) == digest(&Value::Object(args.clone()));
    if !bound {
        return Err(invalid());
    }
    if card.status != crate::approvals::Status::Pending {
        return Ok(Outcome::Done(json!(card.redacted())));
    }
    if !r.declined {
        return Ok(Outcome::Pending { approval_id: id, detail: format!("{name} waits for a person") });
    }
    // Withdrawn (or decided at that moment): the card as it is now.
    let row = ctx
        .store
        .call(move |s| {
            crate::approvals::withdraw(s, &id, "the caller declined to wait")?;
            crate::approvals::get(s, &id)
        })
        .await?;
    Ok(Outcome::Done(json!(row.redacted())))
}
