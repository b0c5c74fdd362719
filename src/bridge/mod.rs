//! The agent bridge: delegate runs to Hermes profiles and follow them. Owns the rules of
//! the nine run tools (limits, idempotency before the cap, isolation between clients,
//! waits, windows, answers, steering, stopping) over the ledger and the Hermes client;
//! the MCP tools and the CLI only translate.

pub mod capabilities;
pub mod follow;
pub mod ledger;
pub mod skills;
pub mod teach;
pub mod view;

use crate::approvals;
use crate::base::error::{Error, Kind, Result};
use crate::base::progress::Progress;
use crate::config::Config;
use crate::hermes::{HermesClient, Profile, Profiles};
use crate::store::{Store, now};
use ledger::Run;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

// Limits from the spec; the quiet default wait is hal0's own.
/// `agent_run_wait`'s default when the caller listens to progress (its request carried a
/// progress token): the call is kept alive by progress reports.
pub const WAIT_DEFAULT_S: u64 = 120;
/// The default when it does not: common clients end a request that sends nothing for 60 s
/// (the TypeScript SDK's default timeout), so the wait answers `timed_out` before that and
/// the caller simply calls again.
pub const WAIT_DEFAULT_QUIET_S: u64 = 50;

/// How long a wait for new output ([`Bridge::wait_until`]) gathers it before answering.
pub const FOLLOW_BATCH: Duration = Duration::from_secs(2);
pub const WAIT_MAX_S: u64 = 600;
pub const KEY_MAX: usize = 256;
pub const EVENTS_DEFAULT: i64 = 100;
pub const EVENTS_MAX: i64 = 500;
pub const RUNS_DEFAULT: i64 = 20;
pub const RUNS_MAX: i64 = 200;
pub const TAIL: i64 = 20;

/// Who is asking: a bridge client by name, or the admin key (sees every run).
#[derive(Debug, Clone)]
pub struct Asker {
    pub client: String,
    pub admin: bool,
}

impl Asker {
    pub fn admin() -> Asker {
        Asker { client: "@admin".into(), admin: true }
    }
    fn filter(&self) -> Option<&str> {
        (!self.admin).then_some(self.client.as_str())
    }
}

/// A request to start a run.
#[derive(Debug, Clone, Default)]
pub struct StartRequest {
    pub agent: String,
    pub input: String,
    pub instructions: Option<String>,
    pub session_key: Option<String>,
    pub reasoning_effort: Option<String>,
    pub idempotency_key: Option<String>,
    pub wait_s: Option<u64>,
}

/// One waiter's subscription to a run's changes. Dropping it (the wait returned, failed,
/// timed out, or its caller went away and the future was dropped) unsubscribes; the last
/// waiter of a run removes the run's entry, so the map holds only runs someone waits on.
pub struct Watch {
    inner: Arc<Inner>,
    run_id: String,
    rx: Option<tokio::sync::watch::Receiver<u64>>,
}

impl Watch {
    /// Until the run changes (at once when it changed since the last call).
    pub async fn changed(&mut self) {
        if let Some(rx) = self.rx.as_mut() {
            let _ = rx.changed().await;
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let mut w = self.inner.watchers.lock().unwrap_or_else(|p| p.into_inner());
        drop(self.rx.take());
        if w.get(&self.run_id).is_some_and(|tx| tx.receiver_count() == 0) {
            w.remove(&self.run_id);
        }
    }
}

/// What [`Bridge::wait_or_card`] found.
pub enum Waited {
    /// The run view, as [`Bridge::wait_until`] answers.
    View(Value),
    /// The approval card a person must decide before the run goes on.
    Card(String),
}

#[derive(Clone)]
pub struct Bridge {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    profiles: Profiles,
    /// `[bridge].max_concurrent_runs_per_client` (a reload may change it).
    max_runs: std::sync::atomic::AtomicI64,
    http: reqwest::Client,
    watchers: Mutex<HashMap<String, tokio::sync::watch::Sender<u64>>>,
    followed: Mutex<HashSet<String>>,
    start_lock: tokio::sync::Mutex<()>,
    health: Mutex<HashMap<String, (Instant, Value)>>,
    caps: Mutex<HashMap<String, (Instant, Value)>>,
}

const HEALTH_TTL: Duration = Duration::from_secs(5);
const CAPS_TTL: Duration = Duration::from_secs(30);

fn run_not_found() -> Error {
    Error::not_found("bridge.run_not_found", "no such run (it may belong to another client, or was pruned)")
}

fn not_running(why: String) -> Error {
    Error::new("bridge.run_not_running", Kind::Conflict, why)
}

/// `session_key` / `idempotency_key`: visible ASCII without spaces, non-empty, and at most
/// 256 characters including the `<client>:` prefix.
fn check_key(code: &'static str, what: &str, client: &str, key: &str) -> Result<String> {
    let prefixed = format!("{client}:{key}");
    let ok = !key.is_empty() && key.bytes().all(|b| (0x21..=0x7e).contains(&b)) && prefixed.len() <= KEY_MAX;
    if !ok {
        return Err(Error::new(
            code,
            Kind::Unprocessable,
            format!(
                "{what} must be 1 to {} visible ASCII characters without spaces (the header holds {KEY_MAX}, including hal0's `{client}:` prefix)",
                KEY_MAX.saturating_sub(client.len() + 1)
            ),
        ));
    }
    Ok(prefixed)
}

/// A `run_id` argument: 1 to [`KEY_MAX`] visible ASCII characters without spaces (Hermes's
/// ids are `run_<hex>`). Checked before anything is looked up or waited on.
fn check_run_id(run_id: &str) -> Result<()> {
    if run_id.is_empty() || run_id.len() > KEY_MAX || !run_id.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
        return Err(Error::new(
            "bridge.invalid_run_id",
            Kind::Unprocessable,
            format!("run_id must be 1 to {KEY_MAX} visible ASCII characters without spaces, as agent_run returned it"),
        ));
    }
    Ok(())
}

fn fingerprint(r: &StartRequest) -> String {
    let canon = json!({
        "agent": r.agent, "input": r.input, "instructions": r.instructions,
        "session_key": r.session_key, "reasoning_effort": r.reasoning_effort,
    });
    crate::base::token::sha256_hex(&canon.to_string())
}

impl Bridge {
    pub fn new(store: Store, config: &Config) -> Bridge {
        Bridge {
            inner: Arc::new(Inner {
                store,
                profiles: Profiles::from_config(config),
                max_runs: std::sync::atomic::AtomicI64::new(config.bridge.max_concurrent_runs_per_client as i64),
                http: crate::hermes::client::http_client(),
                watchers: Mutex::new(HashMap::new()),
                followed: Mutex::new(HashSet::new()),
                start_lock: tokio::sync::Mutex::new(()),
                health: Mutex::new(HashMap::new()),
                caps: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// A new `[bridge].max_concurrent_runs_per_client` (a reload): the next start checks it.
    pub fn set_max_runs(&self, max: u32) {
        self.inner.max_runs.store(i64::from(max), std::sync::atomic::Ordering::Relaxed);
    }

    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    pub fn profiles(&self) -> &Profiles {
        &self.inner.profiles
    }

    pub fn client_for(&self, p: &Profile) -> HermesClient {
        HermesClient::new(self.inner.http.clone(), p)
    }

    /// Wake everyone waiting on `run_id`.
    pub(crate) fn notify(&self, run_id: &str) {
        let w = self.inner.watchers.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(tx) = w.get(run_id) {
            tx.send_modify(|n| *n += 1);
        }
    }

    /// Subscribe to changes of `run_id` (a run the caller was just shown to exist). The
    /// subscription ends when the returned [`Watch`] is dropped, however the wait ends.
    pub fn subscribe(&self, run_id: &str) -> Watch {
        let mut w = self.inner.watchers.lock().unwrap_or_else(|p| p.into_inner());
        let rx = w.entry(run_id.to_string()).or_insert_with(|| tokio::sync::watch::channel(0).0).subscribe();
        Watch { inner: self.inner.clone(), run_id: run_id.to_string(), rx: Some(rx) }
    }

    /// How many runs have a waiter subscribed now (for tests and diagnostics).
    pub fn watcher_count(&self) -> usize {
        self.inner.watchers.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    async fn db<T: Send + 'static>(&self, f: impl FnOnce(&Store) -> Result<T> + Send + 'static) -> Result<T> {
        self.inner.store.call(f).await
    }

    async fn load(&self, asker: &Asker, run_id: &str) -> Result<Run> {
        check_run_id(run_id)?;
        let (id, filter) = (run_id.to_string(), asker.filter().map(str::to_string));
        self.db(move |s| ledger::get(s, &id, filter.as_deref())).await?.ok_or_else(run_not_found)
    }

    /// A run `asker` may see, as the ledger holds it (for fronts that shape their own view
    /// of it, such as the A2A face; everything outward still goes through [`view`]).
    pub async fn run(&self, asker: &Asker, run_id: &str) -> Result<Run> {
        self.load(asker, run_id).await
    }

    /// A run of `agent` that `asker` may see; a run of another agent is not found (a front
    /// that serves one agent per URL reaches only that agent's runs).
    pub async fn run_on(&self, asker: &Asker, agent: &str, run_id: &str) -> Result<Run> {
        let run = self.load(asker, run_id).await?;
        if run.agent != agent {
            return Err(run_not_found());
        }
        Ok(run)
    }

    /// The stored session key of `asker`'s session `key` (`<client>:<key>`), for filtering.
    pub fn session_key_of(asker: &Asker, key: &str) -> String {
        format!("{}:{key}", asker.client)
    }

    /// A message to a run of `agent` that has not ended: the answer to its pending question,
    /// else guidance while it runs (`agent_run_answer` or `agent_run_steer`). Refused with
    /// `bridge.run_ended` once it has ended and `bridge.run_waits_for_person` while it
    /// waits on an approval (a person decides that, not the client). The run after.
    pub async fn message(&self, asker: &Asker, agent: &str, run_id: &str, text: &str) -> Result<Run> {
        let run = self.run_on(asker, agent, run_id).await?;
        if run.finished || run.status.is_terminal() {
            return Err(Error::conflict(
                "bridge.run_ended",
                format!("run {run_id} has ended ({}); start a new one", run.status),
            ));
        }
        match run.status {
            ledger::RunStatus::WaitingForClarify => {
                // The question's own id, as stored (not the redacted view of it).
                let request = run.pending.as_ref().and_then(|p| p["request_id"].as_str()).unwrap_or_default();
                self.answer(asker, run_id, request, text).await?;
            }
            ledger::RunStatus::WaitingForApproval => {
                return Err(Error::conflict(
                    "bridge.run_waits_for_person",
                    "the run waits for a person's approval in the hal0 inbox, not for a message",
                ));
            }
            _ => {
                self.steer(asker, run_id, text).await?;
            }
        }
        self.run_on(asker, agent, run_id).await
    }

    /// A page of the runs `asker` may see that match `q`, newest first, and how many match
    /// in all.
    pub async fn runs(&self, asker: &Asker, mut q: ledger::Query) -> Result<(Vec<(Run, ledger::Cursor)>, i64)> {
        if !(1..=RUNS_MAX).contains(&q.limit) {
            return Err(Error::new(
                "bridge.invalid_limit",
                Kind::Unprocessable,
                format!("limit must be 1 to {RUNS_MAX} (got {})", q.limit),
            ));
        }
        q.client = asker.filter().map(str::to_string);
        self.db(move |s| ledger::query(s, &q)).await
    }

    /// Whether `p` can take a run now: hal0 holds its key and its gateway answers.
    pub async fn answering(&self, p: &Profile) -> bool {
        p.keyed() && self.health(p).await.0 == "ok"
    }

    /// `/health` of a profile, cached briefly: `"ok"`, `"down"` or `"error"`, and the version.
    async fn health(&self, p: &Profile) -> (String, Option<String>) {
        if let Some((t, v)) = self.inner.health.lock().unwrap_or_else(|e| e.into_inner()).get(&p.agent_id)
            && t.elapsed() < HEALTH_TTL
        {
            return (v["health"].as_str().unwrap_or("down").into(), v["version"].as_str().map(str::to_string));
        }
        let r = self.client_for(p).health(Duration::from_secs(2)).await;
        let (h, ver) = match r {
            Ok(v) => ("ok".to_string(), v["version"].as_str().map(str::to_string)),
            Err(e) if e.code == "bridge.agent_unavailable" => ("down".to_string(), None),
            Err(_) => ("error".to_string(), None),
        };
        self.inner
            .health
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(p.agent_id.clone(), (Instant::now(), json!({"health": h, "version": ver})));
        (h, ver)
    }

    /// `/v1/capabilities` of a profile, cached; `Null` when unreadable.
    pub(crate) async fn capabilities(&self, p: &Profile) -> Value {
        if let Some((t, v)) = self.inner.caps.lock().unwrap_or_else(|e| e.into_inner()).get(&p.agent_id)
            && t.elapsed() < CAPS_TTL
        {
            return v.clone();
        }
        let v = self.client_for(p).capabilities().await.unwrap_or(Value::Null);
        if !v.is_null() {
            self.inner
                .caps
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(p.agent_id.clone(), (Instant::now(), v.clone()));
        }
        v
    }

    /// `agents_list`.
    pub async fn agents_list(&self) -> Value {
        let profiles = self.inner.profiles.list();
        // Health checks run side by side: a profile that is down costs its timeout once.
        let healths = futures::future::join_all(profiles.iter().map(|p| self.health(p))).await;
        let mut agents = Vec::new();
        for (p, (health, version)) in profiles.iter().zip(healths) {
            agents.push(json!({
                "name": if p.name == "default" { "hermes".to_string() } else { p.name.clone() },
                "agent_id": p.agent_id,
                "kind": "hermes",
                "profile": p.name,
                "runnable": true,
                "health": health,
                "version": version,
                "keyed": p.keyed(),
                "model_id": p.model_id,
            }));
        }
        agents.push(json!({
            "name": "pi", "agent_id": "pi", "kind": "pi", "profile": null, "runnable": false,
            "health": null, "version": null, "keyed": false, "model_id": null,
            "note": "Pi is not runnable through the bridge",
        }));
        json!({"agents": agents})
    }

    /// `agent_capabilities`: the allow-listed view of a profile's own config.yaml.
    pub async fn capabilities_view(&self, agent: &str) -> Result<Value> {
        let p = self.inner.profiles.get(agent)?;
        let version = if p.keyed() { self.health(&p).await.1 } else { None };
        Ok(capabilities::view(&p, version.as_deref()))
    }

    /// `agent_run`; a `wait_s` wait reports to `progress`.
    pub async fn start(&self, asker: &Asker, req: StartRequest, progress: &Progress) -> Result<Value> {
        if req.input.trim().is_empty() {
            return Err(Error::new("bridge.invalid_input", Kind::Unprocessable, "input must not be empty"));
        }
        let wait = req.wait_s.unwrap_or(0);
        if wait > WAIT_MAX_S {
            return Err(Error::new(
                "bridge.invalid_wait",
                Kind::Unprocessable,
                format!("wait_s is at most {WAIT_MAX_S} (got {wait})"),
            ));
        }
        let profile = self.inner.profiles.get(&req.agent)?;
        let client = asker.client.clone();
        let session = req
            .session_key
            .as_deref()
            .map(|k| check_key("bridge.invalid_session_key", "session_key", &client, k))
            .transpose()?;
        let idem = req
            .idempotency_key
            .as_deref()
            .map(|k| check_key("bridge.invalid_idempotency_key", "idempotency_key", &client, k))
            .transpose()?;
        let fp = fingerprint(&req);
        // One start at a time: the ledger check, the cap and the Hermes call stay consistent.
        let _guard = self.inner.start_lock.lock().await;
        if let Some(key) = idem.clone() {
            let agent = req.agent.clone();
            if let Some(existing) = self.db(move |s| ledger::by_idempotency(s, &agent, &key)).await? {
                if existing.fingerprint != fp || existing.client != client {
                    return Err(Error::conflict(
                        "bridge.idempotency_conflict",
                        "this idempotency_key was already used for a different request on this agent",
                    ));
                }
                drop(_guard);
                return self.finish_start(asker, existing.run_id, wait, progress).await;
            }
        }
        let c2 = client.clone();
        let active = self.db(move |s| ledger::count_active(s, &c2)).await?;
        if active >= self.inner.max_runs.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(Error::new(
                "bridge.too_many_runs",
                Kind::TooMany,
                format!(
                    "{active} of your runs are still going ([bridge].max_concurrent_runs_per_client is {}); wait for one to end or stop one",
                    self.inner.max_runs.load(std::sync::atomic::Ordering::Relaxed)
                ),
            ));
        }
        if !profile.keyed() {
            return Err(Error::new(
                "bridge.agent_unkeyed",
                Kind::Unavailable,
                format!("hal0 holds no API key for `{}`", profile.agent_id),
            ));
        }
        let mut body = json!({"input": req.input});
        if let Some(i) = &req.instructions {
            body["instructions"] = json!(i);
        }
        if let Some(s) = &session {
            body["session_id"] = json!(format!("hal0-{}", &crate::base::token::sha256_hex(s)[..24]));
        }
        if let Some(e) = &req.reasoning_effort {
            body["reasoning_effort"] = json!(e);
        }
        let hermes = self.client_for(&profile);
        let run_id = hermes.start_run(&body, session.as_deref(), idem.as_deref()).await?;
        let run = Run {
            run_id: run_id.clone(),
            agent: profile.agent_id.clone(),
            profile: profile.name.clone(),
            client: client.clone(),
            input_preview: req.input.chars().take(view::PREVIEW_CHARS).collect(),
            fingerprint: fp,
            idempotency_key: idem,
            session_key: session,
            ..Run::queued(now())
        };
        let r2 = run.clone();
        if let Err(e) = self.db(move |s| ledger::insert(s, &r2)).await {
            tracing::error!(run_id, "cannot record a run Hermes accepted ({}); stopping it at Hermes", e.message);
            let _ = hermes.stop(&run_id).await;
            return Err(Error::unavailable(
                "bridge.store_unavailable",
                "the run ledger could not record the run; hal0 asked Hermes to stop it",
            ));
        }
        drop(_guard);
        self.follow(run_id.clone());
        self.finish_start(asker, run_id, wait, progress).await
    }

    async fn finish_start(&self, asker: &Asker, run_id: String, wait: u64, progress: &Progress) -> Result<Value> {
        if wait > 0 {
            return self.wait(asker, &run_id, Some(wait), progress).await;
        }
        let run = self.load(asker, &run_id).await?;
        view::run_view(&run, 0)
    }

    /// Start following `run_id` unless a follower already does.
    pub fn follow(&self, run_id: String) {
        {
            let mut f = self.inner.followed.lock().unwrap_or_else(|p| p.into_inner());
            if !f.insert(run_id.clone()) {
                return;
            }
        }
        let me = self.clone();
        tokio::spawn(async move {
            follow::follow(me.clone(), run_id.clone()).await;
            me.inner.followed.lock().unwrap_or_else(|p| p.into_inner()).remove(&run_id);
            me.notify(&run_id);
        });
    }

    /// After a restart: follow every unfinished run again (or settle it).
    pub async fn recover(&self) -> Result<usize> {
        let runs = self.db(ledger::unfinished).await?;
        let n = runs.len();
        for r in runs {
            self.follow(r.run_id);
        }
        Ok(n)
    }

    /// `agent_run_wait`: until the run ends, asks a question, or `timeout_s` passes (default
    /// [`WAIT_DEFAULT_S`] when someone listens to `progress`, else [`WAIT_DEFAULT_QUIET_S`]);
    /// `progress` hears how long it has waited, at a steady pace, until then.
    pub async fn wait(
        &self,
        asker: &Asker,
        run_id: &str,
        timeout_s: Option<u64>,
        progress: &Progress,
    ) -> Result<Value> {
        self.wait_until(asker, run_id, timeout_s, None, progress).await
    }

    /// The approval card run `run_id` waits on while a person has yet to decide it.
    pub async fn card_waited_on(&self, asker: &Asker, run_id: &str) -> Result<Option<String>> {
        let run = self.load(asker, run_id).await?;
        let Some(id) = run.pending.as_ref().filter(|p| p["kind"] == "approval").and_then(|p| p["approval_id"].as_str())
        else {
            return Ok(None);
        };
        let id = id.to_string();
        let row = self.db(move |s| approvals::get(s, &id)).await?;
        Ok((row.status == approvals::Status::Pending).then_some(row.id))
    }

    /// `agent_run_wait` where no request is held open for a person (protocol 2026-07-28):
    /// the card the run waits on when a person must decide one (at once, or as soon as
    /// the run comes to one within the wait), else the view [`Bridge::wait_until`] gives.
    pub async fn wait_or_card(
        &self,
        asker: &Asker,
        run_id: &str,
        timeout_s: Option<u64>,
        output_after: Option<i64>,
        progress: &Progress,
    ) -> Result<Waited> {
        if let Some(card) = self.card_waited_on(asker, run_id).await? {
            return Ok(Waited::Card(card));
        }
        let view = self.wait_inner(asker, run_id, timeout_s, output_after, progress, true).await?;
        Ok(match self.card_waited_on(asker, run_id).await? {
            Some(card) => Waited::Card(card),
            None => Waited::View(view),
        })
    }

    /// [`Bridge::wait`] that also ends when the run's output has grown past byte
    /// `output_after`, once [`FOLLOW_BATCH`] has passed since the call began (so a follower
    /// gets output in batches, one call per batch, rather than polling), or when the run
    /// starts waiting on an approval it was not waiting on when the call began (a follower
    /// tells its person which card to decide); the answer's output window then starts at
    /// `output_after`.
    pub async fn wait_until(
        &self,
        asker: &Asker,
        run_id: &str,
        timeout_s: Option<u64>,
        output_after: Option<i64>,
        progress: &Progress,
    ) -> Result<Value> {
        self.wait_inner(asker, run_id, timeout_s, output_after, progress, false).await
    }

    /// [`Bridge::wait_until`]; with `at_card` it also ends when the run starts waiting on a
    /// new approval without a follower's `output_after`.
    async fn wait_inner(
        &self,
        asker: &Asker,
        run_id: &str,
        timeout_s: Option<u64>,
        output_after: Option<i64>,
        progress: &Progress,
        at_card: bool,
    ) -> Result<Value> {
        if output_after.is_some_and(|o| o < 0) {
            return Err(Error::new(
                "bridge.invalid_offset",
                Kind::Unprocessable,
                "offset must be 0 or more; use next_offset or output_total from the previous view",
            ));
        }
        let began = Instant::now();
        let t = timeout_s.unwrap_or(if progress.wanted() { WAIT_DEFAULT_S } else { WAIT_DEFAULT_QUIET_S });
        if t > WAIT_MAX_S {
            return Err(Error::new(
                "bridge.invalid_timeout",
                Kind::Unprocessable,
                format!("timeout_s is at most {WAIT_MAX_S} (got {t})"),
            ));
        }
        let bound = Duration::from_secs(t);
        let deadline = Instant::now() + bound;
        // Only a valid id of a run this caller may see gets a subscription; then read it
        // again, so a change between the first read and the subscription is not missed.
        self.load(asker, run_id).await?;
        let mut rx = self.subscribe(run_id);
        let run = self.load(asker, run_id).await?;
        let approval_of = |r: &ledger::Run| {
            r.pending
                .as_ref()
                .filter(|p| p["kind"] == "approval")
                .and_then(|p| p["approval_id"].as_str().map(str::to_string))
        };
        let waited_on = approval_of(&run);
        let until_done = async move {
            let mut run = run;
            let timed_out = loop {
                let asks = run.pending.as_ref().is_some_and(|p| p["kind"] == "clarify");
                if run.finished || asks {
                    break false;
                }
                let new_approval = approval_of(&run).is_some_and(|a| waited_on.as_deref() != Some(a.as_str()));
                if (output_after.is_some() || at_card) && new_approval {
                    break false;
                }
                let now = Instant::now();
                let grew = output_after.is_some_and(|o| run.output.len() as i64 > o);
                if grew && now.duration_since(began) >= FOLLOW_BATCH {
                    break false;
                }
                if now >= deadline {
                    break true;
                }
                // Also poll: a change made by another process (the CLI) does not notify us.
                let mut step = (deadline - now).min(Duration::from_millis(500));
                if grew {
                    // Output is waiting: come back when its batch is due.
                    step = step.min((began + FOLLOW_BATCH).saturating_duration_since(now));
                }
                let _ = tokio::time::timeout(step, rx.changed()).await;
                run = self.load(asker, run_id).await?;
            };
            Ok::<_, Error>((run, timed_out))
        };
        let (run, timed_out) = progress.during(bound, &format!("waiting for run {run_id}"), until_done).await?;
        let mut v = view::run_view(&run, output_after.unwrap_or(0))?;
        let id = run.run_id.clone();
        let tail = self.db(move |s| ledger::tail(s, &id, TAIL)).await?;
        let store = self.inner.store.clone();
        let r2 = run.clone();
        let tail = tokio::task::spawn_blocking(move || view::events_view(&store, &r2, &tail))
            .await
            .map_err(|e| Error::internal(e.to_string()))??;
        v["events_tail"] = json!(tail);
        v["timed_out"] = json!(timed_out);
        Ok(v)
    }

    /// `agent_run_status`.
    pub async fn status(&self, asker: &Asker, run_id: &str, offset: Option<i64>) -> Result<Value> {
        let run = self.load(asker, run_id).await?;
        view::run_view(&run, offset.unwrap_or(0))
    }

    /// `agent_run_events`.
    pub async fn events(&self, asker: &Asker, run_id: &str, since: Option<i64>, limit: Option<i64>) -> Result<Value> {
        let since = since.unwrap_or(0);
        let limit = limit.unwrap_or(EVENTS_DEFAULT);
        if since < 0 {
            return Err(Error::new("bridge.invalid_since", Kind::Unprocessable, "since_seq must be 0 or more"));
        }
        if !(1..=EVENTS_MAX).contains(&limit) {
            return Err(Error::new(
                "bridge.invalid_limit",
                Kind::Unprocessable,
                format!("limit must be 1 to {EVENTS_MAX} (got {limit})"),
            ));
        }
        let run = self.load(asker, run_id).await?;
        self.db(move |s| view::events_page(s, &run, since, limit)).await
    }

    /// `agent_runs_list`.
    pub async fn list(&self, asker: &Asker, status: Option<String>, limit: Option<i64>) -> Result<Value> {
        let limit = limit.unwrap_or(RUNS_DEFAULT);
        if !(1..=RUNS_MAX).contains(&limit) {
            return Err(Error::new(
                "bridge.invalid_limit",
                Kind::Unprocessable,
                format!("limit must be 1 to {RUNS_MAX} (got {limit})"),
            ));
        }
        let filter = asker.filter().map(str::to_string);
        let runs = self.db(move |s| ledger::list(s, filter.as_deref(), status.as_deref(), limit)).await?;
        Ok(json!({"runs": runs.iter().map(view::list_view).collect::<Vec<_>>()}))
    }

    fn hermes_for(&self, run: &Run) -> Result<(Profile, HermesClient)> {
        let p = self.inner.profiles.get(&run.agent)?;
        let c = self.client_for(&p);
        Ok((p, c))
    }

    /// `agent_run_stop`.
    pub async fn stop(&self, asker: &Asker, run_id: &str) -> Result<Value> {
        let run = self.load(asker, run_id).await?;
        if !run.finished {
            let (_, hermes) = self.hermes_for(&run)?;
            match request_stop(&self.inner.store, &hermes, run_id).await? {
                true => self.notify(run_id),
                // Hermes no longer knows the run: it has finished; the follower settles it.
                false => self.follow(run_id.to_string()),
            }
        }
        let run = self.load(asker, run_id).await?;
        view::run_view(&run, 0)
    }

    /// `agent_run_steer`.
    pub async fn steer(&self, asker: &Asker, run_id: &str, input: &str) -> Result<Value> {
        if input.trim().is_empty() {
            return Err(Error::new("bridge.invalid_input", Kind::Unprocessable, "input must not be empty"));
        }
        let run = self.load(asker, run_id).await?;
        let (p, hermes) = self.hermes_for(&run)?;
        let caps = self.capabilities(&p).await;
        let supported =
            caps["features"]["run_steer"].as_bool() == Some(true) || caps["endpoints"]["run_steer"].is_object();
        if !supported {
            return Err(not_running(format!(
                "`{}` cannot be steered: this Hermes does not offer steering (no run_steer in /v1/capabilities)",
                run.agent
            )));
        }
        if run.status != crate::bridge::ledger::RunStatus::Running {
            return Err(not_running(format!("the run is {}; only a running run can be steered", run.status)));
        }
        match hermes.steer(run_id, input).await {
            Ok(Some(_)) => {}
            Ok(None) => return Err(not_running("Hermes no longer has this run".into())),
            Err(e) if matches!(e.kind, Kind::Upstream(409)) => {
                return Err(not_running(format!("Hermes is not accepting steering for this run now ({})", e.message)));
            }
            Err(e) => return Err(e),
        }
        let run = self.load(asker, run_id).await?;
        view::run_view(&run, 0)
    }

    /// `agent_run_answer`: answer the pending clarification.
    pub async fn answer(&self, asker: &Asker, run_id: &str, request_id: &str, answer: &str) -> Result<Value> {
        let run = self.load(asker, run_id).await?;
        let no_pending = |why: &str| Error::new("bridge.no_pending_request", Kind::Conflict, why.to_string());
        let pending = run.pending.clone().unwrap_or(Value::Null);
        match pending["kind"].as_str() {
            Some("clarify") => {}
            Some("approval") => {
                return Err(no_pending(
                    "the run waits for an approval, which a person decides in the hal0 inbox; there is no question to answer",
                ));
            }
            _ => return Err(no_pending("the run has no pending question")),
        }
        if pending["request_id"].as_str() != Some(request_id) {
            return Err(no_pending("that request_id is not the pending question (see the run's pending field)"));
        }
        let (p, hermes) = self.hermes_for(&run)?;
        let caps = self.capabilities(&p).await;
        let path =
            caps["endpoints"]["run_clarify"]["path"].as_str().map(|t| t.replace("{run_id}", run_id)).or_else(|| {
                (caps["features"]["run_clarify"].as_bool() == Some(true)).then(|| format!("/v1/runs/{run_id}/clarify"))
            });
        let Some(path) = path else {
            return Err(no_pending("this Hermes does not offer answering clarifications (no run_clarify capability)"));
        };
        match hermes.clarify(&path, request_id, answer).await {
            Ok(Some(_)) => {}
            Ok(None) => return Err(no_pending("Hermes no longer has a pending question for this run")),
            Err(e) if matches!(e.kind, Kind::Upstream(409)) => {
                return Err(no_pending("the question is no longer pending"));
            }
            Err(e) => return Err(e),
        }
        let id = run_id.to_string();
        let u = ledger::Update {
            pending: Some(None),
            status: Some(crate::bridge::ledger::RunStatus::Running),
            only_if_unfinished: true,
            ..Default::default()
        };
        self.db(move |s| ledger::apply(s, &id, &u).map(|_| ())).await?;
        self.notify(run_id);
        let run = self.load(asker, run_id).await?;
        view::run_view(&run, 0)
    }
}

/// Ask Hermes to stop unfinished run `run_id` and mark it `stopping` (never moving a run a
/// follower has settled meanwhile back). `false` when Hermes no longer knows the run: it
/// has finished, and its follower records how. Shared by `agent_run_stop` and the
/// operator's `run_stop`.
pub async fn request_stop(store: &Store, hermes: &HermesClient, run_id: &str) -> Result<bool> {
    if hermes.stop(run_id).await?.is_none() {
        tracing::debug!(run_id, "stop: Hermes no longer knows the run; it has finished");
        return Ok(false);
    }
    let u =
        ledger::Update { status: Some(ledger::RunStatus::Stopping), only_if_unfinished: true, ..Default::default() };
    let id = run_id.to_string();
    store.call(move |s| ledger::apply(s, &id, &u).map(|_| ())).await?;
    Ok(true)
}

/// An operator's look at any run (no client filter): `bridge.run_not_found` when there is
/// none, `bridge.invalid_run_id` for an id that cannot be one.
pub fn load_any(store: &Store, run_id: &str) -> Result<Run> {
    check_run_id(run_id)?;
    ledger::get(store, run_id, None)?.ok_or_else(run_not_found)
}

/// Decide a Hermes dangerous-command approval row: answer Hermes with `once` or `deny`
/// (never `always`) and record the outcome. Used by the CLI and the REST inbox alike.
pub async fn decide_hermes_approval(
    store: &Store,
    config: &Config,
    id: &str,
    choice: &str,
    by: &str,
    reason: Option<&str>,
) -> Result<approvals::Approval> {
    let row = approvals::get(store, id)?;
    if row.kind != approvals::ApprovalKind::HermesCommand {
        return Err(Error::invalid("approvals.wrong_kind", format!("approval `{id}` is a {} row", row.kind)));
    }
    let approve = choice != "deny";
    let row = approvals::claim(store, id, approve, by, reason)?;
    let run_id = row.run_id.clone().unwrap_or_default();
    let agent = row.arguments["agent"].as_str().unwrap_or("hermes").to_string();
    let outcome = async {
        let p = Profiles::from_config(config).get(&agent)?;
        HermesClient::new(crate::hermes::client::http_client(), &p).approval(&run_id, choice).await
    }
    .await;
    let (status, result) = match outcome {
        Ok(Some(v)) => {
            let done = if approve { approvals::Status::Executed } else { approvals::Status::Denied };
            (done, json!({"ok": true, "choice": choice, "hermes": v}))
        }
        Ok(None) => (approvals::Status::Failed, json!({"ok": false, "error": "Hermes no longer has this run"})),
        Err(e) => (approvals::Status::Failed, json!({"ok": false, "error": e.to_string()})),
    };
    approvals::finish(store, id, status, &result)?;
    approvals::get(store, id)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A running run of `client`.
    fn run(id: &str, client: &str) -> Run {
        Run {
            status: crate::bridge::ledger::RunStatus::Running,
            input_preview: "x".into(),
            ..ledger::sample(id, client)
        }
    }

    async fn settle(b: &Bridge, want: usize) -> usize {
        for _ in 0..200 {
            if b.watcher_count() == want {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        b.watcher_count()
    }

    /// Waits on unknown, foreign and malformed ids register nothing; waits on real runs
    /// unsubscribe however they end (answer, timeout, the caller going away), and the last
    /// waiter of a run removes its entry.
    #[tokio::test]
    async fn waits_leave_no_watchers_behind() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(&d.path().join("b.db")).unwrap();
        let b = Bridge::new(store.clone(), &Config::default());
        let ws = Asker { client: "ws".into(), admin: false };
        ledger::insert(&store, &run("run_mine", "ws")).unwrap();
        ledger::insert(&store, &run("run_other", "other")).unwrap();

        for i in 0..200 {
            let e = b.wait(&ws, &format!("run_{i:032x}"), Some(5), &Progress::none()).await.unwrap_err();
            assert_eq!(e.code, "bridge.run_not_found");
        }
        assert_eq!(
            b.wait(&ws, "run_other", Some(5), &Progress::none()).await.unwrap_err().code,
            "bridge.run_not_found"
        );
        let long = "r".repeat(256 * 1024);
        for bad in [long.as_str(), &"r".repeat(KEY_MAX + 1), "", "run id", "run\t1", "rün"] {
            let e = b.wait(&ws, bad, Some(5), &Progress::none()).await.unwrap_err();
            assert_eq!(e.code, "bridge.invalid_run_id", "{bad:.20?}");
            assert!(e.message.contains("run_id must be 1 to 256"), "{}", e.message);
        }
        assert!(
            b.wait(&ws, &"r".repeat(KEY_MAX), Some(5), &Progress::none()).await.unwrap_err().code
                == "bridge.run_not_found"
        );
        assert_eq!(b.watcher_count(), 0, "no waiter is left on an unknown or invalid id");

        // A wait that times out.
        assert_eq!(b.wait(&ws, "run_mine", Some(0), &Progress::none()).await.unwrap()["timed_out"], true);
        assert_eq!(b.watcher_count(), 0);

        // Two waiters share one entry; one caller goes away (its future is dropped), then
        // the run ends and the other returns: nothing is left.
        let spawn_wait = || {
            let (b, ws) = (b.clone(), ws.clone());
            tokio::spawn(async move { b.wait(&ws, "run_mine", Some(60), &Progress::none()).await })
        };
        let (w1, w2) = (spawn_wait(), spawn_wait());
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(settle(&b, 1).await, 1, "two waiters on one run are one entry");
        w1.abort();
        assert!(w1.await.unwrap_err().is_cancelled());
        assert_eq!(b.watcher_count(), 1, "the other waiter still waits");
        let done = ledger::Update { status: Some(crate::bridge::ledger::RunStatus::Completed), ..Default::default() };
        ledger::apply(&store, "run_mine", &done).unwrap();
        b.notify("run_mine");
        let v = tokio::time::timeout(Duration::from_secs(10), w2).await.unwrap().unwrap().unwrap();
        assert_eq!((v["status"].as_str(), v["timed_out"].as_bool()), (Some("completed"), Some(false)));
        assert_eq!(b.watcher_count(), 0);

        // A caller that gives up mid-wait (a timeout around the call) leaves nothing either.
        ledger::insert(&store, &run("run_two", "ws")).unwrap();
        assert!(
            tokio::time::timeout(Duration::from_millis(150), b.wait(&ws, "run_two", Some(60), &Progress::none()))
                .await
                .is_err()
        );
        assert_eq!(b.watcher_count(), 0);
    }

    #[test]
    fn key_rules() {
        assert_eq!(check_key("bridge.invalid_session_key", "k", "ws", "abc").unwrap(), "ws:abc");
        for bad in ["", "has space", "tab\t", "é", &"x".repeat(254)] {
            assert!(check_key("bridge.invalid_session_key", "k", "ws", bad).is_err(), "{bad:?}");
        }
        // 256 including the prefix "ws:" (3 chars) → 253 is the longest accepted.
        assert!(check_key("bridge.invalid_session_key", "k", "ws", &"x".repeat(253)).is_ok());
        assert_eq!(
            check_key("bridge.invalid_session_key", "k", "ws", "").unwrap_err().code,
            "bridge.invalid_session_key"
        );
    }
}
