//! A person hears that a decision waits (issue 36): notification targets are added, listed,
//! tested and removed at the shell; a gated call through the proxy queues a card, and real
//! receivers get it: a webhook (an HTTP server that records, checking the HMAC signature,
//! refusing the first delivery so it is retried), an ntfy-style topic (title, priority,
//! click link) and e-mail over SMTP (`aiosmtpd`); the dashboard, at a phone's width, shows
//! the pending count in its menu and title, live, and the person approves there; the call
//! answers with the upstream's result. A card that is withdrawn is announced too.

use crate::support::upstream::RmcpUpstream;
use crate::support::*;
use axum::http::StatusCode;
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(30);

#[derive(Clone, Debug)]
pub(crate) struct Hit {
    pub(crate) path: String,
    pub(crate) headers: HashMap<String, String>,
    pub(crate) body: String,
}

/// An HTTP server that records every request; `/hook` answers 500 to the first `refuse`
/// deliveries of `approval.queued`.
#[derive(Clone, Default)]
pub(crate) struct Recorder {
    hits: Arc<Mutex<Vec<Hit>>>,
    refuse: Arc<AtomicUsize>,
}

impl Recorder {
    pub(crate) async fn start(refuse: usize) -> (String, Recorder) {
        let rec = Recorder { refuse: Arc::new(AtomicUsize::new(refuse)), ..Default::default() };
        let r = rec.clone();
        let app = axum::Router::new().fallback(move |req: axum::extract::Request| {
            let rec = r.clone();
            async move {
                let (parts, body) = req.into_parts();
                let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap();
                let headers = parts
                    .headers
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
                    .collect::<HashMap<_, _>>();
                let queued = headers.get("x-hal0-event").is_some_and(|e| e == "approval.queued");
                let path = parts.uri.path().to_string();
                rec.hits.lock().unwrap().push(Hit {
                    path: path.clone(),
                    headers,
                    body: String::from_utf8_lossy(&bytes).into(),
                });
                if queued
                    && path == "/hook"
                    && rec.refuse.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok()
                {
                    return StatusCode::INTERNAL_SERVER_ERROR;
                }
                StatusCode::OK
            }
        });
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
        (format!("http://{addr}"), rec)
    }

    fn hits(&self, path: &str, event: &str) -> Vec<Hit> {
        self.hits
            .lock()
            .unwrap()
            .iter()
            .filter(|h| h.path == path && h.headers.get("x-hal0-event").is_some_and(|e| e == event))
            .cloned()
            .collect()
    }

    pub(crate) async fn wait(&self, path: &str, event: &str, n: usize) -> Vec<Hit> {
        let deadline = Instant::now() + WAIT;
        loop {
            let h = self.hits(path, event);
            if h.len() >= n {
                return h;
            }
            assert!(Instant::now() < deadline, "{path} got {} of {n} `{event}`", h.len());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// `aiosmtpd` (from tests/external/setup.sh) printing each message it takes.
struct Smtp {
    child: Child,
    port: u16,
    out: Arc<Mutex<String>>,
}

impl Smtp {
    fn start() -> Option<Smtp> {
        let python = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
        let has = python.exists()
            && Command::new(&python).args(["-c", "import aiosmtpd"]).status().is_ok_and(|s| s.success());
        if !has {
            missing_external("aiosmtpd (in .venv)", "run tests/external/setup.sh");
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut child = Command::new(&python)
            .args([
                "-u",
                "-m",
                "aiosmtpd",
                "-n",
                "-l",
                &format!("127.0.0.1:{port}"),
                "-c",
                "aiosmtpd.handlers.Debugging",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = Arc::new(Mutex::new(String::new()));
        for mut pipe in
            [Box::new(child.stdout.take().unwrap()) as Box<dyn Read + Send>, Box::new(child.stderr.take().unwrap())]
        {
            let buf = out.clone();
            std::thread::spawn(move || {
                let mut chunk = [0u8; 8192];
                while let Ok(n @ 1..) = pipe.read(&mut chunk) {
                    buf.lock().unwrap().push_str(&String::from_utf8_lossy(&chunk[..n]));
                }
            });
        }
        let deadline = Instant::now() + WAIT;
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "aiosmtpd did not listen: {}", out.lock().unwrap());
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(Smtp { child, port, out })
    }

    async fn wait_for(&self, needle: &str) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let o = self.out.lock().unwrap().clone();
            if o.contains(needle) {
                return o;
            }
            assert!(Instant::now() < deadline, "no mail with {needle:?}: {o}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for Smtp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn hmac_hex(secret: &str, ts: &str, body: &str) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret.as_bytes());
    hex::encode(ring::hmac::sign(&key, format!("{ts}.{body}").as_bytes()).as_ref())
}

/// Add the three targets on `env`; answers the webhook's signing secret.
fn add_targets(env: &Env, base: &str, smtp_port: u16) -> String {
    let w = env.json(&["notify", "add", "webhook", &format!("{base}/hook"), "--json"]);
    let secret = w["secret"].as_str().unwrap_or_else(|| panic!("no secret shown: {w}")).to_string();
    assert_eq!(w["secret_key"], "NOTIFY_WEBHOOK_SECRET");
    env.ok(&["notify", "add", "ntfy", &format!("{base}/hal0-topic")]);
    let smtp = format!("127.0.0.1:{smtp_port}");
    env.ok(&[
        "notify",
        "add",
        "email",
        "--smtp",
        &smtp,
        "--tls",
        "none",
        "--from",
        "hal0@box.test",
        "--to",
        "ops@box.test",
    ]);
    secret
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn targets_are_checked_listed_tested_and_removed() {
    let Some(smtp) = Smtp::start() else { return };
    let (base, rec) = Recorder::start(0).await;
    let env = Env::new();
    let secret = add_targets(&env, &base, smtp.port);
    // Bad input, each named, nothing written.
    let before = std::fs::read_to_string(env.config_dir().join("notify.toml")).unwrap();
    for (args, code) in [
        (vec!["notify", "add", "webhook", "ftp://x/hook", "--id", "x"], "notify.invalid"),
        (vec!["notify", "add", "webhook", "http://127.0.0.1:9/h"], "notify.exists"),
        (vec!["notify", "add", "ntfy", "http://127.0.0.1:9/t", "--id", "a b"], "notify.invalid"),
        (vec!["notify", "add", "ntfy", "http://127.0.0.1:9/t", "--id", "n2", "--token-key", "lower"], "notify.invalid"),
        (
            vec!["notify", "add", "email", "--smtp", "nohost", "--from", "a@b.test", "--to", "c@d.test", "--id", "e2"],
            "notify.invalid",
        ),
        (
            vec![
                "notify",
                "add",
                "email",
                "--smtp",
                "h:25",
                "--from",
                "not-an-address",
                "--to",
                "c@d.test",
                "--id",
                "e3",
            ],
            "notify.invalid",
        ),
        (vec!["notify", "remove", "nope"], "notify.not_found"),
        (vec!["notify", "test", "nope"], "notify.not_found"),
    ] {
        let o = env.run(&args);
        assert_ne!(o.code(), 0, "{args:?}");
        assert!(o.stderr().contains(code), "{args:?}: {}", o.stderr());
    }
    assert_eq!(std::fs::read_to_string(env.config_dir().join("notify.toml")).unwrap(), before);
    assert!(!before.contains(&secret), "the file names the secret's key, never the secret");
    let list = env.json(&["notify", "list", "--json"]);
    let ids: Vec<&str> = list.as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["webhook", "ntfy", "email"]);

    // A test reaches each receiver once; the webhook's signature checks.
    let t = env.json(&["notify", "test", "--json"]);
    assert!(t["results"].as_array().unwrap().iter().all(|r| r["ok"] == true), "{t}");
    let hook = rec.wait("/hook", "notify.test", 1).await;
    let h = &hook[0];
    let ts = &h.headers["x-hal0-timestamp"];
    assert_eq!(h.headers["x-hal0-signature"], format!("sha256={}", hmac_hex(&secret, ts, &h.body)));
    assert_ne!(h.headers["x-hal0-signature"], format!("sha256={}", hmac_hex("another", ts, &h.body)));
    rec.wait("/hal0-topic", "notify.test", 1).await;
    smtp.wait_for("a test notification").await;

    // A receiver that refuses: the test says which, with a code, and fails.
    env.ok(&["notify", "add", "ntfy", "http://127.0.0.1:9/closed", "--id", "closed"]);
    let o = env.run(&["notify", "test"]);
    assert_ne!(o.code(), 0);
    assert!(o.stdout().contains("FAIL closed") && o.stderr().contains("notify.failed"), "{}{}", o.stdout(), o.stderr());
    env.ok(&["notify", "remove", "closed"]);
    assert_eq!(env.json(&["notify", "list", "--json"]).as_array().unwrap().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gated_call_reaches_a_person_who_decides_on_a_phone() {
    let Some(smtp) = Smtp::start() else { return };
    let Some(b) = crate::dashboard::browser(390, 844).await else { return };
    let (base, rec) = Recorder::start(1).await;
    let up = RmcpUpstream::start().await;
    let env = Env::new();
    let secret = add_targets(&env, &base, smtp.port);
    env.ok(&["mcp", "install", &up.url(), "--id", "up"]);
    env.ok(&["mcp", "gate", "up", "delete_everything"]);
    env.ok(&["config", "set", "mcp.gate_wait_secs", "120"]);
    let key = crate::proxy::key_for(&env, "up", "ci");
    // Served where its config says, so the card's link (from the config) reaches it.
    let s = serve_on_configured_port(&env);
    crate::dashboard::signed_in(&b, &env, &s).await;

    let cfg = StreamableHttpClientTransportConfig::with_uri(s.url("/mcp/proxy/up/mcp")).auth_header(key);
    let c = ().serve(StreamableHttpClientTransport::from_config(cfg)).await.unwrap();
    let call = tokio::spawn(async move {
        let r = crate::proxy::call(&c, "delete_everything", json!({"confirm": true})).await;
        (r, c)
    });

    // The webhook: refused once, delivered again with the same delivery id, signed.
    let hook = rec.wait("/hook", "approval.queued", 2).await;
    assert_eq!(hook[0].headers["x-hal0-delivery"], hook[1].headers["x-hal0-delivery"], "one delivery, retried");
    let h = &hook[1];
    assert_eq!(
        h.headers["x-hal0-signature"],
        format!("sha256={}", hmac_hex(&secret, &h.headers["x-hal0-timestamp"], &h.body))
    );
    let v: Value = serde_json::from_str(&h.body).unwrap();
    let id = v["approval"]["id"].as_str().unwrap().to_string();
    assert_eq!(v["approval"]["tool"], "delete_everything", "{v}");
    assert_eq!(v["approval"]["kind"], "mcp_call");
    assert_eq!(v["url"], s.url(&format!("/ui/#ap-{id}")), "{v}");
    // The push: a title, high priority, a click link to the card, a view action.
    let push = rec.wait("/hal0-topic", "approval.queued", 1).await;
    let p = &push[0];
    assert!(p.headers["title"].contains("delete_everything"), "{:?}", p.headers);
    assert_eq!(p.headers["priority"], "high");
    assert_eq!(p.headers["click"], v["url"].as_str().unwrap());
    assert!(p.headers["actions"].starts_with("view, ") && p.headers["actions"].contains(&id), "{:?}", p.headers);
    assert!(p.body.contains("confirm"), "{}", p.body);
    // The mail.
    let mail = smtp.wait_for("delete_everything").await;
    assert!(mail.contains("ops@box.test") && mail.contains(&id), "{mail}");

    // The dashboard at a phone's width: the count in the menu and the title, live.
    b.goto(&s.url("/ui/")).await;
    let badge = b.wait_for("#pending-count", WAIT).await.unwrap();
    let deadline = Instant::now() + WAIT;
    while badge.text().await != "1" {
        assert!(Instant::now() < deadline, "badge: {:?}", badge.text().await);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(b.eval("return document.title").await.as_str().unwrap().starts_with("(1) "));
    b.shots("ui-inbox-waiting", (390, 844)).await;
    assert_eq!(up.count("delete_everything"), 0, "nothing ran before the decision");
    b.wait_for(&format!("button.approve[data-id='{id}']"), WAIT).await.unwrap().click().await;

    // The call answers with the upstream's result; the count goes back to none.
    let (r, _c) = tokio::time::timeout(WAIT, call).await.expect("the call answered").unwrap();
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(up.count("delete_everything"), 1);
    let deadline = Instant::now() + WAIT;
    while b.eval("return document.getElementById('pending-count').hidden").await != json!(true) {
        assert!(Instant::now() < deadline, "the badge stays");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!b.eval("return document.title").await.as_str().unwrap().starts_with("("));
    // Decided, not withdrawn: no withdrawal is announced.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(rec.hits("/hook", "approval.withdrawn").is_empty());
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_withdrawn_card_is_announced_with_why() {
    let (base, rec) = Recorder::start(0).await;
    let env = Env::new();
    let dirs = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(env.config_dir()).unwrap();
    std::fs::write(
        env.config_dir().join("hal0.toml"),
        format!("[skills]\ndropin_dir = \"{}\"\n", dirs.path().join("dropin").display()),
    )
    .unwrap();
    env.ok(&["notify", "add", "webhook", &format!("{base}/hook")]);
    let k = env.bridge_key("alice", &[]);
    let s = env.serve();
    let c = crate::support::mcp::connect(&s, &k).await;
    let md = |body: &str| format!("---\nname: demo\ndescription: A test skill\n---\n\n# demo\n\n{body}\n");
    let r1 =
        crate::support::mcp::call(&c, "agent_skill_put", json!({"name": "demo", "skill_md": md("v1")})).await.unwrap();
    rec.wait("/hook", "approval.queued", 1).await;
    // An edited push replaces the waiting card: the old one is withdrawn, the new one queued.
    crate::support::mcp::call(&c, "agent_skill_put", json!({"name": "demo", "skill_md": md("v2")})).await.unwrap();
    let gone = rec.wait("/hook", "approval.withdrawn", 1).await;
    let v: Value = serde_json::from_str(&gone[0].body).unwrap();
    assert_eq!(v["approval"]["id"], r1["approval_id"], "{v}");
    assert_eq!(v["approval"]["status"], "withdrawn");
    assert!(v["approval"]["reason"].as_str().unwrap().contains("replaced"), "{v}");
    rec.wait("/hook", "approval.queued", 2).await;
}
