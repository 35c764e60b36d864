//! Another local process races the filesystem: a directory in the project is swapped with a
//! symlink to a directory outside (`renameat2(RENAME_EXCHANGE)`, atomically, over and over)
//! while thousands of fs-write-file writes and fs-read-file reads go through it. With
//! check-then-open by path, several hundred of ~10,000 writes landed outside; through the
//! capability layer, not one byte may.
#![cfg(target_os = "linux")]

use claude_context_core::capfs::{CapDir, WritePolicy};
use claude_context_core::tools::workspace::{fs_list_directory, fs_read_file, fs_write_file};
use std::ffi::CString;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

fn exchange(a: &Path, b: &Path) -> bool {
    let a = CString::new(a.to_str().unwrap()).unwrap();
    let b = CString::new(b.to_str().unwrap()).unwrap();
    // SAFETY: valid NUL-terminated paths.
    unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        ) == 0
    }
}

#[test]
fn directory_symlink_swap_race_puts_no_byte_outside() {
    let d = tempfile::tempdir().unwrap();
    let base = d.path().canonicalize().unwrap();
    let root = base.join("root");
    let outside = base.join("outside");
    std::fs::create_dir_all(root.join("work")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(root.join("work/secret"), "inside").unwrap();
    std::fs::write(outside.join("secret"), "OUTSIDE-SECRET").unwrap();
    std::fs::write(outside.join("zz-outside-only"), "").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("swap")).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let swapper = {
        let (stop, swaps, root) = (stop.clone(), swaps.clone(), root.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if exchange(&root.join("work"), &root.join("swap")) {
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    };

    const ROUNDS: usize = 2500;
    let policy = WritePolicy::default();
    let writer = {
        let root = root.clone();
        std::thread::spawn(move || {
            let (mut ok, mut refused) = (0, 0);
            for i in 0..ROUNDS {
                let a = fs_write_file::Args {
                    path: format!("work/f{}", i % 64),
                    content: format!("write {i}"),
                };
                match fs_write_file::write(&root, &policy, &a) {
                    Ok(_) => ok += 1,
                    Err(_) => refused += 1,
                }
            }
            (ok, refused)
        })
    };
    let reader = {
        let root = root.clone();
        std::thread::spawn(move || {
            let mut leaked = Vec::new();
            let mut ok = 0;
            for _ in 0..ROUNDS {
                let a = fs_read_file::Args {
                    path: "work/secret".into(),
                    offset: None,
                    limit: None,
                };
                if let Ok(r) = fs_read_file::read(&root, &a) {
                    ok += 1;
                    if r.content.contains("OUTSIDE") {
                        leaked.push(r.content);
                    }
                }
                if let Ok(l) = fs_list_directory::list(&root, "work") {
                    if l.entries.iter().any(|e| e.name == "zz-outside-only") {
                        leaked.push("listing".into());
                    }
                }
                let cap = CapDir::open_root(&root).unwrap();
                if let Ok(b) = cap.read_capped(Path::new("work/secret"), 1 << 20) {
                    if b.starts_with(b"OUTSIDE") {
                        leaked.push("capfs read".into());
                    }
                }
            }
            (ok, leaked)
        })
    };
    let (w_ok, w_refused) = writer.join().unwrap();
    let (r_ok, leaked) = reader.join().unwrap();
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();

    let mut names: Vec<String> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["secret", "zz-outside-only"],
        "files appeared outside"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("secret")).unwrap(),
        "OUTSIDE-SECRET"
    );
    assert!(leaked.is_empty(), "read outside: {leaked:?}");
    // The race was real: the swapper ran throughout, and both outcomes happened.
    let swaps = swaps.load(Ordering::Relaxed);
    eprintln!("swaps {swaps}, writes ok {w_ok} refused {w_refused}, reads ok {r_ok}");
    assert!(swaps > 100, "only {swaps} swaps");
    assert!(w_ok > 0 && w_refused > 0, "ok {w_ok} refused {w_refused}");
}
