//! `hal0 mcp secret set ID HEADER`: give an installed server a secret. The value comes from
//! standard input (a pipe) or a prompt that does not echo, never from an argument (which
//! would sit in the shell's history and in `ps`). The rules live in
//! `crate::registry::manage::set_secret` and `crate::auth::secrets`.

use super::{Ctx, print_json};
use crate::base::error::{Error, Result};
use std::io::{IsTerminal, Read};

#[derive(Debug, clap::Subcommand)]
pub enum SecretCmd {
    /// Store the secret server ID sends as request header HEADER (value from stdin or a prompt).
    Set {
        id: String,
        /// The request header the server gets the secret as (e.g. Authorization, X-Api-Key).
        header: String,
        /// The api.env name to store it under (default: the one the record names, else HAL0_MCP_<ID>_<HEADER>).
        #[arg(long)]
        key: Option<String>,
    },
}

/// The value: one line from a pipe (its line ending dropped), or typed at a prompt.
pub(crate) fn read_value(prompt: &str) -> Result<String> {
    if std::io::stdin().is_terminal() {
        return dialoguer::Password::new()
            .with_prompt(prompt)
            .interact()
            .map_err(|e| Error::declined(format!("no value read: {e}")));
    }
    let mut s = String::new();
    std::io::stdin()
        .take(crate::ops::secrets::MAX_VALUE as u64 + 3)
        .read_to_string(&mut s)
        .map_err(|e| Error::invalid("secrets.invalid_value", format!("standard input is not UTF-8 text: {e}")))?;
    let s = s.strip_suffix('\n').unwrap_or(&s);
    Ok(s.strip_suffix('\r').unwrap_or(s).to_string())
}

pub fn run(ctx: &Ctx, cmd: SecretCmd) -> Result<()> {
    let json = ctx.json;
    match cmd {
        SecretCmd::Set { id, header, key } => {
            // The server and header are checked before a value is asked for.
            let ops = ctx.ops()?;
            crate::ops::mcp_edit::check_secret_header(&ops, &id, &header)?;
            let value = read_value(&format!("Value of `{header}` for `{id}`"))?;
            let set = super::runtime()?.block_on(crate::ops::mcp_edit::set_secret(
                &ops,
                &id,
                &header,
                key.as_deref(),
                value,
            ))?;
            if json {
                print_json(&serde_json::json!(set));
                return Ok(());
            }
            let verb = if set.created { "Stored" } else { "Replaced" };
            println!("{verb} `{}` in api.env (the value is not shown).", set.stored_as);
            if set.record_changed {
                println!("`{id}` now sends it as `{header}` ([secrets] {header} = \"{}\").", set.stored_as);
            }
            println!("It is sent from the server's next connection; hal0 mcp test {id} checks it.");
            Ok(())
        }
    }
}
