//! `hal0` as a remote client, from a "workstation" (its own config dir, no box files)
//! against a running `hal0 serve` whose bridge delegates to the fake Hermes: `hal0 remote
//! add|list|remove|default` (the key in the credentials-file fallback, and in a real Secret
//! Service: gnome-keyring under dbus-run-session), `hal0 run` with every exit code (0
//! completed, 5 failed, 3 cancelled, 4 a revoked key, 6 timed out, 2 usage, 130 Ctrl-C
//! leaving the run), `--follow` and `--json`, the box's redaction, `HAL0_REMOTE_URL` +
//! `HAL0_KEY` for CI, and `run status|events|stop|answer`.

use crate::support::fake_hermes::{FakeHermes, FakeHermesOptions, SECRET_TEXT};
use crate::support::*;
use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A machine that is not the box: its own HOME and config dir for remotes.
struct Workstation {
    home: tempfile::TempDir,
}

impl Workstation {
    fn new() -> Workstation {
        Workstation { home: tempfile::tempdir().unwrap() }
    }

    fn dir(&self) -> std::path::PathBuf {
        self.home.path().join(".config/hal0")
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .env("HOME", self.home.path())
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("HAL0_REMOTE_CONFIG_DIR")
            .env_remove("HAL0_REMOTE_URL")
            .env_remove("HAL0_KEY")
            // No keyring service here (a CI runner): the documented fallback.
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .env("HAL0_CONFIG_DIR", self.home.path().join("no-box/etc"))
            .env("HAL0_STATE_DIR", self.home.path().join("no-box/var"))
            .stdin(Stdio::null());
        c
    }

    fn run(&self, args: &[&str]) -> Out {
        Out(self.cmd(args).output().unwrap())
    }

    fn with_stdin(&self, args: &[&str], input: &str) -> Out {
        let mut c = self.cmd(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        c.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        Out(c.wait_with_output().unwrap())
    }
}

async fn boxed() -> (Env, Server, FakeHermes, tempfile::TempDir) {
    let options = FakeHermesOptions { slow_interval: Duration::from_millis(100), ..Default::default() };
    let (env, hermes, home) = fake_hermes_env(options, "").await;
    let server = env.serve();
    (env, server, hermes, home)
}

/// The id of the running run whose input is `input`, once the box's ledger has it.
async fn running(env: &Env, input: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let runs = env.json(&["runs", "list", "--json", "--status", "running"]);
        if let Some(r) = runs.as_array().unwrap().iter().find(|r| r["input_preview"] == input) {
            return r["run_id"].as_str().unwrap().to_string();
        }
        assert!(Instant::now() < deadline, "the run `{input}` did not start");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn base(server: &Server) -> String {
    server.url("")
}

/// The box's ledger entry of `run_id`, once it exists.
fn ledger(env: &Env, run_id: &str) -> Value {
    let runs = env.json(&["runs", "list", "--json"]);
    runs.as_array().unwrap().iter().find(|r| r["run_id"] == run_id).cloned().unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_from_a_workstation_end_with_the_documented_exit_codes() {
    let (env, server, _hermes, _home) = boxed().await;
    let key = env.bridge_key("laptop", &[]);
    let ws = Workstation::new();
    let url = base(&server);

    // Nothing set up yet: a usage error that says what to do.
    let o = ws.run(&["run", "hello", "--wait"]);
    assert_eq!(o.code(), 2, "{}", o.stderr());
    assert!(o.stderr().contains("hal0 remote add") && o.stderr().contains("remote.none"), "{}", o.stderr());

    // A key the box refuses is not stored.
    let o = ws
        .with_stdin(&["remote", "add", "box", &url, "--key-stdin"], "hal0bk_not_a_real_key_000000000000000000000000\n");
    assert_eq!(o.code(), 4, "{}", o.stderr());
    assert!(o.stderr().contains("remote.key_refused"), "{}", o.stderr());
    assert!(!ws.dir().join("remotes.toml").exists());
    for (args, code) in [
        (vec!["remote", "add", "bad name", &url, "--key-stdin"], "remote.invalid_name"),
        (vec!["remote", "add", "box", "box.lan", "--key-stdin"], "remote.invalid_url"),
        (vec!["remote", "add", "box", "https://box/mcp/agents/mcp", "--key-stdin"], "remote.invalid_url"),
    ] {
        let o = ws.with_stdin(&args, &format!("{key}\n"));
        assert_eq!(o.code(), 2, "{args:?}: {}", o.stderr());
        assert!(o.stderr().contains(code), "{args:?}: {}", o.stderr());
    }
    let o = ws.with_stdin(&["remote", "add", "box", &url, "--key-stdin"], "two words\n");
    assert!(o.stderr().contains("remote.invalid_key") && !o.stderr().contains("two words"), "{}", o.stderr());

    // Added: checked with the box, the key in the 0600 fallback file (no keyring here).
    let o = ws.with_stdin(&["remote", "add", "box", &url, "--key-stdin"], &format!("{key}\n"));
    assert_eq!(o.code(), 0, "{}", o.stderr());
    assert!(o.stdout().contains("bridge client `laptop`"), "{}", o.stdout());
    assert!(o.stderr().contains("no keyring service") && o.stderr().contains("credentials"), "{}", o.stderr());
    let creds = ws.dir().join("credentials");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&creds).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(std::fs::read_to_string(&creds).unwrap().contains(&key));
    let remotes = std::fs::read_to_string(ws.dir().join("remotes.toml")).unwrap();
    assert!(!remotes.contains(&key) && remotes.contains("key_in = \"file\""), "{remotes}");
    let list: Value = serde_json::from_str(&ws.run(&["remote", "list", "--json"]).stdout()).unwrap();
    assert_eq!((list[0]["name"].as_str(), list[0]["default"].as_bool()), (Some("box"), Some(true)), "{list}");
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");
    assert!(!list.to_string().contains(&key));

    // 0: completed, the output printed.
    let o = ws.run(&["run", "hello from CI", "--wait"]);
    assert_eq!(o.code(), 0, "{}", o.stderr());
    assert_eq!(o.stdout().trim(), "FAKE ANSWER: hello from CI");
    // --json: the box's run view with the whole output.
    let o = ws.run(&["run", "json please", "--wait", "--json"]);
    let v: Value = serde_json::from_str(&o.stdout()).unwrap_or_else(|e| panic!("{e}: {}", o.stdout()));
    assert_eq!((v["status"].as_str(), v["output"].as_str()), (Some("completed"), Some("FAKE ANSWER: json please")));
    assert_eq!(v["client"], "laptop");
    // --follow without a terminal: plain output, the same text.
    let follow_calls = || {
        let n = |tool: &str| {
            env.json(&["activity", "list", "--json", "--tool", tool, "--limit", "10000"]).as_array().unwrap().len()
        };
        n("agent_run_status") + n("agent_run_wait")
    };
    let before = follow_calls();
    let o = ws.run(&["run", "SLOW follow me", "--follow"]);
    assert_eq!(o.code(), 0, "{}", o.stderr());
    assert!(o.stdout().contains("part 01/60") && o.stdout().contains("part 60/60"), "{}", o.stdout());
    // Following waits at the box, one call per 2 s batch of output: a 6 s run (60 deltas,
    // 100 ms apart) is a handful of audited calls, not one every half second (issue 32).
    let calls = follow_calls() - before;
    assert!((1..=6).contains(&calls), "{calls} audited calls to follow a 6 s run");
    // The box's redaction holds on every path.
    let secret = SECRET_TEXT.rsplit(' ').next().unwrap();
    for args in [vec!["run", "SECRET", "--wait"], vec!["run", "SECRET", "--follow"]] {
        let o = ws.run(&args);
        assert_eq!(o.code(), 0, "{}", o.stderr());
        assert!(!o.stdout().contains(secret) && o.stdout().contains("Bearer"), "{args:?}: {}", o.stdout());
    }
    // 5: failed, with the box's error on stderr.
    let o = ws.run(&["run", "FAIL now", "--wait"]);
    assert_eq!(o.code(), 5, "{} {}", o.stdout(), o.stderr());
    assert!(o.stderr().contains("failed"), "{}", o.stderr());
    // 6: timed out; the run goes on.
    let o = ws.run(&["run", "SLOW long", "--wait", "--timeout", "1"]);
    assert_eq!(o.code(), 6, "{}", o.stderr());
    assert!(o.stderr().contains("run.timed_out"), "{}", o.stderr());
    // 2: usage.
    assert_eq!(ws.run(&["run"]).code(), 2);
    assert_eq!(ws.run(&["run", "x", "--timeout", "0"]).code(), 2);
    assert_eq!(
        ws.run(&["run", "x", "--agent", "hermes/nobody", "--wait"]).code(),
        1,
        "an unknown profile is the box's 404"
    );

    // 3: cancelled, by a stop from another process while this one waits.
    let waiting =
        ws.cmd(&["run", "SLOW to cancel", "--wait"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let run_id = running(&env, "SLOW to cancel").await;
    let o = ws.run(&["run", "stop", &run_id]);
    assert_eq!(o.code(), 0, "{}", o.stderr());
    let out = Out(waiting.wait_with_output().unwrap());
    assert_eq!(out.code(), 3, "{} {}", out.stdout(), out.stderr());

    // Ctrl-C without a terminal: exit 130, the run goes on on the box.
    let child =
        ws.cmd(&["run", "SLOW keep going", "--wait"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let run_id = running(&env, "SLOW keep going").await;
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let out = Out(child.wait_with_output().unwrap());
    assert_eq!(out.code(), 130, "{}", out.stderr());
    assert!(out.stderr().contains(&format!("hal0 run status {run_id}")), "{}", out.stderr());
    assert!(!ledger(&env, &run_id)["status"].as_str().unwrap().contains("cancel"), "the run was left alone");

    // --follow without a terminal says which approval the run waits on, what it asks and
    // the command that decides it; approved on the box, the run ends.
    let following =
        ws.cmd(&["run", "APPROVE follow", "--follow"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let card = loop {
        let rows = env.json(&["approvals", "list", "--json"]);
        if let Some(r) = rows.as_array().unwrap().iter().find(|r| r["kind"] == "hermes_command") {
            break r.clone();
        }
        assert!(std::time::Instant::now() < deadline, "no approval card");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    let card_id = card["id"].as_str().unwrap();
    // Give the follower a wait of its own to see the card before it is decided.
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    env.ok(&["approvals", "approve", card_id, "--yes"]);
    let out = Out(following.wait_with_output().unwrap());
    assert_eq!(out.code(), 0, "{} {}", out.stdout(), out.stderr());
    let said = out.stderr();
    assert!(said.contains(&format!("approval {card_id} asks to run:")), "{said}");
    assert!(said.contains(&format!("hal0 approvals approve {card_id}")), "{said}");
    assert_eq!(said.matches("waits for a person").count(), 1, "said once: {said}");
    let shown = out.stdout();
    assert!(shown.contains("approved") && shown.ends_with('\n'), "the output ends its line: {shown:?}");

    // status / events of that run, from the workstation.
    let o = ws.run(&["run", "status", &run_id, "--json"]);
    let v: Value = serde_json::from_str(&o.stdout()).unwrap();
    assert_eq!(v["run_id"], run_id.as_str());
    let o = ws.run(&["run", "events", &run_id, "--json"]);
    let v: Value = serde_json::from_str(&o.stdout()).unwrap();
    assert!(v["events"].as_array().is_some_and(|e| !e.is_empty()), "{v}");
    let o = ws.run(&["run", "answer", &run_id, "yes"]);
    assert_eq!(o.code(), 1, "{}", o.stderr());
    assert!(o.stderr().contains("run.no_question"), "{}", o.stderr());
    let o = ws.run(&["run", "status", "run_nope"]);
    assert!(o.stderr().contains("bridge.run_not_found"), "{}", o.stderr());

    // CI: HAL0_REMOTE_URL + HAL0_KEY without any remote file.
    let ci = Workstation::new();
    let o =
        Out(ci.cmd(&["run", "from CI", "--wait"]).env("HAL0_REMOTE_URL", &url).env("HAL0_KEY", &key).output().unwrap());
    assert_eq!((o.code(), o.stdout().trim()), (0, "FAKE ANSWER: from CI"), "{}", o.stderr());
    let o = Out(ci.cmd(&["run", "x"]).env("HAL0_REMOTE_URL", &url).output().unwrap());
    assert!(o.code() == 2 && o.stderr().contains("remote.no_key"), "{}", o.stderr());

    // 4: the key revoked on the box.
    env.ok(&["bridge", "revoke", "laptop", "--yes"]);
    let o = ws.run(&["run", "after revoke", "--wait"]);
    assert_eq!(o.code(), 4, "{}", o.stderr());
    assert!(o.stderr().contains("remote.key_refused") && o.stderr().contains("hal0 bridge rotate"), "{}", o.stderr());
    assert!(!o.stderr().contains(&key));

    // remove / default.
    let o = ws.with_stdin(&["remote", "add", "second", &url, "--key-stdin", "--no-check"], &format!("{key}\n"));
    assert_eq!(o.code(), 0, "{}", o.stderr());
    assert_eq!(ws.run(&["remote", "default", "second"]).code(), 0);
    assert_eq!(ws.run(&["remote", "default", "nope"]).code(), 1);
    assert_eq!(ws.run(&["remote", "remove", "box"]).code(), 3, "asks first; no terminal declines");
    assert_eq!(ws.run(&["remote", "remove", "box", "--yes"]).code(), 0);
    let creds = std::fs::read_to_string(ws.dir().join("credentials")).unwrap();
    assert!(!creds.contains("box"), "the removed remote's key is gone: {creds}");
}

/// With a Secret Service (gnome-keyring in a private D-Bus session, as on a desktop), the
/// key goes to the keyring and no credentials file is written; a run reads it back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_lives_in_a_real_secret_service() {
    let have =
        ["/usr/bin/dbus-run-session", "/usr/bin/gnome-keyring-daemon"].iter().all(|p| std::path::Path::new(p).exists());
    if !have {
        missing_external("dbus-run-session or gnome-keyring-daemon", "apt install dbus gnome-keyring");
        return;
    }
    let (env, server, _hermes, _home) = boxed().await;
    let key = env.bridge_key("desk", &[]);
    let ws = Workstation::new();
    let script = format!(
        "printf pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1 || exit 90\n\
         printf '%s\\n' \"$KEY\" | {bin} remote add desk {url} --key-stdin || exit 91\n\
         {bin} run 'via the keyring' --wait || exit 92\n\
         {bin} remote remove desk --yes || exit 93\n\
         {bin} run again 2>&1; exit 0\n",
        bin = BIN,
        url = base(&server)
    );
    let o = Out(Command::new("dbus-run-session")
        .args(["--", "sh", "-c", &script])
        .env_clear()
        .env("HOME", ws.home.path())
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("KEY", &key)
        .env("HAL0_CONFIG_DIR", ws.home.path().join("no-box/etc"))
        .env("HAL0_STATE_DIR", ws.home.path().join("no-box/var"))
        .stdin(Stdio::null())
        .output()
        .unwrap());
    assert_eq!(o.code(), 0, "{}\n{}", o.stdout(), o.stderr());
    let out = o.stdout();
    assert!(out.contains("The key is in the OS keyring."), "{out}");
    assert!(out.contains("FAKE ANSWER: via the keyring"), "{out}");
    assert!(out.contains("Removed remote `desk`") && out.contains("remote.none"), "{out}");
    assert!(!ws.dir().join("credentials").exists(), "no fallback file with a keyring");
    // The keyring's own file holds the key encrypted, never in clear.
    let dir = ws.home.path().join(".local/share/keyrings");
    for f in std::fs::read_dir(&dir).unwrap() {
        let bytes = std::fs::read(f.unwrap().path()).unwrap();
        assert!(!String::from_utf8_lossy(&bytes).contains(&key));
    }
}

/// `hal0 memory add|search` and `hal0 skills list|push` from a workstation: a note lands in
/// the profile's memory on the box; a pushed skill waits for a person there and, approved,
/// is listed; a directory that is no skill is refused before anything is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_and_skills_from_a_workstation() {
    let dirs = tempfile::tempdir().unwrap();
    let env = Env::new();
    std::fs::create_dir_all(env.config_dir()).unwrap();
    std::fs::write(
        env.config_dir().join("hal0.toml"),
        format!(
            "[skills]\nshipped_dir = \"{}\"\ndropin_dir = \"{}\"\n[hermes]\nhome = \"{}\"\n",
            dirs.path().join("shipped").display(),
            dirs.path().join("dropin").display(),
            dirs.path().join("hermes").display()
        ),
    )
    .unwrap();
    let key = env.bridge_key("ada", &["memory"]);
    let server = env.serve();
    let ws = Workstation::new();
    let url = base(&server);
    assert_eq!(ws.with_stdin(&["remote", "add", "box", &url, "--key-stdin"], &format!("{key}\n")).code(), 0);

    let o = ws.run(&["memory", "add", "the deploy word is kiwi", "--tag", "ops"]);
    assert_eq!(o.code(), 0, "{}", o.stderr());
    assert!(o.stdout().starts_with("Remembered"), "{}", o.stdout());
    let o = ws.run(&["memory", "search", "kiwi", "--json"]);
    let v: Value = serde_json::from_str(&o.stdout()).unwrap_or_else(|e| panic!("{e}: {} {}", o.stdout(), o.stderr()));
    assert_eq!(v[0]["text"], "the deploy word is kiwi", "{v}");
    assert_eq!(v[0]["tags"], serde_json::json!(["ops", "source:bridge:ada"]), "{v}");
    let o = ws.run(&["memory", "search", "   "]);
    assert_eq!(o.code(), 2, "the box's bad-input code comes back as a usage error: {}", o.stderr());
    assert!(o.stderr().contains("bridge.memory_invalid"), "{}", o.stderr());

    // A skill directory: SKILL.md and a note beside it.
    let skill = ws.home.path().join("deploy-notes");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(skill.join("SKILL.md"), "---\nname: deploy-notes\ndescription: How we deploy\n---\n\n# Deploy\n")
        .unwrap();
    std::fs::write(skill.join("checklist.md"), "1. tag\n2. ship\n").unwrap();
    let o = ws.run(&["skills", "push", skill.to_str().unwrap(), "--json"]);
    assert_eq!(o.code(), 0, "{}", o.stderr());
    let v: Value = serde_json::from_str(&o.stdout()).unwrap();
    assert_eq!(v["status"], "pending_approval", "{v}");
    let listed = ws.run(&["skills", "list"]).stdout();
    assert!(!listed.contains("deploy-notes"), "nothing is written before a person approves: {listed}");
    env.ok(&["agent", "approvals", "approve", v["approval_id"].as_str().unwrap(), "--yes"]);
    let listed = ws.run(&["skills", "list"]).stdout();
    assert!(listed.contains("deploy-notes") && listed.contains("How we deploy"), "{listed}");
    assert_eq!(
        std::fs::read_to_string(dirs.path().join("dropin/deploy-notes/checklist.md")).unwrap(),
        "1. tag\n2. ship\n"
    );

    // Not a skill: refused here, with the reason.
    let empty = ws.home.path().join("empty");
    std::fs::create_dir_all(empty.join("sub")).unwrap();
    let o = ws.run(&["skills", "push", empty.to_str().unwrap()]);
    assert_eq!(o.code(), 2);
    assert!(o.stderr().contains("remote.invalid_skill") && o.stderr().contains("SKILL.md"), "{}", o.stderr());
    std::fs::write(empty.join("SKILL.md"), "x").unwrap();
    let o = ws.run(&["skills", "push", empty.to_str().unwrap()]);
    assert!(o.stderr().contains("is a directory"), "{}", o.stderr());
    // A link out of the skill is never followed (it could name any of this user's files).
    std::fs::remove_dir(empty.join("sub")).unwrap();
    std::os::unix::fs::symlink(env.config_dir().join("api.env"), empty.join("notes.md")).unwrap();
    let o = ws.run(&["skills", "push", empty.to_str().unwrap()]);
    assert_eq!(o.code(), 2);
    assert!(o.stderr().contains("not a regular file"), "{}", o.stderr());
}

/// A run that asks its caller a question: `--wait` stops with `run.needs_answer` and the
/// question; `hal0 run answer` answers the pending one, and the run completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_is_answered_from_the_workstation() {
    let options = FakeHermesOptions { clarify: true, ..Default::default() };
    let (env, _hermes, _home) = fake_hermes_env(options, "").await;
    let key = env.bridge_key("laptop", &[]);
    let server = env.serve();
    let ws = Workstation::new();
    assert_eq!(ws.with_stdin(&["remote", "add", "box", &base(&server), "--key-stdin"], &format!("{key}\n")).code(), 0);

    let o = ws.run(&["run", "CLARIFY which one", "--wait"]);
    assert_eq!(o.code(), 1, "{}", o.stderr());
    assert!(o.stderr().contains("run.needs_answer") && o.stderr().contains("hal0 run answer"), "{}", o.stderr());
    let run_id = o.stderr().split("run ").nth(1).and_then(|r| r.split_whitespace().next()).unwrap().to_string();
    let o = ws.run(&["run", "answer", &run_id, "the left one"]);
    assert_eq!(o.code(), 0, "{}", o.stderr());
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let o = ws.run(&["run", "status", &run_id, "--json"]);
        let v: Value = serde_json::from_str(&o.stdout()).unwrap();
        if v["status"] == "completed" {
            break;
        }
        assert!(Instant::now() < deadline, "the answered run did not complete: {v}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
