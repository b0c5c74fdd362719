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
        missing_external("chromium or /usr/bin/chromedriver", "apt install chromium chromium-driver");
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

/// The token of a `hal0 ui login` link.
fn token_of(link: &str) -> String {
    link.split_once("token=").unwrap().1.to_string()
}

/// A session as a link's page opens one (its token POSTed to `/ui/login`): the cookie
/// (`name=value`) and the CSRF token of the inbox page.
pub(crate) async fn sign_in(server: &Server, link: &str) -> (String, String) {
    let http = reqwest::Client::new();
    let r = http.post(server.url("/ui/login")).json(&json!({"token": token_of(link)})).send().await.unwrap();
    assert_eq!(r.status(), 200, "{link}");
    let set = r.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(set.contains("HttpOnly") && set.contains("SameSite=Strict") && set.contains("Path=/"), "{set}");
    let cookie = set.split(';').next().unwrap().to_string();
    let page = http.get(server.url("/ui/")).header("cookie", &cookie).send().await.unwrap().text().await.unwrap();
    (cookie, csrf_of(&page))
}

/// The CSRF token a dashboard page carries (`<meta name="csrf-token">`).
pub(crate) fn csrf_of(page: &str) -> String {
    page.split("<meta name=\"csrf-token\" content=\"")
        .nth(1)
        .unwrap_or_else(|| panic!("no CSRF token in {page}"))
        .split('"')
        .next()
        .unwrap()
        .to_string()
}

/// `browser` signed in on `server` with a new link: the link's page, then the inbox.
pub(crate) async fn signed_in(browser: &Browser, env: &Env, server: &Server) {
    browser.goto(&on(server, &link(env))).await;
    assert!(browser.wait_for("#pending", WAIT).await.is_some(), "not signed in: {}", browser.source().await);
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
    assert_eq!(sessions.as_array().map(Vec::len), Some(1), "{sessions}");
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
    assert!(got["decided_by"].as_str().unwrap().starts_with("person:"), "{got}");

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
    let (token, csrf) = sign_in(&server, &link(&env)).await;
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
    assert_eq!(env.json(&["ui", "sessions", "--json"]), serde_json::json!([]));
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
    // Longer than the heads the list carries (1024 bytes): opened, it is read whole.
    let long = format!("deploy the build to gamma-host {}", "and check every service. ".repeat(100));
    exchange(&env, "r1", ("alpha", "beta"), "ok", (&long, Some("Deployed; all green.")), 60);
    exchange(&env, "r2", ("beta", "gamma"), "timeout", ("summarise the logs", None), 40);
    exchange(&env, "r3", ("gamma", "alpha"), "ok", ("what is the deploy window?", Some("Tuesdays 10:00")), 20);

    signed_in(&browser, &env, &server).await;
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
    let mut msg = String::new();
    for _ in 0..50 {
        msg = browser.wait_for("#ex-r1 .msg", WAIT).await.unwrap().text().await;
        if !msg.contains("[cut:") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(msg.trim(), long.trim(), "opened, the whole message is read");
    browser.shots("ui-conversations", (1280, 900)).await;

    // New exchanges arrive; the next refresh shows the matching one and keeps the rest.
    exchange(&env, "r4", ("beta", "alpha"), "ok", ("deploy done?", Some("yes")), 1);
    exchange(&env, "r5", ("beta", "gamma"), "ok", ("deploy done?", Some("yes")), 1);
    assert!(
        browser.wait_for("#ex-r4", Duration::from_secs(10)).await.is_some(),
        "the refresh did not bring r4: {}",
        browser.source().await
    );
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

/// A page of another site (or another port of this box) on 127.0.0.1, serving `html` at `/`;
/// its port.
async fn foreign_page(html: String) -> u16 {
    let app = axum::Router::new().route("/", axum::routing::get(move || async move { axum::response::Html(html) }));
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
    port
}

/// The four headers every `/ui` answer carries, checked on `r` (`what` names it).
fn assert_ui_headers(r: &reqwest::Response, what: &str) {
    let h = r.headers();
    let get = |n: &str| h.get(n).and_then(|v| v.to_str().ok()).unwrap_or_else(|| panic!("{what}: no {n}: {h:?}"));
    let csp = get("content-security-policy");
    for part in ["frame-ancestors 'none'", "default-src 'self'", "script-src 'self';", "style-src 'self';"] {
        assert!(csp.contains(part), "{what}: {csp}");
    }
    assert!(!csp.contains("unsafe-"), "{what}: {csp}");
    assert_eq!(get("x-frame-options"), "DENY", "{what}");
    assert_eq!(get("x-content-type-options"), "nosniff", "{what}");
    assert_eq!(get("referrer-policy"), "no-referrer", "{what}");
}

/// Clickjacking (issue 32): every `/ui` answer — pages, sign-in, sign-out, assets,
/// refusals, the guard's own refusals — forbids framing (CSP `frame-ancestors 'none'`,
/// `X-Frame-Options: DENY`) and sniffing, sends no referrer, and the signed-in pages run
/// no inline script or style (their CSP would block it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_dashboard_answer_forbids_framing_and_inline_script() {
    let env = Env::new();
    env.ok(&["auth", "rotate", "admin", "--yes"]);
    let server = env.serve();
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let (cookie, _csrf) = sign_in(&server, &link(&env)).await;
    let get = |path: &str| http.get(server.url(path));
    let cases: Vec<(&str, reqwest::RequestBuilder, u16)> = vec![
        ("root", get("/ui"), 303),
        ("inbox, no session", get("/ui/"), 401),
        ("inbox", get("/ui/").header("cookie", &cookie), 200),
        ("runs", get("/ui/runs").header("cookie", &cookie), 200),
        ("login form off", get("/ui/login"), 401),
        ("unknown link", get("/ui/login?token=hal0ul_nope"), 403),
        ("link page", http.get(on(&server, &link(&env))), 200),
        ("script", get("/ui/assets/common.js"), 200),
        ("style", get("/ui/assets/style.css"), 200),
        ("no such asset", get("/ui/assets/nope.js"), 404),
        ("no such page", get("/ui/nope"), 404),
        ("bad sign-in", http.post(server.url("/ui/login")).json(&json!({"nope": 1})), 400),
        ("logout without CSRF", http.post(server.url("/ui/logout")).header("cookie", &cookie).json(&json!({})), 403),
        ("foreign host", get("/ui/").header("host", "evil.example"), 421),
    ];
    for (what, req, status) in cases {
        let r = req.send().await.unwrap();
        assert_eq!(r.status(), status, "{what}");
        assert_ui_headers(&r, what);
        if what == "inbox" {
            let page = r.text().await.unwrap();
            assert!(!page.contains("<style") && !page.contains("style="), "inline style: {page}");
            let tags: Vec<&str> = page.split("<script").skip(1).collect();
            assert_eq!(tags.len(), 2, "{page}");
            assert!(tags.iter().all(|t| t.starts_with(" src=\"/ui/assets/") && t.contains("></script>")), "{page}");
        } else if what == "script" {
            assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/javascript"));
        }
    }
}

/// Clickjacking, in a browser: a page on another port of this box frames a signed-in
/// `/ui/`; the dashboard does not load in the frame, so no click on the framing page can
/// land on Approve.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_in_dashboard_cannot_be_framed() {
    let Some(browser) = browser(1280, 900).await else { return };
    let env = Env::new();
    env.ok(&["auth", "rotate", "admin", "--yes"]);
    let server = env.serve();
    signed_in(&browser, &env, &server).await;
    let framer = foreign_page(format!(
        "<!doctype html><p>win a prize</p><iframe id=f src=\"{}\" width=800 height=600 \
         onload=\"document.body.dataset.loaded = 1\"></iframe>",
        server.url("/ui/")
    ))
    .await;
    browser.goto(&format!("http://127.0.0.1:{framer}/")).await;
    assert!(
        browser.wait_for("body[data-loaded]", WAIT).await.is_some(),
        "the frame finished: {}",
        browser.source().await
    );
    browser.frame(Some(0)).await;
    let inside: Value = browser.eval("return [location.href, !!document.querySelector('#pending')]").await;
    browser.frame(None).await;
    assert_eq!(inside[1], json!(false), "the inbox loaded inside another page's frame: {inside}");
    browser.close().await;
}

/// A sign-in link clicked on another site (webmail) signs in: the link's page spends the
/// link with its own same-origin request, so the Strict cookie is set by and sent with
/// same-site requests. A mail scanner that fetches the link first (no script) does not
/// use it up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_clicked_on_another_site_signs_in() {
    let Some(browser) = browser(1280, 900).await else { return };
    let env = Env::new();
    env.ok(&["auth", "rotate", "admin", "--yes"]);
    let server = env.serve();
    let l = on(&server, &link(&env));
    // The scanner.
    let scanned = reqwest::get(&l).await.unwrap();
    assert_eq!(scanned.status(), 200);
    assert!(!scanned.headers().contains_key("set-cookie"), "a GET of the link opens no session");
    // Webmail on another site (`localhost` is another site than `127.0.0.1`).
    let mail = foreign_page(format!("<!doctype html><p>Your hal0 link: <a id=go href=\"{l}\">sign in</a></p>")).await;
    browser.goto(&format!("http://localhost:{mail}/")).await;
    browser.wait_for("#go", WAIT).await.expect("the mail shows").click().await;
    assert!(browser.wait_for("#pending", WAIT).await.is_some(), "not signed in: {}", browser.source().await);
    assert_eq!(env.json(&["ui", "sessions", "--json"]).as_array().map(Vec::len), Some(1));
    // Spent now: opened again, the link is refused with its code.
    let again = reqwest::get(&l).await.unwrap();
    assert_eq!(again.status(), 403);
    assert!(again.text().await.unwrap().contains("ui.link_used"));
    browser.close().await;
}

/// Password guessing (issue 32): 60 concurrent wrong guesses at the daemon. Each attempt
/// is counted before its password is hashed, so at most [`MAX_FAILURES`] are hashed (their
/// answer is `ui.wrong_password`); every other is refused with `ui.too_many_attempts`
/// unhashed. Every attempt is audited.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_wrong_passwords_are_refused_before_they_are_hashed() {
    const MAX_FAILURES: usize = 5;
    const GUESSES: usize = 60;
    let env = Env::new();
    env.ok(&["auth", "rotate", "admin", "--yes"]);
    let mut c = env.cmd(&["ui", "passwd"]).stdin(std::process::Stdio::piped()).spawn().unwrap();
    std::io::Write::write_all(&mut c.stdin.take().unwrap(), b"correct horse battery\n").unwrap();
    assert!(c.wait().unwrap().success());
    let server = env.serve();
    let http = reqwest::Client::new();
    let guesses = (0..GUESSES).map(|i| {
        let req = http.post(server.url("/ui/login")).json(&json!({"password": format!("guess {i}")}));
        async move {
            let r = req.send().await.unwrap();
            let status = r.status().as_u16();
            let body: Value = r.json().await.unwrap();
            (status, body["error"]["code"].as_str().unwrap_or_default().to_string())
        }
    });
    let answers = futures::future::join_all(guesses).await;
    let hashed = answers.iter().filter(|(s, c)| *s == 401 && c == "ui.wrong_password").count();
    let refused = answers.iter().filter(|(s, c)| *s == 429 && c == "ui.too_many_attempts").count();
    assert_eq!((hashed, refused), (MAX_FAILURES, GUESSES - MAX_FAILURES), "{answers:?}");
    let r =
        http.post(server.url("/ui/login")).json(&json!({"password": "correct horse battery"})).send().await.unwrap();
    assert_eq!(r.status(), 429, "the window is spent");
    let log = env.ok(&["activity", "export"]);
    let audited = log.lines().filter(|l| l.contains("ui_login") && l.contains("refused")).count();
    assert_eq!(audited, GUESSES + 1, "{log}");
}

/// Cookie tossing (issue 32): another page of this host (a sibling port) sets a second
/// `hal0_session` cookie, with a longer path, to be sent before ours. hal0 acts in neither
/// session and says why (`ui.session_ambiguous`); with one cookie it works as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_session_cookie_is_refused() {
    let env = Env::new();
    env.ok(&["auth", "rotate", "admin", "--yes"]);
    let server = env.serve();
    let (ours, _) = sign_in(&server, &link(&env)).await;
    let (tossed, _) = sign_in(&server, &link(&env)).await;
    let http = reqwest::Client::new();
    let read = |cookie: String| http.get(server.url("/api/agent/approvals")).header("cookie", cookie).send();
    assert_eq!(read(ours.clone()).await.unwrap().status(), 200);
    for both in [format!("{tossed}; {ours}"), format!("{ours}; {tossed}"), format!("{ours}; {ours}")] {
        let r = read(both.clone()).await.unwrap();
        assert_eq!(r.status(), 401, "{both}");
        assert!(r.text().await.unwrap().contains("ui.session_ambiguous"), "{both}");
    }
    let page = http.get(server.url("/ui/")).header("cookie", format!("{tossed}; {ours}")).send().await.unwrap();
    assert_eq!(page.status(), 401);
    assert!(page.text().await.unwrap().contains("ui.session_ambiguous"));
}

/// Over https (hal0 serving TLS itself) the session cookie is `__Host-hal0_session`:
/// Secure, `Path=/`, no `Domain`, which a browser takes only from a secure page of this
/// host; the unprefixed name opens nothing there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_https_the_session_cookie_is_host_prefixed() {
    use crate::support::tls::{Ca, Flaw};
    let ca = Ca::new();
    let env = Env::new();
    env.ok(&["auth", "rotate", "admin", "--yes"]);
    let (cert, key) = ca.leaf(&["localhost", "127.0.0.1"], Flaw::None).write(env.dir.path(), "serve");
    env.ok(&["config", "set", "network.tls_cert", cert.to_str().unwrap()]);
    env.ok(&["config", "set", "network.tls_key", key.to_str().unwrap()]);
    let server = env.serve();
    assert!(server.base.starts_with("https://"), "{}", server.base);
    let http = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(ca.pem().as_bytes()).unwrap())
        .build()
        .unwrap();
    let r = http.post(server.url("/ui/login")).json(&json!({"token": token_of(&link(&env))})).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let set = r.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(set.starts_with("__Host-hal0_session=hal0us_"), "{set}");
    assert!(set.contains("; Secure") && set.contains("; Path=/;") && !set.contains("Domain"), "{set}");
    let value = set.split(';').next().unwrap().split_once('=').unwrap().1.to_string();
    let read = |cookie: String| http.get(server.url("/api/agent/approvals")).header("cookie", cookie).send();
    assert_eq!(read(format!("__Host-hal0_session={value}")).await.unwrap().status(), 200);
    assert_eq!(read(format!("hal0_session={value}")).await.unwrap().status(), 401, "the unprefixed name");
}

/// A person's decision on the dashboard is audited on surface `ui` (it was `cli`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dashboard_decision_is_audited_as_the_dashboards() {
    let env = Env::new();
    let admin = env.json(&["auth", "rotate", "admin", "--yes", "--json"])["key"].as_str().unwrap().to_string();
    let server = env.serve();
    let (cookie, csrf) = sign_in(&server, &link(&env)).await;
    let c = connect_with(&server, "admin", &admin, false).await;
    let queued =
        call(&c, "config_write", json!({"args": {"key": "network.public_url", "value": "https://box.example"}}))
            .await
            .unwrap();
    let id = queued["approval_id"].as_str().unwrap_or_else(|| panic!("{queued}")).to_string();
    c.cancel().await.unwrap();
    let r = reqwest::Client::new()
        .post(server.url(&format!("/api/agent/approvals/{id}/deny")))
        .header("cookie", &cookie)
        .header("x-csrf-token", &csrf)
        .json(&json!({"reason": "no"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let log = env.ok(&["activity", "export"]);
    let decision: Vec<Value> = log
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["approval_id"] == json!(id) && e["tool"] == "config_write" && e["verdict"] == "denied")
        .collect();
    assert_eq!(decision.len(), 1, "{log}");
    assert_eq!(decision[0]["surface"], "ui", "{}", decision[0]);
    assert!(decision[0]["identity"].as_str().unwrap().starts_with("person:"), "{}", decision[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_out_page_says_how_to_sign_in_in_words_and_offers_the_password_form() {
    let env = Env::new();
    let server = env.serve();
    let http = reqwest::Client::new();
    let r = http.get(server.url("/ui/runs")).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let body = r.text().await.unwrap();
    assert!(body.contains("<code>hal0 ui login</code>"), "{body}");
    assert!(!body.contains('`'), "no raw Markdown: {body}");
    drop(server);
    let mut c = env
        .cmd(&["ui", "passwd"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        c.stdin.take().unwrap().write_all(b"correct horse battery\n").unwrap();
    }
    assert!(c.wait().unwrap().success());
    let server = env.serve();
    let r = http.get(server.url("/ui/runs")).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let body = r.text().await.unwrap();
    assert!(body.contains("id=\"password\"") && body.contains("<code>hal0 ui login</code>"), "{body}");
}
