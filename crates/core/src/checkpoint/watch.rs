//! Which directories changed since the last walk, as the OS saw it (inotify, on Linux), so
//! that a checkpoint walks what changed, not the whole tree.
//!
//! Every directory the walk visits is watched (through its open handle, [`crate::capfs::CapDir::inotify_watch`])
//! *before* it is listed and its files are looked at: a change made before the watch is seen
//! by the walk itself, one made after it is an event. The events are read at the start of the
//! next walk, on the walk's own thread and without waiting: the kernel queues an event before
//! the call that made the change returns, so every change finished before a checkpoint began
//! is among them. Each event marks its directory dirty; the next walk lists and `lstat`s only
//! the dirty directories, opens those on the way to them, and keeps every other directory's
//! tree as it was.
//!
//! A missed event must never make a checkpoint wrong, so the walk is a whole one whenever the
//! events may not tell everything: the first walk (nothing watched yet), after the kernel's
//! queue overflowed, after a directory could not be watched (the watch is then given up for the
//! store's life: too many watches, no `/proc`), on a file system whose changes may come from
//! elsewhere (NFS, FUSE, …: only local file systems are watched), after the store's memory of
//! the last walk was dropped (a failure, another process's write, a collection), and when the
//! project root itself moved. A directory found to be another one than the one remembered at
//! its path (renamed over, replaced) is walked whole; one whose ignore rules changed, with
//! everything beneath it.

use std::collections::HashSet;

/// What a walk must look at.
pub enum Changes {
    /// Everything.
    All,
    /// The directories with events (and those on the way to them).
    Dirs(Dirty),
}

/// Project-relative paths (`""`: the root) of the directories with events.
#[derive(Debug, Default)]
pub struct Dirty {
    dirs: HashSet<Vec<u8>>,
    /// The dirty directories and every directory above them.
    below: HashSet<Vec<u8>>,
}

impl Dirty {
    pub fn new(dirs: HashSet<Vec<u8>>) -> Dirty {
        let mut below = HashSet::new();
        below.insert(Vec::new());
        for d in &dirs {
            for (i, b) in d.iter().enumerate() {
                if *b == b'/' {
                    below.insert(d[..i].to_vec());
                }
            }
            below.insert(d.clone());
        }
        Dirty { dirs, below }
    }

    /// Something changed in the directory `rel` itself (an entry, a file's content or mode).
    pub fn is_dirty(&self, rel: &[u8]) -> bool {
        self.dirs.contains(rel)
    }

    /// Something changed in `rel` or beneath it.
    pub fn wanted(&self, rel: &[u8]) -> bool {
        self.below.contains(rel)
    }

    pub fn len(&self) -> usize {
        self.dirs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.dirs.is_empty()
    }
}

#[cfg(target_os = "linux")]
pub use linux::Watch;

#[cfg(not(target_os = "linux"))]
pub use other::Watch;

#[cfg(target_os = "linux")]
mod linux {
    use super::{Changes, Dirty};
    use crate::capfs::CapDir;
    use std::collections::{HashMap, HashSet};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::sync::{Mutex, MutexGuard};

    const MASK: u32 = libc::IN_MODIFY
        | libc::IN_ATTRIB
        | libc::IN_CLOSE_WRITE
        | libc::IN_CREATE
        | libc::IN_DELETE
        | libc::IN_DELETE_SELF
        | libc::IN_MOVE_SELF
        | libc::IN_MOVED_FROM
        | libc::IN_MOVED_TO;

    /// File systems whose every change goes through this kernel (so raises its events):
    /// ext2/3/4, XFS, Btrfs, tmpfs, ramfs, F2FS, overlayfs, ZFS, bcachefs, ReiserFS, JFS.
    const LOCAL: &[i64] = &[
        0xEF53,
        0x5846_5342,
        0x9123_683E,
        0x0102_1994,
        0x8584_58f6,
        0xF2F5_2010,
        0x794C_7630,
        0x2FC1_2FC1,
        0xCA45_1A4E,
        0x5265_4973,
        0x3153_464a,
    ];

    /// The inotify instance of one store.
    pub struct Watch {
        fd: OwnedFd,
        st: Mutex<State>,
    }

    #[derive(Default)]
    struct State {
        /// Each watch's directory (its path when it was last walked).
        dirs: HashMap<i32, Vec<u8>>,
        dirty: HashSet<Vec<u8>>,
        /// Events may have been lost since the last walk.
        lost: bool,
        /// A whole walk watched every directory the store remembers.
        ready: bool,
        /// Why a directory could not be watched (the watch is given up).
        failed: Option<String>,
    }

    impl std::fmt::Debug for Watch {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Watch").finish_non_exhaustive()
        }
    }

    impl Watch {
        /// A new inotify instance (`None` where none can be had).
        pub fn new() -> Option<Watch> {
            // SAFETY: plain syscall; the descriptor is owned below.
            let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
            if fd < 0 {
                return None;
            }
            Some(Watch {
                // SAFETY: a fresh descriptor nobody else owns.
                fd: unsafe { OwnedFd::from_raw_fd(fd) },
                st: Mutex::new(State::default()),
            })
        }

        fn st(&self) -> MutexGuard<'_, State> {
            self.st.lock().unwrap_or_else(|p| p.into_inner())
        }

        /// Watches `dir` (at `rel`), before the walk lists it.
        pub fn add(&self, dir: &CapDir, rel: &[u8]) {
            let r = dir.inotify_watch(self.fd.as_raw_fd(), MASK);
            let mut st = self.st();
            match r {
                Ok((wd, fs)) if LOCAL.contains(&fs) => {
                    st.dirs.insert(wd, rel.to_vec());
                }
                Ok((_, fs)) => {
                    st.failed
                        .get_or_insert_with(|| format!("a file system of type {fs:#x}"));
                }
                Err(e) => {
                    st.failed.get_or_insert_with(|| e.to_string());
                }
            }
        }

        /// The events so far (read without waiting), then what the next walk must look at;
        /// the dirty set starts again empty.
        pub fn take(&self) -> Changes {
            self.drain();
            let mut st = self.st();
            let dirty = std::mem::take(&mut st.dirty);
            if st.lost || !st.ready {
                st.lost = false;
                st.ready = false;
                return Changes::All;
            }
            Changes::Dirs(Dirty::new(dirty))
        }

        /// The whole walk that just ended watched every directory: the next may trust events.
        pub fn set_ready(&self) {
            self.st().ready = true;
        }

        /// The store's memory of the last walk is gone or changed: the next walk is whole.
        pub fn unready(&self) {
            self.st().ready = false;
        }

        /// Why a directory could not be watched, if one could not.
        pub fn failed(&self) -> Option<String> {
            self.st().failed.clone()
        }

        fn drain(&self) {
            let mut buf = vec![0u8; 64 << 10];
            loop {
                // SAFETY: reads into a buffer we own, of its length.
                let n =
                    unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
                if n <= 0 {
                    if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
                    {
                        continue;
                    }
                    return;
                }
                self.events(&buf[..n as usize]);
            }
        }

        /// Marks the directories of the events in `b` (a read of the inotify descriptor).
        fn events(&self, b: &[u8]) {
            const HEAD: usize = 16;
            let mut st = self.st();
            let mut at = 0;
            while at + HEAD <= b.len() {
                let word =
                    |i: usize| -> [u8; 4] { b[at + i..at + i + 4].try_into().unwrap_or_default() };
                let wd = i32::from_ne_bytes(word(0));
                let mask = u32::from_ne_bytes(word(4));
                let len = u32::from_ne_bytes(word(12)) as usize;
                at += HEAD + len;
                if mask & libc::IN_Q_OVERFLOW != 0 {
                    st.lost = true;
                    continue;
                }
                let Some(path) = st.dirs.get(&wd).cloned() else {
                    continue;
                };
                if path.is_empty() && mask & (libc::IN_DELETE_SELF | libc::IN_MOVE_SELF) != 0 {
                    // The project root itself moved or went away.
                    st.lost = true;
                }
                if mask & libc::IN_IGNORED != 0 {
                    st.dirs.remove(&wd);
                }
                st.dirty.insert(path);
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod other {
    use super::Changes;
    use crate::capfs::CapDir;

    /// No watching here: every walk is a whole one.
    #[derive(Debug)]
    pub struct Watch;

    impl Watch {
        pub fn new() -> Option<Watch> {
            None
        }
        pub fn add(&self, _dir: &CapDir, _rel: &[u8]) {}
        pub fn take(&self) -> Changes {
            Changes::All
        }
        pub fn set_ready(&self) {}
        pub fn unready(&self) {}
        pub fn failed(&self) -> Option<String> {
            None
        }
    }
}
