//! OAuth 2.1 in, against a real `hal0 serve`: discovery from the 401 of an OAuth mount
//! (RFC 9728 → RFC 8414), dynamic registration, the authorize endpoint, a person's consent
//! (a dashboard session; no key can consent), the code exchange with PKCE S256, tokens
//! that open only their own resource, rotating refresh tokens (reuse ends the grant),
//! revocation, and `hal0 bridge revoke` ending every token; each bad input refused with
//! OAuth's error and nothing issued. Then the official Python MCP SDK's OAuth client goes
//! from nothing to tool calls with one consent given in headless Chromium.

use crate::dashboard::{WAIT, browser, link, on, sign_in};
use crate::support::browser::CONSENT_SHOWN;
use crate::support::*;
use serde_json::{Value, json};
use std::path::PathBuf;

const VERIFIER: &str = "the-pkce-verifier-of-this-test-0123456789-abcdefghijklmnop";
/// base64url(sha256(VERIFIER)), no padding.
fn challenge() -> String {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import base64,hashlib,sys;print(base64.urlsafe_b64encode(hashlib.sha256(sys.argv[1].encode()).digest()).decode().rstrip('='))",
            VERIFIER,
        ])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A box with OAuth on and auth armed, its public URL the loopback port it serves on.
fn oauth_box() -> (Env, Server) {
    oauth_box_with(&[])
}

/// [`oauth_box`] with extra environment for the daemon.
fn oauth_box_with(envs: &[(&str, &str)]) -> (Env, Server) {
    let env = Env::new();
    env.ok(&["auth", "rotate", "admin", "--yes"]);
    for _ in 0..3 {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        env.ok(&["config", "set", "network.bind", &format!("127.0.0.1:{port}")]);
        env.ok(&["config", "set", "network.public_url", &format!("http://127.0.0.1:{port}")]);
        env.ok(&["config", "set", "oauth.enabled", "true"]);
        if let Some(s) = serve_on_with(&env, port, envs) {
            return (env, s);
        }
    }
    panic!("hal0 serve did not start");
}

/// The admin key `oauth_box` armed auth with.
fn admin_key(env: &Env) -> String {
    std::fs::read_to_string(env.config_dir().join("api.env"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("HAL0_ADMIN_KEY=").map(str::to_string))
        .unwrap()
}

fn http() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

async fn register(s: &Server, body: Value) -> reqwest::Response {
    http().post(s.url("/oauth/register")).json(&body).send().await.unwrap()
}

fn authorize_url(s: &Server, client_id: &str, extra: &[(&str, &str)]) -> String {
    let mut u = url::Url::parse(&s.url("/oauth/authorize")).unwrap();
    {
        let mut q = u.query_pairs_mut();
        let c = challenge();
        let resource = s.url("/oauth/memory/mcp");
        let mut base: Vec<(&str, &str)> = vec![
            ("response_type", "code"),
            ("client_id", client_id),
            ("redirect_uri", "http://127.0.0.1:9/callback"),
            ("state", "s-1"),
            ("code_challenge", &c),
            ("code_challenge_method", "S256"),
            ("resource", &resource),
        ];
        for (k, v) in extra {
            base.retain(|(bk, _)| bk != k);
            if !v.is_empty() {
                base.push((k, v));
            }
        }
        for (k, v) in base {
            q.append_pair(k, v);
        }
    }
    u.to_string()
}

fn param(url: &str, name: &str) -> Option<String> {
    url::Url::parse(url).unwrap().query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned())
}

/// Authorize, and have the signed-in person approve: the code.
async fn consent(s: &Server, client_id: &str, cookie: &str, csrf: &str) -> String {
    consent_to(s, client_id, cookie, csrf, "memory").await
}

/// [`consent`] for `mount`'s resource, the person ticking its scope.
async fn consent_to(s: &Server, client_id: &str, cookie: &str, csrf: &str, mount: &str) -> String {
    let resource = s.url(&format!("/oauth/{mount}/mcp"));
    let r = http().get(authorize_url(s, client_id, &[("resource", &resource)])).send().await.unwrap();
    assert_eq!(r.status(), 303);
    let page = r.headers()["location"].to_str().unwrap().to_string();
    let id = page.strip_prefix("/ui/consent/").unwrap().to_string();
    let r = http()
        .post(s.url(&format!("/oauth/requests/{id}/approve")))
        .header("cookie", cookie)
        .header("x-csrf-token", csrf)
        .json(&json!({"scopes": [mount]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let back = r.json::<Value>().await.unwrap()["redirect"].as_str().unwrap().to_string();
    param(&back, "code").unwrap()
}

/// A public client registered over DCR: its id.
async fn public_client(s: &Server) -> String {
    let r = register(
        s,
        json!({"redirect_uris": ["http://127.0.0.1:9/callback"], "client_name": "matrix", "token_endpoint_auth_method": "none"}),
    )
    .await;
    r.json::<Value>().await.unwrap()["client_id"].as_str().unwrap().to_string()
}

/// Exchange `code` for an access token.
async fn access_token(s: &Server, client_id: &str, code: &str) -> String {
    let (st, v) = token(
        s,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("client_id", client_id),
            ("redirect_uri", "http://127.0.0.1:9/callback"),
            ("code_verifier", VERIFIER),
        ],
    )
    .await;
    assert_eq!(st, 200, "{v}");
    v["access_token"].as_str().unwrap().to_string()
}

/// OAuth's routes, each with the expected status per credential of [`MATRIX_CREDS`],
/// written out by hand.
const MATRIX: &[(&str, &str, [u16; 7])] = &[
    //                                                        none bad  admin bridge person t_mem t_admin
    ("GET", "/.well-known/oauth-authorization-server/oauth", [200, 200, 200, 200, 200, 200, 200]),
    ("GET", "/.well-known/oauth-protected-resource/oauth/memory/mcp", [200, 200, 200, 200, 200, 200, 200]),
    ("GET", "/.well-known/oauth-protected-resource/oauth/relay/mcp", [404, 404, 404, 404, 404, 404, 404]),
    ("GET", "/oauth/authorize", [400, 400, 400, 400, 400, 400, 400]),
    ("POST", "/oauth/token", [400, 400, 400, 400, 400, 400, 400]),
    ("POST", "/oauth/revoke", [400, 400, 400, 400, 400, 400, 400]),
    ("GET", "/oauth/register/oc_none", [401, 401, 401, 401, 401, 401, 401]),
    // A token opens its own resource and nothing else (so not the consent routes either).
    ("GET", "/oauth/requests/oar_none", [404, 401, 404, 404, 404, 401, 401]),
    ("POST", "/oauth/requests/oar_none/approve", [401, 401, 403, 403, 404, 401, 401]),
    ("POST", "/oauth/requests/oar_none/deny", [401, 401, 403, 403, 404, 401, 401]),
    ("POST", "/oauth/requests/oar_none/continue", [404, 401, 404, 404, 404, 401, 401]),
    // The proxy takes consumer keys: a token is never taken there, so never passed upstream.
    ("POST", "/mcp/proxy/up/mcp", [401, 401, 404, 403, 403, 401, 401]),
    ("POST", "/oauth/memory/mcp", [401, 401, 200, 200, 403, 200, 401]),
    ("POST", "/oauth/admin/mcp", [401, 401, 200, 403, 403, 401, 200]),
    ("POST", "/oauth/agents/mcp", [401, 401, 200, 200, 403, 401, 401]),
    // The relay is for bots' keys: it has no OAuth URL.
    ("POST", "/oauth/relay/mcp", [401, 401, 404, 403, 404, 401, 401]),
    ("POST", "/mcp/memory/mcp", [401, 401, 200, 200, 403, 401, 401]),
    ("GET", "/api/status", [401, 401, 200, 403, 200, 401, 401]),
];
const MATRIX_CREDS: [&str; 7] = ["none", "bad", "admin", "bridge", "person", "t_mem", "t_admin"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_oauth_route_answers_every_credential_and_refuses_foreign_hosts_and_origins() {
    let (env, s) = oauth_box();
    let admin = admin_key(&env);
    let bridge = env.bridge_key("matrix", &["agents", "memory"]);
    let (cookie, csrf) = sign_in(&s, &on(&s, &link(&env))).await;
    let client = public_client(&s).await;
    let t_mem = access_token(&s, &client, &consent_to(&s, &client, &cookie, &csrf, "memory").await).await;
    let t_admin = access_token(&s, &client, &consent_to(&s, &client, &cookie, &csrf, "admin").await).await;

    let mut wrong = Vec::new();
    for (method, path, want) in MATRIX {
        for (i, cred) in MATRIX_CREDS.iter().enumerate() {
            let mut r = http().request(method.parse().unwrap(), s.url(path));
            r = match *cred {
                "none" => r,
                "bad" => r.bearer_auth("hal0at_not-a-token-at-all-not-a-token-at-all"),
                "admin" => r.bearer_auth(&admin),
                "bridge" => r.bearer_auth(&bridge),
                "person" => r.header("cookie", &cookie).header("x-csrf-token", &csrf),
                "t_mem" => r.bearer_auth(&t_mem),
                _ => r.bearer_auth(&t_admin),
            };
            if path.ends_with("/mcp") && *method == "POST" {
                r = r
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .json(&initialize_body());
            } else if *method == "POST" && path.ends_with("/approve") {
                r = r.json(&json!({"scopes": ["memory"]}));
            } else if *method == "POST" && path.starts_with("/oauth/requests") {
                r = r.json(&json!({}));
            } else if *method == "POST" {
                r = r.header("content-type", "application/x-www-form-urlencoded").body("");
            }
            let got = r.send().await.unwrap().status().as_u16();
            if got != want[i] {
                wrong.push(format!("{method} {path} as {cred}: {got}, want {}", want[i]));
            }
        }
        // A foreign Host gets no answer; a foreign page's Origin is refused.
        let r =
            http().request(method.parse().unwrap(), s.url(path)).header("host", "evil.example").send().await.unwrap();
        if r.status() != 421 {
            wrong.push(format!("{method} {path} with a foreign Host: {}", r.status()));
        }
        let r = http()
            .request(method.parse().unwrap(), s.url(path))
            .header("origin", "https://evil.example")
            .bearer_auth(&t_mem)
            .send()
            .await
            .unwrap();
        if r.status() != 403 {
            wrong.push(format!("{method} {path} with a foreign Origin: {}", r.status()));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));

    // The doctor says OAuth is on, what it holds, and that plain http serves this box only.
    let o = env.run(&["doctor", "--json"]);
    let report: Value = serde_json::from_str(&o.stdout()).unwrap();
    let row = report["rows"].as_array().unwrap().iter().find(|r| r["name"] == "oauth").unwrap().clone();
    assert_eq!(row["status"], "warn", "{row}");
    let detail = row["detail"].as_str().unwrap();
    assert!(
        detail.contains(&s.url("/oauth")) && detail.contains("2 live grants") && detail.contains("plain http"),
        "{row}"
    );
}

/// POST `pairs` as `application/x-www-form-urlencoded`, as OAuth clients send them.
async fn post_form(s: &Server, path: &str, pairs: &[(&str, &str)]) -> reqwest::Response {
    let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish();
    http()
        .post(s.url(path))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .unwrap()
}

async fn token(s: &Server, form: &[(&str, &str)]) -> (u16, Value) {
    let r = post_form(s, "/oauth/token", form).await;
    (r.status().as_u16(), r.json().await.unwrap())
}

async fn status_with(s: &Server, path: &str, bearer: &str) -> (u16, String) {
    let r = mcp_post(&http(), &s.url(path), Some(bearer), &initialize_body()).send().await.unwrap();
    let h = r.headers().get("www-authenticate").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    (r.status().as_u16(), h)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oauth_client_goes_from_a_401_to_a_tool_call_with_one_consent_and_bad_input_gets_nothing() {
    let (env, s) = oauth_box();
    let h = http();

    // Discovery starts at the OAuth mount's 401; the key URL never mentions OAuth.
    let r = mcp_post(&h, &s.url("/oauth/memory/mcp"), None, &initialize_body()).send().await.unwrap();
    let www = r.headers()["www-authenticate"].to_str().unwrap().to_string();
    let prm_url = s.url("/.well-known/oauth-protected-resource/oauth/memory/mcp");
    assert!(www.contains(&format!("resource_metadata=\"{prm_url}\"")) && www.contains("scope=\"memory\""), "{www}");
    let r = mcp_post(&h, &s.url("/mcp/memory/mcp"), None, &initialize_body()).send().await.unwrap();
    assert_eq!(r.status(), 401);
    assert!(!r.headers()["www-authenticate"].to_str().unwrap().contains("resource_metadata"));
    assert_eq!(h.get(s.url("/.well-known/oauth-authorization-server")).send().await.unwrap().status(), 404);
    assert_eq!(
        h.get(s.url("/.well-known/oauth-protected-resource/mcp/memory/mcp")).send().await.unwrap().status(),
        404
    );

    let prm: Value = h.get(&prm_url).send().await.unwrap().json().await.unwrap();
    assert_eq!(prm["resource"], s.url("/oauth/memory/mcp"));
    assert_eq!(prm["authorization_servers"], json!([s.url("/oauth")]));
    let meta: Value =
        h.get(s.url("/.well-known/oauth-authorization-server/oauth")).send().await.unwrap().json().await.unwrap();
    assert_eq!(meta["issuer"], s.url("/oauth"));
    assert_eq!(meta["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(meta["registration_endpoint"], s.url("/oauth/register"));

    // Registration: a redirect a browser would run, or no JSON, is refused.
    let r = register(&s, json!({"redirect_uris": ["javascript:alert(1)"], "client_name": "x"})).await;
    assert_eq!(r.status(), 400);
    assert_eq!(r.json::<Value>().await.unwrap()["error"], "invalid_redirect_uri");
    let r = h.post(s.url("/oauth/register")).header("content-type", "application/json").body("{").send().await.unwrap();
    assert_eq!(
        (r.status().as_u16(), r.json::<Value>().await.unwrap()["error"].clone()),
        (400, json!("invalid_client_metadata"))
    );
    let r = register(
        &s,
        json!({"redirect_uris": ["http://127.0.0.1:9/callback"], "client_name": "Test <App>", "token_endpoint_auth_method": "none"}),
    )
    .await;
    assert_eq!(r.status(), 201);
    let reg: Value = r.json().await.unwrap();
    let client_id = reg["client_id"].as_str().unwrap().to_string();
    assert!(reg.get("client_secret").is_none());
    let reg_uri = reg["registration_client_uri"].as_str().unwrap();
    let reg_token = reg["registration_access_token"].as_str().unwrap();
    let r = h.get(reg_uri).bearer_auth(reg_token).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(h.get(reg_uri).bearer_auth("hal0cs_wrong").send().await.unwrap().status(), 401);

    // Authorize: an unknown client or a redirect it did not register gets a page, not a redirect.
    let r = h.get(authorize_url(&s, "oc_nobody", &[])).send().await.unwrap();
    assert_eq!(r.status(), 400);
    assert!(r.text().await.unwrap().contains("oauth.invalid_client"));
    let r = h.get(authorize_url(&s, &client_id, &[("redirect_uri", "https://evil.example/cb")])).send().await.unwrap();
    assert_eq!(r.status(), 400);
    assert!(r.text().await.unwrap().contains("oauth.invalid_redirect_uri"));
    // Missing or `plain` PKCE goes back to the client with an error.
    for extra in [[("code_challenge_method", "plain")], [("code_challenge_method", "")]] {
        let r = h.get(authorize_url(&s, &client_id, &extra)).send().await.unwrap();
        assert_eq!(r.status(), 303);
        let to = r.headers()["location"].to_str().unwrap();
        assert!(to.starts_with("http://127.0.0.1:9/callback?error=invalid_request"), "{to}");
        assert_eq!(param(to, "state").as_deref(), Some("s-1"));
        assert_eq!(param(to, "iss"), Some(s.url("/oauth")));
    }

    // A good request waits for a person on the consent page.
    let r = h.get(authorize_url(&s, &client_id, &[])).send().await.unwrap();
    assert_eq!(r.status(), 303);
    let id = r.headers()["location"].to_str().unwrap().strip_prefix("/ui/consent/").unwrap().to_string();
    let v: Value = h.get(s.url(&format!("/oauth/requests/{id}"))).send().await.unwrap().json().await.unwrap();
    assert_eq!((v["signed_in"].clone(), v["request"]["client_name"].clone()), (json!(false), json!("Test <App>")));
    assert!(v["csrf"].is_null());

    // Consent by anything but a person is refused: no credential, a bridge key, the admin key.
    let approve = s.url(&format!("/oauth/requests/{id}/approve"));
    let bridge = env.bridge_key("ci", &["agents", "memory", "admin"]);
    let admin = admin_key(&env);
    for (bearer, status) in [(None, 401), (Some(bridge.as_str()), 403), (Some(admin.as_str()), 403)] {
        let mut r = h.post(&approve).json(&json!({"scopes": ["memory"]}));
        if let Some(b) = bearer {
            r = r.bearer_auth(b);
        }
        let r = r.send().await.unwrap();
        assert_eq!(r.status(), status);
        assert!(r.text().await.unwrap().contains("oauth.person_required"));
    }
    let (cookie, csrf) = sign_in(&s, &on(&s, &link(&env))).await;
    let r = h.post(&approve).header("cookie", &cookie).json(&json!({"scopes": ["memory"]})).send().await.unwrap();
    assert_eq!(r.status(), 403, "no CSRF token");
    let v: Value = h
        .get(s.url(&format!("/oauth/requests/{id}")))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["signed_in"], true);
    assert_eq!(v["csrf"], csrf.as_str());
    let r = h
        .post(&approve)
        .header("cookie", &cookie)
        .header("x-csrf-token", &csrf)
        .json(&json!({"scopes": ["memory"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let back = r.json::<Value>().await.unwrap()["redirect"].as_str().unwrap().to_string();
    assert_eq!((param(&back, "state"), param(&back, "iss")), (Some("s-1".into()), Some(s.url("/oauth"))));
    let code = param(&back, "code").unwrap();

    // The code: a wrong verifier or another redirect URI is refused and spends nothing.
    let bad_verifier = "x".repeat(50);
    let form = |code: &str, verifier: &str, redirect: &str| {
        vec![
            ("grant_type", "authorization_code".to_string()),
            ("code", code.to_string()),
            ("client_id", client_id.clone()),
            ("redirect_uri", redirect.to_string()),
            ("code_verifier", verifier.to_string()),
        ]
    };
    let send = |f: Vec<(&'static str, String)>| {
        let s = &s;
        async move {
            let f: Vec<(&str, &str)> = f.iter().map(|(k, v)| (*k, v.as_str())).collect();
            token(s, &f).await
        }
    };
    let (st, v) = send(form(&code, &bad_verifier, "http://127.0.0.1:9/callback")).await;
    assert_eq!((st, v["error"].clone()), (400, json!("invalid_grant")));
    let (st, v) = send(form(&code, VERIFIER, "http://127.0.0.1:9/other")).await;
    assert_eq!((st, v["error"].clone()), (400, json!("invalid_grant")));
    let (st, v) = send(vec![("grant_type", "password".into()), ("client_id", client_id.clone())]).await;
    assert_eq!((st, v["error"].clone()), (400, json!("unsupported_grant_type")));
    let (st, v) = send(form(&code, VERIFIER, "http://127.0.0.1:9/callback")).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!((v["token_type"].clone(), v["scope"].clone()), (json!("Bearer"), json!("memory")));
    let access = v["access_token"].as_str().unwrap().to_string();
    let refresh = v["refresh_token"].as_str().unwrap().to_string();

    // The token opens its own resource only.
    assert_eq!(status_with(&s, "/oauth/memory/mcp", &access).await.0, 200);
    assert_eq!(status_with(&s, "/mcp/memory/mcp", &access).await.0, 401);
    let (st, www) = status_with(&s, "/oauth/admin/mcp", &access).await;
    assert!(st == 401 && www.contains("error=\"invalid_token\""), "{st} {www}");
    assert_eq!(h.get(s.url("/api/status")).bearer_auth(&access).send().await.unwrap().status(), 401);

    // The code again: refused, and the grant it bought ends.
    let (st, v) = send(form(&code, VERIFIER, "http://127.0.0.1:9/callback")).await;
    assert_eq!((st, v["error"].clone()), (400, json!("invalid_grant")));
    assert_eq!(status_with(&s, "/oauth/memory/mcp", &access).await.0, 401);
    let (st, _) = send(vec![
        ("grant_type", "refresh_token".into()),
        ("refresh_token", refresh.clone()),
        ("client_id", client_id.clone()),
    ])
    .await;
    assert_eq!(st, 400, "the grant's refresh token ended with it");

    // A new consent; refresh rotates; the spent refresh token again ends the grant.
    let code = consent(&s, &client_id, &cookie, &csrf).await;
    let (_, v) = send(form(&code, VERIFIER, "http://127.0.0.1:9/callback")).await;
    let (a1, r1) = (v["access_token"].as_str().unwrap().to_string(), v["refresh_token"].as_str().unwrap().to_string());
    let refresh_form = |r: &str| {
        vec![("grant_type", "refresh_token"), ("refresh_token", r), ("client_id", client_id.as_str())]
            .into_iter()
            .map(|(k, v)| (k, v.to_string()))
            .collect::<Vec<_>>()
    };
    let (st, v) = send(refresh_form(&r1)).await;
    assert_eq!(st, 200, "{v}");
    let a2 = v["access_token"].as_str().unwrap().to_string();
    assert_eq!(status_with(&s, "/oauth/memory/mcp", &a1).await.0, 401, "the old access token ends with a refresh");
    assert_eq!(status_with(&s, "/oauth/memory/mcp", &a2).await.0, 200);
    let (st, v) = send(refresh_form(&r1)).await;
    assert_eq!((st, v["error"].clone()), (400, json!("invalid_grant")));
    assert_eq!(status_with(&s, "/oauth/memory/mcp", &a2).await.0, 401, "reuse ends the whole grant");

    // The approval made a bridge client with its origin; revoking it ends every token.
    let code = consent(&s, &client_id, &cookie, &csrf).await;
    let (_, v) = send(form(&code, VERIFIER, "http://127.0.0.1:9/callback")).await;
    let (a3, r3) = (v["access_token"].as_str().unwrap().to_string(), v["refresh_token"].as_str().unwrap().to_string());
    let list = env.json(&["bridge", "list", "--json"]);
    let mine = list.as_array().unwrap().iter().find(|c| c["origin"] == format!("oauth:{client_id}")).unwrap().clone();
    assert_eq!(mine["scopes"], json!(["memory"]));
    let name = mine["name"].as_str().unwrap();
    assert_eq!(name, "oauth-test-app");
    assert_eq!(status_with(&s, "/oauth/memory/mcp", &a3).await.0, 200);
    env.ok(&["bridge", "revoke", name, "--yes"]);
    assert!(
        eventually(WAIT, async || status_with(&s, "/oauth/memory/mcp", &a3).await.0 == 401).await,
        "bridge revoke ends the client's tokens"
    );
    assert_eq!(send(refresh_form(&r3)).await.0, 400);
    let grants = env.json(&["oauth", "grants", "--all", "--json"]);
    assert!(grants.as_array().unwrap().iter().all(|g| !g["revoked_at"].is_null()), "{grants}");

    // Every decision and token request is in the audit log; no token is.
    let rows = env.ok(&["activity", "list", "--json", "--limit", "500"]);
    for tool in ["oauth_client_register", "oauth_consent_approve", "oauth_token_code", "oauth_token_refresh"] {
        assert!(rows.contains(tool), "{tool} not audited");
    }
    for secret in [&access, &refresh, &a3, &r3, &code] {
        assert!(!rows.contains(secret.as_str()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oauth_is_off_until_the_operator_turns_it_on_with_a_public_url() {
    let env = Env::new();
    let o = env.run(&["config", "set", "oauth.enabled", "true"]);
    assert_ne!(o.code(), 0);
    assert!(o.stderr().contains("network.public_url"), "{}", o.stderr());
    env.ok(&["config", "set", "network.public_url", "http://192.0.2.1:8080"]);
    let o = env.run(&["config", "set", "oauth.enabled", "true"]);
    assert!(o.stderr().contains("https"), "{}", o.stderr());
    let s = env.serve();
    let r = post_form(&s, "/oauth/token", &[("grant_type", "refresh_token")]).await;
    assert_eq!(r.status(), 404);
    assert!(r.text().await.unwrap().contains("oauth.off"));
    let r = http().get(s.url("/.well-known/oauth-authorization-server/oauth")).send().await.unwrap();
    assert_eq!(r.status(), 404);
    let o = env.run(&["oauth", "urls"]);
    assert!(o.stderr().contains("oauth.off"), "{}", o.stderr());
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Run an external OAuth client (`cmd`, its callback on `cb`) against `server`: it prints
/// the authorization URL, a person signed in to `b` reads the consent page and approves,
/// and the client goes on; its last line, parsed.
async fn consented_in_chromium(
    b: &crate::support::browser::Browser,
    s: &Server,
    mut cmd: tokio::process::Command,
    client_name: &str,
) -> Value {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};
    let limit = std::time::Duration::from_secs(120);
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut out = tokio::io::BufReader::new(child.stdout.take().unwrap());
    let mut err_pipe = child.stderr.take().unwrap();
    let err = tokio::spawn(async move {
        let mut e = String::new();
        let _ = err_pipe.read_to_string(&mut e).await;
        e
    });
    let mut line = String::new();
    tokio::time::timeout(limit, out.read_line(&mut line)).await.unwrap().unwrap();
    let Ok(first) = serde_json::from_str::<Value>(line.trim()) else {
        let _ = child.kill().await;
        panic!("no authorize URL: {line:?}\n{}", err.await.unwrap());
    };
    let authorize = first["authorize"].as_str().unwrap();
    assert!(authorize.starts_with(&s.url("/oauth/authorize?")), "{authorize}");

    // The person reads the request and approves it.
    b.goto(authorize).await;
    let approve = b.wait_for(CONSENT_SHOWN, WAIT).await.unwrap_or_else(|| panic!("no consent form"));
    let page = b.source().await;
    assert!(page.contains(client_name) && page.contains("hal0-memory"), "{page}");
    approve.click().await;

    let mut rest = String::new();
    tokio::time::timeout(limit, out.read_to_string(&mut rest)).await.unwrap().unwrap();
    let status = tokio::time::timeout(limit, child.wait()).await.unwrap().unwrap();
    let err = err.await.unwrap();
    assert!(status.success(), "the client failed: {err}");
    serde_json::from_str(rest.lines().last().unwrap_or_default()).unwrap_or_else(|e| panic!("{e}: {rest}\n{err}"))
}

/// Skip (or fail, when CI requires the external clients) without `path`.
fn have(path: &std::path::Path) -> bool {
    if path.exists() {
        return true;
    }
    missing_external(path.display(), "run tests/external/setup.sh");
    false
}

/// A box with OAuth on and a browser whose person is signed in to its dashboard.
pub(crate) async fn signed_in_box() -> Option<(crate::support::browser::Browser, Env, Server)> {
    let b = browser(900, 1000).await?;
    let (env, s) = oauth_box();
    b.goto(&on(&s, &link(&env))).await;
    assert!(b.wait_for("#pending", WAIT).await.is_some(), "not signed in: {}", b.source().await);
    Some((b, env, s))
}

fn free_port() -> String {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port().to_string()
}

/// The client's approval made a bridge client with its origin.
fn has_bridge_client(env: &Env, client_id: &str) -> bool {
    let list = env.json(&["bridge", "list", "--json"]);
    list.as_array().unwrap().iter().any(|c| c["origin"] == format!("oauth:{client_id}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_oauth_client_connects_after_a_person_consents_in_chromium() {
    let python = repo().join(".venv/bin/python");
    if !have(&python) {
        return;
    }
    let Some((b, env, s)) = signed_in_box().await else { return };
    let mut cmd = tokio::process::Command::new(&python);
    cmd.arg(repo().join("tests/external/oauth_client.py")).args([
        "--url",
        &s.url("/oauth/memory/mcp"),
        "--callback-port",
        &free_port(),
    ]);
    let report = consented_in_chromium(&b, &s, cmd, "hal0 test client (Python SDK)").await;
    assert_eq!(report["authorize_urls"], 1, "one consent: {report}");
    assert_eq!(report["server_name"], "hal0-memory");
    assert!(report["tools"].as_array().unwrap().iter().any(|t| t == "memory_search"), "{report}");
    assert_eq!(report["add_error"], false);
    assert!(report["search_text"].as_str().unwrap().contains("herons"), "{report}");
    assert_eq!(report["scope"], "memory");
    assert_eq!(report["first_access_prefix"], "hal0at_");
    assert_eq!(report["refreshed"], true, "{report}");
    assert_eq!((report["old_token_status"].clone(), report["live_token_status"].clone()), (json!(401), json!(200)));
    assert_eq!((report["revoke_status"].clone(), report["after_revoke_status"].clone()), (json!(200), json!(401)));
    assert!(report["after_revoke_www_authenticate"].as_str().unwrap().contains("invalid_token"), "{report}");
    assert_eq!(report["issuer"], s.url("/oauth"));
    assert!(has_bridge_client(&env, report["client_id"].as_str().unwrap()));
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_oauth_client_connects_after_a_person_consents_in_chromium() {
    let sdk = repo().join(".tools/node/node_modules/@modelcontextprotocol/sdk");
    if !have(&sdk) {
        return;
    }
    let Some((b, env, s)) = signed_in_box().await else { return };
    let mut cmd = tokio::process::Command::new("node");
    cmd.arg(repo().join("tests/external/oauth_client.mjs"))
        .args([s.url("/oauth/memory/mcp"), free_port()])
        .env("HAL0_TS_SDK", &sdk);
    let report = consented_in_chromium(&b, &s, cmd, "hal0 test client (TypeScript SDK)").await;
    assert_eq!(report["authorize_urls"], 1, "one consent: {report}");
    assert_eq!(report["authorize_urls_after_refresh"], 1, "the refresh needed no person: {report}");
    assert_eq!(report["iss"], s.url("/oauth"));
    assert_eq!(report["server_name"], "hal0-memory");
    assert!(report["tools"].as_array().unwrap().iter().any(|t| t == "memory_add"), "{report}");
    assert_eq!(report["add_error"], false);
    assert!(report["search_text"].as_str().unwrap().contains("kingfishers"), "{report}");
    assert_eq!(report["refreshed"], true, "{report}");
    assert_eq!((report["live_token_status"].clone(), report["revoke_status"].clone()), (json!(200), json!(200)));
    assert_eq!(report["after_revoke_status"], 401);
    assert!(has_bridge_client(&env, report["client_id"].as_str().unwrap()));
    b.close().await;
}

/// A client metadata document server over https (a test CA's certificate for
/// `cimd.test`): `/client.json` (good, redirecting to `callback`), `/junk.json`,
/// `/big.json` (6 MB), `/other.json` (names another client_id), `/js.json` (a
/// `javascript:` redirect). Returns the https port and the CA file.
async fn cimd_server(dir: &std::path::Path, callback: &str) -> (u16, PathBuf) {
    use crate::support::tls::{Ca, Flaw};
    let ca = Ca::new();
    let ca_file = ca.write(dir);
    let plain = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let plain_addr = plain.local_addr().unwrap();
    let leaf = ca.leaf(&["cimd.test"], Flaw::None);
    let tls = crate::support::tls::relay(&leaf, plain_addr).await;
    let base = format!("https://cimd.test:{}", tls.port());
    let doc = |path: &str, redirect: &str| {
        json!({"client_id": format!("{base}{path}"), "client_name": "CIMD test client", "redirect_uris": [redirect],
               "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
               "token_endpoint_auth_method": "none"})
    };
    let (good, other, js) = (
        doc("/client.json", callback),
        json!({"client_id": "https://elsewhere.example/client.json", "redirect_uris": [callback]}),
        doc("/js.json", "javascript:alert(1)"),
    );
    let app = axum::Router::new()
        .route("/client.json", axum::routing::get(move || async move { axum::Json(good) }))
        .route("/other.json", axum::routing::get(move || async move { axum::Json(other) }))
        .route("/js.json", axum::routing::get(move || async move { axum::Json(js) }))
        .route("/junk.json", axum::routing::get(|| async { "<html>not a document</html>" }))
        .route("/big.json", axum::routing::get(|| async { " ".repeat(6 * 1024 * 1024) }));
    tokio::spawn(async move { axum::serve(plain, app).await.unwrap() });
    (tls.port(), ca_file)
}

fn cimd_envs(ca_file: &std::path::Path) -> Vec<(&'static str, String)> {
    vec![
        ("HAL0_TEST_ONLY_FETCH_NAMES", "cimd.test=127.0.0.1".to_string()),
        ("HAL0_TEST_ONLY_FETCH_CA", ca_file.display().to_string()),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_metadata_document_is_fetched_behind_the_guard_and_bad_ones_issue_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (port, ca_file) = cimd_server(dir.path(), "http://127.0.0.1:9/callback").await;
    let envs = cimd_envs(&ca_file);
    let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (env, s) = oauth_box_with(&envs);
    let meta: Value =
        http().get(s.url("/.well-known/oauth-authorization-server/oauth")).send().await.unwrap().json().await.unwrap();
    assert_eq!(meta["client_id_metadata_document_supported"], true);

    // Refused documents: a page, no request kept, no client stored.
    let url = |p: &str| format!("https://cimd.test:{port}{p}");
    for (client_id, words) in [
        (url("/junk.json"), "not a JSON client metadata document"),
        (url("/big.json"), "larger than"),
        (url("/other.json"), "names another client_id"),
        (url("/js.json"), "invalid_redirect_uri"),
        (url("/missing.json"), "404"),
        ("https://10.1.2.3/client.json".to_string(), "private"),
        ("https://127.0.0.1/client.json".to_string(), "loopback"),
        ("https://cimd.test/".to_string(), "https URL with a path"),
    ] {
        let r = http().get(authorize_url(&s, &client_id, &[])).send().await.unwrap();
        assert_eq!(r.status(), 400, "{client_id}");
        let page = r.text().await.unwrap();
        assert!(page.contains("oauth.invalid") && page.contains(words), "{client_id}: {page}");
    }
    assert_eq!(env.json(&["oauth", "client", "list", "--json"]), json!([]));

    // The good one: consent, then the code for tokens with the URL as client_id.
    let (cookie, csrf) = sign_in(&s, &on(&s, &link(&env))).await;
    let client_id = url("/client.json");
    let code = consent(&s, &client_id, &cookie, &csrf).await;
    let access = access_token(&s, &client_id, &code).await;
    assert_eq!(status_with(&s, "/oauth/memory/mcp", &access).await.0, 200);
    let list = env.json(&["oauth", "client", "list", "--json"]);
    assert_eq!((list[0]["client_id"].as_str(), list[0]["kind"].as_str()), (Some(client_id.as_str()), Some("metadata")));
    assert_eq!(list[0]["name"], "CIMD test client");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_connects_with_a_client_metadata_document() {
    let python = repo().join(".venv/bin/python");
    if !have(&python) {
        return;
    }
    let Some(b) = browser(900, 1000).await else { return };
    let dir = tempfile::tempdir().unwrap();
    let cb = free_port();
    let (port, ca_file) = cimd_server(dir.path(), &format!("http://127.0.0.1:{cb}/callback")).await;
    let envs = cimd_envs(&ca_file);
    let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (env, s) = oauth_box_with(&envs);
    b.goto(&on(&s, &link(&env))).await;
    assert!(b.wait_for("#pending", WAIT).await.is_some(), "not signed in: {}", b.source().await);
    let metadata_url = format!("https://cimd.test:{port}/client.json");
    let mut cmd = tokio::process::Command::new(&python);
    cmd.arg(repo().join("tests/external/oauth_client.py")).args([
        "--url",
        &s.url("/oauth/memory/mcp"),
        "--callback-port",
        &cb,
        "--client-metadata-url",
        &metadata_url,
    ]);
    let report = consented_in_chromium(&b, &s, cmd, "CIMD test client").await;
    assert_eq!(report["client_id"], metadata_url.as_str(), "the SDK used the document, not DCR: {report}");
    assert_eq!(report["refreshed"], true, "{report}");
    assert!(report["search_text"].as_str().unwrap().contains("herons"), "{report}");
    assert!(has_bridge_client(&env, &metadata_url));
    b.close().await;
}

/// The card of an OAuth request in the inbox.
fn card_of(env: &Env, request: &str) -> Value {
    let rows = env.json(&["agent", "approvals", "list", "--json"]);
    rows.as_array()
        .unwrap()
        .iter()
        .find(|r| r["arguments"]["request_id"] == request)
        .cloned()
        .unwrap_or_else(|| panic!("no card for {request}: {rows}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_waits_in_the_inbox_and_the_browser_carries_on_once_a_person_decides_there() {
    let (env, s) = oauth_box();
    let client = public_client(&s).await;
    let begin = async || {
        let r = http().get(authorize_url(&s, &client, &[])).send().await.unwrap();
        r.headers()["location"].to_str().unwrap().strip_prefix("/ui/consent/").unwrap().to_string()
    };
    let resume = async |id: &str| {
        let r = http().post(s.url(&format!("/oauth/requests/{id}/continue"))).json(&json!({})).send().await.unwrap();
        (r.status().as_u16(), r.json::<Value>().await.unwrap())
    };

    // Approved at the shell: the browser's next look finds it approved and fetches its code.
    let id = begin().await;
    let card = card_of(&env, &id);
    assert_eq!((card["kind"].as_str(), card["status"].as_str()), (Some("oauth_consent"), Some("pending")));
    assert!(card["preview"].as_str().unwrap().contains("hal0-memory"), "{card}");
    let (st, v) = resume(&id).await;
    assert_eq!((st, v["error"]["code"].clone()), (409, json!("oauth.request_pending")));
    env.ok(&["agent", "approvals", "approve", card["id"].as_str().unwrap(), "--yes"]);
    let v: Value = http().get(s.url(&format!("/oauth/requests/{id}"))).send().await.unwrap().json().await.unwrap();
    assert_eq!(
        (v["request"]["status"].clone(), v["request"]["code_issued"].clone()),
        (json!("approved"), json!(false))
    );
    let (st, v) = resume(&id).await;
    assert_eq!(st, 200, "{v}");
    let back = v["redirect"].as_str().unwrap();
    assert_eq!(param(back, "state").as_deref(), Some("s-1"));
    let access = access_token(&s, &client, &param(back, "code").unwrap()).await;
    assert_eq!(status_with(&s, "/oauth/memory/mcp", &access).await.0, 200);
    let (st, v) = resume(&id).await;
    assert_eq!((st, v["error"]["code"].clone()), (409, json!("oauth.request_decided")), "one code per request");

    // Denied at the shell: the browser goes back with access_denied, and no code.
    let id = begin().await;
    let card = card_of(&env, &id);
    env.ok(&["agent", "approvals", "deny", card["id"].as_str().unwrap(), "--reason", "not mine", "--yes"]);
    let (st, v) = resume(&id).await;
    assert_eq!(st, 200);
    let back = v["redirect"].as_str().unwrap();
    assert_eq!((param(back, "error").as_deref(), param(back, "code")), (Some("access_denied"), None));

    // Decided on the consent page: the card is withdrawn.
    let (cookie, csrf) = sign_in(&s, &on(&s, &link(&env))).await;
    let code = consent(&s, &client, &cookie, &csrf).await;
    assert!(code.starts_with("hal0ac_"));
    let rows = env.json(&["agent", "approvals", "list", "--all", "--json"]);
    let statuses: Vec<&str> = rows.as_array().unwrap().iter().filter_map(|r| r["status"].as_str()).collect();
    assert_eq!(statuses.iter().filter(|s| **s == "withdrawn").count(), 1, "{rows}");
    assert_eq!(statuses.iter().filter(|s| **s == "pending").count(), 0, "{rows}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_connects_when_the_person_approves_in_the_inbox_not_at_the_browser() {
    let python = repo().join(".venv/bin/python");
    if !have(&python) {
        return;
    }
    let Some(b) = browser(900, 1000).await else { return };
    let (env, s) = oauth_box();
    let mut child = tokio::process::Command::new(&python)
        .arg(repo().join("tests/external/oauth_client.py"))
        .args(["--url", &s.url("/oauth/memory/mcp"), "--callback-port", &free_port()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};
    let mut out = tokio::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let limit = std::time::Duration::from_secs(120);
    tokio::time::timeout(limit, out.read_line(&mut line)).await.unwrap().unwrap();
    let authorize: Value = serde_json::from_str(line.trim()).unwrap();
    // Nobody is signed in at this browser: the page says so and waits.
    b.goto(authorize["authorize"].as_str().unwrap()).await;
    assert!(b.wait_for("#signin:not([hidden])", WAIT).await.is_some(), "{}", b.source().await);
    let id = b.eval("return document.querySelector('#consent').dataset.request").await;
    let card = card_of(&env, id.as_str().unwrap());
    assert!(
        eventually(WAIT, async || b.source().await.contains(card["id"].as_str().unwrap())).await,
        "the page names the card"
    );
    // A person approves the card at the box's shell; the page carries on by itself.
    env.ok(&["agent", "approvals", "approve", card["id"].as_str().unwrap(), "--yes"]);
    let mut rest = String::new();
    tokio::time::timeout(limit, out.read_to_string(&mut rest)).await.unwrap().unwrap();
    assert!(tokio::time::timeout(limit, child.wait()).await.unwrap().unwrap().success());
    let report: Value = serde_json::from_str(rest.lines().last().unwrap()).unwrap();
    assert_eq!(report["authorize_urls"], 1, "{report}");
    assert_eq!(report["scope"], "memory");
    assert!(report["search_text"].as_str().unwrap().contains("herons"), "{report}");
    b.close().await;
}

/// Claude Code's environment in a scratch HOME.
fn claude_cmd(home: &std::path::Path, program: &std::path::Path) -> std::process::Command {
    let mut c = std::process::Command::new(program);
    c.env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .current_dir(home);
    c
}

/// The real Claude Code CLI signs in to an OAuth mount (`claude mcp login --no-browser`,
/// in a pseudo-terminal from `script`, as on an SSH session) with a client the operator
/// added (`hal0 oauth client add`: Claude Code's own client id is a metadata document on
/// claude.ai, which this sandbox cannot reach); a person consents in Chromium; Claude Code
/// takes the code at its callback port, then `claude -p` (the scripted stand-in for the
/// Messages API) calls a hal0-memory tool with the token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_logs_in_over_oauth_and_calls_a_tool() {
    let claude = repo().join(".tools/node/node_modules/.bin/claude");
    let python = repo().join(".venv/bin/python");
    let fake = repo().join("../shared/tools/fake_anthropic.py");
    if !(have(&claude) && have(&python) && have(&fake) && have(std::path::Path::new("/usr/bin/script"))) {
        return;
    }
    let Some((b, env, s)) = signed_in_box().await else { return };
    let cb = free_port();
    let added = env.json(&[
        "oauth",
        "client",
        "add",
        "Claude Code",
        "--redirect-uri",
        &format!("http://localhost:{cb}/callback"),
        "--public",
        "--json",
    ]);
    let client_id = added["client_id"].as_str().unwrap().to_string();
    let home = tempfile::tempdir().unwrap();
    let out = claude_cmd(home.path(), &claude)
        .args(["mcp", "add", "--transport", "http", "hal0-memory", &s.url("/oauth/memory/mcp")])
        .args(["--client-id", &client_id, "--callback-port", &cb])
        .output()
        .unwrap();
    assert!(out.status.success(), "claude mcp add: {}", String::from_utf8_lossy(&out.stderr));

    // `claude mcp login` wants a terminal: `script` gives it one; its output goes to a file.
    let transcript = home.path().join("login.out");
    let login = format!("{} mcp login hal0-memory --no-browser", claude.display());
    let mut child = claude_cmd(home.path(), std::path::Path::new("/usr/bin/script"))
        .args(["-qfec", &login])
        .arg(&transcript)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let find = regex::Regex::new(r"http://127\.0\.0\.1:\d+/oauth/authorize[^\x1b\x07\s]*").unwrap();
    let mut authorize = None;
    for _ in 0..600 {
        let text = std::fs::read_to_string(&transcript).unwrap_or_default();
        if let Some(m) = find.find(&text) {
            authorize = Some(m.as_str().to_string());
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let authorize = authorize.unwrap_or_else(|| {
        let _ = child.kill();
        panic!("no authorization URL: {}", std::fs::read_to_string(&transcript).unwrap_or_default())
    });
    assert!(authorize.contains(&format!("client_id={client_id}")), "{authorize}");

    b.goto(&authorize).await;
    let approve = b.wait_for(CONSENT_SHOWN, WAIT).await.unwrap_or_else(|| panic!("no consent form"));
    assert!(b.source().await.contains("Claude Code"));
    approve.click().await;
    let done = eventually(std::time::Duration::from_secs(60), async || matches!(child.try_wait(), Ok(Some(_)))).await;
    let text = std::fs::read_to_string(&transcript).unwrap_or_default();
    assert!(done, "claude mcp login did not finish: {text}");
    assert!(text.contains("Authenticated with \"hal0-memory\""), "{text}");
    drop(child.stdin.take());

    // A real tool call with the token Claude Code holds.
    let port: u16 = free_port().parse().unwrap();
    let plan = json!([["mcp__hal0-memory__memory_add", {"text": "Claude Code wrote this over OAuth"}]]);
    let mut api = std::process::Command::new(&python)
        .arg(&fake)
        .arg(port.to_string())
        .env("FAKE_PLAN", plan.to_string())
        .env("FAKE_LOG", home.path().join("requests.jsonl"))
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        eventually(std::time::Duration::from_secs(30), async || std::net::TcpStream::connect(("127.0.0.1", port))
            .is_ok())
        .await
    );
    let mut run = claude_cmd(home.path(), &claude);
    run.env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{port}"))
        .env("ANTHROPIC_API_KEY", "sk-test")
        .args([
            "-p",
            "go",
            "--output-format",
            "stream-json",
            "--verbose",
            "--allowedTools",
            "mcp__hal0-memory__memory_add",
        ])
        .stdin(std::process::Stdio::null());
    let out = tokio::task::spawn_blocking(move || run.output().unwrap()).await.unwrap();
    let _ = api.kill();
    let _ = api.wait();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["type"] == "user")
        .find_map(|l| l["message"]["content"].as_array()?.iter().find(|c| c["type"] == "tool_result").cloned())
        .unwrap_or_else(|| panic!("no tool result: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    assert_ne!(result["is_error"], true, "{result}");
    assert!(result.to_string().contains("mem_"), "{result}");
    // The note is there, written as the bridge client the person's approval made.
    let list = env.json(&["bridge", "list", "--json"]);
    let mine = list.as_array().unwrap().iter().find(|c| c["origin"] == format!("oauth:{client_id}")).unwrap().clone();
    assert_eq!(mine["name"], "oauth-claude-code");
    b.close().await;
}

/// An open stream on an OAuth token ends with `event: revoked` when its grant is ended by
/// the operator, or its bridge client is revoked; a client's own RFC 7009 revocation too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_streams_on_a_token_end_when_its_grant_ends() {
    use crate::live_changes::{drain, open_stream};
    let (env, s) = oauth_box();
    let (cookie, csrf) = sign_in(&s, &on(&s, &link(&env))).await;
    let client = public_client(&s).await;
    let url = s.url("/oauth/memory/mcp");
    let h = reqwest::Client::new();
    let limit = std::time::Duration::from_secs(20);

    let t1 = access_token(&s, &client, &consent(&s, &client, &cookie, &csrf).await).await;
    let stream = open_stream(&h, &url, &t1).await;
    let grants = env.json(&["oauth", "grants", "--json"]);
    let grant = grants[0]["id"].as_str().unwrap().to_string();
    env.ok(&["oauth", "revoke", &grant]);
    assert!(drain(stream, limit).await.contains("event: revoked"));

    let t2 = access_token(&s, &client, &consent(&s, &client, &cookie, &csrf).await).await;
    let stream = open_stream(&h, &url, &t2).await;
    let r = post_form(&s, "/oauth/revoke", &[("token", &t2), ("client_id", &client)]).await;
    assert_eq!(r.status(), 200);
    assert!(drain(stream, limit).await.contains("event: revoked"));

    let t3 = access_token(&s, &client, &consent(&s, &client, &cookie, &csrf).await).await;
    let stream = open_stream(&h, &url, &t3).await;
    env.ok(&["bridge", "revoke", "oauth-matrix", "--yes"]);
    assert!(drain(stream, limit).await.contains("event: revoked"));
    // Its grants ended with it; an operator's unknown grant id is a clear error.
    let o = env.run(&["oauth", "revoke", "og_nope"]);
    assert!(o.code() != 0 && o.stderr().contains("oauth.grant_unknown"), "{}", o.stderr());
}

/// A request that expires undecided takes its card out of the inbox (anyone who reaches
/// the box can start one, so cards never outnumber live requests).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_request_leaves_the_inbox() {
    let (env, s) = oauth_box();
    let client = public_client(&s).await;
    let r = http().get(authorize_url(&s, &client, &[])).send().await.unwrap();
    let first = r.headers()["location"].to_str().unwrap().strip_prefix("/ui/consent/").unwrap().to_string();
    let card = card_of(&env, &first);
    let db = rusqlite::Connection::open(env.state_dir().join("hal0.db")).unwrap();
    db.busy_timeout(std::time::Duration::from_secs(5)).unwrap();
    db.execute("UPDATE oauth_requests SET expires_at = '2000-01-01T00:00:00Z' WHERE id = ?1", [&first]).unwrap();
    drop(db);
    let r = http().get(authorize_url(&s, &client, &[])).send().await.unwrap();
    assert_eq!(r.status(), 303);
    let rows = env.json(&["agent", "approvals", "list", "--all", "--json"]);
    let old = rows.as_array().unwrap().iter().find(|r| r["id"] == card["id"]).unwrap().clone();
    assert_eq!(old["status"], "withdrawn", "{old}");
    let pending = rows.as_array().unwrap().iter().filter(|r| r["status"] == "pending").count();
    assert_eq!(pending, 1, "{rows}");
}
