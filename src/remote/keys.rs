//! Where a remote's bridge key is kept: the OS keyring (service `hal0`, account
//! `remote/<name>`), or, where no keyring service answers (a headless box, a CI runner) or
//! `HAL0_KEYRING=off`, the `credentials` file beside `remotes.toml` (TOML, mode 0600,
//! written atomically). The key never goes to `remotes.toml`, a log or an error message.

use super::KeyIn;
use crate::base::error::{Error, Result};
use std::collections::BTreeMap;
use std::path::PathBuf;

const SERVICE: &str = "hal0";

fn entry(name: &str) -> keyring::Result<keyring::Entry> {
    keyring::Entry::new(SERVICE, &format!("remote/{name}"))
}

fn file() -> Result<PathBuf> {
    Ok(super::dir()?.join("credentials"))
}

fn read_file() -> Result<BTreeMap<String, String>> {
    let path = file()?;
    match crate::base::paths::read_optional(&path)? {
        None => Ok(BTreeMap::new()),
        Some(t) => toml_edit::de::from_str(&t).map_err(|_| {
            // Never echo the parse error: it may quote a key.
            Error::invalid(
                "remote.invalid_file",
                format!("{} is not a valid credentials file; remove it and add the remotes again", path.display()),
            )
        }),
    }
}

fn write_file(m: &BTreeMap<String, String>) -> Result<()> {
    let text =
        toml_edit::ser::to_string(m).map_err(|e| Error::internal(format!("cannot write the credentials: {e}")))?;
    crate::base::paths::write_atomic(&file()?, text.as_bytes())
}

/// A key as a remote box takes it: 8 to 512 visible ASCII characters, no spaces.
pub fn check_key(key: &str) -> Result<()> {
    if (8..=512).contains(&key.len()) && key.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
        return Ok(());
    }
    Err(Error::invalid(
        "remote.invalid_key",
        "the key must be 8 to 512 visible ASCII characters without spaces (a bridge key from `hal0 bridge add` on the box: hal0bk_…)",
    ))
}

/// Keep `name`'s key: in the keyring when one answers, else in the credentials file (the
/// note says so and why).
pub fn store(name: &str, key: &str) -> Result<(KeyIn, Option<String>)> {
    let why = if std::env::var("HAL0_KEYRING").is_ok_and(|v| v == "off") {
        "HAL0_KEYRING=off".to_string()
    } else {
        match entry(name).and_then(|e| e.set_password(key)) {
            Ok(()) => return Ok((KeyIn::Keyring, None)),
            // No keyring service at all (no D-Bus session, no Secret Service): the file.
            Err(e @ keyring::Error::PlatformFailure(_)) => format!("no keyring service answers here: {e}"),
            // A keyring that is there but locked, or refused us: never move the key to a
            // file behind the person's back.
            Err(e) => {
                return Err(Error::unavailable(
                    "remote.keyring_unavailable",
                    format!(
                        "the OS keyring refused the key ({e}): unlock it and add the remote again, or set HAL0_KEYRING=off to keep the key in a 0600 file"
                    ),
                ));
            }
        }
    };
    let mut m = read_file()?;
    m.insert(name.to_string(), key.to_string());
    write_file(&m)?;
    let note = format!("{why}; the key is in {} (mode 0600)", file()?.display());
    Ok((KeyIn::File, Some(note)))
}

/// `name`'s key from where it was kept.
pub fn load(name: &str, key_in: KeyIn) -> Result<String> {
    let missing = |where_: &str| {
        Error::not_found(
            "remote.key_missing",
            format!("{where_} holds no key for remote `{name}`: add it again with `hal0 remote add {name} URL`"),
        )
    };
    match key_in {
        KeyIn::Keyring => match entry(name).and_then(|e| e.get_password()) {
            Ok(k) => Ok(k),
            Err(keyring::Error::NoEntry) => Err(missing("the keyring")),
            Err(e) => Err(Error::unavailable(
                "remote.keyring_unavailable",
                format!(
                    "the key of remote `{name}` is in the OS keyring, which does not answer: {e}; unlock it, or set HAL0_REMOTE_URL and HAL0_KEY"
                ),
            )),
        },
        KeyIn::File => read_file()?.remove(name).ok_or_else(|| missing("the credentials file")),
    }
}

/// Drop `name`'s key from where it was kept (nothing there is fine).
pub fn forget(name: &str, key_in: KeyIn) -> Result<()> {
    match key_in {
        KeyIn::Keyring => match entry(name).and_then(|e| e.delete_credential()) {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(Error::unavailable(
                "remote.keyring_unavailable",
                format!("cannot remove the key of remote `{name}` from the OS keyring: {e}"),
            )),
        },
        KeyIn::File => {
            let mut m = read_file()?;
            if m.remove(name).is_some() {
                write_file(&m)?;
            }
            Ok(())
        }
    }
}
