//! One path's state now (the file or link a hook names, a path a restore checks): read through
//! handles opened without following links, its content stored.

use super::object::{ObjectId, ObjectType, Objects};
use super::scan::fingerprint;
use super::tree::{os_bytes, FileState, Kind};
use super::CheckpointError;
use crate::capfs::{self, CapDir, CapError, EntryType, Stat};
use std::path::Path;

/// What `rel` is now, read through handles opened without following links, its content stored:
/// `None` when it is absent, a directory, or neither a file nor a link.
pub fn probe(
    root: &CapDir,
    objects: &Objects,
    rel: &Path,
    max_file_bytes: u64,
) -> Result<Option<FileState>, CheckpointError> {
    let Some((dir, name)) = root.parent_nofollow(rel).or_else(absent)? else {
        return Ok(None);
    };
    let (kind, st) = match dir.stat_nofollow(&name) {
        Ok(x) => x,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    match kind {
        EntryType::Symlink => {
            let target = dir.read_link_nofollow(&name)?;
            let bytes = os_bytes(target.as_os_str());
            let id = ObjectId::of_blob(&bytes);
            objects.put(&id, ObjectType::Blob, &bytes)?;
            Ok(Some(FileState {
                kind: Kind::Symlink,
                size: bytes.len() as u64,
                id,
            }))
        }
        EntryType::File => {
            let over = |s: &Stat| {
                Ok(Some(FileState {
                    kind: Kind::OverCap,
                    size: s.size,
                    id: fingerprint(s),
                }))
            };
            if st.size > max_file_bytes {
                return over(&st);
            }
            let (file, meta) = match dir.open_file_nofollow(&name) {
                Ok(x) => x,
                Err(e) if e.is_not_found() => return Ok(None),
                Err(CapError::NotRegular { .. }) => return Ok(None),
                Err(e) => return Err(e.into()),
            };
            let fst = capfs::stat_of_file(&meta);
            let bytes = match capfs::read_capped_from(file, max_file_bytes) {
                Ok(b) => b,
                Err(None) => return over(&fst),
                Err(Some(err)) => {
                    return Err(CheckpointError::Io {
                        what: "read",
                        path: root.display(rel),
                        err,
                    })
                }
            };
            let id = ObjectId::of_blob(&bytes);
            objects.put(&id, ObjectType::Blob, &bytes)?;
            Ok(Some(FileState {
                kind: if fst.executable {
                    Kind::Exec
                } else {
                    Kind::File
                },
                size: bytes.len() as u64,
                id,
            }))
        }
        EntryType::Dir | EntryType::Special => Ok(None),
    }
}

/// A directory on the way that is not a directory (a file, a link) means the path is absent.
fn absent(e: CapError) -> Result<Option<(CapDir, std::path::PathBuf)>, CapError> {
    match e {
        CapError::NotRegular { .. } | CapError::LinkInWrite { .. } => Ok(None),
        e if e.is_not_found() => Ok(None),
        e => Err(e),
    }
}
