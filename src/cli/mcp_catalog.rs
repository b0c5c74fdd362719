//! `hal0 mcp catalog list|refresh`: the curated catalogue of installable MCP servers. The
//! catalogue, its validation and the refresh live in `crate::registry::catalog`; this file
//! translates.

use super::{Ctx, print_json, runtime, table};
use crate::base::error::Result;
use crate::base::term::{safe, safe_line};
use serde_json::json;

#[derive(Debug, clap::Subcommand)]
pub enum CatalogCmd {
    /// List the curated, known-good servers you can install (`hal0 mcp install SPEC --id ID`).
    List {
        #[command(flatten)]
        out: super::ListOut,
        /// Only this category (e.g. web, files, database).
        #[arg(long)]
        category: Option<String>,
        /// Also the entries whose upstream is archived (no fixes come; flagged in the table).
        #[arg(long)]
        all: bool,
    },
    /// Replace the catalogue with one read from a file or an http URL (default: mcp.catalog_url).
    Refresh {
        /// A file path, file:// URL or http(s) URL (default: the configured mcp.catalog_url).
        #[arg(long, value_name = "FILE_OR_URL")]
        from: Option<String>,
    },
}

fn ids(v: &[String]) -> String {
    if v.is_empty() { "-".into() } else { safe_line(&v.join(", ")).into_owned() }
}

pub fn run(ctx: &Ctx, cmd: CatalogCmd) -> Result<()> {
    let json = ctx.json;
    match cmd {
        CatalogCmd::List { out, category, all } => {
            let cat = crate::ops::mcp_status::catalog(&ctx.paths, category.as_deref(), all)?;
            if let Some(w) = &cat.warning {
                eprintln!("warning: {}", safe(w));
            }
            let (items, hidden) = (&cat.items, cat.hidden);
            if out.done_with(json, items, "id") {
                return Ok(());
            }
            let rows = items
                .iter()
                .map(|i| {
                    let mut d = i.description.clone();
                    if !i.env_required.is_empty() {
                        d.push_str(&format!("\nneeds: {}", i.env_required.join(", ")));
                    }
                    let verified = match (i.verified, i.archived) {
                        (_, true) => "archived",
                        (true, false) => "yes",
                        (false, false) => "no",
                    };
                    vec![i.id.clone(), i.category.clone(), verified.into(), i.spec.clone(), d]
                })
                .collect();
            println!("{}", table(&["ID", "CATEGORY", "VERIFIED", "SPEC", "DESCRIPTION"], rows));
            println!("{} of {} server(s).", items.len(), cat.total);
            if hidden > 0 {
                println!("{hidden} archived upstream(s) hidden: no fixes come for them (--all lists them).");
            }
            println!("Catalogue: {}.", safe(&cat.source));
            println!("install with: hal0 mcp install <spec> --id <id>");
            Ok(())
        }
        CatalogCmd::Refresh { from } => {
            // With --from the configured source is not needed, so a broken hal0.toml does not
            // stand in the way; without it the config error is the answer.
            // A catalogue named on the command line needs no good hal0.toml.
            let ops = if from.is_some() { ctx.ops_any_config()? } else { ctx.ops()? };
            let r = runtime()?.block_on(crate::ops::mcp_edit::catalog_refresh(&ops, from))?;
            if json {
                print_json(&json!(r));
                return Ok(());
            }
            println!(
                "Catalogue refreshed from {} at {}: {} server(s).",
                safe_line(r.source.origin.as_deref().unwrap_or("?")),
                safe_line(r.source.fetched_at.as_deref().unwrap_or("?")),
                r.items
            );
            println!("added: {}", ids(&r.added));
            println!("removed: {}", ids(&r.removed));
            println!("changed: {}", ids(&r.changed));
            if !r.skipped.is_empty() {
                println!("skipped: {}", safe_line(&r.skipped.join("; ")));
            }
            println!("File: {}", r.path);
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::paths::Paths;

    fn ctx() -> (tempfile::TempDir, Ctx) {
        let d = tempfile::tempdir().unwrap();
        let paths = Paths::resolve(Some(d.path().join("etc")), Some(d.path().join("state")));
        (d, Ctx { paths, json: false })
    }

    #[test]
    fn list_refresh_and_unknown_category() {
        let (d, ctx) = ctx();
        run(&ctx, CatalogCmd::List { out: Default::default(), category: None, all: false }).unwrap();
        run(
            &Ctx { paths: ctx.paths.clone(), json: true },
            CatalogCmd::List { out: crate::cli::ListOut { quiet: false }, category: Some("web".into()), all: true },
        )
        .unwrap();
        let e = run(&ctx, CatalogCmd::List { out: Default::default(), category: Some("nope".into()), all: false })
            .unwrap_err();
        assert_eq!(e.code, "mcp.catalog_unknown_category");
        let e = run(&ctx, CatalogCmd::Refresh { from: None }).unwrap_err();
        assert_eq!(e.code, "mcp.catalog_source_missing");
        let src = d.path().join("c.json");
        let item = json!({"id": "a", "name": "A", "description": "d", "category": "web", "spec": "npm:a", "transport": "stdio"});
        std::fs::write(&src, json!({"version": 1, "items": [item]}).to_string()).unwrap();
        run(&ctx, CatalogCmd::Refresh { from: Some(src.display().to_string()) }).unwrap();
        assert_eq!(crate::registry::catalog::load(&ctx.paths).items.len(), 1);
        run(&ctx, CatalogCmd::List { out: Default::default(), category: None, all: false }).unwrap();
    }
}
