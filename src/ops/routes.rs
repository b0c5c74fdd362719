//! The route table: every operation hal0 offers, with its REST method and path, its
//! `hal0-admin` tool name and access (or the documented reason it is not a tool), its
//! argument schema and its runner. The REST router, the admin tools and the approvals inbox
//! are built from this table, so a route cannot exist without an entry here.

use super::{
    Ctx, NoArgs, accounts, activity, approvals, bridge, doctor, keys, mcp, relay, runs, secrets, settings, status,
    store,
};
use crate::base::error::Result;
use crate::op_runner;
use serde_json::{Map, Value};
use std::future::Future;
use std::pin::Pin;

/// Whether an admin tool runs on its own or waits for a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Runs at once: a read.
    AutonomousRead,
    /// Runs at once: a reversible write with a low blast radius.
    AutonomousWrite,
    /// Waits in the approvals inbox for a person.
    Gated,
}

/// The future of one erased operation call.
pub type OpFuture = Pin<Box<dyn Future<Output = Result<Value>> + Send>>;
/// An operation with its arguments as a JSON object and its answer as JSON.
pub type OpFn = fn(Ctx, Map<String, Value>) -> OpFuture;
/// The JSON Schema of an operation's arguments.
pub type SchemaFn = fn() -> schemars::Schema;

/// One operation: its REST route, its admin tool (or the reason it has none), its runner.
#[derive(Clone, Copy)]
pub struct OpDef {
    pub method: &'static str,
    /// axum-style path, `{name}` for path arguments (`{*name}` for a `{name:path}` argument).
    pub path: &'static str,
    pub tool: Option<&'static str>,
    /// Why this route is not a tool (documented exclusion).
    pub excluded: Option<&'static str>,
    pub access: Access,
    /// Bare-list answers are wrapped as `{"<key>": [...], "count": N}` for admin tools.
    pub wrap: Option<&'static str>,
    pub description: &'static str,
    /// The REST status of a success (201 for a creation).
    pub status: u16,
    /// The code of a malformed argument or body (`mcp.install_invalid`, …).
    pub invalid_code: &'static str,
    /// The operation; `None` for a route with a handler of its own (an event stream, the
    /// calling bridge client).
    pub run: Option<OpFn>,
    /// Parse the arguments without running anything (a gated call is checked before it
    /// is queued).
    pub check: fn(&Map<String, Value>) -> Result<()>,
    pub schema: SchemaFn,
}

impl OpDef {
    /// The name the audit log gives a call of this route: its tool's, or for a route that is
    /// no tool, one made the same way from its path's fixed words (`/api/agent/approvals/{id}/
    /// approve` is `approvals_approve`), never a route template.
    pub fn name(&self) -> std::borrow::Cow<'static, str> {
        if let Some(t) = self.tool {
            return t.into();
        }
        let words: Vec<&str> =
            self.path.split('/').filter(|w| !w.is_empty() && *w != "api" && !w.starts_with('{')).collect();
        words[words.len().saturating_sub(2)..].join("_").into()
    }
}

impl std::fmt::Debug for OpDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} ({:?})", self.method, self.path, self.tool)
    }
}

fn no_args() -> schemars::Schema {
    schemars::schema_for!(NoArgs)
}

macro_rules! route {
    ($method:literal, $path:literal, $tool:literal, $access:ident, $desc:literal, $f:path, $args:ty, $code:literal) => {
        OpDef {
            method: $method,
            path: $path,
            tool: Some($tool),
            excluded: None,
            access: Access::$access,
            wrap: None,
            description: $desc,
            status: 200,
            invalid_code: $code,
            run: Some(op_runner!($f, $args, $code)),
            check: |args| $crate::ops::parse_args::<$args>(args.clone(), $code).map(drop),
            schema: || schemars::schema_for!($args),
        }
    };
}

macro_rules! excluded {
    ($method:literal, $path:literal, $why:literal, $f:path, $args:ty, $code:literal) => {
        OpDef { tool: None, excluded: Some($why), ..route!($method, $path, "", AutonomousRead, "", $f, $args, $code) }
    };
    ($method:literal, $path:literal, $why:literal) => {
        OpDef {
            method: $method,
            path: $path,
            tool: None,
            excluded: Some($why),
            access: Access::AutonomousRead,
            wrap: None,
            description: "",
            status: 200,
            invalid_code: "request.invalid",
            run: None,
            check: |_| Ok(()),
            schema: no_args,
        }
    };
}

/// Every REST route `hal0 serve` has.
pub static ROUTES: &[OpDef] = &[
    route!(
        "GET",
        "/api/health",
        "health_check",
        AutonomousRead,
        "Liveness of hal0 (GET /api/health).",
        status::health,
        NoArgs,
        "request.invalid"
    ),
    route!(
        "GET",
        "/api/status",
        "version_info",
        AutonomousRead,
        "hal0's name, version, uptime and mounted MCP servers (GET /api/status).",
        status::version_info,
        NoArgs,
        "request.invalid"
    ),
    excluded!("GET", "/api/bridge/me", "answers bridge keys only; the admin server calls as hal0's own identity"),
    OpDef {
        wrap: Some("clients"),
        ..route!(
            "GET",
            "/api/bridge/clients",
            "bridge_client_list",
            AutonomousRead,
            "Bridge clients: scopes, notes, created and last seen; never a key (GET /api/bridge/clients).",
            bridge::list,
            NoArgs,
            "request.invalid"
        )
    },
    route!(
        "POST",
        "/api/bridge/clients",
        "bridge_client_add",
        Gated,
        "Add a bridge client (POST /api/bridge/clients). Gated: the key is shown to the approver only.",
        bridge::add,
        bridge::AddArgs,
        "bridge.invalid_request"
    ),
    route!(
        "PUT",
        "/api/bridge/clients/{name}/scopes",
        "bridge_client_scopes",
        Gated,
        "Replace a bridge client's scopes (PUT /api/bridge/clients/{name}/scopes).",
        bridge::set_scopes,
        bridge::ScopesArgs,
        "bridge.invalid_request"
    ),
    route!(
        "POST",
        "/api/bridge/clients/{name}/rotate",
        "bridge_client_rotate",
        Gated,
        "Mint a new key for a bridge client (POST /api/bridge/clients/{name}/rotate).",
        bridge::rotate,
        bridge::NameArgs,
        "bridge.invalid_request"
    ),
    route!(
        "DELETE",
        "/api/bridge/clients/{name}",
        "bridge_client_revoke",
        Gated,
        "Revoke a bridge client; the name stays reserved (DELETE /api/bridge/clients/{name}).",
        bridge::revoke,
        bridge::NameArgs,
        "bridge.invalid_request"
    ),
    route!(
        "POST",
        "/api/bridge/clients/{name}/purge",
        "bridge_client_purge",
        Gated,
        "Free a revoked bridge client's name, deleting its runs, approvals, rules and grants (POST /api/bridge/clients/{name}/purge).",
        bridge::purge,
        bridge::NameArgs,
        "bridge.invalid_request"
    ),
    OpDef {
        wrap: Some("approvals"),
        ..route!(
            "GET",
            "/api/agent/approvals",
            "approval_list",
            AutonomousRead,
            "The approvals inbox (GET /api/agent/approvals).",
            approvals::list,
            approvals::ListArgs,
            "approvals.invalid_request"
        )
    },
    route!(
        "GET",
        "/api/agent/approvals/rules",
        "approval_rule_list",
        AutonomousRead,
        "The standing rules people chose while approving proxied calls (GET /api/agent/approvals/rules).",
        approvals::rules,
        approvals::RulesArgs,
        "approvals.invalid_request"
    ),
    route!(
        "DELETE",
        "/api/agent/approvals/rules/{rule_id}",
        "approval_rule_remove",
        Gated,
        "End a standing rule: its calls wait for a person again (DELETE /api/agent/approvals/rules/{rule_id}).",
        approvals::remove_rule,
        approvals::RuleIdArgs,
        "approvals.invalid_request"
    ),
    route!(
        "GET",
        "/api/agent/approvals/count",
        "approval_count",
        AutonomousRead,
        "How many cards wait for a person (GET /api/agent/approvals/count).",
        approvals::count,
        NoArgs,
        "approvals.invalid_request"
    ),
    route!(
        "GET",
        "/api/agent/approvals/{id}",
        "approval_get",
        AutonomousRead,
        "One inbox row, the whole card; `wait_s` (up to 50) waits for its outcome (GET /api/agent/approvals/{id}).",
        approvals::get,
        approvals::GetArgs,
        "approvals.invalid_request"
    ),
    excluded!(
        "POST",
        "/api/agent/approvals/{id}/approve",
        "a person decides; no MCP tool approves anything",
        approvals::approve,
        approvals::ApproveArgs,
        "approvals.invalid_request"
    ),
    excluded!(
        "POST",
        "/api/agent/approvals/{id}/deny",
        "a person decides; no MCP tool denies anything",
        approvals::deny,
        approvals::DenyArgs,
        "approvals.invalid_request"
    ),
    route!(
        "GET",
        "/api/settings",
        "settings_get",
        AutonomousRead,
        "The settings hal0 runs with, and the keys of hal0.toml that wait for a restart (GET /api/settings).",
        settings::get,
        NoArgs,
        "request.invalid"
    ),
    route!(
        "GET",
        "/api/store",
        "store_status",
        AutonomousRead,
        "The store: its size, the rows of each log with a retention window, the windows, and free disk space (GET /api/store).",
        store::status,
        NoArgs,
        "request.invalid"
    ),
    route!(
        "POST",
        "/api/store/prune",
        "store_prune",
        Gated,
        "Prune every log by its configured retention window now and give the space back (POST /api/store/prune).",
        store::prune,
        NoArgs,
        "request.invalid"
    ),
    route!(
        "GET",
        "/api/settings/schema",
        "settings_schema",
        AutonomousRead,
        "The keys of hal0.toml with types and defaults (GET /api/settings/schema).",
        settings::schema,
        NoArgs,
        "request.invalid"
    ),
    OpDef {
        check: settings::check_put,
        ..route!(
            "PUT",
            "/api/settings",
            "config_write",
            Gated,
            "Set one hal0.toml key, keeping comments (PUT /api/settings). Takes effect at the next start.",
            settings::put,
            settings::PutArgs,
            "config.invalid_request"
        )
    },
    route!(
        "PUT",
        "/api/secrets/{name}",
        "secret_write",
        Gated,
        "Store a secret in api.env for installed servers' [secrets] to refer to; its value is never shown again (PUT /api/secrets/{name}).",
        secrets::put,
        secrets::PutArgs,
        "secrets.invalid_request"
    ),
    route!(
        "GET",
        "/api/logs",
        "logs_tail",
        Gated,
        "The newest lines of hal0's own log, redacted (GET /api/logs).",
        status::logs_tail,
        status::LogsArgs,
        "logs.invalid_lines"
    ),
    route!(
        "GET",
        "/api/mcp/servers",
        "mcp_server_list",
        AutonomousRead,
        "Bundled and installed MCP servers with their state and tool policy (GET /api/mcp/servers).",
        mcp::list,
        NoArgs,
        "request.invalid"
    ),
    route!(
        "GET",
        "/api/mcp/servers/{server_id}",
        "mcp_server_get",
        AutonomousRead,
        "One installed MCP server's record: transport, url, env names, policy, exposure (GET /api/mcp/servers/{server_id}).",
        mcp::get,
        mcp::IdArgs,
        "mcp.invalid_arg"
    ),
    OpDef {
        wrap: Some("clients"),
        ..route!(
            "GET",
            "/api/mcp/clients",
            "mcp_client_list",
            AutonomousRead,
            "MCP callers seen in the audit log: role, first and last call, servers used (GET /api/mcp/clients).",
            mcp::clients,
            NoArgs,
            "request.invalid"
        )
    },
    route!(
        "GET",
        "/api/mcp/catalog",
        "mcp_catalog",
        AutonomousRead,
        "The curated catalogue of installable MCP servers (GET /api/mcp/catalog).",
        mcp::catalog,
        mcp::CatalogArgs,
        "mcp.invalid_arg"
    ),
    excluded!("GET", "/api/mcp/stream", "a server-sent event stream; tools answer once (use activity_list)"),
    route!(
        "GET",
        "/api/mcp/{server_id}/logs",
        "mcp_server_logs",
        Gated,
        "One server's audit events (proxied calls and their verdicts), newest first (GET /api/mcp/{server_id}/logs).",
        mcp::logs,
        mcp::LogsArgs,
        "mcp.invalid_limit"
    ),
    route!(
        "GET",
        "/api/mcp/resolve",
        "mcp_resolve",
        AutonomousRead,
        "What installing a spec would record; manifests are fetched behind the SSRF guard (GET /api/mcp/resolve).",
        mcp::resolve,
        mcp::ResolveArgs,
        "mcp.invalid_spec"
    ),
    OpDef {
        status: 201,
        ..route!(
            "POST",
            "/api/mcp/install",
            "mcp_server_install",
            Gated,
            "Install an MCP server; it starts with no callable tool and no exposure (POST /api/mcp/install).",
            mcp::install,
            mcp::InstallArgs,
            "mcp.install_invalid"
        )
    },
    route!(
        "DELETE",
        "/api/mcp/{server_id}",
        "mcp_server_uninstall",
        Gated,
        "Uninstall a server: its record goes, its consumer keys are revoked, Hermes entries withdrawn (DELETE /api/mcp/{server_id}).",
        mcp::uninstall,
        mcp::UninstallArgs,
        "mcp.invalid_arg"
    ),
    route!(
        "PATCH",
        "/api/mcp/{server_id}/config",
        "mcp_server_config_write",
        Gated,
        "Set a server's plain [env] headers and/or enabled (PATCH /api/mcp/{server_id}/config).",
        mcp::configure,
        mcp::ConfigArgs,
        "mcp.config_invalid"
    ),
    route!(
        "POST",
        "/api/mcp/{server_id}/test",
        "mcp_server_test",
        AutonomousRead,
        "Probe a server with its own URL and headers: its tools and each one's verdict (POST /api/mcp/{server_id}/test).",
        mcp::test,
        mcp::IdArgs,
        "mcp.invalid_arg"
    ),
    route!(
        "GET",
        "/api/mcp/{server_id}/accounts",
        "mcp_account_list",
        AutonomousRead,
        "A server's OAuth accounts (box-wide, or one per consumer) with state and expiry, never a token (GET /api/mcp/{server_id}/accounts).",
        accounts::list_route,
        mcp::IdArgs,
        "mcp.invalid_arg"
    ),
    route!(
        "POST",
        "/api/mcp/{server_id}/connect",
        "mcp_account_connect",
        Gated,
        "Start connecting a server's OAuth account (`for`: a consumer's own): answers the authorization URL a person opens (POST /api/mcp/{server_id}/connect).",
        accounts::connect_route,
        accounts::AccountArgs,
        "mcp.invalid_arg"
    ),
    route!(
        "POST",
        "/api/mcp/{server_id}/disconnect",
        "mcp_account_disconnect",
        Gated,
        "Disconnect a server's OAuth account: its tokens revoked upstream where it can, and forgotten (POST /api/mcp/{server_id}/disconnect).",
        accounts::disconnect_route,
        accounts::AccountArgs,
        "mcp.invalid_arg"
    ),
    route!(
        "PATCH",
        "/api/mcp/{server_id}/tools",
        "mcp_server_tools",
        Gated,
        "Replace a server's whole tool policy; unlisted tools are denied (PATCH /api/mcp/{server_id}/tools).",
        mcp::set_tools,
        mcp::ToolsArgs,
        "mcp.tools_invalid"
    ),
    route!(
        "PATCH",
        "/api/mcp/{server_id}/exposure",
        "mcp_server_exposure",
        Gated,
        "Expose a server to Hermes profiles through hal0's proxy, or withdraw it (PATCH /api/mcp/{server_id}/exposure).",
        mcp::set_exposure,
        mcp::ExposureArgs,
        "mcp.exposure_invalid"
    ),
    route!(
        "POST",
        "/api/mcp/{server_id}/{action}",
        "mcp_server_action",
        Gated,
        "Start, stop or restart a stdio server's child process (POST /api/mcp/{server_id}/{action}).",
        mcp::control,
        mcp::ControlArgs,
        "mcp.invalid_arg"
    ),
    route!(
        "GET",
        "/api/doctor",
        "doctor_report",
        AutonomousRead,
        "hal0 doctor's rows: ok / warn / fail with a one-line detail (GET /api/doctor).",
        doctor::report,
        NoArgs,
        "request.invalid"
    ),
    OpDef {
        wrap: Some("entries"),
        ..route!(
            "GET",
            "/api/activity",
            "activity_list",
            AutonomousRead,
            "The audit log, newest first (GET /api/activity).",
            activity::list,
            activity::ListArgs,
            "activity.invalid_filter"
        )
    },
    OpDef {
        wrap: Some("entries"),
        ..route!(
            "GET",
            "/api/activity/export",
            "activity_export",
            AutonomousRead,
            "The audit log, oldest first, every matching entry (GET /api/activity/export).",
            activity::export,
            activity::ExportArgs,
            "activity.invalid_filter"
        )
    },
    route!(
        "GET",
        "/api/activity/verify",
        "activity_verify",
        AutonomousRead,
        "Walk the audit log's hash chain: intact, or the first row that was changed, removed or \
         added outside hal0 (GET /api/activity/verify).",
        activity::verify,
        NoArgs,
        "request.invalid"
    ),
    OpDef {
        wrap: Some("runs"),
        ..route!(
            "GET",
            "/api/runs",
            "run_list",
            AutonomousRead,
            "The agent bridge's runs of every client, newest first (GET /api/runs).",
            runs::list,
            runs::ListArgs,
            "runs.invalid_filter"
        )
    },
    route!(
        "GET",
        "/api/runs/{run_id}",
        "run_get",
        AutonomousRead,
        "One run of any client: status, pending question, usage and a 16 KiB window of its output from `offset` (GET /api/runs/{run_id}).",
        runs::get,
        runs::GetArgs,
        "runs.invalid_filter"
    ),
    route!(
        "GET",
        "/api/runs/{run_id}/events",
        "run_events",
        AutonomousRead,
        "A page of one run's stored events after `since`, oldest first (GET /api/runs/{run_id}/events).",
        runs::events,
        runs::EventsArgs,
        "runs.invalid_filter"
    ),
    excluded!(
        "GET",
        "/api/runs/{run_id}/stream",
        "a server-sent event stream; tools answer once (use run_get and run_events)"
    ),
    route!(
        "POST",
        "/api/runs/{run_id}/stop",
        "run_stop",
        Gated,
        "Ask a run's Hermes profile to stop it; it is `stopping` until Hermes ends it (POST /api/runs/{run_id}/stop).",
        runs::stop,
        runs::StopArgs,
        "runs.invalid_filter"
    ),
    OpDef {
        wrap: Some("consumers"),
        ..route!(
            "GET",
            "/api/mcp/keys",
            "mcp_key_list",
            AutonomousRead,
            "Consumer keys of hal0's MCP proxy: server, consumer, state, last use; never a key (GET /api/mcp/keys).",
            keys::list,
            keys::ListArgs,
            "mcp.invalid_arg"
        )
    },
    OpDef {
        status: 201,
        ..route!(
            "POST",
            "/api/mcp/{server_id}/keys",
            "mcp_key_add",
            Gated,
            "Mint a consumer key for an installed server (replaces the consumer's old key); the key is in this answer only (POST /api/mcp/{server_id}/keys).",
            keys::add,
            keys::AddArgs,
            "mcp.invalid_arg"
        )
    },
    route!(
        "DELETE",
        "/api/mcp/{server_id}/keys/{name}",
        "mcp_key_revoke",
        Gated,
        "Revoke a consumer's key; it stops working at once (DELETE /api/mcp/{server_id}/keys/{name}).",
        keys::revoke,
        keys::RevokeArgs,
        "mcp.invalid_arg"
    ),
    OpDef {
        wrap: Some("agents"),
        ..route!(
            "GET",
            "/api/relay/agents",
            "relay_agents",
            AutonomousRead,
            "The relay's bots (bridge clients holding the relay scope) and whether each is connected (GET /api/relay/agents).",
            relay::agents,
            NoArgs,
            "relay.invalid_filter"
        )
    },
    OpDef {
        wrap: Some("exchanges"),
        ..route!(
            "GET",
            "/api/relay/exchanges",
            "relay_exchanges",
            AutonomousRead,
            "The relay's exchanges (ask, answer or failure, times), newest first (GET /api/relay/exchanges).",
            relay::exchanges,
            relay::ExchangesArgs,
            "relay.invalid_filter"
        )
    },
];

/// Autonomous read tools (explicit set; a test checks it against the table).
pub const AUTONOMOUS_READ: &[&str] = &[
    "health_check",
    "store_status",
    "version_info",
    "bridge_client_list",
    "approval_list",
    "approval_count",
    "approval_rule_list",
    "approval_get",
    "settings_get",
    "settings_schema",
    "run_list",
    "run_get",
    "run_events",
    "mcp_key_list",
    "doctor_report",
    "mcp_server_list",
    "mcp_server_get",
    "mcp_client_list",
    "mcp_catalog",
    "mcp_resolve",
    "mcp_server_test",
    "mcp_account_list",
    "activity_list",
    "activity_export",
    "activity_verify",
    "relay_agents",
    "relay_exchanges",
];
/// Autonomous write tools.
pub const AUTONOMOUS_WRITE: &[&str] = &[];
/// Gated tools: nothing here runs without an approved row.
pub const GATED: &[&str] = &[
    "store_prune",
    "bridge_client_add",
    "bridge_client_scopes",
    "bridge_client_rotate",
    "bridge_client_revoke",
    "bridge_client_purge",
    "config_write",
    "secret_write",
    "logs_tail",
    "mcp_server_install",
    "mcp_server_uninstall",
    "mcp_server_config_write",
    "mcp_server_tools",
    "mcp_server_exposure",
    "mcp_server_action",
    "mcp_account_connect",
    "mcp_account_disconnect",
    "approval_rule_remove",
    "mcp_server_logs",
    "run_stop",
    "mcp_key_add",
    "mcp_key_revoke",
];

/// The route of a tool.
pub fn op_named(tool: &str) -> Option<&'static OpDef> {
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
        let sets: Vec<(&str, &[&str], Access)> = vec![
            ("read", AUTONOMOUS_READ, Access::AutonomousRead),
            ("write", AUTONOMOUS_WRITE, Access::AutonomousWrite),
            ("gated", GATED, Access::Gated),
        ];
        let mut seen = BTreeSet::new();
        for (label, set, tier) in sets {
            for t in set {
                assert!(seen.insert(*t), "{t} in two tiers");
                let r = op_named(t).unwrap_or_else(|| panic!("{label} tool {t} has no route"));
                assert_eq!(r.access, tier, "{t}: table tier differs from the {label} set");
            }
        }
        assert_eq!(seen, tools, "every tool sits in exactly one tier set");
    }

    #[test]
    fn every_route_has_an_audit_name_that_is_no_template() {
        let mut names = BTreeSet::new();
        for r in ROUTES {
            let n = r.name();
            assert!(!n.is_empty() && n.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'), "{r:?}: {n}");
            assert!(names.insert(n.to_string()) || r.run.is_none(), "{r:?}: {n} twice");
        }
        let approve = ROUTES.iter().find(|r| r.path == "/api/agent/approvals/{id}/approve").unwrap();
        assert_eq!(approve.name(), "approvals_approve");
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
