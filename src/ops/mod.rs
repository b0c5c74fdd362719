//! The operations layer: every operation hal0 offers (settings, bridge clients, MCP
//! servers, approvals, activity, doctor, runs) as one typed async function
//! `op(&Ctx, Args) -> Result<Out>` with `Args: Deserialize + JsonSchema` and
//! `Out: Serialize`. The fronts are adapters over [`routes::ROUTES`]: the REST handler
//! (`server::rest`), the `hal0-admin` tools (`mcp::admin`, through [`gate`]), the approvals
//! inbox executing an approved call, and the CLI. No rule lives in a front; a rule lives
//! here or in the domain module an op calls.

pub mod accounts;
pub mod activity;
pub mod agents;
pub mod approvals;
pub mod args;
pub mod boxkeys;
pub mod bridge;
pub mod call;
pub mod complete;
pub mod ctx;
pub mod daemon;
pub mod de;
pub mod decide;
pub mod doctor;
pub mod gate;
pub mod hermes;
pub mod inbox_watch;
pub mod keys;
pub mod mcp;
pub mod mcp_edit;
pub mod mcp_status;
pub mod notify;
pub mod oauth;
pub mod people;
pub mod relay;
pub mod retention;
pub mod routes;
pub mod runs;
pub mod secrets;
pub mod service;
pub mod settings;
pub mod status;
pub mod store;

pub use crate::config::Config;
pub use ctx::{Ctx, Services};
pub use routes::{Access, OpDef, ROUTES, op_named};

use crate::base::error::{Error, Result};
use serde_json::{Map, Value};

/// Deserialize an op's arguments from a JSON object; a malformed argument is `code`
/// (each op's own `…invalid…` code) with serde's description of what is wrong.
pub fn parse_args<A: serde::de::DeserializeOwned>(args: Map<String, Value>, code: &'static str) -> Result<A> {
    serde_json::from_value(Value::Object(args)).map_err(|e| Error::invalid(code, format!("{e}")))
}

/// Serialize an op's answer (an answer that is a `Value` already is moved, not copied
/// through the serializer).
pub fn to_value<O: serde::Serialize + 'static>(out: O) -> Result<Value> {
    let out: Box<dyn std::any::Any> = Box::new(out);
    match out.downcast::<Value>() {
        Ok(v) => Ok(*v),
        Err(other) => {
            let out = other.downcast::<O>().map_err(|_| Error::internal("the answer changed type"))?;
            serde_json::to_value(*out).map_err(|e| Error::internal(format!("cannot encode the answer: {e}")))
        }
    }
}

/// Wire op `$f` (an `async fn(&Ctx, Args) -> Result<Out>`) into an [`OpDef`]'s erased
/// runner: arguments parsed with `$code` as the malformed-argument code.
#[macro_export]
macro_rules! op_runner {
    ($f:path, $args:ty, $code:expr) => {
        |ctx: $crate::ops::Ctx, args: serde_json::Map<String, serde_json::Value>| -> $crate::ops::routes::OpFuture {
            Box::pin(async move {
                let a: $args = $crate::ops::parse_args(args, $code)?;
                $crate::ops::to_value($f(&ctx, a).await?)
            })
        }
    };
}

/// Run `op` with `args` whose path arguments were checked: the op's answer, lists wrapped
/// (`{"<wrap>": [...], "count": n}`), as hal0-admin and an approved admin call answer.
pub async fn run_wrapped(op: &OpDef, ctx: Ctx, args: Map<String, Value>) -> Result<Value> {
    let run = op.run.ok_or_else(|| Error::internal(format!("`{:?}` has no operation", op)))?;
    Ok(match (op.wrap, run(ctx, args).await?) {
        (Some(key), Value::Array(items)) => serde_json::json!({key: items, "count": items.len()}),
        (_, v) => v,
    })
}

/// Carry out an approved `admin_call` row as the client that queued it: the same checks
/// again, then exactly the stored arguments.
pub async fn admin_call_approved(svc: &std::sync::Arc<Services>, row: &crate::approvals::Approval) -> Result<Value> {
    let name = row.arguments["tool"].as_str().unwrap_or("");
    let op = op_named(name)
        .filter(|r| r.access == Access::Gated)
        .ok_or_else(|| Error::invalid("mcp.unknown_tool", format!("`{name}` is not a gated admin tool")))?;
    let args = row.arguments["args"].as_object().cloned().unwrap_or_default();
    let checked = args::check_path_args(op.path, args)?;
    run_wrapped(op, Ctx::remote(svc.clone(), row.client.as_str()), checked).await
}

/// An op that takes no arguments (any given are ignored, as a REST GET ignores a query).
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct NoArgs {}

/// Run `f`, audited as `tool` with `args` before it runs and its outcome after (surface
/// `cli` at the shell, `ui` for a dashboard session's person, `oauth` otherwise: the
/// callback, a start link, the daemon), for ops outside the route table (whose calls
/// `call::run` audits); see [`call::Recorded`].
pub(crate) async fn audited<T>(
    ctx: &Ctx,
    tool: &'static str,
    args: Value,
    f: impl Future<Output = Result<T>>,
) -> Result<T> {
    let store = ctx.svc.store.clone();
    let surface = if ctx.from_shell {
        "cli"
    } else if ctx.actor().at_dashboard() {
        "ui"
    } else {
        "oauth"
    };
    let call =
        call::Recorded { store: &store, surface, tool, identity: &ctx.identity, arguments: &args, read_only: false };
    let out = call.run(f, call::Came::of).await?;
    if ctx.from_shell {
        crate::audit::flush(&store).await;
    }
    out
}

/// Run blocking domain code (files, the store) off the async runtime.
pub async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| Err(Error::internal(e.to_string())))
}
