//! The client-side ledger of the soak: every write whose answer arrived (run ids, note ids,
//! approval ids and their decisions, answered tool calls per audit surface, the markers
//! their arguments carried), and what a client saw of a finished run. The store must hold
//! all of it after any number of SIGKILLs.

use std::collections::{BTreeMap, HashMap};

/// What a client saw of a run when it was finished.
#[derive(Clone, Debug)]
pub struct SeenFinished {
    pub status: String,
    pub output_total: u64,
    pub last_seq: i64,
}

#[derive(Clone, Debug, Default)]
pub struct RunAck {
    pub finished: Option<SeenFinished>,
    /// Events a client read back (`agent_run_events`): how many, up to which seq.
    pub events_read: Option<(usize, i64)>,
    /// The run waits for a decision on this Hermes approval (seen in its status).
    pub approval: Option<String>,
}

/// A note's delete: none, answered `{deleted: 1}`, or sent without an answer (unknown).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delete {
    None,
    Acked,
    Unknown,
}

#[derive(Clone, Debug)]
pub struct NoteAck {
    pub marker: String,
    pub delete: Delete,
}

/// What the ledger expects of an approval row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Not decided (yet, or left pending on purpose).
    Pending,
    /// A CLI decision exited 0 and printed this final status.
    Decided(String),
    /// A CLI decision was started but its outcome is not known.
    Unknown,
}

#[derive(Clone, Debug)]
pub struct ApprovalAck {
    /// `mcp_call` (a gated proxied call) or `hermes_command` (a run's approval request).
    pub kind: &'static str,
    pub decision: Decision,
    /// The operator leaves this one pending for good.
    pub leave: bool,
}

#[derive(Default)]
pub struct Ledger {
    pub runs: BTreeMap<String, RunAck>,
    pub notes: BTreeMap<String, NoteAck>,
    pub approvals: BTreeMap<String, ApprovalAck>,
    /// Answered tool calls per audit surface (`mcp:agents`, `mcp:memory`, `mcp:proxy/up`).
    pub audited: BTreeMap<&'static str, u64>,
    /// Unique markers carried in the arguments of answered calls, per surface.
    pub markers: HashMap<&'static str, Vec<String>>,
    /// Reads that did not see an acknowledged write (memory search right after the add).
    pub read_misses: Vec<String>,
    /// What clients saw go wrong in an answered call (wrong echo, a finished run that
    /// changed, …).
    pub anomalies: Vec<String>,
}

impl Ledger {
    /// An answered call on `surface`, with the marker its arguments carried (if any).
    pub fn audited(&mut self, surface: &'static str, marker: Option<&str>) {
        *self.audited.entry(surface).or_default() += 1;
        if let Some(m) = marker {
            self.markers.entry(surface).or_default().push(m.to_string());
        }
    }

    pub fn anomaly(&mut self, what: String) {
        if self.anomalies.len() < 1000 {
            self.anomalies.push(what);
        }
    }

    /// Approvals the operator may still decide: pending, not set aside.
    pub fn undecided(&self) -> Vec<(String, &'static str)> {
        self.approvals
            .iter()
            .filter(|(_, a)| a.decision == Decision::Pending && !a.leave)
            .map(|(id, a)| (id.clone(), a.kind))
            .collect()
    }
}
