//! What an operation runs against: [`Services`] (paths, configuration, store, keys, the
//! proxy's supervisor; one per process) and [`Ctx`], those services plus who is calling.

use crate::auth::boxkeys::BoxKeyCache;
use crate::base::error::Result;
use crate::base::filememo::FileMemo;
use crate::base::paths::Paths;
use crate::config::Config;
use crate::config::live::{Live, Reloaded};
use crate::proxy::Proxy;
use crate::store::Store;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The shared parts every operation may use; one per process (the daemon's lives in its
/// `AppState`, a CLI command opens its own).
pub struct Services {
    pub paths: Paths,
    /// The configuration this process runs with (`hal0.toml` as read at start, plus what
    /// was derived at start, such as the relay's node name, and the reloadable keys of each
    /// reload since) and the file as applied: see [`Services::config`], [`Services::reload`].
    pub live: Arc<Live>,
    pub store: Store,
    pub keys: BoxKeyCache,
    pub started: Instant,
    /// The policy proxy and the supervisor of stdio children.
    pub proxy: Proxy,
    /// Whether this process is the daemon: only the daemon's proxy holds the running
    /// children, so only there can a child be started, stopped or asked for its state.
    pub daemon: bool,
    /// `settings_get`'s answer: the configuration this process runs with and what in
    /// `hal0.toml` differs from it, both redacted (built again when the file changes).
    pub settings: FileMemo<serde_json::Value>,
    /// The agent relay: connected bots and waiting asks live in the daemon's; elsewhere it
    /// reads the store (history, presence).
    pub relay: std::sync::Arc<crate::relay::Relay>,
    /// The daemon's agent bridge (set by `hal0 serve` while `[bridge].enabled`; unset in
    /// the CLI): the MCP run tools use it, and an op that changes a run goes through it, so
    /// the daemon's waiters and followers hear at once.
    pub bridge: std::sync::OnceLock<crate::bridge::Bridge>,
    /// The passkey challenges this process handed out (the daemon's pages use them).
    pub challenges: crate::auth::passkey::challenge::Challenges,
}

impl Services {
    /// Open the store (migrated) and the key cache for `paths` and `config`.
    pub fn open(paths: Paths, config: Config, daemon: bool) -> Result<Services> {
        Services::open_with_node(paths, config, daemon, None)
    }

    /// [`Services::open`] with the relay's node name to use when `config` sets none (the
    /// daemon's `HOSTNAME:PORT`, with the port it bound).
    pub fn open_with_node(paths: Paths, config: Config, daemon: bool, node: Option<String>) -> Result<Services> {
        let loaded = config.clone();
        let mut config = config;
        if config.relay.node.is_none() {
            config.relay.node = node;
        }
        let store = Store::open(&paths.db())?;
        store.set_max_size(config.store.max_size_mb);
        if let Err(e) = crate::audit::forward::install(store.path(), &config.audit) {
            tracing::warn!("cannot forward audit rows to the system log: {e}");
        }
        let keys = BoxKeyCache::new(paths.api_env());
        keys.get()?;
        let live = Arc::new(Live::new(config.clone(), loaded));
        let proxy = Proxy::new(paths.clone(), live.clone(), store.clone());
        let settings = FileMemo::new(paths.hal0_toml(), Duration::from_secs(1));
        let cluster = match config.relay.database() {
            Some(url) => {
                let node = config.relay.node.clone().unwrap_or_else(|| {
                    let port = config.network.bind.rsplit_once(':').map_or("0", |(_, p)| p);
                    format!("{}:{port}", gethostname::gethostname().to_string_lossy())
                });
                Some(crate::relay::cluster::Cluster::new(&url, node)?)
            }
            None => None,
        };
        let relay = std::sync::Arc::new(crate::relay::Relay::new(
            store.clone(),
            Duration::from_secs(config.relay.ask_timeout_secs),
            cluster,
        ));
        Ok(Services {
            paths,
            live,
            store,
            keys,
            started: Instant::now(),
            proxy,
            daemon,
            settings,
            relay,
            bridge: std::sync::OnceLock::new(),
            challenges: Default::default(),
        })
    }

    /// The configuration in use now (a reload may replace it between two calls).
    pub fn config(&self) -> Arc<Config> {
        self.live.get()
    }

    /// How often a long call reports progress to a client that asked (`[mcp].progress_secs`).
    pub fn progress_every(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.config().mcp.progress_secs)
    }

    /// Read hal0.toml again and apply what a running daemon can (SIGHUP): the reloadable
    /// keys go live and the parts built from them follow; a file that does not parse
    /// changes nothing (its error names the file, the line and the key).
    pub fn reload(&self) -> Result<Reloaded> {
        let file = Config::load(&self.paths)?;
        let done = self.live.reload(&file);
        let now = self.config();
        self.store.set_max_size(now.store.max_size_mb);
        self.relay.set_window(Duration::from_secs(now.relay.ask_timeout_secs));
        if let Some(b) = self.bridge.get() {
            b.set_max_runs(now.bridge.max_concurrent_runs_per_client);
        }
        self.settings.clear();
        Ok(done)
    }
}

/// One call of an operation: the services and the caller's audit identity (`bridge:ops`,
/// `admin:deploy-bot`, `api:ops`, `cli:root`…).
#[derive(Clone)]
pub struct Ctx {
    pub svc: Arc<Services>,
    pub identity: Arc<str>,
    /// Whether the call was made at the box's shell (`hal0 …`) rather than over the
    /// network (REST, an MCP tool, or an approved row a remote caller queued).
    pub from_shell: bool,
    /// Whether the caller is a person whose dashboard session was opened with a passkey
    /// (`[approvals] passkey_required` takes decisions only from such a session).
    pub passkey: bool,
}

impl Ctx {
    /// A call that arrived over the network (or was queued from there).
    pub fn remote(svc: Arc<Services>, identity: impl Into<Arc<str>>) -> Ctx {
        Ctx { svc, identity: identity.into(), from_shell: false, passkey: false }
    }

    /// The same call, made by a person who signed in with a passkey (`yes`).
    pub fn with_passkey(mut self, yes: bool) -> Ctx {
        self.passkey = yes;
        self
    }

    /// A call made at the box's shell.
    pub fn shell(svc: Arc<Services>, identity: impl Into<Arc<str>>) -> Ctx {
        Ctx { svc, identity: identity.into(), from_shell: true, passkey: false }
    }
    /// The caller, read from its recorded identity.
    pub fn actor(&self) -> crate::base::actor::Actor {
        crate::base::actor::Actor::parse(&self.identity)
    }
}

impl std::ops::Deref for Ctx {
    type Target = Services;
    fn deref(&self) -> &Services {
        &self.svc
    }
}
