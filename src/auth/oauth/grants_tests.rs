//! The flow against a real SQLite store: request → a person's decision → code → tokens →
//! refresh → reuse and revocation, and every refusal leaving nothing issued.

use super::*;
use crate::auth::oauth::clients::{self, Registration};

const VERIFIER: &str = "a-verifier-of-more-than-forty-three-characters-0123456789";

fn challenge(v: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(<sha2::Sha256 as sha2::Digest>::digest(v.as_bytes()))
}

fn issuer() -> Issuer {
    let mut c = crate::config::Config::default();
    c.oauth.enabled = true;
    c.network.public_url = Some("https://box.example".into());
    Issuer::of(&c).unwrap()
}

fn cfg() -> crate::config::Oauth {
    crate::config::Oauth::default()
}

struct World {
    _d: tempfile::TempDir,
    s: Store,
    i: Issuer,
    client: Client,
}

fn world() -> World {
    let (d, s) = crate::store::scratch();
    let reg = Registration {
        redirect_uris: vec!["https://app.example/cb".into()],
        client_name: Some("Claude <b>".into()),
        token_endpoint_auth_method: Some("none".into()),
        ..Default::default()
    };
    let client = clients::register(&s, &reg, "dynamic", "test").unwrap().client;
    World { _d: d, s, i: issuer(), client }
}

fn query(w: &World) -> AuthorizeQuery {
    AuthorizeQuery {
        response_type: Some("code".into()),
        client_id: Some(w.client.client_id.clone()),
        redirect_uri: Some("https://app.example/cb".into()),
        state: Some("st8".into()),
        code_challenge: Some(challenge(VERIFIER)),
        code_challenge_method: Some("S256".into()),
        scope: None,
        resource: Some(w.i.resource("memory")),
    }
}

fn code_of(redirect: &str) -> String {
    let u = url::Url::parse(redirect).unwrap();
    u.query_pairs().find(|(k, _)| k == "code").map(|(_, v)| v.into_owned()).unwrap()
}

fn tokens(w: &World) -> Tokens {
    let id = begin(&w.s, &w.i, &query(w)).unwrap();
    let back = approve(&w.s, &w.i, &id, &["memory".into()], "ui:us_1").unwrap();
    let code = code_of(&back);
    exchange(&w.s, &w.i, &cfg(), &w.client, &x(&code, Some("https://app.example/cb"), VERIFIER, None)).unwrap()
}

fn x<'a>(
    code: &'a str,
    redirect_uri: Option<&'a str>,
    verifier: &'a str,
    resource: Option<&'a str>,
) -> CodeExchange<'a> {
    CodeExchange { code, redirect_uri, verifier, resource }
}

fn count(s: &Store, table: &str) -> i64 {
    s.with(|c| Ok(c.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))?)).unwrap()
}

#[test]
fn a_person_approves_and_the_code_buys_tokens_for_one_mount() {
    let w = world();
    let id = begin(&w.s, &w.i, &query(&w)).unwrap();
    let v = view(&w.s, &w.i, &id).unwrap();
    assert_eq!((v.status.as_str(), v.mount.as_str(), v.scopes.clone()), ("pending", "memory", vec!["memory".into()]));
    assert_eq!(v.redirect_to, "https://app.example");
    let back = approve(&w.s, &w.i, &id, &["memory".into()], "ui:us_1").unwrap();
    assert!(back.starts_with("https://app.example/cb?code=hal0ac_"), "{back}");
    assert!(back.contains("state=st8") && back.contains("iss=https%3A%2F%2Fbox.example%2Foauth"), "{back}");
    assert_eq!(approve(&w.s, &w.i, &id, &["memory".into()], "x").unwrap_err().code, "oauth.request_decided");

    let code = code_of(&back);
    let bad = |verifier: &str, redirect: Option<&str>, resource: Option<&str>| {
        exchange(&w.s, &w.i, &cfg(), &w.client, &x(&code, redirect, verifier, resource)).unwrap_err().code
    };
    assert_eq!(bad("wrong-verifier-wrong-verifier-wrong-verifier-x", None, None), "oauth.invalid_grant");
    assert_eq!(bad(VERIFIER, Some("https://app.example/other"), None), "oauth.invalid_grant");
    assert_eq!(bad(VERIFIER, None, Some("https://box.example/oauth/admin/mcp")), "oauth.invalid_target");
    assert_eq!(count(&w.s, "oauth_tokens"), 0, "refused exchanges issue nothing");

    let t = exchange(&w.s, &w.i, &cfg(), &w.client, &x(&code, Some("https://app.example/cb"), VERIFIER, None)).unwrap();
    assert!(t.access_token.starts_with(ACCESS_PREFIX) && t.refresh_token.starts_with(REFRESH_PREFIX));
    assert_eq!(t.scope, "memory");
    let g = lookup_access(&w.s, &t.access_token).unwrap().unwrap();
    assert_eq!((g.mount.as_str(), g.bridge.name.as_str()), ("memory", "oauth-claude-b"));
    assert_eq!(g.scopes, BTreeSet::from([Scope::Memory]));
    assert_eq!(g.bridge.origin, format!("oauth:{}", w.client.client_id));
    // Only hashes are stored.
    let stored: i64 =
        w.s.with(|c| {
            Ok(c.query_row(
                "SELECT count(*) FROM oauth_tokens WHERE token_sha256 = ?1",
                [sha256_hex(&t.access_token)],
                |r| r.get(0),
            )?)
        })
        .unwrap();
    assert_eq!(stored, 1);

    // The code again: refused, and the grant it bought ends.
    assert_eq!(bad(VERIFIER, None, None), "oauth.invalid_grant");
    assert!(lookup_access(&w.s, &t.access_token).unwrap().is_none());
}

#[test]
fn requests_without_pkce_s256_or_a_known_resource_go_back_with_an_error() {
    let w = world();
    let refused = |f: &dyn Fn(&mut AuthorizeQuery)| {
        let mut q = query(&w);
        f(&mut q);
        let r = begin(&w.s, &w.i, &q).unwrap_err();
        (r.error.code, r.back)
    };
    for (f, code) in [
        (
            &(|q: &mut AuthorizeQuery| q.code_challenge_method = None) as &dyn Fn(&mut AuthorizeQuery),
            "oauth.invalid_request",
        ),
        (&|q: &mut AuthorizeQuery| q.code_challenge_method = Some("plain".into()), "oauth.invalid_request"),
        (&|q: &mut AuthorizeQuery| q.code_challenge = Some("short".into()), "oauth.invalid_request"),
        (&|q: &mut AuthorizeQuery| q.response_type = Some("token".into()), "oauth.unsupported_response_type"),
        (&|q: &mut AuthorizeQuery| q.scope = Some("root".into()), "oauth.invalid_scope"),
        (
            &|q: &mut AuthorizeQuery| q.resource = Some("https://other.example/oauth/memory/mcp".into()),
            "oauth.invalid_target",
        ),
    ] {
        let (c, back) = refused(f);
        assert_eq!(c, code);
        let back = back.expect("goes back to the registered redirect");
        assert!(back.starts_with("https://app.example/cb?error=") && back.contains("state=st8"), "{back}");
    }
    // An unknown client or a redirect it did not register: the browser goes nowhere.
    for (f, code) in [
        (
            &(|q: &mut AuthorizeQuery| q.client_id = Some("oc_nobody".into())) as &dyn Fn(&mut AuthorizeQuery),
            "oauth.invalid_client",
        ),
        (
            &|q: &mut AuthorizeQuery| q.redirect_uri = Some("https://evil.example/cb".into()),
            "oauth.invalid_redirect_uri",
        ),
        (&|q: &mut AuthorizeQuery| q.client_id = None, "oauth.invalid_request"),
    ] {
        let (c, back) = refused(f);
        assert_eq!((c, back), (code, None));
    }
    assert_eq!(count(&w.s, "oauth_requests"), 0, "no refused request is kept");
}

#[test]
fn the_person_must_tick_the_mounts_scope_and_only_what_was_asked() {
    let w = world();
    let mut q = query(&w);
    q.resource = Some(w.i.resource("admin"));
    let id = begin(&w.s, &w.i, &q).unwrap();
    assert_eq!(view(&w.s, &w.i, &id).unwrap().scopes, vec!["admin".to_string()]);
    assert_eq!(approve(&w.s, &w.i, &id, &[], "p").unwrap_err().code, "oauth.invalid_scope");
    assert_eq!(approve(&w.s, &w.i, &id, &["memory".into()], "p").unwrap_err().code, "oauth.invalid_scope");
    assert_eq!(count(&w.s, "bridge_clients"), 0, "a refused decision makes no bridge client");
    approve(&w.s, &w.i, &id, &["admin".into()], "p").unwrap();
}

#[test]
fn a_denial_goes_back_and_an_expired_request_cannot_be_decided() {
    let w = world();
    let id = begin(&w.s, &w.i, &query(&w)).unwrap();
    let back = deny(&w.s, &w.i, &id, "p").unwrap();
    assert!(back.contains("error=access_denied") && back.contains("state=st8"), "{back}");
    let id = begin(&w.s, &w.i, &query(&w)).unwrap();
    w.s.with(|c| Ok(c.execute("UPDATE oauth_requests SET expires_at = '2000-01-01T00:00:00Z' WHERE id = ?1", [&id])?))
        .unwrap();
    assert_eq!(view(&w.s, &w.i, &id).unwrap().status, "expired");
    assert_eq!(approve(&w.s, &w.i, &id, &["memory".into()], "p").unwrap_err().code, "oauth.request_expired");
}

#[test]
fn refresh_rotates_and_a_reused_refresh_token_ends_the_grant() {
    let w = world();
    let t1 = tokens(&w);
    let t2 = refresh(&w.s, &w.i, &cfg(), &w.client, &t1.refresh_token, None, None).unwrap();
    assert!(lookup_access(&w.s, &t1.access_token).unwrap().is_none(), "the old access token ends with a refresh");
    assert!(lookup_access(&w.s, &t2.access_token).unwrap().is_some());
    assert_eq!(
        refresh(&w.s, &w.i, &cfg(), &w.client, &t2.refresh_token, Some("admin"), None).unwrap_err().code,
        "oauth.invalid_scope"
    );
    // t1's refresh token again: someone holds a copy, so the whole grant ends.
    let e = refresh(&w.s, &w.i, &cfg(), &w.client, &t1.refresh_token, None, None).unwrap_err();
    assert_eq!(e.code, "oauth.invalid_grant");
    assert!(lookup_access(&w.s, &t2.access_token).unwrap().is_none());
    assert_eq!(
        refresh(&w.s, &w.i, &cfg(), &w.client, &t2.refresh_token, None, None).unwrap_err().code,
        "oauth.invalid_grant"
    );
}

#[test]
fn revoking_the_bridge_client_or_the_token_ends_every_token() {
    let w = world();
    let t = tokens(&w);
    let g = lookup_access(&w.s, &t.access_token).unwrap().unwrap();
    bridge::rotate(&w.s, &g.bridge.name).unwrap();
    assert!(lookup_access(&w.s, &t.access_token).unwrap().is_none(), "rotate ends the grant");
    assert_eq!(
        refresh(&w.s, &w.i, &cfg(), &w.client, &t.refresh_token, None, None).unwrap_err().code,
        "oauth.invalid_grant"
    );

    // A second approval reuses the client's bridge client.
    let t = tokens(&w);
    assert_eq!(lookup_access(&w.s, &t.access_token).unwrap().unwrap().bridge.name, g.bridge.name);
    let other = clients::register(
        &w.s,
        &Registration { redirect_uris: vec!["https://x.example/cb".into()], ..Default::default() },
        "dynamic",
        "t",
    )
    .unwrap()
    .client;
    assert!(!revoke(&w.s, &other, &t.access_token).unwrap(), "another client's token is not touched");
    assert!(lookup_access(&w.s, &t.access_token).unwrap().is_some());
    assert!(revoke(&w.s, &w.client, &t.refresh_token).unwrap());
    assert!(lookup_access(&w.s, &t.access_token).unwrap().is_none());

    let t = tokens(&w);
    bridge::revoke(&w.s, &g.bridge.name).unwrap();
    assert!(lookup_access(&w.s, &t.access_token).unwrap().is_none(), "revoke ends the grant");
}

#[test]
fn pkce_checks_the_verifier_shape_and_digest() {
    let c = challenge(VERIFIER);
    assert!(pkce_matches(VERIFIER, &c));
    assert!(!pkce_matches("short", &challenge("short")));
    assert!(!pkce_matches(&format!("{VERIFIER}!"), &challenge(&format!("{VERIFIER}!"))));
    assert!(!pkce_matches(&format!("{VERIFIER}x"), &c));
}

#[test]
fn a_code_older_than_a_minute_buys_nothing() {
    let w = world();
    let id = begin(&w.s, &w.i, &query(&w)).unwrap();
    let code = code_of(&approve(&w.s, &w.i, &id, &["memory".into()], "p").unwrap());
    w.s.with(|c| Ok(c.execute("UPDATE oauth_requests SET code_at = '2000-01-01T00:00:00Z' WHERE id = ?1", [&id])?))
        .unwrap();
    let e = exchange(&w.s, &w.i, &cfg(), &w.client, &x(&code, None, VERIFIER, None)).unwrap_err();
    assert_eq!(e.code, "oauth.invalid_grant");
    assert_eq!(count(&w.s, "oauth_tokens"), 0);
}
