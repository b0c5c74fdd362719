//! The dashboard's other pages in a real headless Chromium, and the routes under them:
//! a run's output streams into the Runs page over server-sent events while the run goes
//! on, and Stop reaches Hermes; `GET /api/runs/{id}[/events|/stream]` and `run_stop` as a
//! curl user sees them (redacted, with codes for bad input); the MCP servers page tests a
//! server and saves its tool policy; the Clients page adds a bridge client and mints a
//! consumer key, each shown once with its `claude mcp add` line, and revokes them; the
//! Activity page filters the audit log; the Health page shows doctor's rows.

use crate::dashboard::{WAIT, browser, signed_in};
use crate::support::fake_hermes::{FakeHermes, FakeHermesOptions, SECRET_TEXT};
use crate::support::mcp::{call, connect};
use crate::support::upstream::RmcpUpstream;
use crate::support::*;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// A box whose bridge delegates to a fake Hermes (SLOW runs send a delta every `slow`).
async fn with_hermes(slow: Duration) -> (Env, FakeHermes, tempfile::TempDir) {
    fake_hermes_env(FakeHermesOptions { slow_interval: slow, ..Default::default() }, "").await
}

/// Until `check` holds (polled every 100 ms), at most `limit`; whether it did.
async fn until<F: std::future::Future<Output = bool>>(limit: Duration, mut check: impl FnMut() -> F) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if check().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runs_output_streams_into_the_page_and_stop_reaches_hermes() {
    let Some(browser) = browser(1280, 900).await else { return };
    let (env, hermes, _home) = with_hermes(Duration::from_millis(250)).await;
    let key = env.bridge_key("laptop", &[]);
    let server = env.serve();
    let c = connect(&server, &key).await;
    let run = call(&c, "agent_run", json!({"agent": "hermes", "input": "SLOW refactor the parser"})).await.unwrap();
    let id = run["run_id"].as_str().unwrap_or_else(|| panic!("{run}")).to_string();

    signed_in(&browser, &env, &server).await;
    browser.goto(&server.url("/ui/runs")).await;
    let row = browser.wait_for(&format!("#run-{id}"), WAIT).await.expect("the run is in the ledger");
    assert!(row.text().await.contains("laptop → hermes"), "{}", row.text().await);
    browser.wait_for(&format!("#run-{id} button.open"), WAIT).await.unwrap().click().await;
    let len = || async { browser.eval("return document.querySelector('#output').textContent.length").await.as_u64() };
    assert!(until(WAIT, || async { len().await.unwrap_or(0) > 0 }).await, "output arrives");
    let first = len().await.unwrap();
    // It grows without a reload while Hermes is still sending.
    assert!(until(WAIT, || async { len().await.unwrap_or(0) > first }).await, "the output streams");
    let status = hermes.run_status(&id).unwrap_or_default();
    assert_eq!(status["status"], "running", "the page followed a live run: {status}");
    assert!(browser.wait_for("#events li.ev", WAIT).await.is_some(), "its events show");
    browser.shots("ui-runs", (1280, 900)).await;

    browser.wait_for("#stop", WAIT).await.unwrap().click().await;
    let stopped = until(WAIT, || async {
        let meta = browser.eval("return document.querySelector('#run-meta').textContent").await;
        meta.as_str().is_some_and(|m| m.contains("stopping") || m.contains("cancelled"))
    })
    .await;
    assert!(stopped, "the page shows the stop");
    assert_eq!(hermes.requests().iter().filter(|r| r.method == "POST" && r.path.ends_with("/stop")).count(), 1);
    // The stream ends with the run, and says so.
    assert!(
        until(WAIT, || async { browser.eval("return document.querySelector('#stop').hidden").await == json!(true) })
            .await,
        "Stop goes once the run has ended"
    );
    let log = env.ok(&["activity", "export"]);
    assert!(log.lines().any(|l| l.contains("run_stop") && l.contains("person:")), "the stop is audited:\n{log}");
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_routes_redact_page_and_stream_a_run() {
    let (env, _hermes, _home) = with_hermes(Duration::from_millis(20)).await;
    let admin = env.json(&["auth", "rotate", "admin", "--yes", "--json"])["key"].as_str().unwrap().to_string();
    let key = env.bridge_key("ci", &[]);
    let server = env.serve();
    let c = connect(&server, &key).await;
    let run = call(&c, "agent_run", json!({"agent": "hermes", "input": "SECRET please"})).await.unwrap();
    let id = run["run_id"].as_str().unwrap().to_string();
    call(&c, "agent_run_wait", json!({"run_id": id, "timeout_s": 30})).await.unwrap();
    let http = reqwest::Client::new();
    let get = |path: String| {
        let (http, admin, url) = (http.clone(), admin.clone(), server.url(&path));
        async move {
            let r = http.get(url).bearer_auth(admin).send().await.unwrap();
            (r.status().as_u16(), r.text().await.unwrap())
        }
    };
    let secret = SECRET_TEXT.rsplit(' ').next().unwrap();

    let (status, body) = get(format!("/api/runs/{id}")).await;
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!((v["status"].as_str(), v["client"].as_str()), (Some("completed"), Some("ci")), "{v}");
    assert!(!body.contains(secret), "run_get is redacted: {body}");
    let (status, body) = get(format!("/api/runs/{id}/events?since=0&limit=500")).await;
    assert_eq!(status, 200, "{body}");
    assert!(!body.contains(secret) && body.contains("message.text"), "{body}");

    // A finished run's stream sends everything, then `end`, and closes.
    let (status, body) = get(format!("/api/runs/{id}/stream")).await;
    assert_eq!(status, 200);
    let names: Vec<&str> = body.lines().filter_map(|l| l.strip_prefix("event: ")).collect();
    assert_eq!(names.first(), Some(&"status"), "{body}");
    assert_eq!(names.last(), Some(&"end"), "{body}");
    assert!(names.contains(&"output") && names.contains(&"events"), "{body}");
    assert!(!body.contains(secret), "the stream is redacted: {body}");
    // Resumed past the output, it sends no output again.
    let total = v["output_total"].as_i64().unwrap();
    let (_, resumed) = get(format!("/api/runs/{id}/stream?offset={total}&since=100000")).await;
    assert!(!resumed.contains("event: output") && !resumed.contains("event: events"), "{resumed}");

    // Bad input: a code, not a stream.
    for (path, code, want) in [
        (format!("/api/runs/{id}/stream?offset=-1"), "runs.invalid_filter", 400),
        (format!("/api/runs/{id}/stream?since=x"), "runs.invalid_filter", 400),
        (format!("/api/runs/{id}/events?limit=501"), "runs.invalid_filter", 400),
        (format!("/api/runs/{id}?offset=-5"), "bridge.invalid_offset", 422),
        ("/api/runs/run_none".to_string(), "bridge.run_not_found", 404),
        ("/api/runs/run_none/stream".to_string(), "bridge.run_not_found", 404),
    ] {
        let (status, body) = get(path.clone()).await;
        let v: Value = serde_json::from_str(&body).unwrap_or_default();
        assert_eq!((status, v["error"]["code"].as_str()), (want, Some(code)), "{path}: {body}");
    }

    // A stop after the end changes nothing and is no error; hal0-admin's run_stop waits
    // for a person.
    let r = http.post(server.url(&format!("/api/runs/{id}/stop"))).bearer_auth(&admin).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap()["status"], "completed");
    let ops = env.bridge_key("ops", &["admin"]);
    let a = crate::support::mcp::connect_with(&server, "admin", &ops, false).await;
    let q = call(&a, "run_stop", json!({"args": {"run_id": id}})).await.unwrap();
    assert_eq!(q["status"], "pending_approval", "{q}");
    // The CLI's stop runs the same operation.
    let out = env.ok(&["runs", "stop", &id, "--yes"]);
    assert!(out.contains("already ended"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_clients_activity_and_health_pages_work() {
    let Some(browser) = browser(1280, 900).await else { return };
    let up = RmcpUpstream::start().await;
    let env = Env::new();
    env.ok(&["auth", "rotate", "admin", "--yes"]);
    env.ok(&["mcp", "install", &up.url(), "--id", "up"]);
    env.ok(&["mcp", "allow", "up", "echo"]);
    let server = env.serve();
    signed_in(&browser, &env, &server).await;
    // `confirm()` answers yes, as the person would.
    let yes = "window.confirm = () => true; return 1";

    // MCP servers: test finds the tools, a policy is set per tool and saved.
    browser.goto(&server.url("/ui/servers")).await;
    browser.wait_for("#srv-up button.test", WAIT).await.expect("the server is listed").click().await;
    let found = browser.wait_for("#srv-up tr[data-tool=delete_everything] select", WAIT).await;
    assert!(found.is_some(), "the test lists the server's tools: {}", browser.source().await);
    let verdict: Value = browser.eval("return document.querySelector('#srv-up tr[data-tool=echo] select').value").await;
    assert_eq!(verdict, json!("allow"), "the saved policy shows");
    browser
        .eval("const s = document.querySelector('#srv-up tr[data-tool=delete_everything] select'); s.value = 'gated'; return 1")
        .await;
    browser.wait_for("#srv-up button.save", WAIT).await.unwrap().click().await;
    let saved = until(WAIT, || async {
        env.json(&["mcp", "status", "up", "--json"])["tool_policy"]["gated"] == json!(["delete_everything"])
    })
    .await;
    assert!(saved, "the policy is in the record: {}", env.ok(&["mcp", "status", "up", "--json"]));
    assert_eq!(env.json(&["mcp", "status", "up", "--json"])["tool_policy"]["allow"], json!(["echo"]));
    browser.shots("ui-servers", (1280, 900)).await;

    // Clients: a bridge client, its key shown once with the claude line; the key works.
    browser.goto(&server.url("/ui/clients")).await;
    browser.eval(yes).await;
    browser.wait_for("#c-name", WAIT).await.unwrap().type_text("workstation").await;
    browser.wait_for("#c-note", WAIT).await.unwrap().type_text("Ada's laptop").await;
    browser.wait_for("#add-client button[type=submit]", WAIT).await.unwrap().click().await;
    let once = browser.wait_for("#once:not([hidden]) pre.key", WAIT).await.expect("the key is shown");
    let key = once.text().await;
    assert!(key.starts_with("hal0bk_"), "{key}");
    let shown = browser.wait_for("#once", WAIT).await.unwrap().text().await;
    assert!(shown.contains("claude mcp add") && shown.contains("Shown once"), "{shown}");
    let me = reqwest::Client::new().get(server.url("/api/bridge/me")).bearer_auth(&key).send().await.unwrap();
    assert_eq!(me.status(), 200, "the shown key is the client's");
    browser.wait_for("#client-workstation", WAIT).await.expect("the client is listed");
    browser.shots("ui-clients", (1280, 900)).await;
    // A consumer key for the proxy.
    browser.eval("const s = document.querySelector('#k-server'); s.value = 'up'; return s.value").await;
    browser.wait_for("#k-name", WAIT).await.unwrap().type_text("ci").await;
    browser.wait_for("#add-key button[type=submit]", WAIT).await.unwrap().click().await;
    assert!(browser.wait_for("#key-up-ci", WAIT).await.is_some(), "the consumer is listed");
    let shown = browser.wait_for("#once", WAIT).await.unwrap().text().await;
    let pk = shown.lines().find(|l| l.starts_with("hal0pk_")).unwrap_or_else(|| panic!("{shown}")).to_string();
    assert!(shown.contains("/mcp/proxy/up/mcp") && shown.contains("claude mcp add"), "{shown}");
    let consumers = env.json(&["mcp", "keys", "list", "up", "--json"]);
    assert_eq!(consumers[0]["name"], "ci", "{consumers}");
    assert!(!env.ok(&["activity", "export"]).contains(&pk), "the key is in no log");
    // Revoke both; the bridge key stops working at once.
    browser.eval(yes).await;
    browser.wait_for("#client-workstation button.revoke", WAIT).await.unwrap().click().await;
    assert!(
        until(WAIT, || async {
            let r = reqwest::Client::new().get(server.url("/api/bridge/me")).bearer_auth(&key).send().await.unwrap();
            r.status() == 401
        })
        .await,
        "a revoked client's key is refused"
    );
    // The revoke re-renders both tables: click the new row's button, not the one it replaced.
    assert!(browser.wait_for("#client-workstation.revoked", WAIT).await.is_some(), "the client shows revoked");
    browser.wait_for("#key-up-ci button.revoke", WAIT).await.unwrap().click().await;
    assert!(until(WAIT, || async { env.json(&["mcp", "keys", "list", "up", "--json"])[0]["revoked"] == true }).await);

    // Activity: the person's changes, filtered by tool.
    browser.goto(&server.url("/ui/activity")).await;
    browser.wait_for("#entries tr", WAIT).await.expect("entries show");
    browser.wait_for("#a-tool", WAIT).await.unwrap().type_text("bridge_client_add").await;
    browser.wait_for("#filters button", WAIT).await.unwrap().click().await;
    let only = until(WAIT, || async {
        let tools =
            browser.eval("return [...document.querySelectorAll('#entries tr code')].map(c => c.textContent)").await;
        tools.as_array().is_some_and(|t| !t.is_empty() && t.iter().all(|x| x == "bridge_client_add"))
    })
    .await;
    assert!(only, "the filter applies: {}", browser.source().await);
    let who = browser.wait_for("#entries tr", WAIT).await.unwrap().text().await;
    assert!(who.contains("person:"), "the person is the identity: {who}");
    browser.shots("ui-activity", (1280, 900)).await;

    // Health: doctor's rows.
    browser.goto(&server.url("/ui/health")).await;
    let row = browser.wait_for("[data-row=config]", WAIT).await.expect("doctor's rows show");
    assert!(row.text().await.contains("config"), "{}", row.text().await);
    let rows: Value = browser.eval("return document.querySelectorAll('#rows li').length").await;
    // (doctor exits 1 when a row fails, as it may on a test box)
    let doctor: Value = serde_json::from_str(&env.run(&["doctor", "--json"]).stdout()).unwrap();
    assert_eq!(rows.as_u64().unwrap() as usize, doctor["rows"].as_array().unwrap().len(), "every row: {doctor}");
    browser.shots("ui-health", (1280, 900)).await;
    browser.close().await;
}

/// At a phone's width: a run has a permalink that opens it, its streamed text is grouped
/// (not one row per token), its approval event links to the card, times read as a person
/// reads them (the exact time on hover), and nothing is wider than the viewport (headless
/// Chromium keeps its window at least about 480 px wide, so that is the width checked).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_reads_well_on_a_phone() {
    let Some(browser) = browser(390, 844).await else { return };
    let (env, _hermes, _home) = with_hermes(Duration::from_millis(20)).await;
    let key = env.bridge_key("laptop", &[]);
    let server = env.serve();
    let c = connect(&server, &key).await;
    let slow = call(&c, "agent_run", json!({"agent": "hermes", "input": "SLOW a long story"})).await.unwrap();
    let slow = slow["run_id"].as_str().unwrap().to_string();
    call(&c, "agent_run_wait", json!({"run_id": slow, "timeout_s": 60})).await.unwrap();
    let ask = call(&c, "agent_run", json!({"agent": "hermes", "input": "APPROVE it"})).await.unwrap();
    let ask = ask["run_id"].as_str().unwrap().to_string();
    assert!(
        until(WAIT, || async {
            call(&c, "agent_run_status", json!({"run_id": ask})).await.unwrap()["status"] == "waiting_for_approval"
        })
        .await
    );
    signed_in(&browser, &env, &server).await;

    // The permalink opens the run; 60 deltas are a handful of rows, not 60.
    browser.goto(&server.url(&format!("/ui/runs#run-{slow}"))).await;
    let h = browser.wait_for("#h-run a.permalink", WAIT).await.expect("the run opens from its link");
    assert_eq!(h.text().await, slow);
    assert!(browser.wait_for("#events li.grouped", WAIT).await.is_some(), "grouped deltas");
    let rows = browser.eval("return document.querySelectorAll('#events li').length").await.as_u64().unwrap();
    assert!(rows < 20, "{rows} event rows for a run of 60 deltas");
    let grouped = browser.eval("return document.querySelector('#events li.grouped code').textContent").await;
    assert!(grouped.as_str().is_some_and(|g| g.contains('×')), "{grouped}");
    let t = browser
        .eval("const t = document.querySelector('#run-meta time'); return [t.getAttribute('datetime'), t.title]")
        .await;
    assert!(t[0].as_str().is_some_and(|d| d.contains('T')) && t[1].as_str().is_some_and(|s| !s.is_empty()), "{t}");
    let wide = browser.eval("return document.documentElement.scrollWidth").await.as_u64().unwrap();
    let view = browser.eval("return window.innerWidth").await.as_u64().unwrap();
    let culprits = browser
        .eval("return [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > window.innerWidth && ![...e.children].some(c => c.getBoundingClientRect().right > window.innerWidth)).slice(0, 8).map(e => e.tagName + '#' + e.id + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))")
        .await;
    assert!(wide <= view, "the page is {wide} px wide in a {view} px viewport: {culprits}");

    // The run waiting on a person links to its card.
    browser.goto(&server.url(&format!("/ui/runs#run-{ask}"))).await;
    let link = browser.wait_for("#events a.to-card", WAIT).await.expect("the approval event links to its card");
    let card = env.json(&["approvals", "list", "--json"])[0]["id"].as_str().unwrap().to_string();
    let href = browser.eval("return document.querySelector('#events a.to-card').getAttribute('href')").await;
    assert_eq!(href, json!(format!("/ui/#ap-{card}")));
    link.click().await;
    assert!(browser.wait_for(&format!("#ap-{card} time[title]"), WAIT).await.is_some(), "the card, with its time");
    let wide = browser.eval("return document.documentElement.scrollWidth").await.as_u64().unwrap();
    let view = browser.eval("return window.innerWidth").await.as_u64().unwrap();
    assert!(wide <= view, "the inbox is {wide} px wide in a {view} px viewport");
    browser.close().await;
}
