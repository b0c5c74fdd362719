//! `hal0-memory` (`/mcp/memory/mcp`): the long-term memory tools with typed signatures. The
//! seven that need a language model ([`NEEDS_A_MODEL`]) are not listed on this engine (they
//! would be a third of the tool text a client loads for nothing); a call still answers
//! `{status: "unsupported"}`.
//! This front only translates: it reads the caller (identity, private mode) the guard
//! resolved, applies [`crate::memory::namespace`] through the engine, and renders results as
//! plain JSON objects. Failures are the structured envelope
//! `{"status":"error","error":{"code","detail"}}` with `isError`; argument errors, including
//! wrongly typed ones, are `mcp.memory_schema`.

use super::{caller, ok_json};
use crate::base::error::{Error, Kind, Result};
use crate::memory::directives::{DirectiveChanges, NewDirective};
use crate::memory::gate::DatasetArg;
use crate::memory::{
    Changes, Claim, CurateOutcome, DeleteOutcome, Filter, MemoryEngine, NO_LLM, NewNote, Via, Who, input, schema_error,
};
use crate::server::AppState;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::borrow::Cow;
use std::sync::Arc;

/// Tool arguments parsed by hal0 rather than by the transport: a wrongly typed or missing
/// field becomes `mcp.memory_schema` in the tool result (not a JSON-RPC error), while
/// `tools/list` still shows `T`'s schema.
pub struct Checked<T>(pub std::result::Result<T, String>);

impl<'de, T: DeserializeOwned> Deserialize<'de> for Checked<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(Checked(serde_json::from_value(v).map_err(|e| e.to_string())))
    }
}

impl<T: schemars::JsonSchema> schemars::JsonSchema for Checked<T> {
    fn inline_schema() -> bool {
        T::inline_schema()
    }
    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }
    fn schema_id() -> Cow<'static, str> {
        T::schema_id()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(g)
    }
}

impl<T> Checked<T> {
    fn get(self) -> Result<T> {
        self.0.map_err(|e| schema_error(format!("invalid arguments: {e}")))
    }
}

/// One string or a list of strings.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn list(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

fn tag_list(t: Option<OneOrMany>) -> Vec<String> {
    match t {
        None => vec![],
        Some(OneOrMany::One(s)) => input::split_tags(&s),
        Some(OneOrMany::Many(v)) => v,
    }
}

fn dataset_list(d: Option<OneOrMany>) -> Vec<String> {
    d.map(OneOrMany::list).unwrap_or_default()
}

/// Present at all (even `null`): `Some`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct AddArgs {
    /// What to remember (non-empty, at most 64 KiB). Send this or `items`.
    #[serde(default)]
    pub text: Option<String>,
    /// Many notes in one call (1 to 1000), stored in one transaction: each an object with
    /// `text` and optionally `dataset`, `tags`, `metadata`, `document_id`. Send this or `text`.
    #[serde(default)]
    pub items: Option<Vec<AddItem>>,
    /// `shared` (default), `agents` or `project:<id>`. With `X-hal0-Private: 1` the note is
    /// filed under your private dataset whatever is named here.
    #[serde(default)]
    pub dataset: Option<String>,
    /// Tags, as a list or a comma-separated string (normalised to lower case).
    #[serde(default)]
    pub tags: Option<OneOrMany>,
    /// Free-form JSON object stored with the note.
    #[serde(default)]
    pub metadata: Option<serde_json::Map<String, Value>>,
    /// A stable id (1 to 64 letters, digits, `_`, `-`); reusing it replaces that document.
    #[serde(default)]
    pub document_id: Option<String>,
    /// Not accepted: hal0 sets `source` from your identity.
    #[serde(default, deserialize_with = "present")]
    #[schemars(skip)]
    pub source: Option<Value>,
}

/// One note of `memory_add`'s `items`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddItem {
    /// What to remember (non-empty, at most 64 KiB).
    pub text: String,
    /// As `memory_add`'s `dataset`.
    #[serde(default)]
    pub dataset: Option<String>,
    #[serde(default)]
    pub tags: Option<OneOrMany>,
    #[serde(default)]
    pub metadata: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    pub document_id: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct SearchArgs {
    /// Plain words; punctuation and search operators are treated as separators.
    pub query: String,
    /// Results, 1 to 200 (default 10).
    #[serde(default)]
    pub limit: Option<i64>,
    /// A dataset or a list (default `shared`, plus your private one in private mode).
    #[serde(default)]
    pub dataset: Option<OneOrMany>,
    /// Only notes carrying any of these tags (list or comma-separated string).
    #[serde(default)]
    pub tags: Option<OneOrMany>,
    /// Only notes written before this RFC 3339 time or date (exclusive).
    #[serde(default)]
    pub before: Option<String>,
    /// Only notes written at or after this RFC 3339 time or date.
    #[serde(default)]
    pub after: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct RecallArgs {
    /// Plain words to recall memories about.
    pub query: String,
    /// Token budget of the answer, 1 to 32768 (default 4096; about four characters a token).
    #[serde(default)]
    pub max_tokens: Option<i64>,
    /// Only these fact types: world, experience, opinion, observation.
    #[serde(default)]
    pub types: Option<Vec<String>>,
    /// A dataset or a list (default `shared`, plus your private one in private mode).
    #[serde(default)]
    pub dataset: Option<OneOrMany>,
    /// Only notes carrying any of these tags.
    #[serde(default)]
    pub tags: Option<OneOrMany>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ListArgs {
    /// A dataset or a list (default `shared`, plus your private one in private mode).
    #[serde(default)]
    pub dataset: Option<OneOrMany>,
    /// `next_cursor` of the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Notes per page, 1 to 200 (default 50).
    #[serde(default)]
    pub limit: Option<i64>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct DeleteArgs {
    /// Memory ids (non-empty). More than one waits for the operator's approval.
    pub ids: Vec<String>,
    /// Restrict to this dataset or list; any dataset other than your write namespace, or a
    /// list, waits for approval.
    #[serde(default)]
    pub dataset: Option<OneOrMany>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct CurateArgs {
    /// The memory id.
    pub id: String,
    /// New text.
    #[serde(default)]
    pub text: Option<String>,
    /// New context (searchable; empty string clears it).
    #[serde(default)]
    pub context: Option<String>,
    /// When the fact began (RFC 3339 or date; empty string clears it).
    #[serde(default)]
    pub occurred_start: Option<String>,
    /// When the fact ended (RFC 3339 or date; empty string clears it).
    #[serde(default)]
    pub occurred_end: Option<String>,
    /// world, experience, opinion or observation.
    #[serde(default)]
    pub fact_type: Option<String>,
    /// Entities the memory is about (replaces the list).
    #[serde(default)]
    pub entities: Option<Vec<String>>,
    /// `invalidated` hides the memory from search, recall and list (history keeps it);
    /// `active` brings it back.
    #[serde(default)]
    pub state: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct IdArgs {
    /// The id.
    pub id: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct DatasetArgs {
    /// A dataset or a list (default `shared`, plus your private one in private mode).
    #[serde(default)]
    pub dataset: Option<OneOrMany>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ConsolidateArgs {
    /// Only this dataset (default: every dataset you can see).
    #[serde(default)]
    pub dataset: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct DirectiveCreateArgs {
    /// A short name.
    pub name: String,
    /// The standing instruction.
    pub content: String,
    /// -1000 to 1000 (default 0); higher first.
    #[serde(default)]
    pub priority: Option<i64>,
    /// Default true.
    #[serde(default)]
    pub is_active: Option<bool>,
    /// Tags (list or comma-separated string).
    #[serde(default)]
    pub tags: Option<OneOrMany>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct DirectiveUpdateArgs {
    /// The directive id.
    pub id: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub priority: Option<i64>,
    #[serde(default)]
    pub is_active: Option<bool>,
    /// Replaces the tags.
    #[serde(default)]
    pub tags: Option<OneOrMany>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct DirectiveListArgs {
    /// Only active directives (default false).
    #[serde(default)]
    pub active_only: Option<bool>,
    /// Only directives carrying any of these tags.
    #[serde(default)]
    pub tags: Option<OneOrMany>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct OperationListArgs {
    /// pending, processing, completed, failed or cancelled.
    #[serde(default)]
    pub status: Option<String>,
    /// retain or consolidation.
    #[serde(default)]
    pub kind: Option<String>,
    /// 1 to 200 (default 50).
    #[serde(default)]
    pub limit: Option<i64>,
}

/// The schema a client sees; the embedded engine answers `unsupported` without reading it.
#[allow(dead_code)]
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ReflectArgs {
    /// The question to reflect on.
    pub query: String,
    #[serde(default)]
    pub max_tokens: Option<i64>,
    #[serde(default)]
    pub dataset: Option<OneOrMany>,
}

/// The schema a client sees; the embedded engine answers `unsupported` without reading it.
#[allow(dead_code)]
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct MentalModelListArgs {
    /// `metadata` (default), `content` or `full`.
    #[serde(default)]
    pub detail: Option<String>,
    #[serde(default)]
    pub tags: Option<OneOrMany>,
}

/// The schema a client sees; the embedded engine answers `unsupported` without reading it.
#[allow(dead_code)]
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct MentalModelCreateArgs {
    pub name: String,
    /// The reflect query whose answer the model keeps.
    pub source_query: String,
    #[serde(default)]
    pub max_tokens: Option<i64>,
    #[serde(default)]
    pub tags: Option<OneOrMany>,
    #[serde(default)]
    pub trigger: Option<Value>,
}

/// The schema a client sees; the embedded engine answers `unsupported` without reading it.
#[allow(dead_code)]
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct MentalModelUpdateArgs {
    pub id: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub source_query: Option<String>,
    #[serde(default)]
    pub max_tokens: Option<i64>,
    #[serde(default)]
    pub tags: Option<OneOrMany>,
    #[serde(default)]
    pub trigger: Option<Value>,
}

/// `{"status":"error","error":{"code","detail"}}` with `isError`. A store failure is
/// `memory.engine_unavailable` (retry in 5 s), except a full store, which no retry mends
/// (`store.full` says what will); an internal one keeps its detail in the log.
pub fn memory_error(e: &Error) -> CallToolResult {
    let mut err = if e.code.starts_with("store.") && e.code != "store.full" {
        tracing::warn!(code = e.code, "memory store failure: {}", e.message);
        json!({
            "code": "memory.engine_unavailable",
            "detail": "the memory engine is busy or unavailable; retry shortly",
            "details": {"retry_after_s": 5},
        })
    } else if e.kind == Kind::Internal {
        tracing::error!(code = e.code, "memory tool failed: {}", e.message);
        json!({"code": "internal", "detail": "internal error; see the hal0 log"})
    } else {
        json!({"code": e.code, "detail": e.message})
    };
    if let Some(o) = err.as_object_mut() {
        o.retain(|_, v| !v.is_null());
    }
    CallToolResult::structured_error(json!({"status": "error", "error": err}))
}

/// The tools that need a language model, which the embedded engine does not have: not
/// listed, and answered `unsupported` when called anyway.
pub const NEEDS_A_MODEL: [&str; 7] = [
    "memory_reflect",
    "memory_mental_model_list",
    "memory_mental_model_get",
    "memory_mental_model_create",
    "memory_mental_model_update",
    "memory_mental_model_refresh",
    "memory_mental_model_delete",
];

fn unsupported() -> CallToolResult {
    ok_json(json!({"status": "unsupported", "detail": NO_LLM}))
}

fn pending(approval_id: &str, detail: String) -> Value {
    json!({"status": "pending_approval", "approval_id": approval_id, "detail": detail})
}

/// What the guard resolved about the caller; the memory rules turn it into a [`Who`].
fn claim(ctx: &RequestContext<RoleServer>) -> Claim {
    use crate::auth::principal::Credential;
    match caller(ctx) {
        Some(c) => {
            let via = match &c.cred {
                Credential::Bridge(_) | Credential::Grant(_) => Via::BridgeKey,
                Credential::Admin => Via::AdminKey,
                _ => Via::ClientKey,
            };
            Claim { identity: c.identity.clone(), private: c.private, via }
        }
        None => Claim { identity: crate::memory::namespace::ANONYMOUS.into(), private: false, via: Via::ClientKey },
    }
}

/// What `memory_add` answers for one note.
fn added_json(added: &crate::memory::Added) -> Value {
    let mut out = json!({
        "id": added.note.id,
        "timestamp": added.note.timestamp,
        "operation_id": added.operation_id,
        "dataset": added.note.dataset,
        "source": added.note.source,
        "facts_extracted": added.facts_extracted,
    });
    if let Some(d) = &added.note.document_id {
        out["document_id"] = json!(d);
        out["upserted"] = json!(added.upserted);
    }
    out
}

/// The audit surface of this server.
const SURFACE: &str = "mcp:memory";

#[derive(Clone)]
pub struct MemoryServer {
    state: Arc<AppState>,
    tool_router: ToolRouter<MemoryServer>,
}

impl MemoryServer {
    /// Run `f` on the engine off the async runtime and render its answer.
    async fn run<F>(&self, f: F) -> CallToolResult
    where
        F: FnOnce(&MemoryEngine) -> Result<Value> + Send + 'static,
    {
        match self.state.store.call(move |s| f(&MemoryEngine::new(s.clone()))).await {
            Ok(v) => ok_json(v),
            Err(e) => memory_error(&e),
        }
    }

    /// [`Self::run`] for the caller of `ctx`, as the memory rules see it.
    async fn run_as<F>(&self, ctx: &RequestContext<RoleServer>, f: F) -> CallToolResult
    where
        F: FnOnce(&MemoryEngine, Who) -> Result<Value> + Send + 'static,
    {
        let claim = claim(ctx);
        self.run(move |eng| {
            let who = Who::resolve(&eng.store, claim)?;
            f(eng, who)
        })
        .await
    }
}

#[tool_router]
impl MemoryServer {
    pub fn new(state: Arc<AppState>) -> Self {
        static ROUTER: super::schema::RouterCell<MemoryServer> = super::schema::RouterCell::new();
        MemoryServer { state, tool_router: super::schema::cached_router(&ROUTER, Self::tool_router) }
    }

    #[tool(
        description = "Remember a note. Returns {id, timestamp, operation_id, dataset, source, facts_extracted}. For many notes at once send items (a list of {text, dataset?, tags?, metadata?, document_id?}, at most 1000, one transaction); returns {count, operation_id, items: [...]}. dataset defaults to shared; X-hal0-Private: 1 files it under your private dataset. Reusing document_id replaces that document. source is set by hal0 from your identity and may not be sent."
    )]
    async fn memory_add(
        &self,
        Parameters(a): Parameters<Checked<AddArgs>>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.run_as(&ctx, move |eng, who| {
            let a = a.get()?;
            if a.source.is_some() {
                return Err(schema_error("`source` is set by hal0 from your identity; do not send it"));
            }
            let text = match (a.text, a.items) {
                (Some(_), Some(_)) => return Err(schema_error("send either `text` or `items`, not both")),
                (None, None) => return Err(schema_error("`text` is required (or `items`, a list of notes)")),
                (None, Some(items)) => {
                    let mut notes = Vec::with_capacity(items.len());
                    for it in items {
                        notes.push(NewNote {
                            text: it.text,
                            dataset: who.write_dataset(it.dataset.as_deref().or(a.dataset.as_deref()))?,
                            tags: tag_list(it.tags),
                            metadata: it.metadata.map(Value::Object),
                            document_id: it.document_id,
                        });
                    }
                    let added = eng.add_many(&who.identity, notes)?;
                    let items: Vec<Value> = added.iter().map(added_json).collect();
                    let operation_id = added.first().map(|a| a.operation_id.clone());
                    return Ok(json!({"count": items.len(), "operation_id": operation_id, "items": items}));
                }
                (Some(t), None) => t,
            };
            let dataset = who.write_dataset(a.dataset.as_deref())?;
            let added = eng.add(
                &who.identity,
                NewNote {
                    text,
                    dataset,
                    tags: tag_list(a.tags),
                    metadata: a.metadata.map(Value::Object),
                    document_id: a.document_id,
                },
            )?;
            Ok(added_json(&added))
        })
        .await
    }

    #[tool(
        description = "Search memories by words, ranked by relevance (bm25). Returns {results: [{id, text, score, timestamp, dataset, tags, source, metadata, ...}], count}. limit 1-200 (default 10); dataset (string or list), tags, before, after filter.",
        annotations(read_only_hint = true)
    )]
    async fn memory_search(
        &self,
        Parameters(a): Parameters<Checked<SearchArgs>>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.run_as(&ctx, move |eng, who| {
            let a = a.get()?;
            let limit = input::range(a.limit, 1, 200, 10, "limit")?;
            let query = blank_checked(&a.query)?;
            let f = Filter {
                datasets: who.read_datasets(&dataset_list(a.dataset))?,
                tags: tag_list(a.tags),
                before: a.before,
                after: a.after,
                types: vec![],
            };
            let hits = eng.search(query, &f, limit as usize)?;
            Ok(json!({"count": hits.len(), "results": hits}))
        })
        .await
    }

    #[tool(
        description = "Token-budgeted recall (preferred over search): the most relevant memories, identical texts once, packed until max_tokens (1-32768, default 4096; about four characters a token). Returns {results, token_estimate, max_tokens}.",
        annotations(read_only_hint = true)
    )]
    async fn memory_recall(
        &self,
        Parameters(a): Parameters<Checked<RecallArgs>>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.run_as(&ctx, move |eng, who| {
            let a = a.get()?;
            let max = input::range(a.max_tokens, 1, 32768, 4096, "max_tokens")?;
            let query = blank_checked(&a.query)?;
            let f = Filter {
                datasets: who.read_datasets(&dataset_list(a.dataset))?,
                tags: tag_list(a.tags),
                types: a.types.unwrap_or_default(),
                ..Filter::default()
            };
            Ok(json!(eng.recall(query, &f, max as usize)?))
        })
        .await
    }

    #[tool(
        description = "Page through memories, newest first. Returns {items, next_cursor}; pass next_cursor back as cursor for the next page (null after the last). limit 1-200 (default 50).",
        annotations(read_only_hint = true)
    )]
    async fn memory_list(
        &self,
        Parameters(a): Parameters<Checked<ListArgs>>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.run_as(&ctx, move |eng, who| {
            let a = a.get()?;
            let limit = input::range(a.limit, 1, 200, 50, "limit")?;
            let datasets = who.read_datasets(&dataset_list(a.dataset))?;
            Ok(json!(eng.list(&datasets, a.cursor.as_deref(), limit as usize)?))
        })
        .await
    }

    #[tool(
        description = "Delete memories by id. One id in your own write namespace is deleted at once: {deleted}. More than one id, a dataset other than your write namespace (or a list), or a note in a bridge client's private memory reached with the admin key, waits for the operator: {status: \"pending_approval\", approval_id, detail}.",
        annotations(destructive_hint = true)
    )]
    async fn memory_delete(
        &self,
        Parameters(a): Parameters<Checked<DeleteArgs>>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.run_as(&ctx, move |eng, who| {
            let a = a.get()?;
            let dataset = match a.dataset {
                None => DatasetArg::None,
                Some(OneOrMany::One(d)) => DatasetArg::One(d),
                Some(OneOrMany::Many(v)) => DatasetArg::Many(v),
            };
            Ok(match eng.delete_request(&who, &a.ids, dataset)? {
                DeleteOutcome::Deleted(n) => json!({"deleted": n}),
                DeleteOutcome::Pending(ap) => pending(
                    &ap.id,
                    format!(
                        "this delete waits for the operator's approval in the hal0 inbox ({}); nothing is deleted until then",
                        ap.preview
                    ),
                ),
            })
        })
        .await
    }

    #[tool(
        description = "Correct a memory without deleting it: change text, context, occurred_start, occurred_end, fact_type or entities, or set state to invalidated (hidden from search, recall and list; history keeps it) or active. At least one field besides id. Returns {id, changed, memory}. A note in a bridge client's private memory, reached with the admin key under that client's name, waits for the operator: {status: \"pending_approval\", approval_id, detail}."
    )]
    async fn memory_curate(
        &self,
        Parameters(a): Parameters<Checked<CurateArgs>>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.run_as(&ctx, move |eng, who| {
            let a = a.get()?;
            let ch = Changes {
                text: a.text,
                context: a.context,
                occurred_start: a.occurred_start,
                occurred_end: a.occurred_end,
                fact_type: a.fact_type,
                entities: a.entities,
                state: a.state,
            };
            Ok(match eng.curate_request(&who, &a.id, ch)? {
                CurateOutcome::Done(c) => json!({"id": c.note.id, "changed": c.changed, "memory": c.note}),
                CurateOutcome::Pending(ap) => pending(
                    &ap.id,
                    format!(
                        "this change waits for the operator's approval in the hal0 inbox ({}); nothing is changed until then",
                        ap.preview
                    ),
                ),
            })
        })
        .await
    }

    #[tool(
        description = "A memory's curation history, oldest first: {id, state, history: [{at, actor, action, changes}]}.",
        annotations(read_only_hint = true)
    )]
    async fn memory_history(
        &self,
        Parameters(a): Parameters<Checked<IdArgs>>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.run_as(&ctx, move |eng, who| {
            let (note, h) = eng.history(&who, &a.get()?.id)?;
            Ok(json!({"id": note.id, "state": note.state, "history": h}))
        })
        .await
    }

    #[tool(
        description = "Tags in use on active memories with usage counts, most used first: {tags: [{tag, count}], count}.",
        annotations(read_only_hint = true)
    )]
    async fn memory_tags_list(
        &self,
        Parameters(a): Parameters<Checked<DatasetArgs>>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.run_as(&ctx, move |eng, who| {
            let datasets = who.read_datasets(&dataset_list(a.get()?.dataset))?;
            let tags = eng.tags_list(&datasets)?;
            Ok(json!({"count": tags.len(), "tags": tags}))
        })
        .await
    }

    #[tool(
        description = "Counts for the memory bank you can see: notes (active, invalidated, per dataset), documents, tags, history entries, directives, operations by status; node_count/link_count/observation_count/operation_count (this engine keeps no links or observations: 0).",
        annotations(read_only_hint = true)
    )]
    async fn memory_bank_stats(&self, ctx: RequestContext<RoleServer>) -> CallToolResult {
        self.run_as(&ctx, move |eng, who| eng.bank_stats(&who)).await
    }

    #[tool(
        description = "Deduplicate identical active memories within each dataset you can see (or only dataset): the oldest stays, the others are invalidated and their tags merged. Returns {operation_id, deduplicated}."
    )]
    async fn memory_bank_consolidate(
        &self,
        Parameters(a): Parameters<Checked<ConsolidateArgs>>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.run_as(&ctx, move |eng, who| {
            let dataset = match a.get()?.dataset.filter(|d| !d.trim().is_empty()) {
                Some(d) => Some(who.read_datasets(&[d])?.remove(0)),
                None => None,
            };
            Ok(json!(eng.consolidate(&who, dataset.as_deref())?))
        })
        .await
    }

    #[tool(description = "Create a directive, a standing instruction for agents. Returns the directive.")]
    async fn memory_directive_create(
        &self,
        Parameters(a): Parameters<Checked<DirectiveCreateArgs>>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.run_as(&ctx, move |eng, who| {
            let a = a.get()?;
            let d = NewDirective {
                name: a.name,
                content: a.content,
                priority: a.priority,
                is_active: a.is_active,
                tags: tag_list(a.tags),
            };
            Ok(json!(eng.directive_create(&who.identity, d)?))
        })
        .await
    }

    #[tool(description = "Update a directive's name, content, priority, is_active or tags. Returns the directive.")]
    async fn memory_directive_update(&self, Parameters(a): Parameters<Checked<DirectiveUpdateArgs>>) -> CallToolResult {
        self.run(move |eng| {
            let a = a.get()?;
            let ch = DirectiveChanges {
                name: a.name,
                content: a.content,
                priority: a.priority,
                is_active: a.is_active,
                tags: a.tags.map(|t| tag_list(Some(t))),
            };
            Ok(json!(eng.directive_update(&a.id, ch)?))
        })
        .await
    }

    #[tool(
        description = "The bank's directives, highest priority first: {directives, count}.",
        annotations(read_only_hint = true)
    )]
    async fn memory_directive_list(&self, Parameters(a): Parameters<Checked<DirectiveListArgs>>) -> CallToolResult {
        self.run(move |eng| {
            let a = a.get()?;
            let list = eng.directive_list(a.active_only.unwrap_or(false), &tag_list(a.tags))?;
            Ok(json!({"count": list.len(), "directives": list}))
        })
        .await
    }

    #[tool(description = "One directive.", annotations(read_only_hint = true))]
    async fn memory_directive_get(&self, Parameters(a): Parameters<Checked<IdArgs>>) -> CallToolResult {
        self.run(move |eng| Ok(json!(eng.directive_get(&a.get()?.id)?))).await
    }

    #[tool(
        description = "Delete a directive. Always waits for the operator: {status: \"pending_approval\", approval_id, detail}.",
        annotations(destructive_hint = true)
    )]
    async fn memory_directive_delete(
        &self,
        Parameters(a): Parameters<Checked<IdArgs>>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.run_as(&ctx, move |eng, who| {
            let ap = eng.directive_delete_request(&who, &a.get()?.id)?;
            Ok(pending(
                &ap.id,
                format!("directive deletes wait for the operator's approval in the hal0 inbox ({})", ap.preview),
            ))
        })
        .await
    }

    #[tool(
        description = "Memory operations (retain for each add, consolidation), newest first: {operations, count}. Filters: status, kind; limit 1-200 (default 50).",
        annotations(read_only_hint = true)
    )]
    async fn memory_operation_list(
        &self,
        Parameters(a): Parameters<Checked<OperationListArgs>>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.run_as(&ctx, move |eng, who| {
            let a = a.get()?;
            let limit = input::range(a.limit, 1, 200, 50, "limit")?;
            let ops = eng.operation_list(&who, a.status.as_deref(), a.kind.as_deref(), limit as usize)?;
            Ok(json!({"count": ops.len(), "operations": ops}))
        })
        .await
    }

    #[tool(
        description = "One operation's status, the poll target for memory_add's and memory_bank_consolidate's operation_id. A completed retain reports facts_extracted (0 with nothing_learned and a notice when the content was already known).",
        annotations(read_only_hint = true)
    )]
    async fn memory_operation_get(
        &self,
        Parameters(a): Parameters<Checked<IdArgs>>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.run_as(&ctx, move |eng, who| Ok(json!(eng.operation_get(&who, &a.get()?.id)?))).await
    }

    #[tool(
        description = "Abort pending or processing work. This engine completes work inside the call, so a finished operation is refused with memory.operation_finished."
    )]
    async fn memory_operation_cancel(
        &self,
        Parameters(a): Parameters<Checked<IdArgs>>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.run_as(&ctx, move |eng, who| Ok(json!(eng.operation_cancel(&who, &a.get()?.id)?))).await
    }

    #[tool(description = "Re-run a failed operation (a failed consolidation). Others are refused with their state.")]
    async fn memory_operation_retry(
        &self,
        Parameters(a): Parameters<Checked<IdArgs>>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.run_as(&ctx, move |eng, who| Ok(json!(eng.operation_retry(&who, &a.get()?.id)?))).await
    }

    #[tool(
        description = "LLM-backed synthesis over recalled memories. The embedded engine has no language model: answers {status: \"unsupported\", detail}. Use memory_recall.",
        annotations(read_only_hint = true)
    )]
    async fn memory_reflect(&self, Parameters(_a): Parameters<Checked<ReflectArgs>>) -> CallToolResult {
        unsupported()
    }

    #[tool(
        description = "Mental models (stored memory_reflect answers). Unsupported by the embedded engine: {status: \"unsupported\", detail}.",
        annotations(read_only_hint = true)
    )]
    async fn memory_mental_model_list(
        &self,
        Parameters(_a): Parameters<Checked<MentalModelListArgs>>,
    ) -> CallToolResult {
        unsupported()
    }

    #[tool(
        description = "One mental model. Unsupported by the embedded engine: {status: \"unsupported\", detail}.",
        annotations(read_only_hint = true)
    )]
    async fn memory_mental_model_get(&self, Parameters(_a): Parameters<Checked<IdArgs>>) -> CallToolResult {
        unsupported()
    }

    #[tool(
        description = "Create a mental model. Unsupported by the embedded engine: {status: \"unsupported\", detail}."
    )]
    async fn memory_mental_model_create(
        &self,
        Parameters(_a): Parameters<Checked<MentalModelCreateArgs>>,
    ) -> CallToolResult {
        unsupported()
    }

    #[tool(
        description = "Update a mental model. Unsupported by the embedded engine: {status: \"unsupported\", detail}."
    )]
    async fn memory_mental_model_update(
        &self,
        Parameters(_a): Parameters<Checked<MentalModelUpdateArgs>>,
    ) -> CallToolResult {
        unsupported()
    }

    #[tool(
        description = "Refresh a mental model. Unsupported by the embedded engine: {status: \"unsupported\", detail}."
    )]
    async fn memory_mental_model_refresh(&self, Parameters(_a): Parameters<Checked<IdArgs>>) -> CallToolResult {
        unsupported()
    }

    #[tool(
        description = "Delete a mental model. Unsupported by the embedded engine (there are none): {status: \"unsupported\", detail}."
    )]
    async fn memory_mental_model_delete(&self, Parameters(_a): Parameters<Checked<IdArgs>>) -> CallToolResult {
        unsupported()
    }
}

/// `query` must hold something (a query of only punctuation is fine: it finds nothing).
fn blank_checked(q: &str) -> Result<&str> {
    if q.trim().is_empty() { Err(schema_error("`query` must not be empty")) } else { Ok(q) }
}

#[tool_handler(router = self.tool_router, name = "hal0-memory", instructions = "hal0 long-term memory (embedded SQLite engine, bm25 word index). Datasets: shared (default), agents, project:<id>; send X-hal0-Private: 1 to keep notes in your own private dataset (a bridge client's private memory is reachable only with its own bridge key; the admin key may read it). Prefer memory_recall for context and memory_search for ranked hits. Bulk deletes and directive deletes wait for the operator's approval.")]
impl ServerHandler for MemoryServer {
    async fn list_tools(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<rmcp::model::ListToolsResult, rmcp::ErrorData> {
        let tools = self.tool_router.list_all().into_iter().filter(|t| !NEEDS_A_MODEL.contains(&t.name.as_ref()));
        Ok(rmcp::model::ListToolsResult::with_all_items(tools.collect()))
    }

    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
        super::routed_and_audited(
            self,
            &self.tool_router,
            (&self.state, super::AuditWait::ReadsOnly, memory_error),
            SURFACE,
            request,
            context,
        )
        .await
    }
}
