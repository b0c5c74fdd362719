//! The one JSON view of an MCP server, shared by `GET /api/mcp/servers[/{id}]`, the admin
//! tools, every `{server}` / `{installed}` answer and `hal0 mcp list|status --json`: the
//! spec's `InstalledServer` fields (`tools` is the count, `tool_policy` the policy, `env`
//! and `secrets` the names of settings and of referenced credentials — never a value),
//! plus hal0's own (`source_kind`, `allow_insecure_http`, `ca_file`, `bundled`, `state`,
//! `pid`). Callers pass it through the redactor before it leaves hal0.

use super::record::{Exposure, Record};
use super::{
    Bundled,
    policy::{AccessPolicy, ToolPolicy},
};
use serde::Serialize;
use std::path::Path;

/// An installed server as every front shows it.
#[derive(Debug, Serialize)]
pub struct ServerView<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub description: &'a str,
    pub spec: &'a str,
    pub source_kind: &'a str,
    pub source_url: Option<&'a str>,
    pub transport: &'static str,
    pub url: Option<&'a str>,
    pub command: Option<&'a str>,
    pub args: &'a [String],
    pub enabled: bool,
    pub installed_at: &'a str,
    /// How many tools the server declared when it was resolved.
    pub tools: u32,
    pub resources: u32,
    pub prompts: u32,
    pub author: &'a str,
    pub verified: bool,
    pub allow_insecure_http: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<&'a Path>,
    /// Names only: values are settings the record file holds, never echoed.
    pub env: Vec<&'a str>,
    /// Names only: each refers to a key in `api.env`.
    pub secrets: Vec<&'a str>,
    pub tool_policy: &'a ToolPolicy,
    /// The resources and prompts the proxy offers (`allow`, `blocked`).
    pub resource_access: &'a AccessPolicy,
    pub prompt_access: &'a AccessPolicy,
    pub exposure: ExposureView,
    /// The server wants an OAuth account: its authorization server and settings (never a
    /// token; the account's state is `hal0 mcp status`'s `account`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oauth: Option<&'a super::record::OauthNeed>,
    pub bundled: bool,
    /// `reachable` / `unreachable` / `disabled` for http servers; `running` / `stopped` for
    /// a stdio server's child (as the daemon sees it); absent where not asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
}

impl<'a> ServerView<'a> {
    pub fn of(r: &'a Record) -> ServerView<'a> {
        ServerView {
            id: &r.id,
            name: &r.name,
            description: &r.description,
            spec: &r.spec,
            source_kind: &r.source_kind,
            source_url: r.source_url.as_deref(),
            transport: r.transport.as_str(),
            url: r.url.as_deref(),
            command: r.command.as_deref(),
            args: &r.args,
            enabled: r.enabled,
            installed_at: &r.installed_at,
            tools: r.tools_count,
            resources: r.resources,
            prompts: r.prompts,
            author: &r.author,
            verified: r.verified,
            allow_insecure_http: r.allow_insecure_http,
            ca_file: r.ca_file.as_deref(),
            env: r.env.keys().map(String::as_str).collect(),
            secrets: r.secrets.keys().map(String::as_str).collect(),
            tool_policy: &r.tools,
            resource_access: &r.resource_access,
            prompt_access: &r.prompt_access,
            exposure: ExposureView::of(&r.exposure),
            oauth: r.oauth.as_ref(),
            bundled: false,
            state: None,
            pid: None,
        }
    }

    /// The same view with the server's state (and a stdio child's pid).
    pub fn with_state(mut self, state: &'a str, pid: Option<u32>) -> ServerView<'a> {
        self.state = Some(state);
        self.pid = pid;
        self
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// The exposure targets hal0 can join today (`openwebui` and `opencode` have no join yet,
/// so their flags cannot take effect and are not shown).
#[derive(Debug, Serialize)]
pub struct ExposureView {
    pub hermes: bool,
    pub brain: bool,
}

impl ExposureView {
    fn of(e: &Exposure) -> ExposureView {
        ExposureView { hermes: e.hermes, brain: e.brain }
    }
}

/// A bundled server as every front shows it.
pub fn bundled_json(b: &Bundled) -> serde_json::Value {
    serde_json::json!({"id": b.id, "name": b.id, "description": b.description, "mount": b.mount,
                       "bundled": true, "state": "running"})
}
