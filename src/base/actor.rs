//! Who did something, as the audit log, the approvals inbox and the memory notes record it:
//! one type for the caller's identity ([`Actor`]), written as `kind:name` (`cli:root`,
//! `person:alice`, `bridge:laptop`, …) and read back from that text. Every front and
//! operation that names a caller builds an `Actor`; nothing formats or parses the prefixes
//! by hand.

use std::fmt;

/// A caller, by the credential or surface it came through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    /// An operator at this box's shell (`cli:USER`, the sudo user when there is one).
    Cli(String),
    /// A named person of the dashboard (`person:NAME`).
    Person(String),
    /// A dashboard session from before people had names (`ui:SESSION`).
    UiSession(String),
    /// A bridge client's key (`bridge:NAME`).
    Bridge(String),
    /// A consumer key of an installed server (`consumer:SERVER/NAME`, or `consumer:NAME`
    /// where the server is implied).
    Consumer(String),
    /// An OAuth client or grant (`oauth:CLIENT`, `oauth:BRIDGE/GRANT`).
    Oauth(String),
    /// The box's admin key, with the agent it named (`admin:AGENT`).
    Admin(String),
    /// The box's client key, with the agent it named (`client:AGENT`).
    Client(String),
    /// A REST caller whose key is not a bridge client's (`api:AGENT`).
    Api(String),
    /// Whoever opened an upstream account's start link, for the holder it names
    /// (`link:HOLDER`).
    Link(String),
    /// Text of no known kind, kept as it was.
    Other(String),
}

/// How an actor of one kind is made from its name.
type Make = fn(String) -> Actor;

/// The kinds and their prefixes, in one table (the text form's single source).
const KINDS: [(&str, Make); 10] = [
    ("cli", Actor::Cli),
    ("person", Actor::Person),
    ("ui", Actor::UiSession),
    ("bridge", Actor::Bridge),
    ("consumer", Actor::Consumer),
    ("oauth", Actor::Oauth),
    ("admin", Actor::Admin),
    ("client", Actor::Client),
    ("api", Actor::Api),
    ("link", Actor::Link),
];

impl Actor {
    /// The actor a recorded identity names (`Other` when its kind is unknown).
    pub fn parse(text: &str) -> Actor {
        text.split_once(':')
            .and_then(|(kind, name)| KINDS.iter().find(|(k, _)| *k == kind).map(|(_, make)| make(name.to_string())))
            .unwrap_or_else(|| Actor::Other(text.to_string()))
    }

    /// The kind's prefix and the name after it.
    fn parts(&self) -> (Option<&'static str>, &str) {
        match self {
            Actor::Cli(n) => (Some("cli"), n),
            Actor::Person(n) => (Some("person"), n),
            Actor::UiSession(n) => (Some("ui"), n),
            Actor::Bridge(n) => (Some("bridge"), n),
            Actor::Consumer(n) => (Some("consumer"), n),
            Actor::Oauth(n) => (Some("oauth"), n),
            Actor::Admin(n) => (Some("admin"), n),
            Actor::Client(n) => (Some("client"), n),
            Actor::Api(n) => (Some("api"), n),
            Actor::Link(n) => (Some("link"), n),
            Actor::Other(t) => (None, t),
        }
    }

    /// Whether it is someone at the dashboard (a named person or an old session).
    pub fn at_dashboard(&self) -> bool {
        matches!(self, Actor::Person(_) | Actor::UiSession(_))
    }
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.parts() {
            (Some(kind), name) => write!(f, "{kind}:{name}"),
            (None, text) => f.write_str(text),
        }
    }
}

impl From<Actor> for std::sync::Arc<str> {
    fn from(a: Actor) -> Self {
        a.to_string().into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_reads_back_what_it_writes() {
        for (kind, make) in KINDS {
            let a = make("some/name:with-colon".into());
            let text = a.to_string();
            assert_eq!(text, format!("{kind}:some/name:with-colon"));
            assert_eq!(Actor::parse(&text), a);
        }
    }

    #[test]
    fn unknown_or_bare_text_is_kept_as_it_was() {
        for text in ["", "root", "robot:x", ":x", "CLI:root"] {
            let a = Actor::parse(text);
            assert_eq!(a, Actor::Other(text.into()));
            assert_eq!(a.to_string(), text);
        }
    }

    #[test]
    fn only_people_and_sessions_are_at_the_dashboard() {
        assert!(Actor::parse("person:alice").at_dashboard() && Actor::parse("ui:s1").at_dashboard());
        assert!(!Actor::parse("cli:root").at_dashboard() && !Actor::parse("oauth:c").at_dashboard());
    }
}
