//! Group commit for the audit log: one writer thread per store takes every entry submitted
//! while it was busy and stores them in a single transaction, then answers each submitter
//! with its row id. Under concurrent MCP calls this turns N commits into one; a lone call
//! waits no longer than a direct INSERT.

use crate::audit::{Prepared, insert};
use crate::error::{Error, Result};
use crate::store::Store;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Mutex, OnceLock};

type Job = (Prepared, tokio::sync::oneshot::Sender<Result<i64>>);

/// Most entries committed in one transaction.
const BATCH_MAX: usize = 256;

fn writers() -> &'static Mutex<HashMap<PathBuf, Sender<Job>>> {
    static W: OnceLock<Mutex<HashMap<PathBuf, Sender<Job>>>> = OnceLock::new();
    W.get_or_init(Default::default)
}

fn writer_for(store: &Store) -> Result<Sender<Job>> {
    let mut m = writers().lock().unwrap_or_else(|p| p.into_inner());
    if let Some(tx) = m.get(store.path()) {
        return Ok(tx.clone());
    }
    let (tx, rx) = channel::<Job>();
    let s = store.clone();
    std::thread::Builder::new()
        .name("hal0-audit".into())
        .spawn(move || run(s, rx))
        .map_err(|e| Error::internal(format!("cannot start the audit writer: {e}")))?;
    m.insert(store.path().to_path_buf(), tx.clone());
    Ok(tx)
}

fn run(store: Store, rx: Receiver<Job>) {
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        while batch.len() < BATCH_MAX {
            match rx.try_recv() {
                Ok(j) => batch.push(j),
                Err(_) => break,
            }
        }
        let ids = store.with(|c| {
            let tx = c.transaction()?;
            let ids = batch.iter().map(|(p, _)| insert(&tx, p)).collect::<Result<Vec<_>>>()?;
            tx.commit()?;
            Ok(ids)
        });
        match ids {
            Ok(ids) => {
                for ((_, reply), id) in batch.into_iter().zip(ids) {
                    let _ = reply.send(Ok(id));
                }
            }
            // The batch failed as a whole: store each alone, so one bad entry fails only itself.
            Err(_) => {
                for (p, reply) in batch {
                    let _ = reply.send(store.with(|c| insert(c, &p)));
                }
            }
        }
    }
}

/// Store `p` through the writer of `store`; resolves once it is committed.
pub(crate) async fn submit(store: &Store, p: Prepared) -> Result<i64> {
    let (reply, answer) = tokio::sync::oneshot::channel();
    writer_for(store)?.send((p, reply)).map_err(|_| Error::internal("the audit writer stopped"))?;
    answer.await.map_err(|_| Error::internal("the audit writer dropped an entry"))?
}

#[cfg(test)]
mod tests {
    use crate::audit::{Entry, Filter, list, record_async};
    use crate::store::Store;
    use serde_json::json;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_entries_are_all_stored_with_distinct_ids() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::open(&d.path().join("h.db")).unwrap();
        let mut tasks = Vec::new();
        for i in 0..200 {
            let s = s.clone();
            tasks.push(tokio::spawn(async move {
                let tool = format!("t{i}");
                let args = json!({"i": i, "token": "Bearer abcdefghijklmnop"});
                let e = Entry {
                    surface: "mcp:admin",
                    tool: &tool,
                    identity: "ci",
                    arguments: &args,
                    verdict: "ok",
                    result_code: None,
                    approval_id: None,
                    detail: None,
                };
                record_async(&s, &e).await.unwrap()
            }));
        }
        let mut ids = Vec::new();
        for t in tasks {
            ids.push(t.await.unwrap());
        }
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 200);
        let rows = list(&s, &Filter { limit: 0, ..Default::default() }).unwrap();
        assert_eq!(rows.len(), 200);
        assert!(rows.iter().all(|r| !r.arguments.to_string().contains("abcdefghijklmnop")), "redacted");
        // A bad entry fails alone.
        let empty = json!({});
        let bad = Entry {
            surface: "mcp:admin",
            tool: "t",
            identity: "ci",
            arguments: &empty,
            verdict: "nonsense",
            result_code: None,
            approval_id: None,
            detail: None,
        };
        assert_eq!(record_async(&s, &bad).await.unwrap_err().code, "audit.invalid_entry");
    }
}
