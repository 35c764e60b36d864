//! Gives memory back to the system after large messages.
//!
//! A 4 MB request is copied a few times on its way through (frame buffer, text, parsed JSON,
//! the answer), on whichever tokio threads handled it. glibc's allocator keeps what those
//! threads freed in per-thread arenas, so without help a few concurrent 4 MB requests leave
//! Neovim's resident size ~100 MB higher for good (measured by `make bench`). After a message of
//! at least [`LARGE`] bytes has been answered, the server asks glibc to return free pages
//! (`malloc_trim(0)`, every arena), on the blocking pool, once per burst: requests arriving
//! while a trim is pending or running share it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Messages at least this long schedule a trim once answered.
pub const LARGE: usize = 1 << 20;

/// How long a burst of large messages may keep coming before the trim runs.
const SETTLE: Duration = Duration::from_millis(100);

#[derive(Default)]
pub struct Trimmer {
    pending: AtomicBool,
    runs: AtomicU64,
}

impl Trimmer {
    /// Schedules a trim on the current runtime unless one is already pending.
    pub fn request(self: &Arc<Self>) {
        if self.pending.swap(true, Ordering::AcqRel) {
            return;
        }
        let me = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(SETTLE).await;
            // Cleared before the trim, so that memory freed during it gets a trim of its own.
            me.pending.store(false, Ordering::Release);
            let _ = tokio::task::spawn_blocking(release_free_memory).await;
            me.runs.fetch_add(1, Ordering::Relaxed);
        });
    }

    /// How many trims have run.
    pub fn runs(&self) -> u64 {
        self.runs.load(Ordering::Relaxed)
    }
}

/// Returns free heap pages to the system (glibc's `malloc_trim`; a no-op elsewhere).
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists; it is thread-safe.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_shares_one_trim_and_a_later_burst_gets_its_own() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let t = Arc::new(Trimmer::default());
        rt.block_on(async {
            for _ in 0..100 {
                t.request();
            }
            let wait = |n: u64| {
                let t = t.clone();
                async move {
                    for _ in 0..500 {
                        if t.runs() >= n {
                            return;
                        }
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                    panic!("no trim ran");
                }
            };
            wait(1).await;
            assert_eq!(
                t.runs(),
                1,
                "a burst of 100 requests ran more than one trim"
            );
            t.request();
            wait(2).await;
            assert_eq!(t.runs(), 2);
        });
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn freed_memory_of_other_threads_goes_back_to_the_system() {
        fn rss_kb() -> u64 {
            let s = std::fs::read_to_string("/proc/self/status").unwrap();
            let line = s.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
            line.split_whitespace().nth(1).unwrap().parse().unwrap()
        }
        // Eight threads each touch and free many 64 KiB blocks (below the mmap threshold, so
        // they live in the threads' arenas, as a parsed 4 MB JSON message does).
        let blocks = 8 * 1024 / 64 * 4; // 32 MiB per thread
        let before = rss_kb();
        let threads: Vec<_> = (0..8)
            .map(|_| {
                std::thread::spawn(move || {
                    let mut v: Vec<Vec<u8>> = (0..blocks).map(|_| vec![1u8; 64 * 1024]).collect();
                    // Keep one block at the top of the arena (no freed chunk is that large, so
                    // it is carved from the top) so that the arena cannot shrink by itself.
                    let keep = vec![1u8; 64 * 1024];
                    v.clear();
                    std::hint::black_box(&keep);
                    std::mem::forget(keep);
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let freed = rss_kb();
        release_free_memory();
        let trimmed = rss_kb();
        let report =
            format!("RSS before {before} kB, after freeing {freed} kB, trimmed {trimmed} kB");
        // The premise: glibc keeps what the threads freed (most of 8 × 32 MiB)...
        assert!(freed > before + 128 * 1024, "{report}");
        // ...and the trim gives most of it back.
        assert!(trimmed < before + (freed - before) / 4, "{report}");
    }
}
