//! Authentication and authorization: box keys (`api.env`), bridge keys (per-client, hashed
//! in the store), the principal a request resolves to, the route tiers, and the host and
//! origin allowlists of the MCP mounts, OAuth 2.1 for clients that speak only that, and
//! the dashboard's people, passwords, passkeys and sessions.

pub mod boxkeys;
pub mod bridge;
pub mod consumers;
pub mod exposure;
pub mod hosts;
pub mod keycache;
pub mod oauth;
pub mod passkey;
pub mod password;
pub mod people;
pub mod principal;
pub mod secrets;
pub mod session;

pub use principal::{Credential, Decision, RouteClass, decide};
