//! The box's own keys (the admin and client tiers in `api.env`) as operations: their types
//! and state (re-exported for the fronts), and rotating one (recorded as `auth_rotate`; the
//! new key is answered once and kept only in `api.env`, 0600). The rules live in
//! [`crate::auth::boxkeys`].

use crate::base::error::Result;
use serde_json::json;

pub use crate::auth::boxkeys::{BoxKey, BoxKeys, status_json};

/// What [`rotate`] answers: the new key (shown once), its fingerprint, and whether the
/// tier had a key before (else auth was just armed).
#[derive(Debug, serde::Serialize)]
pub struct Rotated {
    pub tier: BoxKey,
    pub key: String,
    pub fingerprint: String,
    pub rotated_at: String,
    #[serde(skip)]
    pub had: bool,
}

/// `auth_rotate` at the box's shell, as `identity`: mint a new key for `tier`; the old one
/// stops working at once. Rotating a leaked key must not wait on the store, so it is
/// recorded after it ran, when the box has a store ([`super::call::record_after`]).
pub fn rotate(paths: &crate::base::paths::Paths, tier: BoxKey, identity: &str) -> Result<Rotated> {
    let path = paths.api_env();
    let out = (|| {
        let had = BoxKeys::load(&path)?.get(tier).is_some();
        let key = crate::auth::boxkeys::rotate(&path, tier)?;
        let fingerprint = crate::base::token::fingerprint(&key);
        Ok(Rotated { tier, key, fingerprint, rotated_at: crate::store::now(), had })
    })();
    super::call::record_after(paths, "auth_rotate", identity, &json!({"tier": tier}), &out);
    out
}
