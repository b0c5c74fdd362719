//! The headers every `/ui` answer carries (pages, sign-in, sign-out, assets, refusals and
//! errors alike), set by one layer around the whole router, outside the guard, so nothing
//! under `/ui` answers without them:
//!
//! - `Content-Security-Policy` [`CSP`]: scripts, styles, fetches and images from hal0's
//!   own origin only (the pages keep their scripts and style sheet under `/ui/assets/`; no
//!   inline script or style runs), no plugins, no `<base>`, forms to hal0 only, and
//!   `frame-ancestors 'none'`: no other page, even one on another port of this box, can
//!   frame the dashboard and turn a click on its own page into one on Approve.
//! - `X-Frame-Options: DENY`, the same for browsers without CSP level 2.
//! - `X-Content-Type-Options: nosniff`: a file is run or styled only as its stated type.
//! - `Referrer-Policy: no-referrer`: no dashboard address (a sign-in link's token) leaves in
//!   a `Referer`.

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;

/// The dashboard's Content-Security-Policy.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; \
     connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// Whether `path` is the dashboard's.
pub fn is_ui(path: &str) -> bool {
    path == "/ui" || path.starts_with("/ui/")
}

/// Set the dashboard's headers on an answer (replacing any of the same name).
pub fn apply(h: &mut HeaderMap) {
    let set: [(HeaderName, &'static str); 4] = [
        (header::CONTENT_SECURITY_POLICY, CSP),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
    ];
    for (name, value) in set {
        h.insert(name, HeaderValue::from_static(value));
    }
}

/// The layer: every answer to a `/ui` path gets [`apply`]'s headers.
pub async fn layer(req: Request, next: Next) -> Response {
    let ui = is_ui(req.uri().path());
    let mut r = next.run(req).await;
    if ui {
        apply(r.headers_mut());
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_forbids_framing_and_inline_script() {
        assert!(is_ui("/ui") && is_ui("/ui/") && is_ui("/ui/assets/common.js") && !is_ui("/uix") && !is_ui("/api"));
        let mut h = HeaderMap::new();
        h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("SAMEORIGIN"));
        apply(&mut h);
        assert_eq!(h[header::X_FRAME_OPTIONS], "DENY");
        let csp = h[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
        assert!(csp.contains("frame-ancestors 'none'") && csp.contains("script-src 'self';"), "{csp}");
        assert!(!csp.contains("unsafe-"), "{csp}");
    }
}
