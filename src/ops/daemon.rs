//! Asking the running daemon from the box's shell: what only `hal0 serve` holds (a stdio
//! server's child) is reached through its own API on loopback (`POST /api/mcp/<id>/<action>`,
//! with the admin key from api.env when auth is armed, so the daemon audits the call). When
//! no daemon answers, the error says so and what to do.

use super::Ctx;
use crate::base::error::{Error, Kind, Result};
use serde_json::Value;

/// Ask the daemon to `action` (`start`, `stop`, `restart`) installed server `id`'s child;
/// its answer (`state`, `pid`).
pub async fn mcp_action(ctx: &Ctx, id: &str, action: &str) -> Result<Value> {
    crate::registry::Registry::new(&ctx.paths).get(id)?;
    let base = crate::connect::local_base(&ctx.config());
    let url = format!("{base}/api/mcp/{id}/{action}");
    let keys = crate::auth::boxkeys::BoxKeys::load(&ctx.paths.api_env())?;
    let key = keys.get(crate::auth::boxkeys::BoxKey::Admin);
    let http = crate::base::outbound::build(crate::base::outbound::builder(None)?)?;
    let mut req = http.post(&url).timeout(std::time::Duration::from_secs(60));
    if let Some(k) = &key {
        req = req.bearer_auth(k);
    }
    let resp = req.send().await.map_err(|e| {
        let why = if e.is_connect() { "nothing listens there" } else { "it did not answer" };
        Error::unavailable(
            "mcp.daemon_unreachable",
            format!(
                "no hal0 daemon answered on {base} ({why}): a stdio server's child runs only inside \
                 `hal0 serve`; start it (systemctl start hal0, or hal0 serve) and run this again"
            ),
        )
    })?;
    let status = resp.status().as_u16();
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    if !(200..300).contains(&status) {
        let code = body["error"]["code"].as_str().and_then(crate::base::codes::listed).unwrap_or("mcp.daemon_refused");
        let msg = body["error"]["message"].as_str().unwrap_or("the daemon refused the request").to_string();
        let kind = match status {
            401 | 403 => Kind::Forbidden,
            404 => Kind::NotFound,
            409 => Kind::Conflict,
            501 => Kind::Unsupported,
            _ => Kind::Unavailable,
        };
        return Err(Error::new(code, kind, format!("{msg} (hal0 serve answered {status})")));
    }
    Ok(body)
}
