//! A software authenticator (ES256 and Ed25519 keys from ring) answering real ceremonies,
//! and every part of an answer changed in turn.

use super::*;
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, Ed25519KeyPair, KeyPair};

fn rp() -> Relying {
    Relying { id: "localhost".into(), origin: "http://localhost:8080".into() }
}

/// CBOR encoding of the few shapes an authenticator sends.
enum C<'a> {
    Int(i64),
    Bytes(&'a [u8]),
    Text(&'a str),
    Map(Vec<(C<'a>, C<'a>)>),
}

fn head(major: u8, n: u64, out: &mut Vec<u8>) {
    match n {
        0..=23 => out.push(major << 5 | n as u8),
        24..=0xff => out.extend([major << 5 | 24, n as u8]),
        0x100..=0xffff => {
            out.push(major << 5 | 25);
            out.extend((n as u16).to_be_bytes());
        }
        _ => {
            out.push(major << 5 | 26);
            out.extend((n as u32).to_be_bytes());
        }
    }
}

fn enc(c: &C, out: &mut Vec<u8>) {
    match c {
        C::Int(i) if *i >= 0 => head(0, *i as u64, out),
        C::Int(i) => head(1, (-1 - *i) as u64, out),
        C::Bytes(b) => {
            head(2, b.len() as u64, out);
            out.extend_from_slice(b);
        }
        C::Text(t) => {
            head(3, t.len() as u64, out);
            out.extend_from_slice(t.as_bytes());
        }
        C::Map(m) => {
            head(5, m.len() as u64, out);
            for (k, v) in m {
                enc(k, out);
                enc(v, out);
            }
        }
    }
}

fn cbor(c: &C) -> Vec<u8> {
    let mut out = Vec::new();
    enc(c, &mut out);
    out
}

enum Key {
    Es(EcdsaKeyPair),
    Ed(Ed25519KeyPair),
}

struct Authenticator {
    key: Key,
    id: Vec<u8>,
    count: u32,
}

impl Authenticator {
    fn es256() -> Authenticator {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &rng).unwrap();
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref(), &rng).unwrap();
        Authenticator { key: Key::Es(key), id: vec![7; 16], count: 0 }
    }
    fn ed25519() -> Authenticator {
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
        Authenticator { key: Key::Ed(Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap()), id: vec![9; 20], count: 0 }
    }

    fn cose(&self) -> Vec<u8> {
        match &self.key {
            Key::Es(k) => {
                let p = k.public_key().as_ref();
                cbor(&C::Map(vec![
                    (C::Int(1), C::Int(2)),
                    (C::Int(3), C::Int(-7)),
                    (C::Int(-1), C::Int(1)),
                    (C::Int(-2), C::Bytes(&p[1..33])),
                    (C::Int(-3), C::Bytes(&p[33..])),
                ]))
            }
            Key::Ed(k) => cbor(&C::Map(vec![
                (C::Int(1), C::Int(1)),
                (C::Int(3), C::Int(-8)),
                (C::Int(-1), C::Int(6)),
                (C::Int(-2), C::Bytes(k.public_key().as_ref())),
            ])),
        }
    }

    fn client_data(kind: &str, challenge: &[u8], origin: &str) -> String {
        let json = serde_json::json!({"type": kind, "challenge": b64_encode(challenge), "origin": origin});
        b64_encode(json.to_string().as_bytes())
    }

    fn head(rp_id: &str, flags: u8, count: u32) -> Vec<u8> {
        let mut d = Sha256::digest(rp_id.as_bytes()).to_vec();
        d.push(flags);
        d.extend(count.to_be_bytes());
        d
    }

    fn create(&mut self, rp_id: &str, origin: &str, challenge: &[u8]) -> Attestation {
        let mut data = Self::head(rp_id, UP | UV | AT, self.count);
        data.extend([0u8; 16]);
        data.extend((self.id.len() as u16).to_be_bytes());
        data.extend(&self.id);
        data.extend(self.cose());
        let object = cbor(&C::Map(vec![
            (C::Text("fmt"), C::Text("none")),
            (C::Text("attStmt"), C::Map(vec![])),
            (C::Text("authData"), C::Bytes(&data)),
        ]));
        Attestation {
            id: b64_encode(&self.id),
            client_data_json: Self::client_data("webauthn.create", challenge, origin),
            attestation_object: b64_encode(&object),
        }
    }

    fn get(&mut self, rp_id: &str, origin: &str, challenge: &[u8]) -> Assertion {
        self.count += 1;
        let data = Self::head(rp_id, UP | UV, self.count);
        let client_data = Self::client_data("webauthn.get", challenge, origin);
        let mut signed = data.clone();
        signed.extend(Sha256::digest(b64("", &client_data).unwrap()));
        let signature = match &self.key {
            Key::Es(k) => k.sign(&SystemRandom::new(), &signed).unwrap().as_ref().to_vec(),
            Key::Ed(k) => k.sign(&signed).as_ref().to_vec(),
        };
        Assertion {
            id: b64_encode(&self.id),
            client_data_json: client_data,
            authenticator_data: b64_encode(&data),
            signature: b64_encode(&signature),
            user_handle: None,
        }
    }
}

#[test]
fn a_registered_passkey_signs_in_with_either_algorithm() {
    for mut a in [Authenticator::es256(), Authenticator::ed25519()] {
        let rp = rp();
        let cred = register(&rp, b"reg-challenge", &a.create(&rp.id, &rp.origin, b"reg-challenge")).unwrap();
        assert_eq!(cred.id, b64_encode(&a.id));
        let proof = a.get(&rp.id, &rp.origin, b"challenge-1");
        let p = sign_in(&rp, b"challenge-1", &proof, &cred.cose_key, cred.sign_count).unwrap();
        assert_eq!(p, Proven { sign_count: 1, user_verified: true });
        // The same answer again: its counter does not move on.
        assert_eq!(sign_in(&rp, b"challenge-1", &proof, &cred.cose_key, 1).unwrap_err().code, "ui.passkey_cloned");
    }
}

#[test]
fn every_changed_part_of_a_registration_is_refused() {
    let rp = rp();
    let mut a = Authenticator::es256();
    let good = a.create(&rp.id, &rp.origin, b"c");
    let refused = |what: &str, att: Attestation, challenge: &[u8], rp: &Relying| {
        let e = register(rp, challenge, &att).unwrap_err();
        assert_eq!(e.code, "ui.passkey_invalid", "{what}: {}", e.message);
        e.message
    };
    assert!(refused("challenge", good.clone(), b"other", &rp).contains("another challenge"));
    let other_site = Relying { id: "evil.example".into(), origin: rp.origin.clone() };
    assert!(refused("rp id", good.clone(), b"c", &other_site).contains("another site"));
    let other_origin = Relying { id: rp.id.clone(), origin: "http://localhost:9999".into() };
    assert!(refused("origin", good.clone(), b"c", &other_origin).contains("made on"));
    let wrong_kind =
        Attestation { client_data_json: Authenticator::client_data("webauthn.get", b"c", &rp.origin), ..good.clone() };
    assert!(refused("type", wrong_kind, b"c", &rp).contains("webauthn.create"));
    let wrong_id = Attestation { id: b64_encode(b"another id"), ..good.clone() };
    assert!(refused("id", wrong_id, b"c", &rp).contains("differs"));
    for junk in ["", "!!", &b64_encode(&[0xa1]), &b64_encode(&cbor(&C::Map(vec![])))] {
        refused("object", Attestation { attestation_object: junk.into(), ..good.clone() }, b"c", &rp);
    }
    refused("client data", Attestation { client_data_json: b64_encode(b"{not json"), ..good.clone() }, b"c", &rp);
}

#[test]
fn a_key_of_another_algorithm_or_shape_is_refused() {
    let rp = rp();
    let mut a = Authenticator::es256();
    let mut att = a.create(&rp.id, &rp.origin, b"c");
    // Replace the key by an ES384 one (alg -35), then by a short P-256 point.
    for key in [
        cbor(&C::Map(vec![(C::Int(1), C::Int(2)), (C::Int(3), C::Int(-35))])),
        cbor(&C::Map(vec![
            (C::Int(1), C::Int(2)),
            (C::Int(3), C::Int(-7)),
            (C::Int(-1), C::Int(1)),
            (C::Int(-2), C::Bytes(&[1; 31])),
            (C::Int(-3), C::Bytes(&[1; 32])),
        ])),
    ] {
        let mut data = Authenticator::head(&rp.id, UP | AT, 0);
        data.extend([0u8; 16]);
        data.extend((a.id.len() as u16).to_be_bytes());
        data.extend(&a.id);
        data.extend(&key);
        att.attestation_object = b64_encode(&cbor(&C::Map(vec![(C::Text("authData"), C::Bytes(&data))])));
        let e = register(&rp, b"c", &att).unwrap_err();
        assert!(e.message.contains("the public key"), "{}", e.message);
    }
}

#[test]
fn a_sign_in_with_a_changed_part_or_another_key_is_refused() {
    let rp = rp();
    let mut a = Authenticator::es256();
    let cred = register(&rp, b"c", &a.create(&rp.id, &rp.origin, b"c")).unwrap();
    let mut other = Authenticator::es256();
    let good = a.get(&rp.id, &rp.origin, b"s");
    let check = |p: &Assertion, challenge: &[u8]| sign_in(&rp, challenge, p, &cred.cose_key, 0);
    check(&good, b"s").unwrap();
    assert!(check(&good, b"t").unwrap_err().message.contains("another challenge"));
    // Signed by another key.
    let forged = other.get(&rp.id, &rp.origin, b"s");
    assert!(check(&forged, b"s").unwrap_err().message.contains("does not verify"));
    // A flipped bit in the signed data.
    let mut data = b64("", &good.authenticator_data).unwrap();
    data[36] ^= 1;
    let tampered = Assertion { authenticator_data: b64_encode(&data), ..good.clone() };
    assert!(check(&tampered, b"s").unwrap_err().message.contains("does not verify"));
    // No one present.
    data[32] &= !UP;
    let absent = Assertion { authenticator_data: b64_encode(&data), ..good.clone() };
    assert!(check(&absent, b"s").unwrap_err().message.contains("present"));
    let short = Assertion { authenticator_data: b64_encode(&[0; 10]), ..good.clone() };
    assert!(check(&short, b"s").unwrap_err().message.contains("37"));
    let bad_sig = Assertion { signature: "%%".into(), ..good };
    assert!(check(&bad_sig, b"s").unwrap_err().message.contains("base64url"));
}
