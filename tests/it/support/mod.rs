//! Test harness: a hal0 installation in temporary config and state dirs, the real binary
//! run as a CLI, and `hal0 serve` started on a free loopback port.
pub mod browser;
pub mod fake_hermes;
pub mod logged;
pub mod mcp;
pub mod oauth_upstream;
pub mod postgres;
pub mod real_hermes;
pub mod tls;
pub mod upstream;

// Skip or fail when an external part is missing (`HAL0_REQUIRE_EXTERNAL=1`): the one place
// that decides it (`support/external.rs`, with `external_required`). Its file is loaded
// through `upstream`, which the benches in examples/ include alone. Only what tests call is
// re-exported here: an unused `pub use` is a warning, and CI denies warnings.
pub use upstream::external::missing_external;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_hal0");

/// A package registry address nothing answers (the discard port on loopback).
const NO_REGISTRY: &str = "http://127.0.0.1:9";

/// One hal0 installation in temp dirs.
pub struct Env {
    pub dir: tempfile::TempDir,
}

impl Default for Env {
    fn default() -> Self {
        Self::new()
    }
}

impl Env {
    pub fn new() -> Env {
        Env { dir: tempfile::tempdir().unwrap() }
    }
    pub fn config_dir(&self) -> PathBuf {
        self.dir.path().join("etc")
    }
    pub fn state_dir(&self) -> PathBuf {
        self.dir.path().join("var")
    }

    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .env("HAL0_CONFIG_DIR", self.config_dir())
            .env("HAL0_STATE_DIR", self.state_dir())
            .env_remove("HAL0_MCP_ALLOWED_HOSTS")
            .env_remove("HAL0_MCP_ALLOWED_ORIGINS")
            // The relay's database is chosen by each test that wants one.
            .env_remove("DATABASE_URL")
            // No test asks a public package registry: an npm: or uvx: install finds nothing
            // listening here and is installed unpinned (a test that pins serves a mirror).
            .env("HAL0_NPM_REGISTRY", NO_REGISTRY)
            .env("HAL0_PYPI_INDEX", NO_REGISTRY)
            .stdin(Stdio::null());
        c
    }

    pub fn run(&self, args: &[&str]) -> Out {
        Out(self.cmd(args).output().unwrap())
    }

    /// `hal0 ARGS` with `input` on its standard input.
    pub fn with_stdin(&self, args: &[&str], input: &str) -> Out {
        use std::io::Write;
        let mut c = self.cmd(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        c.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        Out(c.wait_with_output().unwrap())
    }

    /// Run and require exit 0; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert_eq!(o.code(), 0, "hal0 {args:?} failed: {}", o.stderr());
        o.stdout()
    }

    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        serde_json::from_str(&self.ok(args)).unwrap()
    }

    /// Add a bridge client and return its key.
    pub fn bridge_key(&self, name: &str, scopes: &[&str]) -> String {
        let mut args = vec!["bridge", "add", name, "--json"];
        for s in scopes {
            args.push("--scope");
            args.push(s);
        }
        self.json(&args)["key"].as_str().unwrap().to_string()
    }

    pub fn serve(&self) -> Server {
        self.serve_with(&[])
    }

    /// Start `hal0 serve` on a free port with extra environment.
    pub fn serve_with(&self, envs: &[(&str, &str)]) -> Server {
        let mut c = self.cmd(&["serve", "--bind", "127.0.0.1:0"]);
        c.stdout(Stdio::null()).stderr(Stdio::piped()).env("HAL0_LOG", "warn");
        for (k, v) in envs {
            c.env(k, v);
        }
        let mut child = c.spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.strip_prefix("hal0: listening on ") {
                    if let Some(t) = tx.take() {
                        let _ = t.send(rest.to_string());
                    }
                } else {
                    eprintln!("[hal0 serve] {line}");
                }
            }
        });
        let base = rx.recv_timeout(Duration::from_secs(60)).expect("hal0 serve did not start");
        let port = base.rsplit(':').next().unwrap().parse().unwrap();
        Server { child, base, port }
    }
}

pub struct Out(pub Output);

impl Out {
    pub fn code(&self) -> i32 {
        self.0.status.code().unwrap_or(-1)
    }
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.0.stdout).into_owned()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.0.stderr).into_owned()
    }
}

/// A running `hal0 serve`; killed on drop.
pub struct Server {
    pub child: Child,
    pub base: String,
    pub port: u16,
}

/// `hal0 serve` on a free loopback port that is also `[network].bind`: `hal0 mcp expose` writes
/// the proxy URL from that setting, so it has to be where hal0 really listens. A port taken
/// between picking and binding makes serve exit at once; then another one is tried.
pub fn serve_on_configured_port(env: &Env) -> Server {
    for _ in 0..3 {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        env.ok(&["config", "set", "network.bind", &format!("127.0.0.1:{port}")]);
        if let Some(server) = serve_on(env, port) {
            return server;
        }
    }
    panic!("hal0 serve did not start on a configured port three times");
}

/// `hal0 serve` on the port of its `[network].bind`, its stderr echoed as `[hal0 serve] …`:
/// the server once it says where it listens (which must be `127.0.0.1:port`), or `None` when
/// it exits or stays silent for 60 s (a port taken between picking and binding; retry).
pub fn serve_on(env: &Env, port: u16) -> Option<Server> {
    serve_on_with(env, port, &[])
}

/// [`serve_on`] with extra environment.
pub fn serve_on_with(env: &Env, port: u16, envs: &[(&str, &str)]) -> Option<Server> {
    let mut cmd = env.cmd(&["serve"]);
    cmd.stdout(Stdio::null()).stderr(Stdio::piped()).env("HAL0_LOG", "warn");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut tx = Some(tx);
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            match (line.strip_prefix("hal0: listening on "), tx.take()) {
                (Some(base), Some(t)) => {
                    let _ = t.send(base.to_string());
                }
                (_, t) => {
                    tx = t;
                    eprintln!("[hal0 serve] {line}");
                }
            }
        }
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(base) => {
            assert_eq!(base, format!("http://127.0.0.1:{port}"), "serve listens where [network].bind says");
            Some(Server { child, base, port })
        }
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            None
        }
    }
}

impl Server {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// SIGTERM it (a stop as an operator or systemd does it) and wait until it exited.
    pub async fn terminate(mut self) {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "hal0 serve did not exit within 20 s of SIGTERM");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The JSON body of an MCP `initialize` request.
pub fn initialize_body() -> serde_json::Value {
    serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hal0-tests", "version": "0"}}
    })
}

/// POST an MCP message with the headers Streamable HTTP requires.
pub fn mcp_post(
    client: &reqwest::Client,
    url: &str,
    auth: Option<&str>,
    body: &serde_json::Value,
) -> reqwest::RequestBuilder {
    let mut r = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .json(body);
    if let Some(a) = auth {
        r = r.header("authorization", format!("Bearer {a}"));
    }
    r
}

/// Poll `f` until it returns true or `limit` passes (a liveness bound, not a timing claim).
pub async fn eventually(limit: Duration, mut f: impl AsyncFnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if f().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// hal0 serving a Hermes home whose default profile points at a fake Hermes in which an
/// approval nobody answers keeps a run busy for as long as a test needs.
pub struct Box0 {
    pub env: Env,
    pub server: Server,
    _hermes: fake_hermes::FakeHermes,
    _home: tempfile::TempDir,
}

/// [`Box0`] with `extra_toml` (whole sections) ahead of its `[hermes]` section.
pub async fn busy_hermes_box(extra_toml: &str) -> Box0 {
    let options = fake_hermes::FakeHermesOptions { approval_timeout: None, ..Default::default() };
    let (env, hermes, home) = fake_hermes_env(options, extra_toml).await;
    let server = env.serve();
    Box0 { env, server, _hermes: hermes, _home: home }
}

/// A box (not serving yet) whose Hermes home's default profile points at a fake Hermes
/// started with `options`; `extra_toml` (whole sections) goes ahead of `[hermes]`. Keep the
/// home alive as long as the box.
pub async fn fake_hermes_env(
    options: fake_hermes::FakeHermesOptions,
    extra_toml: &str,
) -> (Env, fake_hermes::FakeHermes, tempfile::TempDir) {
    let hermes = fake_hermes::FakeHermes::start(options).await;
    let home = tempfile::tempdir().unwrap();
    hermes.write_profile(home.path());
    let env = Env::new();
    std::fs::create_dir_all(env.config_dir()).unwrap();
    let toml = format!("{extra_toml}[hermes]\nhome = \"{}\"\n", home.path().display());
    std::fs::write(env.config_dir().join("hal0.toml"), toml).unwrap();
    (env, hermes, home)
}

/// Queue a pending admin card `id` (for `tool`, from `bridge:ci`) straight in the store, as
/// an MCP call would leave it.
pub fn pending_card(env: &Env, id: &str, tool: &str) {
    let db = rusqlite::Connection::open(env.state_dir().join("hal0.db")).unwrap();
    let now = time::OffsetDateTime::now_utc().format(&time::format_description::well_known::Rfc3339).unwrap();
    db.execute(
        "INSERT INTO approvals (id, kind, client, tool, arguments, created_at, status) \
         VALUES (?1, 'admin_call', 'bridge:ci', ?2, '{}', ?3, 'pending')",
        [id, tool, &now],
    )
    .unwrap();
}

/// Run `cmd` (an external MCP client script) as the person of `env`'s box: it may decide
/// cards at the shell with `hal0` (HAL0_CONFIG_DIR and HAL0_STATE_DIR point at `env`). The
/// JSON it prints; its stderr when it fails.
pub async fn run_deciding_client(env: &Env, mut cmd: Command) -> serde_json::Value {
    cmd.env("HAL0_CONFIG_DIR", env.config_dir()).env("HAL0_STATE_DIR", env.state_dir());
    let what = format!("{:?}", cmd.get_args().next().unwrap_or_default());
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    assert!(out.status.success(), "{what} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}
