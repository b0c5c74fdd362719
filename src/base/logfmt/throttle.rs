//! Warnings that could repeat at every call (a database, a log forwarder or Langfuse that is
//! down): one kind is logged at most once per [`WARN_EVERY`], and the next line says how
//! many were held back.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The same kind of warning is logged at most this often.
pub const WARN_EVERY: Duration = Duration::from_secs(60);

/// Lets a kind of warning through at most once per [`WARN_EVERY`], counting the rest.
#[derive(Default)]
pub struct Throttle {
    last: Mutex<Option<Instant>>,
    held: AtomicU64,
}

impl Throttle {
    /// `Some(n)` when a warning may be logged now (`n`: how many were held back since the
    /// last one); `None` when it is held back.
    pub fn pass(&self) -> Option<u64> {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        if last.is_some_and(|t| now.duration_since(t) < WARN_EVERY) {
            self.held.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        *last = Some(now);
        Some(self.held.swap(0, Ordering::Relaxed))
    }
}

/// The tail of a warning that `n` like it were held back before it.
pub fn held_back(n: u64) -> String {
    if n == 0 { String::new() } else { format!(" ({n} more since the last warning)") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_are_throttled_and_count_what_they_held_back() {
        let t = Throttle::default();
        assert_eq!(t.pass(), Some(0));
        assert_eq!(t.pass(), None);
        assert_eq!(t.pass(), None);
        *t.last.lock().unwrap() = Instant::now().checked_sub(WARN_EVERY);
        assert_eq!(t.pass(), Some(2));
    }
}
