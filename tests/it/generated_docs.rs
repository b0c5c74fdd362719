//! The committed completions and man pages must match the clap definition. Regenerate
//! with `HAL0_BLESS=1 cargo test --test it generated_docs`.

#[test]
fn completions_and_man_pages_are_current() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var_os("HAL0_BLESS").is_some();
    let mut stale = Vec::new();
    let files = hal0::cli::docs::render_all();
    assert!(files.iter().any(|(p, _)| p.ends_with("hal0-bridge-add.1")), "a man page per subcommand");
    for (rel, want) in &files {
        let path = root.join(rel);
        if bless {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, want).unwrap();
        } else if std::fs::read(&path).ok().as_deref() != Some(want.as_slice()) {
            stale.push(rel.display().to_string());
        }
    }
    // No leftover pages for subcommands that no longer exist.
    let known: std::collections::BTreeSet<_> = files.iter().map(|(p, _)| p.clone()).collect();
    for dir in ["man", "completions"] {
        for e in std::fs::read_dir(root.join(dir)).into_iter().flatten() {
            let rel = std::path::Path::new(dir).join(e.unwrap().file_name());
            if !known.contains(&rel) {
                if bless {
                    std::fs::remove_file(root.join(&rel)).unwrap();
                } else {
                    stale.push(format!("{} (no longer generated)", rel.display()));
                }
            }
        }
    }
    assert!(
        stale.is_empty(),
        "generated docs are stale: {stale:?}\nrun: HAL0_BLESS=1 cargo test --test it generated_docs"
    );
}
