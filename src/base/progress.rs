//! Progress on long waits. A wait that can outlast a client's request timeout
//! (`agent_run_wait`, `agent_run` with `wait_s`, a gated proxied call waiting for a person)
//! runs inside [`Progress::during`], which tells whoever asked how long it has waited, at a
//! steady pace, until the wait ends. Clients that reset their timeout on progress then keep
//! the call open. The MCP glue (`crate::mcp::progress`) builds a [`Progress`] from a request
//! that carried a `progressToken`; everything else waits with [`Progress::none`], a plain await.

use futures::future::BoxFuture;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where progress reports go: one request's `notifications/progress`.
pub trait Listener: Send + Sync {
    /// One report: `progress` seconds waited of at most `total`, and what is awaited.
    fn report(&self, progress: f64, total: f64, message: String) -> BoxFuture<'_, ()>;
}

/// The progress reporting of one request: nobody, or a listener at a pace.
#[derive(Clone, Default)]
pub struct Progress {
    to: Option<(Arc<dyn Listener>, Duration)>,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progress").field("every", &self.to.as_ref().map(|(_, e)| e)).finish()
    }
}

impl Progress {
    /// No one asked: waits report nothing.
    pub fn none() -> Progress {
        Progress { to: None }
    }

    /// Report to `listener` every `every` (at least one second) while a wait runs.
    pub fn to(listener: Arc<dyn Listener>, every: Duration) -> Progress {
        Progress { to: Some((listener, every.max(Duration::from_secs(1)))) }
    }

    /// True when someone listens (the request carried a progress token).
    pub fn wanted(&self) -> bool {
        self.to.is_some()
    }

    /// Await `wait`, which ends by itself within about `bound`; every pace period until it
    /// ends, report the seconds waited so far (strictly increasing) of `bound`, with `what`
    /// as the message. The wait keeps running while a report is delivered, and a report not
    /// delivered within one period is given up: a slow client never holds the wait.
    pub async fn during<T>(&self, bound: Duration, what: &str, wait: impl Future<Output = T>) -> T {
        let Some((listener, every)) = &self.to else {
            return wait.await;
        };
        let start = Instant::now();
        let mut tick = tokio::time::interval_at((start + *every).into(), *every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let total = bound.as_secs_f64();
        let mut last = 0.0;
        tokio::pin!(wait);
        loop {
            tokio::select! {
                biased;
                out = &mut wait => return out,
                _ = tick.tick() => {
                    // Tenths of a second: whole periods apart, so each report is larger.
                    let waited = (start.elapsed().as_secs_f64() * 10.0).floor() / 10.0;
                    if waited > last {
                        last = waited;
                        let msg = format!("{what}: {waited:.0} s of at most {total:.0} s");
                        let report = tokio::time::timeout(*every, listener.report(waited, total, msg));
                        tokio::select! {
                            biased;
                            out = &mut wait => return out,
                            _ = report => {}
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! Real time, one-second pace: counts are checked against what the pace allows (ticks
    //! are at least a period apart), never against how fast the machine is.
    use super::*;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Record(Mutex<Vec<(f64, f64, String)>>);

    impl Listener for Record {
        fn report(&self, progress: f64, total: f64, message: String) -> BoxFuture<'_, ()> {
            self.0.lock().unwrap().push((progress, total, message));
            Box::pin(async {})
        }
    }

    fn sleep_ms(ms: u64) -> tokio::time::Sleep {
        tokio::time::sleep(Duration::from_millis(ms))
    }

    /// A 3.5 s wait at a 1 s pace reports one to three times, each larger, with the bound as
    /// total and the wait named in the message; the wait's value comes back, and nothing is
    /// reported after it ended.
    #[tokio::test]
    async fn reports_at_the_pace_until_the_wait_ends() {
        let rec = Arc::new(Record::default());
        let p = Progress::to(rec.clone(), Duration::from_secs(1));
        let out = p
            .during(Duration::from_secs(30), "waiting for run r", async {
                sleep_ms(3_500).await;
                7
            })
            .await;
        assert_eq!(out, 7);
        let got = rec.0.lock().unwrap().clone();
        assert!((1..=3).contains(&got.len()), "{got:?}");
        assert!(got.windows(2).all(|w| w[1].0 > w[0].0), "{got:?}");
        assert!(got.iter().all(|(p, t, _)| *p >= 1.0 && *t == 30.0), "{got:?}");
        assert!(got[0].2.starts_with("waiting for run r: ") && got[0].2.ends_with(" s of at most 30 s"), "{got:?}");
        sleep_ms(1_500).await;
        assert_eq!(rec.0.lock().unwrap().len(), got.len(), "no report after the wait ended");
    }

    /// A wait shorter than one period reports nothing; no listener is a plain await.
    #[tokio::test]
    async fn short_waits_and_no_listener_report_nothing() {
        let rec = Arc::new(Record::default());
        let p = Progress::to(rec.clone(), Duration::from_secs(5));
        p.during(Duration::from_secs(30), "w", sleep_ms(300)).await;
        assert!(rec.0.lock().unwrap().is_empty());
        assert!(!Progress::none().wanted() && p.wanted());
        assert_eq!(Progress::none().during(Duration::from_secs(1), "w", async { 3 }).await, 3);
    }

    /// A pace under a second is raised to one second: a 1.5 s wait reports at most once.
    #[tokio::test]
    async fn the_pace_is_at_least_one_second() {
        let rec = Arc::new(Record::default());
        let p = Progress::to(rec.clone(), Duration::from_millis(10));
        p.during(Duration::from_secs(30), "w", sleep_ms(1_500)).await;
        assert!(rec.0.lock().unwrap().len() <= 1, "{:?}", rec.0.lock().unwrap());
    }

    /// A listener that never finishes delivering does not hold the wait: its value comes
    /// back (the outer timeout is a liveness bound only).
    #[tokio::test]
    async fn a_stuck_listener_does_not_hold_the_wait() {
        struct Stuck(Mutex<usize>);
        impl Listener for Stuck {
            fn report(&self, _: f64, _: f64, _: String) -> BoxFuture<'_, ()> {
                *self.0.lock().unwrap() += 1;
                Box::pin(futures::future::pending())
            }
        }
        let stuck = Arc::new(Stuck(Mutex::new(0)));
        let p = Progress::to(stuck.clone(), Duration::from_secs(1));
        let out = tokio::time::timeout(
            Duration::from_secs(60),
            p.during(Duration::from_secs(30), "w", async {
                sleep_ms(2_500).await;
                5
            }),
        )
        .await;
        assert_eq!(out.ok(), Some(5));
        assert!(*stuck.0.lock().unwrap() >= 1, "the listener was asked");
    }
}
