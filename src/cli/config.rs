//! `hal0 config show|set|unset`: the effective hal0.toml and in-place edits.

use super::{Ctx, print_json};
use crate::base::error::Result;
use crate::ops::settings::Put;

#[derive(Debug, clap::Subcommand)]
pub enum ConfigCmd {
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
            let shown = crate::ops::settings::show(&ctx.paths, defaults)?;
            if json {
                print_json(&shown.json);
                return Ok(());
            }
            if defaults {
                println!("# hal0's defaults (an unset setting takes these)");
            } else {
                println!("# {} (effective; `# default`: not set in the file)", ctx.paths.hal0_toml().display());
            }
            print!("{}", crate::base::term::safe(&shown.text));
            Ok(())
        }
        ConfigCmd::Set { key, value } => {
            let put = crate::ops::settings::put_at_shell(&ctx.paths, &key, Some(&value), &super::who())?;
            println!("Set {key} in {}.", ctx.paths.hal0_toml().display());
            running_note(&ctx.paths, &put);
            Ok(())
        }
        ConfigCmd::Unset { key } => {
            let put = crate::ops::settings::put_at_shell(&ctx.paths, &key, None, &super::who())?;
            if put.changed {
                println!("Removed {key} from {}; its default applies.", ctx.paths.hal0_toml().display());
                running_note(&ctx.paths, &put);
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

/// When a running `hal0 serve` takes the change (at a reload or only at a restart), and
/// what it meant for the systemd unit, if anything.
fn running_note(paths: &crate::base::paths::Paths, put: &Put) {
    if crate::ops::store::daemon_running(paths) {
        println!("hal0 serve is running: {}.", put.note);
    } else {
        println!("hal0 serve is not running; it reads this when it starts.");
    }
    if let Some(note) = &put.unit {
        println!("{note}");
    }
}
