//! Pinned installs: which exact release an `npm:` or `uvx:` record runs.
//!
//! At install (and at `hal0 mcp update`) the package's registry is asked for the release (the
//! one the spec names with `@VERSION`, else the newest): npm's `GET {registry}/{name}/{version
//! or latest}` (its `version` and `dist.integrity`), PyPI's JSON API `GET
//! {index}/pypi/{name}/json` (`info.version`, or the asked release under `releases`, and the
//! SHA-256 of its first wheel, else its sdist). The record keeps it in `[package]` and runs `npx -y -- NAME@VERSION` /
//! `uvx NAME@VERSION`: every start uses that release, never "latest". npm and uv check the
//! files they download against the registry's own hashes; a published version's files
//! cannot change on either registry, so the version pins the code and the recorded hash
//! lets an operator compare.
//!
//! The registries are `mcp.npm_registry` / `mcp.pypi_index` (public ones by default;
//! `HAL0_NPM_REGISTRY` / `HAL0_PYPI_INDEX` override both), reached behind the SSRF guard, a
//! configured host trusted as the operator's choice (a mirror on the LAN). An `oci://`
//! image is not pinned yet: no container registry is reachable where hal0 is built, so the
//! digest lookup is not written (the record says `pinned = false`).

use super::record::{PackagePin, Record};
use super::spec::{self, Kind};
use crate::base::error::{Error, Kind as ErrorKind, Result};
use crate::base::ssrf::{self, FetchLimits, Guard};
use crate::config::Config;
use serde_json::Value;
use std::time::Duration;

/// How long one registry lookup may take.
const LOOKUP: Duration = Duration::from_secs(15);

/// The npm registry and the PyPI index in use: the environment's, else the configuration's.
pub fn registries(cfg: &Config) -> (String, String) {
    let pick = |env: &str, set: &Option<String>, default: &str| {
        std::env::var(env)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .or_else(|| set.clone().filter(|v| !v.trim().is_empty()))
            .unwrap_or_else(|| default.to_string())
            .trim()
            .trim_end_matches('/')
            .to_string()
    };
    (
        pick("HAL0_NPM_REGISTRY", &cfg.mcp.npm_registry, "https://registry.npmjs.org"),
        pick("HAL0_PYPI_INDEX", &cfg.mcp.pypi_index, "https://pypi.org"),
    )
}

/// A registry that cannot be asked: 502, the install may go on unpinned.
fn unreachable(what: &str, base: &str, why: &str) -> Error {
    Error::new(
        "mcp.package_unreachable",
        ErrorKind::BadGateway,
        format!("cannot ask {base} about {what} ({why}); check the network or mcp.npm_registry / mcp.pypi_index"),
    )
}

async fn get_json(url: &str, base: &str, what: &str, not_found: impl Fn() -> Error) -> Result<Value> {
    let limits = FetchLimits { max_bytes: 8 * 1024 * 1024, timeout: LOOKUP, ..FetchLimits::default() };
    let (_, body) = match ssrf::fetch(&Guard::trusting_url(base), url, limits).await {
        Ok(b) => b,
        Err(e) if ssrf::is_not_found(&e) => return Err(not_found()),
        Err(e) => return Err(unreachable(what, base, &e.message)),
    };
    serde_json::from_slice(&body).map_err(|e| unreachable(what, base, &format!("its answer is not JSON: {e}")))
}

/// Ask the registry of `kind` for release `version` (the newest when `None`) of `name`.
pub async fn resolve(cfg: &Config, kind: Kind, name: &str, version: Option<&str>) -> Result<PackagePin> {
    let (npm, pypi) = registries(cfg);
    let missing = |what: String| {
        move || {
            Error::new(
                "mcp.package_not_found",
                ErrorKind::NotFound,
                format!("{what} is not in its registry; check the name (and the version)"),
            )
        }
    };
    match kind {
        Kind::Npm => {
            let what = format!("npm package {name}{}", version.map(|v| format!("@{v}")).unwrap_or_default());
            let url = format!("{npm}/{name}/{}", version.unwrap_or("latest"));
            let v = get_json(&url, &npm, &what, missing(what.clone())).await?;
            let got =
                v.get("version").and_then(Value::as_str).ok_or_else(|| unreachable(&what, &npm, "no `version`"))?;
            let integrity = v.get("dist").and_then(|d| d.get("integrity")).and_then(Value::as_str).map(str::to_string);
            Ok(PackagePin::new("npm", &npm, name, got, integrity))
        }
        Kind::Uvx => {
            // The project's document: the newest release (`info.version`, `urls`) and every
            // release's files (`releases`); the per-release endpoint is not on every mirror.
            let what = format!("PyPI package {name}{}", version.map(|v| format!("=={v}")).unwrap_or_default());
            let url = format!("{pypi}/pypi/{name}/json");
            let v = get_json(&url, &pypi, &what, missing(what.clone())).await?;
            let newest = v
                .get("info")
                .and_then(|i| i.get("version"))
                .and_then(Value::as_str)
                .ok_or_else(|| unreachable(&what, &pypi, "no `info.version`"))?;
            let (got, files) = match version {
                None => (newest, v.get("urls")),
                Some(want) => match v.get("releases").and_then(|r| r.get(want)) {
                    Some(files) if files.as_array().is_some_and(|f| !f.is_empty()) => (want, Some(files)),
                    _ => return Err(missing(what.clone())()),
                },
            };
            let files = files.and_then(Value::as_array).cloned().unwrap_or_default();
            let pick =
                |t: &str| files.iter().find(|f| f.get("packagetype").and_then(Value::as_str) == Some(t)).cloned();
            let integrity = pick("bdist_wheel")
                .or_else(|| pick("sdist"))
                .and_then(|f| f.get("digests")?.get("sha256")?.as_str().map(|h| format!("sha256:{h}")));
            Ok(PackagePin::new("pypi", &pypi, name, got, integrity))
        }
        _ => Err(Error::invalid("mcp.package_unpinnable", "only npm: and uvx: records are pinned to a release")),
    }
}

/// The arguments a pinned record runs with: the package at its pinned version.
pub fn pinned_args(r: &Record, pin: &PackagePin) -> Vec<String> {
    let at = format!("{}@{}", pin.name, pin.version);
    match pin.ecosystem.as_str() {
        "npm" => vec!["-y".into(), "--".into(), at],
        _ => {
            // uvx's own options (none hal0 writes) stay; the package is the last argument.
            let mut args: Vec<String> = r.args.iter().take(r.args.len().saturating_sub(1)).cloned().collect();
            args.push(at);
            args
        }
    }
}

/// The package a record runs, when it is an npm or PyPI package hal0 started with `npx` /
/// `uvx` (its spec's kind and name, and the version the spec asks for).
pub fn package_of(r: &Record) -> Option<(Kind, String, Option<String>)> {
    let p = spec::parse(&r.spec).ok()?;
    let expected = if p.kind == Kind::Npm { "npx" } else { "uvx" };
    (matches!(p.kind, Kind::Npm | Kind::Uvx) && r.command.as_deref() == Some(expected))
        .then(|| (p.kind, p.target.clone(), p.version.clone()))
}

/// Pin record `r` (an npm or uvx one; others are left alone): resolved and recorded, its
/// arguments naming the release. A registry that cannot be asked leaves it unpinned and
/// says why (`Ok(Some(warning))`); a package or version the registry does not have is an
/// error (a typo is not installed).
pub async fn pin(cfg: &Config, r: &mut Record) -> Result<Option<String>> {
    let Some((kind, name, version)) = package_of(r) else { return Ok(None) };
    match resolve(cfg, kind, &name, version.as_deref()).await {
        Ok(pin) => {
            r.args = pinned_args(r, &pin);
            r.package = Some(pin);
            Ok(None)
        }
        Err(e) if e.code == "mcp.package_unreachable" => Ok(Some(format!(
            "not pinned to a release: {}; it runs the newest release until `hal0 mcp update {}` pins it",
            e.message, r.id
        ))),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::record::Transport;

    #[test]
    fn pinned_arguments_name_the_release() {
        let mut r = Record::new("x", "x", "npm:@scope/pkg", Transport::Stdio);
        r.command = Some("npx".into());
        r.args = vec!["-y".into(), "--".into(), "@scope/pkg".into()];
        let pin = PackagePin::new("npm", "https://registry.npmjs.org", "@scope/pkg", "1.2.3", Some("sha512-x".into()));
        assert_eq!(pinned_args(&r, &pin), ["-y", "--", "@scope/pkg@1.2.3"]);
        assert_eq!(package_of(&r), Some((Kind::Npm, "@scope/pkg".into(), None)));
        let mut u = Record::new("t", "t", "uvx:mcp-server-time@2025.1.1", Transport::Stdio);
        u.command = Some("uvx".into());
        u.args = vec!["mcp-server-time".into()];
        let pin = PackagePin::new("pypi", "https://pypi.org", "mcp-server-time", "2025.9.1", None);
        assert_eq!(pinned_args(&u, &pin), ["mcp-server-time@2025.9.1"]);
        assert_eq!(package_of(&u), Some((Kind::Uvx, "mcp-server-time".into(), Some("2025.1.1".into()))));
        // A record whose command an operator changed runs something else: not pinned here.
        u.command = Some("/usr/bin/python3".into());
        assert_eq!(package_of(&u), None);
    }
}
