//! How the daemon's log lines look. On a terminal or in a file: tracing's usual lines with
//! a timestamp. Under systemd, when stderr is the journal (`JOURNAL_STREAM` names stderr's
//! device and inode, as systemd documents): no timestamp (journald stamps each entry) and a
//! `<N>` syslog priority in front, which journald turns into the entry's level, so
//! `journalctl -u hal0 -p warning` shows warnings and errors only. A line written inside a
//! request carries its id (`req{id=…}`, see `server::request_id`). Keys never reach either:
//! every line passes the redactor first (`logbuf::Tee`).

pub mod throttle;

use std::fmt;
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// True when stderr is the journal stream systemd connected (`JOURNAL_STREAM=dev:ino`).
pub fn stderr_is_journal() -> bool {
    let Some(v) = std::env::var_os("JOURNAL_STREAM") else { return false };
    let Ok(st) = rustix::fs::fstat(std::io::stderr()) else { return false };
    v.to_str() == Some(&format!("{}:{}", st.st_dev, st.st_ino))
}

/// The syslog priority journald reads from a line's `<N>` prefix.
pub fn priority(level: &Level) -> u8 {
    match *level {
        Level::ERROR => 3,
        Level::WARN => 4,
        Level::INFO => 6,
        _ => 7,
    }
}

/// An event format that puts the event's `<N>` priority before what `F` writes.
pub struct Prioritized<F>(pub F);

impl<S, N, F> FormatEvent<S, N> for Prioritized<F>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    F: FormatEvent<S, N>,
{
    fn format_event(&self, ctx: &FmtContext<'_, S, N>, mut w: Writer<'_>, event: &Event<'_>) -> fmt::Result {
        write!(w, "<{}>", priority(event.metadata().level()))?;
        self.0.format_event(ctx, w, event)
    }
}

/// Set up the daemon's logging (filter from `HAL0_LOG`, default `info,rmcp=warn`).
pub fn init() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("HAL0_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,rmcp=warn"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(crate::base::logbuf::Tee);
    let _ = if stderr_is_journal() {
        builder
            .with_ansi(false)
            .event_format(Prioritized(tracing_subscriber::fmt::format().without_time().with_ansi(false)))
            .try_init()
    } else {
        builder.with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())).try_init()
    };
}
