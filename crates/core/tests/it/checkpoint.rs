//! The checkpoint store: what a checkpoint holds (ignored, linked, special and oversized
//! files), what a diff reports, what a restore writes back and refuses to, and how a damaged,
//! full or shared store fails.

use claude_context_core::checkpoint::{
    tree, Change, CheckpointError, Kind, RestoreRequest, Store, StoreOptions,
};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

pub(crate) struct Fixture {
    _tmp: tempfile::TempDir,
    pub(crate) root: PathBuf,
    pub(crate) state: PathBuf,
}

pub(crate) fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    let state = tmp.path().join("state");
    std::fs::create_dir_all(&root).unwrap();
    Fixture {
        root: root.canonicalize().unwrap(),
        state,
        _tmp: tmp,
    }
}

pub(crate) fn opts() -> StoreOptions {
    StoreOptions {
        max_file_bytes: 1024,
        global_gitignore: false,
        lock_timeout: Duration::from_secs(20),
        ..StoreOptions::default()
    }
}

impl Fixture {
    pub(crate) fn store(&self) -> Store {
        Store::open(&self.state, &self.root, opts()).unwrap()
    }

    /// A store that walks the whole project every time (the watch off): what the stat cache
    /// and the memory of the last walk spare.
    fn unwatched(&self) -> Store {
        self.store_with(StoreOptions {
            watch: false,
            ..opts()
        })
    }

    fn store_with(&self, o: StoreOptions) -> Store {
        Store::open(&self.state, &self.root, o).unwrap()
    }

    /// Writes a file with an mtime a minute ago (old enough for the stat cache to trust).
    pub(crate) fn write(&self, rel: &str, bytes: &[u8]) {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, bytes).unwrap();
        age(&p, 60);
    }

    fn read(&self, rel: &str) -> Option<Vec<u8>> {
        std::fs::read(self.root.join(rel)).ok()
    }
}

fn age(p: &Path, secs: u64) {
    let f = if p.is_dir() {
        std::fs::File::open(p).unwrap()
    } else {
        std::fs::File::options().write(true).open(p).unwrap()
    };
    f.set_modified(SystemTime::now() - Duration::from_secs(secs))
        .unwrap();
}

fn paths(changes: &[Change]) -> Vec<String> {
    changes
        .iter()
        .map(|c| {
            let tag = match (c.before, c.after) {
                (None, Some(_)) => "+",
                (Some(_), None) => "-",
                _ => "M",
            };
            format!("{tag} {}", c.path.display()).replace('\\', "/")
        })
        .collect()
}

#[test]
fn a_diff_reports_new_deleted_renamed_binary_and_crlf_files_and_restore_writes_them_back() {
    let f = fixture();
    let binary: Vec<u8> = (0..=255u8).cycle().take(700).collect();
    f.write("src/a.rs", b"fn a() {}\n");
    f.write("src/old_name.rs", b"moved\n");
    f.write("gone.txt", b"bye\n");
    f.write("crlf.txt", b"one\r\ntwo\r\n");
    f.write("img.bin", &binary);
    f.write("deep/er/x.txt", b"x\n");
    let mut s = f.store();
    let a = s.checkpoint("before").unwrap();

    f.write("src/a.rs", b"fn a() { changed() }\n");
    std::fs::rename(
        f.root.join("src/old_name.rs"),
        f.root.join("src/new_name.rs"),
    )
    .unwrap();
    std::fs::remove_file(f.root.join("gone.txt")).unwrap();
    std::fs::remove_dir_all(f.root.join("deep")).unwrap();
    f.write("crlf.txt", b"one\r\ntwo\r\nthree\r\n");
    let mut bin2 = binary.clone();
    bin2[3] = 0;
    f.write("img.bin", &bin2);
    f.write("new/file.txt", b"new\n");
    let b = s.checkpoint("after").unwrap();

    let changes = s.diff(a, b).unwrap();
    assert_eq!(
        paths(&changes),
        [
            "M crlf.txt",
            "- deep/er/x.txt",
            "- gone.txt",
            "M img.bin",
            "+ new/file.txt",
            "M src/a.rs",
            "+ src/new_name.rs",
            "- src/old_name.rs",
        ]
    );
    assert_eq!(
        tree::renames(&changes),
        [(
            PathBuf::from("src/old_name.rs"),
            PathBuf::from("src/new_name.rs")
        )]
    );
    // The same checkpoint twice: nothing differs.
    assert!(s.diff(b, b).unwrap().is_empty());
    assert_eq!(
        s.file_at(a, "crlf.txt").unwrap().unwrap(),
        b"one\r\ntwo\r\n"
    );

    let r = s
        .restore(&RestoreRequest {
            target: a,
            expected: b,
            paths: None,
            overwrite_changed: false,
        })
        .unwrap();
    assert!(r.conflicts.is_empty() && r.failed.is_empty(), "{r:?}");
    assert_eq!(f.read("src/a.rs").unwrap(), b"fn a() {}\n");
    assert_eq!(f.read("src/old_name.rs").unwrap(), b"moved\n");
    assert_eq!(f.read("src/new_name.rs"), None);
    assert_eq!(f.read("gone.txt").unwrap(), b"bye\n");
    assert_eq!(f.read("crlf.txt").unwrap(), b"one\r\ntwo\r\n");
    assert_eq!(f.read("img.bin").unwrap(), binary);
    assert_eq!(f.read("deep/er/x.txt").unwrap(), b"x\n");
    assert_eq!(f.read("new/file.txt"), None);
    assert!(!f.root.join("new").exists(), "the emptied directory stays");
    // The project now matches `a`; the restore recorded the state before it.
    assert!(s.diff(a, r.after).unwrap().is_empty());
    assert_eq!(s.diff(b, r.before).unwrap(), Vec::<Change>::new());

    // Undo: restore the state before the restore.
    let u = s
        .restore(&RestoreRequest {
            target: r.before,
            expected: r.after,
            paths: None,
            overwrite_changed: false,
        })
        .unwrap();
    assert!(u.conflicts.is_empty() && u.failed.is_empty(), "{u:?}");
    assert_eq!(f.read("src/a.rs").unwrap(), b"fn a() { changed() }\n");
    assert_eq!(f.read("new/file.txt").unwrap(), b"new\n");
    assert_eq!(f.read("gone.txt"), None);
}

#[test]
fn restore_keeps_a_file_the_person_changed_unless_told_to_overwrite() {
    let f = fixture();
    f.write("claude.txt", b"base\n");
    f.write("person.txt", b"base\n");
    let mut s = f.store();
    let baseline = s.checkpoint("prompt").unwrap();
    f.write("claude.txt", b"claude\n");
    f.write("person.txt", b"claude\n");
    let turn_end = s.checkpoint("turn end").unwrap();
    // The person edits one of Claude's files afterwards.
    f.write("person.txt", b"claude, then the person\n");

    let req = RestoreRequest {
        target: baseline,
        expected: turn_end,
        paths: None,
        overwrite_changed: false,
    };
    let r = s.restore(&req).unwrap();
    assert_eq!(r.written, [PathBuf::from("claude.txt")]);
    assert_eq!(r.conflicts.len(), 1, "{r:?}");
    assert_eq!(r.conflicts[0].path, PathBuf::from("person.txt"));
    assert_eq!(f.read("claude.txt").unwrap(), b"base\n");
    assert_eq!(f.read("person.txt").unwrap(), b"claude, then the person\n");

    // Confirmed: overwritten, and the person's version is in the checkpoint before it.
    let r = s
        .restore(&RestoreRequest {
            overwrite_changed: true,
            ..req
        })
        .unwrap();
    assert_eq!(r.written, [PathBuf::from("person.txt")]);
    assert_eq!(f.read("person.txt").unwrap(), b"base\n");
    assert_eq!(
        s.file_at(r.before, "person.txt").unwrap().unwrap(),
        b"claude, then the person\n"
    );
}

#[test]
fn restore_of_chosen_paths_only_touches_them_and_keeps_modes_and_links() {
    let f = fixture();
    f.write("run.sh", b"#!/bin/sh\n");
    f.write("other.txt", b"1\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            f.root.join("run.sh"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        std::os::unix::fs::symlink("other.txt", f.root.join("link")).unwrap();
    }
    let mut s = f.store();
    let a = s.checkpoint("a").unwrap();
    #[cfg(unix)]
    assert_eq!(s.state_at(a, "run.sh").unwrap().unwrap().kind, Kind::Exec);
    std::fs::remove_file(f.root.join("run.sh")).unwrap();
    f.write("other.txt", b"2\n");
    #[cfg(unix)]
    {
        std::fs::remove_file(f.root.join("link")).unwrap();
        std::os::unix::fs::symlink("elsewhere", f.root.join("link")).unwrap();
    }
    let b = s.checkpoint("b").unwrap();
    let r = s
        .restore(&RestoreRequest {
            target: a,
            expected: b,
            paths: Some(vec!["run.sh".into(), f.root.join("link")]),
            overwrite_changed: false,
        })
        .unwrap();
    assert!(r.failed.is_empty() && r.conflicts.is_empty(), "{r:?}");
    assert_eq!(f.read("run.sh").unwrap(), b"#!/bin/sh\n");
    assert_eq!(f.read("other.txt").unwrap(), b"2\n", "not asked for");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(f.root.join("run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_ne!(mode & 0o100, 0, "the execute bit is back: {mode:o}");
        assert_eq!(
            std::fs::read_link(f.root.join("link")).unwrap(),
            PathBuf::from("other.txt")
        );
    }
}

#[test]
fn gitignore_rules_apply_without_git_and_git_itself_is_skipped() {
    let f = fixture();
    f.write(".gitignore", b"*.log\n/build/\n!keep.log\n");
    f.write("a.log", b"x");
    f.write("keep.log", b"x");
    f.write("build/out.o", b"x");
    f.write("sub/build/kept.txt", b"x");
    f.write("sub/.gitignore", b"secret.txt\n");
    f.write("sub/secret.txt", b"x");
    f.write("secret.txt", b"x");
    f.write(".git/config", b"x");
    f.write(".git/info/exclude", b"excluded.txt\n");
    f.write("excluded.txt", b"x");
    let mut s = f.store();
    let a = s.checkpoint("a").unwrap();
    let mut listed: Vec<String> = s
        .diff_files(a)
        .into_iter()
        .map(|p| p.display().to_string().replace('\\', "/"))
        .collect();
    listed.sort();
    assert_eq!(
        listed,
        [
            ".gitignore",
            "keep.log",
            "secret.txt",
            "sub/.gitignore",
            "sub/build/kept.txt"
        ]
    );
    assert_eq!(s.last_stats().ignored, 4, "{:?}", s.last_stats());
}

#[test]
fn the_worktrees_of_background_sessions_are_not_the_projects_files() {
    let f = fixture();
    f.write("a.txt", b"x");
    f.write(".claude/settings.json", b"{}");
    f.write(".claude/worktrees/feat/a.txt", b"the session's");
    f.write(".claude/worktrees/feat/.git", b"gitdir: /x\n");
    f.write("sub/.claude/worktrees/kept.txt", b"x");
    let mut s = f.store();
    let a = s.checkpoint("a").unwrap();
    let mut listed: Vec<String> = s
        .diff_files(a)
        .into_iter()
        .map(|p| p.display().to_string().replace('\\', "/"))
        .collect();
    listed.sort();
    assert_eq!(
        listed,
        [
            ".claude/settings.json",
            "a.txt",
            "sub/.claude/worktrees/kept.txt"
        ]
    );
}

trait Files {
    fn diff_files(&mut self, id: u64) -> Vec<PathBuf>;
}

impl Files for Store {
    /// Every file of checkpoint `id`, through a diff against an empty project's checkpoint.
    fn diff_files(&mut self, id: u64) -> Vec<PathBuf> {
        let info = self.info(id).unwrap();
        let objects =
            claude_context_core::checkpoint::object::Objects::new(self.dir().join("objects"), true);
        tree::files(&objects, &info.tree)
            .unwrap()
            .into_iter()
            .map(|(p, _)| p)
            .collect()
    }
}

#[test]
fn the_stat_cache_spares_reading_unchanged_files() {
    let f = fixture();
    for i in 0..50 {
        f.write(
            &format!("d{}/f{i}.txt", i % 5),
            format!("file {i}\n").as_bytes(),
        );
    }
    let mut s = f.unwatched();
    s.checkpoint("cold").unwrap();
    assert_eq!(s.last_stats().files_read, 50);
    s.checkpoint("warm").unwrap();
    assert_eq!(s.last_stats().files_read, 0, "{:?}", s.last_stats());
    assert_eq!(s.last_stats().cache_hits, 50);
    // One changed (same size, other content, other mtime): read again, the rest not.
    f.write("d3/f3.txt", b"FILE 3\n");
    age(&f.root.join("d3/f3.txt"), 30);
    let b = s.checkpoint("one changed").unwrap();
    assert_eq!(s.last_stats().files_read, 1);
    assert_eq!(s.file_at(b, "d3/f3.txt").unwrap().unwrap(), b"FILE 3\n");
    // A new process reads the persisted cache.
    drop(s);
    let mut s = f.unwatched();
    s.checkpoint("another process").unwrap();
    assert_eq!(s.last_stats().files_read, 0, "{:?}", s.last_stats());
    // A file written just now is read again next time (its mtime is too recent to trust).
    std::fs::write(f.root.join("d0/f0.txt"), b"fresh\n").unwrap();
    s.checkpoint("fresh").unwrap();
    assert_eq!(s.last_stats().files_read, 1);
    s.checkpoint("fresh again").unwrap();
    assert_eq!(s.last_stats().files_read, 1);
}

#[test]
fn a_file_over_the_cap_is_recorded_not_stored() {
    let f = fixture();
    f.write("big.bin", &vec![7u8; 5000]);
    f.write("small.txt", b"s");
    let mut s = f.store();
    let a = s.checkpoint("a").unwrap();
    let st = s.state_at(a, "big.bin").unwrap().unwrap();
    assert_eq!((st.kind, st.size), (Kind::OverCap, 5000));
    assert_eq!(s.file_at(a, "big.bin").unwrap(), None);
    assert!(s.store_bytes().unwrap() < 5000);
    // It changes: the diff sees it; a restore cannot write it back and says so.
    f.write("big.bin", &vec![8u8; 6000]);
    let b = s.checkpoint("b").unwrap();
    assert_eq!(paths(&s.diff(a, b).unwrap()), ["M big.bin"]);
    let r = s
        .restore(&RestoreRequest {
            target: a,
            expected: b,
            paths: None,
            overwrite_changed: true,
        })
        .unwrap();
    assert_eq!(r.written.len(), 0);
    assert_eq!(f.read("big.bin").unwrap().len(), 6000, "{r:?}");
}

#[cfg(unix)]
#[test]
fn links_are_recorded_as_links_and_fifos_are_skipped_without_blocking() {
    let f = fixture();
    let outside = f.root.parent().unwrap().join("outside-secret.txt");
    std::fs::write(&outside, b"the secret outside the project").unwrap();
    std::os::unix::fs::symlink(&outside, f.root.join("out")).unwrap();
    std::os::unix::fs::symlink("/", f.root.join("slash")).unwrap();
    f.write("inside.txt", b"in");
    let fifo = f.root.join("pipe");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo on a NUL-terminated path we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let mut s = f.store();
    let (tx, rx) = std::sync::mpsc::channel();
    let state = f.state.clone();
    let root = f.root.clone();
    std::thread::spawn(move || {
        let mut s = Store::open(&state, &root, opts()).unwrap();
        let r = s
            .checkpoint("with a fifo")
            .map(|id| (id, s.last_stats().clone()));
        let _ = tx.send(r);
    });
    // A generous bound: only there so a regression fails instead of hanging.
    let (id, stats) = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the walk blocked on the FIFO")
        .unwrap();
    assert_eq!(stats.special, 1);
    assert_eq!(stats.symlinks, 2);
    let out = s.state_at(id, "out").unwrap().unwrap();
    assert_eq!(out.kind, Kind::Symlink);
    assert_eq!(
        s.file_at(id, "out").unwrap().unwrap(),
        outside.as_os_str().as_encoded_bytes()
    );
    assert_eq!(s.state_at(id, "pipe").unwrap(), None);
    // Nothing stored holds the outside file's content.
    let secret = claude_context_core::checkpoint::object::ObjectId::of_blob(
        b"the secret outside the project",
    );
    let objects =
        claude_context_core::checkpoint::object::Objects::new(s.dir().join("objects"), true);
    assert_eq!(objects.stored_size(&secret), None);
}

#[test]
fn capture_records_one_file_on_top_of_a_checkpoint_even_an_ignored_one() {
    let f = fixture();
    f.write(".gitignore", b".env\n");
    f.write("a.txt", b"a0");
    f.write("b.txt", b"b0");
    f.write(".env", b"TOKEN=0");
    let mut s = f.store();
    let prompt = s.checkpoint("prompt").unwrap();
    // The person changes a.txt before Claude's edit: the capture sees that as the baseline.
    f.write("a.txt", b"a1");
    let c1 = s.capture_file(prompt, "a.txt").unwrap();
    let c2 = s
        .capture_file(c1, &f.root.join(".env").display().to_string())
        .unwrap();
    assert_eq!(paths(&s.diff(prompt, c2).unwrap()), ["+ .env", "M a.txt"]);
    // Claude's edits; the turn's end includes the captured ignored file.
    f.write("a.txt", b"a2");
    f.write(".env", b"TOKEN=2");
    f.write("b.txt", b"b2");
    let end = s.checkpoint_with("turn end", &[".env".into()]).unwrap();
    assert_eq!(
        paths(&s.diff(c2, end).unwrap()),
        ["M .env", "M a.txt", "M b.txt"]
    );
    assert_eq!(s.file_at(c2, ".env").unwrap().unwrap(), b"TOKEN=0");
    // A path outside the project is refused.
    assert!(matches!(
        s.capture_file(prompt, "../x"),
        Err(CheckpointError::Cap(_))
    ));
}

#[test]
fn gc_drops_the_oldest_checkpoints_and_keeps_what_the_rest_reach() {
    let f = fixture();
    f.write("shared.txt", &vec![b's'; 600]);
    let mut s = f.store_with(StoreOptions {
        max_store_bytes: 4000,
        compress: false,
        ..opts()
    });
    let mut ids = Vec::new();
    for i in 0..10u8 {
        f.write("turn.txt", &vec![b'0' + i; 500]);
        ids.push(s.checkpoint(&format!("turn {i}")).unwrap());
    }
    let kept: Vec<u64> = s.list().unwrap().iter().map(|c| c.id).collect();
    assert!(kept.len() < 10 && kept.len() >= 2, "{kept:?}");
    assert_eq!(kept.last(), ids.last());
    assert!(s.store_bytes().unwrap() <= 4000);
    // Every kept checkpoint is whole: each file's content is there.
    for id in &kept {
        assert_eq!(s.file_at(*id, "shared.txt").unwrap().unwrap().len(), 600);
        assert_eq!(s.file_at(*id, "turn.txt").unwrap().unwrap().len(), 500);
    }
    assert!(matches!(
        s.info(ids[0]),
        Err(CheckpointError::Unknown { .. })
    ));
    // The stat cache forgot nothing it still needs: a checkpoint after GC is consistent.
    let again = s.checkpoint("again").unwrap();
    assert_eq!(s.file_at(again, "shared.txt").unwrap().unwrap().len(), 600);
}

#[test]
fn a_full_store_refuses_the_checkpoint_and_keeps_the_older_ones() {
    let f = fixture();
    f.write("a.txt", &vec![b'a'; 900]);
    let mut s = f.store_with(StoreOptions {
        max_store_bytes: 2000,
        compress: false,
        ..opts()
    });
    let first = s.checkpoint("fits").unwrap();
    for i in 0..4 {
        f.write(&format!("more{i}.txt"), &vec![b'0' + i; 900]);
    }
    let e = s.checkpoint("too big").unwrap_err();
    assert!(matches!(e, CheckpointError::Full { .. }), "{e}");
    assert!(e.to_string().contains("full"), "{e}");
    let list: Vec<u64> = s.list().unwrap().iter().map(|c| c.id).collect();
    assert_eq!(list, [first]);
    assert!(s.store_bytes().unwrap() <= 2000);
    assert_eq!(s.file_at(first, "a.txt").unwrap().unwrap().len(), 900);
    // The project is untouched.
    assert_eq!(f.read("more3.txt").unwrap().len(), 900);
}

#[test]
fn a_damaged_store_gives_clear_errors() {
    let f = fixture();
    f.write("a.txt", b"hello");
    f.write("dir/b.txt", b"world");
    let mut s = f.store();
    let a = s.checkpoint("a").unwrap();
    f.write("a.txt", b"hello again");
    let b = s.checkpoint("b").unwrap();
    let record = s.dir().join("checkpoints").join(format!("{a:020}"));

    // A truncated record.
    let full = std::fs::read(&record).unwrap();
    std::fs::write(&record, &full[..full.len() / 2]).unwrap();
    let e = s.diff(a, b).unwrap_err();
    assert!(matches!(e, CheckpointError::Corrupt { .. }), "{e}");
    assert!(e.to_string().contains("damaged"), "{e}");
    // A new checkpoint still works, and the list leaves the damaged one out.
    let c = s.checkpoint("c").unwrap();
    assert_eq!(
        s.list().unwrap().iter().map(|i| i.id).collect::<Vec<_>>(),
        [b, c]
    );
    // Garbage record.
    std::fs::write(&record, b"\x00\xffgarbage").unwrap();
    assert!(matches!(s.info(a), Err(CheckpointError::Corrupt { .. })));

    // A garbage tree object and a missing blob.
    let info = s.info(b).unwrap();
    let objects =
        claude_context_core::checkpoint::object::Objects::new(s.dir().join("objects"), true);
    let blob = s.state_at(b, "a.txt").unwrap().unwrap().id;
    std::fs::remove_file(objects.path_of(&blob)).unwrap();
    let e = s.file_at(b, "a.txt").unwrap_err();
    assert!(matches!(e, CheckpointError::Missing { .. }), "{e}");
    // A restore that needs it fails for that file, writes nothing in its place.
    f.write("a.txt", b"now");
    let now = s.checkpoint("now").unwrap();
    let r = s
        .restore(&RestoreRequest {
            target: b,
            expected: now,
            paths: Some(vec!["a.txt".into()]),
            overwrite_changed: false,
        })
        .unwrap();
    assert_eq!(r.failed.len(), 1, "{r:?}");
    assert_eq!(f.read("a.txt").unwrap(), b"now");

    std::fs::write(objects.path_of(&info.tree), b"CCO1tgarbage").unwrap();
    let e = s.diff(now, b).unwrap_err();
    assert!(matches!(e, CheckpointError::Corrupt { .. }), "{e}");
    let e = s.file_at(b, "dir/b.txt").unwrap_err();
    assert!(matches!(e, CheckpointError::Corrupt { .. }), "{e}");

    // A garbage stat cache is only a cache: everything is read again.
    std::fs::write(s.dir().join("statcache"), b"garbage").unwrap();
    drop(s);
    let mut s = f.store();
    let d = s.checkpoint("d").unwrap();
    assert_eq!(s.last_stats().files_read, 2);
    assert_eq!(s.file_at(d, "dir/b.txt").unwrap().unwrap(), b"world");
}

#[test]
fn two_writers_on_one_project_take_turns() {
    let f = fixture();
    for i in 0..20 {
        f.write(&format!("f{i}.txt"), format!("{i}").as_bytes());
    }
    let mut handles = Vec::new();
    for w in 0..2 {
        let (state, root) = (f.state.clone(), f.root.clone());
        handles.push(std::thread::spawn(move || {
            let mut s = Store::open(&state, &root, opts()).unwrap();
            let mut ids = Vec::new();
            for i in 0..10 {
                std::fs::write(root.join(format!("w{w}.txt")), format!("{w} {i}")).unwrap();
                ids.push(s.checkpoint(&format!("writer {w} turn {i}")).unwrap());
            }
            ids
        }));
    }
    let mut all: Vec<u64> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 20, "every checkpoint got its own id");
    let mut s = f.store();
    let list = s.list().unwrap();
    assert_eq!(list.len(), 20);
    for c in &list {
        for i in 0..20 {
            assert_eq!(
                s.file_at(c.id, &format!("f{i}.txt")).unwrap().unwrap(),
                format!("{i}").as_bytes()
            );
        }
    }
}

#[test]
fn a_store_held_too_long_by_another_process_is_busy_not_a_hang() {
    let f = fixture();
    f.write("a.txt", b"a");
    let mut s = f.store_with(StoreOptions {
        lock_timeout: Duration::from_millis(200),
        ..opts()
    });
    s.checkpoint("a").unwrap();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(s.dir().join("lock"))
        .unwrap();
    let mut other = fd_lock::RwLock::new(file);
    let held = other.write().unwrap();
    let e = s.checkpoint("b").unwrap_err();
    assert!(matches!(e, CheckpointError::Busy { .. }), "{e}");
    drop(held);
    s.checkpoint("b").unwrap();
}

#[test]
fn gc_deletes_only_what_no_checkpoint_reaches() {
    use claude_context_core::checkpoint::object::{ObjectId, ObjectType, Objects};
    let f = fixture();
    f.write("keep.txt", b"keep");
    f.write("dir/also.txt", b"also");
    let mut s = f.store();
    let a = s.checkpoint("a").unwrap();
    // An object no checkpoint names (a checkpoint a crash interrupted).
    let objects = Objects::new(s.dir().join("objects"), true);
    let orphan = ObjectId::of_blob(b"orphan");
    objects.put(&orphan, ObjectType::Blob, b"orphan").unwrap();
    let r = s.gc().unwrap();
    assert_eq!(r.deleted_objects, 1, "{r:?}");
    assert!(r.dropped_checkpoints.is_empty());
    assert_eq!(objects.stored_size(&orphan), None);
    assert_eq!(s.file_at(a, "keep.txt").unwrap().unwrap(), b"keep");
    assert_eq!(s.file_at(a, "dir/also.txt").unwrap().unwrap(), b"also");
}

/// Ages to a minute ago every file and directory under `dir` whose mtime is recent (what a
/// test just changed), leaving the rest as they are.
pub(crate) fn age_recent(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let m = std::fs::symlink_metadata(&p).unwrap();
        if m.is_dir() {
            age_recent(&p);
        }
        let recent = m
            .modified()
            .is_ok_and(|t| t > SystemTime::now() - Duration::from_secs(30));
        if recent && (m.is_dir() || m.is_file()) {
            age(&p, 60);
        }
    }
    let m = std::fs::metadata(dir).unwrap();
    if m.modified()
        .is_ok_and(|t| t > SystemTime::now() - Duration::from_secs(30))
    {
        age(dir, 60);
    }
}

/// The root tree a store that knows nothing yet (no memory, no stat cache, one thread) gives
/// for the project as it is now.
pub(crate) fn fresh_tree(f: &Fixture) -> claude_context_core::checkpoint::object::ObjectId {
    let state = tempfile::tempdir().unwrap();
    let mut s = Store::open(
        state.path(),
        &f.root,
        StoreOptions {
            writer_threads: 1,
            watch: false,
            ..opts()
        },
    )
    .unwrap();
    let id = s.checkpoint("fresh").unwrap();
    s.info(id).unwrap().tree
}

#[test]
fn a_store_kept_open_finds_every_change_a_fresh_walk_finds() {
    let f = fixture();
    f.write(".gitignore", b"*.log\n");
    f.write("a/1.txt", b"one\n");
    f.write("a/2.txt", b"two\n");
    f.write("a/b/3.txt", b"three\n");
    f.write("a/x.log", b"log\n");
    f.write("c/4.txt", b"four\n");
    std::fs::create_dir_all(f.root.join("d/e")).unwrap();
    age_recent(&f.root);
    // Several walking threads, and the memory of the walk before kept between checkpoints.
    let mut s = f.store_with(StoreOptions {
        writer_threads: 3,
        ..opts()
    });
    let step = |s: &mut Store, what: &str| {
        age_recent(&f.root);
        let id = s.checkpoint(what).unwrap();
        assert_eq!(s.info(id).unwrap().tree, fresh_tree(&f), "after: {what}");
        s.last_stats().clone()
    };
    step(&mut s, "the first checkpoint");
    let st = step(&mut s, "nothing");
    assert_eq!(st.files_read, 0, "{st:?}");
    assert_eq!(st.dirs_unchanged, st.dirs, "{st:?}");

    // Same size, other content: only the file's stat tells, its directory did not move.
    std::fs::write(f.root.join("a/1.txt"), b"ONE\n").unwrap();
    let st = step(&mut s, "a file's content");
    assert_eq!(st.files_read, 1, "{st:?}");
    assert_eq!(st.dirs_unchanged, st.dirs, "{st:?}");

    std::fs::write(f.root.join("a/new.txt"), b"new\n").unwrap();
    let st = step(&mut s, "a file added");
    assert_eq!(
        st.dirs_unchanged,
        st.dirs - 1,
        "only a/ is listed again: {st:?}"
    );
    std::fs::remove_file(f.root.join("a/2.txt")).unwrap();
    step(&mut s, "a file removed");
    f.write("n/m/5.txt", b"five\n");
    step(&mut s, "a directory added");
    std::fs::remove_dir_all(f.root.join("c")).unwrap();
    step(&mut s, "a directory removed");
    std::fs::remove_file(f.root.join("a/1.txt")).unwrap();
    f.write("a/1.txt/inner.txt", b"inner\n");
    step(&mut s, "a file replaced by a directory");
    f.write("d/e/6.txt", b"six\n");
    step(&mut s, "an empty directory filled");
    f.write("a/b/.gitignore", b"3.txt\n");
    step(&mut s, "a .gitignore added below");
    // The root's listing is the same; only the ignore file's content changed.
    std::fs::write(f.root.join(".gitignore"), b"*.tmp\n").unwrap();
    let id = {
        age_recent(&f.root);
        s.checkpoint("a .gitignore changed").unwrap()
    };
    assert_eq!(s.info(id).unwrap().tree, fresh_tree(&f));
    assert!(s.state_at(id, "a/x.log").unwrap().is_some());
    std::fs::rename(f.root.join("a/new.txt"), f.root.join("a/renamed.txt")).unwrap();
    step(&mut s, "a file renamed");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::os::unix::fs::symlink("a/renamed.txt", f.root.join("link")).unwrap();
        step(&mut s, "a link added");
        let p = f.root.join("a/renamed.txt");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        step(&mut s, "a file made executable");
    }
    std::fs::remove_dir_all(f.root.join("d")).unwrap();
    step(&mut s, "a directory tree removed");
    let st = step(&mut s, "nothing again");
    assert_eq!(st.files_read, 0, "{st:?}");
}

#[test]
fn a_directory_changed_just_now_is_listed_again_until_its_mtime_is_old() {
    let f = fixture();
    f.write("a/1.txt", b"one\n");
    age_recent(&f.root);
    let mut s = f.unwatched();
    s.checkpoint("first").unwrap();
    s.checkpoint("second").unwrap();
    assert_eq!(s.last_stats().dirs_unchanged, 2);
    // Within the mtime's granularity another change could keep the same stat: not trusted.
    std::fs::write(f.root.join("a/2.txt"), b"two\n").unwrap();
    let b = s.checkpoint("added").unwrap();
    assert_eq!(s.last_stats().dirs_unchanged, 1);
    std::fs::write(f.root.join("a/3.txt"), b"three\n").unwrap();
    let c = s.checkpoint("added again").unwrap();
    assert_eq!(s.last_stats().dirs_unchanged, 1);
    assert_eq!(paths(&s.diff(b, c).unwrap()), ["+ a/3.txt"]);
}

#[test]
fn a_failed_checkpoint_leaves_nothing_trusted_that_is_not_stored() {
    let f = fixture();
    f.write("a.txt", b"a\n");
    let mut s = f.store();
    s.checkpoint("first").unwrap();
    // The next content's object directory cannot be made: the walk fails storing it.
    let content = b"the new content of b\n";
    let id = claude_context_core::checkpoint::object::ObjectId::of_blob(content);
    let hex = id.hex();
    let blocker = s.dir().join("objects").join(&hex[..2]);
    let _ = std::fs::remove_dir_all(&blocker);
    std::fs::write(&blocker, b"not a directory").unwrap();
    f.write("b.txt", content);
    assert!(s.checkpoint("fails").is_err());
    std::fs::remove_file(&blocker).unwrap();
    let ok = s.checkpoint("after").unwrap();
    assert_eq!(s.file_at(ok, "b.txt").unwrap().unwrap(), content);
    assert_eq!(s.file_at(ok, "a.txt").unwrap().unwrap(), b"a\n");
}

#[cfg(unix)]
#[test]
fn the_folder_listing_the_projects_stores_is_the_persons_only() {
    use std::os::unix::fs::PermissionsExt;
    let f = fixture();
    // Even where it existed already, made by a umask that lets others list it.
    std::fs::create_dir_all(f.state.join("checkpoints")).unwrap();
    std::fs::set_permissions(
        f.state.join("checkpoints"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let store = f.store();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(store.dir().parent().unwrap()), 0o700);
    assert_eq!(mode(store.dir()), 0o700);
}

/// A directory of many files, one changed per checkpoint: each checkpoint stores the changed
/// directory as its changes against the last (far smaller than the whole listing), more times
/// than a chain of deltas may grow, and every checkpoint reads back whole, each file as it was
/// then, also after a collection dropped the older checkpoints the newer ones' deltas start from.
#[test]
fn a_changed_directory_is_stored_as_its_changes_and_reads_back_whole() {
    let f = fixture();
    const FILES: usize = 200;
    const ROUNDS: usize = 2 * tree::MAX_DELTA_DEPTH as usize + 3;
    for i in 0..FILES {
        f.write(&format!("big/f{i:03}.txt"), format!("{i}\n").as_bytes());
    }
    let mut s = f.store();
    let mut ids = vec![s.checkpoint("first").unwrap()];
    let whole = s.last_stats().bytes_written;
    let mut big = Vec::new();
    for round in 0..ROUNDS {
        f.write(
            &format!("big/f{round:03}.txt"),
            format!("round {round}\n").as_bytes(),
        );
        ids.push(s.checkpoint(&format!("round {round}")).unwrap());
        if s.last_stats().bytes_written * 20 >= whole {
            big.push(round);
        }
    }
    // Whole again only when the chain is as long as it may grow.
    let every = tree::MAX_DELTA_DEPTH as usize + 1;
    assert!(
        big.len() <= ROUNDS / every,
        "whole listings written in rounds {big:?}"
    );
    let expect = |n: usize, i: usize| {
        if i < n {
            format!("round {i}\n")
        } else {
            format!("{i}\n")
        }
    };
    for (n, id) in ids.iter().enumerate() {
        assert_eq!(s.diff_files(*id).len(), FILES);
        for i in [0, n.saturating_sub(1), n, ROUNDS - 1] {
            let got = s
                .file_at(*id, &format!("big/f{i:03}.txt"))
                .unwrap()
                .unwrap();
            assert_eq!(
                String::from_utf8(got).unwrap(),
                expect(n, i),
                "checkpoint {n}, file {i}"
            );
        }
    }
    drop(s);
    // A cap that keeps only the newest checkpoint.
    let mut s = f.store_with(StoreOptions {
        max_store_bytes: 1,
        ..opts()
    });
    let report = s.gc().unwrap();
    assert_eq!(report.dropped_checkpoints.len(), ROUNDS, "{report:?}");
    let newest = *ids.last().unwrap();
    assert_eq!(s.diff_files(newest).len(), FILES);
    for i in 0..FILES {
        let got = s
            .file_at(newest, &format!("big/f{i:03}.txt"))
            .unwrap()
            .unwrap();
        assert_eq!(String::from_utf8(got).unwrap(), expect(ROUNDS, i));
    }
}
