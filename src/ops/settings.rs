//! hal0.toml through the API: the effective settings (redacted), their schema, and a
//! one-key write that keeps comments and takes effect at the next start.

use super::{Ctx, NoArgs};
use crate::error::Result;
use serde_json::{Value, json};

/// `settings_get`: the file as it is on disk now, and what this process runs with (both
/// redacted; the answer is built again only when the file changed).
pub async fn get(ctx: &Ctx, _: NoArgs) -> Result<Value> {
    ctx.settings.get(|| {
        let mut settings = json!(crate::config::Config::load(&ctx.paths)?);
        crate::redact::redact_json(&mut settings);
        let mut running = json!(ctx.config);
        crate::redact::redact_json(&mut running);
        Ok(json!({"path": ctx.paths.hal0_toml(), "settings": settings, "running": running}))
    })
}

/// `settings_schema`: every key with its type and default.
pub async fn schema(_: &Ctx, _: NoArgs) -> Result<Value> {
    Ok(crate::config::schema())
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct PutArgs {
    /// SECTION.KEY, e.g. network.public_url.
    pub key: String,
    /// The new value (a TOML literal or a bare string); null removes the key.
    #[serde(default)]
    pub value: Option<Value>,
}

/// `config_write`: set or remove one key.
pub async fn put(ctx: &Ctx, a: PutArgs) -> Result<Value> {
    let paths = ctx.paths.clone();
    super::blocking(move || {
        let cfg = match a.value {
            None | Some(Value::Null) => crate::config::unset_value(&paths, &a.key)?,
            Some(Value::String(s)) => crate::config::set_value(&paths, &a.key, &s)?,
            Some(other) => crate::config::set_value(&paths, &a.key, &other.to_string())?,
        };
        let mut settings = json!(cfg);
        crate::redact::redact_json(&mut settings);
        Ok(json!({"key": a.key, "settings": settings, "note": "takes effect when hal0 serve restarts"}))
    })
    .await
}
