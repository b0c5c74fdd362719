//! Resources, prompts, completion and the logging level through hal0's proxy, under the
//! record's `[resource_access]` and `[prompt_access]` lists: a listing shows only what the
//! lists allow; a read, subscription, prompt or completion of anything else is refused before
//! it reaches the server, with `mcp.resource_blocked` / `mcp.resource_unlisted` (or the
//! `prompt_` pair). Each read, get, subscription and completion is written to the audit log
//! with its verdict, like a tool call. Results are masked for the record's secrets, and what
//! a result carries beyond the asked name is held to the lists too: the contents of a read
//! with another URI are dropped, and a resource a prompt embeds or links that the lists do
//! not allow is replaced by a note.

// The proxy relays what upstream servers still speak: logging, roots, sampling and
// subscriptions are deprecated in the newest protocol (SEP-2577), not gone.
#![allow(deprecated)]

use super::{Call, Consumer, Proxy, Served, Who, mask_in};
use crate::audit::Verdict as Logged;
use crate::base::error::{Error, Kind, Result};
use crate::registry::pins::Item;
use crate::registry::policy::Verdict;
use crate::registry::record::Access;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResult, Prompt, ReadResourceRequestParams,
    ReadResourceResult, Reference, Resource, ResourceTemplate, SetLevelRequestParams, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use serde_json::{Map, Value, json};

/// The refusal of `name` under access table `which`.
fn refusal(s: &Served, which: Access, verdict: Verdict, name: &str) -> Error {
    let (noun, blocked, unlisted, flag) = match which {
        Access::Resources => ("resource", "mcp.resource_blocked", "mcp.resource_unlisted", "--resource"),
        Access::Prompts => ("prompt", "mcp.prompt_blocked", "mcp.prompt_unlisted", "--prompt"),
    };
    let id = &s.record.id;
    if verdict == Verdict::Blocked {
        let msg = format!("the operator blocked {noun} `{name}` on `{id}`; hal0 did not ask the server");
        return Error::new(blocked, Kind::Forbidden, msg);
    }
    Error::new(
        unlisted,
        Kind::Forbidden,
        format!(
            "{noun} `{name}` is not on `{id}`'s [{}] allow list, and unlisted ones are not offered; hal0 did not \
             ask the server (an operator can allow it: hal0 mcp allow {id} '{name}' {flag})",
            which.table()
        ),
    )
}

/// Replace the `content` of each prompt message in `messages` that embeds or links a
/// resource `[resource_access]` does not allow by a text note; how many were withheld.
fn withhold(s: &Served, messages: &mut [Value]) -> usize {
    let mut n = 0;
    for block in messages.iter_mut().filter_map(|m| m.get_mut("content")) {
        let uri = block
            .get("uri")
            .or_else(|| block.get("resource").and_then(|r| r.get("uri")))
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Some(uri) = uri
            && s.record.resource_access.verdict(&uri) != Verdict::Allow
        {
            *block = json!({
                "type": "text",
                "text": format!("[hal0: resource `{uri}` withheld: it is not on `{}`'s [resource_access] allow list]", s.record.id),
            });
            n += 1;
        }
    }
    n
}

/// What a pin of an entry of access table `which` covers.
fn item_of(which: Access) -> Item {
    match which {
        Access::Resources => Item::Resource,
        Access::Prompts => Item::Prompt,
    }
}

fn masked<T: serde::Serialize + serde::de::DeserializeOwned>(s: &Served, v: T) -> Result<T> {
    mask_in(v, &s.secrets).ok_or_else(|| {
        Error::new(
            "mcp.result_withheld",
            Kind::BadGateway,
            "the server's answer carried a credential; hal0 withheld it",
        )
    })
}

impl Proxy {
    /// What `which` allows of a listing `all`, named by `name_of`, none quarantined (each
    /// compared with its pin first, see [`crate::registry::pins`]), masked.
    fn offered<T: serde::Serialize + serde::de::DeserializeOwned>(
        &self,
        s: &Served,
        which: Access,
        all: Vec<T>,
        name_of: impl Fn(&T) -> &str,
    ) -> Result<Vec<T>> {
        let policy = s.record.access(which);
        let allowed: Vec<T> = all.into_iter().filter(|t| policy.verdict(name_of(t)) == Verdict::Allow).collect();
        let maps: Vec<Map<String, Value>> = allowed
            .iter()
            .filter_map(|t| match serde_json::to_value(t) {
                Ok(Value::Object(m)) => Some(m),
                _ => None,
            })
            .collect();
        let held = self.pins.observe(&self.store, &s.record.id, item_of(which), &maps);
        masked(s, allowed.into_iter().filter(|t| !held.contains(name_of(t))).collect())
    }

    /// Check `name` against access table `which` and write the decision to the audit log as
    /// `method` with `args`: `Ok` when it may go to the server.
    async fn admit(&self, s: &Served, who: &Who, which: Access, method: &str, name: &str, args: Value) -> Result<()> {
        let verdict = s.record.access(which).verdict(name);
        let c = Call {
            surface: format!("mcp:proxy/{}", s.record.id),
            tool: method,
            who,
            args: match args {
                Value::Object(m) => Some(m),
                _ => Some(Map::new()),
            },
            policy: format!("{}: {}", which.table(), verdict.as_str()),
        };
        match verdict {
            Verdict::Allow => {
                // Drifted from its pin: refused until a person accepts the change.
                if let Err(e) = self.pins.check(&self.store, &s.record.id, item_of(which), name) {
                    self.audit(&c, Logged::Refused, Some(e.code), None).await;
                    return Err(e);
                }
                self.audit(&c, Logged::Allow, None, None).await;
                Ok(())
            }
            v => {
                let e = refusal(s, which, v, name);
                let logged = if v == Verdict::Blocked { Logged::Blocked } else { Logged::Refused };
                self.audit(&c, logged, Some(e.code), None).await;
                Err(e)
            }
        }
    }

    /// The server's resources that `[resource_access]` allows, in the server's order.
    pub async fn list_resources(&self, s: &Served, who: &Consumer) -> Result<Vec<Resource>> {
        if s.record.resource_access.allow.is_empty() {
            return Ok(Vec::new());
        }
        let all = self.ask(s, who, "resources/list", |c| async move { c.client.list_all_resources().await }).await?;
        self.offered(s, Access::Resources, all, |r| &r.uri)
    }

    /// The server's resource templates whose URI template `[resource_access]` allows.
    pub async fn list_resource_templates(&self, s: &Served, who: &Consumer) -> Result<Vec<ResourceTemplate>> {
        if s.record.resource_access.allow.is_empty() {
            return Ok(Vec::new());
        }
        let all = self
            .ask(s, who, "resources/templates/list", |c| async move { c.client.list_all_resource_templates().await })
            .await?;
        self.offered(s, Access::Resources, all, |t| &t.uri_template)
    }

    /// `resources/read` of an allowed URI.
    pub async fn read_resource(
        &self,
        s: &Served,
        who: &Consumer,
        caller: &Who,
        mut p: ReadResourceRequestParams,
    ) -> Result<ReadResourceResult> {
        self.admit(s, caller, Access::Resources, "resources/read", &p.uri, json!({"uri": p.uri})).await?;
        p.meta = None;
        let mut out = self
            .ask(s, who, "resources/read", |c| {
                let p = p.clone();
                async move { c.client.read_resource(p).await }
            })
            .await?;
        // Contents under another URI (a directory's files, say) must be allowed themselves.
        let before = out.contents.len();
        out.contents.retain(|c| {
            let uri = match c {
                rmcp::model::ResourceContents::TextResourceContents { uri, .. }
                | rmcp::model::ResourceContents::BlobResourceContents { uri, .. } => uri.as_str(),
                _ => "",
            };
            s.record.resource_access.verdict(uri) == Verdict::Allow
        });
        if out.contents.is_empty() && before > 0 {
            return Err(refusal(s, Access::Resources, Verdict::UnknownTool, &p.uri));
        }
        masked(s, out)
    }

    /// `resources/subscribe` (`on`) or `resources/unsubscribe` of an allowed URI; the
    /// server's updates about it then reach this consumer.
    pub async fn subscribe(&self, s: &Served, who: &Consumer, caller: &Who, uri: String, on: bool) -> Result<()> {
        let method = if on { "resources/subscribe" } else { "resources/unsubscribe" };
        if s.record.transport == crate::registry::Transport::Stdio {
            return Err(Error::conflict(
                "mcp.subscribe_unsupported",
                format!(
                    "`{}` is a stdio server whose one connection every client shares, so hal0 cannot tell whose \
                     subscription an update is for; read the resource again instead",
                    s.record.id
                ),
            ));
        }
        if on {
            self.admit(s, caller, Access::Resources, method, &uri, json!({"uri": uri})).await?;
        }
        self.ask(s, who, method, |c| {
            let uri = uri.clone();
            async move {
                let out = if on {
                    c.client.subscribe(SubscribeRequestParams::new(uri.clone())).await
                } else {
                    c.client.unsubscribe(UnsubscribeRequestParams::new(uri.clone())).await
                };
                if out.is_ok() {
                    c.relay().subscribed(&uri, on);
                }
                out
            }
        })
        .await
    }

    /// The server's prompts that `[prompt_access]` allows.
    pub async fn list_prompts(&self, s: &Served, who: &Consumer) -> Result<Vec<Prompt>> {
        if s.record.prompt_access.allow.is_empty() {
            return Ok(Vec::new());
        }
        let all = self.ask(s, who, "prompts/list", |c| async move { c.client.list_all_prompts().await }).await?;
        self.offered(s, Access::Prompts, all, |p| &p.name)
    }

    /// `prompts/get` of an allowed prompt.
    pub async fn get_prompt(
        &self,
        s: &Served,
        who: &Consumer,
        caller: &Who,
        mut p: GetPromptRequestParams,
    ) -> Result<GetPromptResult> {
        let args = json!({"name": p.name, "arguments": p.arguments});
        self.admit(s, caller, Access::Prompts, "prompts/get", &p.name, args).await?;
        p.meta = None;
        let out = self
            .ask(s, who, "prompts/get", |c| {
                let p = p.clone();
                async move { c.client.get_prompt(p).await }
            })
            .await?;
        // A prompt may embed or link resources: those too must be allowed.
        let mut v = serde_json::to_value(&out).map_err(|e| Error::internal(e.to_string()))?;
        if let Some(msgs) = v.get_mut("messages").and_then(Value::as_array_mut)
            && withhold(s, msgs) > 0
        {
            let out: GetPromptResult = serde_json::from_value(v).map_err(|e| Error::internal(e.to_string()))?;
            return masked(s, out);
        }
        masked(s, out)
    }

    /// `completion/complete` for an allowed prompt or resource template.
    pub async fn complete(
        &self,
        s: &Served,
        who: &Consumer,
        caller: &Who,
        mut p: CompleteRequestParams,
    ) -> Result<CompleteResult> {
        let (which, name) = match &p.r#ref {
            Reference::Prompt(r) => (Access::Prompts, r.name.clone()),
            Reference::Resource(r) => (Access::Resources, r.uri.clone()),
            _ => {
                return Err(Error::invalid(
                    "mcp.invalid_request",
                    "completion/complete names neither a prompt nor a resource",
                ));
            }
        };
        let args = json!({"ref": name, "argument": p.argument.name});
        self.admit(s, caller, which, "completion/complete", &name, args).await?;
        p.meta = None;
        let out = self
            .ask(s, who, "completion/complete", |c| {
                let p = p.clone();
                async move { c.client.complete(p).await }
            })
            .await?;
        masked(s, out)
    }

    /// `logging/setLevel`: the consumer's own upstream session of an http server takes it;
    /// a stdio server's connection is shared, so its level is left alone.
    pub async fn set_level(&self, s: &Served, who: &Consumer, mut p: SetLevelRequestParams) -> Result<()> {
        if s.record.transport == crate::registry::Transport::Stdio {
            return Ok(());
        }
        p.meta = None;
        self.ask(s, who, "logging/setLevel", |c| {
            let p = p.clone();
            async move { c.client.set_level(p).await }
        })
        .await
    }
}
