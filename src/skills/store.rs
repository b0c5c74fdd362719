//! The two skill directories: hal0's shipped skills (read-only) and the operator's drop-in
//! directory (`/var/lib/hal0/skills`), the only one a bridge write or delete touches.
//!
//! A skill is a directory directly under one of them that holds a `SKILL.md` file; entries
//! whose name starts with `.` are never skills (the swap below uses such names). Nested
//! category directories (`<dir>/<category>/<skill>/SKILL.md`) are not looked into.
//!
//! When a drop-in skill has the name of a shipped one, the shipped skill wins: the drop-in
//! copy is not listed, [`SkillDirs::get`] returns the shipped one, and changing or deleting
//! that name is refused (`bridge.skill_readonly`); the operator removes the copy by hand.
//!
//! Writes are atomic per skill. [`SkillDirs::apply_put`] builds the new directory under a
//! temporary name next to the target (`.<name>.new-<stamp>-<random>`), fsyncs every file and
//! the directory, then swaps: the old directory is renamed to a parked name
//! (`.<name>.old-<stamp>-<random>`), the new one is renamed in, the drop-in directory is
//! fsynced and the parked one removed. A reader sees the old skill, briefly no skill, or the
//! new one, never a mix; the previous version's supporting files go with the parked directory.
//! (An atomic exchange would need `renameat2(RENAME_EXCHANGE)`, which std does not offer.)
//! After a crash, the next change of that name restores a parked directory when the skill is
//! missing and removes leftovers older than [`STALE_SECS`]. Every change holds the drop-in
//! directory's lock (`.lock` in it), so the CLI and the daemon never swap the same name at once.

use super::validate::{SKILL_MD, shown, validate_push};
use crate::base::error::{Error, Kind, Result};
use crate::base::paths::ensure_dir;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// How much of `SKILL.md` the read tools return (bytes, after redaction).
pub const READ_MAX: usize = 16 * 1024;
/// Leftover temporary or parked directories older than this (seconds) are cleaned up.
pub const STALE_SECS: u64 = 600;
/// Most supporting-file names listed per skill, and how deep a hand-placed skill is walked.
const LIST_FILES_MAX: usize = 1000;
const LIST_DEPTH_MAX: usize = 8;

/// Where a skill comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// hal0's own, read-only.
    Shipped,
    /// The operator's drop-in directory.
    Dropin,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Shipped => "shipped",
            Source::Dropin => "dropin",
        }
    }
}

/// One row of `agent_skills_list`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkillInfo {
    pub name: String,
    pub source: Source,
    /// Frontmatter `category`, else `metadata.category`, else `None`.
    pub category: Option<String>,
    /// Frontmatter `description` (`None` when missing or the frontmatter is broken).
    pub description: Option<String>,
    /// Latest modification time of `SKILL.md` and the listed files, RFC 3339 UTC, seconds.
    pub mtime: Option<String>,
    /// Supporting files (relative paths, `/`-separated, sorted; hidden entries skipped).
    pub files: Vec<String>,
    /// The frontmatter cannot be read (missing, not YAML, not a mapping, or `SKILL.md` is
    /// not UTF-8 text).
    pub broken: bool,
}

/// A skill as `agent_skill_get` reads it (before redaction; see [`Skill::view`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skill {
    pub name: String,
    pub source: Source,
    pub category: Option<String>,
    /// The `SKILL.md` text as stored (invalid UTF-8 replaced by U+FFFD).
    pub skill_md: String,
    /// Supporting file names, as in [`SkillInfo::files`].
    pub files: Vec<String>,
}

impl Skill {
    /// The `agent_skill_get` answer: `{name, source, category, skill_md, files, truncated}`
    /// with `skill_md` passed through the log redactor, then cut to [`READ_MAX`] bytes.
    pub fn view(&self) -> Value {
        let red = crate::base::redact::redact(&self.skill_md);
        let (text, truncated) = crate::base::redact::cut(&red, READ_MAX);
        json!({
            "name": self.name,
            "source": self.source,
            "category": self.category,
            "skill_md": text,
            "files": self.files,
            "truncated": truncated,
        })
    }
}

/// The shipped (read-only) and drop-in (writable) skill directories.
#[derive(Debug, Clone)]
pub struct SkillDirs {
    pub shipped: PathBuf,
    pub dropin: PathBuf,
}

/// Could `name` be a directory entry of a skills dir (without escaping it)? Hand-placed
/// drop-in skills may have names the push rule would refuse, so reads use this looser test.
fn plain_dir_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= 255 && !name.starts_with('.') && !name.contains(['/', '\\', '\0'])
}

fn not_found(name: &str) -> Error {
    Error::not_found("bridge.skill_not_found", format!("no skill named {}", shown(name)))
}

fn readonly(name: &str) -> Error {
    Error::new(
        "bridge.skill_readonly",
        Kind::Forbidden,
        format!(
            "{} is a shipped skill and cannot be changed or deleted; use another name for a drop-in skill",
            shown(name)
        ),
    )
}

fn write_err(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::io("fs.write_failed", what, path, e)
}

fn rfc3339(t: SystemTime) -> Option<String> {
    let dt = time::OffsetDateTime::from(t);
    dt.replace_nanosecond(0).ok()?.format(&time::format_description::well_known::Rfc3339).ok()
}

/// Supporting files of the skill at `dir` (relative paths, sorted) and their latest mtime.
fn walk_files(dir: &Path) -> (Vec<String>, Option<SystemTime>) {
    let mut out = Vec::new();
    let mut latest = None;
    let mut stack = vec![(dir.to_path_buf(), String::new(), 0usize)];
    while let Some((path, prefix, depth)) = stack.pop() {
        let Ok(entries) = fs::read_dir(&path) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || (depth == 0 && name == SKILL_MD) {
                continue;
            }
            let rel = format!("{prefix}{name}");
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                if depth + 1 < LIST_DEPTH_MAX {
                    stack.push((entry.path(), format!("{rel}/"), depth + 1));
                }
                continue;
            }
            // Through the directory handle, so a swap mid-walk cannot drop entries; a
            // symlink is followed by path.
            let meta = if kind.is_symlink() { fs::metadata(entry.path()) } else { entry.metadata() };
            if let Ok(meta) = meta
                && meta.is_file()
                && out.len() < LIST_FILES_MAX
            {
                latest = latest.max(meta.modified().ok());
                out.push(rel);
            }
        }
    }
    out.sort();
    (out, latest)
}

/// Seconds since the epoch.
fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// A fresh `<stamp>-<random>` suffix for temporary and parked names.
fn tag() -> Result<String> {
    let mut rnd = [0u8; 6];
    getrandom::fill(&mut rnd).map_err(|e| Error::internal(format!("no randomness: {e}")))?;
    Ok(format!("{}-{}", now_secs(), hex::encode(rnd)))
}

/// The stamp of a `.<name>.<kind>-<stamp>-<random>` entry.
fn stamp_of(rest: &str) -> Option<u64> {
    rest.split('-').next()?.parse().ok()
}

fn sync_dir(dir: &Path) {
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Write a new file with mode 0600 and fsync it.
fn write_new(path: &Path, content: &[u8]) -> std::io::Result<()> {
    let mut f = fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    crate::base::paths::adopt_fd(&f, path.parent().unwrap_or(Path::new(".")))?;
    f.write_all(content)?;
    f.sync_all()
}

impl SkillDirs {
    pub fn new(shipped: impl Into<PathBuf>, dropin: impl Into<PathBuf>) -> SkillDirs {
        SkillDirs { shipped: shipped.into(), dropin: dropin.into() }
    }

    fn dir(&self, source: Source) -> &Path {
        match source {
            Source::Shipped => &self.shipped,
            Source::Dropin => &self.dropin,
        }
    }

    /// The directory of skill `name` in `source`, when it is a skill there.
    fn skill_dir(&self, source: Source, name: &str) -> Option<PathBuf> {
        if !plain_dir_name(name) {
            return None;
        }
        let d = self.dir(source).join(name);
        d.join(SKILL_MD).is_file().then_some(d)
    }

    /// Is `name` one of hal0's shipped skills?
    pub fn is_shipped(&self, name: &str) -> bool {
        self.skill_dir(Source::Shipped, name).is_some()
    }

    /// Is `name` a skill in the drop-in directory (shadowed by a shipped one or not)?
    pub fn dropin_exists(&self, name: &str) -> bool {
        self.skill_dir(Source::Dropin, name).is_some()
    }

    /// Skill names directly under `source`'s directory, sorted.
    fn names(&self, source: Source) -> Vec<String> {
        let Ok(entries) = fs::read_dir(self.dir(source)) else { return Vec::new() };
        let mut names: Vec<String> = entries
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| self.skill_dir(source, n).is_some())
            .collect();
        names.sort();
        names
    }

    fn info(&self, source: Source, name: &str, dir: &Path) -> SkillInfo {
        let md_path = dir.join(SKILL_MD);
        let md = fs::read(&md_path).ok().and_then(|b| String::from_utf8(b).ok());
        let fm = md.as_deref().and_then(|t| super::frontmatter::parse(t).ok());
        let (files, latest) = walk_files(dir);
        let md_time = fs::metadata(&md_path).and_then(|m| m.modified()).ok();
        SkillInfo {
            name: name.to_owned(),
            source,
            category: fm.as_ref().and_then(super::frontmatter::category),
            description: fm.as_ref().and_then(|m| super::frontmatter::text(m, "description")).map(str::to_owned),
            mtime: md_time.max(latest).and_then(rfc3339),
            files,
            broken: fm.is_none(),
        }
    }

    /// Every skill: shipped ones, then drop-in ones whose name no shipped skill has; sorted
    /// by name. A missing directory lists nothing.
    pub fn list(&self) -> Vec<SkillInfo> {
        let shipped = self.names(Source::Shipped);
        let mut out: Vec<SkillInfo> =
            shipped.iter().map(|n| self.info(Source::Shipped, n, &self.shipped.join(n))).collect();
        for n in self.names(Source::Dropin) {
            if shipped.binary_search(&n).is_err() {
                out.push(self.info(Source::Dropin, &n, &self.dropin.join(&n)));
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// Skill `name` (the shipped one when both exist), or `bridge.skill_not_found`.
    pub fn get(&self, name: &str) -> Result<Skill> {
        let (source, dir) = [Source::Shipped, Source::Dropin]
            .into_iter()
            .find_map(|s| self.skill_dir(s, name).map(|d| (s, d)))
            .ok_or_else(|| not_found(name))?;
        let md_path = dir.join(SKILL_MD);
        let bytes = fs::read(&md_path).map_err(|e| Error::io("fs.read_failed", "read", &md_path, e))?;
        let skill_md = String::from_utf8_lossy(&bytes).into_owned();
        let category = super::frontmatter::parse(&skill_md).ok().as_ref().and_then(super::frontmatter::category);
        let (files, _) = walk_files(&dir);
        Ok(Skill { name: name.to_owned(), source, category, skill_md, files })
    }

    /// Clean up after an interrupted change of `name`: a parked directory is restored when
    /// the skill is missing; temporary and parked leftovers older than [`STALE_SECS`] go.
    fn recover(&self, name: &str) -> Result<()> {
        let Ok(entries) = fs::read_dir(&self.dropin) else { return Ok(()) };
        let new_prefix = format!(".{name}.new-");
        let old_prefix = format!(".{name}.old-");
        let target = self.dropin.join(name);
        let now = now_secs();
        let mut parked: Vec<(u64, PathBuf)> = Vec::new();
        for e in entries.flatten() {
            let Ok(n) = e.file_name().into_string() else { continue };
            if let Some(rest) = n.strip_prefix(&new_prefix) {
                if stamp_of(rest).is_none_or(|s| now.saturating_sub(s) > STALE_SECS) {
                    let _ = fs::remove_dir_all(e.path());
                }
            } else if let Some(rest) = n.strip_prefix(&old_prefix)
                && let Some(s) = stamp_of(rest)
                && now.saturating_sub(s) > STALE_SECS
            {
                parked.push((s, e.path()));
            }
        }
        parked.sort();
        if fs::symlink_metadata(&target).is_err()
            && let Some((_, newest)) = parked.pop()
        {
            fs::rename(&newest, &target).map_err(|e| write_err("restore", &target, e))?;
            sync_dir(&self.dropin);
        }
        for (_, p) in parked {
            let _ = fs::remove_dir_all(p);
        }
        Ok(())
    }

    /// Build skill `name` under a temporary name in the drop-in dir; its path.
    fn build(&self, name: &str, tag: &str, skill_md: &str, files: &BTreeMap<String, String>) -> Result<PathBuf> {
        let tmp = self.dropin.join(format!(".{name}.new-{tag}"));
        let result = (|| -> std::io::Result<()> {
            fs::DirBuilder::new().mode(0o700).create(&tmp)?;
            crate::base::paths::adopt(&tmp)?;
            write_new(&tmp.join(SKILL_MD), skill_md.as_bytes())?;
            for (file, content) in files {
                write_new(&tmp.join(file), content.as_bytes())?;
            }
            fs::File::open(&tmp)?.sync_all()
        })();
        match result {
            Ok(()) => Ok(tmp),
            Err(e) => {
                let _ = fs::remove_dir_all(&tmp);
                Err(write_err("write", &tmp, e))
            }
        }
    }

    /// Move the drop-in entry `name` aside to a parked name; its path (`None` if absent).
    fn park(&self, name: &str, tag: &str) -> Result<Option<PathBuf>> {
        let target = self.dropin.join(name);
        if fs::symlink_metadata(&target).is_err() {
            return Ok(None);
        }
        let parked = self.dropin.join(format!(".{name}.old-{tag}"));
        fs::rename(&target, &parked).map_err(|e| write_err("move aside", &target, e))?;
        Ok(Some(parked))
    }

    /// Serialises changes of the drop-in directory across threads and processes (the CLI and
    /// the daemon both carry out approved rows): the lock file `.lock` in it, held until dropped.
    fn write_lock(&self) -> Result<fs::File> {
        crate::base::paths::lock_file(&self.dropin, ".lock")
    }

    /// Write the drop-in skill `name` (create or replace, completely: the previous version's
    /// supporting files are removed). Runs [`validate_push`] again, refuses a shipped name
    /// (`bridge.skill_readonly`), and swaps the directory in atomically (see the module doc).
    /// Directories are 0700 and files 0600.
    pub fn apply_put(&self, name: &str, skill_md: &str, files: &BTreeMap<String, String>) -> Result<()> {
        validate_push(name, skill_md, files)?;
        if self.is_shipped(name) {
            return Err(readonly(name));
        }
        let _guard = self.write_lock()?;
        ensure_dir(&self.dropin)?;
        self.recover(name)?;
        let tag = tag()?;
        let tmp = self.build(name, &tag, skill_md, files)?;
        let target = self.dropin.join(name);
        let parked = match self.park(name, &tag) {
            Ok(p) => p,
            Err(e) => {
                let _ = fs::remove_dir_all(&tmp);
                return Err(e);
            }
        };
        if let Err(e) = fs::rename(&tmp, &target) {
            if let Some(p) = &parked {
                let _ = fs::rename(p, &target);
            }
            let _ = fs::remove_dir_all(&tmp);
            sync_dir(&self.dropin);
            return Err(write_err("install", &target, e));
        }
        sync_dir(&self.dropin);
        if let Some(p) = parked
            && let Err(e) = fs::remove_dir_all(&p)
        {
            tracing::warn!(path = %p.display(), error = %e, "could not remove the previous version of a skill");
        }
        Ok(())
    }

    /// Remove the drop-in skill `name` (parked, then removed). `bridge.skill_readonly` for a
    /// shipped name, `bridge.skill_not_found` when there is no such drop-in skill.
    pub fn apply_delete(&self, name: &str) -> Result<()> {
        if self.is_shipped(name) {
            return Err(readonly(name));
        }
        let _guard = self.write_lock()?;
        self.recover(name)?;
        if !self.dropin_exists(name) {
            return Err(not_found(name));
        }
        let parked = self.park(name, &tag()?)?;
        sync_dir(&self.dropin);
        if let Some(p) = parked
            && let Err(e) = fs::remove_dir_all(&p)
        {
            tracing::warn!(path = %p.display(), error = %e, "could not remove a deleted skill");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MD: &str = "---\nname: {n}\ndescription: The {n} skill.\nmetadata:\n  category: tools\n---\n# {n}\n";

    fn md(name: &str) -> String {
        MD.replace("{n}", name)
    }

    fn files(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    /// A temp root with `shipped/` and `dropin/`, and hand-placed shipped skills.
    fn setup() -> (tempfile::TempDir, SkillDirs) {
        let root = tempfile::tempdir().unwrap();
        let dirs = SkillDirs::new(root.path().join("shipped"), root.path().join("dropin"));
        place(&dirs.shipped, "web-search", &md("web-search"), &[("ref.md", "r")]);
        place(&dirs.shipped, "broken", "no frontmatter here\n", &[]);
        place(&dirs.shipped, "cat-top", "---\nname: cat-top\ndescription: d\ncategory: top\n---\n", &[]);
        fs::create_dir_all(dirs.shipped.join("not-a-skill")).unwrap();
        fs::create_dir_all(dirs.shipped.join(".hidden")).unwrap();
        fs::write(dirs.shipped.join(".hidden").join(SKILL_MD), md("hidden")).unwrap();
        (root, dirs)
    }

    fn place(dir: &Path, name: &str, skill_md: &str, extra: &[(&str, &str)]) {
        let d = dir.join(name);
        fs::create_dir_all(&d).unwrap();
        fs::write(d.join(SKILL_MD), skill_md).unwrap();
        for (f, c) in extra {
            let p = d.join(f);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, c).unwrap();
        }
    }

    /// Entries of the drop-in dir (to see that no temporary or parked dir is left).
    /// The drop-in dir's entries, less its lock file.
    fn dropin_entries(dirs: &SkillDirs) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(&dirs.dropin)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n != ".lock")
            .collect();
        v.sort();
        v
    }

    #[test]
    fn list_and_get() {
        let (_root, dirs) = setup();
        place(
            &dirs.dropin,
            "mine",
            &md("mine"),
            &[("b.txt", "b"), ("a.md", "a"), ("scripts/run.sh", "x"), (".DS_Store", "")],
        );
        // A drop-in with a shipped name is shadowed.
        place(&dirs.dropin, "web-search", &md("web-search"), &[("evil.md", "e")]);
        let list = dirs.list();
        let names: Vec<(&str, Source)> = list.iter().map(|s| (s.name.as_str(), s.source)).collect();
        assert_eq!(
            names,
            vec![
                ("broken", Source::Shipped),
                ("cat-top", Source::Shipped),
                ("mine", Source::Dropin),
                ("web-search", Source::Shipped)
            ]
        );
        let mine = &list[2];
        assert_eq!(mine.category.as_deref(), Some("tools"));
        assert_eq!(mine.description.as_deref(), Some("The mine skill."));
        assert_eq!(mine.files, vec!["a.md", "b.txt", "scripts/run.sh"]);
        assert!(!mine.broken);
        assert!(mine.mtime.as_deref().is_some_and(|t| t.ends_with('Z') && t.len() == 20), "{:?}", mine.mtime);
        let broken = &list[0];
        assert!(broken.broken);
        assert_eq!((broken.category.clone(), broken.description.clone()), (None, None));
        assert_eq!(list[1].category.as_deref(), Some("top"));
        let ws = &list[3];
        assert_eq!(ws.files, vec!["ref.md"]);
        // JSON shape.
        let v = serde_json::to_value(mine).unwrap();
        assert_eq!(v["source"], "dropin");
        for k in ["name", "source", "category", "description", "mtime", "files", "broken"] {
            assert!(v.get(k).is_some(), "{k}");
        }

        let s = dirs.get("mine").unwrap();
        assert_eq!(s.source, Source::Dropin);
        assert_eq!(s.skill_md, md("mine"));
        assert_eq!(s.category.as_deref(), Some("tools"));
        assert_eq!(s.files, vec!["a.md", "b.txt", "scripts/run.sh"]);
        let s = dirs.get("web-search").unwrap();
        assert_eq!(s.source, Source::Shipped);
        assert_eq!(s.files, vec!["ref.md"]);
        for missing in ["nope", "not-a-skill", ".hidden", "../shipped/web-search", "", "a/b"] {
            let e = dirs.get(missing).unwrap_err();
            assert_eq!((e.code, e.status()), ("bridge.skill_not_found", 404), "{missing}");
        }
        assert!(dirs.is_shipped("web-search"));
        assert!(!dirs.is_shipped("mine"));
        assert!(!dirs.is_shipped("not-a-skill"));
    }

    #[test]
    fn missing_dirs_list_nothing() {
        let root = tempfile::tempdir().unwrap();
        let dirs = SkillDirs::new(root.path().join("a"), root.path().join("b"));
        assert!(dirs.list().is_empty());
        assert_eq!(dirs.get("x").unwrap_err().code, "bridge.skill_not_found");
    }

    #[test]
    fn view_redacts_and_cuts() {
        let long = format!("{}\nHF_TOKEN=...\n{}", md("big"), "word ".repeat(5000));
        let s = Skill { name: "big".into(), source: Source::Dropin, category: None, skill_md: long, files: vec![] };
        let v = s.view();
        let text = v["skill_md"].as_str().unwrap();
        assert!(text.contains(&format!("HF_TOKEN={}", crate::base::redact::MASK)));
        assert!(text.len() <= READ_MAX);
        assert_eq!(v["truncated"], true);
        let small = Skill { skill_md: md("big"), ..s };
        assert_eq!(small.view()["truncated"], false);
        assert_eq!(small.view()["skill_md"], md("big"));
    }

    #[test]
    fn put_creates_and_replaces_completely() {
        let (_root, dirs) = setup();
        dirs.apply_put("new-skill", &md("new-skill"), &files(&[("a.md", "A1"), ("b.md", "B1")])).unwrap();
        let s = dirs.get("new-skill").unwrap();
        assert_eq!((s.source, s.files.clone()), (Source::Dropin, vec!["a.md".to_string(), "b.md".to_string()]));
        assert_eq!(fs::read_to_string(dirs.dropin.join("new-skill/a.md")).unwrap(), "A1");
        // Modes: dirs 0700, files 0600.
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dirs.dropin), 0o700);
        assert_eq!(mode(&dirs.dropin.join("new-skill")), 0o700);
        assert_eq!(mode(&dirs.dropin.join("new-skill/SKILL.md")), 0o600);
        assert_eq!(mode(&dirs.dropin.join("new-skill/a.md")), 0o600);

        // A replacement without b.md removes it; SKILL.md alone when no files.
        let md2 = format!("{}v2\n", md("new-skill"));
        dirs.apply_put("new-skill", &md2, &files(&[("a.md", "A2"), ("c.md", "C2")])).unwrap();
        let s = dirs.get("new-skill").unwrap();
        assert_eq!(s.skill_md, md2);
        assert_eq!(s.files, vec!["a.md", "c.md"]);
        assert_eq!(fs::read_to_string(dirs.dropin.join("new-skill/a.md")).unwrap(), "A2");
        assert!(!dirs.dropin.join("new-skill/b.md").exists());
        dirs.apply_put("new-skill", &md("new-skill"), &BTreeMap::new()).unwrap();
        assert!(dirs.get("new-skill").unwrap().files.is_empty());
        // A hand-added extra file of the old version goes too.
        fs::write(dirs.dropin.join("new-skill/extra.md"), "x").unwrap();
        dirs.apply_put("new-skill", &md("new-skill"), &BTreeMap::new()).unwrap();
        assert!(!dirs.dropin.join("new-skill/extra.md").exists());
        // No temporary or parked directory is left behind.
        assert_eq!(dropin_entries(&dirs), vec!["new-skill"]);
    }

    #[test]
    fn put_validates_and_refuses_shipped() {
        let (_root, dirs) = setup();
        let e = dirs.apply_put("web-search", &md("web-search"), &BTreeMap::new()).unwrap_err();
        assert_eq!((e.code, e.status()), ("bridge.skill_readonly", 403));
        assert!(e.message.contains("'web-search' is a shipped skill"), "{}", e.message);
        let e = dirs.apply_put("Bad", &md("Bad"), &BTreeMap::new()).unwrap_err();
        assert_eq!((e.code, e.status()), ("bridge.skill_invalid", 422));
        let e = dirs.apply_put("ok", &md("ok"), &files(&[("../x", "x")])).unwrap_err();
        assert_eq!(e.code, "bridge.skill_invalid");
        assert!(!dirs.dropin.exists() || dropin_entries(&dirs).is_empty());
        // The shipped skill is untouched.
        assert_eq!(dirs.get("web-search").unwrap().source, Source::Shipped);
    }

    #[test]
    fn delete() {
        let (_root, dirs) = setup();
        dirs.apply_put("gone", &md("gone"), &files(&[("a.md", "a")])).unwrap();
        dirs.apply_put("kept", &md("kept"), &BTreeMap::new()).unwrap();
        dirs.apply_delete("gone").unwrap();
        assert_eq!(dirs.get("gone").unwrap_err().code, "bridge.skill_not_found");
        assert_eq!(dropin_entries(&dirs), vec!["kept"]);
        let e = dirs.apply_delete("gone").unwrap_err();
        assert_eq!((e.code, e.status()), ("bridge.skill_not_found", 404));
        let e = dirs.apply_delete("web-search").unwrap_err();
        assert_eq!((e.code, e.status()), ("bridge.skill_readonly", 403));
        assert!(dirs.shipped.join("web-search/SKILL.md").exists());
        for bad in ["", "..", "../kept", ".kept"] {
            assert_eq!(dirs.apply_delete(bad).unwrap_err().code, "bridge.skill_not_found", "{bad:?}");
        }
        // A hand-placed drop-in skill with a name pushes could not use can still be deleted.
        place(&dirs.dropin, "Hand Made", &md("x"), &[]);
        dirs.apply_delete("Hand Made").unwrap();
        assert_eq!(dropin_entries(&dirs), vec!["kept"]);
    }

    #[test]
    fn recover_after_interruption() {
        let (_root, dirs) = setup();
        dirs.apply_put("s", &md("s"), &files(&[("a.md", "old")])).unwrap();
        // Simulate a crash between parking the old version and renaming the new one in,
        // long ago, with a half-built temporary dir left too.
        let old = now_secs() - STALE_SECS - 10;
        fs::rename(dirs.dropin.join("s"), dirs.dropin.join(format!(".s.old-{old}-abcdef"))).unwrap();
        fs::create_dir(dirs.dropin.join(format!(".s.new-{old}-012345"))).unwrap();
        // A fresh temporary dir (another writer at work) is left alone.
        let fresh = format!(".s.new-{}-999999", now_secs());
        fs::create_dir(dirs.dropin.join(&fresh)).unwrap();
        assert_eq!(dirs.get("s").unwrap_err().code, "bridge.skill_not_found");
        assert!(dirs.list().iter().all(|i| i.name != "s" && !i.name.starts_with('.')));
        // The next change restores the parked version first, then replaces it.
        dirs.apply_put("s", &md("s"), &files(&[("b.md", "new")])).unwrap();
        assert_eq!(dirs.get("s").unwrap().files, vec!["b.md"]);
        assert_eq!(dropin_entries(&dirs), vec![fresh.clone(), "s".to_string()]);
        // A delete of a skill that was parked and never restored: restored, then deleted.
        fs::rename(dirs.dropin.join("s"), dirs.dropin.join(format!(".s.old-{old}-fedcba"))).unwrap();
        dirs.apply_delete("s").unwrap();
        assert_eq!(dropin_entries(&dirs), vec![fresh]);
    }

    #[test]
    fn readers_never_see_a_half_written_file() {
        let (_root, dirs) = setup();
        let big = |tag: &str| -> BTreeMap<String, String> {
            (0..16).map(|i| (format!("f{i:02}.md"), format!("{tag}{}", "x".repeat(2000)))).collect()
        };
        dirs.apply_put("live", &md("live"), &big("A")).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let reader = {
            let dirs = dirs.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut seen = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    // The new version is renamed in only once whole, so a file read is never
                    // partial and SKILL.md is there whenever the skill is. (A reader that opened
                    // the old directory before the swap sees its files go as it is removed.)
                    let Ok(s) = dirs.get("live") else { continue };
                    assert!(s.skill_md.starts_with("---\nname: live\n"));
                    for f in &s.files {
                        if let Ok(c) = fs::read_to_string(dirs.dropin.join("live").join(f)) {
                            assert_eq!(c.len(), 2001, "partial file {f}");
                        }
                    }
                    seen += 1;
                }
                seen
            })
        };
        for i in 0..20 {
            dirs.apply_put("live", &md("live"), &big(if i % 2 == 0 { "B" } else { "A" })).unwrap();
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        reader.join().unwrap();
        assert_eq!(dropin_entries(&dirs), vec!["live"]);
    }
}
