//! Content-addressed objects: file contents (blobs) and directory listings (trees), each stored
//! once under `objects/<2 hex>/<62 hex>` of its BLAKE3 hash, compressed with zstd when that
//! saves space, and checked against its name whenever it is read.

use super::CheckpointError;
use std::fmt;
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};

/// The BLAKE3 hash naming an object. A blob's id is the hash of its bytes; a tree's is a
/// keyed hash (its own domain), so no file can be made to collide with a tree.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ObjectId(pub [u8; 32]);

impl ObjectId {
    pub fn of_blob(bytes: &[u8]) -> ObjectId {
        ObjectId(*blake3::hash(bytes).as_bytes())
    }

    pub fn of_tree(bytes: &[u8]) -> ObjectId {
        let mut h = blake3::Hasher::new_derive_key(TREE_DOMAIN);
        h.update(bytes);
        ObjectId(*h.finalize().as_bytes())
    }

    /// For what is recorded but not stored (a file over the size cap): a hash of its stat.
    pub fn of_fingerprint(bytes: &[u8]) -> ObjectId {
        let mut h = blake3::Hasher::new_derive_key(FINGERPRINT_DOMAIN);
        h.update(bytes);
        ObjectId(*h.finalize().as_bytes())
    }

    pub fn hex(&self) -> String {
        let mut s = String::with_capacity(64);
        for b in self.0 {
            s.push_str(&format!("{b:02x}"));
        }
        s
    }

    pub fn from_hex(s: &str) -> Option<ObjectId> {
        let s = s.as_bytes();
        if s.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, pair) in s.chunks(2).enumerate() {
            let hi = (pair[0] as char).to_digit(16)?;
            let lo = (pair[1] as char).to_digit(16)?;
            out[i] = (hi * 16 + lo) as u8;
        }
        Some(ObjectId(out))
    }
}

impl fmt::Debug for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", &self.hex()[..16])
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

const TREE_DOMAIN: &str = "claude-context.nvim checkpoint tree v1";
const FINGERPRINT_DOMAIN: &str = "claude-context.nvim checkpoint fingerprint v1";

/// The header of every object file: magic, type, codec, uncompressed length.
const MAGIC: &[u8; 4] = b"CCO1";
const HEADER: usize = 4 + 1 + 1 + 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectType {
    Blob,
    Tree,
    /// A tree stored as its changes against another tree ([`super::tree`]): named, like every
    /// tree, by the hash of the whole tree, which is checked once it is rebuilt.
    TreeDelta,
}

impl ObjectType {
    fn byte(self) -> u8 {
        match self {
            ObjectType::Blob => b'b',
            ObjectType::Tree => b't',
            ObjectType::TreeDelta => b'd',
        }
    }
}

/// The objects of one store: `<store>/objects`.
#[derive(Debug)]
pub struct Objects {
    dir: PathBuf,
    compress: bool,
}

impl Objects {
    pub fn new(dir: PathBuf, compress: bool) -> Objects {
        Objects { dir, compress }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn path_of(&self, id: &ObjectId) -> PathBuf {
        let hex = id.hex();
        self.dir.join(&hex[..2]).join(&hex[2..])
    }

    /// The size on disk of object `id`, `None` when it is not there.
    pub fn stored_size(&self, id: &ObjectId) -> Option<u64> {
        std::fs::symlink_metadata(self.path_of(id))
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len())
    }

    /// Writes object `id` (already hashed from `raw`) unless it is there; returns the bytes
    /// added to the store (0 when it was there).
    pub fn put(&self, id: &ObjectId, ty: ObjectType, raw: &[u8]) -> Result<u64, CheckpointError> {
        let path = self.path_of(id);
        if std::fs::symlink_metadata(&path).is_ok() {
            return Ok(0);
        }
        let packed = if self.compress && raw.len() >= 64 {
            match zstd::bulk::compress(raw, 1) {
                // Kept only when it saves an eighth or more.
                Ok(c) if c.len() < raw.len() - raw.len() / 8 => Some(c),
                _ => None,
            }
        } else {
            None
        };
        let mut bytes = Vec::with_capacity(HEADER + packed.as_ref().map_or(raw.len(), |c| c.len()));
        bytes.extend_from_slice(MAGIC);
        bytes.push(ty.byte());
        bytes.push(u8::from(packed.is_some()));
        bytes.extend_from_slice(&(raw.len() as u64).to_le_bytes());
        bytes.extend_from_slice(packed.as_deref().unwrap_or(raw));
        let parent = path.parent().unwrap_or(&self.dir);
        let io = |what: &'static str, p: &Path| {
            let p = p.to_path_buf();
            move |err: std::io::Error| CheckpointError::Io { what, path: p, err }
        };
        if let Err(e) = std::fs::create_dir(parent) {
            if e.kind() != ErrorKind::AlreadyExists {
                return Err(io("create the directory", parent)(e));
            }
        }
        let mut tmp = tempfile::Builder::new()
            .prefix(".tmp-")
            .tempfile_in(parent)
            .map_err(io("create an object in", parent))?;
        tmp.write_all(&bytes)
            .map_err(io("write the object", &path))?;
        tmp.persist(&path)
            .map_err(|e| io("write the object", &path)(e.error))?;
        Ok(bytes.len() as u64)
    }

    /// Reads object `id`: it must be of type `ty`, at most `limit` bytes once unpacked, and hash
    /// back to its name.
    pub fn get(
        &self,
        id: &ObjectId,
        ty: ObjectType,
        limit: u64,
    ) -> Result<Vec<u8>, CheckpointError> {
        let (_, raw) = self.read(id, &[ty], limit)?;
        let back = match ty {
            ObjectType::Blob => ObjectId::of_blob(&raw),
            ObjectType::Tree => ObjectId::of_tree(&raw),
            // Checked by the caller, once the whole tree is rebuilt.
            ObjectType::TreeDelta => return Ok(raw),
        };
        if back != *id {
            return Err(self.corrupt(id, "the object's content does not match its name".into()));
        }
        Ok(raw)
    }

    /// Reads tree `id`, stored whole or as a delta: (whether a delta, the bytes). A whole tree
    /// is checked against its name here; a delta by the caller once rebuilt.
    pub fn get_tree(&self, id: &ObjectId, limit: u64) -> Result<(bool, Vec<u8>), CheckpointError> {
        let (ty, raw) = self.read(id, &[ObjectType::Tree, ObjectType::TreeDelta], limit)?;
        if ty == ObjectType::Tree && ObjectId::of_tree(&raw) != *id {
            return Err(self.corrupt(id, "the object's content does not match its name".into()));
        }
        Ok((ty == ObjectType::TreeDelta, raw))
    }

    pub fn corrupt(&self, id: &ObjectId, what: String) -> CheckpointError {
        CheckpointError::Corrupt {
            path: self.path_of(id),
            what,
        }
    }

    /// Reads object `id`'s bytes, unpacked: its type must be one of `types`, its size at most
    /// `limit`.
    fn read(
        &self,
        id: &ObjectId,
        types: &[ObjectType],
        limit: u64,
    ) -> Result<(ObjectType, Vec<u8>), CheckpointError> {
        let path = self.path_of(id);
        let mut f = match std::fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(CheckpointError::Missing {
                    id: id.hex(),
                    store: self.dir.clone(),
                })
            }
            Err(err) => {
                return Err(CheckpointError::Io {
                    what: "read the object",
                    path,
                    err,
                })
            }
        };
        let corrupt = |what: String| CheckpointError::Corrupt {
            path: path.clone(),
            what,
        };
        let mut header = [0u8; HEADER];
        if f.read_exact(&mut header).is_err() {
            return Err(corrupt("the object is truncated (no header)".into()));
        }
        let ty = types.iter().find(|t| t.byte() == header[4]).copied();
        let Some(ty) = ty.filter(|_| &header[..4] == MAGIC && header[5] <= 1) else {
            return Err(corrupt(
                "the object's header is not a checkpoint object's".into(),
            ));
        };
        let len = u64::from_le_bytes(header[6..14].try_into().unwrap_or([0; 8]));
        if len > limit {
            return Err(corrupt(format!(
                "the object claims {len} bytes, over {limit}"
            )));
        }
        let mut rest = Vec::new();
        let cap = if header[5] == 1 {
            len + 64 + len / 8
        } else {
            len
        };
        (&mut f)
            .take(cap.saturating_add(1))
            .read_to_end(&mut rest)
            .map_err(|err| CheckpointError::Io {
                what: "read the object",
                path: path.clone(),
                err,
            })?;
        let raw = if header[5] == 1 {
            zstd::bulk::decompress(&rest, len as usize)
                .map_err(|e| corrupt(format!("the object does not decompress: {e}")))?
        } else {
            rest
        };
        if raw.len() as u64 != len {
            return Err(corrupt(format!(
                "the object holds {} bytes, its header says {len}",
                raw.len()
            )));
        }
        Ok((ty, raw))
    }

    /// Every object file: its id and size on disk.
    pub fn all(&self) -> Result<Vec<(ObjectId, u64)>, CheckpointError> {
        let mut out = Vec::new();
        let top = match std::fs::read_dir(&self.dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(out),
            Err(err) => {
                return Err(CheckpointError::Io {
                    what: "list",
                    path: self.dir.clone(),
                    err,
                })
            }
        };
        for d in top.flatten() {
            let prefix = d.file_name().to_string_lossy().into_owned();
            if prefix.len() != 2 {
                continue;
            }
            let Ok(rd) = std::fs::read_dir(d.path()) else {
                continue;
            };
            for f in rd.flatten() {
                let name = f.file_name().to_string_lossy().into_owned();
                let Some(id) = ObjectId::from_hex(&format!("{prefix}{name}")) else {
                    continue;
                };
                if let Ok(m) = f.metadata() {
                    out.push((id, m.len()));
                }
            }
        }
        Ok(out)
    }

    /// Removes the temp files of writes that never finished (a crash), older than an hour.
    pub fn remove_stale_temps(&self) {
        let Ok(top) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for d in top.flatten() {
            let Ok(rd) = std::fs::read_dir(d.path()) else {
                continue;
            };
            for f in rd.flatten() {
                let stale = f.file_name().to_string_lossy().starts_with(".tmp-")
                    && f.metadata()
                        .and_then(|m| m.modified())
                        .is_ok_and(|t| t < old);
                if stale {
                    let _ = std::fs::remove_file(f.path());
                }
            }
        }
    }

    /// Removes object `id` (GC).
    pub fn remove(&self, id: &ObjectId) {
        let _ = std::fs::remove_file(self.path_of(id));
    }
}
