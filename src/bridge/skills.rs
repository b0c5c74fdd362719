//! The teach tools for skills: list and read (through the redactor), and propose a put or a
//! delete that waits in the approvals inbox with the whole card. Pending rules: the same
//! content from the same client is the same row; another client's identical push is its
//! own row; an edited push withdraws the same client's older row; another client's pending
//! put of that name is `bridge.skill_pending_elsewhere`; at most 8 pending changes per
//! client. Approval writes exactly the card's content.

use crate::approvals::ApprovalKind;
use crate::approvals::{self, Approval, NewApproval};
use crate::base::error::{Error, Kind, Result};
use crate::config::Config;
use crate::skills::{SkillDirs, card, digest, validate_push};
use crate::store::Store;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

pub const MAX_PENDING: usize = 8;
pub const KIND_PUT: ApprovalKind = ApprovalKind::SkillPut;
pub const KIND_DELETE: ApprovalKind = ApprovalKind::SkillDelete;

/// The shipped and drop-in dirs: `[skills]` in hal0.toml, else `/usr/share/hal0/skills`
/// and `<state>/skills`.
pub fn dirs(cfg: &Config, state_dir: &Path) -> SkillDirs {
    SkillDirs::new(
        cfg.skills.shipped_dir.clone().unwrap_or_else(|| "/usr/share/hal0/skills".into()),
        cfg.skills.dropin_dir.clone().unwrap_or_else(|| state_dir.join("skills")),
    )
}

fn state_dir(store: &Store) -> &Path {
    store.path().parent().unwrap_or(Path::new("."))
}

/// `agent_skills_list`.
pub fn list(store: &Store, cfg: &Config) -> Value {
    let mut v = json!({"skills": dirs(cfg, state_dir(store)).list()});
    crate::base::redact::redact_json(&mut v);
    v
}

/// `agent_skill_get`.
pub fn get(store: &Store, cfg: &Config, name: &str) -> Result<Value> {
    Ok(dirs(cfg, state_dir(store)).get(name)?.view())
}

fn pending_of(store: &Store, client: Option<&str>) -> Result<Vec<Approval>> {
    Ok(approvals::list(store, Some("pending"))?
        .into_iter()
        .filter(|r| r.kind == KIND_PUT || r.kind == KIND_DELETE)
        .filter(|r| client.is_none_or(|c| r.client == c))
        .collect())
}

fn pending_answer(row: &Approval, name: &str) -> Value {
    json!({"status": "pending_approval", "approval_id": row.id, "name": name})
}

fn too_many() -> Error {
    Error::new(
        "bridge.too_many_pending",
        Kind::TooMany,
        format!("you already hold {MAX_PENDING} pending skill changes; wait for a person to decide them"),
    )
}

/// `agent_skill_put`: checked at once, then queued.
pub fn propose_put(
    store: &Store,
    cfg: &Config,
    client: &str,
    name: &str,
    skill_md: &str,
    files: &BTreeMap<String, String>,
) -> Result<Value> {
    let d = dirs(cfg, state_dir(store));
    if crate::skills::valid_name(name) && d.is_shipped(name) {
        return Err(Error::new(
            "bridge.skill_readonly",
            Kind::Forbidden,
            format!("'{name}' is a shipped skill and cannot be changed"),
        ));
    }
    validate_push(name, skill_md, files)?;
    let dg = digest(name, skill_md, files);
    let pending = pending_of(store, None)?;
    let same_name_puts: Vec<&Approval> =
        pending.iter().filter(|r| r.kind == KIND_PUT && r.arguments["name"] == name).collect();
    if let Some(mine) = same_name_puts.iter().find(|r| r.client == client && r.arguments["digest"] == dg.as_str()) {
        return Ok(pending_answer(mine, name));
    }
    if let Some(other) = same_name_puts.iter().find(|r| r.client != client && r.arguments["digest"] != dg.as_str()) {
        return Err(Error::new(
            "bridge.skill_pending_elsewhere",
            Kind::Conflict,
            format!(
                "another client ({}) has a pending change to '{name}'; wait until a person decides it",
                other.client
            ),
        ));
    }
    let mine_older: Vec<&&Approval> = same_name_puts.iter().filter(|r| r.client == client).collect();
    let held = pending.iter().filter(|r| r.client == client).count() - mine_older.len();
    if held >= MAX_PENDING {
        return Err(too_many());
    }
    for old in mine_older {
        approvals::withdraw(store, &old.id, "replaced by an edited push from the same client")?;
    }
    let c = card(client, name, skill_md, files);
    let row = approvals::create(
        store,
        NewApproval {
            kind: KIND_PUT,
            client,
            tool: "agent_skill_put",
            arguments: json!({"name": name, "skill_md": skill_md, "files": files, "digest": dg, "card": c}),
            preview: format!(
                "put skill '{name}': {} bytes, {} supporting files, digest {}",
                c["bytes"],
                files.len(),
                &dg[..12]
            ),
            run_id: None,
        },
    )?;
    Ok(pending_answer(&row, name))
}

/// `agent_skill_delete`: queued; a repeat is the same row.
pub fn propose_delete(store: &Store, cfg: &Config, client: &str, name: &str) -> Result<Value> {
    let d = dirs(cfg, state_dir(store));
    if d.is_shipped(name) {
        return Err(Error::new(
            "bridge.skill_readonly",
            Kind::Forbidden,
            format!("'{name}' is a shipped skill and cannot be deleted"),
        ));
    }
    if !d.dropin_exists(name) {
        return Err(Error::not_found("bridge.skill_not_found", format!("no skill named '{name}'")));
    }
    let pending = pending_of(store, Some(client))?;
    if let Some(r) = pending.iter().find(|r| r.kind == KIND_DELETE && r.arguments["name"] == name) {
        return Ok(pending_answer(r, name));
    }
    if pending.len() >= MAX_PENDING {
        return Err(too_many());
    }
    let row = approvals::create(
        store,
        NewApproval {
            kind: KIND_DELETE,
            client,
            tool: "agent_skill_delete",
            arguments: json!({"name": name}),
            preview: format!("delete skill '{name}'"),
            run_id: None,
        },
    )?;
    Ok(pending_answer(&row, name))
}

/// Carry out an approved skill row: write exactly the card's content, or delete.
pub fn execute_approved(store: &Store, cfg: &Config, row: &Approval) -> Result<Value> {
    let d = dirs(cfg, state_dir(store));
    let name = row.arguments["name"].as_str().unwrap_or_default();
    match &row.kind {
        ApprovalKind::SkillPut => {
            let skill_md = row.arguments["skill_md"].as_str().unwrap_or_default();
            let files: BTreeMap<String, String> =
                serde_json::from_value(row.arguments["files"].clone()).unwrap_or_default();
            if digest(name, skill_md, &files) != row.arguments["digest"].as_str().unwrap_or_default() {
                return Err(Error::internal("the stored card does not match its digest; nothing was written"));
            }
            d.apply_put(name, skill_md, &files)?;
            Ok(json!({"written": name, "files": files.len()}))
        }
        ApprovalKind::SkillDelete => {
            d.apply_delete(name)?;
            Ok(json!({"deleted": name}))
        }
        other => Err(Error::invalid("approvals.wrong_kind", format!("not a skill row: {other}"))),
    }
}
