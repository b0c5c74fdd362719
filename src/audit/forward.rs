//! Forwarding audit rows to the system log (`[audit].forward`), so a box can keep a short
//! local window and a long central one: each stored row, once it has its outcome, goes as
//! one datagram to syslog (`/dev/log`, RFC 3164 framing, facility authpriv, the row as JSON)
//! or to journald (its native protocol: `MESSAGE`, `PRIORITY`, `SYSLOG_IDENTIFIER` and a
//! `HAL0_*` field per column), with the row's chain links (`chain`, `outcome_chain`): a copy
//! of the audit chain outside `hal0.db`, against which `hal0 activity verify`'s heads compare. Sending never blocks or fails a call: a socket that is
//! missing or full costs the row its copy and a throttled warning.

use crate::audit::Row;
use crate::base::logfmt::throttle::{Throttle, held_back};
use crate::config::retention::{Audit, Forward};
use std::collections::HashMap;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// Where one store's rows go.
pub struct Forwarder {
    kind: Forward,
    to: PathBuf,
    sock: UnixDatagram,
    warn: Throttle,
}

fn registry() -> &'static Mutex<HashMap<PathBuf, Arc<Forwarder>>> {
    static R: OnceLock<Mutex<HashMap<PathBuf, Arc<Forwarder>>>> = OnceLock::new();
    R.get_or_init(Default::default)
}

/// Forward the rows of the store at `store` as `cfg` says (or stop forwarding them).
pub fn install(store: &Path, cfg: &Audit) -> std::io::Result<()> {
    let mut r = registry().lock().unwrap_or_else(|p| p.into_inner());
    let Some(to) = cfg.forward_to() else {
        r.remove(store);
        return Ok(());
    };
    let sock = UnixDatagram::unbound()?;
    sock.set_nonblocking(true)?;
    r.insert(store.to_path_buf(), Arc::new(Forwarder { kind: cfg.forward, to, sock, warn: Throttle::default() }));
    Ok(())
}

/// The forwarder of the store at `store`, if its rows are forwarded.
pub fn of(store: &Path) -> Option<Arc<Forwarder>> {
    registry().lock().unwrap_or_else(|p| p.into_inner()).get(store).cloned()
}

impl Forwarder {
    /// Send `row`; a failure is a throttled warning.
    pub fn send(&self, row: &Row) {
        let msg = match self.kind {
            Forward::Journald => journald(row),
            _ => syslog(row),
        };
        if let Err(e) = self.sock.send_to(&msg, &self.to)
            && let Some(n) = self.warn.pass()
        {
            tracing::warn!("cannot forward audit rows to {}: {e}{}", self.to.display(), held_back(n));
        }
    }
}

/// The row as one line of JSON.
fn json(row: &Row) -> String {
    crate::base::term::json_safe(&serde_json::to_string(row).unwrap_or_default()).into_owned()
}

/// `<86>hal0[PID]: audit {json}`: facility authpriv (10), severity info (6).
pub fn syslog(row: &Row) -> Vec<u8> {
    format!("<86>hal0[{}]: audit {}", std::process::id(), json(row)).into_bytes()
}

/// journald's native datagram: `KEY=value` lines, or `KEY\n<len u64 LE><value>\n` for a
/// value holding a newline.
pub fn journald(row: &Row) -> Vec<u8> {
    let mut out = Vec::new();
    let mut field = |k: &str, v: &str| {
        if v.contains('\n') {
            out.extend_from_slice(k.as_bytes());
            out.push(b'\n');
            out.extend_from_slice(&(v.len() as u64).to_le_bytes());
            out.extend_from_slice(v.as_bytes());
        } else {
            out.extend_from_slice(format!("{k}={v}").as_bytes());
        }
        out.push(b'\n');
    };
    let message = format!("audit {} {} {} by {}", row.surface, row.tool, row.verdict, row.identity);
    field("MESSAGE", &message);
    field("PRIORITY", "6");
    field("SYSLOG_IDENTIFIER", "hal0");
    field("HAL0_AUDIT_ID", &row.id.to_string());
    field("HAL0_AT", &row.at);
    field("HAL0_SURFACE", &row.surface);
    field("HAL0_TOOL", &row.tool);
    field("HAL0_IDENTITY", &row.identity);
    field("HAL0_VERDICT", row.verdict.as_str());
    field("HAL0_ARGUMENTS", &row.arguments.to_string());
    for (k, v) in [("HAL0_CHAIN", &row.chain), ("HAL0_OUTCOME_CHAIN", &row.outcome_chain)] {
        if let Some(v) = v {
            field(k, v);
        }
    }
    for (k, v) in
        [("HAL0_RESULT_CODE", &row.result_code), ("HAL0_APPROVAL_ID", &row.approval_id), ("HAL0_DETAIL", &row.detail)]
    {
        if let Some(v) = v {
            field(k, v);
        }
    }
    out
}
