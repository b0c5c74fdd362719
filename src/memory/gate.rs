//! Which memory changes wait for a person, and carrying them out once approved. One note
//! in the caller's own write namespace goes at once; more than one id, a named dataset
//! other than that namespace (or a list of datasets), a note filed elsewhere, and every
//! directive delete become a `pending` row in the approvals inbox. So does every delete or
//! curate of a note in a bridge client's private memory that the admin key reads under that
//! client's name (see [`super::namespace`]). [`execute_approved`] performs exactly the
//! stored arguments.

use super::{Changes, Curated, MemoryEngine, Who, input, not_found, plan_curate};
use crate::approvals::{self, Approval, ApprovalKind, NewApproval};
use crate::base::error::{Error, Kind, Result};
use crate::config::Config;
use crate::store::Store;
use serde_json::{Value, json};

pub const KIND_MEMORY_DELETE: ApprovalKind = ApprovalKind::MemoryDelete;
pub const KIND_DIRECTIVE_DELETE: ApprovalKind = ApprovalKind::DirectiveDelete;
pub const KIND_MEMORY_CURATE: ApprovalKind = ApprovalKind::MemoryCurate;

/// What a delete request came to.
#[derive(Debug, Clone)]
pub enum DeleteOutcome {
    /// Done at once: this many notes were deleted.
    Deleted(usize),
    /// Waiting in the inbox (a new row, or the caller's identical pending one).
    Pending(Box<Approval>),
}

/// What a curate request came to.
#[derive(Debug, Clone)]
pub enum CurateOutcome {
    /// Done at once.
    Done(Box<Curated>),
    /// Waiting in the inbox (a new row, or the caller's identical pending one).
    Pending(Box<Approval>),
}

/// The `dataset` argument of a delete: absent, one name, or a list.
#[derive(Debug, Clone, PartialEq)]
pub enum DatasetArg {
    None,
    One(String),
    Many(Vec<String>),
}

impl DatasetArg {
    fn names(&self) -> Vec<String> {
        match self {
            DatasetArg::None => vec![],
            DatasetArg::One(d) => vec![d.clone()],
            DatasetArg::Many(v) => v.clone(),
        }
    }
    fn to_json(&self) -> Value {
        match self {
            DatasetArg::None => Value::Null,
            DatasetArg::One(d) => json!(d),
            DatasetArg::Many(v) => json!(v),
        }
    }
    fn from_json(v: &Value) -> Result<DatasetArg> {
        match v {
            Value::Null => Ok(DatasetArg::None),
            Value::String(s) => Ok(DatasetArg::One(s.clone())),
            Value::Array(a) => Ok(DatasetArg::Many(
                a.iter().map(|x| x.as_str().map(str::to_string)).collect::<Option<Vec<_>>>().ok_or_else(bad_row)?,
            )),
            _ => Err(bad_row()),
        }
    }
}

fn bad_row() -> Error {
    Error::invalid("approvals.invalid_arguments", "the approval row's arguments are not a memory operation")
}

fn cut(s: &str, n: usize) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= n {
        one_line
    } else {
        format!("{}…", one_line.chars().take(n).collect::<String>())
    }
}

/// An identical pending row from the same client, if one exists (a repeat is that row).
fn pending_twin(
    engine: &MemoryEngine,
    kind: ApprovalKind,
    client: &str,
    arguments: &Value,
) -> Result<Option<Approval>> {
    Ok(approvals::list(&engine.store, Some("pending"))?
        .into_iter()
        .find(|a| a.kind == kind && a.client == client && &a.arguments == arguments))
}

impl MemoryEngine {
    /// `memory_delete` as a caller asks it: validate, check every id is a note `who` may
    /// see (in `dataset` when named), then delete at once or queue for approval.
    pub fn delete_request(&self, who: &Who, ids: &[String], dataset: DatasetArg) -> Result<DeleteOutcome> {
        let ids = input::ids(ids)?;
        let home = who.home_dataset()?;
        let named = dataset.names();
        if matches!(dataset, DatasetArg::Many(_)) && named.is_empty() {
            return Err(super::schema_error("`dataset` must not be an empty list"));
        }
        let allowed = if named.is_empty() { None } else { Some(who.read_datasets(&named)?) };
        let notes = self.get_many(&ids)?;
        let missing: Vec<&str> = ids
            .iter()
            .filter(|i| {
                !notes.iter().any(|n| {
                    &n.id == *i && who.can_see(&n.dataset) && allowed.as_ref().is_none_or(|a| a.contains(&n.dataset))
                })
            })
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            let where_ = allowed.as_ref().map(|a| format!(" in {}", a.join(", "))).unwrap_or_default();
            return Err(Error::not_found(
                super::NOT_FOUND,
                format!(
                    "no memory {}{where_}; nothing was deleted",
                    missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        let gated = ids.len() > 1
            || matches!(dataset, DatasetArg::Many(_))
            || named.iter().any(|d| d.trim() != home)
            || notes.iter().any(|n| n.dataset != home || who.borrows(&n.dataset));
        if !gated {
            return Ok(DeleteOutcome::Deleted(self.delete_in(&ids, Some(std::slice::from_ref(&home)))?));
        }
        let mut sorted = ids.clone();
        sorted.sort();
        let arguments = json!({"ids": sorted, "dataset": dataset.to_json()});
        let actor = who.actor();
        if let Some(a) = pending_twin(self, KIND_MEMORY_DELETE, &actor, &arguments)? {
            return Ok(DeleteOutcome::Pending(Box::new(a)));
        }
        let mut datasets: Vec<&str> = notes.iter().map(|n| n.dataset.as_str()).collect();
        datasets.sort();
        datasets.dedup();
        let shown: Vec<String> = notes.iter().take(5).map(|n| format!("{}: \"{}\"", n.id, cut(&n.text, 60))).collect();
        let more = if notes.len() > 5 { format!("; and {} more", notes.len() - 5) } else { String::new() };
        let preview = format!(
            "delete {} {} from {}: {}{more}",
            notes.len(),
            if notes.len() == 1 { "memory" } else { "memories" },
            datasets.join(", "),
            shown.join("; ")
        );
        let a = approvals::create(
            &self.store,
            NewApproval {
                kind: KIND_MEMORY_DELETE,
                client: &actor,
                tool: "memory_delete",
                arguments,
                preview,
                run_id: None,
            },
        )?;
        Ok(DeleteOutcome::Pending(Box::new(a)))
    }

    /// `memory_directive_delete`: always queued for approval (an identical pending row from
    /// the same caller is returned again).
    pub fn directive_delete_request(&self, who: &Who, id: &str) -> Result<Approval> {
        let d = self.directive_get(id)?;
        let arguments = json!({"id": d.id});
        let actor = who.actor();
        if let Some(a) = pending_twin(self, KIND_DIRECTIVE_DELETE, &actor, &arguments)? {
            return Ok(a);
        }
        approvals::create(
            &self.store,
            NewApproval {
                kind: KIND_DIRECTIVE_DELETE,
                client: &actor,
                tool: "memory_directive_delete",
                arguments,
                preview: format!("delete directive {} \"{}\": {}", d.id, cut(&d.name, 60), cut(&d.content, 120)),
                run_id: None,
            },
        )
    }
}

impl MemoryEngine {
    /// `memory_curate` as a caller asks it: checked at once; a note in a bridge client's
    /// private memory that the admin key reads under that client's name changes only once
    /// the operator approves (an identical pending row from the same caller is returned
    /// again), any other note at once.
    pub fn curate_request(&self, who: &Who, id: &str, ch: Changes) -> Result<CurateOutcome> {
        super::check_changes(&ch)?;
        let cur = self.get(who, id)?;
        if !who.borrows(&cur.dataset) {
            return Ok(CurateOutcome::Done(Box::new(self.apply_curate(&who.actor(), cur, &ch)?)));
        }
        let (_, changes) = plan_curate(&cur, &ch)?;
        if changes.is_empty() {
            return Ok(CurateOutcome::Done(Box::new(Curated { note: cur, changed: vec![] })));
        }
        let arguments = json!({"id": cur.id, "dataset": cur.dataset, "changes": ch});
        let actor = who.actor();
        if let Some(a) = pending_twin(self, KIND_MEMORY_CURATE, &actor, &arguments)? {
            return Ok(CurateOutcome::Pending(Box::new(a)));
        }
        let fields: Vec<&str> = changes.keys().map(String::as_str).collect();
        let preview = format!(
            "change {} of memory {} in {} (\"{}\")",
            fields.join(", "),
            cur.id,
            cur.dataset,
            cut(&cur.text, 60)
        );
        let a = approvals::create(
            &self.store,
            NewApproval {
                kind: KIND_MEMORY_CURATE,
                client: &actor,
                tool: "memory_curate",
                arguments,
                preview,
                run_id: None,
            },
        )?;
        Ok(CurateOutcome::Pending(Box::new(a)))
    }
}

/// [`execute_approved`] in the shape `ops::decide` carries approved rows out with
/// (`fn(&Store, &Config, &Approval)`): the `memory_delete`, `memory_curate` and
/// `directive_delete` kinds.
pub fn execute_approved_row(store: &Store, _config: &Config, approval: &Approval) -> Result<Value> {
    execute_approved(&MemoryEngine::new(store.clone()), approval)
}

/// Carry out an approved memory row exactly as stored: `memory_delete` deletes its `ids`
/// (only within its `dataset` when one was named) and answers `{deleted}`; `memory_curate`
/// applies its `changes` to its note (still in its `dataset`) and answers `{id, changed}`;
/// `directive_delete` deletes its directive and answers `{deleted, id}`. The row must be
/// `approved`; recording the outcome is the inbox's job.
pub fn execute_approved(engine: &MemoryEngine, approval: &Approval) -> Result<Value> {
    if approval.status != crate::approvals::Status::Approved {
        return Err(Error::conflict(
            "approvals.not_approved",
            format!("approval `{}` is {}, not approved; nothing was done", approval.id, approval.status),
        ));
    }
    let args = &approval.arguments;
    match &approval.kind {
        ApprovalKind::MemoryDelete => {
            let ids: Vec<String> = args["ids"]
                .as_array()
                .ok_or_else(bad_row)?
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<_>>()
                .ok_or_else(bad_row)?;
            let names = DatasetArg::from_json(&args["dataset"])?.names();
            let within = (!names.is_empty()).then_some(names);
            let deleted = engine.delete_in(&ids, within.as_deref())?;
            Ok(json!({"deleted": deleted}))
        }
        ApprovalKind::MemoryCurate => {
            let id = args["id"].as_str().ok_or_else(bad_row)?;
            let dataset = args["dataset"].as_str().ok_or_else(bad_row)?;
            let ch: Changes = serde_json::from_value(args["changes"].clone()).map_err(|_| bad_row())?;
            // The note must still be where it was when the change was asked for.
            let cur = engine
                .get_many(&[id.to_string()])?
                .pop()
                .filter(|n| n.dataset == dataset)
                .ok_or_else(|| not_found("memory", id))?;
            let done = engine.apply_curate(&approval.client, cur, &ch)?;
            Ok(json!({"id": done.note.id, "changed": done.changed}))
        }
        ApprovalKind::DirectiveDelete => {
            let id = args["id"].as_str().ok_or_else(bad_row)?;
            if !engine.directive_delete(id)? {
                return Err(not_found("directive", id));
            }
            Ok(json!({"deleted": 1, "id": id}))
        }
        other => Err(Error::new(
            "approvals.unsupported_kind",
            Kind::Unsupported,
            format!("rows of kind `{other}` are not memory operations"),
        )),
    }
}
