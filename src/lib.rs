//! hal0: the Model Context Protocol control point of an AI box. Domain modules (`auth`,
//! `config`, `store`, …) hold the rules; the CLI (`cli`), REST and MCP fronts (`server`,
//! `mcp`) translate.

pub mod a2a;
pub mod admin;
pub mod approvals;
pub mod audit;
pub(crate) mod auth;
pub(crate) mod backup;
pub mod bridge;
pub mod cli;
pub mod clients;
pub(crate) mod codes;
pub(crate) mod config;
pub(crate) mod connect;
pub mod doctor;
pub(crate) mod envfile;
pub(crate) mod error;
pub mod exit;
pub(crate) mod filememo;
pub(crate) mod filewatch;
pub(crate) mod hermes;
pub(crate) mod logbuf;
pub(crate) mod logfmt;
pub(crate) mod mcp;
pub mod memory;
pub mod metrics;
pub(crate) mod notify;
pub(crate) mod ops;
pub(crate) mod outbound;
pub(crate) mod paths;
pub(crate) mod progress;
#[cfg(test)]
pub(crate) mod prop;
pub mod redact;
pub mod registry;
pub(crate) mod relay;
pub mod remote;
pub mod retention;
pub(crate) mod secrets;
pub(crate) mod server;
pub(crate) mod service;
pub(crate) mod skills;
pub(crate) mod sse;
pub mod status;
pub mod store;
pub mod telemetry;
pub(crate) mod term;
pub(crate) mod text_enum;
pub(crate) mod ui;
pub(crate) mod unit;
pub(crate) mod weburl;
pub(crate) mod yamledit;
#[cfg(test)]
mod yamledit_props;
