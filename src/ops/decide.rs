//! Deciding a row of the approvals inbox (an operation: it carries out calls of every
//! kind): claim it exactly once, then carry out exactly the stored arguments for its kind
//! and record the outcome on the row. Every front comes here through
//! [`super::approvals::decide_as`]; no MCP tool does.

use crate::approvals::{self as inbox, Approval, ApprovalKind, Status, claim, finish, get};
use crate::audit::Verdict;
use crate::base::error::{Error, Kind, Result};
use serde_json::json;

/// Carries out an approved row of one kind with exactly its stored arguments.
type Executor = fn(&crate::store::Store, &crate::config::Config, &Approval) -> Result<serde_json::Value>;

/// The domain that carries out an approved row of `kind` (the inbox holds rows of every
/// domain, and knows none of them): skills, memory, OAuth consents, tool pins. The kinds
/// carried out here directly (Hermes commands, admin and MCP calls, reconnects) have none.
fn executor(kind: &ApprovalKind) -> Option<Executor> {
    use ApprovalKind as K;
    match kind {
        K::SkillPut | K::SkillDelete => Some(crate::bridge::skills::execute_approved),
        K::MemoryDelete | K::MemoryCurate | K::DirectiveDelete => Some(crate::memory::gate::execute_approved_row),
        K::OauthConsent => Some(crate::auth::oauth::grants::execute_approved),
        K::ToolDrift => Some(crate::registry::pins::execute_approved),
        _ => None,
    }
}

/// What a person chose beyond approve or deny: Hermes's own choice for a dangerous
/// command (`once`, `session`, `always`; the card lists which it offers), or a standing
/// rule for a proxied call ([`crate::approvals::rules::Standing`]).
#[derive(Debug, Clone, Default)]
pub struct Choice {
    pub hermes: Option<String>,
    pub standing: inbox::rules::Standing,
}

impl Choice {
    /// Check the choice against `row` (its kind, and what Hermes offered).
    fn check(&self, row: &Approval, approve: bool) -> Result<()> {
        let bad = |m: String| Err(Error::invalid("approvals.invalid_choice", m));
        if let Some(c) = &self.hermes {
            if row.kind != ApprovalKind::HermesCommand {
                return bad(format!(
                    "`{c}` is a choice of Hermes's dangerous-command cards, not of a {} card",
                    row.kind
                ));
            }
            if !approve {
                return bad("a denial takes no choice: it answers Hermes `deny`".into());
            }
            let offered: Vec<&str> = row.arguments["choices"]
                .as_array()
                .map(|a| a.iter().filter_map(|v| v.as_str()).filter(|c| *c != "deny").collect())
                .unwrap_or_else(|| vec!["once", "session", "always"]);
            if !offered.contains(&c.as_str()) {
                return bad(format!("Hermes offers {} for this command, not `{c}`", offered.join(", ")));
            }
        }
        if self.standing.is_some() {
            if row.kind != ApprovalKind::McpCall {
                return bad(format!("a standing rule is for proxied calls, not a {} card", row.kind));
            }
            if !approve {
                return bad("a denial makes no rule".into());
            }
            self.standing.validate()?;
        }
        Ok(())
    }
}

/// A decided row and, for calls that produce one, the live result (unredacted, shown once
/// to the person who approved; the row keeps a redacted copy).
pub struct Decided {
    pub row: Approval,
    pub output: Option<serde_json::Value>,
}

/// What deciding needs: the services holding the row and carrying out each kind (an
/// approved admin call runs its operation directly; `paths` finds an MCP server's record).
#[derive(Clone, Copy)]
pub struct Decider<'a> {
    pub svc: &'a std::sync::Arc<crate::ops::Services>,
}

impl Decider<'_> {
    /// Approve or deny row `id` with what the person chose beyond that, as `by`: who decides
    /// and the surface it came from (`("person:alice", "ui")`). The decision's audit entry
    /// is stored (`started`) before anything is claimed or carried out, and takes the
    /// outcome after: when it cannot be stored (a full disk or store) the decision is
    /// refused and the row stays pending, so no decision acts without its entry.
    pub async fn decide_with(
        &self,
        id: &str,
        approve: bool,
        choice: &Choice,
        (by, surface): (&str, &'static str),
        reason: Option<&str>,
    ) -> Result<Decided> {
        let store = &self.svc.store;
        let row = get(store, id)?;
        choice.check(&row, approve)?;
        let started = crate::audit::begin(store, &entry(&row, by, surface)).await?;
        let out = self.decide_inner(id, approve, choice, by, reason).await;
        let (verdict, code) = match &out {
            Ok(d) => (
                outcome(d, approve),
                d.row.result.as_ref().and_then(|r| r["error"]["code"].as_str().map(str::to_string)),
            ),
            Err(e) => (Verdict::Error, Some(e.code.to_string())),
        };
        let done = crate::audit::Outcome { id: started, verdict, result_code: code, approval_id: Some(row.id.clone()) };
        crate::audit::finish(store, done);
        // Stored before the decision answers (a shell command exits right after).
        crate::audit::flush(store).await;
        out
    }

    /// Approve or deny row `id` as `by`: claim it, carry it out, record the outcome on the row.
    async fn decide_inner(
        &self,
        id: &str,
        approve: bool,
        choice: &Choice,
        by: &str,
        reason: Option<&str>,
    ) -> Result<Decided> {
        let svc = self.svc;
        let (paths, store, config) = (&svc.paths, &svc.store, &svc.config());
        let row = get(store, id)?;
        if row.kind == ApprovalKind::HermesCommand {
            let answer = if approve { choice.hermes.as_deref().unwrap_or("once") } else { "deny" };
            let row = crate::bridge::decide_hermes_approval(store, config, id, answer, by, reason).await?;
            return Ok(Decided { row, output: None });
        }
        let builtin = [ApprovalKind::AdminCall, ApprovalKind::McpCall, ApprovalKind::AccountReauth];
        if !builtin.contains(&row.kind) && executor(&row.kind).is_none() {
            return Err(Error::new(
                "approvals.unsupported_kind",
                Kind::Unsupported,
                format!("rows of kind `{}` cannot be decided by this hal0", row.kind),
            ));
        }
        // A gated call whose policy changed while it waited is withdrawn, not run.
        if approve
            && let Some(why) = crate::proxy::staleness(paths, &row)
            && inbox::withdraw(store, id, &format!("stale: {why}"))?
        {
            return Err(Error::conflict("approvals.stale", format!("approval `{id}` was not run: {why}")));
        }
        let row = claim(store, id, approve, by, reason)?;
        if !approve {
            finish(store, id, Status::Denied, &json!({"ok": true, "executed": false}))?;
            return Ok(Decided { row: get(store, id)?, output: None });
        }
        // Exactly the call that was queued: its arguments still hash to what was bound.
        if let Err(e) = inbox::check_arguments(&row) {
            finish(store, id, Status::Failed, &json!({"ok": false, "error": {"code": e.code, "message": e.message}}))?;
            return Err(e);
        }
        let out = match (&row.kind, executor(&row.kind)) {
            (ApprovalKind::AdminCall, _) => super::admin_call_approved(svc, &row).await,
            (ApprovalKind::McpCall, _) => crate::proxy::execute_approved(paths, config, &row).await,
            (ApprovalKind::AccountReauth, _) => crate::ops::accounts::reconnect_approved(svc, &row).await,
            (_, Some(exec)) => exec(store, config, &row),
            _ => Err(Error::internal("no executor")),
        };
        // The standing rule a person chose goes with the call that ran.
        let out = match out {
            Ok(mut v) if choice.standing.is_some() => {
                let rule = inbox::rules::create(store, &row, &choice.standing, by)?;
                if let Some(o) = v.as_object_mut() {
                    o.insert("rule".into(), json!(rule));
                }
                Ok(v)
            }
            other => other,
        };
        let (status, mut stored, live) = match out {
            Ok(v) => (Status::Executed, json!({"ok": true, "result": v.clone()}), Some(v)),
            Err(e) => (Status::Failed, json!({"ok": false, "error": {"code": e.code, "message": e.message}}), None),
        };
        // The row keeps a redacted copy; the person deciding sees the live result once.
        // A reconnect's authorization URL (its `state` binds the connect) is not kept.
        if let Some(r) = stored["result"].as_object_mut() {
            r.remove("authorize_url");
        }
        crate::base::redact::redact_json(&mut stored);
        finish(store, id, status, &stored)?;
        // Only an admin call's answer is shown to the approver (e.g. a new key); other kinds
        // are fully described by the row.
        let output =
            if matches!(row.kind, ApprovalKind::AdminCall | ApprovalKind::AccountReauth) { live } else { None };
        Ok(Decided { row: get(store, id)?, output })
    }
}

/// The verdict a decision ends with.
fn outcome(d: &Decided, approve: bool) -> Verdict {
    match d.row.status {
        Status::Executed => Verdict::Executed,
        Status::Failed => Verdict::Failed,
        Status::Denied => Verdict::Denied,
        _ if approve => Verdict::Approved,
        _ => Verdict::Denied,
    }
}

/// The `started` audit entry of a decision on `row` by `by` from `surface`.
fn entry<'a>(row: &'a Approval, by: &'a str, surface: &'static str) -> crate::audit::Entry<'a> {
    crate::audit::Entry {
        surface,
        tool: &row.tool,
        identity: by,
        arguments: &row.arguments,
        verdict: Verdict::Started,
        result_code: None,
        approval_id: Some(&row.id),
        detail: Some(row.kind.as_str()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approvals::rules::Standing;

    fn card(kind: ApprovalKind, arguments: serde_json::Value) -> Approval {
        Approval {
            id: "ap_1".into(),
            kind,
            client: "ci".into(),
            tool: "t".into(),
            arguments,
            preview: String::new(),
            created_at: String::new(),
            status: Status::Pending,
            decided_at: None,
            decided_by: None,
            reason: None,
            result: None,
            run_id: None,
            binding: Default::default(),
        }
    }

    #[test]
    fn a_choice_fits_its_card() {
        let hermes = card(ApprovalKind::HermesCommand, json!({"choices": ["once", "session", "deny"]}));
        let say = |c: &str| Choice { hermes: Some(c.into()), ..Default::default() };
        assert!(say("session").check(&hermes, true).is_ok());
        let e = say("always").check(&hermes, true).unwrap_err();
        assert!(e.message.contains("once, session"), "{}", e.message);
        assert_eq!(say("once").check(&hermes, false).unwrap_err().code, "approvals.invalid_choice");
        let call = card(ApprovalKind::McpCall, json!({"server": "s", "tool": "t", "arguments": {}}));
        assert_eq!(say("once").check(&call, true).unwrap_err().code, "approvals.invalid_choice");
        let rule = Choice { standing: Standing { minutes: Some(15), ..Default::default() }, ..Default::default() };
        assert!(rule.check(&call, true).is_ok());
        assert_eq!(rule.check(&call, false).unwrap_err().code, "approvals.invalid_choice");
        assert_eq!(rule.check(&hermes, true).unwrap_err().code, "approvals.invalid_choice");
    }
}
