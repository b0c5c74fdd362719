//! https on `hal0 serve`: the certificate and key of `[network].tls_cert` / `tls_key`,
//! re-read when either file changes (a renewed certificate applies to the next connection,
//! no restart), and the rule for who may still speak plain http: loopback callers only
//! (Hermes, the CLI and local tools), so a bearer key never crosses the LAN in the clear.

use crate::base::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// How often the files are looked at for a change, at most.
const RECHECK: Duration = Duration::from_secs(2);

/// What identifies a version of a file: length and modification time.
type Stamp = Option<(u64, SystemTime)>;

fn stamp(p: &Path) -> Stamp {
    std::fs::metadata(p).ok().and_then(|m| Some((m.len(), m.modified().ok()?)))
}

fn invalid(msg: String) -> Error {
    Error::invalid("config.tls_invalid", msg)
}

/// Load the pair into an acceptor that offers http/1.1.
pub fn load(cert: &Path, key: &Path) -> Result<TlsAcceptor> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|e| invalid(format!("[network].tls_cert {}: {e}", cert.display())))?
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| invalid(format!("[network].tls_cert {}: not a PEM certificate chain: {e}", cert.display())))?;
    if certs.is_empty() {
        return Err(invalid(format!("[network].tls_cert {} holds no certificate", cert.display())));
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| invalid(format!("[network].tls_key {}: not a PEM private key: {e}", key.display())))?;
    let mut cfg = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| invalid(format!("[network].tls_cert and tls_key do not make a usable pair: {e}")))?;
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(cfg)))
}

struct Current {
    acceptor: TlsAcceptor,
    stamps: (Stamp, Stamp),
    checked: Instant,
}

/// The live certificate of the listener.
pub struct Reloader {
    cert: PathBuf,
    key: PathBuf,
    current: Mutex<Current>,
}

impl Reloader {
    /// Load the pair now; a bad pair is an error at start.
    pub fn new(cert: &Path, key: &Path) -> Result<Arc<Reloader>> {
        let acceptor = load(cert, key)?;
        let stamps = (stamp(cert), stamp(key));
        Ok(Arc::new(Reloader {
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
            current: Mutex::new(Current { acceptor, stamps, checked: Instant::now() }),
        }))
    }

    /// The acceptor for the next connection: reloaded when either file changed. A pair
    /// that fails to load is logged and the previous one stays in use.
    pub fn acceptor(&self) -> TlsAcceptor {
        let mut c = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if c.checked.elapsed() >= RECHECK {
            c.checked = Instant::now();
            let stamps = (stamp(&self.cert), stamp(&self.key));
            if stamps != c.stamps {
                match load(&self.cert, &self.key) {
                    Ok(a) => {
                        tracing::info!(cert = %self.cert.display(), "TLS certificate reloaded");
                        c.acceptor = a;
                        c.stamps = stamps;
                    }
                    Err(e) => tracing::error!("keeping the previous TLS certificate: {}", e.message),
                }
            }
        }
        c.acceptor.clone()
    }
}

/// The pair from the config: both or neither.
pub fn from_config(net: &crate::config::Network) -> Result<Option<Arc<Reloader>>> {
    match (&net.tls_cert, &net.tls_key) {
        (None, None) => Ok(None),
        (Some(c), Some(k)) => Reloader::new(c, k).map(Some),
        _ => Err(invalid(
            "set both [network].tls_cert and [network].tls_key (hal0 config set network.tls_key /path/key.pem), or \
             neither"
                .into(),
        )),
    }
}

/// The answer to a plain-http request from another machine when https is on.
pub const PLAIN_REFUSED: &[u8] = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: 122\r\n\r\n{\"error\":{\"code\":\"request.https_required\",\"message\":\"this hal0 speaks https to other machines; use https:// in the URL\"}}\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_is_well_formed() {
        let text = std::str::from_utf8(PLAIN_REFUSED).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        let len: usize = head.lines().find_map(|l| l.strip_prefix("content-length: ")).unwrap().parse().unwrap();
        assert_eq!(body.len(), len);
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["error"]["code"], "request.https_required");
    }

    #[test]
    fn bad_pairs_are_refused_at_start() {
        let dir = tempfile::tempdir().unwrap();
        let (c, k) = (dir.path().join("c.pem"), dir.path().join("k.pem"));
        assert_eq!(Reloader::new(&c, &k).err().unwrap().code, "config.tls_invalid");
        std::fs::write(&c, "junk").unwrap();
        std::fs::write(&k, "junk").unwrap();
        let e = Reloader::new(&c, &k).err().unwrap();
        assert!(e.message.contains("tls_cert"), "{}", e.message);
        let net = crate::config::Network { tls_cert: Some(c), ..Default::default() };
        assert!(from_config(&net).err().unwrap().message.contains("both"));
        assert!(from_config(&crate::config::Network::default()).unwrap().is_none());
    }
}
