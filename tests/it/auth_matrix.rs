//! The auth matrix: every route and mount × every kind of credential × auth off and
//! armed, against a running `hal0 serve`. The expected table is written out by hand from
//! the spec's tier tables, not computed by hal0's own code.

use crate::support::upstream::RmcpUpstream;
use crate::support::*;

const ROUTES: &[(&str, &str)] = &[
    ("health", "GET /api/health"),
    ("root", "GET /"),
    ("me", "GET /api/bridge/me"),
    ("status", "GET /api/status"),
    ("clients", "GET /api/bridge/clients"),
    ("unknown", "GET /api/nope"),
    ("settings", "PUT /api/settings"),
    ("secrets", "PUT /api/secrets/MATRIX_SECRET"),
    ("agents", "POST /mcp/agents/mcp"),
    ("memory", "POST /mcp/memory/mcp"),
    ("admin", "POST /mcp/admin/mcp"),
    ("proxy", "POST /mcp/proxy/up/mcp"),
    // An allowed `tools/call` in the consumer's open session: the proxy's wire path.
    ("proxy_call", "POST /mcp/proxy/up/mcp +session"),
    ("relay", "POST /mcp/relay/mcp"),
    ("relay_ws", "GET /bridge/connect"),
    ("relay_agents", "GET /api/relay/agents"),
    ("relay_exchanges", "GET /api/relay/exchanges"),
    ("store", "GET /api/store"),
    ("approve", "POST /api/agent/approvals/ap_none/approve"),
    ("deny", "POST /api/agent/approvals/ap_none/deny"),
    ("run_get", "GET /api/runs/run_none"),
    ("run_stream", "GET /api/runs/run_none/stream"),
    ("run_stop", "POST /api/runs/run_none/stop"),
    ("keys", "GET /api/mcp/keys"),
    ("accounts", "GET /api/mcp/up/accounts"),
    ("account_connect", "POST /api/mcp/up/connect"),
    ("account_disconnect", "POST /api/mcp/up/disconnect"),
    ("approval_count", "GET /api/agent/approvals/count"),
    ("approval_rules", "GET /api/agent/approvals/rules"),
    ("rule_remove", "DELETE /api/agent/approvals/rules/ar_none"),
    ("purge", "POST /api/bridge/clients/nobody/purge"),
    ("upstream_start", "GET /upstream-oauth/start/not-a-token"),
    ("ui_runs", "GET /ui/runs"),
    ("metrics", "GET /metrics"),
    ("activity_verify", "GET /api/activity/verify"),
    ("a2a", "POST /a2a/hermes"),
    ("a2a_card", "GET /a2a/hermes/.well-known/agent-card.json"),
    ("a2a_relay", "POST /a2a/relay/bot"),
    ("a2a_index", "GET /a2a/agents"),
    ("a2a_rest", "POST /a2a/rest/hermes/message:send"),
    ("passkey_sign_in", "POST /ui/login/passkey"),
    ("account_passkeys", "GET /ui/account/passkeys"),
    ("passkey_options", "POST /ui/account/passkeys/options"),
    ("passkey_add", "POST /ui/account/passkeys"),
    ("passkey_remove", "POST /ui/account/passkeys/pk_none/remove"),
];

/// Credential columns; the names of bridge keys give their scopes; `consumer` is a proxy key
/// minted for server `up`, `c_other` one minted for server `other`; `b_relay` is a relay bot
/// (`relay` alone, so not even `agents`); `person` is a dashboard session (its cookie and
/// CSRF token, opened with a `hal0 ui login` link).
const CREDS: &[&str] = &[
    "none",
    "bad",
    "badbridge",
    "client",
    "admin",
    "b_agents",
    "b_memory",
    "b_admin",
    "b_all",
    "revoked",
    "consumer",
    "c_other",
    "b_relay",
    "person",
];

/// Expected status per route, in CREDS order. `-` marks a credential that cannot exist in
/// that state (there are no box keys while auth is off).
const OFF: &[(&str, &str)] = &[
    ("health", "200 200 200 -   -   200 200 200 200 200 200 200 200 200"),
    ("root", "200 200 200 -   -   200 200 200 200 200 200 200 200 200"),
    ("me", "401 401 401 -   -   200 200 200 200 401 403 403 200 403"),
    ("status", "200 401 401 -   -   403 403 403 403 401 403 403 403 200"),
    ("clients", "200 401 401 -   -   403 403 403 403 401 403 403 403 200"),
    ("unknown", "404 401 401 -   -   403 403 403 403 401 403 403 403 404"),
    ("settings", "200 401 401 -   -   403 403 403 403 401 403 403 403 200"),
    ("secrets", "200 401 401 -   -   403 403 403 403 401 403 403 403 200"),
    ("agents", "401 401 401 -   -   200 200 200 200 401 403 403 403 403"),
    ("memory", "200 401 401 -   -   403 200 403 200 401 403 403 403 403"),
    ("admin", "200 401 401 -   -   403 403 200 200 401 403 403 403 403"),
    ("proxy", "401 401 401 -   -   403 403 403 403 401 200 403 403 403"),
    ("proxy_call", "401 401 401 -   -   403 403 403 403 401 200 403 403 403"),
    ("relay", "401 401 401 -   -   403 403 403 403 401 403 403 200 403"),
    ("relay_ws", "401 401 401 -   -   403 403 403 403 401 403 403 101 403"),
    ("relay_agents", "200 401 401 -   -   403 403 403 403 401 403 403 403 200"),
    ("relay_exchanges", "200 401 401 -   -   403 403 403 403 401 403 403 403 200"),
    ("store", "200 401 401 -   -   403 403 403 403 401 403 403 403 200"),
    ("approve", "401 401 401 -   -   403 403 403 403 401 403 403 403 404"),
    ("deny", "401 401 401 -   -   403 403 403 403 401 403 403 403 404"),
    ("run_get", "404 401 401 -   -   403 403 403 403 401 403 403 403 404"),
    ("run_stream", "404 401 401 -   -   403 403 403 403 401 403 403 403 404"),
    ("run_stop", "404 401 401 -   -   403 403 403 403 401 403 403 403 404"),
    ("keys", "200 401 401 -   -   403 403 403 403 401 403 403 403 200"),
    ("accounts", "200 401 401 -   -   403 403 403 403 401 403 403 403 200"),
    // `up` answers without asking for a credential: it needs no account (409), has none (404).
    ("account_connect", "409 401 401 -   -   403 403 403 403 401 403 403 403 409"),
    ("account_disconnect", "404 401 401 -   -   403 403 403 403 401 403 403 403 404"),
    ("approval_count", "200 401 401 -   -   403 403 403 403 401 403 403 403 200"),
    ("approval_rules", "200 401 401 -   -   403 403 403 403 401 403 403 403 200"),
    ("rule_remove", "404 401 401 -   -   403 403 403 403 401 403 403 403 404"),
    ("purge", "404 401 401 -   -   403 403 403 403 401 403 403 403 404"),
    // A start link carries its own sealed token: no key opens it, none is needed.
    ("upstream_start", "400 400 400 -   -   400 400 400 400 400 400 400 400 400"),
    ("ui_runs", "401 401 401 -   -   401 401 401 401 401 401 401 401 200"),
    ("metrics", "200 401 401 -   -   403 403 403 403 401 403 403 403 200"),
    ("activity_verify", "200 401 401 -   -   403 403 403 403 401 403 403 403 200"),
    // The A2A face takes the agents mount's keys; a card is public.
    ("a2a", "401 401 401 -   -   200 200 200 200 401 403 403 403 403"),
    ("a2a_card", "200 200 200 -   -   200 200 200 200 200 200 200 200 200"),
    // A relay bot over A2A takes the relay mount's keys (and `bot` is not listed in
    // [relay].a2a_bots, so a relay key finds no agent there); the index of cards is public.
    ("a2a_relay", "401 401 401 -   -   403 403 403 403 401 403 403 404 403"),
    ("a2a_index", "200 200 200 -   -   200 200 200 200 200 200 200 200 200"),
    // The HTTP+JSON binding: the agents mount's keys; the matrix sends no A2A-Version (400).
    ("a2a_rest", "401 401 401 -   -   400 400 400 400 401 403 403 403 403"),
    // Passkeys: starting a sign-in is open, and refused on an address (the matrix's
    // server is 127.0.0.1: passkeys need a host name); the account routes are the
    // person's own (the matrix's person has no passkey `pk_none`).
    ("passkey_sign_in", "403 403 403 -   -   403 403 403 403 403 403 403 403 403"),
    ("account_passkeys", "401 401 401 -   -   401 401 401 401 401 401 401 401 200"),
    ("passkey_options", "401 401 401 -   -   401 401 401 401 401 401 401 401 403"),
    ("passkey_add", "401 401 401 -   -   401 401 401 401 401 401 401 401 403"),
    ("passkey_remove", "401 401 401 -   -   401 401 401 401 401 401 401 401 404"),
];

const ARMED: &[(&str, &str)] = &[
    ("health", "200 200 200 200 200 200 200 200 200 200 200 200 200 200"),
    ("root", "200 200 200 200 200 200 200 200 200 200 200 200 200 200"),
    ("me", "401 401 401 403 403 200 200 200 200 401 403 403 200 403"),
    ("status", "401 401 401 403 200 403 403 403 403 401 403 403 403 200"),
    ("clients", "401 401 401 403 200 403 403 403 403 401 403 403 403 200"),
    ("unknown", "401 401 401 403 404 403 403 403 403 401 403 403 403 404"),
    ("settings", "401 401 401 403 200 403 403 403 403 401 403 403 403 200"),
    ("secrets", "401 401 401 403 200 403 403 403 403 401 403 403 403 200"),
    ("agents", "401 401 401 403 200 200 200 200 200 401 403 403 403 403"),
    ("memory", "401 401 401 200 200 403 200 403 200 401 403 403 403 403"),
    ("admin", "401 401 401 403 200 403 403 200 200 401 403 403 403 403"),
    ("proxy", "401 401 401 403 200 403 403 403 403 401 200 403 403 403"),
    // The consumer's session is its own: the admin key passes the gate but not the session
    // tie (mcp.session_unknown), as anyone else's would.
    ("proxy_call", "401 401 401 403 404 403 403 403 403 401 200 403 403 403"),
    ("relay", "401 401 401 403 403 403 403 403 403 401 403 403 200 403"),
    ("relay_ws", "401 401 401 403 403 403 403 403 403 401 403 403 101 403"),
    ("relay_agents", "401 401 401 403 200 403 403 403 403 401 403 403 403 200"),
    ("relay_exchanges", "401 401 401 403 200 403 403 403 403 401 403 403 403 200"),
    ("store", "401 401 401 403 200 403 403 403 403 401 403 403 403 200"),
    ("approve", "401 401 401 403 403 403 403 403 403 401 403 403 403 404"),
    ("deny", "401 401 401 403 403 403 403 403 403 401 403 403 403 404"),
    ("run_get", "401 401 401 403 404 403 403 403 403 401 403 403 403 404"),
    ("run_stream", "401 401 401 403 404 403 403 403 403 401 403 403 403 404"),
    ("run_stop", "401 401 401 403 404 403 403 403 403 401 403 403 403 404"),
    ("keys", "401 401 401 403 200 403 403 403 403 401 403 403 403 200"),
    ("accounts", "401 401 401 403 200 403 403 403 403 401 403 403 403 200"),
    ("account_connect", "401 401 401 403 409 403 403 403 403 401 403 403 403 409"),
    ("account_disconnect", "401 401 401 403 404 403 403 403 403 401 403 403 403 404"),
    ("approval_count", "401 401 401 403 200 403 403 403 403 401 403 403 403 200"),
    ("approval_rules", "401 401 401 403 200 403 403 403 403 401 403 403 403 200"),
    ("rule_remove", "401 401 401 403 404 403 403 403 403 401 403 403 403 404"),
    ("purge", "401 401 401 403 404 403 403 403 403 401 403 403 403 404"),
    ("upstream_start", "400 400 400 400 400 400 400 400 400 400 400 400 400 400"),
    ("ui_runs", "401 401 401 401 401 401 401 401 401 401 401 401 401 200"),
    ("metrics", "401 401 401 403 200 403 403 403 403 401 403 403 403 200"),
    ("activity_verify", "401 401 401 403 200 403 403 403 403 401 403 403 403 200"),
    ("a2a", "401 401 401 403 200 200 200 200 200 401 403 403 403 403"),
    ("a2a_card", "200 200 200 200 200 200 200 200 200 200 200 200 200 200"),
    ("a2a_relay", "401 401 401 403 403 403 403 403 403 401 403 403 404 403"),
    ("a2a_index", "200 200 200 200 200 200 200 200 200 200 200 200 200 200"),
    ("a2a_rest", "401 401 401 403 400 400 400 400 400 401 403 403 403 403"),
    ("passkey_sign_in", "403 403 403 403 403 403 403 403 403 403 403 403 403 403"),
    ("account_passkeys", "401 401 401 401 401 401 401 401 401 401 401 401 401 200"),
    ("passkey_options", "401 401 401 401 401 401 401 401 401 401 401 401 401 403"),
    ("passkey_add", "401 401 401 401 401 401 401 401 401 401 401 401 401 403"),
    ("passkey_remove", "401 401 401 401 401 401 401 401 401 401 401 401 401 404"),
];

fn keys(env: &Env, armed: bool, up: &str) -> Vec<(&'static str, Option<String>)> {
    let mut v: Vec<(&str, Option<String>)> = vec![
        ("none", None),
        ("bad", Some("not-a-key".into())),
        ("badbridge", Some("hal0bk_0000000000000000000000000000000000000000000".into())),
    ];
    if armed {
        let admin = env.json(&["auth", "rotate", "admin", "--yes", "--json"])["key"].as_str().unwrap().to_string();
        let client = env.json(&["auth", "rotate", "client", "--yes", "--json"])["key"].as_str().unwrap().to_string();
        v.push(("client", Some(client)));
        v.push(("admin", Some(admin)));
    }
    v.push(("b_agents", Some(env.bridge_key("ba", &["agents"]))));
    v.push(("b_memory", Some(env.bridge_key("bm", &["memory"]))));
    v.push(("b_admin", Some(env.bridge_key("bd", &["admin"]))));
    v.push(("b_all", Some(env.bridge_key("bl", &["memory", "admin"]))));
    let revoked = env.bridge_key("br", &["memory", "admin"]);
    env.ok(&["bridge", "revoke", "br", "--yes"]);
    v.push(("revoked", Some(revoked)));
    // `up` answers (its calls go through); `other` need not: initialize at the proxy is
    // hal0's own.
    env.ok(&["mcp", "install", up, "--id", "up"]);
    env.ok(&["mcp", "allow", "up", "echo"]);
    env.ok(&["mcp", "install", "http://127.0.0.1:9/mcp", "--id", "other"]);
    let mint = |id: &str| env.json(&["mcp", "keys", "add", id, "m", "--json"])["key"].as_str().unwrap().to_string();
    v.push(("consumer", Some(mint("up"))));
    v.push(("c_other", Some(mint("other"))));
    v.push(("b_relay", Some(env.bridge_key("bot", &["relay"]))));
    v
}

/// A well-formed request of `method` on `path`: a GET (a WebSocket handshake on
/// `/bridge/connect`), a JSON settings write (setting a key to its default), or an MCP
/// `initialize`.
/// A person's credential in the matrix: `cookie:<session token> <csrf token>`.
const PERSON: &str = "cookie:";

/// A dashboard session on `server`: a `hal0 ui login` link opened, the page read for its
/// CSRF token. As a matrix credential ([`PERSON`]).
async fn person(env: &Env, server: &Server) -> String {
    let (cookie, csrf) = crate::dashboard::sign_in(server, &crate::dashboard::link(env)).await;
    format!("{PERSON}{cookie} {csrf}")
}

/// `r` with the credential `key`: a bearer key, or a person's cookie and CSRF token.
fn with_cred(r: reqwest::RequestBuilder, key: Option<&str>) -> reqwest::RequestBuilder {
    match key {
        Some(k) if k.starts_with(PERSON) => {
            let (cookie, csrf) = k[PERSON.len()..].split_once(' ').unwrap();
            r.header("cookie", cookie).header("x-csrf-token", csrf)
        }
        Some(k) => r.header("authorization", format!("Bearer {k}")),
        None => r,
    }
}

/// Everything a matrix run needs: hal0 serving with every credential minted, the upstream
/// `up` behind its proxy, and the consumer's open proxy session (its tools listed, so its
/// upstream session is open and an allowed call takes the wire path).
struct Matrix {
    _env: Env,
    server: Server,
    creds: Vec<(&'static str, Option<String>)>,
    session: String,
    _up: RmcpUpstream,
}

async fn matrix(armed: bool) -> Matrix {
    let up = RmcpUpstream::start().await;
    let env = Env::new();
    let mut creds = keys(&env, armed, &up.url());
    let server = env.serve();
    creds.push(("person", Some(person(&env, &server).await)));
    let consumer = creds.iter().find(|(n, _)| *n == "consumer").unwrap().1.clone().unwrap();
    let (http, url) = (reqwest::Client::new(), server.url("/mcp/proxy/up/mcp"));
    let r = mcp_post(&http, &url, Some(&consumer), &initialize_body()).send().await.unwrap();
    let session = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
    r.text().await.unwrap();
    for body in [
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    ] {
        let r = mcp_post(&http, &url, Some(&consumer), &body).header("mcp-session-id", &session);
        r.send().await.unwrap().text().await.unwrap();
    }
    Matrix { _env: env, server, creds, session, _up: up }
}

/// The body of the `+session` route: an allowed call whose answer names this text.
const CALL_TEXT: &str = "matrix-echo";

fn call_body() -> serde_json::Value {
    serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                       "params": {"name": "echo", "arguments": {"text": CALL_TEXT}}})
}

fn request(
    http: &reqwest::Client,
    server: &Server,
    spec: (&str, &str),
    key: Option<&str>,
    session: &str,
) -> reqwest::RequestBuilder {
    let (method, path) = spec;
    if let Some(path) = path.strip_suffix(" +session") {
        let r = mcp_post(http, &server.url(path), None, &call_body()).header("mcp-session-id", session);
        return with_cred(r, key);
    }
    let r = match method {
        "GET" if path == "/bridge/connect" => http
            .get(server.url(path))
            .header("connection", "Upgrade")
            .header("upgrade", "websocket")
            .header("sec-websocket-version", "13")
            .header("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
        "GET" => http.get(server.url(path)),
        "PUT" if path.starts_with("/api/secrets/") => {
            http.put(server.url(path)).json(&serde_json::json!({"secret": "matrix-value"}))
        }
        "PUT" => http.put(server.url(path)).json(&serde_json::json!({"key": "bridge.run_retention_days", "value": 30})),
        "POST" if path.starts_with("/api/") => http.post(server.url(path)).json(&serde_json::json!({})),
        "DELETE" => http.delete(server.url(path)),
        _ => return with_cred(mcp_post(http, &server.url(path), None, &initialize_body()), key),
    };
    with_cred(r, key)
}

async fn check(armed: bool, table: &[(&str, &str)]) {
    let m = matrix(armed).await;
    let (server, creds) = (&m.server, &m.creds);
    let http = reqwest::Client::new();
    let mut failures = Vec::new();
    for (route, spec) in ROUTES {
        let expected: Vec<&str> = table.iter().find(|(r, _)| r == route).unwrap().1.split_whitespace().collect();
        assert_eq!(expected.len(), CREDS.len());
        let (method, path) = spec.split_once(' ').unwrap();
        for (i, name) in CREDS.iter().enumerate() {
            if expected[i] == "-" {
                continue;
            }
            let key = creds.iter().find(|(n, _)| n == name).unwrap().1.clone();
            let resp = request(&http, server, (method, path), key.as_deref(), &m.session).send().await.unwrap();
            let status = resp.status().as_u16();
            // A switched protocol has no body to read (the socket is the bot's now).
            let body = if status == 101 { String::new() } else { resp.text().await.unwrap_or_default() };
            if status.to_string() != expected[i] {
                failures.push(format!("{spec} with {name}: got {status}, want {} ({body})", expected[i]));
                continue;
            }
            let decision = path.ends_with("/approve") || path.ends_with("/deny");
            match status {
                // No key decides an approval, and nobody anonymous: said with its code.
                401 | 403 if decision => {
                    let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
                    if v["error"]["code"] != "approvals.person_required" {
                        failures.push(format!("{spec} with {name}: a refused decision says who decides, got {body}"));
                    }
                }
                // A dashboard page tells anyone without a session how to sign in (a key
                // that is no key gets the guard's bare 401 first).
                401 if path.starts_with("/ui/")
                    && !body.is_empty()
                    && !(body.contains("ui.session_required") && body.contains("hal0 ui login")) =>
                {
                    failures.push(format!("{spec} with {name}: the page says how to sign in, got {body}"));
                }
                401 if path.starts_with("/ui/") => {}
                // REST: bare, as spec 001 says. An MCP mount says which key to send.
                401 if !path.starts_with("/mcp/") && !body.is_empty() => {
                    failures.push(format!("{spec} with {name}: 401 must be bare, got body {body}"));
                }
                401 if path.starts_with("/mcp/") && !body.contains("\"auth.key_required\"") => {
                    failures.push(format!("{spec} with {name}: an MCP 401 names the key to send, got body {body}"));
                }
                // A passkey ceremony on an address: refused with what to open instead.
                403 if path.starts_with("/ui/login/passkey") || path.starts_with("/ui/account/passkeys") => {
                    let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
                    if v["error"]["code"] != "ui.passkey_unavailable" {
                        failures.push(format!("{spec} with {name}: passkeys need a host name, got {body}"));
                    }
                }
                403 => {
                    let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
                    if v["error"]["code"] != "auth.forbidden" {
                        failures.push(format!("{spec} with {name}: 403 body {body}"));
                    }
                }
                404 if path.ends_with("+session") && !body.contains("\"mcp.session_unknown\"") => {
                    failures.push(format!("{spec} with {name}: another's session is unknown, got {body}"));
                }
                200 if path.ends_with("+session") && !body.contains(CALL_TEXT) => {
                    failures.push(format!("{spec} with {name}: the call's answer, got {body}"));
                }
                _ => {}
            }
        }
    }
    assert!(failures.is_empty(), "auth matrix (armed={armed}) mismatches:\n{}", failures.join("\n"));
}

#[tokio::test]
async fn matrix_auth_off() {
    check(false, OFF).await;
}

#[tokio::test]
async fn matrix_auth_armed() {
    check(true, ARMED).await;
}

/// The front door, in front of the tiers: with every credential, on every route but
/// `/api/health`, a foreign `Host` is a bare 421 and a foreign `Origin` a 403, before any
/// key is looked at; a state-changing REST request with a non-JSON body is 415, and an MCP
/// POST that is not JSON is refused too (by rmcp, once the key passed).
async fn front_door(armed: bool, table: &[(&str, &str)]) {
    let m = matrix(armed).await;
    let (server, creds) = (&m.server, &m.creds);
    let http = reqwest::Client::new();
    let foreign_host = format!("rebind.example:{}", server.port);
    let mut failures = Vec::new();
    for (route, spec) in ROUTES {
        let expected: Vec<&str> = table.iter().find(|(r, _)| r == route).unwrap().1.split_whitespace().collect();
        let (method, path) = spec.split_once(' ').unwrap();
        let open = path == "/api/health";
        for (i, name) in CREDS.iter().enumerate() {
            if expected[i] == "-" {
                continue;
            }
            let key = creds.iter().find(|(n, _)| n == name).unwrap().1.clone();
            let mut seen = |what: &str, r: reqwest::Response, want: u16| {
                let got = r.status().as_u16();
                if got != want {
                    failures.push(format!("{spec} with {name}, {what}: got {got}, want {want}"));
                }
            };
            let r = request(&http, server, (method, path), key.as_deref(), &m.session).header("host", &foreign_host);
            let resp = r.send().await.unwrap();
            seen("foreign Host", resp, if open { 200 } else { 421 });
            let r = request(&http, server, (method, path), key.as_deref(), &m.session)
                .header("origin", "https://evil.example");
            let resp = r.send().await.unwrap();
            seen("foreign Origin", resp, if open { 200 } else { 403 });
            if method == "GET" {
                continue;
            }
            // The same request with a text/plain body (what a page can send without a preflight).
            let (url, session) = match path.strip_suffix(" +session") {
                Some(p) => (server.url(p), Some(&m.session)),
                None => (server.url(path), None),
            };
            let mut r = match method {
                "PUT" => http.put(url),
                "DELETE" => http.delete(url),
                _ => http.post(url).header("accept", "application/json, text/event-stream"),
            };
            if let Some(s) = session {
                r = r.header("mcp-session-id", s);
            }
            let body = if session.is_some() { call_body() } else { initialize_body() };
            r = with_cred(r.header("content-type", "text/plain").body(body.to_string()), key.as_deref());
            let resp = r.send().await.unwrap();
            // REST and A2A refuse the media type before the key; an MCP mount checks the key first.
            let json_only = path.starts_with("/api/") || path.starts_with("/a2a/");
            let want = if json_only || expected[i] == "200" { 415 } else { expected[i].parse().unwrap() };
            seen("text/plain body", resp, want);
        }
    }
    assert!(failures.is_empty(), "front door (armed={armed}) mismatches:\n{}", failures.join("\n"));
}

#[tokio::test]
async fn front_door_auth_off() {
    front_door(false, OFF).await;
}

#[tokio::test]
async fn front_door_auth_armed() {
    front_door(true, ARMED).await;
}

#[tokio::test]
async fn bridge_me_reports_the_client() {
    let env = Env::new();
    let key = env.bridge_key("ws", &["memory"]);
    env.ok(&["bridge", "add", "other", "--note", "x"]);
    let server = env.serve();
    let me: serde_json::Value = reqwest::Client::new()
        .get(server.url("/api/bridge/me"))
        .header("authorization", format!("Bearer {key}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(me["client"], "ws");
    assert_eq!(me["scopes"], serde_json::json!(["agents", "memory"]));
    assert!(me["created_at"].as_str().unwrap().ends_with('Z'));
    assert!(me.get("note").is_some() && me.get("last_seen").is_some());
    // last_seen is recorded for the client that called.
    let list = env.json(&["bridge", "list", "--json"]);
    let ws = list.as_array().unwrap().iter().find(|c| c["name"] == "ws").unwrap().clone();
    let other = list.as_array().unwrap().iter().find(|c| c["name"] == "other").unwrap().clone();
    assert!(ws["last_seen"].is_string(), "{ws}");
    assert!(other["last_seen"].is_null());
}

#[tokio::test]
async fn mount_roots_answer_405_and_disabled_bridge_is_404() {
    let env = Env::new();
    let key = env.bridge_key("ws", &["memory", "admin"]);
    let server = env.serve();
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    // Every mount of the one list (`connect::MOUNTS`), with this key or none: the relay's
    // bare root answered 401 without a relay key (it was missing from the guard's list).
    for root in ["/mcp/agents", "/mcp/memory/", "/mcp/admin", "/mcp/relay", "/mcp/relay/"] {
        let r = http.get(server.url(root)).header("authorization", format!("Bearer {key}")).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 405, "{root}");
        let r = http.get(server.url(root)).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 405, "{root} without a key");
    }
    drop(server);
    env.ok(&["config", "set", "bridge.enabled", "false"]);
    let server = env.serve();
    let r = mcp_post(&http, &server.url("/mcp/agents/mcp"), Some(&key), &initialize_body()).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 404);
    let r = mcp_post(&http, &server.url("/mcp/memory/mcp"), Some(&key), &initialize_body()).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
}
