//! `hal0 backup FILE` and `hal0 restore FILE`: the shell front of [`crate::ops::store`]'s
//! backup and restore.

use super::{Ctx, confirm, print_json};
use crate::base::error::Result;
use crate::ops::store::{self as backup, Action};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct BackupArgs {
    /// The archive to write (a gzip'd tar, mode 0600; it holds the keys in api.env).
    pub file: PathBuf,
    /// Replace FILE when it exists (without it, an existing file is refused and kept).
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, clap::Args)]
pub struct RestoreArgs {
    /// An archive written by `hal0 backup`.
    pub file: PathBuf,
    /// Replace without asking (the prompt lists what will be replaced; a restore that only
    /// adds files, into a fresh box, never asks).
    #[arg(long, short = 'y')]
    pub yes: bool,
}

pub fn backup(ctx: &Ctx, a: BackupArgs) -> Result<()> {
    let made = backup::backup(&ctx.paths, &a.file, a.force, &super::who())?;
    if ctx.json {
        print_json(&serde_json::to_value(&made).unwrap_or_default());
        return Ok(());
    }
    let store = match made.store_bytes {
        Some(b) => format!("hal0.db ({}, schema {})", crate::base::term::bytes(b), made.schema_version),
        None => "no store (none yet)".into(),
    };
    println!(
        "wrote {} ({}): {} config {} and {store}",
        made.path.display(),
        crate::base::term::bytes(made.bytes),
        made.config_files,
        if made.config_files == 1 { "file" } else { "files" }
    );
    println!("it holds the box's keys: keep it as safe as {}", ctx.paths.config_dir.display());
    Ok(())
}

pub fn restore(ctx: &Ctx, a: RestoreArgs) -> Result<()> {
    let staged = backup::stage(&ctx.paths, &a.file)?;
    let m = &staged.manifest;
    if !ctx.json {
        println!(
            "{}: hal0 {} on {} at {}, store schema {}",
            a.file.display(),
            m.hal0_version,
            m.host,
            m.created_at,
            m.schema_version
        );
        for c in staged.changes.iter().filter(|c| c.action != Action::Same) {
            let what = match c.action {
                Action::Add => "add",
                Action::Replace => "replace",
                Action::Remove => "remove",
                Action::Same => "keep",
            };
            println!("  {what:<8} {}", c.path.display());
        }
    }
    if staged.is_noop() {
        if ctx.json {
            print_json(&serde_json::json!({"changes": [], "previous": null}));
        } else {
            println!("nothing to change: this box already matches the archive");
        }
        return Ok(());
    }
    let replaces = staged.changes.iter().filter(|c| matches!(c.action, Action::Replace | Action::Remove)).count();
    // Adding to an empty box loses nothing: ask only before replacing or removing.
    if replaces > 0 {
        confirm(a.yes, &format!("Restore {} ({replaces} existing files replaced or removed)?", a.file.display()))?;
    }
    let applied = backup::restore(&ctx.paths, staged, &a.file, &super::who())?;
    if ctx.json {
        print_json(&serde_json::to_value(&applied).unwrap_or_default());
        return Ok(());
    }
    if let Some(p) = &applied.previous {
        println!("what was here before is kept in {}", p.display());
    }
    println!("restored; start the daemon again (systemctl start hal0)");
    Ok(())
}
