//! hal0 as the OAuth client of installed MCP servers that want OAuth (issue 35): an
//! OAuth-only server nobody here wrote (the TypeScript SDK's demo with its own
//! authorization server) is found to want an account at install, `hal0 mcp test` says how
//! to connect it, a person connects it in one browser round trip (headless Chromium), and
//! consumers call it through the enforcing proxy with the account's token, which never
//! shows anywhere. Bad callbacks (wrong `state`, a replay, an `iss` mix-up, an error) change
//! nothing; a server that forgets the token asks a person to reconnect. A second hal0 with
//! its own authorization server stands in for an upstream that refreshes, rotates and
//! revokes: refresh, a refused refresh, disconnect revoking upstream.

use crate::support::browser::CONSENT_SHOWN;
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
    let approve = b.wait_for(CONSENT_SHOWN, WAIT).await.unwrap_or_else(|| panic!("no consent form"));
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

    // A person hears about it: one card in the approvals inbox (not one per failed call).
    let cards = |status: &str| -> Vec<Value> {
        let v = env.json(&["agent", "approvals", "list", "--status", status, "--json"]);
        v.as_array().unwrap().iter().filter(|a| a["kind"] == "account_reauth").cloned().collect()
    };
    let pending = cards("pending");
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_eq!(pending[0]["arguments"]["server"], "boxb");
    assert!(pending[0]["preview"].as_str().unwrap().contains("must be connected again"), "{pending:?}");
    // Approving it starts the connect: the URL goes to the person who decided, once.
    let id = pending[0]["id"].as_str().unwrap().to_string();
    let d = env.json(&["agent", "approvals", "approve", &id, "--yes", "--json"]);
    let url = d["output"]["authorize_url"].as_str().unwrap_or_else(|| panic!("no URL: {d}")).to_string();
    assert!(url.starts_with(&s_b.url("/oauth/authorize?")), "{url}");
    assert_eq!(d["row"]["status"], "executed", "{d}");
    let shown = env.json(&["agent", "approvals", "show", &id, "--json"]);
    assert!(!shown.to_string().contains(&url), "the row keeps no authorization URL: {shown}");
    b.goto(&url).await;
    b.wait_for(CONSENT_SHOWN, WAIT).await.unwrap_or_else(|| panic!("no consent form")).click().await;
    // (The consent page has a hidden `#done` of its own: wait for the account instead.)
    let deadline = std::time::Instant::now() + WAIT;
    while account(&env, "boxb")["state"] != "connected" {
        assert!(std::time::Instant::now() < deadline, "not connected: {}", b.source().await);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(b.source().await.contains("holds an account"), "{}", b.source().await);
    assert!(cards("pending").is_empty());

    // Connected again, then disconnected: the grant ends at the other hal0 too.
    let c = consumer(&s, "boxb", &key).await;
    crate::proxy::call(&c, "memory_search", json!({"query": "deploy"})).await.unwrap();
    assert_eq!(env_b.json(&["oauth", "grants", "--json"]).as_array().unwrap().len(), 1);
    let d = env.json(&["mcp", "disconnect", "boxb", "--json"]);
    assert_eq!(d["revoked_upstream"], true, "{d}");
    assert_eq!(env_b.json(&["oauth", "grants", "--json"]), json!([]), "no live grant is left upstream");
    b.close().await;
}

/// The start link in a consumer's `mcp.account_required` error.
fn start_link_in(e: &str) -> String {
    let at = e.find("http://").unwrap_or_else(|| panic!("no link in {e}"));
    let link = e[at..].split_whitespace().next().unwrap().trim_end_matches(['.', ',', ')', '"']).to_string();
    assert!(link.contains("/upstream-oauth/start/"), "{link}");
    link
}

/// Follow a start link as a browser that approves at once would (the demo's authorize
/// endpoint needs no person): hal0's 303, the authorization server's 302, hal0's callback.
async fn open_link(link: &str) -> (u16, String) {
    let http = no_redirects();
    let r = http.get(link).send().await.unwrap();
    if r.status() != 303 {
        return (r.status().as_u16(), r.text().await.unwrap());
    }
    assert_eq!(r.headers()["cache-control"], "no-store");
    let authorize = r.headers()["location"].to_str().unwrap().to_string();
    let cb = callback_of(&authorize).await;
    let r = http.get(cb).send().await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

/// Delegated accounts: each consumer connects its own account (from the link its first
/// call's error carries, or by the operator with `--for`), its calls go upstream with its
/// own token and never another's, and one consumer's disconnect leaves the other's alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_delegated_accounts_each_consumer_calls_as_its_own_account() {
    let Some(demo) = DemoOauth::start() else { return };
    let Some(b) = crate::dashboard::browser(900, 900).await else { return };
    let (env, s) = a_box();
    env.ok(&["mcp", "install", &demo.url(), "--id", "demo"]);
    env.ok(&["mcp", "allow", "demo", "greet"]);
    let alice = crate::proxy::key_for(&env, "demo", "alice");
    let bob = crate::proxy::key_for(&env, "demo", "bob");

    // Bad input first: --for on a box-wide server, a mode hal0 does not know.
    let e = env.run(&["mcp", "connect", "demo", "--for", "alice", "--no-wait"]);
    assert!(e.stderr().contains("mcp.oauth_holder_unexpected"), "{}", e.stderr());
    let e = env.run(&["mcp", "accounts", "demo", "--mode", "per-user"]);
    assert_eq!(e.code(), 2, "clap refuses it: {}", e.stderr());
    let m = env.json(&["mcp", "accounts", "demo", "--mode", "delegated", "--json"]);
    assert_eq!((m["accounts_mode"].as_str(), m["changed"].as_bool()), (Some("delegated"), Some(true)), "{m}");
    let e = env.run(&["mcp", "connect", "demo", "--no-wait"]);
    assert!(e.stderr().contains("mcp.oauth_holder_required"), "{}", e.stderr());
    let e = env.run(&["mcp", "connect", "demo", "--for", "mallory", "--no-wait"]);
    assert!(e.stderr().contains("mcp.oauth_holder_unknown"), "{}", e.stderr());
    let st = env.ok(&["mcp", "status", "demo"]);
    assert!(st.contains("each consumer connects its own account"), "{st}");

    // Alice has no account: her call says so, with a link that connects hers.
    let ca = consumer(&s, "demo", &alice).await;
    let e = crate::proxy::call(&ca, "greet", json!({"name": "alice"})).await.unwrap_err();
    assert!(e.contains("mcp.account_required") && e.contains("`alice` has none"), "{e}");
    let link = start_link_in(&e);
    // A changed link is refused and connects nothing.
    let mut bad = link.clone();
    bad.push('x');
    let (st, body) = open_link(&bad).await;
    assert_eq!(st, 400, "{body}");
    assert!(body.contains("mcp.oauth_link_invalid"), "{body}");
    // Her browser follows the link: to the authorization server and back.
    b.goto(&link).await;
    let Some(done) = b.wait_for("#done", WAIT).await else { panic!("no callback page: {}", b.source().await) };
    assert!(done.text().await.contains("demo"));
    let mark = demo.mark();
    let r = crate::proxy::call(&ca, "greet", json!({"name": "alice"})).await.unwrap();
    assert!(r.to_string().contains("Hello, alice"), "{r}");
    let alice_tokens = demo.tokens_since(mark);
    assert_eq!(alice_tokens.len(), 1, "{}", demo.output());

    // Bob still has none (Alice's account is hers alone); the operator connects his.
    let cb = consumer(&s, "demo", &bob).await;
    let e = crate::proxy::call(&cb, "greet", json!({"name": "bob"})).await.unwrap_err();
    assert!(e.contains("mcp.account_required") && e.contains("`bob` has none"), "{e}");
    let begun = env.json(&["mcp", "connect", "demo", "--for", "bob", "--no-wait", "--json"]);
    assert_eq!(begun["holder"], "bob", "{begun}");
    let (st, body) = {
        let cb = callback_of(begun["authorize_url"].as_str().unwrap()).await;
        let r = no_redirects().get(cb).send().await.unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    };
    assert_eq!(st, 200, "{body}");
    let mark = demo.mark();
    let r = crate::proxy::call(&cb, "greet", json!({"name": "bob"})).await.unwrap();
    assert!(r.to_string().contains("Hello, bob"), "{r}");
    let bob_tokens = demo.tokens_since(mark);
    assert_eq!(bob_tokens.len(), 1, "{}", demo.output());
    assert_ne!(alice_tokens, bob_tokens, "each consumer goes upstream with its own token");
    // Alice's next call, on a new session too, still goes with hers.
    let ca = consumer(&s, "demo", &alice).await;
    let mark = demo.mark();
    crate::proxy::call(&ca, "greet", json!({"name": "alice"})).await.unwrap();
    assert_eq!(demo.tokens_since(mark), alice_tokens);

    // What shows: two accounts by consumer, never a token.
    let list = env.json(&["mcp", "accounts", "demo", "--json"]);
    let holders: Vec<&str> = list["accounts"].as_array().unwrap().iter().filter_map(|a| a["holder"].as_str()).collect();
    assert_eq!(holders, ["alice", "bob"], "{list}");
    let row = mcp_accounts_row(&env);
    let detail = row["detail"].as_str().unwrap();
    assert!(detail.contains("demo for alice: connected") && detail.contains("demo for bob: connected"), "{row}");
    let audit = env.ok(&["activity", "list", "--json"]);
    assert!(audit.contains("link:alice"), "the link's connect is audited as hers: {audit}");
    for t in alice_tokens.iter().chain(&bob_tokens) {
        for (what, text) in [
            ("list", list.to_string()),
            ("doctor", row.to_string()),
            ("audit", audit.clone()),
            ("state dir", all_text(&env.state_dir())),
        ] {
            assert!(!text.contains(t.as_str()), "a token shows in the {what}");
        }
    }

    // Alice disconnects: her calls need an account again; Bob's go on as his.
    let d = env.json(&["mcp", "disconnect", "demo", "--for", "alice", "--json"]);
    assert_eq!(d["disconnected"], true, "{d}");
    let e = crate::proxy::call(&ca, "greet", json!({"name": "alice"})).await.unwrap_err();
    assert!(e.contains("mcp.account_required"), "{e}");
    let mark = demo.mark();
    crate::proxy::call(&cb, "greet", json!({"name": "bob"})).await.unwrap();
    assert_eq!(demo.tokens_since(mark), bob_tokens);

    // Uninstall forgets every account of the server.
    env.ok(&["mcp", "uninstall", "demo", "--yes"]);
    let left: Vec<_> = std::fs::read_dir(env.state_dir().join("upstream-oauth"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".acct"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    b.close().await;
}

/// The dashboard's server page shows a box-wide account's state and connects it with one
/// click: the person's browser goes to the authorization server and back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_connects_a_server_account_with_one_click() {
    let Some(demo) = DemoOauth::start() else { return };
    let Some(b) = crate::dashboard::browser(900, 900).await else { return };
    let (env, s) = a_box();
    env.ok(&["mcp", "install", &demo.url(), "--id", "demo"]);
    crate::dashboard::signed_in(&b, &env, &s).await;
    b.goto(&s.url("/ui/servers")).await;
    let line = b.wait_for("#oauth-demo", WAIT).await.unwrap_or_else(|| panic!("no account line"));
    let deadline = std::time::Instant::now() + WAIT;
    while !line.text().await.contains("not connected") {
        assert!(std::time::Instant::now() < deadline, "{}", line.text().await);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    b.shots("ui-servers-oauth", (900, 900)).await;
    b.wait_for("#connect-demo", WAIT).await.unwrap_or_else(|| panic!("no Connect button")).click().await;
    let done = b.wait_for("#done", WAIT).await;
    assert!(done.is_some(), "no callback page: {}", b.source().await);
    assert_eq!(account(&env, "demo")["state"], "connected");
    let audit = env.ok(&["activity", "list", "--json"]);
    assert!(audit.contains("mcp_account_connect"), "{audit}");
    b.goto(&s.url("/ui/servers")).await;
    let line = b.wait_for("#oauth-demo", WAIT).await.unwrap();
    let deadline = std::time::Instant::now() + WAIT;
    while !line.text().await.contains("connected at") {
        assert!(std::time::Instant::now() < deadline, "{}", line.text().await);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(b.wait_for("#connect-demo", WAIT).await.is_some(), "a Reconnect button stays");
    b.close().await;
}

/// Connect `id`'s box-wide account without a person (the demo approves at once).
async fn connect_now(env: &Env, id: &str) {
    let begun = env.json(&["mcp", "connect", id, "--no-wait", "--json"]);
    let cb = callback_of(begun["authorize_url"].as_str().unwrap()).await;
    let r = no_redirects().get(cb).send().await.unwrap();
    assert_eq!(r.status(), 200, "{:?}", r.text().await);
}

/// With `gate_first_call`, the first call made with a newly connected account waits for a
/// person even for an allowed tool; once one is approved, the account's calls run; a new
/// account starts over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_call_with_a_new_account_waits_for_a_person_when_asked() {
    let Some(demo) = DemoOauth::start() else { return };
    let env = Env::new();
    env.ok(&["config", "set", "mcp.gate_wait_secs", "1"]);
    let s = serve_on_configured_port(&env);
    env.ok(&["mcp", "install", &demo.url(), "--id", "demo"]);
    env.ok(&["mcp", "allow", "demo", "greet"]);
    let g = env.json(&["mcp", "accounts", "demo", "--gate-first-call", "on", "--json"]);
    assert_eq!(g["gate_first_call"], true, "{g}");
    connect_now(&env, "demo").await;
    let key = crate::proxy::key_for(&env, "demo", "ci");
    let c = consumer(&s, "demo", &key).await;

    let out = crate::proxy::call(&c, "greet", json!({"name": "first"})).await.unwrap();
    assert_eq!(out["status"], "pending_approval", "{out}");
    let id = out["approval_id"].as_str().unwrap().to_string();
    let done = env.json(&["agent", "approvals", "approve", &id, "--yes", "--json"]);
    assert_eq!(done["status"], "executed", "{done}");
    assert!(done["result"].to_string().contains("Hello, first"), "{done}");
    assert_eq!(env.json(&["mcp", "accounts", "demo", "--json"])["accounts"][0]["vetted"], true);

    // Vetted: the next calls run at once, with no card.
    let r = crate::proxy::call(&c, "greet", json!({"name": "second"})).await.unwrap();
    assert!(r.to_string().contains("Hello, second"), "{r}");
    let pending = env.json(&["agent", "approvals", "list", "--status", "pending", "--json"]);
    assert_eq!(pending, json!([]), "{pending}");

    // A new account (connected again) waits again; switched off, nothing waits.
    connect_now(&env, "demo").await;
    let c = consumer(&s, "demo", &key).await;
    let out = crate::proxy::call(&c, "greet", json!({"name": "third"})).await.unwrap();
    assert_eq!(out["status"], "pending_approval", "{out}");
    env.ok(&["mcp", "accounts", "demo", "--gate-first-call", "off"]);
    let r = crate::proxy::call(&c, "greet", json!({"name": "fourth"})).await.unwrap();
    assert!(r.to_string().contains("Hello, fourth"), "{r}");
}
