//! `hal0 run "task"` and `hal0 run status|events|stop|answer RUN_ID`: delegate a run to a
//! remote box's Hermes over MCP (`hal0-agents`, with the remote's bridge key) and follow it.
//! The requests are the box's own argument types (`mcp::agents`), the answers its run view;
//! nothing here re-derives a view. Exit codes: 0 completed, 5 failed (or interrupted),
//! 3 cancelled (or declined), 4 the key refused, 6 timed out, 2 usage or bad input, 1 other.

use super::print_json;
use crate::base::error::{Error, Kind, Result};
use crate::base::term::{safe, safe_line};
use crate::mcp::agents::{AnswerArgs, EventsArgs, RunIdArgs, StatusArgs, WaitArgs};
use crate::ops::agents::RunArgs as AgentRunArgs;
use crate::ops::runs::RunStatus;
use crate::remote::client::Client;
use serde_json::Value;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use crate::base::exit::{DECLINED as EXIT_CANCELLED, INTERRUPTED as EXIT_INTERRUPTED};
use crate::base::exit::{RUN_FAILED as EXIT_FAILED, RUN_TIMED_OUT as EXIT_TIMED_OUT};

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct RunArgs {
    #[command(subcommand)]
    pub cmd: Option<RunCmd>,
    /// The task for the agent (`hal0 run -- "status of X"` for a task that starts like a subcommand).
    #[arg(required = true)]
    pub task: Option<String>,
    /// The remote box (default: HAL0_REMOTE_URL + HAL0_KEY, else the default remote).
    #[arg(long, global = true, value_name = "NAME")]
    pub remote: Option<String>,
    /// `hermes` (the default profile) or `hermes/<profile>`.
    #[arg(long, default_value = "hermes")]
    pub agent: String,
    /// Extra instructions for this run.
    #[arg(long)]
    pub instructions: Option<String>,
    /// Repeat-safe start: the same key and task return the same run.
    #[arg(long)]
    pub idempotency_key: Option<String>,
    /// A key for the agent's long-term memory scope.
    #[arg(long)]
    pub session_key: Option<String>,
    /// Wait until the run ends, then print its output.
    #[arg(long)]
    pub wait: bool,
    /// Print the output as it arrives (implies --wait).
    #[arg(long)]
    pub follow: bool,
    /// Give up waiting after this many seconds (exit 6; the run goes on).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<u64>,
}

#[derive(Debug, clap::Subcommand)]
pub enum RunCmd {
    /// A run's status and whole output (redacted by the box).
    Status { run_id: String },
    /// A page of a run's events.
    Events {
        run_id: String,
        /// Events after this sequence number.
        #[arg(long, default_value_t = 0)]
        since: i64,
        /// At most this many (1 to 500).
        #[arg(long, default_value_t = 100)]
        limit: i64,
    },
    /// Ask the box to stop a run.
    Stop { run_id: String },
    /// Answer the question a run asked (its pending clarification).
    Answer {
        run_id: String,
        /// The answer.
        answer: String,
        /// The question's id (default: the run's pending one).
        #[arg(long)]
        request_id: Option<String>,
    },
}

fn status_of(v: &Value) -> RunStatus {
    RunStatus::parse(v["status"].as_str().unwrap_or_default())
}

/// The exit code of an ended run.
fn exit_for(status: RunStatus) -> i32 {
    match status {
        RunStatus::Completed => crate::base::exit::OK,
        RunStatus::Cancelled => EXIT_CANCELLED,
        _ => EXIT_FAILED,
    }
}

/// The run's whole output from `offset`, window after window (each redacted by the box).
async fn output_from(c: &Client, run_id: &str, mut offset: i64) -> Result<(String, Value)> {
    let mut text = String::new();
    loop {
        let v = c.call("agent_run_status", &StatusArgs { run_id: run_id.into(), offset: Some(offset) }).await?;
        text.push_str(v["output"].as_str().unwrap_or_default());
        match v["next_offset"].as_i64() {
            Some(n) if n > offset => offset = n,
            _ => return Ok((text, v)),
        }
    }
}

/// The view with the whole output in place of its window.
fn whole(mut v: Value, output: String) -> Value {
    if let Some(m) = v.as_object_mut() {
        for k in ["output_offset", "next_offset", "more"] {
            m.remove(k);
        }
        m.insert("truncated".into(), Value::Bool(false));
        m.insert("output".into(), Value::String(output));
    }
    v
}

/// A one-line spinner on stderr while a terminal watches; nothing otherwise.
struct Spinner {
    on: bool,
    shown: bool,
    frame: usize,
    started: Instant,
}

impl Spinner {
    fn new() -> Spinner {
        Spinner { on: std::io::stderr().is_terminal(), shown: false, frame: 0, started: Instant::now() }
    }
    fn tick(&mut self, status: &str) {
        if !self.on {
            return;
        }
        const FRAMES: [&str; 4] = ["|", "/", "-", "\\"];
        self.frame = (self.frame + 1) % FRAMES.len();
        let secs = self.started.elapsed().as_secs();
        eprint!("\r\x1b[K{} {} {}s", FRAMES[self.frame], safe_line(status), secs);
        let _ = std::io::stderr().flush();
        self.shown = true;
    }
    fn clear(&mut self) {
        if self.shown {
            eprint!("\r\x1b[K");
            self.shown = false;
        }
    }
}

/// What ended a wait.
enum Ended {
    /// The run ended: its last view.
    Run(Value),
    /// It asks its caller a question.
    Asks(Value),
    TimedOut,
    Interrupted,
}

/// Follow `run_id` until it ends, asks, `limit` passes or Ctrl-C: with `print`, its output
/// as it arrives (window by window, as the box redacts it). Every step waits at the box
/// (`agent_run_wait`, with `offset` when printing: it answers once new output has gathered),
/// so a follow costs one call per batch of output, not one every half second; only the rest
/// of a batch larger than one window is read at once with `agent_run_status`.
async fn follow(c: &Client, run_id: &str, limit: Option<Duration>, print: bool) -> Result<Ended> {
    let deadline = limit.map(|l| Instant::now() + l);
    let mut offset = 0i64;
    let mut more = false;
    let mut spin = Spinner::new();
    let mut announced: Option<String> = None;
    // Whether the output printed so far leaves its last line open (no newline yet).
    let mut open_line = false;
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    loop {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            spin.clear();
            return Ok(Ended::TimedOut);
        }
        let step = async {
            if more {
                return c.call("agent_run_status", &StatusArgs { run_id: run_id.into(), offset: Some(offset) }).await;
            }
            // agent_run_wait answers when the run ends or asks, new output has gathered
            // (printing), or after its timeout.
            let left = deadline.map_or(50, |d| d.saturating_duration_since(Instant::now()).as_secs().clamp(1, 50));
            let args =
                WaitArgs { run_id: run_id.into(), timeout_s: Some(left as i64), offset: print.then_some(offset) };
            c.call("agent_run_wait", &args).await
        };
        let v = tokio::select! {
            _ = &mut ctrl_c => { spin.clear(); return Ok(Ended::Interrupted); }
            r = step => r?,
        };
        let status = status_of(&v);
        if print {
            let text = v["output"].as_str().unwrap_or_default();
            if !text.is_empty() {
                spin.clear();
                print!("{}", safe(text));
                let _ = std::io::stdout().flush();
                open_line = !text.ends_with('\n');
            }
            offset = v["next_offset"].as_i64().or(v["output_total"].as_i64()).unwrap_or(offset).max(offset);
            more = !v["next_offset"].is_null();
            if status.is_terminal() && !more {
                spin.clear();
                // The output printed (on this page or an earlier one) ends its line.
                if open_line {
                    println!();
                }
                return Ok(Ended::Run(v));
            }
            if more {
                continue;
            }
        } else if status.is_terminal() {
            spin.clear();
            return Ok(Ended::Run(v));
        }
        if v["pending"]["kind"] == "clarify" {
            spin.clear();
            return Ok(Ended::Asks(v));
        }
        // A run that waits on a person says so once per approval, terminal or not: which
        // card, what it asks, and the command that decides it on the box.
        if v["pending"]["kind"] == "approval"
            && let Some(id) = v["pending"]["approval_id"].as_str()
            && announced.as_deref() != Some(id)
        {
            spin.clear();
            let what = v["pending"]["command"].as_str().unwrap_or("");
            eprintln!(
                "The run waits for a person: approval {} asks to run: {}\nOn the box: hal0 approvals approve {} (or deny), or the dashboard's inbox.",
                safe_line(id),
                safe_line(what),
                safe_line(id)
            );
            announced = Some(id.to_string());
        }
        spin.tick(status.as_str());
    }
}

/// Ctrl-C during a wait: on a terminal, ask whether to stop the remote run; else leave it.
async fn interrupted(c: &Client, run_id: &str) -> Result<i32> {
    let ask = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let stop = ask
        && tokio::task::spawn_blocking(|| {
            dialoguer::Confirm::new().with_prompt("Stop the run on the box too?").default(false).interact()
        })
        .await
        .ok()
        .and_then(|r| r.ok())
        .unwrap_or(false);
    if stop {
        let v = c.call("agent_run_stop", &RunIdArgs { run_id: run_id.into() }).await?;
        eprintln!("Asked the box to stop {run_id}: it is {}.", safe_line(v["status"].as_str().unwrap_or("?")));
        return Ok(EXIT_CANCELLED);
    }
    eprintln!("The run goes on on the box: `hal0 run status {run_id}`.");
    Ok(EXIT_INTERRUPTED)
}

fn print_run(v: &Value, output: &str) {
    for k in ["run_id", "agent", "client", "status", "created_at", "updated_at", "error"] {
        if let Some(s) = v[k].as_str() {
            println!("{k:>10}: {}", safe_line(s));
        }
    }
    if v["pending"].is_object() {
        println!("{:>10}: {}", "pending", safe_line(&v["pending"].to_string()));
    }
    if !output.is_empty() {
        println!("{}", safe(output.trim_end()));
    }
}

async fn start(c: &Client, a: &RunArgs, json: bool) -> Result<i32> {
    let task = a.task.clone().unwrap_or_default();
    let req = AgentRunArgs {
        agent: a.agent.clone(),
        input: task,
        session_key: a.session_key.clone(),
        instructions: a.instructions.clone(),
        reasoning_effort: None,
        idempotency_key: a.idempotency_key.clone(),
        wait_s: None,
    };
    let started = c.call("agent_run", &req).await?;
    let run_id = started["run_id"].as_str().unwrap_or_default().to_string();
    if !(a.wait || a.follow) {
        if json {
            print_json(&started);
        } else {
            println!("{run_id}");
        }
        return Ok(0);
    }
    if !json && a.follow {
        eprintln!("run {run_id} on {}", safe_line(&a.agent));
    }
    let ended = follow(c, &run_id, a.timeout.map(Duration::from_secs), a.follow && !json).await?;
    match ended {
        Ended::Run(v) => {
            let status = status_of(&v);
            if json {
                let (out, last) = output_from(c, &run_id, 0).await?;
                print_json(&whole(last, out));
            } else if !a.follow {
                let (out, _) = output_from(c, &run_id, 0).await?;
                println!("{}", safe(out.trim_end()));
            }
            if status != RunStatus::Completed {
                let why = v["error"].as_str().map(|e| format!(": {}", safe_line(e))).unwrap_or_default();
                eprintln!("run {run_id} {}{why}", status.as_str());
            }
            Ok(exit_for(status))
        }
        Ended::Asks(v) => Err(Error::new(
            "run.needs_answer",
            Kind::Conflict,
            format!(
                "run {run_id} asks: {} — answer with `hal0 run answer {run_id} \"…\"`",
                safe_line(v["pending"]["question"].as_str().unwrap_or("(no text)"))
            ),
        )),
        Ended::TimedOut => {
            let e = Error::new(
                "run.timed_out",
                Kind::Unavailable,
                format!(
                    "run {run_id} has not ended after {} s; it goes on on the box (`hal0 run status {run_id}`)",
                    a.timeout.unwrap_or(0)
                ),
            );
            eprintln!("error: {} [{}]", e.message, e.code);
            Ok(EXIT_TIMED_OUT)
        }
        Ended::Interrupted => interrupted(c, &run_id).await,
    }
}

async fn sub(c: &Client, cmd: RunCmd, json: bool) -> Result<i32> {
    match cmd {
        RunCmd::Status { run_id } => {
            let (out, last) = output_from(c, &run_id, 0).await?;
            let v = whole(last, out.clone());
            if json {
                print_json(&v);
            } else {
                print_run(&v, &out);
            }
            Ok(0)
        }
        RunCmd::Events { run_id, since, limit } => {
            let v =
                c.call("agent_run_events", &EventsArgs { run_id, since_seq: Some(since), limit: Some(limit) }).await?;
            if json {
                print_json(&v);
                return Ok(0);
            }
            for e in v["events"].as_array().into_iter().flatten() {
                let mut rest = e.clone();
                if let Some(m) = rest.as_object_mut() {
                    for k in ["seq", "event", "timestamp"] {
                        m.remove(k);
                    }
                }
                let seq = e["seq"].as_i64().unwrap_or(0);
                let text =
                    rest.get("text").and_then(Value::as_str).map(str::to_string).unwrap_or_else(|| rest.to_string());
                println!("{seq:>5} {:<20} {}", safe_line(e["event"].as_str().unwrap_or("")), safe_line(&text));
            }
            Ok(0)
        }
        RunCmd::Stop { run_id } => {
            let v = c.call("agent_run_stop", &RunIdArgs { run_id: run_id.clone() }).await?;
            if json {
                print_json(&v);
            } else {
                println!("run {run_id}: {}", safe_line(v["status"].as_str().unwrap_or("?")));
            }
            Ok(0)
        }
        RunCmd::Answer { run_id, answer, request_id } => {
            let request_id = match request_id {
                Some(r) => r,
                None => {
                    let v = c.call("agent_run_status", &StatusArgs { run_id: run_id.clone(), offset: None }).await?;
                    v["pending"]["request_id"].as_str().map(str::to_string).ok_or_else(|| {
                        Error::new(
                            "run.no_question",
                            Kind::Conflict,
                            format!(
                                "run {run_id} asks nothing now (it is {})",
                                safe_line(v["status"].as_str().unwrap_or("?"))
                            ),
                        )
                    })?
                }
            };
            let v = c.call("agent_run_answer", &AnswerArgs { run_id: run_id.clone(), request_id, answer }).await?;
            if json {
                print_json(&v);
            } else {
                println!("run {run_id}: {}", safe_line(v["status"].as_str().unwrap_or("?")));
            }
            Ok(0)
        }
    }
}

/// A session with the remote box (`--remote NAME`, else the environment, else the default)
/// and the runtime to drive it on.
pub fn connect(remote: Option<&str>) -> Result<(tokio::runtime::Runtime, Client)> {
    let target = crate::remote::resolve(remote)?;
    let rt = super::runtime()?;
    let c = rt.block_on(crate::remote::client::connect(&target))?;
    Ok((rt, c))
}

/// `hal0 run …`: its exit code.
pub fn run(a: RunArgs, json: bool) -> Result<i32> {
    if a.timeout == Some(0) {
        return Err(Error::invalid("cli.invalid_timeout", "--timeout must be 1 second or more"));
    }
    let (rt, c) = connect(a.remote.as_deref())?;
    rt.block_on(async move {
        let out = match a.cmd {
            Some(cmd) => sub(&c, cmd, json).await,
            None => start(&c, &a, json).await,
        };
        c.close().await;
        out
    })
}
