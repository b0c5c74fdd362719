# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_hal0_global_optspecs
    string join \n config-dir= state-dir= h/help V/version
end

function __fish_hal0_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_hal0_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_hal0_using_subcommand
    set -l cmd (__fish_hal0_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c hal0 -n "__fish_hal0_needs_command" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_needs_command" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c hal0 -n "__fish_hal0_needs_command" -s V -l version -d 'Print version'
complete -c hal0 -n "__fish_hal0_needs_command" -f -a "serve" -d 'Run the REST + MCP daemon'
complete -c hal0 -n "__fish_hal0_needs_command" -f -a "bridge" -d 'Admit remote coding agents with per-client bridge keys'
complete -c hal0 -n "__fish_hal0_needs_command" -f -a "auth" -d 'The box keys (admin and client): status and rotation'
complete -c hal0 -n "__fish_hal0_needs_command" -f -a "runs" -d 'The bridge\'s run ledger: list, show, events, stop'
complete -c hal0 -n "__fish_hal0_needs_command" -f -a "agent" -d 'Agents on this box: the approvals inbox'
complete -c hal0 -n "__fish_hal0_needs_command" -f -a "activity" -d 'The audit log of MCP tool calls and decisions: list and export'
complete -c hal0 -n "__fish_hal0_needs_command" -f -a "store" -d 'The store: its size, retention windows and free disk; prune now'
complete -c hal0 -n "__fish_hal0_needs_command" -f -a "mcp" -d 'Install third-party MCP servers and set their tool policy'
complete -c hal0 -n "__fish_hal0_needs_command" -f -a "relay" -d 'The agent relay: its bots and the history of their exchanges'
complete -c hal0 -n "__fish_hal0_needs_command" -f -a "doctor" -d 'Check the installation: config, modes, store, auth, Hermes wiring, registry, listener'
complete -c hal0 -n "__fish_hal0_needs_command" -f -a "status" -d 'The box on one screen: daemon, URL, auth, TLS, what waits, servers, newest errors'
complete -c hal0 -n "__fish_hal0_needs_command" -f -a "oauth" -d 'OAuth 2.1 for clients that speak only OAuth (claude.ai, ChatGPT): URLs, clients, grants'
complete -c hal0 -n "__fish_hal0_needs_command" -f -a "approvals" -d 'The approvals inbox (same as `hal0 agent approvals`; no subcommand: what waits)'
complete -c hal0 -n "__fish_hal0_needs_command" -f -a "notify" -d 'Where a person hears that an approval waits: webhooks, ntfy push, e-mail'
complete -c hal0 -n "__fish_hal0_needs_command" -f -a "ui" -d 'The dashboard (/ui): one-time login links, sessions, logout'
complete -c hal0 -n "__fish_hal0_needs_command" -f -a "backup" -d 'Write one archive of the config dir and a consistent copy of hal0.db (the daemon may run)'
complete -c hal0 -n "__fish_hal0_needs_command" -f -a "restore" -d 'Put back what `hal0 backup` wrote (the daemon must be stopped; asks first)'
complete -c hal0 -n "__fish_hal0_needs_command" -f -a "op" -d 'Run any operation of the REST route table by its tool name, with JSON in and out'
complete -c hal0 -n "__fish_hal0_needs_command" -f -a "run" -d 'Delegate a run to a remote box\'s Hermes and follow it (see `hal0 remote`)'
complete -c hal0 -n "__fish_hal0_needs_command" -f -a "remote" -d 'The remote boxes `hal0 run` talks to; keys in the OS keyring'
complete -c hal0 -n "__fish_hal0_needs_command" -f -a "memory" -d 'Hermes memory: add and search notes on a remote box (see `hal0 remote`), or this box\'s'
complete -c hal0 -n "__fish_hal0_needs_command" -f -a "skills" -d 'A remote box\'s drop-in skills: list, and push one for a person to approve'
complete -c hal0 -n "__fish_hal0_needs_command" -f -a "completions" -d 'Print a shell completion script'
complete -c hal0 -n "__fish_hal0_needs_command" -f -a "config" -d 'Read and edit hal0.toml (comments and ordering are kept)'
complete -c hal0 -n "__fish_hal0_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand serve" -l bind -d 'Listen here instead of [network].bind (e.g. 127.0.0.1:0 for a free port)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand serve" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand serve" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand serve" -l allow-unauthenticated -d 'Listen on a non-loopback address even while auth is off (no box key): anyone on the network then reads memory, settings and the audit log; changes are still taken from this box only. Without it, such a bind is refused until `hal0 auth rotate admin`'
complete -c hal0 -n "__fish_hal0_using_subcommand serve" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and not __fish_seen_subcommand_from add list scopes rotate purge revoke help" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and not __fish_seen_subcommand_from add list scopes rotate purge revoke help" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and not __fish_seen_subcommand_from add list scopes rotate purge revoke help" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and not __fish_seen_subcommand_from add list scopes rotate purge revoke help" -f -a "add" -d 'Add a client and print its key once, with the `claude mcp add` lines to paste'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and not __fish_seen_subcommand_from add list scopes rotate purge revoke help" -f -a "list" -d 'List clients: name, scopes, note, created, last seen, revoked, origin (a key, or the OAuth client a person approved)'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and not __fish_seen_subcommand_from add list scopes rotate purge revoke help" -f -a "scopes" -d 'Replace a client\'s scope set (agents is always held, except by a relay-only bot)'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and not __fish_seen_subcommand_from add list scopes rotate purge revoke help" -f -a "rotate" -d 'Mint a new key for a client; the old one stops at once'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and not __fish_seen_subcommand_from add list scopes rotate purge revoke help" -f -a "purge" -d 'Free a revoked client\'s name for reuse: deletes its runs (and their output), approvals, standing rules, memory operations and OAuth grants; the audit log keeps its history'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and not __fish_seen_subcommand_from add list scopes rotate purge revoke help" -f -a "revoke" -d 'End a client\'s key; its name stays reserved (`hal0 bridge purge` frees it)'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and not __fish_seen_subcommand_from add list scopes rotate purge revoke help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from add" -l note -d 'A note for people (what and where this client is)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from add" -l scope -d 'A scope to grant (repeatable): agents, memory, admin, relay. Default: agents memory' -r
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from add" -l client -d 'Print this MCP client\'s config instead of the `claude mcp add` lines (the key is read from $HAL0_BRIDGE_KEY or the client\'s prompt, never written in it)' -r -f -a "claude-code\t''
hermes\t''
cursor\t''
vscode\t''
codex\t''
claude-desktop\t''"
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from add" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from add" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from add" -l json -d 'Print the key and everything to paste as JSON'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from list" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from list" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from list" -l json -d 'Print the list as a JSON array of items (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only the ids, one per line (for scripts: `-q | xargs …`)'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from scopes" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from scopes" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from scopes" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from scopes" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from rotate" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from rotate" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from rotate" -s y -l yes -d 'Do not ask for confirmation'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from rotate" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from rotate" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from purge" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from purge" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from purge" -s y -l yes -d 'Do not ask for confirmation'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from purge" -l json -d 'Print what was removed as JSON'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from purge" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from revoke" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from revoke" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from revoke" -s y -l yes -d 'Do not ask for confirmation'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from revoke" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from revoke" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from help" -f -a "add" -d 'Add a client and print its key once, with the `claude mcp add` lines to paste'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from help" -f -a "list" -d 'List clients: name, scopes, note, created, last seen, revoked, origin (a key, or the OAuth client a person approved)'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from help" -f -a "scopes" -d 'Replace a client\'s scope set (agents is always held, except by a relay-only bot)'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from help" -f -a "rotate" -d 'Mint a new key for a client; the old one stops at once'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from help" -f -a "purge" -d 'Free a revoked client\'s name for reuse: deletes its runs (and their output), approvals, standing rules, memory operations and OAuth grants; the audit log keeps its history'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from help" -f -a "revoke" -d 'End a client\'s key; its name stays reserved (`hal0 bridge purge` frees it)'
complete -c hal0 -n "__fish_hal0_using_subcommand bridge; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand auth; and not __fish_seen_subcommand_from status rotate help" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand auth; and not __fish_seen_subcommand_from status rotate help" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand auth; and not __fish_seen_subcommand_from status rotate help" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand auth; and not __fish_seen_subcommand_from status rotate help" -f -a "status" -d 'Whether auth is armed, and each box key as configured or not with a fingerprint'
complete -c hal0 -n "__fish_hal0_using_subcommand auth; and not __fish_seen_subcommand_from status rotate help" -f -a "rotate" -d 'Mint a new admin or client key and print it once; the old one stops at once'
complete -c hal0 -n "__fish_hal0_using_subcommand auth; and not __fish_seen_subcommand_from status rotate help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand auth; and __fish_seen_subcommand_from status" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand auth; and __fish_seen_subcommand_from status" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand auth; and __fish_seen_subcommand_from status" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand auth; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand auth; and __fish_seen_subcommand_from rotate" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand auth; and __fish_seen_subcommand_from rotate" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand auth; and __fish_seen_subcommand_from rotate" -s y -l yes -d 'Do not ask for confirmation'
complete -c hal0 -n "__fish_hal0_using_subcommand auth; and __fish_seen_subcommand_from rotate" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand auth; and __fish_seen_subcommand_from rotate" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand auth; and __fish_seen_subcommand_from help" -f -a "status" -d 'Whether auth is armed, and each box key as configured or not with a fingerprint'
complete -c hal0 -n "__fish_hal0_using_subcommand auth; and __fish_seen_subcommand_from help" -f -a "rotate" -d 'Mint a new admin or client key and print it once; the old one stops at once'
complete -c hal0 -n "__fish_hal0_using_subcommand auth; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and not __fish_seen_subcommand_from list show events stop help" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and not __fish_seen_subcommand_from list show events stop help" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and not __fish_seen_subcommand_from list show events stop help" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and not __fish_seen_subcommand_from list show events stop help" -f -a "list" -d 'Runs, newest first'
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and not __fish_seen_subcommand_from list show events stop help" -f -a "show" -d 'One run with its whole output (redacted unless --raw)'
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and not __fish_seen_subcommand_from list show events stop help" -f -a "events" -d 'A run\'s stored events, oldest first'
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and not __fish_seen_subcommand_from list show events stop help" -f -a "stop" -d 'Ask Hermes to stop a run'
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and not __fish_seen_subcommand_from list show events stop help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from list" -l client -d 'Only this client\'s runs (`@admin` for runs started with the admin key)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from list" -l status -d 'Only runs with this status' -r
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from list" -l limit -d 'At most this many (default 50, at most 1000)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from list" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from list" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from list" -l json -d 'Print the list as a JSON array of items (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only the ids, one per line (for scripts: `-q | xargs …`)'
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from show" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from show" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from show" -l raw -d 'Print stored text as it is, without the redactor'
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from show" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from events" -l since -d 'Events with seq above this' -r
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from events" -l limit -d 'At most this many (at most 500)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from events" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from events" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from events" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from events" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from stop" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from stop" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from stop" -s y -l yes -d 'Do not ask for confirmation'
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from stop" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from help" -f -a "list" -d 'Runs, newest first'
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from help" -f -a "show" -d 'One run with its whole output (redacted unless --raw)'
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from help" -f -a "events" -d 'A run\'s stored events, oldest first'
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from help" -f -a "stop" -d 'Ask Hermes to stop a run'
complete -c hal0 -n "__fish_hal0_using_subcommand runs; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand agent; and not __fish_seen_subcommand_from approvals reprovision help" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand agent; and not __fish_seen_subcommand_from approvals reprovision help" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand agent; and not __fish_seen_subcommand_from approvals reprovision help" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand agent; and not __fish_seen_subcommand_from approvals reprovision help" -f -a "approvals" -d 'The approvals inbox'
complete -c hal0 -n "__fish_hal0_using_subcommand agent; and not __fish_seen_subcommand_from approvals reprovision help" -f -a "reprovision" -d 'Wire Hermes profiles to hal0-admin and hal0-memory (config.yaml and .env)'
complete -c hal0 -n "__fish_hal0_using_subcommand agent; and not __fish_seen_subcommand_from approvals reprovision help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand agent; and __fish_seen_subcommand_from approvals" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand agent; and __fish_seen_subcommand_from approvals" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand agent; and __fish_seen_subcommand_from approvals" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand agent; and __fish_seen_subcommand_from approvals" -f -a "list" -d 'The cards waiting for a person, newest first (`--all`: every status)'
complete -c hal0 -n "__fish_hal0_using_subcommand agent; and __fish_seen_subcommand_from approvals" -f -a "show" -d 'One row: the whole card'
complete -c hal0 -n "__fish_hal0_using_subcommand agent; and __fish_seen_subcommand_from approvals" -f -a "approve" -d 'Approve a pending row (pick one on a terminal when ID is left out)'
complete -c hal0 -n "__fish_hal0_using_subcommand agent; and __fish_seen_subcommand_from approvals" -f -a "rules" -d 'The standing rules people chose while approving proxied calls: list, remove'
complete -c hal0 -n "__fish_hal0_using_subcommand agent; and __fish_seen_subcommand_from approvals" -f -a "deny" -d 'Deny a pending row'
complete -c hal0 -n "__fish_hal0_using_subcommand agent; and __fish_seen_subcommand_from approvals" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand agent; and __fish_seen_subcommand_from reprovision" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand agent; and __fish_seen_subcommand_from reprovision" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand agent; and __fish_seen_subcommand_from reprovision" -l repair -d 'Re-mint each profile\'s hal0 key even when it still works'
complete -c hal0 -n "__fish_hal0_using_subcommand agent; and __fish_seen_subcommand_from reprovision" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand agent; and __fish_seen_subcommand_from reprovision" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand agent; and __fish_seen_subcommand_from help" -f -a "approvals" -d 'The approvals inbox'
complete -c hal0 -n "__fish_hal0_using_subcommand agent; and __fish_seen_subcommand_from help" -f -a "reprovision" -d 'Wire Hermes profiles to hal0-admin and hal0-memory (config.yaml and .env)'
complete -c hal0 -n "__fish_hal0_using_subcommand agent; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and not __fish_seen_subcommand_from list export help" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and not __fish_seen_subcommand_from list export help" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and not __fish_seen_subcommand_from list export help" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and not __fish_seen_subcommand_from list export help" -f -a "list" -d 'Audit rows, newest first'
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and not __fish_seen_subcommand_from list export help" -f -a "export" -d 'Every matching row as JSON lines to stdout, oldest first (to ship the log elsewhere before retention prunes it)'
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and not __fish_seen_subcommand_from list export help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and __fish_seen_subcommand_from list" -l since -d 'Only rows at or after this: RFC 3339 (2025-01-31T09:00:00Z) or a duration back from now (30m, 1h, 7d)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and __fish_seen_subcommand_from list" -l client -d 'Only this caller: an identity (bridge:ci, admin, cli:alice) or a bridge client\'s name (ci)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and __fish_seen_subcommand_from list" -l tool -d 'Only this tool' -r
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and __fish_seen_subcommand_from list" -l until -d 'Only rows before this: RFC 3339 or a duration back from now' -r
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and __fish_seen_subcommand_from list" -l limit -d 'At most this many (default 100, at most 10000)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and __fish_seen_subcommand_from list" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and __fish_seen_subcommand_from list" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and __fish_seen_subcommand_from list" -l json -d 'Print the list as a JSON array of items (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only the ids, one per line (for scripts: `-q | xargs …`)'
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and __fish_seen_subcommand_from export" -l since -d 'Only rows at or after this: RFC 3339 or a duration back from now (30m, 1h, 7d)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and __fish_seen_subcommand_from export" -l until -d 'Only rows before this: RFC 3339 or a duration back from now' -r
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and __fish_seen_subcommand_from export" -l client -d 'Only this caller: an identity or a bridge client\'s name' -r
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and __fish_seen_subcommand_from export" -l tool -d 'Only this tool' -r
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and __fish_seen_subcommand_from export" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and __fish_seen_subcommand_from export" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and __fish_seen_subcommand_from export" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and __fish_seen_subcommand_from help" -f -a "list" -d 'Audit rows, newest first'
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and __fish_seen_subcommand_from help" -f -a "export" -d 'Every matching row as JSON lines to stdout, oldest first (to ship the log elsewhere before retention prunes it)'
complete -c hal0 -n "__fish_hal0_using_subcommand activity; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand store; and not __fish_seen_subcommand_from status prune help" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand store; and not __fish_seen_subcommand_from status prune help" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand store; and not __fish_seen_subcommand_from status prune help" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand store; and not __fish_seen_subcommand_from status prune help" -f -a "status" -d 'Size of hal0.db, rows of each log with a retention window, the windows, free disk'
complete -c hal0 -n "__fish_hal0_using_subcommand store; and not __fish_seen_subcommand_from status prune help" -f -a "prune" -d 'Prune every log by its retention window now and give the space back to the disk'
complete -c hal0 -n "__fish_hal0_using_subcommand store; and not __fish_seen_subcommand_from status prune help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand store; and __fish_seen_subcommand_from status" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand store; and __fish_seen_subcommand_from status" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand store; and __fish_seen_subcommand_from status" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand store; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand store; and __fish_seen_subcommand_from prune" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand store; and __fish_seen_subcommand_from prune" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand store; and __fish_seen_subcommand_from prune" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand store; and __fish_seen_subcommand_from prune" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand store; and __fish_seen_subcommand_from help" -f -a "status" -d 'Size of hal0.db, rows of each log with a retention window, the windows, free disk'
complete -c hal0 -n "__fish_hal0_using_subcommand store; and __fish_seen_subcommand_from help" -f -a "prune" -d 'Prune every log by its retention window now and give the space back to the disk'
complete -c hal0 -n "__fish_hal0_using_subcommand store; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -f -a "install" -d 'Install a server from a spec: oci://IMAGE, npm:PKG, uvx:PKG, git+https://…, an http manifest URL, or an endpoint URL'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -f -a "add" -d 'Install a server from a spec: oci://IMAGE, npm:PKG, uvx:PKG, git+https://…, an http manifest URL, or an endpoint URL'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -f -a "list" -d 'List bundled and installed servers with their state; broken record files are shown too'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -f -a "status" -d 'Show one server: transport, tool policy, env names (secret values are never shown), exposure'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -f -a "uninstall" -d 'Remove an installed server\'s record (bundled servers cannot be removed)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -f -a "remove" -d 'Remove an installed server\'s record (bundled servers cannot be removed)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -f -a "allow" -d 'Let agents call TOOL autonomously (moves it off gated/blocked); with --resource or --prompt, offer a resource URI (a trailing `*` matches a prefix) or a prompt instead'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -f -a "gate" -d 'Queue each call of TOOL for approval (moves it off allow/blocked)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -f -a "block" -d 'Hard-reject calls of TOOL (moves it off allow/gated); with --resource or --prompt, refuse that resource URI (pattern) or prompt'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -f -a "test" -d 'Connect to the server with its own headers, list its tools and show each tool\'s verdict'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -f -a "expose" -d 'Expose a server to Hermes profiles through hal0\'s proxy (--hermes, --brain) or withdraw it (--no-hermes, --no-brain)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -f -a "enable" -d 'Serve an installed server through the proxy again (and re-join its exposure)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -f -a "disable" -d 'Stop serving a server through the proxy and withdraw its exposure (its record stays)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -f -a "catalog" -d 'The curated catalogue of installable servers: list, refresh'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -f -a "keys" -d 'Keys consumers present to hal0\'s proxy at /mcp/proxy/ID/mcp'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -f -a "start" -d 'Start a stdio server\'s child in the running daemon (it also starts on the first call)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -f -a "stop" -d 'Stop a stdio server\'s child in the running daemon'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -f -a "restart" -d 'Restart a stdio server\'s child in the running daemon'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -f -a "secret" -d 'Secrets an installed server sends as headers (values in api.env, read from stdin or a prompt)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -f -a "connect" -d 'Connect an OAuth account at a server that wants one: prints the URL to open, waits for the callback'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -f -a "accounts" -d 'A server\'s OAuth accounts (box-wide or one per consumer), or choose which with --mode'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -f -a "refresh" -d 'Refresh a server\'s OAuth account now (hal0 serve does before its token expires)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -f -a "disconnect" -d 'Disconnect a server\'s OAuth account: its tokens are revoked upstream and forgotten'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and not __fish_seen_subcommand_from install add list status uninstall remove allow gate block test expose enable disable catalog keys start stop restart secret connect accounts refresh disconnect help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from install" -l id -d 'The server id (default: derived from the spec): lower-case letters, digits, `-`, `_`, at most 64' -r
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from install" -l name -d 'A display name (default: derived from the spec)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from install" -l ca-file -d 'A PEM file of CA certificates to trust for this server\'s https URL (a private CA), besides the system store and the webpki roots' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from install" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from install" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from install" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from install" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from add" -l id -d 'The server id (default: derived from the spec): lower-case letters, digits, `-`, `_`, at most 64' -r
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from add" -l name -d 'A display name (default: derived from the spec)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from add" -l ca-file -d 'A PEM file of CA certificates to trust for this server\'s https URL (a private CA), besides the system store and the webpki roots' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from add" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from add" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from add" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from list" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from list" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from list" -l json -d 'Print the list as a JSON array of items (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only the ids, one per line (for scripts: `-q | xargs …`)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from status" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from status" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from status" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from uninstall" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from uninstall" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from uninstall" -s f -l force -d 'Remove the record file even if it does not load'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from uninstall" -s y -l yes -d 'Do not ask for confirmation'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from uninstall" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from remove" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from remove" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from remove" -s f -l force -d 'Remove the record file even if it does not load'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from remove" -s y -l yes -d 'Do not ask for confirmation'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from allow" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from allow" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from allow" -l resource -d 'The name is a resource URI, or a URI prefix ending in `*` ([resource_access])'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from allow" -l prompt -d 'The name is a prompt ([prompt_access])'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from allow" -l strict -d 'Refuse (exit 2, nothing written) when the server does not offer the tool or cannot be asked; without it, that is a warning'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from allow" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from gate" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from gate" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from gate" -l resource -d 'The name is a resource URI, or a URI prefix ending in `*` ([resource_access])'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from gate" -l prompt -d 'The name is a prompt ([prompt_access])'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from gate" -l strict -d 'Refuse (exit 2, nothing written) when the server does not offer the tool or cannot be asked; without it, that is a warning'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from gate" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from block" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from block" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from block" -l resource -d 'The name is a resource URI, or a URI prefix ending in `*` ([resource_access])'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from block" -l prompt -d 'The name is a prompt ([prompt_access])'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from block" -l strict -d 'Refuse (exit 2, nothing written) when the server does not offer the tool or cannot be asked; without it, that is a warning'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from block" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from test" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from test" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from test" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from test" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from expose" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from expose" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from expose" -l hermes -d 'Join it into every Hermes profile but hal0-brain'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from expose" -l no-hermes -d 'Withdraw it from those profiles'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from expose" -l brain -d 'Join it into the hal0-brain profile'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from expose" -l no-brain -d 'Withdraw it from hal0-brain'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from expose" -l openwebui -d 'Reserved by the spec: answers 501 mcp.exposure_unsupported (hidden from the help: hal0 cannot expose to Open WebUI)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from expose" -l opencode -d 'Reserved by the spec: answers 501 mcp.exposure_unsupported (hidden, as above)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from expose" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from expose" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from enable" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from enable" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from enable" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from disable" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from disable" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from disable" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from catalog" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from catalog" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from catalog" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from catalog" -f -a "list" -d 'List the curated, known-good servers you can install (`hal0 mcp install SPEC --id ID`)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from catalog" -f -a "refresh" -d 'Replace the catalogue with one read from a file or an http URL (default: mcp.catalog_url)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from catalog" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from keys" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from keys" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from keys" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from keys" -f -a "list" -d 'List consumers and their keys\' state (never the keys)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from keys" -f -a "add" -d 'Mint a key for consumer NAME on server ID (replaces NAME\'s old key); printed once'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from keys" -f -a "revoke" -d 'Revoke consumer NAME\'s key on server ID; it stops working at once'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from keys" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from start" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from start" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from start" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from start" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from stop" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from stop" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from stop" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from stop" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from restart" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from restart" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from restart" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from restart" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from secret" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from secret" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from secret" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from secret" -f -a "set" -d 'Store the secret server ID sends as request header HEADER (value from stdin or a prompt)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from secret" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from connect" -l client-id -d 'A client id registered for hal0 at the server\'s authorization server (when it takes neither hal0\'s metadata document nor dynamic registration)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from connect" -l client-secret-key -d 'The api.env key holding that client\'s secret (put it there first)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from connect" -l scope -d 'The scopes to ask for, space-separated (default: what the server names)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from connect" -l for -d 'The consumer whose own account this connects (servers with delegated accounts)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from connect" -l timeout -d 'How long to wait for the person, in seconds' -r
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from connect" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from connect" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from connect" -l no-wait -d 'Print the URL and return; `hal0 mcp status ID` shows the account once connected'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from connect" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from connect" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from accounts" -l mode -d '`box`: one account serves every consumer; `delegated`: each consumer connects its own' -r -f -a "box\t''
delegated\t''"
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from accounts" -l gate-first-call -d '`on`: the first call made with an account waits for a person\'s approval (after one approved call, its calls run as the policy says); `off`: never' -r -f -a "on\t''
off\t''"
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from accounts" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from accounts" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from accounts" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from accounts" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from refresh" -l for -d 'The consumer whose own account it is (servers with delegated accounts)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from refresh" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from refresh" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from refresh" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from refresh" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from disconnect" -l for -d 'The consumer whose own account it is (servers with delegated accounts)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from disconnect" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from disconnect" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from disconnect" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from disconnect" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "install" -d 'Install a server from a spec: oci://IMAGE, npm:PKG, uvx:PKG, git+https://…, an http manifest URL, or an endpoint URL'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "list" -d 'List bundled and installed servers with their state; broken record files are shown too'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "status" -d 'Show one server: transport, tool policy, env names (secret values are never shown), exposure'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "uninstall" -d 'Remove an installed server\'s record (bundled servers cannot be removed)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "allow" -d 'Let agents call TOOL autonomously (moves it off gated/blocked); with --resource or --prompt, offer a resource URI (a trailing `*` matches a prefix) or a prompt instead'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "gate" -d 'Queue each call of TOOL for approval (moves it off allow/blocked)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "block" -d 'Hard-reject calls of TOOL (moves it off allow/gated); with --resource or --prompt, refuse that resource URI (pattern) or prompt'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "test" -d 'Connect to the server with its own headers, list its tools and show each tool\'s verdict'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "expose" -d 'Expose a server to Hermes profiles through hal0\'s proxy (--hermes, --brain) or withdraw it (--no-hermes, --no-brain)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "enable" -d 'Serve an installed server through the proxy again (and re-join its exposure)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "disable" -d 'Stop serving a server through the proxy and withdraw its exposure (its record stays)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "catalog" -d 'The curated catalogue of installable servers: list, refresh'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "keys" -d 'Keys consumers present to hal0\'s proxy at /mcp/proxy/ID/mcp'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "start" -d 'Start a stdio server\'s child in the running daemon (it also starts on the first call)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "stop" -d 'Stop a stdio server\'s child in the running daemon'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "restart" -d 'Restart a stdio server\'s child in the running daemon'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "secret" -d 'Secrets an installed server sends as headers (values in api.env, read from stdin or a prompt)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "connect" -d 'Connect an OAuth account at a server that wants one: prints the URL to open, waits for the callback'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "accounts" -d 'A server\'s OAuth accounts (box-wide or one per consumer), or choose which with --mode'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "refresh" -d 'Refresh a server\'s OAuth account now (hal0 serve does before its token expires)'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "disconnect" -d 'Disconnect a server\'s OAuth account: its tokens are revoked upstream and forgotten'
complete -c hal0 -n "__fish_hal0_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand relay; and not __fish_seen_subcommand_from agents exchanges help" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand relay; and not __fish_seen_subcommand_from agents exchanges help" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand relay; and not __fish_seen_subcommand_from agents exchanges help" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand relay; and not __fish_seen_subcommand_from agents exchanges help" -f -a "agents" -d 'The bots (bridge clients holding the relay scope) and whether each is connected'
complete -c hal0 -n "__fish_hal0_using_subcommand relay; and not __fish_seen_subcommand_from agents exchanges help" -f -a "exchanges" -d 'Exchanges between bots, newest first: who asked whom, the answer or the failure'
complete -c hal0 -n "__fish_hal0_using_subcommand relay; and not __fish_seen_subcommand_from agents exchanges help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand relay; and __fish_seen_subcommand_from agents" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand relay; and __fish_seen_subcommand_from agents" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand relay; and __fish_seen_subcommand_from agents" -l json -d 'Print the list as a JSON array of items (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand relay; and __fish_seen_subcommand_from agents" -s q -l quiet -d 'Print only the ids, one per line (for scripts: `-q | xargs …`)'
complete -c hal0 -n "__fish_hal0_using_subcommand relay; and __fish_seen_subcommand_from agents" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand relay; and __fish_seen_subcommand_from exchanges" -l agent -d 'Only exchanges this bot asked or was asked' -r
complete -c hal0 -n "__fish_hal0_using_subcommand relay; and __fish_seen_subcommand_from exchanges" -l since -d 'Only exchanges started at or after this: RFC 3339 or a duration back from now (30m, 1h, 7d)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand relay; and __fish_seen_subcommand_from exchanges" -l limit -d 'At most this many (default 100, at most 10000)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand relay; and __fish_seen_subcommand_from exchanges" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand relay; and __fish_seen_subcommand_from exchanges" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand relay; and __fish_seen_subcommand_from exchanges" -l json -d 'Print the list as a JSON array of items (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand relay; and __fish_seen_subcommand_from exchanges" -s q -l quiet -d 'Print only the ids, one per line (for scripts: `-q | xargs …`)'
complete -c hal0 -n "__fish_hal0_using_subcommand relay; and __fish_seen_subcommand_from exchanges" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand relay; and __fish_seen_subcommand_from help" -f -a "agents" -d 'The bots (bridge clients holding the relay scope) and whether each is connected'
complete -c hal0 -n "__fish_hal0_using_subcommand relay; and __fish_seen_subcommand_from help" -f -a "exchanges" -d 'Exchanges between bots, newest first: who asked whom, the answer or the failure'
complete -c hal0 -n "__fish_hal0_using_subcommand relay; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand doctor" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand doctor" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand doctor" -l json -d 'Print `{"rows":[{"name","status","detail"}]}`'
complete -c hal0 -n "__fish_hal0_using_subcommand doctor" -l strict -d 'Exit 1 on warnings too (for scripts that want a spotless box)'
complete -c hal0 -n "__fish_hal0_using_subcommand doctor" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand status" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand status" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand status" -l json -d 'Print it as JSON'
complete -c hal0 -n "__fish_hal0_using_subcommand status" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and not __fish_seen_subcommand_from urls client grants revoke help" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and not __fish_seen_subcommand_from urls client grants revoke help" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and not __fish_seen_subcommand_from urls client grants revoke help" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and not __fish_seen_subcommand_from urls client grants revoke help" -f -a "urls" -d 'The URLs to paste into an OAuth-only client (claude.ai, ChatGPT), one per MCP server'
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and not __fish_seen_subcommand_from urls client grants revoke help" -f -a "client" -d 'OAuth clients: those that registered themselves, and those added here'
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and not __fish_seen_subcommand_from urls client grants revoke help" -f -a "grants" -d 'Grants a person approved: which client, which server, as which bridge client'
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and not __fish_seen_subcommand_from urls client grants revoke help" -f -a "revoke" -d 'End one grant (every token of it stops at once)'
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and not __fish_seen_subcommand_from urls client grants revoke help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from urls" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from urls" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from urls" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from urls" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from client" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from client" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from client" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from client" -f -a "add" -d 'Add a client for a host that wants an id and secret typed in; prints both once'
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from client" -f -a "list" -d 'List clients'
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from client" -f -a "remove" -d 'Remove a client: every grant it holds ends'
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from client" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from grants" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from grants" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from grants" -l all -d 'Ended grants too'
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from grants" -l json -d 'Print the list as a JSON array of items (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from grants" -s q -l quiet -d 'Print only the ids, one per line (for scripts: `-q | xargs …`)'
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from grants" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from revoke" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from revoke" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from revoke" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from revoke" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from help" -f -a "urls" -d 'The URLs to paste into an OAuth-only client (claude.ai, ChatGPT), one per MCP server'
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from help" -f -a "client" -d 'OAuth clients: those that registered themselves, and those added here'
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from help" -f -a "grants" -d 'Grants a person approved: which client, which server, as which bridge client'
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from help" -f -a "revoke" -d 'End one grant (every token of it stops at once)'
complete -c hal0 -n "__fish_hal0_using_subcommand oauth; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and not __fish_seen_subcommand_from list show approve rules deny help" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and not __fish_seen_subcommand_from list show approve rules deny help" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and not __fish_seen_subcommand_from list show approve rules deny help" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and not __fish_seen_subcommand_from list show approve rules deny help" -f -a "list" -d 'The cards waiting for a person, newest first (`--all`: every status)'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and not __fish_seen_subcommand_from list show approve rules deny help" -f -a "show" -d 'One row: the whole card'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and not __fish_seen_subcommand_from list show approve rules deny help" -f -a "approve" -d 'Approve a pending row (pick one on a terminal when ID is left out)'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and not __fish_seen_subcommand_from list show approve rules deny help" -f -a "rules" -d 'The standing rules people chose while approving proxied calls: list, remove'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and not __fish_seen_subcommand_from list show approve rules deny help" -f -a "deny" -d 'Deny a pending row'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and not __fish_seen_subcommand_from list show approve rules deny help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from list" -l status -d 'Only this status: pending (the default), approved, denied, withdrawn, expired, executed or failed' -r
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from list" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from list" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from list" -l all -d 'Every card, whatever its status'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from list" -l json -d 'Print the list as a JSON array of items (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only the ids, one per line (for scripts: `-q | xargs …`)'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from show" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from show" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from show" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from approve" -l choice -d 'A Hermes command: answer `once` (default), `session` or `always`, as the card offers' -r -f -a "once\t''
session\t''
always\t''"
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from approve" -l allow-for -d 'A proxied call: also allow this tool for this caller for MINUTES (a standing rule)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from approve" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from approve" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from approve" -l always-these-arguments -d 'A proxied call: also always allow these exact arguments for this caller'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from approve" -s y -l yes -d 'Do not ask for confirmation'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from approve" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from approve" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from rules" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from rules" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from rules" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from rules" -f -a "list" -d 'The live rules, newest first'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from rules" -f -a "remove" -d 'End a rule: its calls wait for a person again'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from rules" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from deny" -l reason -d 'Why (kept on the row)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from deny" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from deny" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from deny" -s y -l yes -d 'Do not ask for confirmation'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from deny" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from deny" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from help" -f -a "list" -d 'The cards waiting for a person, newest first (`--all`: every status)'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from help" -f -a "show" -d 'One row: the whole card'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from help" -f -a "approve" -d 'Approve a pending row (pick one on a terminal when ID is left out)'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from help" -f -a "rules" -d 'The standing rules people chose while approving proxied calls: list, remove'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from help" -f -a "deny" -d 'Deny a pending row'
complete -c hal0 -n "__fish_hal0_using_subcommand approvals; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and not __fish_seen_subcommand_from add list remove test help" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and not __fish_seen_subcommand_from add list remove test help" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and not __fish_seen_subcommand_from add list remove test help" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and not __fish_seen_subcommand_from add list remove test help" -f -a "add" -d 'Add a target: `webhook URL`, `ntfy URL` or `email --smtp HOST:PORT --from A --to B`'
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and not __fish_seen_subcommand_from add list remove test help" -f -a "list" -d 'The targets'
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and not __fish_seen_subcommand_from add list remove test help" -f -a "remove" -d 'Remove a target (a secret it named stays in api.env)'
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and not __fish_seen_subcommand_from add list remove test help" -f -a "test" -d 'Send a test notification to one target or all, once each, and say how each went'
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and not __fish_seen_subcommand_from add list remove test help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and __fish_seen_subcommand_from add" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and __fish_seen_subcommand_from add" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and __fish_seen_subcommand_from add" -f -a "webhook" -d 'POST each event as signed JSON (X-Hal0-Signature: sha256=HMAC of "timestamp.body")'
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and __fish_seen_subcommand_from add" -f -a "ntfy" -d 'POST to an ntfy topic URL (title, priority, a click link to the card)'
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and __fish_seen_subcommand_from add" -f -a "email" -d 'Mail over SMTP'
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and __fish_seen_subcommand_from add" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and __fish_seen_subcommand_from list" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and __fish_seen_subcommand_from list" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and __fish_seen_subcommand_from list" -l json -d 'Print the list as a JSON array of items (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only the ids, one per line (for scripts: `-q | xargs …`)'
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and __fish_seen_subcommand_from remove" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and __fish_seen_subcommand_from remove" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and __fish_seen_subcommand_from remove" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and __fish_seen_subcommand_from test" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and __fish_seen_subcommand_from test" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and __fish_seen_subcommand_from test" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and __fish_seen_subcommand_from test" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and __fish_seen_subcommand_from help" -f -a "add" -d 'Add a target: `webhook URL`, `ntfy URL` or `email --smtp HOST:PORT --from A --to B`'
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and __fish_seen_subcommand_from help" -f -a "list" -d 'The targets'
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Remove a target (a secret it named stays in api.env)'
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and __fish_seen_subcommand_from help" -f -a "test" -d 'Send a test notification to one target or all, once each, and say how each went'
complete -c hal0 -n "__fish_hal0_using_subcommand notify; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and not __fish_seen_subcommand_from login sessions passwd logout help" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and not __fish_seen_subcommand_from login sessions passwd logout help" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and not __fish_seen_subcommand_from login sessions passwd logout help" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and not __fish_seen_subcommand_from login sessions passwd logout help" -f -a "login" -d 'Print a one-time link that opens a dashboard session (valid for a few minutes)'
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and not __fish_seen_subcommand_from login sessions passwd logout help" -f -a "sessions" -d 'Dashboard sessions: id, opened, last seen, expires, browser'
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and not __fish_seen_subcommand_from login sessions passwd logout help" -f -a "passwd" -d 'Set the dashboard password (sign-in at /ui/login without a shell); read from stdin when it is not a terminal, else asked twice. Stored as an argon2id hash'
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and not __fish_seen_subcommand_from login sessions passwd logout help" -f -a "logout" -d 'End a dashboard session (its cookie opens nothing any more), or every one'
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and not __fish_seen_subcommand_from login sessions passwd logout help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and __fish_seen_subcommand_from login" -l minutes -d 'How long the link may wait to be opened, in minutes (1 to 60)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and __fish_seen_subcommand_from login" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and __fish_seen_subcommand_from login" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and __fish_seen_subcommand_from login" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and __fish_seen_subcommand_from login" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and __fish_seen_subcommand_from sessions" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and __fish_seen_subcommand_from sessions" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and __fish_seen_subcommand_from sessions" -l all -d 'Also ended and expired ones'
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and __fish_seen_subcommand_from sessions" -l json -d 'Print the list as a JSON array of items (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and __fish_seen_subcommand_from sessions" -s q -l quiet -d 'Print only the ids, one per line (for scripts: `-q | xargs …`)'
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and __fish_seen_subcommand_from sessions" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and __fish_seen_subcommand_from passwd" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and __fish_seen_subcommand_from passwd" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and __fish_seen_subcommand_from passwd" -l remove -d 'Turn password sign-in off instead'
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and __fish_seen_subcommand_from passwd" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and __fish_seen_subcommand_from logout" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and __fish_seen_subcommand_from logout" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and __fish_seen_subcommand_from logout" -l all -d 'End every live session'
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and __fish_seen_subcommand_from logout" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and __fish_seen_subcommand_from help" -f -a "login" -d 'Print a one-time link that opens a dashboard session (valid for a few minutes)'
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and __fish_seen_subcommand_from help" -f -a "sessions" -d 'Dashboard sessions: id, opened, last seen, expires, browser'
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and __fish_seen_subcommand_from help" -f -a "passwd" -d 'Set the dashboard password (sign-in at /ui/login without a shell); read from stdin when it is not a terminal, else asked twice. Stored as an argon2id hash'
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and __fish_seen_subcommand_from help" -f -a "logout" -d 'End a dashboard session (its cookie opens nothing any more), or every one'
complete -c hal0 -n "__fish_hal0_using_subcommand ui; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand backup" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand backup" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand backup" -l force -d 'Replace FILE when it exists (without it, an existing file is refused and kept)'
complete -c hal0 -n "__fish_hal0_using_subcommand backup" -l json -d 'Print what was written as JSON'
complete -c hal0 -n "__fish_hal0_using_subcommand backup" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand restore" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand restore" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand restore" -s y -l yes -d 'Replace without asking (the prompt lists what will be replaced; a restore that only adds files, into a fresh box, never asks)'
complete -c hal0 -n "__fish_hal0_using_subcommand restore" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand restore" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand op" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand op" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand op" -l list -d 'List every operation: name, access, REST route'
complete -c hal0 -n "__fish_hal0_using_subcommand op" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand run; and not __fish_seen_subcommand_from status events stop answer help" -l remote -d 'The remote box (default: HAL0_REMOTE_URL + HAL0_KEY, else the default remote)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand run; and not __fish_seen_subcommand_from status events stop answer help" -l agent -d '`hermes` (the default profile) or `hermes/<profile>`' -r
complete -c hal0 -n "__fish_hal0_using_subcommand run; and not __fish_seen_subcommand_from status events stop answer help" -l instructions -d 'Extra instructions for this run' -r
complete -c hal0 -n "__fish_hal0_using_subcommand run; and not __fish_seen_subcommand_from status events stop answer help" -l idempotency-key -d 'Repeat-safe start: the same key and task return the same run' -r
complete -c hal0 -n "__fish_hal0_using_subcommand run; and not __fish_seen_subcommand_from status events stop answer help" -l session-key -d 'A key for the agent\'s long-term memory scope' -r
complete -c hal0 -n "__fish_hal0_using_subcommand run; and not __fish_seen_subcommand_from status events stop answer help" -l timeout -d 'Give up waiting after this many seconds (exit 6; the run goes on)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand run; and not __fish_seen_subcommand_from status events stop answer help" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand run; and not __fish_seen_subcommand_from status events stop answer help" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand run; and not __fish_seen_subcommand_from status events stop answer help" -l wait -d 'Wait until the run ends, then print its output'
complete -c hal0 -n "__fish_hal0_using_subcommand run; and not __fish_seen_subcommand_from status events stop answer help" -l follow -d 'Print the output as it arrives (implies --wait)'
complete -c hal0 -n "__fish_hal0_using_subcommand run; and not __fish_seen_subcommand_from status events stop answer help" -l json -d 'The run view as JSON'
complete -c hal0 -n "__fish_hal0_using_subcommand run; and not __fish_seen_subcommand_from status events stop answer help" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand run; and not __fish_seen_subcommand_from status events stop answer help" -a "status" -d 'A run\'s status and whole output (redacted by the box)'
complete -c hal0 -n "__fish_hal0_using_subcommand run; and not __fish_seen_subcommand_from status events stop answer help" -a "events" -d 'A page of a run\'s events'
complete -c hal0 -n "__fish_hal0_using_subcommand run; and not __fish_seen_subcommand_from status events stop answer help" -a "stop" -d 'Ask the box to stop a run'
complete -c hal0 -n "__fish_hal0_using_subcommand run; and not __fish_seen_subcommand_from status events stop answer help" -a "answer" -d 'Answer the question a run asked (its pending clarification)'
complete -c hal0 -n "__fish_hal0_using_subcommand run; and not __fish_seen_subcommand_from status events stop answer help" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from status" -l remote -d 'The remote box (default: HAL0_REMOTE_URL + HAL0_KEY, else the default remote)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from status" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from status" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from status" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from events" -l since -d 'Events after this sequence number' -r
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from events" -l limit -d 'At most this many (1 to 500)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from events" -l remote -d 'The remote box (default: HAL0_REMOTE_URL + HAL0_KEY, else the default remote)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from events" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from events" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from events" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from events" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from stop" -l remote -d 'The remote box (default: HAL0_REMOTE_URL + HAL0_KEY, else the default remote)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from stop" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from stop" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from stop" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from stop" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from answer" -l request-id -d 'The question\'s id (default: the run\'s pending one)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from answer" -l remote -d 'The remote box (default: HAL0_REMOTE_URL + HAL0_KEY, else the default remote)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from answer" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from answer" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from answer" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from answer" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from help" -f -a "status" -d 'A run\'s status and whole output (redacted by the box)'
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from help" -f -a "events" -d 'A page of a run\'s events'
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from help" -f -a "stop" -d 'Ask the box to stop a run'
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from help" -f -a "answer" -d 'Answer the question a run asked (its pending clarification)'
complete -c hal0 -n "__fish_hal0_using_subcommand run; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and not __fish_seen_subcommand_from add list remove default help" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and not __fish_seen_subcommand_from add list remove default help" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and not __fish_seen_subcommand_from add list remove default help" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and not __fish_seen_subcommand_from add list remove default help" -f -a "add" -d 'Add (or replace) remote NAME at URL with its bridge key, kept in the OS keyring (or a 0600 credentials file where no keyring service runs). The first remote is the default'
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and not __fish_seen_subcommand_from add list remove default help" -f -a "list" -d 'The remotes, their URLs and where each key is kept (never the key)'
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and not __fish_seen_subcommand_from add list remove default help" -f -a "remove" -d 'Remove remote NAME and its key'
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and not __fish_seen_subcommand_from add list remove default help" -f -a "default" -d 'Use remote NAME when --remote is not given'
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and not __fish_seen_subcommand_from add list remove default help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and __fish_seen_subcommand_from add" -l ca-file -d 'A PEM file of the CA that signed the box\'s certificate' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and __fish_seen_subcommand_from add" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and __fish_seen_subcommand_from add" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and __fish_seen_subcommand_from add" -l key-stdin -d 'Read the key from stdin (one line) instead of asking for it'
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and __fish_seen_subcommand_from add" -l no-check -d 'Store the key without asking the box whether it takes it'
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and __fish_seen_subcommand_from add" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and __fish_seen_subcommand_from list" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and __fish_seen_subcommand_from list" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and __fish_seen_subcommand_from list" -l json -d 'Print the list as a JSON array of items (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only the ids, one per line (for scripts: `-q | xargs …`)'
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and __fish_seen_subcommand_from remove" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and __fish_seen_subcommand_from remove" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and __fish_seen_subcommand_from remove" -s y -l yes -d 'Do not ask for confirmation'
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and __fish_seen_subcommand_from default" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and __fish_seen_subcommand_from default" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and __fish_seen_subcommand_from default" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and __fish_seen_subcommand_from help" -f -a "add" -d 'Add (or replace) remote NAME at URL with its bridge key, kept in the OS keyring (or a 0600 credentials file where no keyring service runs). The first remote is the default'
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and __fish_seen_subcommand_from help" -f -a "list" -d 'The remotes, their URLs and where each key is kept (never the key)'
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Remove remote NAME and its key'
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and __fish_seen_subcommand_from help" -f -a "default" -d 'Use remote NAME when --remote is not given'
complete -c hal0 -n "__fish_hal0_using_subcommand remote; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and not __fish_seen_subcommand_from add search help" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and not __fish_seen_subcommand_from add search help" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and not __fish_seen_subcommand_from add search help" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and not __fish_seen_subcommand_from add search help" -f -a "add" -d 'Remember TEXT in a profile\'s memory on the remote box'
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and not __fish_seen_subcommand_from add search help" -f -a "search" -d 'Search a profile\'s memory on the remote box'
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and not __fish_seen_subcommand_from add search help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and __fish_seen_subcommand_from add" -l agent -d '`hermes`, `hermes/<profile>` or `shared`' -r
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and __fish_seen_subcommand_from add" -l tag -d 'A tag (repeat for more)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and __fish_seen_subcommand_from add" -l remote -d 'The remote box (default: HAL0_REMOTE_URL + HAL0_KEY, else the default remote)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and __fish_seen_subcommand_from add" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and __fish_seen_subcommand_from add" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and __fish_seen_subcommand_from add" -l local -d 'This box\'s own store (the default when no remote is configured and a store is here)'
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and __fish_seen_subcommand_from add" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and __fish_seen_subcommand_from search" -l agent -d 'Whose memory: `hermes`, `hermes/<profile>` or `shared`' -r
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and __fish_seen_subcommand_from search" -l limit -d 'At most this many (1 to 50)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and __fish_seen_subcommand_from search" -l remote -d 'The remote box (default: HAL0_REMOTE_URL + HAL0_KEY, else the default remote)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and __fish_seen_subcommand_from search" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and __fish_seen_subcommand_from search" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and __fish_seen_subcommand_from search" -l local -d 'This box\'s own store (the default when no remote is configured and a store is here)'
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and __fish_seen_subcommand_from search" -l json -d 'Print the list as a JSON array of items (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and __fish_seen_subcommand_from search" -s q -l quiet -d 'Print only the ids, one per line (for scripts: `-q | xargs …`)'
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and __fish_seen_subcommand_from search" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and __fish_seen_subcommand_from help" -f -a "add" -d 'Remember TEXT in a profile\'s memory on the remote box'
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and __fish_seen_subcommand_from help" -f -a "search" -d 'Search a profile\'s memory on the remote box'
complete -c hal0 -n "__fish_hal0_using_subcommand memory; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand skills; and not __fish_seen_subcommand_from list push help" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand skills; and not __fish_seen_subcommand_from list push help" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand skills; and not __fish_seen_subcommand_from list push help" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand skills; and not __fish_seen_subcommand_from list push help" -f -a "list" -d 'The drop-in skills on the remote box'
complete -c hal0 -n "__fish_hal0_using_subcommand skills; and not __fish_seen_subcommand_from list push help" -f -a "push" -d 'Propose the skill in DIR (its SKILL.md and the text files beside it) to the remote box; a person approves it there before anything is written'
complete -c hal0 -n "__fish_hal0_using_subcommand skills; and not __fish_seen_subcommand_from list push help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand skills; and __fish_seen_subcommand_from list" -l remote -d 'The remote box (default: HAL0_REMOTE_URL + HAL0_KEY, else the default remote)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand skills; and __fish_seen_subcommand_from list" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand skills; and __fish_seen_subcommand_from list" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand skills; and __fish_seen_subcommand_from list" -l json -d 'Print the list as a JSON array of items (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand skills; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only the ids, one per line (for scripts: `-q | xargs …`)'
complete -c hal0 -n "__fish_hal0_using_subcommand skills; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand skills; and __fish_seen_subcommand_from push" -l name -d 'The skill\'s name (default: the directory\'s name)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand skills; and __fish_seen_subcommand_from push" -l remote -d 'The remote box (default: HAL0_REMOTE_URL + HAL0_KEY, else the default remote)' -r
complete -c hal0 -n "__fish_hal0_using_subcommand skills; and __fish_seen_subcommand_from push" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand skills; and __fish_seen_subcommand_from push" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand skills; and __fish_seen_subcommand_from push" -l json -d 'Print the result as JSON (one document on stdout)'
complete -c hal0 -n "__fish_hal0_using_subcommand skills; and __fish_seen_subcommand_from push" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand skills; and __fish_seen_subcommand_from help" -f -a "list" -d 'The drop-in skills on the remote box'
complete -c hal0 -n "__fish_hal0_using_subcommand skills; and __fish_seen_subcommand_from help" -f -a "push" -d 'Propose the skill in DIR (its SKILL.md and the text files beside it) to the remote box; a person approves it there before anything is written'
complete -c hal0 -n "__fish_hal0_using_subcommand skills; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand completions" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand completions" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand completions" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand config; and not __fish_seen_subcommand_from show unset set help" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand config; and not __fish_seen_subcommand_from show unset set help" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand config; and not __fish_seen_subcommand_from show unset set help" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand config; and not __fish_seen_subcommand_from show unset set help" -f -a "show" -d 'Print the effective configuration (file values over defaults). Show the effective configuration: every setting, those not set in hal0.toml marked `# default`'
complete -c hal0 -n "__fish_hal0_using_subcommand config; and not __fish_seen_subcommand_from show unset set help" -f -a "unset" -d 'Remove SECTION.KEY so its default applies again'
complete -c hal0 -n "__fish_hal0_using_subcommand config; and not __fish_seen_subcommand_from show unset set help" -f -a "set" -d 'Set SECTION.KEY to VALUE (a TOML literal, or a bare string), keeping comments'
complete -c hal0 -n "__fish_hal0_using_subcommand config; and not __fish_seen_subcommand_from show unset set help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand config; and __fish_seen_subcommand_from show" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand config; and __fish_seen_subcommand_from show" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand config; and __fish_seen_subcommand_from show" -l defaults -d 'Show hal0\'s built-in defaults instead (what an unset setting falls back to)'
complete -c hal0 -n "__fish_hal0_using_subcommand config; and __fish_seen_subcommand_from show" -l json -d 'Print it as JSON'
complete -c hal0 -n "__fish_hal0_using_subcommand config; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand config; and __fish_seen_subcommand_from unset" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand config; and __fish_seen_subcommand_from unset" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand config; and __fish_seen_subcommand_from unset" -s h -l help -d 'Print help'
complete -c hal0 -n "__fish_hal0_using_subcommand config; and __fish_seen_subcommand_from set" -l config-dir -d 'Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand config; and __fish_seen_subcommand_from set" -l state-dir -d 'State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable)' -r -F
complete -c hal0 -n "__fish_hal0_using_subcommand config; and __fish_seen_subcommand_from set" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c hal0 -n "__fish_hal0_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "show" -d 'Print the effective configuration (file values over defaults). Show the effective configuration: every setting, those not set in hal0.toml marked `# default`'
complete -c hal0 -n "__fish_hal0_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "unset" -d 'Remove SECTION.KEY so its default applies again'
complete -c hal0 -n "__fish_hal0_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "set" -d 'Set SECTION.KEY to VALUE (a TOML literal, or a bare string), keeping comments'
complete -c hal0 -n "__fish_hal0_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and not __fish_seen_subcommand_from serve bridge auth runs agent activity store mcp relay doctor status oauth approvals notify ui backup restore op run remote memory skills completions config help" -f -a "serve" -d 'Run the REST + MCP daemon'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and not __fish_seen_subcommand_from serve bridge auth runs agent activity store mcp relay doctor status oauth approvals notify ui backup restore op run remote memory skills completions config help" -f -a "bridge" -d 'Admit remote coding agents with per-client bridge keys'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and not __fish_seen_subcommand_from serve bridge auth runs agent activity store mcp relay doctor status oauth approvals notify ui backup restore op run remote memory skills completions config help" -f -a "auth" -d 'The box keys (admin and client): status and rotation'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and not __fish_seen_subcommand_from serve bridge auth runs agent activity store mcp relay doctor status oauth approvals notify ui backup restore op run remote memory skills completions config help" -f -a "runs" -d 'The bridge\'s run ledger: list, show, events, stop'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and not __fish_seen_subcommand_from serve bridge auth runs agent activity store mcp relay doctor status oauth approvals notify ui backup restore op run remote memory skills completions config help" -f -a "agent" -d 'Agents on this box: the approvals inbox'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and not __fish_seen_subcommand_from serve bridge auth runs agent activity store mcp relay doctor status oauth approvals notify ui backup restore op run remote memory skills completions config help" -f -a "activity" -d 'The audit log of MCP tool calls and decisions: list and export'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and not __fish_seen_subcommand_from serve bridge auth runs agent activity store mcp relay doctor status oauth approvals notify ui backup restore op run remote memory skills completions config help" -f -a "store" -d 'The store: its size, retention windows and free disk; prune now'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and not __fish_seen_subcommand_from serve bridge auth runs agent activity store mcp relay doctor status oauth approvals notify ui backup restore op run remote memory skills completions config help" -f -a "mcp" -d 'Install third-party MCP servers and set their tool policy'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and not __fish_seen_subcommand_from serve bridge auth runs agent activity store mcp relay doctor status oauth approvals notify ui backup restore op run remote memory skills completions config help" -f -a "relay" -d 'The agent relay: its bots and the history of their exchanges'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and not __fish_seen_subcommand_from serve bridge auth runs agent activity store mcp relay doctor status oauth approvals notify ui backup restore op run remote memory skills completions config help" -f -a "doctor" -d 'Check the installation: config, modes, store, auth, Hermes wiring, registry, listener'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and not __fish_seen_subcommand_from serve bridge auth runs agent activity store mcp relay doctor status oauth approvals notify ui backup restore op run remote memory skills completions config help" -f -a "status" -d 'The box on one screen: daemon, URL, auth, TLS, what waits, servers, newest errors'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and not __fish_seen_subcommand_from serve bridge auth runs agent activity store mcp relay doctor status oauth approvals notify ui backup restore op run remote memory skills completions config help" -f -a "oauth" -d 'OAuth 2.1 for clients that speak only OAuth (claude.ai, ChatGPT): URLs, clients, grants'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and not __fish_seen_subcommand_from serve bridge auth runs agent activity store mcp relay doctor status oauth approvals notify ui backup restore op run remote memory skills completions config help" -f -a "approvals" -d 'The approvals inbox (same as `hal0 agent approvals`; no subcommand: what waits)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and not __fish_seen_subcommand_from serve bridge auth runs agent activity store mcp relay doctor status oauth approvals notify ui backup restore op run remote memory skills completions config help" -f -a "notify" -d 'Where a person hears that an approval waits: webhooks, ntfy push, e-mail'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and not __fish_seen_subcommand_from serve bridge auth runs agent activity store mcp relay doctor status oauth approvals notify ui backup restore op run remote memory skills completions config help" -f -a "ui" -d 'The dashboard (/ui): one-time login links, sessions, logout'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and not __fish_seen_subcommand_from serve bridge auth runs agent activity store mcp relay doctor status oauth approvals notify ui backup restore op run remote memory skills completions config help" -f -a "backup" -d 'Write one archive of the config dir and a consistent copy of hal0.db (the daemon may run)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and not __fish_seen_subcommand_from serve bridge auth runs agent activity store mcp relay doctor status oauth approvals notify ui backup restore op run remote memory skills completions config help" -f -a "restore" -d 'Put back what `hal0 backup` wrote (the daemon must be stopped; asks first)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and not __fish_seen_subcommand_from serve bridge auth runs agent activity store mcp relay doctor status oauth approvals notify ui backup restore op run remote memory skills completions config help" -f -a "op" -d 'Run any operation of the REST route table by its tool name, with JSON in and out'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and not __fish_seen_subcommand_from serve bridge auth runs agent activity store mcp relay doctor status oauth approvals notify ui backup restore op run remote memory skills completions config help" -f -a "run" -d 'Delegate a run to a remote box\'s Hermes and follow it (see `hal0 remote`)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and not __fish_seen_subcommand_from serve bridge auth runs agent activity store mcp relay doctor status oauth approvals notify ui backup restore op run remote memory skills completions config help" -f -a "remote" -d 'The remote boxes `hal0 run` talks to; keys in the OS keyring'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and not __fish_seen_subcommand_from serve bridge auth runs agent activity store mcp relay doctor status oauth approvals notify ui backup restore op run remote memory skills completions config help" -f -a "memory" -d 'Hermes memory: add and search notes on a remote box (see `hal0 remote`), or this box\'s'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and not __fish_seen_subcommand_from serve bridge auth runs agent activity store mcp relay doctor status oauth approvals notify ui backup restore op run remote memory skills completions config help" -f -a "skills" -d 'A remote box\'s drop-in skills: list, and push one for a person to approve'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and not __fish_seen_subcommand_from serve bridge auth runs agent activity store mcp relay doctor status oauth approvals notify ui backup restore op run remote memory skills completions config help" -f -a "completions" -d 'Print a shell completion script'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and not __fish_seen_subcommand_from serve bridge auth runs agent activity store mcp relay doctor status oauth approvals notify ui backup restore op run remote memory skills completions config help" -f -a "config" -d 'Read and edit hal0.toml (comments and ordering are kept)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and not __fish_seen_subcommand_from serve bridge auth runs agent activity store mcp relay doctor status oauth approvals notify ui backup restore op run remote memory skills completions config help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from bridge" -f -a "add" -d 'Add a client and print its key once, with the `claude mcp add` lines to paste'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from bridge" -f -a "list" -d 'List clients: name, scopes, note, created, last seen, revoked, origin (a key, or the OAuth client a person approved)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from bridge" -f -a "scopes" -d 'Replace a client\'s scope set (agents is always held, except by a relay-only bot)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from bridge" -f -a "rotate" -d 'Mint a new key for a client; the old one stops at once'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from bridge" -f -a "purge" -d 'Free a revoked client\'s name for reuse: deletes its runs (and their output), approvals, standing rules, memory operations and OAuth grants; the audit log keeps its history'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from bridge" -f -a "revoke" -d 'End a client\'s key; its name stays reserved (`hal0 bridge purge` frees it)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from auth" -f -a "status" -d 'Whether auth is armed, and each box key as configured or not with a fingerprint'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from auth" -f -a "rotate" -d 'Mint a new admin or client key and print it once; the old one stops at once'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from runs" -f -a "list" -d 'Runs, newest first'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from runs" -f -a "show" -d 'One run with its whole output (redacted unless --raw)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from runs" -f -a "events" -d 'A run\'s stored events, oldest first'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from runs" -f -a "stop" -d 'Ask Hermes to stop a run'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from agent" -f -a "approvals" -d 'The approvals inbox'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from agent" -f -a "reprovision" -d 'Wire Hermes profiles to hal0-admin and hal0-memory (config.yaml and .env)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from activity" -f -a "list" -d 'Audit rows, newest first'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from activity" -f -a "export" -d 'Every matching row as JSON lines to stdout, oldest first (to ship the log elsewhere before retention prunes it)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from store" -f -a "status" -d 'Size of hal0.db, rows of each log with a retention window, the windows, free disk'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from store" -f -a "prune" -d 'Prune every log by its retention window now and give the space back to the disk'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "install" -d 'Install a server from a spec: oci://IMAGE, npm:PKG, uvx:PKG, git+https://…, an http manifest URL, or an endpoint URL'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "list" -d 'List bundled and installed servers with their state; broken record files are shown too'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "status" -d 'Show one server: transport, tool policy, env names (secret values are never shown), exposure'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "uninstall" -d 'Remove an installed server\'s record (bundled servers cannot be removed)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "allow" -d 'Let agents call TOOL autonomously (moves it off gated/blocked); with --resource or --prompt, offer a resource URI (a trailing `*` matches a prefix) or a prompt instead'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "gate" -d 'Queue each call of TOOL for approval (moves it off allow/blocked)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "block" -d 'Hard-reject calls of TOOL (moves it off allow/gated); with --resource or --prompt, refuse that resource URI (pattern) or prompt'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "test" -d 'Connect to the server with its own headers, list its tools and show each tool\'s verdict'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "expose" -d 'Expose a server to Hermes profiles through hal0\'s proxy (--hermes, --brain) or withdraw it (--no-hermes, --no-brain)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "enable" -d 'Serve an installed server through the proxy again (and re-join its exposure)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "disable" -d 'Stop serving a server through the proxy and withdraw its exposure (its record stays)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "catalog" -d 'The curated catalogue of installable servers: list, refresh'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "keys" -d 'Keys consumers present to hal0\'s proxy at /mcp/proxy/ID/mcp'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "start" -d 'Start a stdio server\'s child in the running daemon (it also starts on the first call)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "stop" -d 'Stop a stdio server\'s child in the running daemon'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "restart" -d 'Restart a stdio server\'s child in the running daemon'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "secret" -d 'Secrets an installed server sends as headers (values in api.env, read from stdin or a prompt)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "connect" -d 'Connect an OAuth account at a server that wants one: prints the URL to open, waits for the callback'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "accounts" -d 'A server\'s OAuth accounts (box-wide or one per consumer), or choose which with --mode'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "refresh" -d 'Refresh a server\'s OAuth account now (hal0 serve does before its token expires)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "disconnect" -d 'Disconnect a server\'s OAuth account: its tokens are revoked upstream and forgotten'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from relay" -f -a "agents" -d 'The bots (bridge clients holding the relay scope) and whether each is connected'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from relay" -f -a "exchanges" -d 'Exchanges between bots, newest first: who asked whom, the answer or the failure'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from oauth" -f -a "urls" -d 'The URLs to paste into an OAuth-only client (claude.ai, ChatGPT), one per MCP server'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from oauth" -f -a "client" -d 'OAuth clients: those that registered themselves, and those added here'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from oauth" -f -a "grants" -d 'Grants a person approved: which client, which server, as which bridge client'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from oauth" -f -a "revoke" -d 'End one grant (every token of it stops at once)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from approvals" -f -a "list" -d 'The cards waiting for a person, newest first (`--all`: every status)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from approvals" -f -a "show" -d 'One row: the whole card'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from approvals" -f -a "approve" -d 'Approve a pending row (pick one on a terminal when ID is left out)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from approvals" -f -a "rules" -d 'The standing rules people chose while approving proxied calls: list, remove'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from approvals" -f -a "deny" -d 'Deny a pending row'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from notify" -f -a "add" -d 'Add a target: `webhook URL`, `ntfy URL` or `email --smtp HOST:PORT --from A --to B`'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from notify" -f -a "list" -d 'The targets'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from notify" -f -a "remove" -d 'Remove a target (a secret it named stays in api.env)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from notify" -f -a "test" -d 'Send a test notification to one target or all, once each, and say how each went'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from ui" -f -a "login" -d 'Print a one-time link that opens a dashboard session (valid for a few minutes)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from ui" -f -a "sessions" -d 'Dashboard sessions: id, opened, last seen, expires, browser'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from ui" -f -a "passwd" -d 'Set the dashboard password (sign-in at /ui/login without a shell); read from stdin when it is not a terminal, else asked twice. Stored as an argon2id hash'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from ui" -f -a "logout" -d 'End a dashboard session (its cookie opens nothing any more), or every one'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from run" -f -a "status" -d 'A run\'s status and whole output (redacted by the box)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from run" -f -a "events" -d 'A page of a run\'s events'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from run" -f -a "stop" -d 'Ask the box to stop a run'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from run" -f -a "answer" -d 'Answer the question a run asked (its pending clarification)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from remote" -f -a "add" -d 'Add (or replace) remote NAME at URL with its bridge key, kept in the OS keyring (or a 0600 credentials file where no keyring service runs). The first remote is the default'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from remote" -f -a "list" -d 'The remotes, their URLs and where each key is kept (never the key)'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from remote" -f -a "remove" -d 'Remove remote NAME and its key'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from remote" -f -a "default" -d 'Use remote NAME when --remote is not given'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from memory" -f -a "add" -d 'Remember TEXT in a profile\'s memory on the remote box'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from memory" -f -a "search" -d 'Search a profile\'s memory on the remote box'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from skills" -f -a "list" -d 'The drop-in skills on the remote box'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from skills" -f -a "push" -d 'Propose the skill in DIR (its SKILL.md and the text files beside it) to the remote box; a person approves it there before anything is written'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "show" -d 'Print the effective configuration (file values over defaults). Show the effective configuration: every setting, those not set in hal0.toml marked `# default`'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "unset" -d 'Remove SECTION.KEY so its default applies again'
complete -c hal0 -n "__fish_hal0_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "set" -d 'Set SECTION.KEY to VALUE (a TOML literal, or a bare string), keeping comments'
