//! The one rule for records that run a program on this box (a stdio server with a
//! `command`): who may create one, or change the environment it starts with.
//!
//! The shell (an operator logged in on the box) always may. Over REST or MCP (including an
//! `hal0-admin` tool call) only while auth is armed, so on a default install, where the API
//! answers anyone who can reach it, no request can make hal0 start a program of the
//! requester's choosing. `hal0 auth rotate admin` arms auth.

use super::record::{Record, Transport};
use crate::base::error::{Error, Result};

/// Where a registry change comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// `hal0 mcp …` at the box's shell.
    Shell,
    /// A REST request or an MCP tool call to the daemon; `auth_armed` as the daemon sees it.
    Api { auth_armed: bool },
}

/// Whether starting this record means running a program on the box.
pub fn runs_program(r: &Record) -> bool {
    r.transport == Transport::Stdio && r.command.as_deref().is_some_and(|c| !c.trim().is_empty())
}

fn allowed(via: Via) -> bool {
    matches!(via, Via::Shell | Via::Api { auth_armed: true })
}

fn refused(what: String) -> Error {
    Error::new(
        "mcp.program_needs_auth",
        crate::base::error::Kind::Forbidden,
        format!(
            "{what}; over the API that needs auth armed (hal0 auth rotate admin), or run the command on the box: \
             hal0 mcp …"
        ),
    )
}

/// May `via` install `r`?
pub fn check_install(via: Via, r: &Record) -> Result<()> {
    if runs_program(r) && !allowed(via) {
        let cmd = r.command.as_deref().unwrap_or("");
        return Err(refused(format!("installing `{}` would let hal0 run `{cmd}` on this box", r.id)));
    }
    Ok(())
}

/// May `via` change the environment `r` starts with (`[env]` reaches the program: a
/// `NODE_OPTIONS` or `LD_PRELOAD` there is code)?
pub fn check_env_edit(via: Via, r: &Record) -> Result<()> {
    if runs_program(r) && !allowed(via) {
        return Err(refused(format!("`{}` runs a program, and its environment decides what that program runs", r.id)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(transport: Transport, command: Option<&str>) -> Record {
        let mut r = Record::new("x", "x", "spec", transport);
        r.command = command.map(str::to_string);
        r
    }

    #[test]
    fn only_the_shell_or_an_armed_api_may_make_a_program_record() {
        let prog = rec(Transport::Stdio, Some("/bin/sh"));
        assert!(check_install(Via::Shell, &prog).is_ok());
        assert!(check_install(Via::Api { auth_armed: true }, &prog).is_ok());
        let e = check_install(Via::Api { auth_armed: false }, &prog).unwrap_err();
        assert_eq!((e.code, e.status()), ("mcp.program_needs_auth", 403));
        assert!(e.message.contains("/bin/sh") && e.message.contains("hal0 auth rotate admin"), "{}", e.message);
        assert!(check_env_edit(Via::Api { auth_armed: false }, &prog).is_err());
        assert!(check_env_edit(Via::Shell, &prog).is_ok());
        // Records that run nothing here are anyone's to install.
        for r in [rec(Transport::Stdio, None), rec(Transport::Stdio, Some("  ")), rec(Transport::StreamableHttp, None)]
        {
            assert!(check_install(Via::Api { auth_armed: false }, &r).is_ok());
            assert!(check_env_edit(Via::Api { auth_armed: false }, &r).is_ok());
        }
    }
}
