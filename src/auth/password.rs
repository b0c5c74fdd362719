//! The dashboard's box-wide password, for sign-ins without a shell: `hal0 ui passwd` stores
//! it as an argon2id hash (PHC string) in `<config>/ui-password`, mode 0600; `--remove`
//! turns it off. A sign-in with it is the person [`crate::auth::people::OWNER`]; named
//! people have passwords of their own (`hal0 ui user`). Guesses (at any password) are
//! throttled per daemon: each attempt is counted before
//! its password is hashed, and after [`MAX_FAILURES`] not proven right in [`WINDOW`] every
//! password sign-in is refused until the window has passed; one hash runs at a time.

use crate::base::error::{Error, Result};
use crate::base::paths::Paths;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

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
    let hash = crate::auth::people::hash_password(password)?;
    crate::base::paths::write_atomic(&file(paths), format!("{hash}\n").as_bytes())
}

/// Turn password sign-in off; whether a password was set.
pub fn remove(paths: &Paths) -> Result<bool> {
    match std::fs::remove_file(file(paths)) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io("fs.write_failed", "remove", &file(paths), e)),
    }
}

/// The refusal of a password sign-in when no password is set.
fn no_password() -> Error {
    Error::forbidden_code(
        "ui.no_password",
        "password sign-in is off on this box: run `hal0 ui login` there for a link, or `hal0 ui passwd` to set one",
    )
}

/// Whether `password` is the dashboard's (argon2id, constant time); `ui.no_password` when
/// none is set.
pub fn verify(paths: &Paths, password: &str) -> Result<bool> {
    let stored = crate::base::paths::read_optional(&file(paths))?.ok_or_else(no_password)?;
    crate::auth::people::password_matches(&stored, password)
        .map_err(|e| Error::internal(format!("{}: {}", file(paths).display(), e.message)))
}

/// Whether `password` is person `name`'s. A name that is not a person's, or one without
/// a password, is checked against a stand-in hash all the same, so the answer takes as
/// long either way and says only `false`.
pub fn verify_person(store: &crate::store::Store, name: &str, password: &str) -> Result<bool> {
    static STAND_IN: std::sync::LazyLock<Option<String>> =
        std::sync::LazyLock::new(|| crate::auth::people::hash_password("a stand-in password").ok());
    match crate::auth::people::password_hash(store, name) {
        Ok(hash) => crate::auth::people::password_matches(&hash, password),
        Err(e) if e.code == "ui.wrong_password" => {
            if let Some(h) = STAND_IN.as_deref() {
                crate::auth::people::password_matches(h, password)?;
            }
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

/// The password sign-in attempts of the last [`WINDOW`] that were not proven right: each
/// is counted (its slot reserved) *before* its password is hashed, so concurrent guesses
/// beyond [`MAX_FAILURES`] are refused without hashing.
#[derive(Default)]
pub struct Throttle(Mutex<VecDeque<Instant>>);

/// A reserved attempt: it counts as a failure unless [`Attempt::release`]d (a right
/// password, or no hash made), also when the request is dropped while its hash runs.
pub struct Attempt<'a> {
    throttle: &'a Throttle,
    at: Instant,
}

impl Throttle {
    /// Reserve a slot for one attempt; refused (`ui.too_many_attempts`) when
    /// [`MAX_FAILURES`] attempts already count within the window.
    pub fn reserve(&self) -> Result<Attempt<'_>> {
        let mut q = self.0.lock().unwrap_or_else(|p| p.into_inner());
        while q.front().is_some_and(|t| t.elapsed() > WINDOW) {
            q.pop_front();
        }
        if q.len() >= MAX_FAILURES {
            let wait = q.front().map_or(WINDOW, |t| WINDOW.saturating_sub(t.elapsed()));
            return Err(Error::new(
                "ui.too_many_attempts",
                crate::base::error::Kind::TooMany,
                format!(
                    "{MAX_FAILURES} wrong passwords in {} minutes: password sign-in is paused for {} more minutes \
                     (`hal0 ui login` on the box still works)",
                    WINDOW.as_secs() / 60,
                    wait.as_secs().div_ceil(60).max(1)
                ),
            ));
        }
        let at = Instant::now();
        q.push_back(at);
        Ok(Attempt { throttle: self, at })
    }
}

impl Attempt<'_> {
    /// The attempt does not count (the password was right, or nothing was hashed).
    pub fn release(self) {
        let mut q = self.throttle.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = q.iter().position(|t| *t == self.at) {
            q.remove(i);
        }
    }
}

/// Password hashes running at once: one (an argon2id hash holds 19 MiB while it runs).
static HASHING: std::sync::LazyLock<std::sync::Arc<tokio::sync::Semaphore>> =
    std::sync::LazyLock::new(|| std::sync::Arc::new(tokio::sync::Semaphore::new(1)));

/// Check a sign-in password with `check` (the box's or a person's): `Ok` when it is right.
/// The attempt is counted in `throttle` before anything is hashed (`ui.too_many_attempts`
/// past the limit), and hashed one at a time (off the async threads); a wrong one is
/// `ui.wrong_password` and stays counted.
pub async fn attempt(throttle: &Throttle, check: impl FnOnce() -> Result<bool> + Send + 'static) -> Result<()> {
    let attempt = throttle.reserve()?;
    let permit = HASHING.clone().acquire_owned().await.map_err(|e| Error::internal(format!("hashing: {e}")))?;
    // The permit goes with the hash: a request dropped mid-hash still holds it until done.
    let right = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        check()
    })
    .await
    .map_err(|e| Error::internal(format!("the password check stopped: {e}")))?;
    match right {
        Ok(true) => {
            attempt.release();
            Ok(())
        }
        Ok(false) => Err(Error::unauthorized("ui.wrong_password", "that is not the password")),
        Err(e) => {
            attempt.release();
            Err(e)
        }
    }
}

/// [`attempt`] with the box-wide password; `ui.no_password` (not counted) when none is set.
pub async fn attempt_box(throttle: &Throttle, paths: &Paths, password: String) -> Result<()> {
    if !is_set(paths) {
        return Err(no_password());
    }
    let paths = paths.clone();
    attempt(throttle, move || verify(&paths, &password)).await
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
    }

    /// Attempts are counted before any hash: past the limit the next is refused at once; a
    /// dropped attempt (its request gone mid-hash) still counts; a released one does not.
    #[test]
    fn attempts_are_counted_before_they_are_hashed() {
        let t = Throttle::default();
        let right = t.reserve().unwrap();
        let held: Vec<_> = (1..MAX_FAILURES).map(|_| t.reserve().unwrap()).collect();
        assert_eq!(t.reserve().err().unwrap().code, "ui.too_many_attempts", "all slots are in flight");
        right.release();
        drop(held);
        // Never released (its request went away mid-hash): it stays counted.
        let _unreleased = t.reserve().unwrap();
        assert_eq!(t.reserve().err().unwrap().code, "ui.too_many_attempts");
    }

    /// A wrong password stays counted, a right one does not; no password set is
    /// `ui.no_password` and not counted.
    #[tokio::test]
    async fn an_attempt_is_counted_unless_the_password_was_right() {
        let d = tempfile::tempdir().unwrap();
        let paths = Paths::resolve(Some(d.path().join("etc")), Some(d.path().join("var")));
        let t = Throttle::default();
        assert_eq!(attempt_box(&t, &paths, "x".into()).await.unwrap_err().code, "ui.no_password");
        set(&paths, "correct horse battery").unwrap();
        attempt_box(&t, &paths, "correct horse battery".into()).await.unwrap();
        assert_eq!(attempt_box(&t, &paths, "wrong".into()).await.unwrap_err().code, "ui.wrong_password");
        assert_eq!(t.0.lock().unwrap().len(), 1);
    }
}
