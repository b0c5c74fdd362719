//! `KEY=VALUE` env files (`api.env`, a Hermes profile's `.env`): set variables in place,
//! keeping every other line, written atomically with mode 0600. Every edit reads and writes
//! under the file's lock ([`crate::base::paths::with_lock`]), so concurrent edits never lose one.

use crate::base::error::Result;
use crate::base::paths::{ensure_dir, read_optional, with_lock, write_atomic};
use std::path::Path;

/// Set each `(name, value)` in the env file at `path` (creating it), replacing the first
/// line that defines it and dropping later duplicates. Returns whether the file changed.
pub fn set_vars(path: &Path, vars: &[(&str, &str)]) -> Result<bool> {
    ensure_dir(path.parent().unwrap_or(Path::new(".")))?;
    with_lock(path, || set_vars_locked(path, vars))
}

fn set_vars_locked(path: &Path, vars: &[(&str, &str)]) -> Result<bool> {
    let text = read_optional(path)?.unwrap_or_default();
    let mut out = String::new();
    let mut done = vec![false; vars.len()];
    for line in text.lines() {
        let t = line.trim_start();
        let t = t.strip_prefix("export ").unwrap_or(t);
        let name = t.split_once('=').map(|(k, _)| k.trim());
        if let Some(i) = vars.iter().position(|(k, _)| Some(*k) == name) {
            if !done[i] {
                out.push_str(&format!("{}={}\n", vars[i].0, vars[i].1));
                done[i] = true;
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    for (i, (k, v)) in vars.iter().enumerate() {
        if !done[i] {
            out.push_str(&format!("{k}={v}\n"));
        }
    }
    if out == text {
        return Ok(false);
    }
    write_atomic(path, out.as_bytes())?;
    Ok(true)
}

/// Remove every line defining one of `names` (with or without `export `) from the env file
/// at `path`, keeping every other line. A missing file is left missing. Returns whether the
/// file changed; an unchanged file is not rewritten.
pub fn remove_vars(path: &Path, names: &[&str]) -> Result<bool> {
    with_lock(path, || remove_vars_locked(path, names))
}

fn remove_vars_locked(path: &Path, names: &[&str]) -> Result<bool> {
    let Some(text) = read_optional(path)? else {
        return Ok(false);
    };
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let t = line.trim_start();
        let t = t.strip_prefix("export ").unwrap_or(t);
        let name = t.split_once('=').map(|(k, _)| k.trim());
        if name.is_some_and(|n| names.contains(&n)) {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    if out == text {
        return Ok(false);
    }
    write_atomic(path, out.as_bytes())?;
    Ok(true)
}

/// `KEY=VALUE` pairs of an env file; comments, blank lines and `export ` prefixes allowed,
/// one level of matching quotes stripped.
pub fn env_lines(text: &str) -> impl Iterator<Item = (String, String)> + '_ {
    text.lines().filter_map(|l| {
        let l = l.trim();
        if l.is_empty() || l.starts_with('#') {
            return None;
        }
        let l = l.strip_prefix("export ").unwrap_or(l);
        let (k, v) = l.split_once('=')?;
        let v = v.trim();
        let v = ['"', '\''].iter().find_map(|q| v.strip_prefix(*q).and_then(|x| x.strip_suffix(*q))).unwrap_or(v);
        Some((k.trim().to_string(), v.to_string()))
    })
}

/// The value of `name` in the env file at `path`, if set and non-empty.
pub fn get_var(path: &Path, name: &str) -> Result<Option<String>> {
    let text = read_optional(path)?.unwrap_or_default();
    Ok(env_lines(&text).filter(|(k, _)| k == name).map(|(_, v)| v).filter(|v| !v.is_empty()).last())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_in_place_and_keeps_the_rest() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(".env");
        std::fs::write(&p, "# keys\nA=1\nexport B=2\nC=3\nB=dup\n").unwrap();
        assert!(set_vars(&p, &[("B", "new"), ("D", "4")]).unwrap());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "# keys\nA=1\nB=new\nC=3\nD=4\n");
        assert!(!set_vars(&p, &[("B", "new")]).unwrap(), "no change, no write");
        assert_eq!(get_var(&p, "D").unwrap().as_deref(), Some("4"));
        assert_eq!(get_var(&p, "Z").unwrap(), None);
    }

    /// Threads each setting their own variables one at a time (every call a read-modify-write
    /// of the same file): without the file lock some read the text before another's write
    /// landed and wrote it back without that variable.
    #[test]
    fn parallel_edits_lose_nothing() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("api.env");
        std::fs::write(&p, "# keep me\nDROP=1\n").unwrap();
        let (threads, each) = (8, 6);
        std::thread::scope(|s| {
            for t in 0..threads {
                let p = &p;
                s.spawn(move || {
                    for i in 0..each {
                        set_vars(p, &[(&format!("T{t}_{i}"), &format!("v{t}.{i}"))]).unwrap();
                        if t == 0 && i == 0 {
                            remove_vars(p, &["DROP"]).unwrap();
                        }
                    }
                });
            }
        });
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.starts_with("# keep me\n"), "{text}");
        assert_eq!(get_var(&p, "DROP").unwrap(), None);
        let mut missing = vec![];
        for t in 0..threads {
            for i in 0..each {
                if get_var(&p, &format!("T{t}_{i}")).unwrap().as_deref() != Some(format!("v{t}.{i}").as_str()) {
                    missing.push(format!("T{t}_{i}"));
                }
            }
        }
        assert!(missing.is_empty(), "lost {} of {} writes: {missing:?}", missing.len(), threads * each);
    }

    #[test]
    fn removes_every_definition_and_keeps_the_rest() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(".env");
        assert!(!remove_vars(&p, &["A"]).unwrap(), "a missing file stays missing");
        assert!(!p.exists());
        std::fs::write(&p, "# keys\nA=1\nexport B=2\nC=3\nB=dup\nBB=4\n# B=commented\n").unwrap();
        assert!(remove_vars(&p, &["B", "Z"]).unwrap());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "# keys\nA=1\nC=3\nBB=4\n# B=commented\n");
        assert!(!remove_vars(&p, &["B"]).unwrap(), "no change, no write");
        assert_eq!(get_var(&p, "B").unwrap(), None);
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
    }
}
