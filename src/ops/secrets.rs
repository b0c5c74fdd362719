//! The secrets store through the API: `PUT /api/secrets/{name}` (`secret_write`, gated),
//! which stores a value an installed server's `[secrets]` refers to. The rules live in
//! `crate::auth::secrets`; the answer names the secret, never its value.

use super::Ctx;
/// The longest secret value, in bytes (a front reading one stops just past it).
pub use crate::auth::secrets::MAX_VALUE;
use crate::base::error::Result;
use serde_json::{Value, json};

/// Both are checked when the call is parsed, so a gated call with a bad name or value is
/// refused before it is queued.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PutArgs {
    /// The secret's name as api.env holds it (upper case, e.g. GITHUB_MCP_TOKEN).
    #[serde(deserialize_with = "checked_name")]
    pub name: String,
    /// The value. Stored in api.env (0600); no answer, log or inbox card shows it.
    #[serde(deserialize_with = "checked_value")]
    pub secret: String,
}

fn checked_name<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<String, D::Error> {
    let s = <String as serde::Deserialize>::deserialize(d)?;
    crate::auth::secrets::validate_name(&s)
        .map_err(|e| serde::de::Error::custom(format!("{} [{}]", e.message, e.code)))?;
    Ok(s)
}

fn checked_value<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<String, D::Error> {
    let s = <String as serde::Deserialize>::deserialize(d)?;
    crate::auth::secrets::validate_value(&s)
        .map_err(|e| serde::de::Error::custom(format!("{} [{}]", e.message, e.code)))?;
    Ok(s)
}

/// `secret_write`: store one secret (a new name or a new value for an old one).
pub async fn put(ctx: &Ctx, a: PutArgs) -> Result<Value> {
    let paths = ctx.paths.clone();
    super::blocking(move || {
        let created = crate::auth::secrets::put(&paths, &a.name, &a.secret)?;
        Ok(json!({"name": a.name, "created": created,
                  "note": "servers whose [secrets] name it send it from their next connection"}))
    })
    .await
}
