//! hal0's integration tests, built as one test binary (`it`) so the harness in `support/`
//! (the fake Hermes, the upstream MCP servers, the TLS CA) compiles and links once.
//! One module per area; each keeps the doc comment saying what it covers. Run one area
//! with a filter on the module path, e.g. `cargo nextest run -E 'test(/^proxy::/)'` or
//! `cargo test --test it proxy::`.

mod support;

mod a2a;
mod activity;
mod admin;
mod approvals_bound;
mod auth_matrix;
mod backup;
mod bridge;
mod claude_code;
mod cli;
mod completion;
mod concurrent_writes;
mod conformance;
mod dashboard;
mod dashboard_pages;
mod doctor;
mod exhaustion;
mod expose;
mod external_clients;
mod fake_hermes_selftest;
mod generated_docs;
mod hermes_e2e;
mod hermes_proxy_e2e;
mod hosts;
mod journal;
mod lan;
mod layers;
mod live_changes;
mod manners;
mod memory;
mod metrics;
mod notify;
mod oauth;
mod one_road;
mod package;
mod people;
mod pinned_installs;
mod pins;
mod progress;
mod proxy;
mod proxy_protocol;
mod proxy_tasks;
mod proxy_wire;
mod registry;
mod relay;
mod relay_cluster;
mod relay_hermes;
mod relay_langfuse;
mod reload;
mod remote;
mod reprovision;
mod retention;
mod rmcp_client;
mod security;
mod skills_teach;
mod snapshots;
mod sse_upstream;
mod supervisor;
mod symlinks;
mod teach;
mod telemetry;
mod tls;
mod upgrade;
mod upstream_oauth;
mod upstream_selftest;
