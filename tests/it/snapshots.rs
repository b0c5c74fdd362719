//! Snapshots of the human-readable output of the list and show commands: `hal0 bridge list`,
//! `hal0 mcp list|status`, `hal0 doctor`, `hal0 ui user list|passkeys|sessions`, `hal0 agent
//! approvals list|show`, `hal0 runs list`, `hal0 activity list`, `hal0 notify list`, `hal0
//! relay agents|exchanges|peer list`, `hal0 oauth client list`, `hal0 store status` and
//! `hal0 config show`, each the real binary
//! against temp dirs whose records were made through the CLI (and, for the approvals,
//! through a running `hal0 serve`). What legitimately differs between runs (times, the temp
//! dir, ports, approval ids) is replaced by a fixed placeholder first; the tables are then
//! re-padded, so a value of another length cannot move a border. The commands run as for a
//! person at a terminal (`HAL0_FORCE_TTY`), except the one snapshot of the plain form.
//!
//! The `.snap` files are in `tests/it/snapshots/`. A missing or changed snapshot fails the
//! test (CI runs with `INSTA_UPDATE=no`, so nothing is written there). After an intended
//! change of output, re-bless and review:
//! `INSTA_UPDATE=always cargo nextest run -E 'test(/^snapshots::/)'`, then `git diff tests/it/snapshots`.

use crate::support::mcp::{call, connect_with};
use crate::support::*;
use serde_json::json;
use std::net::TcpListener;
use std::sync::LazyLock;

static TIME: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})").unwrap());

/// Sizes of files and disks (`309.8 KiB`, `39.6 GiB`).
static SIZE: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"\b\d+(\.\d+)? (B|KiB|MiB|GiB|TiB)\b").unwrap());

/// Replacements applied to everything snapshotted: the temp dir, then the listed values,
/// then every RFC 3339 time and every size.
struct Scrub(Vec<(String, String)>);

impl Scrub {
    fn new(env: &Env) -> Scrub {
        Scrub(vec![(env.dir.path().display().to_string(), "[tmp]".into())])
    }

    fn with(mut self, from: impl Into<String>, to: impl Into<String>) -> Scrub {
        self.0.push((from.into(), to.into()));
        self
    }

    fn text(&self, s: &str) -> String {
        let mut s = s.to_string();
        for (from, to) in &self.0 {
            s = s.replace(from, to);
        }
        let s = TIME.replace_all(&s, "[time]");
        SIZE.replace_all(&s, "[size]").into_owned()
    }

    /// [`Scrub::out`] for plain columns (a pipe): each time becomes `[time]` padded to the
    /// time's own width, so the columns stay aligned (every time has one width).
    fn plain(&self, o: &Out) -> String {
        let stdout = o.stdout();
        let stdout = TIME.replace_all(&stdout, |c: &regex::Captures| format!("{:<w$}", "[time]", w = c[0].len()));
        format!("exit: {}\n--- stdout\n{}--- stderr\n{}", o.code(), self.text(&stdout), self.text(&o.stderr()))
    }

    /// The exit code, stdout and stderr of one command, scrubbed and with tables re-padded.
    fn out(&self, o: &Out) -> String {
        format!(
            "exit: {}\n--- stdout\n{}--- stderr\n{}",
            o.code(),
            retable(&o.stdout(), |c| self.text(c)),
            self.text(&o.stderr())
        )
    }
}

/// Apply `f` to every line, and inside the comfy tables (`UTF8_FULL_CONDENSED`) to every cell,
/// then pad each column to its widest cell again.
fn retable(text: &str, f: impl Fn(&str) -> String) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].starts_with('┌') {
            out.push_str(&f(lines[i]));
            out.push('\n');
            i += 1;
            continue;
        }
        let end = i + lines[i..].iter().position(|l| l.starts_with('└')).expect("a table ends with └");
        out.push_str(&repad(&lines[i..=end], &f));
        i = end + 1;
    }
    out
}

fn repad(block: &[&str], f: &impl Fn(&str) -> String) -> String {
    let grid: Vec<Vec<char>> = block.iter().map(|l| l.chars().collect()).collect();
    // Column borders: where the top line has ┬ or ┐; every line must have a border there.
    let cuts: Vec<usize> = grid[0].iter().enumerate().filter(|(_, c)| matches!(c, '┬' | '┐')).map(|(i, _)| i).collect();
    for l in &grid {
        assert_eq!(l.len(), grid[0].len(), "a table line of another width (a wide character?): {block:#?}");
    }
    // Each line as (its border characters, its segments between them).
    let split = |l: &[char]| -> (Vec<char>, Vec<String>) {
        let mut borders = vec![l[0]];
        let mut segs = Vec::new();
        let mut from = 1;
        for &c in &cuts {
            segs.push(l[from..c].iter().collect::<String>());
            borders.push(l[c]);
            from = c + 1;
        }
        (borders, segs)
    };
    let rows: Vec<(Vec<char>, Vec<String>)> = grid.iter().map(|l| split(l)).collect();
    let is_cells = |b: &[char]| b[0] == '│';
    let cells: Vec<Option<Vec<String>>> = rows
        .iter()
        .map(|(b, segs)| {
            is_cells(b).then(|| segs.iter().map(|s| f(s.strip_prefix(' ').unwrap_or(s).trim_end())).collect())
        })
        .collect();
    let widths: Vec<usize> =
        (0..cuts.len()).map(|col| cells.iter().flatten().map(|r| r[col].chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for ((borders, segs), cells) in rows.iter().zip(&cells) {
        out.push(borders[0]);
        for (col, w) in widths.iter().enumerate() {
            match cells {
                Some(cells) => out.push_str(&format!(" {:<w$} ", cells[col])),
                None => {
                    let fill = segs[col].chars().next().unwrap_or('─');
                    out.extend(std::iter::repeat_n(fill, w + 2));
                }
            }
            out.push(borders[col + 1]);
        }
        out.push('\n');
    }
    out
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `hal0 args` as a person at a terminal sees it (the grid; `HAL0_FORCE_TTY`).
fn grid(env: &Env, args: &[&str]) -> Out {
    Out(env.cmd(args).env("HAL0_FORCE_TTY", "1").output().unwrap())
}

/// [`grid`] as shell user `tester` (a decider, an audit identity and a login link name the
/// shell user).
fn as_tester(env: &Env, args: &[&str]) -> Out {
    Out(env.cmd(args).env("USER", "tester").env_remove("SUDO_USER").env("HAL0_FORCE_TTY", "1").output().unwrap())
}

/// `hal0 doctor` with HOME in the temp dir and no `HAL0_HERMES_HOME`, so no Hermes home of
/// the machine's is looked at.
fn doctor(env: &Env) -> Out {
    Out(env
        .cmd(&["doctor"])
        .env("HOME", env.dir.path().join("home"))
        .env_remove("HAL0_HERMES_HOME")
        .env("HAL0_FORCE_TTY", "1")
        .output()
        .unwrap())
}

/// `hal0 ui user list` and `hal0 ui user passkeys`, empty and with people (as shell user
/// `tester`).
#[test]
fn ui_user_list() {
    let env = Env::new();
    let s = Scrub::new(&env);
    let run = |a: &[&str]| as_tester(&env, a);
    let empty = run(&["ui", "user", "list"]);
    let no_keys = run(&["ui", "user", "passkeys"]);
    assert_eq!(run(&["ui", "user", "add", "alice"]).code(), 0);
    assert_eq!(run(&["ui", "user", "add", "bob"]).code(), 0);
    insta::assert_snapshot!("ui_user_list_empty", s.out(&empty));
    insta::assert_snapshot!("ui_user_passkeys_empty", s.out(&no_keys));
    insta::assert_snapshot!("ui_user_list", s.out(&run(&["ui", "user", "list"])));
}

#[test]
fn bridge_list() {
    let env = Env::new();
    let s = Scrub::new(&env);
    let empty = grid(&env, &["bridge", "list"]);
    env.ok(&["bridge", "add", "laptop", "--note", "work laptop"]);
    env.ok(&["bridge", "add", "ci", "--scope", "agents", "--scope", "admin"]);
    env.ok(&["bridge", "add", "old-box", "--note", "retired"]);
    env.ok(&["bridge", "scopes", "laptop", "agents", "memory", "admin"]);
    env.ok(&["bridge", "revoke", "old-box", "--yes"]);
    let listed = grid(&env, &["bridge", "list"]);
    // In a pipe: plain aligned columns, one row per line, `-` for an empty cell.
    insta::assert_snapshot!("bridge_list_plain", s.plain(&env.run(&["bridge", "list"])));
    insta::assert_snapshot!("bridge_list_empty", s.out(&empty));
    insta::assert_snapshot!("bridge_list", s.out(&listed));
}

#[test]
fn mcp_list() {
    let env = Env::new();
    let empty = grid(&env, &["mcp", "list"]);
    // A listener the probe reaches; port 9 on loopback has none.
    let live = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = live.local_addr().unwrap().port();
    let s = Scrub::new(&env).with(format!("127.0.0.1:{port}"), "127.0.0.1:[port]");
    env.ok(&["mcp", "install", &format!("http://127.0.0.1:{port}/mcp"), "--id", "local", "--name", "Local files"]);
    env.ok(&["mcp", "install", "http://127.0.0.1:9/sse", "--id", "gone"]);
    env.ok(&["mcp", "install", "uvx:uv-server"]);
    env.ok(&["mcp", "allow", "local", "search"]);
    env.ok(&["mcp", "allow", "local", "read"]);
    env.ok(&["mcp", "gate", "local", "write"]);
    env.ok(&["mcp", "block", "local", "delete_all"]);
    env.ok(&["mcp", "allow", "uv-server", "fetch"]);
    std::fs::write(env.config_dir().join("mcp-servers/broken.toml"), "id = \"broken\nname = 1\n").unwrap();
    let listed = grid(&env, &["mcp", "list"]);
    drop(live);
    insta::assert_snapshot!("mcp_list_bundled_only", s.out(&empty));
    insta::assert_snapshot!("mcp_list", s.out(&listed));
}

#[test]
fn doctor_first_steps() {
    let env = Env::new();
    let port = free_port();
    let s = Scrub::new(&env).with(format!("127.0.0.1:{port}"), "127.0.0.1:[port]");
    env.ok(&["config", "set", "network.bind", &format!("127.0.0.1:{port}")]);
    env.ok(&["bridge", "add", "ci"]);
    insta::assert_snapshot!("doctor_first_steps", s.out(&doctor(&env)));
}

#[test]
fn doctor_with_problems() {
    let env = Env::new();
    // Another program holds the bound port: it accepts and never answers.
    let held = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let s = Scrub::new(&env).with(format!("127.0.0.1:{port}"), "127.0.0.1:[port]");
    env.ok(&["config", "set", "network.bind", &format!("127.0.0.1:{port}")]);
    env.ok(&["auth", "rotate", "admin", "--yes"]);
    env.ok(&["mcp", "install", "http://127.0.0.1:9/mcp", "--id", "files"]);
    std::fs::write(env.config_dir().join("mcp-servers/broken.toml"), "not toml at all\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(env.config_dir().join("hal0.toml"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = doctor(&env);
    drop(held);
    insta::assert_snapshot!("doctor_with_problems", s.out(&o));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_list_and_show() {
    let env = Env::new();
    let approvals = |args: &[&str]| {
        let mut a = vec!["agent", "approvals"];
        a.extend_from_slice(args);
        // The decider is named after the user at the shell.
        as_tester(&env, &a)
    };
    let empty = approvals(&["list"]);
    let key = env.bridge_key("ops", &["admin"]);
    env.ok(&["bridge", "add", "victim"]);
    let server = env.serve();
    let c = connect_with(&server, "admin", &key, false).await;
    let gated = [
        ("config_write", json!({"key": "network.public_url", "value": "https://box.example"})),
        ("bridge_client_revoke", json!({"name": "victim"})),
        ("bridge_client_scopes", json!({"name": "victim", "scopes": ["admin"]})),
    ];
    let mut s = Scrub::new(&env);
    let mut ids = Vec::new();
    for (n, (tool, args)) in gated.iter().enumerate() {
        let v = call(&c, tool, json!({"args": args})).await.unwrap_or_else(|e| panic!("{tool}: {e}"));
        assert_eq!(v["status"], "pending_approval", "{tool}: {v}");
        let id = v["approval_id"].as_str().unwrap().to_string();
        s = s.with(id.clone(), format!("[approval {}]", n + 1));
        ids.push(id);
    }
    // The first stays pending, the second is denied, the third approved (and run).
    assert_eq!(approvals(&["deny", &ids[1], "--yes", "--reason", "not today"]).code(), 0);
    assert_eq!(approvals(&["approve", &ids[2], "--yes"]).code(), 0);
    let all = approvals(&["list", "--all"]);
    let pending = approvals(&["list", "--status", "pending"]);
    let denied = approvals(&["show", &ids[1]]);
    let executed = approvals(&["show", &ids[2]]);
    drop(server);
    insta::assert_snapshot!("approvals_list_empty", s.out(&empty));
    insta::assert_snapshot!("approvals_list", s.out(&all));
    insta::assert_snapshot!("approvals_list_pending", s.out(&pending));
    insta::assert_snapshot!("approvals_show_executed", s.out(&executed));
    insta::assert_snapshot!("approvals_show_denied", s.out(&denied));
}

/// The other list and show commands a person reads, against state made through the CLI:
/// the run ledger, the audit log, notification targets, relay bots and exchanges, relay
/// peers, dashboard sessions, OAuth clients, the store, one server's status and the
/// configuration.
#[test]
fn the_other_list_and_show_commands() {
    let env = Env::new();
    let s = Scrub::new(&env);
    // As shell user `tester` (the audit log names the shell user), on a box with a public
    // URL (else the proxy URL names this machine's address).
    let run = |a: &[&str]| as_tester(&env, a);
    let ok = |a: &[&str]| assert_eq!(run(a).code(), 0, "{a:?}");
    ok(&["config", "set", "network.public_url", "https://box.example"]);
    ok(&["bridge", "add", "ci"]);
    ok(&["bridge", "add", "helper", "--scope", "relay"]);
    ok(&["notify", "add", "ntfy", "http://127.0.0.1:9/hal0-cards", "--id", "phone"]);
    ok(&["mcp", "install", "http://127.0.0.1:9/mcp", "--id", "files", "--name", "Files"]);
    ok(&["mcp", "allow", "files", "read"]);
    ok(&["mcp", "gate", "files", "write"]);
    ok(&["config", "set", "mcp.gate_wait_secs", "40"]);
    let shots: &[(&str, &[&str])] = &[
        ("runs_list_empty", &["runs", "list"]),
        ("activity_list", &["activity", "list"]),
        ("notify_list", &["notify", "list"]),
        ("relay_agents", &["relay", "agents"]),
        ("relay_exchanges_empty", &["relay", "exchanges"]),
        ("relay_peer_list_empty", &["relay", "peer", "list"]),
        ("ui_sessions_empty", &["ui", "sessions"]),
        ("oauth_client_list_empty", &["oauth", "client", "list"]),
        ("mcp_status", &["mcp", "status", "files"]),
        ("store_status", &["store", "status"]),
        ("config_show", &["config", "show"]),
    ];
    for (name, argv) in shots {
        insta::assert_snapshot!(*name, s.out(&run(argv)));
    }
}

/// The normalizer itself: a table rendered with a long value, scrubbed to a short one and
/// re-padded, equals the table comfy renders from the short value directly.
#[test]
fn retable_matches_comfy_after_a_replacement() {
    let render = |detail: &str| {
        let mut t = comfy_table::Table::new();
        t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED).set_header(["STATUS", "DETAIL"]);
        t.add_row(["✔ ok", detail]).add_row(["▲ warn", "short"]);
        format!("before\n{t}\nafter\n")
    };
    let long = render("valid (/tmp/.tmpAbCdEf/a/much/longer/path/etc/hal0.toml)");
    let got = retable(&long, |c| c.replace("/tmp/.tmpAbCdEf/a/much/longer/path", "[tmp]"));
    assert_eq!(got, render("valid ([tmp]/etc/hal0.toml)"));
    assert_ne!(got, long);
}

#[test]
fn help_pages() {
    let env = Env::new();
    let s = Scrub::new(&env);
    // The top page groups the commands and says the inherited options once; a command's
    // page points to them.
    insta::assert_snapshot!("help_top", s.out(&grid(&env, &["--help"])));
    insta::assert_snapshot!("help_bridge_add", s.out(&grid(&env, &["bridge", "add", "--help"])));
}
