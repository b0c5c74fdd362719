//! Checkpoints off the writers' path. With SQLite's automatic checkpoint, the commit that
//! takes the WAL past its threshold copies the whole log into the store and syncs it before
//! that commit returns: a writer (an audited call, a memory add) now and then waited for tens
//! or hundreds of milliseconds of disk I/O. Here each connection's WAL hook only wakes a
//! checkpointer thread of the store's own, which runs a PASSIVE checkpoint on a connection
//! of its own while writers go on appending. A writer checkpoints itself only when the log
//! has grown past [`BACKSTOP_PAGES`] (the thread could not keep up, or is gone).

use rusqlite::{Connection, wal::CheckpointMode};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Duration;

/// WAL pages after a commit that wake the checkpointer (4 MiB of 4 KiB pages, SQLite's
/// own default threshold).
const WAKE_PAGES: i32 = 1000;
/// WAL pages after a commit past which the committing writer checkpoints itself.
const BACKSTOP_PAGES: i32 = 50_000;

/// The wake-up a store's connections share with its checkpointer thread.
pub struct Checkpointer {
    /// The store it checkpoints.
    path: PathBuf,
    state: Mutex<State>,
    wake: Condvar,
}

#[derive(Default)]
struct State {
    /// A checkpoint was asked for since the thread last ran one.
    wanted: bool,
    /// The thread runs (started on the first wake-up).
    running: bool,
    /// The store is gone: the thread ends.
    closed: bool,
}

impl Checkpointer {
    /// The checkpointer of the store at `path` (its thread starts on the first wake-up).
    pub fn new(path: &std::path::Path) -> Checkpointer {
        Checkpointer { path: path.to_path_buf(), state: Mutex::default(), wake: Condvar::new() }
    }

    /// Install the hook on `conn`: past [`WAKE_PAGES`] it wakes the checkpointer thread;
    /// past [`BACKSTOP_PAGES`] the writer checkpoints at once.
    pub fn hook(self: &Arc<Self>, conn: &mut Connection) -> rusqlite::Result<()> {
        let me = Arc::downgrade(self);
        conn.wal_hook(Some(move |wal: &mut rusqlite::hooks::Wal, pages: i32| {
            if pages >= BACKSTOP_PAGES {
                let _ = wal.checkpoint();
            } else if pages >= WAKE_PAGES
                && let Some(me) = me.upgrade()
            {
                me.ask();
            }
            Ok(())
        }))
    }

    /// Ask for a checkpoint; starts the thread the first time.
    fn ask(self: &Arc<Self>) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if s.closed {
            return;
        }
        s.wanted = true;
        if !s.running {
            s.running = true;
            let (me, path) = (Arc::downgrade(self), self.path.clone());
            let started = std::thread::Builder::new().name("hal0-checkpoint".into()).spawn(move || run(me, path));
            if started.is_err() {
                // No thread: writers fall back on the backstop.
                s.running = false;
            }
        }
        self.wake.notify_one();
    }

    /// The store is dropped: end the thread.
    pub fn close(&self) {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).closed = true;
        self.wake.notify_one();
    }
}

/// The checkpointer thread: wait to be asked, checkpoint, until the store is closed.
fn run(me: Weak<Checkpointer>, path: PathBuf) {
    let mut conn: Option<Connection> = None;
    loop {
        let Some(c) = me.upgrade() else { return };
        {
            let mut s = c.state.lock().unwrap_or_else(|p| p.into_inner());
            while !s.wanted && !s.closed {
                s = c.wake.wait_timeout(s, Duration::from_secs(60)).unwrap_or_else(|p| p.into_inner()).0;
            }
            if s.closed {
                s.running = false;
                return;
            }
            s.wanted = false;
        }
        drop(c);
        if conn.is_none() {
            // A connection finds the store in WAL mode only once it has read it.
            conn = Connection::open_with_flags(&path, super::open_flags())
                .and_then(|c| c.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(())).map(|()| c))
                .ok();
        }
        if let Some(conn) = &conn
            && let Err(e) = conn.wal_checkpoint_v2(None::<&str>, CheckpointMode::PASSIVE)
        {
            tracing::debug!("checkpoint of {} failed: {e}", path.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writers_leave_checkpoints_to_the_thread_which_ends_with_the_store() {
        let d = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open(&d.path().join("hal0.db")).unwrap();
        // 2 000 pages of one commit: past WAKE_PAGES, below BACKSTOP_PAGES.
        store
            .with(|c| {
                c.execute_batch(
                    "CREATE TABLE filler (x BLOB);
                     WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
                     INSERT INTO filler SELECT zeroblob(4000) FROM n;",
                )?;
                Ok(())
            })
            .unwrap();
        // The pages reach the store file only by a checkpoint, and the writer's
        // connection runs none below BACKSTOP_PAGES: the thread did.
        let db = d.path().join("hal0.db");
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while std::fs::metadata(&db).unwrap().len() < 2000 * 4000 {
            assert!(std::time::Instant::now() < deadline, "the checkpointer never ran");
            std::thread::sleep(Duration::from_millis(20));
        }
        // Dropping the store ends its thread (no thread is left behind per store opened).
        let ck = store.inner.checkpointer.clone();
        assert!(ck.state.lock().unwrap().running, "the thread runs");
        drop(store);
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while ck.state.lock().unwrap().running {
            assert!(std::time::Instant::now() < deadline, "the checkpointer outlived its store");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
