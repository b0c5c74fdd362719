//! The operations log (`retain` for each add, `consolidation` for each consolidation
//! pass) and the consolidation pass itself. The embedded engine does its work inside the
//! call, so an operation is recorded already `completed` (or `failed`): cancel only
//! applies to `pending`/`processing` work and retry only to `failed` work, and say so
//! otherwise.

use super::{MemoryEngine, Who, changeable_sql, history_row, input, marks, not_found, visible_sql};
use crate::base::error::{Error, Result};
use crate::store::now;
use rusqlite::types::Value as Sql;
use rusqlite::{OptionalExtension, params, params_from_iter};
use serde::Serialize;
use serde_json::{Value, json};

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Operation {
    pub id: String,
    /// `retain` or `consolidation`.
    pub kind: String,
    /// `pending`, `processing`, `completed`, `failed` or `cancelled`.
    pub status: String,
    pub client: String,
    pub dataset: Option<String>,
    pub note_id: Option<String>,
    pub request: Value,
    pub result: Option<Value>,
    pub error: Option<String>,
    pub attempts: i64,
    pub created_at: String,
    pub updated_at: String,
}

pub const STATUSES: &[&str] = &["pending", "processing", "completed", "failed", "cancelled"];
pub const KINDS: &[&str] = &["retain", "consolidation"];

const COLS: &str =
    "id, kind, status, client, dataset, note_id, request, result, error, attempts, created_at, updated_at";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Operation> {
    let request: String = r.get(6)?;
    let result: Option<String> = r.get(7)?;
    Ok(Operation {
        id: r.get(0)?,
        kind: r.get(1)?,
        status: r.get(2)?,
        client: r.get(3)?,
        dataset: r.get(4)?,
        note_id: r.get(5)?,
        request: serde_json::from_str(&request).unwrap_or(Value::Null),
        result: result.and_then(|s| serde_json::from_str(&s).ok()),
        error: r.get(8)?,
        attempts: r.get(9)?,
        created_at: r.get(10)?,
        updated_at: r.get(11)?,
    })
}

/// The result of a consolidation pass.
#[derive(Debug, Clone, Serialize)]
pub struct Consolidated {
    pub operation_id: String,
    /// Duplicate notes invalidated (their tags merged into the note kept).
    pub deduplicated: usize,
}

impl MemoryEngine {
    /// Operations `who` may see (bank-level ones and those on visible datasets), newest
    /// first.
    pub fn operation_list(
        &self,
        who: &Who,
        status: Option<&str>,
        kind: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Operation>> {
        let status = status.map(|s| input::one_of(s, STATUSES, "status")).transpose()?;
        let kind = kind.map(|k| input::one_of(k, KINDS, "kind")).transpose()?;
        let mut p = Vec::new();
        let vis = visible_sql("dataset", who, &mut p);
        for v in [status, kind] {
            let v = v.map(Sql::Text).unwrap_or(Sql::Null);
            p.extend([v.clone(), v]);
        }
        p.push(Sql::Integer(limit as i64));
        self.store.with(|c| {
            let mut st = c.prepare(&format!(
                "SELECT {COLS} FROM memory_operations WHERE (dataset IS NULL OR {vis})
                 AND (? IS NULL OR status = ?) AND (? IS NULL OR kind = ?)
                 ORDER BY created_at DESC, rowid DESC LIMIT ?"
            ))?;
            let rows = st.query_map(params_from_iter(p.iter()), row)?.collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    pub fn operation_get(&self, who: &Who, id: &str) -> Result<Operation> {
        let id = input::id(id, "id")?;
        self.store
            .with(|c| {
                Ok(c.query_row(&format!("SELECT {COLS} FROM memory_operations WHERE id = ?1"), [&id], row)
                    .optional()?)
            })?
            .filter(|o| o.dataset.as_deref().is_none_or(|d| who.can_see(d)))
            .ok_or_else(|| not_found("operation", &id))
    }

    /// Abort pending or processing work. Finished work is refused with its state.
    pub fn operation_cancel(&self, who: &Who, id: &str) -> Result<Operation> {
        let op = self.operation_get(who, id)?;
        let n = self.write(|tx| {
            Ok(tx.execute(
                "UPDATE memory_operations SET status = 'cancelled', updated_at = ?1
                 WHERE id = ?2 AND status IN ('pending', 'processing')",
                params![now(), op.id],
            )?)
        })?;
        if n == 0 {
            return Err(Error::conflict(
                "memory.operation_finished",
                format!(
                    "operation `{}` is already {}; only pending or processing work can be cancelled",
                    op.id, op.status
                ),
            ));
        }
        self.operation_get(who, &op.id)
    }

    /// Run failed work again (a failed consolidation pass). Anything else is refused with
    /// its state.
    pub fn operation_retry(&self, who: &Who, id: &str) -> Result<Operation> {
        let op = self.operation_get(who, id)?;
        if op.status != "failed" {
            return Err(Error::conflict(
                "memory.operation_not_failed",
                format!("operation `{}` is {}; only failed operations can be retried", op.id, op.status),
            ));
        }
        match op.kind.as_str() {
            "consolidation" => {
                self.write(|tx| {
                    tx.execute(
                        "UPDATE memory_operations SET status = 'processing', attempts = attempts + 1, updated_at = ?1
                         WHERE id = ?2",
                        params![now(), op.id],
                    )?;
                    Ok(())
                })?;
                let dataset = op.request["dataset"].as_str().map(str::to_string);
                self.consolidate_into(who, dataset.as_deref(), &op.id)?;
            }
            other => {
                return Err(Error::conflict(
                    "memory.operation_not_retryable",
                    format!("a failed `{other}` operation cannot be retried; send the call again"),
                ));
            }
        }
        self.operation_get(who, &op.id)
    }

    /// Deduplicate identical active texts within each dataset `who` may see (or only
    /// `dataset`): the oldest note stays, the others are invalidated (kept in history) and
    /// their tags merged into it. Recorded as a `consolidation` operation.
    /// A bridge client's private dataset the admin key only reads is left out, and naming
    /// it is refused (`memory.private_forbidden`).
    pub fn consolidate(&self, who: &Who, dataset: Option<&str>) -> Result<Consolidated> {
        if dataset.is_some_and(|d| who.borrows(d)) {
            return Err(who.no_writes_over());
        }
        let id = input::new_id("op")?;
        let at = now();
        let request = json!({"dataset": dataset});
        self.write(|tx| {
            tx.execute(
                "INSERT INTO memory_operations (id, kind, status, client, dataset, request, created_at, updated_at)
                 VALUES (?1, 'consolidation', 'processing', ?2, ?3, ?4, ?5, ?5)",
                params![id, who.identity, dataset, request.to_string(), at],
            )?;
            Ok(())
        })?;
        self.consolidate_into(who, dataset, &id)
    }

    /// Run a consolidation pass recorded as operation `op_id`, and record its outcome.
    fn consolidate_into(&self, who: &Who, dataset: Option<&str>, op_id: &str) -> Result<Consolidated> {
        let run = self.write(|tx| {
            if dataset.is_some_and(|d| who.borrows(d)) {
                return Err(who.no_writes_over());
            }
            let mut p = Vec::new();
            let mut scope = changeable_sql("dataset", who, &mut p);
            if let Some(d) = dataset {
                scope.push_str(" AND dataset = ?");
                p.push(Sql::Text(d.to_string()));
            }
            let groups: Vec<String> = {
                let mut st = tx.prepare(&format!(
                    "SELECT group_concat(seq) FROM memory_notes WHERE state = 'active' AND {scope}
                     GROUP BY dataset, text_sha HAVING count(*) > 1"
                ))?;
                st.query_map(params_from_iter(p.iter()), |r| r.get(0))?.collect::<rusqlite::Result<Vec<_>>>()?
            };
            let mut deduplicated = 0usize;
            for g in groups {
                let seqs: Vec<Sql> = g.split(',').filter_map(|s| s.parse().ok()).map(Sql::Integer).collect();
                let notes: Vec<(i64, String, String, String)> = {
                    let mut st = tx.prepare(&format!(
                        "SELECT seq, id, text, tags FROM memory_notes WHERE seq IN ({}) ORDER BY seq",
                        marks(seqs.len())
                    ))?;
                    st.query_map(params_from_iter(seqs.iter()), |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
                        .collect::<rusqlite::Result<Vec<_>>>()?
                };
                let mut kept: Vec<(i64, String, String, Vec<String>)> = Vec::new();
                for (seq, nid, text, tags) in notes {
                    let tags: Vec<String> = serde_json::from_str(&tags).unwrap_or_default();
                    match kept.iter_mut().find(|k| k.2 == text) {
                        None => kept.push((seq, nid, text, tags)),
                        Some(k) => {
                            tx.execute(
                                "UPDATE memory_notes SET state = 'invalidated', updated_at = ?1 WHERE seq = ?2",
                                params![now(), seq],
                            )?;
                            let ch =
                                json!({"state": {"before": "active", "after": "invalidated"}, "duplicate_of": k.1});
                            history_row(tx, seq, &who.actor(), "consolidated", &ch)?;
                            for t in tags {
                                if !k.3.contains(&t) {
                                    k.3.push(t.clone());
                                    tx.execute(
                                        "INSERT OR IGNORE INTO memory_note_tags (tag, seq) VALUES (?1, ?2)",
                                        params![t, k.0],
                                    )?;
                                }
                            }
                            tx.execute(
                                "UPDATE memory_notes SET tags = ?1 WHERE seq = ?2",
                                params![serde_json::to_string(&k.3).unwrap_or_default(), k.0],
                            )?;
                            deduplicated += 1;
                        }
                    }
                }
            }
            tx.execute(
                "UPDATE memory_operations SET status = 'completed', result = ?1, error = NULL, updated_at = ?2
                 WHERE id = ?3",
                params![json!({"deduplicated": deduplicated}).to_string(), now(), op_id],
            )?;
            Ok(deduplicated)
        });
        match run {
            Ok(deduplicated) => Ok(Consolidated { operation_id: op_id.to_string(), deduplicated }),
            Err(e) => {
                let _ = self.write(|tx| {
                    tx.execute(
                        "UPDATE memory_operations SET status = 'failed', error = ?1, updated_at = ?2
                         WHERE id = ?3",
                        params![e.message, now(), op_id],
                    )?;
                    Ok(())
                });
                Err(e)
            }
        }
    }
}
