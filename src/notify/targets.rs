//! Notification targets: `<config>/notify.toml`, an array of `[[target]]` tables, each with
//! an `id`, a `kind` (`webhook`, `ntfy` or `email`) and that kind's settings. Secrets are
//! api.env keys the target names (`secret_key`, `token_key`, `password_key`), never values.
//! Added, listed and removed by `hal0 notify` (the rules here; the file rewritten whole,
//! atomically).

use crate::base::error::{Error, Result};
use crate::base::paths::Paths;
use serde::{Deserialize, Serialize};

/// TLS of an SMTP connection: STARTTLS (port 587), TLS from the start (465), none
/// (a relay on this box or a test receiver only).
pub const SMTP_TLS: [&str; 3] = ["starttls", "tls", "none"];

/// One target.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Target {
    pub id: String,
    pub kind: String,
    /// webhook, ntfy: where to POST.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// webhook: the api.env key of the HMAC secret that signs each delivery.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_key: Option<String>,
    /// ntfy: the api.env key of an access token (sent as a bearer token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_key: Option<String>,
    /// email: the SMTP server, `host:port`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smtp: Option<String>,
    /// email: `starttls` (default), `tls` or `none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<String>,
    /// email: the sender address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// email: the recipients.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub to: Vec<String>,
    /// email: the SMTP user (with `password_key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// email: the api.env key of the SMTP password.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_key: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    target: Vec<Target>,
}

/// `<config>/notify.toml`.
pub fn path(paths: &Paths) -> std::path::PathBuf {
    paths.config_dir.join("notify.toml")
}

fn invalid(msg: String) -> Error {
    Error::invalid("notify.invalid", msg)
}

fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn valid_env_key(k: &str) -> bool {
    !k.is_empty() && k.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

fn http_url(id: &str, url: Option<&str>) -> Result<()> {
    let u = url.ok_or_else(|| invalid(format!("target `{id}` needs a url")))?;
    let p = url::Url::parse(u).map_err(|e| invalid(format!("target `{id}`: `{u}` is not a URL ({e})")))?;
    if !matches!(p.scheme(), "http" | "https") || p.host_str().is_none() {
        return Err(invalid(format!("target `{id}`: `{u}` is not an http(s) URL")));
    }
    Ok(())
}

fn address(id: &str, a: &str) -> Result<()> {
    a.parse::<lettre::Address>()
        .map(drop)
        .map_err(|e| invalid(format!("target `{id}`: `{a}` is not an e-mail address ({e})")))
}

impl Target {
    /// Check this target's settings for its kind, naming what is wrong.
    pub fn validate(&self) -> Result<()> {
        let id = &self.id;
        if !valid_id(id) {
            return Err(invalid(format!("target id `{id}`: use 1-64 letters, digits, `_` or `-`")));
        }
        for k in [&self.secret_key, &self.token_key, &self.password_key].into_iter().flatten() {
            if !valid_env_key(k) {
                return Err(invalid(format!(
                    "target `{id}`: `{k}` must name a key in api.env (upper-case letters, digits, `_`), not hold a value"
                )));
            }
        }
        match self.kind.as_str() {
            "webhook" | "ntfy" => http_url(id, self.url.as_deref()),
            "email" => {
                let smtp =
                    self.smtp.as_deref().ok_or_else(|| invalid(format!("target `{id}` needs --smtp HOST:PORT")))?;
                smtp_host_port(smtp).map_err(|e| invalid(format!("target `{id}`: {}", e.message)))?;
                if let Some(t) = &self.tls
                    && !SMTP_TLS.contains(&t.as_str())
                {
                    return Err(invalid(format!("target `{id}`: tls `{t}` is not known: use starttls, tls or none")));
                }
                address(id, self.from.as_deref().ok_or_else(|| invalid(format!("target `{id}` needs --from")))?)?;
                if self.to.is_empty() {
                    return Err(invalid(format!("target `{id}` needs at least one --to address")));
                }
                for a in &self.to {
                    address(id, a)?;
                }
                if self.user.is_some() != self.password_key.is_some() {
                    return Err(invalid(format!("target `{id}`: give --user and --password-key together")));
                }
                Ok(())
            }
            k => Err(invalid(format!("target `{id}`: kind `{k}` is not known: use webhook, ntfy or email"))),
        }
    }
}

/// `host:port` of an SMTP setting.
pub fn smtp_host_port(s: &str) -> Result<(String, u16)> {
    let (h, p) = s
        .rsplit_once(':')
        .ok_or_else(|| invalid(format!("smtp `{s}` must be HOST:PORT (587 for STARTTLS, 465 for TLS)")))?;
    let port =
        p.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| invalid(format!("smtp `{s}`: `{p}` is not a port")))?;
    let host = h.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Err(invalid(format!("smtp `{s}` names no host")));
    }
    Ok((host.to_string(), port))
}

/// Every target (none when the file is missing).
pub fn load(paths: &Paths) -> Result<Vec<Target>> {
    let p = path(paths);
    let Some(text) = crate::base::paths::read_optional(&p)? else { return Ok(vec![]) };
    let f: File = toml_edit::de::from_str(&text).map_err(|e| {
        Error::invalid(
            "notify.file_invalid",
            format!("{}: {} (fix the file, or remove the target with hal0 notify remove ID)", p.display(), e.message()),
        )
    })?;
    for t in &f.target {
        t.validate().map_err(|e| Error::invalid("notify.file_invalid", format!("{}: {}", p.display(), e.message)))?;
    }
    Ok(f.target)
}

fn save(paths: &Paths, targets: &[Target]) -> Result<()> {
    let f = File { target: targets.to_vec() };
    let text = toml_edit::ser::to_string_pretty(&f).map_err(|e| Error::internal(e.to_string()))?;
    let header = "# Approval notifications (hal0 notify add|list|remove|test). Secrets are api.env keys.\n";
    crate::base::paths::write_atomic(&path(paths), format!("{header}{text}").as_bytes())
}

/// Add target `t` (its id must be new).
pub fn add(paths: &Paths, t: Target) -> Result<Target> {
    t.validate()?;
    let mut all = load(paths)?;
    if all.iter().any(|o| o.id == t.id) {
        return Err(Error::conflict(
            "notify.exists",
            format!("a target `{}` exists: remove it first (hal0 notify remove {})", t.id, t.id),
        ));
    }
    all.push(t.clone());
    save(paths, &all)?;
    Ok(t)
}

/// Remove target `id`.
pub fn remove(paths: &Paths, id: &str) -> Result<Target> {
    let mut all = load(paths)?;
    let Some(i) = all.iter().position(|t| t.id == id) else {
        return Err(Error::not_found("notify.not_found", format!("no notification target `{id}` (hal0 notify list)")));
    };
    let t = all.remove(i);
    save(paths, &all)?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_targets_are_named() {
        let t = |kind: &str| Target { id: "a".into(), kind: kind.into(), ..Default::default() };
        assert!(t("webhook").validate().unwrap_err().message.contains("needs a url"));
        let w = Target { url: Some("ftp://x".into()), ..t("webhook") };
        assert!(w.validate().unwrap_err().message.contains("not an http(s) URL"));
        let e = Target { smtp: Some("mail:0".into()), ..t("email") };
        assert!(e.validate().unwrap_err().message.contains("not a port"));
        let e = Target { smtp: Some("mail:25".into()), from: Some("hal0@box.example".into()), ..t("email") };
        assert!(e.validate().unwrap_err().message.contains("--to"));
        let e = Target { to: vec!["not an address".into()], ..e };
        assert!(e.validate().unwrap_err().message.contains("not an e-mail address"));
        let s = Target { url: Some("https://x".into()), secret_key: Some("s3cret-value".into()), ..t("webhook") };
        assert!(s.validate().unwrap_err().message.contains("must name a key"));
        assert!(t("pager").validate().unwrap_err().message.contains("not known"));
        let bad_id = Target { id: "a b".into(), ..t("ntfy") };
        assert!(bad_id.validate().unwrap_err().message.contains("target id"));
    }
}
