//! The Debian package, installed with `dpkg -i` into a throwaway Debian root (a copy of
//! `.tools/debroot`, made by `tests/external/package.sh` with debootstrap): the files,
//! owners and modes it leaves, user `hal0`, the conffile; the CLI run as root there leaves
//! files the daemon can use; the unit's `ExecStart` run as user `hal0` serves the keys the
//! CLI made; doctor is all ok; a port below 1024 gets the unit's drop-in; an upgrade keeps
//! the operator's hal0.toml and every row; removing the package keeps the data.
//!
//! Needs root (chroot), the package and the root: without them the test says what to run
//! and passes, unless `HAL0_REQUIRE_EXTERNAL=1` (CI), where it fails.

use crate::support::fake_hermes::FakeHermes;
use crate::support::*;
use serde_json::Value;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The package and the Debian root, or `None` (skipped) when this machine lacks them.
fn prerequisites() -> Option<(PathBuf, PathBuf)> {
    let deb = std::env::var_os("HAL0_TEST_DEB").map(PathBuf::from).or_else(|| {
        let dir = repo().join("target/debian");
        let mut debs: Vec<PathBuf> = std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("hal0_")))
            .collect();
        debs.sort_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
        debs.pop()
    });
    let root = repo().join(".tools/debroot");
    let is_root = std::fs::metadata("/proc/self").map(|m| m.uid() == 0).unwrap_or(false);
    let missing = match (&deb, root.join(".complete").exists(), is_root) {
        (_, _, false) => Some("root (dpkg and chroot)"),
        (None, _, _) => Some("the package (target/debian/hal0_*.deb)"),
        (_, false, _) => Some("the Debian root (.tools/debroot)"),
        _ => None,
    };
    if let Some(what) = missing {
        missing_external(what, "run tests/external/package.sh as root");
        return None;
    }
    Some((deb.unwrap(), root))
}

/// A copy of the Debian root with `/proc` mounted (systemd-tmpfiles wants it), unmounted
/// and removed on drop.
struct Root {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Root {
    fn copy_of(base: &Path) -> Root {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("root");
        let st = Command::new("cp").arg("-a").arg(base).arg(&path).status().unwrap();
        assert!(st.success(), "cannot copy {}", base.display());
        let st = Command::new("mount").args(["-t", "proc", "proc"]).arg(path.join("proc")).status().unwrap();
        assert!(st.success(), "cannot mount /proc in the root");
        Root { _dir: dir, path }
    }

    fn at(&self, p: &str) -> PathBuf {
        self.path.join(p.trim_start_matches('/'))
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new("chroot");
        c.arg(&self.path).args(args).env_clear().env("PATH", PATH).env("LANG", "C.UTF-8").stdin(Stdio::null());
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    /// Run as root in the root; stdout, failing on a non-zero exit.
    fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert!(
            o.status.success(),
            "{args:?} failed ({:?}):\n{}\n{}",
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    fn hal0_json(&self, args: &[&str]) -> Value {
        let mut all = vec!["/usr/bin/hal0"];
        all.extend_from_slice(args);
        let out = self.ok(&all);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"))
    }

    /// uid and gid of a user of this root.
    fn user(&self, name: &str) -> Option<(u32, u32, String, String)> {
        let passwd = std::fs::read_to_string(self.at("/etc/passwd")).unwrap();
        passwd.lines().find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f[0] == name).then(|| (f[2].parse().unwrap(), f[3].parse().unwrap(), f[5].to_string(), f[6].to_string()))
        })
    }

    fn install(&self, deb: &Path) {
        let name = deb.file_name().unwrap().to_string_lossy().into_owned();
        std::fs::copy(deb, self.at(&format!("/tmp/{name}"))).unwrap();
        self.ok(&["dpkg", "-i", &format!("/tmp/{name}")]);
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(self.path.join("proc")).status();
    }
}

/// The daemon started from the unit's command; killed however the test ends (it holds the
/// test's inherited file descriptors, a cargo lock among them).
struct Daemon(Option<std::process::Child>);

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn owner_mode(p: &Path) -> (u32, u32, u32) {
    let m = std::fs::symlink_metadata(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    (m.uid(), m.gid(), m.permissions().mode() & 0o7777)
}

/// Every entry under `dir` whose owner is not `uid`.
fn not_owned_by(dir: &Path, uid: u32) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let m = e.path().symlink_metadata().unwrap();
            if m.uid() != uid {
                out.push(e.path());
            }
            if m.is_dir() {
                todo.push(e.path());
            }
        }
    }
    out
}

/// The same package with another version (an upgrade of it), made with dpkg-deb.
fn bumped(deb: &Path, work: &Path, version: &str) -> PathBuf {
    let tree = work.join("tree");
    let st = Command::new("dpkg-deb").arg("-R").arg(deb).arg(&tree).status().unwrap();
    assert!(st.success());
    let control = tree.join("DEBIAN/control");
    let text = std::fs::read_to_string(&control).unwrap();
    let text: String = text
        .lines()
        .map(|l| if l.starts_with("Version:") { format!("Version: {version}\n") } else { format!("{l}\n") })
        .collect();
    std::fs::write(&control, text).unwrap();
    let out = work.join(format!("hal0_{version}_amd64.deb"));
    let st = Command::new("dpkg-deb")
        .args(["-Zgzip", "-z1", "-b"])
        .arg(&tree)
        .arg(&out)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
    out
}

/// `[Service]` `Environment=` and `ExecStart=` of the installed unit: the daemon's command.
fn exec_start(unit: &str) -> (Vec<(String, String)>, Vec<String>) {
    let mut env = Vec::new();
    let mut exec = Vec::new();
    for line in unit.lines().map(str::trim) {
        if let Some(kv) = line.strip_prefix("Environment=") {
            let (k, v) = kv.split_once('=').unwrap();
            env.push((k.to_string(), v.to_string()));
        } else if let Some(cmd) = line.strip_prefix("ExecStart=") {
            exec = cmd.split_whitespace().map(str::to_string).collect();
        }
    }
    (env, exec)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_package_installs_a_service_that_runs_as_hal0_and_keeps_its_data() {
    let Some((deb, base)) = prerequisites() else { return };
    let root = Root::copy_of(&base);
    root.install(&deb);

    // What the package put where.
    let (uid, gid, home, shell) = root.user("hal0").expect("user hal0");
    assert!(uid < 1000 && uid != 0, "a system user: {uid}");
    assert_eq!((home.as_str(), shell.as_str()), ("/var/lib/hal0", "/usr/sbin/nologin"));
    assert_eq!(owner_mode(&root.at("/usr/bin/hal0")), (0, 0, 0o755));
    assert_eq!(owner_mode(&root.at("/etc/hal0")), (uid, gid, 0o700));
    assert_eq!(owner_mode(&root.at("/etc/hal0/hal0.toml")), (uid, gid, 0o600));
    assert_eq!(owner_mode(&root.at("/var/lib/hal0")), (uid, gid, 0o700));
    for p in [
        "/usr/share/man/man1/hal0.1.gz",
        "/usr/share/man/man1/hal0-backup.1.gz",
        "/usr/share/bash-completion/completions/hal0",
        "/usr/share/zsh/vendor-completions/_hal0",
        "/usr/share/fish/vendor_completions.d/hal0.fish",
        "/usr/lib/sysusers.d/hal0.conf",
        "/usr/lib/tmpfiles.d/hal0.conf",
    ] {
        assert!(root.at(p).is_file(), "{p} missing");
    }
    let conffiles = root.ok(&["dpkg-query", "-W", "-f=${Conffiles}", "hal0"]);
    assert!(conffiles.contains("/etc/hal0/hal0.toml"), "{conffiles}");
    let unit = std::fs::read_to_string(root.at("/usr/lib/systemd/system/hal0.service")).unwrap();
    for line in [
        "Type=notify",
        "User=hal0",
        "ProtectSystem=strict",
        "ReadWritePaths=/etc/hal0 /var/lib/hal0",
        "NoNewPrivileges=yes",
        "PrivateTmp=yes",
        "CapabilityBoundingSet=",
        "AmbientCapabilities=",
    ] {
        assert!(unit.lines().any(|l| l == line), "the unit lacks {line}");
    }
    // Enabled at install (systemd is not running in the root, so nothing started).
    let wants = root.at("/etc/systemd/system/multi-user.target.wants/hal0.service");
    let target = std::fs::read_link(&wants).unwrap();
    assert!(root.at(target.to_str().unwrap()).is_file(), "the wants link points at {}", target.display());

    // The CLI as root (sudo hal0 …) on the packaged install: the files it makes are hal0's.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    root.ok(&["/usr/bin/hal0", "config", "set", "network.bind", &format!("127.0.0.1:{port}")]);
    let admin = root.hal0_json(&["auth", "rotate", "admin", "--yes", "--json"])["key"].as_str().unwrap().to_string();
    let bridge = root.hal0_json(&["bridge", "add", "ci", "--json"])["key"].as_str().unwrap().to_string();
    for dir in ["/etc/hal0", "/var/lib/hal0"] {
        let strays = not_owned_by(&root.at(dir), uid);
        assert!(strays.is_empty(), "root's files under {dir}: {strays:?}");
    }
    assert_eq!(owner_mode(&root.at("/var/lib/hal0/hal0.db")), (uid, gid, 0o600));

    // A port below 1024 gets the unit's drop-in with CAP_NET_BIND_SERVICE, and loses it again.
    let said = root.ok(&["/usr/bin/hal0", "config", "set", "network.bind", "127.0.0.1:443"]);
    let dropin = root.at("/etc/systemd/system/hal0.service.d/10-low-port.conf");
    assert!(said.contains("CAP_NET_BIND_SERVICE") && said.contains("daemon-reload"), "{said}");
    let text = std::fs::read_to_string(&dropin).unwrap();
    assert!(text.contains("CapabilityBoundingSet=CAP_NET_BIND_SERVICE\nAmbientCapabilities=CAP_NET_BIND_SERVICE"));
    assert_eq!(owner_mode(&dropin), (0, 0, 0o644));
    root.ok(&["/usr/bin/hal0", "config", "set", "network.bind", &format!("127.0.0.1:{port}")]);
    assert!(!dropin.exists());

    // A Hermes on loopback (the fake) whose home hal0 wires as an operator would after
    // installing: `hal0 agent reprovision hermes`.
    let hermes = FakeHermes::start_default().await;
    std::fs::create_dir_all(root.at("/srv/hermes")).unwrap();
    std::fs::write(root.at("/srv/hermes/config.yaml"), hermes.profile_yaml()).unwrap();
    root.ok(&["/usr/bin/hal0", "config", "set", "hermes.home", "/srv/hermes"]);
    root.ok(&["/usr/bin/hal0", "agent", "reprovision", "hermes"]);

    // The unit's ExecStart, run as user hal0 with the unit's environment.
    let (env, exec) = exec_start(&unit);
    assert_eq!(exec, ["/usr/bin/hal0", "serve"]);
    let mut daemon = Command::new("chroot");
    daemon.arg("--userspec=hal0:hal0").arg(&root.path).arg("env").arg("-i").arg(format!("PATH={PATH}"));
    for (k, v) in &env {
        daemon.arg(format!("{k}={v}"));
    }
    let mut daemon = Daemon(Some(daemon.args(&exec).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap()));
    let base_url = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let up =
        eventually(Duration::from_secs(30), async || http.get(format!("{base_url}/api/health")).send().await.is_ok())
            .await;
    if !up {
        let mut child = daemon.0.take().unwrap();
        let _ = child.kill();
        let out = child.wait_with_output().unwrap();
        panic!("the daemon did not start as hal0: {}", String::from_utf8_lossy(&out.stderr));
    }
    let r = http.get(format!("{base_url}/api/bridge/clients")).bearer_auth(&admin).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let r = http.get(format!("{base_url}/api/bridge/me")).bearer_auth(&bridge).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let me: Value = r.json().await.unwrap();
    assert_eq!(me["client"], "ci", "{me}");

    let doctor = root.hal0_json(&["doctor", "--json"]);
    for row in doctor["rows"].as_array().unwrap() {
        assert_eq!(row["status"], "ok", "after install: {row}");
    }

    // An upgrade (the same package, a later version) keeps the operator's hal0.toml, the
    // keys and every row, and leaves the files to hal0.
    drop(daemon);
    let toml_before = std::fs::read(root.at("/etc/hal0/hal0.toml")).unwrap();
    let keys_before = std::fs::read(root.at("/etc/hal0/api.env")).unwrap();
    let db_rows = |root: &Root| {
        let c = rusqlite::Connection::open(root.at("/var/lib/hal0/hal0.db")).unwrap();
        let n: i64 = c.query_row("SELECT count(*) FROM bridge_clients", [], |r| r.get(0)).unwrap();
        let a: i64 = c.query_row("SELECT count(*) FROM audit_log", [], |r| r.get(0)).unwrap();
        (n, a)
    };
    let rows_before = db_rows(&root);
    let work = tempfile::tempdir().unwrap();
    let newer = bumped(&deb, work.path(), "99.0.0-1");
    root.install(&newer);
    assert!(root.ok(&["dpkg-query", "-W", "-f=${Version}", "hal0"]).contains("99.0.0-1"));
    assert_eq!(std::fs::read(root.at("/etc/hal0/hal0.toml")).unwrap(), toml_before, "the conffile was overwritten");
    assert_eq!(owner_mode(&root.at("/etc/hal0/hal0.toml")), (uid, gid, 0o600));
    assert_eq!(db_rows(&root), rows_before);
    assert_eq!(std::fs::read(root.at("/etc/hal0/api.env")).unwrap(), keys_before);

    // Removing the package (not purging) keeps the config, the keys and the store.
    root.ok(&["dpkg", "-r", "hal0"]);
    assert!(!root.at("/usr/bin/hal0").exists());
    assert!(root.at("/etc/hal0/api.env").exists() && root.at("/etc/hal0/hal0.toml").exists());
    assert_eq!(db_rows(&root), rows_before);
}
