//! `hal0 store status|prune`: the store's size, its bounded logs and their retention
//! windows, free disk space, and pruning now; the same operations as `GET /api/store` and
//! `POST /api/store/prune`.

use super::{Ctx, print_json, runtime, table};
use crate::base::error::Result;
use crate::base::term::bytes;
use crate::ops::store;

#[derive(Debug, clap::Subcommand)]
pub enum StoreCmd {
    /// Size of hal0.db, rows of each log with a retention window, the windows, free disk.
    Status {},
    /// Prune every log by its retention window now and give the space back to the disk.
    Prune {},
}

/// A retention window for people.
fn window(days: u32) -> String {
    if days == 0 { "kept forever".into() } else { format!("{days} days") }
}

pub fn run(ctx: &Ctx, cmd: StoreCmd) -> Result<()> {
    let json = ctx.json;
    let ops = ctx.ops()?;
    let rt = runtime()?;
    match cmd {
        StoreCmd::Status { .. } => {
            let s = rt.block_on(store::status(&ops, crate::ops::NoArgs {}))?;
            if json {
                print_json(&serde_json::to_value(&s).unwrap_or_default());
                return Ok(());
            }
            let p = &s.retention;
            let keep: [(&str, String); 9] = [
                ("audit_log", {
                    let cap =
                        if p.audit_max_rows == 0 { String::new() } else { format!(", newest {}", p.audit_max_rows) };
                    format!("{}{cap}", window(p.audit_days))
                }),
                ("approvals", format!("{} (decided)", window(p.approvals_days))),
                ("memory_operations", format!("{} (finished)", window(p.memory_operations_days))),
                ("memory_history", format!("{} (each note's newest kept)", window(p.memory_history_days))),
                ("relay_exchanges", format!("{} (ended)", window(p.relay_days))),
                ("relay_conversations", format!("{} (empty)", window(p.relay_days))),
                ("runs", format!("{} (finished)", window(p.runs_days))),
                ("run_events", "with their run".into()),
                ("memory_notes", "until deleted".into()),
            ];
            let rows = keep
                .iter()
                .map(|(t, k)| vec![t.to_string(), s.rows.get(*t).map(|n| n.to_string()).unwrap_or_default(), k.clone()])
                .collect();
            println!("{}", table(&["TABLE", "ROWS", "KEPT"], rows));
            let cap = s.max_size_mb.map(|m| format!(" of at most {m} MiB")).unwrap_or_default();
            println!("store: {} ({}){cap}", s.path, bytes(s.store_bytes));
            if s.free_in_store_bytes > 0 {
                println!("free inside the store: {} (given back at the next pruning)", bytes(s.free_in_store_bytes));
            }
            if let (Some(free), Some(total)) = (s.disk_free_bytes, s.disk_total_bytes) {
                println!("disk: {} free of {}", bytes(free), bytes(total));
            }
            Ok(())
        }
        StoreCmd::Prune { .. } => {
            // Recorded by the op after it ran (a full store has room only once pruned).
            let r = rt.block_on(store::prune(&ops, crate::ops::NoArgs {}))?;
            if json {
                print_json(&serde_json::to_value(&r).unwrap_or_default());
                return Ok(());
            }
            if r.pruned.is_empty() {
                println!("Nothing to prune ({} ms).", r.took_ms);
                return Ok(());
            }
            for p in &r.pruned {
                println!("pruned {} row(s) from {}", p.rows, p.table);
            }
            println!("gave {} back to the disk in {} ms", bytes(r.reclaimed_bytes), r.took_ms);
            Ok(())
        }
    }
}
