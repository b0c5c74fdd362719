//! Values derived from a file, recomputed only when the file changes: the file's version
//! decides ([`crate::base::filewatch`]: a count of its changes while its directory is watched,
//! else its stamp: inode, mtime, size, a missing file being a state of its own), and a TTL
//! bounds how long a value is trusted (an edit within one clock tick that keeps inode and
//! size). hal0 replaces its files by rename, so each write makes a new inode.

use crate::base::error::Result;
use crate::base::filewatch::{Version, version};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One value computed from one file.
pub struct FileMemo<T> {
    path: PathBuf,
    ttl: Duration,
    state: Mutex<Option<(Version, Instant, Arc<T>)>>,
}

impl<T> FileMemo<T> {
    pub fn new(path: PathBuf, ttl: Duration) -> FileMemo<T> {
        crate::base::filewatch::watch(&path);
        FileMemo { path, ttl, state: Mutex::new(None) }
    }

    /// The value for the file as it is now: the kept one, or `compute()`'s (kept only when
    /// it succeeded and the file could be looked at), shared rather than copied.
    pub fn get(&self, compute: impl FnOnce() -> Result<T>) -> Result<Arc<T>> {
        let now = version(&self.path);
        if let Some(s) = now
            && let Some((kept, at, v)) = self.state.lock().unwrap_or_else(|p| p.into_inner()).as_ref()
            && *kept == s
            && at.elapsed() < self.ttl
        {
            return Ok(v.clone());
        }
        let v = Arc::new(compute()?);
        if let Some(s) = now {
            *self.state.lock().unwrap_or_else(|p| p.into_inner()) = Some((s, Instant::now(), v.clone()));
        }
        Ok(v)
    }

    /// Forget the kept value: the next [`FileMemo::get`] computes it again (what it derives
    /// from changed though the file did not).
    pub fn clear(&self) {
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn recomputes_when_the_file_changes_or_the_ttl_ends() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f.toml");
        let memo = FileMemo::new(p.clone(), Duration::from_secs(60));
        let calls = Cell::new(0);
        let read = || {
            calls.set(calls.get() + 1);
            Ok(std::fs::read_to_string(&p).unwrap_or_default())
        };
        assert_eq!(*memo.get(read).unwrap(), "", "a missing file");
        assert_eq!(*memo.get(read).unwrap(), "");
        assert_eq!(calls.get(), 1);
        crate::base::paths::write_atomic(&p, b"a = 1").unwrap();
        assert_eq!(*memo.get(read).unwrap(), "a = 1");
        // Same size, same tick: a replacement by rename is a new inode.
        crate::base::paths::write_atomic(&p, b"a = 2").unwrap();
        assert_eq!(*memo.get(read).unwrap(), "a = 2");
        assert_eq!(*memo.get(read).unwrap(), "a = 2");
        assert_eq!(calls.get(), 3);
        let short = FileMemo::new(p.clone(), Duration::ZERO);
        short.get(read).unwrap();
        short.get(read).unwrap();
        assert_eq!(calls.get(), 5, "a zero TTL keeps nothing");
        assert!(memo.get(|| Err(crate::base::error::Error::internal("x"))).is_ok(), "a kept value needs no compute");
    }
}
