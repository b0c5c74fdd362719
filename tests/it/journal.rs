//! The daemon's log under systemd: when stderr is the journal stream (`JOURNAL_STREAM`
//! names stderr's device and inode, as systemd sets it), each line starts with its syslog
//! priority and no timestamp; a line written during a request carries the request's id,
//! which the response returns; and a key in what is logged is redacted.

use crate::support::*;
use std::os::unix::fs::MetadataExt;
use std::process::Stdio;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn journal_lines_carry_priority_and_request_id_and_no_key() {
    let env = Env::new();
    env.ok(&["auth", "rotate", "admin", "--yes"]);
    let log = env.dir.path().join("journal.log");
    let file = std::fs::File::create(&log).unwrap();
    let m = file.metadata().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = env
        .cmd(&["serve", "--bind", &format!("127.0.0.1:{port}")])
        .env("HAL0_LOG", "info")
        .env("JOURNAL_STREAM", format!("{}:{}", m.dev(), m.ino()))
        .stdout(Stdio::null())
        .stderr(file)
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let up =
        eventually(Duration::from_secs(30), async || http.get(format!("{base}/api/health")).send().await.is_ok()).await;
    assert!(up, "hal0 serve did not start: {}", std::fs::read_to_string(&log).unwrap());

    // A refused call whose path carries a GitHub token: the refusal is logged at info.
    let token = format!("ghp_{}", "A1b2C3d4E5".repeat(4));
    let resp = http
        .get(format!("{base}/api/runs/{token}"))
        .header("x-request-id", "ci-job-17.step-3")
        .bearer_auth("hal0_bk_not-a-key")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    assert_eq!(resp.headers()["x-request-id"], "ci-job-17.step-3");
    // A request without an id gets one made here.
    let resp = http.get(format!("{base}/api/health")).send().await.unwrap();
    assert!(resp.headers().get("x-request-id").is_some_and(|v| v.len() > 8));

    let found = eventually(Duration::from_secs(10), async || {
        std::fs::read_to_string(&log).unwrap().contains("ci-job-17.step-3")
    })
    .await;
    let _ = child.kill();
    let _ = child.wait();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(found, "{text}");
    let refused = text.lines().find(|l| l.contains("ci-job-17.step-3")).unwrap();
    assert!(
        refused.starts_with("<6>") && refused.contains("req{id=ci-job-17.step-3}") && refused.contains("refused"),
        "{refused}"
    );
    // The path was logged, its token redacted.
    assert!(refused.contains("/api/runs/") && !refused.contains("A1b2C3d4E5A1b2"), "{refused}");
    assert!(!text.contains(&token), "a key reached the journal: {text}");
    for line in text.lines().filter(|l| !l.starts_with("hal0: ")) {
        // `<N>` then the level, no timestamp: journald stamps the entry itself.
        let rest = line.get(3..).unwrap_or_default();
        assert!(line.starts_with('<') && line.as_bytes()[2] == b'>', "{line}");
        assert!(
            ["INFO", "WARN", "ERROR", "DEBUG", " INFO", " WARN"]
                .iter()
                .any(|l| rest.trim_start().starts_with(l.trim())),
            "{line}"
        );
    }
}
