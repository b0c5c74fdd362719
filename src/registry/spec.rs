//! Install specs: what `hal0 mcp install SPEC` accepts, and the record each one becomes.
//!
//! `oci://REF`, `npm:PKG`/`npx:PKG`, `uvx:PKG`/`uv:PKG`, `git+https://…`, an http(s) URL
//! ending in `.json` (a manifest, fetched behind the SSRF guard), or any other http(s) URL
//! (a streamable-http endpoint; `…/sse` is an SSE endpoint).
//!
//! A package or image name starts with a letter or a digit (an npm scope's `@` aside), so
//! no spec reaches `npx`, `uvx` or `docker run` as an option or a path; the argv of `npx`
//! and `docker run` also ends their options with `--` before the name.

use super::record::{Record, Transport};
use crate::base::error::{Error, Result};
use crate::base::ssrf::{self, FetchLimits, Guard};

const ACCEPTED: &str = "accepted: oci://IMAGE, npm:PACKAGE (or npx:), uvx:PACKAGE (or uv:), \
                        git+https://HOST/REPO, an http(s)://…/manifest.json URL, or a streamable-http/sse endpoint URL";

/// What kind of spec it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Oci,
    Npm,
    Uvx,
    Git,
    Manifest,
    Endpoint,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Oci => "oci",
            Kind::Npm => "npm",
            Kind::Uvx => "uvx",
            Kind::Git => "git",
            Kind::Manifest => "manifest",
            Kind::Endpoint => "http",
        }
    }
}

/// A parsed spec (no network yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    pub kind: Kind,
    pub spec: String,
    /// The package, image, repository or URL the spec names.
    pub target: String,
    /// A human name derived from the spec.
    pub name: String,
    /// The release an `npm:` / `uvx:` spec asks for (`PKG@VERSION`).
    pub version: Option<String>,
}

/// A release as a spec may name one: letters, digits, `.`, `-`, `+`, `_`, starting with a
/// letter or a digit.
fn version_ok(v: &str) -> bool {
    !v.is_empty()
        && v.len() <= 64
        && v.starts_with(|c: char| c.is_ascii_alphanumeric())
        && v.chars().all(|c| c.is_ascii_alphanumeric() || ".-+_".contains(c))
}

fn invalid(msg: String) -> Error {
    Error::invalid("mcp.invalid_spec", format!("{msg}; {ACCEPTED}"))
}

/// A package or image that starts with `-` would reach `npx`, `uvx` or `docker run` as an
/// option (`--privileged`, `-v/:/host`), not as a name.
fn option_like(p: &str) -> Error {
    invalid(format!(
        "`{}` starts with `-`, so the command that starts it would read it as an option; package and image \
         names start with a letter, a digit or `@`",
        crate::base::term::safe_line(p)
    ))
}

/// Package and image names start with a letter or a digit (an npm scope's `@` aside), so
/// neither an option nor a path (`.`, `..`, `/…`) passes for one.
fn starts_alnum(p: &str) -> bool {
    p.starts_with(|c: char| c.is_ascii_alphanumeric())
}

fn pkg_ok(p: &str, extra: &[char]) -> bool {
    !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c) || extra.contains(&c))
}

fn check_url(u: &str) -> Result<reqwest::Url> {
    let url = reqwest::Url::parse(u).map_err(|e| invalid(format!("`{u}` is not a valid URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        return Err(invalid(format!("`{u}` is not an http(s) URL with a host")));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid("a URL with credentials in it is refused; put them in [secrets]".into()));
    }
    Ok(url)
}

fn last_segment(s: &str) -> String {
    s.trim_end_matches('/').rsplit('/').next().unwrap_or(s).to_string()
}

/// Parse a spec; errors are `mcp.invalid_spec` and list what is accepted.
pub fn parse(spec: &str) -> Result<Parsed> {
    let spec = spec.trim();
    if spec.is_empty() {
        return Err(invalid("the spec is empty".into()));
    }
    if spec.len() > 2048 {
        return Err(invalid("the spec is longer than 2048 characters".into()));
    }
    let mk = |kind, target: &str, name: String| Parsed {
        kind,
        spec: spec.into(),
        target: target.into(),
        name,
        version: None,
    };
    if let Some(r) = spec.strip_prefix("oci://") {
        if r.starts_with('-') {
            return Err(option_like(r));
        }
        if !pkg_ok(r, &[':', '@']) || !starts_alnum(r) {
            return Err(invalid(format!("`{spec}` is not an OCI image reference")));
        }
        let last = last_segment(r.split('@').next().unwrap_or(r));
        return Ok(mk(Kind::Oci, r, last.split(':').next().unwrap_or(&last).to_string()));
    }
    for (prefix, kind) in [("npm:", Kind::Npm), ("npx:", Kind::Npm), ("uvx:", Kind::Uvx), ("uv:", Kind::Uvx)] {
        if let Some(whole) = spec.strip_prefix(prefix) {
            // `PKG@VERSION` names a release (an npm scope's leading `@` is part of the name).
            let (p, version) = match whole.rfind('@').filter(|&i| i > 0) {
                Some(i) => (&whole[..i], Some(&whole[i + 1..])),
                None => (whole, None),
            };
            if let Some(v) = version.filter(|v| !version_ok(v)) {
                return Err(invalid(format!(
                    "`{}` is not a release of `{p}` (use PKG@1.2.3)",
                    crate::base::term::safe_line(v)
                )));
            }
            let bare = if kind == Kind::Npm { p.strip_prefix('@').unwrap_or(p) } else { p };
            if p.starts_with('-') || bare.starts_with('-') {
                return Err(option_like(p));
            }
            if !pkg_ok(bare, &[]) || !starts_alnum(bare) || (kind == Kind::Npm && p.matches('@').count() > 1) {
                return Err(invalid(format!("`{p}` is not a package name")));
            }
            let name = if kind == Kind::Npm { last_segment(p) } else { p.to_string() };
            return Ok(Parsed { version: version.map(str::to_string), ..mk(kind, p, name) });
        }
    }
    if let Some(u) = spec.strip_prefix("git+") {
        let url = check_url(u)?;
        if url.path().trim_matches('/').is_empty() {
            return Err(invalid(format!("`{spec}` names no repository")));
        }
        let name = last_segment(url.path()).trim_end_matches(".git").to_string();
        return Ok(mk(Kind::Git, u, name));
    }
    if spec.starts_with("http://") || spec.starts_with("https://") {
        let url = check_url(spec)?;
        let path = url.path().trim_end_matches('/');
        if path.ends_with(".json") {
            let file = last_segment(path).trim_end_matches(".json").to_string();
            let name = if file == "manifest" || file.is_empty() {
                url.host_str().unwrap_or("mcp").split('.').next().unwrap_or("mcp").to_string()
            } else {
                file
            };
            return Ok(mk(Kind::Manifest, spec, name));
        }
        // A server named by its address has no name to derive an id from ("127"): the
        // installer is asked for `--id` (an empty name here).
        if matches!(url.host(), Some(url::Host::Ipv4(_) | url::Host::Ipv6(_))) {
            return Ok(mk(Kind::Endpoint, spec, String::new()));
        }
        let host = url.host_str().unwrap_or("mcp");
        let first = host.split('.').find(|l| !matches!(*l, "www" | "mcp" | "api")).unwrap_or(host);
        return Ok(mk(Kind::Endpoint, spec, first.to_string()));
    }
    Err(invalid(format!("`{spec}` is not an install spec")))
}

/// A default id from a name: lower-case, runs of other characters → `-`, at most 64.
pub fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.to_lowercase().chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    while out.contains("--") {
        out = out.replace("--", "-");
    }
    let mut s: String = out.trim_matches('-').chars().take(64).collect();
    s = s.trim_end_matches('-').to_string();
    if s.is_empty() { "mcp".into() } else { s }
}

/// The record a parsed spec becomes (without network: manifests need [`resolve`]).
pub fn record_for(p: &Parsed, id: &str) -> Record {
    let (transport, command, args, url) = match p.kind {
        // `--` ends the options of `docker run` and `npx`, so the name is never read as one
        // (parse refuses names starting with `-` as well). uvx gets the refusal alone.
        Kind::Oci => (
            Transport::Stdio,
            Some("docker"),
            vec!["run".into(), "-i".into(), "--rm".into(), "--".into(), p.target.clone()],
            None,
        ),
        Kind::Npm => (Transport::Stdio, Some("npx"), vec!["-y".into(), "--".into(), p.target.clone()], None),
        Kind::Uvx => (Transport::Stdio, Some("uvx"), vec![p.target.clone()], None),
        Kind::Git => (Transport::Stdio, None, vec![], None),
        Kind::Manifest => (Transport::Stdio, None, vec![], None),
        Kind::Endpoint => {
            let sse = p.target.trim_end_matches('/').ends_with("/sse");
            (if sse { Transport::Sse } else { Transport::StreamableHttp }, None, vec![], Some(p.target.clone()))
        }
    };
    // A server named by its address goes by its id.
    let name = if p.name.is_empty() { id } else { &p.name };
    let mut r = Record::new(id, name, &p.spec, transport);
    r.source_kind = p.kind.as_str().into();
    r.command = command.map(str::to_string);
    r.args = args;
    r.url = url;
    if matches!(p.kind, Kind::Git | Kind::Manifest) {
        r.source_url = Some(p.target.clone());
    }
    r.description = match p.kind {
        Kind::Oci => format!("OCI image {}", p.target),
        Kind::Npm => format!("npm package {}", p.target),
        Kind::Uvx => format!("Python package {} (uvx)", p.target),
        Kind::Git => format!("git repository {}", p.target),
        Kind::Manifest => format!("manifest {}", p.target),
        Kind::Endpoint => format!("endpoint {}", p.target),
    };
    r
}

/// Apply a manifest JSON object onto a record: name, description, transport, url,
/// command/args, and `env` (list of names or object keys → empty `[env]` entries).
pub fn apply_manifest(r: &mut Record, body: &[u8]) -> Result<()> {
    let bad = |m: &str| Error::invalid("mcp.manifest_invalid", format!("the manifest {m}"));
    let v: serde_json::Value = serde_json::from_slice(body).map_err(|_| bad("is not JSON"))?;
    let o = v.as_object().ok_or_else(|| bad("is not a JSON object"))?;
    let s = |k: &str| o.get(k).and_then(|x| x.as_str()).map(str::to_string);
    if let Some(n) = s("name").filter(|n| !n.is_empty() && n.len() <= 128) {
        r.name = n;
    }
    if let Some(d) = s("description") {
        r.description = d.chars().take(1024).collect();
    }
    r.transport = match s("transport").as_deref() {
        None | Some("stdio") => Transport::Stdio,
        Some("streamable-http") | Some("http") => Transport::StreamableHttp,
        Some("sse") => Transport::Sse,
        Some(_) => return Err(bad("names a transport other than stdio, streamable-http or sse")),
    };
    if r.transport != Transport::Stdio {
        let u = s("url").ok_or_else(|| bad("names an http transport but no `url`"))?;
        check_url(&u).map_err(|_| bad("has a `url` that is not an http(s) URL"))?;
        r.url = Some(u);
    }
    r.command = s("command");
    r.args = o
        .get("args")
        .and_then(|a| a.as_array())
        .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    let names: Vec<String> = match o.get("env") {
        Some(serde_json::Value::Array(a)) => a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect(),
        Some(serde_json::Value::Object(m)) => m.keys().cloned().collect(),
        _ => vec![],
    };
    for n in names {
        if !n.is_empty() && n.len() <= 128 && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            r.env.insert(n, String::new());
        }
    }
    Ok(())
}

/// Parse a spec and build its record; a manifest URL is fetched through `guard`.
pub async fn resolve(spec: &str, id: Option<&str>, guard: &Guard) -> Result<Record> {
    let p = parse(spec)?;
    let id = match id {
        Some(id) => id.to_string(),
        None if p.name.is_empty() => {
            return Err(Error::invalid(
                "mcp.id_required",
                format!(
                    "`{spec}` names its server by address, so hal0 cannot derive an id from it: give one (hal0 mcp install {spec} --id NAME, or \"id\" in the request)"
                ),
            ));
        }
        None => slug(&p.name),
    };
    let mut r = record_for(&p, &id);
    if p.kind == Kind::Manifest {
        let (final_url, body) = ssrf::fetch(guard, &p.target, FetchLimits::default()).await?;
        apply_manifest(&mut r, &body)?;
        r.source_url = Some(final_url.to_string());
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_shape() {
        let p = parse("oci://ghcr.io/example/some-mcp-server:latest").unwrap();
        assert_eq!((p.kind, p.name.as_str()), (Kind::Oci, "some-mcp-server"));
        let p = parse("npm:@example/some-mcp-server").unwrap();
        assert_eq!(
            (p.kind, p.name.as_str(), p.target.as_str()),
            (Kind::Npm, "some-mcp-server", "@example/some-mcp-server")
        );
        assert_eq!(parse("npx:foo").unwrap().kind, Kind::Npm);
        let p = parse("uvx:some-mcp-server").unwrap();
        assert_eq!((p.kind, p.name.as_str()), (Kind::Uvx, "some-mcp-server"));
        assert_eq!(parse("uv:x").unwrap().kind, Kind::Uvx);
        let p = parse("git+https://github.com/example/some-mcp-server.git").unwrap();
        assert_eq!((p.kind, p.name.as_str()), (Kind::Git, "some-mcp-server"));
        let p = parse("https://some-mcp-server.example.com/mcp").unwrap();
        assert_eq!((p.kind, p.name.as_str()), (Kind::Endpoint, "some-mcp-server"));
        let p = parse("http://mcp.tools.example/manifest.json").unwrap();
        assert_eq!((p.kind, p.name.as_str()), (Kind::Manifest, "mcp"));
        let p = parse("https://example.com/servers/weather.json").unwrap();
        assert_eq!((p.kind, p.name.as_str()), (Kind::Manifest, "weather"));
        let r = record_for(&parse("http://127.0.0.1:9000/sse").unwrap(), "x");
        assert_eq!(r.transport, Transport::Sse);
    }

    #[test]
    fn bad_specs_say_what_is_accepted() {
        for bad in
            ["", "ftp://x/y", "npm:", "npm:has space", "uvx:a;b", "git+ssh://x/y", "oci://", "whatever", "https://"]
        {
            let e = parse(bad).unwrap_err();
            assert_eq!(e.code, "mcp.invalid_spec", "{bad}");
            assert!(e.message.contains("accepted: oci://"), "{bad}: {}", e.message);
        }
        assert!(parse("http://user:pw@h/mcp").unwrap_err().message.contains("credentials"));
    }

    #[test]
    fn paths_are_no_package_names() {
        for bad in
            ["npm:./x", "npm:../..", "npm:/etc", "npm:.bin", "npm:_x", "uvx:./x", "uvx:/tmp/x", "oci://./x", "oci:///x"]
        {
            assert_eq!(parse(bad).unwrap_err().code, "mcp.invalid_spec", "{bad}");
        }
        assert_eq!(parse("npm:0x").unwrap().target, "0x");
    }

    #[test]
    fn names_starting_with_a_dash_are_refused() {
        for bad in [
            "oci://--privileged",
            "oci://-v/:/host",
            "oci://-",
            "npm:--yes",
            "npm:-p",
            "npm:@-scope/x",
            "npx:--call=id",
            "uvx:--from",
            "uvx:-w",
            "uv:--with=evil",
        ] {
            let e = parse(bad).unwrap_err();
            assert_eq!(e.code, "mcp.invalid_spec", "{bad}");
            assert!(e.message.contains("starts with `-`"), "{bad}: {}", e.message);
        }
    }

    /// The argv each stdio kind becomes: `--` before the name where the tool takes it.
    #[test]
    fn stdio_argv_ends_options_before_the_name() {
        let argv = |spec: &str| {
            let r = record_for(&parse(spec).unwrap(), "x");
            std::iter::once(r.command.unwrap()).chain(r.args).collect::<Vec<_>>()
        };
        assert_eq!(argv("oci://ghcr.io/a/b:1"), ["docker", "run", "-i", "--rm", "--", "ghcr.io/a/b:1"]);
        assert_eq!(argv("npm:@scope/pkg"), ["npx", "-y", "--", "@scope/pkg"]);
        assert_eq!(argv("uvx:some-server"), ["uvx", "some-server"]);
    }

    /// Specs: the documented shapes with arbitrary tails, and arbitrary text.
    fn any_spec() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let prefix = prop_oneof![
            Just(""),
            Just("oci://"),
            Just("npm:"),
            Just("npx:"),
            Just("npm:@"),
            Just("uvx:"),
            Just("uv:"),
            Just("git+https://"),
            Just("https://"),
            Just("http://"),
            Just(" npm:-"),
        ];
        let tail = prop_oneof![
            "[a-z0-9@:/._-]{0,40}",
            "[-a-z0-9@:/._ ;&|$`'\"?#=%\\\\]{0,40}",
            any::<String>(),
            "[a-z]{1,12}\\.[a-z]{2,6}/[a-z/._-]{0,20}(\\.json|/sse)?",
        ];
        (prefix, tail).prop_map(|(p, t)| format!("{p}{t}"))
    }

    proptest::proptest! {
        #![proptest_config(crate::base::prop::config(2048))]

        /// Parsing never panics; what parses parses again to the same spec; no package or
        /// image name starts with `-`; the argv of a stdio record holds the name as one
        /// argument after the options.
        #[test]
        fn parse_round_trips_and_never_yields_an_option(spec in any_spec()) {
            let Ok(p) = parse(&spec) else { return Ok(()) };
            proptest::prop_assert_eq!(parse(&p.spec).unwrap(), p.clone());
            proptest::prop_assert!(!p.target.starts_with(['-', '.', '/']), "{:?}", p);
            proptest::prop_assert!(!p.target.is_empty(), "{:?}", p);
            let r = record_for(&p, "x");
            let argv: Vec<&str> = r.args.iter().map(String::as_str).collect();
            match p.kind {
                Kind::Oci => proptest::prop_assert_eq!(argv, ["run", "-i", "--rm", "--", p.target.as_str()]),
                Kind::Npm => proptest::prop_assert_eq!(argv, ["-y", "--", p.target.as_str()]),
                Kind::Uvx => proptest::prop_assert_eq!(argv, [p.target.as_str()]),
                _ => proptest::prop_assert!(argv.is_empty()),
            }
            for a in &r.args {
                proptest::prop_assert!(!a.chars().any(|c| c.is_whitespace() || c.is_control()), "{a:?}");
            }
        }
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("Some MCP Server!"), "some-mcp-server");
        assert_eq!(slug("..."), "mcp");
        assert_eq!(slug(&"a".repeat(80)).len(), 64);
    }

    #[test]
    fn manifest_fields() {
        let mut r = record_for(&parse("https://h.example/m.json").unwrap(), "m");
        apply_manifest(
            &mut r,
            br#"{"name":"Weather","transport":"streamable-http","url":"https://w.example/mcp","env":["API_BASE"]}"#,
        )
        .unwrap();
        assert_eq!(r.transport, Transport::StreamableHttp);
        assert_eq!(r.url.as_deref(), Some("https://w.example/mcp"));
        assert_eq!(r.env.get("API_BASE").map(String::as_str), Some(""));
        assert_eq!(apply_manifest(&mut r, b"[1]").unwrap_err().code, "mcp.manifest_invalid");
        assert!(apply_manifest(&mut r, br#"{"transport":"sse"}"#).is_err());
    }

    #[tokio::test]
    async fn manifest_is_fetched_through_the_guard() {
        use axum::{Router, routing::get};
        let app = Router::new().route(
            "/weather.json",
            get(|| async { r#"{"name":"Weather","transport":"sse","url":"http://w.example/sse","env":{"BASE":"x"}}"# }),
        );
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
        let url = format!("http://{addr}/weather.json");
        let guard = Guard::test_only_with(vec![], vec![addr.ip()]);
        let r = resolve(&url, None, &guard).await.unwrap();
        assert_eq!((r.id.as_str(), r.name.as_str(), r.transport), ("weather", "Weather", Transport::Sse));
        assert_eq!(r.url.as_deref(), Some("http://w.example/sse"));
        assert_eq!(r.source_url.as_deref(), Some(url.as_str()));
        assert!(r.env.contains_key("BASE") && r.env["BASE"].is_empty());
        let e = resolve(&url, None, &Guard::system()).await.unwrap_err();
        assert_eq!(e.code, "mcp.ssrf_refused");
    }
}
