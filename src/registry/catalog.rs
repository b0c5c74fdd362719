//! The curated catalogue of installable MCP servers behind `hal0 mcp catalog list|refresh`
//! and `GET /api/mcp/catalog`: its item type, the copy shipped in the binary
//! (`catalog.json` beside this file), the refreshed copy at `<state>/mcp-catalog.json`, and
//! the one validator both pass through. A refresh reads a file or an http(s) URL (behind the
//! SSRF guard), validates the whole document and only then replaces the refreshed copy, so a
//! bad source never leaves a half-written or invalid catalogue behind. Nothing here prints.

use super::record::{self, BUNDLED_IDS, Transport};
use super::spec;
use crate::base::error::{Error, Result};
use crate::base::paths::{Paths, write_atomic};
use crate::base::ssrf::{self, FetchLimits, Guard};
use crate::config::Config;
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::collections::{BTreeSet, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The document format this build reads (`"version"` in the JSON).
pub const FORMAT_VERSION: u64 = 1;
/// The refreshed copy's file name in the state dir.
pub const FILE_NAME: &str = "mcp-catalog.json";
/// The largest catalogue read from a file or a URL.
pub const MAX_BYTES: usize = 512 * 1024;
/// The most items one catalogue may hold.
pub const MAX_ITEMS: usize = 1000;

const SHIPPED_JSON: &str = include_str!("catalog.json");
const ITEM_FIELDS: &[&str] = &[
    "id",
    "name",
    "description",
    "category",
    "spec",
    "transport",
    "env_required",
    "homepage",
    "verified",
    "archived",
    "notes",
];

/// One installable server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Item {
    /// The id to install it under (`hal0 mcp install SPEC --id ID`).
    pub id: String,
    pub name: String,
    pub description: String,
    /// A lower-case slug (`files`, `web`, `database`, …).
    pub category: String,
    /// An install spec `hal0 mcp install` accepts.
    pub spec: String,
    pub transport: Transport,
    /// Environment variables the server needs (names only).
    pub env_required: Vec<String>,
    pub homepage: Option<String>,
    /// Official, maintained reference servers.
    pub verified: bool,
    /// Its upstream is archived (or deprecated in the MCP Registry): no fixes come. Listed
    /// only with `--all`.
    pub archived: bool,
    /// Setup hints (arguments it takes, caveats); may be empty.
    pub notes: String,
}

/// Which copy of the catalogue is in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    Shipped,
    Refreshed,
}

/// Where a catalogue came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Source {
    pub kind: SourceKind,
    /// The file path or final URL a refreshed copy was read from.
    pub origin: Option<String>,
    /// When it was refreshed (RFC 3339, UTC).
    pub fetched_at: Option<String>,
    /// Set when a refreshed copy exists but does not load, so the shipped one is used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

impl Source {
    fn shipped() -> Source {
        Source { kind: SourceKind::Shipped, origin: None, fetched_at: None, warning: None }
    }

    /// `shipped with hal0` or `ORIGIN (fetched AT)`, for people.
    pub fn describe(&self) -> String {
        match self.kind {
            SourceKind::Shipped => "shipped with hal0".into(),
            SourceKind::Refreshed => format!(
                "{} (refreshed {})",
                self.origin.as_deref().unwrap_or("?"),
                self.fetched_at.as_deref().unwrap_or("?")
            ),
        }
    }
}

/// A validated catalogue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Catalog {
    pub version: u64,
    pub items: Vec<Item>,
    /// Every item's category, sorted, each once.
    pub categories: Vec<String>,
    pub source: Source,
}

impl Catalog {
    fn new(version: u64, items: Vec<Item>, source: Source) -> Catalog {
        let categories: BTreeSet<String> = items.iter().map(|i| i.category.clone()).collect();
        Catalog { version, items, categories: categories.into_iter().collect(), source }
    }

    /// The item with this id.
    pub fn get(&self, id: &str) -> Option<&Item> {
        self.items.iter().find(|i| i.id == id)
    }

    /// The items of one category; an unknown one is 400 `mcp.catalog_unknown_category`
    /// naming the known ones.
    pub fn in_category(&self, category: &str) -> Result<Vec<Item>> {
        if !self.categories.iter().any(|c| c == category) {
            return Err(Error::invalid(
                "mcp.catalog_unknown_category",
                format!("no catalogue category `{category}`; known: {}", self.categories.join(", ")),
            ));
        }
        Ok(self.items.iter().filter(|i| i.category == category).cloned().collect())
    }
}

/// What a refresh did.
#[derive(Debug, Clone, Serialize)]
pub struct RefreshReport {
    /// How many items the new catalogue has.
    pub items: usize,
    pub categories: Vec<String>,
    /// Ids new versus the catalogue in use before (in the new catalogue's order).
    pub added: Vec<String>,
    /// Ids gone versus the catalogue in use before.
    pub removed: Vec<String>,
    /// Ids in both whose entry differs.
    pub changed: Vec<String>,
    /// Where the new catalogue came from and when.
    pub source: Source,
    /// The catalogue in use before.
    pub previous: Source,
    /// The refreshed copy's file.
    pub path: String,
    /// Servers of an MCP Registry document that could not be items (`name: reason`).
    pub skipped: Vec<String>,
}

/// The catalogue shipped in the binary.
pub fn shipped() -> Catalog {
    static SHIPPED: OnceLock<Catalog> = OnceLock::new();
    SHIPPED
        .get_or_init(|| {
            let (version, items) = parse_body(SHIPPED_JSON.as_bytes())
                .unwrap_or_else(|m| panic!("the shipped catalog.json is invalid: {m}"));
            Catalog::new(version, items, Source::shipped())
        })
        .clone()
}

/// Where the refreshed copy lives.
pub fn stored_path(paths: &Paths) -> PathBuf {
    paths.state_dir.join(FILE_NAME)
}

/// The catalogue in use: the refreshed copy when it exists and is valid, else the shipped
/// one (with `source.warning` saying why a refreshed copy that exists was not used).
pub fn load(paths: &Paths) -> Catalog {
    let path = stored_path(paths);
    match std::fs::read(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => shipped(),
        Err(e) => with_warning(format!("cannot read the refreshed catalogue {}: {e}", path.display())),
        Ok(bytes) => match load_stored(&bytes) {
            Ok(c) => c,
            Err(m) => with_warning(format!(
                "the refreshed catalogue {} does not load ({m}); using the shipped one until \
                 `hal0 mcp catalog refresh` succeeds",
                path.display()
            )),
        },
    }
}

fn with_warning(w: String) -> Catalog {
    let mut c = shipped();
    c.source.warning = Some(w);
    c
}

fn load_stored(bytes: &[u8]) -> std::result::Result<Catalog, String> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
    let o = v.as_object().ok_or("not a JSON object")?;
    let s = |k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
    let (origin, fetched_at) = (s("origin").ok_or("no `origin`")?, s("fetched_at").ok_or("no `fetched_at`")?);
    let (version, items) = parse_value(o.get("catalog").ok_or("no `catalog`")?)?;
    let source =
        Source { kind: SourceKind::Refreshed, origin: Some(origin), fetched_at: Some(fetched_at), warning: None };
    Ok(Catalog::new(version, items, source))
}

/// Validate a catalogue document: every problem is named with the item index and field.
/// Returns the version and the items.
pub fn parse_body(body: &[u8]) -> std::result::Result<(u64, Vec<Item>), String> {
    let v: Value = serde_json::from_slice(body).map_err(|e| format!("it is not valid JSON ({e})"))?;
    parse_value(&v)
}

/// [`parse_body`] of a catalogue, or of the MCP Registry's format (a server list or one
/// server.json, see [`super::server_json`]); also what the registry document had that
/// could not be an item.
pub fn parse_source(body: &[u8]) -> std::result::Result<(u64, Vec<Item>, Vec<String>), String> {
    let v: Value = serde_json::from_slice(body).map_err(|e| format!("it is not valid JSON ({e})"))?;
    if !super::server_json::is_registry(&v) {
        let (version, items) = parse_value(&v)?;
        return Ok((version, items, Vec::new()));
    }
    let (items, skipped) = super::server_json::items(&v);
    if items.is_empty() {
        return Err(format!("the registry document has no server hal0 can install ({})", skipped.join("; ")));
    }
    let (version, items) = parse_value(&json!({"version": FORMAT_VERSION, "items": items}))?;
    Ok((version, items, skipped))
}

fn parse_value(v: &Value) -> std::result::Result<(u64, Vec<Item>), String> {
    let o = v.as_object().ok_or("it is not a JSON object with `version` and `items`")?;
    if let Some(k) = o.keys().find(|k| !matches!(k.as_str(), "version" | "items")) {
        return Err(format!("unknown top-level field `{k}` (expected `version` and `items`)"));
    }
    let version = match o.get("version") {
        None => return Err(format!("`version` is missing (this hal0 reads version {FORMAT_VERSION})")),
        Some(v) => v.as_u64().filter(|n| *n == FORMAT_VERSION).ok_or_else(|| {
            format!("`version` is {v}; this hal0 reads version {FORMAT_VERSION} (a newer hal0 may read it)")
        })?,
    };
    let list = o.get("items").and_then(Value::as_array).ok_or("`items` is missing or not a list")?;
    if list.is_empty() {
        return Err("`items` is empty".into());
    }
    if list.len() > MAX_ITEMS {
        return Err(format!("`items` has {} entries; at most {MAX_ITEMS} are read", list.len()));
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut items = Vec::with_capacity(list.len());
    for (i, raw) in list.iter().enumerate() {
        let item = parse_item(raw).map_err(|m| {
            let id = raw.get("id").and_then(Value::as_str).map(|s| format!(" (`{}`)", clip(s))).unwrap_or_default();
            format!("items[{i}]{id}: {m}")
        })?;
        if let Some(j) = seen.insert(item.id.clone(), i) {
            return Err(format!("items[{i}]: id `{}` is also the id of items[{j}]; ids must be unique", item.id));
        }
        items.push(item);
    }
    Ok((version, items))
}

fn clip(s: &str) -> String {
    let t: String = s.chars().filter(|c| !c.is_control()).take(64).collect();
    if t.len() < s.len() { format!("{t}…") } else { t }
}

fn parse_item(v: &Value) -> std::result::Result<Item, String> {
    let o = v.as_object().ok_or("not a JSON object")?;
    if let Some(k) = o.keys().find(|k| !ITEM_FIELDS.contains(&k.as_str())) {
        return Err(format!("unknown field `{}` (known: {})", clip(k), ITEM_FIELDS.join(", ")));
    }
    let id = text(o, "id", 64, true)?;
    record::validate_id(&id).map_err(|e| format!("field `id`: {}", e.message))?;
    if BUNDLED_IDS.contains(&id.as_str()) {
        return Err(format!("field `id`: `{id}` is one of hal0's bundled servers"));
    }
    let name = text(o, "name", 128, true)?;
    let description = text(o, "description", 1024, true)?;
    let category = text(o, "category", 32, true)?;
    if !category.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
        return Err("field `category`: use lower-case letters, digits and `-` (e.g. `web`)".into());
    }
    let spec_s = text(o, "spec", 2048, true)?;
    let parsed = spec::parse(&spec_s).map_err(|e| format!("field `spec`: {}", e.message))?;
    let transport = match text(o, "transport", 32, true)?.as_str() {
        "stdio" => Transport::Stdio,
        "streamable-http" => Transport::StreamableHttp,
        "sse" => Transport::Sse,
        other => return Err(format!("field `transport`: `{other}` is not stdio, streamable-http or sse")),
    };
    let implied = spec::record_for(&parsed, &id).transport;
    let fixed = matches!(parsed.kind, spec::Kind::Oci | spec::Kind::Npm | spec::Kind::Uvx | spec::Kind::Endpoint);
    if fixed && implied != transport {
        return Err(format!(
            "field `transport`: `{}` does not match the spec, which installs as {}",
            transport.as_str(),
            implied.as_str()
        ));
    }
    let env_required = match o.get("env_required") {
        None | Some(Value::Null) => vec![],
        Some(Value::Array(a)) => {
            let mut out: Vec<String> = Vec::with_capacity(a.len());
            for (k, n) in a.iter().enumerate() {
                let n = n.as_str().ok_or_else(|| format!("field `env_required`: entry {k} is not a string"))?;
                if !env_name_ok(n) {
                    return Err(format!(
                        "field `env_required`: `{}` is not an environment variable name (letters, digits, `_`)",
                        clip(n)
                    ));
                }
                if out.iter().any(|x| x == n) {
                    return Err(format!("field `env_required`: `{n}` is listed twice"));
                }
                out.push(n.to_string());
            }
            out
        }
        Some(_) => return Err("field `env_required`: not a list of names".into()),
    };
    let homepage = match o.get("homepage") {
        None | Some(Value::Null) => None,
        Some(Value::String(h)) => {
            let ok = h.len() <= 2048
                && reqwest::Url::parse(h).is_ok_and(|u| {
                    matches!(u.scheme(), "http" | "https")
                        && u.host_str().is_some_and(|s| !s.is_empty())
                        && u.username().is_empty()
                        && u.password().is_none()
                });
            if !ok {
                return Err(format!("field `homepage`: `{}` is not an http(s) URL", clip(h)));
            }
            Some(h.clone())
        }
        Some(_) => return Err("field `homepage`: not a string".into()),
    };
    let verified = match o.get("verified") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("field `verified`: not true or false".into()),
    };
    let archived = match o.get("archived") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("field `archived`: not true or false".into()),
    };
    let notes = if o.get("notes").is_none_or(Value::is_null) { String::new() } else { text(o, "notes", 1024, false)? };
    Ok(Item {
        id,
        name,
        description,
        category,
        spec: spec_s,
        transport,
        env_required,
        homepage,
        verified,
        archived,
        notes,
    })
}

/// A string field: present when `required`, at most `max` characters, no control characters
/// (a catalogue from elsewhere ends up in a terminal).
fn text(o: &Map<String, Value>, key: &str, max: usize, required: bool) -> std::result::Result<String, String> {
    let s = match o.get(key) {
        None | Some(Value::Null) => return Err(format!("field `{key}` is missing")),
        Some(Value::String(s)) => s,
        Some(_) => return Err(format!("field `{key}`: not a string")),
    };
    if required && s.trim().is_empty() {
        return Err(format!("field `{key}` is empty"));
    }
    if s.chars().count() > max {
        return Err(format!("field `{key}`: longer than {max} characters"));
    }
    if s.chars().any(char::is_control) {
        return Err(format!("field `{key}`: contains control characters"));
    }
    Ok(s.clone())
}

fn env_name_ok(n: &str) -> bool {
    let mut c = n.chars();
    matches!(c.next(), Some(f) if f.is_ascii_alphabetic() || f == '_')
        && n.len() <= 128
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

fn source_invalid(msg: String) -> Error {
    Error::invalid("mcp.catalog_source_invalid", msg)
}

/// Read the source: an http(s) URL through the SSRF guard, else a file (`file://` or a path;
/// a relative path is taken against `base` when given, else the working directory).
/// Returns the origin to record and the body.
async fn read_source(raw: &str, base: Option<&Path>, guard: &Guard) -> Result<(String, Vec<u8>)> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Err(source_invalid("the catalogue source is empty; pass a file path or an http(s) URL".into()));
    }
    let lower = raw.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        let url = reqwest::Url::parse(raw).map_err(|e| source_invalid(format!("`{raw}` is not a valid URL: {e}")))?;
        if !url.username().is_empty() || url.password().is_some() {
            return Err(source_invalid("a catalogue URL with credentials in it is refused".into()));
        }
        let limits = FetchLimits { max_bytes: MAX_BYTES, ..FetchLimits::default() };
        let (final_url, body) = ssrf::fetch(guard, url.as_str(), limits).await?;
        return Ok((final_url.to_string(), body));
    }
    let path = if lower.starts_with("file://") {
        reqwest::Url::parse(raw)
            .ok()
            .and_then(|u| u.to_file_path().ok())
            .ok_or_else(|| source_invalid(format!("`{raw}` is not a file:// URL of an absolute local path")))?
    } else if raw.contains("://") {
        return Err(source_invalid(format!("`{raw}` is neither a file path nor an http(s) URL")));
    } else {
        let p = PathBuf::from(raw);
        match base {
            Some(b) if p.is_relative() => b.join(p),
            _ => p,
        }
    };
    let path = std::path::absolute(&path).unwrap_or(path);
    let file = std::fs::File::open(&path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::not_found("mcp.catalog_source_not_found", format!("no catalogue file at {}", path.display()))
        } else {
            Error::io("fs.read_failed", "read", &path, e)
        }
    })?;
    let mut body = Vec::new();
    file.take(MAX_BYTES as u64 + 1)
        .read_to_end(&mut body)
        .map_err(|e| Error::io("fs.read_failed", "read", &path, e))?;
    if body.len() > MAX_BYTES {
        return Err(Error::invalid(
            "mcp.catalog_invalid",
            format!("the catalogue {} is larger than {MAX_BYTES} bytes; nothing was changed", path.display()),
        ));
    }
    Ok((path.display().to_string(), body))
}

/// Replace the refreshed copy with the catalogue read from `from`, or from
/// `cfg.mcp.catalog_url` when `from` is `None` (a relative configured path is taken against
/// the config dir). The document is validated whole before anything is written; on any
/// error the previous refreshed copy stays as it was.
pub async fn refresh(paths: &Paths, cfg: &Config, from: Option<&str>) -> Result<RefreshReport> {
    refresh_with(paths, cfg, from, &configured_guard(cfg, from)).await
}

/// The SSRF guard of a refresh: the host of the configured `mcp.catalog_url` passes
/// whatever its addresses (an operator chose it in hal0.toml: a registry mirror on the LAN
/// or on this box); a `--from` URL, or anything a redirect leads to, is judged as usual.
fn configured_guard(cfg: &Config, from: Option<&str>) -> Guard {
    match (from, cfg.mcp.catalog_url.as_deref().map(str::trim)) {
        (None, Some(u)) => Guard::trusting_url(u),
        _ => Guard::system(),
    }
}

async fn refresh_with(paths: &Paths, cfg: &Config, from: Option<&str>, guard: &Guard) -> Result<RefreshReport> {
    let (raw, base) = match (from, cfg.mcp.catalog_url.as_deref().map(str::trim)) {
        (Some(f), _) => (f, None),
        (None, Some(u)) if !u.is_empty() => (u, Some(paths.config_dir.as_path())),
        (None, _) => {
            return Err(Error::invalid(
                "mcp.catalog_source_missing",
                "no catalogue source is configured; set one with `hal0 config set mcp.catalog_url FILE_OR_URL` \
                 or pass --from FILE_OR_URL",
            ));
        }
    };
    let (origin, body) = read_source(raw, base, guard).await?;
    let (version, items, skipped) = parse_source(&body).map_err(|m| {
        Error::invalid(
            "mcp.catalog_invalid",
            format!("the catalogue from {origin} is invalid: {m}; nothing was changed"),
        )
    })?;
    let previous = load(paths);
    let fetched_at = crate::store::now();
    let doc = json!({
        "origin": origin,
        "fetched_at": fetched_at,
        "catalog": {"version": version, "items": items},
    });
    let text = serde_json::to_vec_pretty(&doc).map_err(|e| Error::internal(format!("catalogue JSON: {e}")))?;
    let path = stored_path(paths);
    write_atomic(&path, &text)?;
    let source =
        Source { kind: SourceKind::Refreshed, origin: Some(origin), fetched_at: Some(fetched_at), warning: None };
    let new = Catalog::new(version, items, source);
    let before: HashMap<&str, &Item> = previous.items.iter().map(|i| (i.id.as_str(), i)).collect();
    let after: HashMap<&str, &Item> = new.items.iter().map(|i| (i.id.as_str(), i)).collect();
    let added = new.items.iter().filter(|i| !before.contains_key(i.id.as_str())).map(|i| i.id.clone()).collect();
    let removed = previous.items.iter().filter(|i| !after.contains_key(i.id.as_str())).map(|i| i.id.clone()).collect();
    let changed = new
        .items
        .iter()
        .filter(|i| before.get(i.id.as_str()).is_some_and(|p| *p != *i))
        .map(|i| i.id.clone())
        .collect();
    Ok(RefreshReport {
        items: new.items.len(),
        categories: new.categories,
        added,
        removed,
        changed,
        source: new.source,
        previous: previous.source,
        path: path.display().to_string(),
        skipped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn paths() -> (tempfile::TempDir, Paths) {
        let d = tempfile::tempdir().unwrap();
        let p = Paths {
            config_dir: d.path().join("etc"),
            state_dir: d.path().join("state"),
            config_source: "test".into(),
            state_source: "test".into(),
        };
        (d, p)
    }

    fn item(id: &str, spec: &str) -> Value {
        json!({"id": id, "name": id, "description": "d", "category": "web", "spec": spec, "transport": "stdio"})
    }

    fn doc(items: Vec<Value>) -> String {
        json!({"version": 1, "items": items}).to_string()
    }

    fn write(dir: &Path, name: &str, text: &str) -> String {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }

    fn refresh_now(paths: &Paths, cfg: &Config, from: Option<&str>) -> Result<RefreshReport> {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(refresh(paths, cfg, from))
    }

    #[test]
    fn shipped_catalogue_is_valid() {
        let c = shipped();
        assert_eq!(c.version, FORMAT_VERSION);
        assert_eq!(c.source.kind, SourceKind::Shipped);
        assert!((12..=20).contains(&c.items.len()), "{}", c.items.len());
        let mut ids = BTreeSet::new();
        for i in &c.items {
            record::validate_new_id(&i.id).unwrap();
            assert!(ids.insert(i.id.clone()), "duplicate id {}", i.id);
            let p = spec::parse(&i.spec).unwrap_or_else(|e| panic!("{}: {}", i.id, e.message));
            assert_eq!(spec::record_for(&p, &i.id).transport, i.transport, "{}", i.id);
            assert!(i.homepage.as_deref().is_some_and(|h| h.starts_with("https://")), "{}", i.id);
            if i.verified {
                assert!(i.homepage.as_deref().unwrap().contains("/modelcontextprotocol/servers/tree/"), "{}", i.id);
            }
        }
        for id in ["filesystem", "fetch", "git", "memory", "sequential-thinking", "time", "everything"] {
            assert!(c.get(id).is_some_and(|i| i.verified), "{id}");
        }
        for id in ["puppeteer", "sqlite", "gdrive", "slack"] {
            assert!(c.get(id).is_some(), "the spec names {id}");
        }
        let mut sorted = c.categories.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(c.categories, sorted);
        let used: BTreeSet<_> = c.items.iter().map(|i| i.category.clone()).collect();
        assert_eq!(c.categories, used.into_iter().collect::<Vec<_>>());
        assert_eq!(c.get("slack").unwrap().env_required, vec!["SLACK_BOT_TOKEN", "SLACK_TEAM_ID"]);
    }

    #[test]
    fn categories_filter_and_unknown_one_lists_known() {
        let c = shipped();
        let db = c.in_category("database").unwrap();
        assert!(db.iter().all(|i| i.category == "database") && !db.is_empty());
        let e = c.in_category("nope").unwrap_err();
        assert_eq!((e.code, e.status()), ("mcp.catalog_unknown_category", 400));
        assert!(e.message.contains("database") && e.message.contains("web"), "{}", e.message);
    }

    #[test]
    fn load_without_refresh_is_shipped() {
        let (_d, p) = paths();
        let c = load(&p);
        assert_eq!(c, shipped());
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["source"]["kind"], "shipped");
        assert!(v["source"].get("warning").is_none());
        assert!(v["items"].as_array().unwrap().len() >= 12);
        assert!(v["categories"].is_array());
    }

    #[test]
    fn refresh_from_file_replaces_and_reports_diff() {
        let (d, p) = paths();
        let mut time = serde_json::to_value(shipped().get("time").unwrap()).unwrap();
        time["description"] = json!("changed");
        let src = write(d.path(), "cat.json", &doc(vec![time, item("weather", "uvx:weather-mcp")]));
        let r = refresh_now(&p, &Config::default(), Some(&src)).unwrap();
        assert_eq!(r.items, 2);
        assert_eq!(r.added, vec!["weather"]);
        assert_eq!(r.changed, vec!["time"]);
        assert!(r.removed.contains(&"slack".to_string()) && !r.removed.contains(&"time".to_string()));
        assert_eq!(r.previous.kind, SourceKind::Shipped);
        assert_eq!(r.source.origin.as_deref(), Some(src.as_str()));
        assert_eq!(r.categories, vec!["utility", "web"]);
        let stored = stored_path(&p);
        assert_eq!(std::fs::metadata(&stored).unwrap().permissions().mode() & 0o777, 0o600);
        let c = load(&p);
        assert_eq!(c.source.kind, SourceKind::Refreshed);
        assert_eq!(c.source.origin.as_deref(), Some(src.as_str()));
        assert!(c.source.fetched_at.as_deref().is_some_and(|t| t.ends_with('Z')));
        assert_eq!(c.items.len(), 2);
        assert_eq!(c.get("time").unwrap().description, "changed");
        // A second refresh diffs against the refreshed copy, not the shipped one.
        let src2 = write(d.path(), "cat2.json", &doc(vec![item("weather", "uvx:weather-mcp")]));
        let r = refresh_now(&p, &Config::default(), Some(&src2)).unwrap();
        assert_eq!(
            (r.added.len(), r.removed.clone(), r.previous.kind),
            (0, vec!["time".into()], SourceKind::Refreshed)
        );
    }

    #[test]
    fn configured_source_relative_to_config_dir_and_file_urls() {
        let (d, p) = paths();
        std::fs::create_dir_all(&p.config_dir).unwrap();
        write(&p.config_dir, "cat.json", &doc(vec![item("a", "npm:a")]));
        let mut cfg = Config::default();
        cfg.mcp.catalog_url = Some("cat.json".into());
        let r = refresh_now(&p, &cfg, None).unwrap();
        assert_eq!(r.source.origin, Some(p.config_dir.join("cat.json").display().to_string()));
        // --from wins over the configured source.
        let abs = write(d.path(), "other.json", &doc(vec![item("b", "npm:b")]));
        let r = refresh_now(&p, &cfg, Some(&format!("file://{abs}"))).unwrap();
        assert_eq!((r.added, r.removed), (vec!["b".to_string()], vec!["a".to_string()]));
        assert_eq!(load(&p).items[0].id, "b");
    }

    #[test]
    fn no_source_configured_says_how_to_set_one() {
        let (_d, p) = paths();
        for cfg_url in [None, Some("  ".to_string())] {
            let mut cfg = Config::default();
            cfg.mcp.catalog_url = cfg_url;
            let e = refresh_now(&p, &cfg, None).unwrap_err();
            assert_eq!((e.code, e.status()), ("mcp.catalog_source_missing", 400));
            assert!(e.message.contains("hal0 config set mcp.catalog_url") && e.message.contains("--from"));
        }
        assert!(!stored_path(&p).exists());
    }

    #[test]
    fn unreadable_sources() {
        let (d, p) = paths();
        let e =
            refresh_now(&p, &Config::default(), Some(&d.path().join("nope.json").display().to_string())).unwrap_err();
        assert_eq!((e.code, e.status()), ("mcp.catalog_source_not_found", 404));
        for bad in ["", "ftp://example.com/c.json", "file://relative/c.json"] {
            let e = refresh_now(&p, &Config::default(), Some(bad)).unwrap_err();
            assert_eq!(e.code, "mcp.catalog_source_invalid", "{bad}: {}", e.message);
        }
        let e = refresh_now(&p, &Config::default(), Some("http://u:pw@example.com/c.json")).unwrap_err();
        assert!(e.message.contains("credentials"), "{}", e.message);
        let big = write(d.path(), "big.json", &" ".repeat(MAX_BYTES + 1));
        let e = refresh_now(&p, &Config::default(), Some(&big)).unwrap_err();
        assert_eq!(e.code, "mcp.catalog_invalid");
        assert!(e.message.contains("larger than"), "{}", e.message);
    }

    #[test]
    fn every_bad_document_is_refused_and_the_previous_copy_kept() {
        let (d, p) = paths();
        let good = write(d.path(), "good.json", &doc(vec![item("a", "npm:a")]));
        refresh_now(&p, &Config::default(), Some(&good)).unwrap();
        let before = std::fs::read(stored_path(&p)).unwrap();
        let with = |k: &str, v: Value| {
            let mut i = item("x", "npm:x");
            i[k] = v;
            doc(vec![item("a", "npm:a"), i])
        };
        let without = |k: &str| {
            let mut i = item("x", "npm:x");
            i.as_object_mut().unwrap().remove(k);
            doc(vec![item("a", "npm:a"), i])
        };
        let cases: Vec<(String, &str)> = vec![
            ("{not json".into(), "not valid JSON"),
            ("[1,2]".into(), "not a JSON object"),
            (r#"{"version":2,"items":[]}"#.into(), "`version` is 2"),
            (r#"{"items":[]}"#.into(), "`version` is missing"),
            (r#"{"version":1}"#.into(), "`items` is missing"),
            (r#"{"version":1,"items":{}}"#.into(), "`items` is missing or not a list"),
            (r#"{"version":1,"items":[]}"#.into(), "`items` is empty"),
            (r#"{"version":1,"items":[],"extra":1}"#.into(), "unknown top-level field `extra`"),
            (doc(vec![json!(3)]), "items[0]: not a JSON object"),
            (without("spec"), "items[1] (`x`): field `spec` is missing"),
            (with("spec", json!("whatever")), "items[1] (`x`): field `spec`: `whatever` is not an install spec"),
            (doc(vec![item("a", "npm:a"), item("a", "npm:b")]), "items[1]: id `a` is also the id of items[0]"),
            (with("id", json!("Bad Id")), "items[1] (`Bad Id`): field `id`: a server id is"),
            (with("id", json!("hal0-admin")), "bundled"),
            (with("name", json!("")), "field `name` is empty"),
            (with("name", json!(5)), "field `name`: not a string"),
            (with("description", json!("a\u{1b}[31mred")), "field `description`: contains control characters"),
            (with("category", json!("Web Stuff")), "field `category`"),
            (with("transport", json!("sse")), "field `transport`: `sse` does not match the spec"),
            (with("transport", json!("carrier-pigeon")), "field `transport`: `carrier-pigeon` is not"),
            (with("env_required", json!(["OK", "bad-name"])), "field `env_required`: `bad-name`"),
            (with("env_required", json!("TOKEN")), "field `env_required`: not a list"),
            (with("env_required", json!(["A", "A"])), "`A` is listed twice"),
            (with("homepage", json!("javascript:alert(1)")), "field `homepage`"),
            (with("verified", json!("yes")), "field `verified`"),
            (with("notes", json!(1)), "field `notes`: not a string"),
            (with("colour", json!("red")), "unknown field `colour`"),
        ];
        for (n, (text, want)) in cases.iter().enumerate() {
            let src = write(d.path(), &format!("bad{n}.json"), text);
            let e = refresh_now(&p, &Config::default(), Some(&src)).unwrap_err();
            assert_eq!((e.code, e.status()), ("mcp.catalog_invalid", 400), "{text}: {}", e.message);
            assert!(e.message.contains(want), "{text}: want `{want}` in: {}", e.message);
            assert!(e.message.contains(&src) && e.message.contains("nothing was changed"), "{}", e.message);
            assert_eq!(std::fs::read(stored_path(&p)).unwrap(), before, "{text}");
        }
        let temps = std::fs::read_dir(&p.state_dir).unwrap().count();
        assert_eq!(temps, 1, "only the refreshed copy is in the state dir");
    }

    #[test]
    fn a_corrupt_refreshed_copy_falls_back_to_shipped_with_a_warning() {
        let (_d, p) = paths();
        std::fs::create_dir_all(&p.state_dir).unwrap();
        for text in ["garbage", r#"{"origin":"x","fetched_at":"t","catalog":{"version":1,"items":[]}}"#] {
            std::fs::write(stored_path(&p), text).unwrap();
            let c = load(&p);
            assert_eq!(c.source.kind, SourceKind::Shipped);
            assert_eq!(c.items, shipped().items);
            assert!(c.source.warning.as_deref().is_some_and(|w| w.contains("does not load")), "{:?}", c.source);
        }
    }

    async fn serve(body: String) -> std::net::SocketAddr {
        use axum::{Router, routing::get};
        let app = Router::new().route("/catalog.json", get(move || async move { body }));
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
        addr
    }

    #[tokio::test]
    async fn urls_go_through_the_ssrf_guard() {
        let (_d, p) = paths();
        let addr = serve(doc(vec![item("remote", "npm:remote")])).await;
        let url = format!("http://{addr}/catalog.json");
        let e = refresh(&p, &Config::default(), Some(&url)).await.unwrap_err();
        assert_eq!((e.code, e.status()), ("mcp.ssrf_refused", 400), "{}", e.message);
        assert!(e.message.contains("loopback"), "{}", e.message);
        assert!(!stored_path(&p).exists());
        // The host of the configured mcp.catalog_url is the operator's choice (a mirror on
        // this box or the LAN): it passes; the same URL given as --from does not.
        let mut cfg = Config::default();
        cfg.mcp.catalog_url = Some(url.clone());
        assert_eq!(refresh(&p, &cfg, Some(&url)).await.unwrap_err().code, "mcp.ssrf_refused");
        assert_eq!(refresh(&p, &cfg, None).await.unwrap().items, 1);
        std::fs::remove_file(stored_path(&p)).unwrap();
        // With the loopback server exempted (tests only), the fetch goes through.
        let guard = Guard::test_only_with(vec![], vec![addr.ip()]);
        let r = refresh_with(&p, &Config::default(), Some(&url), &guard).await.unwrap();
        assert_eq!((r.items, r.source.origin.as_deref()), (1, Some(url.as_str())));
        assert_eq!(load(&p).get("remote").unwrap().spec, "npm:remote");
        // https URLs meet the guard first (tests/it/tls.rs covers the TLS part on loopback).
        let e =
            refresh_with(&p, &Config::default(), Some("https://10.1.2.3/c.json"), &Guard::system()).await.unwrap_err();
        assert_eq!(e.code, "mcp.ssrf_refused");
    }

    #[tokio::test]
    async fn a_bad_document_over_http_is_refused() {
        let (_d, p) = paths();
        let addr = serve(doc(vec![item("a", "npm:a"), item("a", "npm:a")])).await;
        let guard = Guard::test_only_with(vec![], vec![addr.ip()]);
        let url = format!("http://{addr}/catalog.json");
        let e = refresh_with(&p, &Config::default(), Some(&url), &guard).await.unwrap_err();
        assert_eq!(e.code, "mcp.catalog_invalid");
        assert!(e.message.contains(&url) && e.message.contains("ids must be unique"), "{}", e.message);
        assert!(!stored_path(&p).exists());
    }
}
