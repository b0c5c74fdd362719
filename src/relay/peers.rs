//! A2A agents elsewhere that the relay's bots may ask (issue 38, outbound). An operator adds
//! one (`hal0 relay peer add URL`): its Agent Card is fetched behind the SSRF guard (the
//! host the operator typed is trusted, as a configured mirror is; nothing else is) and kept
//! with its JSON-RPC interface, which must be on that same host. A bot then asks it as
//! `a2a/<name>` with `ask_agent`: the ask becomes an A2A `SendMessage` (its
//! `conversation_id` the `contextId`), and the answer is the agent's reply message, or the
//! output of the task it completed (followed with `GetTask` while it works, within the
//! ask's window).

use super::{Failure, Refusal};
use crate::base::error::{Error, Result};
use crate::base::ssrf::{self, FetchLimits, Guard};
use crate::store::{Store, now};
use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;
use tokio::time::Instant;

/// How a peer is named among the relay's agents: `a2a/<name>`.
pub const PREFIX: &str = "a2a/";
/// Where a card is, under an agent's base URL (A2A's well-known path).
pub const CARD_PATH: &str = "/.well-known/agent-card.json";
/// The largest answer read from a peer.
const MAX_ANSWER_BYTES: usize = super::MAX_MESSAGE_BYTES + 64 * 1024;
/// How often a working task is read again.
const POLL: Duration = Duration::from_secs(1);

/// Whether `name` names a peer (`a2a/<name>`).
pub fn is_peer(name: &str) -> bool {
    name.starts_with(PREFIX)
}

/// An A2A agent elsewhere, as added.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Peer {
    /// Its name here (bots ask `a2a/<name>`).
    pub name: String,
    pub card_url: String,
    /// Its JSON-RPC interface.
    pub url: String,
    /// The name the card gives itself.
    pub agent_name: String,
    pub description: String,
    /// The secret (in api.env) sent as its bearer credential.
    pub secret: Option<String>,
    /// Its host was on a private or loopback address when added (the operator chose it):
    /// only then do later calls let a non-public address through. A public name that later
    /// resolves to a private address is refused (DNS rebinding).
    pub trust_host: bool,
    pub added_at: String,
}

fn invalid(code: &'static str, why: String) -> Error {
    Error::invalid(code, why)
}

/// A peer's name: like a bridge client's (lower-case letters, digits, `_`, `-`, 1 to 32).
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 32
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    if !ok {
        return Err(invalid(
            "relay.invalid_peer_name",
            format!(
                "`{}` is not a peer name: use 1 to 32 lower-case letters, digits, `_` or `-`",
                crate::base::term::safe_line(name)
            ),
        ));
    }
    Ok(())
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Peer> {
    let card: Value = serde_json::from_str(&r.get::<_, String>(3)?).unwrap_or(Value::Null);
    Ok(Peer {
        name: r.get(0)?,
        card_url: r.get(1)?,
        url: r.get(2)?,
        agent_name: card["name"].as_str().unwrap_or_default().to_string(),
        description: card["description"].as_str().unwrap_or_default().to_string(),
        secret: r.get(4)?,
        trust_host: r.get(5)?,
        added_at: r.get(6)?,
    })
}

const COLS: &str = "name, card_url, url, card, secret, trust_host, added_at";

pub fn list(store: &Store) -> Result<Vec<Peer>> {
    store.with(|c| {
        let mut st = c.prepare(&format!("SELECT {COLS} FROM relay_peers ORDER BY name"))?;
        Ok(st.query_map([], row)?.collect::<rusqlite::Result<Vec<_>>>()?)
    })
}

pub fn get(store: &Store, name: &str) -> Result<Option<Peer>> {
    store.with(|c| {
        Ok(c.query_row(&format!("SELECT {COLS} FROM relay_peers WHERE name = ?1"), [name], row).optional()?)
    })
}

/// Remove peer `name`'s row; whether there was one.
fn remove(store: &Store, name: &str) -> Result<bool> {
    store.with(|c| Ok(c.execute("DELETE FROM relay_peers WHERE name = ?1", [name])? > 0))
}

/// The api.env name of peer `name`'s credential (`a-b` and `a_b` would share one: the
/// column is unique, so the second is refused).
fn secret_name(name: &str) -> String {
    format!("HAL0_A2A_PEER_{}", name.to_ascii_uppercase().replace('-', "_"))
}

/// Add peer `name` from `card`, its credential `token` (if any) kept in `api_env` only.
/// Nothing is left half-written: a credential that cannot be stored takes the row back.
pub fn add(store: &Store, api_env: &Path, name: &str, card: &Card, token: Option<&str>) -> Result<Peer> {
    check_name(name)?;
    let secret = token.map(|_| secret_name(name));
    let peer = insert(store, name, card, secret.as_deref())?;
    if let (Some(var), Some(token)) = (&secret, token)
        && let Err(e) = crate::base::envfile::set_vars(api_env, &[(var.as_str(), token)])
    {
        if let Err(back) = remove(store, name) {
            tracing::error!(code = back.code, "peer {name} is kept without its credential: {}", back.message);
        }
        return Err(e);
    }
    Ok(peer)
}

/// Forget peer `name`: its credential first (never a token left for a peer that is gone),
/// then its row. Whether there was one.
pub fn forget(store: &Store, api_env: &Path, name: &str) -> Result<bool> {
    let Some(peer) = get(store, name)? else { return Ok(false) };
    if let Some(var) = &peer.secret {
        crate::base::envfile::remove_vars(api_env, &[var.as_str()])?;
    }
    remove(store, name)
}

/// A fetched card, checked: where it was, the card, its JSON-RPC interface, and whether
/// its host is on a non-public address.
pub struct Card {
    pub card_url: String,
    pub card: Value,
    pub url: String,
    pub trust_host: bool,
}

/// The card URL for `url`: itself when it names a card, else the card under it.
fn card_url(url: &str) -> String {
    if url.ends_with(CARD_PATH) { url.to_string() } else { format!("{}{CARD_PATH}", url.trim_end_matches('/')) }
}

fn host_port(url: &str) -> Option<(String, Option<u16>)> {
    let u = reqwest::Url::parse(url).ok()?;
    Some((u.host_str()?.to_ascii_lowercase(), u.port_or_known_default()))
}

/// Check a card: an A2A 1.x JSON-RPC interface on the card's own host. The interface URL.
pub fn interface_of(card: &Value, card_url: &str) -> Result<String> {
    let bad = |why: &str| invalid("relay.peer_card_invalid", format!("the card at {card_url} {why}"));
    if !card.is_object() || card["name"].as_str().is_none_or(str::is_empty) {
        return Err(bad("is not an A2A Agent Card (no name)"));
    }
    let interfaces = card["supportedInterfaces"].as_array().ok_or_else(|| bad("lists no supportedInterfaces"))?;
    let jsonrpc = interfaces.iter().find(|i| {
        let version = i["protocolVersion"].as_str().unwrap_or("");
        i["protocolBinding"] == "JSONRPC" && (version == "1" || version.starts_with("1."))
    });
    let url = jsonrpc
        .and_then(|i| i["url"].as_str())
        .ok_or_else(|| bad("offers no JSON-RPC interface of A2A 1.x (hal0 speaks A2A 1.0 over JSON-RPC)"))?;
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return Err(bad(&format!("names an interface that is not an http(s) URL: {url}")));
    }
    if host_port(url) != host_port(card_url) {
        return Err(Error::invalid(
            "relay.peer_host_mismatch",
            format!(
                "the card at {card_url} sends tasks to {url}, another host than the card's: hal0 sends only to the host \
                 you added (add the agent by its interface's own URL)"
            ),
        ));
    }
    Ok(url.to_string())
}

/// Fetch and check the card at (or under) `url`, behind the guard (trusting `url`'s host).
pub async fn fetch_card(url: &str) -> Result<Card> {
    let card_url = card_url(url);
    let limits = FetchLimits { timeout: Duration::from_secs(10), ..Default::default() };
    let (_, body) = ssrf::fetch(&Guard::trusting_url(&card_url), &card_url, limits).await?;
    let card: Value = serde_json::from_slice(&body)
        .map_err(|e| invalid("relay.peer_card_invalid", format!("the card at {card_url} is not JSON: {e}")))?;
    let url = interface_of(&card, &card_url)?;
    // The operator typed this host: a private or loopback one is theirs to choose, and is
    // trusted from now on; a public one must stay public.
    let trust_host = match reqwest::Url::parse(&card_url)
        .ok()
        .and_then(|u| Some((u.host_str()?.to_string(), u.port_or_known_default()?)))
    {
        Some((host, port)) => Guard::system().check(&host, port).is_err(),
        None => false,
    };
    Ok(Card { card_url, card, url, trust_host })
}

/// The guard of calls to `peer`: its host let through only when it was private when added.
fn guard(peer: &Peer) -> Guard {
    if peer.trust_host { Guard::trusting_url(&peer.card_url) } else { Guard::system() }
}

/// Store peer `name` with `card`; `relay.peer_exists` when the name (or the api.env name
/// of its credential) is taken.
fn insert(store: &Store, name: &str, card: &Card, secret: Option<&str>) -> Result<Peer> {
    let at = now();
    store.with(|c| {
        let n = c.execute(
            "INSERT INTO relay_peers (name, card_url, url, card, secret, trust_host, added_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING",
            params![name, card.card_url, card.url, card.card.to_string(), secret, card.trust_host, at],
        )?;
        if n == 0 {
            return Err(Error::conflict(
                "relay.peer_exists",
                format!(
                    "a peer named {name} (or one whose credential would be stored under the same api.env name) exists: \
                     remove it first (hal0 relay peer remove NAME) or choose another name"
                ),
            ));
        }
        Ok(())
    })?;
    get(store, name)?.ok_or_else(|| Error::internal("the peer just added is gone"))
}

/// The text of an A2A message's (or artifact's) parts.
fn text_of(parts: &Value) -> String {
    parts.as_array().into_iter().flatten().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n")
}

/// What a task says: its output when completed, else why not.
fn settled(task: &Value) -> Option<std::result::Result<String, Refusal>> {
    let state = task["status"]["state"].as_str().unwrap_or("");
    let said = text_of(&task["status"]["message"]["parts"]);
    match state {
        "TASK_STATE_COMPLETED" => {
            let out: Vec<String> =
                task["artifacts"].as_array().into_iter().flatten().map(|a| text_of(&a["parts"])).collect();
            Some(Ok(if out.iter().all(String::is_empty) { said } else { out.join("\n") }))
        }
        // The agent asks back: that question is its answer (the bot can ask again).
        "TASK_STATE_INPUT_REQUIRED" => Some(Ok(said)),
        "TASK_STATE_FAILED" | "TASK_STATE_CANCELED" | "TASK_STATE_REJECTED" | "TASK_STATE_AUTH_REQUIRED" => {
            let why = if said.is_empty() { String::new() } else { format!(": {said}") };
            Some(Err(Refusal::new(Failure::AgentFailed, format!("the task ended {state}{why}"))))
        }
        _ => None,
    }
}

/// One JSON-RPC call to `peer`: its `result`, or a refusal saying what went wrong.
async fn call(
    peer: &Peer,
    token: Option<&str>,
    method: &str,
    params: Value,
    left: Duration,
) -> std::result::Result<Value, Refusal> {
    let offline = |why: String| Refusal::new(Failure::AgentOffline, format!("{} cannot be reached: {why}", peer.name));
    let limits = FetchLimits { timeout: left.max(Duration::from_secs(1)), ..Default::default() };
    let (url, client) = ssrf::pinned_client(&guard(peer), &peer.url, &limits).map_err(|e| offline(e.message))?;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut req = client.post(url).header("A2A-Version", "1.0").json(&body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let resp = req
        .send()
        .await
        .map_err(|e| offline(crate::base::redact::redact(&crate::base::outbound::chain(&e)).into_owned()))?;
    let status = resp.status();
    let bytes = ssrf::read_capped(resp, &peer.url, MAX_ANSWER_BYTES).await.map_err(|e| offline(e.message))?;
    if !status.is_success() {
        let detail = format!("{} answered HTTP {status} (check the secret it takes: hal0 relay peer list)", peer.name);
        return Err(Refusal::new(Failure::AgentFailed, detail));
    }
    let v: Value = serde_json::from_slice(&bytes).map_err(|_| {
        Refusal::new(Failure::AgentFailed, format!("{} answered something that is not JSON-RPC", peer.name))
    })?;
    if let Some(e) = v.get("error") {
        let msg = crate::base::redact::redact(e["message"].as_str().unwrap_or("an error")).into_owned();
        return Err(Refusal::new(Failure::AgentFailed, format!("{} refused: {msg} ({})", peer.name, e["code"])));
    }
    Ok(v["result"].clone())
}

/// Ask peer `peer` (its credential from `api_env`): `message` in conversation `context`,
/// request `request_id` as the message id; the answer, within `window`.
pub async fn ask(
    peer: &Peer,
    api_env: Option<&Path>,
    message: &str,
    context: &str,
    request_id: &str,
    window: Duration,
) -> std::result::Result<String, Refusal> {
    let token = match (&peer.secret, api_env) {
        (None, _) => None,
        (Some(name), Some(path)) if let Ok(Some(v)) = crate::base::envfile::get_var(path, name) => Some(v),
        (Some(name), _) => {
            let why = format!(
                "its credential ({name} in api.env) cannot be read: add the peer again (hal0 relay peer remove {}, then add with --token-stdin)",
                peer.name
            );
            return Err(Refusal::new(Failure::AgentFailed, why));
        }
    };
    let deadline = Instant::now() + window;
    let left = || deadline.saturating_duration_since(Instant::now());
    let params = json!({
        "message": {"messageId": request_id, "role": "ROLE_USER", "contextId": context, "parts": [{"text": message}]},
        "configuration": {"returnImmediately": false},
    });
    let result = call(peer, token.as_deref(), "SendMessage", params, left()).await?;
    if let Some(m) = result.get("message") {
        return Ok(text_of(&m["parts"]));
    }
    let mut task = result.get("task").cloned().ok_or_else(|| {
        Refusal::new(Failure::AgentFailed, format!("{} answered neither a message nor a task", peer.name))
    })?;
    loop {
        if let Some(out) = settled(&task) {
            return out;
        }
        if left().is_zero() {
            // Best effort: the peer need not go on with a task nobody waits for.
            let (p, t, id) = (peer.clone(), token.clone(), task["id"].clone());
            tokio::spawn(async move {
                let _ = call(&p, t.as_deref(), "CancelTask", json!({"id": id}), Duration::from_secs(5)).await;
            });
            let detail = format!("{}'s task {} was still working when the ask's window ended", peer.name, task["id"]);
            return Err(Refusal::new(Failure::Timeout, detail));
        }
        tokio::time::sleep(POLL.min(left())).await;
        task = call(peer, token.as_deref(), "GetTask", json!({"id": task["id"]}), left()).await?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(url: &str) -> Value {
        json!({"name": "elsewhere", "supportedInterfaces": [
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]})
    }

    #[test]
    fn a_card_must_send_tasks_to_its_own_host_over_a2a_1() {
        let at = "https://agents.example/.well-known/agent-card.json";
        assert_eq!(interface_of(&card("https://agents.example/rpc"), at).unwrap(), "https://agents.example/rpc");
        let e = interface_of(&card("http://10.0.0.5/rpc"), at).unwrap_err();
        assert_eq!(e.code, "relay.peer_host_mismatch");
        let e = interface_of(&card("https://agents.example:8443/rpc"), at).unwrap_err();
        assert_eq!(e.code, "relay.peer_host_mismatch", "another port is another origin");
        let old = json!({"name": "x", "supportedInterfaces": [
            {"url": "https://agents.example/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}]});
        assert_eq!(interface_of(&old, at).unwrap_err().code, "relay.peer_card_invalid");
        assert_eq!(interface_of(&json!({"name": "x"}), at).unwrap_err().code, "relay.peer_card_invalid");
        assert_eq!(interface_of(&json!([]), at).unwrap_err().code, "relay.peer_card_invalid");
        assert_eq!(card_url("https://a.example/x/"), "https://a.example/x/.well-known/agent-card.json");
        assert_eq!(card_url(at), at);
    }

    #[test]
    fn only_a_host_that_was_private_when_added_is_let_through_later() {
        let peer = |trust_host| Peer {
            name: "p".into(),
            card_url: "http://127.0.0.1:9/.well-known/agent-card.json".into(),
            url: "http://127.0.0.1:9/a2a".into(),
            agent_name: String::new(),
            description: String::new(),
            secret: None,
            trust_host,
            added_at: String::new(),
        };
        // A name that was public when added and now points at loopback (DNS rebinding) is
        // judged as usual: refused.
        assert!(guard(&peer(false)).check("127.0.0.1", 9).is_err());
        assert!(guard(&peer(true)).check("127.0.0.1", 9).is_ok());
        assert_eq!(secret_name("box-b"), secret_name("box_b"), "why the column is unique");
    }

    #[test]
    fn a_task_settles_on_its_output_or_says_why_not() {
        let task = |state: &str| {
            json!({"id": "t", "status": {"state": state,
            "message": {"parts": [{"text": "because"}]}}, "artifacts": [{"parts": [{"text": "the output"}]}]})
        };
        assert_eq!(settled(&task("TASK_STATE_COMPLETED")).unwrap().unwrap(), "the output");
        assert_eq!(settled(&task("TASK_STATE_INPUT_REQUIRED")).unwrap().unwrap(), "because");
        let failed = settled(&task("TASK_STATE_FAILED")).unwrap().unwrap_err();
        assert_eq!(failed.error, Failure::AgentFailed);
        assert!(failed.detail.contains("because"));
        assert!(settled(&task("TASK_STATE_WORKING")).is_none());
        assert!(check_name("box-b").is_ok() && check_name("Box B").is_err() && check_name("").is_err());
    }
}
