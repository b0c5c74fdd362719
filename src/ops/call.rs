//! Running an op for a front, the same way from each: a change (any op that is not a GET)
//! is audited before it runs — and refused, changing nothing, when its entry cannot be
//! stored — and its outcome after. The change and its outcome complete together in a task
//! of their own, even when the caller goes away mid-call. Reads are not audited here (the
//! MCP tools audit their own calls, reads included).

use super::{Ctx, OpDef};
use crate::audit::{self, Entry, Outcome, Verdict};
use crate::base::error::{Error, Result};
use serde_json::{Map, Value};

/// Run `def` with `args` for `ctx`'s caller on `surface` (`api`, `cli`).
pub async fn run(def: &'static OpDef, surface: &'static str, ctx: Ctx, args: Map<String, Value>) -> Result<Value> {
    let run = def.run.ok_or_else(|| Error::internal(format!("{} has no operation", def.name())))?;
    if def.method == "GET" {
        return run(ctx, args).await;
    }
    let store = ctx.store.clone();
    let (name, identity) = (def.name(), ctx.identity.clone());
    let entry = Entry {
        surface,
        tool: &name,
        identity: &identity,
        arguments: &Value::Object(args.clone()),
        verdict: Verdict::Ok,
        result_code: None,
        approval_id: None,
        detail: None,
    };
    let id = audit::begin(&store, &entry).await?;
    let change = tokio::spawn(async move {
        let out = run(ctx, args).await;
        let (verdict, result_code) = match &out {
            Ok(_) => (Verdict::Ok, None),
            Err(e) => (Verdict::Error, Some(e.code.to_string())),
        };
        audit::finish(&store, Outcome { id, verdict, result_code, approval_id: None });
        out
    });
    change.await.unwrap_or_else(|e| Err(Error::internal(format!("the operation's task failed: {e}"))))
}

/// [`run`] the op named `tool` at the box's shell (surface `cli`), its arguments from
/// `args`' JSON, and wait until its audit entry is stored (the process may exit next).
pub async fn at_shell(ctx: Ctx, tool: &str, args: impl serde::Serialize) -> Result<Value> {
    let def = super::op_named(tool).ok_or_else(|| Error::internal(format!("no op named {tool}")))?;
    let args = match serde_json::to_value(args) {
        Ok(Value::Object(m)) => m,
        _ => return Err(Error::internal(format!("the arguments of {tool} are no object"))),
    };
    let store = ctx.store.clone();
    let out = run(def, "cli", ctx, args).await;
    audit::flush(&store).await;
    out
}
