//! `hal0 serve`: load the config, set up logging to stderr (or the journal), run the daemon.

use super::Ctx;
use crate::base::error::{Error, Result};
use std::net::SocketAddr;

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Listen here instead of [network].bind (e.g. 127.0.0.1:0 for a free port).
    #[arg(long, value_name = "HOST:PORT")]
    pub bind: Option<SocketAddr>,
    /// Listen on a non-loopback address even while auth is off (no box key): anyone on the
    /// network then reads memory, settings and the audit log; changes are still taken from
    /// this box only. Without it, such a bind is refused until `hal0 auth rotate admin`.
    #[arg(long)]
    pub allow_unauthenticated: bool,
}

pub fn run(ctx: &Ctx, a: ServeArgs) -> Result<()> {
    let mut config = ctx.config()?;
    config.network.allow_unauthenticated |= a.allow_unauthenticated;
    // Held while the daemon runs: a restore refuses to swap files under it.
    let _serving = crate::ops::store::daemon_guard(&ctx.paths)?;
    crate::base::logfmt::init();
    if ctx.paths.config_source.starts_with("fallback") || ctx.paths.state_source.starts_with("fallback") {
        tracing::warn!("{}", ctx.paths.describe().replace('\n', "; "));
    }
    let bind = a.bind.unwrap_or_else(|| config.bind_addr());
    if a.bind.is_some_and(|b| b != config.bind_addr() && b.port() != 0) {
        // Hermes entries hal0 writes (its own servers, exposed servers) name [network].bind.
        tracing::warn!(
            "listening on {bind}, but the Hermes entries hal0 writes point at [network].bind ({}); make it permanent \
             with: hal0 config set network.bind {bind}",
            config.bind_addr()
        );
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::internal(format!("cannot start the runtime: {e}")))?;
    rt.block_on(crate::server::serve(ctx.paths.clone(), config, bind))
}
