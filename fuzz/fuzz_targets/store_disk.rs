//! The turns journal and the checkpoint store read back from disk after their bytes were
//! damaged: checkpoint records, tree and blob objects (zstd-packed or not), the stat cache,
//! the version file and `turns.json`. A store is built once (two checkpoints, a turn between
//! them); each input damages a copy of it (flipped, cut, replaced, appended, inserted bytes,
//! files removed) and then everything that reads it runs: listing, lookups, diffs, a new
//! checkpoint over the stat cache, the journal, the turn review's change set and list, a rewind
//! and its undo, a gc. Each is a result or an error, never a panic; a file's content read back
//! is one of the contents it really had (objects are checked against their names).
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use claude_context_core::checkpoint::StoreOptions;
use claude_context_core::turns::checkpoints::{self, Checkpoints, TurnQuery, TurnRecord};
use libfuzzer_sys::fuzz_target;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

struct Fixture {
    work: PathBuf,
    pristine: PathBuf,
    ids: Vec<u64>,
    _dir: tempfile::TempDir,
}

const A1: &[u8] = b"one\ntwo\nthree\n";
const A2: &[u8] = b"one\n2\nthree\nfour\n";

fn opts() -> StoreOptions {
    StoreOptions {
        max_file_bytes: 1 << 20,
        max_store_bytes: 64 << 20,
        compress: true,
        global_gitignore: false,
        lock_timeout: Duration::from_millis(200),
        writer_threads: 1,
        watch: false,
        progress_every: Duration::from_secs(1),
    }
}

fn copy_tree(from: &Path, to: &Path) {
    let _ = std::fs::create_dir_all(to);
    for e in std::fs::read_dir(from).into_iter().flatten().flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        match e.file_type() {
            Ok(t) if t.is_dir() => copy_tree(&src, &dst),
            Ok(t) if t.is_file() => {
                let _ = std::fs::copy(&src, &dst);
            }
            _ => {}
        }
    }
}

fn files_under(d: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => files_under(&p, out),
            Ok(t) if t.is_file() => out.push(p),
            _ => {}
        }
    }
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().canonicalize().expect("canonical");
        let work = base.join("work");
        let project = work.join("project");
        std::fs::create_dir_all(project.join("sub")).unwrap();
        std::fs::write(project.join("a.txt"), A1).unwrap();
        std::fs::write(project.join("sub/b.rs"), "fn b() {}\n").unwrap();
        std::fs::write(project.join("crlf.txt"), "x\r\ny\r\n").unwrap();
        std::fs::write(project.join("bin"), [0u8, 159, 146, 150, 0, 255]).unwrap();
        // Compressible: stored zstd-packed.
        std::fs::write(project.join("big.txt"), "all the same line\n".repeat(600)).unwrap();
        let cps = Checkpoints::with_options(Some(work.join("state")), opts());
        let p = cps.project(&project).expect("project");
        let one = p.store().checkpoint("one").expect("checkpoint one");
        std::fs::write(project.join("a.txt"), A2).unwrap();
        std::fs::remove_file(project.join("sub/b.rs")).unwrap();
        std::fs::write(project.join("c.txt"), "new\n").unwrap();
        let two = p.store().checkpoint("two").expect("checkpoint two");
        p.update_journal(|j| {
            j.turns.push(TurnRecord {
                id: "1-1".into(),
                session: "s".into(),
                prompt: "change a".into(),
                started_ms: 1,
                ended_ms: Some(2),
                start: Some(one),
                end: Some(two),
                files: vec!["a.txt".into(), "sub/b.rs".into(), "c.txt".into()],
                ..TurnRecord::default()
            })
        })
        .expect("journal");
        drop(p);
        drop(cps);
        let pristine = base.join("pristine");
        copy_tree(&work, &pristine);
        Fixture {
            work,
            pristine,
            ids: vec![one, two],
            _dir: dir,
        }
    })
}

#[derive(Arbitrary, Debug)]
enum Damage {
    Flip { file: u8, at: u16, xor: u8 },
    Cut { file: u8, len: u16 },
    Replace { file: u8, bytes: Vec<u8> },
    Append { file: u8, bytes: Vec<u8> },
    Insert { file: u8, at: u16, bytes: Vec<u8> },
    Remove { file: u8 },
}

fn damage(files: &[PathBuf], d: &Damage) {
    let pick = |i: &u8| files.get(*i as usize % files.len().max(1)).cloned();
    let (file, f): (_, Box<dyn Fn(&mut Vec<u8>)>) = match d {
        Damage::Flip { file, at, xor } => (
            pick(file),
            Box::new(move |b: &mut Vec<u8>| {
                if !b.is_empty() {
                    let i = *at as usize % b.len();
                    b[i] ^= xor | 1;
                }
            }),
        ),
        Damage::Cut { file, len } => (
            pick(file),
            Box::new(move |b: &mut Vec<u8>| b.truncate(*len as usize)),
        ),
        Damage::Replace { file, bytes } => (
            pick(file),
            Box::new(move |b: &mut Vec<u8>| *b = bytes.clone()),
        ),
        Damage::Append { file, bytes } => (
            pick(file),
            Box::new(move |b: &mut Vec<u8>| b.extend_from_slice(bytes)),
        ),
        Damage::Insert { file, at, bytes } => (
            pick(file),
            Box::new(move |b: &mut Vec<u8>| {
                let i = (*at as usize).min(b.len());
                b.splice(i..i, bytes.iter().copied());
            }),
        ),
        Damage::Remove { file } => {
            if let Some(p) = pick(file) {
                let _ = std::fs::remove_file(p);
            }
            return;
        }
    };
    if let Some(p) = file {
        if let Ok(mut b) = std::fs::read(&p) {
            f(&mut b);
            let _ = std::fs::write(&p, b);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let fx = fixture();
    let mut u = Unstructured::new(data);
    let Ok(damages) = Vec::<Damage>::arbitrary(&mut u) else {
        return;
    };
    if damages.is_empty() || damages.len() > 6 {
        return;
    }
    let _ = std::fs::remove_dir_all(&fx.work);
    copy_tree(&fx.pristine, &fx.work);
    let state = fx.work.join("state");
    let project = fx.work.join("project");
    let mut files = Vec::new();
    files_under(&state, &mut files);
    files.retain(|p| p.file_name().is_some_and(|n| n != "lock"));
    files.sort();
    for d in &damages {
        damage(&files, d);
    }

    let cps = Checkpoints::with_options(Some(state), opts());
    let Ok(p) = cps.project(&project) else {
        return;
    };
    {
        let mut store = p.store();
        let _ = store.list();
        for &id in &fx.ids {
            let _ = store.info(id);
            let _ = store.state_at(id, "a.txt");
            let _ = store.state_at(id, "sub/b.rs");
            if let Ok(Some(bytes)) = store.file_at(id, "a.txt") {
                assert!(
                    bytes == A1 || bytes == A2,
                    "a.txt read back as {:?}",
                    String::from_utf8_lossy(&bytes)
                );
            }
            let _ = store.file_at(id, "big.txt");
        }
        let _ = store.diff(fx.ids[0], fx.ids[1]);
        let _ = store.checkpoint("again");
    }
    let _ = p.journal();
    let q = TurnQuery {
        n: Some(1),
        ..TurnQuery::default()
    };
    let _ = checkpoints::list_turns(&p, &q);
    let _ = checkpoints::changeset(&p, &q);
    if checkpoints::rewind(&p, &q).is_ok() {
        let _ = checkpoints::rewind_undo(&p, false);
    }
    let _ = p.store().gc();
});
