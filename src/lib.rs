//! hal0: the Model Context Protocol control point of an AI box.
//!
//! The tree is laid out by layer (the table and its test are `tests/it/layers.rs`):
//!
//! - **fronts** translate and call the operations: the CLI (`cli`), REST and the daemon
//!   (`server`), the MCP servers (`mcp`, hal0-admin's tools among them), the web pages
//!   (`ui`), the A2A face (`a2a`) and the remote client (`remote`);
//! - **operations** (`ops`): every operation hal0 offers, typed, plus the daemon's
//!   background work (`ops::service`), `hal0 doctor` and `hal0 status`;
//! - **domain** modules hold the rules: keys and people (`auth`), `approvals`, `audit`,
//!   agent runs (`bridge`), `config`, the URLs hal0 advertises (`connect`), `hermes`,
//!   `memory`, `notify`, installed MCP servers (`registry`) and the proxy that serves them
//!   (`proxy`), the agent `relay`, `skills` and the SQLite `store`;
//! - **base** (`base`): errors and their codes, paths, the redactor, metrics and traces
//!   (`base::observe`), and small helpers every layer may use.

pub mod a2a;
pub mod approvals;
pub mod audit;
pub(crate) mod auth;
pub mod base;
pub mod bridge;
pub mod cli;
pub(crate) mod config;
pub(crate) mod connect;
pub(crate) mod hermes;
pub(crate) mod mcp;
pub mod memory;
pub(crate) mod notify;
pub mod ops;
pub mod proxy;
pub mod registry;
pub(crate) mod relay;
pub mod remote;
pub(crate) mod server;
pub(crate) mod skills;
pub mod store;
pub(crate) mod ui;
