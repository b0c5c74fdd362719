//! hal0 driven by real third-party MCP clients over TCP:
//! - the official Python SDK (`mcp` 2.3.0) in both of its connect modes, `legacy`
//!   (initialize handshake, 2025-11-25) and `auto` (server/discover, 2026-07-28),
//!   via `tests/external/mcp_client.py`;
//! - the MCP Inspector CLI 2.12.0 via `tests/external/inspector.sh`.
//!
//! Both need `tests/external/setup.sh` to have run (it fills `.venv` and `.tools/node`).
//! Without them the tests print a "skipped" line and pass, unless
//! `HAL0_REQUIRE_EXTERNAL=1` is set (as CI does), in which case they fail.

use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_hal0");
const MOUNTS: [(&str, &str); 3] = [("agents", "hal0-agents"), ("memory", "hal0-memory"), ("admin", "hal0-admin")];
/// First protocol version of the stateless (`server/discover`) generation.
const MODERN: &str = "2026-07-28";
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
const CLIENT_TIMEOUT: Duration = Duration::from_secs(240);

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// True when `path` exists. Otherwise skip (print and return false), or fail when
/// `HAL0_REQUIRE_EXTERNAL=1`.
fn external_available(what: &str, path: &Path) -> bool {
    if path.exists() {
        return true;
    }
    crate::support::missing_external(format!("{what} at {}", path.display()), "run tests/external/setup.sh");
    false
}

/// A hal0 installation in temp dirs.
struct Install {
    dir: tempfile::TempDir,
}

impl Install {
    fn new() -> Install {
        Install { dir: tempfile::tempdir().expect("tempdir") }
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .env("HAL0_CONFIG_DIR", self.dir.path().join("etc"))
            .env("HAL0_STATE_DIR", self.dir.path().join("var"))
            .env_remove("HAL0_ADMIN_KEY")
            .env_remove("HAL0_CLIENT_KEY")
            .env_remove("HAL0_MCP_ALLOWED_HOSTS")
            .env_remove("HAL0_MCP_ALLOWED_ORIGINS")
            .env_remove("NOTIFY_SOCKET")
            .stdin(Stdio::null());
        c
    }

    /// Run a CLI command that prints JSON on stdout and must succeed.
    fn json(&self, args: &[&str]) -> Value {
        let out = self.cmd(args).output().expect("run hal0");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "hal0 {args:?} failed ({}):\n{stderr}", out.status);
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("hal0 {args:?}: stdout is not JSON ({e}): {stdout}"))
    }

    /// Arm auth and add a bridge key holding every scope; returns the bridge key.
    fn armed_with_full_bridge_key(&self) -> String {
        let admin = self.json(&["auth", "rotate", "admin", "--yes", "--json"]);
        assert!(admin["key"].as_str().is_some_and(|k| !k.is_empty()), "auth rotate: {admin}");
        let bridge = self.json(&["bridge", "add", "ext-clients", "--scope", "admin", "--scope", "memory", "--json"]);
        let scopes: Vec<&str> = bridge["scopes"].as_array().expect("scopes").iter().filter_map(Value::as_str).collect();
        for s in ["agents", "memory", "admin"] {
            assert!(scopes.contains(&s), "bridge key lacks scope {s}: {bridge}");
        }
        bridge["key"].as_str().expect("bridge key").to_string()
    }

    fn serve(&self) -> Server {
        let mut child = self
            .cmd(&["serve", "--bind", "127.0.0.1:0"])
            .env("HAL0_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn hal0 serve");
        let stderr = child.stderr.take().expect("stderr");
        let log = Arc::new(Mutex::new(String::new()));
        // The guard owns the child from here on, so a panic below still kills it.
        let mut server = Server { child, base: String::new(), log: log.clone() };

        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            // Keep draining after the port is known, so the server never blocks on a full pipe.
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(addr) = line.strip_prefix("hal0: listening on http://") {
                    let _ = tx.send(addr.trim().to_string());
                }
                let mut l = log.lock().unwrap();
                l.push_str(&line);
                l.push('\n');
            }
        });
        match rx.recv_timeout(STARTUP_TIMEOUT) {
            Ok(addr) => server.base = format!("http://{addr}"),
            Err(_) => {
                let status = server.child.try_wait().ok().flatten();
                panic!(
                    "hal0 serve did not report its address within {STARTUP_TIMEOUT:?} (exit: {status:?}); stderr:\n{}",
                    server.log()
                );
            }
        }
        server
    }
}

/// A running `hal0 serve`; killed when dropped, also when the test panics.
struct Server {
    child: Child,
    base: String,
    log: Arc<Mutex<String>>,
}

impl Server {
    fn log(&self) -> String {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sanity check that auth is really armed, so the clients below must have used the
/// bridge key: an MCP POST without credentials is refused.
fn assert_unauthenticated_refused(base: &str) {
    let url = format!("{base}/mcp/admin/mcp");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let status = rt.block_on(async {
        let body = serde_json::json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "external_clients", "version": "0"}}
        });
        reqwest::Client::new()
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .json(&body)
            .send()
            .await
            .expect("POST without credentials")
            .status()
    });
    assert_eq!(status.as_u16(), 401, "expected 401 from {url} without a key (is auth armed?)");
}

/// Run a client to completion with a deadline; returns stdout, panics with both
/// streams (and the server log) on failure.
fn run_client(mut cmd: Command, what: &str, server: &Server) -> String {
    let mut child = cmd
        .current_dir(repo())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let mut out_pipe = child.stdout.take().expect("stdout");
    let mut err_pipe = child.stderr.take().expect("stderr");
    let out_t = thread::spawn(move || {
        let mut s = String::new();
        let _ = out_pipe.read_to_string(&mut s);
        s
    });
    let err_t = thread::spawn(move || {
        let mut s = String::new();
        let _ = err_pipe.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait for client") {
            break Some(st);
        }
        if start.elapsed() > CLIENT_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        thread::sleep(Duration::from_millis(50));
    };
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    match status {
        Some(st) if st.success() => {
            if !stderr.trim().is_empty() {
                // Shown with --no-capture or on failure.
                eprintln!("{what} stderr:\n{stderr}");
            }
            // hal0 ends a session with 204: the Python SDK logs any other status.
            assert!(!stderr.contains("Session termination failed"), "{what}: {stderr}");
            stdout
        }
        other => panic!(
            "{what} failed ({}):\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}\n--- hal0 serve log ---\n{}",
            other.map_or_else(|| format!("timed out after {CLIENT_TIMEOUT:?}"), |s| s.to_string()),
            server.log()
        ),
    }
}

fn str_list(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("expected an array, got {v}"))
        .iter()
        .map(|x| x.as_str().unwrap_or_else(|| panic!("expected a string, got {x}")).to_string())
        .collect()
}

fn assert_version_info(vi: &Value, ctx: &str) {
    assert_eq!(vi["name"], "hal0", "{ctx}: version_info: {vi}");
    assert_eq!(vi["version"], env!("CARGO_PKG_VERSION"), "{ctx}: version_info: {vi}");
}

fn assert_admin_tools(tools: &[String], ctx: &str) {
    for t in ["version_info", "bridge_client_list"] {
        assert!(tools.iter().any(|x| x == t), "{ctx}: admin tools lack {t}: {tools:?}");
    }
}

fn assert_protocol_generation(era: &str, version: &str, ctx: &str) {
    match era {
        // Date-stamped versions compare correctly as strings.
        "legacy" => assert!(version < MODERN, "{ctx}: legacy mode negotiated {version}"),
        "auto" => assert!(version >= MODERN, "{ctx}: auto mode negotiated {version}, expected >= {MODERN}"),
        _ => unreachable!(),
    }
}

/// The `result` of inspector.sh's line for `era`/`mount`/`method`.
fn find_line<'a>(lines: &'a [Value], stdout: &str, era: &str, mount: &str, method: &str) -> &'a Value {
    let hit = lines.iter().find(|v| v["era"] == era && v["mount"] == mount && v["method"] == method);
    &hit.unwrap_or_else(|| panic!("inspector.sh printed no {era}/{mount}/{method} line:\n{stdout}"))["result"]
}

#[test]
fn python_sdk_reaches_all_three_mounts() {
    let python = repo().join(".venv/bin/python");
    if !external_available("the Python venv (.venv/bin/python)", &python) {
        return;
    }
    let install = Install::new();
    let key = install.armed_with_full_bridge_key();
    let server = install.serve();
    assert_unauthenticated_refused(&server.base);

    let mut cmd = Command::new(&python);
    cmd.arg(repo().join("tests/external/mcp_client.py")).args(["--url", &server.base, "--key", &key]);
    let stdout = run_client(cmd, "tests/external/mcp_client.py", &server);
    let report: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("mcp_client.py printed no JSON ({e}):\n{stdout}"));

    for mode in ["legacy", "auto"] {
        let r = &report[mode];
        assert!(r.is_object(), "report lacks mode {mode}: {report}");
        for (mount, name) in MOUNTS {
            let ctx = format!("python mode={mode} mount={mount}");
            let m = &r[mount];
            assert_eq!(m["server_name"], name, "{ctx}: {m}");
            let tools = str_list(&m["tools"]);
            if mount == "admin" {
                assert_admin_tools(&tools, &ctx);
            }
            let pv = m["protocol_version"].as_str().unwrap_or_else(|| panic!("{ctx}: no protocol_version: {m}"));
            assert_protocol_generation(mode, pv, &ctx);
        }
        assert_version_info(&r["version_info"], &format!("python mode={mode}"));
    }
}

#[test]
fn inspector_cli_reaches_all_three_mounts() {
    let inspector = repo().join(".tools/node/node_modules/.bin/mcp-inspector");
    if !external_available("the MCP Inspector (.tools/node)", &inspector) {
        return;
    }
    let install = Install::new();
    let key = install.armed_with_full_bridge_key();
    let server = install.serve();
    assert_unauthenticated_refused(&server.base);

    let mut cmd = Command::new("bash");
    // The script's knobs stay at their defaults: this test asserts both eras.
    cmd.env_remove("INSPECTOR_ERAS").env_remove("HAL0_INSPECTOR");
    cmd.arg(repo().join("tests/external/inspector.sh")).args([&server.base, &key]);
    let stdout = run_client(cmd, "tests/external/inspector.sh", &server);

    let lines: Vec<Value> = stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("inspector.sh line is not JSON ({e}): {l}")))
        .collect();
    let find = |era: &str, mount: &str, method: &str| find_line(&lines, &stdout, era, mount, method);

    for era in ["legacy", "auto"] {
        for (mount, name) in MOUNTS {
            let ctx = format!("inspector era={era} mount={mount}");
            let init = find(era, mount, "initialize");
            assert_eq!(init["serverInfo"]["name"], name, "{ctx}: {init}");
            let pv = init["protocolVersion"].as_str().unwrap_or_else(|| panic!("{ctx}: no protocolVersion: {init}"));
            assert_protocol_generation(era, pv, &ctx);

            let list = find(era, mount, "tools/list");
            let tools: Vec<String> = list["tools"]
                .as_array()
                .unwrap_or_else(|| panic!("{ctx}: tools/list: {list}"))
                .iter()
                .map(|t| t["name"].as_str().unwrap_or_default().to_string())
                .collect();
            if mount == "admin" {
                assert_admin_tools(&tools, &ctx);
            }
            // Every tool schema passes the Inspector's portability lint (--strict) with no
            // finding at all, warnings included.
            let lint = find(era, mount, "lint");
            assert_eq!(lint["exit"], 0, "{ctx}: --strict: {lint}");
            assert_eq!(
                lint["findings"],
                "",
                "{ctx}: --strict findings:\n{}",
                lint["findings"].as_str().unwrap_or_default()
            );
        }
        let call = find(era, "admin", "tools/call");
        assert_eq!(call["isError"], false, "inspector era={era}: version_info: {call}");
        assert_version_info(&call["structuredContent"], &format!("inspector era={era}"));
    }
}
