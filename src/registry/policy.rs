//! The tool policy of an installed server: three disjoint tiers (allow, gated, blocked);
//! a tool not on any list is not callable.

use crate::base::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// The `[tools]` table of a record.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct ToolPolicy {
    pub allow: Vec<String>,
    pub gated: Vec<String>,
    pub blocked: Vec<String>,
}

/// The list of a server's tool policy a tool sits on (or is moved to).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolList {
    Allow,
    Gated,
    Blocked,
}

impl ToolList {
    /// The key of the list in `[tools]`.
    pub fn key(self) -> &'static str {
        match self {
            ToolList::Allow => "allow",
            ToolList::Gated => "gated",
            ToolList::Blocked => "blocked",
        }
    }
    pub const ALL: [ToolList; 3] = [ToolList::Allow, ToolList::Gated, ToolList::Blocked];
}

/// What a call to a tool would meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Allow,
    Gated,
    Blocked,
    UnknownTool,
    UnknownServer,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Gated => "gated",
            Verdict::Blocked => "blocked",
            Verdict::UnknownTool => "unknown_tool",
            Verdict::UnknownServer => "unknown_server",
        }
    }
}

impl ToolPolicy {
    pub fn list(&self, t: ToolList) -> &Vec<String> {
        match t {
            ToolList::Allow => &self.allow,
            ToolList::Gated => &self.gated,
            ToolList::Blocked => &self.blocked,
        }
    }

    /// Blocked first, then gated, then allow, else unknown_tool.
    pub fn verdict(&self, tool: &str) -> Verdict {
        let has = |l: &Vec<String>| l.iter().any(|t| t == tool);
        if has(&self.blocked) {
            Verdict::Blocked
        } else if has(&self.gated) {
            Verdict::Gated
        } else if has(&self.allow) {
            Verdict::Allow
        } else {
            Verdict::UnknownTool
        }
    }

    /// The tier a tool sits on, if any.
    pub fn tier_of(&self, tool: &str) -> Option<ToolList> {
        ToolList::ALL.into_iter().find(|t| self.list(*t).iter().any(|x| x == tool))
    }

    /// Every name valid, none listed twice (on one list or across lists).
    pub fn validate(&self) -> Result<()> {
        let mut seen: Vec<(&str, ToolList)> = Vec::new();
        for t in ToolList::ALL {
            for tool in self.list(t) {
                validate_tool(tool)?;
                if let Some((_, other)) = seen.iter().find(|(n, _)| *n == tool) {
                    let msg = if *other == t {
                        format!("tool `{tool}` is listed twice in `{}`", t.key())
                    } else {
                        format!(
                            "tool `{tool}` is on both `{}` and `{}`; a tool sits on one tier only",
                            other.key(),
                            t.key()
                        )
                    };
                    return Err(Error::invalid("mcp.tools_invalid", msg));
                }
                seen.push((tool, t));
            }
        }
        Ok(())
    }

    /// The policy with `tool` on `tier` and on no other list.
    pub fn with_tier(&self, tool: &str, tier: ToolList) -> ToolPolicy {
        let mut p = self.clone();
        for l in [&mut p.allow, &mut p.gated, &mut p.blocked] {
            l.retain(|t| t != tool);
        }
        match tier {
            ToolList::Allow => p.allow.push(tool.into()),
            ToolList::Gated => p.gated.push(tool.into()),
            ToolList::Blocked => p.blocked.push(tool.into()),
        }
        p
    }
}

/// The `[resource_access]` or `[prompt_access]` table of a record: which of the server's
/// resources (by URI) or prompts (by name) a consumer of the proxy may list and read. An
/// entry ending in `*` matches every name that starts with what comes before it
/// (`demo://resource/static/*`). A name on neither list is not offered: by default a
/// consumer sees no resource and no prompt. There is no gated list: a read does not wait for
/// a person.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct AccessPolicy {
    pub allow: Vec<String>,
    pub blocked: Vec<String>,
}

/// Whether access-list entry `pattern` covers `name`. A prefix entry covers only a plain
/// rest: no `.` or `..` segment, no empty segment (`//`), no `%` escape and no backslash,
/// which a server could resolve to a name the lists did not mean (`file:///docs/../etc`,
/// `file:///docs/./private`). An exact entry covers exactly its own text.
fn covers(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        // The rest is checked with the prefix's last `/`, so `…/*` refuses `…//x` too.
        Some(prefix) => {
            name.starts_with(prefix) && plain_rest(&name[prefix.len() - usize::from(prefix.ends_with('/'))..])
        }
        None => pattern == name,
    }
}

fn plain_rest(rest: &str) -> bool {
    // (`rest` may start with the prefix's own `/`: its first segment is then empty.)
    !rest.contains(['%', '\\']) && !rest.contains("//") && rest.split('/').all(|seg| seg != "." && seg != "..")
}

impl AccessPolicy {
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.blocked.is_empty()
    }

    /// Blocked first, then allow, else `unknown_tool` (not offered).
    pub fn verdict(&self, name: &str) -> Verdict {
        if self.blocked.iter().any(|p| covers(p, name)) {
            Verdict::Blocked
        } else if self.allow.iter().any(|p| covers(p, name)) {
            Verdict::Allow
        } else {
            Verdict::UnknownTool
        }
    }

    /// Every entry 1–2048 printable characters without spaces, none listed twice.
    pub fn validate(&self, table: &str) -> Result<()> {
        let mut seen: Vec<&str> = Vec::new();
        for e in self.allow.iter().chain(&self.blocked) {
            if e.is_empty() || e.len() > 2048 || e.chars().any(|c| c.is_whitespace() || c.is_control()) {
                return Err(Error::invalid(
                    "mcp.access_invalid",
                    format!(
                        "`{}` in `[{table}]` is not a name or URI (1–2048 characters, no spaces)",
                        e.escape_debug()
                    ),
                ));
            }
            if seen.contains(&e.as_str()) {
                return Err(Error::invalid(
                    "mcp.access_invalid",
                    format!("`{e}` is listed twice in `[{table}]`; an entry sits on one list only"),
                ));
            }
            seen.push(e);
        }
        Ok(())
    }

    /// The policy with `name` on `list` (`None`: on neither) and on no other list.
    pub fn with(&self, name: &str, list: Option<ToolList>) -> AccessPolicy {
        let mut p = self.clone();
        p.allow.retain(|t| t != name);
        p.blocked.retain(|t| t != name);
        match list {
            Some(ToolList::Blocked) => p.blocked.push(name.into()),
            Some(_) => p.allow.push(name.into()),
            None => {}
        }
        p
    }
}

/// A new policy from three lists; a tool on two lists is refused with `mcp.tools_invalid`.
pub fn replace_policy(allow: Vec<String>, gated: Vec<String>, blocked: Vec<String>) -> Result<ToolPolicy> {
    let p = ToolPolicy { allow, gated, blocked };
    p.validate()?;
    Ok(p)
}

/// MCP tool names: 1–128 of letters, digits, `_`, `-`, `.`, `/`.
pub fn validate_tool(tool: &str) -> Result<()> {
    let ok = !tool.is_empty()
        && tool.len() <= 128
        && tool.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'));
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(
            "mcp.tools_invalid",
            "a tool name is 1–128 of letters, digits, `_`, `-`, `.` and `/`".to_string(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn blocked_then_gated_then_allow() {
        let p = ToolPolicy { allow: v(&["a", "x"]), gated: v(&["g"]), blocked: v(&["b"]) };
        assert_eq!(p.verdict("a"), Verdict::Allow);
        assert_eq!(p.verdict("g"), Verdict::Gated);
        assert_eq!(p.verdict("b"), Verdict::Blocked);
        assert_eq!(p.verdict("zzz"), Verdict::UnknownTool);
        assert_eq!(ToolPolicy::default().verdict("a"), Verdict::UnknownTool);
    }

    #[test]
    fn access_lists_match_exact_names_and_prefixes() {
        let p = AccessPolicy { allow: v(&["demo://static/*", "simple"]), blocked: v(&["demo://static/secret*"]) };
        assert_eq!(p.verdict("demo://static/a.md"), Verdict::Allow);
        assert_eq!(p.verdict("demo://static/secret.md"), Verdict::Blocked);
        assert_eq!(p.verdict("simple"), Verdict::Allow);
        assert_eq!(p.verdict("simple-2"), Verdict::UnknownTool, "no `*`, no prefix match");
        assert_eq!(AccessPolicy::default().verdict("simple"), Verdict::UnknownTool, "nothing offered by default");
        // A prefix covers plain names only: a server could resolve these elsewhere.
        for sneaky in [
            "demo://static/../etc/passwd",
            "demo://static/./secret.md",
            "demo://static//secret.md",
            "demo://static/%73ecret.md",
            "demo://static/a/..",
            "demo://static\\..\\x",
        ] {
            assert_eq!(p.verdict(sneaky), Verdict::UnknownTool, "{sneaky}");
        }
        assert_eq!(p.verdict("demo://static/dir/"), Verdict::Allow);
        assert_eq!(p.verdict("demo://static/a.b/c..d"), Verdict::Allow, "dots inside a name are fine");
        p.validate("resource_access").unwrap();
        let twice = AccessPolicy { allow: v(&["a"]), blocked: v(&["a"]) };
        assert_eq!(twice.validate("prompt_access").unwrap_err().code, "mcp.access_invalid");
        let spaced = AccessPolicy { allow: v(&["a b"]), ..Default::default() };
        assert_eq!(spaced.validate("prompt_access").unwrap_err().code, "mcp.access_invalid");
        let moved = p.with("simple", Some(ToolList::Blocked));
        assert_eq!(moved.verdict("simple"), Verdict::Blocked);
        assert_eq!(moved.with("simple", None).verdict("simple"), Verdict::UnknownTool);
    }

    #[test]
    fn with_tier_moves_never_duplicates() {
        let p = ToolPolicy::default().with_tier("t", ToolList::Gated);
        assert_eq!(p.tier_of("t"), Some(ToolList::Gated));
        let p = p.with_tier("t", ToolList::Allow).with_tier("t", ToolList::Allow);
        assert_eq!(p, ToolPolicy { allow: v(&["t"]), ..Default::default() });
        let p = p.with_tier("t", ToolList::Blocked);
        assert_eq!(p, ToolPolicy { blocked: v(&["t"]), ..Default::default() });
        p.validate().unwrap();
    }

    #[test]
    fn replace_refuses_overlap_and_bad_names() {
        let e = replace_policy(v(&["a"]), v(&["a"]), vec![]).unwrap_err();
        assert_eq!(e.code, "mcp.tools_invalid");
        assert!(e.message.contains("`allow` and `gated`"), "{}", e.message);
        assert!(replace_policy(v(&["a", "a"]), vec![], vec![]).is_err());
        assert!(replace_policy(v(&["has space"]), vec![], vec![]).is_err());
        assert!(replace_policy(v(&[""]), vec![], vec![]).is_err());
        let p = replace_policy(v(&["a"]), v(&["b"]), v(&["c"])).unwrap();
        assert_eq!(p.verdict("c"), Verdict::Blocked);
    }
}
