//! Changes to the files hal0 reads on every request (the key stamp beside the store,
//! `api.env`, `hal0.toml`), seen without a `stat` of each per request: one inotify
//! instance per process watches their directories, and [`version`] drains its queue with
//! one non-blocking read and counts the events that name a watched file.
//!
//! Why this is exact: the kernel queues an event before the write, rename or unlink that
//! caused it returns. A change made before a request was sent is therefore in the queue
//! when the request asks, so revocations and edits apply at the next request, as they did
//! with a stat per file. The drain and the count are one step under a lock, so a thread
//! that asks while another drains sees the count that drain made.
//!
//! A file whose directory cannot be watched, or stops being watchable (removed, moved,
//! unmounted), is looked at with a stat as before ([`Version::Stamp`]). A queue that
//! overflowed counts as a change to every file.

use rustix::fs::inotify;
use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// A file's identity, mtime and size.
pub type Stamp = (u64, i64, i64, u64);

/// The stamp of `path`: all zero when the file does not exist (no file has inode 0),
/// `None` when it cannot be looked at.
pub fn stamp(path: &Path) -> Option<Stamp> {
    match std::fs::metadata(path) {
        Ok(m) => Some((m.ino(), m.mtime(), m.mtime_nsec(), m.size())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some((0, 0, 0, 0)),
        Err(_) => None,
    }
}

/// What a file was when a value was derived from it: the watch's count of changes to
/// watched files, or (not watched) its stat.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Version {
    Watched(u64),
    Stamp(Stamp),
}

/// The watched directories (each spelling of a path to its watch descriptor), the files
/// watched in each, and the count of changes.
#[derive(Default)]
struct Inner {
    dirs: HashMap<PathBuf, i32>,
    names: HashMap<i32, HashSet<OsString>>,
    changes: u64,
}

impl Inner {
    fn watches(&self, dir: &Path, name: &std::ffi::OsStr) -> bool {
        self.dirs.get(dir).and_then(|wd| self.names.get(wd)).is_some_and(|n| n.contains(name))
    }

    /// Forget watch `wd` (its directory went): its files are stat'ed from now on.
    fn forget(&mut self, wd: i32) {
        self.names.remove(&wd);
        self.dirs.retain(|_, w| *w != wd);
    }
}

struct Watch {
    fd: OwnedFd,
    inner: Mutex<Inner>,
}

/// Events that may change what a file holds, and those that end a directory's watch. Not
/// each write (`MODIFY`): the store's WAL beside the key stamp is written on every commit;
/// a file is read whole after its writer closed it or renamed it into place.
fn mask() -> inotify::WatchFlags {
    use inotify::WatchFlags as W;
    W::CLOSE_WRITE | W::MOVED_TO | W::MOVED_FROM | W::CREATE | W::DELETE | W::DELETE_SELF | W::MOVE_SELF
}

fn global() -> Option<&'static Watch> {
    static W: OnceLock<Option<Watch>> = OnceLock::new();
    W.get_or_init(|| {
        let flags = inotify::CreateFlags::CLOEXEC | inotify::CreateFlags::NONBLOCK;
        match inotify::init(flags) {
            Ok(fd) => Some(Watch { fd, inner: Mutex::default() }),
            Err(e) => {
                tracing::debug!("no inotify ({e}): hal0's files are looked at with a stat per use");
                None
            }
        }
    })
    .as_ref()
}

/// Watch `path` (a file; its directory is what is watched) from now on. `false` when it
/// cannot be: [`version`] then stats it.
pub fn watch(path: &Path) -> bool {
    let (Some(w), Some(dir), Some(name)) = (global(), path.parent(), path.file_name()) else { return false };
    let mut inner = w.inner.lock().unwrap_or_else(|p| p.into_inner());
    let wd = match inner.dirs.get(dir) {
        Some(wd) => Ok(*wd),
        // A directory watched already under another spelling gets the same descriptor.
        None => inotify::add_watch(&w.fd, dir, mask()),
    };
    match wd {
        Ok(wd) => {
            inner.dirs.insert(dir.to_path_buf(), wd);
            inner.names.entry(wd).or_default().insert(name.to_os_string());
            true
        }
        Err(e) => {
            tracing::debug!("cannot watch {}: {e}", dir.display());
            false
        }
    }
}

/// What `path` is now: the count of changes when it is watched, else its stat; `None` when
/// it cannot be looked at.
pub fn version(path: &Path) -> Option<Version> {
    if let (Some(w), Some(dir), Some(name)) = (global(), path.parent(), path.file_name()) {
        let mut inner = w.inner.lock().unwrap_or_else(|p| p.into_inner());
        if inner.watches(dir, name) {
            drain(&w.fd, &mut inner);
            // Still watched: draining may have found its directory gone.
            if inner.watches(dir, name) {
                return Some(Version::Watched(inner.changes));
            }
        }
    }
    stamp(path).map(Version::Stamp)
}

/// Read every queued event (one read when none is queued) and count the changes.
fn drain(fd: &OwnedFd, inner: &mut Inner) {
    use inotify::ReadFlags as R;
    let mut buf = [MaybeUninit::<u8>::uninit(); 4096];
    let mut events = inotify::Reader::new(fd, &mut buf);
    loop {
        let ev = match events.next() {
            Ok(ev) => ev,
            Err(rustix::io::Errno::AGAIN) => return,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => {
                // The queue cannot be read: nothing is watched from now on.
                tracing::warn!("inotify read failed ({e}): hal0's files are looked at with a stat per use");
                inner.dirs.clear();
                inner.names.clear();
                inner.changes += 1;
                return;
            }
        };
        let flags = ev.events();
        if flags.contains(R::QUEUE_OVERFLOW) {
            inner.changes += 1;
            continue;
        }
        if flags.intersects(R::IGNORED | R::DELETE_SELF | R::MOVE_SELF | R::UNMOUNT) {
            inner.forget(ev.wd());
            inner.changes += 1;
            continue;
        }
        let named = ev.file_name().map(|n| std::ffi::OsStr::from_bytes(n.to_bytes()));
        let watched = inner.names.get(&ev.wd()).is_some_and(|names| named.is_some_and(|n| names.contains(n)));
        if watched {
            inner.changes += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every way hal0 or a person changes a file counts at once (no waiting: the event is
    /// queued before the change returns); a file beside it does not; a removed directory
    /// falls back to a stat.
    #[test]
    fn a_change_counts_at_the_next_look_and_other_files_do_not() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("etc");
        std::fs::create_dir(&dir).unwrap();
        let f = dir.join("api.env");
        assert!(watch(&f));
        let v = |p: &Path| version(p).unwrap();
        let Version::Watched(first) = v(&f) else { panic!("not watched") };
        assert_eq!(v(&f), Version::Watched(first), "nothing changed");

        crate::base::paths::write_atomic(&f, b"A=1\n").unwrap();
        let after_rename = v(&f);
        assert_ne!(after_rename, Version::Watched(first), "a replacement by rename");
        std::fs::write(dir.join("other.toml"), "x").unwrap();
        assert_eq!(v(&f), after_rename, "another file in the directory");

        use std::io::Write;
        std::fs::OpenOptions::new().append(true).open(&f).unwrap().write_all(b"B=2\n").unwrap();
        let after_edit = v(&f);
        assert_ne!(after_edit, after_rename, "an edit in place");
        std::fs::remove_file(&f).unwrap();
        assert_ne!(v(&f), after_edit, "a removal");

        // Not watched: its stat, as before.
        let g = d.path().join("keys.stamp");
        assert!(matches!(v(&g), Version::Stamp(_)));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(matches!(v(&f), Version::Stamp((0, 0, 0, 0))), "the directory went: a stat, which finds nothing");
    }
}
