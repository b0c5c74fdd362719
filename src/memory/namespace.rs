//! Memory namespaces: which datasets a caller may write and read. One set of rules for
//! every front (MCP, REST, the bridge's teach tools): writes default to `shared`, private
//! mode (`X-hal0-Private: 1`) files them under `private:<identity>`, and nobody reads or
//! writes another caller's `private:*` dataset.

use super::schema_error;
use crate::error::Result;

pub const SHARED: &str = "shared";
pub const AGENTS: &str = "agents";
pub const PRIVATE_PREFIX: &str = "private:";
pub const PROJECT_PREFIX: &str = "project:";
pub const ANONYMOUS: &str = "anonymous";

/// The caller as the guard resolved it: the writer identity (a bridge client's name, else
/// `X-hal0-Agent` or `anonymous`) and whether private mode is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Who {
    pub identity: String,
    pub private: bool,
}

/// `^[a-zA-Z0-9_-]{1,64}$`: identities, project ids, document ids.
pub fn valid_name(s: &str) -> bool {
    !s.is_empty() && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Whether `d` is a dataset name at all: `shared`, `agents`, `project:<id>`, `private:<name>`.
pub fn valid_dataset(d: &str) -> bool {
    d == SHARED
        || d == AGENTS
        || d.strip_prefix(PROJECT_PREFIX).is_some_and(valid_name)
        || d.strip_prefix(PRIVATE_PREFIX).is_some_and(|n| valid_name(n) && n != ANONYMOUS)
}

fn unknown(d: &str) -> crate::error::Error {
    schema_error(format!(
        "unknown dataset `{d}`: use `shared`, `agents`, `project:<id>` or your own private dataset (send X-hal0-Private: 1)"
    ))
}

impl Who {
    pub fn new(identity: impl Into<String>, private: bool) -> Who {
        Who { identity: identity.into(), private }
    }

    pub fn anonymous() -> Who {
        Who::new(ANONYMOUS, false)
    }

    /// `private:<identity>`, or `None` for an anonymous caller (who has no private memory).
    pub fn own_private(&self) -> Option<String> {
        (self.identity != ANONYMOUS && valid_name(&self.identity)).then(|| format!("{PRIVATE_PREFIX}{}", self.identity))
    }

    fn need_own_private(&self) -> Result<String> {
        self.own_private().ok_or_else(|| {
            schema_error(
                "private mode needs a caller identity: send X-hal0-Agent: <name> (or use a bridge key) with X-hal0-Private: 1",
            )
        })
    }

    /// Whether this caller may see notes filed under `dataset` at all.
    pub fn can_see(&self, dataset: &str) -> bool {
        match dataset.strip_prefix(PRIVATE_PREFIX) {
            Some(_) => self.own_private().as_deref() == Some(dataset),
            None => true,
        }
    }

    /// The dataset a write lands in. Private mode always files under `private:<identity>`
    /// (whatever was named); otherwise the named dataset, `shared` by default, and never a
    /// `private:*` one.
    pub fn write_dataset(&self, requested: Option<&str>) -> Result<String> {
        if self.private {
            return self.need_own_private();
        }
        let Some(d) = requested.map(str::trim).filter(|d| !d.is_empty()) else {
            return Ok(SHARED.to_string());
        };
        if d.starts_with(PRIVATE_PREFIX) {
            return Err(schema_error(format!(
                "cannot write to `{d}`: send X-hal0-Private: 1 to write to your own private memory instead of naming it"
            )));
        }
        if !valid_dataset(d) {
            return Err(unknown(d));
        }
        Ok(d.to_string())
    }

    /// The datasets a read covers. Nothing named: `shared`, plus the caller's own private
    /// dataset in private mode. Named: each must be a known dataset the caller may see; a
    /// foreign `private:*` is refused outright.
    pub fn read_datasets(&self, requested: &[String]) -> Result<Vec<String>> {
        let named: Vec<&str> = requested.iter().map(|d| d.trim()).filter(|d| !d.is_empty()).collect();
        if named.is_empty() {
            let mut out = vec![SHARED.to_string()];
            if self.private {
                out.push(self.need_own_private()?);
            }
            return Ok(out);
        }
        let mut out: Vec<String> = Vec::with_capacity(named.len());
        for d in named {
            if d.starts_with(PRIVATE_PREFIX) {
                if !self.can_see(d) {
                    return Err(schema_error(format!("`{d}` is another caller's private memory; it cannot be read")));
                }
            } else if !valid_dataset(d) {
                return Err(unknown(d));
            }
            if !out.iter().any(|o| o == d) {
                out.push(d.to_string());
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn writes_default_to_shared_and_accept_the_closed_set() {
        let w = Who::new("ws", false);
        assert_eq!(w.write_dataset(None).unwrap(), "shared");
        assert_eq!(w.write_dataset(Some("")).unwrap(), "shared");
        assert_eq!(w.write_dataset(Some("agents")).unwrap(), "agents");
        assert_eq!(w.write_dataset(Some("project:hal0_x-1")).unwrap(), "project:hal0_x-1");
        for bad in ["other", "project:", "project:a b", "SHARED", "private"] {
            assert_eq!(w.write_dataset(Some(bad)).unwrap_err().code, "mcp.memory_schema", "{bad}");
        }
    }

    #[test]
    fn naming_private_without_private_mode_is_refused_even_ones_own() {
        let w = Who::new("ws", false);
        assert!(w.write_dataset(Some("private:ws")).unwrap_err().message.contains("X-hal0-Private"));
        assert!(w.write_dataset(Some("private:other")).is_err());
    }

    #[test]
    fn private_mode_files_under_the_identity_and_overrides_the_name() {
        let w = Who::new("ws", true);
        assert_eq!(w.write_dataset(None).unwrap(), "private:ws");
        assert_eq!(w.write_dataset(Some("shared")).unwrap(), "private:ws");
        assert_eq!(w.write_dataset(Some("private:other")).unwrap(), "private:ws");
        let anon = Who::new("anonymous", true);
        assert_eq!(anon.write_dataset(None).unwrap_err().code, "mcp.memory_schema");
        assert!(anon.read_datasets(&[]).is_err());
    }

    #[test]
    fn reads_default_to_shared_plus_own_private_in_private_mode() {
        assert_eq!(Who::new("ws", false).read_datasets(&[]).unwrap(), v(&["shared"]));
        assert_eq!(Who::new("ws", true).read_datasets(&[]).unwrap(), v(&["shared", "private:ws"]));
        assert_eq!(Who::anonymous().read_datasets(&v(&[" ", ""])).unwrap(), v(&["shared"]));
    }

    #[test]
    fn a_foreign_private_read_is_refused_and_own_is_allowed() {
        let w = Who::new("b", false);
        let e = w.read_datasets(&v(&["shared", "private:a"])).unwrap_err();
        assert_eq!(e.code, "mcp.memory_schema");
        assert!(e.message.contains("another caller"));
        assert_eq!(w.read_datasets(&v(&["private:b", "agents", "agents"])).unwrap(), v(&["private:b", "agents"]));
        assert!(Who::anonymous().read_datasets(&v(&["private:anonymous"])).is_err());
        assert!(w.read_datasets(&v(&["nope"])).is_err());
    }

    #[test]
    fn visibility() {
        let w = Who::new("a", false);
        assert!(w.can_see("shared") && w.can_see("project:x") && w.can_see("private:a"));
        assert!(!w.can_see("private:b"));
        assert!(!Who::anonymous().can_see("private:anonymous"));
        assert_eq!(Who::anonymous().own_private(), None);
        assert!(valid_dataset("private:hermes__dev") && !valid_dataset("private:anonymous"));
    }
}
