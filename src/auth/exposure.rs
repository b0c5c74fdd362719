//! Who may reach a hal0 whose auth is off (no box key in `api.env`): the one rule for the
//! daemon's start, every request, and doctor's account of it.
//!
//! With auth off the API answers anonymous callers as the admin tier, so it must answer only
//! the box itself. hal0 refuses to *listen* on a non-loopback address while auth is off,
//! unless the operator said `--allow-unauthenticated` (or `network.allow_unauthenticated =
//! true`, a setting only the box's shell may write). And whatever was said, a request that
//! *changes* something with no credential is taken from a loopback peer only while auth is
//! off; keys and dashboard sessions are checked as always. The second rule also covers a box
//! whose keys were removed while the daemon listens on the network.

use super::{Credential, RouteClass};
use crate::base::error::{Error, Result};
use std::net::{IpAddr, SocketAddr};

/// The command that arms auth, named by every refusal here.
pub const ARM: &str = "sudo hal0 auth rotate admin";

pub use crate::base::weburl::is_local;

/// May `hal0 serve` listen on `bind` with auth `armed` or not? Loopback always; another
/// address (0.0.0.0 and :: included) only with auth armed or `allow_unauthenticated`.
pub fn check_bind(bind: SocketAddr, armed: bool, allow_unauthenticated: bool) -> Result<()> {
    if armed || allow_unauthenticated || is_local(bind.ip()) {
        return Ok(());
    }
    Err(Error::forbidden_code(
        "serve.auth_off_on_network",
        format!(
            "refusing to listen on {bind} with auth off: anyone who can reach it could mint admin keys and change \
             settings. Arm auth first ({ARM}, then start hal0 again), or listen on loopback (--bind 127.0.0.1:{port}); \
             to serve the network unauthenticated anyway, say so: hal0 serve --allow-unauthenticated (or, at the box's \
             shell, hal0 config set network.allow_unauthenticated true)",
            port = bind.port()
        ),
    ))
}

/// Whether a request may go on, given where it came from: `None` when it may, else the
/// refusal. Only anonymous callers on an unarmed box are ever refused here: any write from a
/// peer that is not this box, and any read of an admin-tier route unless the operator chose
/// `allow_unauthenticated`. A request without a known peer counts as remote.
pub fn refusal(
    peer: Option<IpAddr>,
    armed: bool,
    allow_unauthenticated: bool,
    cred: &Credential,
    class: RouteClass,
    write: bool,
) -> Option<Error> {
    if armed || *cred != Credential::None || peer.is_some_and(is_local) {
        return None;
    }
    // Routes that answer anonymous callers whether or not auth is armed, or only a key.
    if matches!(class, RouteClass::Open | RouteClass::Page) && !write {
        return None;
    }
    if write {
        return Some(Error::forbidden_code(
            "auth.off_remote_write",
            format!(
                "auth is off on this box, so changes are taken from the box itself only (loopback); arm auth ({ARM}) \
                 and send `Authorization: Bearer <key>`"
            ),
        ));
    }
    if allow_unauthenticated {
        return None;
    }
    Some(Error::forbidden_code(
        "auth.off_remote",
        format!(
            "auth is off on this box, so it answers the box itself only (loopback); arm auth ({ARM}) and send \
             `Authorization: Bearer <key>`"
        ),
    ))
}

/// What an anonymous caller can do, in words (doctor's auth row and serve's warning).
pub fn account(armed: bool, bind: SocketAddr, allow_unauthenticated: bool) -> String {
    if armed {
        return "anonymous callers get /api/health and the dashboard's sign-in page only".into();
    }
    let reach = if is_local(bind.ip()) {
        format!("only this box reaches {bind}")
    } else if allow_unauthenticated {
        format!("allow_unauthenticated: anyone on the network reads all of it at {bind} (writes only from this box)")
    } else {
        format!("hal0 serve refuses to listen on {bind} until auth is armed")
    };
    format!("off: anyone on this box can mint keys (admin scope too) and change settings; {reach}; arm it: {ARM}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> Option<IpAddr> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn loopback_is_the_box_and_nothing_else_is() {
        for l in ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"] {
            assert!(is_local(l.parse().unwrap()), "{l}");
        }
        for r in ["0.0.0.0", "::", "192.168.1.20", "10.0.0.1", "::ffff:192.168.1.20", "fe80::1", "169.254.1.1"] {
            assert!(!is_local(r.parse().unwrap()), "{r}");
        }
    }

    #[test]
    fn serve_refuses_the_network_with_auth_off_unless_told() {
        let lan: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        let e = check_bind(lan, false, false).unwrap_err();
        assert_eq!((e.code, e.status()), ("serve.auth_off_on_network", 403));
        assert!(e.message.contains("hal0 auth rotate admin") && e.message.contains("--allow-unauthenticated"));
        for addr in ["[::]:8080", "192.168.1.20:8080", "[fe80::1]:80"] {
            assert!(check_bind(addr.parse().unwrap(), false, false).is_err(), "{addr}");
        }
        assert!(check_bind(lan, true, false).is_ok(), "armed");
        assert!(check_bind(lan, false, true).is_ok(), "the operator said so");
        for addr in ["127.0.0.1:8080", "[::1]:0", "127.0.0.2:9"] {
            assert!(check_bind(addr.parse().unwrap(), false, false).is_ok(), "{addr}");
        }
    }

    #[test]
    fn with_auth_off_only_the_box_changes_anything() {
        let lan = ip("192.168.1.50");
        let admin = RouteClass::Admin;
        // Writes from the network: refused whatever the operator allowed.
        for allow in [false, true] {
            for class in [admin, RouteClass::Memory, RouteClass::AdminMcp, RouteClass::Page, RouteClass::Open] {
                let e = refusal(lan, false, allow, &Credential::None, class, true).unwrap();
                assert_eq!((e.code, e.status()), ("auth.off_remote_write", 403));
                assert!(e.message.contains("hal0 auth rotate admin"));
            }
        }
        // Reads from the network: only when the operator allowed them, and open routes always.
        let e = refusal(lan, false, false, &Credential::None, admin, false).unwrap();
        assert_eq!((e.code, e.status()), ("auth.off_remote", 403));
        assert!(refusal(lan, false, true, &Credential::None, admin, false).is_none());
        assert!(refusal(lan, false, false, &Credential::None, RouteClass::Open, false).is_none());
        assert!(refusal(lan, false, false, &Credential::None, RouteClass::Page, false).is_none());
        // An unknown peer is not the box.
        assert!(refusal(None, false, true, &Credential::None, admin, true).is_some());
        // The box itself, an armed box, and real credentials pass.
        for local in ["127.0.0.1", "::1", "::ffff:127.0.0.1"] {
            assert!(refusal(ip(local), false, false, &Credential::None, admin, true).is_none(), "{local}");
        }
        assert!(refusal(lan, true, false, &Credential::None, admin, true).is_none());
        assert!(refusal(lan, false, false, &Credential::Admin, admin, true).is_none());
    }

    #[test]
    fn the_account_says_what_an_anonymous_caller_can_do() {
        let lan: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        let local: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let off = account(false, local, false);
        assert!(off.contains("mint keys") && off.contains("only this box") && off.contains(ARM), "{off}");
        assert!(account(false, lan, false).contains("refuses to listen"));
        assert!(account(false, lan, true).contains("anyone on the network reads"));
        assert!(account(false, lan, true).contains("writes only from this box"));
        assert!(account(true, lan, false).contains("/api/health"));
    }
}
