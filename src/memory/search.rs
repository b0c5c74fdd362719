//! Search and recall over the in-memory [`Index`]: keeping the index level with the rows
//! (built on first use, then the `memory_changes` log applied before each query), asking it
//! for the best candidates, and reading those back from their rows under the caller's
//! filters (datasets, state, tags, time, types), best first. A candidate whose row no
//! longer passes (deleted, invalidated, filtered out) is skipped, and the index is asked
//! for more until `limit` hits are found or there are no more.

use super::index::{Doc, Index};
use super::{Filter, Hit, MemoryEngine, Recall, Recalled, estimate_tokens, input, marks, texts, words};
use crate::base::error::Result;
use rusqlite::types::Value as Sql;
use rusqlite::{Connection, params_from_iter};
use std::collections::{HashMap, HashSet};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// One store's index, shared by every engine on that store in this process.
pub type SharedIndex = RwLock<Index>;

/// Candidates re-read from their rows per SQL statement.
const CHUNK: usize = 500;

fn read(s: &SharedIndex) -> RwLockReadGuard<'_, Index> {
    s.read().unwrap_or_else(|p| p.into_inner())
}

/// A poisoned index (a panic mid-update) is rebuilt from the rows.
fn write(s: &SharedIndex) -> RwLockWriteGuard<'_, Index> {
    s.write().unwrap_or_else(|p| {
        let mut g = p.into_inner();
        g.built = false;
        g
    })
}

/// The oldest and newest `memory_changes` ids (0 when the log is empty).
fn log_bounds(c: &Connection) -> rusqlite::Result<(i64, i64)> {
    c.prepare_cached("SELECT (SELECT min(id) FROM memory_changes), (SELECT max(id) FROM memory_changes)")?
        .query_row([], |r| Ok((r.get::<_, Option<i64>>(0)?.unwrap_or(0), r.get::<_, Option<i64>>(1)?.unwrap_or(0))))
}

/// Index every active note of `c` (one read snapshot) from scratch.
fn rebuild(ix: &mut Index, c: &mut Connection) -> Result<()> {
    let tx = c.transaction()?;
    let (_, hi) = log_bounds(&tx)?;
    ix.clear();
    {
        let mut st =
            tx.prepare("SELECT seq, dataset, text, context FROM memory_notes WHERE state = 'active' ORDER BY seq")?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let (dataset, text, context): (String, String, Option<String>) = (r.get(1)?, r.get(2)?, r.get(3)?);
            ix.insert(&Doc { seq: r.get(0)?, dataset: &dataset, text: &text, context: context.as_deref() });
        }
    }
    ix.watermark = hi;
    ix.built = true;
    Ok(())
}

/// Apply the changes logged after `ix.watermark` (one read snapshot).
fn catch_up(ix: &mut Index, c: &mut Connection) -> Result<()> {
    let tx = c.transaction()?;
    let changes: Vec<(i64, i64)> = {
        let mut st = tx.prepare_cached("SELECT id, seq FROM memory_changes WHERE id > ?1 ORDER BY id")?;
        st.query_map([ix.watermark], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?
    };
    let Some(&(last, _)) = changes.last() else { return Ok(()) };
    let mut seqs: Vec<i64> = changes.into_iter().map(|(_, s)| s).collect();
    seqs.sort_unstable();
    seqs.dedup();
    for chunk in seqs.chunks(CHUNK) {
        for &s in chunk {
            ix.remove(s);
        }
        let sql = format!(
            "SELECT seq, dataset, text, context FROM memory_notes WHERE state = 'active' AND seq IN ({}) ORDER BY seq",
            marks(chunk.len())
        );
        let mut st = tx.prepare_cached(&sql)?;
        let mut rows = st.query(params_from_iter(chunk.iter()))?;
        while let Some(r) = rows.next()? {
            let (dataset, text, context): (String, String, Option<String>) = (r.get(1)?, r.get(2)?, r.get(3)?);
            ix.insert(&Doc { seq: r.get(0)?, dataset: &dataset, text: &text, context: context.as_deref() });
        }
    }
    ix.watermark = last;
    Ok(())
}

impl MemoryEngine {
    fn shared_index(&self) -> &SharedIndex {
        &self.index
    }

    /// The index, level with the rows: built on first use, rebuilt when it fell behind the
    /// kept log (or the log went backwards), else the logged changes applied.
    fn synced_index(&self) -> Result<RwLockReadGuard<'_, Index>> {
        let shared = self.shared_index();
        let (lo, hi) = self.store.with(|c| Ok(log_bounds(c)?))?;
        {
            let g = read(shared);
            if g.built && g.watermark == hi {
                return Ok(g);
            }
        }
        {
            let mut g = write(shared);
            self.store.with(|c| {
                if !g.built || g.watermark > hi || g.watermark < lo - 1 {
                    rebuild(&mut g, c)
                } else if g.watermark < hi {
                    catch_up(&mut g, c)
                } else {
                    Ok(())
                }
            })?;
        }
        Ok(read(shared))
    }

    /// Index notes this process just wrote, whose change-log rows are exactly
    /// `(logged.0, logged.1]`, when the index stood at `logged.0`: it then stands at
    /// `logged.1` without reading them back. Otherwise leave it to the next catch-up.
    pub(crate) fn feed_index<'a>(&self, logged: (i64, i64), notes: impl Iterator<Item = (i64, &'a super::Note)>) {
        let mut g = write(self.shared_index());
        if !g.built || g.watermark != logged.0 {
            return;
        }
        for (seq, n) in notes {
            g.insert(&Doc { seq, dataset: &n.dataset, text: &n.text, context: n.context.as_deref() });
        }
        g.watermark = logged.1;
    }

    /// Build the search index now (the daemon does at start, so no search waits for it).
    /// Returns the notes indexed.
    pub fn warm_index(&self) -> Result<usize> {
        Ok(self.synced_index()?.len())
    }

    /// Throw the index away and build it again from the rows. Returns the notes indexed.
    pub fn rebuild_index(&self) -> Result<usize> {
        let mut g = write(self.shared_index());
        self.store.with(|c| rebuild(&mut g, c))?;
        Ok(g.len())
    }

    fn filter_sql(f: &Filter, p: &mut Vec<Sql>) -> Result<String> {
        let mut w = format!("n.state = 'active' AND n.dataset IN ({})", marks(f.datasets.len()));
        p.extend(texts(&f.datasets));
        let tags = input::tags(&f.tags)?;
        if !tags.is_empty() {
            w.push_str(&format!(
                " AND n.seq IN (SELECT seq FROM memory_note_tags WHERE tag IN ({}))",
                marks(tags.len())
            ));
            p.extend(texts(&tags));
        }
        if let Some(b) = &f.before {
            w.push_str(" AND n.timestamp < ?");
            p.push(Sql::Text(input::time(b, "before")?));
        }
        if let Some(a) = &f.after {
            w.push_str(" AND n.timestamp >= ?");
            p.push(Sql::Text(input::time(a, "after")?));
        }
        if !f.types.is_empty() {
            let types =
                f.types.iter().map(|t| input::one_of(t, input::FACT_TYPES, "types")).collect::<Result<Vec<_>>>()?;
            w.push_str(&format!(" AND n.fact_type IN ({})", marks(types.len())));
            p.extend(texts(&types));
        }
        Ok(w)
    }

    /// Active notes matching `query` (plain words; see [`words`]) ranked by bm25, best
    /// first. A query without any word finds nothing.
    pub fn search(&self, query: &str, f: &Filter, limit: usize) -> Result<Vec<Hit>> {
        let mut p: Vec<Sql> = Vec::new();
        let w = Self::filter_sql(f, &mut p)?;
        let terms = words::query_terms(query);
        if terms.is_empty() || f.datasets.is_empty() || limit == 0 {
            return Ok(vec![]);
        }
        // Without filters beyond the datasets (which the index applies itself) nearly every
        // candidate passes; with them, ask for more at once.
        let plain = f.tags.is_empty() && f.before.is_none() && f.after.is_none() && f.types.is_empty();
        let mut want = if plain { limit + 8 } else { limit.saturating_mul(8).max(100) };
        loop {
            let top = self.synced_index()?.top(&terms, &f.datasets, want);
            let exhausted = top.len() < want;
            let passing = self.passing(&top, &w, &p)?;
            let chosen: Vec<(i64, f64)> = top.into_iter().filter(|(s, _)| passing.contains(s)).take(limit).collect();
            if chosen.len() >= limit || exhausted {
                return self.hits(&chosen);
            }
            want = want.saturating_mul(8);
        }
    }

    /// The `seq`s among `top` whose rows pass the filter `w` (params `p`).
    fn passing(&self, top: &[(i64, f64)], w: &str, p: &[Sql]) -> Result<HashSet<i64>> {
        let mut out = HashSet::with_capacity(top.len());
        self.store.with(|c| {
            for chunk in top.chunks(CHUNK) {
                let sql = format!("SELECT n.seq FROM memory_notes n WHERE n.seq IN ({}) AND {w}", marks(chunk.len()));
                let mut args: Vec<Sql> = chunk.iter().map(|(s, _)| Sql::Integer(*s)).collect();
                args.extend(p.iter().cloned());
                let mut st = c.prepare_cached(&sql)?;
                let mut rows = st.query(params_from_iter(args.iter()))?;
                while let Some(r) = rows.next()? {
                    out.insert(r.get(0)?);
                }
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// The rows of `chosen`, in its order, with their scores.
    fn hits(&self, chosen: &[(i64, f64)]) -> Result<Vec<Hit>> {
        let seqs: Vec<i64> = chosen.iter().map(|(s, _)| *s).collect();
        let mut notes: HashMap<i64, super::Note> = HashMap::with_capacity(seqs.len());
        for chunk in seqs.chunks(CHUNK) {
            notes.extend(self.by_seqs_keyed(chunk)?);
        }
        Ok(chosen
            .iter()
            .filter_map(|(s, score)| notes.remove(s).map(|note| Hit { note, score: (score * 1e6).round() / 1e6 }))
            .collect())
    }

    /// The best notes for `query` packed into about `max_tokens` tokens (four characters a
    /// token), identical texts once. A first note larger than the whole budget is cut.
    pub fn recall(&self, query: &str, f: &Filter, max_tokens: usize) -> Result<Recall> {
        let hits = self.search(query, f, 200)?;
        let mut results: Vec<Recalled> = Vec::new();
        let mut used = 0usize;
        for mut h in hits {
            if used >= max_tokens {
                break;
            }
            if results.iter().any(|r| r.hit.note.text == h.note.text) {
                continue;
            }
            let cost = estimate_tokens(&h.note.text);
            if used + cost <= max_tokens {
                used += cost;
                results.push(Recalled { hit: h, tokens: cost, truncated: false });
            } else if results.is_empty() {
                let keep = max_tokens.saturating_mul(4);
                h.note.text = h.note.text.chars().take(keep).collect();
                let cost = estimate_tokens(&h.note.text);
                used += cost;
                results.push(Recalled { hit: h, tokens: cost, truncated: true });
            }
        }
        Ok(Recall { results, token_estimate: used, max_tokens })
    }
}
