//! Where hal0's files live: the config dir (`/etc/hal0`) and the state dir (`/var/lib/hal0`),
//! their overrides and the XDG fallback for non-root users, plus the one atomic,
//! owner-only file writer every other module uses, and the rule that a file root creates
//! belongs to its directory's owner (an operator's `sudo hal0 …` on a packaged install must
//! leave files the daemon, user `hal0`, can still read).

use crate::base::error::{Error, Result};
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
    /// [`Paths::resolve`] from `HAL0_CONFIG_DIR` / `HAL0_STATE_DIR` alone (before, or
    /// without, a parsed command line).
    pub fn from_env() -> Paths {
        Paths::resolve(
            std::env::var_os("HAL0_CONFIG_DIR").map(PathBuf::from),
            std::env::var_os("HAL0_STATE_DIR").map(PathBuf::from),
        )
    }

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

/// Create `dir` (and parents) with mode 0700 when missing. Each directory created is
/// adopted ([`adopt`]) and narrowed to 0700 through a descriptor opened without following a
/// symlink, so one swapped in after the `mkdir` is refused instead of followed.
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
        let fd = rustix::fs::open(
            d,
            rustix::fs::OFlags::RDONLY
                | rustix::fs::OFlags::DIRECTORY
                | rustix::fs::OFlags::NOFOLLOW
                | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .map_err(|e| refusal_or(d, Error::io("fs.write_failed", "open directory", d, e.into())))?;
        if let Some((uid, gid)) = d.parent().and_then(heir) {
            let (u, g) = chown_ids(uid, gid);
            rustix::fs::fchown(&fd, Some(u), Some(g))
                .map_err(|e| Error::io("fs.write_failed", "set the owner of", d, e.into()))?;
        }
        rustix::fs::fchmod(&fd, rustix::fs::Mode::from_raw_mode(0o700))
            .map_err(|e| Error::io("fs.write_failed", "set mode on", d, e.into()))?;
    }
    Ok(())
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
/// any other user. Never follows a symlink: a link swapped in for the file (by the
/// directory's owner, who may rename in it) is itself re-owned, not what it points to.
pub fn adopt(path: &Path) -> std::io::Result<()> {
    let Some((uid, gid)) = path.parent().and_then(heir) else { return Ok(()) };
    let (u, g) = chown_ids(uid, gid);
    rustix::fs::chownat(rustix::fs::CWD, path, Some(u), Some(g), rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
        .map_err(std::io::Error::from)
}

/// [`adopt`] for an open file, before it is renamed into place (so it never appears with
/// the wrong owner).
pub fn adopt_fd(file: &fs::File, dir: &Path) -> std::io::Result<()> {
    let Some((uid, gid)) = heir(dir) else { return Ok(()) };
    let (u, g) = chown_ids(uid, gid);
    // Through the descriptor itself (`AT_EMPTY_PATH`), which also takes an `O_PATH` one.
    rustix::fs::chownat(file, "", Some(u), Some(g), rustix::fs::AtFlags::EMPTY_PATH).map_err(std::io::Error::from)
}

/// The refusal of a symlink where hal0 keeps its own files (`fs.symlink_refused`): the
/// directory's owner (the daemon user, or a child it runs) could plant one to make root
/// read, hand over or overwrite the file it points to.
pub fn symlink_refused(path: &Path) -> Error {
    Error::new(
        "fs.symlink_refused",
        crate::base::error::Kind::Conflict,
        format!(
            "refusing {}: it is a symbolic link, and hal0 never creates symlinks there (it would \
             read, write or hand over the file it points to); remove it and run the command again",
            path.display()
        ),
    )
}

/// The refusal of an existing file that is not one hal0 could have made (`fs.unsafe_file`).
fn unsafe_file(path: &Path, why: &str) -> Error {
    Error::new(
        "fs.unsafe_file",
        crate::base::error::Kind::Conflict,
        format!(
            "refusing {}: {why}, and hal0 only keeps plain files of its own there; remove it and \
             run the command again",
            path.display()
        ),
    )
}

/// `other`, or [`symlink_refused`] when `path` is a symlink (an `O_NOFOLLOW` open of one
/// fails with `ELOOP`, which says too little), or `fs.unsafe_file` for a FIFO, socket or device.
fn refusal_or(path: &Path, other: Error) -> Error {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => symlink_refused(path),
        // A FIFO without a reader fails a non-blocking write open with ENXIO.
        Ok(m) if !m.file_type().is_file() && !m.file_type().is_dir() => unsafe_file(path, "it is not a regular file"),
        _ => other,
    }
}

/// Check an opened file of hal0's own: a regular file with one name, owned by root, this
/// user or the owner of its directory. Anything else (a FIFO, a hard link to another file,
/// a file someone else put there) is refused with `fs.unsafe_file` before it is touched.
pub fn check_own(file: &fs::File, path: &Path) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let m = file.metadata().map_err(|e| Error::io("fs.read_failed", "stat", path, e))?;
    if !m.file_type().is_file() {
        return Err(unsafe_file(path, "it is not a regular file"));
    }
    if m.nlink() > 1 {
        return Err(unsafe_file(
            path,
            &format!("it has {} hard links (it may be another file's second name)", m.nlink()),
        ));
    }
    let dir_owner = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let dir_uid = fs::metadata(dir_owner).map(|d| d.uid()).ok();
    let me = rustix::process::geteuid().as_raw();
    if m.uid() != 0 && m.uid() != me && Some(m.uid()) != dir_uid {
        return Err(unsafe_file(
            path,
            &format!("it belongs to uid {}, neither root nor the owner of its directory", m.uid()),
        ));
    }
    Ok(())
}

/// Open a file of hal0's own with `opts` plus `O_NOFOLLOW | O_NONBLOCK` (a planted FIFO
/// must not hang the open), then [`check_own`] it. A symlink is refused with
/// `fs.symlink_refused`; `Ok(None)` when the file does not exist (and `opts` does not create).
fn open_own(path: &Path, opts: &mut fs::OpenOptions, what: &str, code: &'static str) -> Result<Option<fs::File>> {
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::CLOEXEC;
    let f = match opts.custom_flags(flags.bits() as i32).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(refusal_or(path, Error::io(code, what, path, e))),
    };
    check_own(&f, path)?;
    Ok(Some(f))
}

/// Check a file another program holds open by name (SQLite's store and its `-wal`,
/// `-shm`, `-journal`) as [`check_own`] does, through an `O_PATH | O_NOFOLLOW` descriptor.
/// Only such a descriptor may be opened and closed beside SQLite's: closing any other
/// descriptor of the file drops every POSIX lock this process holds on it, and two
/// connections then write at once (a malformed store). A symlink is refused with
/// `fs.symlink_refused`; `Ok(None)` when the file does not exist. The descriptor serves
/// [`adopt_fd`] and [`narrow_path_fd`], not reads.
pub fn inspect_own(path: &Path) -> Result<Option<fs::File>> {
    let flags = rustix::fs::OFlags::PATH | rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::CLOEXEC;
    let f = match fs::OpenOptions::new().read(true).custom_flags(flags.bits() as i32).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(refusal_or(path, Error::io("fs.read_failed", "open", path, e))),
    };
    let m = f.metadata().map_err(|e| Error::io("fs.read_failed", "stat", path, e))?;
    if m.file_type().is_symlink() {
        return Err(symlink_refused(path));
    }
    check_own(&f, path)?;
    Ok(Some(f))
}

/// Narrow the file behind an [`inspect_own`] descriptor to mode 0600 (`fchmod` takes no
/// `O_PATH` descriptor; its `/proc/self/fd` name reaches the same file, never a link).
pub fn narrow_path_fd(file: &fs::File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let name = format!("/proc/self/fd/{}", file.as_raw_fd());
    rustix::fs::chmod(name.as_str(), rustix::fs::Mode::from_raw_mode(0o600)).map_err(std::io::Error::from)
}

/// Open (creating, mode 0600, owned as `dir`) the lock file `dir/name`, unlocked. A lock
/// file an older hal0 left readable by others is narrowed to 0600. A symlink or any other
/// file hal0 could not have made there is refused ([`check_own`]) and never re-owned.
pub fn open_lock(dir: &Path, name: &str) -> Result<std::fs::File> {
    ensure_dir(dir)?;
    let p = dir.join(name);
    let f = open_own(
        &p,
        fs::OpenOptions::new().create(true).truncate(false).write(true).mode(0o600),
        "open",
        "fs.write_failed",
    )?
    .ok_or_else(|| Error::io("fs.write_failed", "open", &p, std::io::ErrorKind::NotFound.into()))?;
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
    write_atomic_mode(path, contents, 0o600)
}

/// [`write_atomic`] with another mode (only for files that hold no secret).
pub fn write_atomic_mode(path: &Path, contents: &[u8], mode: u32) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    ensure_dir(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let mut rnd = [0u8; 6];
    getrandom::fill(&mut rnd).map_err(|e| Error::internal(format!("no randomness: {e}")))?;
    let tmp = dir.join(format!(".{name}.{}.tmp", hex::encode(rnd)));
    let result = (|| -> std::io::Result<()> {
        let mut f = fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp)?;
        adopt_fd(&f, dir)?;
        if mode != 0o600 {
            f.set_permissions(fs::Permissions::from_mode(mode))?;
        }
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

/// Read a file of hal0's own (in the config or state dir) to a string; `Ok(None)` when it
/// does not exist. Never follows a symlink: one is refused with `fs.symlink_refused`, and a
/// file hal0 could not have made there with `fs.unsafe_file` ([`check_own`]), so root never
/// copies what a planted link points to into a file the daemon user reads.
pub fn read_optional(path: &Path) -> Result<Option<String>> {
    use std::io::Read;
    let Some(mut f) = open_own(path, fs::OpenOptions::new().read(true), "read", "fs.read_failed")? else {
        return Ok(None);
    };
    let mut s = String::new();
    f.read_to_string(&mut s).map_err(|e| Error::io("fs.read_failed", "read", path, e))?;
    Ok(Some(s))
}

/// [`read_optional`] as bytes.
pub fn read_optional_bytes(path: &Path) -> Result<Option<Vec<u8>>> {
    use std::io::Read;
    let Some(mut f) = open_own(path, fs::OpenOptions::new().read(true), "read", "fs.read_failed")? else {
        return Ok(None);
    };
    let mut out = Vec::new();
    f.read_to_end(&mut out).map_err(|e| Error::io("fs.read_failed", "read", path, e))?;
    Ok(Some(out))
}

/// Read a file that is not hal0's own to a string, following a symlink (a Hermes profile's
/// `config.yaml` may be one, by its owner's choice); `Ok(None)` when it does not exist.
pub fn read_optional_following(path: &Path) -> Result<Option<String>> {
    match fs::read_to_string(path) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("fs.read_failed", "read", path, e)),
    }
}

/// Free and total bytes of the file system holding `path`.
pub fn disk_space(path: &Path) -> Option<(u64, u64)> {
    let dir = if path.is_dir() { path } else { path.parent()? };
    let s = rustix::fs::statvfs(dir).ok()?;
    Some((s.f_bavail.saturating_mul(s.f_frsize), s.f_blocks.saturating_mul(s.f_frsize)))
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
    /// A link planted as `nobody` (`ln -s target link`), when root; as another user, planted
    /// as that user (the refusal does not depend on who planted it).
    fn plant(target: &Path, link: &Path) {
        use std::os::unix::process::CommandExt;
        let mut c = std::process::Command::new("ln");
        c.arg("-s").arg(target).arg(link);
        if is_root() {
            c.uid(65534).gid(65534);
        }
        assert!(c.status().unwrap().success(), "cannot plant {}", link.display());
    }

    /// A dir owned by `nobody` (when root) holding hal0's files, and a root file beside it.
    fn nobody_dir() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        fs::set_permissions(d.path(), fs::Permissions::from_mode(0o755)).unwrap();
        let dir = d.path().join("etc");
        fs::create_dir(&dir).unwrap();
        if is_root() {
            std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
        }
        let target = d.path().join("root-file");
        fs::write(&target, "# secret 7f3a9c\n").unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(0o640)).unwrap();
        (d, dir, target)
    }

    fn snapshot(p: &Path) -> (u32, u32, u32, Vec<u8>) {
        use std::os::unix::fs::MetadataExt;
        let m = fs::metadata(p).unwrap();
        (m.uid(), m.gid(), m.mode() & 0o7777, fs::read(p).unwrap())
    }

    /// A planted lock-file link is refused, not opened, chowned or narrowed through
    /// (before: root fchowned the target to the directory's owner and made it 0600).
    #[test]
    fn symlinked_lock_is_refused_and_its_target_untouched() {
        let (_d, dir, target) = nobody_dir();
        plant(&target, &dir.join(".x.lock"));
        let before = snapshot(&target);
        let e = lock_file(&dir, ".x.lock").unwrap_err();
        assert_eq!(e.code, "fs.symlink_refused", "{e}");
        assert!(e.message.contains(".x.lock") && e.message.contains("remove it"), "{e}");
        // A dangling link is not created through either.
        let gone = dir.join("nowhere");
        plant(&gone, &dir.join(".y.lock"));
        assert_eq!(lock_file(&dir, ".y.lock").unwrap_err().code, "fs.symlink_refused");
        assert!(!gone.exists());
        // with_lock takes the same path for a data file's lock.
        let e = with_lock(&dir.join("x"), || Ok(())).unwrap_err();
        assert_eq!(e.code, "fs.symlink_refused");
        assert_eq!(snapshot(&target), before);
    }

    /// A planted data-file link is refused by the read of a read-modify-write, so root never
    /// copies what it points to into hal0's file; a Hermes file may still be followed.
    #[test]
    fn symlinked_data_file_is_not_read() {
        let (_d, dir, target) = nobody_dir();
        let link = dir.join("api.env");
        plant(&target, &link);
        let before = snapshot(&target);
        assert_eq!(read_optional(&link).unwrap_err().code, "fs.symlink_refused");
        assert_eq!(read_optional_bytes(&link).unwrap_err().code, "fs.symlink_refused");
        assert_eq!(inspect_own(&link).unwrap_err().code, "fs.symlink_refused");
        let e = crate::base::envfile::set_vars(&link, &[("A", "1")]).unwrap_err();
        assert_eq!(e.code, "fs.symlink_refused");
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(snapshot(&target), before);
        assert_eq!(read_optional_following(&link).unwrap().unwrap(), "# secret 7f3a9c\n");
        assert_eq!(read_optional(&dir.join("missing")).unwrap(), None);
    }

    /// A FIFO (which would hang a plain open), a second name of another file, and a file of
    /// a third user are refused with `fs.unsafe_file`, never re-owned or narrowed.
    #[test]
    fn unsafe_existing_files_are_refused() {
        use std::os::unix::fs::MetadataExt;
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join(".fifo.lock");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        assert_eq!(lock_file(d.path(), ".fifo.lock").unwrap_err().code, "fs.unsafe_file");
        assert_eq!(read_optional(&fifo).unwrap_err().code, "fs.unsafe_file");
        assert_eq!(inspect_own(&fifo).unwrap_err().code, "fs.unsafe_file");

        let other = d.path().join("other");
        fs::write(&other, "x").unwrap();
        fs::set_permissions(&other, fs::Permissions::from_mode(0o644)).unwrap();
        fs::hard_link(&other, d.path().join(".hard.lock")).unwrap();
        let e = lock_file(d.path(), ".hard.lock").unwrap_err();
        assert_eq!(e.code, "fs.unsafe_file");
        assert!(e.message.contains("hard links"), "{e}");
        assert_eq!(fs::metadata(&other).unwrap().mode() & 0o777, 0o644, "not narrowed");
        assert_eq!(read_optional(&other).unwrap_err().code, "fs.unsafe_file");
        assert_eq!(inspect_own(&other).unwrap_err().code, "fs.unsafe_file");

        if !is_root() {
            eprintln!("not root: a file of a third user cannot be made");
            return;
        }
        let third = d.path().join(".third.lock");
        fs::write(&third, "").unwrap();
        std::os::unix::fs::chown(&third, Some(4242), Some(4242)).unwrap();
        let e = lock_file(d.path(), ".third.lock").unwrap_err();
        assert_eq!(e.code, "fs.unsafe_file");
        assert!(e.message.contains("uid 4242"), "{e}");
        assert_eq!(fs::metadata(&third).unwrap().uid(), 4242);
    }

    /// `adopt` re-owns a link swapped in for a file, never what it points to.
    #[test]
    fn adopt_does_not_follow_a_symlink() {
        use std::os::unix::fs::MetadataExt;
        if !is_root() {
            eprintln!("not root: chown cannot be exercised");
            return;
        }
        let (_d, dir, target) = nobody_dir();
        let link = dir.join("hal0.db-wal");
        plant(&target, &link);
        let before = snapshot(&target);
        adopt(&link).unwrap();
        assert_eq!(snapshot(&target), before);
        assert_eq!(fs::symlink_metadata(&link).unwrap().uid(), 65534);
    }
}
