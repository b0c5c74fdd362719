//! hal0's secrets store: named values in `api.env` (0600, edited under its lock), which an
//! installed MCP server's `[secrets]` table refers to by name. A value is written here and
//! never read back out through any front: answers name the secret, not its value.
//! The box keys (`HAL0_ADMIN_KEY`, `HAL0_CLIENT_KEY`) are not secrets of this kind: `hal0
//! auth rotate` owns them.

use crate::base::error::{Error, Result};
use crate::base::paths::Paths;

/// Names `auth rotate` owns.
const RESERVED: [&str; 2] = [crate::auth::boxkeys::ADMIN_VAR, crate::auth::boxkeys::CLIENT_VAR];
/// The longest value stored (a PEM private key fits).
pub const MAX_VALUE: usize = 16 * 1024;

/// `^[A-Z][A-Z0-9_]{0,127}$`, and not a box key.
pub fn validate_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && name.starts_with(|c: char| c.is_ascii_uppercase())
        && name.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    if !ok {
        return Err(Error::invalid(
            "secrets.invalid_name",
            format!(
                "`{}` is not a secret name: use 1-128 upper-case letters, digits and `_`, starting with a letter (e.g. GITHUB_MCP_TOKEN)",
                crate::base::term::safe_line(name)
            ),
        ));
    }
    if RESERVED.contains(&name) {
        return Err(Error::invalid(
            "secrets.reserved",
            format!("`{name}` is a box key: rotate it with `hal0 auth rotate` (it is never set by value)"),
        ));
    }
    Ok(())
}

/// A value `api.env` can hold on one line: not empty, at most [`MAX_VALUE`] bytes, no line
/// break or NUL.
pub fn validate_value(value: &str) -> Result<()> {
    let why = if value.is_empty() {
        Some("is empty".to_string())
    } else if value.len() > MAX_VALUE {
        Some(format!("is {} bytes, over the {MAX_VALUE}-byte limit", value.len()))
    } else if value.contains(['\n', '\r', '\0']) {
        Some("holds a line break or NUL, which api.env cannot keep on one line".to_string())
    } else {
        None
    };
    match why {
        Some(why) => Err(Error::invalid("secrets.invalid_value", format!("the secret's value {why}"))),
        None => Ok(()),
    }
}

/// Store `value` under `name` in `api.env` (replacing an older value); `true` when the
/// name is new. Nothing is written when either is refused.
pub fn put(paths: &Paths, name: &str, value: &str) -> Result<bool> {
    validate_name(name)?;
    validate_value(value)?;
    let path = paths.api_env();
    let existed = crate::base::envfile::get_var(&path, name)?.is_some();
    crate::base::envfile::set_vars(&path, &[(name, value)])?;
    Ok(!existed)
}

/// The `api.env` name a server's `[secrets]` entry `header` uses when the record names
/// none yet: `HAL0_MCP_<ID>_<HEADER>`, upper-cased, other characters `_`.
pub fn default_name(server_id: &str, header: &str) -> String {
    let up = |s: &str| {
        s.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect::<String>()
    };
    format!("HAL0_MCP_{}_{}", up(server_id), up(header))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_values_are_checked() {
        for good in ["GITHUB_MCP_TOKEN", "A", "X9_"] {
            assert!(validate_name(good).is_ok(), "{good}");
        }
        for bad in ["", "lower", "9LEAD", "HAS-DASH", "HAS SPACE", &"A".repeat(129)] {
            assert_eq!(validate_name(bad).unwrap_err().code, "secrets.invalid_name", "{bad}");
        }
        assert_eq!(validate_name("HAL0_ADMIN_KEY").unwrap_err().code, "secrets.reserved");
        for bad in ["", "a\nb", "a\rb", "a\0b", &"x".repeat(MAX_VALUE + 1)] {
            assert_eq!(validate_value(bad).unwrap_err().code, "secrets.invalid_value");
        }
        assert!(validate_value(&"x".repeat(MAX_VALUE)).is_ok());
        assert_eq!(default_name("gh-files", "Authorization"), "HAL0_MCP_GH_FILES_AUTHORIZATION");
    }

    #[test]
    fn put_writes_api_env_0600_and_refuses_without_writing() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let paths = Paths::resolve(Some(d.path().join("etc")), Some(d.path().join("var")));
        std::fs::create_dir_all(d.path().join("etc")).unwrap();
        assert!(put(&paths, "GH_TOKEN", "ghp_first").unwrap(), "new");
        assert!(!put(&paths, "GH_TOKEN", "ghp_second").unwrap(), "replaced");
        let text = std::fs::read_to_string(paths.api_env()).unwrap();
        assert!(text.contains("GH_TOKEN=ghp_second") && !text.contains("ghp_first"), "{text}");
        assert_eq!(std::fs::metadata(paths.api_env()).unwrap().permissions().mode() & 0o777, 0o600);
        assert!(put(&paths, "OTHER", "a\nHAL0_ADMIN_KEY=x").is_err());
        assert!(put(&paths, "HAL0_ADMIN_KEY", "x").is_err());
        assert_eq!(std::fs::read_to_string(paths.api_env()).unwrap(), text, "refusals write nothing");
    }
}
