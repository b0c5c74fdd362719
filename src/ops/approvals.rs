//! The approvals inbox: list and read rows (redacted), and a person's decision, which
//! carries out exactly the stored call (see [`super::decide::Decider`]).

use super::Ctx;
use super::decide::{Choice, Decided, Decider};
use crate::approvals;
use crate::base::error::Result;
use serde::Serialize;
use serde_json::{Value, json};

#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct ListArgs {
    /// Only rows in this status: pending, approved, denied, withdrawn, executed or failed.
    #[serde(default)]
    pub status: Option<String>,
    /// At most this many rows, newest first (default 50, at most 200).
    #[serde(default, deserialize_with = "super::de::opt_int")]
    pub limit: Option<i64>,
    /// The next page: `next_cursor` from the previous answer.
    #[serde(default)]
    pub before: Option<String>,
}

/// Rows shown in a page by default.
pub const PAGE_DEFAULT: i64 = 50;

/// The most of a card's arguments (as JSON text) and preview a page carries; the whole
/// card is `approval_get`'s.
pub const CARD_TEXT_BYTES: usize = 4 * 1024;

/// A row as a page of the inbox shows it: redacted, its arguments whole when short, else
/// their head (a string) with `arguments_cut`; always their size and SHA-256 (of the
/// arguments as hal0 writes them in JSON), which `approval_get` and
/// `hal0 agent approvals show` match.
#[derive(Debug, Serialize)]
pub struct Card {
    #[serde(flatten)]
    pub row: Approval,
    pub arguments_bytes: usize,
    /// `None` for a row queued before the cap whose arguments a page does not read.
    pub arguments_sha256: Option<String>,
    pub arguments_cut: bool,
    /// Why a waiting card can no longer be approved as it stands (its policy changed, its
    /// server is gone); approving it withdraws it instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale: Option<String>,
}

impl Card {
    fn of(row: Approval, stored_len: usize) -> Card {
        use sha2::Digest;
        let read = !row.arguments.is_null() || stored_len <= 4;
        let digest = read.then(|| hex::encode(sha2::Sha256::digest(row.arguments.to_string().as_bytes())));
        let mut row = row.redacted();
        let text = row.arguments.to_string();
        let cut = !read || text.len() > CARD_TEXT_BYTES;
        if cut {
            row.arguments = Value::String(crate::relay::bounded(&text, CARD_TEXT_BYTES));
        }
        if row.preview.len() > CARD_TEXT_BYTES {
            row.preview = crate::relay::bounded(&row.preview, CARD_TEXT_BYTES);
        }
        Card { row, arguments_bytes: stored_len, arguments_sha256: digest, arguments_cut: cut, stale: None }
    }
}

#[derive(Debug, Serialize)]
pub struct Rows {
    pub count: usize,
    pub approvals: Vec<Card>,
    /// Pass as `before` for the next (older) page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `approval_list`: one page of the inbox, newest first, every card redacted and bounded.
pub async fn list(ctx: &Ctx, a: ListArgs) -> Result<Rows> {
    let limit = a.limit.unwrap_or(PAGE_DEFAULT);
    let (rows, next_cursor) =
        ctx.store.call(move |s| approvals::page(s, a.status.as_deref(), limit, a.before.as_deref())).await?;
    let paths = ctx.paths.clone();
    let rows: Vec<Card> = rows
        .into_iter()
        .map(|(r, n)| {
            let stale = (r.status == approvals::Status::Pending).then(|| crate::proxy::staleness(&paths, &r)).flatten();
            Card { stale, ..Card::of(r, n) }
        })
        .collect();
    Ok(Rows { count: rows.len(), approvals: rows, next_cursor })
}

/// `approval_count`: how many cards wait (the dashboard's badge).
pub async fn count(ctx: &Ctx, _: super::NoArgs) -> Result<serde_json::Value> {
    let pending = ctx.store.call(approvals::count_pending).await?;
    Ok(json!({"pending": pending}))
}

/// The longest `approval_get` wait: common MCP clients end a request that sends nothing
/// for 60 s, so a waiting caller gets its answer (still pending, at worst) before that.
pub const WAIT_MAX_S: u64 = 50;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct GetArgs {
    /// The row's id (`ap_…`).
    pub id: String,
    /// Wait up to this many seconds (at most 50; default 0) while the row is pending or its
    /// approved call is running: the answer is the outcome once there is one.
    #[serde(default, deserialize_with = "super::de::opt_int")]
    pub wait_s: Option<i64>,
}

/// `approval_get`: one row, the whole card, redacted; with `wait_s`, once it is decided and
/// its call has run (or when the wait ends).
pub async fn get(ctx: &Ctx, a: GetArgs) -> Result<Approval> {
    let wait = a.wait_s.unwrap_or(0);
    if !(0..=WAIT_MAX_S as i64).contains(&wait) {
        return Err(crate::base::error::Error::invalid(
            "approvals.invalid_request",
            format!("wait_s must be 0 to {WAIT_MAX_S} seconds (got {wait}); call again to wait longer"),
        ));
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(wait as u64);
    loop {
        let id = a.id.clone();
        let row = ctx.store.call(move |s| approvals::get(s, &id)).await?;
        let open = matches!(row.status, approvals::Status::Pending | approvals::Status::Approved);
        if !open || std::time::Instant::now() >= deadline {
            return Ok(row.redacted());
        }
        // A decision may come from another process (the shell): read the row again.
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
}

#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct DenyArgs {
    /// The row's id (`ap_…`).
    pub id: String,
    /// Why, for the record and the caller waiting on it.
    #[serde(default)]
    pub reason: Option<String>,
}

/// What `POST /api/agent/approvals/{id}/approve` takes besides the id.
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct ApproveArgs {
    /// The row's id (`ap_…`).
    pub id: String,
    /// A Hermes command: `once` (default), `session` or `always`, as the card offers.
    #[serde(default)]
    pub choice: Option<String>,
    /// A proxied call: allow this tool for this caller for this many minutes (1-1440).
    #[serde(default, deserialize_with = "super::de::opt_int")]
    pub allow_minutes: Option<i64>,
    /// A proxied call: always allow these exact arguments for this caller.
    #[serde(default)]
    pub always_these_arguments: bool,
}

impl ApproveArgs {
    /// The choice it carries.
    pub fn choice(&self) -> Result<Choice> {
        let minutes = match self.allow_minutes {
            None => None,
            Some(m) => Some(u32::try_from(m).ok().filter(|m| *m >= 1).ok_or_else(|| {
                crate::base::error::Error::invalid(
                    "approvals.invalid_choice",
                    format!("allow_minutes {m}: give 1 to 1440"),
                )
            })?),
        };
        Ok(Choice {
            hermes: self.choice.clone(),
            standing: approvals::rules::Standing { minutes, these_arguments: self.always_these_arguments },
        })
    }
}

/// The decided row (redacted) with, for an admin call, its live answer shown once.
async fn decide(ctx: &Ctx, id: &str, approve: bool, reason: Option<&str>) -> Result<Value> {
    decide_with(ctx, id, approve, &Choice::default(), reason).await
}

/// Who decides, as the row and the audit entry record it, and from which surface: at the
/// shell, the person named after the shell user (`person:root`, `cli`); a dashboard
/// session's person (`person:NAME`, or `ui:<session>` for an unnamed one, `ui`); anyone
/// else as they are (`api`).
pub fn decider(ctx: &Ctx) -> (String, &'static str) {
    use crate::base::actor::Actor;
    let actor = ctx.actor();
    if ctx.from_shell {
        let user = match actor {
            Actor::Cli(user) => user,
            other => other.to_string(),
        };
        return (Actor::Person(user).to_string(), "cli");
    }
    let surface = if actor.at_dashboard() { "ui" } else { "api" };
    (ctx.identity.to_string(), surface)
}

/// Decide row `id` as the caller ([`decider`]). With `[approvals] passkey_required`, a
/// decision over the network comes only from a session opened with a passkey.
pub async fn decide_as(ctx: &Ctx, id: &str, approve: bool, choice: &Choice, reason: Option<&str>) -> Result<Decided> {
    if !ctx.from_shell && ctx.config().approvals.passkey_required && !ctx.passkey {
        return Err(crate::base::error::Error::forbidden_code(
            "approvals.passkey_required",
            "this box takes decisions only from a dashboard session opened with a passkey: sign out and sign in \
             with your passkey (add one on your page, /ui/account)",
        ));
    }
    let (by, surface) = decider(ctx);
    Decider { svc: &ctx.svc }.decide_with(id, approve, choice, (&by, surface), reason).await
}

async fn decide_with(ctx: &Ctx, id: &str, approve: bool, choice: &Choice, reason: Option<&str>) -> Result<Value> {
    let d = decide_as(ctx, id, approve, choice, reason).await?;
    let mut v = json!(d.row.redacted());
    if let Some(mut out) = d.output {
        crate::base::redact::redact_json(&mut out);
        v["output"] = out;
    }
    Ok(v)
}

/// Approve row `id` as the caller: the stored call runs once.
pub async fn approve(ctx: &Ctx, a: ApproveArgs) -> Result<Value> {
    decide_with(ctx, &a.id, true, &a.choice()?, None).await
}

/// The live standing rules (of `server_id`, when given).
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct RulesArgs {
    #[serde(default)]
    pub server_id: Option<String>,
}

/// `approval_rule_list`: the standing rules people chose, newest first.
pub async fn rules(ctx: &Ctx, a: RulesArgs) -> Result<Value> {
    let rules = ctx.store.call(move |s| approvals::rules::list(s, a.server_id.as_deref())).await?;
    Ok(json!({"count": rules.len(), "rules": rules}))
}

#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct RuleIdArgs {
    /// The rule's id (`ar_…`).
    pub rule_id: String,
}

/// `approval_rule_remove`: end a standing rule (its calls wait for a person again).
pub async fn remove_rule(ctx: &Ctx, a: RuleIdArgs) -> Result<Value> {
    let r = ctx.store.call(move |s| approvals::rules::remove(s, &a.rule_id)).await?;
    Ok(json!({"removed": r}))
}

/// Deny row `id` as the caller, with an optional reason.
pub async fn deny(ctx: &Ctx, a: DenyArgs) -> Result<Value> {
    decide(ctx, &a.id, false, a.reason.as_deref()).await
}

pub use crate::approvals::rules::{Rule, Standing};
pub use crate::approvals::{Approval, Status};

/// The inbox as the box's shell shows it (`hal0 agent approvals list`): cards of `status`
/// (`None`: every card), expired ones expired first, each whole as approval would carry it
/// out ([`Approval::for_shell`]: only a secret value is masked).
pub async fn at_shell(ctx: &Ctx, status: Option<String>) -> Result<Vec<Approval>> {
    ctx.store
        .call(move |s| {
            approvals::expire_due(s)?;
            Ok(approvals::list(s, status.as_deref())?.into_iter().map(Approval::for_shell).collect())
        })
        .await
}

/// One card as the box's shell shows it; with `pending`, only while it still waits for a
/// decision (expired ones expired first), as a decision at the shell needs.
pub async fn card_at_shell(ctx: &Ctx, id: &str, pending: bool) -> Result<Approval> {
    let id = id.to_string();
    ctx.store
        .call(move |s| {
            if pending {
                approvals::expire_due(s)?;
            }
            let row = approvals::get(s, &id)?;
            if pending {
                approvals::still_pending(&row)?;
            }
            Ok(row.for_shell())
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_card_carries_a_bounded_head_and_the_digest_of_long_arguments() {
        let args = json!({"content": "y".repeat(60_000)});
        let row = Approval {
            id: "ap_1".into(),
            kind: approvals::ApprovalKind::McpCall,
            client: "bot".into(),
            tool: "write_file".into(),
            arguments: args.clone(),
            preview: "p".repeat(60_000),
            created_at: "t".into(),
            status: approvals::Status::Pending,
            decided_at: None,
            decided_by: None,
            reason: None,
            result: None,
            run_id: None,
            binding: Default::default(),
        };
        let text = args.to_string();
        let card = serde_json::to_value(Card::of(row, text.len())).unwrap();
        assert!(card.to_string().len() < 3 * CARD_TEXT_BYTES, "{}", card.to_string().len());
        assert_eq!(card["arguments_cut"], true);
        assert_eq!(card["arguments_bytes"], text.len());
        use sha2::Digest;
        assert_eq!(card["arguments_sha256"], hex::encode(sha2::Sha256::digest(text.as_bytes())));
    }
}
