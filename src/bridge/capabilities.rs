//! `agent_capabilities`: what a Hermes profile can do now, built from an allow-list of its
//! own config.yaml — never a URL, header, key or other secret; any string the redactor
//! would change is dropped, not masked. An unreadable file makes every field from it null.

use crate::hermes::Profile;
use crate::hermes::profiles::read_yaml;
use serde_json::{Map, Value, json};
use serde_yaml_ng::Value as Y;

/// A dotted numeric version with at most a short tag (`0.22.4-rc1`), else `None`.
pub fn clean_version(v: &str) -> Option<String> {
    let (core, tag) = match v.find(['-', '+']) {
        Some(i) => (&v[..i], &v[i..]),
        None => (v, ""),
    };
    // A `.`-separated tag after the numeric core (`1.2.3.dev1`): split at the first
    // non-numeric dotted part.
    let mut parts = core.split('.').peekable();
    let mut nums = Vec::new();
    let mut rest = String::new();
    while let Some(p) = parts.next() {
        if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) && rest.is_empty() {
            nums.push(p);
        } else {
            rest = std::iter::once(p).chain(parts.by_ref()).collect::<Vec<_>>().join(".");
            rest.insert(0, '.');
        }
    }
    let tag = format!("{rest}{tag}");
    let tag_ok = tag.is_empty()
        || (tag.len() <= 16
            && tag.starts_with(['-', '+', '.'])
            && tag[1..].bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
            && tag.len() > 1);
    (nums.len() >= 2 && tag_ok).then(|| v.to_string())
}

/// A string safe to show: not secret-shaped, not a URL.
fn safe(s: &str) -> Option<Value> {
    let lower = s.to_ascii_lowercase();
    if crate::base::redact::is_secret_shaped(s) || lower.contains("://") {
        return None;
    }
    Some(json!(s))
}

fn strings(v: Option<&Y>) -> Value {
    match v {
        Some(Y::Sequence(seq)) => json!(seq.iter().filter_map(|x| x.as_str().and_then(safe)).collect::<Vec<_>>()),
        Some(Y::String(s)) => {
            json!(s.split(',').map(str::trim).filter(|x| !x.is_empty()).filter_map(safe).collect::<Vec<_>>())
        }
        _ => Value::Null,
    }
}

fn keys(v: Option<&Y>) -> Value {
    match v {
        Some(Y::Mapping(m)) => json!(m.keys().filter_map(|k| k.as_str().and_then(safe)).collect::<Vec<_>>()),
        _ => Value::Null,
    }
}

/// The capability view; `version` is what `/health` answered (if hal0 could ask).
pub fn view(p: &Profile, version: Option<&str>) -> Value {
    let mut m = Map::new();
    m.insert("agent".into(), json!(p.agent_id));
    m.insert("profile".into(), json!(p.name));
    let version = if p.keyed() { version.and_then(clean_version) } else { None };
    m.insert("api_server_version".into(), json!(version));
    let yaml = read_yaml(&p.dir.join("config.yaml"));
    let y = yaml.as_ref();
    let get = |path: &[&str]| -> Option<&Y> {
        let mut cur = y?;
        for k in path {
            cur = cur.get(*k)?;
        }
        Some(cur)
    };
    let aliases = match get(&["model_aliases"]) {
        Some(Y::Mapping(map)) => {
            let mut out = Map::new();
            for (k, v) in map {
                let Some(name) = k.as_str().filter(|n| safe(n).is_some()) else { continue };
                let pick = |f: &str| v.get(f).and_then(|x| x.as_str()).and_then(safe).unwrap_or(Value::Null);
                out.insert(name.to_string(), json!({"model": pick("model"), "provider": pick("provider")}));
            }
            Value::Object(out)
        }
        _ => Value::Null,
    };
    m.insert("model_aliases".into(), aliases);
    m.insert("toolsets_enabled".into(), strings(get(&["toolsets"])));
    m.insert("toolsets_disabled".into(), strings(get(&["agent", "disabled_toolsets"])));
    m.insert("mcp_servers".into(), keys(get(&["mcp_servers"])));
    m.insert("skills_dirs".into(), strings(get(&["skills", "external_dirs"])));
    let platforms = match get(&["platforms"]) {
        Some(Y::Mapping(map)) => json!(
            map.iter()
                .filter(|(_, v)| v.get("enabled").and_then(|e| e.as_bool()) == Some(true))
                .filter_map(|(k, _)| k.as_str().and_then(safe))
                .collect::<Vec<_>>()
        ),
        _ => Value::Null,
    };
    m.insert("platforms_enabled".into(), platforms);
    m.insert(
        "approvals_mode".into(),
        get(&["approvals", "mode"]).and_then(|v| v.as_str()).and_then(safe).unwrap_or(Value::Null),
    );
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        for ok in ["0.19.0", "0.22.4-rc1", "1.2", "1.2.3+build7", "1.2.3.dev1"] {
            assert_eq!(clean_version(ok).as_deref(), Some(ok), "{ok}");
        }
        for bad in ["", "latest", "1", "v1.2.3", "1.2.3-this-tag-is-way-too-long", "1.2.3 beta", "1..2", "1.2.3-"] {
            assert_eq!(clean_version(bad), None, "{bad}");
        }
    }

    fn profile(yaml: Option<&str>, key: bool) -> (tempfile::TempDir, Profile) {
        let d = tempfile::tempdir().unwrap();
        if let Some(y) = yaml {
            std::fs::write(d.path().join("config.yaml"), y).unwrap();
        }
        let p = Profile {
            agent_id: "hermes".into(),
            name: "default".into(),
            dir: d.path().to_path_buf(),
            base_url: "http://127.0.0.1:1".into(),
            key: key.then(|| "k".repeat(20)),
            model_id: None,
        };
        (d, p)
    }

    #[test]
    fn allow_list_only_and_secrets_dropped() {
        let yaml = r#"
model: {default: m, api_key: sk-abcdefghijklmnopqrstuvwxyz123456, base_url: http://10.0.0.1/v1}
model_aliases:
  fast: {model: small-model, provider: custom, api_key: sk-abcdefghijklmnopqrstuvwxyz999999, base_url: http://x}
  leaky: {model: "hf_abcdefghijklmnopqrstuvwxyz", provider: custom}
toolsets: [hermes-cli, web]
agent: {disabled_toolsets: [browser]}
mcp_servers:
  hal0-memory: {url: http://127.0.0.1:8080/mcp/memory/mcp, headers: {Authorization: Bearer abc}}
skills: {external_dirs: [/var/lib/hal0/skills, "https://evil.example/skills"]}
platforms:
  api_server: {enabled: true, extra: {key: secret-key-0123456789}}
  telegram: {enabled: false}
approvals: {mode: manual}
"#;
        let (_d, p) = profile(Some(yaml), true);
        let v = view(&p, Some("0.19.0"));
        assert_eq!(v["api_server_version"], "0.19.0");
        assert_eq!(v["model_aliases"]["fast"], json!({"model": "small-model", "provider": "custom"}));
        assert_eq!(v["model_aliases"]["leaky"]["model"], Value::Null, "a secret-shaped string is dropped");
        assert_eq!(v["toolsets_enabled"], json!(["hermes-cli", "web"]));
        assert_eq!(v["toolsets_disabled"], json!(["browser"]));
        assert_eq!(v["mcp_servers"], json!(["hal0-memory"]));
        assert_eq!(v["skills_dirs"], json!(["/var/lib/hal0/skills"]));
        assert_eq!(v["platforms_enabled"], json!(["api_server"]));
        assert_eq!(v["approvals_mode"], "manual");
        let text = v.to_string();
        for leak in ["sk-", "http", "Bearer", "secret-key", "10.0.0.1", "hf_"] {
            assert!(!text.contains(leak), "{leak} in {text}");
        }
    }

    #[test]
    fn unreadable_or_unkeyed() {
        let (_d, p) = profile(Some("toolsets: [a\n  broken: ["), false);
        let v = view(&p, Some("0.19.0"));
        assert_eq!(v["api_server_version"], Value::Null, "no key → no version");
        for k in [
            "model_aliases",
            "toolsets_enabled",
            "toolsets_disabled",
            "mcp_servers",
            "skills_dirs",
            "platforms_enabled",
            "approvals_mode",
        ] {
            assert_eq!(v[k], Value::Null, "{k}");
        }
        let (_d, p) = profile(None, true);
        assert_eq!(view(&p, Some("latest"))["api_server_version"], Value::Null);
    }
}
