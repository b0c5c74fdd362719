//! Tests of the search index against real stores: another process's writes (a second
//! `Store` on the same file), a pruned change log, a store migrated from the FTS5 schema,
//! bulk adds, and filters applied after the index.

use super::*;
use crate::store::migrations::MIGRATIONS;

fn note(text: &str) -> NewNote {
    NewNote { text: text.into(), dataset: "shared".into(), ..NewNote::default() }
}

fn shared() -> Filter {
    Filter { datasets: vec!["shared".into()], ..Filter::default() }
}

fn found(e: &MemoryEngine, q: &str) -> Vec<String> {
    e.search(q, &shared(), 50).unwrap().into_iter().map(|h| h.note.text).collect()
}

/// Two stores on one file stand for two processes: each index follows the other's writes,
/// deletes and invalidations through the change log.
#[test]
fn an_index_follows_writes_from_another_process() {
    let d = tempfile::tempdir().unwrap();
    let a = MemoryEngine::new(Store::open(&d.path().join("m.db")).unwrap());
    let b = MemoryEngine::new(Store::open(&d.path().join("m.db")).unwrap());
    assert_eq!(b.warm_index().unwrap(), 0);
    let x = a.add("ws", note("the heron fishes at dawn")).unwrap().note;
    a.add("ws", note("a heron and an egret")).unwrap();
    assert_eq!(found(&b, "heron").len(), 2);
    a.curate(&Who::anonymous(), &x.id, Changes { text: Some("the crane fishes at dawn".into()), ..Changes::default() })
        .unwrap();
    assert_eq!(found(&b, "heron"), vec!["a heron and an egret"]);
    assert_eq!(found(&b, "crane"), vec!["the crane fishes at dawn"]);
    a.curate(&Who::anonymous(), &x.id, Changes { state: Some("invalidated".into()), ..Changes::default() }).unwrap();
    assert!(found(&b, "crane").is_empty());
    a.curate(&Who::anonymous(), &x.id, Changes { state: Some("active".into()), ..Changes::default() }).unwrap();
    assert_eq!(found(&b, "crane").len(), 1);
    a.delete(std::slice::from_ref(&x.id)).unwrap();
    assert!(found(&b, "crane").is_empty());
}

/// An index further behind than the kept log rebuilds from the rows.
#[test]
fn a_pruned_change_log_makes_a_lagging_index_rebuild() {
    let d = tempfile::tempdir().unwrap();
    let a = MemoryEngine::new(Store::open(&d.path().join("m.db")).unwrap());
    let b = MemoryEngine::new(Store::open(&d.path().join("m.db")).unwrap());
    a.add("ws", note("first otter")).unwrap();
    assert_eq!(b.warm_index().unwrap(), 1);
    a.add("ws", note("second otter")).unwrap();
    a.add("ws", note("third otter")).unwrap();
    // Pruned as `add` prunes (the oldest first), down to the last entry: `b` never read
    // the one for "second otter".
    a.store
        .with(|c| Ok(c.execute("DELETE FROM memory_changes WHERE id < (SELECT max(id) FROM memory_changes)", [])?))
        .unwrap();
    assert_eq!(found(&b, "otter").len(), 3);
}

/// A store written by the FTS5 engine (schema 6) migrates, and its notes are found.
#[test]
fn a_store_from_the_fts5_schema_migrates_and_is_searchable() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("m.db");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        for (i, m) in MIGRATIONS[..6].iter().enumerate() {
            c.execute_batch(&format!("{m} PRAGMA user_version = {};", i + 1)).unwrap();
        }
        c.execute(
            "INSERT INTO memory_notes (id, dataset, text, text_sha, source, created_by, timestamp, created_at, updated_at)
             VALUES ('mem_old', 'shared', 'an old note about lighthouses', 'x', 'ws', 'ws', ?1, ?1, ?1)",
            [crate::store::now()],
        )
        .unwrap();
        let n: i64 = c
            .query_row("SELECT count(*) FROM memory_fts WHERE memory_fts MATCH 'lighthouses'", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1);
    }
    let e = MemoryEngine::new(Store::open(&path).unwrap());
    assert_eq!(found(&e, "lighthouse"), vec!["an old note about lighthouses"]);
    let fts: i64 = e
        .store
        .with(|c| Ok(c.query_row("SELECT count(*) FROM sqlite_master WHERE name = 'memory_fts'", [], |r| r.get(0))?))
        .unwrap();
    assert_eq!(fts, 0, "the FTS5 table is gone");
}

/// `add_many`: one transaction and one operation, dedup and upserts as in `add`, every
/// item checked before anything is stored.
#[test]
fn add_many_stores_checks_and_dedups() {
    let d = tempfile::tempdir().unwrap();
    let e = MemoryEngine::new(Store::open(&d.path().join("m.db")).unwrap());
    let doc = |t: &str| NewNote { document_id: Some("faq".into()), ..note(t) };
    let added =
        e.add_many("ws", vec![note("alpha beetle"), note("alpha beetle"), doc("v1 gecko"), doc("v2 gecko")]).unwrap();
    assert_eq!(added.len(), 4);
    assert_eq!(added[0].note.id, added[1].note.id, "the same text once");
    assert_eq!((added[0].facts_extracted, added[1].facts_extracted), (1, 0));
    assert_eq!(added[2].note.id, added[3].note.id);
    assert!(added[3].upserted);
    assert_eq!(added[3].note.text, "v2 gecko");
    assert!(added.iter().all(|a| a.operation_id == added[0].operation_id));
    assert_eq!(found(&e, "gecko"), vec!["v2 gecko"]);
    let err = e.add_many("ws", vec![note("fine"), NewNote { dataset: "nope".into(), ..note("x") }]).unwrap_err();
    assert_eq!(err.code, SCHEMA);
    assert!(err.message.starts_with("items[1]"), "{}", err.message);
    assert!(found(&e, "fine").is_empty(), "nothing of a refused call is stored");
    assert_eq!(e.add_many("ws", vec![]).unwrap_err().code, SCHEMA);
}

/// Tag and time filters run on the rows after the index: a match ranked far down still
/// comes back when the filter leaves only it.
#[test]
fn selective_filters_reach_deep_candidates() {
    let d = tempfile::tempdir().unwrap();
    let e = MemoryEngine::new(Store::open(&d.path().join("m.db")).unwrap());
    let mut many: Vec<NewNote> = (0..900).map(|i| note(&format!("badger badger badger {i}"))).collect();
    many.push(NewNote { tags: vec!["rare".into()], ..note("one badger among a great many other words here") });
    e.add_many("ws", many).unwrap();
    let f = Filter { tags: vec!["rare".into()], ..shared() };
    let hits = e.search("badger", &f, 10).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].note.tags, vec!["rare"]);
    let future = Filter { after: Some("2999-01-01".into()), ..shared() };
    assert!(e.search("badger", &future, 10).unwrap().is_empty());
}
