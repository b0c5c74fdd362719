//! The SQLite store `hal0.db`: opening (WAL, busy timeout, foreign keys, incremental
//! vacuum, an optional size cap), versioned migrations, and a small connection pool shared
//! by the CLI and the daemon.

pub(crate) mod backup;
pub mod checkpoint;
pub mod migrations;
pub mod vacuum;

use crate::base::error::{Error, Result};
use crate::base::paths::ensure_dir;
use rusqlite::Connection;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A handle on `hal0.db`. Cheap to clone; connections are pooled.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    pool: Mutex<Vec<Connection>>,
    /// State a domain keeps beside this store, one value per type (the memory engine's
    /// search index): see [`Store::shared`].
    shared: Mutex<std::collections::HashMap<std::any::TypeId, Arc<dyn std::any::Any + Send + Sync>>>,
    /// The size cap in bytes (`[store].max_size_mb`; 0: none), applied to every connection.
    max_bytes: std::sync::atomic::AtomicU64,
    /// Runs the WAL checkpoints in a thread of its own (see [`checkpoint`]).
    checkpointer: Arc<checkpoint::Checkpointer>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.checkpointer.close();
    }
}

/// Connections kept for reuse: at least as many as run at once (blocking-pool threads and
/// the audit writer), since opening one (file, WAL mode, pragmas) costs far more than a query.
const POOL_MAX: usize = 64;

impl Store {
    /// Open (creating when missing) and migrate to the current schema.
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(dir) = path.parent() {
            ensure_dir(dir)?;
        }
        create_owned(path)?;
        // The store and its side files are refused when one is a symlink or any file hal0
        // could not have made (SQLite opens them by name and, as root, hands the -wal and
        // journal to the store's owner).
        // Checked through O_PATH descriptors only: this process may already hold the store
        // open (and locked) on another connection, and closing any other descriptor of it
        // would drop those locks.
        check_files(path)?;
        let checkpointer = Arc::new(checkpoint::Checkpointer::new(path));
        let conn = open_conn(path, 0, &checkpointer)?;
        settle_files(path)?;
        // Migrate before converting to incremental vacuum: a migration that fails then
        // leaves an older store exactly as it was (the conversion rewrites the file).
        migrations::migrate(&conn)?;
        vacuum::make_incremental(&conn, path);
        Ok(Store {
            inner: Arc::new(Inner {
                path: path.to_path_buf(),
                pool: Mutex::new(vec![conn]),
                shared: Mutex::default(),
                max_bytes: Default::default(),
                checkpointer,
            }),
        })
    }

    /// Cap the store at `mb` MiB (`None`: no cap): past it, a write fails with
    /// `store.full`. Applies to the connections opened from now on and to the pooled ones.
    pub fn set_max_size(&self, mb: Option<u64>) {
        let bytes = mb.map_or(0, |m| m.saturating_mul(1024 * 1024));
        self.inner.max_bytes.store(bytes, std::sync::atomic::Ordering::Relaxed);
        for c in self.inner.pool.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            let _ = cap(c, bytes);
        }
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The value of type `T` kept beside this store (its default until first set up), the
    /// same for every handle on the store: a domain's in-memory state over the store's rows,
    /// such as the memory engine's search index. The store knows none of these types.
    pub(crate) fn shared<T: Default + Send + Sync + 'static>(&self) -> Arc<T> {
        let mut slots = self.inner.shared.lock().unwrap_or_else(|p| p.into_inner());
        let slot = slots.entry(std::any::TypeId::of::<T>()).or_insert_with(|| Arc::new(T::default())).clone();
        // Keyed by the type's id, so the value is a `T`.
        slot.downcast::<T>().unwrap_or_else(|_| Arc::new(T::default()))
    }

    /// Run `f` on a pooled connection (blocking).
    pub fn with<T>(&self, f: impl FnOnce(&mut Connection) -> Result<T>) -> Result<T> {
        let taken = self.inner.pool.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut conn = match taken {
            Some(c) => c,
            None => open_conn(
                &self.inner.path,
                self.inner.max_bytes.load(std::sync::atomic::Ordering::Relaxed),
                &self.inner.checkpointer,
            )?,
        };
        let out = f(&mut conn);
        let mut pool = self.inner.pool.lock().unwrap_or_else(|p| p.into_inner());
        if pool.len() < POOL_MAX {
            pool.push(conn);
        }
        out
    }

    /// [`Store::with`] on a connection that gives up at once, with `store.busy`, when
    /// another connection holds the write lock (no busy retries): for a caller that has
    /// somewhere else to go rather than sleep.
    pub fn with_no_wait<T>(&self, f: impl FnOnce(&mut Connection) -> Result<T>) -> Result<T> {
        self.with(|c| {
            c.busy_handler(None::<fn(i32) -> bool>)?;
            let out = f(c);
            c.busy_handler(Some(retry_busy))?;
            out
        })
    }

    /// Run `f` with this store off the async runtime (for domain calls from handlers).
    pub async fn call<T: Send + 'static>(&self, f: impl FnOnce(&Store) -> Result<T> + Send + 'static) -> Result<T> {
        let me = self.clone();
        let started = std::time::Instant::now();
        let out = tokio::task::spawn_blocking(move || f(&me))
            .await
            .map_err(|e| Error::internal(format!("store task failed: {e}")))?;
        crate::base::observe::metrics::store_call(started.elapsed());
        out
    }
}

/// Refuse the store when it or a side file is a symlink or any file hal0 could not have
/// made. Through `O_PATH` descriptors only ([`crate::base::paths::inspect_own`]): this process may
/// already hold the store open and locked on another connection.
fn check_files(path: &Path) -> Result<()> {
    for p in with_sides(path) {
        crate::base::paths::inspect_own(&p)?;
    }
    Ok(())
}

/// Narrow the store to 0600 and hand its side files to the store's owner: SQLite gives
/// them that owner when root creates them, and ones an older hal0 left root's are handed
/// over here (through the checked descriptor, never a link).
fn settle_files(path: &Path) -> Result<()> {
    if let Some(f) = crate::base::paths::inspect_own(path)?
        && f.metadata().is_ok_and(|m| m.permissions().mode() & 0o777 != 0o600)
    {
        let _ = crate::base::paths::narrow_path_fd(&f);
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    for p in with_sides(path).into_iter().skip(1) {
        if let Some(f) = crate::base::paths::inspect_own(&p)? {
            let _ = crate::base::paths::adopt_fd(&f, dir);
        }
    }
    Ok(())
}

/// The store at `path` and SQLite's side files beside it (`-wal`, `-shm`, `-journal`).
fn with_sides(path: &Path) -> Vec<PathBuf> {
    let mut out = vec![path.to_path_buf()];
    for side in ["-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(side);
        out.push(PathBuf::from(p));
    }
    out
}

/// The flags every connection to the store opens with: SQLite's defaults, and a symlink
/// in place of the store refused (SQLite opens its side files without following one).
pub fn open_flags() -> rusqlite::OpenFlags {
    rusqlite::OpenFlags::default() | rusqlite::OpenFlags::SQLITE_OPEN_NOFOLLOW
}

/// Create a missing store file empty (a valid empty database), mode 0600 and owned as its
/// directory ([`crate::base::paths::adopt_fd`]), so SQLite's side files follow that owner too.
fn create_owned(path: &Path) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path) {
        Ok(f) => {
            crate::base::paths::adopt_fd(&f, dir).map_err(|e| Error::io("fs.write_failed", "set the owner of", path, e))
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => {
            Err(Error::unavailable("store.unavailable", format!("cannot create the store {}: {e}", path.display())))
        }
    }
}

/// Pages a write may take beyond the cap through [`beyond_cap`].
pub const RESERVE_PAGES: i64 = 32;

/// Run `f` inside one transaction on `c` that holds the write lock from its start
/// (`BEGIN IMMEDIATE`): all of it commits, or none of it.
pub fn immediate<T>(c: &Connection, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
    c.execute_batch("BEGIN IMMEDIATE")?;
    let out = f(c).and_then(|v| Ok(c.execute_batch("COMMIT").map(|()| v)?));
    if out.is_err() && !c.is_autocommit() {
        let _ = c.execute_batch("ROLLBACK");
    }
    out
}

/// Run `f` on `c` with the cap raised by [`RESERVE_PAGES`], then put the cap back: for the
/// outcome of an audited call whose `started` entry is stored, so a store that filled up
/// in between still records how the call ended.
pub fn beyond_cap<T>(c: &Connection, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
    let cap: i64 = c.pragma_query_value(None, "max_page_count", |r| r.get(0))?;
    c.pragma_update(None, "max_page_count", cap.saturating_add(RESERVE_PAGES))?;
    let out = f(c);
    // SQLite keeps the cap at no less than the store's size.
    c.pragma_update(None, "max_page_count", cap)?;
    out
}

/// Limit `c` to `bytes` (0: SQLite's own maximum). SQLite never sets the cap below the
/// store's current size.
fn cap(c: &Connection, bytes: u64) -> Result<()> {
    let page: u64 = c.pragma_query_value(None, "page_size", |r| r.get::<_, i64>(0))?.max(512) as u64;
    let pages = if bytes == 0 { 4_294_967_294 } else { (bytes / page).max(1) };
    c.pragma_update(None, "max_page_count", pages as i64)?;
    Ok(())
}

fn open_conn(path: &Path, max_bytes: u64, checkpointer: &Arc<checkpoint::Checkpointer>) -> Result<Connection> {
    let mut conn = Connection::open_with_flags(path, open_flags()).map_err(|e| {
        Error::unavailable("store.unavailable", format!("cannot open the store {}: {e}", path.display()))
    })?;
    // A writer that finds the store locked retries every millisecond for up to 5 s.
    // SQLite's own busy timeout backs off to 100 ms sleeps, so a writer behind a 2 ms
    // batch of the pruner could sleep 100 ms (the writer's p99 during a prune: 80-104 ms).
    conn.busy_handler(Some(retry_busy))?;
    // Before WAL mode, which writes a new file's first page: after that, a new store would
    // keep `auto_vacuum = NONE` until a `VACUUM` (its next open) converted it. An existing
    // store keeps its mode; `vacuum::make_incremental` converts an older one.
    conn.pragma_update(None, "auto_vacuum", vacuum::INCREMENTAL)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // 16 MiB of page cache (the default 2 MiB keeps re-reading index pages of a large
    // memory bank from the OS); a connection only fills it as it reads.
    conn.pragma_update(None, "cache_size", -16384)?;
    // Checkpoints run in the store's checkpointer thread, not in the committing writer
    // (this replaces SQLite's automatic checkpoint). The WAL file is cut back to 64 MiB
    // after a checkpoint.
    checkpointer.hook(&mut conn)?;
    conn.pragma_update(None, "journal_size_limit", 64 * 1024 * 1024)?;
    if max_bytes > 0 {
        cap(&conn, max_bytes)?;
    }
    Ok(conn)
}

/// Tries of [`retry_busy`] before a locked store is reported busy (about 5 s).
const BUSY_TRIES: i32 = 5000;

/// The busy handler of every connection: sleep 1 ms and try again, [`BUSY_TRIES`] times.
fn retry_busy(tries: i32) -> bool {
    if tries >= BUSY_TRIES {
        return false;
    }
    std::thread::sleep(Duration::from_millis(1));
    true
}

/// Current time as RFC 3339 UTC with second precision.
pub fn now() -> String {
    stamp_after(0)
}

/// The stamp `secs` seconds from now, in [`now`]'s form (they compare as text).
pub fn stamp_after(secs: i64) -> String {
    let t = time::OffsetDateTime::now_utc() + time::Duration::seconds(secs);
    t.replace_nanosecond(0).unwrap_or(t).format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

/// A store in a new temp dir, for tests (the dir goes when the first value is dropped).
#[cfg(test)]
pub(crate) fn scratch() -> (tempfile::TempDir, Store) {
    let d = tempfile::tempdir().unwrap();
    let s = Store::open(&d.path().join("hal0.db")).unwrap();
    (d, s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    /// A full store refuses a write; [`beyond_cap`] lets one through on a few reserved
    /// pages and puts the cap back.
    #[test]
    fn an_outcome_may_take_reserved_pages_once_the_store_is_full() {
        let (_d, s) = scratch();
        s.with(|c| {
            c.execute_batch("CREATE TABLE t (v BLOB)")?;
            let size: i64 = c.pragma_query_value(None, "page_count", |r| r.get(0))?;
            c.pragma_update(None, "max_page_count", size)?;
            let blob = vec![7u8; 8192];
            let e = c.execute("INSERT INTO t VALUES (?1)", [&blob]).map_err(Error::from).unwrap_err();
            assert_eq!(e.code, "store.full");
            beyond_cap(c, |c| Ok(c.execute("INSERT INTO t VALUES (?1)", [&blob])?))?;
            let cap: i64 = c.pragma_query_value(None, "max_page_count", |r| r.get(0))?;
            let now: i64 = c.pragma_query_value(None, "page_count", |r| r.get(0))?;
            assert_eq!(cap, now.max(size), "the cap is back (never below the store's size)");
            assert!(c.execute("INSERT INTO t VALUES (?1)", [&blob]).is_err(), "the reserve is not kept");
            Ok(())
        })
        .unwrap();
    }

    /// Opening the store again in a process that already holds it (the daemon opens it more
    /// than once: checked files, narrowed, side files re-owned) keeps the POSIX locks its connections hold: another process still finds
    /// the store locked. Checking the files through ordinary descriptors dropped them, and
    /// two writers then corrupted the store ("database disk image is malformed").
    #[test]
    fn opening_the_store_again_keeps_this_process_locks() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("h.db");
        let _first = Store::open(&p).unwrap();
        let holder = Connection::open(&p).unwrap();
        holder.execute_batch("BEGIN IMMEDIATE").unwrap();
        // What a second open does to the files before and after its connection.
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        check_files(&p).unwrap();
        settle_files(&p).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().mode() & 0o777, 0o600);
        let out = std::process::Command::new("python3")
            .args(["-c", "import sqlite3,sys\ntry:\n sqlite3.connect(sys.argv[1], timeout=0).execute('BEGIN IMMEDIATE'); print('took it')\nexcept sqlite3.OperationalError as e: print(e)"])
            .arg(&p)
            .output()
            .expect("python3 runs");
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(said.contains("locked"), "another process could write while this one held the lock: {said}");
        holder.execute_batch("ROLLBACK").unwrap();
    }

    /// A store root opens in a state dir someone else owns (the daemon's, on a packaged
    /// install) belongs to that owner with its WAL and shared-memory files, so the daemon
    /// can go on writing it. Needs root to chown.
    #[test]
    fn a_store_root_creates_belongs_to_the_state_dir_owner() {
        if !rustix::process::geteuid().is_root() {
            eprintln!("not root: chown cannot be exercised");
            return;
        }
        let d = tempfile::tempdir().unwrap();
        let state = d.path().join("state");
        std::fs::create_dir(&state).unwrap();
        rustix::fs::chown(&state, Some(rustix::fs::Uid::from_raw(4242)), Some(rustix::fs::Gid::from_raw(4242)))
            .unwrap();
        let store = Store::open(&state.join("hal0.db")).unwrap();
        store.with(|c| Ok(c.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")?)).unwrap();
        for name in ["hal0.db", "hal0.db-wal", "hal0.db-shm"] {
            let m = std::fs::metadata(state.join(name)).unwrap();
            assert_eq!((m.uid(), m.gid()), (4242, 4242), "{name}");
        }
    }
}
