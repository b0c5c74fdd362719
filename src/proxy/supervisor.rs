//! The stdio supervisor: starts an installed stdio server (`command` + `args` of its record,
//! e.g. `npx -y -- <package>`, `uvx <package>`, `docker run -i --rm -- <image>`) as a child process
//! and speaks MCP to it over stdin/stdout, so it is served through the same proxy and policy
//! as an http server. The child gets a small, fixed environment (never hal0's own, which may
//! hold box keys) plus the record's `[env]` values and `[secrets]` resolved from api.env as
//! environment variables; its stderr goes to hal0's log, redacted. The child is killed when
//! its connection is dropped (uninstall, disable, a record change, stop, hal0 exiting) and
//! started again on the next call after it died.

use crate::base::error::{Error, Result};
use crate::registry::record::Record;
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

/// How long a child may take to start and answer `initialize` (`npx -y` may download first).
pub const START_TIMEOUT: Duration = Duration::from_secs(60);
/// Variables of hal0's environment a child inherits (everything else is dropped).
const INHERITED: [&str; 9] =
    ["PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "no_proxy"];
/// Lines of one child's stderr written to hal0's log at most.
const STDERR_LINES: usize = 500;

/// A running child; dropping it kills the process.
pub struct Child {
    child: tokio::process::Child,
}

impl Child {
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }
}

/// Start the record's command and connect to it. `hdrs` are the resolved `[env]` and
/// `[secrets]` values, passed as environment variables.
pub async fn start(
    record: &Record,
    hdrs: &HashMap<String, String>,
    work_dir: &Path,
    code: &'static str,
    relay: super::inbound::Relay,
) -> Result<(super::upstream::Client, Child)> {
    let command = record.start_command()?;
    crate::base::paths::ensure_dir(work_dir)?;
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(&record.args)
        .env_clear()
        .envs(INHERITED.iter().filter_map(|k| std::env::var(k).ok().map(|v| (*k, v))))
        .envs(hdrs)
        .current_dir(work_dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|e| {
        super::upstream::failed(
            code,
            format!("`{}`: cannot start `{command}`: {e} (is it installed and on PATH?)", record.id),
        )
    })?;
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        return Err(Error::internal("the child's pipes are missing"));
    };
    if let Some(stderr) = child.stderr.take() {
        let id = record.id.clone();
        tokio::spawn(async move {
            use tokio::io::AsyncBufReadExt;
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            let mut n = 0;
            while let Ok(Some(line)) = lines.next_line().await {
                if n < STDERR_LINES {
                    // The child's own text: redacted, and with no control or invisible
                    // character left to act on the terminal that shows the log.
                    tracing::info!(server = %id, "stderr: {}", crate::base::term::safe_line(&crate::base::redact::redact(&line)));
                }
                n += 1;
            }
        });
    }
    let child = Child { child };
    let transport = rmcp::transport::async_rw::AsyncRwTransport::new_client(stdout, stdin);
    let client = tokio::time::timeout(START_TIMEOUT, relay.serve_over(transport))
        .await
        .map_err(|_| {
            super::upstream::failed(
                code,
                format!(
                    "`{}` (`{command}`) did not finish the MCP handshake within {} s",
                    record.id,
                    START_TIMEOUT.as_secs()
                ),
            )
        })?
        .map_err(|e| {
            super::upstream::failed(
                code,
                format!(
                    "`{}` (`{command}`) did not answer like an MCP server on stdio: {} (its stderr is in hal0's log)",
                    record.id,
                    crate::base::redact::redact(&e.to_string())
                ),
            )
        })?;
    Ok((client, child))
}
