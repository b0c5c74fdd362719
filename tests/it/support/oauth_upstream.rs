//! An OAuth-protected MCP server nobody here wrote: the TypeScript SDK's example
//! `simpleStreamableHttp.js --oauth --oauth-strict` (from `tests/external/setup.sh`), which
//! runs its own demo authorization server (metadata, dynamic registration, an authorize
//! endpoint that approves at once, a token endpoint that checks PKCE and, with `--strict`,
//! the RFC 8707 resource) beside an MCP server that wants its tokens. Its URLs name
//! `localhost`. Its stdout (where it logs each authenticated request with its token) is
//! kept, so a test can learn the token it issued and check that hal0 never shows it.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub struct DemoOauth {
    child: Child,
    pub mcp_port: u16,
    pub auth_port: u16,
    out: Arc<Mutex<String>>,
}

fn script() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(".tools/node/node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js")
}

fn free() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl DemoOauth {
    /// Start it on free ports (`None`: not installed, and CI does not require it).
    pub fn start() -> Option<DemoOauth> {
        let s = script();
        if !s.exists() {
            crate::support::missing_external(s.display(), "run tests/external/setup.sh");
            return None;
        }
        for _ in 0..3 {
            if let Some(d) = DemoOauth::start_on(free(), free()) {
                return Some(d);
            }
        }
        panic!("the TypeScript SDK's OAuth demo server did not start three times");
    }

    /// Start it on these ports (again after [`DemoOauth::stop`]: every token it issued is
    /// forgotten, as a server that revoked them would).
    pub fn start_on(mcp_port: u16, auth_port: u16) -> Option<DemoOauth> {
        let mut child = Command::new("node")
            .arg(script())
            .args(["--oauth", "--oauth-strict"])
            .env("MCP_PORT", mcp_port.to_string())
            .env("MCP_AUTH_PORT", auth_port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn node (simpleStreamableHttp.js)");
        let out = Arc::new(Mutex::new(String::new()));
        for pipe in
            [Box::new(child.stdout.take().unwrap()) as Box<dyn Read + Send>, Box::new(child.stderr.take().unwrap())]
        {
            let buf = out.clone();
            let mut pipe = pipe;
            std::thread::spawn(move || {
                let mut chunk = [0u8; 8192];
                while let Ok(n @ 1..) = pipe.read(&mut chunk) {
                    buf.lock().unwrap().push_str(&String::from_utf8_lossy(&chunk[..n]));
                }
            });
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if child.try_wait().unwrap().is_some() {
                std::thread::sleep(Duration::from_millis(100));
                eprintln!("demo server exited: {}", out.lock().unwrap());
                return None;
            }
            let up = |p: u16| std::net::TcpStream::connect(("127.0.0.1", p)).is_ok();
            if up(mcp_port) && up(auth_port) {
                return Some(DemoOauth { child, mcp_port, auth_port, out });
            }
            assert!(Instant::now() < deadline, "the demo server did not listen: {}", out.lock().unwrap());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn url(&self) -> String {
        format!("http://localhost:{}/mcp", self.mcp_port)
    }

    pub fn issuer(&self) -> String {
        format!("http://localhost:{}/", self.auth_port)
    }

    /// Everything it printed so far.
    pub fn output(&self) -> String {
        self.out.lock().unwrap().clone()
    }

    /// The access tokens it saw on authenticated requests (it logs `token: '<uuid>'`).
    pub fn tokens_seen(&self) -> Vec<String> {
        self.tokens_since(0)
    }

    /// How much it printed so far (a mark for [`DemoOauth::tokens_since`]).
    pub fn mark(&self) -> usize {
        self.out.lock().unwrap().len()
    }

    /// The access tokens it saw on requests logged after `mark`.
    pub fn tokens_since(&self, mark: usize) -> Vec<String> {
        let out = self.output()[mark..].to_string();
        let mut v: Vec<String> = out
            .split("token: '")
            .skip(1)
            .filter_map(|s| s.split('\'').next())
            .filter(|t| t.len() >= 32)
            .map(str::to_string)
            .collect();
        v.sort();
        v.dedup();
        v
    }

    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for DemoOauth {
    fn drop(&mut self) {
        self.stop();
    }
}
