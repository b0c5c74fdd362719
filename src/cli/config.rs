//! `hal0 config show|set|unset`: the effective hal0.toml and in-place edits.

use super::{Ctx, print_json};
use crate::base::error::Result;

#[derive(Debug, clap::Subcommand)]
pub enum ConfigCmd {
    /// Print the effective configuration (file values over defaults).
    /// Show the effective configuration: every setting, those not set in hal0.toml marked
    /// `# default`.
    Show {
        /// Show hal0's built-in defaults instead (what an unset setting falls back to).
        #[arg(long)]
        defaults: bool,
    },
    /// Set SECTION.KEY to VALUE (a TOML literal, or a bare string), keeping comments.
    Set {
        key: String,
        /// The value (a negative number is a value, not a flag).
        #[arg(allow_hyphen_values = true)]
        value: String,
    },
    /// Remove SECTION.KEY so its default applies again.
    Unset { key: String },
}

pub fn run(ctx: &Ctx, cmd: ConfigCmd) -> Result<()> {
    let json = ctx.json;
    match cmd {
        ConfigCmd::Show { defaults } => {
            let cfg = if defaults { crate::config::Config::default() } else { ctx.config()? };
            if json {
                print_json(&serde_json::to_value(&cfg).unwrap_or_default());
                return Ok(());
            }
            let text = toml_edit::ser::to_string_pretty(&cfg).unwrap_or_default();
            if defaults {
                println!("# hal0's defaults (an unset setting takes these)");
                print!("{}", crate::base::term::safe(&text));
                return Ok(());
            }
            let path = ctx.paths.hal0_toml();
            let file = crate::base::paths::read_optional(&path)?.unwrap_or_default();
            println!("# {} (effective; `# default`: not set in the file)", path.display());
            print!("{}", crate::base::term::safe(&crate::config::mark_defaults(&text, &file)));
            Ok(())
        }
        ConfigCmd::Set { key, value } => {
            let w = crate::ops::settings::set(&ctx.paths, &key, &value)?;
            println!("Set {key} in {}.", ctx.paths.hal0_toml().display());
            running_note(&ctx.paths, &key);
            unit_note(&w);
            Ok(())
        }
        ConfigCmd::Unset { key } => {
            let w = crate::ops::settings::unset(&ctx.paths, &key)?;
            if w.was_set {
                println!("Removed {key} from {}; its default applies.", ctx.paths.hal0_toml().display());
                running_note(&ctx.paths, &key);
                unit_note(&w);
            } else {
                println!(
                    "{key} is not set in {}: its default applies already; nothing changed.",
                    ctx.paths.hal0_toml().display()
                );
            }
            Ok(())
        }
    }
}

/// When a running `hal0 serve` takes the change: at a reload or only at a restart.
fn running_note(paths: &crate::base::paths::Paths, key: &str) {
    let hint = crate::config::live::applies(key.trim()).hint();
    if crate::store::backup::daemon_running(paths) {
        println!("hal0 serve is running: {hint}.");
    } else {
        println!("hal0 serve is not running; it reads this when it starts.");
    }
}

/// What a change meant for the systemd unit, if anything.
fn unit_note(w: &crate::ops::settings::Written) {
    if let Some(note) = &w.unit {
        println!("{note}");
    }
}
