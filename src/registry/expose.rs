//! Exposure of installed MCP servers to Hermes: the join that writes, rewrites and removes
//! hal0's `mcp_servers.<id>` entries in each Hermes profile's config.yaml. Every entry points
//! at hal0's policy-enforcing proxy (`<hal0>/mcp/proxy/<id>/mcp`), never at the server
//! itself, and authenticates with `Authorization: Bearer ${HAL0_MCP_<ID>_KEY}`: a consumer
//! key of that (server, profile) pair minted by [`consumers`], whose value lives only in the
//! profile's `.env`.
//!
//! This module owns: the ownership manifest `<state>/mcp-exposure.json` (which entries hal0
//! wrote where; nothing outside it is ever changed or removed, so an operator's own
//! `mcp_servers` blocks are safe), the `HAL0_MCP_<ID>_KEY` lines and the `NO_PROXY` /
//! `no_proxy` lines of the profiles' `.env` files it joined servers into, the consumer keys
//! of those profiles, and the Hermes restart that follows a change (Hermes reads
//! `mcp_servers` only at start). [`join`] is an idempotent recompute run after every
//! exposure, enable/disable, install or uninstall; it never fails, it reports.

use super::{Record, Registry, Transport};
use crate::auth::consumers;
use crate::base::error::{Error, Result};
use crate::base::paths::{Paths, read_optional, write_atomic};
use crate::config::Config;
use crate::connect::local_base;
use crate::hermes::Profiles;
use crate::hermes::wiring::client_name;
use crate::store::Store;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The Hermes profile that is hal0's brain; it follows `exposure.brain`, every other profile
/// (the default one included) follows `exposure.hermes`.
pub const BRAIN_PROFILE: &str = "hal0-brain";
/// Hermes's `connect_timeout` for hal0's entries: a dead entry delays Hermes's start by this.
pub const CONNECT_TIMEOUT_SECS: u64 = 10;
/// How long `[hermes].restart_command` may run.
pub const RESTART_TIMEOUT: Duration = Duration::from_secs(60);
/// The note when Hermes must be restarted by hand.
pub const RESTART_NOTE: &str = "Hermes reads mcp_servers only at start: restart it as it runs on this box (its \
                                service, or `hermes gateway`) to load the change, or set [hermes].restart_command \
                                (hal0 config set hermes.restart_command '...') so hal0 restarts it";
/// Always kept out of the proxy in a joined profile's `.env`.
const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "::1"];
const SECTION: &str = "mcp_servers";

/// The `.env` variable holding a profile's consumer key for server `id`.
pub fn env_var(id: &str) -> String {
    format!("HAL0_MCP_{}_KEY", id.to_ascii_uppercase().replace('-', "_"))
}

/// The `mcp_servers.<id>` entry hal0 writes for server `id`.
pub fn entry(cfg: &Config, id: &str) -> Value {
    json!({
        "url": crate::connect::proxy_url(cfg, id, crate::connect::Reach::Box),
        "headers": {"Authorization": format!("Bearer ${{{}}}", env_var(id))},
        "timeout": cfg.mcp.call_timeout_secs + cfg.mcp.gate_wait_secs,
        "connect_timeout": CONNECT_TIMEOUT_SECS,
    })
}

/// Where the ownership manifest lives.
pub fn manifest_path(paths: &Paths) -> PathBuf {
    paths.state_dir.join("mcp-exposure.json")
}

/// Whether Hermes restarted after a join; on the wire `not_needed`, `needed` (no
/// `[hermes].restart_command` is set), `restarted` or `failed: <how>`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Restart {
    #[default]
    NotNeeded,
    Needed,
    Restarted,
    /// The restart command failed: how (exit code or signal, its last line redacted).
    Failed(String),
}

impl std::fmt::Display for Restart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Restart::NotNeeded => f.write_str("not_needed"),
            Restart::Needed => f.write_str("needed"),
            Restart::Restarted => f.write_str("restarted"),
            Restart::Failed(how) => write!(f, "failed: {how}"),
        }
    }
}

impl Serialize for Restart {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Restart {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(match s.as_str() {
            "not_needed" => Restart::NotNeeded,
            "needed" => Restart::Needed,
            "restarted" => Restart::Restarted,
            other => Restart::Failed(other.strip_prefix("failed: ").unwrap_or(other).to_string()),
        })
    }
}

/// What a join did (the `hermes_sync` of REST answers). Pairs read `<agent id>: <server id>`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct HermesSync {
    /// hal0's entries now in Hermes profiles other than the brain.
    pub hermes: Vec<String>,
    /// hal0's entries now in the `hal0-brain` profile.
    pub brain: Vec<String>,
    /// Entries written or rewritten by this join.
    pub applied: Vec<String>,
    /// Entries removed by this join (withdrawn, disabled or uninstalled).
    pub removed: Vec<String>,
    /// Agent ids whose config.yaml or `.env` this join changed.
    pub changed: Vec<String>,
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
    /// Whether Hermes had to restart to load the change, and how that went.
    pub restart: Restart,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The caller's re-probe of the mutated server, when it ran one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe: Option<Value>,
}

/// The manifest: for each config.yaml hal0 wrote entries into, whose it is and which ids.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Manifest {
    #[serde(default)]
    version: u32,
    #[serde(default)]
    profiles: BTreeMap<String, Owned>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Owned {
    agent: String,
    consumer: String,
    #[serde(default)]
    ids: BTreeSet<String>,
}

impl Manifest {
    fn load(path: &Path) -> Result<Manifest> {
        match read_optional(path)? {
            None => Ok(Manifest { version: 1, ..Default::default() }),
            Some(t) => serde_json::from_str(&t).map_err(|e| {
                Error::unavailable(
                    "mcp.exposure_manifest_unreadable",
                    format!("{} does not load ({e}); fix or remove it", path.display()),
                )
            }),
        }
    }
    fn save(&self, path: &Path, saved: &mut Manifest) -> Result<()> {
        if self == saved {
            return Ok(());
        }
        let mut text = serde_json::to_string_pretty(self).map_err(|e| Error::internal(e.to_string()))?;
        text.push('\n');
        write_atomic(path, text.as_bytes())?;
        *saved = self.clone();
        Ok(())
    }
}

/// One profile to converge: where it lives, who it is, and which ids it should carry.
struct Target {
    agent: String,
    consumer: String,
    dir: PathBuf,
    desired: BTreeSet<String>,
}

struct Ctx<'a> {
    cfg: &'a Config,
    store: &'a Store,
    /// Ids of record files that exist but do not load: their entries stay.
    broken: &'a BTreeSet<String>,
    no_proxy: &'a [String],
    manifest_path: &'a Path,
}

/// Whether a record can be joined at all: enabled, http or sse, with a url.
fn joinable(r: &Record) -> bool {
    r.enabled
        && match r.transport {
            Transport::StreamableHttp | Transport::Sse => r.url.is_some(),
            Transport::Stdio => r.start_command().is_ok(),
        }
}

/// Recompute every Hermes profile's hal0 entries from the registry: idempotent, never
/// failing (failures are in `errors`), restarting Hermes when something changed and
/// `[hermes].restart_command` is set.
pub fn join(paths: &Paths, cfg: &Config, store: &Store) -> HermesSync {
    let mut s = HermesSync::default();
    {
        let _lock = match lock(paths) {
            Ok(l) => l,
            Err(e) => {
                s.errors.push(format!("nothing changed: {e}"));
                return s;
            }
        };
        converge(paths, cfg, store, &mut s);
    }
    if !s.changed.is_empty() {
        match cfg.hermes.restart_command.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
            Some(cmd) => {
                s.restart = run_restart(cmd);
                if s.restart != Restart::Restarted {
                    s.note = Some(RESTART_NOTE.into());
                }
            }
            None => {
                s.restart = Restart::Needed;
                s.note = Some(RESTART_NOTE.into());
            }
        }
    }
    s
}

/// Held by every writer of Hermes's config.yaml and `.env` files (this join and the wiring
/// of hal0's own servers), so their read-modify-writes never interleave.
pub fn lock(paths: &Paths) -> Result<std::fs::File> {
    crate::base::paths::lock_file(&paths.state_dir, ".mcp-exposure.lock")
}

fn converge(paths: &Paths, cfg: &Config, store: &Store, s: &mut HermesSync) {
    let listing = match Registry::new(paths).list() {
        Ok(l) => l,
        Err(e) => {
            s.errors.push(format!("cannot read the MCP registry, so nothing changed: {e}"));
            return;
        }
    };
    let mpath = manifest_path(paths);
    let mut manifest = match Manifest::load(&mpath) {
        Ok(m) => m,
        Err(e) => {
            s.errors.push(format!("nothing changed: {e}"));
            return;
        }
    };
    manifest.version = 1;
    let mut saved = manifest.clone();
    let broken: BTreeSet<String> =
        listing.broken.iter().filter_map(|b| b.file.strip_suffix(".toml")).map(str::to_string).collect();
    for r in &listing.records {
        s.warnings.extend(record_warnings(r));
    }
    let no_proxy = no_proxy_wanted(paths, cfg);
    let ctx = Ctx { cfg, store, broken: &broken, no_proxy: &no_proxy, manifest_path: &mpath };

    let mut targets = Vec::new();
    for p in Profiles::from_config(cfg).list() {
        if p.name == "default" && !p.dir.is_dir() {
            continue;
        }
        let brain = p.name == BRAIN_PROFILE;
        let desired = listing
            .records
            .iter()
            .filter(|r| joinable(r) && if brain { r.exposure.brain } else { r.exposure.hermes })
            .map(|r| r.id.clone())
            .collect();
        targets.push(Target { consumer: client_name(&p), agent: p.agent_id, dir: p.dir, desired });
    }
    // Files hal0 wrote into whose profile is gone (or no longer under this Hermes home):
    // everything hal0 owns there is withdrawn.
    let live: BTreeSet<String> = targets.iter().map(|t| config_key(&t.dir)).collect();
    for (key, o) in &manifest.profiles {
        if !live.contains(key) {
            let dir = Path::new(key).parent().unwrap_or(Path::new("/")).to_path_buf();
            targets.push(Target {
                agent: o.agent.clone(),
                consumer: o.consumer.clone(),
                dir,
                desired: BTreeSet::new(),
            });
        }
    }
    for t in &targets {
        converge_profile(&ctx, t, &mut manifest, &mut saved, s);
    }
    if let Err(e) = manifest.save(&mpath, &mut saved) {
        s.errors.push(format!("cannot record hal0's entries: {e}"));
    }
    for o in manifest.profiles.values() {
        let list = if o.agent == format!("hermes/{BRAIN_PROFILE}") { &mut s.brain } else { &mut s.hermes };
        list.extend(o.ids.iter().map(|id| format!("{}: {id}", o.agent)));
    }
    s.hermes.sort();
    s.brain.sort();
}

fn config_key(dir: &Path) -> String {
    dir.join("config.yaml").to_string_lossy().into_owned()
}

/// Converge one profile. The manifest is saved before any new entry is written, so a crash
/// never leaves an entry hal0 wrote that it does not know it owns.
fn converge_profile(ctx: &Ctx<'_>, t: &Target, manifest: &mut Manifest, saved: &mut Manifest, s: &mut HermesSync) {
    let key = config_key(&t.dir);
    let cfg_path = t.dir.join("config.yaml");
    let env_path = t.dir.join(".env");
    let mut owned: BTreeSet<String> = manifest.profiles.get(&key).map(|o| o.ids.clone()).unwrap_or_default();
    let mut changed = false;
    let pair = |id: &str| format!("{}: {id}", t.agent);

    // The names in config.yaml now; without them nothing is added (a removal still revokes).
    let names: Option<BTreeSet<String>> = match crate::base::paths::read_optional_following(&cfg_path)
        .and_then(|text| crate::base::yamledit::YamlDoc::parse(&text.unwrap_or_default()))
    {
        Ok(doc) => Some(doc.entry_names(SECTION).into_iter().collect()),
        Err(e) => {
            s.errors.push(format!("{}: {}: {e}", t.agent, cfg_path.display()));
            None
        }
    };

    // Withdraw what is owned here and no longer desired, except a record that exists but
    // does not load: that is not an uninstall, so its entry and key stay until it is fixed.
    let mut kept_vars = BTreeSet::new();
    for id in owned.clone().iter().filter(|id| !t.desired.contains(*id)) {
        if ctx.broken.contains(id) {
            s.errors.push(format!(
                "{}: kept `{id}` in {}: its record file does not load (fix it, or uninstall it with --force)",
                t.agent,
                cfg_path.display()
            ));
            kept_vars.insert(env_var(id));
            continue;
        }
        if let Err(e) = consumers::revoke(ctx.store, id, &t.consumer) {
            s.errors.push(format!("{}: cannot revoke the key of `{id}`: {e}", t.agent));
        }
        match keep_owner(&env_path, || crate::base::envfile::remove_vars(&env_path, &[env_var(id).as_str()])) {
            Ok(c) => changed |= c,
            Err(e) => s.errors.push(format!("{}: {e}", t.agent)),
        }
        if names.is_none() {
            continue;
        }
        match crate::base::yamledit::edit_file(&cfg_path, |doc| doc.remove_entry(SECTION, id).map(|_| ())) {
            Ok(c) => {
                changed |= c;
                owned.remove(id);
                s.removed.push(pair(id));
            }
            Err(e) => s.errors.push(format!("{}: cannot remove `{id}`: {e}", t.agent)),
        }
    }

    let consumer_ok = t.desired.is_empty()
        || consumers::validate_name(&t.consumer)
            .map_err(|e| s.errors.push(format!("{}: nothing is joined there: {e}", t.agent)))
            .is_ok();
    if let Some(names) = names.as_ref().filter(|_| consumer_ok) {
        // Ids already owned here claim their variable first, so a newcomer whose id maps to
        // the same variable never takes a working entry's key.
        let mut order: Vec<&String> = t.desired.iter().filter(|id| owned.contains(*id)).collect();
        order.extend(t.desired.iter().filter(|id| !owned.contains(*id)));
        let mut claimed = kept_vars;
        for id in order {
            if !owned.contains(id) && names.contains(id) {
                s.errors.push(format!(
                    "{}: `{SECTION}.{id}` in {} is not hal0's entry, so it was left as it is and `{id}` is not \
                     joined there (rename or remove that entry to expose it)",
                    t.agent,
                    cfg_path.display()
                ));
                continue;
            }
            let var = env_var(id);
            if !claimed.insert(var.clone()) {
                s.errors.push(format!(
                    "{}: `{id}` is not joined: its key variable {var} is already used by another exposed server \
                     (ids differing only in `-` and `_` cannot both be exposed)",
                    t.agent
                ));
                continue;
            }
            if owned.insert(id.clone()) {
                put_owned(manifest, &key, t, &owned);
                if let Err(e) = manifest.save(ctx.manifest_path, saved) {
                    owned.remove(id);
                    put_owned(manifest, &key, t, &owned);
                    s.errors.push(format!("{}: `{id}` is not joined: cannot record it: {e}", t.agent));
                    continue;
                }
            }
            match join_one(ctx, t, id, &var, &cfg_path, &env_path) {
                Ok((yaml, env)) => {
                    changed |= yaml || env;
                    if yaml {
                        s.applied.push(pair(id));
                    }
                }
                Err(e) => s.errors.push(format!("{}: `{id}`: {e}", t.agent)),
            }
        }
    }

    if !owned.is_empty() {
        match ensure_no_proxy(&env_path, ctx.no_proxy) {
            Ok(c) => changed |= c,
            Err(e) => s.errors.push(format!("{}: cannot set NO_PROXY: {e}", t.agent)),
        }
    }
    put_owned(manifest, &key, t, &owned);
    if changed {
        s.changed.push(t.agent.clone());
    }
}

fn put_owned(manifest: &mut Manifest, key: &str, t: &Target, owned: &BTreeSet<String>) {
    if owned.is_empty() {
        manifest.profiles.remove(key);
    } else {
        manifest.profiles.insert(
            key.to_string(),
            Owned { agent: t.agent.clone(), consumer: t.consumer.clone(), ids: owned.clone() },
        );
    }
}

/// Make sure the profile's `.env` holds a live key for `id` and config.yaml holds the entry.
/// Returns (config.yaml changed, `.env` changed).
fn join_one(ctx: &Ctx<'_>, t: &Target, id: &str, var: &str, cfg_path: &Path, env_path: &Path) -> Result<(bool, bool)> {
    // Read the key, mint and write under one lock of the `.env`: the key minted is the key kept.
    let env_changed = crate::base::paths::with_lock(env_path, || {
        keep_owner(env_path, || {
            let live = match crate::base::envfile::get_var(env_path, var)? {
                Some(k) => consumers::holds(ctx.store, id, &t.consumer, &k)?,
                None => false,
            };
            if live {
                return Ok(false);
            }
            let note = format!("Hermes profile {} (hal0 mcp expose)", t.agent);
            let (_, key) = consumers::mint(ctx.store, id, &t.consumer, &note)?;
            crate::base::envfile::set_vars(env_path, &[(var, &key)])
        })
    })?;
    let value = entry(ctx.cfg, id);
    let yaml_changed = crate::base::yamledit::edit_file(cfg_path, |doc| doc.set_entry(SECTION, id, &value))?;
    Ok((yaml_changed, env_changed))
}

fn split_list(v: &str) -> impl Iterator<Item = String> + '_ {
    v.split(',').map(str::trim).filter(|x| !x.is_empty()).map(str::to_string)
}

fn push_unique(out: &mut Vec<String>, items: impl IntoIterator<Item = String>) {
    for i in items {
        if !out.iter().any(|o| o.eq_ignore_ascii_case(&i)) {
            out.push(i);
        }
    }
}

/// What every joined profile's `NO_PROXY` must cover: loopback, hal0's own host (every
/// entry points there), and the operator's exclusions from api.env and this process's env.
fn no_proxy_wanted(paths: &Paths, cfg: &Config) -> Vec<String> {
    let mut out = Vec::new();
    push_unique(&mut out, LOOPBACK.iter().map(|h| h.to_string()));
    push_unique(&mut out, crate::config::url_host(&local_base(cfg)));
    let api = read_optional(&paths.api_env()).ok().flatten().unwrap_or_default();
    for (k, v) in crate::base::envfile::env_lines(&api) {
        if k == "NO_PROXY" || k == "no_proxy" {
            push_unique(&mut out, split_list(&v).collect::<Vec<_>>());
        }
    }
    for k in ["NO_PROXY", "no_proxy"] {
        if let Ok(v) = std::env::var(k) {
            push_unique(&mut out, split_list(&v).collect::<Vec<_>>());
        }
    }
    out
}

/// Set `NO_PROXY` and `no_proxy` in a joined profile's `.env` when either is missing,
/// they differ, or they lack an entry of `wanted`. The entries already there are kept
/// first (the file is the operator's), then `wanted`; an unchanged file is not rewritten.
fn ensure_no_proxy(env_path: &Path, wanted: &[String]) -> Result<bool> {
    crate::base::paths::with_lock(env_path, || ensure_no_proxy_locked(env_path, wanted))
}

fn ensure_no_proxy_locked(env_path: &Path, wanted: &[String]) -> Result<bool> {
    let upper = crate::base::envfile::get_var(env_path, "NO_PROXY")?;
    let lower = crate::base::envfile::get_var(env_path, "no_proxy")?;
    let mut value = Vec::new();
    for v in [&upper, &lower].into_iter().flatten() {
        push_unique(&mut value, split_list(v).collect::<Vec<_>>());
    }
    push_unique(&mut value, wanted.iter().cloned());
    let value = value.join(",");
    if upper.as_deref() == Some(value.as_str()) && lower.as_deref() == Some(value.as_str()) {
        return Ok(false);
    }
    keep_owner(env_path, || crate::base::envfile::set_vars(env_path, &[("NO_PROXY", &value), ("no_proxy", &value)]))
}

/// Run an edit of a profile's `.env` (rewritten by temp file and rename, so owned by this
/// process) and give the file back to its owner: the previous file's, or for a new file the
/// profile directory's, so that Hermes can still read it when hal0 runs as root.
/// (The edits lock the file themselves; a caller that reads before it edits holds the lock
/// around this call.)
fn keep_owner(path: &Path, edit: impl FnOnce() -> Result<bool>) -> Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let owner = std::fs::symlink_metadata(path)
        .or_else(|_| std::fs::metadata(path.parent().unwrap_or(Path::new("/"))))
        .map(|m| (m.uid(), m.gid()))
        .ok();
    let changed = edit()?;
    if let (true, Some((uid, gid))) = (changed, owner)
        && let Ok(now) = std::fs::symlink_metadata(path)
        && (now.uid(), now.gid()) != (uid, gid)
        // Never through a symlink swapped in after the rename (the profile's owner may).
        && let Err(e) = std::os::unix::fs::lchown(path, Some(uid), Some(gid))
    {
        tracing::warn!(path = %path.display(), error = %e, "could not restore the owner of an edited .env");
    }
    Ok(changed)
}

/// Warnings for an exposed record: a credential header other than Authorization (hal0's
/// proxy adds it upstream; a redirect from the upstream would carry it to another origin),
/// or exposure of a server that cannot be joined yet.
fn record_warnings(r: &Record) -> Vec<String> {
    let mut out = Vec::new();
    if !(r.exposure.hermes || r.exposure.brain) || !r.enabled {
        return out;
    }
    if r.transport == Transport::Stdio {
        if r.start_command().is_err() {
            out.push(format!("`{}` is exposed but is a stdio server without a command: it is not joined", r.id));
        }
        return out;
    }
    let mut headers: Vec<&str> = r.secrets.keys().map(String::as_str).collect();
    headers.extend(r.env.keys().map(String::as_str).filter(|k| crate::base::redact::is_secret_name(k)));
    headers.retain(|h| !h.eq_ignore_ascii_case("authorization"));
    headers.sort_unstable();
    headers.dedup();
    if !headers.is_empty() {
        out.push(format!(
            "`{}` sends a credential in {} rather than Authorization: hal0 adds it to each upstream request, so \
             {} must not redirect (a redirect to another origin would carry that header along); carry the \
             credential in Authorization where the server allows it",
            r.id,
            headers.iter().map(|h| format!("`{h}`")).collect::<Vec<_>>().join(", "),
            r.url.as_deref().unwrap_or("its url")
        ));
    }
    out
}

/// Run `[hermes].restart_command` with `sh -c`, bounded by [`RESTART_TIMEOUT`].
fn run_restart(cmd: &str) -> Restart {
    match run_bounded(cmd, RESTART_TIMEOUT) {
        Ok(()) => Restart::Restarted,
        Err(how) => Restart::Failed(how),
    }
}

/// Run `cmd` under `sh -c` for at most `limit`; `Err` says how it failed.
fn run_bounded(cmd: &str, limit: Duration) -> std::result::Result<(), String> {
    use std::process::{Command, Stdio};
    let mut child = match Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => return Err(format!("cannot run sh: {e}")),
    };
    // Readers on their own threads (a full pipe must not stall the command) keeping the
    // tail only; they are not waited for past a short grace, as a daemon the command
    // started may hold the pipes open.
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
        if let Some(mut p) = pipe {
            std::thread::spawn(move || {
                let mut tail = Vec::new();
                let mut buf = [0u8; 4096];
                while let Ok(n) = p.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    tail.extend_from_slice(&buf[..n]);
                    if tail.len() > 8192 {
                        tail.drain(..tail.len() - 8192);
                    }
                }
                let _ = tx.send(tail);
            });
        }
        rx
    };
    let out_rx = reader(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let err_rx = reader(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st,
            Ok(None) if start.elapsed() >= limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("timed out after {} s", limit.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(25)),
            Err(e) => return Err(format!("{e}")),
        }
    };
    if status.success() {
        return Ok(());
    }
    let grace = Duration::from_millis(500);
    let last_line = |rx: std::sync::mpsc::Receiver<Vec<u8>>| -> Option<String> {
        let bytes = rx.recv_timeout(grace).ok()?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        text.lines().map(str::trim).rfind(|l| !l.is_empty()).map(str::to_string)
    };
    let how = match status.code() {
        Some(c) => format!("exit code {c}"),
        None => {
            use std::os::unix::process::ExitStatusExt;
            format!("killed by signal {}", status.signal().unwrap_or(0))
        }
    };
    match last_line(err_rx).or_else(|| last_line(out_rx)) {
        Some(l) => Err(format!("{how}: {}", crate::base::redact::redact(&l))),
        None => Err(how),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::spec;
    use std::os::unix::fs::PermissionsExt;

    const DEFAULT_YAML: &str = "\
# Hermes configuration (the operator's comments stay)
model:
  default: fake-model   # keep me
mcp_servers:
  # my own server, hand-written
  mine:
    url: http://10.0.0.5:9000/mcp
    headers:
      Authorization: \"Bearer ${MINE_KEY}\"
    timeout: 30
some_unknown_key:
  nested: [1, 2, 3]   # odd but mine
approvals:
  mode: manual
";
    const BRAIN_YAML: &str = "# the brain\nmodel: brain-model\n";
    const WORK_YAML: &str = "model: work-model\n# no mcp_servers yet\n";

    struct T {
        d: tempfile::TempDir,
        paths: Paths,
        cfg: Config,
        store: Store,
    }

    impl T {
        fn home(&self) -> PathBuf {
            self.d.path().join("hermes")
        }
        fn prof(&self, name: &str) -> PathBuf {
            if name == "default" { self.home() } else { self.home().join("profiles").join(name) }
        }
        fn yaml(&self, name: &str) -> String {
            std::fs::read_to_string(self.prof(name).join("config.yaml")).unwrap()
        }
        fn parsed(&self, name: &str) -> serde_yaml_ng::Value {
            serde_yaml_ng::from_str(&self.yaml(name)).unwrap()
        }
        fn has_entry(&self, name: &str, id: &str) -> bool {
            self.parsed(name).get("mcp_servers").and_then(|m| m.get(id)).is_some()
        }
        fn env(&self, name: &str, var: &str) -> Option<String> {
            crate::base::envfile::get_var(&self.prof(name).join(".env"), var).unwrap()
        }
        fn reg(&self) -> Registry {
            Registry::new(&self.paths)
        }
        fn install(&self, id: &str, url: &str) {
            self.reg().install(spec::record_for(&spec::parse(url).unwrap(), id)).unwrap();
        }
        /// Set `[table].key` in a record file (there is no setter for exposure yet).
        fn set(&self, id: &str, table: Option<&str>, key: &str, v: toml_edit::Item) {
            let p = self.reg().path_of(id);
            let mut doc: toml_edit::DocumentMut = std::fs::read_to_string(&p).unwrap().parse().unwrap();
            match table {
                Some(t) => doc[t][key] = v,
                None => doc[key] = v,
            }
            std::fs::write(&p, doc.to_string()).unwrap();
        }
        fn expose(&self, id: &str, hermes: bool, brain: bool) {
            self.set(id, Some("exposure"), "hermes", toml_edit::value(hermes));
            self.set(id, Some("exposure"), "brain", toml_edit::value(brain));
        }
        fn join(&self) -> HermesSync {
            let s = join(&self.paths, &self.cfg, &self.store);
            // Every report serialises.
            serde_json::to_value(&s).unwrap();
            s
        }
        fn holds(&self, id: &str, consumer: &str, key: &str) -> bool {
            consumers::holds(&self.store, id, consumer, key).unwrap()
        }
    }

    fn setup() -> T {
        let d = tempfile::tempdir().unwrap();
        let paths = Paths {
            config_dir: d.path().join("etc"),
            state_dir: d.path().join("state"),
            config_source: "test".into(),
            state_source: "test".into(),
        };
        let mut cfg = Config::default();
        cfg.hermes.home = Some(d.path().join("hermes"));
        let store = Store::open(&d.path().join("h.db")).unwrap();
        let t = T { d, paths, cfg, store };
        for (name, yaml) in [("default", DEFAULT_YAML), ("hal0-brain", BRAIN_YAML), ("work", WORK_YAML)] {
            std::fs::create_dir_all(t.prof(name)).unwrap();
            std::fs::write(t.prof(name).join("config.yaml"), yaml).unwrap();
        }
        t
    }

    /// `text` with the block of `mcp_servers.<id>` (its line and the deeper ones) cut out.
    fn without_entry(text: &str, id: &str) -> String {
        let mut out = String::new();
        let mut inside = false;
        for l in text.lines() {
            if l == format!("  {id}:") {
                inside = true;
                continue;
            }
            if inside && l.starts_with("    ") {
                continue;
            }
            inside = false;
            out.push_str(l);
            out.push('\n');
        }
        out
    }

    #[test]
    fn names() {
        assert_eq!(env_var("my-files_2"), "HAL0_MCP_MY_FILES_2_KEY");
        let cfg = Config::default();
        assert_eq!(
            crate::connect::proxy_url(&cfg, "files", crate::connect::Reach::Box),
            "http://127.0.0.1:8080/mcp/proxy/files/mcp"
        );
        let e = entry(&cfg, "files");
        assert_eq!(e["headers"]["Authorization"], "Bearer ${HAL0_MCP_FILES_KEY}");
        assert_eq!(e["timeout"], 150);
        assert_eq!(e["connect_timeout"], 10);
    }

    #[test]
    fn expose_join_idempotent_withdraw() {
        let t = setup();
        std::fs::create_dir_all(&t.paths.config_dir).unwrap();
        std::fs::write(t.paths.api_env(), "HAL0_ADMIN_KEY=x\nNO_PROXY=corp.example, localhost\n").unwrap();
        std::fs::write(t.prof("work").join(".env"), "# work env\nOTHER=1\nno_proxy=mine.internal\n").unwrap();
        t.install("files", "http://127.0.0.1:9/mcp");
        // Installed but not exposed: nothing happens.
        let s = t.join();
        assert!(s.errors.is_empty() && s.changed.is_empty() && s.restart == Restart::NotNeeded, "{s:?}");
        assert!(!manifest_path(&t.paths).exists());

        t.expose("files", true, false);
        let s = t.join();
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        assert_eq!(s.hermes, ["hermes/work: files", "hermes: files"]);
        assert!(s.brain.is_empty());
        assert_eq!(s.changed, ["hermes", "hermes/work"]);
        assert_eq!(s.restart, Restart::Needed);
        assert!(s.note.as_deref().unwrap().contains("only at start"));

        // The default profile: only the new entry was added; every other byte is as it was.
        let after = t.yaml("default");
        assert_eq!(without_entry(&after, "files"), DEFAULT_YAML, "{after}");
        let y = t.parsed("default");
        let e = &y["mcp_servers"]["files"];
        assert_eq!(e["url"].as_str(), Some("http://127.0.0.1:8080/mcp/proxy/files/mcp"));
        assert_eq!(e["headers"]["Authorization"].as_str(), Some("Bearer ${HAL0_MCP_FILES_KEY}"));
        assert_eq!(e["timeout"].as_u64(), Some(150));
        assert_eq!(e["connect_timeout"].as_u64(), Some(10));
        assert_eq!(y["mcp_servers"]["mine"]["timeout"].as_u64(), Some(30));
        assert!(t.has_entry("work", "files"));
        assert_eq!(t.yaml("hal0-brain"), BRAIN_YAML, "the brain is not exposed");
        assert!(!t.prof("hal0-brain").join(".env").exists());

        // Keys: one per (server, profile), live, only in the profile's .env.
        let k_default = t.env("default", "HAL0_MCP_FILES_KEY").unwrap();
        let k_work = t.env("work", "HAL0_MCP_FILES_KEY").unwrap();
        assert_ne!(k_default, k_work);
        assert!(t.holds("files", "hermes", &k_default));
        assert!(t.holds("files", "hermes__work", &k_work));
        assert!(!after.contains(&k_default));

        // NO_PROXY: loopback, hal0's host, api.env's entries; the file's own entries kept.
        for p in ["default", "work"] {
            let np = t.env(p, "NO_PROXY").unwrap();
            assert_eq!(t.env(p, "no_proxy").as_deref(), Some(np.as_str()));
            let items: Vec<&str> = np.split(',').collect();
            for want in ["localhost", "127.0.0.1", "::1", "corp.example"] {
                assert!(items.contains(&want), "{p}: {np}");
            }
            assert_eq!(items.iter().filter(|i| **i == "localhost").count(), 1, "{np}");
        }
        assert!(t.env("work", "NO_PROXY").unwrap().starts_with("mine.internal,localhost,127.0.0.1,::1"));
        let work_env = std::fs::read_to_string(t.prof("work").join(".env")).unwrap();
        assert!(work_env.starts_with("# work env\nOTHER=1\n"), "{work_env}");

        // The manifest: 0600, what hal0 wrote where.
        let m = manifest_path(&t.paths);
        assert_eq!(std::fs::metadata(&m).unwrap().permissions().mode() & 0o777, 0o600);
        let mj: Value = serde_json::from_str(&std::fs::read_to_string(&m).unwrap()).unwrap();
        let key = t.prof("work").join("config.yaml").to_string_lossy().into_owned();
        assert_eq!(mj["profiles"][&key]["ids"], json!(["files"]));
        assert_eq!(mj["profiles"][&key]["consumer"], "hermes__work");

        // Idempotent: nothing changes, the same keys stay.
        let before_env = std::fs::read_to_string(t.prof("default").join(".env")).unwrap();
        let s = t.join();
        assert!(s.errors.is_empty() && s.changed.is_empty() && s.applied.is_empty(), "{s:?}");
        assert_eq!(s.restart, Restart::NotNeeded);
        assert!(s.note.is_none());
        assert_eq!(t.yaml("default"), after);
        assert_eq!(std::fs::read_to_string(t.prof("default").join(".env")).unwrap(), before_env);

        // A dead key in .env is replaced; a hand-removed entry is written again.
        crate::base::envfile::set_vars(&t.prof("work").join(".env"), &[("HAL0_MCP_FILES_KEY", "hal0pk_stale")])
            .unwrap();
        crate::base::yamledit::edit_file(&t.prof("default").join("config.yaml"), |d| {
            d.remove_entry("mcp_servers", "files").map(|_| ())
        })
        .unwrap();
        let s = t.join();
        assert_eq!(s.changed, ["hermes", "hermes/work"], "{s:?}");
        assert_eq!(s.applied, ["hermes: files"]);
        assert!(t.holds("files", "hermes__work", &t.env("work", "HAL0_MCP_FILES_KEY").unwrap()));
        assert_eq!(t.env("default", "HAL0_MCP_FILES_KEY").unwrap(), k_default, "a live key is kept");

        // Withdraw: entries, variables and keys go; the operator's entry and comments stay.
        t.expose("files", false, false);
        let s = t.join();
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        assert_eq!(s.removed, ["hermes: files", "hermes/work: files"]);
        assert!(s.hermes.is_empty());
        assert_eq!(t.yaml("default"), DEFAULT_YAML, "byte-identical once hal0's entry is gone");
        assert!(!t.has_entry("work", "files"));
        assert_eq!(t.env("default", "HAL0_MCP_FILES_KEY"), None);
        assert!(!t.holds("files", "hermes", &k_default));
        assert!(consumers::get(&t.store, "files", "hermes").unwrap().revoked);
        assert!(t.env("default", "NO_PROXY").is_some(), "NO_PROXY is left in place");
        let mj: Value = serde_json::from_str(&std::fs::read_to_string(&m).unwrap()).unwrap();
        assert_eq!(mj["profiles"], json!({}));
        assert_eq!(t.join().changed.len(), 0);
    }

    #[test]
    fn brain_only_then_disabled_then_uninstalled() {
        let t = setup();
        t.install("files", "http://127.0.0.1:9/mcp");
        t.install("web", "https://web.example/sse");
        t.expose("files", false, true);
        t.expose("web", false, true);
        let s = t.join();
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        assert_eq!(s.brain, ["hermes/hal0-brain: files", "hermes/hal0-brain: web"]);
        assert!(s.hermes.is_empty());
        assert_eq!(s.changed, ["hermes/hal0-brain"]);
        assert!(t.has_entry("hal0-brain", "files") && t.has_entry("hal0-brain", "web"));
        assert_eq!(t.yaml("work"), WORK_YAML);
        assert_eq!(without_entry(&t.yaml("default"), "files"), DEFAULT_YAML);
        assert!(!t.has_entry("default", "files"));
        assert!(t.yaml("hal0-brain").starts_with(BRAIN_YAML));
        let k = t.env("hal0-brain", "HAL0_MCP_WEB_KEY").unwrap();
        assert!(t.holds("web", "hermes__hal0-brain", &k));
        assert_eq!(
            t.parsed("hal0-brain")["mcp_servers"]["web"]["url"].as_str(),
            Some("http://127.0.0.1:8080/mcp/proxy/web/mcp"),
            "an sse server is reached through the proxy too"
        );

        // Disabled: withdrawn.
        t.set("files", None, "enabled", toml_edit::value(false));
        let s = t.join();
        assert_eq!(s.removed, ["hermes/hal0-brain: files"], "{s:?}");
        assert!(!t.has_entry("hal0-brain", "files"));
        assert_eq!(t.env("hal0-brain", "HAL0_MCP_FILES_KEY"), None);
        // Uninstalled: withdrawn.
        t.reg().uninstall("web", false).unwrap();
        let s = t.join();
        assert_eq!(s.removed, ["hermes/hal0-brain: web"], "{s:?}");
        assert!(!t.holds("web", "hermes__hal0-brain", &k));
        assert_eq!(t.yaml("hal0-brain"), format!("{BRAIN_YAML}mcp_servers: {{}}\n"));
    }

    #[test]
    fn operator_entry_of_the_same_name_is_left_alone() {
        let t = setup();
        t.install("mine", "http://127.0.0.1:9/mcp");
        t.expose("mine", true, false);
        let s = t.join();
        assert_eq!(s.errors.len(), 1, "{:?}", s.errors);
        let e = &s.errors[0];
        assert!(e.contains("mcp_servers.mine") && e.contains(&t.home().join("config.yaml").display().to_string()));
        assert_eq!(t.yaml("default"), DEFAULT_YAML);
        assert_eq!(t.env("default", "HAL0_MCP_MINE_KEY"), None);
        assert!(!t.home().join(".env").exists(), "no key, no NO_PROXY for a profile hal0 has nothing in");
        assert_eq!(s.hermes, ["hermes/work: mine"], "other profiles still get it");
        // Withdrawing never touches it either.
        t.expose("mine", false, false);
        let s = t.join();
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        assert_eq!(t.yaml("default"), DEFAULT_YAML);
        assert!(!t.has_entry("work", "mine"));
    }

    #[test]
    fn a_broken_record_keeps_its_entry() {
        let t = setup();
        t.install("files", "http://127.0.0.1:9/mcp");
        t.expose("files", true, false);
        t.join();
        let k = t.env("work", "HAL0_MCP_FILES_KEY").unwrap();
        std::fs::write(t.reg().path_of("files"), "id = \"files\"\nenabled = [\n").unwrap();
        let s = t.join();
        assert_eq!(s.errors.len(), 2, "{:?}", s.errors);
        assert!(s.errors.iter().all(|e| e.contains("kept `files`") && e.contains("does not load")), "{s:?}");
        assert!(s.changed.is_empty() && s.removed.is_empty());
        assert!(t.has_entry("default", "files") && t.has_entry("work", "files"));
        assert!(t.holds("files", "hermes__work", &k));
        assert_eq!(s.hermes.len(), 2);
        // Removed for good (forced uninstall): withdrawn.
        t.reg().uninstall("files", true).unwrap();
        let s = t.join();
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        assert!(!t.has_entry("work", "files"));
        assert!(!t.holds("files", "hermes__work", &k));
    }

    #[test]
    fn registry_unreadable_changes_nothing() {
        let t = setup();
        t.install("files", "http://127.0.0.1:9/mcp");
        t.expose("files", true, false);
        t.join();
        let dir = t.reg().dir().to_path_buf();
        std::fs::rename(&dir, t.d.path().join("moved")).unwrap();
        std::fs::write(&dir, "not a dir").unwrap();
        let s = t.join();
        assert_eq!(s.errors.len(), 1, "{s:?}");
        assert!(s.errors[0].contains("nothing changed"));
        assert!(t.has_entry("work", "files"));
    }

    #[test]
    fn restart_command_runs_only_on_change() {
        let mut t = setup();
        let flag = t.d.path().join("restarted");
        t.cfg.hermes.restart_command = Some(format!("touch '{}'", flag.display()));
        t.install("files", "http://127.0.0.1:9/mcp");
        t.expose("files", true, false);
        let s = t.join();
        assert_eq!(s.restart, Restart::Restarted, "{s:?}");
        assert!(s.note.is_none());
        assert!(flag.exists());
        std::fs::remove_file(&flag).unwrap();
        let s = t.join();
        assert_eq!(s.restart, Restart::NotNeeded);
        assert!(!flag.exists(), "nothing changed, no restart");

        let key = "ghp_0123456789abcdefghijABCDEFGHIJklmnop";
        t.cfg.hermes.restart_command =
            Some(format!("echo starting; echo 'no unit hal0-agent@hermes {key}' >&2; exit 3"));
        t.expose("files", false, false);
        let s = t.join();
        assert!(s.restart.to_string().starts_with("failed: exit code 3: no unit hal0-agent@hermes"), "{}", s.restart);
        assert!(!s.restart.to_string().contains(key), "redacted: {}", s.restart);
        assert!(s.note.is_some());
        assert!(run_bounded("sleep 5", Duration::from_millis(200)).unwrap_err().starts_with("timed out"));
        assert_eq!(run_bounded("echo out; exit 1", Duration::from_secs(5)), Err("exit code 1: out".to_string()));
        assert_eq!(Restart::Failed("exit code 1: out".into()).to_string(), "failed: exit code 1: out");
        assert_eq!(serde_json::to_value(Restart::NotNeeded).unwrap(), "not_needed");
    }

    #[test]
    fn env_var_collision_and_warnings() {
        let t = setup();
        t.install("my-srv", "http://127.0.0.1:9/mcp");
        t.install("my_srv", "http://127.0.0.1:10/mcp");
        t.expose("my-srv", true, false);
        t.expose("my_srv", true, false);
        let s = t.join();
        assert_eq!(s.hermes, ["hermes/work: my-srv", "hermes: my-srv"], "{s:?}");
        assert_eq!(s.errors.len(), 2, "{:?}", s.errors);
        assert!(s.errors.iter().all(|e| e.contains("`my_srv`") && e.contains("HAL0_MCP_MY_SRV_KEY")));
        assert!(!t.has_entry("work", "my_srv"));
        // The variable holds the joined server's key.
        let k = t.env("work", "HAL0_MCP_MY_SRV_KEY").unwrap();
        assert!(t.holds("my-srv", "hermes__work", &k));

        // A credential outside Authorization warns; in Authorization it does not.
        t.set("my_srv", None, "enabled", toml_edit::value(false));
        let mut sec = toml_edit::InlineTable::new();
        sec.insert("X-Api-Key", "MY_SRV_TOKEN".into());
        t.set("my-srv", None, "secrets", toml_edit::Item::Value(sec.into()));
        let s = t.join();
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
        assert!(s.warnings[0].contains("`X-Api-Key`") && s.warnings[0].contains("must not redirect"));
        let mut sec = toml_edit::InlineTable::new();
        sec.insert("Authorization", "MY_SRV_TOKEN".into());
        t.set("my-srv", None, "secrets", toml_edit::Item::Value(sec.into()));
        assert!(t.join().warnings.is_empty());
        // A stdio server without a command cannot be joined: warned, not written; with a
        // command hal0 supervises it and joins it like any other.
        t.install("local", "git+https://example.com/x/local.git");
        t.expose("local", true, false);
        let s = t.join();
        assert!(s.warnings.iter().any(|w| w.contains("`local`") && w.contains("stdio")), "{s:?}");
        assert!(!t.has_entry("work", "local"));
        t.install("npx-one", "npm:@x/npx-one");
        t.expose("npx-one", true, false);
        t.join();
        assert!(t.has_entry("work", "npx-one"));
    }

    #[test]
    fn a_removed_profile_is_cleaned_up() {
        let t = setup();
        std::fs::create_dir_all(t.prof("gone")).unwrap();
        t.install("files", "http://127.0.0.1:9/mcp");
        t.expose("files", true, false);
        let s = t.join();
        assert!(s.hermes.contains(&"hermes/gone: files".to_string()), "{s:?}");
        let k = t.env("gone", "HAL0_MCP_FILES_KEY").unwrap();
        std::fs::remove_dir_all(t.prof("gone")).unwrap();
        let s = t.join();
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        assert_eq!(s.removed, ["hermes/gone: files"]);
        assert!(!t.holds("files", "hermes__gone", &k));
        assert!(!t.prof("gone").exists(), "nothing is re-created");
        assert_eq!(s.hermes, ["hermes/work: files", "hermes: files"]);
    }

    #[test]
    fn a_profile_name_too_long_for_a_consumer_is_reported() {
        let t = setup();
        let long = "p".repeat(60);
        std::fs::create_dir_all(t.prof(&long)).unwrap();
        t.install("files", "http://127.0.0.1:9/mcp");
        t.expose("files", true, false);
        let s = t.join();
        assert_eq!(s.errors.len(), 1, "{:?}", s.errors);
        assert!(s.errors[0].contains(&format!("hermes/{long}")) && s.errors[0].contains("mcp.invalid_consumer"));
        assert_eq!(s.hermes, ["hermes/work: files", "hermes: files"]);
        assert!(!t.prof(&long).join("config.yaml").exists() && !t.prof(&long).join(".env").exists());
    }

    #[test]
    fn a_missing_home_is_not_created() {
        let t = setup();
        std::fs::remove_dir_all(t.home()).unwrap();
        t.install("files", "http://127.0.0.1:9/mcp");
        t.expose("files", true, true);
        let s = t.join();
        assert!(s.errors.is_empty() && s.hermes.is_empty() && s.changed.is_empty(), "{s:?}");
        assert!(!t.home().exists());
    }
}
