//! Passkeys: the WebAuthn checks a relying party makes (W3C WebAuthn Level 3, §7.1 and
//! §7.2) for the dashboard's named people. A registration gives a credential id and its
//! COSE public key (ES256, EdDSA or RS256); a sign-in proves the person holds it. The
//! attestation statement is not checked (hal0 asks for `none`: it trusts the person's
//! authenticator, not its maker), and neither is the token-binding member. Pure functions:
//! the challenge, the expected origin and the stored key come from the caller.

pub mod cbor;
pub mod challenge;

use crate::base::error::{Error, Result};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64URL;
use sha2::{Digest, Sha256};

/// COSE algorithm ids hal0 accepts, in the order offered to the browser.
pub const ES256: i64 = -7;
pub const EDDSA: i64 = -8;
pub const RS256: i64 = -257;
pub const ALGORITHMS: [i64; 3] = [ES256, EDDSA, RS256];

/// Authenticator data flags (§6.1).
const UP: u8 = 0x01;
const UV: u8 = 0x04;
const AT: u8 = 0x40;

/// The relying party as the browser sees it: the RP ID (a host name) and the page's
/// origin (`https://box.example`, `http://localhost:8080`).
#[derive(Debug, Clone, PartialEq)]
pub struct Relying {
    pub id: String,
    pub origin: String,
}

impl Relying {
    /// The relying party a dashboard page is on: `[network].public_url` when set, else the
    /// request's own `Host` (already checked against the allowed hosts) over https when
    /// hal0 serves TLS itself, http otherwise. Passkeys are bound to a host name, so a
    /// dashboard opened by IP address cannot use them (`ui.passkey_unavailable` says what
    /// to open instead).
    pub fn of(config: &crate::config::Config, host: Option<&str>) -> Result<Relying> {
        let origin = match &config.network.public_url {
            Some(url) => {
                let u = url::Url::parse(url).map_err(|e| Error::internal(format!("[network].public_url: {e}")))?;
                u.origin().ascii_serialization()
            }
            None => {
                let scheme = if config.network.tls_cert.is_some() { "https" } else { "http" };
                format!("{scheme}://{}", host.unwrap_or_default().to_ascii_lowercase())
            }
        };
        let parsed = url::Url::parse(&origin).ok();
        let id = match parsed.as_ref().and_then(|u| u.host()) {
            Some(url::Host::Domain(d)) => d.to_string(),
            _ => {
                return Err(Error::forbidden_code(
                    "ui.passkey_unavailable",
                    format!(
                        "passkeys need a host name, and this dashboard is open at `{origin}`: open it as \
                         http://localhost:PORT on the box, or set [network].public_url to a name"
                    ),
                ));
            }
        };
        Ok(Relying { id, origin })
    }
}

/// A credential a registration proved.
#[derive(Debug, Clone)]
pub struct NewCredential {
    /// The credential id, base64url.
    pub id: String,
    pub alg: i64,
    /// The COSE_Key bytes as the authenticator sent them.
    pub cose_key: Vec<u8>,
    pub sign_count: u32,
}

/// What a sign-in sends (each member as the browser's base64url).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Assertion {
    pub id: String,
    pub client_data_json: String,
    pub authenticator_data: String,
    pub signature: String,
    #[serde(default)]
    pub user_handle: Option<String>,
}

/// What a registration sends.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Attestation {
    pub id: String,
    pub client_data_json: String,
    pub attestation_object: String,
}

/// A sign-in that was proven: the counter to store and whether the person was verified
/// (PIN or biometrics) rather than only present.
#[derive(Debug, Clone, PartialEq)]
pub struct Proven {
    pub sign_count: u32,
    pub user_verified: bool,
}

fn invalid(what: impl std::fmt::Display) -> Error {
    Error::unauthorized("ui.passkey_invalid", format!("the passkey's answer was refused: {what}"))
}

/// Decode base64url (padding tolerated) or say which member is not.
pub fn b64(what: &str, s: &str) -> Result<Vec<u8>> {
    B64URL.decode(s.trim_end_matches('=')).map_err(|_| invalid(format!("{what} is not base64url")))
}

/// Encode base64url without padding.
pub fn b64_encode(bytes: &[u8]) -> String {
    B64URL.encode(bytes)
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ClientData {
    #[serde(rename = "type")]
    kind: String,
    challenge: String,
    origin: String,
    #[serde(default)]
    cross_origin: bool,
}

/// §7.1 steps 7–12 / §7.2 steps 10–15: the client data names the ceremony, the challenge
/// hal0 issued and hal0's own origin, not from inside another site's frame.
fn check_client_data(raw: &[u8], kind: &str, rp: &Relying, challenge: &[u8]) -> Result<()> {
    let cd: ClientData = serde_json::from_slice(raw).map_err(|e| invalid(format!("clientDataJSON: {e}")))?;
    if cd.kind != kind {
        return Err(invalid(format!("clientDataJSON.type is `{}`, not `{kind}`", cd.kind)));
    }
    if b64("clientDataJSON.challenge", &cd.challenge)? != challenge {
        return Err(invalid("it answers another challenge"));
    }
    if cd.origin != rp.origin {
        return Err(invalid(format!("it was made on `{}`, not on `{}`", cd.origin, rp.origin)));
    }
    if cd.cross_origin {
        return Err(invalid("it was made inside a frame of another site"));
    }
    Ok(())
}

/// The fixed head of authenticator data, checked against the RP ID: flags, counter, and
/// what follows.
fn auth_data<'a>(data: &'a [u8], rp: &Relying) -> Result<(u8, u32, &'a [u8])> {
    if data.len() < 37 {
        return Err(invalid(format!("authenticator data of {} bytes (at least 37)", data.len())));
    }
    if data[..32] != Sha256::digest(rp.id.as_bytes())[..] {
        return Err(invalid(format!("it was made for another site than `{}`", rp.id)));
    }
    let flags = data[32];
    if flags & UP == 0 {
        return Err(invalid("the authenticator saw no one present"));
    }
    let count = u32::from_be_bytes([data[33], data[34], data[35], data[36]]);
    Ok((flags, count, &data[37..]))
}

/// §7.1: check a registration's answer to `challenge` and return the credential.
pub fn register(rp: &Relying, challenge: &[u8], a: &Attestation) -> Result<NewCredential> {
    let client_data = b64("clientDataJSON", &a.client_data_json)?;
    check_client_data(&client_data, "webauthn.create", rp, challenge)?;
    let object = cbor::decode_all(&b64("attestationObject", &a.attestation_object)?)
        .map_err(|e| invalid(format!("attestationObject: {e}")))?;
    let data = object
        .text_key("authData")
        .and_then(cbor::Value::as_bytes)
        .ok_or_else(|| invalid("attestationObject has no authData"))?;
    let (flags, sign_count, rest) = auth_data(data, rp)?;
    if flags & AT == 0 || rest.len() < 18 {
        return Err(invalid("authData carries no credential"));
    }
    let len = usize::from(u16::from_be_bytes([rest[16], rest[17]]));
    let rest = &rest[18..];
    if len == 0 || len > 1023 || rest.len() < len {
        return Err(invalid(format!("a credential id of {len} bytes")));
    }
    let (id, rest) = rest.split_at(len);
    if b64("id", &a.id)? != id {
        return Err(invalid("the credential id differs from the one in authData"));
    }
    let (key, used) = cbor::decode(rest).map_err(|e| invalid(format!("the public key: {e}")))?;
    let alg = PublicKey::from_cose(&key)?.alg();
    Ok(NewCredential { id: b64_encode(id), alg, cose_key: rest[..used].to_vec(), sign_count })
}

/// §7.2: check a sign-in's answer to `challenge` with the stored credential (`alg` and
/// `cose_key` as registered, its last `stored_count`).
pub fn sign_in(rp: &Relying, challenge: &[u8], a: &Assertion, cose_key: &[u8], stored_count: u32) -> Result<Proven> {
    let client_data = b64("clientDataJSON", &a.client_data_json)?;
    check_client_data(&client_data, "webauthn.get", rp, challenge)?;
    let data = b64("authenticatorData", &a.authenticator_data)?;
    let (flags, count, _) = auth_data(&data, rp)?;
    let key = cbor::decode_all(cose_key).map_err(|e| Error::internal(format!("a stored passkey: {e}")))?;
    let mut signed = data.clone();
    signed.extend_from_slice(&Sha256::digest(&client_data));
    PublicKey::from_cose(&key)?.verify(&signed, &b64("signature", &a.signature)?)?;
    // §6.1.1: a counter that does not move on may be a cloned authenticator.
    if (count != 0 || stored_count != 0) && count <= stored_count {
        return Err(Error::unauthorized(
            "ui.passkey_cloned",
            format!(
                "this passkey's counter went back ({count} after {stored_count}): it may have been copied; \
                 remove it (`hal0 ui user passkeys`) and register a new one"
            ),
        ));
    }
    Ok(Proven { sign_count: count, user_verified: flags & UV != 0 })
}

/// A COSE public key of an accepted algorithm.
enum PublicKey {
    Es256(Vec<u8>),
    EdDsa(Vec<u8>),
    Rs256 { n: Vec<u8>, e: Vec<u8> },
}

impl PublicKey {
    fn from_cose(key: &cbor::Value) -> Result<PublicKey> {
        let int = |k| key.int_key(k).and_then(cbor::Value::as_int);
        let bytes = |k| key.int_key(k).and_then(cbor::Value::as_bytes).map(<[u8]>::to_vec);
        let (kty, alg) = (int(1), int(3));
        let bad = |what: &str| invalid(format!("the public key: {what}"));
        match (kty, alg.map(|a| a as i64)) {
            (Some(2), Some(ES256)) => {
                let (x, y) = (bytes(-2).unwrap_or_default(), bytes(-3).unwrap_or_default());
                if int(-1) != Some(1) || x.len() != 32 || y.len() != 32 {
                    return Err(bad("an ES256 key must be a P-256 point of two 32-byte halves"));
                }
                Ok(PublicKey::Es256([&[4u8][..], &x, &y].concat()))
            }
            (Some(1), Some(EDDSA)) => match bytes(-2) {
                Some(x) if int(-1) == Some(6) && x.len() == 32 => Ok(PublicKey::EdDsa(x)),
                _ => Err(bad("an EdDSA key must be a 32-byte Ed25519 key")),
            },
            (Some(3), Some(RS256)) => match (bytes(-1), bytes(-2)) {
                (Some(n), Some(e)) if n.len() >= 256 && !e.is_empty() => Ok(PublicKey::Rs256 { n, e }),
                _ => Err(bad("an RS256 key must have a modulus of at least 2048 bits")),
            },
            _ => Err(bad(&format!(
                "key type {kty:?} with algorithm {alg:?}; hal0 accepts ES256 (-7), EdDSA (-8) and RS256 (-257)"
            ))),
        }
    }

    fn alg(&self) -> i64 {
        match self {
            PublicKey::Es256(_) => ES256,
            PublicKey::EdDsa(_) => EDDSA,
            PublicKey::Rs256 { .. } => RS256,
        }
    }

    fn verify(&self, message: &[u8], signature: &[u8]) -> Result<()> {
        use ring::signature::{self as sig, UnparsedPublicKey};
        let ok = match self {
            PublicKey::Es256(point) => {
                UnparsedPublicKey::new(&sig::ECDSA_P256_SHA256_ASN1, point).verify(message, signature).is_ok()
            }
            PublicKey::EdDsa(x) => UnparsedPublicKey::new(&sig::ED25519, x).verify(message, signature).is_ok(),
            PublicKey::Rs256 { n, e } => sig::RsaPublicKeyComponents { n, e }
                .verify(&sig::RSA_PKCS1_2048_8192_SHA256, message, signature)
                .is_ok(),
        };
        if ok { Ok(()) } else { Err(invalid("the signature does not verify with the registered key")) }
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
