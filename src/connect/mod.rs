//! Every URL hal0 advertises, decided here: the base URL of this box for remote clients
//! (`[network].public_url`, else a LAN address and the bound port), the proxy URL of an
//! installed server (for remote consumers, and for the Hermes on this box, which reaches
//! it on loopback), the servers a key opens and a `claude mcp add` line for each. Also the one list
//! of hal0's own MCP servers and their mounts ([`MOUNTS`]): the router, the guard, these
//! lines, `version_info`, the registry's reserved ids and the audit read all take it.

pub mod clients;

use crate::auth::bridge::Scope;
use crate::config::Config;
use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr};

/// The base URL remote clients use, and a warning when it will not work as printed.
pub fn base_url(cfg: &Config) -> (String, Option<String>) {
    if let Some(u) = &cfg.network.public_url {
        return (u.trim_end_matches('/').to_string(), None);
    }
    let bind: SocketAddr = cfg.bind_addr();
    let port = bind.port();
    // With a certificate configured, remote clients must use https (plain http is for
    // loopback callers only).
    let scheme = if cfg.network.tls_cert.is_some() { "https" } else { "http" };
    let ip = bind.ip();
    if ip.is_unspecified() {
        let lan = lan_ip().unwrap_or(IpAddr::from([127, 0, 0, 1]));
        let warn = lan
            .is_loopback()
            .then(|| "no LAN address found; the lines name 127.0.0.1: set [network].public_url".to_string());
        return (format!("{scheme}://{}", host_port(lan, port)), warn);
    }
    if ip.is_loopback() {
        let lan = lan_ip();
        let shown = lan.unwrap_or(ip);
        return (
            format!("{scheme}://{}", host_port(shown, port)),
            Some(format!(
                "hal0 listens on {bind} only, so remote clients cannot reach it yet: set [network].bind to \"0.0.0.0:{port}\" (hal0 config set network.bind 0.0.0.0:{port}) or set [network].public_url"
            )),
        );
    }
    (format!("{scheme}://{}", host_port(ip, port)), None)
}

/// Who reaches a proxied server: a consumer elsewhere (the `claude mcp add` lines, `hal0
/// mcp status`, `hal0 mcp keys add`), or an agent on this box (Hermes's exposure entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    Remote,
    Box,
}

/// The URL of installed server `id` behind hal0's proxy, as `reach` reaches it.
pub fn proxy_url(cfg: &Config, id: &str, reach: Reach) -> String {
    let base = match reach {
        Reach::Remote => base_url(cfg).0,
        Reach::Box => local_base(cfg),
    };
    format!("{base}/mcp/proxy/{id}/mcp")
}

/// hal0's loopback base URL from `[network].bind`: how a process on this box (Hermes)
/// reaches it (plain http: loopback callers need no certificate).
pub fn local_base(cfg: &Config) -> String {
    let bind = cfg.bind_addr();
    let ip = if bind.ip().is_unspecified() { "127.0.0.1".to_string() } else { bind.ip().to_string() };
    let host = if ip.contains(':') { format!("[{ip}]") } else { ip };
    format!("http://{host}:{}", bind.port())
}

/// Where a person opens approval card `id` on the dashboard: under `[network].public_url`
/// when set, else hal0's loopback address.
pub fn card_url(cfg: &Config, id: &str) -> String {
    let base = match &cfg.network.public_url {
        Some(u) => u.trim_end_matches('/').to_string(),
        None => local_base(cfg),
    };
    format!("{base}/ui/#ap-{id}")
}

fn host_port(ip: IpAddr, port: u16) -> String {
    match ip {
        IpAddr::V6(v6) => format!("[{v6}]:{port}"),
        IpAddr::V4(v4) => format!("{v4}:{port}"),
    }
}

/// The first non-loopback IPv4 address of this machine (IPv6 as a second choice).
pub fn lan_ip() -> Option<IpAddr> {
    let addrs: Vec<IpAddr> = if_addrs::get_if_addrs().ok()?.into_iter().map(|i| i.ip()).collect();
    addrs
        .iter()
        .find(|ip| ip.is_ipv4() && !ip.is_loopback())
        .or_else(|| addrs.iter().find(|ip| !ip.is_loopback() && !is_link_local_v6(ip)))
        .copied()
}

fn is_link_local_v6(ip: &IpAddr) -> bool {
    matches!(ip, IpAddr::V6(v6) if (v6.segments()[0] & 0xffc0) == 0xfe80)
}

/// One of hal0's own MCP servers: served at `/mcp/<name>/mcp`, opened by `scope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mount {
    /// The mount's name in paths and audit surfaces (`agents`).
    pub name: &'static str,
    /// The server's name (`hal0-agents`): its MCP `serverInfo`, its reserved registry id.
    pub server: &'static str,
    /// The bridge-key scope that opens it.
    pub scope: Scope,
    /// What it serves, for people.
    pub description: &'static str,
}

/// hal0's own MCP servers, in scope order.
pub const MOUNTS: [Mount; 4] = [
    Mount {
        name: "agents",
        server: "hal0-agents",
        scope: Scope::Agents,
        description: "the agent bridge (bridge keys)",
    },
    Mount { name: "memory", server: "hal0-memory", scope: Scope::Memory, description: "long-term memory tools" },
    Mount { name: "admin", server: "hal0-admin", scope: Scope::Admin, description: "operate hal0 (admin key)" },
    Mount {
        name: "relay",
        server: "hal0-relay",
        scope: Scope::Relay,
        description: "the agent relay (bots ask each other)",
    },
];

impl Mount {
    /// The mount named `name` (`agents`).
    pub fn named(name: &str) -> Option<&'static Mount> {
        MOUNTS.iter().find(|m| m.name == name)
    }

    /// The mount serving `server` (`hal0-agents`).
    pub fn serving(server: &str) -> Option<&'static Mount> {
        MOUNTS.iter().find(|m| m.server == server)
    }

    /// `/mcp/<name>`: answers 405 (the endpoint is below it).
    pub fn root(&self) -> String {
        format!("/mcp/{}", self.name)
    }

    /// `/mcp/<name>/mcp`: the streamable HTTP endpoint.
    pub fn path(&self) -> String {
        format!("/mcp/{}/mcp", self.name)
    }

    /// Its audit surface (`mcp:agents`).
    pub fn surface(&self) -> String {
        format!("mcp:{}", self.name)
    }

    /// Whether `cfg` mounts it (hal0-admin always is).
    pub fn enabled(&self, cfg: &Config) -> bool {
        match self.scope {
            Scope::Agents => cfg.bridge.enabled,
            Scope::Memory => cfg.memory.enabled,
            Scope::Relay => cfg.relay.enabled,
            Scope::Admin => true,
        }
    }
}

/// The servers `cfg` mounts.
pub fn mounted(cfg: &Config) -> impl Iterator<Item = &'static Mount> + '_ {
    MOUNTS.iter().filter(|m| m.enabled(cfg))
}

/// The servers a key with `scopes` opens on this box, as `(server name, mount)`.
pub fn servers_for(cfg: &Config, scopes: &BTreeSet<Scope>) -> Vec<(&'static str, &'static str)> {
    mounted(cfg).filter(|m| scopes.contains(&m.scope)).map(|m| (m.server, m.name)).collect()
}

/// What a hermes-bridge bot needs to join this relay with `key`: the two lines of its `.env`
/// and its `mcp_servers` entry (YAML), as `(env lines, yaml)`.
pub fn relay_bot_setup(base: &str, key: &str) -> (Vec<String>, String) {
    let ws = match base.strip_prefix("https://") {
        Some(rest) => format!("wss://{rest}"),
        None => format!("ws://{}", base.strip_prefix("http://").unwrap_or(base)),
    };
    let env = vec![format!("HERMES_BRIDGE_RELAY_URL={ws}/bridge/connect"), format!("HERMES_BRIDGE_TOKEN={key}")];
    let yaml = format!(
        "mcp_servers:\n  hal0-relay:\n    enabled: true\n    transport: http\n    url: {base}/mcp/relay/mcp\n    headers:\n      Authorization: Bearer ${{HERMES_BRIDGE_TOKEN}}\n"
    );
    (env, yaml)
}

/// The servers a key with `scopes` opens, as (server name, its URL at `base`).
pub fn urls_for(base: &str, cfg: &Config, scopes: &BTreeSet<Scope>) -> Vec<(&'static str, String)> {
    servers_for(cfg, scopes).into_iter().map(|(server, mount)| (server, format!("{base}/mcp/{mount}/mcp"))).collect()
}

/// `claude mcp add --transport http NAME URL --header 'Authorization: Bearer KEY'`, every
/// interpolated word shell-quoted ([`crate::base::term::shell_quote`]).
pub fn claude_line(name: &str, url: &str, key: &str) -> String {
    use crate::base::term::shell_quote as q;
    format!(
        "claude mcp add --transport http {} {} --header {}",
        q(name),
        q(url),
        q(&format!("Authorization: Bearer {key}"))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_url_wins() {
        let mut c = Config::default();
        c.network.public_url = Some("https://hal0.example.com/".into());
        assert_eq!(base_url(&c), ("https://hal0.example.com".into(), None));
        let scopes = BTreeSet::from([Scope::Agents, Scope::Memory]);
        let lines: Vec<String> = urls_for("https://h", &c, &scopes)
            .iter()
            .map(|(server, url)| claude_line(server, url, "hal0bk_x"))
            .collect();
        assert_eq!(
            lines,
            vec![
                "claude mcp add --transport http hal0-agents https://h/mcp/agents/mcp --header 'Authorization: Bearer hal0bk_x'",
                "claude mcp add --transport http hal0-memory https://h/mcp/memory/mcp --header 'Authorization: Bearer hal0bk_x'",
            ]
        );
    }

    #[test]
    fn loopback_bind_warns() {
        let c = Config::default();
        let (url, warn) = base_url(&c);
        assert!(url.starts_with("http://") && url.ends_with(":8080"), "{url}");
        assert!(warn.unwrap().contains("0.0.0.0:8080"));
    }

    #[test]
    fn disabled_servers_get_no_line() {
        let mut c = Config::default();
        c.memory.enabled = false;
        let s = BTreeSet::from([Scope::Agents, Scope::Memory, Scope::Admin]);
        let names: Vec<_> = servers_for(&c, &s).into_iter().map(|x| x.0).collect();
        assert_eq!(names, vec!["hal0-agents", "hal0-admin"]);
    }
}
