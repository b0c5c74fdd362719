//! hal0: the Model Context Protocol control point of an AI box. Domain modules (`auth`,
//! `config`, `store`, …) hold the rules; the CLI (`cli`), REST and MCP fronts (`server`,
//! `mcp`) translate.

pub mod admin;
pub mod approvals;
pub mod audit;
pub mod audit_writer;
pub mod auth;
pub mod bridge;
pub mod cli;
pub mod codes;
pub mod config;
pub mod connect;
pub mod doctor;
pub mod envfile;
pub mod error;
pub mod filememo;
pub mod hermes;
pub mod logbuf;
pub mod mcp;
pub mod memory;
pub mod ops;
pub mod outbound;
pub mod paths;
pub mod progress;
#[cfg(test)]
pub(crate) mod prop;
pub mod redact;
pub mod registry;
pub mod server;
pub mod service;
pub mod skills;
pub mod sse;
pub mod store;
pub mod term;
pub mod weburl;
pub mod yamledit;
#[cfg(test)]
mod yamledit_props;
