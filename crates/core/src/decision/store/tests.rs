use super::*;

fn store() -> (tempfile::TempDir, Store) {
    let d = tempfile::tempdir().unwrap();
    let s = Store::new(&d.path().join("state"), Path::new("/home/me/my project"));
    (d, s)
}

#[test]
fn store_paths_are_per_project_and_stable() {
    let a = store_path(Path::new("/s"), Path::new("/home/me/my project"));
    assert_eq!(a.parent().unwrap(), Path::new("/s/decisions"));
    let name = a.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("my_project-") && name.ends_with(".json"),
        "{name}"
    );
    // Same project, same file; another project with the same name, another file.
    assert_eq!(
        a,
        store_path(Path::new("/s"), Path::new("/home/me/my project"))
    );
    assert_ne!(
        a,
        store_path(Path::new("/s"), Path::new("/other/my project"))
    );
    // The hash is FNV-1a 64 (stable across Rust versions).
    assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
    assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
    let root = store_path(Path::new("/s"), Path::new("/"));
    assert!(root
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("root-"));
}

#[test]
fn define_replace_history_and_limit() {
    let (_d, s) = store();
    assert_eq!(s.load().unwrap(), None);
    for i in 0..(HISTORY_LIMIT + 5) {
        s.define_issue(&format!("t{i}"), "d", None, vec![]).unwrap();
    }
    let data = s.load().unwrap().unwrap();
    assert_eq!(data.issue.unwrap().title, format!("t{}", HISTORY_LIMIT + 4));
    assert_eq!(data.history.len(), HISTORY_LIMIT);
    // The oldest were dropped.
    assert_eq!(data.history[0].issue.title, "t4");
    assert_eq!(data.project_root, "/home/me/my project");
}

#[cfg(unix)]
#[test]
fn the_store_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let (_d, s) = store();
    s.define_issue("t", "d", None, vec![]).unwrap();
    let mode = std::fs::metadata(&s.path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn concurrent_editors_never_lose_or_corrupt_updates() {
    let (_d, s) = store();
    const THREADS: usize = 8;
    const EACH: usize = 10;
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            // Each thread is its own "editor" with its own Store value (own lock file handle).
            let s = Store::new(
                s.path.parent().unwrap().parent().unwrap(),
                Path::new("/home/me/my project"),
            );
            std::thread::spawn(move || {
                for i in 0..EACH {
                    s.define_issue(&format!("{t}-{i}"), "d", None, vec![])
                        .unwrap();
                    // Some issue always exists from here on, so this cannot fail; it may
                    // attach the options to another thread's issue, which is fine.
                    s.register_options(
                        vec![
                            OptionInput::Text("a".into()),
                            OptionInput::Text("b".into()),
                            OptionInput::Text("c".into()),
                        ],
                        None,
                    )
                    .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let data = s.load().unwrap().unwrap();
    // Every define_issue but the last replaced one: none was lost.
    assert_eq!(data.history.len(), THREADS * EACH - 1);
    let mut titles: Vec<_> = data
        .history
        .iter()
        .map(|h| h.issue.title.clone())
        .chain(data.issue.iter().map(|i| i.title.clone()))
        .collect();
    titles.sort();
    titles.dedup();
    assert_eq!(titles.len(), THREADS * EACH);
}

#[test]
fn a_held_lock_makes_updates_wait_then_fail_clearly() {
    let (_d, s) = store();
    s.define_issue("t", "d", None, vec![]).unwrap();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(s.lock_path())
        .unwrap();
    let mut held = fd_lock::RwLock::new(file);
    let _g = held.write().unwrap();
    let e = s.define_issue("u", "d", None, vec![]).unwrap_err();
    assert!(matches!(e, StoreError::Locked { .. }), "{e}");
    assert!(e.to_string().contains("locked by another editor"));
    // Readers are not blocked by the lock.
    assert_eq!(s.load().unwrap().unwrap().issue.unwrap().title, "t");
}

#[test]
fn reset_backs_up_and_prunes_old_backups() {
    let (_d, s) = store();
    assert_eq!(s.reset().unwrap(), None);
    for i in 0..(BACKUPS_KEPT + 3) {
        s.define_issue(&format!("t{i}"), "d", None, vec![]).unwrap();
        let b = s.reset().unwrap().unwrap();
        assert!(std::fs::read_to_string(&b)
            .unwrap()
            .contains(&format!("\"t{i}\"")));
        assert_eq!(s.load().unwrap(), None);
    }
    let backups = s.backups();
    assert_eq!(backups.len(), BACKUPS_KEPT);
    // The newest survive, and name order is age order even when resets share a millisecond.
    let titles: Vec<String> = backups
        .iter()
        .map(|b| {
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(b).unwrap()).unwrap();
            v["issue"]["title"].as_str().unwrap().to_owned()
        })
        .collect();
    let expected: Vec<String> = (3..BACKUPS_KEPT + 3).map(|i| format!("t{i}")).collect();
    assert_eq!(titles, expected, "{backups:?}");
}

#[test]
fn workflow_steps() {
    assert_eq!(workflow(0).step, "widen-options");
    assert_eq!(workflow(2).step, "widen-options");
    assert_eq!(workflow(3).step, "reality-test");
    assert!(workflow(0).next_action.contains("register_options"));
}
