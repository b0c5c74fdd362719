//! TLS for tests: a throwaway CA (rcgen), leaf certificates it signs (for the right name, a
//! wrong name, already expired), and a TLS-terminating relay on 127.0.0.1 that forwards the
//! decrypted bytes to a plain loopback server, so any existing test upstream is reachable
//! over https.

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair, KeyUsagePurpose};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// A test certificate authority.
pub struct Ca {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

/// A leaf certificate and its key.
pub struct Leaf {
    pub cert_pem: String,
    pub key_pem: String,
    der: CertificateDer<'static>,
    key: Vec<u8>,
}

/// How a leaf should be wrong, if at all.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Flaw {
    None,
    Expired,
}

impl Default for Ca {
    fn default() -> Self {
        Self::new()
    }
}

impl Ca {
    pub fn new() -> Ca {
        let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
        p.distinguished_name.push(rcgen::DnType::CommonName, "hal0 test CA");
        Ca { issuer: CertifiedIssuer::self_signed(p, KeyPair::generate().unwrap()).unwrap() }
    }

    pub fn pem(&self) -> String {
        self.issuer.pem()
    }

    /// Write the CA certificate as PEM into `dir`; returns its path.
    pub fn write(&self, dir: &Path) -> PathBuf {
        let p = dir.join("test-ca.pem");
        std::fs::write(&p, self.pem()).unwrap();
        p
    }

    /// A server certificate for `names` (DNS names or IP literals).
    pub fn leaf(&self, names: &[&str], flaw: Flaw) -> Leaf {
        let mut p = CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
        p.distinguished_name.push(rcgen::DnType::CommonName, names.first().copied().unwrap_or("leaf"));
        if flaw == Flaw::Expired {
            let now = time::OffsetDateTime::now_utc();
            p.not_before = now - time::Duration::days(30);
            p.not_after = now - time::Duration::days(1);
        }
        let key = KeyPair::generate().unwrap();
        let cert = p.signed_by(&key, &self.issuer).unwrap();
        Leaf { cert_pem: cert.pem(), key_pem: key.serialize_pem(), der: cert.der().clone(), key: key.serialize_der() }
    }
}

impl Leaf {
    /// The certificate's DER bytes (to compare with what a server presented).
    pub fn der(&self) -> &[u8] {
        self.der.as_ref()
    }

    /// A rustls server config presenting this certificate.
    pub fn server_config(&self) -> Arc<rustls::ServerConfig> {
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.key.clone()));
        let cfg = rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(vec![self.der.clone()], key)
            .unwrap();
        Arc::new(cfg)
    }

    /// Write `cert.pem` and `key.pem` into `dir`; returns (cert, key) paths.
    pub fn write(&self, dir: &Path, stem: &str) -> (PathBuf, PathBuf) {
        let (c, k) = (dir.join(format!("{stem}.crt")), dir.join(format!("{stem}.key")));
        std::fs::write(&c, &self.cert_pem).unwrap();
        std::fs::write(&k, &self.key_pem).unwrap();
        (c, k)
    }
}

/// Accept TLS on a free loopback port with `leaf` and relay each connection to `backend`
/// in plain TCP. Returns the TLS port's address; the relay runs until the runtime ends.
pub async fn relay(leaf: &Leaf, backend: SocketAddr) -> SocketAddr {
    let acceptor = tokio_rustls::TlsAcceptor::from(leaf.server_config());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else { return };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else { return };
                let Ok(mut plain) = tokio::net::TcpStream::connect(backend).await else { return };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    addr
}
