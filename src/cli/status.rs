//! `hal0 status`: the shell front of [`crate::ops::status`], one screen.

use super::Ctx;
use crate::base::error::Result;
use crate::base::term::safe_line;

pub fn run(ctx: &Ctx) -> Result<()> {
    let cfg = ctx.config()?;
    let s = crate::ops::status::read(&ctx.paths, &cfg)?;
    if ctx.json {
        super::print_json(&serde_json::to_value(&s).unwrap_or_default());
        return Ok(());
    }
    let yes = |b: bool, y: &str, n: &str| if b { y.to_string() } else { n.to_string() };
    let daemon = match s.daemon_running {
        true => format!("running on {}", s.bind),
        false => format!("not running (start it: hal0 serve, or systemctl start hal0); it binds {}", s.bind),
    };
    println!("daemon     {daemon}");
    println!("url        {} (what clients are told)", safe_line(&s.url));
    println!("auth       {}", yes(s.auth_armed, "armed", "OFF: this box only (arm it: hal0 auth rotate admin)"));
    println!("tls        {}", yes(s.tls, "on", "off"));
    let waits = match s.pending_approvals {
        0 => "nothing waits for a person".to_string(),
        n => format!("{n} waiting for a person: hal0 approvals"),
    };
    println!("approvals  {waits}");
    println!("clients    {} live, {} run(s) not ended", s.live_clients, s.active_runs);
    let v = &s.servers;
    let mut servers = format!("{} installed, {} enabled", v.installed, v.enabled);
    if v.broken > 0 {
        servers.push_str(&format!(", {} record(s) that do not load (hal0 mcp list)", v.broken));
    }
    if !v.reauth_required.is_empty() {
        servers.push_str(&format!("; reconnect: {}", safe_line(&v.reauth_required.join(", "))));
    }
    println!("servers    {servers}");
    if s.recent_errors.is_empty() {
        println!("errors     none in the last 24 h");
    } else {
        println!("errors     the newest (hal0 activity list for all):");
        for e in &s.recent_errors {
            println!(
                "           {}  {}  {}  [{}]",
                e.at,
                safe_line(&e.tool),
                safe_line(&e.identity),
                safe_line(&e.code)
            );
        }
    }
    Ok(())
}
