//! The teach tools' memory rules: hal0, not the caller, picks the namespace (`hermes` →
//! `private:hermes`, `hermes/<p>` → `private:hermes__<p>`, `shared` → shared), searches read
//! the profile's private memory and shared (a search of `shared` reads shared and the
//! caller's own `private:<client>`), every note is tagged `source:bridge:<client>`, and
//! client tags that claim ownership or visibility are dropped.

use crate::base::error::{Error, Kind, Result};
use crate::hermes::Profiles;
use crate::memory::MemoryEngine;
use serde_json::{Value, json};

pub const SEARCH_DEFAULT: i64 = 10;
pub const SEARCH_MAX: i64 = 50;
const RESERVED: &[&str] = &["agent:", "visibility:", "project:", "source:bridge:"];

fn memory_invalid(msg: impl Into<String>) -> Error {
    Error::new("bridge.memory_invalid", Kind::Unprocessable, msg)
}

/// The namespace a note for `agent` is written to.
pub fn write_namespace(profiles: &Profiles, agent: &str) -> Result<String> {
    if agent == "shared" {
        return Ok("shared".into());
    }
    let p = profiles.get(agent)?;
    Ok(if p.name == "default" { "private:hermes".into() } else { format!("private:hermes__{}", p.name) })
}

/// The namespaces a search for `agent` by `client` reads.
pub fn search_namespaces(profiles: &Profiles, agent: &str, client: &str) -> Result<Vec<String>> {
    if agent == "shared" {
        return Ok(vec!["shared".into(), format!("private:{client}")]);
    }
    Ok(vec![write_namespace(profiles, agent)?, "shared".into()])
}

/// Drop reserved client tags (case-insensitive) and add `source:bridge:<client>`.
pub fn clean_tags(tags: &[String], client: &str) -> Vec<String> {
    let mut out: Vec<String> = tags
        .iter()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .filter(|t| {
            let l = t.to_lowercase();
            !RESERVED.iter().any(|p| l.starts_with(p))
        })
        .collect();
    out.push(format!("source:bridge:{client}"));
    out.dedup();
    out
}

fn engine_error(e: Error) -> Error {
    if e.code.starts_with("bridge.") {
        return e;
    }
    match e.kind {
        Kind::Invalid | Kind::Unprocessable => memory_invalid(e.message),
        _ => {
            tracing::error!(code = e.code, "memory failed: {}", e.message);
            Error::new("bridge.memory_failed", Kind::BadGateway, "the memory layer failed; see the hal0 log")
        }
    }
}

/// `agent_memory_add`.
pub fn add(
    engine: &MemoryEngine,
    profiles: &Profiles,
    client: &str,
    agent: &str,
    text: &str,
    tags: &[String],
) -> Result<Value> {
    if text.trim().is_empty() {
        return Err(memory_invalid("text must not be empty"));
    }
    let ns = write_namespace(profiles, agent)?;
    let tags = clean_tags(tags, client);
    let added = engine
        .add_as(&crate::base::actor::Actor::Bridge(client.to_string()).to_string(), &ns, text, &tags)
        .map_err(engine_error)?;
    Ok(json!({"status": "ok", "id": added.note.id, "timestamp": added.note.timestamp}))
}

/// `agent_memory_search`.
pub fn search(
    engine: &MemoryEngine,
    profiles: &Profiles,
    client: &str,
    agent: &str,
    query: &str,
    limit: Option<i64>,
) -> Result<Value> {
    let limit = limit.unwrap_or(SEARCH_DEFAULT);
    if !(1..=SEARCH_MAX).contains(&limit) {
        return Err(memory_invalid(format!("limit must be 1 to {SEARCH_MAX} (got {limit})")));
    }
    if query.trim().is_empty() {
        return Err(memory_invalid("query must not be empty"));
    }
    let ns = search_namespaces(profiles, agent, client)?;
    let hits = engine.search_in(&ns, query, limit as usize).map_err(engine_error)?;
    let mut v = json!({"status": "ok", "results": hits});
    crate::base::redact::redact_json(&mut v);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profiles() -> (tempfile::TempDir, Profiles) {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("profiles/coder")).unwrap();
        let p = Profiles { home: d.path().to_path_buf() };
        (d, p)
    }

    #[test]
    fn namespaces() {
        let (_d, p) = profiles();
        assert_eq!(write_namespace(&p, "hermes").unwrap(), "private:hermes");
        assert_eq!(write_namespace(&p, "hermes/coder").unwrap(), "private:hermes__coder");
        assert_eq!(write_namespace(&p, "shared").unwrap(), "shared");
        assert_eq!(write_namespace(&p, "hermes/ghost").unwrap_err().code, "bridge.unknown_agent");
        assert_eq!(write_namespace(&p, "private:hermes").unwrap_err().code, "bridge.unknown_agent");
        assert_eq!(search_namespaces(&p, "hermes/coder", "ws").unwrap(), ["private:hermes__coder", "shared"]);
        assert_eq!(search_namespaces(&p, "shared", "ws").unwrap(), ["shared", "private:ws"]);
    }

    #[test]
    fn reserved_tags_are_dropped() {
        let tags: Vec<String> =
            ["ok", "Agent:hermes", "VISIBILITY:private", "project:x", "Source:Bridge:other", " ", "rust"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        assert_eq!(clean_tags(&tags, "ws"), ["ok", "rust", "source:bridge:ws"]);
    }
}
