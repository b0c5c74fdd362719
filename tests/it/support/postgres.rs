//! A fresh PostgreSQL database for a test, on the server `tests/external/postgres.sh`
//! starts (`.ci/run` runs it): `HAL0_TEST_DATABASE_URL` names a role that may create
//! databases (default `postgres://hal0:hal0@127.0.0.1:5432/postgres`). Without a reachable
//! server, [`Database::create`] prints "skipped" and returns `None`, so the test returns
//! early; with `HAL0_REQUIRE_EXTERNAL=1` (as in CI) it panics instead. The database is
//! dropped when the handle is.

const DEFAULT: &str = "postgres://hal0:hal0@127.0.0.1:5432/postgres";

pub struct Database {
    admin: String,
    pub name: String,
    /// The URL of the new database (for `[relay].database_url`).
    pub url: String,
}

impl Database {
    pub async fn create() -> Option<Database> {
        let admin = std::env::var("HAL0_TEST_DATABASE_URL").unwrap_or_else(|_| DEFAULT.into());
        let client = match connect(&admin).await {
            Ok(c) => c,
            Err(e) => {
                let what = format!("a PostgreSQL server at {admin} ({e})");
                crate::support::missing_external(what, "run tests/external/postgres.sh");
                return None;
            }
        };
        let mut b = [0u8; 6];
        getrandom::fill(&mut b).unwrap();
        let name = format!("hal0_test_{}", hex::encode(b));
        client.batch_execute(&format!("CREATE DATABASE {name}")).await.unwrap();
        let url = match admin.rsplit_once('/') {
            Some((base, _)) => format!("{base}/{name}"),
            None => panic!("HAL0_TEST_DATABASE_URL must be a URL ending in /DATABASE"),
        };
        Some(Database { admin, name, url })
    }

    /// How hal0 names it in messages: `host:port/database`.
    pub fn shown(&self) -> String {
        let cfg: tokio_postgres::Config = self.url.parse().unwrap();
        let host = match &cfg.get_hosts()[0] {
            tokio_postgres::config::Host::Tcp(h) => h.clone(),
            tokio_postgres::config::Host::Unix(p) => p.display().to_string(),
        };
        format!("{host}:{}/{}", cfg.get_ports().first().copied().unwrap_or(5432), self.name)
    }

    /// Run `sql` on the test database; the rows' first columns as text.
    pub async fn query(&self, sql: &str) -> Vec<String> {
        let c = connect(&self.url).await.unwrap();
        c.query(sql, &[]).await.unwrap().iter().map(|r| r.get::<_, String>(0)).collect()
    }
}

async fn connect(url: &str) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
    let (client, conn) = url.parse::<tokio_postgres::Config>()?.connect(tokio_postgres::NoTls).await?;
    tokio::spawn(conn);
    Ok(client)
}

impl Drop for Database {
    fn drop(&mut self) {
        let (admin, name) = (self.admin.clone(), self.name.clone());
        // Its own runtime: the test's may be shutting down.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async {
                if let Ok(c) = connect(&admin).await {
                    let _ = c.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await;
                }
            });
        })
        .join();
    }
}
