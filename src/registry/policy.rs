//! The tool policy of an installed server: three disjoint tiers (allow, gated, blocked);
//! a tool not on any list is not callable.

use crate::error::{Error, Result};
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
