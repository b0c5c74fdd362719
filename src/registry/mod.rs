//! The MCP server registry: third-party servers installed on this box, one record file each
//! under `<config>/mcp-servers/`, and their tool policy. The CLI (and later REST) translate
//! calls to this module; nothing here prints.

pub mod catalog;
pub mod expose;
pub mod manage;
pub mod mask;
pub mod oauth;
pub mod packages;
pub mod pins;
pub mod policy;
pub mod program;
pub mod record;
pub mod server_json;
pub mod spec;
pub mod view;

use crate::base::error::{Error, Result};
use crate::base::paths::{Paths, read_optional, write_atomic};
pub use policy::{ToolList, ToolPolicy, Verdict};
pub use record::{BUNDLED_IDS, Record, Transport};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One of hal0's own servers (cannot be installed over, uninstalled or re-policied here).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Bundled {
    pub id: &'static str,
    pub mount: String,
    pub description: &'static str,
}

/// hal0's bundled servers and their mount paths.
pub fn bundled() -> Vec<Bundled> {
    crate::connect::MOUNTS
        .iter()
        .map(|m| Bundled { id: m.server, mount: m.path(), description: m.description })
        .collect()
}

/// A record file that does not load, with the reason (file and line, never values).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Broken {
    pub file: String,
    pub error: String,
    /// The line the refusal points at, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

/// Everything in the registry dir.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    pub records: Vec<Record>,
    pub broken: Vec<Broken>,
}

/// The registry of one hal0 installation.
pub struct Registry {
    dir: PathBuf,
}

fn bundled_err(id: &str) -> Error {
    Error::conflict("mcp.bundled", format!("`{id}` is one of hal0's bundled servers and cannot be changed this way"))
}

impl Registry {
    pub fn new(paths: &Paths) -> Registry {
        Registry { dir: paths.config_dir.join("mcp-servers") }
    }
    pub fn at(dir: PathBuf) -> Registry {
        Registry { dir }
    }
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    pub fn path_of(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.toml"))
    }

    /// Hold the registry's lock (a `.lock` file in the dir) for a read-modify-write.
    fn lock(&self) -> Result<std::fs::File> {
        crate::base::paths::lock_file(&self.dir, ".lock")
    }

    /// Installed records, sorted by id, and the files that do not load.
    pub fn list(&self) -> Result<Listing> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Listing::default()),
            Err(e) => return Err(Error::io("fs.read_failed", "read", &self.dir, e)),
        };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                !n.starts_with('.') && n.ends_with(".toml") && p.is_file()
            })
            .collect();
        files.sort();
        let mut out = Listing::default();
        for f in files {
            let file = f.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string();
            match read_optional(&f).map(Option::unwrap_or_default) {
                Ok(text) => match Record::parse_located(&f, &text) {
                    Ok(r) if BUNDLED_IDS.contains(&r.id.as_str()) => out.broken.push(Broken {
                        file,
                        error: format!("{}: the id shadows a bundled server and is ignored", f.display()),
                        line: None,
                    }),
                    Ok(r) => out.records.push(r),
                    Err((line, e)) => out.broken.push(Broken { file, error: e.message, line }),
                },
                Err(e) => {
                    let error = format!("{}: unreadable: {e}", f.display());
                    out.broken.push(Broken { file, error, line: None })
                }
            }
        }
        Ok(out)
    }

    /// One record: 409 `mcp.bundled` for a bundled id, 404 `mcp.not_found`, 400
    /// `mcp.record_malformed` for a file that does not load.
    pub fn get(&self, id: &str) -> Result<Record> {
        if BUNDLED_IDS.contains(&id) {
            return Err(bundled_err(id));
        }
        record::validate_id(id)?;
        let path = self.path_of(id);
        let text = read_optional(&path)?.ok_or_else(|| self.not_found(id))?;
        Record::parse(&path, &text)
    }

    fn not_found(&self, id: &str) -> Error {
        Error::not_found("mcp.not_found", format!("no MCP server `{id}` is installed (see `hal0 mcp list`)"))
    }

    /// Write a new record. The id must be valid, not bundled and not installed.
    pub fn install(&self, mut r: Record) -> Result<Record> {
        record::validate_new_id(&r.id)?;
        let _lock = self.lock()?;
        let path = self.path_of(&r.id);
        if path.exists() {
            return Err(Error::conflict(
                "mcp.already_installed",
                format!("`{}` is already installed; pick another --id or uninstall it first", r.id),
            ));
        }
        // A fresh server: no callable tools, no exposure.
        r.tools = ToolPolicy::default();
        r.exposure = record::Exposure::default();
        if r.installed_at.is_empty() {
            r.installed_at = crate::store::now();
        }
        let text = r.to_toml();
        let back = Record::parse(&path, &text)?;
        write_atomic(&path, text.as_bytes())?;
        Ok(back)
    }

    /// Whether `id` can be uninstalled: not bundled (409 `mcp.bundled`), installed (404
    /// `mcp.not_found`) and, unless `force`, a record that loads (`mcp.record_malformed`).
    pub fn check_uninstall(&self, id: &str, force: bool) -> Result<()> {
        if BUNDLED_IDS.contains(&id) {
            return Err(Error::conflict(
                "mcp.bundled",
                format!("`{id}` is one of hal0's bundled servers and cannot be uninstalled"),
            ));
        }
        record::validate_id(id)?;
        let path = self.path_of(id);
        let text = read_optional(&path)?.ok_or_else(|| self.not_found(id))?;
        if !force {
            Record::parse(&path, &text)?;
        }
        Ok(())
    }

    /// Remove a record. With `force` a record that does not load is removed too.
    pub fn uninstall(&self, id: &str, force: bool) -> Result<()> {
        self.check_uninstall(id, force)?;
        let _lock = self.lock()?;
        self.check_uninstall(id, force)?;
        let path = self.path_of(id);
        std::fs::remove_file(&path).map_err(|e| Error::io("fs.write_failed", "remove", &path, e))
    }

    /// Read-modify-write one record under the lock: `f` gets the current record and text and
    /// returns the new text, which must load before it is written.
    fn rewrite(&self, id: &str, f: impl FnOnce(&Record, &Path, &str) -> Result<String>) -> Result<Record> {
        if BUNDLED_IDS.contains(&id) {
            return Err(bundled_err(id));
        }
        record::validate_id(id)?;
        let _lock = self.lock()?;
        let path = self.path_of(id);
        let text = read_optional(&path)?.ok_or_else(|| self.not_found(id))?;
        let cur = Record::parse(&path, &text)?;
        let out = f(&cur, &path, &text)?;
        let r = Record::parse(&path, &out)?;
        if out != text {
            write_atomic(&path, out.as_bytes())?;
        }
        Ok(r)
    }

    fn edit(&self, id: &str, f: impl FnOnce(&ToolPolicy) -> Result<ToolPolicy>) -> Result<Record> {
        self.rewrite(id, |cur, path, text| {
            let policy = f(&cur.tools)?;
            policy.validate()?;
            record::edit_policy(path, text, &policy)
        })
    }

    /// Change `enabled`, exposure flags or `[env]` entries (validated first).
    pub fn set_fields(&self, id: &str, edit: &record::FieldEdit) -> Result<Record> {
        for (k, v) in &edit.env {
            record::validate_env(k, v)?;
        }
        self.rewrite(id, |_, path, text| record::edit_fields(path, text, edit))
    }

    /// Run release `pin` from now on: the record's arguments and `[package]` table.
    pub fn set_package(&self, id: &str, args: &[String], pin: &record::PackagePin) -> Result<Record> {
        self.rewrite(id, |_, path, text| record::edit_package(path, text, args, pin))
    }

    /// Set (or remove) the record's `[oauth]` table.
    pub fn set_oauth(&self, id: &str, need: Option<&record::OauthNeed>) -> Result<Record> {
        self.rewrite(id, |_, path, text| record::edit_oauth(path, text, need))
    }

    /// Put `tool` on `tier`, taking it off any other list.
    pub fn set_tier(&self, id: &str, tool: &str, tier: ToolList) -> Result<Record> {
        policy::validate_tool(tool)?;
        self.edit(id, |p| Ok(p.with_tier(tool, tier)))
    }

    /// Put resource URI (pattern) or prompt name `name` on `list` of access table `which`
    /// (`None`: off both lists), taking it off the other list.
    pub fn set_access(&self, id: &str, which: record::Access, name: &str, list: Option<ToolList>) -> Result<Record> {
        if list == Some(ToolList::Gated) {
            return Err(Error::invalid(
                "mcp.access_invalid",
                format!("`{}` has allow and blocked lists only: a read does not wait for a person", which.table()),
            ));
        }
        self.rewrite(id, |cur, path, text| {
            let p = cur.access(which).with(name, list);
            p.validate(which.table())?;
            record::edit_access(path, text, which, &p)
        })
    }

    /// Replace the whole policy; a tool on two lists is `mcp.tools_invalid`.
    pub fn replace_policy(&self, id: &str, p: ToolPolicy) -> Result<Record> {
        p.validate()?;
        self.edit(id, |_| Ok(p))
    }
}

/// What a call to `tool` on server `record` would meet; a missing or disabled server is
/// `unknown_server`.
pub fn classify(record: Option<&Record>, tool: &str) -> Verdict {
    match record {
        Some(r) if r.enabled => r.tools.verdict(tool),
        _ => Verdict::UnknownServer,
    }
}

/// [`state`] of every record, probed at once (each probe may wait 1.5 s).
pub fn states(records: &[Record]) -> Vec<&'static str> {
    std::thread::scope(|s| {
        let probes: Vec<_> = records.iter().map(|r| s.spawn(move || state(r))).collect();
        probes.into_iter().map(|p| p.join().unwrap_or("unreachable")).collect()
    })
}

/// Reachability of an installed server as `hal0 mcp list` shows it.
pub fn state(r: &Record) -> &'static str {
    match r.transport {
        Transport::Stdio => "stopped",
        Transport::StreamableHttp | Transport::Sse => {
            let up = r.url.as_deref().is_some_and(|u| tcp_reachable(u, Duration::from_millis(1500)));
            match (up, r.enabled) {
                (true, true) => "reachable",
                (true, false) => "disabled",
                (false, _) => "unreachable",
            }
        }
    }
}

fn tcp_reachable(url: &str, timeout: Duration) -> bool {
    use std::net::ToSocketAddrs;
    let Ok(u) = reqwest::Url::parse(url) else { return false };
    let (Some(host), Some(port)) = (u.host_str(), u.port_or_known_default()) else { return false };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let Ok(addrs) = (host, port).to_socket_addrs() else { return false };
    addrs.into_iter().any(|a| std::net::TcpStream::connect_timeout(&a, timeout).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg() -> (tempfile::TempDir, Registry) {
        let d = tempfile::tempdir().unwrap();
        let r = Registry::at(d.path().join("mcp-servers"));
        (d, r)
    }

    fn rec(id: &str) -> Record {
        spec::record_for(&spec::parse("npm:@x/y").unwrap(), id)
    }

    #[test]
    fn install_get_policy_uninstall() {
        let (_d, reg) = reg();
        let r = reg.install(rec("y")).unwrap();
        assert_eq!(r.tools, ToolPolicy::default());
        assert!(!r.installed_at.is_empty());
        assert_eq!(reg.install(rec("y")).unwrap_err().code, "mcp.already_installed");
        assert_eq!(reg.install(rec("hal0-admin")).unwrap_err().code, "mcp.bundled");
        let r = reg.set_tier("y", "t", ToolList::Gated).unwrap();
        assert_eq!(classify(Some(&r), "t"), Verdict::Gated);
        let r = reg.set_tier("y", "t", ToolList::Allow).unwrap();
        assert_eq!(r.tools.gated.len(), 0);
        assert_eq!(classify(Some(&r), "t"), Verdict::Allow);
        assert_eq!(classify(None, "t"), Verdict::UnknownServer);
        let mut off = r.clone();
        off.enabled = false;
        assert_eq!(classify(Some(&off), "t"), Verdict::UnknownServer);
        let e = reg
            .replace_policy(
                "y",
                ToolPolicy { allow: vec!["a".into()], blocked: vec!["a".into()], ..Default::default() },
            )
            .unwrap_err();
        assert_eq!(e.code, "mcp.tools_invalid");
        assert_eq!(reg.get("y").unwrap().tools.allow, vec!["t".to_string()]);
        assert_eq!(reg.get("nope").unwrap_err().status(), 404);
        assert_eq!(reg.uninstall("hal0-memory", true).unwrap_err().status(), 409);
        reg.uninstall("y", false).unwrap();
        assert_eq!(reg.uninstall("y", false).unwrap_err().code, "mcp.not_found");
        assert_eq!(bundled().len(), crate::connect::MOUNTS.len());
    }

    #[test]
    fn broken_files_are_listed_not_skipped() {
        let (_d, reg) = reg();
        reg.install(rec("good")).unwrap();
        std::fs::write(reg.path_of("bad"), "id = \"bad\"\nenabled = [\n").unwrap();
        let l = reg.list().unwrap();
        assert_eq!(l.records.len(), 1);
        assert_eq!(l.broken.len(), 1);
        assert_eq!(l.broken[0].file, "bad.toml");
        assert!(l.broken[0].error.contains("line"), "{}", l.broken[0].error);
        assert_eq!(reg.uninstall("bad", false).unwrap_err().code, "mcp.record_malformed");
        reg.uninstall("bad", true).unwrap();
    }
}
