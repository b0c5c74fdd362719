//! Where hal0's files live: the config dir (`/etc/hal0`) and the state dir (`/var/lib/hal0`),
//! their overrides and the XDG fallback for non-root users, plus the one atomic,
//! owner-only file writer every other module uses, and the rule that a file root creates
//! belongs to its directory's owner (an operator's `sudo hal0 …` on a packaged install must
//! leave files the daemon, user `hal0`, can still read).

use crate::error::{Error, Result};
use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

pub const DEFAULT_CONFIG_DIR: &str = "/etc/hal0";
pub const DEFAULT_STATE_DIR: &str = "/var/lib/hal0";

/// Where this invocation reads and writes, and how each dir was chosen.
#[derive(Debug, Clone)]
pub struct Paths {
    pub config_dir: PathBuf,
    pub state_dir: PathBuf,
    /// How each dir was chosen: "flag or env", "default", or "fallback (…)".
    pub config_source: String,
    pub state_source: String,
}

impl Paths {
    /// Resolve from explicit values (flag or env, already merged by clap) or the defaults,
    /// falling back to XDG dirs when not root and the defaults are not writable.
    pub fn resolve(config: Option<PathBuf>, state: Option<PathBuf>) -> Paths {
        let is_root = is_root();
        let (config_dir, config_source) =
            pick(config, DEFAULT_CONFIG_DIR, is_root, || xdg("XDG_CONFIG_HOME", ".config"));
        let (state_dir, state_source) =
            pick(state, DEFAULT_STATE_DIR, is_root, || xdg("XDG_STATE_HOME", ".local/state"));
        Paths { config_dir, state_dir, config_source, state_source }
    }

    pub fn hal0_toml(&self) -> PathBuf {
        self.config_dir.join("hal0.toml")
    }
    pub fn api_env(&self) -> PathBuf {
        self.config_dir.join("api.env")
    }
    pub fn db(&self) -> PathBuf {
        self.state_dir.join("hal0.db")
    }

    /// A one-line account of the dirs, for `--help` and doctor.
    pub fn describe(&self) -> String {
        format!(
            "config dir: {} ({})\nstate dir:  {} ({})",
            self.config_dir.display(),
            self.config_source,
            self.state_dir.display(),
            self.state_source
        )
    }
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

fn xdg(var: &str, home_rel: &str) -> PathBuf {
    let base = std::env::var_os(var).filter(|v| !v.is_empty()).map(PathBuf::from).unwrap_or_else(|| {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| "/tmp".into());
        home.join(home_rel)
    });
    base.join("hal0")
}

fn pick(
    explicit: Option<PathBuf>,
    default: &str,
    is_root: bool,
    fallback: impl FnOnce() -> PathBuf,
) -> (PathBuf, String) {
    if let Some(p) = explicit {
        return (p, "flag or env".into());
    }
    let d = PathBuf::from(default);
    if is_root || writable_or_creatable(&d) {
        return (d, "default".into());
    }
    (fallback(), format!("fallback: {default} is not writable by this user"))
}

fn writable_or_creatable(p: &Path) -> bool {
    let probe = if p.exists() { p } else { p.parent().unwrap_or(Path::new("/")) };
    fs::metadata(probe)
        .map(|m| {
            // Not root here: writable if the owner is us and the owner-write bit is set, or
            // the other-write bit is set. A coarse check; the real write reports exactly.
            use std::os::unix::fs::MetadataExt;
            let me = rustix::process::geteuid().as_raw();
            (m.uid() == me && m.mode() & 0o200 != 0) || m.mode() & 0o002 != 0
        })
        .unwrap_or(false)
}

/// Create `dir` (and parents) with mode 0700 when missing.
pub fn ensure_dir(dir: &Path) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    // Create the missing ancestors one by one, each adopted by its parent's owner.
    let mut missing = vec![dir];
    while let Some(parent) = missing.last().and_then(|d| d.parent()).filter(|p| !p.as_os_str().is_empty()) {
        if parent.is_dir() {
            break;
        }
        missing.push(parent);
    }
    for d in missing.into_iter().rev() {
        match fs::DirBuilder::new().mode(0o700).create(d) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && d.is_dir() => continue,
            Err(e) => return Err(Error::io("fs.write_failed", "create directory", d, e)),
        }
        adopt(d).map_err(|e| Error::io("fs.write_failed", "set the owner of", d, e))?;
    }
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
        .map_err(|e| Error::io("fs.write_failed", "set mode on", dir, e))
}

/// The owner a file created in `dir` should have: `Some((uid, gid))` of `dir` when this
/// process is root and `dir` belongs to someone else (root's files would otherwise be
/// root's, unreadable to a daemon running as the directory's owner); `None` otherwise.
fn heir(dir: &Path) -> Option<(u32, u32)> {
    use std::os::unix::fs::MetadataExt;
    if !is_root() {
        return None;
    }
    let m = fs::metadata(dir).ok()?;
    (m.uid() != 0 || m.gid() != 0).then(|| (m.uid(), m.gid()))
}

fn chown_ids(uid: u32, gid: u32) -> (rustix::fs::Uid, rustix::fs::Gid) {
    (rustix::fs::Uid::from_raw(uid), rustix::fs::Gid::from_raw(gid))
}

/// Give `path` to the owner of its directory when root created it ([`heir`]); a no-op for
/// any other user. Every file hal0 creates passes through here.
pub fn adopt(path: &Path) -> std::io::Result<()> {
    let Some((uid, gid)) = path.parent().and_then(heir) else { return Ok(()) };
    let (u, g) = chown_ids(uid, gid);
    rustix::fs::chown(path, Some(u), Some(g)).map_err(std::io::Error::from)
}

/// [`adopt`] for an open file, before it is renamed into place (so it never appears with
/// the wrong owner).
pub fn adopt_fd(file: &fs::File, dir: &Path) -> std::io::Result<()> {
    let Some((uid, gid)) = heir(dir) else { return Ok(()) };
    let (u, g) = chown_ids(uid, gid);
    rustix::fs::fchown(file, Some(u), Some(g)).map_err(std::io::Error::from)
}

/// Open (creating, mode 0600, owned as `dir`) the lock file `dir/name`, unlocked. A lock
/// file an older hal0 left readable by others is narrowed to 0600.
pub fn open_lock(dir: &Path, name: &str) -> Result<std::fs::File> {
    ensure_dir(dir)?;
    let p = dir.join(name);
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(&p)
        .map_err(|e| Error::io("fs.write_failed", "open", &p, e))?;
    adopt_fd(&f, dir).map_err(|e| Error::io("fs.write_failed", "set the owner of", &p, e))?;
    if f.metadata().is_ok_and(|m| m.permissions().mode() & 0o077 != 0) {
        f.set_permissions(fs::Permissions::from_mode(0o600))
            .map_err(|e| Error::io("fs.write_failed", "set mode on", &p, e))?;
    }
    Ok(f)
}

/// [`open_lock`] and hold an exclusive lock on it until the returned file is dropped: one
/// read-modify-write at a time across processes.
pub fn lock_file(dir: &Path, name: &str) -> Result<std::fs::File> {
    let f = open_lock(dir, name)?;
    f.lock().map_err(|e| Error::io("fs.write_failed", "lock", &dir.join(name), e))?;
    Ok(f)
}

/// Run `f` holding the exclusive lock of the file at `path`: the lock file `.<name>.lock`
/// beside it (a leading dot of the name is not doubled: `.env` locks `.env.lock`). Every
/// read-modify-write of a file goes through here, so two writers (the CLI and the daemon,
/// or two threads) never both read the old text and one silently drops the other's change.
/// Re-entrant within a thread: a nested call for the same path runs `f` at once.
///
/// No directory is created for the lock: when the file's directory does not exist there is
/// no file to race on, and `f` runs unlocked (an edit that finds nothing to change then
/// leaves nothing behind, e.g. in a removed Hermes profile). A writer that always writes
/// creates the directory first ([`ensure_dir`]), so its first write is locked too.
pub fn with_lock<T>(path: &Path, f: impl FnOnce() -> Result<T>) -> Result<T> {
    thread_local! {
        static HELD: std::cell::RefCell<Vec<PathBuf>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    if HELD.with(|h| h.borrow().iter().any(|p| p == path)) {
        return f();
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return f();
    }
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let _lock = lock_file(dir, &format!(".{}.lock", name.trim_start_matches('.')))?;
    /// Pops the path again however `f` ends (return or unwind).
    struct Held;
    impl Drop for Held {
        fn drop(&mut self) {
            HELD.with(|h| h.borrow_mut().pop());
        }
    }
    HELD.with(|h| h.borrow_mut().push(path.to_path_buf()));
    let _held = Held;
    f()
}

/// Write `contents` to `path` atomically (temp file in the same dir, fsync, rename) with
/// mode 0600. A failure leaves the old file untouched and no temp file behind.
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    ensure_dir(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let mut rnd = [0u8; 6];
    getrandom::fill(&mut rnd).map_err(|e| Error::internal(format!("no randomness: {e}")))?;
    let tmp = dir.join(format!(".{name}.{}.tmp", hex::encode(rnd)));
    let result = (|| -> std::io::Result<()> {
        let mut f = fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp)?;
        adopt_fd(&f, dir)?;
        f.write_all(contents)?;
        f.sync_all()?;
        fs::rename(&tmp, path)?;
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(Error::io("fs.write_failed", "write", path, e));
    }
    Ok(())
}

/// Read a file to a string; `Ok(None)` when it does not exist.
pub fn read_optional(path: &Path) -> Result<Option<String>> {
    match fs::read_to_string(path) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("fs.read_failed", "read", path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_is_0600_and_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sub/x.toml");
        write_atomic(&p, b"a = 1\n").unwrap();
        write_atomic(&p, b"a = 2\n").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "a = 2\n");
        assert_eq!(fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(fs::metadata(p.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
        let names: Vec<_> = fs::read_dir(p.parent().unwrap()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    /// Root writing into a directory another user owns (`sudo hal0 …` on a packaged
    /// install) leaves every file and directory it creates to that user. Needs root to
    /// chown: as another user this test has nothing to check and says so.
    #[test]
    fn what_root_creates_belongs_to_the_directory_owner() {
        use std::os::unix::fs::MetadataExt;
        if !rustix::process::geteuid().is_root() {
            eprintln!("not root: chown cannot be exercised");
            return;
        }
        let d = tempfile::tempdir().unwrap();
        let etc = d.path().join("etc");
        fs::create_dir(&etc).unwrap();
        rustix::fs::chown(&etc, Some(rustix::fs::Uid::from_raw(4242)), Some(rustix::fs::Gid::from_raw(4343))).unwrap();
        write_atomic(&etc.join("servers/files.toml"), b"x = 1\n").unwrap();
        let _lock = lock_file(&etc, "x.lock").unwrap();
        for p in [etc.join("servers"), etc.join("servers/files.toml"), etc.join("x.lock")] {
            let m = fs::metadata(&p).unwrap();
            assert_eq!((m.uid(), m.gid()), (4242, 4343), "{}", p.display());
        }
        // A root-owned directory keeps root's files root's.
        write_atomic(&d.path().join("root.toml"), b"").unwrap();
        assert_eq!(fs::metadata(d.path().join("root.toml")).unwrap().uid(), 0);
    }

    #[test]
    fn lock_files_are_0600() {
        let d = tempfile::tempdir().unwrap();
        // Under the usual umask (022) a plain create would be 0644.
        let f = lock_file(&d.path().join("state"), "x.lock").unwrap();
        let p = d.path().join("state/x.lock");
        assert_eq!(fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
        drop(f);
        // One an older hal0 created world-readable is narrowed when next taken.
        fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).unwrap();
        let _f = lock_file(&d.path().join("state"), "x.lock").unwrap();
        assert_eq!(fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
    }

    #[test]
    fn failed_write_keeps_old_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x");
        write_atomic(&p, b"old").unwrap();
        // A directory in the way of the rename makes the write fail.
        let blocked = d.path().join("blocked");
        fs::create_dir(&blocked).unwrap();
        fs::write(blocked.join("child"), b"").unwrap();
        assert!(write_atomic(&blocked, b"new").is_err());
        assert_eq!(fs::read(&p).unwrap(), b"old");
        let temps = fs::read_dir(d.path())
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".tmp"))
            .count();
        assert_eq!(temps, 0);
    }
}
