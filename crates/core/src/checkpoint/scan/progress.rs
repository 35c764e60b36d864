//! A long walk's progress, told now and then.

use super::{EntryType, Mutex, Seen};

/// Tells how far a walk got (directories and files so far), at most once every `every`.
pub struct Reporter<'a> {
    tell: &'a (dyn Fn(u64, u64) + Sync),
    every: std::time::Duration,
    next: Mutex<std::time::Instant>,
    dirs: std::sync::atomic::AtomicU64,
    files: std::sync::atomic::AtomicU64,
}

impl<'a> Reporter<'a> {
    pub fn new(tell: &'a (dyn Fn(u64, u64) + Sync), every: std::time::Duration) -> Reporter<'a> {
        Reporter {
            tell,
            every,
            next: Mutex::new(std::time::Instant::now() + every),
            dirs: Default::default(),
            files: Default::default(),
        }
    }

    /// One more directory walked, holding `entries`.
    pub(super) fn tick(&self, entries: &[Seen]) {
        use std::sync::atomic::Ordering::Relaxed;
        let files = entries
            .iter()
            .filter(|e| e.listed != EntryType::Dir)
            .count() as u64;
        let dirs = self.dirs.fetch_add(1, Relaxed) + 1;
        let files = self.files.fetch_add(files, Relaxed) + files;
        let now = std::time::Instant::now();
        let due = match self.next.try_lock() {
            Ok(mut next) if now >= *next => {
                *next = now + self.every;
                true
            }
            _ => false,
        };
        if due {
            (self.tell)(dirs, files);
        }
    }
}
