//! The Hermes agent on this box: where its home is, which profiles it has, how to reach
//! each profile's API server (address and key from config.yaml and `.env`), and the HTTP
//! client for that API.

pub mod client;
pub mod profiles;
pub mod wiring;

pub use client::{HermesClient, HermesEvent};
pub use profiles::{Profile, Profiles};
