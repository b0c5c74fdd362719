//! Telling a person that a decision waits: notification targets (webhooks, ntfy-style
//! push, e-mail over SMTP) kept in `<config>/notify.toml` ([`targets`]), what they are sent
//! ([`Event`], built from an approvals-inbox card with a link to it), how each kind is sent
//! with retries ([`send`]). The daemon's watch on the inbox that raises an event when a
//! card is queued and when one is withdrawn (it no longer applies, or expired undecided)
//! is `crate::ops::inbox_watch`. No secret is in the file: a webhook's signing secret, an ntfy token and an
//! SMTP password are api.env keys it names.

pub mod send;
pub mod targets;

use crate::approvals::Approval;
use crate::config::Config;
use serde::Serialize;

/// What happened to a card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum What {
    /// A card waits for a person.
    Queued,
    /// A waiting card no longer applies (its run ended, its request expired, …).
    Withdrawn,
    /// Nobody decided a card before it expired.
    Expired,
    /// `hal0 notify test`.
    Test,
}

impl What {
    /// The event's name on the wire (`X-Hal0-Event`).
    pub fn name(self) -> &'static str {
        match self {
            What::Queued => "approval.queued",
            What::Withdrawn => "approval.withdrawn",
            What::Expired => "approval.expired",
            What::Test => "notify.test",
        }
    }
}

/// The card an event is about, as a receiver may see it (redacted; no stored result).
#[derive(Debug, Clone, Serialize)]
pub struct Card {
    pub id: String,
    pub kind: String,
    pub client: String,
    pub tool: String,
    pub preview: String,
    pub created_at: String,
    pub status: String,
    pub reason: Option<String>,
}

/// One notification.
#[derive(Debug, Clone, Serialize)]
pub struct Event {
    pub event: &'static str,
    #[serde(skip)]
    pub what: What,
    /// Where a person decides: the card in the dashboard.
    pub url: String,
    pub approval: Option<Card>,
    /// This box's name.
    pub host: String,
}

/// The dashboard's base URL: `[network].public_url`, else this box's loopback URL.
fn base(cfg: &Config) -> String {
    match &cfg.network.public_url {
        Some(u) => u.trim_end_matches('/').to_string(),
        None => crate::connect::local_base(cfg),
    }
}

fn host() -> String {
    gethostname::gethostname().to_string_lossy().into_owned()
}

impl Event {
    /// The event `what` of card `a` (its preview redacted).
    pub fn of(cfg: &Config, what: What, a: &Approval) -> Event {
        let card = Card {
            id: a.id.clone(),
            kind: a.kind.as_str().to_string(),
            client: a.client.clone(),
            tool: a.tool.clone(),
            preview: crate::base::redact::redact(&a.preview).into_owned(),
            created_at: a.created_at.clone(),
            status: a.status.as_str().to_string(),
            reason: a.reason.as_deref().map(|r| crate::base::redact::redact(r).into_owned()),
        };
        Event {
            event: what.name(),
            what,
            url: crate::connect::card_url(cfg, &a.id),
            approval: Some(card),
            host: host(),
        }
    }

    /// The test event of `hal0 notify test`.
    pub fn test(cfg: &Config) -> Event {
        Event {
            event: What::Test.name(),
            what: What::Test,
            url: format!("{}/ui/", base(cfg)),
            approval: None,
            host: host(),
        }
    }

    /// A one-line title: what waits, from whom.
    pub fn title(&self) -> String {
        match (&self.approval, self.what) {
            (Some(a), What::Queued) => format!("hal0: {} from {} waits for you", a.tool, a.client),
            (Some(a), What::Withdrawn) => format!("hal0: {} from {} no longer waits", a.tool, a.client),
            (Some(a), What::Expired) => format!("hal0: {} from {} expired undecided", a.tool, a.client),
            _ => format!("hal0 on {}: a test notification", self.host),
        }
    }

    /// The text of a push or a mail: the preview, why it was withdrawn, the link.
    pub fn body(&self) -> String {
        match &self.approval {
            Some(a) => {
                let why = a.reason.as_deref().map(|r| format!("\nWhy: {r}")).unwrap_or_default();
                format!(
                    "{}\n{}{why}\nCard {} ({}) on {}: {}",
                    self.title(),
                    a.preview,
                    a.id,
                    a.kind,
                    self.host,
                    self.url
                )
            }
            None => format!("{}\nNotifications from this box reach you here. Dashboard: {}", self.title(), self.url),
        }
    }
}
