//! The one place a call from any front gets its audit entry ([`Recorded`]): a change (a call
//! that may change state) has its entry stored `started` before it runs — and is refused,
//! changing nothing, when the entry cannot be stored — and its outcome written after; a
//! call dropped midway is recorded `rpc.cancelled`; a read's entry gathers with others after
//! it answered. The fronts use it through [`run`] (the route table's ops from REST and the
//! shell: a change completes in a task of its own even when the caller goes away; reads
//! are not audited there), [`super::audited`] (ops outside the route table), and directly
//! (MCP tools, A2A methods), each saying only what its call came to ([`Came`]).

use super::{Ctx, OpDef};
use crate::audit::{self, Entry, Outcome};
use crate::base::error::{Error, Result};
use serde_json::{Map, Value};

pub use crate::audit::Verdict;

/// What a call came to, as its audit entry records it.
#[derive(Debug, Clone, PartialEq)]
pub struct Came {
    pub verdict: Verdict,
    pub code: Option<String>,
    pub approval_id: Option<String>,
}

impl Came {
    pub fn ok() -> Came {
        Came { verdict: Verdict::Ok, code: None, approval_id: None }
    }
    pub fn error(code: impl Into<String>) -> Came {
        Came { verdict: Verdict::Error, code: Some(code.into()), approval_id: None }
    }
    /// Queued in the approvals inbox as `approval_id`.
    pub fn gated(approval_id: Option<String>) -> Came {
        Came { verdict: Verdict::Gated, code: None, approval_id }
    }
    /// `ok`, or `error` with the error's code.
    pub fn of<T>(out: &Result<T>) -> Came {
        match out {
            Ok(_) => Came::ok(),
            Err(e) => Came::error(e.code),
        }
    }
}

/// One call from a front and its audit entry.
pub struct Recorded<'a> {
    pub store: &'a crate::store::Store,
    /// `api`, `cli`, `ui`, `mcp:<server>`, `a2a`, …
    pub surface: &'a str,
    pub tool: &'a str,
    pub identity: &'a str,
    pub arguments: &'a Value,
    /// A read: it runs at once and its entry gathers with others (a failure to record it is
    /// logged, never turned into a failed call; a gated one is stored before it answers).
    pub read_only: bool,
}

impl Recorded<'_> {
    /// Run `call`, recorded; `came` reads what it came to off its result. `Err` only when
    /// a change's entry cannot be stored: then `call` did not run.
    pub async fn run<T>(&self, call: impl Future<Output = T>, came: impl FnOnce(&T) -> Came) -> Result<T> {
        let entry = Entry {
            surface: self.surface,
            tool: self.tool,
            identity: self.identity,
            arguments: self.arguments,
            verdict: Verdict::Ok,
            result_code: None,
            approval_id: None,
            detail: None,
        };
        if self.read_only {
            let out = call.await;
            let c = came(&out);
            let e = Entry {
                verdict: c.verdict,
                result_code: c.code.as_deref(),
                approval_id: c.approval_id.as_deref(),
                ..entry
            };
            let stored = if c.verdict == Verdict::Gated {
                audit::record_async(self.store, &e).await.map(drop)
            } else {
                audit::record_soon(self.store, &e)
            };
            if let Err(e) = stored {
                tracing::warn!("cannot record the audit entry: {}", e.message);
            }
            return Ok(out);
        }
        let id = audit::begin(self.store, &entry).await.inspect_err(|e| {
            tracing::error!(code = e.code, tool = self.tool, "refused a call: {}", e.message);
        })?;
        // A call dropped before it answers (its client cancelled it or went away) still
        // gets an outcome on its `started` row.
        let unanswered = audit::Unanswered::new(self.store, id);
        let out = call.await;
        let id = unanswered.answered();
        let c = came(&out);
        audit::finish(self.store, Outcome { id, verdict: c.verdict, result_code: c.code, approval_id: c.approval_id });
        Ok(out)
    }
}

/// Run `def` with `args` for `ctx`'s caller on `surface` (`api`, `cli`).
pub async fn run(def: &'static OpDef, surface: &'static str, ctx: Ctx, args: Map<String, Value>) -> Result<Value> {
    let run = def.run.ok_or_else(|| Error::internal(format!("{} has no operation", def.name())))?;
    if def.method == "GET" {
        return run(ctx, args).await;
    }
    let change = tokio::spawn(async move {
        let (store, name, identity) = (ctx.store.clone(), def.name(), ctx.identity.clone());
        let arguments = Value::Object(args.clone());
        let call = Recorded {
            store: &store,
            surface,
            tool: &name,
            identity: &identity,
            arguments: &arguments,
            read_only: false,
        };
        call.run(run(ctx, args), Came::of).await?
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

/// Record `tool`'s call from the box's shell as `identity` after it ran (its outcome `out`),
/// in the box's store when there is one at this hal0's schema; best effort, a failure is a
/// warning. For the shell's changes that must not depend on the store: repairing hal0.toml
/// (`config set|unset`), rotating a box key, a backup (whose archive cannot hold its own
/// entry) and a restore (which replaces the store an earlier entry would have gone into).
/// A box without a store does not get one to hold the entry, and an older store is not
/// migrated for it.
pub fn record_after<T>(paths: &crate::base::paths::Paths, tool: &str, identity: &str, args: &Value, out: &Result<T>) {
    let db = paths.db();
    if !crate::store::migrations::is_current(&db) {
        return;
    }
    let store = match crate::store::Store::open(&db) {
        Ok(s) => s,
        Err(e) => return tracing::warn!("cannot record {tool}: {}", e.message),
    };
    let c = Came::of(out);
    let entry = Entry {
        surface: "cli",
        tool,
        identity,
        arguments: args,
        verdict: c.verdict,
        result_code: c.code.as_deref(),
        approval_id: None,
        detail: None,
    };
    if let Err(e) = audit::record(&store, &entry) {
        tracing::warn!("cannot record {tool}: {}", e.message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_change_dropped_midway_is_recorded_as_cancelled() {
        let (_dir, store) = crate::store::scratch();
        let args = serde_json::json!({});
        let call = Recorded {
            store: &store,
            surface: "mcp:admin",
            tool: "config_write",
            identity: "bridge:ops",
            arguments: &args,
            read_only: false,
        };
        let never = std::future::pending::<()>();
        let cut = tokio::time::timeout(std::time::Duration::from_millis(200), call.run(never, |_| Came::ok())).await;
        assert!(cut.is_err(), "the call was still running when it was dropped");
        audit::flush(&store).await;
        let f = audit::Filter { limit: 10, ..Default::default() };
        let rows = audit::list(&store, &f).unwrap();
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert_eq!((rows[0].verdict, rows[0].result_code.as_deref()), (Verdict::Error, Some("rpc.cancelled")));
    }

    #[tokio::test]
    async fn a_change_whose_entry_cannot_be_stored_does_not_run() {
        let (dir, store) = crate::store::scratch();
        // A store without its log: the entry cannot be stored.
        store.with(|c| c.execute_batch("DROP TABLE audit_log").map_err(|e| Error::internal(e.to_string()))).unwrap();
        let args = serde_json::json!({});
        let call = Recorded {
            store: &store,
            surface: "api",
            tool: "config_write",
            identity: "admin",
            arguments: &args,
            read_only: false,
        };
        let ran = std::sync::atomic::AtomicBool::new(false);
        let out = call.run(async { ran.store(true, std::sync::atomic::Ordering::SeqCst) }, |_| Came::ok()).await;
        drop(dir);
        match out {
            Err(e) => assert_eq!(e.code, "audit.unavailable", "{e:?}"),
            Ok(()) => panic!("the call ran without its entry"),
        }
        assert!(!ran.load(std::sync::atomic::Ordering::SeqCst));
    }
}
