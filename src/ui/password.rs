//! The dashboard's password, for sign-ins without a shell: `hal0 ui passwd` stores it as an
//! argon2id hash (PHC string) in `<config>/ui-password`, mode 0600; `--remove` turns
//! password sign-in off. Wrong guesses are throttled per daemon: after [`MAX_FAILURES`] in
//! [`WINDOW`], every password sign-in is refused until the window has passed.

use crate::error::{Error, Result};
use crate::paths::Paths;
use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The shortest password accepted.
pub const MIN_LEN: usize = 12;
/// Failed sign-ins allowed within [`WINDOW`].
pub const MAX_FAILURES: usize = 5;
pub const WINDOW: Duration = Duration::from_secs(15 * 60);

fn file(paths: &Paths) -> PathBuf {
    paths.config_dir.join("ui-password")
}

/// Whether a password is set.
pub fn is_set(paths: &Paths) -> bool {
    file(paths).is_file()
}

/// Store `password`'s argon2id hash (replacing any earlier one).
pub fn set(paths: &Paths, password: &str) -> Result<()> {
    if password.chars().count() < MIN_LEN {
        return Err(Error::invalid(
            "ui.password_too_short",
            format!("a dashboard password has at least {MIN_LEN} characters"),
        ));
    }
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|e| Error::internal(format!("no randomness: {e}")))?;
    let salt = SaltString::encode_b64(&salt).map_err(|e| Error::internal(format!("salt: {e}")))?;
    let hash = Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map_err(|e| Error::internal(format!("cannot hash the password: {e}")))?;
    crate::paths::write_atomic(&file(paths), format!("{hash}\n").as_bytes())
}

/// Turn password sign-in off; whether a password was set.
pub fn remove(paths: &Paths) -> Result<bool> {
    match std::fs::remove_file(file(paths)) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io("fs.write_failed", "remove", &file(paths), e)),
    }
}

/// Whether `password` is the dashboard's (argon2id, constant time); `ui.no_password` when
/// none is set.
pub fn verify(paths: &Paths, password: &str) -> Result<bool> {
    let stored = crate::paths::read_optional(&file(paths))?.ok_or_else(|| {
        Error::forbidden_code(
            "ui.no_password",
            "password sign-in is off on this box: run `hal0 ui login` there for a link, or `hal0 ui passwd` to set one",
        )
    })?;
    let hash = PasswordHash::new(stored.trim())
        .map_err(|e| Error::internal(format!("{} is not a password hash: {e}", file(paths).display())))?;
    Ok(Argon2::default().verify_password(password.as_bytes(), &hash).is_ok())
}

/// The failed sign-ins of the last [`WINDOW`].
#[derive(Default)]
pub struct Throttle(Mutex<VecDeque<Instant>>);

impl Throttle {
    /// Refused when [`MAX_FAILURES`] failures fell within the window.
    pub fn check(&self) -> Result<()> {
        let mut q = self.0.lock().unwrap_or_else(|p| p.into_inner());
        while q.front().is_some_and(|t| t.elapsed() > WINDOW) {
            q.pop_front();
        }
        if q.len() >= MAX_FAILURES {
            let wait = q.front().map_or(WINDOW, |t| WINDOW.saturating_sub(t.elapsed()));
            return Err(Error::new(
                "ui.too_many_attempts",
                crate::error::Kind::TooMany,
                format!(
                    "{MAX_FAILURES} wrong passwords in {} minutes: password sign-in is paused for {} more minutes \
                     (`hal0 ui login` on the box still works)",
                    WINDOW.as_secs() / 60,
                    wait.as_secs().div_ceil(60)
                ),
            ));
        }
        Ok(())
    }

    pub fn failed(&self) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push_back(Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_is_stored_as_argon2id_and_verified() {
        let d = tempfile::tempdir().unwrap();
        let paths = Paths::resolve(Some(d.path().join("etc")), Some(d.path().join("var")));
        assert_eq!(verify(&paths, "x").unwrap_err().code, "ui.no_password");
        assert_eq!(set(&paths, "short").unwrap_err().code, "ui.password_too_short");
        set(&paths, "correct horse battery").unwrap();
        let stored = std::fs::read_to_string(file(&paths)).unwrap();
        assert!(stored.starts_with("$argon2id$") && !stored.contains("horse"), "{stored}");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(file(&paths)).unwrap().permissions().mode() & 0o777, 0o600);
        assert!(verify(&paths, "correct horse battery").unwrap());
        assert!(!verify(&paths, "correct horse battery!").unwrap());
        assert!(remove(&paths).unwrap() && !is_set(&paths));

        let t = Throttle::default();
        for _ in 0..MAX_FAILURES {
            t.check().unwrap();
            t.failed();
        }
        assert_eq!(t.check().unwrap_err().code, "ui.too_many_attempts");
    }
}
