//! The REST route table of `hal0 serve` and the admin tool each route becomes: the alias
//! table (route → stable tool name) is the ground truth; routes that are deliberately not
//! tools carry the reason. The router is built from this table, so a route cannot exist
//! without an entry here.

/// How an admin tool is gated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// Autonomous read.
    Read,
    /// Autonomous write (reversible, low blast radius).
    Write,
    /// Waits in the approvals inbox for a person.
    Gated,
}

/// One REST route and its admin tool (or the reason it has none).
#[derive(Debug, Clone, Copy)]
pub struct RouteDef {
    pub method: &'static str,
    /// axum-style path, `{name}` for path arguments (`{*name}` for a `{name:path}` argument).
    pub path: &'static str,
    pub tool: Option<&'static str>,
    /// Why this route is not a tool (documented exclusion).
    pub excluded: Option<&'static str>,
    pub tier: Tier,
    /// Bare-list responses are wrapped as `{"<key>": [...], "count": N}`.
    pub wrap: Option<&'static str>,
    pub description: &'static str,
    /// Hand-written field hints: (name, description) of body or query fields.
    pub hints: &'static [(&'static str, &'static str)],
}

const fn tool(
    method: &'static str,
    path: &'static str,
    name: &'static str,
    tier: Tier,
    description: &'static str,
) -> RouteDef {
    RouteDef { method, path, tool: Some(name), excluded: None, tier, wrap: None, description, hints: &[] }
}

const fn excluded(method: &'static str, path: &'static str, why: &'static str) -> RouteDef {
    RouteDef {
        method,
        path,
        tool: None,
        excluded: Some(why),
        tier: Tier::Read,
        wrap: None,
        description: "",
        hints: &[],
    }
}

/// Every REST route `hal0 serve` has.
pub const ROUTES: &[RouteDef] = &[
    tool("GET", "/api/health", "health_check", Tier::Read, "Liveness of hal0 (GET /api/health)."),
    tool(
        "GET",
        "/api/status",
        "version_info",
        Tier::Read,
        "hal0's name, version, uptime and mounted MCP servers (GET /api/status).",
    ),
    excluded("GET", "/api/bridge/me", "answers bridge keys only; the admin server calls as hal0's own identity"),
    RouteDef {
        wrap: Some("clients"),
        ..tool(
            "GET",
            "/api/bridge/clients",
            "bridge_client_list",
            Tier::Read,
            "Bridge clients: scopes, notes, created and last seen; never a key (GET /api/bridge/clients).",
        )
    },
    RouteDef {
        hints: &[
            ("name", "client name: lower-case letters, digits, _ and -, at most 32"),
            ("note", "a note for people"),
            ("scopes", "list of scopes: agents, memory, admin"),
        ],
        ..tool(
            "POST",
            "/api/bridge/clients",
            "bridge_client_add",
            Tier::Gated,
            "Add a bridge client (POST /api/bridge/clients). Gated: the key is shown to the approver only.",
        )
    },
    RouteDef {
        hints: &[("scopes", "the new scope list: agents, memory, admin")],
        ..tool(
            "PUT",
            "/api/bridge/clients/{name}/scopes",
            "bridge_client_scopes",
            Tier::Gated,
            "Replace a bridge client's scopes (PUT /api/bridge/clients/{name}/scopes).",
        )
    },
    tool(
        "POST",
        "/api/bridge/clients/{name}/rotate",
        "bridge_client_rotate",
        Tier::Gated,
        "Mint a new key for a bridge client (POST /api/bridge/clients/{name}/rotate).",
    ),
    tool(
        "DELETE",
        "/api/bridge/clients/{name}",
        "bridge_client_revoke",
        Tier::Gated,
        "Revoke a bridge client; the name stays reserved (DELETE /api/bridge/clients/{name}).",
    ),
    RouteDef {
        wrap: Some("approvals"),
        hints: &[("status", "pending, approved, denied, withdrawn, executed or failed")],
        ..tool(
            "GET",
            "/api/agent/approvals",
            "approval_list",
            Tier::Read,
            "The approvals inbox (GET /api/agent/approvals).",
        )
    },
    tool(
        "GET",
        "/api/agent/approvals/{id}",
        "approval_get",
        Tier::Read,
        "One inbox row, the whole card (GET /api/agent/approvals/{id}).",
    ),
    excluded("POST", "/api/agent/approvals/{id}/approve", "a person decides; no MCP tool approves anything"),
    excluded("POST", "/api/agent/approvals/{id}/deny", "a person decides; no MCP tool denies anything"),
    tool("GET", "/api/settings", "settings_get", Tier::Read, "The effective hal0.toml (GET /api/settings)."),
    tool(
        "GET",
        "/api/settings/schema",
        "settings_schema",
        Tier::Read,
        "The keys of hal0.toml with types and defaults (GET /api/settings/schema).",
    ),
    RouteDef {
        hints: &[
            ("key", "SECTION.KEY, e.g. network.public_url"),
            ("value", "the new value (a TOML literal or a bare string); null removes the key"),
        ],
        ..tool(
            "PUT",
            "/api/settings",
            "config_write",
            Tier::Gated,
            "Set one hal0.toml key, keeping comments (PUT /api/settings). Takes effect at the next start.",
        )
    },
    RouteDef {
        hints: &[("lines", "how many of the newest log lines (default 200, at most 1000)")],
        ..tool(
            "GET",
            "/api/logs",
            "logs_tail",
            Tier::Gated,
            "The newest lines of hal0's own log, redacted (GET /api/logs).",
        )
    },
    tool(
        "GET",
        "/api/mcp/servers",
        "mcp_server_list",
        Tier::Read,
        "Bundled and installed MCP servers with their state and tool policy (GET /api/mcp/servers).",
    ),
    tool(
        "GET",
        "/api/mcp/servers/{id}",
        "mcp_server_get",
        Tier::Read,
        "One installed MCP server's record: transport, url, env names, policy, exposure (GET /api/mcp/servers/{id}).",
    ),
    RouteDef {
        wrap: Some("clients"),
        ..tool(
            "GET",
            "/api/mcp/clients",
            "mcp_client_list",
            Tier::Read,
            "MCP callers seen in the audit log: role, first and last call, servers used (GET /api/mcp/clients).",
        )
    },
    RouteDef {
        hints: &[("category", "only this category")],
        ..tool(
            "GET",
            "/api/mcp/catalog",
            "mcp_catalog_list",
            Tier::Read,
            "The curated catalogue of installable MCP servers (GET /api/mcp/catalog).",
        )
    },
    excluded("GET", "/api/mcp/stream", "a server-sent event stream; tools answer once (use activity_list)"),
    RouteDef {
        hints: &[("limit", "1 to 500 (default 100)")],
        ..tool(
            "GET",
            "/api/mcp/{id}/logs",
            "mcp_server_logs",
            Tier::Read,
            "One server's audit events (proxied calls and their verdicts), newest first (GET /api/mcp/{id}/logs).",
        )
    },
    RouteDef {
        hints: &[("url", "an install spec: oci://, npm:, uvx:, git+https://, a manifest URL or an endpoint URL")],
        ..tool(
            "GET",
            "/api/mcp/resolve",
            "mcp_resolve",
            Tier::Read,
            "What installing a spec would record; manifests are fetched behind the SSRF guard (GET /api/mcp/resolve).",
        )
    },
    RouteDef {
        hints: &[
            ("url", "an install spec (or give manifest)"),
            ("manifest", "an inline manifest object (or give url)"),
            ("id", "the server id (default: derived)"),
            ("name", "a display name"),
        ],
        ..tool(
            "POST",
            "/api/mcp/install",
            "mcp_server_install",
            Tier::Gated,
            "Install an MCP server; it starts with no callable tool and no exposure (POST /api/mcp/install).",
        )
    },
    RouteDef {
        hints: &[("force", "true removes a record file that does not load")],
        ..tool(
            "DELETE",
            "/api/mcp/{id}",
            "mcp_server_uninstall",
            Tier::Gated,
            "Uninstall a server: its record goes, its consumer keys are revoked, Hermes entries withdrawn (DELETE /api/mcp/{id}).",
        )
    },
    RouteDef {
        hints: &[
            ("env", "object of header name -> plain value; \"\" or null removes one"),
            ("enabled", "true or false"),
        ],
        ..tool(
            "PATCH",
            "/api/mcp/{id}/config",
            "mcp_server_config",
            Tier::Gated,
            "Set a server's plain [env] headers and/or enabled (PATCH /api/mcp/{id}/config).",
        )
    },
    tool(
        "POST",
        "/api/mcp/{id}/test",
        "mcp_server_test",
        Tier::Read,
        "Probe a server with its own URL and headers: its tools and each one's verdict (POST /api/mcp/{id}/test).",
    ),
    RouteDef {
        hints: &[("allow", "tool names"), ("gated", "tool names"), ("blocked", "tool names")],
        ..tool(
            "PATCH",
            "/api/mcp/{id}/tools",
            "mcp_server_tools",
            Tier::Gated,
            "Replace a server's whole tool policy; unlisted tools are denied (PATCH /api/mcp/{id}/tools).",
        )
    },
    RouteDef {
        hints: &[("hermes", "true or false"), ("brain", "true or false")],
        ..tool(
            "PATCH",
            "/api/mcp/{id}/exposure",
            "mcp_server_exposure",
            Tier::Gated,
            "Expose a server to Hermes profiles through hal0's proxy, or withdraw it (PATCH /api/mcp/{id}/exposure).",
        )
    },
    RouteDef {
        hints: &[("action", "start, stop or restart")],
        ..tool(
            "POST",
            "/api/mcp/{id}/{action}",
            "mcp_server_control",
            Tier::Gated,
            "Start, stop or restart a stdio server's child process (POST /api/mcp/{id}/{action}).",
        )
    },
    tool(
        "GET",
        "/api/doctor",
        "doctor_report",
        Tier::Read,
        "hal0 doctor's rows: ok / warn / fail with a one-line detail (GET /api/doctor).",
    ),
    RouteDef {
        wrap: Some("entries"),
        hints: &[
            ("since", "RFC 3339 time or a duration back from now (30m, 1h, 7d)"),
            ("client", "an identity, e.g. bridge:ci or ci"),
            ("tool", "a tool name"),
            ("limit", "at most this many (default 100)"),
        ],
        ..tool("GET", "/api/activity", "activity_list", Tier::Read, "The audit log, newest first (GET /api/activity).")
    },
    RouteDef {
        wrap: Some("entries"),
        hints: &[
            ("since", "RFC 3339 time or a duration back from now"),
            ("client", "an identity"),
            ("tool", "a tool name"),
        ],
        ..tool(
            "GET",
            "/api/activity/export",
            "activity_export",
            Tier::Read,
            "The audit log, oldest first, every matching entry (GET /api/activity/export).",
        )
    },
    RouteDef {
        wrap: Some("runs"),
        hints: &[
            ("client", "only this client's runs"),
            ("status", "only runs with this status"),
            ("limit", "at most this many (default 50)"),
        ],
        ..tool(
            "GET",
            "/api/runs",
            "run_list",
            Tier::Read,
            "The agent bridge's runs of every client, newest first (GET /api/runs).",
        )
    },
];

/// Autonomous read tools (explicit set; a test checks it against the table).
pub const AUTONOMOUS_READ: &[&str] = &[
    "health_check",
    "version_info",
    "bridge_client_list",
    "approval_list",
    "approval_get",
    "settings_get",
    "settings_schema",
    "run_list",
    "doctor_report",
    "mcp_server_list",
    "mcp_server_get",
    "mcp_client_list",
    "mcp_catalog_list",
    "mcp_server_logs",
    "mcp_resolve",
    "mcp_server_test",
    "activity_list",
    "activity_export",
];
/// Autonomous write tools.
pub const AUTONOMOUS_WRITE: &[&str] = &[];
/// Gated tools: nothing here runs without an approved row.
pub const GATED: &[&str] = &[
    "bridge_client_add",
    "bridge_client_scopes",
    "bridge_client_rotate",
    "bridge_client_revoke",
    "config_write",
    "logs_tail",
    "mcp_server_install",
    "mcp_server_uninstall",
    "mcp_server_config",
    "mcp_server_tools",
    "mcp_server_exposure",
    "mcp_server_control",
];

/// The route of a tool.
pub fn route_of(tool: &str) -> Option<&'static RouteDef> {
    ROUTES.iter().find(|r| r.tool == Some(tool))
}

/// The names of a path template's arguments, and whether each is a `{*name}` path argument.
pub fn path_args(path: &str) -> Vec<(&str, bool)> {
    path.split('/')
        .filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
        .map(|a| match a.strip_prefix('*') {
            Some(n) => (n, true),
            None => (a, false),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_route_has_a_tool_or_a_reason_and_tiers_partition_the_tools() {
        let mut tools = BTreeSet::new();
        for r in ROUTES {
            match (r.tool, r.excluded) {
                (Some(t), None) => assert!(tools.insert(t), "tool {t} twice"),
                (None, Some(why)) => assert!(!why.is_empty()),
                _ => panic!("{} {} needs exactly one of a tool name or an exclusion reason", r.method, r.path),
            }
        }
        let sets: Vec<(&str, &[&str], Tier)> = vec![
            ("read", AUTONOMOUS_READ, Tier::Read),
            ("write", AUTONOMOUS_WRITE, Tier::Write),
            ("gated", GATED, Tier::Gated),
        ];
        let mut seen = BTreeSet::new();
        for (label, set, tier) in sets {
            for t in set {
                assert!(seen.insert(*t), "{t} in two tiers");
                let r = route_of(t).unwrap_or_else(|| panic!("{label} tool {t} has no route"));
                assert_eq!(r.tier, tier, "{t}: table tier differs from the {label} set");
            }
        }
        assert_eq!(seen, tools, "every tool sits in exactly one tier set");
    }

    #[test]
    fn tier_membership() {
        for t in [
            "version_info",
            "settings_get",
            "settings_schema",
            "bridge_client_list",
            "approval_list",
            "activity_list",
            "activity_export",
            "doctor_report",
        ] {
            assert!(AUTONOMOUS_READ.contains(&t), "{t}");
        }
        for t in ["config_write", "bridge_client_add", "bridge_client_scopes", "bridge_client_revoke", "logs_tail"] {
            assert!(GATED.contains(&t), "{t}");
        }
    }

    #[test]
    fn path_arguments() {
        assert_eq!(path_args("/api/bridge/clients/{name}/scopes"), vec![("name", false)]);
        assert_eq!(path_args("/api/files/{*relpath}"), vec![("relpath", true)]);
        assert!(path_args("/api/status").is_empty());
    }
}
