//! The dashboard (`/ui`): a person's sessions, opened by one-time login links printed on
//! the box, and the pages served by `hal0 serve`. A session is the only way a decision on
//! the approvals inbox reaches hal0 over HTTP; no API key can decide.

pub mod account;
pub mod headers;
pub mod pages;
pub mod password;
pub mod session;
