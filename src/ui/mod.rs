//! The dashboard (`/ui`): the pages served by `hal0 serve` and the routes of a person's
//! own page (their sessions, passwords and passkeys are `crate::auth`'s). A dashboard
//! session is the only way a decision on the approvals inbox reaches hal0 over HTTP; no
//! API key can decide.

pub mod account;
pub mod headers;
pub mod pages;
