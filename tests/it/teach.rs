//! The bridge's teach tools for memory: hal0 picks the namespace, tags every note with the
//! client, drops ownership tags, and no client can read or plant a note in another's
//! private memory.

use crate::support::mcp::{call, connect_with as connect};
use crate::support::*;
use serde_json::{Value, json};

fn setup(toml: &str) -> (Env, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("profiles/coder")).unwrap();
    let env = Env::new();
    std::fs::create_dir_all(env.config_dir()).unwrap();
    std::fs::write(
        env.config_dir().join("hal0.toml"),
        format!("{toml}\n[hermes]\nhome = \"{}\"\n", home.path().display()),
    )
    .unwrap();
    (env, home)
}

fn texts(v: &Value) -> Vec<String> {
    v["results"].as_array().unwrap().iter().map(|r| r["text"].as_str().unwrap().to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_namespaces_and_tags() {
    let (env, _home) = setup("");
    let ka = env.bridge_key("alice", &["memory"]);
    let kb = env.bridge_key("bob", &["memory"]);
    let server = env.serve();
    let a = connect(&server, "agents", &ka, false).await;
    let b = connect(&server, "agents", &kb, false).await;

    let v = call(&a, "agent_memory_add", json!({"agent": "hermes/coder", "text": "the coder builds with cargo nextest", "tags": ["Agent:hermes", "VISIBILITY:public", "project:x", "source:bridge:bob", "rust"]})).await.unwrap();
    assert_eq!(v["status"], "ok");
    assert!(v["id"].is_string() && v["timestamp"].is_string(), "{v}");
    let found = call(&b, "agent_memory_search", json!({"agent": "hermes/coder", "query": "nextest"})).await.unwrap();
    assert_eq!(
        texts(&found),
        ["the coder builds with cargo nextest"],
        "a profile's memory is the profile's, readable by clients teaching it"
    );
    let tags = &found["results"][0]["tags"];
    assert_eq!(*tags, json!(["rust", "source:bridge:alice"]), "ownership tags dropped, source added: {found}");
    assert_eq!(found["results"][0]["dataset"], "private:hermes__coder");
    // The default profile's private memory is separate.
    let none = call(&a, "agent_memory_search", json!({"agent": "hermes", "query": "nextest"})).await.unwrap();
    assert_eq!(texts(&none), Vec::<String>::new());

    // Alice's own private notes (written on hal0-memory with X-hal0-Private) are read by her
    // shared searches, never by Bob's.
    let am = connect(&server, "memory", &ka, true).await;
    let r = call(&am, "memory_add", json!({"text": "alice private plan zebra"})).await.unwrap();
    assert!(r.to_string().contains("id"), "{r}");
    call(&a, "agent_memory_add", json!({"agent": "shared", "text": "shared zebra fact"})).await.unwrap();
    let mine = call(&a, "agent_memory_search", json!({"agent": "shared", "query": "zebra"})).await.unwrap();
    let mut got = texts(&mine);
    got.sort();
    assert_eq!(got, ["alice private plan zebra", "shared zebra fact"]);
    let theirs = call(&b, "agent_memory_search", json!({"agent": "shared", "query": "zebra"})).await.unwrap();
    assert_eq!(texts(&theirs), ["shared zebra fact"], "Bob never reads Alice's private memory");
    // No tool takes a namespace: naming one is an unknown agent.
    for agent in ["private:alice", "private:hermes__coder", "shared/x", "hermes/ghost"] {
        let e = call(&b, "agent_memory_add", json!({"agent": agent, "text": "planted"})).await.unwrap_err();
        assert!(e.starts_with("bridge.unknown_agent: "), "{agent}: {e}");
    }
    for (args, code) in [
        (json!({"agent": "shared", "query": "x", "limit": 0}), "bridge.memory_invalid"),
        (json!({"agent": "shared", "query": "x", "limit": 51}), "bridge.memory_invalid"),
        (json!({"agent": "shared", "query": "  "}), "bridge.memory_invalid"),
    ] {
        let e = call(&a, "agent_memory_search", args.clone()).await.unwrap_err();
        assert!(e.starts_with(&format!("{code}: ")), "{args}: {e}");
    }
    let e = call(&a, "agent_memory_add", json!({"agent": "shared", "text": ""})).await.unwrap_err();
    assert!(e.starts_with("bridge.memory_invalid: "), "{e}");
    let ok = call(&a, "agent_memory_search", json!({"agent": "shared", "query": "zebra", "limit": 1})).await.unwrap();
    assert_eq!(texts(&ok).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_disabled_is_a_clear_error() {
    let (env, _home) = setup("[memory]\nenabled = false\n");
    let k = env.bridge_key("alice", &[]);
    let server = env.serve();
    let a = connect(&server, "agents", &k, false).await;
    let e = call(&a, "agent_memory_add", json!({"agent": "shared", "text": "x"})).await.unwrap_err();
    assert!(e.starts_with("bridge.memory_disabled: "), "{e}");
    let e = call(&a, "agent_memory_search", json!({"agent": "shared", "query": "x"})).await.unwrap_err();
    assert!(e.starts_with("bridge.memory_disabled: "), "{e}");
    // The shell's `memory add` on this box meets the same rule, with the same words.
    let o = env.run(&["memory", "add", "--local", "x"]);
    assert_ne!(o.code(), 0);
    assert!(
        o.stderr().contains("[memory].enabled is false") && o.stderr().contains("bridge.memory_disabled"),
        "{}",
        o.stderr()
    );
}
