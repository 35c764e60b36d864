//! The store's state behind its lock ([`Inner`]): the version file other editors bump, the stat
//! cache on disk, the scan that makes a snapshot, and the objects' size.

use super::*;

impl Inner {
    pub(super) fn version_path(&self) -> PathBuf {
        self.dir.join("version")
    }

    pub(super) fn cache_path(&self) -> PathBuf {
        self.dir.join("statcache")
    }

    /// Reloads the caches when another process wrote since this one last did.
    pub(super) fn sync_version(&mut self) {
        let on_disk = std::fs::read_to_string(self.version_path()).ok();
        if on_disk.is_some() && on_disk == self.seen_version {
            return;
        }
        self.cache = StatCache::load(&self.cache_path());
        self.cache_dirty = false;
        self.memo = None;
        self.unwatch();
        self.known.clear();
        self.store_bytes = None;
        self.seen_version = on_disk;
    }

    /// Saves the stat cache if it changed and marks the store as written by this process.
    pub(super) fn bump_version(&mut self) {
        let due = self.watch.is_none()
            || self
                .cache_written
                .is_none_or(|t| t.elapsed() >= CACHE_WRITE_EVERY);
        if self.cache_dirty && due {
            let bytes = match &self.memo {
                Some(m) => m.encode_stat_cache(),
                None => self.cache.encode(),
            };
            if crate::fsutil::write_atomic_volatile(&self.cache_path(), &bytes, 0o600).is_ok() {
                self.cache_dirty = false;
                self.cache_written = Some(Instant::now());
            }
        }
        let mut rnd = [0u8; 16];
        let _ = getrandom::fill(&mut rnd);
        let v: String = rnd.iter().map(|b| format!("{b:02x}")).collect();
        if crate::fsutil::write_atomic_volatile(&self.version_path(), v.as_bytes(), 0o600).is_ok() {
            self.seen_version = Some(v);
        } else {
            self.seen_version = None;
        }
    }

    pub(super) fn add_bytes(&mut self, n: u64) {
        if let Some(b) = &mut self.store_bytes {
            *b += n;
        }
    }

    pub(super) fn store_bytes(&mut self) -> Result<u64, CheckpointError> {
        if let Some(b) = self.store_bytes {
            return Ok(b);
        }
        let total = self.objects.all()?.iter().map(|(_, n)| n).sum();
        self.store_bytes = Some(total);
        Ok(total)
    }

    pub(super) fn scan_config(&self) -> ScanConfig {
        ScanConfig {
            max_file_bytes: self.opts.max_file_bytes,
        }
    }

    pub(super) fn snapshot(
        &mut self,
        origin: Origin,
        label: &str,
        extra: &[String],
        progress: Option<&scan::Reporter>,
    ) -> Result<CheckpointId, CheckpointError> {
        let cfg = self.scan_config();
        let threads = self.opts.writer_threads;
        if self.pool.is_none() && threads > 1 {
            self.pool = scan::shared_pool(threads);
        }
        if self.watch.is_none() && !self.watch_off {
            self.watch = watch::Watch::new();
            self.watch_off = self.watch.is_none();
        }
        let changes = match &self.watch {
            Some(w) => w.take(),
            None => watch::Changes::All,
        };
        let walked = scan::walk(
            &self.root,
            &self.objects,
            &cfg,
            self.global_ignore.as_ref(),
            self.memo.take(),
            &self.cache,
            &mut self.known,
            self.pool.as_deref(),
            self.watch.as_ref(),
            &changes,
            progress,
        )?;
        self.after_walk(walked.stats.whole);
        let mut root = walked.root;
        let mut added = walked.stats.bytes_written;
        for p in extra {
            let rel = self.root.rel(p)?;
            if tree::lookup(&self.objects, &root, &rel)?.is_some() {
                continue;
            }
            // One that cannot be read now (unreadable, swapped) is left out, as the walk leaves
            // it out: a restore lists it failed and goes on with the rest.
            if let Ok(Some(st)) = self.probe_again(&rel) {
                let (r, n) = tree::with_path(&self.objects, &root, &rel, Some(st))?;
                root = r;
                added += n;
            }
        }
        if walked.cache_changed {
            self.cache_dirty = true;
        }
        // The memo holds what the cache read from disk held, and more.
        self.cache = StatCache::default();
        self.memo = Some(walked.memo);
        self.last_stats = walked.stats;
        self.add_bytes(added);
        self.record(origin, label, root)
    }

    /// The watch after a walk: ready when a whole walk watched every directory; given up for
    /// good when a directory could not be watched.
    pub(super) fn after_walk(&mut self, whole: bool) {
        let Some(w) = &self.watch else { return };
        if let Some(why) = w.failed() {
            tracing::info!(
                root = %self.root.path().display(),
                reason = %why,
                "checkpoints: the project's directories cannot be watched; every checkpoint walks it whole"
            );
            self.watch = None;
            self.watch_off = true;
        } else if whole {
            w.set_ready();
        }
    }

    /// The memory of the last walk is gone or changed: the next walk is whole.
    pub(super) fn unwatch(&self) {
        if let Some(w) = &self.watch {
            w.unready();
        }
    }

    pub(super) fn blob(&self, st: &FileState) -> Result<Vec<u8>, CheckpointError> {
        self.objects.get(
            &st.id,
            ObjectType::Blob,
            self.opts.max_file_bytes.max(st.size),
        )
    }
}
