//! `hal0 memory add|search` and `hal0 skills list|push` against a remote box: teach a Hermes
//! profile from a workstation through the box's `agent_memory_*` and `agent_skill*` tools
//! (the box's argument types; a pushed skill waits for a person in the box's inbox). On the
//! box itself (`--local`, or no remote configured and a store here), `hal0 memory` reads and
//! writes the local store through the same domain functions, as the admin.

use super::print_json;
use super::run::connect;
use crate::base::error::{Error, Result};
use crate::base::term::{safe, safe_line};
use crate::mcp::agents::{MemoryAddArgs, MemorySearchArgs, SkillPutArgs};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Subcommand)]
pub enum MemoryCmd {
    /// Remember TEXT in a profile's memory on the remote box.
    Add {
        text: String,
        /// `hermes`, `hermes/<profile>` or `shared`.
        #[arg(long, default_value = "hermes")]
        agent: String,
        /// A tag (repeat for more).
        #[arg(long = "tag", value_name = "TAG")]
        tags: Vec<String>,
        /// The remote box (default: HAL0_REMOTE_URL + HAL0_KEY, else the default remote).
        #[arg(long, value_name = "NAME", conflicts_with = "local")]
        remote: Option<String>,
        /// This box's own store (the default when no remote is configured and a store is here).
        #[arg(long)]
        local: bool,
    },
    /// Search a profile's memory on the remote box.
    Search {
        query: String,
        #[arg(long, default_value = "hermes")]
        agent: String,
        /// At most this many (1 to 50).
        #[arg(long)]
        limit: Option<i64>,
        #[arg(long, value_name = "NAME", conflicts_with = "local")]
        remote: Option<String>,
        /// This box's own store (the default when no remote is configured and a store is here).
        #[arg(long)]
        local: bool,
        #[command(flatten)]
        out: super::ListOut,
    },
}

#[derive(Debug, clap::Subcommand)]
pub enum SkillsCmd {
    /// The drop-in skills on the remote box.
    List {
        #[arg(long, value_name = "NAME")]
        remote: Option<String>,
        #[command(flatten)]
        out: super::ListOut,
    },
    /// Propose the skill in DIR (its SKILL.md and the text files beside it) to the remote
    /// box; a person approves it there before anything is written.
    Push {
        dir: PathBuf,
        /// The skill's name (default: the directory's name).
        #[arg(long)]
        name: Option<String>,
        #[arg(long, value_name = "NAME")]
        remote: Option<String>,
    },
}

fn call(remote: Option<&str>, tool: &str, args: &impl serde::Serialize) -> Result<Value> {
    let (rt, c) = connect(remote)?;
    rt.block_on(async move {
        let v = c.call(tool, args).await;
        c.close().await;
        v
    })
}

/// Whether a memory command without `--remote` works on this box's own store: asked with
/// `--local`, or no remote is configured and this box has a store.
fn on_this_box(ctx: &super::Ctx, remote: Option<&str>, local: bool) -> bool {
    local || (remote.is_none() && crate::remote::configured().is_ok_and(|set| !set) && ctx.paths.db().exists())
}

pub fn memory(ctx: &super::Ctx, cmd: MemoryCmd) -> Result<()> {
    let json = ctx.json;
    match cmd {
        MemoryCmd::Add { text, agent, tags, remote, local } => {
            let v = if on_this_box(ctx, remote.as_deref(), local) {
                let ops = ctx.ops()?;
                super::runtime()?.block_on(crate::ops::hermes::memory_add(&ops, agent, text, tags))?
            } else {
                call(remote.as_deref(), "agent_memory_add", &MemoryAddArgs { agent, text, tags })?
            };
            if json {
                print_json(&v);
            } else {
                println!("Remembered ({}).", safe_line(v["id"].as_str().unwrap_or("stored")));
            }
            Ok(())
        }
        MemoryCmd::Search { query, agent, limit, remote, local, out } => {
            let v = if on_this_box(ctx, remote.as_deref(), local) {
                crate::ops::hermes::memory_search(&ctx.ops()?, &agent, &query, limit)?
            } else {
                call(remote.as_deref(), "agent_memory_search", &MemorySearchArgs { agent, query, limit })?
            };
            let hits = super::items_of(&v, "results");
            if out.done(json, &hits, "id") {
                return Ok(());
            }
            if hits.is_empty() {
                println!("Nothing found.");
            }
            for h in hits {
                println!("- {}", safe_line(h["text"].as_str().unwrap_or(&h.to_string())));
            }
            Ok(())
        }
    }
}

/// The largest file a push reads (the box refuses far smaller skills; this only keeps a
/// stray large file from being read whole).
const FILE_MAX: u64 = 1024 * 1024;

/// SKILL.md and the plain files beside it (hidden ones skipped); a subdirectory is refused,
/// as the box takes plain file names only.
fn read_skill(dir: &Path) -> Result<(String, BTreeMap<String, String>)> {
    let bad = |why: String| Error::invalid("remote.invalid_skill", why);
    let md_path = dir.join("SKILL.md");
    if std::fs::symlink_metadata(&md_path).is_ok_and(|m| !m.file_type().is_file()) {
        return Err(bad(format!("{} is not a regular file: push a plain SKILL.md", md_path.display())));
    }
    let md = std::fs::read_to_string(&md_path).map_err(|e| {
        bad(format!("{}: cannot read SKILL.md ({e}); a skill is a directory with a SKILL.md", dir.display()))
    })?;
    let mut files = BTreeMap::new();
    let entries = std::fs::read_dir(dir).map_err(|e| bad(format!("cannot list {}: {e}", dir.display())))?;
    for e in entries {
        let e = e.map_err(|e| bad(format!("cannot list {}: {e}", dir.display())))?;
        let name = e.file_name().to_string_lossy().into_owned();
        if name == "SKILL.md" || name.starts_with('.') {
            continue;
        }
        let path = e.path();
        let meta = std::fs::symlink_metadata(&path).map_err(|e| bad(format!("cannot read {}: {e}", path.display())))?;
        if meta.is_dir() {
            return Err(bad(format!(
                "{} is a directory: a skill pushes the plain files beside its SKILL.md only",
                path.display()
            )));
        }
        // Never follow a link out of the skill (it could name any file of this user's), and
        // never open a FIFO or a device.
        if !meta.file_type().is_file() {
            return Err(bad(format!(
                "{} is not a regular file (a link, a FIFO, …): push plain files only",
                path.display()
            )));
        }
        if meta.len() > FILE_MAX {
            return Err(bad(format!(
                "{} is {} bytes; a skill's file may hold {FILE_MAX} at most",
                path.display(),
                meta.len()
            )));
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|_| bad(format!("{} is not UTF-8 text: the box takes reviewable text only", path.display())))?;
        files.insert(name, text);
    }
    Ok((md, files))
}

pub fn skills(cmd: SkillsCmd, json: bool) -> Result<()> {
    match cmd {
        SkillsCmd::List { remote, out } => {
            let v = call(remote.as_deref(), "agent_skills_list", &json!({}))?;
            if out.done(json, &super::items_of(&v, "skills"), "name") {
                return Ok(());
            }
            let rows: Vec<Vec<String>> = v["skills"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|s| {
                    vec![
                        s["name"].as_str().unwrap_or("").to_string(),
                        s["description"].as_str().unwrap_or("").to_string(),
                    ]
                })
                .collect();
            if rows.is_empty() {
                println!("No drop-in skills.");
            } else {
                println!("{}", super::table(&["NAME", "DESCRIPTION"], rows));
            }
            Ok(())
        }
        SkillsCmd::Push { dir, name, remote } => {
            let name = match name {
                Some(n) => n,
                None => std::fs::canonicalize(&dir)
                    .ok()
                    .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .unwrap_or_default(),
            };
            let (skill_md, files) = read_skill(&dir)?;
            let v = call(remote.as_deref(), "agent_skill_put", &SkillPutArgs { name: name.clone(), skill_md, files })?;
            if json {
                print_json(&v);
            } else {
                println!(
                    "Proposed skill `{}`: it waits for a person on the box ({}: `hal0 agent approvals approve {}`, or the dashboard's inbox).",
                    safe_line(&name),
                    safe(v["approval_id"].as_str().unwrap_or("?")),
                    safe_line(v["approval_id"].as_str().unwrap_or("ID"))
                );
            }
            Ok(())
        }
    }
}
