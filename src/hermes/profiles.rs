//! Hermes profiles: agent `hermes` is the default profile (`<home>/config.yaml`,
//! `<home>/.env`); every directory under `<home>/profiles/` is agent `hermes/<profile>`.
//! A profile's API server address and key come from `platforms.api_server.extra` in its
//! config.yaml or `API_SERVER_HOST/PORT/KEY` in its `.env` (the `.env` wins, as in Hermes).

use crate::base::envfile::env_lines;
use crate::base::error::{Error, Result};
use crate::config::Config;
use std::path::{Path, PathBuf};

pub const DEFAULT_HOST: &str = "127.0.0.1";
pub const DEFAULT_PORT: u16 = 8642;

/// One Hermes profile as hal0 sees it (never printed with its key).
#[derive(Clone)]
pub struct Profile {
    /// `hermes` or `hermes/<profile>`.
    pub agent_id: String,
    /// `default` or the profile name.
    pub name: String,
    pub dir: PathBuf,
    /// `http://host:port` of its API server.
    pub base_url: String,
    pub key: Option<String>,
    pub model_id: Option<String>,
}

impl std::fmt::Debug for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Profile")
            .field("agent_id", &self.agent_id)
            .field("base_url", &self.base_url)
            .field("keyed", &self.key.is_some())
            .finish()
    }
}

impl Profile {
    pub fn keyed(&self) -> bool {
        self.key.is_some()
    }
}

/// The profile set under one Hermes home.
#[derive(Debug, Clone)]
pub struct Profiles {
    pub home: PathBuf,
}

/// Hermes profile names: `^[a-z0-9][a-z0-9_-]{0,63}$`.
pub fn valid_profile_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_' || *c == b'-')
}

impl Profiles {
    /// Hermes's home: `HAL0_HERMES_HOME`, else `[hermes].home`, else `$HOME/.hermes`.
    pub fn from_config(cfg: &Config) -> Profiles {
        let home = std::env::var_os("HAL0_HERMES_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| cfg.hermes.home.clone())
            .unwrap_or_else(|| {
                std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| "/root".into()).join(".hermes")
            });
        Profiles { home }
    }

    /// Every profile: the default one first, then named ones by name.
    pub fn list(&self) -> Vec<Profile> {
        let mut out = vec![self.load("default", &self.home, "hermes".into())];
        let mut names: Vec<String> = std::fs::read_dir(self.home.join("profiles"))
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| valid_profile_name(n))
            .collect();
        names.sort();
        for n in names {
            let dir = self.home.join("profiles").join(&n);
            out.push(self.load(&n, &dir, format!("hermes/{n}")));
        }
        out
    }

    /// Resolve an agent id (`hermes` or `hermes/<profile>`).
    pub fn get(&self, agent: &str) -> Result<Profile> {
        let unknown = || {
            Error::not_found(
                "bridge.unknown_agent",
                format!("no agent `{agent}`: use `hermes` or `hermes/<profile>` (see agents_list)"),
            )
        };
        if agent == "hermes" {
            return Ok(self.load("default", &self.home, "hermes".into()));
        }
        let name = agent.strip_prefix("hermes/").ok_or_else(unknown)?;
        if !valid_profile_name(name) {
            return Err(unknown());
        }
        let dir = self.home.join("profiles").join(name);
        if !dir.is_dir() {
            return Err(unknown());
        }
        Ok(self.load(name, &dir, agent.to_string()))
    }

    fn load(&self, name: &str, dir: &Path, agent_id: String) -> Profile {
        let yaml = read_yaml(&dir.join("config.yaml"));
        let extra = yaml.as_ref().and_then(|y| y.get("platforms")?.get("api_server")?.get("extra").cloned());
        let from_yaml = |k: &str| -> Option<String> {
            let v = extra.as_ref()?.get(k)?;
            match v {
                serde_yaml_ng::Value::String(s) => Some(s.clone()),
                serde_yaml_ng::Value::Number(n) => Some(n.to_string()),
                _ => None,
            }
        };
        let env: Vec<(String, String)> =
            std::fs::read_to_string(dir.join(".env")).map(|t| env_lines(&t).collect()).unwrap_or_default();
        let from_env =
            |k: &str| env.iter().rev().find(|(n, _)| n == k).map(|(_, v)| v.clone()).filter(|v| !v.is_empty());
        let host = from_env("API_SERVER_HOST").or_else(|| from_yaml("host")).unwrap_or_else(|| DEFAULT_HOST.into());
        let port = from_env("API_SERVER_PORT")
            .or_else(|| from_yaml("port"))
            .and_then(|p| p.parse::<u16>().ok())
            .unwrap_or(DEFAULT_PORT);
        let key = from_env("API_SERVER_KEY").or_else(|| from_yaml("key")).filter(|k| !k.trim().is_empty());
        let model_id = yaml.as_ref().and_then(|y| match y.get("model")? {
            serde_yaml_ng::Value::String(s) => Some(s.clone()),
            m => m.get("default").and_then(|d| d.as_str()).map(str::to_string),
        });
        // A wildcard listen address is reached on loopback.
        let connect_host = match host.as_str() {
            "0.0.0.0" | "" => "127.0.0.1".to_string(),
            "::" => "[::1]".to_string(),
            h if h.contains(':') && !h.starts_with('[') => format!("[{h}]"),
            h => h.to_string(),
        };
        Profile {
            agent_id,
            name: name.to_string(),
            dir: dir.to_path_buf(),
            base_url: format!("http://{connect_host}:{port}"),
            key,
            model_id,
        }
    }
}

/// Parse a profile's config.yaml; `None` when missing or unreadable (nothing logged).
pub fn read_yaml(path: &Path) -> Option<serde_yaml_ng::Value> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_yaml_ng::from_str(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn home() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("config.yaml"),
            "model:\n  default: fake-model\nplatforms:\n  api_server:\n    extra:\n      host: 127.0.0.1\n      port: 18642\n      key: default-key-0123456789\n",
        )
        .unwrap();
        let w = d.path().join("profiles/worker1");
        std::fs::create_dir_all(&w).unwrap();
        std::fs::write(w.join("config.yaml"), "model: other\nplatforms:\n  api_server:\n    extra:\n      port: 1\n")
            .unwrap();
        std::fs::write(w.join(".env"), "API_SERVER_PORT=18643\nAPI_SERVER_KEY=worker-key-0123456789\n").unwrap();
        std::fs::create_dir_all(d.path().join("profiles/Bad Name")).unwrap();
        d
    }

    #[test]
    fn discovers_profiles_and_env_wins() {
        let d = home();
        let p = Profiles { home: d.path().to_path_buf() };
        let all = p.list();
        let ids: Vec<_> = all.iter().map(|x| x.agent_id.as_str()).collect();
        assert_eq!(ids, ["hermes", "hermes/worker1"]);
        assert_eq!(all[0].base_url, "http://127.0.0.1:18642");
        assert_eq!(all[0].model_id.as_deref(), Some("fake-model"));
        assert_eq!(all[1].base_url, "http://127.0.0.1:18643", ".env beats config.yaml");
        assert_eq!(all[1].key.as_deref(), Some("worker-key-0123456789"));
        assert_eq!(all[1].model_id.as_deref(), Some("other"));
        assert!(!format!("{:?}", all[1]).contains("worker-key"), "Debug never shows the key");
    }

    #[test]
    fn unknown_agents() {
        let d = home();
        let p = Profiles { home: d.path().to_path_buf() };
        for bad in ["pi", "hermes/nope", "hermes/../x", "hermes/", "HERMES", "hermes/Bad Name"] {
            assert_eq!(p.get(bad).unwrap_err().code, "bridge.unknown_agent", "{bad}");
        }
        assert!(p.get("hermes/worker1").is_ok());
    }

    #[test]
    fn defaults_without_files() {
        let d = tempfile::tempdir().unwrap();
        let p = Profiles { home: d.path().to_path_buf() }.get("hermes").unwrap();
        assert_eq!(p.base_url, "http://127.0.0.1:8642");
        assert!(!p.keyed());
    }
}
