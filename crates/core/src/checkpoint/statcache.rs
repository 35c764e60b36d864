//! The stat cache: path → (size, mtime, ctime, inode, device) → content id, so a file whose
//! `lstat` is unchanged is not read again. Only a cache: a file that cannot be parsed is
//! dropped (everything is read once more), and an entry is kept only when the file's mtime is
//! older than the scan by more than the coarsest timestamp granularity, so a file changed
//! twice within one tick is never mistaken for unchanged (git's "racily clean" entries).

use super::object::ObjectId;
use crate::capfs::Stat;
use std::collections::HashMap;
use std::path::Path;

/// How much older than the scan a file's mtime must be for its entry to be trusted later, on a
/// file system whose timestamps may be as coarse as 2 s (FAT; 1 s on ext3, HFS+ and some
/// network shares).
pub const RACY_NS: i64 = 2_000_000_000;
/// The same for a file whose mtime has a sub-second part: its file system keeps fine timestamps
/// (nanoseconds on ext4, XFS, Btrfs, APFS, tmpfs; 100 ns on NTFS; 10 ms on exFAT), and the
/// kernel's clock for them moves at least every 10 ms.
pub const FINE_RACY_NS: i64 = 100_000_000;

/// Whether an entry for a file of mtime `mtime_ns`, seen at `now_ns`, can be trusted later: a
/// change within the same timestamp tick must not look like no change.
pub fn trustworthy(mtime_ns: i64, now_ns: i64) -> bool {
    let window = if mtime_ns.rem_euclid(1_000_000_000) != 0 {
        FINE_RACY_NS
    } else {
        RACY_NS
    };
    mtime_ns < now_ns - window
}

/// A file's `lstat` when it was read, and what it held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cached {
    pub stat: Stat,
    pub id: ObjectId,
}

impl Cached {
    pub fn new(s: &Stat, id: ObjectId) -> Cached {
        Cached { stat: *s, id }
    }

    /// Whether `s` says the file is unchanged since it was read.
    pub fn matches(&self, s: &Stat) -> bool {
        self.stat == *s
    }
}

#[derive(Debug, Default, Clone)]
pub struct StatCache {
    pub map: HashMap<Box<[u8]>, Cached>,
}

const MAGIC: &[u8; 4] = b"CCS1";

impl StatCache {
    /// Reads the cache at `path`; anything unreadable or malformed gives an empty cache.
    pub fn load(path: &Path) -> StatCache {
        std::fs::read(path)
            .ok()
            .and_then(|b| Self::decode(&b))
            .unwrap_or_default()
    }

    fn decode(b: &[u8]) -> Option<StatCache> {
        if b.len() < 4 + 8 + 32 || &b[..4] != MAGIC {
            return None;
        }
        let (body, sum) = b.split_at(b.len() - 32);
        if blake3::hash(body).as_bytes() != sum {
            return None;
        }
        let n = u64::from_le_bytes(body[4..12].try_into().ok()?);
        let mut at = 12;
        let mut map = HashMap::with_capacity(n.min(1 << 22) as usize);
        let take = |at: &mut usize, len: usize| -> Option<&[u8]> {
            let s = body.get(*at..at.checked_add(len)?)?;
            *at += len;
            Some(s)
        };
        let u64_at = |at: &mut usize| -> Option<u64> {
            Some(u64::from_le_bytes(take(at, 8)?.try_into().ok()?))
        };
        for _ in 0..n {
            let len = u16::from_le_bytes(take(&mut at, 2)?.try_into().ok()?) as usize;
            let path: Box<[u8]> = take(&mut at, len)?.into();
            let size = u64_at(&mut at)?;
            let mtime_ns = u64_at(&mut at)? as i64;
            let ctime_ns = u64_at(&mut at)? as i64;
            let ino = u64_at(&mut at)?;
            let dev = u64_at(&mut at)?;
            let executable = take(&mut at, 1)?[0] == 1;
            let id = ObjectId(take(&mut at, 32)?.try_into().ok()?);
            let stat = Stat {
                size,
                mtime_ns,
                ctime_ns,
                ino,
                dev,
                executable,
            };
            map.insert(path, Cached { stat, id });
        }
        (at == body.len()).then_some(StatCache { map })
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut e = Encoder::with_capacity(self.map.len());
        for (p, c) in &self.map {
            e.push(p, c);
        }
        e.finish()
    }
}

/// Writes the bytes of a cache entry by entry (what [`StatCache::encode`] gives for the same
/// entries), without a map in between.
pub struct Encoder {
    out: Vec<u8>,
    n: u64,
}

impl Encoder {
    pub fn with_capacity(entries: usize) -> Encoder {
        let mut out = Vec::with_capacity(12 + entries * 112 + 32);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&0u64.to_le_bytes());
        Encoder { out, n: 0 }
    }

    /// Adds an entry (a path too long to record is left out).
    pub fn push(&mut self, path: &[u8], c: &Cached) {
        if path.len() > usize::from(u16::MAX) {
            return;
        }
        let out = &mut self.out;
        out.extend_from_slice(&(path.len() as u16).to_le_bytes());
        out.extend_from_slice(path);
        let s = &c.stat;
        for v in [s.size, s.mtime_ns as u64, s.ctime_ns as u64, s.ino, s.dev] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.push(u8::from(s.executable));
        out.extend_from_slice(&c.id.0);
        self.n += 1;
    }

    pub fn finish(mut self) -> Vec<u8> {
        self.out[4..12].copy_from_slice(&self.n.to_le_bytes());
        let sum = *blake3::hash(&self.out).as_bytes();
        self.out.extend_from_slice(&sum);
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recent_mtime_is_trusted_only_past_its_file_systems_tick() {
        let now = 1_700_000_000_000_000_000;
        // Fine timestamps (a sub-second part): 100 ms is enough.
        let fine = now - 150_000_000 + 7;
        assert!(trustworthy(fine, now));
        assert!(!trustworthy(now - 50_000_000 + 7, now));
        // Whole seconds (a file system that may keep only those): 2 s.
        let whole = (now / 1_000_000_000 - 1) * 1_000_000_000;
        assert!(!trustworthy(whole, now));
        assert!(trustworthy(whole - 2_000_000_000, now));
        // Before 1970 still works.
        assert!(trustworthy(-1_500_000_000, now));
    }

    #[test]
    fn the_cache_round_trips_and_garbage_reads_as_empty() {
        let mut c = StatCache::default();
        let s = Stat {
            size: 3,
            mtime_ns: 1,
            ctime_ns: 2,
            ino: 4,
            dev: 5,
            executable: true,
        };
        c.map.insert(
            b"a/b".to_vec().into(),
            Cached::new(&s, ObjectId::of_blob(b"x")),
        );
        let bytes = c.encode();
        assert_eq!(StatCache::decode(&bytes).unwrap().map, c.map);
        for n in 0..bytes.len() {
            assert!(StatCache::decode(&bytes[..n]).is_none());
        }
        let mut flipped = bytes.clone();
        flipped[14] ^= 1;
        assert!(StatCache::decode(&flipped).is_none());
    }
}
