//! Every stable error code hal0 answers with, listed once. `Error::new` refuses an unlisted
//! code in debug builds (so any test that meets one fails), and a test checks that every
//! code a constructor names in the source is listed and every listed code is used.

/// Every code, sorted (one area per line group: `area.what`).
pub const ALL: &[&str] = &[
    // a2a (the A2A face's own refusals; hal0's codes pass through as they are)
    "a2a.content_type",
    "a2a.context_mismatch",
    "a2a.empty_message",
    "a2a.internal",
    "a2a.invalid_page_token",
    "a2a.invalid_params",
    "a2a.invalid_request",
    "a2a.method_not_found",
    "a2a.no_extended_card",
    "a2a.no_tasks",
    "a2a.parse_error",
    "a2a.push_not_supported",
    "a2a.task_ended",
    "a2a.task_not_cancelable",
    "a2a.version_not_supported",
    // activity
    "activity.invalid_filter",
    // approvals
    "approvals.arguments_too_large",
    "approvals.binding_mismatch",
    "approvals.execution_failed",
    "approvals.expired",
    "approvals.invalid_arguments",
    "approvals.invalid_choice",
    "approvals.invalid_cursor",
    "approvals.invalid_request",
    "approvals.invalid_status",
    "approvals.none_pending",
    "approvals.not_approved",
    "approvals.not_found",
    "approvals.not_pending",
    "approvals.passkey_required",
    "approvals.person_required",
    "approvals.rule_not_found",
    "approvals.stale",
    "approvals.too_many_pending",
    "approvals.unsupported_kind",
    "approvals.wrong_kind",
    // audit
    "audit.export_failed",
    "audit.invalid_copy",
    "audit.invalid_entry",
    "audit.invalid_since",
    "audit.links_removed",
    "audit.outcome_changed",
    "audit.row_added",
    "audit.row_changed",
    "audit.row_removed",
    "audit.unavailable",
    // auth
    "auth.forbidden",
    "auth.key_required",
    "auth.keys_unreadable",
    "auth.no_oauth",
    "auth.off_remote",
    "auth.off_remote_write",
    "auth.token_required",
    // backup
    "backup.daemon_running",
    "backup.exists",
    "backup.invalid",
    "backup.invalid_path",
    "backup.newer_schema",
    // bridge
    "bridge.agent_refused",
    "bridge.agent_unavailable",
    "bridge.agent_unkeyed",
    "bridge.client_busy",
    "bridge.client_live",
    "bridge.client_revoked",
    "bridge.idempotency_conflict",
    "bridge.internal",
    "bridge.invalid_idempotency_key",
    "bridge.invalid_input",
    "bridge.invalid_limit",
    "bridge.invalid_name",
    "bridge.invalid_note",
    "bridge.invalid_offset",
    "bridge.invalid_request",
    "bridge.invalid_run_id",
    "bridge.invalid_session_key",
    "bridge.invalid_since",
    "bridge.invalid_timeout",
    "bridge.invalid_wait",
    "bridge.memory_disabled",
    "bridge.memory_failed",
    "bridge.memory_invalid",
    "bridge.name_revoked",
    "bridge.name_taken",
    "bridge.no_pending_request",
    "bridge.run_ended",
    "bridge.run_not_found",
    "bridge.run_not_running",
    "bridge.run_waits_for_person",
    "bridge.skill_invalid",
    "bridge.skill_not_found",
    "bridge.skill_pending_elsewhere",
    "bridge.skill_readonly",
    "bridge.store_unavailable",
    "bridge.too_many_pending",
    "bridge.too_many_runs",
    "bridge.unavailable",
    "bridge.unknown_agent",
    "bridge.unknown_client",
    "bridge.unknown_client_kind",
    "bridge.unknown_scope",
    // cli
    "cli.declined",
    "cli.invalid_timeout",
    "cli.missing_id",
    // config
    "config.invalid",
    "config.invalid_key",
    "config.invalid_request",
    "config.invalid_value",
    "config.shell_only",
    "config.tls_invalid",
    "config.unknown_key",
    // fs
    "fs.read_failed",
    "fs.symlink_refused",
    "fs.unsafe_file",
    "fs.write_failed",
    // hermes
    "hermes.client_revoked",
    "hermes.config_edit_refused",
    "hermes.config_unparsable",
    "hermes.config_unsupported",
    "hermes.reprovision_failed",
    // internal
    "internal",
    // logs
    "logs.invalid_lines",
    // mcp
    "mcp.access_invalid",
    "mcp.account_required",
    "mcp.already_installed",
    "mcp.approved_call_failed",
    "mcp.bundled",
    "mcp.call_cancelled",
    "mcp.call_denied",
    "mcp.call_withdrawn",
    "mcp.catalog_invalid",
    "mcp.catalog_source_invalid",
    "mcp.catalog_source_missing",
    "mcp.catalog_source_not_found",
    "mcp.catalog_unknown_category",
    "mcp.config_invalid",
    "mcp.consumer_not_found",
    "mcp.daemon_refused",
    "mcp.daemon_unreachable",
    "mcp.drift_stale",
    "mcp.env_invalid",
    "mcp.env_secret",
    "mcp.exposure_invalid",
    "mcp.exposure_manifest_unreadable",
    "mcp.exposure_needs_supervisor",
    "mcp.exposure_unsupported",
    "mcp.id_required",
    "mcp.insecure_credentials",
    "mcp.install_invalid",
    "mcp.invalid_arg",
    "mcp.invalid_consumer",
    "mcp.invalid_header",
    "mcp.invalid_id",
    "mcp.invalid_limit",
    "mcp.invalid_name",
    "mcp.invalid_request",
    "mcp.invalid_spec",
    "mcp.invalid_url",
    "mcp.manifest_fetch_failed",
    "mcp.manifest_invalid",
    "mcp.memory_schema",
    "mcp.missing_arg",
    "mcp.mount_root",
    "mcp.not_found",
    "mcp.not_supervised",
    "mcp.oauth_client_secret_missing",
    "mcp.oauth_connect_expired",
    "mcp.oauth_connect_timeout",
    "mcp.oauth_denied",
    "mcp.oauth_discovery_failed",
    "mcp.oauth_holder_required",
    "mcp.oauth_holder_unexpected",
    "mcp.oauth_holder_unknown",
    "mcp.oauth_insecure",
    "mcp.oauth_iss_mismatch",
    "mcp.oauth_link_invalid",
    "mcp.oauth_mode_invalid",
    "mcp.oauth_not_needed",
    "mcp.oauth_state_unknown",
    "mcp.oauth_token_failed",
    "mcp.oauth_unsupported",
    "mcp.oauth_vault_unreadable",
    "mcp.package_not_found",
    "mcp.package_unpinnable",
    "mcp.package_unreachable",
    "mcp.parse_error",
    "mcp.probe_failed",
    "mcp.program_needs_auth",
    "mcp.prompt_blocked",
    "mcp.prompt_unlisted",
    "mcp.reauth_required",
    "mcp.record_malformed",
    "mcp.request_state_invalid",
    "mcp.resource_blocked",
    "mcp.resource_unlisted",
    "mcp.result_withheld",
    "mcp.server_disabled",
    "mcp.session_unknown",
    "mcp.ssrf_refused",
    "mcp.subscribe_unsupported",
    "mcp.supervisor_unavailable",
    "mcp.task_gated",
    "mcp.task_unknown",
    "mcp.tls_ca_invalid",
    "mcp.tls_certificate_invalid",
    "mcp.too_many_sessions",
    "mcp.tool_blocked",
    "mcp.tool_drifted",
    "mcp.tools_invalid",
    "mcp.unknown_action",
    "mcp.unknown_tool",
    "mcp.upstream_error",
    "mcp.upstream_failed",
    "mcp.upstream_tool_error",
    // memory
    "memory.engine_unavailable",
    "memory.not_found",
    "memory.operation_finished",
    "memory.operation_not_failed",
    "memory.operation_not_retryable",
    "memory.private_forbidden",
    // not_found
    "not_found",
    "notify.exists",
    "notify.failed",
    "notify.file_invalid",
    "notify.invalid",
    "notify.not_found",
    "notify.secret_missing",
    // oauth
    "oauth.grant_unknown",
    "oauth.invalid_client",
    "oauth.invalid_client_metadata",
    "oauth.invalid_grant",
    "oauth.invalid_redirect_uri",
    "oauth.invalid_request",
    "oauth.invalid_scope",
    "oauth.invalid_target",
    "oauth.invalid_token",
    "oauth.off",
    "oauth.person_required",
    "oauth.request_decided",
    "oauth.request_expired",
    "oauth.request_pending",
    "oauth.request_unknown",
    "oauth.too_many_clients",
    "oauth.too_many_requests",
    "oauth.unknown_resource",
    "oauth.unsupported_grant_type",
    "oauth.unsupported_response_type",
    // request
    "relay.database_unavailable",
    "relay.invalid_database_url",
    "relay.invalid_filter",
    "relay.invalid_limit",
    "relay.invalid_peer_name",
    "relay.langfuse_keys_missing",
    "relay.peer_card_invalid",
    "relay.peer_exists",
    "relay.peer_host_mismatch",
    "relay.peer_not_found",
    // remote
    "remote.failed",
    "remote.invalid_file",
    "remote.invalid_key",
    "remote.invalid_name",
    "remote.invalid_skill",
    "remote.invalid_url",
    "remote.key_missing",
    "remote.key_refused",
    "remote.keyring_unavailable",
    "remote.no_config_dir",
    "remote.no_key",
    "remote.none",
    "remote.not_found",
    "remote.unreachable",
    "request.body_timeout",
    "request.busy",
    "request.body_unreadable",
    "request.https_required",
    "request.invalid",
    "request.invalid_path",
    "request.too_large",
    "request.too_many_connections",
    "request.unsupported_media_type",
    // runs
    // run (hal0 run against a remote box)
    "run.needs_answer",
    "run.no_question",
    "run.timed_out",
    "runs.invalid_filter",
    "runs.invalid_limit",
    // secrets
    "secrets.invalid_name",
    "secrets.invalid_request",
    "secrets.invalid_value",
    "secrets.reserved",
    // serve
    "serve.auth_off_on_network",
    "serve.bind_failed",
    // store
    "store.migration_failed",
    "store.restoring",
    "store.too_new",
    "store.full",
    "store.unavailable",
    // ui
    "ui.csrf_required",
    "ui.invalid_name",
    "ui.invalid_request",
    "ui.invalid_ttl",
    "ui.link_expired",
    "ui.link_unknown",
    "ui.link_used",
    "ui.no_password",
    "ui.no_person",
    "ui.no_such_passkey",
    "ui.no_such_person",
    "ui.no_such_session",
    "ui.passkey_cloned",
    "ui.passkey_exists",
    "ui.passkey_expired",
    "ui.passkey_invalid",
    "ui.passkey_unavailable",
    "ui.passkey_unknown",
    "ui.password_too_short",
    "ui.person_exists",
    "ui.session_ambiguous",
    "ui.session_required",
    "ui.too_many_attempts",
    "ui.wrong_password",
];

/// Whether `code` is one of [`ALL`].
pub fn is_listed(code: &str) -> bool {
    ALL.contains(&code)
}

/// `code` as listed (a code another hal0 answered with, say), or `None` when unlisted.
pub fn listed(code: &str) -> Option<&'static str> {
    ALL.iter().copied().find(|c| *c == code)
}

#[cfg(test)]
mod tests {
    use super::ALL;
    use std::collections::BTreeSet;
    use std::path::Path;

    fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                sources(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push((p.display().to_string(), std::fs::read_to_string(&p).unwrap()));
            }
        }
    }

    /// The first string literal after each `Error::<ctor>(` / `Self::<ctor>(`.
    fn constructor_codes(text: &str) -> Vec<String> {
        let mut codes = Vec::new();
        for ctor in ["new(", "invalid(", "not_found(", "conflict(", "unavailable(", "io("] {
            for owner in ["Error::", "Self::"] {
                let pat = format!("{owner}{ctor}");
                let mut rest = text;
                while let Some(i) = rest.find(&pat) {
                    rest = &rest[i + pat.len()..];
                    let arg = rest.trim_start();
                    if let Some(lit) = arg.strip_prefix('"') {
                        codes.push(lit[..lit.find('"').unwrap()].to_string());
                    }
                }
            }
        }
        codes
    }

    #[test]
    fn every_constructed_code_is_listed_and_every_listed_code_is_used() {
        let mut files = Vec::new();
        sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
        let listed: BTreeSet<&str> = ALL.iter().copied().collect();
        assert_eq!(listed.len(), ALL.len(), "a code is listed twice");
        let mut unlisted = Vec::new();
        // This file's own test of the debug check names an unlisted code on purpose.
        for (path, text) in files.iter().filter(|(p, _)| !p.ends_with("codes.rs")) {
            for c in constructor_codes(text) {
                if !listed.contains(c.as_str()) {
                    unlisted.push(format!("{path}: {c}"));
                }
            }
        }
        assert!(unlisted.is_empty(), "codes missing from src/base/codes.rs: {unlisted:#?}");
        let all_text: String =
            files.iter().filter(|(p, _)| !p.ends_with("codes.rs")).map(|(_, t)| t.as_str()).collect();
        let unused: Vec<&str> = ALL.iter().copied().filter(|c| !all_text.contains(&format!("\"{c}\""))).collect();
        assert!(unused.is_empty(), "listed codes no source names: {unused:?}");
    }

    #[test]
    fn codes_are_area_dot_what_in_lower_case() {
        for c in ALL {
            let ok = c
                .split('.')
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'));
            assert!(ok, "`{c}` is not area.what in lower case");
        }
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "is not listed in src/base/codes.rs")]
    fn an_unlisted_code_is_refused_in_debug_builds() {
        let _ = crate::base::error::Error::invalid("made.up_code", "x");
    }
}
