use super::*;
use crate::tools::testutil::seeded_bank;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[test]
fn root_precedence_env_config_default() {
    let project = Path::new("/work/p");
    let b = Bank::resolve(Some("/env/bank"), Some(Path::new("/cfg")), project);
    assert_eq!(
        (b.root.as_path(), b.source),
        (Path::new("/env/bank"), RootSource::Env)
    );
    let b = Bank::resolve(Some(""), Some(Path::new("/cfg")), project);
    assert_eq!(
        (b.root.as_path(), b.source),
        (Path::new("/cfg"), RootSource::Config)
    );
    let b = Bank::resolve(None, None, project);
    assert_eq!(
        (b.root.as_path(), b.source),
        (Path::new("/work/p/docs"), RootSource::Default)
    );
    // Relative roots resolve against the project root.
    let b = Bank::resolve(None, Some(Path::new("notes/../memory")), project);
    assert_eq!(b.root, Path::new("/work/p/memory"));
    let b = Bank::resolve(Some("bank"), None, project);
    assert_eq!(b.root, Path::new("/work/p/bank"));
    if let Some(home) = std::env::var_os("HOME") {
        let b = Bank::resolve(None, Some(Path::new("~/mb")), project);
        assert_eq!(b.root, PathBuf::from(home).join("mb"));
    }
    assert_eq!(RootSource::Env.to_string(), "MEMORY_BANK_ROOT");
}

#[test]
fn branch_names_map_to_directories() {
    assert_eq!(branch_dir_name("feature/login").unwrap(), "feature-login");
    assert_eq!(branch_dir_name("a/b/c").unwrap(), "a-b-c");
    assert_eq!(
        branch_dir_name("日本語/ブランチ").unwrap(),
        "日本語-ブランチ"
    );
    for bad in ["", "  ", ".", "..", "a\\b", "a\nb", "a\0b"] {
        assert!(branch_dir_name(bad).is_err(), "{bad:?}");
    }
    // "/.." becomes "-..", a plain directory name inside the branches directory.
    assert_eq!(branch_dir_name("x/..").unwrap(), "x-..");
}

#[test]
fn language_parse() {
    assert_eq!(Language::parse("en").unwrap(), Language::En);
    assert_eq!(Language::parse("ja").unwrap(), Language::Ja);
    let e = Language::parse("JA").unwrap_err().to_string();
    assert!(e.contains("'JA'"), "{e}");
}

#[test]
fn paths_that_leave_the_bank_are_refused() {
    let (d, bank) = seeded_bank("main");
    std::fs::write(d.path().join("secret.md"), "secret").unwrap();
    let g = Scope::Global;
    for bad in [
        "../branch-memory-bank/main/notes.md",
        "../../secret.md",
        "sub/../../x.md",
    ] {
        let e = bank.read(g, bad).unwrap_err().to_string();
        assert!(
            e.contains("refused") && e.contains("outside the global memory bank"),
            "{bad}: {e}"
        );
        let e = bank
            .write(g, bad, "x", Language::En)
            .unwrap_err()
            .to_string();
        assert!(e.contains("refused"), "{bad}: {e}");
    }
    // Absolute paths are refused even when they point inside the bank.
    let inside = bank.global_dir().join("notes.md");
    let e = bank
        .read(g, &inside.to_string_lossy())
        .unwrap_err()
        .to_string();
    assert!(e.contains("absolute"), "{e}");
    let e = bank.read(g, ".").unwrap_err().to_string();
    assert!(e.contains("bank directory itself"), "{e}");
    let e = bank
        .write(g, "", "x", Language::En)
        .unwrap_err()
        .to_string();
    assert!(e.contains("empty"), "{e}");
    // Staying inside with ".." is fine.
    assert_eq!(bank.read(g, "sub/../notes.md").unwrap().path, "notes.md");
}

#[cfg(unix)]
#[test]
fn symlinks_leading_out_are_refused_and_inside_ones_followed() {
    let (d, bank) = seeded_bank("main");
    let outside = d.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("secret.md"), "tags: #secret").unwrap();
    let g = bank.global_dir();
    std::os::unix::fs::symlink(&outside, g.join("out")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.md"), g.join("s.md")).unwrap();
    std::os::unix::fs::symlink(g.join("notes.md"), g.join("alias.md")).unwrap();
    for bad in ["out/secret.md", "s.md", "out/new.md"] {
        let e = bank.read(Scope::Global, bad).unwrap_err().to_string();
        assert!(e.contains("refused"), "{bad}: {e}");
    }
    let e = bank
        .write(Scope::Global, "out/new.md", "x", Language::En)
        .unwrap_err()
        .to_string();
    assert!(e.contains("refused"), "{e}");
    assert!(!outside.join("new.md").exists());
    let e = bank
        .write(Scope::Global, "s.md", "x", Language::En)
        .unwrap_err()
        .to_string();
    assert!(e.contains("refused"), "{e}");
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.md")).unwrap(),
        "tags: #secret"
    );
    // A link inside the bank is followed; the reported path is the one asked for.
    let doc = bank.read(Scope::Global, "alias.md").unwrap();
    assert_eq!(doc.path, "alias.md");
    assert_eq!(doc.tags, vec!["note", "global"]);
    // Search skips links (and hidden files) instead of following them out.
    std::fs::write(g.join(".hidden.md"), "tags: #secret").unwrap();
    let hits = bank
        .search(&["secret".into()], false, SearchScope::All, None)
        .unwrap();
    assert!(hits.is_empty(), "{hits:?}");
}

#[test]
fn concurrent_writers_never_leave_a_half_written_document() {
    let (_d, bank) = seeded_bank("feature/race");
    let bank = Arc::new(bank);
    const WRITERS: usize = 6;
    const ROUNDS: usize = 15;
    const LEN: usize = 256 * 1024;
    let scope_branch = "feature/race";
    // Each writer writes a document made of one repeated letter; any mix would be half-written.
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let bank = bank.clone();
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut reads = 0;
            while !stop.load(Ordering::Relaxed) {
                if let Ok(doc) = bank.read(Scope::Branch(scope_branch), "race.md") {
                    let first = doc.content.as_bytes()[0];
                    assert_eq!(doc.content.len(), LEN, "a truncated document was read");
                    assert!(
                        doc.content.bytes().all(|b| b == first),
                        "a mixed document was read"
                    );
                    reads += 1;
                }
            }
            reads
        })
    };
    let writers: Vec<_> = (0..WRITERS)
        .map(|i| {
            let bank = bank.clone();
            std::thread::spawn(move || {
                let body = String::from(char::from(b'a' + i as u8)).repeat(LEN);
                for _ in 0..ROUNDS {
                    bank.write(Scope::Branch(scope_branch), "race.md", &body, Language::En)
                        .unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let reads = reader.join().unwrap();
    assert!(reads > 0);
    let doc = bank.read(Scope::Branch(scope_branch), "race.md").unwrap();
    assert_eq!(doc.content.len(), LEN);
    // No temporary files left behind.
    let dir = bank.branches_dir().join("feature-race");
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn concurrent_creation_of_a_bank_never_seeds_over_a_written_document() {
    for round in 0..5 {
        let d = tempfile::tempdir().unwrap();
        let bank = Arc::new(Bank::at(d.path().canonicalize().unwrap().join("docs")));
        let branch = format!("new/{round}");
        let threads: Vec<_> = (0..6)
            .map(|i| {
                let bank = bank.clone();
                let branch = branch.clone();
                std::thread::spawn(move || {
                    let (path, content) = if i == 0 {
                        ("activeContext.md".to_string(), "mine".to_string())
                    } else {
                        (format!("doc{i}.md"), format!("doc {i}"))
                    };
                    bank.write(Scope::Branch(&branch), &path, &content, Language::Ja)
                        .unwrap()
                })
            })
            .collect();
        let outcomes: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(outcomes.iter().filter(|o| o.bank_created).count(), 1);
        let core = bank.core_files(Scope::Branch(&branch)).unwrap();
        assert!(core.missing.is_empty(), "{:?}", core.missing);
        assert_eq!(core.docs["activeContext.md"]["content"], "mine");
        assert!(core.docs["progress.md"]["content"]
            .as_str()
            .unwrap()
            .starts_with("# 進捗状況"));
    }
}

#[test]
fn search_reads_only_the_head_of_markdown_documents() {
    let (_d, bank) = seeded_bank("main");
    // The tags line is at the top; a huge body after it does not matter.
    let big = format!("# Big\ntags: #big\n{}", "x".repeat(1 << 20));
    bank.write(Scope::Global, "big.md", &big, Language::En)
        .unwrap();
    let hits = bank
        .search(&["BIG".into()], false, SearchScope::Global, None)
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].path, "big.md");
    assert_eq!(hits[0].scope, "global");
    assert!(hits[0].branch.is_none());
}

#[test]
fn missing_bank_root_reads_as_no_bank() {
    let d = tempfile::tempdir().unwrap();
    let bank = Bank::at(d.path().join("nothing/here"));
    let core = bank.core_files(Scope::Branch("main")).unwrap();
    assert!(core.no_bank);
    assert_eq!(core.missing.len(), 4);
    assert!(bank.recent_branches(10).unwrap().is_empty());
    assert!(bank
        .search(&["x".into()], false, SearchScope::All, None)
        .unwrap()
        .is_empty());
    let e = bank.read(Scope::Global, "a.md").unwrap_err().to_string();
    assert!(e.contains("does not exist yet"), "{e}");
    // Writing creates the whole path.
    let out = bank
        .write(Scope::Global, "a.md", "x", Language::En)
        .unwrap();
    assert!(out.bank_created && out.created);
    assert_eq!(out.seeded.len(), 6);
}

#[test]
fn a_core_file_changed_after_it_was_read_is_read_again() {
    let (_d, bank) = seeded_bank("main");
    let p = bank.global_dir().join("glossary.md");
    std::fs::write(&p, "tags: #core\nfirst version").unwrap();
    // Old enough for its times to tell its version: the next read is kept.
    std::thread::sleep(CACHE_SETTLE + std::time::Duration::from_millis(100));
    let content = |bank: &Bank| {
        bank.core_files(Scope::Global).unwrap().docs["glossary.md"]["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(content(&bank), "tags: #core\nfirst version");
    assert_eq!(content(&bank), "tags: #core\nfirst version");
    // Rewritten in place, same size: read again.
    std::fs::write(&p, "tags: #core\nnewer version").unwrap();
    assert_eq!(content(&bank), "tags: #core\nnewer version");
    // Replaced by another file (an atomic write): read again.
    let tmp = bank.global_dir().join("glossary.tmp");
    std::fs::write(&tmp, "tags: #core\nthird version").unwrap();
    std::fs::rename(&tmp, &p).unwrap();
    assert_eq!(content(&bank), "tags: #core\nthird version");
    // Through the bank's own writer.
    bank.write(
        Scope::Global,
        "glossary.md",
        "tags: #core\nfourth",
        Language::En,
    )
    .unwrap();
    assert_eq!(content(&bank), "tags: #core\nfourth");
}
