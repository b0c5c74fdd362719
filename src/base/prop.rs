//! Settings shared by the property tests beside the modules (`proptest`): a bounded default
//! number of cases so each runs in seconds in a debug build, which `PROPTEST_CASES`
//! overrides (e.g. `PROPTEST_CASES=20000 cargo test --lib props`).

use proptest::test_runner::Config;

/// `default` cases, or `PROPTEST_CASES` when it is set to a number.
pub fn config(default: u32) -> Config {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(default);
    Config { cases, failure_persistence: None, ..Config::default() }
}
