//! Watching hal0 from outside: Prometheus metrics (`GET /metrics`) and OpenTelemetry
//! traces of MCP calls.

pub mod metrics;
pub mod telemetry;
