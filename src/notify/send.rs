//! Sending one event to one target, and retrying. A webhook gets the event as JSON, signed:
//! `X-Hal0-Signature: sha256=<hex HMAC-SHA256(secret, "<X-Hal0-Timestamp>.<body>")>` (a
//! receiver checks the signature and that the timestamp is recent), with `X-Hal0-Event` and
//! `X-Hal0-Delivery` (the same id on every attempt of one delivery). An ntfy topic gets
//! the text with `Title`, `Tags`, `Priority` and a `Click` link to the card, and a view
//! action that opens it (the decision is made on the card, signed in: a push topic may be
//! readable by others, so no action in it decides anything). E-mail goes over SMTP
//! (STARTTLS, TLS or, to a relay on this box, plain), with hal0's TLS roots.
//! A failure is retried after 1, 2, 4, 8 and 16 s; a 4xx answer (other than 408 and 429)
//! is not retried.

use super::targets::Target;
use super::{Event, What};
use crate::base::error::{Error, Kind, Result};
use crate::base::paths::Paths;
use std::time::Duration;

/// The waits before each retry.
pub const BACKOFF: [Duration; 5] = [
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
    Duration::from_secs(8),
    Duration::from_secs(16),
];
const TIMEOUT: Duration = Duration::from_secs(10);

/// How one attempt ended.
#[derive(Debug)]
pub enum Attempt {
    Delivered(String),
    /// Worth another try (a network error, 5xx, 408, 429).
    Retry(Error),
    /// Not worth another (a 4xx, a setting that is wrong).
    Fail(Error),
}

fn failed(msg: String) -> Error {
    Error::new("notify.failed", Kind::BadGateway, msg)
}

fn secret(paths: &Paths, key: Option<&str>, what: &str, id: &str) -> Result<Option<String>> {
    let Some(k) = key else { return Ok(None) };
    crate::base::envfile::get_var(&paths.api_env(), k)?.map(Some).ok_or_else(|| {
        Error::invalid(
            "notify.secret_missing",
            format!("target `{id}` names api.env key `{k}` for its {what}, and api.env has none: set it (hal0 mcp secret set {k}) or remove the target"),
        )
    })
}

/// The webhook signature of `body` sent at `timestamp`.
pub fn signature(secret: &str, timestamp: &str, body: &[u8]) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret.as_bytes());
    let mut ctx = ring::hmac::Context::with_key(&key);
    ctx.update(timestamp.as_bytes());
    ctx.update(b".");
    ctx.update(body);
    format!("sha256={}", hex::encode(ctx.sign().as_ref()))
}

fn client() -> Result<reqwest::Client> {
    crate::base::outbound::build(crate::base::outbound::builder(None)?.timeout(TIMEOUT))
}

/// What an HTTP answer means for the delivery.
fn judged(what: &str, r: std::result::Result<reqwest::Response, reqwest::Error>) -> Attempt {
    match r {
        Ok(r) if r.status().is_success() => Attempt::Delivered(format!("{what} answered {}", r.status())),
        Ok(r) => {
            let s = r.status();
            let e = failed(format!("{what} answered {s}"));
            if s.is_server_error() || s.as_u16() == 408 || s.as_u16() == 429 {
                Attempt::Retry(e)
            } else {
                Attempt::Fail(e)
            }
        }
        Err(e) => Attempt::Retry(failed(format!(
            "{what} does not answer: {}",
            crate::base::redact::redact(&crate::base::outbound::chain(&e))
        ))),
    }
}

async fn webhook(paths: &Paths, t: &Target, e: &Event, delivery: &str) -> Attempt {
    let url = t.url.as_deref().unwrap_or_default();
    let secret = match secret(paths, t.secret_key.as_deref(), "signing secret", &t.id) {
        Ok(s) => s,
        Err(e) => return Attempt::Fail(e),
    };
    let body = match serde_json::to_vec(e) {
        Ok(b) => b,
        Err(err) => return Attempt::Fail(Error::internal(err.to_string())),
    };
    let ts = time::OffsetDateTime::now_utc().unix_timestamp().to_string();
    let client = match client() {
        Ok(c) => c,
        Err(e) => return Attempt::Fail(e),
    };
    let mut req = client
        .post(url)
        .header("content-type", "application/json")
        .header("user-agent", concat!("hal0/", env!("CARGO_PKG_VERSION")))
        .header("x-hal0-event", e.event)
        .header("x-hal0-delivery", delivery)
        .header("x-hal0-timestamp", &ts);
    if let Some(s) = &secret {
        req = req.header("x-hal0-signature", signature(s, &ts, &body));
    }
    judged(&format!("webhook {url}"), req.body(body).send().await)
}

/// A header value without line breaks or non-ASCII (ntfy reads headers as ASCII).
fn header_text(s: &str, max: usize) -> String {
    let t: String = s.chars().map(|c| if c.is_ascii() && !c.is_ascii_control() { c } else { ' ' }).collect();
    t.chars().take(max).collect()
}

async fn ntfy(paths: &Paths, t: &Target, e: &Event) -> Attempt {
    let url = t.url.as_deref().unwrap_or_default();
    let token = match secret(paths, t.token_key.as_deref(), "access token", &t.id) {
        Ok(s) => s,
        Err(e) => return Attempt::Fail(e),
    };
    let client = match client() {
        Ok(c) => c,
        Err(e) => return Attempt::Fail(e),
    };
    let (tags, priority) = match e.what {
        What::Queued => ("hourglass_flowing_sand", "high"),
        What::Withdrawn => ("heavy_multiplication_x", "low"),
        What::Expired => ("hourglass", "default"),
        What::Test => ("white_check_mark", "default"),
    };
    let mut req = client
        .post(url)
        .header("title", header_text(&e.title(), 200))
        .header("tags", tags)
        .header("priority", priority)
        .header("click", &e.url)
        .header("x-hal0-event", e.event);
    if e.what == What::Queued {
        req = req.header("actions", format!("view, Open the card to decide, {}", e.url));
    }
    if let Some(tok) = token {
        req = req.bearer_auth(tok);
    }
    judged(&format!("ntfy {url}"), req.body(e.body()).send().await)
}

async fn email(paths: &Paths, t: &Target, e: &Event) -> Attempt {
    use lettre::transport::smtp::client::{Certificate, CertificateStore, Tls, TlsParameters};
    use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
    let fail = |m: String| Attempt::Fail(Error::invalid("notify.invalid", m));
    let smtp = t.smtp.as_deref().unwrap_or_default();
    let (host, port) = match super::targets::smtp_host_port(smtp) {
        Ok(hp) => hp,
        Err(e) => return Attempt::Fail(e),
    };
    let mut b = Message::builder().subject(e.title()).header(lettre::message::header::ContentType::TEXT_PLAIN);
    match t.from.as_deref().unwrap_or_default().parse() {
        Ok(a) => b = b.from(a),
        Err(err) => return fail(format!("from: {err}")),
    }
    for to in &t.to {
        match to.parse() {
            Ok(a) => b = b.to(a),
            Err(err) => return fail(format!("to `{to}`: {err}")),
        }
    }
    let msg = match b.body(e.body()) {
        Ok(m) => m,
        Err(err) => return fail(format!("the message: {err}")),
    };
    let tls = t.tls.as_deref().unwrap_or("starttls");
    let params = || -> Result<TlsParameters> {
        let mut p = TlsParameters::builder(host.clone()).certificate_store(CertificateStore::None);
        for der in webpki_root_certs::TLS_SERVER_ROOT_CERTS {
            if let Ok(c) = Certificate::from_der(der.as_ref().to_vec()) {
                p = p.add_root_certificate(c);
            }
        }
        p.build_rustls().map_err(|e| failed(format!("TLS for {host}: {e}")))
    };
    let mut tb = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&host).port(port).timeout(Some(TIMEOUT));
    tb = match tls {
        "none" => tb.tls(Tls::None),
        "tls" => match params() {
            Ok(p) => tb.tls(Tls::Wrapper(p)),
            Err(e) => return Attempt::Fail(e),
        },
        _ => match params() {
            Ok(p) => tb.tls(Tls::Required(p)),
            Err(e) => return Attempt::Fail(e),
        },
    };
    if let Some(user) = &t.user {
        match secret(paths, t.password_key.as_deref(), "SMTP password", &t.id) {
            Ok(Some(pw)) => {
                tb = tb.credentials(lettre::transport::smtp::authentication::Credentials::new(user.clone(), pw))
            }
            Ok(None) => {}
            Err(e) => return Attempt::Fail(e),
        }
    }
    match tb.build().send(msg).await {
        Ok(r) => Attempt::Delivered(format!("smtp {smtp} answered {}", r.code())),
        Err(err) if err.is_permanent() => {
            Attempt::Fail(failed(format!("smtp {smtp} refused it: {}", crate::base::redact::redact(&err.to_string()))))
        }
        Err(err) => Attempt::Retry(failed(format!(
            "smtp {smtp}: {}",
            crate::base::redact::redact(&crate::base::outbound::chain(&err))
        ))),
    }
}

/// One attempt to send `e` to `t`.
pub async fn once(paths: &Paths, t: &Target, e: &Event, delivery: &str) -> Attempt {
    match t.kind.as_str() {
        "webhook" => webhook(paths, t, e, delivery).await,
        "ntfy" => ntfy(paths, t, e).await,
        "email" => email(paths, t, e).await,
        k => Attempt::Fail(Error::invalid("notify.invalid", format!("kind `{k}` is not known"))),
    }
}

/// Send `e` to `t`, retrying as [`BACKOFF`] says (`retries`: whether to retry at all).
/// Answers what the last attempt said.
pub async fn deliver(paths: &Paths, t: &Target, e: &Event, retries: bool) -> Result<String> {
    let delivery = crate::base::token::random_base62(22)?;
    let mut waits = BACKOFF.iter();
    loop {
        match once(paths, t, e, &delivery).await {
            Attempt::Delivered(s) => return Ok(s),
            Attempt::Fail(e) => return Err(e),
            Attempt::Retry(err) => match waits.next().filter(|_| retries) {
                Some(w) => {
                    tracing::info!(target_id = %t.id, "notification not delivered, retrying in {w:?}: {}", err.message);
                    tokio::time::sleep(*w).await;
                }
                None => return Err(err),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_covers_the_timestamp_and_the_body() {
        let s = signature("k", "1700000000", b"{}");
        assert!(s.starts_with("sha256=") && s.len() == 7 + 64, "{s}");
        assert_ne!(s, signature("k", "1700000001", b"{}"));
        assert_ne!(s, signature("k", "1700000000", b"{ }"));
        assert_ne!(s, signature("j", "1700000000", b"{}"));
        // RFC 4231 test case 2 (key "Jefe"), as a check of the HMAC itself.
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, b"Jefe");
        let tag = ring::hmac::sign(&key, b"what do ya want for nothing?");
        assert_eq!(hex::encode(tag.as_ref()), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    }
}
