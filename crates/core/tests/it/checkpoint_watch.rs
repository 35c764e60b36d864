//! The watch that spares a checkpoint the walk of what did not change
//! (`checkpoint::watch`): after every kind of change a checkpoint of a store that watches holds
//! exactly what a whole walk of a store that knows nothing finds, and where events may have been
//! lost the walk is a whole one. No timing is asserted: only what the checkpoints hold and
//! whether a walk was whole.

use super::checkpoint::{age_recent, fixture, fresh_tree, opts, Fixture};
use claude_context_core::checkpoint::{ScanStats, Store, StoreOptions};

fn watching(f: &Fixture) -> Store {
    Store::open(
        &f.state,
        &f.root,
        StoreOptions {
            writer_threads: 2,
            watch: true,
            ..opts()
        },
    )
    .unwrap()
}

/// Checkpoints `s` and checks it against a whole walk: the stats of the walk.
fn step(f: &Fixture, s: &mut Store, what: &str) -> ScanStats {
    let id = s.checkpoint(what).unwrap();
    assert_eq!(s.info(id).unwrap().tree, fresh_tree(f), "after: {what}");
    s.last_stats().clone()
}

/// A step whose walk must have been spared by the watch (where there is one).
fn watched_step(f: &Fixture, s: &mut Store, what: &str) -> ScanStats {
    let st = step(f, s, what);
    if cfg!(target_os = "linux") {
        assert!(!st.whole, "{what}: a whole walk: {st:?}");
    }
    st
}

fn mv(f: &Fixture, from: &str, to: &str) {
    std::fs::rename(f.root.join(from), f.root.join(to)).unwrap();
}

fn build(f: &Fixture) {
    f.write(".gitignore", b"*.log\nbuild/\n");
    for d in ["a", "a/b", "a/b/c", "c", "c/x", "d", "e"] {
        for i in 0..3 {
            f.write(&format!("{d}/{i}.txt"), format!("{d} {i}\n").as_bytes());
        }
    }
    f.write("build/out.o", b"object\n");
    age_recent(&f.root);
}

/// The project of [`build`], checkpointed once whole and once through the watch.
fn watched_project() -> (Fixture, Store) {
    let f = fixture();
    build(&f);
    let mut s = watching(&f);
    step(&f, &mut s, "the first checkpoint");
    watched_step(&f, &mut s, "nothing");
    (f, s)
}

#[test]
fn every_change_the_watch_reports_gives_what_a_whole_walk_gives() {
    let f = fixture();
    build(&f);
    let mut s = watching(&f);
    let first = step(&f, &mut s, "the first checkpoint");
    assert!(first.whole);
    let st = watched_step(&f, &mut s, "nothing");
    if cfg!(target_os = "linux") {
        assert_eq!(st.files_read, 0, "{st:?}");
        assert!(st.dirs_skipped > 0, "{st:?}");
    }

    // Right after a checkpoint, without aging anything: the same size, other content.
    std::fs::write(f.root.join("a/b/c/0.txt"), b"A B 0\n").unwrap();
    let st = watched_step(&f, &mut s, "a file changed right after a checkpoint");
    if cfg!(target_os = "linux") {
        assert!(
            st.dirs_skipped > 0,
            "only the way to a/b/c is walked: {st:?}"
        );
    }
    std::fs::write(f.root.join("a/b/c/0.txt"), b"a b 0\n").unwrap();
    watched_step(&f, &mut s, "and again, within the same instant");

    mv(&f, "d/1.txt", "d/one.txt");
    watched_step(&f, &mut s, "a file renamed");
    mv(&f, "d/2.txt", "e/from-d.txt");
    watched_step(&f, &mut s, "a file moved to another directory");
    mv(&f, "a/b", "e/moved");
    watched_step(&f, &mut s, "a directory tree renamed");
    std::fs::write(
        f.root.join("e/moved/c/1.txt"),
        b"changed in its new place\n",
    )
    .unwrap();
    watched_step(&f, &mut s, "a file changed in the renamed tree");

    std::fs::create_dir_all(f.root.join("new/deep/er")).unwrap();
    std::fs::write(f.root.join("new/deep/er/n.txt"), b"new\n").unwrap();
    std::fs::write(f.root.join("new/top.txt"), b"top\n").unwrap();
    watched_step(&f, &mut s, "a new directory with files inside");
    std::fs::write(f.root.join("new/deep/er/m.txt"), b"another\n").unwrap();
    watched_step(&f, &mut s, "a file added in the new directory");

    // Built outside the project, then moved in whole.
    let outside = f.root.parent().unwrap().join("outside");
    std::fs::create_dir_all(outside.join("in/side")).unwrap();
    std::fs::write(outside.join("in/side/o.txt"), b"from outside\n").unwrap();
    std::fs::rename(outside.join("in"), f.root.join("c/in")).unwrap();
    watched_step(&f, &mut s, "a directory tree moved in from outside");

    // Two directories swapped: each path now holds the other's tree.
    mv(&f, "c", "swap");
    mv(&f, "e", "c");
    mv(&f, "swap", "e");
    watched_step(&f, &mut s, "two directories swapped");

    // Removed and made again with the same name (its inode may be reused).
    std::fs::remove_dir_all(f.root.join("d")).unwrap();
    f.write("d/0.txt", b"a new d\n");
    watched_step(&f, &mut s, "a directory made again");

    f.write(".gitignore", b"*.log\n");
    let id = {
        watched_step(&f, &mut s, "an ignored directory no longer ignored");
        s.latest().unwrap().unwrap()
    };
    assert!(s.state_at(id, "build/out.o").unwrap().is_some());
    std::fs::create_dir_all(f.root.join(".git/info")).unwrap();
    std::fs::write(f.root.join(".git/info/exclude"), b"c/\n").unwrap();
    step(&f, &mut s, "git's exclude file changed");

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let p = f.root.join("e/0.txt");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        watched_step(&f, &mut s, "a file made executable");
        // A directory replaced by a link to one outside: the link is recorded, never followed,
        // and what changes outside is not the project's.
        std::fs::remove_dir_all(f.root.join("new")).unwrap();
        std::os::unix::fs::symlink(&outside, f.root.join("new")).unwrap();
        let id = {
            watched_step(&f, &mut s, "a directory replaced by a link");
            s.latest().unwrap().unwrap()
        };
        std::fs::write(outside.join("later.txt"), b"outside\n").unwrap();
        let st = watched_step(&f, &mut s, "a change outside, behind the link");
        assert_eq!(st.files_read, 0, "{st:?}");
        let later = s.latest().unwrap().unwrap();
        assert!(s.diff(id, later).unwrap().is_empty());
    }
    let st = watched_step(&f, &mut s, "nothing again");
    assert_eq!(st.files_read, 0, "{st:?}");
}

/// More events than the kernel queues (`max_queued_events`): the next checkpoint walks the
/// whole project, and the one after trusts the watch again.
#[cfg(target_os = "linux")]
#[test]
fn events_lost_to_an_overflow_make_the_next_walk_whole() {
    use std::os::unix::fs::PermissionsExt;
    let (f, mut s) = watched_project();
    let max: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(16384);
    // Alternating between two files: no two events in a row are the same (the kernel merges
    // those), so each mode change queues one.
    let (a, b) = (f.root.join("a/0.txt"), f.root.join("a/1.txt"));
    for i in 0..max + 64 {
        let mode = if i % 4 < 2 { 0o644 } else { 0o600 };
        let p = if i % 2 == 0 { &a } else { &b };
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    std::fs::write(f.root.join("d/0.txt"), b"D 0\n").unwrap();
    let st = step(&f, &mut s, "after the overflow");
    assert!(st.whole, "{st:?}");
    std::fs::write(f.root.join("d/1.txt"), b"D 1\n").unwrap();
    watched_step(&f, &mut s, "the watch trusted again");
}

/// Another process writing the store: its memory of the walk is dropped, the walk is whole.
#[test]
fn another_process_writing_the_store_makes_the_next_walk_whole() {
    let (f, mut s) = watched_project();
    {
        let mut other = watching(&f);
        std::fs::write(f.root.join("a/0.txt"), b"other process\n").unwrap();
        other.checkpoint("the other process").unwrap();
    }
    std::fs::write(f.root.join("c/0.txt"), b"mine\n").unwrap();
    let st = step(&f, &mut s, "after the other process");
    assert!(st.whole, "{st:?}");
}
