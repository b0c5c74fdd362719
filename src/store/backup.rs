//! `hal0 backup` and `hal0 restore`: one archive (tar, gzip) of the config dir (hal0.toml,
//! api.env, the server records, secrets) and a consistent copy of `hal0.db`, taken with
//! SQLite's online backup API while the daemon goes on serving.
//!
//! The archive starts with `hal0-backup.json` (format, hal0 version, schema version, and
//! the size and sha256 of every file after it). Restore reads it all into a staging dir
//! inside the state dir and checks it (paths, sizes, digests, the store's integrity and
//! schema; an archive from a newer schema is refused) before it touches anything; it brings
//! the staged store to this hal0's schema, then, with the daemon stopped, keeps a copy of
//! what it replaces (`backups/pre-restore-….tar.gz`) and swaps the files in.

use crate::base::error::{Error, Result};
use crate::base::paths::{Paths, write_atomic};
use rusqlite::{Connection, OpenFlags};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

/// The archive layout this hal0 writes and reads.
pub const FORMAT: u32 = 1;
const MANIFEST: &str = "hal0-backup.json";
/// The store's place in the archive; config files are under `etc/`.
const STORE: &str = "state/hal0.db";
const ETC: &str = "etc/";
/// Held shared by `hal0 serve` for its lifetime and taken exclusively by a restore.
const DAEMON_LOCK: &str = ".serve.lock";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    pub format: u32,
    pub hal0_version: String,
    pub created_at: String,
    pub host: String,
    /// The store's schema version (0: the archive holds no store).
    pub schema_version: i64,
    pub files: Vec<Entry>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    pub path: String,
    pub size: u64,
    pub sha256: String,
}

/// What [`create`] wrote.
#[derive(Debug, Serialize)]
pub struct Made {
    pub path: PathBuf,
    pub bytes: u64,
    pub config_files: usize,
    pub store_bytes: Option<u64>,
    pub schema_version: i64,
}

fn digest(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn tmp_name(dir: &Path, name: &str) -> Result<PathBuf> {
    let mut rnd = [0u8; 6];
    getrandom::fill(&mut rnd).map_err(|e| Error::internal(format!("no randomness: {e}")))?;
    Ok(dir.join(format!(".{name}.{}.tmp", hex::encode(rnd))))
}

/// The config dir's files, relative, sorted: lock and temp files left out.
fn config_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        let entries = match fs::read_dir(dir.join(&rel)) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io("fs.read_failed", "read", &dir.join(&rel), e)),
        };
        for e in entries {
            let e = e.map_err(|e| Error::io("fs.read_failed", "read", &dir.join(&rel), e))?;
            let name = e.file_name().to_string_lossy().into_owned();
            let kind = e.file_type().map_err(|err| Error::io("fs.read_failed", "read", &e.path(), err))?;
            if name.ends_with(".lock") || name.ends_with(".tmp") {
                continue;
            }
            if kind.is_dir() {
                todo.push(rel.join(&name));
            } else if kind.is_file() {
                out.push(rel.join(&name));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// A consistent copy of the store at `db` into `to`: one backup step over every page, in
/// one read transaction, so writers (WAL) go on meanwhile. The copy's schema version.
fn copy_store(db: &Path, to: &Path) -> Result<i64> {
    let unavailable = |e: rusqlite::Error| {
        Error::unavailable("store.unavailable", format!("cannot copy the store {}: {e}", db.display()))
    };
    let src = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NOFOLLOW)
        .map_err(unavailable)?;
    src.busy_timeout(std::time::Duration::from_secs(5)).map_err(unavailable)?;
    {
        // Created 0600 before SQLite opens it.
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(to)
            .map_err(|e| Error::io("fs.write_failed", "create", to, e))?;
    }
    let mut dst = Connection::open(to).map_err(unavailable)?;
    {
        let b = rusqlite::backup::Backup::new(&src, &mut dst).map_err(unavailable)?;
        loop {
            match b.step(-1).map_err(unavailable)? {
                rusqlite::backup::StepResult::Done => break,
                _ => std::thread::sleep(std::time::Duration::from_millis(5)),
            }
        }
    }
    // A self-contained file: no WAL beside it.
    dst.pragma_update(None, "journal_mode", "DELETE").map_err(unavailable)?;
    dst.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(unavailable)
}

/// sha256 and size of a file, read in pieces (the store may be gigabytes).
fn digest_file(p: &Path) -> Result<(u64, String)> {
    let mut f = fs::File::open(p).map_err(|e| Error::io("fs.read_failed", "read", p, e))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut n = 0u64;
    loop {
        let got = f.read(&mut buf).map_err(|e| Error::io("fs.read_failed", "read", p, e))?;
        if got == 0 {
            return Ok((n, hex::encode(h.finalize())));
        }
        h.update(&buf[..got]);
        n += got as u64;
    }
}

/// One file of an archive: its path there and where its bytes come from.
enum Item {
    Bytes(String, Vec<u8>),
    File(String, PathBuf),
}

/// Write the archive of `paths` to `out` (atomically, mode 0600; an existing `out` only when
/// `overwrite`). The store is copied to a
/// temp file beside `out` and streamed into the archive, never held in memory.
pub fn create(paths: &Paths, out: &Path, overwrite: bool) -> Result<Made> {
    if !overwrite && fs::symlink_metadata(out).is_ok() {
        return Err(Error::conflict(
            "backup.exists",
            format!("{} already exists: name another file, or pass --force to replace it", out.display()),
        ));
    }
    let out_dir = out.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !out_dir.is_dir() {
        return Err(Error::invalid(
            "backup.invalid_path",
            format!("{} does not exist: name a file in an existing directory", out_dir.display()),
        ));
    }
    let name = out.file_name().and_then(|n| n.to_str()).unwrap_or("backup");
    let db_copy = tmp_name(out_dir, &format!("{name}.db"))?;
    let tmp_out = tmp_name(out_dir, name)?;
    let result = (|| {
        let db = paths.db();
        let schema_version = if db.exists() { copy_store(&db, &db_copy)? } else { 0 };
        let mut items = Vec::new();
        let mut files = Vec::new();
        for rel in config_files(&paths.config_dir)? {
            let p = paths.config_dir.join(&rel);
            // Without following a link swapped in since the listing (root must not copy
            // what it points to into an archive the daemon user can read).
            let bytes = crate::base::paths::read_optional_bytes(&p)?
                .ok_or_else(|| Error::io("fs.read_failed", "read", &p, std::io::ErrorKind::NotFound.into()))?;
            let path = format!("{ETC}{}", rel.display());
            files.push(Entry { path: path.clone(), size: bytes.len() as u64, sha256: digest(&bytes) });
            items.push(Item::Bytes(path, bytes));
        }
        let config_files = items.len();
        let mut store_bytes = None;
        if schema_version > 0 {
            let (size, sha256) = digest_file(&db_copy)?;
            store_bytes = Some(size);
            files.push(Entry { path: STORE.to_string(), size, sha256 });
            items.push(Item::File(STORE.to_string(), db_copy.clone()));
        }
        let manifest = Manifest {
            format: FORMAT,
            hal0_version: env!("CARGO_PKG_VERSION").to_string(),
            created_at: crate::store::now(),
            host: gethostname::gethostname().to_string_lossy().into_owned(),
            schema_version,
            files,
        };
        let bytes = pack(&manifest, &items, &tmp_out, out_dir)?;
        fs::rename(&tmp_out, out).map_err(|e| Error::io("fs.write_failed", "write", out, e))?;
        if let Ok(d) = fs::File::open(out_dir) {
            let _ = d.sync_all();
        }
        Ok(Made { path: out.to_path_buf(), bytes, config_files, store_bytes, schema_version })
    })();
    let _ = fs::remove_file(&db_copy);
    let _ = fs::remove_file(&tmp_out);
    result
}

/// Write the archive to `to` (created 0600 and owned as `dir`), synced; its size.
fn pack(manifest: &Manifest, items: &[Item], to: &Path, dir: &Path) -> Result<u64> {
    let io = |e: std::io::Error| Error::io("fs.write_failed", "write", to, e);
    let file = fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(to).map_err(io)?;
    crate::base::paths::adopt_fd(&file, dir).map_err(io)?;
    // gzip level 1: on a 600 MiB store 3.7 s and 89 MiB, where the default level took 12.7 s
    // for 69 MiB (examples/bench_backup.rs); a backup should be quick to take.
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(file, flate2::Compression::fast()));
    let now = time::OffsetDateTime::now_utc().unix_timestamp().max(0) as u64;
    let header = |size: u64| {
        let mut h = tar::Header::new_gnu();
        h.set_size(size);
        h.set_mode(0o600);
        h.set_mtime(now);
        h.set_entry_type(tar::EntryType::Regular);
        h
    };
    let manifest = serde_json::to_vec_pretty(manifest).map_err(|e| Error::internal(e.to_string()))?;
    tar.append_data(&mut header(manifest.len() as u64), MANIFEST, manifest.as_slice()).map_err(io)?;
    for item in items {
        match item {
            Item::Bytes(path, bytes) => tar.append_data(&mut header(bytes.len() as u64), path, bytes.as_slice()),
            Item::File(path, from) => {
                let f = fs::File::open(from).map_err(|e| Error::io("fs.read_failed", "read", from, e))?;
                let size = f.metadata().map_err(|e| Error::io("fs.read_failed", "read", from, e))?.len();
                tar.append_data(&mut header(size), path, f)
            }
        }
        .map_err(io)?;
    }
    let file = tar.into_inner().map_err(io)?.finish().map_err(io)?;
    file.sync_all().map_err(io)?;
    Ok(file.metadata().map_err(io)?.len())
}

// ---------------------------------------------------------------------------------------------
// restore
// ---------------------------------------------------------------------------------------------

/// What a restore does to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Add,
    Replace,
    Remove,
    Same,
}

#[derive(Debug, Clone, Serialize)]
pub struct Change {
    pub path: PathBuf,
    pub action: Action,
}

/// A checked archive, unpacked into a staging dir, and what applying it would change.
#[derive(Debug)]
pub struct Staged {
    pub manifest: Manifest,
    pub changes: Vec<Change>,
    dir: PathBuf,
    /// The daemon lock, held from staging to the end of [`apply`].
    _lock: fs::File,
}

impl Drop for Staged {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

impl Staged {
    /// True when applying would change nothing.
    pub fn is_noop(&self) -> bool {
        self.changes.iter().all(|c| c.action == Action::Same)
    }
}

fn invalid(archive: &Path, what: impl std::fmt::Display) -> Error {
    Error::invalid(
        "backup.invalid",
        format!("{} is not a usable hal0 backup: {what}; nothing was changed", archive.display()),
    )
}

/// An archive path that may be written: `state/hal0.db`, or `etc/` and plain components.
fn safe_rel(path: &str) -> Option<PathBuf> {
    if path == STORE {
        return Some(PathBuf::from(STORE));
    }
    let rest = path.strip_prefix(ETC)?;
    let p = Path::new(rest);
    (!rest.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_))))
        .then(|| Path::new(path).to_path_buf())
}

/// Read and check `archive`, unpacking it under the state dir; nothing else is touched.
/// Refused while a `hal0 serve` uses the state dir.
pub fn stage(paths: &Paths, archive: &Path) -> Result<Staged> {
    let file = fs::File::open(archive).map_err(|e| Error::io("fs.read_failed", "read", archive, e))?;
    let lock = restore_guard(paths)?;
    let dir = tmp_name(&paths.state_dir, "restore")?;
    fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(|e| Error::io("fs.write_failed", "create directory", &dir, e))?;
    let mut staged = Staged {
        manifest: Manifest {
            format: 0,
            hal0_version: String::new(),
            created_at: String::new(),
            host: String::new(),
            schema_version: 0,
            files: vec![],
        },
        changes: vec![],
        dir,
        _lock: lock,
    };
    unpack(archive, file, &mut staged)?;
    check_store(archive, &staged)?;
    staged.changes = plan(paths, &staged)?;
    Ok(staged)
}

/// A writer that hashes and counts what passes through to a file.
struct Hashing {
    to: fs::File,
    sha: Sha256,
    n: u64,
    /// The file could not be written (a full disk), as opposed to the archive not read.
    failed: bool,
}

impl Write for Hashing {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.to.write(buf).inspect_err(|_| self.failed = true)?;
        self.sha.update(&buf[..n]);
        self.n += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.to.flush()
    }
}

fn unpack(archive: &Path, file: fs::File, staged: &mut Staged) -> Result<()> {
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut entries = tar.entries().map_err(|e| invalid(archive, e))?;
    let mut first = entries.next().ok_or_else(|| invalid(archive, "it is empty"))?.map_err(|e| invalid(archive, e))?;
    if first.path().map_err(|e| invalid(archive, e))?.as_os_str() != MANIFEST {
        return Err(invalid(archive, format!("it does not start with {MANIFEST}")));
    }
    let mut text = String::new();
    first.by_ref().take(1 << 20).read_to_string(&mut text).map_err(|e| invalid(archive, e))?;
    let manifest: Manifest = serde_json::from_str(&text).map_err(|e| invalid(archive, format!("{MANIFEST}: {e}")))?;
    if manifest.format != FORMAT {
        return Err(invalid(
            archive,
            format!("archive format {} (this hal0 reads format {FORMAT}; use the hal0 that wrote it)", manifest.format),
        ));
    }
    let want = crate::store::migrations::MIGRATIONS.len() as i64;
    if manifest.schema_version > want {
        return Err(Error::conflict(
            "backup.newer_schema",
            format!(
                "{} holds a store at schema version {}, newer than this hal0 ({want}, hal0 {}): it was made by hal0 {}; \
                 upgrade hal0 to restore it; nothing was changed",
                archive.display(),
                manifest.schema_version,
                env!("CARGO_PKG_VERSION"),
                manifest.hal0_version
            ),
        ));
    }
    let mut expected: BTreeMap<&str, &Entry> = manifest.files.iter().map(|e| (e.path.as_str(), e)).collect();
    for entry in entries {
        let mut entry = entry.map_err(|e| invalid(archive, e))?;
        let path = entry.path().map_err(|e| invalid(archive, e))?.to_string_lossy().into_owned();
        let Some(want) = expected.remove(path.as_str()) else {
            return Err(invalid(archive, format!("{path} is not in its manifest")));
        };
        let Some(rel) = safe_rel(&path).filter(|_| entry.header().entry_type().is_file()) else {
            return Err(invalid(archive, format!("{path} is not a file hal0 restores")));
        };
        let to = staged.dir.join(&rel);
        if let Some(parent) = to.parent() {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)
                .map_err(|e| Error::io("fs.write_failed", "create directory", parent, e))?;
        }
        let f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&to)
            .map_err(|e| Error::io("fs.write_failed", "write", &to, e))?;
        // Copied in pieces, hashed on the way: at most one byte past the manifest's size.
        let mut sink = Hashing { to: f, sha: Sha256::new(), n: 0, failed: false };
        if let Err(e) = std::io::copy(&mut entry.by_ref().take(want.size + 1), &mut sink) {
            return Err(if sink.failed { Error::io("fs.write_failed", "write", &to, e) } else { invalid(archive, e) });
        }
        if sink.n != want.size || hex::encode(sink.sha.finalize()) != want.sha256 {
            return Err(invalid(archive, format!("{path} is damaged (its size or sha256 differs from the manifest)")));
        }
    }
    if let Some(missing) = expected.keys().next() {
        return Err(invalid(archive, format!("{missing} is in its manifest but not in the archive (cut short?)")));
    }
    // Read to the gzip trailer so its CRC-32 covers every byte: the manifest, the tar headers
    // and padding, which no sha256 above covers (a flipped byte there passed unnoticed).
    std::io::copy(&mut tar.into_inner(), &mut std::io::sink())
        .map_err(|e| invalid(archive, format!("its compressed data is damaged ({e})")))?;
    let has_store = manifest.files.iter().any(|e| e.path == STORE);
    if has_store != (manifest.schema_version > 0) {
        return Err(invalid(archive, "its manifest and its store disagree"));
    }
    staged.manifest = manifest;
    Ok(())
}

/// The staged store is sound, at the manifest's schema, and brought to this hal0's.
fn check_store(archive: &Path, staged: &Staged) -> Result<()> {
    let db = staged.dir.join(STORE);
    if !db.exists() {
        return Ok(());
    }
    {
        let c = Connection::open(&db).map_err(|e| invalid(archive, format!("its store: {e}")))?;
        let ok: String = c
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .map_err(|e| invalid(archive, format!("its store: {e}")))?;
        let v: i64 = c.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap_or(-1);
        if ok != "ok" || v != staged.manifest.schema_version {
            return Err(invalid(archive, format!("its store fails its check ({ok}, schema {v})")));
        }
    }
    // Migrate now, so a store this hal0 cannot bring up to date is refused before anything
    // is replaced.
    drop(crate::store::Store::open(&db)?);
    Ok(())
}

fn plan(paths: &Paths, staged: &Staged) -> Result<Vec<Change>> {
    let mut changes = Vec::new();
    let incoming: BTreeMap<PathBuf, &Entry> = staged
        .manifest
        .files
        .iter()
        .filter_map(|e| e.path.strip_prefix(ETC).map(|rel| (PathBuf::from(rel), e)))
        .collect();
    for (rel, e) in &incoming {
        let p = paths.config_dir.join(rel);
        let action = match fs::read(&p) {
            Ok(now) if digest(&now) == e.sha256 => Action::Same,
            Ok(_) => Action::Replace,
            Err(_) => Action::Add,
        };
        changes.push(Change { path: p, action });
    }
    for rel in config_files(&paths.config_dir)? {
        if !incoming.contains_key(&rel) {
            changes.push(Change { path: paths.config_dir.join(rel), action: Action::Remove });
        }
    }
    if staged.manifest.schema_version > 0 {
        let action = if paths.db().exists() { Action::Replace } else { Action::Add };
        changes.push(Change { path: paths.db(), action });
    }
    changes.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(changes)
}

/// What [`apply`] did.
#[derive(Debug, Serialize)]
pub struct Applied {
    pub changes: Vec<Change>,
    /// The archive of what was there before, when anything was replaced or removed.
    pub previous: Option<PathBuf>,
}

/// Swap the staged files in (no daemon can start meanwhile: [`stage`] holds its lock). What
/// would be replaced or removed is first archived under `<state>/backups/`.
pub fn apply(paths: &Paths, staged: Staged) -> Result<Applied> {
    let overwrites = staged.changes.iter().any(|c| matches!(c.action, Action::Replace | Action::Remove));
    let previous = if overwrites {
        let dir = paths.state_dir.join("backups");
        crate::base::paths::ensure_dir(&dir)?;
        let stamp = crate::store::now().replace(':', "");
        // A free name: the archive being restored may be one of these, from this second.
        let p = (0..100)
            .map(|n| match n {
                0 => dir.join(format!("pre-restore-{stamp}.tar.gz")),
                n => dir.join(format!("pre-restore-{stamp}-{n}.tar.gz")),
            })
            .find(|p| fs::symlink_metadata(p).is_err())
            .ok_or_else(|| {
                Error::conflict("backup.exists", format!("no free pre-restore name in {}", dir.display()))
            })?;
        create(paths, &p, false)?;
        Some(p)
    } else {
        None
    };
    if staged.manifest.schema_version > 0 {
        swap_store(paths, &staged.dir.join(STORE))?;
    }
    for c in &staged.changes {
        match c.action {
            Action::Add | Action::Replace if c.path != paths.db() => {
                let rel = c.path.strip_prefix(&paths.config_dir).unwrap_or(&c.path);
                let from = staged.dir.join(ETC).join(rel);
                let bytes = fs::read(&from).map_err(|e| Error::io("fs.read_failed", "read", &from, e))?;
                write_atomic(&c.path, &bytes)?;
            }
            Action::Remove => {
                fs::remove_file(&c.path).map_err(|e| Error::io("fs.write_failed", "remove", &c.path, e))?
            }
            _ => {}
        }
    }
    Ok(Applied { changes: staged.changes.clone(), previous })
}

/// Put the staged store in place of `hal0.db`: the old one's log folded in and its side
/// files removed first (a stale `-wal` would otherwise be replayed onto the new file).
fn swap_store(paths: &Paths, staged_db: &Path) -> Result<()> {
    let db = paths.db();
    if db.exists() {
        let c = Connection::open_with_flags(&db, crate::store::open_flags())
            .map_err(|e| Error::unavailable("store.unavailable", format!("cannot open {}: {e}", db.display())))?;
        let _ = c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        drop(c);
    }
    for side in ["-wal", "-shm", "-journal"] {
        let mut p = db.as_os_str().to_owned();
        p.push(side);
        match fs::remove_file(&p) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(Error::io("fs.write_failed", "remove", Path::new(&p), e));
            }
            _ => {}
        }
    }
    fs::rename(staged_db, &db).map_err(|e| Error::io("fs.write_failed", "replace", &db, e))?;
    crate::base::paths::adopt(&db).map_err(|e| Error::io("fs.write_failed", "set the owner of", &db, e))?;
    if let Ok(d) = fs::File::open(&paths.state_dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

fn open_daemon_lock(paths: &Paths) -> Result<fs::File> {
    crate::base::paths::open_lock(&paths.state_dir, DAEMON_LOCK)
}

/// Whether a `hal0 serve` uses this state dir now (it holds the daemon lock); never
/// creates the lock file.
pub fn daemon_running(paths: &Paths) -> bool {
    let Ok(f) = fs::File::open(paths.state_dir.join(DAEMON_LOCK)) else { return false };
    match f.try_lock() {
        Ok(()) => {
            let _ = f.unlock();
            false
        }
        Err(_) => true,
    }
}

/// Held by `hal0 serve` while it runs (shared: several daemons may share a state dir in
/// tests). Refused while a restore swaps files in.
pub fn daemon_guard(paths: &Paths) -> Result<fs::File> {
    let f = open_daemon_lock(paths)?;
    match f.try_lock_shared() {
        Ok(()) => Ok(f),
        Err(_) => Err(Error::unavailable(
            "store.restoring",
            format!("a restore is replacing the files in {}; start hal0 serve when it ends", paths.state_dir.display()),
        )),
    }
}

/// Taken by a restore: refused while any `hal0 serve` uses this state dir.
fn restore_guard(paths: &Paths) -> Result<fs::File> {
    let f = open_daemon_lock(paths)?;
    match f.try_lock() {
        Ok(()) => Ok(f),
        Err(_) => Err(Error::conflict(
            "backup.daemon_running",
            format!(
                "hal0 serve is running on {}: stop it first (systemctl stop hal0), restore, then start it again; \
                 nothing was changed",
                paths.state_dir.display()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_etc_files_and_the_store_may_be_restored() {
        assert!(safe_rel("etc/hal0.toml").is_some());
        assert!(safe_rel("etc/servers/files.toml").is_some());
        assert!(safe_rel("state/hal0.db").is_some());
        for bad in ["etc/", "etc/../x", "etc//abs", "/etc/passwd", "state/other.db", "hal0.toml", "etc/./x"] {
            assert!(safe_rel(bad).is_none(), "{bad}");
        }
    }
}
