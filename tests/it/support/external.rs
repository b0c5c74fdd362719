//! The one rule for an external part a test needs (a tool from `tests/external/setup.sh`, a
//! package, a server) that this machine lacks: the test says what is missing and passes,
//! unless `HAL0_REQUIRE_EXTERNAL=1` (as CI sets), where it fails.
//!
//! Tests reach it as `crate::support::missing_external` (re-exported; `use crate::support::*`
//! brings it). The file is loaded through `upstream.rs` (`support::upstream::external`), which
//! uses it too and which the benches in `examples/` include on its own with `#[path]`, so it
//! must stand alone (std only).

/// Whether CI asked for every external part (`HAL0_REQUIRE_EXTERNAL=1`).
pub fn external_required() -> bool {
    std::env::var("HAL0_REQUIRE_EXTERNAL").is_ok_and(|v| v == "1")
}

/// An external part a test needs is missing: fail naming `what` and `how` to install it when
/// `HAL0_REQUIRE_EXTERNAL=1` (as CI sets), else print `skipped: {what} is missing ({how})` to
/// stderr and let the caller return early (and pass).
#[track_caller]
pub fn missing_external(what: impl std::fmt::Display, how: &str) {
    if external_required() {
        panic!("{what} is missing: {how} (HAL0_REQUIRE_EXTERNAL=1 is set)");
    }
    eprintln!("skipped: {what} is missing ({how})");
}
