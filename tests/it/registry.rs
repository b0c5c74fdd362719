//! CLI tests of `hal0 mcp`: install, list, status, uninstall and the tool policy commands in
//! temporary dirs, with the bad inputs and what each leaves on disk.

use crate::support::*;
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;

fn record_path(env: &Env, id: &str) -> std::path::PathBuf {
    env.config_dir().join("mcp-servers").join(format!("{id}.toml"))
}

fn mode(p: &std::path::Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// Exit code, and the one `error:` line carrying `code`.
fn fails(env: &Env, args: &[&str], exit: i32, code: &str) -> String {
    let o = env.run(args);
    assert_eq!(o.code(), exit, "hal0 {args:?}: {}", o.stderr());
    assert!(o.stderr().starts_with("error: "), "{}", o.stderr());
    assert!(o.stderr().contains(&format!("[{code}]")), "hal0 {args:?}: {}", o.stderr());
    assert_eq!(o.stderr().lines().count(), 1, "one error line: {}", o.stderr());
    o.stderr()
}

#[test]
fn install_each_spec_shape() {
    let env = Env::new();
    for (spec, id, transport) in [
        ("oci://ghcr.io/example/some-mcp-server:latest", "some-mcp-server", "stdio"),
        ("npm:@example/npm-server", "npm-server", "stdio"),
        ("uvx:uv-server", "uv-server", "stdio"),
        ("git+https://github.com/example/git-server.git", "git-server", "stdio"),
        ("https://remote.example.com/mcp", "remote", "streamable-http"),
        ("http://127.0.0.1:9/sse", "sse-one", "sse"),
    ] {
        let mut args = vec!["mcp", "install", spec, "--json"];
        if id == "sse-one" {
            args.extend(["--id", "sse-one"]);
        }
        let out = env.json(&args);
        let r = &out["installed"];
        assert_eq!(r["id"], id, "{spec}");
        assert_eq!(r["transport"], transport, "{spec}");
        assert_eq!(r["spec"], spec);
        assert_eq!(r["tool_policy"], json!({"allow": [], "gated": [], "blocked": []}), "zero callable tools");
        assert_eq!(r["exposure"], json!({"hermes": false, "brain": false}), "zero exposure");
        let p = record_path(&env, id);
        assert_eq!(mode(&p), 0o600, "{}", p.display());
    }
    assert_eq!(mode(&env.config_dir().join("mcp-servers")), 0o700);
    // The `add` alias, --name, and the human output.
    let text = env.ok(&["mcp", "add", "uvx:other", "--id", "other_2", "--name", "Other Server"]);
    assert!(text.contains("Installed `other_2` (Other Server, stdio)"), "{text}");
    assert!(text.contains("hal0 mcp allow other_2 TOOL"), "{text}");
}

#[test]
fn install_bad_inputs() {
    let env = Env::new();
    for bad in ["Upper", "has space", "dot.ted", &"x".repeat(65), ""] {
        fails(&env, &["mcp", "install", "uvx:x", "--id", bad], 2, "mcp.invalid_id");
    }
    for id in ["hal0-admin", "hal0-memory", "hal0-agents", "hal0-relay"] {
        let e = fails(&env, &["mcp", "install", "uvx:x", "--id", id], 1, "mcp.bundled");
        assert!(e.contains("bundled"), "{e}");
    }
    for spec in ["whatever", "ftp://x/y", "npm:", "git+ssh://h/r", "oci://"] {
        let e = fails(&env, &["mcp", "install", spec], 2, "mcp.invalid_spec");
        assert!(e.contains("accepted: oci://"), "{e}");
    }
    // A manifest URL on a loopback or private address is refused by the SSRF guard.
    for url in ["http://127.0.0.1:1/manifest.json", "http://localhost/manifest.json", "https://10.0.0.1/m.json"] {
        let e = fails(&env, &["mcp", "install", url], 2, "mcp.ssrf_refused");
        assert!(e.contains("loopback") || e.contains("private"), "{e}");
    }
    fails(&env, &["mcp", "install", "uvx:x", "--name", ""], 2, "mcp.invalid_name");
    // A server named by its address gives no id ("127" is no name): the installer is asked.
    for url in ["http://127.0.0.1:9/mcp", "http://[::1]:9/mcp"] {
        let e = fails(&env, &["mcp", "install", url], 2, "mcp.id_required");
        assert!(e.contains("--id NAME"), "{e}");
    }
    // Nothing was written by the refused calls.
    assert_eq!(
        env.json(&["mcp", "list", "--json"]).as_array().map(Vec::len),
        Some(4),
        "hal0's own four servers, nothing installed"
    );
    env.ok(&["mcp", "install", "uvx:dup"]);
    let before = std::fs::read_to_string(record_path(&env, "dup")).unwrap();
    fails(&env, &["mcp", "install", "npm:dup"], 1, "mcp.already_installed");
    assert_eq!(std::fs::read_to_string(record_path(&env, "dup")).unwrap(), before);
}

/// One URL is advertised for a proxied server: `mcp status` and `mcp keys add` agree (the
/// box's public URL when set), and a server installed by address under `--id` is named by it.
#[test]
fn status_and_keys_advertise_the_same_proxy_url() {
    let env = Env::new();
    env.ok(&["config", "set", "network.public_url", "https://box.example"]);
    let installed = env.json(&["mcp", "install", "http://127.0.0.1:9/mcp", "--id", "files", "--json"]);
    assert_eq!(installed["installed"]["name"], "files", "{installed}");
    let status = env.json(&["mcp", "status", "files", "--json"]);
    let key = env.json(&["mcp", "keys", "add", "files", "ci", "--json"]);
    assert_eq!(status["proxy_url"], "https://box.example/mcp/proxy/files/mcp", "{status}");
    assert_eq!(status["proxy_url"], key["url"], "{key}");
}

#[test]
fn list_shows_bundled_installed_state_and_broken_files() {
    let env = Env::new();
    let l = env.json(&["mcp", "list", "--json"]);
    let ids: Vec<_> = l.as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_string()).collect();
    assert_eq!(ids, ["hal0-agents", "hal0-memory", "hal0-admin", "hal0-relay"], "one array of items: {l}");
    assert_eq!(l[0]["mount"], "/mcp/agents/mcp");
    assert_eq!(l[3]["mount"], "/mcp/relay/mcp");
    assert_eq!(l[0]["bundled"], true);

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let up = format!("http://127.0.0.1:{}/mcp", listener.local_addr().unwrap().port());
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://127.0.0.1:{}/mcp", l.local_addr().unwrap().port())
    };
    env.ok(&["mcp", "install", &up, "--id", "up"]);
    env.ok(&["mcp", "install", &closed, "--id", "down"]);
    env.ok(&["mcp", "install", "npm:local-tool"]);
    // A malformed record file: listed as broken with its file name and line, never skipped.
    std::fs::write(record_path(&env, "broken"), "id = \"broken\"\n# note\nenabled = \"yes\"\n").unwrap();

    let l = env.json(&["mcp", "list", "--json"]);
    assert_eq!(l.as_array().map(Vec::len), Some(8), "four bundled, three installed and one broken: {l}");
    let state =
        |id: &str| l.as_array().unwrap().iter().find(|s| s["id"] == id).unwrap()["state"].as_str().unwrap().to_string();
    assert_eq!(state("up"), "reachable");
    assert_eq!(state("down"), "unreachable");
    assert_eq!(state("local-tool"), "stopped");
    assert_eq!(state("hal0-admin"), "running");
    let broken: Vec<&Value> = l.as_array().unwrap().iter().filter(|s| s["state"] == "broken").collect();
    assert_eq!(broken.len(), 1);
    assert_eq!((broken[0]["id"].as_str(), broken[0]["file"].as_str()), (Some("broken"), Some("broken.toml")));
    assert!(broken[0]["error"].as_str().unwrap().contains("broken.toml line 3"), "{}", broken[0]);

    // A disabled server that answers is `disabled`.
    let p = record_path(&env, "up");
    let text = std::fs::read_to_string(&p).unwrap().replace("enabled = true", "enabled = false");
    std::fs::write(&p, text).unwrap();
    assert_eq!(env.json(&["mcp", "status", "up", "--json"])["state"], "disabled");

    let o = env.run(&["mcp", "list"]);
    assert_eq!(o.code(), 0);
    for id in ["hal0-admin", "hal0-agents", "up", "down", "local-tool"] {
        assert!(o.stdout().contains(id), "{}", o.stdout());
    }
    assert!(o.stderr().contains("broken.toml") && o.stderr().contains("line 3"), "{}", o.stderr());
    assert!(o.stdout().contains("broken"), "{}", o.stdout());
    // status of the broken record names the file and line.
    let e = fails(&env, &["mcp", "status", "broken"], 2, "mcp.record_malformed");
    assert!(e.contains("broken.toml line 3"), "{e}");
    drop(listener);
}

#[test]
fn status_shows_policy_env_names_never_secret_values() {
    let env = Env::new();
    env.ok(&["mcp", "install", "https://gh.example.com/mcp", "--id", "github"]);
    let p = record_path(&env, "github");
    let text = std::fs::read_to_string(&p).unwrap();
    let text = text
        .replace("[env]\n", "[env]\nGITHUB_HOST = \"github.com\"\n")
        .replace("[secrets]\n", "[secrets]\nGITHUB_TOKEN = \"GITHUB_MCP_TOKEN\"\n");
    std::fs::write(&p, text).unwrap();
    env.ok(&["mcp", "allow", "github", "search"]);
    let s = env.json(&["mcp", "status", "github", "--json"]);
    assert_eq!(s["env"], json!(["GITHUB_HOST"]));
    assert_eq!(s["secrets"], json!(["GITHUB_TOKEN"]));
    assert_eq!(s["tool_policy"]["allow"], json!(["search"]));
    assert_eq!(s["exposure"], json!({"hermes": false, "brain": false}));
    let human = env.ok(&["mcp", "status", "github"]);
    assert!(human.contains("GITHUB_TOKEN") && human.contains("search"), "{human}");
    assert!(!human.contains("GITHUB_MCP_TOKEN") && !s.to_string().contains("GITHUB_MCP_TOKEN"));
    assert!(!human.contains("github.com\n") && !s.to_string().contains("\"github.com\""));
    let b = env.json(&["mcp", "status", "hal0-memory", "--json"]);
    assert_eq!((b["bundled"].clone(), b["mount"].clone()), (json!(true), json!("/mcp/memory/mcp")));
    fails(&env, &["mcp", "status", "nope"], 1, "mcp.not_found");
    fails(&env, &["mcp", "status", "Bad Id"], 2, "mcp.invalid_id");
}

#[test]
fn tiers_move_never_two_lists_and_comments_survive() {
    let env = Env::new();
    env.ok(&["mcp", "install", "npm:@example/github", "--id", "github"]);
    let p = record_path(&env, "github");
    // An operator's comments, at the top and inside [tools].
    let text = std::fs::read_to_string(&p).unwrap();
    let text = format!("# operator: keep this\n{}", text.replace("[tools]\n", "[tools]\n# policy reviewed by ops\n"));
    std::fs::write(&p, &text).unwrap();

    let policy = |env: &Env| env.json(&["mcp", "status", "github", "--json"])["tool_policy"].clone();
    let out = env.ok(&["mcp", "gate", "github", "create_pull_request"]);
    assert!(out.contains("gated"), "{out}");
    assert_eq!(policy(&env), json!({"allow": [], "gated": ["create_pull_request"], "blocked": []}));
    let out = env.ok(&["mcp", "allow", "github", "create_pull_request"]);
    assert!(out.contains("gated → allow"), "{out}");
    assert_eq!(policy(&env), json!({"allow": ["create_pull_request"], "gated": [], "blocked": []}));
    env.ok(&["mcp", "block", "github", "create_pull_request"]);
    env.ok(&["mcp", "allow", "github", "search_repositories"]);
    env.ok(&["mcp", "block", "github", "delete_repository"]);
    env.ok(&["mcp", "block", "github", "delete_repository"]);
    assert_eq!(
        policy(&env),
        json!({"allow": ["search_repositories"], "gated": [], "blocked": ["create_pull_request", "delete_repository"]})
    );
    let after = std::fs::read_to_string(&p).unwrap();
    assert!(after.contains("# operator: keep this"), "{after}");
    assert!(after.contains("# policy reviewed by ops"), "{after}");
    assert_eq!(mode(&p), 0o600);

    // Bad inputs: unknown server, bundled server, bad tool name, bad id.
    fails(&env, &["mcp", "allow", "nope", "t"], 1, "mcp.not_found");
    fails(&env, &["mcp", "gate", "hal0-admin", "t"], 1, "mcp.bundled");
    fails(&env, &["mcp", "block", "github", "has space"], 2, "mcp.tools_invalid");
    fails(&env, &["mcp", "allow", "Bad", "t"], 2, "mcp.invalid_id");
    // A hand edit that puts a tool on two lists makes the record malformed, and edits refuse it.
    let twice = after.replace("gated = []", "gated = [\"search_repositories\"]");
    assert_ne!(twice, after);
    std::fs::write(&p, twice).unwrap();
    let e = fails(&env, &["mcp", "allow", "github", "x"], 2, "mcp.record_malformed");
    assert!(e.contains("github.toml line"), "{e}");
}

#[test]
fn uninstall_confirms_and_refuses_bundled_and_unknown() {
    let env = Env::new();
    env.ok(&["mcp", "install", "uvx:gone"]);
    let e = fails(&env, &["mcp", "uninstall", "gone"], 3, "cli.declined");
    assert!(e.contains("--yes"), "{e}");
    assert!(record_path(&env, "gone").exists());
    let out = env.ok(&["mcp", "uninstall", "gone", "--yes"]);
    assert!(out.contains("Uninstalled `gone`"), "{out}");
    assert!(!record_path(&env, "gone").exists());
    fails(&env, &["mcp", "uninstall", "gone", "--yes"], 1, "mcp.not_found");
    for id in ["hal0-admin", "hal0-memory", "hal0-agents", "hal0-relay"] {
        fails(&env, &["mcp", "uninstall", id, "--yes", "--force"], 1, "mcp.bundled");
    }
    fails(&env, &["mcp", "remove", "../etc", "--yes"], 2, "mcp.invalid_id");
    // A malformed record needs --force; the `remove` alias works.
    std::fs::create_dir_all(env.config_dir().join("mcp-servers")).unwrap();
    std::fs::write(record_path(&env, "junk"), "this is not toml").unwrap();
    let e = fails(&env, &["mcp", "remove", "junk", "--yes"], 2, "mcp.record_malformed");
    assert!(e.contains("junk.toml line 1") && e.contains("--force"), "{e}");
    env.ok(&["mcp", "remove", "junk", "--yes", "--force"]);
    assert!(!record_path(&env, "junk").exists());
}

#[test]
fn mcp_test_probes_a_real_server_and_reports_verdicts() {
    let env = Env::new();
    let server = env.serve();
    let url = server.url("/mcp/memory/mcp");
    env.ok(&["mcp", "install", &url, "--id", "mem"]);
    let fresh = env.json(&["mcp", "test", "mem", "--json"]);
    assert_eq!(fresh["server_name"], "hal0-memory", "{fresh}");
    let tools = fresh["tools"].as_array().unwrap();
    assert!(tools.len() >= 10, "{fresh}");
    assert!(tools.iter().all(|t| t["verdict"] == "unknown_tool"), "a fresh server has zero callable tools: {fresh}");
    env.ok(&["mcp", "allow", "mem", "memory_search"]);
    env.ok(&["mcp", "gate", "mem", "memory_add"]);
    env.ok(&["mcp", "block", "mem", "memory_delete"]);
    env.ok(&["mcp", "allow", "mem", "not_a_tool"]);
    let p = env.json(&["mcp", "test", "mem", "--json"]);
    let verdict = |name: &str| {
        p["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["tool"] == name)
            .map(|t| t["verdict"].as_str().unwrap().to_string())
    };
    assert_eq!(verdict("memory_search").as_deref(), Some("allow"));
    assert_eq!(verdict("memory_add").as_deref(), Some("gated"));
    assert_eq!(verdict("memory_delete").as_deref(), Some("blocked"));
    assert_eq!(verdict("memory_list").as_deref(), Some("unknown_tool"));
    assert_eq!(p["stale_policy"], serde_json::json!(["not_a_tool"]));
    let text = env.ok(&["mcp", "test", "mem"]);
    assert!(text.contains("memory_search") && text.contains("allow"), "{text}");

    // A bad URL, a server that is down, and a stdio server are clear failures.
    env.ok(&["mcp", "install", "http://127.0.0.1:1/mcp", "--id", "down"]);
    let o = env.run(&["mcp", "test", "down"]);
    assert_eq!(o.code(), 1, "{}", o.stderr());
    assert!(o.stderr().contains("mcp.probe_failed"), "{}", o.stderr());
    env.ok(&["mcp", "install", &server.url("/api/health"), "--id", "notmcp"]);
    let o = env.run(&["mcp", "test", "notmcp"]);
    assert_eq!(o.code(), 1, "{}", o.stderr());
    assert!(o.stderr().contains("mcp.probe_failed"), "{}", o.stderr());
    // A stdio record whose command is missing on this machine fails to start, clearly; one
    // without a command (a git install) cannot be started at all.
    env.ok(&["mcp", "install", "npm:@example/some-mcp-server", "--id", "nocmd"]);
    let rec = record_path(&env, "nocmd");
    let text = std::fs::read_to_string(&rec).unwrap();
    std::fs::write(&rec, text.replace("command = \"npx\"", "command = \"hal0-test-no-such-command\"")).unwrap();
    let o = env.run(&["mcp", "test", "nocmd"]);
    assert_eq!(o.code(), 1, "{}", o.stderr());
    assert!(o.stderr().contains("mcp.probe_failed") && o.stderr().contains("cannot start"), "{}", o.stderr());
    env.ok(&["mcp", "install", "git+https://example.com/x/some-mcp-server.git", "--id", "stdio1"]);
    let o = env.run(&["mcp", "test", "stdio1"]);
    assert_eq!(o.code(), 1, "{}", o.stderr());
    assert!(o.stderr().contains("mcp.supervisor_unavailable"), "{}", o.stderr());
    assert_eq!(env.run(&["mcp", "test", "nope"]).code(), 1);
}

#[test]
fn mcp_test_sends_the_records_own_secret_headers() {
    let env = Env::new();
    let server = env.serve();
    env.ok(&["mcp", "install", &server.url("/mcp/memory/mcp"), "--id", "mem"]);
    // Arm auth: the memory mount now needs the client key.
    env.ok(&["auth", "rotate", "client", "--json"]);
    let o = env.run(&["mcp", "test", "mem"]);
    assert_eq!(o.code(), 1, "without the secret the server refuses: {}", o.stdout());
    assert!(o.stderr().contains("mcp.probe_failed"), "{}", o.stderr());
    let path = record_path(&env, "mem");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("[secrets]\n", "[secrets]\nAuthorization = \"HAL0_CLIENT_KEY\"\n")).unwrap();
    let p = env.json(&["mcp", "test", "mem", "--json"]);
    assert_eq!(p["server_name"], "hal0-memory", "{p}");
    assert_eq!(p["missing_secrets"], json!([]));
    let shown = env.ok(&["mcp", "status", "mem", "--json"]);
    let key = std::fs::read_to_string(env.config_dir().join("api.env")).unwrap();
    let key = key.lines().find_map(|l| l.strip_prefix("HAL0_CLIENT_KEY=")).unwrap().to_string();
    assert!(!shown.contains(&key), "status never shows a secret value");
}

/// `hal0 mcp list --json` and `GET /api/mcp/servers` are one view: the same servers with the
/// same fields (the spec's `InstalledServer`: `tools` is the count, `tool_policy` the policy).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_and_rest_list_the_same_view() {
    let env = Env::new();
    env.ok(&["mcp", "install", "http://127.0.0.1:9/mcp", "--id", "github"]);
    env.ok(&["mcp", "allow", "github", "search"]);
    let admin = env.json(&["auth", "rotate", "admin", "--json"])["key"].as_str().unwrap().to_string();
    let cli = env.json(&["mcp", "list", "--json"]);
    let server = env.serve();
    let rest: Value = reqwest::Client::new()
        .get(server.url("/api/mcp/servers"))
        .bearer_auth(&admin)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(&cli, rest.get("servers").unwrap(), "the CLI lists the REST view's servers, as an array");
    let gh = rest["servers"].as_array().unwrap().iter().find(|s| s["id"] == "github").unwrap();
    assert_eq!(gh["tool_policy"]["allow"], json!(["search"]), "{gh}");
    assert!(gh["tools"].is_u64(), "tools is the declared count: {gh}");
    assert_eq!(gh["bundled"], false);
    assert_eq!(rest["count"], 5, "four bundled and one installed: {rest}");
}

/// `hal0 mcp secret set ID HEADER`: the value from stdin into api.env, the record's
/// `[secrets]` entry, nothing echoed; bad inputs refused with nothing written.
#[test]
fn mcp_secret_set_reads_stdin_and_writes_api_env_and_the_record() {
    use std::io::Write;
    let env = Env::new();
    env.ok(&["mcp", "install", "http://127.0.0.1:9/mcp", "--id", "files"]);
    let set = |args: &[&str], input: &str| {
        let mut child = env
            .cmd(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (code, out, err) = set(&["mcp", "secret", "set", "files", "Authorization"], "Bearer s3cr3t-9d1\n");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("HAL0_MCP_FILES_AUTHORIZATION") && !out.contains("s3cr3t"), "{out}");
    let api_env = || std::fs::read_to_string(env.config_dir().join("api.env")).unwrap_or_default();
    assert!(api_env().lines().any(|l| l == "HAL0_MCP_FILES_AUTHORIZATION=Bearer s3cr3t-9d1"), "{}", api_env());
    let status = env.json(&["mcp", "status", "files", "--json"]);
    assert_eq!(status["secrets"], json!(["Authorization"]), "{status}");
    assert!(!status.to_string().contains("s3cr3t"), "{status}");
    // A second value replaces the first under the same name.
    let (code, out, _) = set(&["mcp", "secret", "set", "files", "Authorization", "--json"], "Bearer other-4c2");
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["created"], false, "{v}");
    assert_eq!(v["record_changed"], false, "{v}");
    assert!(api_env().contains("=Bearer other-4c2") && !api_env().contains("s3cr3t"));

    // Bad inputs: each refused with its code, api.env and the record unchanged.
    let (before_env, before_rec) = (api_env(), std::fs::read_to_string(record_path(&env, "files")).unwrap());
    for (args, input, code) in [
        (vec!["mcp", "secret", "set", "nope", "X-Key"], "v", "mcp.not_found"),
        (vec!["mcp", "secret", "set", "files", "bad header"], "v", "mcp.invalid_header"),
        (vec!["mcp", "secret", "set", "files", "X-Key"], "", "secrets.invalid_value"),
        (vec!["mcp", "secret", "set", "files", "X-Key"], "two\nlines\n", "secrets.invalid_value"),
        (vec!["mcp", "secret", "set", "files", "X-Key", "--key", "lower"], "v", "secrets.invalid_name"),
        (vec!["mcp", "secret", "set", "files", "X-Key", "--key", "HAL0_ADMIN_KEY"], "v", "secrets.reserved"),
        (vec!["mcp", "secret", "set", "files", "Authorization", "--key", "OTHER_NAME"], "v", "secrets.invalid_name"),
    ] {
        let (exit, _, err) = set(&args, input);
        assert_ne!(exit, 0, "{args:?} went through");
        assert!(err.contains(&format!("[{code}]")), "{args:?}: {err}");
    }
    assert_eq!(api_env(), before_env, "refusals write nothing to api.env");
    assert_eq!(std::fs::read_to_string(record_path(&env, "files")).unwrap(), before_rec, "nor to the record");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_policy_for_a_tool_the_server_does_not_offer_warns_and_strict_refuses() {
    let up = crate::support::upstream::RmcpUpstream::start().await;
    let env = Env::new();
    let url = up.url();
    tokio::task::spawn_blocking(move || {
        env.ok(&["mcp", "install", &url, "--id", "notes"]);
        let p = record_path(&env, "notes");
        // An offered tool: no warning.
        let o = env.run(&["mcp", "allow", "notes", "echo"]);
        assert_eq!(o.code(), 0, "{}", o.stderr());
        assert_eq!(o.stderr(), "", "no warning for an offered tool");
        // A typo: written, with a warning naming the nearest tool.
        let o = env.run(&["mcp", "allow", "notes", "ecoh"]);
        assert_eq!(o.code(), 0, "{}", o.stderr());
        assert!(
            o.stderr().contains("offers no tool `ecoh`") && o.stderr().contains("did you mean `echo`"),
            "{}",
            o.stderr()
        );
        assert!(std::fs::read_to_string(&p).unwrap().contains("ecoh"));
        // --strict refuses it and leaves the record as it was.
        let before = std::fs::read_to_string(&p).unwrap();
        let err = fails(&env, &["mcp", "gate", "notes", "no_such_tool", "--strict"], 2, "mcp.unknown_tool");
        assert!(err.contains("nothing was changed"), "{err}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), before);
        // A server that does not answer cannot be checked: --strict refuses, naming why in words.
        env.ok(&["mcp", "install", "http://127.0.0.1:9/mcp", "--id", "gone"]);
        let err = fails(&env, &["mcp", "allow", "gone", "echo", "--strict"], 2, "mcp.unknown_tool");
        assert!(err.contains("connection refused by 127.0.0.1:9"), "{err}");
        assert!(!err.contains("rmcp::"), "{err}");
        let o = env.run(&["mcp", "allow", "gone", "echo"]);
        assert_eq!(o.code(), 0, "without --strict an unchecked name is written: {}", o.stderr());
    })
    .await
    .unwrap();
}

#[test]
fn installing_and_testing_a_server_that_does_not_answer_say_why_in_words() {
    let env = Env::new();
    let o = env.run(&["mcp", "install", "http://127.0.0.1:9/mcp", "--id", "gone"]);
    assert_eq!(o.code(), 0, "{}", o.stderr());
    assert!(
        o.stderr().contains("warning: http://127.0.0.1:9/mcp does not answer: connection refused by 127.0.0.1:9")
            && o.stderr().contains("hal0 mcp test gone"),
        "{}",
        o.stderr()
    );
    let err = fails(&env, &["mcp", "test", "gone"], 1, "mcp.probe_failed");
    assert!(err.contains("connection refused by 127.0.0.1:9 (is the server running? is the port right?)"), "{err}");
    assert!(!err.contains("rmcp::") && !err.contains("WorkerTransport"), "{err}");
}

/// The catalogue from an MCP Registry mirror served on loopback (a page in the registry's
/// `GET /v0.1/servers` format, `tests/fixtures/mcp-registry-servers.json`): the configured
/// `mcp.catalog_url` is read, each server becomes an item (npm, PyPI, OCI, a remote), a
/// deleted one and one whose URL needs values are skipped with the reason, a deprecated one
/// is listed only with `--all`; the shipped catalogue flags its archived upstreams the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_mirror_on_loopback_is_the_catalogue() {
    let env = Env::new();
    // The shipped catalogue: archived upstreams hidden, shown and flagged with --all.
    let shown: Vec<Value> = env.json(&["mcp", "catalog", "list", "--json"]).as_array().unwrap().clone();
    let all: Vec<Value> = env.json(&["mcp", "catalog", "list", "--json", "--all"]).as_array().unwrap().clone();
    let archived: Vec<&str> = all.iter().filter(|i| i["archived"] == true).map(|i| i["id"].as_str().unwrap()).collect();
    assert_eq!(archived.len(), 8, "{archived:?}");
    assert_eq!(shown.len() + archived.len(), all.len());
    assert!(shown.iter().all(|i| i["archived"] == false));
    let text = env.ok(&["mcp", "catalog", "list"]);
    assert!(text.contains("VERIFIED") && text.contains("8 archived upstream(s) hidden"), "{text}");
    assert!(env.ok(&["mcp", "catalog", "list", "--all"]).contains("archived"));

    let page =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mcp-registry-servers.json"))
            .unwrap();
    let app = axum::Router::new().route("/v0.1/servers", axum::routing::get(move || async move { page }));
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v0.1/servers", l.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });

    // Given as --from, a loopback URL meets the SSRF guard; configured, it is the operator's.
    let o = env.run(&["mcp", "catalog", "refresh", "--from", &url]);
    assert_eq!(o.code(), 2, "{}", o.stderr());
    assert!(o.stderr().contains("mcp.ssrf_refused"), "{}", o.stderr());
    env.ok(&["config", "set", "mcp.catalog_url", &url]);
    let r = env.json(&["mcp", "catalog", "refresh", "--json"]);
    assert_eq!(r["items"], 4, "{r}");
    let skipped = r["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 2, "{r}");
    assert!(skipped[0].as_str().unwrap().starts_with("io.github.someone/withdrawn: deleted"), "{r}");
    assert!(skipped[1].as_str().unwrap().contains("tenant-crm"), "{r}");

    let items = env.json(&["mcp", "catalog", "list", "--json", "--all"]);
    let get = |id: &str| items.as_array().unwrap().iter().find(|i| i["id"] == id).cloned().unwrap();
    let fs = get("server-filesystem");
    assert_eq!(
        (fs["spec"].as_str(), fs["name"].as_str()),
        (Some("npm:@modelcontextprotocol/server-filesystem"), Some("Filesystem"))
    );
    let weather = get("weather");
    assert_eq!(weather["spec"], "uvx:acme-weather-mcp");
    assert_eq!(weather["env_required"], json!(["ACME_WEATHER_KEY"]));
    assert_eq!(weather["homepage"], "https://weather.acme.example");
    assert_eq!(
        (get("analytics")["transport"].as_str(), get("analytics")["spec"].as_str()),
        (Some("streamable-http"), Some("https://analytics.example.com/mcp"))
    );
    assert_eq!(
        (get("old-notes")["archived"].as_bool(), get("old-notes")["spec"].as_str()),
        (Some(true), Some("oci://ghcr.io/someone/old-notes:0.3.0"))
    );
    assert!(items.as_array().unwrap().iter().all(|i| i["verified"] == false && i["category"] == "registry"));
    assert_eq!(
        env.json(&["mcp", "catalog", "list", "--json"]).as_array().unwrap().len(),
        3,
        "the deprecated one hides"
    );
    // An item installs as its spec says.
    env.ok(&["mcp", "install", fs["spec"].as_str().unwrap(), "--id", "server-filesystem"]);
}
