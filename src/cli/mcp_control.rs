//! `hal0 mcp start|stop|restart ID`: a stdio server's child lives inside the running
//! daemon, so the shell asks it ([`crate::ops::daemon::mcp_action`]) and prints what it
//! answered.

use super::{Ctx, print_json, runtime};
use crate::base::error::Result;

/// Ask the daemon to `action` (`start`, `stop`, `restart`) server `id`.
pub fn run(ctx: &Ctx, id: &str, action: &str, json: bool) -> Result<()> {
    let body = runtime()?.block_on(crate::ops::daemon::mcp_action(&ctx.ops()?, id, action))?;
    if json {
        print_json(&body);
        return Ok(());
    }
    let state = body["state"].as_str().unwrap_or("unknown");
    match body["pid"].as_u64() {
        Some(pid) => println!("`{id}`: {state} (pid {pid})."),
        None => println!("`{id}`: {state}."),
    }
    Ok(())
}
