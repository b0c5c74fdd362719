//! `hal0 backup` / `hal0 restore` with the real binary and real SQLite files: a backup taken
//! while the daemon serves calls restores into a fresh box with nothing lost, and the
//! restored daemon answers the same keys; a restore refuses a running daemon, an archive
//! from a newer schema, a damaged archive, and a change nobody confirmed, each leaving the
//! target as it was.

use crate::support::mcp::{call, connect_with};
use crate::support::*;
use rusqlite::Connection;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

fn count(db: &Path, sql: &str) -> i64 {
    Connection::open(db).unwrap().query_row(sql, [], |r| r.get(0)).unwrap()
}

/// Every file of a dir, relative path → bytes (lock files aside).
fn files(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if !p.to_string_lossy().ends_with(".lock") {
                out.insert(p.strip_prefix(dir).unwrap().display().to_string(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn admin_key(env: &Env) -> String {
    env.json(&["auth", "rotate", "admin", "--yes", "--json"])["key"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_under_load_restores_into_a_fresh_box_with_the_same_keys() {
    let a = Env::new();
    let admin = admin_key(&a);
    let bridge = a.bridge_key("ci", &["agents", "memory"]);
    a.ok(&["config", "set", "audit.retention_days", "45"]);
    let server = a.serve();

    // Load: MCP calls that each write an audit row, on two sessions, until told to stop.
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicUsize::new(0));
    let mut load = Vec::new();
    for (mount, key, tool, args) in [
        ("admin", admin.clone(), "version_info", json!({})),
        ("memory", bridge.clone(), "memory_add", json!({"text": "the deploy host is gamma"})),
    ] {
        let c = connect_with(&server, mount, &key, false).await;
        let (stop, done) = (stop.clone(), done.clone());
        load.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                call(&c, tool, args.clone()).await.unwrap_or_else(|e| panic!("{tool}: {e}"));
                done.fetch_add(1, Ordering::Relaxed);
            }
            c.cancel().await.unwrap();
        }));
    }
    let db_a = a.state_dir().join("hal0.db");
    // Both sessions must have written before the copy (admin calls alone can reach 20 while
    // the first note is still on its way, and an archive without a note proves nothing).
    assert!(
        eventually(std::time::Duration::from_secs(30), async || {
            done.load(Ordering::Relaxed) >= 20 && count(&db_a, "SELECT count(*) FROM memory_notes") >= 1
        })
        .await
    );
    let audit_before = count(&db_a, "SELECT count(*) FROM audit_log");
    let notes_before = count(&db_a, "SELECT count(*) FROM memory_notes");

    let archive = a.dir.path().join("box.tar.gz");
    let mut backup = a.cmd(&["backup", archive.to_str().unwrap(), "--json"]);
    let made = tokio::task::spawn_blocking(move || Out(backup.output().unwrap())).await.unwrap();
    assert_eq!(made.code(), 0, "{}", made.stderr());
    let calls_during = done.load(Ordering::Relaxed);
    // The daemon went on serving while and after the copy was taken.
    assert!(
        eventually(std::time::Duration::from_secs(30), async || done.load(Ordering::Relaxed) >= calls_during + 10)
            .await
    );
    stop.store(true, Ordering::Relaxed);
    for l in load {
        l.await.unwrap();
    }
    let made: Value = serde_json::from_str(&made.stdout()).unwrap();
    assert!(made["config_files"].as_u64().unwrap() >= 2, "{made}");
    assert_eq!(made["schema_version"], json!(hal0::store::migrations::MIGRATIONS.len()));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&archive).unwrap().permissions().mode() & 0o777, 0o600);
    let config_a = files(&a.config_dir());
    drop(server);

    // A fresh box: nothing there yet, so nothing is replaced and no prompt is needed.
    let b = Env::new();
    let restored = b.json(&["restore", archive.to_str().unwrap(), "--json"]);
    assert_eq!(restored["previous"], Value::Null, "{restored}");
    let db_b = b.state_dir().join("hal0.db");
    assert_eq!(files(&b.config_dir()), config_a, "the config dir comes back byte for byte");
    let ok: String = Connection::open(&db_b).unwrap().query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(ok, "ok");
    // Nothing committed before the backup started is missing.
    assert!(count(&db_b, "SELECT count(*) FROM audit_log") >= audit_before);
    assert!(count(&db_b, "SELECT count(*) FROM memory_notes") >= notes_before);
    let rows = "SELECT group_concat(name || key_sha256 || scopes, ',') FROM bridge_clients";
    let clients: String = Connection::open(&db_b).unwrap().query_row(rows, [], |r| r.get(0)).unwrap();
    let clients_a: String = Connection::open(&db_a).unwrap().query_row(rows, [], |r| r.get(0)).unwrap();
    assert_eq!(clients, clients_a);
    // The staging dir is gone.
    let left: Vec<_> = std::fs::read_dir(b.state_dir())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("restore"))
        .collect();
    assert!(left.is_empty(), "{left:?}");

    // The restored daemon answers the same admin and bridge keys.
    let server = b.serve();
    let http = reqwest::Client::new();
    let r = http.get(server.url("/api/bridge/clients")).bearer_auth(&admin).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let c = connect_with(&server, "memory", &bridge, false).await;
    let found = call(&c, "memory_search", json!({"query": "deploy host"})).await.unwrap();
    assert!(found.to_string().contains("gamma"), "{found}");
    c.cancel().await.unwrap();
    let r = http.get(server.url("/api/bridge/clients")).bearer_auth("hal0_not_the_key").send().await.unwrap();
    assert_eq!(r.status(), 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restore_refuses_a_running_daemon_a_newer_schema_a_damaged_archive_and_no_confirmation() {
    let a = Env::new();
    a.bridge_key("ci", &["agents"]);
    a.ok(&["config", "set", "audit.retention_days", "45"]);
    let archive = a.dir.path().join("a.tar.gz");
    a.ok(&["backup", archive.to_str().unwrap()]);

    // Box b has a config and a store of its own.
    let b = Env::new();
    b.bridge_key("laptop", &["agents"]);
    b.ok(&["config", "set", "audit.retention_days", "7"]);
    let before = files(&b.config_dir());
    let db_before = std::fs::read(b.state_dir().join("hal0.db")).unwrap();
    let unchanged = |why: &str| {
        assert_eq!(files(&b.config_dir()), before, "{why}: the config dir changed");
        assert_eq!(std::fs::read(b.state_dir().join("hal0.db")).unwrap(), db_before, "{why}: the store changed");
        let staging = std::fs::read_dir(b.state_dir())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains("restore"))
            .count();
        assert_eq!(staging, 0, "{why}: a staging dir was left");
    };

    // No terminal and no --yes: the plan is shown, nothing is done (exit 3, declined).
    let out = b.run(&["restore", archive.to_str().unwrap()]);
    assert_eq!(out.code(), 3, "{}", out.stderr());
    let plan = out.stdout();
    let toml = b.config_dir().join("hal0.toml");
    assert!(plan.contains(&format!("replace  {}", toml.display())), "{plan}");
    assert!(plan.contains(&format!("replace  {}", b.state_dir().join("hal0.db").display())), "{plan}");
    assert!(out.stderr().contains("pass --yes"), "{}", out.stderr());
    unchanged("declined");

    // A running daemon.
    let server = b.serve();
    let out = b.run(&["restore", archive.to_str().unwrap(), "--yes"]);
    assert_eq!(out.code(), 1, "{}", out.stderr());
    assert!(
        out.stderr().contains("backup.daemon_running") && out.stderr().contains("stop it first"),
        "{}",
        out.stderr()
    );
    drop(server);
    let db_before_now = std::fs::read(b.state_dir().join("hal0.db")).unwrap();

    // Damaged archives: one byte flipped at points spread over the compressed data (past the
    // gzip header's 10 bytes, up to its trailer; the middle once landed where no file's sha256
    // looks), then one cut short, then not an archive at all. Some bits of a deflate stream
    // change nothing (the code lengths of symbols a block never uses): a flip there leaves
    // the archive whole, so each point moves on to the first byte whose flip changes what
    // the archive holds or breaks it.
    let bytes = std::fs::read(&archive).unwrap();
    let gunzip = |b: &[u8]| {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(b), &mut out).map(|_| out)
    };
    let whole = gunzip(&bytes).unwrap();
    let flip = |at: usize| {
        let mut f = bytes.clone();
        f[at] ^= 0x55;
        f
    };
    let damages = |at: usize| gunzip(&flip(at)).map_or(true, |out| out != whole);
    let mid = bytes.len() / 2;
    let mut bad_files = Vec::new();
    for (i, at) in (0..12).map(|k| 10 + k * (bytes.len() - 11) / 11).chain([mid]).enumerate() {
        let at = (at..bytes.len()).find(|&p| damages(p)).expect("a byte whose flip damages the archive");
        let flipped = flip(at);
        let damaged = a.dir.path().join(format!("damaged-{i}.tar.gz"));
        std::fs::write(&damaged, &flipped).unwrap();
        bad_files.push(damaged);
    }
    let short = a.dir.path().join("short.tar.gz");
    std::fs::write(&short, &bytes[..mid]).unwrap();
    bad_files.push(short);
    let not_tar = a.dir.path().join("notes.txt");
    std::fs::write(&not_tar, "not an archive").unwrap();
    bad_files.push(not_tar);
    for bad in &bad_files {
        let out = b.run(&["restore", bad.to_str().unwrap(), "--yes"]);
        assert_eq!(out.code(), 2, "{}: {}", bad.display(), out.stderr());
        assert!(
            out.stderr().contains("backup.invalid") && out.stderr().contains("nothing was changed"),
            "{}",
            out.stderr()
        );
    }
    assert_eq!(std::fs::read(b.state_dir().join("hal0.db")).unwrap(), db_before_now);

    // An archive of a store from a newer hal0 (schema 99).
    let newer = Env::new();
    newer.ok(&["store", "status"]);
    Connection::open(newer.state_dir().join("hal0.db")).unwrap().pragma_update(None, "user_version", 99).unwrap();
    let newer_archive = a.dir.path().join("newer.tar.gz");
    newer.ok(&["backup", newer_archive.to_str().unwrap()]);
    let out = b.run(&["restore", newer_archive.to_str().unwrap(), "--yes"]);
    assert_eq!(out.code(), 1, "{}", out.stderr());
    let err = out.stderr();
    assert!(
        err.contains("backup.newer_schema") && err.contains("schema version 99") && err.contains("upgrade hal0"),
        "{err}"
    );
    assert_eq!(std::fs::read(b.state_dir().join("hal0.db")).unwrap(), db_before_now);

    // Confirmed: b becomes a, and what b had is kept in an archive of its own.
    let applied = b.json(&["restore", archive.to_str().unwrap(), "--yes", "--json"]);
    let previous = applied["previous"].as_str().unwrap_or_else(|| panic!("{applied}")).to_string();
    assert_eq!(files(&b.config_dir()), files(&a.config_dir()));
    let names: String = Connection::open(b.state_dir().join("hal0.db"))
        .unwrap()
        .query_row("SELECT group_concat(name) FROM bridge_clients", [], |r| r.get(0))
        .unwrap();
    assert_eq!(names, "ci");
    // ... and that archive puts b's own state back.
    b.ok(&["restore", &previous, "--yes"]);
    assert_eq!(files(&b.config_dir()), before);
    let names: String = Connection::open(b.state_dir().join("hal0.db"))
        .unwrap()
        .query_row("SELECT group_concat(name) FROM bridge_clients", [], |r| r.get(0))
        .unwrap();
    assert_eq!(names, "laptop");
}

#[test]
fn a_backup_never_replaces_a_file_without_force() {
    let env = Env::new();
    env.bridge_key("ci", &["agents"]);
    let archive = env.dir.path().join("keep.tar.gz");
    std::fs::write(&archive, b"an older archive the operator meant to keep").unwrap();
    let out = env.run(&["backup", archive.to_str().unwrap()]);
    assert_eq!(out.code(), 1, "{}", out.stderr());
    assert!(out.stderr().contains("already exists") && out.stderr().contains("--force"), "{}", out.stderr());
    assert!(out.stderr().contains("[backup.exists]"), "{}", out.stderr());
    assert_eq!(std::fs::read(&archive).unwrap(), b"an older archive the operator meant to keep");
    let left: Vec<_> = std::fs::read_dir(env.dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".keep"))
        .collect();
    assert!(left.is_empty(), "no temp file left: {left:?}");
    // With --force it is replaced by a real archive.
    env.ok(&["backup", archive.to_str().unwrap(), "--force"]);
    assert_ne!(std::fs::read(&archive).unwrap(), b"an older archive the operator meant to keep");
    env.ok(&["restore", archive.to_str().unwrap(), "--yes"]);
}
