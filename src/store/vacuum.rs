//! Giving pruned space back to the disk: the store runs with `auto_vacuum = INCREMENTAL`
//! (a new store is made so; an older one is converted once, by a `VACUUM` when it is
//! opened), and [`reclaim`] returns free pages in small steps so no writer waits long.

use crate::base::error::Result;
use rusqlite::Connection;
use std::path::Path;

/// `PRAGMA auto_vacuum` value of incremental vacuum.
pub(crate) const INCREMENTAL: i64 = 2;
/// Free pages returned per step of [`reclaim`] (1 MiB of 4 KiB pages: a step moves pages
/// from the end of the file into the holes while it holds the write lock).
const STEP_PAGES: i64 = 256;

/// Make `conn`'s store incremental: at once when it holds no table yet, else by a one-time
/// `VACUUM`. A store busy elsewhere (another process holds it) is converted at a later
/// open; the failure is logged, never fatal.
pub fn make_incremental(conn: &Connection, path: &Path) {
    let mode = conn.pragma_query_value(None, "auto_vacuum", |r| r.get::<_, i64>(0)).unwrap_or(INCREMENTAL);
    if mode == INCREMENTAL {
        return;
    }
    let tables: i64 = conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0)).unwrap_or(1);
    let r = conn.pragma_update(None, "auto_vacuum", INCREMENTAL).and_then(|()| {
        if tables > 0 {
            tracing::info!("converting {} to incremental vacuum (once)", path.display());
            conn.execute_batch("VACUUM;")
        } else {
            Ok(())
        }
    });
    if let Err(e) = r {
        tracing::warn!("cannot convert {} to incremental vacuum yet: {e}", path.display());
    }
}

/// Pages free inside the store (space a [`reclaim`] would give back).
pub fn free_pages(conn: &Connection) -> Result<i64> {
    Ok(conn.pragma_query_value(None, "freelist_count", |r| r.get(0))?)
}

/// One step of [`reclaim`]: give back up to [`STEP_PAGES`] free pages; returns the free
/// pages before and after.
fn step(c: &Connection) -> Result<(i64, i64)> {
    let before = free_pages(c)?;
    if before > 0 {
        // The pragma gives back one page per row it returns: read them all (a single step,
        // as `execute_batch` does, gave back one page).
        let mut st = c.prepare_cached(&format!("PRAGMA incremental_vacuum({STEP_PAGES})"))?;
        let mut rows = st.query([])?;
        while rows.next()?.is_some() {}
    }
    Ok((before, free_pages(c)?))
}

/// Give the store's free pages back to the disk, [`STEP_PAGES`] at a time with a short
/// pause between steps; returns the bytes given back.
pub fn reclaim(store: &crate::store::Store) -> Result<u64> {
    let mut freed = 0u64;
    let page: i64 = store.with(|c| Ok(c.pragma_query_value(None, "page_size", |r| r.get(0))?))?;
    loop {
        let (before, after) = store.with(|c| step(c))?;
        freed += ((before - after).max(0) * page) as u64;
        if after == 0 || after >= before {
            return Ok(freed);
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_store_is_incremental_from_its_first_open() {
        let d = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open(&d.path().join("hal0.db")).unwrap();
        let mode = store.with(|c| Ok(c.pragma_query_value(None, "auto_vacuum", |r| r.get::<_, i64>(0))?)).unwrap();
        assert_eq!(mode, INCREMENTAL);
    }

    #[test]
    fn a_step_gives_back_up_to_step_pages() {
        let d = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open(&d.path().join("hal0.db")).unwrap();
        let (before, after) = store
            .with(|c| {
                c.execute_batch(
                    "CREATE TABLE filler (x BLOB);
                     WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1500)
                     INSERT INTO filler SELECT zeroblob(4000) FROM n;
                     DELETE FROM filler;",
                )?;
                step(c)
            })
            .unwrap();
        assert!(before > STEP_PAGES, "{before} free pages");
        assert_eq!(after, before - STEP_PAGES);
        assert_eq!(reclaim(&store).unwrap() as i64, after * 4096);
        assert_eq!(store.with(|c| free_pages(c)).unwrap(), 0);
    }
}
