//! Benchmark of the embedded memory engine (figures go into the closing note): `<notes>`
//! (default 100 000) notes of deterministic generated text into a temp store, the first
//! 2 000 through `MemoryEngine::add` (one durable transaction each, as `memory_add` with
//! `text` does) and the rest through `MemoryEngine::add_many` (1 000 a call, as
//! `memory_add` with `items` does), with the search index kept level as they land; then
//! the store size, the time to rebuild the index from the rows, 1000 `search` queries
//! (limit 10, p50/p99) and 1000 `recall` queries (4096 tokens) over them.
//!
//! Run: `cargo run --release --example bench_memory [-- <notes>]`

use hal0::memory::{Filter, MemoryEngine, NewNote};
use hal0::store::Store;
use std::time::Instant;

/// The daemon's allocator, so that the figures are the daemon's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

/// Skewed towards small indices (a rough Zipf): common words are common.
fn skewed(r: &mut Rng, n: usize) -> usize {
    let x = (r.next() % 1_000_000) as f64 / 1_000_000.0;
    ((x * x * x) * n as f64) as usize
}

fn vocabulary(n: usize) -> Vec<String> {
    const SYL: &[&str] = &[
        "ka", "lo", "mi", "ra", "tes", "vo", "nu", "pel", "dor", "si", "fen", "gar", "hu", "jin", "qua", "zel", "bri",
        "cto", "wen", "yx",
    ];
    let mut r = Rng(0x5eed);
    (0..n)
        .map(|i| {
            let len = 2 + r.below(3);
            let mut w: String = (0..len).map(|_| SYL[r.below(SYL.len())]).collect();
            w.push_str(&format!("{}", i % 7));
            w
        })
        .collect()
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("hal0.db")).unwrap();
    let engine = MemoryEngine::new(store);
    let vocab = vocabulary(5000);
    let tags: Vec<String> = (0..50).map(|i| format!("topic-{i}")).collect();
    let mut r = Rng(42);
    let make = |r: &mut Rng, i: usize| {
        let words = 8 + r.below(17);
        let text: Vec<&str> = (0..words).map(|_| vocab[skewed(r, vocab.len())].as_str()).collect();
        NewNote {
            text: text.join(" "),
            dataset: if i.is_multiple_of(10) { "agents".into() } else { "shared".into() },
            tags: vec![tags[r.below(tags.len())].clone()],
            metadata: None,
            document_id: None,
        }
    };
    // As in the daemon, the index exists before notes arrive, and each add is made
    // searchable as part of what is timed.
    engine.warm_index().unwrap();
    let single = n.min(2000);
    let start = Instant::now();
    for i in 0..single {
        engine.add("bench", make(&mut r, i)).unwrap();
    }
    engine.warm_index().unwrap();
    let secs = start.elapsed().as_secs_f64();
    println!(
        "memory_add (text, one durable transaction each): {single} notes in {secs:.1} s = {:.0} notes/s",
        single as f64 / secs
    );
    let start = Instant::now();
    let mut i = single;
    while i < n {
        let end = (i + 1000).min(n);
        engine.add_many("bench", (i..end).map(|j| make(&mut r, j)).collect()).unwrap();
        engine.warm_index().unwrap();
        i = end;
    }
    let secs = start.elapsed().as_secs_f64();
    if n > single {
        println!(
            "memory_add (items, 1000 a call, indexed): {} notes in {secs:.1} s = {:.0} notes/s",
            n - single,
            (n - single) as f64 / secs
        );
    }
    engine.store.with(|c| Ok(c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")?)).unwrap();
    let db = std::fs::metadata(dir.path().join("hal0.db")).map(|m| m.len()).unwrap_or(0);
    println!("store size: {:.1} MiB", db as f64 / 1048576.0);
    let t = Instant::now();
    let indexed = engine.rebuild_index().unwrap();
    println!("index rebuild from the rows: {indexed} notes in {:.2} s", t.elapsed().as_secs_f64());
    let rss = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).map(|l| l[6..].trim().to_string()));
    println!("process RSS with the index: {}", rss.unwrap_or_else(|| "unknown".into()));

    let filter = Filter { datasets: vec!["shared".into()], ..Filter::default() };
    let queries: Vec<String> = (0..1000)
        .map(|_| {
            let k = 1 + r.below(3);
            (0..k).map(|_| vocab[skewed(&mut r, vocab.len())].as_str()).collect::<Vec<_>>().join(" ")
        })
        .collect();
    // Warm the page cache once, as a running daemon would be.
    for q in queries.iter().take(50) {
        engine.search(q, &filter, 10).unwrap();
    }
    let mut lat = Vec::with_capacity(queries.len());
    let mut hits = 0usize;
    for q in &queries {
        let t = Instant::now();
        hits += engine.search(q, &filter, 10).unwrap().len();
        lat.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    println!(
        "search (limit 10, 1000 queries of 1-3 words): p50 {:.2} ms, p99 {:.2} ms, mean hits {:.1}",
        pct(&mut lat, 0.5),
        pct(&mut lat, 0.99),
        hits as f64 / queries.len() as f64
    );
    let mut lat = Vec::with_capacity(queries.len());
    for q in &queries {
        let t = Instant::now();
        engine.recall(q, &filter, 4096).unwrap();
        lat.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    println!("recall (4096 tokens, same queries): p50 {:.2} ms, p99 {:.2} ms", pct(&mut lat, 0.5), pct(&mut lat, 0.99));
    let t = Instant::now();
    let page = engine.list(&["shared".to_string()], None, 50).unwrap();
    println!("list (first page of 50): {:.2} ms", t.elapsed().as_secs_f64() * 1000.0);
    assert_eq!(page.items.len(), 50);
}
