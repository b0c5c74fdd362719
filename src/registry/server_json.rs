//! The MCP Registry's format as a catalogue source: a `GET /v0/servers` (or `/v0.1/servers`)
//! answer (`{"servers": [{"server": {…server.json…}, "_meta": {…}}], "metadata": {…}}`) or a
//! single `server.json`, turned into catalogue items (`super::catalog`'s own format) that
//! then pass the catalogue's one validator.
//!
//! Each server becomes one item: the first package hal0 can run (npm → `npm:`, PyPI →
//! `uvx:`, OCI → `oci://`, over stdio), else the first remote (streamable-http or sse) whose
//! URL is fixed (one with `{variables}` needs values a catalogue cannot hold). Required
//! environment variables become `env_required`. A server the registry marks `deleted` is
//! dropped; `deprecated` is kept and flagged `archived`. A registry entry is never
//! `verified` (that flag is hal0's own curation). What cannot be turned into an item is
//! skipped with the reason, and the refresh says so.

use serde_json::{Map, Value, json};

/// The registry's own metadata key.
const OFFICIAL: &str = "io.modelcontextprotocol.registry/official";

/// Whether `v` is in the registry's format (a server list or one server.json).
pub fn is_registry(v: &Value) -> bool {
    v.get("servers").is_some_and(Value::is_array) || is_server(v)
}

fn is_server(v: &Value) -> bool {
    v.get("name").is_some_and(Value::is_string) && (v.get("packages").is_some() || v.get("remotes").is_some())
}

/// The registry's status of an entry: on the list entry's `_meta`, else the server's.
fn status<'a>(entry: &'a Value, server: &'a Value) -> &'a str {
    [entry, server]
        .iter()
        .find_map(|v| v.get("_meta")?.get(OFFICIAL)?.get("status")?.as_str())
        .or_else(|| server.get("status").and_then(Value::as_str))
        .unwrap_or("active")
}

/// A catalogue id from a registry name (`io.github.acme/weather-server` → `weather-server`).
fn slug(name: &str) -> String {
    let last = name.rsplit('/').next().unwrap_or(name);
    let s: String = last
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c.to_ascii_lowercase() } else { '-' })
        .collect();
    let s = s.trim_matches(|c| c == '-' || c == '_').to_string();
    let s: String = s.chars().take(56).collect();
    if s.starts_with(|c: char| c.is_ascii_alphanumeric()) { s } else { format!("s{s}") }
}

/// The spec and transport of the first package hal0 runs, with its required environment.
fn package(server: &Value) -> Option<(String, &'static str, Vec<String>)> {
    for p in server.get("packages")?.as_array()? {
        let id = p.get("identifier").and_then(Value::as_str)?;
        let transport = p.get("transport").and_then(|t| t.get("type")).and_then(Value::as_str).unwrap_or("stdio");
        if transport != "stdio" {
            continue;
        }
        let spec = match p.get("registryType").or_else(|| p.get("registry_type")).and_then(Value::as_str) {
            Some("npm") => format!("npm:{id}"),
            Some("pypi") => format!("uvx:{id}"),
            Some("oci") => format!("oci://{id}"),
            _ => continue,
        };
        let env = p
            .get("environmentVariables")
            .and_then(Value::as_array)
            .map(|vars| {
                vars.iter()
                    .filter(|v| v.get("isRequired").and_then(Value::as_bool) == Some(true))
                    .filter_map(|v| v.get("name").and_then(Value::as_str).map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        return Some((spec, "stdio", env));
    }
    None
}

/// The URL and transport of the first remote with a fixed URL.
fn remote(server: &Value) -> Option<(String, &'static str, Vec<String>)> {
    for r in server.get("remotes")?.as_array()? {
        let url = r.get("url").and_then(Value::as_str)?;
        if url.contains('{') {
            continue;
        }
        let transport = match r.get("type").and_then(Value::as_str) {
            Some("streamable-http") => "streamable-http",
            Some("sse") => "sse",
            _ => continue,
        };
        return Some((url.to_string(), transport, Vec::new()));
    }
    None
}

/// The items of registry document `v` in the catalogue's format, and what was skipped (each
/// `name: reason`).
pub fn items(v: &Value) -> (Vec<Value>, Vec<String>) {
    let entries: Vec<&Value> = match v.get("servers").and_then(Value::as_array) {
        Some(list) => list.iter().collect(),
        None => vec![v],
    };
    let mut out: Vec<Value> = Vec::new();
    let mut skipped = Vec::new();
    for entry in entries {
        let server = entry.get("server").unwrap_or(entry);
        let Some(name) = server.get("name").and_then(Value::as_str) else {
            skipped.push("(unnamed): no `name`".to_string());
            continue;
        };
        let status = status(entry, server);
        if status == "deleted" {
            skipped.push(format!("{name}: deleted in the registry"));
            continue;
        }
        let Some((spec, transport, env)) = package(server).or_else(|| remote(server)) else {
            skipped.push(format!("{name}: no npm, PyPI or OCI package over stdio and no remote with a fixed URL"));
            continue;
        };
        let mut id = slug(name);
        let base = id.clone();
        let mut n = 2;
        while out.iter().any(|i| i["id"] == id.as_str()) {
            id = format!("{base}-{n}");
            n += 1;
        }
        let text = |k: &str| server.get(k).and_then(Value::as_str).filter(|s| !s.trim().is_empty());
        let homepage =
            text("websiteUrl").or_else(|| server.get("repository").and_then(|r| r.get("url")).and_then(Value::as_str));
        let version = text("version").unwrap_or("?");
        let mut item = Map::new();
        item.insert("id".into(), json!(id));
        item.insert("name".into(), json!(text("title").unwrap_or(name)));
        item.insert("description".into(), json!(text("description").unwrap_or(name)));
        item.insert("category".into(), json!("registry"));
        item.insert("spec".into(), json!(spec));
        item.insert("transport".into(), json!(transport));
        item.insert("env_required".into(), json!(env));
        if let Some(h) = homepage {
            item.insert("homepage".into(), json!(h));
        }
        item.insert("verified".into(), json!(false));
        item.insert("archived".into(), json!(status == "deprecated"));
        item.insert(
            "notes".into(),
            json!(format!("{name} {version} in the MCP Registry (status {status}); hal0 installs the current release")),
        );
        out.push(Value::Object(item));
    }
    (out, skipped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registry_page_becomes_items() {
        let page = json!({"servers": [
            {"server": {"name": "io.github.acme/weather", "description": "Weather.", "version": "1.2.0",
                        "repository": {"url": "https://github.com/acme/weather", "source": "github"},
                        "packages": [{"registryType": "npm", "identifier": "@acme/weather-mcp", "version": "1.2.0",
                                      "transport": {"type": "stdio"},
                                      "environmentVariables": [{"name": "WEATHER_KEY", "isRequired": true, "isSecret": true},
                                                               {"name": "UNITS"}]}]},
             "_meta": {OFFICIAL: {"status": "active", "isLatest": true}}},
            {"server": {"name": "com.example/old", "description": "Old.", "version": "0.1.0",
                        "packages": [{"registryType": "pypi", "identifier": "old-mcp", "transport": {"type": "stdio"}}]},
             "_meta": {OFFICIAL: {"status": "deprecated"}}},
            {"server": {"name": "com.example/gone", "description": "x", "version": "1",
                        "remotes": [{"type": "streamable-http", "url": "https://gone.example/mcp"}]},
             "_meta": {OFFICIAL: {"status": "deleted"}}},
            {"server": {"name": "com.example/tenant", "description": "x", "version": "1",
                        "remotes": [{"type": "streamable-http", "url": "https://{tenant}.example/mcp"}]}},
            {"server": {"name": "com.example/remote", "title": "Remote", "description": "R.", "version": "2",
                        "remotes": [{"type": "sse", "url": "https://r.example/sse"}]}},
            {"server": {"name": "io.github.other/weather", "description": "W2.", "version": "1",
                        "packages": [{"registryType": "oci", "identifier": "ghcr.io/other/weather:1", "transport": {"type": "stdio"}}]}},
        ], "metadata": {"count": 6}});
        assert!(is_registry(&page));
        let (items, skipped) = items(&page);
        let ids: Vec<&str> = items.iter().map(|i| i["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["weather", "old", "remote", "weather-2"]);
        assert_eq!(items[0]["spec"], "npm:@acme/weather-mcp");
        assert_eq!(items[0]["env_required"], json!(["WEATHER_KEY"]));
        assert_eq!(items[0]["homepage"], "https://github.com/acme/weather");
        assert_eq!((items[1]["spec"].as_str(), items[1]["archived"].as_bool()), (Some("uvx:old-mcp"), Some(true)));
        assert_eq!((items[2]["transport"].as_str(), items[2]["name"].as_str()), (Some("sse"), Some("Remote")));
        assert_eq!(items[3]["spec"], "oci://ghcr.io/other/weather:1");
        assert!(items.iter().all(|i| i["verified"] == false));
        assert_eq!(skipped.len(), 2, "{skipped:?}");
        assert!(skipped[0].contains("deleted") && skipped[1].contains("fixed URL"), "{skipped:?}");
        // One server.json alone.
        let one = page["servers"][4]["server"].clone();
        assert!(is_registry(&one));
        assert_eq!(super::items(&one).0.len(), 1);
        assert!(!is_registry(&json!({"version": 1, "items": []})));
    }
}
