//! Safe by default on a LAN (issue 32, finding 1): `hal0 serve` refuses a non-loopback
//! address while auth is off unless told `--allow-unauthenticated`, and a setting that
//! names a program, a path, a destination or the listener is written at the box's shell
//! only — never over REST or hal0-admin, whatever the key. (The guard's rule for LAN peers
//! is tested in process, in `src/server/exposure_tests.rs`: traffic here stays on loopback.)

use crate::support::mcp::{call, connect_with};
use crate::support::*;
use serde_json::json;
use std::time::{Duration, Instant};

/// Run `hal0 serve` with `args` and wait (bounded) for it to exit on its own.
fn serve_exits(env: &Env, args: &[&str]) -> Out {
    let mut c = env.cmd(args);
    c.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("hal0 {args:?} kept running: it did not refuse");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Out(child.wait_with_output().unwrap())
}

#[test]
fn serve_refuses_the_network_while_auth_is_off() {
    let env = Env::new();
    // The flag, and the setting the old quick start wrote: both refused before listening.
    let o = serve_exits(&env, &["serve", "--bind", "0.0.0.0:0"]);
    assert_ne!(o.code(), 0);
    let err = o.stderr();
    assert!(err.contains("serve.auth_off_on_network") && err.contains("hal0 auth rotate admin"), "{err}");
    assert!(err.contains("--allow-unauthenticated"), "{err}");
    assert!(!err.contains("listening on"), "{err}");
    env.ok(&["config", "set", "network.bind", "[::]:0"]);
    let o = serve_exits(&env, &["serve"]);
    assert!(o.code() != 0 && o.stderr().contains("serve.auth_off_on_network"), "{}", o.stderr());
}

#[test]
fn serve_on_loopback_with_auth_off_warns_in_its_log() {
    let env = Env::new();
    let mut c = env.cmd(&["serve", "--bind", "127.0.0.1:0"]);
    c.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped()).env("HAL0_LOG", "warn");
    let mut child = c.spawn().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        use std::io::Read;
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    std::thread::sleep(Duration::from_secs(2));
    let _ = child.kill();
    let _ = child.wait();
    let log = reader.join().unwrap();
    assert!(log.contains("WARN") && log.contains("auth is off"), "{log}");
    assert!(log.contains("hal0 auth rotate admin"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_that_run_or_reach_something_are_written_at_the_shell_only() {
    let env = Env::new();
    let admin = env.json(&["auth", "rotate", "admin", "--yes", "--json"])["key"].as_str().unwrap().to_string();
    let ops = env.bridge_key("ops", &["admin"]);
    let server = env.serve();
    let http = reqwest::Client::new();
    let toml = || std::fs::read_to_string(env.config_dir().join("hal0.toml")).unwrap_or_default();
    for key in ["hermes.restart_command", "hermes.home", "skills.dropin_dir", "network.bind", "telemetry.otlp_endpoint"]
    {
        let r = http
            .put(server.url("/api/settings"))
            .bearer_auth(&admin)
            .json(&json!({"key": key, "value": "/tmp/x"}))
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        let body = r.text().await.unwrap();
        assert_eq!(status, 403, "{key}: {body}");
        assert!(body.contains("config.shell_only") && body.contains(&format!("sudo hal0 config set {key}")), "{body}");
    }
    // Removing one is a write too.
    let r = http
        .put(server.url("/api/settings"))
        .bearer_auth(&admin)
        .json(&json!({"key": "hermes.restart_command", "value": null}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 403);
    // Over hal0-admin the call is refused before a card is queued for a person.
    let c = connect_with(&server, "admin", &ops, false).await;
    let e = call(&c, "config_write", json!({"args": {"key": "hermes.restart_command", "value": "touch /tmp/p"}}))
        .await
        .unwrap_err();
    assert!(e.contains("config.shell_only"), "{e}");
    let pending = env.json(&["agent", "approvals", "list", "--json", "--status", "pending"]);
    assert!(pending.as_array().unwrap().is_empty(), "{pending}");
    assert!(!toml().contains("restart_command") && !toml().contains("dropin_dir"), "{}", toml());
    // Other keys still go through the API, and the shell sets any key.
    let r = http
        .put(server.url("/api/settings"))
        .bearer_auth(&admin)
        .json(&json!({"key": "network.public_url", "value": "https://box.example"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200, "{}", r.text().await.unwrap());
    env.ok(&["config", "set", "hermes.restart_command", "systemctl restart hermes"]);
    assert!(toml().contains("systemctl restart hermes"), "{}", toml());
}
