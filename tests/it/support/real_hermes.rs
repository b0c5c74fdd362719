//! A real Hermes agent (`hermes-agent` 0.19.0 from PyPI) on 127.0.0.1 for end-to-end tests,
//! driven by the scripted fake model server `tests/hermes/fake_llm.py`.
//!
//! [`RealHermes::start`] runs `tests/hermes/stack.py` with the Python of `<repo>/.hermes-venv`
//! in a temporary directory: one `hermes gateway run` per profile (the default one included),
//! each on its own port with its own key, all sharing one fake model. The stack is stopped
//! when the value is dropped.
//!
//! Without `.hermes-venv` (see `tests/external/setup.sh`) `start` prints a "skipped" line and
//! returns `None`, so the test can return early and pass; with `HAL0_REQUIRE_EXTERNAL=1` (as
//! CI sets) it panics instead. Set `HAL0_KEEP_HERMES_HOME=1` to keep the scratch directory
//! (config, logs, Hermes's state) after the test for a look.
//!
//! What the fake model answers is keyed on the run's input: `TOOLCALL`, `APPROVE`, `SLOW`,
//! `MCPCALL`, `MCPBLOCKED` or anything else, and a hermes-bridge wake is answered with a call
//! of the relay's `reply` (`RELAY_BUSY`, `RELAY_STUCK` for slow ones; see the docstring of
//! `tests/hermes/fake_llm.py`). [`RealHermes::start_with_args`] passes `--bridge-*` to
//! `stack.py` to make a profile such a bot.
// The harness's whole API (per-profile accessors included), not all of it called by today's tests.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The message for a missing installation.
pub const SETUP_HINT: &str = "run tests/external/setup.sh";

/// How long Drop waits for the stack to stop before it kills `stack.py` outright.
const STOP_TIMEOUT: Duration = Duration::from_secs(40);

/// `<repo>/.hermes-venv`, made by `tests/external/setup.sh`.
pub fn hermes_venv() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(".hermes-venv")
}

/// The `hermes` executable inside [`hermes_venv`].
pub fn hermes_bin() -> PathBuf {
    hermes_venv().join("bin").join("hermes")
}

/// `tests/hermes/`, holding `stack.py` and `fake_llm.py`.
pub fn scripts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("hermes")
}

/// True when the real Hermes is installed.
pub fn available() -> bool {
    hermes_bin().is_file() && hermes_venv().join("bin").join("python").is_file()
}

/// One profile's API server.
#[derive(Debug, Clone)]
pub struct Profile {
    pub name: String,
    /// `http://127.0.0.1:<port>`, without a trailing slash.
    pub url: String,
    /// The bearer key of this profile's API server (at least 16 characters).
    pub key: String,
    /// The gateway's process id (it changes on [`RealHermes::restart`]).
    pub pid: u32,
    pub port: u16,
    /// The profile's HERMES_HOME: the root for `default`, `<root>/profiles/<name>` otherwise.
    pub home: PathBuf,
}

/// A running stack: the fake model and one Hermes gateway per profile.
pub struct RealHermes {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    stderr_path: PathBuf,
    home: PathBuf,
    victim: PathBuf,
    logs: PathBuf,
    requests_log: PathBuf,
    /// Where the loopback guard writes each connection it refused (empty when none).
    guard_log: PathBuf,
    fake_llm_port: u16,
    profiles: BTreeMap<String, Profile>,
    started_in: Duration,
    dir: Option<tempfile::TempDir>,
}

impl RealHermes {
    /// Start the default profile plus the named `profiles`, or return `None` (after printing
    /// `skipped: … (run tests/external/setup.sh)`) when the real Hermes is not installed. Panics
    /// when it is installed but the stack does not come up, and when it is missing while
    /// `HAL0_REQUIRE_EXTERNAL=1`.
    pub fn start(profiles: &[&str]) -> Option<RealHermes> {
        Self::start_with_env(profiles, &[])
    }

    /// Like [`RealHermes::start`], with extra environment for `stack.py` and its children,
    /// e.g. `FAKE_LLM_MCP_TOOL`, `FAKE_LLM_MCP_ARGS` or `FAKE_LLM_MCP_BLOCKED_TOOL` for the
    /// fake model.
    pub fn start_with_env(profiles: &[&str], envs: &[(&str, &str)]) -> Option<RealHermes> {
        Self::start_with_args(profiles, envs, &[])
    }

    /// Like [`RealHermes::start_with_env`], with extra arguments for `stack.py`, e.g. the
    /// `--bridge-*` ones that make a profile a hermes-bridge bot of a relay.
    pub fn start_with_args(profiles: &[&str], envs: &[(&str, &str)], args: &[&str]) -> Option<RealHermes> {
        if !available() {
            crate::support::missing_external(format!("the real Hermes at {}", hermes_venv().display()), SETUP_HINT);
            return None;
        }

        let dir = tempfile::Builder::new().prefix("hal0-hermes-").tempdir().unwrap();
        let home = dir.path().join("home");
        let stderr_path = dir.path().join("stack.stderr");
        let stderr = File::create(&stderr_path).unwrap();

        let mut cmd = Command::new(hermes_venv().join("bin").join("python"));
        cmd.arg(scripts_dir().join("stack.py")).arg("--home").arg(&home).arg("--hermes").arg(hermes_bin());
        for p in profiles {
            cmd.arg("--profile").arg(p);
        }
        cmd.args(args);
        for (k, v) in envs {
            cmd.env(k, v);
        }
        cmd.current_dir(dir.path()).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::from(stderr));

        let started = Instant::now();
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("cannot run stack.py: {e}"));
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());

        let mut line = String::new();
        let read = stdout.read_line(&mut line);
        let info: Option<Value> = match read {
            Ok(n) if n > 0 => serde_json::from_str(&line).ok(),
            _ => None,
        };
        let Some(info) = info else {
            drop(stdin);
            let status = child.wait();
            let err = std::fs::read_to_string(&stderr_path).unwrap_or_default();
            panic!("real Hermes stack did not start ({status:?}); stdout: {line:?}\nstack.py stderr:\n{err}");
        };
        let started_in = started.elapsed();

        let path =
            |key: &str| PathBuf::from(info[key].as_str().unwrap_or_else(|| panic!("stack.py: no {key}: {info}")));
        let mut map = BTreeMap::new();
        for (name, p) in info["profiles"].as_object().expect("stack.py: no profiles") {
            map.insert(name.clone(), parse_profile(name, p));
        }
        Some(RealHermes {
            child,
            stdin,
            stdout,
            stderr_path,
            home: path("home"),
            victim: path("victim"),
            logs: path("logs"),
            requests_log: path("requests_log"),
            guard_log: path("loopback_guard_log"),
            fake_llm_port: info["fake_llm_port"].as_u64().expect("stack.py: no fake_llm_port") as u16,
            profiles: map,
            started_in,
            dir: Some(dir),
        })
    }

    /// The scratch HERMES_HOME root (the default profile's home).
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The profile `name` (`"default"` or one passed to `start`); panics on an unknown name.
    pub fn profile(&self, name: &str) -> &Profile {
        self.profiles.get(name).unwrap_or_else(|| {
            panic!("no profile {name:?} in this stack (have {:?})", self.profiles.keys().collect::<Vec<_>>())
        })
    }

    /// Every profile's name, `default` included.
    pub fn profile_names(&self) -> Vec<String> {
        self.profiles.keys().cloned().collect()
    }

    /// `http://127.0.0.1:<port>` of a profile's API server.
    pub fn url(&self, profile: &str) -> &str {
        &self.profile(profile).url
    }

    /// A profile's API server key.
    pub fn key(&self, profile: &str) -> &str {
        &self.profile(profile).key
    }

    /// A profile's HERMES_HOME.
    pub fn profile_home(&self, profile: &str) -> &Path {
        &self.profile(profile).home
    }

    /// The directory the fake model's `APPROVE` case asks Hermes to `rm -r`.
    pub fn victim(&self) -> &Path {
        &self.victim
    }

    /// Recreate [`RealHermes::victim`] (with one file in it) after a test removed it.
    pub fn reset_victim(&self) {
        std::fs::create_dir_all(&self.victim).unwrap();
        std::fs::write(self.victim.join("keep.txt"), "delete me only after approval\n").unwrap();
    }

    /// The fake model server's port on 127.0.0.1.
    pub fn fake_llm_port(&self) -> u16 {
        self.fake_llm_port
    }

    /// The directory holding `stack.*.log` (the children's output) and Hermes's own logs.
    pub fn logs(&self) -> &Path {
        &self.logs
    }

    /// Every request the fake model has received so far, oldest first (method, path, body).
    pub fn fake_llm_requests(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.requests_log).unwrap_or_default();
        text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
    }

    /// The last `lines` lines of a profile's gateway output, for assertion messages.
    pub fn gateway_log_tail(&self, profile: &str, lines: usize) -> String {
        let path = self.logs.join(format!("stack.gateway-{profile}.log"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| format!("({}: {e})", path.display()));
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// How long the stack took to come up (every `/health` answering).
    pub fn started_in(&self) -> Duration {
        self.started_in
    }

    /// Restart one profile's gateway on the same port without touching its files, e.g. after
    /// a test changed its `config.yaml` (Hermes reads `mcp_servers` only at start). Blocks
    /// until it answers again; panics when it does not.
    pub fn restart(&mut self, profile: &str) {
        let _ = self.profile(profile);
        let reply = self.command(&format!("restart {profile}"));
        if reply["event"] != "restarted" {
            panic!("restart {profile} failed: {}", reply["message"].as_str().unwrap_or(&reply.to_string()));
        }
        let p = self.profiles.get_mut(profile).unwrap();
        p.pid = reply["pid"].as_u64().unwrap() as u32;
        p.port = reply["port"].as_u64().unwrap() as u16;
        p.url = reply["url"].as_str().unwrap().to_string();
    }

    /// SIGKILL one profile's gateway (its whole process group) and wait until it is gone;
    /// [`RealHermes::restart`] starts it again. Panics when stack.py cannot.
    pub fn kill(&mut self, profile: &str) {
        let _ = self.profile(profile);
        let reply = self.command(&format!("kill {profile}"));
        if reply["event"] != "killed" {
            panic!("kill {profile} failed: {}", reply["message"].as_str().unwrap_or(&reply.to_string()));
        }
    }

    fn command(&mut self, line: &str) -> Value {
        let stdin = self.stdin.as_mut().expect("stack.py stdin closed");
        writeln!(stdin, "{line}").and_then(|_| stdin.flush()).unwrap_or_else(|e| panic!("stack.py gone: {e}"));
        let mut reply = String::new();
        let n = self.stdout.read_line(&mut reply).unwrap();
        if n == 0 {
            let err = std::fs::read_to_string(&self.stderr_path).unwrap_or_default();
            panic!("stack.py exited during {line:?}; stderr:\n{err}");
        }
        serde_json::from_str(&reply).unwrap_or_else(|e| panic!("stack.py answered {reply:?}: {e}"))
    }

    /// Stop every process of the stack: close stdin, SIGTERM, wait (SIGKILL after
    /// [`STOP_TIMEOUT`]). Called by Drop; calling it twice is harmless.
    pub fn stop(&mut self) {
        drop(self.stdin.take());
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            return;
        }
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let deadline = Instant::now() + STOP_TIMEOUT;
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => return,
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
                _ => break,
            }
        }
        eprintln!("real_hermes: stack.py did not stop within {STOP_TIMEOUT:?}; killing it");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for RealHermes {
    fn drop(&mut self) {
        self.stop();
        // Hermes reached for another host than this one (stack.py's loopback guard refused
        // it): the test fails, whatever else it checked.
        let refused = std::fs::read_to_string(&self.guard_log).unwrap_or_default();
        if !refused.trim().is_empty() && !std::thread::panicking() {
            panic!("the real Hermes tried to leave loopback (tests/hermes/loopback_guard):\n{refused}");
        }
        if std::env::var("HAL0_KEEP_HERMES_HOME").is_ok_and(|v| v == "1")
            && let Some(dir) = self.dir.take()
        {
            eprintln!("real_hermes: kept {}", dir.keep().display());
        }
    }
}

fn parse_profile(name: &str, p: &Value) -> Profile {
    let s = |k: &str| p[k].as_str().unwrap_or_else(|| panic!("stack.py: profile {name} has no {k}: {p}")).to_string();
    let n = |k: &str| p[k].as_u64().unwrap_or_else(|| panic!("stack.py: profile {name} has no {k}: {p}"));
    Profile {
        name: name.to_string(),
        url: s("url"),
        key: s("key"),
        pid: n("pid") as u32,
        port: n("port") as u16,
        home: PathBuf::from(s("home")),
    }
}
