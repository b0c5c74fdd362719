//! hal0's systemd unit and its one drop-in. The packaged unit runs the daemon as user
//! `hal0` with an empty capability bounding set. A `[network].bind` port below 1024 needs
//! `CAP_NET_BIND_SERVICE`: when such a port is configured on a box with the unit installed,
//! hal0 writes the drop-in `hal0.service.d/10-low-port.conf` that grants exactly that
//! capability, and removes it again when the port goes back to 1024 or above. Root only (a
//! daemon never writes under /etc/systemd); anyone else is told the command to run.

use crate::config::Config;
use std::path::PathBuf;

/// Where units live: `/etc/systemd/system` (`HAL0_SYSTEMD_DIR` overrides it, for tests).
fn etc_dir() -> PathBuf {
    std::env::var_os("HAL0_SYSTEMD_DIR").map(PathBuf::from).unwrap_or_else(|| "/etc/systemd/system".into())
}

/// The unit is on this box: packaged (`/usr/lib/systemd/system`) or copied by hand.
fn installed() -> bool {
    let packaged = std::env::var_os("HAL0_SYSTEMD_DIR").is_none()
        && std::path::Path::new("/usr/lib/systemd/system/hal0.service").exists();
    packaged || etc_dir().join("hal0.service").exists()
}

pub fn dropin() -> PathBuf {
    etc_dir().join("hal0.service.d/10-low-port.conf")
}

const DROPIN: &str = "# Written by hal0: [network].bind names a port below 1024.\n\
# hal0 removes this file when the port goes back to 1024 or above.\n\
[Service]\n\
CapabilityBoundingSet=CAP_NET_BIND_SERVICE\n\
AmbientCapabilities=CAP_NET_BIND_SERVICE\n";

fn low(cfg: &Config) -> Option<u16> {
    let port = cfg.bind_addr().port();
    (port != 0 && port < 1024).then_some(port)
}

/// Bring the drop-in in line with `cfg` after a config change. A note for the operator
/// when something was done or is still to do; `None` when nothing concerns the unit.
pub fn sync(cfg: &Config) -> Option<String> {
    if !installed() {
        return None;
    }
    let path = dropin();
    let want = low(cfg);
    if want.is_some() == path.exists() {
        return None;
    }
    if !rustix::process::geteuid().is_root() {
        return Some(match want {
            Some(port) => format!(
                "port {port} is below 1024: the hal0 unit needs {} to bind it; run this change as root \
                 (sudo hal0 config set network.bind …) so hal0 writes it",
                path.display()
            ),
            None => format!("{} is no longer needed: run this change as root to remove it", path.display()),
        });
    }
    let done = match want {
        Some(_) => crate::base::paths::write_atomic(&path, DROPIN.as_bytes()).and_then(|()| {
            // The usual modes of unit files and their dirs (systemd reads them as root).
            use std::os::unix::fs::PermissionsExt;
            let dir = path.parent().unwrap_or(&path);
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))
                .and_then(|()| std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)))
                .map_err(|e| crate::base::error::Error::io("fs.write_failed", "set mode on", &path, e))
        }),
        None => std::fs::remove_file(&path)
            .map_err(|e| crate::base::error::Error::io("fs.write_failed", "remove", &path, e)),
    };
    Some(match (done, want) {
        (Ok(()), Some(port)) => format!(
            "port {port} is below 1024: wrote {} (CAP_NET_BIND_SERVICE); run systemctl daemon-reload && systemctl restart hal0",
            path.display()
        ),
        (Ok(()), None) => format!(
            "removed {} (no port below 1024 any more); run systemctl daemon-reload && systemctl restart hal0",
            path.display()
        ),
        (Err(e), _) => format!("the hal0 unit's drop-in could not be updated: {}", e.message),
    })
}
