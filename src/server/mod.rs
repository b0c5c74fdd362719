//! `hal0 serve`: the axum application — shared state, the router with the REST routes and
//! the MCP mounts, systemd readiness and graceful shutdown (the listener itself is
//! `listen`).

pub mod guard;
pub mod hygiene;
mod keepalive;
pub mod listen;
mod mcp_service;
pub mod oauth;
pub mod relay_ws;
mod reload;
pub mod request_id;
pub mod rest;
pub mod rest_mcp;
pub mod rest_runs;
pub mod revoke;
pub mod scrape;
pub mod sessions;
pub mod tls;

#[cfg(test)]
mod exposure_tests;

use crate::auth::bridge::Scope;
use crate::auth::hosts::{BoxNames, HostPolicy};
use crate::base::error::{Error, Result};
use crate::base::paths::Paths;
use crate::config::Config;
use axum::Router;
use axum::routing::any;
use mcp_service::McpService;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Everything a request handler may need; one per daemon, behind an `Arc`. The services
/// operations run against ([`crate::ops::Services`]: paths, config, store, keys, proxy)
/// are reached through `Deref`.
pub struct AppState {
    pub ops: Arc<crate::ops::Services>,
    pub hosts: HostPolicy,
    /// Stored keys (bridge, consumer) already resolved.
    pub key_cache: crate::auth::keycache::KeyCache,
    /// Bumped whenever keys may have changed (api.env or the store); streams re-check.
    pub epoch: tokio::sync::watch::Receiver<u64>,
    /// Open MCP sessions and their bounds.
    pub sessions: Arc<sessions::Sessions>,
    /// Fires when the daemon stops (long-lived sockets close on it).
    pub cancel: CancellationToken,
    last_seen: Mutex<HashMap<String, Instant>>,
}

/// How often the same client's `last_seen` is written at most.
const LAST_SEEN_EVERY: Duration = Duration::from_secs(30);

impl std::ops::Deref for AppState {
    type Target = crate::ops::Services;
    fn deref(&self) -> &crate::ops::Services {
        &self.ops
    }
}

impl AppState {
    /// Whether `name`'s last_seen should be written now (throttled per client).
    pub fn should_touch(&self, name: &str) -> bool {
        let mut m = self.last_seen.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        match m.get(name) {
            Some(t) if now.duration_since(*t) < LAST_SEEN_EVERY => false,
            _ => {
                m.insert(name.to_string(), now);
                true
            }
        }
    }
}

/// Build the state from disk: config, store (migrated), key cache, host policy.
pub fn build_state(paths: Paths, config: Config, port: u16, cancel: &CancellationToken) -> Result<Arc<AppState>> {
    // The relay's name in a cluster defaults to HOSTNAME:PORT, the port this daemon got.
    let node = format!("{}:{port}", gethostname::gethostname().to_string_lossy());
    let ops = Arc::new(crate::ops::Services::open_with_node(paths, config, true, Some(node))?);
    let (paths, config, store) = (&ops.paths, &ops.config(), &ops.store);
    let names = BoxNames::detect(port, config.network.public_url.as_deref());
    // hal0.toml's lists and the environment's add up.
    let joined = |env: &str, listed: &[String]| {
        let mut all: Vec<String> = std::env::var(env).ok().into_iter().collect();
        all.extend(listed.iter().cloned());
        all.join(",")
    };
    let hosts = HostPolicy::new(
        &names,
        Some(&joined("HAL0_MCP_ALLOWED_HOSTS", &config.network.allowed_hosts)),
        Some(&joined("HAL0_MCP_ALLOWED_ORIGINS", &config.network.allowed_origins)),
    );
    let epoch = revoke::spawn_watcher(paths.api_env(), store.clone(), cancel.clone());
    if config.bridge.enabled {
        let b = crate::bridge::Bridge::new(store.clone(), config);
        // Local Hermes profiles answer relay asks through the bridge's runs.
        ops.relay.attach_local(b.clone());
        let _ = ops.bridge.set(b);
    }
    // Ended relay exchanges go to Langfuse when [relay.langfuse] is on; without its keys
    // hal0 says which is missing and runs without the export.
    ops.relay.attach_peers(paths.api_env());
    match crate::relay::langfuse::Exporter::from_config(config, &paths.api_env()) {
        Ok(Some(x)) => ops.relay.attach_export(x),
        Ok(None) => {}
        Err(e) => tracing::error!(code = e.code, "{}", e.message),
    }
    Ok(Arc::new(AppState {
        sessions: Arc::new(sessions::Sessions::new(&config.limits)),
        hosts,
        key_cache: crate::auth::keycache::KeyCache::new(store),
        ops: ops.clone(),
        epoch,
        cancel: cancel.clone(),
        last_seen: Mutex::new(HashMap::new()),
    }))
}

fn mcp_config(state: &AppState, cancel: &CancellationToken) -> StreamableHttpServerConfig {
    // Host checking is done by our own guard (bare 421, LAN names); rmcp's Origin check
    // is configured with the same list as a second line of defence.
    let cfg = StreamableHttpServerConfig::default()
        .with_cancellation_token(cancel.child_token())
        .disable_allowed_hosts()
        .with_max_request_body_bytes(hygiene::MAX_BODY);
    match state.hosts.rmcp_origins() {
        Some(o) => cfg.with_allowed_origins(o),
        None => cfg.disable_allowed_origins(),
    }
}

/// The whole application router.
pub fn router(state: Arc<AppState>, cancel: &CancellationToken) -> Router {
    // Every REST route comes from the admin route table, so each one is a tool or a
    // documented exclusion.
    let mut by_path: std::collections::BTreeMap<&str, axum::routing::MethodRouter<Arc<AppState>>> = Default::default();
    for r in crate::ops::ROUTES {
        let h = rest::handler(r);
        let merged = match by_path.remove(r.path) {
            Some(existing) => existing.merge(h),
            None => h,
        };
        by_path.insert(r.path, merged);
    }
    let mut app = Router::new();
    for (path, mr) in by_path {
        app = app.route(path, mr);
    }

    // hal0's own servers: each of `connect::MOUNTS` the configuration enables (at its
    // OAuth URL too, the same server, while OAuth is on).
    let oauth = state.config().oauth.enabled;
    for m in crate::connect::mounted(&state.config()) {
        app = match m.scope {
            Scope::Agents => crate::a2a::routes(mount(
                app,
                m,
                oauth,
                McpService::new(&state, cancel, crate::mcp::agents::AgentsServer::new),
            )),
            Scope::Memory => {
                mount(app, m, oauth, McpService::new(&state, cancel, crate::mcp::memory::MemoryServer::new))
            }
            Scope::Admin => mount(app, m, oauth, McpService::new(&state, cancel, crate::mcp::admin::AdminServer::new)),
            Scope::Relay => crate::a2a::relay_routes(
                mount(app, m, false, McpService::new(&state, cancel, crate::mcp::relay::RelayServer::new))
                    .route("/bridge/connect", axum::routing::get(relay_ws::connect)),
            ),
        };
    }
    app = crate::a2a::index_route(app);
    if oauth {
        app = app
            .route("/.well-known/oauth-authorization-server/oauth", axum::routing::get(oauth::metadata))
            .route(
                "/.well-known/oauth-protected-resource/oauth/{mount}/mcp",
                axum::routing::get(oauth::resource_metadata),
            )
            .route("/oauth/authorize", axum::routing::get(oauth::authorize))
            .route("/oauth/token", axum::routing::post(oauth::token))
            .route("/oauth/revoke", axum::routing::post(oauth::revoke))
            .route("/oauth/register", axum::routing::post(oauth::register))
            .route("/oauth/register/{id}", axum::routing::get(oauth::registration).delete(oauth::unregister))
            .route("/oauth/requests/{id}", axum::routing::get(oauth::request))
            .route("/oauth/requests/{id}/approve", axum::routing::post(oauth::approve))
            .route("/oauth/requests/{id}/deny", axum::routing::post(oauth::deny))
            .route("/oauth/requests/{id}/continue", axum::routing::post(oauth::resume))
            .route("/ui/consent/{id}", axum::routing::get(crate::ui::pages::consent));
    }
    // hal0 as the OAuth client of installed servers: always served (a connect needs them
    // whether or not hal0 is an authorization server itself).
    app = app
        .route(crate::registry::oauth::CALLBACK_PATH, axum::routing::get(oauth::upstream_callback))
        .route(crate::registry::oauth::CLIENT_DOC_PATH, axum::routing::get(oauth::client_document))
        .route("/upstream-oauth/start/{token}", axum::routing::get(oauth::upstream_start));
    app = app.nest_service("/mcp/proxy/{id}/mcp", mcp_service::ProxyMount::new(&state, cancel));

    // The dashboard's pages (outside the route table: they are not operations).
    app = app
        .route("/ui", axum::routing::get(crate::ui::pages::root))
        .route("/ui/login", axum::routing::get(crate::ui::pages::login).post(crate::ui::pages::password_login))
        .route("/ui/login/passkey", axum::routing::post(crate::ui::pages::passkey_options))
        .route("/ui/logout", axum::routing::post(crate::ui::pages::logout))
        .route("/ui/account/passkeys", axum::routing::get(crate::ui::account::list).post(crate::ui::account::register))
        .route("/ui/account/passkeys/options", axum::routing::post(crate::ui::account::options))
        .route("/ui/account/passkeys/{id}/remove", axum::routing::post(crate::ui::account::remove))
        .route("/ui/assets/{name}", axum::routing::get(crate::ui::pages::asset));
    app = app.route("/metrics", axum::routing::get(scrape::metrics)).route("/", axum::routing::get(front_page));
    for path in crate::ui::pages::paths() {
        app = app.route(path, axum::routing::get(crate::ui::pages::show));
    }

    let app: Router = app
        .fallback(rest::not_found)
        .layer(axum::extract::DefaultBodyLimit::max(hygiene::MAX_BODY))
        .layer(axum::middleware::from_fn_with_state(state.clone(), guard::guard))
        .layer(axum::middleware::from_fn(keepalive::layer))
        // Outside the guard: its refusals under /ui get the dashboard's headers too.
        .layer(axum::middleware::from_fn(crate::ui::headers::layer))
        .layer(axum::middleware::from_fn(request_id::layer))
        .with_state(state.clone());
    app
}

/// `GET /`: a browser goes to the dashboard; anything else learns where things are (the
/// dashboard, the health check, the MCP endpoints this box mounts; each wants its key).
async fn front_page(
    axum::extract::State(state): axum::extract::State<Arc<AppState>>,
    headers: axum::http::HeaderMap,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let html =
        headers.get(axum::http::header::ACCEPT).and_then(|v| v.to_str().ok()).is_some_and(|a| a.contains("text/html"));
    if html {
        return axum::response::Redirect::to("/ui/").into_response();
    }
    let mcp: Vec<String> = crate::connect::mounted(&state.config()).map(|m| m.path()).collect();
    axum::Json(serde_json::json!({
        "service": "hal0",
        "dashboard": "/ui/",
        "health": "/api/health",
        "mcp": mcp,
        "note": "each MCP endpoint and /api route wants a key (hal0 bridge add NAME on the box prints one)",
    }))
    .into_response()
}

/// Mount an MCP service at `/mcp/<name>/mcp` (and at `/oauth/<name>/mcp` with `oauth`, for
/// a mount OAuth serves); the mount roots answer 405.
fn mount<S>(app: Router<Arc<AppState>>, m: &crate::connect::Mount, oauth: bool, svc: S) -> Router<Arc<AppState>>
where
    S: tower_service::Service<axum::extract::Request, Error = std::convert::Infallible> + Clone + Send + Sync + 'static,
    S::Response: axum::response::IntoResponse,
    S::Future: Send + 'static,
{
    let root = m.root();
    let mut app = app;
    if oauth && crate::auth::oauth::mount_scope(m.name).is_some() {
        let own = format!("{}/{}", crate::auth::oauth::ISSUER_PATH, m.name);
        app = app
            .route(&own, any(rest::mount_root))
            .route(&format!("{own}/"), any(rest::mount_root))
            .nest_service(&format!("{own}/mcp"), svc.clone());
    }
    app.route(&root, any(rest::mount_root))
        .route(&format!("{root}/"), any(rest::mount_root))
        .nest_service(&format!("{root}/mcp"), svc)
}

/// Run the daemon until SIGTERM/SIGINT (SIGHUP reloads hal0.toml).
pub async fn serve(paths: Paths, config: Config, bind: SocketAddr) -> Result<()> {
    let cancel = CancellationToken::new();
    // A bad certificate pair stops the start before anything listens.
    let tls = tls::from_config(&config.network)?;
    // With auth off, the API answers anonymous callers as the admin tier: never the network
    // unless the operator said so.
    let armed = crate::auth::boxkeys::BoxKeys::load(&paths.api_env())?.armed();
    crate::auth::exposure::check_bind(bind, armed, config.network.allow_unauthenticated)?;
    let listener = tokio::net::TcpListener::bind(bind).await.map_err(|e| crate::ops::service::bind_failed(bind, &e))?;
    let local = listener.local_addr().map_err(|e| Error::internal(e.to_string()))?;
    let state = build_state(paths, config, local.port(), &cancel)?;
    crate::base::observe::telemetry::init(&state.config().telemetry)?;
    state.relay.reset()?;
    state.relay.join(cancel.clone()).await;
    let app = router(state.clone(), &cancel);
    crate::ops::service::start(&state.ops, &cancel);
    tracing::info!(
        addr = %local,
        config_dir = %state.paths.config_dir.display(),
        state_dir = %state.paths.state_dir.display(),
        auth_armed = armed,
        "hal0 serve listening"
    );
    if !armed {
        tracing::warn!(
            "auth is {}",
            crate::auth::exposure::account(false, local, state.config().network.allow_unauthenticated)
        );
    }
    // Machine-readable line for scripts and tests that bind port 0.
    let scheme = if tls.is_some() { "https" } else { "http" };
    eprintln!("hal0: listening on {scheme}://{local}");
    let status = format!("listening on {scheme}://{local}");
    if let Err(e) = sd_notify::notify(&[sd_notify::NotifyState::Ready, sd_notify::NotifyState::Status(&status)]) {
        tracing::warn!("cannot notify systemd: {e}");
    }
    let limits = listen::Limits {
        max_connections: state.config().limits.max_connections,
        max_per_peer: state.config().limits.max_connections_per_peer,
        max_per_local_peer: state.config().limits.max_connections_per_local_peer,
        header_timeout: Duration::from_secs(state.config().limits.header_timeout_secs),
        tls,
    };
    reload::spawn(state.clone(), cancel.clone());
    let server = listen::serve(listener, app, limits, cancel.clone());
    let cancelled = cancel.clone();
    tokio::select! {
        _ = server => {}
        _ = async {
            wait_for_signal().await;
            tracing::info!("shutting down");
            let _ = sd_notify::notify(&[sd_notify::NotifyState::Stopping]);
            // Waiting asks end now (`relay_stopping`, recorded by their own tasks) and bots'
            // sockets close (1001); their answers go out before MCP sessions are cancelled.
            state.relay.stop();
            state.relay.drained(Duration::from_secs(2)).await;
            // With other relays: their asks to our bots fail there, our bots go offline.
            state.relay.leave().await;
            tokio::time::sleep(ANSWERS_OUT).await;
            cancel.cancel();
            state.sessions.close_all().await;
            std::future::pending::<()>().await
        } => {}
        // Long-lived streams may hold the graceful drain; give them a bounded grace period.
        _ = async move { cancelled.cancelled().await; tokio::time::sleep(Duration::from_secs(5)).await } => {
            tracing::warn!("open connections did not close within 5 s; exiting");
        }
    }
    // Asks ended by the stop record their end and bots' sockets send their close frame;
    // entries still gathering for the store are stored before the process ends.
    state.relay.drained(Duration::from_secs(2)).await;
    if let Some(x) = state.relay.export() {
        x.flush(Duration::from_secs(2)).await;
    }
    state.relay.flush().await;
    crate::audit::flush(&state.store).await;
    crate::base::observe::telemetry::shutdown().await;
    Ok(())
}

/// After the relay ended its asks at shutdown, how long their answers get to reach the
/// askers' streams before the MCP sessions are cancelled.
const ANSWERS_OUT: Duration = Duration::from_millis(100);

async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    let mut int = signal(SignalKind::interrupt()).expect("SIGINT handler");
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}
