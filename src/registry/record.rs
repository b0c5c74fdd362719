//! One installed MCP server = one file, `<config>/mcp-servers/<id>.toml`, mode 0600. Read
//! with serde (unknown keys refused, errors name the file and line); edited in place with
//! toml_edit so an operator's comments and ordering survive.

use super::policy::{AccessPolicy, ToolList, ToolPolicy};
use crate::base::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// How hal0 reaches the server.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
pub enum Transport {
    #[default]
    #[serde(rename = "stdio")]
    Stdio,
    #[serde(rename = "streamable-http")]
    StreamableHttp,
    #[serde(rename = "sse")]
    Sse,
}

impl Transport {
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::StreamableHttp => "streamable-http",
            Transport::Sse => "sse",
        }
    }
}

/// Which agents the server is joined into. A fresh record has none.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct Exposure {
    pub hermes: bool,
    pub brain: bool,
    pub openwebui: bool,
    pub opencode: bool,
}

fn yes() -> bool {
    true
}

/// `[oauth]`: the server wants an OAuth account (found by `hal0 mcp test` or install from
/// its 401 and Protected Resource Metadata). Tokens are never here: they are sealed in the
/// state dir ([`super::oauth`]).
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct OauthNeed {
    /// The authorization server (its issuer URL).
    #[serde(default)]
    pub issuer: String,
    /// Where its Protected Resource Metadata was read.
    #[serde(default)]
    pub resource_metadata: String,
    /// Whose account the calls go upstream as: `box` (one account serves every consumer)
    /// or `delegated` (each consumer connects its own, and its calls go as that account).
    #[serde(default = "box_accounts")]
    pub accounts: String,
    /// A client id the operator registered at the authorization server (else hal0
    /// registers itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// The api.env key holding that client's secret, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// Scopes to ask for (space-separated; default: what the server's challenge names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Whether the first call made with an account (one no person has approved a call of
    /// yet) waits in the approvals inbox, even for an allowed tool.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gate_first_call: bool,
    /// Whose delegated account this copy of the record calls with (set by the proxy for one
    /// consumer; never read from or written to the file).
    #[serde(skip)]
    pub holder: Option<String>,
}

/// `accounts = "box"`: one account serves every consumer.
pub const BOX_ACCOUNTS: &str = "box";
/// `accounts = "delegated"`: each consumer connects its own account.
pub const DELEGATED_ACCOUNTS: &str = "delegated";

fn box_accounts() -> String {
    BOX_ACCOUNTS.into()
}

impl OauthNeed {
    /// Whether each consumer connects its own account.
    pub fn delegated(&self) -> bool {
        self.accounts == DELEGATED_ACCOUNTS
    }
}

/// The typed view of a record file.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Record {
    pub id: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// The install spec, verbatim.
    #[serde(default)]
    pub spec: String,
    #[serde(default)]
    pub source_kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_url: Option<String>,
    #[serde(default)]
    pub transport: Transport,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default = "yes")]
    pub enabled: bool,
    #[serde(default)]
    pub installed_at: String,
    #[serde(default)]
    pub tools_count: u32,
    #[serde(default)]
    pub resources: u32,
    #[serde(default)]
    pub prompts: u32,
    #[serde(default)]
    pub author: String,
    #[serde(default)]
    pub verified: bool,
    #[serde(default)]
    pub allow_insecure_http: bool,
    /// A PEM file of CA certificates trusted for this server's https URL besides the system
    /// store and the webpki roots (a private CA).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<std::path::PathBuf>,
    /// Plain, non-secret settings: name → value.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Credentials by reference: name → the name of a key in api.env, never a value.
    #[serde(default)]
    pub secrets: BTreeMap<String, String>,
    #[serde(default)]
    pub tools: ToolPolicy,
    /// The resources (by URI) a consumer of the proxy may list, read and subscribe to.
    #[serde(default, skip_serializing_if = "AccessPolicy::is_empty")]
    pub resource_access: AccessPolicy,
    /// The prompts (by name) a consumer of the proxy may list and get.
    #[serde(default, skip_serializing_if = "AccessPolicy::is_empty")]
    pub prompt_access: AccessPolicy,
    #[serde(default)]
    pub exposure: Exposure,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<OauthNeed>,
    /// The release an `npm:` / `uvx:` record runs ([`super::packages`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<PackagePin>,
}

/// The `[package]` table: the exact release a package record runs, as its registry gave it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PackagePin {
    /// `npm` or `pypi`.
    pub ecosystem: String,
    /// The registry asked (npm registry or PyPI index base URL).
    pub registry: String,
    pub name: String,
    pub version: String,
    /// The registry's hash of the release (npm's `dist.integrity`; `sha256:` of PyPI's file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integrity: Option<String>,
    /// When it was resolved (RFC 3339, UTC).
    pub resolved_at: String,
}

impl PackagePin {
    pub fn new(ecosystem: &str, registry: &str, name: &str, version: &str, integrity: Option<String>) -> PackagePin {
        PackagePin {
            ecosystem: ecosystem.into(),
            registry: registry.into(),
            name: name.into(),
            version: version.into(),
            integrity,
            resolved_at: crate::store::now(),
        }
    }
}

/// Which access table of a record: `[resource_access]` or `[prompt_access]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Resources,
    Prompts,
}

impl Access {
    /// The table's name in the record file.
    pub fn table(self) -> &'static str {
        match self {
            Access::Resources => "resource_access",
            Access::Prompts => "prompt_access",
        }
    }
}

impl Record {
    /// What starting a stdio server needs from its record: the command, or why it has none.
    pub fn start_command(&self) -> Result<&str> {
        self.command.as_deref().filter(|c| !c.trim().is_empty()).ok_or_else(|| {
            Error::new(
                "mcp.supervisor_unavailable",
                crate::base::error::Kind::Unsupported,
                format!(
                    "`{}` is a stdio server without a command to start (a {} install); set `command` and `args` in \
                     its record",
                    self.id, self.source_kind
                ),
            )
        })
    }

    /// The record's access table `which`.
    pub fn access(&self, which: Access) -> &AccessPolicy {
        match which {
            Access::Resources => &self.resource_access,
            Access::Prompts => &self.prompt_access,
        }
    }
}

/// The ids of hal0's own servers ([`crate::connect::MOUNTS`]): no record may take one.
pub const BUNDLED_IDS: [&str; 4] = [
    crate::connect::MOUNTS[0].server,
    crate::connect::MOUNTS[1].server,
    crate::connect::MOUNTS[2].server,
    crate::connect::MOUNTS[3].server,
];

/// Id rules: 1–64 of `a-z`, `0-9`, `-`, `_`.
pub fn validate_id(id: &str) -> Result<()> {
    if id.is_empty()
        || id.len() > 64
        || !id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
    {
        return Err(Error::invalid(
            "mcp.invalid_id",
            "a server id is 1–64 of lower-case letters, digits, `-` and `_` (e.g. github or my_server-2)",
        ));
    }
    Ok(())
}

/// Validate an id for a new record: the rules, and not a bundled server's id.
pub fn validate_new_id(id: &str) -> Result<()> {
    if BUNDLED_IDS.contains(&id) {
        return Err(Error::conflict(
            "mcp.bundled",
            format!("`{id}` is one of hal0's bundled servers; pick another id"),
        ));
    }
    validate_id(id)
}

/// A secret reference names a key in api.env: `^[A-Z][A-Z0-9_]{0,63}$`.
fn valid_secret_ref(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(f) if f.is_ascii_uppercase())
        && s.len() <= 64
        && c.all(|ch| ch.is_ascii_uppercase() || ch.is_ascii_digit() || ch == '_')
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

fn find_line(text: &str, key: &str) -> Option<usize> {
    text.lines().position(|l| l.trim_start().starts_with(key)).map(|i| i + 1)
}

fn malformed(path: &Path, line: Option<usize>, msg: &str) -> Error {
    let at = line.map(|l| format!(" line {l}")).unwrap_or_default();
    Error::invalid(
        "mcp.record_malformed",
        format!("{}{at}: {msg} (fix the file, or remove it with `hal0 mcp uninstall ID --force`)", path.display()),
    )
}

fn located(path: &Path, line: Option<usize>, msg: &str) -> (Option<usize>, Error) {
    (line, malformed(path, line, msg))
}

impl Record {
    /// A fresh record: enabled, zero callable tools, zero exposure.
    pub fn new(id: &str, name: &str, spec: &str, transport: Transport) -> Record {
        Record {
            id: id.into(),
            name: name.into(),
            description: String::new(),
            spec: spec.into(),
            source_kind: String::new(),
            source_url: None,
            transport,
            url: None,
            command: None,
            args: Vec::new(),
            enabled: true,
            installed_at: String::new(),
            tools_count: 0,
            resources: 0,
            prompts: 0,
            author: "user".into(),
            verified: false,
            allow_insecure_http: false,
            ca_file: None,
            env: BTreeMap::new(),
            secrets: BTreeMap::new(),
            tools: ToolPolicy::default(),
            resource_access: AccessPolicy::default(),
            prompt_access: AccessPolicy::default(),
            exposure: Exposure::default(),
            oauth: None,
            package: None,
        }
    }

    /// Parse and validate a record file's text; errors name the file and the line.
    pub fn parse(path: &Path, text: &str) -> Result<Record> {
        Record::parse_located(path, text).map_err(|(_, e)| e)
    }

    /// [`Record::parse`], with the line a refusal points at (for listings that name the
    /// file and line only).
    pub fn parse_located(path: &Path, text: &str) -> std::result::Result<Record, (Option<usize>, Error)> {
        let r: Record = toml_edit::de::from_str(text).map_err(|e| {
            let line = e.span().map(|s| line_of(text, s.start));
            located(path, line, e.message().trim())
        })?;
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        validate_id(&r.id).map_err(|e| located(path, find_line(text, "id"), &e.message))?;
        if r.id != stem {
            return Err(located(
                path,
                find_line(text, "id"),
                &format!("id `{}` does not match the file name `{stem}.toml`", r.id),
            ));
        }
        if matches!(r.transport, Transport::StreamableHttp | Transport::Sse) {
            match &r.url {
                Some(u) if u.starts_with("http://") || u.starts_with("https://") => {}
                _ => {
                    return Err(located(
                        path,
                        find_line(text, "url").or_else(|| find_line(text, "transport")),
                        &format!("a {} server needs `url = \"http(s)://…\"`", r.transport.as_str()),
                    ));
                }
            }
        }
        for (name, key) in &r.secrets {
            if !valid_secret_ref(key) {
                return Err(located(
                    path,
                    find_line(text, name),
                    &format!(
                        "secrets.{name} must name a key in api.env (upper-case letters, digits, `_`), not hold a value"
                    ),
                ));
            }
        }
        if let Some(o) = &r.oauth {
            let line = find_line(text, "[oauth]");
            if o.accounts != BOX_ACCOUNTS && o.accounts != DELEGATED_ACCOUNTS {
                return Err(located(
                    path,
                    line,
                    &format!(
                        "oauth.accounts `{}` is not known: use \"box\" (one account for every consumer) or \
                         \"delegated\" (each consumer connects its own)",
                        o.accounts
                    ),
                ));
            }
            if o.client_secret.as_deref().is_some_and(|k| !valid_secret_ref(k)) {
                return Err(located(
                    path,
                    line,
                    "oauth.client_secret must name a key in api.env (upper-case letters, digits, `_`), not hold a value",
                ));
            }
        }
        r.tools.validate().map_err(|e| located(path, find_line(text, "[tools]"), &e.message))?;
        for which in [Access::Resources, Access::Prompts] {
            r.access(which)
                .validate(which.table())
                .map_err(|e| located(path, find_line(text, &format!("[{}]", which.table())), &e.message))?;
        }
        Ok(r)
    }

    /// The record as a fresh file (used on install only; later edits keep the file's text).
    pub fn to_toml(&self) -> String {
        let mut doc = toml_edit::DocumentMut::new();
        let header = format!(
            "# MCP server `{}`, installed by hal0. Edit freely; comments are kept.\n\
             # [secrets] values name keys in api.env, never the secret itself.\n",
            self.id
        );
        let mut put = |k: &str, v: toml_edit::Value| {
            doc.insert(k, toml_edit::Item::Value(v));
        };
        put("id", self.id.as_str().into());
        put("name", self.name.as_str().into());
        put("description", self.description.as_str().into());
        put("spec", self.spec.as_str().into());
        put("source_kind", self.source_kind.as_str().into());
        if let Some(u) = &self.source_url {
            put("source_url", u.as_str().into());
        }
        put("transport", self.transport.as_str().into());
        if let Some(u) = &self.url {
            put("url", u.as_str().into());
        }
        if let Some(c) = &self.command {
            put("command", c.as_str().into());
        }
        if let Some(p) = &self.ca_file {
            put("ca_file", p.to_string_lossy().as_ref().into());
        }
        put("args", self.args.iter().map(String::as_str).collect::<toml_edit::Array>().into());
        put("enabled", self.enabled.into());
        put("installed_at", self.installed_at.as_str().into());
        put("author", self.author.as_str().into());
        let mut env = toml_edit::Table::new();
        for (k, v) in &self.env {
            env.insert(k, toml_edit::value(v.as_str()));
        }
        doc.insert("env", toml_edit::Item::Table(env));
        let mut secrets = toml_edit::Table::new();
        for (k, v) in &self.secrets {
            secrets.insert(k, toml_edit::value(v.as_str()));
        }
        doc.insert("secrets", toml_edit::Item::Table(secrets));
        let mut tools = toml_edit::Table::new();
        for t in ToolList::ALL {
            tools.insert(
                t.key(),
                toml_edit::value(self.tools.list(t).iter().map(String::as_str).collect::<toml_edit::Array>()),
            );
        }
        doc.insert("tools", toml_edit::Item::Table(tools));
        let mut exp = toml_edit::Table::new();
        exp.insert("hermes", toml_edit::value(self.exposure.hermes));
        exp.insert("brain", toml_edit::value(self.exposure.brain));
        doc.insert("exposure", toml_edit::Item::Table(exp));
        if let Some(pin) = &self.package {
            doc.insert("package", toml_edit::Item::Table(package_table(pin)));
        }
        let text = format!("{header}{doc}");
        match &self.oauth {
            // The same table an edit writes.
            Some(n) => edit_oauth(Path::new(&self.id), &text, Some(n)).unwrap_or(text),
            None => text,
        }
    }
}

fn package_table(pin: &PackagePin) -> toml_edit::Table {
    let mut t = toml_edit::Table::new();
    t.insert("ecosystem", toml_edit::value(pin.ecosystem.as_str()));
    t.insert("registry", toml_edit::value(pin.registry.as_str()));
    t.insert("name", toml_edit::value(pin.name.as_str()));
    t.insert("version", toml_edit::value(pin.version.as_str()));
    if let Some(i) = &pin.integrity {
        t.insert("integrity", toml_edit::value(i.as_str()));
    }
    t.insert("resolved_at", toml_edit::value(pin.resolved_at.as_str()));
    t
}

/// Rewrite a record file's text to run release `pin` with `args`: `args` and the `[package]`
/// table replaced in place, everything else (comments included) kept.
pub fn edit_package(path: &Path, text: &str, args: &[String], pin: &PackagePin) -> Result<String> {
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        malformed(path, e.span().map(|s| line_of(text, s.start)), e.message().trim())
    })?;
    doc["args"] = toml_edit::value(args.iter().map(String::as_str).collect::<toml_edit::Array>());
    doc.insert("package", toml_edit::Item::Table(package_table(pin)));
    Ok(doc.to_string())
}

/// Rewrite the `[tools]` lists of a record file's text to `policy`, in place: each list
/// keeps its position, its comments and the layout of the entries that stay.
pub fn edit_policy(path: &Path, text: &str, policy: &ToolPolicy) -> Result<String> {
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        malformed(path, e.span().map(|s| line_of(text, s.start)), e.message().trim())
    })?;
    let tools = doc
        .entry("tools")
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_like_mut()
        .ok_or_else(|| malformed(path, find_line(text, "tools"), "`tools` is not a table"))?;
    for t in ToolList::ALL {
        let want = policy.list(t);
        match tools.get_mut(t.key()).and_then(|i| i.as_array_mut()) {
            Some(arr) => {
                arr.retain(|v| v.as_str().is_some_and(|s| want.iter().any(|w| w == s)));
                let have: Vec<String> = arr.iter().filter_map(|v| v.as_str().map(str::to_string)).collect();
                for w in want {
                    if !have.contains(w) {
                        arr.push(w.as_str());
                    }
                }
            }
            None => {
                tools.insert(t.key(), toml_edit::value(want.iter().map(String::as_str).collect::<toml_edit::Array>()));
            }
        }
    }
    Ok(doc.to_string())
}

/// Rewrite access table `which` of a record file's text to `policy`, in place (the
/// table is created when missing; comments and other keys stay).
pub fn edit_access(path: &Path, text: &str, which: Access, policy: &AccessPolicy) -> Result<String> {
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        malformed(path, e.span().map(|s| line_of(text, s.start)), e.message().trim())
    })?;
    let table = doc
        .entry(which.table())
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_like_mut()
        .ok_or_else(|| {
            malformed(path, find_line(text, which.table()), &format!("`{}` is not a table", which.table()))
        })?;
    for (key, want) in [("allow", &policy.allow), ("blocked", &policy.blocked)] {
        table.insert(key, toml_edit::value(want.iter().map(String::as_str).collect::<toml_edit::Array>()));
    }
    Ok(doc.to_string())
}

/// Set keys in the record: `enabled`, `[exposure]` flags, `[env]` and `[secrets]` entries
/// (an empty value removes the entry). Everything else — comments, order, other keys — stays.
pub fn edit_fields(path: &Path, text: &str, edit: &FieldEdit) -> Result<String> {
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        malformed(path, e.span().map(|s| line_of(text, s.start)), e.message().trim())
    })?;
    if let Some(on) = edit.enabled {
        doc["enabled"] = toml_edit::value(on);
    }
    if !edit.exposure.is_empty() {
        let t = doc
            .entry("exposure")
            .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
            .as_table_like_mut()
            .ok_or_else(|| malformed(path, find_line(text, "exposure"), "`exposure` is not a table"))?;
        for (k, v) in &edit.exposure {
            t.insert(k, toml_edit::value(*v));
        }
    }
    for (table, entries) in [("env", &edit.env), ("secrets", &edit.secrets)] {
        if entries.is_empty() {
            continue;
        }
        let t = doc
            .entry(table)
            .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
            .as_table_like_mut()
            .ok_or_else(|| malformed(path, find_line(text, table), &format!("`{table}` is not a table")))?;
        for (k, v) in entries {
            if v.is_empty() {
                t.remove(k);
            } else {
                t.insert(k, toml_edit::value(v.as_str()));
            }
        }
    }
    Ok(doc.to_string())
}

/// Set (or with `None` remove) the `[oauth]` table of a record file's text; the rest of
/// the file stays as it is.
pub fn edit_oauth(path: &Path, text: &str, need: Option<&OauthNeed>) -> Result<String> {
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        malformed(path, e.span().map(|s| line_of(text, s.start)), e.message().trim())
    })?;
    match need {
        None => {
            doc.remove("oauth");
        }
        Some(n) => {
            let mut t = toml_edit::Table::new();
            t.insert("issuer", toml_edit::value(n.issuer.as_str()));
            t.insert("resource_metadata", toml_edit::value(n.resource_metadata.as_str()));
            t.insert("accounts", toml_edit::value(n.accounts.as_str()));
            for (k, v) in [("client_id", &n.client_id), ("client_secret", &n.client_secret), ("scope", &n.scope)] {
                if let Some(v) = v {
                    t.insert(k, toml_edit::value(v.as_str()));
                }
            }
            if n.gate_first_call {
                t.insert("gate_first_call", toml_edit::value(true));
            }
            doc.insert("oauth", toml_edit::Item::Table(t));
        }
    }
    Ok(doc.to_string())
}

/// What [`edit_fields`] changes.
#[derive(Debug, Clone, Default)]
pub struct FieldEdit {
    pub enabled: Option<bool>,
    /// `hermes`, `brain`, `openwebui`, `opencode` → value.
    pub exposure: Vec<(String, bool)>,
    /// Header name → value; empty removes.
    pub env: Vec<(String, String)>,
    /// `[secrets]`: header name → the `api.env` name it takes its value from.
    pub secrets: Vec<(String, String)>,
}

/// Whether `name` can be an `[env]` / `[secrets]` entry: it is sent as a request header.
fn header_name_ok(name: &str) -> bool {
    !name.is_empty() && name.len() <= 128 && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A `[secrets]` entry's name: a request header name.
pub fn validate_secret_header(name: &str) -> Result<()> {
    if header_name_ok(name) {
        return Ok(());
    }
    Err(Error::invalid(
        "mcp.invalid_header",
        format!(
            "`{}` is not a usable header name: use letters, digits, `-` or `_` (at most 128)",
            crate::base::term::safe_line(name)
        ),
    ))
}

/// `[env]` names are sent as request headers: they must be valid header names, and a
/// credential-shaped value belongs in `[secrets]` instead.
pub fn validate_env(name: &str, value: &str) -> Result<()> {
    if !header_name_ok(name) {
        return Err(Error::invalid(
            "mcp.env_invalid",
            format!("`{name}` is not a usable header name: use letters, digits, `-` or `_` (at most 128)"),
        ));
    }
    if value.len() > 4096 || value.contains(['\r', '\n']) {
        return Err(Error::invalid(
            "mcp.env_invalid",
            format!("the value of `{name}` must be one line of at most 4096 bytes"),
        ));
    }
    if name.eq_ignore_ascii_case("authorization") || crate::base::redact::is_secret_shaped(value) {
        return Err(Error::invalid(
            "mcp.env_secret",
            format!(
                "`{name}` looks like a credential: put the value in api.env and name it under [secrets] in the \
                 record instead of [env]"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn p(id: &str) -> PathBuf {
        PathBuf::from(format!("/etc/hal0/mcp-servers/{id}.toml"))
    }

    #[test]
    fn fresh_record_round_trips_with_nothing_callable_or_exposed() {
        let mut r = Record::new("github", "GitHub", "https://x.example/mcp", Transport::StreamableHttp);
        r.url = Some("https://x.example/mcp".into());
        let text = r.to_toml();
        let back = Record::parse(&p("github"), &text).unwrap();
        assert_eq!(back, r);
        assert_eq!(back.tools, ToolPolicy::default());
        assert_eq!(back.exposure, Exposure::default());
    }

    #[test]
    fn ids() {
        for ok in ["a", "github", "my_server-2", &"x".repeat(64)] {
            validate_id(ok).unwrap();
        }
        for bad in ["", "Upper", "has space", "dot.ted", "../x", &"x".repeat(65)] {
            assert_eq!(validate_id(bad).unwrap_err().code, "mcp.invalid_id", "{bad}");
        }
        let e = validate_new_id("hal0-agents").unwrap_err();
        assert_eq!((e.code, e.status()), ("mcp.bundled", 409));
    }

    #[test]
    fn malformed_names_file_and_line() {
        let e = Record::parse(&p("x"), "id = \"x\"\n# c\nenabled = \"yes\"\n").unwrap_err();
        assert_eq!(e.code, "mcp.record_malformed");
        assert!(e.message.contains("/etc/hal0/mcp-servers/x.toml line 3"), "{}", e.message);
        let e = Record::parse(&p("x"), "id = \"y\"\n").unwrap_err();
        assert!(e.message.contains("does not match"), "{}", e.message);
        let e = Record::parse(&p("x"), "id = \"x\"\n[secrets]\nT = \"ghp_literal\"\n").unwrap_err();
        assert!(e.message.contains("line 3") && !e.message.contains("ghp_literal"), "{}", e.message);
        let e = Record::parse(&p("x"), "id = \"x\"\ntransport = \"sse\"\n").unwrap_err();
        assert!(e.message.contains("needs `url"), "{}", e.message);
        let e = Record::parse(&p("x"), "id = \"x\"\n[tools]\nallow = [\"a\"]\nblocked = [\"a\"]\n").unwrap_err();
        assert!(e.message.contains("line 2"), "{}", e.message);
        // Access tables: a bad entry names its table and line; a gated list does not exist.
        let e = Record::parse(&p("x"), "id = \"x\"\n\n[resource_access]\nallow = [\"a b\"]\n").unwrap_err();
        assert!(e.message.contains("line 3") && e.message.contains("[resource_access]"), "{}", e.message);
        let e = Record::parse(&p("x"), "id = \"x\"\n[prompt_access]\ngated = [\"p\"]\n").unwrap_err();
        assert!(e.message.contains("gated"), "{}", e.message);
        let r = Record::parse(&p("x"), "id = \"x\"\n[prompt_access]\nallow = [\"p\"]\n").unwrap();
        assert_eq!(r.prompt_access.verdict("p"), super::super::policy::Verdict::Allow);
    }

    #[test]
    fn edit_policy_keeps_comments() {
        let text = "# top\nid = \"x\"\n[tools]\n# allowed ones\nallow = [\"a\", # first\n  \"b\"]\ngated = []\n";
        let pol = ToolPolicy { allow: vec!["a".into(), "b".into()], gated: vec!["c".into()], blocked: vec![] };
        let out = edit_policy(&p("x"), text, &pol).unwrap();
        assert!(out.contains("# top") && out.contains("# allowed ones") && out.contains("# first"), "{out}");
        let r = Record::parse(&p("x"), &out).unwrap();
        assert_eq!(r.tools, pol);
    }
}
