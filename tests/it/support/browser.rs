//! A headless Chromium for page tests: Debian's `chromium` driven by its `chromedriver`
//! over the W3C WebDriver protocol (a few JSON calls over reqwest; nothing is downloaded
//! at run time). `None` when the browser is not installed (`.ci/run` installs it).

use serde_json::{Value, json};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The W3C name of an element reference.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// The consent page's Approve button once the page has shown the request (the button is
/// in the HTML from the start, inside a hidden section that consent.js fills and shows).
pub const CONSENT_SHOWN: &str = "#ask:not([hidden]) #approve";

pub struct Browser {
    driver: Child,
    http: reqwest::Client,
    base: String,
    _profile: tempfile::TempDir,
}

/// One element found on the page.
pub struct Element<'a> {
    b: &'a Browser,
    id: String,
}

impl Browser {
    /// Start chromedriver and one headless Chromium session, `width` × `height`.
    pub async fn start(width: u32, height: u32) -> Option<Browser> {
        if !std::path::Path::new("/usr/bin/chromedriver").exists() {
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        // Its own process group: Chromium and its helpers are the driver's children, so a
        // test that panics before `close` still takes them all down in `Drop`.
        let driver = Command::new("/usr/bin/chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        let profile = tempfile::tempdir().unwrap();
        let http = reqwest::Client::new();
        let base = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(20);
        while http.get(format!("{base}/status")).send().await.is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not start");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // Flags as this machine needs them: as root, no sandbox; no background traffic
        // (the network is closed and refused connections would only slow it down).
        let caps = json!({"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {
            "binary": "/usr/bin/chromium",
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--disable-quic", format!("--window-size={width},{height}"),
                     format!("--user-data-dir={}", profile.path().display())]
        }}}});
        let v: Value = http.post(format!("{base}/session")).json(&caps).send().await.unwrap().json().await.unwrap();
        let sid = v["value"]["sessionId"].as_str().unwrap_or_else(|| panic!("no WebDriver session: {v}"));
        Some(Browser { driver, http, base: format!("{base}/session/{sid}"), _profile: profile })
    }

    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut r = self.http.request(method, format!("{}{path}", self.base));
        if let Some(b) = body {
            r = r.json(&b);
        }
        let v: Value = r.send().await.unwrap().json().await.unwrap();
        v["value"].clone()
    }

    pub async fn goto(&self, url: &str) {
        self.call(reqwest::Method::POST, "/url", Some(json!({"url": url}))).await;
    }

    /// The page's source.
    pub async fn source(&self) -> String {
        self.call(reqwest::Method::GET, "/source", None).await.as_str().unwrap_or_default().to_string()
    }

    /// Run `script` (a function body) in the page; its return value.
    pub async fn eval(&self, script: &str) -> Value {
        self.call(reqwest::Method::POST, "/execute/sync", Some(json!({"script": script, "args": []}))).await
    }

    /// The first element matching `css` once it exists (waiting up to `limit`).
    pub async fn wait_for(&self, css: &str, limit: Duration) -> Option<Element<'_>> {
        let deadline = Instant::now() + limit;
        loop {
            let v = self
                .call(reqwest::Method::POST, "/element", Some(json!({"using": "css selector", "value": css})))
                .await;
            if let Some(id) = v.get(ELEMENT).and_then(|x| x.as_str()) {
                return Some(Element { b: self, id: id.to_string() });
            }
            if Instant::now() > deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Read and act in the page's frame number `index` from now on (`None`: the page
    /// itself again).
    pub async fn frame(&self, index: Option<u32>) {
        self.call(reqwest::Method::POST, "/frame", Some(json!({"id": index}))).await;
    }

    /// Resize the window to `width` × `height` CSS pixels.
    pub async fn resize(&self, width: u32, height: u32) {
        self.call(reqwest::Method::POST, "/window/rect", Some(json!({"width": width, "height": height}))).await;
    }

    /// A PNG of the viewport, written to `to`.
    pub async fn screenshot(&self, to: &std::path::Path) {
        let v = self.call(reqwest::Method::GET, "/screenshot", None).await;
        std::fs::write(to, base64_decode(v.as_str().unwrap_or_else(|| panic!("no screenshot: {v}")))).unwrap();
    }

    /// With `HAL0_SCREENSHOTS=DIR`: the page at desktop (1280 × 900) and phone (412 × 915)
    /// width as `DIR/NAME-desktop.png` and `DIR/NAME-phone.png` (the README's pictures are
    /// made so: `HAL0_SCREENSHOTS=docs cargo nextest run -E 'test(/dashboard/)'`). Ends at
    /// `width` × `height` again.
    pub async fn shots(&self, name: &str, (width, height): (u32, u32)) {
        let Some(dir) = std::env::var_os("HAL0_SCREENSHOTS") else { return };
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (form, w, h) in [("desktop", 1280, 900), ("phone", 412, 915)] {
            self.resize(w, h).await;
            tokio::time::sleep(Duration::from_millis(300)).await;
            self.screenshot(&dir.join(format!("{name}-{form}.png"))).await;
        }
        self.resize(width, height).await;
    }

    /// A virtual authenticator (WebDriver's WebAuthn extension): a platform authenticator
    /// with resident keys that verifies its user and consents to every ceremony. Its id.
    pub async fn virtual_authenticator(&self) -> String {
        let v = self
            .call(
                reqwest::Method::POST,
                "/webauthn/authenticator",
                Some(json!({"protocol": "ctap2", "transport": "internal", "hasResidentKey": true,
                    "hasUserVerification": true, "isUserConsenting": true, "isUserVerified": true})),
            )
            .await;
        v.as_str().unwrap_or_else(|| panic!("no virtual authenticator: {v}")).to_string()
    }

    /// The credentials virtual authenticator `id` holds.
    pub async fn authenticator_credentials(&self, id: &str) -> Vec<Value> {
        let v = self.call(reqwest::Method::GET, &format!("/webauthn/authenticator/{id}/credentials"), None).await;
        v.as_array().cloned().unwrap_or_default()
    }

    /// End the browser (Chromium goes with its WebDriver session).
    pub async fn close(self) {
        self.http.delete(&self.base).send().await.ok();
    }
}

impl Element<'_> {
    pub async fn click(&self) {
        self.b.call(reqwest::Method::POST, &format!("/element/{}/click", self.id), Some(json!({}))).await;
    }
    pub async fn type_text(&self, text: &str) {
        self.b.call(reqwest::Method::POST, &format!("/element/{}/value", self.id), Some(json!({"text": text}))).await;
    }
    pub async fn text(&self) -> String {
        self.b
            .call(reqwest::Method::GET, &format!("/element/{}/text", self.id), None)
            .await
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if let Some(group) = rustix::process::Pid::from_raw(self.driver.id() as i32) {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// Standard base64 (the WebDriver screenshot), padding allowed.
fn base64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let bytes: Vec<u8> = s.bytes().filter(|&c| c != b'=' && !c.is_ascii_whitespace()).collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, &c)| acc | (u32::from(val(c)) << (18 - 6 * i)));
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}
