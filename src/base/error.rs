//! The one error type of hal0: a stable dotted code, a kind that maps onto an HTTP status
//! and a CLI exit code, and a human message that says what to do next.

use std::fmt;

/// What sort of failure this is; decides the HTTP status and the CLI exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Bad input from the caller (400, exit 2).
    Invalid,
    /// No credential or a bad one (401, exit 4).
    Unauthorized,
    /// A valid credential without the tier or scope (403, exit 4).
    Forbidden,
    /// The thing named does not exist (404, exit 1).
    NotFound,
    /// The request conflicts with what exists (409, exit 1).
    Conflict,
    /// Too many of something (429, exit 1).
    TooMany,
    /// An operator declined a confirmation, or none could be asked (exit 3).
    Declined,
    /// A dependency (store, file system, upstream) is not available (503, exit 1).
    Unavailable,
    /// Something that should not happen (500, exit 1); details stay in the log.
    Internal,
    /// The request is not supported (501, exit 1).
    Unsupported,
    /// Well-formed but unacceptable input (422, exit 2).
    Unprocessable,
    /// An upstream refused or failed (502, exit 1).
    BadGateway,
    /// A body in a media type the route does not take (415, exit 2).
    UnsupportedMedia,
    /// The request took too long to arrive (408, exit 1).
    RequestTimeout,
    /// The request body is larger than hal0 accepts (413, exit 2).
    TooLarge,
    /// An upstream's own status passed through (exit 1).
    Upstream(u16),
}

/// hal0's error: `code` is stable and spelled exactly as in the spec tables.
#[derive(Debug, Clone)]
pub struct Error {
    pub code: &'static str,
    pub kind: Kind,
    pub message: String,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(code: &'static str, kind: Kind, message: impl Into<String>) -> Self {
        debug_assert!(crate::base::codes::is_listed(code), "error code `{code}` is not listed in src/base/codes.rs");
        Error { code, kind, message: message.into() }
    }
    pub fn invalid(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(code, Kind::Invalid, message)
    }
    pub fn not_found(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(code, Kind::NotFound, message)
    }
    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(code, Kind::Conflict, message)
    }
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new("auth.forbidden", Kind::Forbidden, message)
    }
    /// 403 with a code of its own (a refusal that is not about the key's tier).
    pub fn forbidden_code(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(code, Kind::Forbidden, message)
    }
    /// 401 with a code (a refusal a JSON body explains).
    pub fn unauthorized(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(code, Kind::Unauthorized, message)
    }
    pub fn unavailable(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(code, Kind::Unavailable, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new("internal", Kind::Internal, message)
    }
    pub fn declined(message: impl Into<String>) -> Self {
        Self::new("cli.declined", Kind::Declined, message)
    }

    /// HTTP status for REST and MCP transport answers.
    pub fn status(&self) -> u16 {
        match self.kind {
            Kind::Invalid => 400,
            Kind::Unauthorized => 401,
            Kind::Forbidden => 403,
            Kind::NotFound => 404,
            Kind::Conflict => 409,
            Kind::TooMany => 429,
            Kind::Declined => 409,
            Kind::Unavailable => 503,
            Kind::Internal => 500,
            Kind::Unsupported => 501,
            Kind::Unprocessable => 422,
            Kind::BadGateway => 502,
            Kind::UnsupportedMedia => 415,
            Kind::RequestTimeout => 408,
            Kind::TooLarge => 413,
            Kind::Upstream(s) => s,
        }
    }

    /// `{"error":{"code","message"}}`, the REST body. The message is outward text, so it
    /// passes the redactor (a value quoted back from the caller's input or an upstream's
    /// answer may hold a credential).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({"error": {"code": self.code, "message": crate::base::redact::redact(&self.message)}})
    }

    /// Wrap an I/O failure on `path` with a message naming the file.
    pub fn io(code: &'static str, what: &str, path: &std::path::Path, e: std::io::Error) -> Self {
        let kind = match e.kind() {
            std::io::ErrorKind::PermissionDenied => Kind::Forbidden,
            _ => Kind::Unavailable,
        };
        let hint = match e.kind() {
            std::io::ErrorKind::PermissionDenied => {
                " (run as the user that owns it, or point --config-dir/--state-dir elsewhere)"
            }
            _ => "",
        };
        Error::new(code, kind, format!("cannot {what} {}: {e}{hint}", path.display()))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for Error {}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull) {
            tracing::error!("the store is full: {e}");
            return Error::unavailable(
                "store.full",
                "the store is full (hal0.db reached [store].max_size_mb, or its disk is full): nothing was changed; \
                 free space with hal0 store prune, shorten the retention windows, or raise [store].max_size_mb",
            );
        }
        tracing::error!(error = %e, "store error");
        Error::unavailable("store.unavailable", format!("the store failed: {e}"))
    }
}

/// A REST answer: the status of the kind and the `{"error":{"code","message"}}` body.
impl axum::response::IntoResponse for Error {
    fn into_response(self) -> axum::response::Response {
        let status =
            axum::http::StatusCode::from_u16(self.status()).unwrap_or(axum::http::StatusCode::INTERNAL_SERVER_ERROR);
        (status, axum::Json(self.to_json())).into_response()
    }
}
