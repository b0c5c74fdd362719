//! The challenges a daemon handed out for passkey ceremonies: random, single-use, bound to
//! what they were for (a sign-in, or a registration by one session), gone after
//! [`LIFETIME`]. At most [`MAX_OPEN`] wait at once (the oldest is dropped first), so
//! anonymous sign-in starts cannot grow the daemon's memory.

use crate::base::error::{Error, Result};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub const LIFETIME: Duration = Duration::from_secs(300);
pub const MAX_OPEN: usize = 512;

/// What a challenge may be answered for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Purpose {
    SignIn,
    /// Registering a passkey for the person of dashboard session `session`.
    Register {
        session: String,
    },
}

/// An open challenge: what it is for, its bytes, when it was issued.
type Open = (Purpose, Vec<u8>, Instant);

#[derive(Default)]
pub struct Challenges(Mutex<HashMap<String, Open>>);

impl Challenges {
    /// A new challenge for `purpose`: its id and its 32 random bytes.
    pub fn issue(&self, purpose: Purpose) -> Result<(String, Vec<u8>)> {
        let mut bytes = vec![0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| Error::internal(format!("no randomness: {e}")))?;
        let id = crate::base::token::random_base62(22)?;
        let mut open = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        open.retain(|_, (_, _, at)| now.duration_since(*at) < LIFETIME);
        while open.len() >= MAX_OPEN {
            let Some(oldest) = open.iter().min_by_key(|(_, (_, _, at))| *at).map(|(k, _)| k.clone()) else { break };
            open.remove(&oldest);
        }
        open.insert(id.clone(), (purpose, bytes.clone(), now));
        Ok((id, bytes))
    }

    /// The bytes of challenge `id` for `purpose`, used up; `ui.passkey_expired` when it is
    /// unknown, used, expired or was issued for something else.
    pub fn take(&self, id: &str, purpose: &Purpose) -> Result<Vec<u8>> {
        let mut open = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match open.remove(id) {
            Some((p, bytes, at)) if p == *purpose && at.elapsed() < LIFETIME => Ok(bytes),
            _ => Err(Error::unauthorized(
                "ui.passkey_expired",
                "this passkey request is unknown, used or expired: start again (the page asks anew)",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_challenge_is_used_once_and_only_for_its_purpose() {
        let c = Challenges::default();
        let (id, bytes) = c.issue(Purpose::SignIn).unwrap();
        assert_eq!(bytes.len(), 32);
        assert_eq!(c.take(&id, &Purpose::SignIn).unwrap(), bytes);
        assert_eq!(c.take(&id, &Purpose::SignIn).unwrap_err().code, "ui.passkey_expired");
        let (id, _) = c.issue(Purpose::Register { session: "us_a".into() }).unwrap();
        assert!(c.take(&id, &Purpose::Register { session: "us_b".into() }).is_err());
        // Taken by the wrong purpose, it is gone for the right one too.
        assert!(c.take(&id, &Purpose::Register { session: "us_a".into() }).is_err());
        for _ in 0..MAX_OPEN + 10 {
            c.issue(Purpose::SignIn).unwrap();
        }
        assert_eq!(c.0.lock().unwrap().len(), MAX_OPEN);
    }
}
