//! hal0 as the OAuth client of installed MCP servers that want OAuth (issue 35): an
//! OAuth-only server nobody here wrote (the TypeScript SDK's demo with its own
//! authorization server) is found to want an account at install, `hal0 mcp test` says how
//! to connect it, a person connects it in one browser round trip (headless Chromium), and
//! consumers call it through the enforcing proxy with the account's token, which never
//! shows anywhere. Bad callbacks (wrong `state`, a replay, an `iss` mix-up, an error) change
//! nothing; a server that forgets the token asks a person to reconnect. A second hal0 with
//! its own authorization server stands in for an upstream that refreshes, rotates and
//! revokes: refresh, a refused refresh, disconnect revoking upstream.

use crate::support::oauth_upstream::DemoOauth;
use crate::support::*;
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

const WAIT: Duration = Duration::from_secs(30);

async fn consumer(server: &Server, id: &str, key: &str) -> Client {
    let cfg = StreamableHttpClientTransportConfig::with_uri(server.url(&format!("/mcp/proxy/{id}/mcp")))
        .auth_header(key.to_string());
    ().serve(StreamableHttpClientTransport::from_config(cfg)).await.expect("MCP handshake with the proxy")
}

/// A box serving on the port its config names (the callback URL is built from it).
fn a_box() -> (Env, Server) {
    let env = Env::new();
    let s = serve_on_configured_port(&env);
    (env, s)
}

fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

/// The authorization server's answer to `authorize_url` (the demo approves at once): the
/// callback URL it sends the browser to.
async fn callback_of(authorize_url: &str) -> String {
    let r = no_redirects().get(authorize_url).send().await.unwrap();
    assert_eq!(r.status(), 302, "{:?}", r.text().await);
    r.headers()["location"].to_str().unwrap().to_string()
}

/// `hal0 mcp connect ID` waiting in the background: the URL it printed, and the child.
fn connect_waiting(env: &Env, id: &str) -> (String, std::process::Child) {
    let mut c = env.cmd(&["mcp", "connect", id, "--timeout", "90"]);
    let mut child = c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert!(line.starts_with("http"), "no URL printed: {line:?}");
    // The rest of stdout is read after it exits.
    std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut rest);
        println!("[hal0 mcp connect] {rest}");
    });
    (line.trim().to_string(), child)
}

fn wait_exit(child: &mut std::process::Child) -> (i32, String) {
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            return (st.code().unwrap_or(-1), err);
        }
        assert!(std::time::Instant::now() < deadline, "hal0 mcp connect did not end");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn account(env: &Env, id: &str) -> Value {
    env.json(&["mcp", "status", id, "--json"])["account"].clone()
}

/// Every file under `dir`, as text (lossy), joined.
fn all_text(dir: &std::path::Path) -> String {
    let mut out = String::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push_str(&String::from_utf8_lossy(&std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oauth_only_server_is_connected_in_one_browser_round_trip_and_called_through_the_proxy() {
    let Some(demo) = DemoOauth::start() else { return };
    let Some(b) = crate::dashboard::browser(900, 900).await else { return };
    let (env, s) = a_box();

    // Install: the 401 and its metadata are found, and recorded.
    let inst = env.json(&["mcp", "install", &demo.url(), "--id", "demo", "--json"]);
    assert_eq!(inst["installed"]["oauth"]["issuer"], demo.issuer(), "{inst}");
    let out = env.run(&["mcp", "install", &demo.url(), "--id", "demo2"]);
    assert!(out.stdout().contains("hal0 mcp connect demo2"), "{}", out.stdout());
    // Test and status say so, and how to connect it, instead of failing on the 401.
    let t = env.run(&["mcp", "test", "demo"]);
    assert_ne!(t.code(), 0);
    assert!(
        t.stderr().contains("mcp.account_required") && t.stderr().contains("hal0 mcp connect demo"),
        "{}",
        t.stderr()
    );
    let st = env.ok(&["mcp", "status", "demo"]);
    assert!(st.contains("needs an OAuth account") && st.contains("hal0 mcp connect demo"), "{st}");
    env.ok(&["mcp", "allow", "demo", "greet"]);
    let key = crate::proxy::key_for(&env, "demo", "ci");
    let c = consumer(&s, "demo", &key).await;
    let e = crate::proxy::call(&c, "greet", json!({"name": "hal0"})).await.unwrap_err();
    assert!(e.contains("mcp.account_required") && e.contains("hal0 mcp connect demo"), "{e}");

    // Connect: the CLI prints the URL and waits; the person's browser goes there and back.
    let (url, mut child) = connect_waiting(&env, "demo");
    assert!(url.starts_with(&format!("http://localhost:{}/authorize?", demo.auth_port)), "{url}");
    for p in ["code_challenge_method=S256", "response_type=code", "state=", "resource=http%3A%2F%2Flocalhost"] {
        assert!(url.contains(p), "{p} missing from {url}");
    }
    b.goto(&url).await;
    let done = b.wait_for("#done", WAIT).await.unwrap_or_else(|| panic!("no callback page"));
    assert!(done.text().await.contains("demo"));
    let (code, err) = wait_exit(&mut child);
    assert_eq!(code, 0, "{err}");
    let acct = account(&env, "demo");
    assert_eq!(acct["state"], "connected", "{acct}");
    assert_eq!(acct["client_kind"], "registered", "dynamic registration: {acct}");
    assert!(acct["expires_at"].is_string(), "{acct}");

    // A call through the proxy goes upstream as the account (the demo checks the token's
    // resource: --oauth-strict).
    let c = consumer(&s, "demo", &key).await;
    let r = crate::proxy::call(&c, "greet", json!({"name": "hal0"})).await.unwrap();
    assert!(r.to_string().contains("Hello, hal0"), "{r}");

    // The token never shows: not in the config or state files in clear, not in the audit
    // log, not in the answers a consumer or the CLI gets.
    let tokens = demo.tokens_seen();
    assert!(!tokens.is_empty(), "the demo logged no token: {}", demo.output());
    let doctor = env.run(&["doctor", "--json"]).stdout();
    let audit = env.ok(&["activity", "list", "--json"]);
    let status = env.ok(&["mcp", "status", "demo", "--json"]);
    for t in &tokens {
        for (what, text) in [
            ("config dir", all_text(&env.config_dir())),
            ("state dir", all_text(&env.state_dir())),
            ("doctor", doctor.clone()),
            ("audit", audit.clone()),
            ("status", status.clone()),
            ("answer", r.to_string()),
        ] {
            assert!(!text.contains(t.as_str()), "the token shows in the {what}");
        }
    }
    let v: Value = serde_json::from_str(&doctor).unwrap();
    let row = v["rows"].as_array().unwrap().iter().find(|r| r["name"] == "mcp_accounts").unwrap().clone();
    assert!(row["detail"].as_str().unwrap().contains("demo: connected"), "{row}");
    assert!(row["detail"].as_str().unwrap().contains("demo2: not connected"), "{row}");
    assert!(audit.contains("mcp_account_connect") && audit.contains("mcp_account_callback"), "{audit}");

    // Disconnect: the demo offers no revocation, so hal0 says so; calls need an account again.
    let d = env.json(&["mcp", "disconnect", "demo", "--json"]);
    assert_eq!(d["disconnected"], true);
    assert_eq!(d["revoked_upstream"], Value::Null, "{d}");
    let c = consumer(&s, "demo", &key).await;
    let e = crate::proxy::call(&c, "greet", json!({"name": "x"})).await.unwrap_err();
    assert!(e.contains("mcp.account_required"), "{e}");
    let again = env.run(&["mcp", "disconnect", "demo"]);
    assert_ne!(again.code(), 0);
    assert!(again.stderr().contains("mcp.account_required"), "{}", again.stderr());
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callbacks_that_do_not_match_a_waiting_connect_change_nothing() {
    let Some(demo) = DemoOauth::start() else { return };
    let (env, s) = a_box();
    env.ok(&["mcp", "install", &demo.url(), "--id", "demo"]);
    let http = no_redirects();
    let get = |u: String| {
        let http = http.clone();
        async move {
            let r = http.get(u).send().await.unwrap();
            (r.status().as_u16(), r.text().await.unwrap())
        }
    };

    // A state nobody started, and none at all.
    for q in ["code=abc&state=not-a-state-of-hal0", "code=abc"] {
        let (st, body) = get(s.url(&format!("/upstream-oauth/callback?{q}"))).await;
        assert_eq!(st, 400, "{body}");
        assert!(body.contains("mcp.oauth_state_unknown"), "{body}");
    }

    // An `iss` that is another issuer: refused as a mix-up, and the connect is used up.
    let begun = env.json(&["mcp", "connect", "demo", "--no-wait", "--json"]);
    let cb = callback_of(begun["authorize_url"].as_str().unwrap()).await;
    assert!(cb.starts_with(&s.url("/upstream-oauth/callback?")), "{cb}");
    let (st, body) = get(format!("{cb}&iss=http%3A%2F%2Fevil.example%2F")).await;
    assert_eq!(st, 400, "{body}");
    assert!(body.contains("mcp.oauth_iss_mismatch"), "{body}");
    let (_, body) = get(cb.clone()).await;
    assert!(body.contains("mcp.oauth_state_unknown"), "a used connect does not come back: {body}");
    assert_eq!(account(&env, "demo"), Value::Null);

    // The authorization server said no: nothing is connected, and the waiting CLI hears it.
    let (url, mut child) = connect_waiting(&env, "demo");
    let state = url::Url::parse(&url).unwrap().query_pairs().find(|(k, _)| k == "state").unwrap().1.to_string();
    let (st, body) = get(
        s.url(&format!("/upstream-oauth/callback?error=access_denied&error_description=no%20thanks&state={state}"))
    )
    .await;
    assert_eq!(st, 403, "{body}");
    assert!(body.contains("mcp.oauth_denied") && body.contains("no thanks"), "{body}");
    let (code, err) = wait_exit(&mut child);
    assert_ne!(code, 0);
    assert!(err.contains("mcp.oauth_denied"), "{err}");
    assert_eq!(account(&env, "demo"), Value::Null);

    // A good callback connects; the same callback replayed finds nothing and changes nothing.
    let begun = env.json(&["mcp", "connect", "demo", "--no-wait", "--json"]);
    let cb = callback_of(begun["authorize_url"].as_str().unwrap()).await;
    let (st, body) = get(cb.clone()).await;
    assert_eq!(st, 200, "{body}");
    let first = account(&env, "demo");
    assert_eq!(first["state"], "connected");
    let (st, body) = get(cb).await;
    assert_eq!(st, 400);
    assert!(body.contains("mcp.oauth_state_unknown"), "{body}");
    assert_eq!(account(&env, "demo"), first);

    // A stdio server has no account to connect; an unknown server is named.
    let e = env.run(&["mcp", "connect", "nope"]);
    assert!(e.stderr().contains("nope"), "{}", e.stderr());
}

/// Connect `id` on box `env` with the person signed in to `b` approving on the other
/// hal0's consent page.
async fn connect_with_consent(env: &Env, id: &str, b: &crate::support::browser::Browser) {
    let (url, mut child) = connect_waiting(env, id);
    b.goto(&url).await;
    let approve = b.wait_for("#approve", WAIT).await.unwrap_or_else(|| panic!("no consent form"));
    approve.click().await;
    assert!(b.wait_for("#done", WAIT).await.is_some(), "no callback page: {}", b.source().await);
    let (code, err) = wait_exit(&mut child);
    assert_eq!(code, 0, "{err}");
}

fn mcp_accounts_row(env: &Env) -> Value {
    let v: Value = serde_json::from_str(&env.run(&["doctor", "--json"]).stdout()).unwrap();
    v["rows"].as_array().unwrap().iter().find(|r| r["name"] == "mcp_accounts").unwrap().clone()
}

/// A second hal0, an authorization server with refresh-token rotation, `iss` in its
/// answers and revocation, as the upstream: a person consents on its page; the account
/// refreshes; when that hal0 ends the grant, the next call asks a person to reconnect
/// (its refresh is refused); disconnecting revokes the grant there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_hal0_as_the_upstream_refreshes_and_its_revocation_asks_for_a_reconnect() {
    let Some((b, env_b, s_b)) = crate::oauth::signed_in_box().await else { return };
    let (env, s) = a_box();
    let inst = env.json(&["mcp", "install", &s_b.url("/oauth/memory/mcp"), "--id", "boxb", "--json"]);
    assert_eq!(inst["installed"]["oauth"]["issuer"], s_b.url("/oauth"), "{inst}");
    env.ok(&["mcp", "allow", "boxb", "memory_add"]);
    env.ok(&["mcp", "allow", "boxb", "memory_search"]);
    connect_with_consent(&env, "boxb", &b).await;
    let acct = account(&env, "boxb");
    assert_eq!((acct["state"].as_str(), acct["refreshable"].as_bool()), (Some("connected"), Some(true)), "{acct}");
    // The other hal0 made a bridge client for hal0-the-client, named by its origin.
    let clients = env_b.json(&["bridge", "list", "--json"]);
    assert!(clients.as_array().unwrap().iter().any(|c| c["origin"].as_str().is_some_and(|o| o.starts_with("oauth:"))));

    let key = crate::proxy::key_for(&env, "boxb", "ci");
    let c = consumer(&s, "boxb", &key).await;
    crate::proxy::call(&c, "memory_add", json!({"text": "the deploy host is delta"})).await.unwrap();
    let found = crate::proxy::call(&c, "memory_search", json!({"query": "deploy host"})).await.unwrap();
    assert!(found.to_string().contains("delta"), "{found}");

    // Refresh: a new access token (and a rotated refresh token); calls go on.
    let r = env.json(&["mcp", "refresh", "boxb", "--json"]);
    assert!(r["account"]["refreshed_at"].is_string(), "{r}");
    let c = consumer(&s, "boxb", &key).await;
    crate::proxy::call(&c, "memory_search", json!({"query": "deploy"})).await.unwrap();

    // The other hal0 ends the grant: the token is refused, the refresh too, and a person
    // is asked to connect again.
    let grants = env_b.json(&["oauth", "grants", "--json"]);
    let grant = grants[0]["id"].as_str().unwrap().to_string();
    env_b.ok(&["oauth", "revoke", &grant]);
    // On the session that was open (its upstream session holds the ended token) …
    let e = crate::proxy::call(&c, "memory_search", json!({"query": "deploy"})).await.unwrap_err();
    assert!(e.contains("mcp.reauth_required") && e.contains("hal0 mcp connect boxb"), "{e}");
    // … and on a new one.
    let c = consumer(&s, "boxb", &key).await;
    let e = crate::proxy::call(&c, "memory_search", json!({"query": "deploy"})).await.unwrap_err();
    assert!(e.contains("mcp.reauth_required") && e.contains("hal0 mcp connect boxb"), "{e}");
    assert_eq!(account(&env, "boxb")["state"], "reauth_required");
    let row = mcp_accounts_row(&env);
    assert_eq!(row["status"], "warn", "{row}");
    assert!(row["detail"].as_str().unwrap().contains("boxb: reauth_required"), "{row}");

    // Connected again, then disconnected: the grant ends at the other hal0 too.
    connect_with_consent(&env, "boxb", &b).await;
    let c = consumer(&s, "boxb", &key).await;
    crate::proxy::call(&c, "memory_search", json!({"query": "deploy"})).await.unwrap();
    assert_eq!(env_b.json(&["oauth", "grants", "--json"]).as_array().unwrap().len(), 1);
    let d = env.json(&["mcp", "disconnect", "boxb", "--json"]);
    assert_eq!(d["revoked_upstream"], true, "{d}");
    assert_eq!(env_b.json(&["oauth", "grants", "--json"]), json!([]), "no live grant is left upstream");
    b.close().await;
}
