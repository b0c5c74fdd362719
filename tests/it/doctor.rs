//! `hal0 doctor`: a healthy installation (config, modes, store, armed auth, a bridge client,
//! a Hermes home whose profiles point at a fake Hermes and are wired to hal0's servers, a
//! registry record exposed to Hermes) reports every row ok; each broken part turns its row.

use crate::support::fake_hermes::FakeHermes;
use crate::support::*;
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

struct Setup {
    env: Env,
    port: u16,
    admin_key: String,
    bridge_key: String,
}

impl Setup {
    fn hermes_home(&self) -> PathBuf {
        self.env.dir.path().join("hermes")
    }
    fn registry(&self) -> PathBuf {
        self.env.config_dir().join("mcp-servers")
    }

    /// `hal0 doctor --json`: exit code, the JSON, and the human form.
    fn doctor(&self) -> (i32, Value) {
        let o = Out(self
            .env
            .cmd(&["doctor", "--json"])
            .env_remove("HAL0_HERMES_HOME")
            .env("HOME", self.env.dir.path().join("home"))
            .output()
            .unwrap());
        assert!(o.stderr().is_empty(), "doctor printed to stderr: {}", o.stderr());
        let v: Value = serde_json::from_str(&o.stdout()).unwrap_or_else(|e| panic!("{e}: {}", o.stdout()));
        (o.code(), v)
    }

    fn row(v: &Value, name: &str) -> (String, String) {
        let r = v["rows"].as_array().unwrap().iter().find(|r| r["name"] == name).unwrap_or_else(|| panic!("{name}"));
        (r["status"].as_str().unwrap().to_string(), r["detail"].as_str().unwrap().to_string())
    }

    /// Every row but `except` is ok.
    fn others_ok(v: &Value, except: &[&str]) {
        for r in v["rows"].as_array().unwrap() {
            if !except.contains(&r["name"].as_str().unwrap()) {
                assert_eq!(r["status"], "ok", "{r}");
            }
        }
    }

    fn mcp_servers(&self, host: &str, with_memory: bool) -> String {
        let mut s = format!(
            "mcp_servers:\n  hal0-admin:\n    type: http\n    url: http://{host}:{p}/mcp/admin/mcp\n    timeout: 60\n    headers:\n      X-hal0-Agent: hermes\n      Authorization: Bearer {k}\n",
            p = self.port,
            k = self.admin_key
        );
        if with_memory {
            s.push_str(&format!(
                "  hal0-memory:\n    type: http\n    url: http://{host}:{p}/mcp/memory/mcp\n    headers:\n      Authorization: Bearer {k}\n",
                p = self.port,
                k = self.admin_key
            ));
        }
        s
    }

    /// The default profile's config.yaml, pointing at `hermes`.
    fn write_default_profile(&self, hermes: &FakeHermes, with_memory: bool, with_github: bool) {
        let mut y = hermes.profile_yaml();
        y.push_str(&self.mcp_servers("127.0.0.1", with_memory));
        if with_github {
            y.push_str("  github:\n    type: http\n    url: https://api.githubcopilot.com/mcp/\n");
        }
        std::fs::write(self.hermes_home().join("config.yaml"), y).unwrap();
    }

    fn write_worker(&self, hermes: &FakeHermes, with_memory: bool) {
        let dir = self.hermes_home().join("profiles/worker1");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("config.yaml"),
            format!("model: other\n{}", self.mcp_servers("localhost", with_memory)),
        )
        .unwrap();
        std::fs::write(
            dir.join(".env"),
            format!("API_SERVER_PORT={}\nAPI_SERVER_KEY={}\n", hermes.port(), hermes.key()),
        )
        .unwrap();
    }
}

/// A healthy installation whose hal0 listens (or would listen) on `port`.
fn healthy(hermes: &FakeHermes, port: u16) -> Setup {
    let env = Env::new();
    let home = env.dir.path().join("hermes");
    std::fs::create_dir_all(&home).unwrap();
    env.ok(&["config", "set", "network.bind", &format!("127.0.0.1:{port}")]);
    env.ok(&["config", "set", "hermes.home", home.to_str().unwrap()]);
    let admin_key = env.json(&["auth", "rotate", "admin", "--yes", "--json"])["key"].as_str().unwrap().to_string();
    let bridge_key = env.bridge_key("ci", &[]);
    let s = Setup { env, port, admin_key, bridge_key };
    s.write_default_profile(hermes, true, true);
    s.write_worker(hermes, true);
    // One registry record, exposed to Hermes and present in its config.yaml.
    let reg = s.registry();
    std::fs::create_dir_all(&reg).unwrap();
    chmod(&reg, 0o700);
    let rec = reg.join("github.toml");
    std::fs::write(
        &rec,
        "id = \"github\"\nname = \"GitHub\"\ntransport = \"streamable-http\"\nurl = \"https://api.githubcopilot.com/mcp/\"\n\n[secrets]\nAuthorization = \"GITHUB_PAT\"\n\n[exposure]\nhermes = true\n",
    )
    .unwrap();
    chmod(&rec, 0o600);
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthy_setup_is_all_ok() {
    let hermes = FakeHermes::start_default().await;
    let s = healthy(&hermes, free_port());
    let (code, v) = s.doctor();
    // Exactly {"rows":[{"name","status","detail"}]}, every row in order, every one ok.
    assert_eq!(v.as_object().unwrap().keys().collect::<Vec<_>>(), ["rows"]);
    let names: Vec<&str> = v["rows"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, hal0::ops::doctor::ROWS);
    for r in v["rows"].as_array().unwrap() {
        let mut keys: Vec<_> = r.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        assert_eq!(keys, ["detail", "name", "status"]);
        assert_eq!(r["status"], "ok", "{r}");
        assert!(!r["detail"].as_str().unwrap().contains('\n'));
    }
    assert_eq!(code, 0, "{v:#}");
    let detail = |n| Setup::row(&v, n).1;
    assert!(detail("config").starts_with("valid"), "{}", detail("config"));
    assert!(detail("paths").contains("flag or env"), "{}", detail("paths"));
    assert!(detail("store").contains("integrity ok"), "{}", detail("store"));
    assert_eq!(detail("auth"), "armed (admin key)");
    assert!(detail("agent-bridge").contains("1 live bridge client"), "{}", detail("agent-bridge"));
    assert!(detail("agent-bridge").contains("hermes, hermes/worker1"), "{}", detail("agent-bridge"));
    assert!(detail("hermes_profiles_mcp").contains("2 profiles wired"), "{}", detail("hermes_profiles_mcp"));
    assert!(detail("memory").starts_with("enabled (embedded SQLite, bm25 word index"), "{}", detail("memory"));
    assert!(detail("mcp_registry").contains("github"), "{}", detail("mcp_registry"));
    assert!(detail("exposure").contains("github → hermes"), "{}", detail("exposure"));
    assert_eq!(detail("listener"), format!("free (127.0.0.1:{})", s.port));
    assert!(!hermes.requests_to("GET", "/health").is_empty(), "Hermes was asked");

    // The human form: a table with badges, nothing secret.
    let o = Out(s.env.cmd(&["doctor"]).env_remove("HAL0_HERMES_HOME").output().unwrap());
    assert_eq!(o.code(), 0);
    let text = o.stdout();
    for want in ["STATUS", "CHECK", "DETAIL", "✔ ok", "agent-bridge", "All 16 checks ok."] {
        assert!(text.contains(want), "{want} in {text}");
    }
    let all = format!("{text}{v}");
    for secret in [s.admin_key.as_str(), s.bridge_key.as_str(), hermes.key()] {
        assert!(!all.contains(secret), "a secret in the doctor's output");
    }
    // The doctor only reads: the store is untouched and nothing new appears.
    let before = std::fs::read_dir(s.env.state_dir()).unwrap().count();
    s.doctor();
    assert_eq!(std::fs::read_dir(s.env.state_dir()).unwrap().count(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_modes_warn() {
    let hermes = FakeHermes::start_default().await;
    let s = healthy(&hermes, free_port());
    let toml = s.env.config_dir().join("hal0.toml");
    chmod(&toml, 0o644);
    chmod(&s.env.state_dir(), 0o755);
    let (code, v) = s.doctor();
    let (status, detail) = Setup::row(&v, "paths");
    assert_eq!(status, "warn");
    assert!(detail.contains(&format!("hal0.toml is 0644, want 0600 (chmod 600 {})", toml.display())), "{detail}");
    assert!(detail.contains(&format!("state dir is 0755, want 0700 (chmod 700 {})", s.env.state_dir().display())));
    Setup::others_ok(&v, &["paths"]);
    assert_eq!(code, 0, "warnings are not failures");
    // The human form says warn and prints no `error:` line; --strict fails on it.
    let o = Out(s.env.cmd(&["doctor"]).env_remove("HAL0_HERMES_HOME").output().unwrap());
    assert_eq!(o.code(), 0);
    let strict = Out(s.env.cmd(&["doctor", "--strict"]).env_remove("HAL0_HERMES_HOME").output().unwrap());
    assert_eq!(strict.code(), 1);
    assert!(o.stdout().contains("▲ warn") && o.stdout().contains("1 with warnings"), "{}", o.stdout());
    assert!(o.stderr().is_empty(), "{}", o.stderr());
}

/// On a packaged install the daemon runs as the owner of the state dir: a file under the
/// dirs that it cannot read (one an older `sudo hal0 …` left root's 0600) fails the paths
/// row with the files and the fix; handing them over makes the row ok again. Needs root.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_the_daemon_cannot_read_fail() {
    use std::os::unix::fs::MetadataExt;
    if std::fs::metadata("/proc/self").unwrap().uid() != 0 {
        eprintln!("not root: files of another owner cannot be made");
        return;
    }
    let hermes = FakeHermes::start_default().await;
    let s = healthy(&hermes, free_port());
    let give = |p: &Path, uid: u32| {
        let st = std::process::Command::new("chown").args(["-R", &format!("{uid}:{uid}")]).arg(p).status().unwrap();
        assert!(st.success());
    };
    give(&s.env.config_dir(), 4242);
    give(&s.env.state_dir(), 4242);
    let (code, v) = s.doctor();
    Setup::others_ok(&v, &[]);
    assert_eq!(code, 0);

    let api_env = s.env.config_dir().join("api.env");
    let lock = s.env.state_dir().join(".hal0.db.lock");
    give(&api_env, 0);
    std::fs::write(&lock, "").unwrap();
    chmod(&lock, 0o644);
    let (code, v) = s.doctor();
    let (status, detail) = Setup::row(&v, "paths");
    assert_eq!(status, "fail");
    let state = s.env.state_dir().display().to_string();
    assert!(
        detail.contains(&format!(
            "the daemon (uid 4242, owner of {state}) cannot use 2 files: {}, {} (fix: chown -R --reference={state} {} {state})",
            api_env.display(),
            lock.display(),
            s.env.config_dir().display()
        )),
        "{detail}"
    );
    Setup::others_ok(&v, &["paths"]);
    assert_eq!(code, 1, "a failed check");

    let fix = std::process::Command::new("chown")
        .args(["-R", &format!("--reference={state}")])
        .args([s.env.config_dir(), s.env.state_dir()])
        .status()
        .unwrap();
    assert!(fix.success());
    let (code, v) = s.doctor();
    assert_eq!(Setup::row(&v, "paths").0, "ok");
    assert_eq!(code, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_toml_fails() {
    let hermes = FakeHermes::start_default().await;
    let s = healthy(&hermes, free_port());
    std::fs::write(s.env.config_dir().join("hal0.toml"), "[network]\nbind = \n").unwrap();
    let (code, v) = s.doctor();
    let (status, detail) = Setup::row(&v, "config");
    assert_eq!(status, "fail");
    assert!(detail.contains("hal0.toml line 2"), "{detail}");
    assert_eq!(code, 1, "a failed check");
    let (_, d) = Setup::row(&v, "listener");
    assert!(d.ends_with("(checked with default settings: hal0.toml is invalid)"), "{d}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_hermes_warns() {
    let hermes = FakeHermes::start_default().await;
    let s = healthy(&hermes, free_port());
    let url = hermes.base_url();
    hermes.shutdown().await;
    let (code, v) = s.doctor();
    let (status, detail) = Setup::row(&v, "agent-bridge");
    assert_eq!(status, "warn");
    assert!(detail.contains(&format!("Hermes unreachable: hermes ({url}, no answer)")), "{detail}");
    assert!(detail.contains("hermes/worker1"), "{detail}");
    Setup::others_ok(&v, &["agent-bridge"]);
    assert_eq!(code, 0, "warnings are not failures");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unkeyed_and_unwired_profiles_warn() {
    let hermes = FakeHermes::start_default().await;
    let s = healthy(&hermes, free_port());
    // worker1 loses hal0-memory and its key; the default profile loses hal0-memory and the
    // exposed registry server.
    s.write_worker(&hermes, false);
    let env_file = s.hermes_home().join("profiles/worker1/.env");
    std::fs::write(&env_file, format!("API_SERVER_PORT={}\n", hermes.port())).unwrap();
    s.write_default_profile(&hermes, false, false);
    let (code, v) = s.doctor();
    let (status, detail) = Setup::row(&v, "agent-bridge");
    assert_eq!(status, "warn");
    assert!(detail.contains("no API key for: hermes/worker1"), "{detail}");
    let (status, detail) = Setup::row(&v, "hermes_profiles_mcp");
    assert_eq!(status, "warn");
    assert!(detail.contains("hermes (no hal0-memory)") && detail.contains("hermes/worker1 (no hal0-memory)"));
    assert!(detail.ends_with("fix: hal0 agent reprovision hermes"), "{detail}");
    let (status, detail) = Setup::row(&v, "hermes_default_memory");
    assert_eq!(status, "warn", "{detail}");
    let (status, detail) = Setup::row(&v, "exposure");
    assert_eq!(status, "warn");
    assert!(detail.contains("github is exposed to hermes but missing from"), "{detail}");
    Setup::others_ok(&v, &["agent-bridge", "hermes_profiles_mcp", "hermes_default_memory", "exposure"]);
    assert_eq!(code, 0, "warnings are not failures");

    // A URL that points at another port is not wired either.
    let cfg = s.hermes_home().join("config.yaml");
    let text = std::fs::read_to_string(&cfg).unwrap().replace(&format!(":{}/mcp/admin", s.port), ":1/mcp/admin");
    std::fs::write(&cfg, text).unwrap();
    let (_, v) = s.doctor();
    let (_, detail) = Setup::row(&v, "hermes_profiles_mcp");
    assert!(detail.contains("hermes (hal0-admin points elsewhere, no hal0-memory)"), "{detail}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_registry_file_warns() {
    let hermes = FakeHermes::start_default().await;
    let s = healthy(&hermes, free_port());
    let bad = s.registry().join("broken.toml");
    std::fs::write(
        &bad,
        "id = \"broken\"\nurl = \"https://x.example/mcp\" token = \"hf_abcdefghijklmnopqrstuvwxyz\"\n",
    )
    .unwrap();
    chmod(&bad, 0o600);
    let (code, v) = s.doctor();
    let (status, detail) = Setup::row(&v, "mcp_registry");
    assert_eq!(status, "warn");
    assert!(detail.contains("broken.toml (line 2)"), "{detail}");
    assert!(!detail.contains("hf_"), "{detail}");
    Setup::others_ok(&v, &["mcp_registry"]);
    assert_eq!(code, 0, "warnings are not failures");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listener_held_by_another_program_fails() {
    let hermes = FakeHermes::start_default().await;
    let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = other.local_addr().unwrap().port();
    let s = healthy(&hermes, port);
    let (code, v) = s.doctor();
    let (status, detail) = Setup::row(&v, "listener");
    assert_eq!(
        (status.as_str(), detail.as_str()),
        ("fail", format!("127.0.0.1:{port} is held by another program").as_str())
    );
    Setup::others_ok(&v, &["listener"]);
    assert_eq!(code, 1, "a failed check");
    drop(other);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listener_held_by_hal0_is_ok() {
    let hermes = FakeHermes::start_default().await;
    let server_env = Env::new();
    let server = server_env.serve();
    let s = healthy(&hermes, server.port);
    let (code, v) = s.doctor();
    let (status, detail) = Setup::row(&v, "listener");
    assert_eq!(status, "ok");
    assert_eq!(detail, format!("held by hal0 {} (127.0.0.1:{})", env!("CARGO_PKG_VERSION"), server.port));
    assert_eq!(code, 0, "{v:#}");
}

#[test]
fn fresh_install_warns_about_auth_and_creates_nothing() {
    let env = Env::new();
    env.ok(&["config", "set", "network.bind", &format!("127.0.0.1:{}", free_port())]);
    let home = env.dir.path().join("home");
    let o = Out(env.cmd(&["doctor", "--json"]).env_remove("HAL0_HERMES_HOME").env("HOME", &home).output().unwrap());
    let v: Value = serde_json::from_str(&o.stdout()).unwrap();
    let (status, detail) = Setup::row(&v, "auth");
    assert_eq!(status, "warn");
    assert!(detail.starts_with("off: anyone on this box can mint keys (admin scope too)"), "{detail}");
    assert!(detail.contains("only this box reaches 127.0.0.1:") && detail.ends_with("sudo hal0 auth rotate admin"));
    // Told to listen on the network, doctor says the daemon will not start so.
    env.ok(&["config", "set", "network.bind", "0.0.0.0:8080"]);
    let lan = Out(env.cmd(&["doctor", "--json"]).env_remove("HAL0_HERMES_HOME").env("HOME", &home).output().unwrap());
    let (status, detail) = Setup::row(&serde_json::from_str(&lan.stdout()).unwrap(), "auth");
    assert_eq!((status.as_str(), lan.code()), ("fail", 1));
    assert!(detail.contains("refuses to listen on 0.0.0.0:8080 until auth is armed"), "{detail}");
    env.ok(&["config", "set", "network.bind", &format!("127.0.0.1:{}", free_port())]);
    let (status, detail) = Setup::row(&v, "store");
    assert_eq!(status, "ok");
    assert!(detail.starts_with("not created yet"), "{detail}");
    let (status, detail) = Setup::row(&v, "agent-bridge");
    assert_eq!(status, "warn");
    assert!(detail.contains("no Hermes home at"), "{detail}");
    assert_eq!(Setup::row(&v, "mcp_registry").1, "none installed");
    assert_eq!(Setup::row(&v, "exposure").1, "nothing exposed");
    assert_eq!(o.code(), 0, "warnings only");
    assert!(!env.state_dir().exists(), "the doctor created the state dir");
}
