//! Ready-to-paste MCP client configs for a bridge key: Claude Code (`claude mcp add`),
//! Cursor, VS Code, Codex and Claude Desktop. Each names the key through the environment
//! variable [`KEY_VAR`] (or the client's own prompt), never the key itself, so it stays out
//! of shell history and of config files; and `MCP-CLIENTS.md`, the same for every client
//! with this box's address, kept in the config dir. `hal0 bridge add --client` and the file
//! come from this one module.

use crate::base::error::{Error, Result};
use crate::base::paths::Paths;
use crate::config::Config;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// The environment variable every snippet reads the key from.
pub const KEY_VAR: &str = "HAL0_BRIDGE_KEY";

/// The config file kept in the config dir.
pub const FILE: &str = "MCP-CLIENTS.md";

/// One of hal0's servers as a client reaches it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Server {
    /// Its name (`hal0-agents`).
    pub name: String,
    /// Its streamable HTTP URL.
    pub url: String,
}

/// The MCP clients hal0 writes configs for, by their `--client` names.
pub const KINDS: [&str; 6] = ["claude-code", "hermes", "cursor", "vscode", "codex", "claude-desktop"];

/// A client's config: where it goes, and the text.
#[derive(Debug, Clone, PartialEq)]
pub struct Snippet {
    /// The client, in words.
    pub client: &'static str,
    /// Where the text goes (a file, or the shell).
    pub place: &'static str,
    pub text: String,
}

/// The shell line that reads the key without echoing it or leaving it in the history
/// (bash and zsh), then exports it for the commands after it.
pub fn key_prompt() -> String {
    format!("printf 'hal0 bridge key: '; read -rs {KEY_VAR}; echo; export {KEY_VAR}")
}

/// The config of client `kind` (one of [`KINDS`]) for `servers`.
pub fn snippet(kind: &str, servers: &[Server]) -> Result<Snippet> {
    let bearer_env = format!("Bearer ${{{KEY_VAR}}}");
    let json = |v: serde_json::Value| serde_json::to_string_pretty(&v).unwrap_or_default();
    let map = |f: &dyn Fn(&Server) -> serde_json::Value| -> serde_json::Map<String, serde_json::Value> {
        servers.iter().map(|s| (s.name.clone(), f(s))).collect()
    };
    Ok(match kind {
        "claude-code" => {
            let mut text = key_prompt();
            for s in servers {
                let _ = write!(
                    text,
                    "\nclaude mcp add --transport http {} {} --header \"Authorization: Bearer ${{{KEY_VAR}}}\"",
                    crate::base::term::shell_quote(&s.name),
                    crate::base::term::shell_quote(&s.url)
                );
            }
            Snippet { client: "Claude Code", place: "the shell on the remote machine", text }
        }
        "hermes" => {
            let mut text = String::from("mcp_servers:\n");
            for s in servers {
                let _ = write!(
                    text,
                    "  {}:\n    url: {}\n    timeout: 30\n    headers:\n      X-hal0-Agent: my-workstation-hermes\n      \
                     Authorization: Bearer ${{{KEY_VAR}}}\n",
                    s.name, s.url
                );
            }
            Snippet {
                client: "Hermes on a workstation",
                place: "~/.hermes/config.yaml (Hermes reads the key from the environment: export HAL0_BRIDGE_KEY)",
                text: text.trim_end().to_string(),
            }
        }
        "cursor" => Snippet {
            client: "Cursor",
            place: "~/.cursor/mcp.json (Cursor reads the key from the environment: export HAL0_BRIDGE_KEY before starting it)",
            text: json(serde_json::json!({"mcpServers": map(&|s| serde_json::json!({
                "url": s.url, "headers": {"Authorization": format!("Bearer ${{env:{KEY_VAR}}}")}}))})),
        },
        "vscode" => Snippet {
            client: "VS Code",
            place: ".vscode/mcp.json (VS Code asks for the key once and keeps it in its secret storage)",
            text: json(serde_json::json!({
                "inputs": [{"type": "promptString", "id": "hal0-bridge-key", "description": "hal0 bridge key", "password": true}],
                "servers": map(&|s| serde_json::json!({
                    "type": "http", "url": s.url, "headers": {"Authorization": "Bearer ${input:hal0-bridge-key}"}})),
            })),
        },
        "codex" => {
            let mut text = String::new();
            for s in servers {
                let _ = write!(
                    text,
                    "[mcp_servers.{}]\nurl = {}\nbearer_token_env_var = \"{KEY_VAR}\"\n\n",
                    s.name,
                    toml_edit::Value::from(s.url.as_str())
                );
            }
            Snippet {
                client: "Codex",
                place: "~/.codex/config.toml (Codex reads the key from the environment: export HAL0_BRIDGE_KEY)",
                text: text.trim_end().to_string(),
            }
        }
        "claude-desktop" => Snippet {
            client: "Claude Desktop",
            place: "claude_desktop_config.json (through the mcp-remote bridge; replace the variable with the key there, \
                    or connect with OAuth instead: hal0 oauth enable)",
            text: json(serde_json::json!({"mcpServers": map(&|s| serde_json::json!({
                "command": "npx",
                "args": ["-y", "mcp-remote", s.url, "--header", "Authorization:${HAL0_AUTH}"],
                "env": {"HAL0_AUTH": bearer_env}}))})),
        },
        other => {
            return Err(Error::invalid(
                "bridge.unknown_client_kind",
                format!("no config is written for client `{other}`: choose one of {}", KINDS.join(", ")),
            ));
        }
    })
}

/// The servers a client reaches on this box, all of hal0's mounted ones (a key opens those
/// its scopes hold).
pub fn box_servers(cfg: &Config) -> Vec<Server> {
    let base = crate::connect::base_url(cfg).0;
    crate::connect::mounted(cfg)
        .filter(|m| m.name != "relay")
        .map(|m| Server { name: m.server.to_string(), url: format!("{base}{}", m.path()) })
        .collect()
}

/// `MCP-CLIENTS.md`: every client's config for this box.
pub fn render(cfg: &Config) -> String {
    let servers = box_servers(cfg);
    let base = crate::connect::base_url(cfg).0;
    let mut md = format!(
        "# MCP clients for this box\n\n\
         Written by hal0 from its configuration (`{base}`); it is rewritten when the box's address \
         changes, so edits here are lost. A bridge key opens the servers its scopes hold (`hal0 bridge add NAME \
         --scope …`); each config below reads the key from `{KEY_VAR}` or asks for it, so it never lands in a \
         shell history or a config file in clear. `hal0 bridge add NAME --client KIND` prints one of them.\n"
    );
    for kind in KINDS {
        let Ok(s) = snippet(kind, &servers) else { continue };
        let lang = match kind {
            "claude-code" => "sh",
            "codex" => "toml",
            "hermes" => "yaml",
            _ => "json",
        };
        let _ = write!(md, "\n## {} (`--client {kind}`)\n\nIn {}:\n\n```{lang}\n{}\n```\n", s.client, s.place, s.text);
    }
    md
}

/// Write `MCP-CLIENTS.md` into the config dir when its text changed (mode 0644: it holds no
/// secret). Best effort for callers that only refresh it: the error says why it failed.
pub fn write(paths: &Paths, cfg: &Config) -> Result<bool> {
    let path = paths.config_dir.join(FILE);
    let text = render(cfg);
    if crate::base::paths::read_optional_bytes(&path)?.is_some_and(|b| b == text.as_bytes()) {
        return Ok(false);
    }
    crate::base::paths::write_atomic_mode(&path, text.as_bytes(), 0o644)?;
    Ok(true)
}

/// [`write`] after a change to the config or the clients, best effort: a failure is logged
/// (the file is a convenience; nothing reads it back).
pub fn refresh(paths: &Paths, cfg: &Config) {
    if let Err(e) = write(paths, cfg) {
        tracing::warn!("{FILE} was not refreshed: {}", e.message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn servers() -> Vec<Server> {
        vec![Server { name: "hal0-agents".into(), url: "https://box.example/mcp/agents/mcp".into() }]
    }

    #[test]
    fn no_snippet_holds_a_key_and_each_names_the_variable() {
        for kind in KINDS {
            let s = snippet(kind, &servers()).unwrap();
            assert!(s.text.contains("https://box.example/mcp/agents/mcp"), "{kind}: {}", s.text);
            assert!(!s.text.contains("hal0bk_"), "{kind}");
            assert!(s.text.contains(KEY_VAR) || s.text.contains("${input:"), "{kind}: {}", s.text);
        }
        assert_eq!(snippet("emacs", &servers()).unwrap_err().code, "bridge.unknown_client_kind");
    }

    #[test]
    fn json_snippets_parse_and_codex_is_toml() {
        for kind in ["cursor", "vscode", "claude-desktop"] {
            let v: serde_json::Value = serde_json::from_str(&snippet(kind, &servers()).unwrap().text).unwrap();
            assert!(v.is_object(), "{kind}");
        }
        let t: toml_edit::DocumentMut = snippet("codex", &servers()).unwrap().text.parse().unwrap();
        assert_eq!(t["mcp_servers"]["hal0-agents"]["bearer_token_env_var"].as_str(), Some(KEY_VAR));
    }
}
