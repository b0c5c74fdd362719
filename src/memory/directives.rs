//! Directives: the bank's standing instructions (name, content, priority, active flag,
//! tags) that an agent injects into its prompts. Bank-level, not per dataset. Deleting one
//! goes through the approvals inbox (see [`super::gate`]).

use super::{MemoryEngine, input, not_found, schema_error};
use crate::base::error::Result;
use crate::store::now;
use rusqlite::{OptionalExtension, params};
use serde::Serialize;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Directive {
    pub id: String,
    pub name: String,
    pub content: String,
    pub priority: i64,
    pub is_active: bool,
    pub tags: Vec<String>,
    pub created_by: String,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Debug, Clone, Default)]
pub struct NewDirective {
    pub name: String,
    pub content: String,
    pub priority: Option<i64>,
    pub is_active: Option<bool>,
    pub tags: Vec<String>,
}

/// Fields `directive_update` may change; `None` leaves one alone.
#[derive(Debug, Clone, Default)]
pub struct DirectiveChanges {
    pub name: Option<String>,
    pub content: Option<String>,
    pub priority: Option<i64>,
    pub is_active: Option<bool>,
    pub tags: Option<Vec<String>>,
}

const COLS: &str = "id, name, content, priority, is_active, tags, created_by, created_at, updated_at";
const MAX_NAME_CHARS: usize = 200;
const PRIORITY: (i64, i64) = (-1000, 1000);

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Directive> {
    let tags: String = r.get(5)?;
    Ok(Directive {
        id: r.get(0)?,
        name: r.get(1)?,
        content: r.get(2)?,
        priority: r.get(3)?,
        is_active: r.get(4)?,
        tags: serde_json::from_str(&tags).unwrap_or_default(),
        created_by: r.get(6)?,
        created_at: r.get(7)?,
        updated_at: r.get(8)?,
    })
}

fn name(s: &str) -> Result<String> {
    let n = input::text(s, "name")?;
    if n.chars().count() > MAX_NAME_CHARS || n.chars().any(char::is_control) {
        return Err(schema_error(format!("`name` is one line of at most {MAX_NAME_CHARS} characters")));
    }
    Ok(n)
}

fn priority(p: Option<i64>) -> Result<Option<i64>> {
    match p {
        Some(p) if !(PRIORITY.0..=PRIORITY.1).contains(&p) => {
            Err(schema_error(format!("`priority` must be between {} and {} (got {p})", PRIORITY.0, PRIORITY.1)))
        }
        p => Ok(p),
    }
}

impl MemoryEngine {
    pub fn directive_create(&self, actor: &str, d: NewDirective) -> Result<Directive> {
        let name = name(&d.name)?;
        let content = input::text(&d.content, "content")?;
        let priority = priority(d.priority)?.unwrap_or(0);
        let tags = input::tags(&d.tags)?;
        let id = input::new_id("dir")?;
        let at = now();
        self.write(|tx| {
            tx.execute(
                &format!("INSERT INTO memory_directives ({COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)"),
                params![
                    id,
                    name,
                    content,
                    priority,
                    d.is_active.unwrap_or(true),
                    serde_json::to_string(&tags).unwrap_or_default(),
                    actor,
                    at
                ],
            )?;
            Ok(())
        })?;
        self.directive_get(&id)
    }

    pub fn directive_get(&self, id: &str) -> Result<Directive> {
        let id = input::id(id, "id")?;
        self.store
            .with(|c| {
                Ok(c.query_row(&format!("SELECT {COLS} FROM memory_directives WHERE id = ?1"), [&id], row)
                    .optional()?)
            })?
            .ok_or_else(|| not_found("directive", &id))
    }

    /// Directives by priority (highest first), then age; `active_only` drops inactive ones,
    /// `tags` keeps those carrying any of them.
    pub fn directive_list(&self, active_only: bool, tags: &[String]) -> Result<Vec<Directive>> {
        let tags = input::tags(tags)?;
        let all = self.store.with(|c| {
            let mut st = c.prepare(&format!(
                "SELECT {COLS} FROM memory_directives WHERE (?1 = 0 OR is_active = 1)
                 ORDER BY priority DESC, created_at, id"
            ))?;
            let rows = st.query_map([active_only], row)?.collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })?;
        Ok(all.into_iter().filter(|d| tags.is_empty() || d.tags.iter().any(|t| tags.contains(t))).collect())
    }

    pub fn directive_update(&self, id: &str, ch: DirectiveChanges) -> Result<Directive> {
        if ch.name.is_none()
            && ch.content.is_none()
            && ch.priority.is_none()
            && ch.is_active.is_none()
            && ch.tags.is_none()
        {
            return Err(schema_error("name at least one field to change: name, content, priority, is_active or tags"));
        }
        let mut d = self.directive_get(id)?;
        if let Some(n) = &ch.name {
            d.name = name(n)?;
        }
        if let Some(c) = &ch.content {
            d.content = input::text(c, "content")?;
        }
        if let Some(p) = priority(ch.priority)? {
            d.priority = p;
        }
        if let Some(a) = ch.is_active {
            d.is_active = a;
        }
        if let Some(t) = &ch.tags {
            d.tags = input::tags(t)?;
        }
        self.write(|tx| {
            tx.execute(
                "UPDATE memory_directives SET name = ?1, content = ?2, priority = ?3, is_active = ?4, tags = ?5,
                 updated_at = ?6 WHERE id = ?7",
                params![
                    d.name,
                    d.content,
                    d.priority,
                    d.is_active,
                    serde_json::to_string(&d.tags).unwrap_or_default(),
                    now(),
                    d.id
                ],
            )?;
            Ok(())
        })?;
        self.directive_get(&d.id)
    }

    /// Delete a directive now. Callers outside the approvals inbox go through
    /// [`MemoryEngine::directive_delete_request`] instead.
    pub fn directive_delete(&self, id: &str) -> Result<bool> {
        let id = input::id(id, "id")?;
        Ok(self.write(|tx| Ok(tx.execute("DELETE FROM memory_directives WHERE id = ?1", [&id])?))? == 1)
    }
}
