//! The daemon under soak: `hal0 serve` started on the soak's dirs (on the same port again
//! after each kill, a fresh one only if that port is taken), killed with SIGKILL on a
//! schedule, its RSS sampled per life, and the outage windows recorded so client errors can
//! be told apart (during an outage or outside one).

use super::rng::Rng;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// The daemon is up at this base URL (`http://127.0.0.1:PORT`).
#[derive(Clone, Debug)]
pub struct Up {
    pub base: String,
}

/// One life of the daemon: from its start to the SIGKILL (or the end of the soak).
#[derive(Clone, Debug)]
pub struct Life {
    pub life: u64,
    pub pid: u32,
    pub port: u16,
    /// Spawn to "listening" (store opened, migrations checked, unfinished runs re-followed).
    pub startup_ms: f64,
    pub secs: f64,
    /// (seconds into the life, VmRSS KiB), every `RSS_EVERY`.
    pub rss_kib: Vec<(f64, u64)>,
    /// RssAnon KiB (heap and stacks, without the mapped binary) of the last sample.
    pub anon_kib: u64,
    /// How it ended: `SIGKILL`, `exited <status>` (unexpected) or `running`.
    pub end: String,
    /// SIGKILL sent to process reaped.
    pub reap_ms: f64,
}

/// From the moment the daemon was killed to the moment a new one listened.
#[derive(Clone, Copy, Debug)]
pub struct Outage {
    pub down: Instant,
    pub up: Option<Instant>,
}

pub const RSS_EVERY: Duration = Duration::from_secs(10);
/// After an outage, errors within this much of the restart still count as outage errors
/// (clients notice the new daemon on their next attempt, after their backoff).
pub const GRACE: Duration = Duration::from_secs(5);

pub struct Daemon {
    bin: String,
    cfg: PathBuf,
    state: PathBuf,
    log: Arc<Mutex<std::fs::File>>,
    port: Option<u16>,
    child: Option<(Child, Instant)>,
    pub lives: Vec<Life>,
    pub outages: Arc<Mutex<Vec<Outage>>>,
    tx: watch::Sender<Option<Up>>,
}

/// The VmRSS and RssAnon of `pid` in KiB, `None` once it is gone.
pub fn rss_kib(pid: u32) -> Option<(u64, u64)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<u64> {
        s.lines().find(|l| l.starts_with(name))?.split_whitespace().nth(1)?.parse().ok()
    };
    Some((field("VmRSS:")?, field("RssAnon:")?))
}

impl Daemon {
    pub fn new(bin: &str, cfg: PathBuf, state: PathBuf, log: PathBuf) -> (Daemon, watch::Receiver<Option<Up>>) {
        let (tx, rx) = watch::channel(None);
        let log = Arc::new(Mutex::new(std::fs::File::create(log).expect("create the daemon log")));
        let d = Daemon {
            bin: bin.into(),
            cfg,
            state,
            log,
            port: None,
            child: None,
            lives: Vec::new(),
            outages: Arc::new(Mutex::new(Vec::new())),
            tx,
        };
        (d, rx)
    }

    /// Spawn `hal0 serve` bound to `port` (0: any); the child and its base URL, or why not.
    fn spawn(&self, port: u16, life: u64) -> Result<(Child, String), String> {
        let mut child = Command::new(&self.bin)
            .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
            .env("HAL0_CONFIG_DIR", &self.cfg)
            .env("HAL0_STATE_DIR", &self.state)
            .env("HAL0_LOG", "warn")
            .env_remove("HAL0_MCP_ALLOWED_HOSTS")
            .env_remove("HAL0_MCP_ALLOWED_ORIGINS")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", self.bin))?;
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        let log = self.log.clone();
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.strip_prefix("hal0: listening on ")
                    && let Some(t) = tx.take()
                {
                    let _ = t.send(rest.to_string());
                }
                let mut f = log.lock().unwrap_or_else(|p| p.into_inner());
                let _ = writeln!(f, "[life {life}] {line}");
            }
        });
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(base) => Ok((child, base)),
            Err(_) => {
                let _ = child.kill();
                let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
                Err(format!("hal0 serve on port {port} did not listen within 60 s ({status}); see the daemon log"))
            }
        }
    }

    /// Start the next life and announce it to the clients.
    pub fn start(&mut self) {
        let life = self.lives.len() as u64 + 1;
        let t = Instant::now();
        let (child, base) = match self.port.map(|p| self.spawn(p, life)) {
            Some(Ok(x)) => x,
            // First start, or the old port was taken meanwhile: any free port.
            Some(Err(e)) => {
                eprintln!("soak: restart on the same port failed ({e}); taking a new port");
                self.spawn(0, life).unwrap_or_else(|e| panic!("{e}"))
            }
            None => self.spawn(0, life).unwrap_or_else(|e| panic!("{e}")),
        };
        let startup_ms = t.elapsed().as_secs_f64() * 1000.0;
        let port: u16 = base.rsplit(':').next().and_then(|p| p.parse().ok()).expect("a port in the listening line");
        self.port = Some(port);
        self.lives.push(Life {
            life,
            pid: child.id(),
            port,
            startup_ms,
            secs: 0.0,
            rss_kib: Vec::new(),
            anon_kib: 0,
            end: "running".into(),
            reap_ms: 0.0,
        });
        self.child = Some((child, Instant::now()));
        if let Some(o) = self.outages.lock().unwrap().last_mut() {
            o.up.get_or_insert(Instant::now());
        }
        self.tx.send_replace(Some(Up { base }));
    }

    /// Sample RSS; notice a daemon that died by itself (recorded, then started again).
    pub fn sample(&mut self) {
        let Some((child, born)) = self.child.as_mut() else { return };
        let secs = born.elapsed().as_secs_f64();
        if let Ok(Some(status)) = child.try_wait() {
            let life = self.lives.last_mut().unwrap();
            life.end = format!("exited {status}");
            life.secs = secs;
            eprintln!("soak: hal0 serve (life {}) exited by itself: {status}", life.life);
            self.child = None;
            self.outages.lock().unwrap().push(Outage { down: Instant::now(), up: None });
            self.tx.send_replace(None);
            self.start();
            return;
        }
        if let Some((kib, anon)) = rss_kib(child.id()) {
            let life = self.lives.last_mut().unwrap();
            life.rss_kib.push((secs, kib));
            life.anon_kib = anon;
        }
    }

    /// SIGKILL the running daemon and wait for it to be reaped.
    pub fn kill9(&mut self) {
        let Some((mut child, born)) = self.child.take() else { return };
        if let Some((kib, anon)) = rss_kib(child.id()) {
            let life = self.lives.last_mut().unwrap();
            life.rss_kib.push((born.elapsed().as_secs_f64(), kib));
            life.anon_kib = anon;
        }
        self.outages.lock().unwrap().push(Outage { down: Instant::now(), up: None });
        // std's Child::kill sends SIGKILL on Unix.
        let t = Instant::now();
        let _ = child.kill();
        let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
        self.tx.send_replace(None);
        let life = self.lives.last_mut().unwrap();
        life.reap_ms = t.elapsed().as_secs_f64() * 1000.0;
        life.secs = born.elapsed().as_secs_f64();
        life.end = if status.contains("SIGKILL") || status.contains("signal: 9") {
            "SIGKILL".into()
        } else {
            format!("killed, {status}")
        };
    }
}

/// The schedule: sample RSS every `RSS_EVERY`, SIGKILL every `every` (±25 %), restart after
/// `pause`, until `stop` is set. Runs on its own thread; hands the daemon back at the end
/// (still running, for the checks).
pub fn chaos(mut d: Daemon, every: Duration, pause: Duration, stop: Arc<AtomicBool>, seed: u64) -> Daemon {
    let mut rng = Rng::new(seed);
    let jitter = |rng: &mut Rng| every.mul_f64(0.75 + 0.5 * rng.unit());
    let mut next_kill = Instant::now() + jitter(&mut rng);
    let mut next_sample = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= next_sample {
            d.sample();
            next_sample = now + RSS_EVERY;
        }
        if now >= next_kill {
            d.kill9();
            eprintln!("soak: SIGKILL hal0 serve (life {}) after {:.0} s", d.lives.len(), d.lives.last().unwrap().secs);
            std::thread::sleep(pause);
            d.start();
            next_kill = Instant::now() + jitter(&mut rng);
            next_sample = Instant::now();
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    d
}

/// Whether the call interval [start, end] touched an outage (or its grace after the restart).
pub fn in_outage(outages: &[Outage], start: Instant, end: Instant) -> bool {
    outages.iter().any(|o| {
        let until = o.up.map(|u| u + GRACE).unwrap_or(end + GRACE);
        start <= until && end >= o.down
    })
}
