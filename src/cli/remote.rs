//! `hal0 remote add|list|remove|default`: the boxes this workstation or CI job talks to
//! (`hal0 run`). The rules live in `crate::remote`.

use super::{confirm, print_json, runtime, table};
use crate::base::error::{Error, Result};
use crate::remote::{self, KeyIn, Target};
use serde_json::json;
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(Debug, clap::Subcommand)]
pub enum RemoteCmd {
    /// Add (or replace) remote NAME at URL with its bridge key, kept in the OS keyring (or a
    /// 0600 credentials file where no keyring service runs). The first remote is the default.
    Add {
        name: String,
        /// The box's base URL, e.g. https://box.lan:8080.
        url: String,
        /// Read the key from stdin (one line) instead of asking for it.
        #[arg(long)]
        key_stdin: bool,
        /// A PEM file of the CA that signed the box's certificate.
        #[arg(long, value_name = "PEM")]
        ca_file: Option<PathBuf>,
        /// Store the key without asking the box whether it takes it.
        #[arg(long)]
        no_check: bool,
    },
    /// The remotes, their URLs and where each key is kept (never the key).
    List {
        #[command(flatten)]
        out: crate::cli::ListOut,
    },
    /// Remove remote NAME and its key.
    Remove {
        name: String,
        /// Do not ask for confirmation.
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Use remote NAME when --remote is not given.
    Default { name: String },
}

/// The key: one line from stdin with `--key-stdin`, else asked for on a terminal.
fn read_key(from_stdin: bool) -> Result<String> {
    let key = if from_stdin {
        let mut line = String::new();
        std::io::stdin()
            .read_line(&mut line)
            .map_err(|e| Error::invalid("remote.no_key", format!("cannot read the key from stdin: {e}")))?;
        line
    } else if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        dialoguer::Password::new()
            .with_prompt("Bridge key (from `hal0 bridge add NAME` on the box)")
            .interact()
            .map_err(|e| Error::invalid("remote.no_key", format!("no key was given: {e}")))?
    } else {
        return Err(Error::invalid("remote.no_key", "no terminal to ask for the key on: pipe it in with --key-stdin"));
    };
    Ok(key.trim().to_string())
}

pub fn run(cmd: RemoteCmd, json: bool) -> Result<()> {
    match cmd {
        RemoteCmd::Add { name, url, key_stdin, ca_file, no_check } => {
            remote::check_name(&name)?;
            let url = remote::check_url(&url)?;
            let key = read_key(key_stdin)?;
            crate::remote::keys::check_key(&key)?;
            let cleartext = remote::cleartext_warning(&url);
            if let Some(w) = &cleartext {
                eprintln!("warning: {w}");
            }
            // Ask the box first: a key it refuses is not stored.
            let me = if no_check {
                None
            } else {
                let t =
                    Target { name: Some(name.clone()), url: url.clone(), key: key.clone(), ca_file: ca_file.clone() };
                Some(runtime()?.block_on(crate::remote::client::whoami(&t))?)
            };
            let (r, note) = remote::add(&name, &url, &key, ca_file)?;
            if json {
                print_json(&json!({"name": name, "remote": r, "client": me, "note": note, "warning": cleartext}));
                return Ok(());
            }
            match &me {
                Some(me) => println!(
                    "Added remote `{name}` ({url}): bridge client `{}` with {}.",
                    crate::base::term::safe_line(me["client"].as_str().unwrap_or("?")),
                    me["scopes"]
                        .as_array()
                        .map(|s| s.iter().filter_map(|x| x.as_str()).collect::<Vec<_>>().join(", "))
                        .unwrap_or_default()
                ),
                None => println!("Added remote `{name}` ({url}), unchecked."),
            }
            match (r.key_in, note) {
                (KeyIn::Keyring, _) => println!("The key is in the OS keyring."),
                (KeyIn::File, Some(n)) => eprintln!("note: {n}"),
                (KeyIn::File, None) => {}
            }
            Ok(())
        }
        RemoteCmd::List { out } => {
            let all = remote::load()?;
            let items: Vec<serde_json::Value> = all
                .remote
                .iter()
                .map(|(n, r)| {
                    let default = all.default.as_deref() == Some(n);
                    json!({"name": n, "url": r.url, "key_in": r.key_in, "ca_file": r.ca_file, "default": default})
                })
                .collect();
            if out.done(json, &items, "name") {
                return Ok(());
            }
            if all.remote.is_empty() {
                println!("No remotes. Add one with `hal0 remote add NAME URL`.");
                return Ok(());
            }
            let rows = all
                .remote
                .iter()
                .map(|(n, r)| {
                    vec![
                        n.clone(),
                        r.url.clone(),
                        match r.key_in {
                            KeyIn::Keyring => "keyring".into(),
                            KeyIn::File => "file".into(),
                        },
                        if all.default.as_deref() == Some(n) { "yes".into() } else { String::new() },
                    ]
                })
                .collect();
            println!("{}", table(&["NAME", "URL", "KEY", "DEFAULT"], rows));
            Ok(())
        }
        RemoteCmd::Remove { name, yes } => {
            if !remote::load()?.remote.contains_key(&name) {
                return remote::remove(&name);
            }
            confirm(yes, &format!("Remove remote `{name}` and its key?"))?;
            remote::remove(&name)?;
            println!("Removed remote `{name}`.");
            Ok(())
        }
        RemoteCmd::Default { name } => {
            remote::set_default(&name)?;
            println!("`{name}` is the default remote.");
            Ok(())
        }
    }
}
