//! The daemon's log writer: every line goes to stderr redacted, and is also kept in a
//! bounded in-memory ring that `GET /api/logs` (the gated `logs_tail` tool) reads.

use std::collections::VecDeque;
use std::io::Write;
use std::sync::{Mutex, OnceLock};

const KEEP: usize = 1000;

fn ring() -> &'static Mutex<VecDeque<String>> {
    static RING: OnceLock<Mutex<VecDeque<String>>> = OnceLock::new();
    RING.get_or_init(|| Mutex::new(VecDeque::with_capacity(KEEP)))
}

/// The newest `n` lines, oldest first.
pub fn tail(n: usize) -> Vec<String> {
    let r = ring().lock().unwrap_or_else(|p| p.into_inner());
    r.iter().skip(r.len().saturating_sub(n)).cloned().collect()
}

/// A writer for tracing: to stderr, and each line into the ring.
pub struct Tee;

impl Write for Tee {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let raw = String::from_utf8_lossy(buf);
        // What stderr (the journal) gets is redacted too, not only the ring.
        let text = crate::base::redact::redact(&raw);
        {
            let mut r = ring().lock().unwrap_or_else(|p| p.into_inner());
            for line in text.lines().filter(|l| !l.is_empty()) {
                if r.len() == KEEP {
                    r.pop_front();
                }
                r.push_back(line.to_owned());
            }
        }
        std::io::stderr().write_all(text.as_bytes())?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Tee {
    type Writer = Tee;
    fn make_writer(&'a self) -> Tee {
        Tee
    }
}
