//! TLS to upstreams and to guarded fetches, against https servers on 127.0.0.1 whose
//! certificates a throwaway test CA signed: a private CA given as the record's `ca_file`, the
//! same server without it, a certificate for another name, an expired one, and the SSRF
//! fetcher connecting to the checked address while checking the certificate for the name.

use crate::support;

use crate::support::tls::{Ca, Flaw};
use crate::support::upstream::RmcpUpstream;
use crate::support::*;
use hal0::base::ssrf::{self, FetchLimits, Guard};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

/// An rmcp upstream reachable as `https://localhost:<port>/mcp` with a leaf for `names`.
async fn https_upstream(ca: &Ca, names: &[&str], flaw: Flaw) -> (RmcpUpstream, String) {
    let up = RmcpUpstream::start().await;
    let tls = support::tls::relay(&ca.leaf(names, flaw), format!("127.0.0.1:{}", up.port()).parse().unwrap()).await;
    (up, format!("https://localhost:{}/mcp", tls.port()))
}

fn probe_error(env: &Env, id: &str) -> String {
    let o = env.run(&["mcp", "test", id]);
    assert_ne!(o.code(), 0, "the probe should have been refused: {}", o.stdout());
    o.stderr()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_https_upstream_signed_by_a_private_ca() {
    let ca = Ca::new();
    let env = Env::new();
    let ca_file = ca.write(env.dir.path());
    let (up, url) = https_upstream(&ca, &["localhost"], Flaw::None).await;

    // Without the CA the certificate is refused, naming the fix.
    env.ok(&["mcp", "install", &url, "--id", "plain"]);
    let e = probe_error(&env, "plain");
    assert!(e.contains("mcp.tls_certificate_invalid") && e.contains("ca_file"), "{e}");

    // With it: the probe lists the tools, and a proxied call reaches the upstream once.
    env.ok(&["mcp", "install", &url, "--id", "sec", "--ca-file", ca_file.to_str().unwrap()]);
    let record = std::fs::read_to_string(env.config_dir().join("mcp-servers/sec.toml")).unwrap();
    assert!(record.contains("ca_file"), "{record}");
    let probe = env.json(&["mcp", "test", "sec", "--json"]);
    let tools = probe.to_string();
    assert!(tools.contains("echo") && tools.contains("whoami"), "{probe}");
    env.ok(&["mcp", "allow", "sec", "echo"]);
    let key = env.json(&["mcp", "keys", "add", "sec", "ci", "--json"])["key"].as_str().unwrap().to_string();
    let server = env.serve();
    let cfg = StreamableHttpClientTransportConfig::with_uri(server.url("/mcp/proxy/sec/mcp")).auth_header(key);
    let c = ().serve(StreamableHttpClientTransport::from_config(cfg)).await.expect("MCP handshake");
    let p = CallToolRequestParams::new("echo").with_arguments(json!({"text": "over tls"}).as_object().unwrap().clone());
    let r = c.call_tool(p).await.unwrap();
    assert_ne!(r.is_error, Some(true), "{r:?}");
    assert!(serde_json::to_string(&r).unwrap().contains("over tls"));
    assert_eq!(up.count("echo"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_name_and_expired_certificates_are_refused_with_a_clear_code() {
    let ca = Ca::new();
    let env = Env::new();
    let ca_file = ca.write(env.dir.path());
    let ca_arg = ca_file.to_str().unwrap();
    let (up1, wrong) = https_upstream(&ca, &["wrong.example"], Flaw::None).await;
    let (up2, expired) = https_upstream(&ca, &["localhost"], Flaw::Expired).await;
    env.ok(&["mcp", "install", &wrong, "--id", "wrong", "--ca-file", ca_arg]);
    env.ok(&["mcp", "install", &expired, "--id", "old", "--ca-file", ca_arg]);
    let e = probe_error(&env, "wrong");
    assert!(e.contains("mcp.tls_certificate_invalid") && e.contains("not valid for this host name"), "{e}");
    let e = probe_error(&env, "old");
    assert!(e.contains("mcp.tls_certificate_invalid") && e.contains("expired"), "{e}");
    assert_eq!(
        up1.counts().values().sum::<u64>() + up2.counts().values().sum::<u64>(),
        0,
        "no MCP message got through"
    );

    // A ca_file that is not a certificate is refused at install, and nothing is written.
    let junk = env.dir.path().join("junk.pem");
    std::fs::write(&junk, "hello").unwrap();
    let o = env.run(&["mcp", "install", &wrong, "--id", "junk", "--ca-file", junk.to_str().unwrap()]);
    assert_eq!(o.code(), 2, "{}", o.stderr());
    assert!(o.stderr().contains("mcp.tls_ca_invalid"), "{}", o.stderr());
    assert!(!env.config_dir().join("mcp-servers/junk.toml").exists());
    let o = env.run(&["mcp", "install", "http://127.0.0.1:9/mcp", "--id", "nohttps", "--ca-file", ca_arg]);
    assert!(o.stderr().contains("mcp.tls_ca_invalid") && o.stderr().contains("https"), "{}", o.stderr());
}

/// A plain HTTP server on loopback answering `/manifest.json`.
async fn manifest_server() -> std::net::SocketAddr {
    let app = axum::Router::new().route(
        "/manifest.json",
        axum::routing::get(|| async { axum::Json(json!({"name": "remote", "url": "https://mcp.example.com/mcp"})) }),
    );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guarded_fetcher_checks_the_certificate_for_the_name_it_resolved() {
    let ca = Ca::new();
    let dir = tempfile::tempdir().unwrap();
    let ca_file = ca.write(dir.path());
    let plain = manifest_server().await;
    let good = support::tls::relay(&ca.leaf(&["pub.test"], Flaw::None), plain).await;
    let other = support::tls::relay(&ca.leaf(&["other.test"], Flaw::None), plain).await;
    // pub.test resolves (in this guard) to loopback, which this guard alone allows: the
    // connection goes to the checked address, SNI and the certificate check use the name.
    let guard = Guard::test_only_with(vec![("pub.test".into(), "127.0.0.1".parse().unwrap())], vec![plain.ip()]);
    let limits = FetchLimits { ca_file: Some(ca_file), ..FetchLimits::default() };
    let (url, body) =
        ssrf::fetch(&guard, &format!("https://pub.test:{}/manifest.json", good.port()), limits.clone()).await.unwrap();
    assert_eq!(url.host_str(), Some("pub.test"));
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["name"], "remote");

    let e = ssrf::fetch(&guard, &format!("https://pub.test:{}/manifest.json", other.port()), limits.clone())
        .await
        .unwrap_err();
    assert_eq!(e.code, "mcp.tls_certificate_invalid", "{}", e.message);
    assert!(e.message.contains("not valid for this host name"), "{}", e.message);
    let e = ssrf::fetch(&guard, &format!("https://pub.test:{}/manifest.json", good.port()), FetchLimits::default())
        .await
        .unwrap_err();
    assert_eq!(e.code, "mcp.tls_certificate_invalid", "untrusted CA: {}", e.message);
    // The guard still runs first: the system guard refuses the loopback address outright.
    let e = ssrf::fetch(&Guard::system(), &format!("https://127.0.0.1:{}/manifest.json", good.port()), limits)
        .await
        .unwrap_err();
    assert_eq!(e.code, "mcp.ssrf_refused");
}

/// A client trusting `ca` only, reporting the certificate each server presents.
fn client_trusting(ca: &Ca) -> reqwest::Client {
    let cert = reqwest::Certificate::from_pem(ca.pem().as_bytes()).unwrap();
    reqwest::Client::builder().tls_certs_only([cert]).tls_info(true).build().unwrap()
}

async fn presented(http: &reqwest::Client, url: &str) -> Vec<u8> {
    let r = http.get(url).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    r.extensions().get::<reqwest::tls::TlsInfo>().and_then(|i| i.peer_certificate()).unwrap().to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hal0_serve_speaks_https_and_reloads_a_renewed_certificate() {
    let ca = Ca::new();
    let env = Env::new();
    let first = ca.leaf(&["localhost", "127.0.0.1"], Flaw::None);
    let (cert, key) = first.write(env.dir.path(), "serve");
    env.ok(&["config", "set", "network.tls_cert", cert.to_str().unwrap()]);
    env.ok(&["config", "set", "network.tls_key", key.to_str().unwrap()]);
    // The lines to paste name https once a certificate is configured.
    let added = env.json(&["bridge", "add", "ws", "--json"]);
    let key_ws = added["key"].as_str().unwrap().to_string();
    assert!(added.to_string().contains("https://"), "{added}");
    let server = env.serve();
    assert!(server.base.starts_with("https://"), "{}", server.base);
    let https = format!("https://localhost:{}", server.port);
    let http = client_trusting(&ca);
    assert_eq!(presented(&http, &format!("{https}/api/status")).await, first.der());

    // MCP over https with a client that trusts the CA.
    let cfg = StreamableHttpClientTransportConfig::with_uri(format!("{https}/mcp/agents/mcp")).auth_header(key_ws);
    let transport = StreamableHttpClientTransport::with_client(http.clone(), cfg);
    let c = ().serve(transport).await.expect("MCP handshake over https");
    assert!(!c.list_all_tools().await.unwrap().is_empty());

    // Loopback callers (Hermes, the CLI, local tools) may still speak plain http.
    let plain = reqwest::get(format!("http://127.0.0.1:{}/api/health", server.port)).await.unwrap();
    assert_eq!(plain.status().as_u16(), 200);

    // A renewed certificate written over the files applies to new connections, no restart.
    let second = ca.leaf(&["localhost", "127.0.0.1"], Flaw::None);
    second.write(env.dir.path(), "serve");
    let renewed = eventually(std::time::Duration::from_secs(15), async || {
        let fresh = client_trusting(&ca);
        presented(&fresh, &format!("{https}/api/status")).await == second.der()
    })
    .await;
    assert!(renewed, "the renewed certificate was not served");
    // A broken file is not taken: the renewed pair stays in use.
    std::fs::write(&cert, "garbage").unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    assert_eq!(presented(&client_trusting(&ca), &format!("{https}/api/status")).await, second.der());
}

#[test]
fn a_bad_certificate_pair_stops_the_start() {
    let env = Env::new();
    let junk = env.dir.path().join("junk.pem");
    std::fs::write(&junk, "not pem").unwrap();
    env.ok(&["config", "set", "network.tls_cert", junk.to_str().unwrap()]);
    let o = env.run(&["serve", "--bind", "127.0.0.1:0"]);
    assert_ne!(o.code(), 0);
    assert!(o.stderr().contains("network.tls_key") && o.stderr().contains("config.tls_invalid"), "{}", o.stderr());
    env.ok(&["config", "set", "network.tls_key", junk.to_str().unwrap()]);
    let o = env.run(&["serve", "--bind", "127.0.0.1:0"]);
    assert_ne!(o.code(), 0);
    assert!(o.stderr().contains("tls_cert") && o.stderr().contains("config.tls_invalid"), "{}", o.stderr());
}
