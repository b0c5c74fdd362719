//! Pinned installs (`registry::packages`): an `npm:` or `uvx:` install records the exact
//! release its registry names and runs it, and `hal0 mcp update` re-pins only when a person
//! says yes. The registries are a loopback mirror serving real release metadata of two
//! releases each of one npm server (`@modelcontextprotocol/server-everything`) and one PyPI
//! server (`mcp-server-time`), captured from the public registries by
//! `tests/external/capture_registries.py` (run by setup.sh); the mirror first offers the older
//! release as the newest, then "publishes" the newer one.

use crate::support::*;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// The captured metadata (`None`: not captured; skipped, or failed under
/// HAL0_REQUIRE_EXTERNAL=1).
fn capture() -> Option<Value> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/registry-capture.json");
    match std::fs::read_to_string(&p) {
        Ok(t) => Some(serde_json::from_str(&t).unwrap()),
        Err(_) => {
            missing_external(p.display(), "run tests/external/setup.sh");
            None
        }
    }
}

/// The two captured releases of `eco`, older first.
fn releases(c: &Value, eco: &str) -> (String, String) {
    let mut v: Vec<String> = c[eco]["releases"].as_object().unwrap().keys().cloned().collect();
    v.sort_by_key(|s| s.split('.').map(|p| p.parse::<u64>().unwrap_or(0)).collect::<Vec<_>>());
    (v[0].clone(), v[1].clone())
}

/// A mirror of both registries on loopback; `newer` says whether the newer releases are out.
async fn mirror(c: Value, newer: Arc<Mutex<bool>>) -> String {
    let app = axum::Router::new().fallback(move |uri: axum::http::Uri| {
        let (c, newer) = (c.clone(), *newer.lock().unwrap());
        async move {
            let path = uri.path().to_string();
            let not_found = (axum::http::StatusCode::NOT_FOUND, "not found".to_string());
            let ok = |v: Value| (axum::http::StatusCode::OK, v.to_string());
            let (npm_old, npm_new) = releases(&c, "npm");
            let (py_old, py_new) = releases(&c, "pypi");
            let npm_name = c["npm"]["name"].as_str().unwrap();
            if let Some(ver) = path.strip_prefix(&format!("/{npm_name}/")) {
                let latest = if newer { &npm_new } else { &npm_old };
                let ver = if ver == "latest" { latest.as_str() } else { ver };
                let published = ver == npm_old || (newer && ver == npm_new);
                return if published { ok(c["npm"]["releases"][ver].clone()) } else { not_found };
            }
            if path == format!("/pypi/{}/json", c["pypi"]["name"].as_str().unwrap()) {
                let latest = if newer { &py_new } else { &py_old };
                let files = &c["pypi"]["releases"];
                let mut out = json!({"info": {"name": c["pypi"]["name"], "version": latest},
                                     "urls": files[latest.as_str()], "releases": {py_old.as_str(): files[py_old.as_str()]}});
                if newer {
                    out["releases"][py_new.as_str()] = files[py_new.as_str()].clone();
                }
                return ok(out);
            }
            not_found
        }
    });
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
    url
}

/// `hal0 ARGS` with both registries at `mirror`.
fn run(env: &Env, mirror: &str, args: &[&str]) -> Out {
    Out(env.cmd(args).env("HAL0_NPM_REGISTRY", mirror).env("HAL0_PYPI_INDEX", mirror).output().unwrap())
}

fn record(env: &Env, id: &str) -> toml_edit::DocumentMut {
    let p = env.config_dir().join(format!("mcp-servers/{id}.toml"));
    std::fs::read_to_string(p).unwrap().parse().unwrap()
}

fn args_of(env: &Env, id: &str) -> Vec<String> {
    record(env, id)["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn installs_run_the_release_they_recorded_and_update_asks_first() {
    let Some(c) = capture() else { return };
    let newer = Arc::new(Mutex::new(false));
    let url = mirror(c.clone(), newer.clone()).await;
    let (npm_old, npm_new) = releases(&c, "npm");
    let (py_old, py_new) = releases(&c, "pypi");
    let npm = c["npm"]["name"].as_str().unwrap().to_string();
    let env = Env::new();

    // npm: the newest release the registry names, with its integrity, in the start argv.
    let o = run(&env, &url, &["mcp", "install", &format!("npm:{npm}"), "--id", "ev"]);
    assert_eq!(o.code(), 0, "{}", o.stderr());
    assert!(!o.stderr().contains("not pinned"), "{}", o.stderr());
    assert_eq!(args_of(&env, "ev"), ["-y", "--", &format!("{npm}@{npm_old}")]);
    let pkg = &record(&env, "ev")["package"];
    assert_eq!(pkg["version"].as_str(), Some(npm_old.as_str()));
    assert_eq!(pkg["integrity"].as_str(), c["npm"]["releases"][&npm_old]["dist"]["integrity"].as_str());
    assert_eq!(pkg["registry"].as_str(), Some(url.as_str()));
    let status = env.ok(&["mcp", "status", "ev"]);
    assert!(status.contains(&format!("{npm}@{npm_old} from {url}")), "{status}");

    // PyPI: the wheel's SHA-256.
    let o = run(&env, &url, &["mcp", "install", "uvx:mcp-server-time", "--id", "time"]);
    assert_eq!(o.code(), 0, "{}", o.stderr());
    assert_eq!(args_of(&env, "time"), [format!("mcp-server-time@{py_old}")]);
    let wheel = c["pypi"]["releases"][&py_old].as_array().unwrap().iter().find(|f| f["packagetype"] == "bdist_wheel");
    let sha = format!("sha256:{}", wheel.unwrap()["digests"]["sha256"].as_str().unwrap());
    assert_eq!(record(&env, "time")["package"]["integrity"].as_str(), Some(sha.as_str()));

    // A release asked for by name; one the registry does not have installs nothing.
    let o = run(&env, &url, &["mcp", "install", &format!("npm:{npm}@{npm_old}"), "--id", "ev-old"]);
    assert_eq!(o.code(), 0, "{}", o.stderr());
    assert_eq!(args_of(&env, "ev-old").last().unwrap(), &format!("{npm}@{npm_old}"));
    for (spec, id) in [(format!("npm:{npm}@0.0.0-nope"), "nope"), ("uvx:mcp-server-time@1.0.0".to_string(), "nope2")] {
        let o = run(&env, &url, &["mcp", "install", &spec, "--id", id]);
        assert_ne!(o.code(), 0, "{spec}");
        assert!(o.stderr().contains("mcp.package_not_found"), "{spec}: {}", o.stderr());
        assert!(!env.config_dir().join(format!("mcp-servers/{id}.toml")).exists(), "nothing half-installed");
    }
    let o = run(&env, &url, &["mcp", "install", "npm:pkg@bad version", "--id", "bad"]);
    assert_eq!(o.code(), 2, "{}", o.stderr());
    assert!(o.stderr().contains("mcp.invalid_spec"), "{}", o.stderr());

    // Nothing new yet.
    let u: Value = serde_json::from_str(&run(&env, &url, &["mcp", "update", "ev", "--json"]).stdout()).unwrap();
    assert_eq!((u["update"]["changes"].as_bool(), u["applied"].as_bool()), (Some(false), Some(false)), "{u}");

    // The registries publish the newer releases: update shows the change and writes
    // nothing until a person says yes (no terminal and no --yes: declined, exit 3).
    *newer.lock().unwrap() = true;
    let before = std::fs::read_to_string(env.config_dir().join("mcp-servers/ev.toml")).unwrap();
    let u: Value = serde_json::from_str(&run(&env, &url, &["mcp", "update", "ev", "--json"]).stdout()).unwrap();
    assert_eq!(u["update"]["changes"], true, "{u}");
    assert_eq!(u["update"]["current"]["version"].as_str(), Some(npm_old.as_str()));
    assert_eq!(u["update"]["available"]["version"].as_str(), Some(npm_new.as_str()));
    assert_eq!(u["applied"], false);
    let o = run(&env, &url, &["mcp", "update", "ev"]);
    assert_eq!(o.code(), 3, "{}{}", o.stdout(), o.stderr());
    assert!(o.stdout().contains(&format!("{npm}@{npm_new}")), "{}", o.stdout());
    assert_eq!(std::fs::read_to_string(env.config_dir().join("mcp-servers/ev.toml")).unwrap(), before);
    let o = run(&env, &url, &["mcp", "update", "ev", "--yes"]);
    assert_eq!(o.code(), 0, "{}", o.stderr());
    assert_eq!(args_of(&env, "ev"), ["-y", "--", &format!("{npm}@{npm_new}")]);
    assert_eq!(record(&env, "ev")["package"]["version"].as_str(), Some(npm_new.as_str()));
    assert!(env.ok(&["mcp", "status", "ev"]).contains(&format!("{npm}@{npm_new}")));
    let o = run(&env, &url, &["mcp", "update", "time", "--yes"]);
    assert_eq!(o.code(), 0, "{}", o.stderr());
    assert_eq!(args_of(&env, "time"), [format!("mcp-server-time@{py_new}")]);
    // A release asked for by name goes back to it.
    let o = run(&env, &url, &["mcp", "update", "time", "--version", &py_old, "--yes"]);
    assert_eq!(o.code(), 0, "{}", o.stderr());
    assert_eq!(args_of(&env, "time"), [format!("mcp-server-time@{py_old}")]);

    // Only packages are pinned; a registry nobody answers leaves an install unpinned, said.
    env.ok(&["mcp", "install", "http://127.0.0.1:9/mcp", "--id", "remote"]);
    let o = run(&env, &url, &["mcp", "update", "remote"]);
    assert!(o.stderr().contains("mcp.package_unpinnable"), "{}", o.stderr());
    let o = env.run(&["mcp", "install", "npm:some-server", "--id", "offline"]);
    assert_eq!(o.code(), 0, "{}", o.stderr());
    assert!(
        o.stderr().contains("not pinned to a release") && o.stderr().contains("hal0 mcp update offline"),
        "{}",
        o.stderr()
    );
    assert!(record(&env, "offline").get("package").is_none());
    assert!(env.ok(&["mcp", "status", "offline"]).contains("not pinned: hal0 mcp update offline pins it"));
}
