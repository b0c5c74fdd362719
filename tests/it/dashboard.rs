//! The dashboard in a real headless Chromium (Debian's, driven over WebDriver): a person
//! signs in with a one-time link from `hal0 ui login`; a gated `config_write` from an MCP
//! client appears in the inbox without a reload; approving it changes hal0.toml and the
//! caller reads the result; another is denied with a reason; an expired link and a used
//! one are refused; a request without the CSRF token is refused; sessions are listed and
//! ended from the shell, and an ended session's cookie opens nothing.

use crate::support::browser::Browser;
use crate::support::mcp::{call, connect_with};
use crate::support::*;
use serde_json::{Value, json};
use std::time::Duration;

pub(crate) const WAIT: Duration = Duration::from_secs(20);

/// A headless Chromium `width` × `height`, or `None` (skipped) without one, unless CI
/// requires it.
pub(crate) async fn browser(width: u32, height: u32) -> Option<Browser> {
    let b = Browser::start(width, height).await;
    if b.is_none() {
        if std::env::var("HAL0_REQUIRE_EXTERNAL").is_ok_and(|v| v == "1") {
            panic!("chromium and chromium-driver are needed (apt install chromium chromium-driver)");
        }
        eprintln!("skipped: no /usr/bin/chromedriver");
    }
    b
}

/// Whether the page comes to hold `text` within [`WAIT`] (a navigation can return before
/// the new page is the one the driver reads).
async fn shows(browser: &Browser, text: &str) -> bool {
    let deadline = std::time::Instant::now() + WAIT;
    while std::time::Instant::now() < deadline {
        if browser.source().await.contains(text) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

pub(crate) fn link(env: &Env) -> String {
    env.json(&["ui", "login", "--json"])["url"].as_str().unwrap().to_string()
}

/// `link` as served by `server` (the printed one names `[network].bind`).
pub(crate) fn on(server: &Server, link: &str) -> String {
    server.url(&format!("/ui/{}", link.split_once("/ui/").unwrap().1))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_signs_in_with_a_link_and_decides_in_the_browser() {
    let Some(browser) = browser(412, 915).await else { return };
    let env = Env::new();
    let admin = env.json(&["auth", "rotate", "admin", "--yes", "--json"])["key"].as_str().unwrap().to_string();
    let server = env.serve();

    // Not signed in: the page says how.
    browser.goto(&server.url("/ui/")).await;
    assert!(shows(&browser, "hal0 ui login").await, "{}", browser.source().await);

    // A link works once.
    let first = link(&env);
    browser.goto(&on(&server, &first)).await;
    assert!(browser.wait_for("#pending", WAIT).await.is_some(), "{}", browser.source().await);
    let sessions = env.json(&["ui", "sessions", "--json"]);
    assert_eq!(sessions["count"], 1, "{sessions}");
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let again = http.get(on(&server, &first)).send().await.unwrap();
    assert_eq!(again.status(), 403);
    assert!(again.text().await.unwrap().contains("ui.link_used"));

    // Hermes (the admin key over MCP) asks for a gated change: the row appears unasked.
    let c = connect_with(&server, "admin", &admin, false).await;
    let queued =
        call(&c, "config_write", json!({"args": {"key": "network.public_url", "value": "https://box.example"}}))
            .await
            .unwrap();
    let id = queued["approval_id"].as_str().unwrap_or_else(|| panic!("{queued}")).to_string();
    let row = browser.wait_for(&format!("#ap-{id}"), WAIT).await.expect("the gated call appears without a reload");
    let card = row.text().await;
    assert!(card.contains("config_write") && card.contains("https://box.example"), "{card}");
    browser.shots("ui-inbox", (412, 915)).await;
    // The admin key cannot decide it, even now.
    let r = http
        .post(server.url(&format!("/api/agent/approvals/{id}/approve")))
        .bearer_auth(&admin)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    // The caller waits on the row (approval_get with wait_s) while the person decides.
    let waiting = {
        let (peer, id) = (c.peer().clone(), id.clone());
        tokio::spawn(async move { call(&peer, "approval_get", json!({"args": {"id": id, "wait_s": 30}})).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "the caller waits while the row is pending");
    browser.wait_for(&format!("#ap-{id} button.approve"), WAIT).await.unwrap().click().await;
    let done = browser.wait_for(&format!("#done-{id}"), WAIT).await.expect("the row moves to decided");
    assert!(done.text().await.contains("executed"), "{}", done.text().await);
    let toml = std::fs::read_to_string(env.config_dir().join("hal0.toml")).unwrap();
    assert!(toml.contains("https://box.example"), "{toml}");
    let got = waiting.await.unwrap().unwrap();
    assert_eq!(got["status"], "executed", "the waiting caller gets the result: {got}");
    assert!(got["decided_by"].as_str().unwrap().starts_with("ui:us_"), "{got}");

    // Another, denied with a reason.
    let queued =
        call(&c, "config_write", json!({"args": {"key": "network.public_url", "value": "https://evil.example"}}))
            .await
            .unwrap();
    let id2 = queued["approval_id"].as_str().unwrap().to_string();
    browser.wait_for(&format!("#ap-{id2} input"), WAIT).await.unwrap().type_text("not this host").await;
    browser.wait_for(&format!("#ap-{id2} button.deny"), WAIT).await.unwrap().click().await;
    let done = browser.wait_for(&format!("#done-{id2}"), WAIT).await.expect("the denial shows");
    let text = done.text().await;
    assert!(text.contains("denied") && text.contains("not this host"), "{text}");
    assert!(!std::fs::read_to_string(env.config_dir().join("hal0.toml")).unwrap().contains("evil.example"));
    c.cancel().await.unwrap();

    // The session's cookie without its CSRF token changes nothing.
    let cookie: Value = browser.eval("return document.cookie").await;
    assert_eq!(cookie, json!(""), "the session cookie is HttpOnly");
    let (token, csrf) = {
        let l = link(&env);
        let r = http.get(on(&server, &l)).send().await.unwrap();
        let c = r.headers()["set-cookie"].to_str().unwrap().to_string();
        assert!(c.contains("HttpOnly") && c.contains("SameSite=Strict"), "{c}");
        let c = c.split(';').next().unwrap().to_string();
        let page = http.get(server.url("/ui/")).header("cookie", &c).send().await.unwrap().text().await.unwrap();
        (c, page.split("const CSRF = \"").nth(1).unwrap().split('"').next().unwrap().to_string())
    };
    let target = "ap_none";
    let no_csrf = http
        .post(server.url(&format!("/api/agent/approvals/{target}/deny")))
        .header("cookie", &token)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(no_csrf.status(), 403);
    assert!(no_csrf.text().await.unwrap().contains("ui.csrf_required"));
    let wrong = http
        .post(server.url(&format!("/api/agent/approvals/{target}/deny")))
        .header("cookie", &token)
        .header("x-csrf-token", "not-the-token")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 403);
    // A malformed decision from a person is refused with its code, not run.
    let bad = http
        .post(server.url(&format!("/api/agent/approvals/{target}/deny")))
        .header("cookie", &token)
        .header("x-csrf-token", &csrf)
        .json(&json!({"reason": 7}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    assert!(bad.text().await.unwrap().contains("approvals.invalid_request"));

    // An expired link.
    let old = link(&env);
    rusqlite::Connection::open(env.state_dir().join("hal0.db"))
        .unwrap()
        .execute("UPDATE ui_links SET expires_at = '2020-01-01T00:00:00Z' WHERE used_at IS NULL", [])
        .unwrap();
    let r = http.get(on(&server, &old)).send().await.unwrap();
    assert_eq!(r.status(), 403);
    assert!(r.text().await.unwrap().contains("ui.link_expired"));

    // Ended from the shell: the browser's session opens nothing any more.
    env.ok(&["ui", "logout", "--all"]);
    assert_eq!(env.json(&["ui", "sessions", "--json"])["count"], 0);
    let r = http.get(server.url("/api/agent/approvals")).header("cookie", &token).send().await.unwrap();
    assert_eq!(r.status(), 401);
    browser.goto(&server.url("/ui/")).await;
    assert!(shows(&browser, "hal0 ui login").await, "{}", browser.source().await);
    // Logins, decisions and logouts are in the audit log under the session.
    let log = env.ok(&["activity", "export"]);
    for tool in ["ui_login", "ui_logout"] {
        assert!(log.contains(tool), "{tool} is not in the audit log");
    }
    browser.close().await;
}

/// `n` exchanges written into the store as the relay writes them (from → to, status,
/// message, answer), started `ago` seconds before now.
fn exchange(
    env: &Env,
    id: &str,
    (from, to): (&str, &str),
    status: &str,
    (message, answer): (&str, Option<&str>),
    ago: i64,
) {
    let at = |s: i64| {
        (time::OffsetDateTime::now_utc() - time::Duration::seconds(s))
            .replace_nanosecond(0)
            .unwrap()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap()
    };
    let ended = (status != "pending").then(|| at(ago - 2));
    rusqlite::Connection::open(env.state_dir().join("hal0.db"))
        .unwrap()
        .execute(
            "INSERT INTO relay_exchanges (request_id, conversation_id, from_agent, to_agent, message, status, answer, error, started_at, ended_at)
             VALUES (?1, 'conv-1', ?2, ?3, ?4, ?5, ?6, NULL, ?7, ?8)",
            rusqlite::params![id, from, to, message, status, answer, at(ago), ended],
        )
        .unwrap();
}

/// Spec 002's page of conversations: a badge per bot (online / offline), exchanges newest
/// first, text search over message and answer, an agent filter, a long message cut at 180
/// characters with Show more revealing the answer, and an auto-refresh (every 3 s) that
/// keeps the search, the filter and the expanded rows while new exchanges arrive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversations_keep_search_filter_and_expanded_rows_across_refreshes() {
    let Some(browser) = browser(1280, 900).await else { return };
    let env = Env::new();
    env.ok(&["auth", "rotate", "admin", "--yes"]);
    let alpha = env.bridge_key("alpha", &["relay"]);
    env.bridge_key("beta", &["relay"]);
    env.bridge_key("gamma", &["relay"]);
    let server = env.serve();
    let _online = crate::relay::open_socket(&server, &alpha).await.unwrap();
    let long = format!("deploy the build to gamma-host {}", "and check every service. ".repeat(10));
    exchange(&env, "r1", ("alpha", "beta"), "ok", (&long, Some("Deployed; all green.")), 60);
    exchange(&env, "r2", ("beta", "gamma"), "timeout", ("summarise the logs", None), 40);
    exchange(&env, "r3", ("gamma", "alpha"), "ok", ("what is the deploy window?", Some("Tuesdays 10:00")), 20);

    browser.goto(&on(&server, &link(&env))).await;
    browser.goto(&server.url("/ui/conversations")).await;
    let Some(badge) = browser.wait_for("[data-agent=alpha].online", WAIT).await else {
        panic!("alpha is not shown online: {}", browser.source().await);
    };
    assert!(badge.text().await.contains("alpha"));
    assert!(browser.wait_for("[data-agent=beta].offline", WAIT).await.is_some());
    browser.wait_for("#ex-r1", WAIT).await.expect("the exchanges show");
    let order: Value =
        browser.eval("return [...document.querySelectorAll('#exchanges li')].map(l => l.dataset.id)").await;
    assert_eq!(order, json!(["r3", "r2", "r1"]), "newest first");
    let cut = browser.wait_for("#ex-r1 .msg", WAIT).await.unwrap().text().await;
    assert!(cut.ends_with('…') && cut.chars().count() == 181, "{cut}");

    // Search, filter, expand.
    browser.wait_for("#search", WAIT).await.unwrap().type_text("deploy").await;
    browser.eval("const s = document.querySelector('#agent'); s.value = 'alpha'; s.dispatchEvent(new Event('change')); return 1").await;
    browser.wait_for("#ex-r1 button.more", WAIT).await.unwrap().click().await;
    let shown = || async {
        browser.eval("return [...document.querySelectorAll('#exchanges li')].map(l => l.dataset.id)").await
    };
    assert_eq!(shown().await, json!(["r3", "r1"]), "deploy, with alpha");
    let answer = browser.wait_for("#ex-r1 .answer", WAIT).await.unwrap().text().await;
    assert_eq!(answer, "Deployed; all green.");
    browser.shots("ui-conversations", (1280, 900)).await;

    // New exchanges arrive; the next refresh shows the matching one and keeps the rest.
    exchange(&env, "r4", ("beta", "alpha"), "ok", ("deploy done?", Some("yes")), 1);
    exchange(&env, "r5", ("beta", "gamma"), "ok", ("deploy done?", Some("yes")), 1);
    assert!(browser.wait_for("#ex-r4", Duration::from_secs(10)).await.is_some(), "the refresh brought r4");
    assert_eq!(shown().await, json!(["r4", "r3", "r1"]), "search and filter kept across the refresh");
    let state: Value = browser
        .eval("return [document.querySelector('#search').value, document.querySelector('#agent').value, !!document.querySelector('#ex-r1 .answer')]")
        .await;
    assert_eq!(state, json!(["deploy", "alpha", true]), "expanded row kept");
    browser.close().await;
}

/// A person without a shell signs in with the dashboard password (`hal0 ui passwd`, an
/// argon2id hash in a 0600 file): a wrong one is refused on the page with its code, the
/// right one opens the inbox; five wrong ones pause password sign-in (429), each attempt is
/// audited, and `--remove` turns it off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_signs_in_and_wrong_guesses_are_throttled() {
    let Some(browser) = browser(412, 915).await else { return };
    let env = Env::new();
    env.ok(&["auth", "rotate", "admin", "--yes"]);
    let set = |pw: &str| {
        use std::io::Write;
        let mut c = env
            .cmd(&["ui", "passwd"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        c.stdin.take().unwrap().write_all(format!("{pw}\n").as_bytes()).unwrap();
        Out(c.wait_with_output().unwrap())
    };
    let short = set("short");
    assert_eq!(short.code(), 2);
    assert!(short.stderr().contains("ui.password_too_short"), "{}", short.stderr());
    assert_eq!(set("correct horse battery").code(), 0);
    let stored = std::fs::read_to_string(env.config_dir().join("ui-password")).unwrap();
    assert!(stored.starts_with("$argon2id$") && !stored.contains("horse"));
    let server = env.serve();

    browser.goto(&server.url("/ui/login")).await;
    let field = browser.wait_for("#password", WAIT).await.expect("the password form");
    field.type_text("wrong horse battery").await;
    browser.wait_for("#signin button", WAIT).await.unwrap().click().await;
    let err = browser.wait_for("#error:not([hidden])", WAIT).await.expect("the refusal shows");
    assert!(err.text().await.contains("ui.wrong_password"));
    browser.eval("document.querySelector('#password').value = ''; return 1").await;
    browser.wait_for("#password", WAIT).await.unwrap().type_text("correct horse battery").await;
    browser.wait_for("#signin button", WAIT).await.unwrap().click().await;
    assert!(browser.wait_for("#pending", WAIT).await.is_some(), "signed in: {}", browser.source().await);

    // Guessing: 4 more wrong ones make 5, then even the right one waits.
    let http = reqwest::Client::new();
    let try_pw = |pw: &'static str| {
        let (http, url) = (http.clone(), server.url("/ui/login"));
        async move { http.post(url).json(&json!({"password": pw})).send().await.unwrap() }
    };
    for _ in 0..4 {
        assert_eq!(try_pw("not it at all").await.status(), 401);
    }
    let r = try_pw("correct horse battery").await;
    assert_eq!(r.status(), 429);
    assert!(r.text().await.unwrap().contains("ui.too_many_attempts"));
    // Not JSON: refused with a code (a cross-site form cannot sign in).
    let r = http.post(server.url("/ui/login")).body("password=x").send().await.unwrap();
    assert_eq!(r.status(), 400);
    assert!(r.text().await.unwrap().contains("ui.invalid_request"));
    let log = env.ok(&["activity", "export"]);
    let refused = log.lines().filter(|l| l.contains("ui_login") && l.contains("refused")).count();
    assert_eq!(refused, 6, "every refused sign-in is audited:\n{log}");

    env.ok(&["ui", "passwd", "--remove"]);
    let r = http.get(server.url("/ui/login")).send().await.unwrap();
    assert_eq!(r.status(), 401, "no form without a password");
    browser.close().await;
}
