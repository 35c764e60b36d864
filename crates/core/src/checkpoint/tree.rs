//! Trees: one object per directory, its entries sorted by name, each naming a blob (a file's
//! content or a link's target) or the tree of a subdirectory. Two checkpoints share every
//! directory that did not change, so a new checkpoint writes only the directories on the way to
//! a changed file, and a diff skips every subtree whose id is the same on both sides.

use super::object::{ObjectId, ObjectType, Objects};
use super::CheckpointError;
use std::ffi::{OsStr, OsString};
use std::path::{Component, Path, PathBuf};

/// The largest tree object read back (a directory of ~200,000 entries).
pub const TREE_LIMIT: u64 = 16 << 20;

/// What an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A regular file; its id is its content's blob.
    File,
    /// A regular file with an execute bit.
    Exec,
    /// A symbolic link, recorded as a link (never followed); its id is the blob of its target.
    Symlink,
    /// A directory; its id is a tree.
    Dir,
    /// A regular file over the size cap: recorded (size, a hash of its stat), not stored.
    OverCap,
}

impl Kind {
    fn byte(self) -> u8 {
        match self {
            Kind::File => 0,
            Kind::Exec => 1,
            Kind::Symlink => 2,
            Kind::Dir => 3,
            Kind::OverCap => 4,
        }
    }

    fn from_byte(b: u8) -> Option<Kind> {
        Some(match b {
            0 => Kind::File,
            1 => Kind::Exec,
            2 => Kind::Symlink,
            3 => Kind::Dir,
            4 => Kind::OverCap,
            _ => return None,
        })
    }

    /// A file whose content is stored and can be written back.
    pub fn has_content(self) -> bool {
        matches!(self, Kind::File | Kind::Exec | Kind::Symlink)
    }
}

/// One entry of a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The name's bytes as the OS gives them.
    pub name: Vec<u8>,
    pub kind: Kind,
    /// The file's size (a link: its target's length; a directory: 0).
    pub size: u64,
    pub id: ObjectId,
}

/// What a path holds in a checkpoint (not a directory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileState {
    pub kind: Kind,
    pub size: u64,
    pub id: ObjectId,
}

impl Entry {
    pub fn state(&self) -> FileState {
        FileState {
            kind: self.kind,
            size: self.size,
            id: self.id,
        }
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v: u64 = 0;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// The entry name at `at` (its length first), moving past it; `None` for one that is not a
/// plain name.
fn take_name(b: &[u8], at: &mut usize) -> Option<Vec<u8>> {
    let len = get_varint(b, at)? as usize;
    let name = b.get(*at..at.checked_add(len)?)?.to_vec();
    *at += len;
    let plain = !(name.is_empty() || name == b"." || name == b".." || name.contains(&b'/'));
    plain.then_some(name)
}

/// The object id at `at`, moving past it.
fn take_id(b: &[u8], at: &mut usize) -> Option<ObjectId> {
    let id = ObjectId(b.get(*at..at.checked_add(32)?)?.try_into().ok()?);
    *at += 32;
    Some(id)
}

/// The bytes of a tree (entries sorted by name, no duplicates).
pub fn encode(entries: &[Entry]) -> Vec<u8> {
    encode_with(
        entries
            .iter()
            .map(|e| (e.name.as_slice(), &e.kind, e.size, &e.id)),
    )
}

/// [`encode`] of `(name, kind, size, id)` (sorted by name, no duplicates), without owning the
/// names.
pub fn encode_parts<'a>(entries: impl Iterator<Item = (&'a [u8], &'a FileState)>) -> Vec<u8> {
    encode_with(entries.map(|(n, s)| (n, &s.kind, s.size, &s.id)))
}

fn encode_with<'a>(
    entries: impl Iterator<Item = (&'a [u8], &'a Kind, u64, &'a ObjectId)>,
) -> Vec<u8> {
    let mut body = Vec::with_capacity(1024);
    let mut n = 0u64;
    for (name, kind, size, id) in entries {
        n += 1;
        body.push(kind.byte());
        put_varint(&mut body, name.len() as u64);
        body.extend_from_slice(name);
        put_varint(&mut body, size);
        body.extend_from_slice(&id.0);
    }
    let mut out = Vec::with_capacity(body.len() + 10);
    put_varint(&mut out, n);
    out.extend_from_slice(&body);
    out
}

/// A tree's entries from its bytes; `None` for anything malformed (unsorted, truncated, …).
pub fn decode(b: &[u8]) -> Option<Vec<Entry>> {
    let mut at = 0;
    let n = get_varint(b, &mut at)?;
    if n > b.len() as u64 {
        return None;
    }
    let mut out: Vec<Entry> = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let kind = Kind::from_byte(*b.get(at)?)?;
        at += 1;
        let name = take_name(b, &mut at)?;
        let size = get_varint(b, &mut at)?;
        let id = take_id(b, &mut at)?;
        if out.last().is_some_and(|p| p.name >= name) {
            return None;
        }
        out.push(Entry {
            name,
            kind,
            size,
            id,
        });
    }
    (at == b.len()).then_some(out)
}

/// Writes a tree of `entries` (sorted) and returns its id and the bytes added to the store.
pub fn write(objects: &Objects, entries: &[Entry]) -> Result<(ObjectId, u64), CheckpointError> {
    let bytes = encode(entries);
    let id = ObjectId::of_tree(&bytes);
    let added = objects.put(&id, ObjectType::Tree, &bytes)?;
    Ok((id, added))
}

/// Reads tree `id`.
pub fn read(objects: &Objects, id: &ObjectId) -> Result<Vec<Entry>, CheckpointError> {
    Ok(read_full(objects, id)?.entries)
}

/// A tree as read: its entries, how many deltas it is stored as, and the trees those deltas
/// are against (each needs the next; a collection keeps them).
#[derive(Debug)]
pub struct Stored {
    pub entries: Vec<Entry>,
    pub depth: u8,
    pub bases: Vec<ObjectId>,
}

/// The most deltas on the way from a tree to one stored whole.
pub const MAX_DELTA_DEPTH: u8 = 16;

/// Reads tree `id`, rebuilding it from the deltas it is stored as (the whole checked against
/// its name).
pub fn read_full(objects: &Objects, id: &ObjectId) -> Result<Stored, CheckpointError> {
    let malformed = || objects.corrupt(id, "the directory listing is malformed".into());
    let (delta, bytes) = objects.get_tree(id, TREE_LIMIT)?;
    if !delta {
        let entries = decode(&bytes).ok_or_else(malformed)?;
        return Ok(Stored {
            entries,
            depth: 0,
            bases: Vec::new(),
        });
    }
    let (base, depth, edits) = decode_delta(&bytes).ok_or_else(malformed)?;
    if depth == 0 || depth > MAX_DELTA_DEPTH || base == *id {
        return Err(malformed());
    }
    let mut b = read_full(objects, &base)?;
    // Each delta is one more than its base: a chain ends, and never loops.
    if b.depth + 1 != depth {
        return Err(malformed());
    }
    let entries = apply(std::mem::take(&mut b.entries), edits);
    if ObjectId::of_tree(&encode(&entries)) != *id {
        return Err(objects.corrupt(
            id,
            "the directory listing rebuilt from its delta does not match its name".into(),
        ));
    }
    b.bases.push(base);
    Ok(Stored {
        entries,
        depth,
        bases: b.bases,
    })
}

/// One change of a delta: the entry `name` set to a state, or removed (`None`).
pub type Edit<'a> = (&'a [u8], Option<&'a FileState>);

/// The bytes of a delta against `base` (whose depth is `depth - 1`): `edits` sorted by name.
pub fn encode_delta<'a>(
    base: &ObjectId,
    depth: u8,
    edits: impl Iterator<Item = Edit<'a>>,
) -> Vec<u8> {
    let mut body = Vec::with_capacity(256);
    let mut n = 0u64;
    for (name, st) in edits {
        n += 1;
        body.push(st.map_or(0xff, |s| s.kind.byte()));
        put_varint(&mut body, name.len() as u64);
        body.extend_from_slice(name);
        if let Some(s) = st {
            put_varint(&mut body, s.size);
            body.extend_from_slice(&s.id.0);
        }
    }
    let mut out = Vec::with_capacity(body.len() + 44);
    out.extend_from_slice(&base.0);
    out.push(depth);
    put_varint(&mut out, n);
    out.extend_from_slice(&body);
    out
}

type Edits = Vec<(Vec<u8>, Option<FileState>)>;

/// A delta's base, depth and edits; `None` for anything malformed.
fn decode_delta(b: &[u8]) -> Option<(ObjectId, u8, Edits)> {
    let base = ObjectId(b.get(..32)?.try_into().ok()?);
    let depth = *b.get(32)?;
    let mut at = 33;
    let n = get_varint(b, &mut at)?;
    if n > b.len() as u64 {
        return None;
    }
    let mut out: Edits = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let op = *b.get(at)?;
        at += 1;
        let name = take_name(b, &mut at)?;
        if out.last().is_some_and(|p| p.0 >= name) {
            return None;
        }
        let st = if op == 0xff {
            None
        } else {
            let kind = Kind::from_byte(op)?;
            let size = get_varint(b, &mut at)?;
            let id = take_id(b, &mut at)?;
            Some(FileState { kind, size, id })
        };
        out.push((name, st));
    }
    (at == b.len()).then_some((base, depth, out))
}

/// `entries` with `edits` applied (both sorted by name).
fn apply(entries: Vec<Entry>, edits: Edits) -> Vec<Entry> {
    let mut out = Vec::with_capacity(entries.len() + edits.len());
    let mut edits = edits.into_iter().peekable();
    let set = |out: &mut Vec<Entry>, name: Vec<u8>, st: Option<FileState>| {
        if let Some(s) = st {
            out.push(Entry {
                name,
                kind: s.kind,
                size: s.size,
                id: s.id,
            });
        }
    };
    for e in entries {
        while let Some((n, _)) = edits.peek() {
            if n.as_slice() >= e.name.as_slice() {
                break;
            }
            let (n, st) = edits.next().unwrap_or_default();
            set(&mut out, n, st);
        }
        match edits.peek() {
            Some((n, _)) if *n == e.name => {
                let (n, st) = edits.next().unwrap_or_default();
                set(&mut out, n, st);
            }
            _ => out.push(e),
        }
    }
    for (n, st) in edits {
        set(&mut out, n, st);
    }
    out
}

/// Stores the tree `id` (whose whole bytes are `whole`) as a delta against `base` (of depth
/// `base_depth`) when that is at most half the size and the chain not too long, else whole:
/// the bytes added and the depth it is stored at ([`MAX_DELTA_DEPTH`] when it was stored
/// before, as whatever it was: not a base for a delta).
pub fn put_tree<'a>(
    objects: &Objects,
    id: &ObjectId,
    whole: &[u8],
    base: Option<(&ObjectId, u8)>,
    edits: impl Iterator<Item = Edit<'a>>,
) -> Result<(u64, u8), CheckpointError> {
    if let Some((b, d)) = base.filter(|(b, d)| *d < MAX_DELTA_DEPTH && *b != id) {
        let delta = encode_delta(b, d + 1, edits);
        if delta.len() <= whole.len() / 2 {
            let n = objects.put(id, ObjectType::TreeDelta, &delta)?;
            return Ok((n, if n > 0 { d + 1 } else { MAX_DELTA_DEPTH }));
        }
    }
    let n = objects.put(id, ObjectType::Tree, whole)?;
    Ok((n, if n > 0 { 0 } else { MAX_DELTA_DEPTH }))
}

pub fn os_bytes(s: &OsStr) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        s.as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        s.to_string_lossy().into_owned().into_bytes()
    }
}

pub fn bytes_os(b: &[u8]) -> OsString {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        OsStr::from_bytes(b).to_os_string()
    }
    #[cfg(not(unix))]
    {
        OsString::from(String::from_utf8_lossy(b).into_owned())
    }
}

/// `rel`'s plain components as bytes; `None` when it has `..`, a root or nothing.
pub fn components(rel: &Path) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => out.push(os_bytes(n)),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!out.is_empty()).then_some(out)
}

fn join(prefix: &Path, name: &[u8]) -> PathBuf {
    prefix.join(bytes_os(name))
}

/// What `rel` holds in the tree `root` (a file, a link, a file over the cap); `None` when it
/// is absent or a directory.
pub fn lookup(
    objects: &Objects,
    root: &ObjectId,
    rel: &Path,
) -> Result<Option<FileState>, CheckpointError> {
    let Some(parts) = components(rel) else {
        return Ok(None);
    };
    let mut cur = *root;
    for (i, p) in parts.iter().enumerate() {
        let entries = read(objects, &cur)?;
        let Ok(at) = entries.binary_search_by(|e| e.name.as_slice().cmp(p)) else {
            return Ok(None);
        };
        let e = &entries[at];
        let last = i + 1 == parts.len();
        match (last, e.kind) {
            (true, Kind::Dir) => return Ok(None),
            (true, _) => return Ok(Some(e.state())),
            (false, Kind::Dir) => cur = e.id,
            (false, _) => return Ok(None),
        }
    }
    Ok(None)
}

/// Every file of the tree `root`, with its path, in path order.
pub fn files(
    objects: &Objects,
    root: &ObjectId,
) -> Result<Vec<(PathBuf, FileState)>, CheckpointError> {
    let mut out = Vec::new();
    collect(objects, root, Path::new(""), &mut out)?;
    Ok(out)
}

fn collect(
    objects: &Objects,
    id: &ObjectId,
    prefix: &Path,
    out: &mut Vec<(PathBuf, FileState)>,
) -> Result<(), CheckpointError> {
    for e in read(objects, id)? {
        let p = join(prefix, &e.name);
        if e.kind == Kind::Dir {
            collect(objects, &e.id, &p, out)?;
        } else {
            out.push((p, e.state()));
        }
    }
    Ok(())
}

/// A path that differs between two checkpoints: what it held before and after (`None`:
/// absent). A rename shows as the old path deleted and the new one added with the same id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: PathBuf,
    pub before: Option<FileState>,
    pub after: Option<FileState>,
}

impl Change {
    pub fn is_added(&self) -> bool {
        self.before.is_none()
    }

    pub fn is_deleted(&self) -> bool {
        self.after.is_none()
    }
}

/// The files that differ between trees `a` and `b`, in path order; subtrees with the same id
/// are skipped without being read.
pub fn diff(objects: &Objects, a: &ObjectId, b: &ObjectId) -> Result<Vec<Change>, CheckpointError> {
    let mut out = Vec::new();
    diff_into(objects, Some(a), Some(b), Path::new(""), &mut out)?;
    Ok(out)
}

fn diff_into(
    objects: &Objects,
    a: Option<&ObjectId>,
    b: Option<&ObjectId>,
    prefix: &Path,
    out: &mut Vec<Change>,
) -> Result<(), CheckpointError> {
    if a == b {
        return Ok(());
    }
    let ea = match a {
        Some(id) => read(objects, id)?,
        None => Vec::new(),
    };
    let eb = match b {
        Some(id) => read(objects, id)?,
        None => Vec::new(),
    };
    let (mut i, mut j) = (0, 0);
    while i < ea.len() || j < eb.len() {
        let order = match (ea.get(i), eb.get(j)) {
            (Some(x), Some(y)) => x.name.cmp(&y.name),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        let (x, y) = match order {
            std::cmp::Ordering::Less => {
                i += 1;
                (Some(&ea[i - 1]), None)
            }
            std::cmp::Ordering::Greater => {
                j += 1;
                (None, Some(&eb[j - 1]))
            }
            std::cmp::Ordering::Equal => {
                i += 1;
                j += 1;
                (Some(&ea[i - 1]), Some(&eb[j - 1]))
            }
        };
        let name = x.or(y).map(|e| e.name.as_slice()).unwrap_or_default();
        let path = join(prefix, name);
        if let (Some(x), Some(y)) = (x, y) {
            if x.kind == y.kind && x.id == y.id {
                continue;
            }
        }
        let xd = x.filter(|e| e.kind == Kind::Dir);
        let yd = y.filter(|e| e.kind == Kind::Dir);
        let xf = x.filter(|e| e.kind != Kind::Dir).map(Entry::state);
        let yf = y.filter(|e| e.kind != Kind::Dir).map(Entry::state);
        if xf.is_some() || yf.is_some() {
            out.push(Change {
                path: path.clone(),
                before: xf,
                after: yf,
            });
        }
        if xd.is_some() || yd.is_some() {
            diff_into(objects, xd.map(|e| &e.id), yd.map(|e| &e.id), &path, out)?;
        }
    }
    Ok(())
}

/// The renames among `changes`: a deleted path and an added one with the same content
/// (`(from, to)`, each path used once).
pub fn renames(changes: &[Change]) -> Vec<(PathBuf, PathBuf)> {
    let mut deleted: Vec<&Change> = changes
        .iter()
        .filter(|c| c.is_deleted() && c.before.is_some_and(|b| b.kind.has_content()))
        .collect();
    let mut out = Vec::new();
    for c in changes.iter().filter(|c| c.is_added()) {
        let Some(after) = c.after else { continue };
        if let Some(at) = deleted.iter().position(|d| {
            d.before
                .is_some_and(|b| b.id == after.id && b.kind == after.kind)
        }) {
            out.push((deleted[at].path.clone(), c.path.clone()));
            deleted.remove(at);
        }
    }
    out
}

/// A new tree: `root` with `rel` set to `state` (`None`: removed). Only the directories on the
/// way are rewritten; a directory left empty is dropped. Returns the new root id and the bytes
/// added to the store.
pub fn with_path(
    objects: &Objects,
    root: &ObjectId,
    rel: &Path,
    state: Option<FileState>,
) -> Result<(ObjectId, u64), CheckpointError> {
    let parts = components(rel).ok_or_else(|| CheckpointError::BadPath {
        path: rel.to_path_buf(),
    })?;
    let mut added = 0;
    let (id, _) = set_in(objects, Some(root), &parts, state, &mut added)?;
    // An emptied root is still a tree: the empty one.
    match id {
        Some(id) => Ok((id, added)),
        None => {
            let (id, n) = write(objects, &[])?;
            Ok((id, added + n))
        }
    }
}

fn set_in(
    objects: &Objects,
    dir: Option<&ObjectId>,
    parts: &[Vec<u8>],
    state: Option<FileState>,
    added: &mut u64,
) -> Result<(Option<ObjectId>, bool), CheckpointError> {
    let (mut entries, depth) = match dir {
        Some(id) => {
            let r = read_full(objects, id)?;
            (r.entries, r.depth)
        }
        None => (Vec::new(), 0),
    };
    let name = &parts[0];
    let at = entries.binary_search_by(|e| e.name.as_slice().cmp(name));
    let new_entry = if parts.len() == 1 {
        state.map(|s| Entry {
            name: name.clone(),
            kind: s.kind,
            size: s.size,
            id: s.id,
        })
    } else {
        let sub = match at {
            Ok(i) if entries[i].kind == Kind::Dir => Some(entries[i].id),
            _ => None,
        };
        let (id, _) = set_in(objects, sub.as_ref(), &parts[1..], state, added)?;
        id.map(|id| Entry {
            name: name.clone(),
            kind: Kind::Dir,
            size: 0,
            id,
        })
    };
    let edit = new_entry.as_ref().map(Entry::state);
    match (at, new_entry) {
        (Ok(i), Some(e)) => entries[i] = e,
        (Ok(i), None) => {
            entries.remove(i);
        }
        (Err(i), Some(e)) => entries.insert(i, e),
        (Err(_), None) => return Ok((dir.copied(), false)),
    }
    if entries.is_empty() {
        return Ok((None, true));
    }
    let whole = encode(&entries);
    let id = ObjectId::of_tree(&whole);
    let edits = std::iter::once((name.as_slice(), edit.as_ref()));
    let (n, _) = put_tree(objects, &id, &whole, dir.map(|d| (d, depth)), edits)?;
    *added += n;
    Ok((Some(id), true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_round_trips_and_garbage_is_refused() {
        let e = |n: &str, k| Entry {
            name: n.as_bytes().to_vec(),
            kind: k,
            size: 3,
            id: ObjectId::of_blob(n.as_bytes()),
        };
        let entries = vec![e("a", Kind::File), e("b", Kind::Dir), e("c", Kind::Symlink)];
        let bytes = encode(&entries);
        assert_eq!(decode(&bytes), Some(entries.clone()));
        // Truncated at every length, and one byte too many.
        for n in 0..bytes.len() {
            assert_eq!(decode(&bytes[..n]), None, "{n}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(decode(&longer), None);
        // Unsorted or duplicated names, a name with a slash.
        let unsorted = encode(&[e("b", Kind::File), e("a", Kind::File)]);
        assert_eq!(decode(&unsorted), None);
        let dup = encode(&[e("a", Kind::File), e("a", Kind::File)]);
        assert_eq!(decode(&dup), None);
        assert_eq!(decode(&encode(&[e("a/b", Kind::File)])), None);
        assert_eq!(decode(&encode(&[e("..", Kind::Dir)])), None);
    }
}
