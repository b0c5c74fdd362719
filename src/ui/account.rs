//! The signed-in person's own routes behind `/ui/account`: their passkeys (list, register
//! one with this browser's authenticator, remove one). Only the person of the session
//! reaches their own; each change goes through `ops::people` (audited as `person:NAME`).

use super::pages::host;
use crate::auth::passkey::{Attestation, Relying};
use crate::auth::session::Session;
use crate::base::error::{Error, Result};
use crate::server::AppState;
use crate::server::guard::Caller;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// The session's person and an ops context acting as them; refused for anyone else.
fn me(state: &AppState, caller: &Who) -> Result<(Session, String, crate::ops::Ctx)> {
    let session = match caller.as_ref().map(|c| &c.0.cred) {
        Some(crate::auth::Credential::Person(p)) => p.clone(),
        _ => return Err(Error::unauthorized("ui.session_required", "sign in to the dashboard first (hal0 ui login)")),
    };
    let Some(person) = session.person.clone() else {
        return Err(Error::forbidden_code(
            "ui.no_person",
            "this session belongs to no named person: sign in again with a link from `hal0 ui login`",
        ));
    };
    let ctx = crate::ops::Ctx::remote(state.ops.clone(), session.identity());
    Ok((session, person, ctx))
}

fn relying(state: &AppState, headers: &HeaderMap) -> Result<Relying> {
    Relying::of(&state.config(), host(headers))
}

/// The caller the guard resolved, if any.
type Who = Option<axum::Extension<Caller>>;

fn answer<T: serde::Serialize>(out: Result<T>) -> Response {
    match out {
        Ok(v) => axum::Json(v).into_response(),
        Err(e) => e.into_response(),
    }
}

/// `GET /ui/account/passkeys`: the person's passkeys, and who they are.
pub async fn list(State(state): State<Arc<AppState>>, caller: Who) -> Response {
    answer(
        async {
            let (session, person, ctx) = me(&state, &caller)?;
            let keys = crate::ops::people::passkeys(&ctx, Some(person.clone())).await?;
            Ok(serde_json::json!({"person": person, "via": session.via, "session": session.id, "passkeys": keys}))
        }
        .await,
    )
}

/// `POST /ui/account/passkeys/options`: what the browser registers a passkey with.
pub async fn options(State(state): State<Arc<AppState>>, caller: Who, headers: HeaderMap) -> Response {
    answer(
        async {
            let (session, person, ctx) = me(&state, &caller)?;
            let rp = relying(&state, &headers)?;
            state.store.call(move |_| crate::ops::people::registration_options(&ctx, &rp, &person, &session.id)).await
        }
        .await,
    )
}

/// `POST /ui/account/passkeys` body.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Register {
    request: String,
    credential: Attestation,
    #[serde(default)]
    label: String,
}

/// `POST /ui/account/passkeys`: register the passkey the browser made.
pub async fn register(
    State(state): State<Arc<AppState>>,
    caller: Who,
    headers: HeaderMap,
    bytes: axum::body::Bytes,
) -> Response {
    answer(
        async {
            let (session, person, ctx) = me(&state, &caller)?;
            let rp = relying(&state, &headers)?;
            let body: Register = serde_json::from_slice(&bytes).map_err(|e| {
                Error::invalid(
                    "ui.invalid_request",
                    format!("send {{\"request\", \"credential\": {{id, clientDataJson, attestationObject}}, \"label\"}}: {e}"),
                )
            })?;
            let who = (person.as_str(), session.id.as_str());
            crate::ops::people::register_passkey(&ctx, &rp, who, &body.request, &body.credential, &body.label).await
        }
        .await,
    )
}

/// `POST /ui/account/passkeys/{id}/remove`: remove one of the person's own passkeys.
pub async fn remove(State(state): State<Arc<AppState>>, Path(id): Path<String>, caller: Who) -> Response {
    answer(
        async {
            let (_, person, ctx) = me(&state, &caller)?;
            crate::ops::people::remove_passkey(&ctx, &id, Some(person)).await?;
            Ok(serde_json::json!({"removed": id}))
        }
        .await,
    )
}
