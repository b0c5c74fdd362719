//! The base layer: what every other layer may use and which uses nothing above it. Errors
//! and their stable codes, exit statuses, the box's paths, the redactor and log format,
//! outbound HTTP, SSE parsing, terminal helpers, file watching and memoizing, the YAML
//! editor, and the metrics and traces every layer reports to (`observe`).

pub(crate) mod actor;
pub(crate) mod codes;
pub(crate) mod envfile;
pub(crate) mod error;
pub mod exit;
pub(crate) mod filememo;
pub(crate) mod filewatch;
pub(crate) mod logbuf;
pub(crate) mod logfmt;
pub mod observe;
pub(crate) mod outbound;
pub(crate) mod paths;
pub(crate) mod progress;
#[cfg(test)]
pub(crate) mod prop;
pub mod redact;
pub(crate) mod sse;
pub mod ssrf;
pub(crate) mod term;
pub(crate) mod text_enum;
pub(crate) mod token;
pub(crate) mod weburl;
pub(crate) mod yamledit;
#[cfg(test)]
mod yamledit_props;
