//! Unit tests of the engine against a real store in a temp dir.

use super::directives::{DirectiveChanges, NewDirective};
use super::gate::DatasetArg;
use super::*;

fn engine() -> (tempfile::TempDir, MemoryEngine) {
    let d = tempfile::tempdir().unwrap();
    let s = Store::open(&d.path().join("m.db")).unwrap();
    (d, MemoryEngine::new(s))
}

fn note(text: &str, dataset: &str) -> NewNote {
    NewNote { text: text.into(), dataset: dataset.into(), ..NewNote::default() }
}

fn shared() -> Filter {
    Filter { datasets: vec!["shared".into()], ..Filter::default() }
}

fn v(xs: &[&str]) -> Vec<String> {
    xs.iter().map(|s| s.to_string()).collect()
}

#[test]
fn add_records_a_retain_and_known_text_learns_nothing() {
    let (_d, e) = engine();
    let a =
        e.add("ws", NewNote { tags: v(&["Rust", "rust ", "db"]), ..note("  SQLite has FTS5  ", "shared") }).unwrap();
    assert!(a.note.id.starts_with("mem_") && a.note.id.len() == 20);
    assert_eq!(a.note.text, "SQLite has FTS5");
    assert_eq!(a.note.tags, v(&["rust", "db"]));
    assert_eq!(a.note.source, "ws");
    assert_eq!(a.facts_extracted, 1);
    let who = Who::new("ws", false);
    let op = e.operation_get(&who, &a.operation_id).unwrap();
    assert_eq!((op.kind.as_str(), op.status.as_str()), ("retain", "completed"));
    assert_eq!(op.result.unwrap()["facts_extracted"], 1);

    let again = e.add("other", note("SQLite has FTS5", "shared")).unwrap();
    assert_eq!(again.note.id, a.note.id);
    assert_eq!(again.facts_extracted, 0);
    let r = e.operation_get(&who, &again.operation_id).unwrap().result.unwrap();
    assert_eq!(r["nothing_learned"], true);
    assert_eq!(r["notice"], ALREADY_KNOWN);
    // Another dataset is another memory.
    assert_ne!(e.add("ws", note("SQLite has FTS5", "agents")).unwrap().note.id, a.note.id);
}

#[test]
fn document_id_upserts_one_logical_document() {
    let (_d, e) = engine();
    let doc = |t: &str| NewNote { document_id: Some("readme".into()), ..note(t, "shared") };
    let a = e.add("ws", doc("version one")).unwrap();
    let b = e.add("ci", doc("version two")).unwrap();
    assert_eq!(a.note.id, b.note.id);
    assert!(b.upserted);
    assert_eq!(b.note.text, "version two");
    assert_eq!(b.note.source, "ci");
    let c = e.add("ci", doc("version two")).unwrap();
    assert_eq!(c.facts_extracted, 0);
    let r = e.operation_get(&Who::anonymous(), &c.operation_id).unwrap().result.unwrap();
    assert_eq!(r["document_fact_count"], 1);
    assert!(e.search("one", &shared(), 10).unwrap().is_empty(), "the old text left the index");
    assert_eq!(e.search("two", &shared(), 10).unwrap().len(), 1);
    let (_, h) = e.history(&Who::anonymous(), &a.note.id).unwrap();
    assert_eq!(h[0].action, "created");
    assert_eq!(h[0].actor, "ws");
    assert_eq!(h[1].action, "upserted");
    assert_eq!(h[1].changes["text"]["before"], "version one");
    assert!(e.add("ws", NewNote { document_id: Some("a/b".into()), ..note("x", "shared") }).is_err());
}

#[test]
fn search_ranks_with_bm25_and_filters() {
    let (_d, e) = engine();
    e.add("ws", NewNote { tags: v(&["pets"]), ..note("the fox jumped over the lazy dog", "shared") }).unwrap();
    e.add("ws", note("a fox, a fox, foxes everywhere", "shared")).unwrap();
    e.add("ws", note("cats sleep all day", "shared")).unwrap();
    e.add("ws", note("fox in another dataset", "agents")).unwrap();
    let hits = e.search("foxes", &shared(), 10).unwrap();
    assert_eq!(hits.len(), 2);
    assert!(hits[0].note.text.starts_with("a fox"), "more occurrences rank first");
    assert!(hits[0].score > hits[1].score && hits[1].score > 0.0);
    let tagged = Filter { tags: v(&["PETS"]), ..shared() };
    assert_eq!(e.search("fox", &tagged, 10).unwrap().len(), 1);
    let both = Filter { datasets: v(&["shared", "agents"]), ..Filter::default() };
    assert_eq!(e.search("fox", &both, 10).unwrap().len(), 3);
    assert_eq!(e.search("fox", &both, 1).unwrap().len(), 1);
    let future = Filter { after: Some("2999-01-01".into()), ..shared() };
    assert!(e.search("fox", &future, 10).unwrap().is_empty());
    let past = Filter { before: Some("2000-01-01T00:00:00Z".into()), ..shared() };
    assert!(e.search("fox", &past, 10).unwrap().is_empty());
    let window = Filter { after: Some("2000-01-01".into()), before: Some("2999-01-01".into()), ..shared() };
    assert_eq!(e.search("fox", &window, 10).unwrap().len(), 2);
    assert!(e.search("fox", &Filter { before: Some("soon".into()), ..shared() }, 10).is_err());
    assert!(e.search("fox", &Filter::default(), 10).unwrap().is_empty(), "no dataset, no hit");
}

#[test]
fn hostile_queries_search_as_plain_words() {
    let (_d, e) = engine();
    e.add("ws", note("NEAR the river, a:b and x-ray (with parens) \"quoted\"", "shared")).unwrap();
    for q in ["\"", "*", "NEAR(", "NEAR(a b, 2)", "a:b", "-x", "((river", "river)", "AND OR NOT", "text:river", "^", ""]
    {
        let r = e.search(q, &shared(), 10);
        assert!(r.is_ok(), "{q:?}: {r:?}");
    }
    assert_eq!(e.search("NEAR(", &shared(), 10).unwrap().len(), 1);
    assert_eq!(e.search("-x", &shared(), 10).unwrap().len(), 1);
    assert_eq!(e.search("\"quoted", &shared(), 10).unwrap().len(), 1);
}

#[test]
fn recall_packs_hits_into_the_token_budget() {
    let (_d, e) = engine();
    for i in 0..10 {
        e.add("ws", note(&format!("budget note {i} {}", "word ".repeat(20)), "shared")).unwrap();
    }
    let r = e.recall("budget", &shared(), 60).unwrap();
    assert!(!r.results.is_empty());
    assert!(r.token_estimate <= 60, "{}", r.token_estimate);
    assert_eq!(r.results.iter().map(|x| x.tokens).sum::<usize>(), r.token_estimate);
    let all = e.recall("budget", &shared(), 32768).unwrap();
    assert_eq!(all.results.len(), 10);
    let tiny = e.recall("budget", &shared(), 1).unwrap();
    assert_eq!(tiny.results.len(), 1);
    assert!(tiny.results[0].truncated);
    assert_eq!(tiny.results[0].hit.note.text.chars().count(), 4);
}

#[test]
fn list_pages_are_stable() {
    let (_d, e) = engine();
    for i in 0..7 {
        e.add("ws", note(&format!("note {i}"), "shared")).unwrap();
    }
    let p1 = e.list(&v(&["shared"]), None, 3).unwrap();
    assert_eq!(p1.items.iter().map(|n| n.text.as_str()).collect::<Vec<_>>(), ["note 6", "note 5", "note 4"]);
    e.add("ws", note("newer", "shared")).unwrap();
    let p2 = e.list(&v(&["shared"]), p1.next_cursor.as_deref(), 3).unwrap();
    assert_eq!(p2.items.iter().map(|n| n.text.as_str()).collect::<Vec<_>>(), ["note 3", "note 2", "note 1"]);
    let p3 = e.list(&v(&["shared"]), p2.next_cursor.as_deref(), 3).unwrap();
    assert_eq!(p3.items.len(), 1);
    assert_eq!(p3.next_cursor, None);
    assert_eq!(e.list(&v(&["shared"]), Some("bogus"), 3).unwrap_err().code, SCHEMA);
    assert_eq!(e.list(&v(&["shared"]), Some("c00"), 3).unwrap_err().code, SCHEMA);
}

#[test]
fn curate_keeps_history_and_invalidation_hides() {
    let (_d, e) = engine();
    let who = Who::new("ed", false);
    let a = e.add("ws", note("the meeting is on monday", "shared")).unwrap().note;
    assert_eq!(e.curate(&who, &a.id, Changes::default()).unwrap_err().code, SCHEMA);
    let c = e
        .curate(
            &who,
            &a.id,
            Changes {
                text: Some("the meeting is on tuesday".into()),
                context: Some("team calendar".into()),
                fact_type: Some("experience".into()),
                entities: Some(v(&["team", "team", "meeting"])),
                occurred_start: Some("2025-03-04".into()),
                ..Changes::default()
            },
        )
        .unwrap();
    assert_eq!(c.note.text, "the meeting is on tuesday");
    assert_eq!(c.note.entities, v(&["team", "meeting"]));
    assert_eq!(c.note.occurred_start.as_deref(), Some("2025-03-04T00:00:00Z"));
    assert_eq!(c.changed.len(), 5);
    assert_eq!(e.search("calendar", &shared(), 10).unwrap().len(), 1, "context is searchable");
    assert!(e.search("monday", &shared(), 10).unwrap().is_empty());
    let same = e.curate(&who, &a.id, Changes { fact_type: Some("experience".into()), ..Changes::default() }).unwrap();
    assert!(same.changed.is_empty(), "no change, no history row");
    assert!(e.curate(&who, &a.id, Changes { state: Some("gone".into()), ..Changes::default() }).is_err());
    assert!(e.curate(&who, &a.id, Changes { fact_type: Some("guess".into()), ..Changes::default() }).is_err());
    assert!(e.curate(&who, &a.id, Changes { occurred_end: Some("2000-01-01".into()), ..Changes::default() }).is_err());

    e.curate(&who, &a.id, Changes { state: Some("invalidated".into()), ..Changes::default() }).unwrap();
    assert!(e.search("tuesday", &shared(), 10).unwrap().is_empty());
    assert!(e.recall("tuesday", &shared(), 100).unwrap().results.is_empty());
    assert!(e.list(&v(&["shared"]), None, 10).unwrap().items.is_empty());
    let (n, h) = e.history(&who, &a.id).unwrap();
    assert_eq!(n.state, "invalidated");
    assert_eq!(h.iter().map(|x| x.action.as_str()).collect::<Vec<_>>(), ["created", "curated", "curated"]);
    assert_eq!(h[1].actor, "ed");
    assert_eq!(h[1].changes["text"]["before"], "the meeting is on monday");
    assert_eq!(h[2].changes["state"]["after"], "invalidated");
    // Active again: visible again.
    e.curate(&who, &a.id, Changes { state: Some("active".into()), ..Changes::default() }).unwrap();
    assert_eq!(e.search("tuesday", &shared(), 10).unwrap().len(), 1);
}

#[test]
fn private_notes_are_invisible_to_others() {
    let (_d, e) = engine();
    let a = e.add("a", note("secret plan", "private:a")).unwrap().note;
    let b = Who::new("b", false);
    assert_eq!(e.get(&b, &a.id).unwrap_err().code, NOT_FOUND);
    assert_eq!(e.history(&b, &a.id).unwrap_err().code, NOT_FOUND);
    assert!(e.curate(&b, &a.id, Changes { state: Some("invalidated".into()), ..Changes::default() }).is_err());
    assert!(matches!(e.delete_request(&b, &v(&[&a.id]), DatasetArg::None), Err(x) if x.code == NOT_FOUND));
    assert!(e.get(&Who::new("a", false), &a.id).is_ok());
    let stats = e.bank_stats(&b).unwrap();
    assert_eq!(stats["notes"], 0);
    assert_eq!(e.bank_stats(&Who::new("a", false)).unwrap()["datasets"]["private:a"]["active"], 1);
}

#[test]
fn tags_list_counts_active_notes() {
    let (_d, e) = engine();
    e.add("ws", NewNote { tags: v(&["a", "b"]), ..note("one", "shared") }).unwrap();
    let two = e.add("ws", NewNote { tags: v(&["a"]), ..note("two", "shared") }).unwrap().note;
    e.add("ws", NewNote { tags: v(&["z"]), ..note("three", "agents") }).unwrap();
    let t = e.tags_list(&v(&["shared"])).unwrap();
    assert_eq!(t.iter().map(|x| (x.tag.as_str(), x.count)).collect::<Vec<_>>(), [("a", 2), ("b", 1)]);
    e.curate(&Who::anonymous(), &two.id, Changes { state: Some("invalidated".into()), ..Changes::default() }).unwrap();
    assert_eq!(e.tags_list(&v(&["shared"])).unwrap()[0].count, 1);
}

#[test]
fn consolidate_dedupes_identical_texts_per_dataset() {
    let (_d, e) = engine();
    let who = Who::new("ws", false);
    let keep = e.add("ws", NewNote { tags: v(&["x"]), ..note("same fact", "shared") }).unwrap().note;
    // Identical texts can arrive through documents (add itself never stores twice).
    e.add("ws", NewNote { tags: v(&["y"]), document_id: Some("d1".into()), ..note("same fact", "shared") }).unwrap();
    e.add("ws", NewNote { document_id: Some("d2".into()), ..note("same fact", "shared") }).unwrap();
    e.add("ws", note("same fact", "agents")).unwrap();
    let r = e.consolidate(&who, None).unwrap();
    assert_eq!(r.deduplicated, 2);
    let op = e.operation_get(&who, &r.operation_id).unwrap();
    assert_eq!((op.kind.as_str(), op.status.as_str()), ("consolidation", "completed"));
    let hits = e.search("same fact", &shared(), 10).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].note.id, keep.id);
    assert_eq!(hits[0].note.tags, v(&["x", "y"]));
    assert_eq!(e.consolidate(&who, None).unwrap().deduplicated, 0);
    assert_eq!(e.operation_cancel(&who, &op.id).unwrap_err().code, "memory.operation_finished");
    assert_eq!(e.operation_retry(&who, &op.id).unwrap_err().code, "memory.operation_not_failed");
    let ops = e.operation_list(&who, None, Some("consolidation"), 10).unwrap();
    assert_eq!(ops.len(), 2);
    assert!(e.operation_list(&who, Some("bogus"), None, 10).is_err());
}

#[test]
fn deletes_gate_as_the_rules_say_and_execute_exactly() {
    let (_d, e) = engine();
    let who = Who::new("ws", false);
    let one = e.add("ws", note("one", "shared")).unwrap().note;
    let two = e.add("ws", note("two", "shared")).unwrap().note;
    let agents = e.add("ws", note("three", "agents")).unwrap().note;

    // Bulk: queued, notes stay, a repeat is the same row.
    let DeleteOutcome::Pending(p) = e.delete_request(&who, &v(&[&one.id, &two.id]), DatasetArg::None).unwrap() else {
        panic!("bulk delete must be gated")
    };
    assert_eq!((p.kind.as_str(), p.client.as_str(), p.status.as_str()), ("memory_delete", "ws", "pending"));
    assert!(p.preview.contains("delete 2 memories"));
    let DeleteOutcome::Pending(again) = e.delete_request(&who, &v(&[&two.id, &one.id]), DatasetArg::None).unwrap()
    else {
        panic!()
    };
    assert_eq!(again.id, p.id);
    assert_eq!(e.get_many(&v(&[&one.id, &two.id])).unwrap().len(), 2);
    // A note outside the write namespace, or a named foreign/list dataset: gated.
    assert!(matches!(e.delete_request(&who, &v(&[&agents.id]), DatasetArg::None).unwrap(), DeleteOutcome::Pending(_)));
    assert!(matches!(
        e.delete_request(&who, &v(&[&one.id]), DatasetArg::Many(v(&["shared"]))).unwrap(),
        DeleteOutcome::Pending(_)
    ));
    assert_eq!(
        e.delete_request(&who, &v(&[&one.id]), DatasetArg::One("agents".into())).unwrap_err().code,
        NOT_FOUND,
        "the note is not in the named dataset"
    );
    assert!(e.delete_request(&who, &[], DatasetArg::None).is_err());
    assert!(e.delete_request(&who, &v(&["mem_missing"]), DatasetArg::None).is_err());

    // Executing needs an approved row and does exactly the stored ids.
    assert_eq!(execute_approved(&e, &p).unwrap_err().code, "approvals.not_approved");
    let approved = crate::approvals::claim(&e.store, &p.id, true, "root", None).unwrap();
    assert_eq!(execute_approved(&e, &approved).unwrap(), json!({"deleted": 2}));
    assert!(e.get_many(&v(&[&one.id, &two.id])).unwrap().is_empty());

    // One id in the write namespace: at once.
    let four = e.add("ws", note("four", "shared")).unwrap().note;
    assert!(matches!(
        e.delete_request(&who, &v(&[&four.id]), DatasetArg::One("shared".into())).unwrap(),
        DeleteOutcome::Deleted(1)
    ));
    // In private mode the write namespace is the private one.
    let mine = e.add("ws", note("mine", "private:ws")).unwrap().note;
    let private = Who::new("ws", true);
    assert!(matches!(
        e.delete_request(&private, &v(&[&mine.id]), DatasetArg::None).unwrap(),
        DeleteOutcome::Deleted(1)
    ));
}

#[test]
fn directives_crud_and_gated_delete() {
    let (_d, e) = engine();
    let who = Who::new("ws", false);
    let d = e
        .directive_create(
            "ws",
            NewDirective {
                name: "tone".into(),
                content: "Be brief.".into(),
                tags: v(&["Style"]),
                ..Default::default()
            },
        )
        .unwrap();
    assert!(d.id.starts_with("dir_") && d.is_active && d.priority == 0 && d.tags == v(&["style"]));
    let hi = e
        .directive_create(
            "ws",
            NewDirective {
                name: "safety".into(),
                content: "Ask first.".into(),
                priority: Some(10),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(e.directive_list(false, &[]).unwrap()[0].id, hi.id);
    assert!(e.directive_update(&d.id, DirectiveChanges::default()).is_err());
    let u = e.directive_update(&d.id, DirectiveChanges { is_active: Some(false), ..Default::default() }).unwrap();
    assert!(!u.is_active);
    assert_eq!(e.directive_list(true, &[]).unwrap().len(), 1);
    assert_eq!(e.directive_list(false, &v(&["style"])).unwrap().len(), 1);
    assert!(
        e.directive_create("ws", NewDirective { name: " ".into(), content: "x".into(), ..Default::default() }).is_err()
    );
    assert!(
        e.directive_create(
            "ws",
            NewDirective { name: "n".into(), content: "x".into(), priority: Some(5000), ..Default::default() }
        )
        .is_err()
    );
    let a = e.directive_delete_request(&who, &d.id).unwrap();
    assert_eq!(a.kind.as_str(), "directive_delete");
    assert_eq!(e.directive_delete_request(&who, &d.id).unwrap().id, a.id);
    assert!(e.directive_get(&d.id).is_ok(), "nothing is deleted before approval");
    let a = crate::approvals::claim(&e.store, &a.id, true, "root", None).unwrap();
    let cfg = crate::config::Config::default();
    assert_eq!(execute_approved_row(&e.store, &cfg, &a).unwrap()["deleted"], 1);
    assert_eq!(execute_approved(&e, &a).unwrap_err().code, NOT_FOUND, "a second run finds nothing to delete");
    assert_eq!(e.directive_get(&d.id).unwrap_err().code, NOT_FOUND);
}

#[test]
fn teach_helpers_write_and_search_raw_datasets() {
    let (_d, e) = engine();
    let a = e.add_as("ws", "private:hermes__dev", "deploys go through staging", &v(&["source:bridge:ws"])).unwrap();
    assert_eq!(a.note.dataset, "private:hermes__dev");
    assert_eq!(e.search_in(&v(&["private:hermes__dev", "shared"]), "staging", 10).unwrap().len(), 1);
    assert!(e.search_in(&v(&["shared"]), "staging", 10).unwrap().is_empty());
}

#[test]
fn deleting_removes_index_tags_and_history() {
    let (_d, e) = engine();
    let a = e.add("ws", NewNote { tags: v(&["t"]), ..note("ephemeral", "shared") }).unwrap().note;
    e.curate(&Who::anonymous(), &a.id, Changes { context: Some("ctx".into()), ..Changes::default() }).unwrap();
    assert_eq!(e.delete(std::slice::from_ref(&a.id)).unwrap(), 1);
    assert!(e.search("ephemeral", &shared(), 10).unwrap().is_empty());
    assert!(e.tags_list(&v(&["shared"])).unwrap().is_empty());
    let left: i64 =
        e.store.with(|c| Ok(c.query_row("SELECT count(*) FROM memory_history", [], |r| r.get(0))?)).unwrap();
    assert_eq!(left, 0);
    // A rebuilt index agrees: nothing left to find.
    assert_eq!(e.rebuild_index().unwrap(), 0);
    assert!(e.search("ephemeral", &shared(), 10).unwrap().is_empty());
}

#[test]
fn filters_past_the_candidate_window_still_find_their_notes() {
    let (_d, e) = engine();
    // More strong matches in `shared` than the first pass looks at…
    e.store
        .with(|c| {
            let tx = c.transaction()?;
            for i in 0..1100 {
                tx.execute(
                    "INSERT INTO memory_notes (id, dataset, text, text_sha, source, created_by, timestamp, created_at, updated_at)
                     VALUES (?1, 'shared', ?2, ?3, 'ws', 'ws', '2025-01-01T00:00:00Z', '2025-01-01T00:00:00Z', '2025-01-01T00:00:00Z')",
                    params![format!("mem_s{i}"), format!("fox fox {i}"), format!("sha{i}")],
                )?;
            }
            tx.commit()?;
            Ok(())
        })
        .unwrap();
    // …and one weaker match elsewhere.
    let weak = e.add("ws", note("a fox among many other words in a long and rambling note", "agents")).unwrap().note;
    let agents = Filter { datasets: v(&["agents"]), ..Filter::default() };
    let hits = e.search("fox", &agents, 10).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].note.id, weak.id);
    let both = Filter { datasets: v(&["shared", "agents"]), ..Filter::default() };
    let top = e.search("fox", &both, 5).unwrap();
    assert_eq!(top.len(), 5);
    assert!(top.iter().all(|h| h.note.dataset == "shared"));
    assert!(top.windows(2).all(|w| w[0].score >= w[1].score));
}

#[test]
fn re_adding_an_invalidated_document_brings_it_back() {
    let (_d, e) = engine();
    let who = Who::anonymous();
    let doc = || NewNote { document_id: Some("faq".into()), ..note("same words", "shared") };
    let a = e.add("ws", doc()).unwrap().note;
    e.curate(&who, &a.id, Changes { state: Some("invalidated".into()), ..Changes::default() }).unwrap();
    let b = e.add("ws", doc()).unwrap();
    assert_eq!((b.note.id.as_str(), b.note.state.as_str(), b.facts_extracted), (a.id.as_str(), "active", 1));
    let (_, h) = e.history(&who, &a.id).unwrap();
    assert_eq!(h.last().unwrap().changes, json!({"state": {"before": "invalidated", "after": "active"}}));
}

/// The admin key under a bridge client's name: its curate of the client's private note is a
/// row that, approved, changes exactly that note as long as it is still where it was; the
/// client box key under that name neither sees nor changes it.
#[test]
fn changes_to_a_bridge_clients_private_note_wait_for_approval() {
    let (_d, e) = engine();
    crate::auth::bridge::add(&e.store, "bob", "", Default::default()).unwrap();
    let claim = |via| Claim { identity: "bob".into(), private: true, via };
    let bob = Who::resolve(&e.store, claim(Via::BridgeKey)).unwrap();
    let admin = Who::resolve(&e.store, claim(Via::AdminKey)).unwrap();
    let fake = Who::resolve(&e.store, claim(Via::ClientKey)).unwrap();
    let n = e.add("bob", note("bob's plan", &bob.write_dataset(None).unwrap())).unwrap().note;
    assert_eq!(n.dataset, "private:bob");

    let ch = || Changes { text: Some("the operator's plan".into()), ..Changes::default() };
    assert_eq!(e.curate_request(&fake, &n.id, ch()).unwrap_err().code, NOT_FOUND);
    assert_eq!(e.curate(&admin, &n.id, ch()).unwrap_err().code, namespace::PRIVATE_FORBIDDEN, "no direct path");
    let CurateOutcome::Pending(a) = e.curate_request(&admin, &n.id, ch()).unwrap() else { panic!("not gated") };
    assert_eq!((a.kind.as_str(), a.client.as_str()), ("memory_curate", "admin:bob"));
    assert!(e.curate_request(&admin, &n.id, Changes { state: Some("gone".into()), ..Changes::default() }).is_err());
    assert_eq!(e.get(&bob, &n.id).unwrap().text, "bob's plan", "nothing changes before approval");
    // bob's own change goes at once.
    let CurateOutcome::Done(c) =
        e.curate_request(&bob, &n.id, Changes { context: Some("q3".into()), ..Changes::default() }).unwrap()
    else {
        panic!("bob's own note is not gated")
    };
    assert_eq!(c.changed, ["context"]);

    let a = crate::approvals::claim(&e.store, &a.id, true, "root", None).unwrap();
    let done = execute_approved(&e, &a).unwrap();
    assert_eq!(done["changed"], serde_json::json!(["text"]));
    let (now, history) = e.history(&bob, &n.id).unwrap();
    assert_eq!((now.text.as_str(), now.context.as_deref()), ("the operator's plan", Some("q3")));
    assert_eq!(history.last().unwrap().actor, "admin:bob");

    // A row whose note moved or went is not carried out elsewhere.
    let CurateOutcome::Pending(b) =
        e.curate_request(&admin, &n.id, Changes { state: Some("invalidated".into()), ..Changes::default() }).unwrap()
    else {
        panic!("not gated")
    };
    let b = crate::approvals::claim(&e.store, &b.id, true, "root", None).unwrap();
    e.delete(std::slice::from_ref(&n.id)).unwrap();
    assert_eq!(execute_approved(&e, &b).unwrap_err().code, NOT_FOUND);
}

/// Search quality on the judged set in `tests/fixtures/memory_judged.json` (115 queries
/// over 163 notes, written apart from the engine; see its `about`): for each half (`dev`,
/// looked at while tuning; `held_out`, only measured) and each kind of query, mean
/// precision@5, recall@5 (relevant notes among the first five over min(relevant, 5)) and
/// MRR@5 (one over the rank of the first relevant note, 0 past five). Printed as a table
/// (`cargo test --lib judged -- --nocapture`); each half's figures must not fall below the
/// ones this engine measured, so a change that loses quality fails here.
#[test]
fn judged_queries_keep_their_recall_and_mrr_at_5() {
    let fixture: Value = serde_json::from_str(include_str!("../../tests/fixtures/memory_judged.json")).unwrap();
    let (_d, e) = engine();
    let mut ids = std::collections::HashMap::new();
    for (key, text) in fixture["notes"].as_object().unwrap() {
        let id = e.add("ws", note(text.as_str().unwrap(), "shared")).unwrap().note.id;
        ids.insert(id, key.clone());
    }
    // (half, kind) -> [queries, sum p@5, sum recall@5, sum rr@5]
    let mut sums: std::collections::BTreeMap<(String, String), [f64; 4]> = Default::default();
    for q in fixture["queries"].as_array().unwrap() {
        let relevant: Vec<&str> = q["relevant"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
        let hits = e.search(q["q"].as_str().unwrap(), &shared(), 5).unwrap();
        let good: Vec<bool> = hits.iter().map(|h| relevant.contains(&ids[&h.note.id].as_str())).collect();
        let found = good.iter().filter(|g| **g).count() as f64;
        let rr = good.iter().position(|g| *g).map_or(0.0, |r| 1.0 / (r + 1) as f64);
        let figures = [1.0, found / 5.0, found / relevant.len().min(5) as f64, rr];
        let (half, kind) = (q["half"].as_str().unwrap(), q["kind"].as_str().unwrap());
        for (h, k) in [(half, kind), (half, "all"), ("both", "all")] {
            let s = sums.entry((h.to_string(), k.to_string())).or_default();
            for (t, f) in s.iter_mut().zip(figures) {
                *t += f;
            }
        }
    }
    let mean = |half: &str, kind: &str| {
        let s = sums[&(half.to_string(), kind.to_string())];
        (s[0] as usize, s[1] / s[0], s[2] / s[0], s[3] / s[0])
    };
    println!("half      kind        queries  precision@5  recall@5   MRR@5");
    for (half, kind) in sums.keys() {
        let (n, p, r, m) = mean(half, kind);
        println!("{half:<9} {kind:<11} {n:>7}  {p:>11.4}  {r:>8.4}  {m:>6.4}");
    }
    for (half, floor) in JUDGED_FLOORS {
        let (_, _, r, m) = mean(half, "all");
        assert!(r >= floor.0 && m >= floor.1, "{half}: recall@5 {r:.3} / MRR@5 {m:.3} fell below {floor:?}");
    }
}

/// Recall@5 and MRR@5 per half as this engine (bm25 over stemmed words, text and context)
/// measured them on 2026-12-07: the floor a change must keep. Keyword queries reach 0.93–1.0;
/// paraphrases 0.05–0.14 (no shared word, nothing to match): the goal (0.9 / 0.8 on each
/// half) needs matching by meaning, which this engine does not have.
const JUDGED_FLOORS: [(&str, (f64, f64)); 2] = [("dev", (0.493, 0.462)), ("held_out", (0.482, 0.465))];
