//! Memory namespaces: which datasets a caller may write and read. One set of rules for
//! every front (MCP, REST, the bridge's teach tools): writes default to `shared`, private
//! mode (`X-hal0-Private: 1`) files them under `private:<identity>`, reads cover `shared`
//! and the caller's own private dataset, and nobody reads or writes another caller's
//! `private:*` dataset.
//!
//! A bridge client's private namespace is its own. A box key names its caller with
//! `X-hal0-Agent`, which anyone holding the key can set; when that name is a bridge
//! client's ([`Who::resolve`]), the caller does not get the client's private memory: the
//! client box key is refused (`memory.private_forbidden`), and the admin box key may read it
//! (the admin tier decides what the box's memory is for) while every change to its notes
//! waits for the operator's approval and nothing new is written into it. A name no bridge
//! client holds (a Hermes profile's, say) keeps its own private memory as before.

use super::schema_error;
use crate::base::error::{Error, Kind, Result};
use crate::store::Store;

pub const SHARED: &str = "shared";
pub const AGENTS: &str = "agents";
pub const PRIVATE_PREFIX: &str = "private:";
pub const PROJECT_PREFIX: &str = "project:";
pub const ANONYMOUS: &str = "anonymous";

/// The code of a private namespace a caller may not use.
pub const PRIVATE_FORBIDDEN: &str = "memory.private_forbidden";

/// How the request's identity was established (the front knows the credential).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// A bridge key: the identity is the client's own name.
    BridgeKey,
    /// The admin box key with `X-hal0-Agent`.
    AdminKey,
    /// The client box key with `X-hal0-Agent`, or no key while auth is off.
    ClientKey,
}

/// What the front knows about the caller, before the memory rules decide what it may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub identity: String,
    pub private: bool,
    pub via: Via,
}

/// The caller's standing toward the private namespace filed under its identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Its own: a bridge key's client name, or a name claimed with a box key that no
    /// bridge client holds.
    Own,
    /// The admin box key claiming a bridge client's name: reads that client's private
    /// memory; changes to its notes are gated; nothing new is written into it.
    AdminOver,
    /// The client box key (or no key) claiming a bridge client's name: no access to that
    /// client's private memory.
    Refused,
}

/// The caller as the memory rules see it: the writer identity (a bridge client's name, else
/// `X-hal0-Agent` or `anonymous`), whether private mode is on, and its standing toward the
/// private namespace of that identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Who {
    pub identity: String,
    pub private: bool,
    pub standing: Standing,
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

fn unknown(d: &str) -> crate::base::error::Error {
    schema_error(format!(
        "unknown dataset `{d}`: use `shared`, `agents`, `project:<id>` or your own private dataset (send X-hal0-Private: 1)"
    ))
}

fn forbidden(msg: String) -> Error {
    Error::new(PRIVATE_FORBIDDEN, Kind::Forbidden, msg)
}

impl Who {
    /// A caller whose identity is its own (a bridge key, or hal0 itself).
    pub fn new(identity: impl Into<String>, private: bool) -> Who {
        Who { identity: identity.into(), private, standing: Standing::Own }
    }

    pub fn anonymous() -> Who {
        Who::new(ANONYMOUS, false)
    }

    /// Decide the caller's standing: a name claimed through a box key that belongs to a
    /// bridge client (revoked ones too: the name stays reserved, and so do its notes) does
    /// not make that client's private memory the caller's own.
    pub fn resolve(store: &Store, c: Claim) -> Result<Who> {
        let claimed_client =
            c.via != Via::BridgeKey && c.identity != ANONYMOUS && crate::auth::bridge::name_exists(store, &c.identity)?;
        let standing = match (claimed_client, c.via) {
            (false, _) | (_, Via::BridgeKey) => Standing::Own,
            (true, Via::AdminKey) => Standing::AdminOver,
            (true, Via::ClientKey) => Standing::Refused,
        };
        Ok(Who { identity: c.identity, private: c.private, standing })
    }

    /// Who acts, for approval rows and history: the identity, marked `admin:` when the admin
    /// key acts under a bridge client's name.
    pub fn actor(&self) -> String {
        match self.standing {
            Standing::AdminOver => crate::base::actor::Actor::Admin(self.identity.clone()).to_string(),
            _ => self.identity.clone(),
        }
    }

    /// `private:<identity>` when this caller may read it: `None` for an anonymous caller
    /// (who has no private memory) and for a client box key claiming a bridge client's name.
    pub fn own_private(&self) -> Option<String> {
        (self.identity != ANONYMOUS && valid_name(&self.identity) && self.standing != Standing::Refused)
            .then(|| format!("{PRIVATE_PREFIX}{}", self.identity))
    }

    /// Whether `dataset` is a bridge client's private memory this caller reads as the admin
    /// key: changes to notes there wait for approval.
    pub fn borrows(&self, dataset: &str) -> bool {
        self.standing == Standing::AdminOver && self.own_private().as_deref() == Some(dataset)
    }

    fn refused(&self) -> Error {
        forbidden(format!(
            "`{0}` is a bridge client: its private memory is reachable only with its own bridge key, not with \
             the client box key and X-hal0-Agent: {0}",
            self.identity
        ))
    }

    /// The refusal of a change into a bridge client's private memory by the admin key.
    pub(crate) fn no_writes_over(&self) -> Error {
        forbidden(format!(
            "`{0}` is a bridge client: the admin key reads its private memory but writes nothing new into it \
             (a change or delete of one of its notes waits for the operator's approval); write to a shared \
             dataset, or use {0}'s own bridge key",
            self.identity
        ))
    }

    fn need_own_private(&self) -> Result<String> {
        if self.standing == Standing::Refused {
            return Err(self.refused());
        }
        self.own_private().ok_or_else(|| {
            schema_error(
                "private mode needs a caller identity: send X-hal0-Agent: <name> (or use a bridge key) with X-hal0-Private: 1",
            )
        })
    }

    /// The dataset a single-note change counts as "home": the private one in private mode,
    /// else `shared`.
    pub(crate) fn home_dataset(&self) -> Result<String> {
        if self.private { self.need_own_private() } else { Ok(SHARED.to_string()) }
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
            let own = self.need_own_private()?;
            if self.borrows(&own) {
                return Err(self.no_writes_over());
            }
            return Ok(own);
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

    /// The datasets a read covers. Nothing named: `shared` and the caller's own private
    /// dataset (a Hermes profile finds what a client taught it with `agent_memory_add`,
    /// filed under its name, without private mode); the admin key over a bridge client's
    /// name adds it only in private mode. Named: each must be a known dataset the caller may
    /// see; a foreign `private:*` is refused outright.
    pub fn read_datasets(&self, requested: &[String]) -> Result<Vec<String>> {
        let named: Vec<&str> = requested.iter().map(|d| d.trim()).filter(|d| !d.is_empty()).collect();
        if named.is_empty() {
            let mut out = vec![SHARED.to_string()];
            if self.private {
                out.push(self.need_own_private()?);
            } else if self.standing == Standing::Own
                && let Some(own) = self.own_private()
            {
                out.push(own);
            }
            return Ok(out);
        }
        let mut out: Vec<String> = Vec::with_capacity(named.len());
        for d in named {
            if d.starts_with(PRIVATE_PREFIX) {
                if self.standing == Standing::Refused && d.strip_prefix(PRIVATE_PREFIX) == Some(self.identity.as_str())
                {
                    return Err(self.refused());
                }
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
    fn reads_default_to_shared_plus_own_private() {
        // A caller's own private memory is part of what it reads, private mode or not (a
        // Hermes profile finds the notes a client taught it).
        assert_eq!(Who::new("ws", false).read_datasets(&[]).unwrap(), v(&["shared", "private:ws"]));
        assert_eq!(Who::new("ws", true).read_datasets(&[]).unwrap(), v(&["shared", "private:ws"]));
        assert_eq!(Who::anonymous().read_datasets(&v(&[" ", ""])).unwrap(), v(&["shared"]));
        // Not so for a box key claiming a bridge client's name: the admin key reads the
        // client's memory only in private mode, the client key never.
        let over = |standing, private| Who { identity: "ci".into(), private, standing };
        assert_eq!(over(Standing::AdminOver, false).read_datasets(&[]).unwrap(), v(&["shared"]));
        assert_eq!(over(Standing::AdminOver, true).read_datasets(&[]).unwrap(), v(&["shared", "private:ci"]));
        assert_eq!(over(Standing::Refused, false).read_datasets(&[]).unwrap(), v(&["shared"]));
        assert!(over(Standing::Refused, true).read_datasets(&[]).is_err());
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
    fn a_claimed_bridge_client_name_does_not_open_its_private_memory() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(&d.path().join("n.db")).unwrap();
        crate::auth::bridge::add(&store, "bob", "", Default::default()).unwrap();
        let who =
            |name: &str, private, via| Who::resolve(&store, Claim { identity: name.into(), private, via }).unwrap();

        assert_eq!(who("bob", true, Via::BridgeKey).standing, Standing::Own);
        assert_eq!(who("work", true, Via::ClientKey).standing, Standing::Own, "a name no client holds");
        assert_eq!(who("Bob", true, Via::ClientKey).standing, Standing::Own, "not a client name at all");
        assert_eq!(who("anonymous", false, Via::ClientKey).standing, Standing::Own);

        let fake = who("bob", true, Via::ClientKey);
        assert_eq!(fake.standing, Standing::Refused);
        assert_eq!(fake.own_private(), None);
        assert!(!fake.can_see("private:bob"));
        for e in [
            fake.write_dataset(None).unwrap_err(),
            fake.read_datasets(&[]).unwrap_err(),
            who("bob", false, Via::ClientKey).read_datasets(&v(&["private:bob"])).unwrap_err(),
        ] {
            assert_eq!((e.code, e.status()), (PRIVATE_FORBIDDEN, 403));
            assert!(e.message.contains("only with its own bridge key"), "{}", e.message);
        }
        assert_eq!(who("bob", false, Via::ClientKey).write_dataset(None).unwrap(), "shared");

        let adm = who("bob", true, Via::AdminKey);
        assert_eq!(adm.standing, Standing::AdminOver);
        assert_eq!(adm.read_datasets(&[]).unwrap(), v(&["shared", "private:bob"]));
        assert!(adm.borrows("private:bob") && !adm.borrows("shared"));
        assert_eq!(adm.write_dataset(None).unwrap_err().code, PRIVATE_FORBIDDEN);
        assert_eq!(adm.actor(), "admin:bob");
        assert_eq!(who("work", true, Via::AdminKey).actor(), "work");
        assert!(!who("work", true, Via::AdminKey).borrows("private:work"));
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
