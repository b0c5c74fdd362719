//! Remote boxes, as a workstation or a CI job reaches them: `hal0 remote add|list|remove|
//! default` keep each box's URL in `remotes.toml` under the user's config dir (never a key)
//! and its bridge key in the OS keyring, or in a 0600 `credentials` file where no keyring
//! service runs ([`keys`]). `HAL0_REMOTE_URL` with `HAL0_KEY` overrides both (CI secrets).
//! [`client`] talks to a box over MCP with the key; `hal0 run` is built on it.

pub mod client;
pub mod keys;

use crate::base::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Where a remote's key is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyIn {
    /// The OS keyring (Secret Service, Keychain, Credential Manager).
    Keyring,
    /// `credentials` (0600) beside `remotes.toml`.
    File,
}

/// One remote box as `remotes.toml` holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Remote {
    pub url: String,
    pub key_in: KeyIn,
    /// A PEM file of the CA that signed the box's certificate (a box with its own CA).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<PathBuf>,
}

/// `remotes.toml`: every remote by name, and the default.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Remotes {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    #[serde(default)]
    pub remote: BTreeMap<String, Remote>,
}

/// The box a command talks to, and the key it presents.
#[derive(Clone)]
pub struct Target {
    /// The remote's name (`None` for `HAL0_REMOTE_URL`).
    pub name: Option<String>,
    pub url: String,
    pub key: String,
    pub ca_file: Option<PathBuf>,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Target({:?}, {})", self.name, self.url)
    }
}

/// The user's hal0 config dir for remotes: `$HAL0_REMOTE_CONFIG_DIR`, else
/// `$XDG_CONFIG_HOME/hal0`, else `~/.config/hal0`.
pub fn dir() -> Result<PathBuf> {
    if let Some(d) = std::env::var_os("HAL0_REMOTE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CONFIG_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(d).join("hal0"));
    }
    match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        Some(h) => Ok(PathBuf::from(h).join(".config/hal0")),
        None => Err(Error::invalid(
            "remote.no_config_dir",
            "no place for remotes.toml: set HOME, XDG_CONFIG_HOME or HAL0_REMOTE_CONFIG_DIR",
        )),
    }
}

fn file() -> Result<PathBuf> {
    Ok(dir()?.join("remotes.toml"))
}

/// Read `remotes.toml` (empty when there is none).
pub fn load() -> Result<Remotes> {
    let path = file()?;
    match crate::base::paths::read_optional(&path)? {
        None => Ok(Remotes::default()),
        Some(text) => toml_edit::de::from_str(&text).map_err(|e| {
            Error::invalid(
                "remote.invalid_file",
                format!("{} is not a valid remotes file: {e}; fix it or remove it", path.display()),
            )
        }),
    }
}

fn save(r: &Remotes) -> Result<()> {
    let text = toml_edit::ser::to_string_pretty(r)
        .map_err(|e| Error::internal(format!("cannot write the remotes file: {e}")))?;
    crate::base::paths::write_atomic(&file()?, text.as_bytes())
}

/// A remote's name: 1 to 64 of `a-z A-Z 0-9 _ -`.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(
            "remote.invalid_name",
            format!("`{}` is not a remote name: use 1 to 64 of a-z A-Z 0-9 _ -", crate::base::term::safe_line(name)),
        ))
    }
}

/// A box's base URL: `http(s)://host[:port]`, without a path (a trailing `/` is dropped).
pub fn check_url(url: &str) -> Result<String> {
    let bad = |why: &str| {
        Error::invalid(
            "remote.invalid_url",
            format!(
                "`{}` {why}: give the box's base URL, e.g. https://box.lan:8080",
                crate::base::term::safe_line(url)
            ),
        )
    };
    let u = url::Url::parse(url.trim()).map_err(|e| bad(&format!("is not a URL ({e})")))?;
    if !matches!(u.scheme(), "http" | "https") {
        return Err(bad("is not http or https"));
    }
    if u.host_str().is_none() || !u.username().is_empty() || u.password().is_some() {
        return Err(bad("needs a host and no user or password"));
    }
    if (u.path() != "/" && !u.path().is_empty()) || u.query().is_some() || u.fragment().is_some() {
        return Err(bad("has a path; hal0 adds /mcp/agents/mcp itself"));
    }
    Ok(u.as_str().trim_end_matches('/').to_string())
}

/// What to tell the operator about `url` (checked by [`check_url`]) before a key is sent
/// there: plain http to anything but this machine carries the bridge key in clear.
pub fn cleartext_warning(url: &str) -> Option<String> {
    let u = url::Url::parse(url).ok()?;
    if u.scheme() != "http" {
        return None;
    }
    let local = match u.host()? {
        url::Host::Domain(d) => d.eq_ignore_ascii_case("localhost"),
        url::Host::Ipv4(ip) => ip.is_loopback(),
        url::Host::Ipv6(ip) => crate::base::weburl::is_local(ip.into()),
    };
    (!local).then(|| {
        format!(
            "{url} is plain http: the bridge key crosses the network in clear on every call; give the box a \
             certificate (on the box: hal0 config set network.tls_cert/network.tls_key) and use https://"
        )
    })
}

/// Add or replace remote `name` at `url` with `key`. The key goes to the keyring, or to the
/// credentials file when there is no keyring service (the answer's note says so). The first
/// remote becomes the default.
pub fn add(name: &str, url: &str, key: &str, ca_file: Option<PathBuf>) -> Result<(Remote, Option<String>)> {
    check_name(name)?;
    let url = check_url(url)?;
    keys::check_key(key)?;
    if let Some(ca) = &ca_file {
        crate::base::outbound::ca_certs(ca)?;
    }
    let mut all = load()?;
    let (key_in, mut note) = keys::store(name, key)?;
    let moved = all.remote.get(name).is_some_and(|r| r.key_in != key_in);
    let r = Remote { url, key_in, ca_file };
    all.remote.insert(name.to_string(), r.clone());
    if all.default.is_none() {
        all.default = Some(name.to_string());
    }
    // The record first: it names where the key is now, whatever happens to the old copy.
    save(&all)?;
    if moved {
        // A key moved from the file to the keyring (or back) leaves no copy behind; when
        // the old place cannot be cleared, say so rather than fail the add.
        let stale = match key_in {
            KeyIn::Keyring => KeyIn::File,
            KeyIn::File => KeyIn::Keyring,
        };
        if let Err(e) = keys::forget(name, stale) {
            let warn = format!("the old copy of the key could not be removed: {}", e.message);
            note = Some(match note {
                Some(n) => format!("{n}; {warn}"),
                None => warn,
            });
        }
    }
    Ok((r, note))
}

fn unknown(name: &str) -> Error {
    Error::not_found(
        "remote.not_found",
        format!(
            "no remote `{}` (see `hal0 remote list`; add one with `hal0 remote add NAME URL`)",
            crate::base::term::safe_line(name)
        ),
    )
}

/// Remove remote `name` and its key.
pub fn remove(name: &str) -> Result<()> {
    let mut all = load()?;
    let r = all.remote.remove(name).ok_or_else(|| unknown(name))?;
    keys::forget(name, r.key_in)?;
    if all.default.as_deref() == Some(name) {
        all.default = all.remote.keys().next().cloned();
    }
    save(&all)
}

/// Make `name` the remote used without `--remote`.
pub fn set_default(name: &str) -> Result<()> {
    let mut all = load()?;
    if !all.remote.contains_key(name) {
        return Err(unknown(name));
    }
    all.default = Some(name.to_string());
    save(&all)
}

/// Whether a box to talk to is set up without naming one: `HAL0_REMOTE_URL`, or a default
/// remote (read without touching its key).
pub fn configured() -> Result<bool> {
    if std::env::var("HAL0_REMOTE_URL").is_ok_and(|v| !v.is_empty()) {
        return Ok(true);
    }
    Ok(load()?.default.is_some())
}

/// The box to talk to: `--remote NAME`, else `HAL0_REMOTE_URL` + `HAL0_KEY`, else the
/// default remote.
pub fn resolve(name: Option<&str>) -> Result<Target> {
    if name.is_none() {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        match (env("HAL0_REMOTE_URL"), env("HAL0_KEY")) {
            (Some(url), Some(key)) => {
                keys::check_key(&key)?;
                let ca_file = std::env::var_os("HAL0_REMOTE_CA_FILE").filter(|v| !v.is_empty()).map(PathBuf::from);
                return Ok(Target { name: None, url: check_url(&url)?, key, ca_file });
            }
            (Some(_), None) => {
                return Err(Error::invalid("remote.no_key", "HAL0_REMOTE_URL is set but HAL0_KEY is not: set both"));
            }
            _ => {}
        }
    }
    let all = load()?;
    let name = match name.map(str::to_string).or(all.default.clone()) {
        Some(n) => n,
        None => {
            return Err(Error::invalid(
                "remote.none",
                "no remote box: add one with `hal0 remote add NAME URL`, or set HAL0_REMOTE_URL and HAL0_KEY",
            ));
        }
    };
    let r = all.remote.get(&name).ok_or_else(|| unknown(&name))?;
    let key = keys::load(&name, r.key_in)?;
    Ok(Target { name: Some(name), url: r.url.clone(), key, ca_file: r.ca_file.clone() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_urls() {
        assert!(check_name("box-1_a").is_ok());
        for bad in ["", "a b", "a/b", &"x".repeat(65)] {
            assert_eq!(check_name(bad).unwrap_err().code, "remote.invalid_name", "{bad}");
        }
        assert_eq!(check_url("https://box.lan:8080/").unwrap(), "https://box.lan:8080");
        assert_eq!(check_url("http://127.0.0.1:9").unwrap(), "http://127.0.0.1:9");
        for (url, warned) in [
            ("http://box.lan:8080", true),
            ("http://192.168.1.20:8080", true),
            ("http://[fe80::1]:8080", true),
            ("https://box.lan:8080", false),
            ("http://127.0.0.1:9", false),
            ("http://localhost:8080", false),
            ("http://[::1]:8080", false),
        ] {
            let w = cleartext_warning(url);
            assert_eq!(w.is_some(), warned, "{url}");
            assert!(w.is_none_or(|w| w.contains("plain http") && w.contains("https://")), "{url}");
        }
        for bad in ["box.lan", "ftp://box", "https://box/mcp/agents/mcp", "https://u:p@box", "https://box/?q=1"] {
            assert_eq!(check_url(bad).unwrap_err().code, "remote.invalid_url", "{bad}");
        }
    }
}
