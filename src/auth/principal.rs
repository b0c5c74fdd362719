//! Who a request is (the credential it carries) and whether its route admits it: the tier
//! table of the spec, decided in one place for REST and MCP alike.

use super::boxkeys::BoxKeys;
use super::bridge::{self, Client, Scope};
use crate::base::actor::Actor;
use crate::base::error::Result;
use crate::base::token::ct_eq;
use crate::store::Store;

/// The credential a request carried, after checking it.
#[derive(Debug, Clone, PartialEq)]
pub enum Credential {
    /// No `Authorization` header.
    None,
    /// A bearer that matches no live key (unknown, rotated away, revoked).
    Invalid,
    Admin,
    Client,
    Bridge(Client),
    /// A key hal0 minted for one consumer of one proxied server (`hal0pk_…`).
    Consumer(crate::auth::consumers::Consumer),
    /// A person: a live dashboard session (its cookie, no `Authorization` header).
    Person(crate::auth::session::Session),
    /// An OAuth access token: one mount, the scopes a person granted, as a bridge client.
    Grant(super::oauth::grants::Grant),
}

impl Credential {
    /// Resolve an `Authorization` header value against the box keys and the bridge table.
    pub fn resolve(header: Option<&str>, keys: &BoxKeys, store: &Store) -> Result<Credential> {
        let Some(h) = header else { return Ok(Credential::None) };
        let Some(token) = bearer(h) else { return Ok(Credential::Invalid) };
        if token.starts_with(bridge::KEY_PREFIX) {
            return Ok(bridge::lookup(store, token)?.map(Credential::Bridge).unwrap_or(Credential::Invalid));
        }
        if token.starts_with(super::oauth::ACCESS_PREFIX) {
            return Ok(super::oauth::grants::lookup_access(store, token)?
                .map(Credential::Grant)
                .unwrap_or(Credential::Invalid));
        }
        if token.starts_with(crate::auth::consumers::KEY_PREFIX) {
            return Ok(crate::auth::consumers::lookup(store, token)?
                .map(Credential::Consumer)
                .unwrap_or(Credential::Invalid));
        }
        if keys.admin.as_deref().is_some_and(|k| ct_eq(k, token)) {
            return Ok(Credential::Admin);
        }
        if keys.client.as_deref().is_some_and(|k| ct_eq(k, token)) {
            return Ok(Credential::Client);
        }
        Ok(Credential::Invalid)
    }

    /// The bridge client a bridge key or an OAuth grant acts as (a grant's with the grant's
    /// scopes).
    pub fn as_bridge(&self) -> Option<&Client> {
        match self {
            Credential::Bridge(c) => Some(c),
            Credential::Grant(g) => Some(&g.bridge),
            _ => None,
        }
    }

    /// Identity for audit and namespaces: the client name for a bridge key, else the
    /// `X-hal0-Agent` header when well-formed, else `anonymous`.
    pub fn identity(&self, agent_header: Option<&str>) -> String {
        match self {
            Credential::Bridge(c) => c.name.clone(),
            Credential::Grant(g) => g.bridge.name.clone(),
            Credential::Consumer(c) => c.name.clone(),
            Credential::Person(p) => p.identity(),
            _ => agent_header.filter(|a| valid_agent(a)).unwrap_or("anonymous").to_string(),
        }
    }

    /// A short label for logs (never the key).
    pub fn label(&self) -> String {
        match self {
            Credential::None => "none".into(),
            Credential::Invalid => "invalid".into(),
            Credential::Admin => "admin".into(),
            Credential::Client => "client".into(),
            Credential::Bridge(c) => Actor::Bridge(c.name.clone()).to_string(),
            Credential::Consumer(c) => Actor::Consumer(format!("{}/{}", c.server, c.name)).to_string(),
            Credential::Person(p) => p.identity(),
            Credential::Grant(g) => Actor::Oauth(format!("{}/{}", g.bridge.name, g.id)).to_string(),
        }
    }
}

/// `X-hal0-Agent` must match `^[a-zA-Z0-9_-]{1,64}$`.
pub fn valid_agent(s: &str) -> bool {
    !s.is_empty() && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn bearer(h: &str) -> Option<&str> {
    let (scheme, rest) = h.trim().split_once(' ')?;
    let token = rest.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// The tier class of a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteClass {
    /// Answers anyone (`GET /api/health`).
    Open,
    /// `/api/bridge/me`: bridge keys only.
    BridgeSelf,
    /// `/mcp/agents/*`: a bridge key or the admin key, even when auth is off.
    Agents,
    /// `/mcp/memory/*`: CLIENT tier, or a bridge key with `memory`.
    Memory,
    /// `/mcp/admin/*`: ADMIN tier, or a bridge key with `admin`.
    AdminMcp,
    /// `/mcp/proxy/<id>/*`: a consumer key minted for `<id>` or the admin key, even when
    /// auth is off (the guard checks the key's server against the path).
    Proxy,
    /// `/mcp/relay/*` and the bots' WebSocket `/bridge/connect`: a bridge key holding the
    /// `relay` scope (a bot), even when auth is off (the key names the bot).
    Relay,
    /// The dashboard (`/ui` and everything under it but `/ui/login`): anyone reaches it; a
    /// page shows itself to a person and how to sign in to anyone else.
    Page,
    /// `POST /api/agent/approvals/{id}/approve|deny`: a person (a dashboard session) only;
    /// no key of any kind, and no anonymous caller, even when auth is off.
    Decide,
    /// Every other route: ADMIN tier (or a person); bridge keys refused.
    Admin,
}

impl RouteClass {
    /// Classify a request path (deny by default: unknown paths are `Admin`).
    pub fn of(path: &str) -> RouteClass {
        let p = path.trim_end_matches('/');
        match p {
            // `/` (trimmed to ``) says where things are, and nothing else.
            "" | "/api/health" | "/ui/login" | "/ui/login/passkey" => RouteClass::Open,
            // OAuth's own endpoints check the client themselves; its metadata is public.
            "/oauth/authorize" | "/oauth/token" | "/oauth/revoke" | "/oauth/register" => RouteClass::Open,
            // hal0 as an OAuth client: the callback is bound to its `state`, the client
            // document is public.
            "/upstream-oauth/callback" | "/upstream-oauth/client.json" => RouteClass::Open,
            _ if under(p, "/oauth/register") || under(p, "/.well-known") => RouteClass::Open,
            // A start link carries its own sealed token (a consumer's delegated account).
            _ if under(p, "/upstream-oauth/start") => RouteClass::Open,
            _ if is_consent(p) => RouteClass::Decide,
            _ if under(p, "/oauth/requests") => RouteClass::Page,
            _ if under(p, "/oauth/agents") => RouteClass::Agents,
            _ if under(p, "/oauth/memory") => RouteClass::Memory,
            _ if under(p, "/oauth/admin") => RouteClass::AdminMcp,
            _ if under(p, "/ui") => RouteClass::Page,
            "/api/bridge/me" => RouteClass::BridgeSelf,
            _ if under(p, "/mcp/agents") => RouteClass::Agents,
            // A2A: a profile's card is public, its interface takes the agents mount's keys.
            _ if under(p, "/a2a") && p.ends_with("/.well-known/agent-card.json") => RouteClass::Open,
            "/a2a/agents" => RouteClass::Open,
            _ if under(p, "/a2a/relay") => RouteClass::Relay,
            _ if under(p, "/a2a") => RouteClass::Agents,
            _ if under(p, "/mcp/memory") => RouteClass::Memory,
            _ if under(p, "/mcp/admin") => RouteClass::AdminMcp,
            _ if under(p, "/mcp/proxy") => RouteClass::Proxy,
            _ if under(p, "/mcp/relay") || p == "/bridge/connect" => RouteClass::Relay,
            _ if is_decision(p) => RouteClass::Decide,
            _ => RouteClass::Admin,
        }
    }
}

/// `/oauth/requests/<id>/approve` or `…/deny`: a person's consent to an OAuth client.
fn is_consent(p: &str) -> bool {
    let Some(rest) = p.strip_prefix("/oauth/requests/") else { return false };
    matches!(rest.split_once('/'), Some((id, "approve" | "deny")) if !id.is_empty())
}

/// `/api/agent/approvals/<id>/approve` or `…/deny`.
fn is_decision(p: &str) -> bool {
    let Some(rest) = p.strip_prefix("/api/agent/approvals/") else { return false };
    matches!(rest.split_once('/'), Some((id, "approve" | "deny")) if !id.is_empty())
}

fn under(p: &str, prefix: &str) -> bool {
    p == prefix || p.strip_prefix(prefix).is_some_and(|r| r.starts_with('/'))
}

/// The outcome of the tier check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow,
    /// Bare 401: no credential where one is needed, or a bad one.
    Unauthorized,
    /// 403 `auth.forbidden` with a message saying what is missing.
    Forbidden(String),
}

fn scope_check(c: &Client, scope: Scope) -> Decision {
    if c.scopes.contains(&scope) {
        Decision::Allow
    } else {
        Decision::Forbidden(format!(
            "bridge client `{}` does not hold the `{}` scope (an operator can grant it: hal0 bridge scopes {} ...)",
            c.name,
            scope.as_str(),
            c.name
        ))
    }
}

/// Why a key cannot decide an approval, and who can.
pub const PERSON_DECIDES: &str = "a person decides: approve or deny in the dashboard (open a session with \
     `hal0 ui login` on the box) or with `hal0 agent approvals approve|deny ID` on the box; no API key can decide";

/// Decide whether `cred` may use a route of `class`, with auth `armed` or not.
pub fn decide(class: RouteClass, cred: &Credential, armed: bool) -> Decision {
    use Credential as C;
    use Decision::*;
    if class == RouteClass::Open {
        return Allow;
    }
    if *cred == C::Invalid {
        return Unauthorized;
    }
    match (class, cred) {
        (RouteClass::Open, _) => Allow,
        (RouteClass::Page, _) => Allow,
        (RouteClass::Decide, C::Person(_)) => Allow,
        (RouteClass::Decide, C::None) => Unauthorized,
        (RouteClass::Decide, _) => Forbidden(PERSON_DECIDES.into()),
        (RouteClass::Admin, C::Person(_)) => Allow,
        (_, C::Person(_)) => Forbidden("a dashboard session opens the dashboard and /api, not MCP servers".into()),
        (RouteClass::Agents | RouteClass::Memory | RouteClass::AdminMcp, C::Grant(g)) => {
            let need = match class {
                RouteClass::Agents => Scope::Agents,
                RouteClass::Memory => Scope::Memory,
                _ => Scope::Admin,
            };
            if g.scopes.contains(&need) {
                Allow
            } else {
                Forbidden(format!(
                    "this OAuth grant does not hold the `{}` scope: authorize again and tick it",
                    need.as_str()
                ))
            }
        }
        (_, C::Grant(_)) => Forbidden("an OAuth token opens only the MCP server it was issued for".into()),
        (RouteClass::Proxy, C::Admin | C::Consumer(_)) => Allow,
        (RouteClass::Proxy, C::None) => Unauthorized,
        (RouteClass::Proxy, _) => Forbidden(
            "hal0's MCP proxy needs a consumer key minted for this server (hal0 mcp keys add) or the admin key".into(),
        ),
        (_, C::Consumer(_)) => Forbidden("a proxy consumer key opens only /mcp/proxy/<its server>/mcp".into()),
        (RouteClass::Relay, C::Bridge(c)) => scope_check(c, Scope::Relay),
        (RouteClass::Relay, C::None) => Unauthorized,
        (RouteClass::Relay, _) => Forbidden(
            "the relay answers bots: a bridge key holding the relay scope (hal0 bridge add NAME --scope relay)".into(),
        ),
        (RouteClass::BridgeSelf, C::Bridge(_)) => Allow,
        (RouteClass::BridgeSelf, C::None) => Unauthorized,
        (RouteClass::BridgeSelf, _) => Forbidden("this route answers bridge keys only".into()),
        (RouteClass::Agents, C::Bridge(c)) => scope_check(c, Scope::Agents),
        (RouteClass::Agents, C::Admin) => Allow,
        (RouteClass::Agents, C::None) => Unauthorized,
        (RouteClass::Agents, _) => Forbidden("hal0-agents needs a bridge key or the admin key".into()),
        (RouteClass::Memory, C::Bridge(c)) => scope_check(c, Scope::Memory),
        (RouteClass::Memory, C::Admin | C::Client) => Allow,
        (RouteClass::AdminMcp, C::Bridge(c)) => scope_check(c, Scope::Admin),
        (RouteClass::AdminMcp | RouteClass::Admin, C::Admin) => Allow,
        (RouteClass::Admin, C::Bridge(_)) => {
            Forbidden("a bridge key opens only its MCP servers and /api/bridge/me".into())
        }
        (RouteClass::Memory | RouteClass::AdminMcp | RouteClass::Admin, C::None) => {
            if armed {
                Unauthorized
            } else {
                Allow
            }
        }
        (RouteClass::AdminMcp | RouteClass::Admin, C::Client) => {
            if armed {
                Forbidden("this route needs the admin key".into())
            } else {
                Allow
            }
        }
        (_, C::Invalid) => Unauthorized,
    }
}

/// The second half of the decision for `/mcp/proxy/<id>/…`, once `id` is known: a consumer
/// key opens only the server it was minted for.
pub fn decide_proxy(id: &str, cred: &Credential) -> Decision {
    match cred {
        Credential::Consumer(c) if c.server != id => Decision::Forbidden(format!(
            "this consumer key was minted for `{}`, not `{id}` (hal0 mcp keys add {id} NAME mints one)",
            c.server
        )),
        _ => Decision::Allow,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify() {
        assert_eq!(RouteClass::of("/api/health"), RouteClass::Open);
        assert_eq!(RouteClass::of("/"), RouteClass::Open);
        assert_eq!(RouteClass::of("/api/health/"), RouteClass::Open);
        assert_eq!(RouteClass::of("/mcp/agents/mcp"), RouteClass::Agents);
        assert_eq!(RouteClass::of("/mcp/agentsx/mcp"), RouteClass::Admin);
        assert_eq!(RouteClass::of("/mcp/memory"), RouteClass::Memory);
        assert_eq!(RouteClass::of("/api/anything"), RouteClass::Admin);
        assert_eq!(RouteClass::of("/mcp/proxy/files/mcp"), RouteClass::Proxy);
        assert_eq!(RouteClass::of("/mcp/proxyx/files/mcp"), RouteClass::Admin);
        assert_eq!(RouteClass::of("/mcp/relay/mcp"), RouteClass::Relay);
        assert_eq!(RouteClass::of("/bridge/connect"), RouteClass::Relay);
        assert_eq!(RouteClass::of("/bridge/connectx"), RouteClass::Admin);
        assert_eq!(RouteClass::of("/api/agent/approvals/ap_1/approve"), RouteClass::Decide);
        assert_eq!(RouteClass::of("/api/agent/approvals/ap_1/deny/"), RouteClass::Decide);
        assert_eq!(RouteClass::of("/oauth/requests/oar_1/approve"), RouteClass::Decide);
        assert_eq!(RouteClass::of("/oauth/requests/oar_1"), RouteClass::Page);
        assert_eq!(RouteClass::of("/oauth/token"), RouteClass::Open);
        assert_eq!(RouteClass::of("/oauth/register/oc_1"), RouteClass::Open);
        assert_eq!(RouteClass::of("/oauth/memory/mcp"), RouteClass::Memory);
        assert_eq!(RouteClass::of("/oauth/admin/mcp"), RouteClass::AdminMcp);
        assert_eq!(RouteClass::of("/oauth/relay/mcp"), RouteClass::Admin);
        assert_eq!(RouteClass::of("/oauth/tokens"), RouteClass::Admin);
        assert_eq!(RouteClass::of("/api/agent/approvals/ap_1"), RouteClass::Admin);
        assert_eq!(RouteClass::of("/api/agent/approvals//approve"), RouteClass::Admin);
    }

    #[test]
    fn bearer_parsing() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer   abc "), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("Bearer"), None);
    }

    #[test]
    fn agent_header() {
        assert!(valid_agent("my-agent_1"));
        assert!(!valid_agent(""));
        assert!(!valid_agent("a b"));
        assert!(!valid_agent(&"a".repeat(65)));
        assert_eq!(Credential::Admin.identity(Some("bad agent")), "anonymous");
        assert_eq!(Credential::None.identity(Some("ok")), "ok");
    }
}
