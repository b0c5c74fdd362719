//! hal0.toml through the API: the effective settings (redacted), their schema, and a
//! one-key write that keeps comments and takes effect at the next start.

use super::{Ctx, NoArgs};
use crate::base::error::Result;
use serde_json::{Value, json};

/// `settings_get`: what this process runs with, and each key whose value in the file on
/// disk is not the one this process read at start (`pending_restart`, as PostgreSQL's
/// `pg_settings` reports it), both redacted; the answer is built again only when the file
/// changed.
pub async fn get(ctx: &Ctx, _: NoArgs) -> Result<Value> {
    let kept = ctx.settings.get(|| {
        let redacted = |c: &crate::config::Config| {
            let mut v = json!(c);
            crate::base::redact::redact_json(&mut v);
            v
        };
        let (file, loaded) = (redacted(&crate::config::Config::load(&ctx.paths)?), redacted(&ctx.live.loaded()));
        let running = redacted(&ctx.config());
        let pending = pending_restart(&file, &loaded, &running);
        Ok(json!({"path": ctx.paths.hal0_toml(), "running": running, "pending_restart": pending}))
    })?;
    Ok(std::sync::Arc::unwrap_or_clone(kept))
}

/// `SECTION.KEY` → `{"file": …, "running": …, "applies": "reload"|"restart"}` for every
/// leaf where `file` differs from `loaded` (the file as applied: at start and by reloads);
/// `running` is the value in use, `applies` what puts the file's value in use.
fn pending_restart(file: &Value, loaded: &Value, running: &Value) -> serde_json::Map<String, Value> {
    let at = |v: &Value, key: &str| v.pointer(&format!("/{}", key.replace('.', "/"))).cloned().unwrap_or(Value::Null);
    crate::config::live::changed(file, loaded)
        .into_iter()
        .map(|key| {
            let applies = crate::config::live::applies(&key).as_str();
            let entry = json!({"file": at(file, &key), "running": at(running, &key), "applies": applies});
            (key, entry)
        })
        .collect()
}

/// `hal0 config show`: the effective configuration (with `defaults`, hal0's built-in
/// defaults) as JSON and as TOML text for people, each setting hal0.toml does not set
/// marked `# default`. A read of hal0.toml only: it needs no store.
pub struct Shown {
    pub json: Value,
    pub text: String,
}

/// [`Shown`] for the box whose files `paths` names.
pub fn show(paths: &crate::base::paths::Paths, defaults: bool) -> Result<Shown> {
    let cfg = if defaults { crate::config::Config::default() } else { crate::config::Config::load(paths)? };
    let json = serde_json::to_value(&cfg).unwrap_or_default();
    let text = toml_edit::ser::to_string_pretty(&cfg).unwrap_or_default();
    if defaults {
        return Ok(Shown { json, text });
    }
    let file = crate::base::paths::read_optional(&paths.hal0_toml())?.unwrap_or_default();
    Ok(Shown { json, text: crate::config::mark_defaults(&text, &file) })
}

/// Every key `hal0 config set` takes, and whether a running daemon takes it at a reload
/// (the others at a restart).
pub fn keys() -> Vec<(String, bool)> {
    let schema = crate::config::schema();
    let keys = schema.as_object().map(|m| m.keys().cloned().collect::<Vec<_>>()).unwrap_or_default();
    keys.into_iter()
        .map(|k| {
            let reload = crate::config::live::applies(&k) == crate::config::live::Applies::Reload;
            (k, reload)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn pending_restart_lists_the_keys_the_file_changed_since_start() {
        let loaded = json!({"network": {"bind": "127.0.0.1:8080", "public_url": null}, "relay": {"node": null}});
        let running = json!({"network": {"bind": "127.0.0.1:8080", "public_url": null}, "relay": {"node": "box:8080"}});
        assert_eq!(super::pending_restart(&loaded, &loaded, &running), serde_json::Map::new(), "derived at start");
        let file = json!({"network": {"bind": "0.0.0.0:80", "public_url": null}, "relay": {"node": null, "new": 1}});
        let got = super::pending_restart(&file, &loaded, &running);
        assert_eq!(
            serde_json::Value::Object(got),
            json!({"network.bind": {"file": "0.0.0.0:80", "running": "127.0.0.1:8080", "applies": "restart"},
                   "relay.new": {"file": 1, "running": null, "applies": "restart"}})
        );
    }
}

/// `settings_schema`: every key with its type and default.
pub async fn schema(_: &Ctx, _: NoArgs) -> Result<Value> {
    Ok(crate::config::schema())
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct PutArgs {
    /// SECTION.KEY, e.g. network.public_url.
    pub key: String,
    /// The new value (a TOML literal or a bare string); null removes the key.
    #[serde(default)]
    pub value: Option<Value>,
}

/// A settings change as written: the configuration now, whether the key was set before
/// (for a removal), and what it meant for the systemd unit, if anything.
pub struct Written {
    pub config: crate::config::Config,
    pub was_set: bool,
    pub unit: Option<String>,
}

/// What follows a write of hal0.toml, for every front: the clients file and the unit's
/// drop-in are brought in line with `config`.
fn written(paths: &crate::base::paths::Paths, config: crate::config::Config, was_set: bool) -> Written {
    crate::connect::clients::refresh(paths, &config);
    let unit = crate::config::unit::sync(&config);
    Written { config, was_set, unit }
}

/// Set `key` to `raw` in hal0.toml (see [`crate::config::set_value`]).
pub fn set(paths: &crate::base::paths::Paths, key: &str, raw: &str) -> Result<Written> {
    let cfg = crate::config::set_value(paths, key, raw)?;
    Ok(written(paths, cfg, true))
}

/// Remove `key` from hal0.toml (see [`crate::config::unset_value`]).
pub fn unset(paths: &crate::base::paths::Paths, key: &str) -> Result<Written> {
    let (cfg, was_set) = crate::config::unset_value(paths, key)?;
    Ok(written(paths, cfg, was_set))
}

/// `config_write`'s check before a gated call is queued: the arguments parse and the key is
/// one the API may write (a card for a shell-only key could never be carried out).
pub fn check_put(args: &serde_json::Map<String, Value>) -> Result<()> {
    let a: PutArgs = super::parse_args(args.clone(), "config.invalid_request")?;
    crate::config::check_remote_write(&a.key)
}

/// What `config_write` answers: the key, the configuration now (redacted), when a running
/// daemon takes the change, whether the file changed, and what it meant for the systemd unit.
#[derive(Debug, serde::Serialize)]
pub struct Put {
    pub key: String,
    pub settings: Value,
    /// `live`, `reload` or `restart` ([`crate::config::live::Applies`]).
    pub applies: String,
    /// The same for people.
    pub note: String,
    /// false when a removal found the key unset already: nothing was written.
    pub changed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
}

/// `config_write`: set or remove one key. Over the network (REST, MCP, the dashboard, an
/// approved card) a shell-only key is refused ([`crate::config::SHELL_ONLY`]).
pub async fn put(ctx: &Ctx, a: PutArgs) -> Result<Put> {
    if !ctx.from_shell {
        crate::config::check_remote_write(&a.key)?;
    }
    let paths = ctx.paths.clone();
    super::blocking(move || written_put(&paths, a)).await
}

/// Write one key as `a` says, and say what it came to.
fn written_put(paths: &crate::base::paths::Paths, a: PutArgs) -> Result<Put> {
    let w = match a.value {
        None | Some(Value::Null) => unset(paths, &a.key)?,
        Some(Value::String(s)) => set(paths, &a.key, &s)?,
        Some(other) => set(paths, &a.key, &other.to_string())?,
    };
    let mut settings = json!(w.config);
    crate::base::redact::redact_json(&mut settings);
    let applies = crate::config::live::applies(a.key.trim());
    Ok(Put {
        settings,
        applies: applies.as_str().into(),
        note: applies.hint().into(),
        changed: w.was_set,
        unit: w.unit,
        key: a.key,
    })
}

/// `config_write` at the box's shell (`hal0 config set|unset`; `value` `None` removes the
/// key), as `identity`: the repair of a hal0.toml that does not load, so it needs neither a
/// good configuration nor a store that can take an entry; it is recorded after it ran,
/// when the box has a store ([`super::call::record_after`]).
pub fn put_at_shell(paths: &crate::base::paths::Paths, key: &str, value: Option<&str>, identity: &str) -> Result<Put> {
    let args = json!({"key": key, "value": value});
    let a = PutArgs { key: key.to_string(), value: value.map(|v| Value::String(v.to_string())) };
    let out = written_put(paths, a);
    super::call::record_after(paths, "config_write", identity, &args, &out);
    out
}
