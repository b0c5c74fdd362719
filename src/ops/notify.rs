//! Approval notification targets: add (a webhook without a named secret gets a new one in
//! api.env, shown once), list, remove, and test (one delivery to each, no retries, each
//! outcome reported). Each change is audited. The rules of a target live in
//! [`crate::notify::targets`].

use super::{Ctx, audited};
use crate::base::error::Result;
use crate::notify::{Event, send, targets};

/// A notification target, as these operations take and answer it.
pub use crate::notify::targets::Target;
use serde_json::{Value, json};

/// Add `t`. A webhook with no `secret_key` gets `NOTIFY_<ID>_SECRET` made in api.env;
/// the answer carries that secret once (`secret`), for the receiver.
pub async fn add(ctx: &Ctx, mut t: Target) -> Result<Value> {
    let args = json!(t);
    audited(ctx, "notify_add", args, async {
        t.validate()?;
        let mut made = None;
        if t.kind == "webhook" && t.secret_key.is_none() {
            let key = format!("NOTIFY_{}_SECRET", t.id.to_ascii_uppercase().replace('-', "_"));
            let value = crate::base::token::random_base62(43)?;
            if crate::base::envfile::get_var(&ctx.paths.api_env(), &key)?.is_some() {
                return Err(crate::base::error::Error::conflict(
                    "notify.exists",
                    format!("api.env already holds `{key}`: name it with --secret-key {key}, or remove it first"),
                ));
            }
            t.secret_key = Some(key.clone());
            made = Some((key, value));
        }
        // The target is checked (a duplicate id) before the secret is written.
        if targets::load(&ctx.paths)?.iter().any(|o| o.id == t.id) {
            return Err(crate::base::error::Error::conflict(
                "notify.exists",
                format!(
                    "a target `{}` exists: remove it first (hal0 notify remove {}), or pick another --id",
                    t.id, t.id
                ),
            ));
        }
        if let Some((k, v)) = &made {
            crate::base::envfile::set_vars(&ctx.paths.api_env(), &[(k.as_str(), v.as_str())])?;
        }
        let t = targets::add(&ctx.paths, t)?;
        let mut out = json!({"target": t});
        if let Some((k, v)) = made {
            out["secret_key"] = json!(k);
            out["secret"] = json!(v);
        }
        Ok(out)
    })
    .await
}

/// Every target.
pub fn list(ctx: &Ctx) -> Result<Vec<Target>> {
    targets::load(&ctx.paths)
}

/// Remove target `id` (a secret it named stays in api.env).
pub async fn remove(ctx: &Ctx, id: &str) -> Result<Value> {
    audited(ctx, "notify_remove", json!({"id": id}), async {
        let t = targets::remove(&ctx.paths, id)?;
        Ok(json!({"removed": t}))
    })
    .await
}

/// Send a test event to target `id`, or to every target: one attempt each.
pub async fn test(ctx: &Ctx, id: Option<&str>) -> Result<Value> {
    audited(ctx, "notify_test", json!({"id": id}), async {
        let all = targets::load(&ctx.paths)?;
        let chosen: Vec<Target> = all.into_iter().filter(|t| id.is_none_or(|i| t.id == i)).collect();
        if chosen.is_empty() {
            return Err(match id {
                Some(i) => crate::base::error::Error::not_found(
                    "notify.not_found",
                    format!("no notification target `{i}` (hal0 notify list)"),
                ),
                None => crate::base::error::Error::not_found(
                    "notify.not_found",
                    "no notification target yet: add one (hal0 notify add webhook|ntfy|email …)",
                ),
            });
        }
        let event = Event::test(&ctx.config());
        let mut results = Vec::new();
        for t in &chosen {
            let r = send::deliver(&ctx.paths, t, &event, false).await;
            results.push(match r {
                Ok(how) => json!({"id": t.id, "kind": t.kind, "ok": true, "detail": how}),
                Err(e) => json!({"id": t.id, "kind": t.kind, "ok": false, "code": e.code, "detail": e.message}),
            });
        }
        Ok(json!({"results": results}))
    })
    .await
}
