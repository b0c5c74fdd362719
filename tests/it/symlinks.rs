//! Symlinks planted in hal0's dirs (issue 32, item 2): the daemon user owns the config and
//! state dirs, so it can put a link where hal0 keeps a lock or data file. A later
//! `sudo hal0 …` must refuse it (`fs.symlink_refused`, naming the file) and leave the file
//! it points to — root's — with its owner, mode and content, and copy none of that content
//! into a file of hal0's. The link is planted as `nobody` in dirs `nobody` owns (as the
//! packaged `/etc/hal0` is `hal0`'s); the commands run as root. Needs root: as another user
//! there is nothing to escalate and the tests say so.

use crate::support::Env;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

const NOBODY: u32 = 65534;
const SECRET: &str = "# root-only secret 7f3a9c\n";

/// An install whose config and state dirs belong to `nobody`, and a root file (mode 0640)
/// beside them for links to point at.
struct Planted {
    env: Env,
    target: PathBuf,
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

fn setup() -> Planted {
    let env = Env::new();
    // nobody must reach its dirs inside the (root's, 0700) temp dir.
    std::fs::set_permissions(env.dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    for d in [env.config_dir(), env.state_dir()] {
        std::fs::create_dir(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&d, Some(NOBODY), Some(NOBODY)).unwrap();
    }
    let target = env.dir.path().join("root-secret");
    std::fs::write(&target, SECRET).unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
    Planted { env, target }
}

/// `ln -s target link` as nobody.
fn plant(target: &Path, link: &Path) {
    let st = std::process::Command::new("ln").arg("-s").arg(target).arg(link).uid(NOBODY).gid(NOBODY).status().unwrap();
    assert!(st.success(), "nobody could not plant {}", link.display());
    assert!(std::fs::symlink_metadata(link).unwrap().file_type().is_symlink());
}

/// The owner, mode and bytes of a file.
fn snapshot(p: &Path) -> (u32, u32, u32, Vec<u8>) {
    let m = std::fs::metadata(p).unwrap();
    (m.uid(), m.gid(), m.mode() & 0o7777, std::fs::read(p).unwrap())
}

/// Every regular file under `dir`, recursively.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let t = e.file_type().unwrap();
        if t.is_dir() {
            out.extend(files(&e.path()));
        } else if t.is_file() {
            out.push(e.path());
        }
    }
    out
}

/// Plant `name` in the config dir, run `args` as root, and check the refusal and that the
/// target is untouched and its content copied nowhere.
fn refused(name: &str, args: &[&str]) {
    let t = setup();
    let link = t.env.config_dir().join(name);
    plant(&t.target, &link);
    let before = snapshot(&t.target);
    let out = t.env.run(args);
    let err = out.stderr();
    assert_ne!(out.code(), 0, "hal0 {args:?} with {name} planted succeeded: {}", out.stdout());
    assert!(err.contains("[fs.symlink_refused]"), "{name}: {err}");
    assert!(err.contains(&link.display().to_string()), "the error names the file: {err}");
    assert!(err.contains("remove it"), "the error says what to do: {err}");
    assert_eq!(snapshot(&t.target), before, "{name}: the root file kept its owner, mode and content");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link is left for the operator");
    for f in files(&t.env.config_dir()).into_iter().chain(files(&t.env.state_dir())) {
        let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
        assert!(!text.contains("7f3a9c"), "{name}: the root file's content landed in {}", f.display());
    }
}

#[test]
fn symlinked_api_env_lock_is_refused_by_auth_rotate() {
    if !is_root() {
        eprintln!("not root: no escalation through a planted link to check");
        return;
    }
    refused(".api.env.lock", &["auth", "rotate", "admin"]);
}

#[test]
fn symlinked_api_env_is_refused_by_auth_rotate() {
    if !is_root() {
        eprintln!("not root: no escalation through a planted link to check");
        return;
    }
    refused("api.env", &["auth", "rotate", "admin"]);
}

#[test]
fn symlinked_hal0_toml_lock_is_refused_by_config_set() {
    if !is_root() {
        eprintln!("not root: no escalation through a planted link to check");
        return;
    }
    refused(".hal0.toml.lock", &["config", "set", "network.bind", "127.0.0.1:9999"]);
}

#[test]
fn symlinked_hal0_toml_is_refused_by_config_set() {
    if !is_root() {
        eprintln!("not root: no escalation through a planted link to check");
        return;
    }
    refused("hal0.toml", &["config", "set", "network.bind", "127.0.0.1:9999"]);
}

#[test]
fn symlinked_hal0_toml_is_refused_by_bridge_add() {
    if !is_root() {
        eprintln!("not root: no escalation through a planted link to check");
        return;
    }
    refused("hal0.toml", &["bridge", "add", "w1"]);
}

/// The store: `hal0.db` planted as a link to a root SQLite database is refused by
/// `bridge add` (before, root migrated that database and narrowed it to 0600), and a
/// planted `hal0.db-wal` or `-shm` is refused rather than handed to the daemon user.
#[test]
fn symlinked_store_files_are_refused_by_bridge_add() {
    if !is_root() {
        eprintln!("not root: no escalation through a planted link to check");
        return;
    }
    for name in ["hal0.db", "hal0.db-wal", "hal0.db-shm"] {
        let t = setup();
        if name != "hal0.db" {
            // An existing store (the daemon's), so only the side file is planted.
            assert_eq!(t.env.run(&["bridge", "add", "w0"]).code(), 0);
        }
        // A root database for the link to point at.
        std::fs::remove_file(&t.target).unwrap();
        {
            let c = rusqlite::Connection::open(&t.target).unwrap();
            c.execute_batch("CREATE TABLE secret(x); INSERT INTO secret VALUES ('7f3a9c');").unwrap();
        }
        std::fs::set_permissions(&t.target, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = t.env.state_dir().join(name);
        // The dir's owner may replace a side file a run left behind.
        let _ = std::fs::remove_file(&link);
        plant(&t.target, &link);
        let before = snapshot(&t.target);
        let out = t.env.run(&["bridge", "add", "w1"]);
        let err = out.stderr();
        assert_ne!(out.code(), 0, "bridge add with {name} planted succeeded");
        assert!(err.contains("[fs.symlink_refused]") && err.contains(name), "{name}: {err}");
        assert_eq!(snapshot(&t.target), before, "{name}: the root database kept its owner, mode and content");
    }
}
