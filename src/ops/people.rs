//! The dashboard's people and their passkeys, for every front (`hal0 ui user`, `hal0 ui
//! login`, the account page): each change is audited under the caller (surface `cli` at
//! the shell, `ui` from a dashboard session), and passwords are hashed off the async
//! threads.

use super::{Ctx, audited, blocking};
use crate::auth::passkey::{self, Attestation, Relying, challenge::Purpose};
use crate::auth::people::{self, Passkey, Person};
use crate::base::error::{Error, Result};
use serde_json::json;

/// Add person `name` (with `password` when given).
pub async fn add(ctx: &Ctx, name: &str, password: Option<String>) -> Result<Person> {
    let (store, by, n) = (ctx.store.clone(), ctx.identity.to_string(), name.to_string());
    let args = json!({"name": name, "password": password.is_some()});
    audited(ctx, "ui_user_add", args, blocking(move || people::add(&store, &n, password.as_deref(), &by))).await
}

pub async fn list(ctx: &Ctx) -> Result<Vec<Person>> {
    let store = ctx.store.clone();
    blocking(move || people::list(&store)).await
}

/// Remove person `name`: their passkeys go, their sessions end.
pub async fn remove(ctx: &Ctx, name: &str) -> Result<()> {
    let (store, n) = (ctx.store.clone(), name.to_string());
    audited(ctx, "ui_user_remove", json!({"name": name}), blocking(move || people::remove(&store, &n))).await
}

/// Set or (`None`) remove person `name`'s password.
pub async fn passwd(ctx: &Ctx, name: &str, password: Option<String>) -> Result<()> {
    let (store, n) = (ctx.store.clone(), name.to_string());
    let args = json!({"name": name, "removed": password.is_none()});
    audited(ctx, "ui_user_passwd", args, blocking(move || people::set_password(&store, &n, password.as_deref()))).await
}

/// `ui_password_set`: the dashboard's shared password (the sign-in before any person was
/// added), stored hashed; `None` removes it. A removal answers whether there was one to
/// remove; a set answers true.
pub async fn shared_password(ctx: &Ctx, password: Option<String>) -> Result<bool> {
    let paths = ctx.paths.clone();
    let tool = if password.is_some() { "ui_password_set" } else { "ui_password_remove" };
    audited(
        ctx,
        tool,
        json!({}),
        blocking(move || match password {
            Some(pw) => crate::auth::password::set(&paths, &pw).map(|()| true),
            None => crate::auth::password::remove(&paths),
        }),
    )
    .await
}

/// Passkeys (of `person`, when given).
pub async fn passkeys(ctx: &Ctx, person: Option<String>) -> Result<Vec<Passkey>> {
    let store = ctx.store.clone();
    blocking(move || people::passkeys(&store, person.as_deref())).await
}

/// Remove passkey `id` (only `person`'s, when given).
pub async fn remove_passkey(ctx: &Ctx, id: &str, person: Option<String>) -> Result<()> {
    let (store, i) = (ctx.store.clone(), id.to_string());
    let args = json!({"id": id, "person": person});
    audited(ctx, "ui_passkey_remove", args, blocking(move || people::remove_passkey(&store, &i, person.as_deref())))
        .await
}

/// Who a login link is for: `user` (a person of this box), else the shell user who runs
/// the command (whose name must be a person's name).
pub async fn link_person(ctx: &Ctx, user: Option<&str>) -> Result<String> {
    let Some(user) = user else {
        let me = match ctx.actor() {
            crate::base::actor::Actor::Cli(user) => user,
            other => other.to_string(),
        };
        return people::check_name(&me).map(|()| me.clone()).map_err(|_| {
            Error::invalid(
                "ui.invalid_name",
                format!("the shell user `{me}` is not a person's name: say whom the link is for with --user NAME"),
            )
        });
    };
    let (store, u) = (ctx.store.clone(), user.to_string());
    match blocking(move || people::get(&store, &u)).await? {
        Some(p) => Ok(p.name),
        None => Err(Error::not_found(
            "ui.no_such_person",
            format!("no person `{user}` on this box: add them with `hal0 ui user add {user}`"),
        )),
    }
}

/// The options a browser needs to register a passkey for `person` (signed in as dashboard
/// session `session`), with the challenge issued for it.
pub fn registration_options(ctx: &Ctx, rp: &Relying, person: &str, session: &str) -> Result<serde_json::Value> {
    let p = people::get(&ctx.store, person)?.ok_or_else(|| {
        Error::forbidden_code("ui.no_such_person", format!("`{person}` is not a person here any more"))
    })?;
    let exclude: Vec<_> = people::passkeys(&ctx.store, Some(person))?
        .into_iter()
        .map(|k| json!({"type": "public-key", "id": k.id}))
        .collect();
    let (id, challenge) = ctx.challenges.issue(Purpose::Register { session: session.to_string() })?;
    Ok(json!({
        "request": id,
        "publicKey": {
            "challenge": passkey::b64_encode(&challenge),
            "rp": {"id": rp.id, "name": "hal0"},
            "user": {"id": p.handle, "name": p.name, "displayName": p.name},
            "pubKeyCredParams": passkey::ALGORITHMS.iter().map(|a| json!({"type": "public-key", "alg": a})).collect::<Vec<_>>(),
            "excludeCredentials": exclude,
            "authenticatorSelection": {"residentKey": "preferred", "userVerification": "preferred"},
            "attestation": "none",
            "timeout": passkey::challenge::LIFETIME.as_millis() as u64,
        }
    }))
}

/// Register the passkey a browser made for `person` in answer to challenge `request`.
pub async fn register_passkey(
    ctx: &Ctx,
    rp: &Relying,
    (person, session): (&str, &str),
    request: &str,
    answer: &Attestation,
    label: &str,
) -> Result<Passkey> {
    let challenge = ctx.challenges.take(request, &Purpose::Register { session: session.to_string() })?;
    let args = json!({"person": person, "label": label});
    let (store, p, l, rp, answer) =
        (ctx.store.clone(), person.to_string(), label.to_string(), rp.clone(), answer.clone());
    audited(
        ctx,
        "ui_passkey_add",
        args,
        blocking(move || {
            let cred = passkey::register(&rp, &challenge, &answer)?;
            people::add_passkey(&store, &p, &cred, &l)
        }),
    )
    .await
}

/// The options a browser needs to sign in with a passkey (any of this box's: the
/// authenticator offers the ones it holds for this site).
pub fn sign_in_options(ctx: &Ctx, rp: &Relying) -> Result<serde_json::Value> {
    let (id, challenge) = ctx.challenges.issue(Purpose::SignIn)?;
    Ok(json!({
        "request": id,
        "publicKey": {
            "challenge": passkey::b64_encode(&challenge),
            "rpId": rp.id,
            "userVerification": "preferred",
            "allowCredentials": [],
            "timeout": passkey::challenge::LIFETIME.as_millis() as u64,
        }
    }))
}

/// Who a passkey sign-in answering challenge `request` proves to be (its counter moved on).
pub fn sign_in(ctx: &Ctx, rp: &Relying, request: &str, answer: &passkey::Assertion) -> Result<String> {
    let challenge = ctx.challenges.take(request, &Purpose::SignIn)?;
    let stored = people::passkey(&ctx.store, &answer.id)?;
    if let Some(handle) = &answer.user_handle
        && !handle.is_empty()
        && passkey::b64("userHandle", handle)? != passkey::b64("handle", &stored.handle)?
    {
        return Err(Error::unauthorized("ui.passkey_invalid", "the passkey answered for another person"));
    }
    let proven = passkey::sign_in(rp, &challenge, answer, &stored.cose_key, stored.sign_count)?;
    people::passkey_used(&ctx.store, &answer.id, stored.sign_count, proven.sign_count)?;
    Ok(stored.person)
}

pub use crate::auth::session::{LINK_MINUTES, SESSION_HOURS, Session};

/// Where a person's browser reaches the dashboard: `[network].public_url`, else this box's
/// own address (loopback when hal0 listens only there: open it on the box or through an
/// SSH tunnel).
pub fn dashboard_base(cfg: &crate::config::Config) -> String {
    if cfg.network.public_url.is_none() && cfg.bind_addr().ip().is_loopback() {
        return crate::connect::local_base(cfg);
    }
    crate::connect::base_url(cfg).0
}

/// `ui_link`: a one-time sign-in link for `person`, good for `minutes`, minted as this
/// caller (audited: the link opens a session; `then` is the page to open after, e.g.
/// `&then=account`).
pub async fn sign_in_link(ctx: &Ctx, minutes: i64, person: &str, then: &str) -> Result<String> {
    let args = json!({"person": person, "minutes": minutes});
    let (store, by, p) = (ctx.store.clone(), ctx.identity.clone(), person.to_string());
    let token =
        audited(ctx, "ui_link", args, blocking(move || crate::auth::session::new_link(&store, minutes, &by, &p)))
            .await?;
    Ok(format!("{}/ui/login?token={token}{then}", dashboard_base(&ctx.config())))
}

/// The dashboard's sessions (ended ones too, with `all`).
pub async fn sessions(ctx: &Ctx, all: bool) -> Result<Vec<Session>> {
    let store = ctx.store.clone();
    blocking(move || crate::auth::session::list(&store, all)).await
}

/// End session `id`, or every session (`None`); how many ended. Each end is on record.
pub async fn end_sessions(ctx: &Ctx, id: Option<String>) -> Result<usize> {
    let (store, by) = (ctx.store.clone(), ctx.identity.clone());
    blocking(move || crate::auth::session::end(&store, id.as_deref(), &by)).await
}
