//! Named people (issue 36, item 4): `hal0 ui user` adds people with a password and/or a
//! passkey; a link is minted for a person and says who made it; sessions belong to a
//! person; every decision is audited as `person:NAME` with the surface it came from; a
//! passkey registers and signs in through Chromium's virtual authenticator, and
//! `[approvals] passkey_required` takes decisions only from a passkey session.

use crate::dashboard::{WAIT, browser, csrf_of, on};
use crate::support::*;
use serde_json::{Value, json};

/// The audit rows of approval `id`'s decision that ended with `verdict`.
fn decision(env: &Env, id: &str, verdict: &str) -> Vec<Value> {
    env.ok(&["activity", "export"])
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["approval_id"] == json!(id) && e["verdict"] == verdict)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn named_people_sign_in_as_themselves_and_their_decisions_say_so() {
    let env = Env::new();
    env.ok(&["auth", "rotate", "admin", "--yes"]);
    // Adding people, and bad input.
    let added = env.with_stdin(&["ui", "user", "add", "alice", "--password"], "correct horse battery\n");
    assert_eq!(added.code(), 0, "{}", added.stderr());
    env.ok(&["ui", "user", "add", "bob"]);
    for (args, code) in [
        (&["ui", "user", "add", "Alice"][..], "ui.invalid_name"),
        (&["ui", "user", "add", "alice"][..], "ui.person_exists"),
        (&["ui", "login", "--user", "carol"][..], "ui.no_such_person"),
        (&["ui", "user", "remove", "carol"][..], "ui.no_such_person"),
        (&["ui", "user", "remove-passkey", "nope"][..], "ui.no_such_passkey"),
    ] {
        let out = env.run(args);
        assert_ne!(out.code(), 0, "{args:?}");
        assert!(out.stderr().contains(code), "{args:?}: {}", out.stderr());
    }
    let short = env.with_stdin(&["ui", "user", "passwd", "bob"], "short\n");
    assert!(short.stderr().contains("ui.password_too_short"), "{}", short.stderr());
    let people = env.json(&["ui", "user", "list", "--json"]);
    let rows: Vec<(String, bool)> = people
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap().to_string(), p["password"].as_bool().unwrap()))
        .collect();
    assert_eq!(rows, [("alice".to_string(), true), ("bob".to_string(), false)]);
    let table = env.ok(&["ui", "user", "list"]);
    assert!(table.contains("alice") && table.contains("yes") && !table.contains("argon2"), "{table}");

    let server = env.serve();
    let http = reqwest::Client::new();
    let login = |body: Value| http.post(server.url("/ui/login")).json(&body).send();
    // A wrong password, a name that is no one's, a person without a password: all alike.
    for body in [
        json!({"name": "alice", "password": "wrong horse battery"}),
        json!({"name": "carol", "password": "correct horse battery"}),
        json!({"name": "bob", "password": "correct horse battery"}),
    ] {
        let r = login(body.clone()).await.unwrap();
        assert_eq!(r.status(), 401, "{body}");
        assert_eq!(r.json::<Value>().await.unwrap()["error"]["code"], "ui.wrong_password", "{body}");
    }
    let r = login(json!({"name": "alice", "password": "correct horse battery"})).await.unwrap();
    assert_eq!(r.status(), 200);
    let cookie = r.headers()["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_string();
    let page = http.get(server.url("/ui/")).header("cookie", &cookie).send().await.unwrap().text().await.unwrap();
    assert!(page.contains(">alice</a>"), "the header names the person: {page}");
    let csrf = csrf_of(&page);
    let me: Value = http
        .get(server.url("/ui/account/passkeys"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!((me["person"].as_str(), me["via"].as_str()), (Some("alice"), Some("password")), "{me}");

    // Alice denies a card on the dashboard: the row and the audit entry name her.
    pending_card(&env, "ap_people1", "config_write");
    let r = http
        .post(server.url("/api/agent/approvals/ap_people1/deny"))
        .header("cookie", &cookie)
        .header("x-csrf-token", &csrf)
        .json(&json!({"reason": "not now"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    let row = env.json(&["agent", "approvals", "show", "ap_people1", "--json"]);
    assert_eq!(row["decided_by"], "person:alice", "{row}");
    let d = decision(&env, "ap_people1", "denied");
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!((d[0]["identity"].as_str(), d[0]["surface"].as_str()), (Some("person:alice"), Some("ui")));

    // At the shell, the decision is the shell user's, as a person, from the cli surface.
    pending_card(&env, "ap_people2", "config_write");
    env.ok(&["agent", "approvals", "deny", "ap_people2", "--yes"]);
    let d = decision(&env, "ap_people2", "denied");
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(d[0]["identity"].as_str().unwrap().starts_with("person:"), "{}", d[0]);
    assert_eq!(d[0]["surface"], "cli");

    // A link minted for bob says who made it, and opens bob's session.
    let link = env.json(&["ui", "login", "--user", "bob", "--json"]);
    assert_eq!(link["person"], "bob");
    let url = on(&server, link["url"].as_str().unwrap());
    let page = http.get(&url).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("as <strong>bob</strong>") && page.contains("Link made by <code>cli:"), "{page}");
    let token = url.split_once("token=").unwrap().1;
    let r = login(json!({"token": token})).await.unwrap();
    let bob = r.headers()["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_string();
    let me: Value =
        http.get(server.url("/ui/account/passkeys")).header("cookie", &bob).send().await.unwrap().json().await.unwrap();
    assert_eq!(me["person"], "bob");
    assert!(me["via"].as_str().unwrap().starts_with("link from cli:"), "{me}");
    let sessions = env.json(&["ui", "sessions", "--json"]);
    let mut persons: Vec<&str> = sessions.as_array().unwrap().iter().filter_map(|s| s["person"].as_str()).collect();
    persons.sort();
    assert_eq!(persons, ["alice", "bob"], "{sessions}");

    // Removing alice ends her session.
    env.ok(&["ui", "user", "remove", "alice"]);
    let r = http.get(server.url("/ui/account/passkeys")).header("cookie", &cookie).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let log = env.ok(&["activity", "export"]);
    for tool in ["ui_user_add", "ui_user_remove", "ui_login"] {
        assert!(log.contains(tool), "{tool} is audited:\n{log}");
    }
    // A passkey sign-in needs a host name: by IP address it is refused with what to open.
    let r = http.post(server.url("/ui/login/passkey")).send().await.unwrap();
    assert_eq!(r.status(), 403);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"]["code"], "ui.passkey_unavailable");
    assert!(e["error"]["message"].as_str().unwrap().contains("localhost"), "{e}");
    // Malformed passkey answers are refused, never a panic.
    for body in [
        json!({"passkey": {"request": "nope", "credential": {"id": "x", "clientDataJson": "x", "authenticatorData": "x", "signature": "x"}}}),
        json!({"passkey": {"request": "nope"}}),
        json!({"passkey": 1, "name": "bob"}),
    ] {
        let r = http.post(on_localhost(&server, "/ui/login")).json(&body).send().await.unwrap();
        assert!(r.status() == 400 || r.status() == 401, "{body}: {}", r.status());
    }
}

/// The page on `server` as `http://localhost:PORT/…` (a passkey is bound to a host name).
fn on_localhost(server: &Server, url: &str) -> String {
    let path = url.split_once("/ui/").map(|(_, p)| format!("/ui/{p}")).unwrap_or_else(|| url.to_string());
    server.url(&path).replace("127.0.0.1", "localhost")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_passkey_registers_signs_in_and_is_required_to_decide_in_chromium() {
    let Some(browser) = browser(412, 915).await else { return };
    let env = Env::new();
    env.ok(&["auth", "rotate", "admin", "--yes"]);
    let toml_path = env.config_dir().join("hal0.toml");
    let toml = std::fs::read_to_string(&toml_path).unwrap_or_default();
    std::fs::write(&toml_path, format!("{toml}\n[approvals]\npasskey_required = true\n")).unwrap();
    let added = env.json(&["ui", "user", "add", "alice", "--passkey", "--json"]);
    let link = added["passkey_link"].as_str().unwrap().to_string();
    assert!(link.ends_with("&then=account"), "{link}");
    let server = env.serve();
    let authenticator = browser.virtual_authenticator().await;

    // The link opens alice's page; she adds a passkey there.
    browser.goto(&on_localhost(&server, &link)).await;
    browser.wait_for("#add-passkey", WAIT).await.unwrap_or_else(|| panic!("no account page"));
    browser.wait_for("#label", WAIT).await.unwrap().type_text("laptop").await;
    browser.wait_for("#add-passkey", WAIT).await.unwrap().click().await;
    let row = browser.wait_for("#keys tr[data-id]", WAIT).await;
    assert!(row.is_some(), "the passkey is listed: {}", browser.source().await);
    assert_eq!(browser.authenticator_credentials(&authenticator).await.len(), 1);
    let keys = env.json(&["ui", "user", "passkeys", "alice", "--json"]);
    assert_eq!(keys.as_array().unwrap().len(), 1, "{keys}");
    assert_eq!((keys[0]["label"].as_str(), keys[0]["algorithm"].as_str()), (Some("laptop"), Some("ES256")));
    browser.shots("ui-account", (412, 915)).await;

    // Her link session may not decide: the box wants a passkey session.
    pending_card(&env, "ap_pk1", "config_write");
    browser.goto(&on_localhost(&server, "/ui/")).await;
    browser.wait_for("#ap-ap_pk1 button.deny", WAIT).await.unwrap().click().await;
    let refused = eventually(WAIT, async || {
        browser
            .eval("return document.querySelector('#ap-ap_pk1 .result').textContent")
            .await
            .as_str()
            .unwrap_or("")
            .contains("approvals.passkey_required")
    })
    .await;
    assert!(refused, "a link session is refused: {}", browser.source().await);

    // Signed out, she signs in with the passkey alone and decides.
    browser.wait_for("#logout", WAIT).await.unwrap().click().await;
    browser.goto(&on_localhost(&server, "/ui/login")).await;
    let button = browser.wait_for("#passkey:not([hidden])", WAIT).await.expect("the passkey button");
    browser.shots("ui-login", (412, 915)).await;
    button.click().await;
    assert!(
        browser.wait_for("#pending", WAIT).await.is_some(),
        "signed in with the passkey: {}",
        browser.source().await
    );
    browser.wait_for("#ap-ap_pk1 button.deny", WAIT).await.unwrap().click().await;
    assert!(browser.wait_for("#done-ap_pk1", WAIT).await.is_some(), "decided: {}", browser.source().await);
    let d = decision(&env, "ap_pk1", "denied");
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!((d[0]["identity"].as_str(), d[0]["surface"].as_str()), (Some("person:alice"), Some("ui")));
    let log = env.ok(&["activity", "export"]);
    assert!(
        log.lines().any(|l| l.contains("ui_login") && l.contains("\"passkey\"") && l.contains("person:alice")),
        "{log}"
    );
    let keys = env.json(&["ui", "user", "passkeys", "alice", "--json"]);
    assert!(keys[0]["last_used"].is_string(), "{keys}");

    // The shell still decides with passkey_required on.
    pending_card(&env, "ap_pk2", "config_write");
    env.ok(&["agent", "approvals", "deny", "ap_pk2", "--yes"]);
    browser.close().await;
}
